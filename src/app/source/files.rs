//! Files and stdin as a source of commands: read line by line through the mcfunction rules
//! (docs/protocol.md section 6) without holding more than a line in memory ([`Input`],
//! [`next_item`]), or whole for several servers, which all get the same list
//! ([`read_commands`]).

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, Read};

use rconsole::text::mcfunction::{Item, Joiner};

use crate::app::exit::{Exit, fail};
use crate::app::interrupt;

/// The longest physical line kept in memory; longer ones are reported and skipped (no command
/// can be that long anyway).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// One input: a name for messages and a reader.
pub struct Input {
    /// `<stdin>` or the path as given.
    pub name: String,
    reader: BufReader<Box<dyn Read>>,
    /// Physical lines in a file, for the progress bar.
    pub total: Option<u64>,
    /// Whether the rest can be read to count what was not sent after an interruption: a file,
    /// or stdin redirected from one (a pipe or terminal could wait forever).
    countable: bool,
    /// The file's path, which [`Input::check_ahead`] reads ahead; `None` for stdin.
    path: Option<String>,
    /// A line that ends the input instead of being sent ([`Input::ending_at`]).
    quit_word: Option<&'static str>,
}

impl Input {
    /// Opens `-` (stdin) or a file. A progress bar needs the line count of a file, so when
    /// `progress` is set the file is read once ahead to count lines (streaming, flat memory).
    pub fn open(path: &str, progress: bool) -> anyhow::Result<Input> {
        if path == "-" {
            return Ok(Input::stdin());
        }
        // Opening a directory succeeds on Unix and fails only at the first read, after earlier
        // commands went out; refuse it here, as an input error.
        if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            return Err(fail(
                Exit::Usage,
                format!("cannot read {path}: it is a directory, not a file of commands"),
            ));
        }
        let open =
            || File::open(path).map_err(|e| fail(Exit::Usage, format!("cannot read {path}: {e}")));
        let total = if progress {
            Some(
                count_lines(open()?)
                    .map_err(|e| fail(Exit::Usage, format!("cannot read {path}: {e}")))?,
            )
        } else {
            None
        };
        Ok(Input {
            name: path.to_string(),
            reader: BufReader::with_capacity(64 * 1024, Box::new(open()?)),
            total,
            countable: true,
            path: Some(path.to_string()),
            quit_word: None,
        })
    }

    /// Standard input.
    pub fn stdin() -> Input {
        Input {
            name: "<stdin>".into(),
            reader: BufReader::with_capacity(64 * 1024, Box::new(io::stdin())),
            total: None,
            countable: stdin_is_a_file(),
            path: None,
            quit_word: None,
        }
    }

    /// This input, ending at the line `word` (spaces around it ignored) as at its end: the
    /// line and everything after it are not read as commands (rcon-cli's `exit`).
    pub fn ending_at(mut self, word: Option<&'static str>) -> Input {
        self.quit_word = word;
        self
    }

    /// Reads a file ahead through the mcfunction rules and checks every command against the
    /// server's limit (`max` bytes, no NUL), so a line that cannot be sent stops the run before
    /// its first command goes out, not half way through it. Stdin is not read ahead (it streams;
    /// its lines are checked as they come).
    pub fn check_ahead(&self, macros: &HashMap<String, String>, max: usize) -> anyhow::Result<()> {
        let Some(path) = &self.path else {
            return Ok(());
        };
        let mut ahead = Input::open(path, false)?;
        let mut joiner = Joiner::new(macros.clone());
        let mut buf = Vec::with_capacity(4096);
        while let Some((item, last)) = next_item(&mut ahead, &mut joiner, &mut buf)? {
            if let Some((line, why)) = unsendable(&item, max) {
                let why = why.strip_suffix("; not sent").unwrap_or(&why);
                return Err(fail(
                    Exit::Refused,
                    format!(
                        "{path}:{line}: {why}; nothing was sent (every line of a file is checked before the first command goes out; --keep-going sends the others)"
                    ),
                ));
            }
            if last {
                break;
            }
        }
        Ok(())
    }

    /// How many more items (commands, and lines that could not be sent) the input holds, and
    /// the lines of the first and the last of them (none when there are none); `None` when it
    /// cannot be read to its end without waiting (a pipe, a terminal), or a read fails.
    pub fn count_rest(
        &mut self,
        joiner: &mut Joiner,
        buf: &mut Vec<u8>,
    ) -> Option<(u64, Option<(u64, u64)>)> {
        if !self.countable {
            return None;
        }
        let mut rest = 0;
        let mut lines: Option<(u64, u64)> = None;
        while let Some((item, last)) = next_item(self, joiner, buf).ok()? {
            rest += 1;
            let at = item.line();
            lines = Some((lines.map_or(at, |(first, _)| first), at));
            if last {
                break;
            }
        }
        Some((rest, lines))
    }
}

/// Whether stdin is redirected from a regular file (`rcon < commands.txt`).
fn stdin_is_a_file() -> bool {
    #[cfg(unix)]
    let handle = std::os::fd::AsFd::as_fd(&io::stdin()).try_clone_to_owned();
    #[cfg(windows)]
    let handle = std::os::windows::io::AsHandle::as_handle(&io::stdin()).try_clone_to_owned();
    #[cfg(any(unix, windows))]
    return handle
        .map(File::from)
        .and_then(|f| f.metadata())
        .is_ok_and(|m| m.is_file());
    #[cfg(not(any(unix, windows)))]
    false
}

fn count_lines(file: File) -> io::Result<u64> {
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let mut lines = 0u64;
    let mut last = b'\n';
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        lines += buf.iter().filter(|&&b| b == b'\n').count() as u64;
        last = buf[buf.len() - 1];
        let n = buf.len();
        reader.consume(n);
    }
    Ok(lines + u64::from(last != b'\n'))
}

/// The one warning for an input whose lines had a leading `/` removed (mcfunction rules):
/// the first such line and how many more, local and `--remote` batches alike.
pub fn warn_leading_slashes(name: &str, first: u64, slashes: u64) {
    let more = if slashes > 1 {
        format!(
            " (and on {} more line{})",
            slashes - 1,
            if slashes == 2 { "" } else { "s" }
        )
    } else {
        String::new()
    };
    crate::app::print::output::warning(&format!(
        "{name}:{first}: leading '/' removed{more}; RCON does not need it and function files do not allow it"
    ));
}

/// Reads one physical line into `buf` without its line ending, keeping at most `max` bytes.
/// Returns `None` at end of input, else whether the line was longer than `max`.
pub fn read_line<R: BufRead + ?Sized>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<Option<bool>> {
    buf.clear();
    let mut any = false;
    let mut overflow = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(b) => b,
            // Ctrl-C or SIGTERM while waiting for a line of stdin: stop reading (see
            // `interrupt::Stop`); any other signal: read on.
            Err(e) if e.kind() == io::ErrorKind::Interrupted && !interrupt::stopping() => {
                continue;
            }
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            if !any {
                return Ok(None);
            }
            break;
        }
        any = true;
        let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], i + 1, true),
            None => (available, available.len(), false),
        };
        if buf.len() + chunk.len() <= max {
            buf.extend_from_slice(chunk);
        } else {
            overflow = true;
        }
        reader.consume(used);
        if done {
            break;
        }
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(Some(overflow))
}

/// Every command of one input, read whole, with its line numbers.
#[derive(Debug)]
pub struct Commands {
    /// `<stdin>` or the path as given.
    pub name: String,
    /// Each command and the line it starts on.
    pub lines: Vec<(String, u64)>,
}

/// Reads every command of `path` (`-` is stdin) through the mcfunction rules, for runs on
/// several servers, which all get the same list. Any line that cannot be sent is an error naming
/// `file:line`, before anything is sent anywhere.
pub fn read_commands(path: &str, macros: &HashMap<String, String>) -> anyhow::Result<Commands> {
    let mut input = Input::open(path, false)?;
    let mut joiner = Joiner::new(macros.clone());
    let mut buf = Vec::with_capacity(4096);
    let mut lines = Vec::new();
    while let Some((item, last)) = next_item(&mut input, &mut joiner, &mut buf)? {
        match item {
            Item::Command(c) => lines.push((c.text, c.line)),
            Item::Error { line, message } => {
                return Err(fail(
                    Exit::Refused,
                    format!(
                        "{}:{line}: {}; nothing was sent",
                        input.name,
                        with_hint(message)
                    ),
                ));
            }
        }
        if last {
            break;
        }
    }
    Ok(Commands {
        name: input.name,
        lines,
    })
}

/// Why an item cannot be sent, as `(line, reason)` for a `file:line: reason` message: a line
/// the mcfunction rules refuse, or a command over `max` bytes or with a NUL.
pub fn unsendable(item: &Item, max: usize) -> Option<(u64, String)> {
    match item {
        Item::Error { line, message } => Some((*line, with_hint(message.clone()))),
        Item::Command(c) => rconsole::engine::check_command(&c.text, max)
            .err()
            .map(|e| (c.line, e.to_string())),
    }
}

/// A line's refusal with the flag that helps: a macro line with no value names `--macro`.
fn with_hint(message: String) -> String {
    if message.starts_with(rconsole::text::mcfunction::MACRO_NEEDS_VALUE) {
        format!("{message} (give --macro NAME=VALUE)")
    } else {
        message
    }
}

/// The next item of `input` through the mcfunction rules: a command, or a line that cannot be
/// sent. `None` at the end; `true` with the item the end produced (an unfinished continuation).
pub fn next_item(
    input: &mut Input,
    joiner: &mut Joiner,
    buf: &mut Vec<u8>,
) -> anyhow::Result<Option<(Item, bool)>> {
    loop {
        let line = read_line(&mut input.reader, buf, MAX_LINE_BYTES)
            .map_err(|e| fail(Exit::Usage, format!("cannot read {}: {e}", input.name)))?;
        let item = match line {
            None => return Ok(joiner.finish().map(|item| (item, true))),
            Some(true) => joiner.push_error(format!(
                "line is longer than {} MiB; not sent",
                MAX_LINE_BYTES >> 20
            )),
            Some(false) => match std::str::from_utf8(buf) {
                Ok(text) if input.quit_word.is_some_and(|w| text.trim() == w) => {
                    input.reader = BufReader::new(Box::new(io::empty()));
                    return Ok(joiner.finish().map(|item| (item, true)));
                }
                Ok(text) => match joiner.push(text) {
                    Some(item) => item,
                    None => continue,
                },
                Err(_) => joiner.push_error("line is not valid UTF-8; not sent".into()),
            },
        };
        return Ok(Some((item, false)));
    }
}

/// Reads a whole reader through [`read_line`]; for tests.
#[cfg(test)]
fn lines_of(mut r: impl std::io::Read, max: usize) -> Vec<(String, bool)> {
    let mut reader = BufReader::with_capacity(4, &mut r);
    let mut buf = Vec::new();
    let mut out = Vec::new();
    while let Some(over) = read_line(&mut reader, &mut buf, max).unwrap() {
        out.push((String::from_utf8(buf.clone()).unwrap(), over));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lines_with_any_ending() {
        let got = lines_of(&b"a\r\nbb\n\nccc"[..], 100);
        let want = [("a", false), ("bb", false), ("", false), ("ccc", false)];
        assert_eq!(got, want.map(|(s, o)| (s.to_string(), o)).to_vec());
    }

    #[test]
    fn overlong_lines_are_flagged_not_kept() {
        let got = lines_of(&b"short\nthis one is too long\nok"[..], 8);
        assert_eq!(got[0], ("short".into(), false));
        assert!(got[1].1);
        assert!(got[1].0.len() <= 8);
        assert_eq!(got[2], ("ok".into(), false));
    }

    #[test]
    fn counts_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        for (text, n) in [("", 0), ("a", 1), ("a\n", 1), ("a\nb", 2), ("\n\n", 2)] {
            std::fs::write(&p, text).unwrap();
            assert_eq!(count_lines(File::open(&p).unwrap()).unwrap(), n, "{text:?}");
        }
    }
}
