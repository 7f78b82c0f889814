//! The mcfunction line rules (docs/protocol.md section 6), sans-IO: physical lines go in one at a
//! time, commands to send (or line errors) come out. No reading, no sending; batch mode and
//! fuzzing drive it.

use std::collections::HashMap;

/// How the message of a macro line with unfilled `$(name)`s starts (an application can add how
/// its users give values).
pub const MACRO_NEEDS_VALUE: &str = "macro line needs a value for";

/// Something a physical line produced.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Item {
    /// A command to send.
    Command(Command),
    /// A line that cannot be sent; the message says why.
    Error {
        /// The first physical line (1-based) of the command.
        line: u64,
        /// Why it cannot be sent.
        message: String,
    },
}

impl Item {
    /// Its first physical line (1-based).
    pub fn line(&self) -> u64 {
        match self {
            Item::Command(c) => c.line,
            Item::Error { line, .. } => *line,
        }
    }

    /// The command's text; empty for a line that cannot be sent.
    pub fn text(&self) -> &str {
        match self {
            Item::Command(c) => &c.text,
            Item::Error { .. } => "",
        }
    }
}

/// A command ready to send.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Command {
    /// The first physical line (1-based) of the command.
    pub line: u64,
    /// The command text.
    pub text: String,
    /// Whether a leading `/` was removed (fine over RCON, an error in a function file).
    pub slash_stripped: bool,
}

/// Joins continuation lines and applies the comment, slash and macro rules.
#[derive(Debug, Default)]
pub struct Joiner {
    macros: HashMap<String, String>,
    line: u64,
    /// A command being continued: its first line and the text so far (without the `\`).
    pending: Option<(u64, String)>,
}

impl Joiner {
    /// A joiner that substitutes `$(name)` in macro lines with these values.
    pub fn new(macros: HashMap<String, String>) -> Self {
        Self {
            macros,
            ..Self::default()
        }
    }

    /// The number of the last physical line pushed.
    pub fn line(&self) -> u64 {
        self.line
    }

    /// Feeds one physical line (without its line ending).
    pub fn push(&mut self, physical: &str) -> Option<Item> {
        self.line += 1;
        let mut text = physical;
        if self.line == 1 {
            text = text.strip_prefix('\u{feff}').unwrap_or(text);
        }
        let text = text.trim();
        let (start, mut joined) = match self.pending.take() {
            Some((start, mut so_far)) => {
                so_far.push_str(text);
                (start, so_far)
            }
            None => (self.line, text.to_string()),
        };
        // Joined before the comment check (a comment can continue, too).
        if joined.ends_with('\\') {
            joined.pop();
            self.pending = Some((start, joined));
            return None;
        }
        self.finish_command(start, joined)
    }

    /// Counts a physical line that could not be read as text (too long, not UTF-8): it is an
    /// error at the line where its command started, and ends any open continuation.
    pub fn push_error(&mut self, message: String) -> Item {
        self.line += 1;
        let line = self.pending.take().map_or(self.line, |(start, _)| start);
        Item::Error { line, message }
    }

    /// Ends the input: a continuation still open is an error.
    pub fn finish(&mut self) -> Option<Item> {
        let (start, _) = self.pending.take()?;
        Some(Item::Error {
            line: start,
            message: "line continuation (\\) at end of input".into(),
        })
    }

    fn finish_command(&self, line: u64, text: String) -> Option<Item> {
        if text.is_empty() || text.starts_with('#') {
            return None;
        }
        if text.starts_with("//") {
            return Some(Item::Error {
                line,
                message: "'//' does not start a comment; use '#'".into(),
            });
        }
        let (text, slash_stripped) = match text.strip_prefix('/') {
            Some(rest) => (rest.to_string(), true),
            None => (text, false),
        };
        let text = match text.strip_prefix('$') {
            Some(body) => match substitute(body, &self.macros) {
                Ok(t) => t,
                Err(missing) => {
                    return Some(Item::Error {
                        line,
                        message: format!(
                            "{MACRO_NEEDS_VALUE} {}",
                            missing
                                .iter()
                                .map(|m| format!("$({m})"))
                                .collect::<Vec<_>>()
                                .join(", ")
                        ),
                    });
                }
            },
            None => text,
        };
        if text.is_empty() {
            return None;
        }
        Some(Item::Command(Command {
            line,
            text,
            slash_stripped,
        }))
    }
}

/// Replaces each `$(name)` (name: ASCII letters, digits, `_`) with its value; the names with no
/// value are returned instead, each once, in order of appearance.
pub fn substitute(body: &str, values: &HashMap<String, String>) -> Result<String, Vec<String>> {
    let mut out = String::with_capacity(body.len());
    let mut missing: Vec<String> = Vec::new();
    let mut rest = body;
    while let Some(pos) = rest.find("$(") {
        let after = &rest[pos + 2..];
        let name_len = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
            .unwrap_or(after.len());
        if name_len == 0 || !after[name_len..].starts_with(')') {
            // Not a placeholder: keep the `$(` as text.
            out.push_str(&rest[..pos + 2]);
            rest = after;
            continue;
        }
        let name = &after[..name_len];
        out.push_str(&rest[..pos]);
        match values.get(name) {
            Some(v) => out.push_str(v),
            None => {
                if !missing.iter().any(|m| m == name) {
                    missing.push(name.to_string());
                }
            }
        }
        rest = &after[name_len + 1..];
    }
    out.push_str(rest);
    if missing.is_empty() {
        Ok(out)
    } else {
        Err(missing)
    }
}

/// Parses `NAME=VALUE` for `--macro`.
pub fn parse_macro(text: &str) -> Result<(String, String), String> {
    let (name, value) = text
        .split_once('=')
        .ok_or_else(|| format!("'{text}' is not NAME=VALUE"))?;
    if name.is_empty() || !name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!(
            "macro name '{name}' must be letters, digits and '_' only"
        ));
    }
    Ok((name.to_string(), value.to_string()))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &[&str], macros: &[(&str, &str)]) -> Vec<Item> {
        let map = macros
            .iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        let mut j = Joiner::new(map);
        let mut out: Vec<Item> = lines.iter().filter_map(|l| j.push(l)).collect();
        out.extend(j.finish());
        out
    }

    fn cmd(line: u64, text: &str, slash: bool) -> Item {
        Item::Command(Command {
            line,
            text: text.into(),
            slash_stripped: slash,
        })
    }

    #[test]
    fn comments_blanks_and_trimming() {
        let items = run(
            &[
                "\u{feff}# header",
                "",
                "   say a # b  ",
                "\t",
                "#say no",
                "list",
            ],
            &[],
        );
        assert_eq!(items, [cmd(3, "say a # b", false), cmd(6, "list", false)]);
    }

    #[test]
    fn bom_only_on_first_line() {
        let items = run(&["say x", "\u{feff}say y"], &[]);
        assert_eq!(items[1], cmd(2, "\u{feff}say y", false));
    }

    #[test]
    fn continuation_joins_without_separator() {
        let items = run(&["say a\\", "   b \\", "  c", "list"], &[]);
        assert_eq!(items, [cmd(1, "say ab c", false), cmd(4, "list", false)]);
    }

    #[test]
    fn comment_can_continue() {
        let items = run(&["# comment \\", "say hidden", "say shown"], &[]);
        assert_eq!(items, [cmd(3, "say shown", false)]);
    }

    #[test]
    fn continuation_at_end_is_an_error() {
        let items = run(&["say a", "say b \\"], &[]);
        assert_eq!(items.len(), 2);
        assert!(
            matches!(&items[1], Item::Error { line: 2, message } if message.contains("end of input"))
        );
    }

    #[test]
    fn slashes() {
        let items = run(&["/say hi", "//say no", "/"], &[]);
        assert_eq!(items[0], cmd(1, "say hi", true));
        assert!(matches!(&items[1], Item::Error { line: 2, .. }));
        assert_eq!(items.len(), 2);
    }

    #[test]
    fn macros() {
        let items = run(
            &[
                "$say $(who) has $(n)",
                "say $(who) stays",
                "$tp $(who) $(x) $(y) $(x)",
            ],
            &[("who", "Alex"), ("n", "3")],
        );
        assert_eq!(items[0], cmd(1, "say Alex has 3", false));
        assert_eq!(items[1], cmd(2, "say $(who) stays", false));
        match &items[2] {
            Item::Error { line: 3, message } => {
                assert!(message.contains("$(x), $(y)"), "{message}");
            }
            other => panic!("expected an error, got {other:?}"),
        }
    }

    #[test]
    fn substitute_keeps_non_placeholders() {
        let empty = HashMap::new();
        assert_eq!(
            substitute("a $( b $(bad-name) $", &empty).unwrap(),
            "a $( b $(bad-name) $"
        );
    }

    #[test]
    fn macro_args() {
        assert_eq!(parse_macro("a=b=c").unwrap(), ("a".into(), "b=c".into()));
        assert!(parse_macro("novalue").is_err());
        assert!(parse_macro("bad name=x").is_err());
    }

    #[test]
    fn unreadable_line_ends_continuation() {
        let mut j = Joiner::default();
        assert!(j.push("say a \\").is_none());
        assert_eq!(
            j.push_error("bad".into()),
            Item::Error {
                line: 1,
                message: "bad".into()
            }
        );
        assert_eq!(j.push("list"), Some(cmd(3, "list", false)));
    }
}
