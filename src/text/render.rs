//! Turning server output into text for people: `§` formatting codes to ANSI or stripped
//! (docs/protocol.md section 7), and the opt-in repair of line breaks vanilla drops (MC-7569).
//! Pure functions on strings; no terminal access.

/// The ANSI foreground colour for a `§0`..`§f` code (docs/protocol.md section 7).
fn ansi_colour(code: char) -> Option<u8> {
    Some(match code.to_ascii_lowercase() {
        '0' => 30,
        '1' => 34,
        '2' => 32,
        '3' => 36,
        '4' => 31,
        '5' => 35,
        '6' => 33,
        '7' => 37,
        '8' => 90,
        '9' => 94,
        'a' => 92,
        'b' => 96,
        'c' => 91,
        'd' => 95,
        'e' => 93,
        'f' => 97,
        _ => return None,
    })
}

/// The ANSI SGR parameter for a format code. Obfuscated (`§k`) has no ANSI equivalent; blink is
/// the nearest thing that keeps the text readable.
fn ansi_format(code: char) -> Option<&'static str> {
    Some(match code.to_ascii_lowercase() {
        'k' => "5",
        'l' => "1",
        'm' => "9",
        'n' => "4",
        'o' => "3",
        'r' => "0",
        _ => return None,
    })
}

/// One recognised formatting code at the start of a string.
enum Code {
    Colour(u8),
    Format(&'static str),
    Hex(u8, u8, u8),
}

const SECTION: char = '§';

/// Recognises the code that starts `s` (which begins with `§`) and its length in bytes.
fn code_at(s: &str) -> Option<(Code, usize)> {
    let rest = s.strip_prefix(SECTION)?;
    let mut chars = rest.chars();
    let c = chars.next()?;
    let head = SECTION.len_utf8() + c.len_utf8();
    if let Some(n) = ansi_colour(c) {
        return Some((Code::Colour(n), head));
    }
    if let Some(f) = ansi_format(c) {
        return Some((Code::Format(f), head));
    }
    match c {
        // §x§R§R§G§G§B§B (Bukkit/Spigot hex colour).
        'x' | 'X' => {
            let mut hex = String::with_capacity(6);
            let mut it = rest[1..].chars();
            for _ in 0..6 {
                if it.next()? != SECTION {
                    return None;
                }
                let d = it.next()?;
                if !d.is_ascii_hexdigit() {
                    return None;
                }
                hex.push(d);
            }
            let (r, g, b) = rgb(&hex)?;
            Some((Code::Hex(r, g, b), head + 6 * (SECTION.len_utf8() + 1)))
        }
        // §#RRGGBB.
        '#' => {
            let hex = rest.get(1..7)?;
            let (r, g, b) = rgb(hex)?;
            Some((Code::Hex(r, g, b), head + 6))
        }
        _ => None,
    }
}

fn rgb(hex: &str) -> Option<(u8, u8, u8)> {
    if hex.len() != 6 || !hex.bytes().all(|b| b.is_ascii_hexdigit()) {
        return None;
    }
    let p = |i: usize| u8::from_str_radix(&hex[i..i + 2], 16).ok();
    Some((p(0)?, p(2)?, p(4)?))
}

/// A piece of output: plain text or a recognised code.
enum Piece<'a> {
    Text(&'a str),
    Code(Code),
}

/// Walks `text`, handing plain runs and recognised codes to `each` in order.
fn walk<'a>(text: &'a str, mut each: impl FnMut(Piece<'a>)) {
    let mut rest = text;
    while let Some(pos) = rest.find(SECTION) {
        match code_at(&rest[pos..]) {
            Some((c, len)) => {
                each(Piece::Text(&rest[..pos]));
                each(Piece::Code(c));
                rest = &rest[pos + len..];
            }
            None => {
                // Unknown code or lone trailing `§`: stays as text.
                let end = pos + SECTION.len_utf8();
                each(Piece::Text(&rest[..end]));
                rest = &rest[end..];
            }
        }
    }
    each(Piece::Text(rest));
}

/// Renders `§` codes as ANSI escape sequences. A colour also resets formats (`ESC[0;<c>m`), as
/// in Minecraft; output that used any code ends with a reset.
pub fn to_ansi(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 16);
    let mut styled = false;
    walk(text, |piece| match piece {
        Piece::Text(s) => out.push_str(s),
        Piece::Code(c) => {
            styled = true;
            match c {
                Code::Colour(n) => {
                    out.push_str("\x1b[0;");
                    out.push_str(&n.to_string());
                    out.push('m');
                }
                Code::Format(f) => {
                    out.push_str("\x1b[");
                    out.push_str(f);
                    out.push('m');
                }
                Code::Hex(r, g, b) => out.push_str(&format!("\x1b[0;38;2;{r};{g};{b}m")),
            }
        }
    });
    if styled {
        out.push_str("\x1b[0m");
    }
    out
}

/// Removes recognised `§` codes, leaving unknown ones as text.
pub fn strip(text: &str) -> String {
    if !text.contains(SECTION) {
        return text.to_string();
    }
    let mut out = String::with_capacity(text.len());
    walk(text, |piece| {
        if let Piece::Text(s) = piece {
            out.push_str(s);
        }
    });
    out
}

/// Vanilla's parse-error messages (en_us) that are followed directly by the error context.
const PARSE_MESSAGES: [&str; 3] = [
    "Unknown or incomplete command, see below for error",
    "Incorrect argument for command",
    "Expected whitespace to end one argument, but found trailing data",
];

/// Puts back line breaks vanilla drops over RCON (MC-7569), only where the shape of the output
/// makes them certain:
/// - a parse error (`...<--[HERE]`): a break before the context, after a known vanilla message
///   or before a `...` that starts the last ten characters of context;
/// - `help` output (starts with `/`, one usage per command): a break before each `/` that
///   starts a command name right after a non-space character.
///
/// Anything else is returned unchanged.
pub fn fix_newlines(text: &str) -> String {
    if text.contains('\n') {
        return text.to_string();
    }
    if let Some(body) = text.strip_suffix("<--[HERE]") {
        for m in PARSE_MESSAGES {
            if let Some(context) = body.strip_prefix(m)
                && !context.is_empty()
            {
                return format!("{m}\n{context}<--[HERE]");
            }
        }
        if let Some(pos) = body.rfind("...")
            && pos > 0
            && body[pos + 3..].chars().count() <= 10
        {
            return format!("{}\n{}<--[HERE]", &body[..pos], &body[pos..]);
        }
        return text.to_string();
    }
    if text.starts_with('/') && text.len() > 1 {
        let mut out = String::with_capacity(text.len() + 64);
        let mut prev: Option<char> = None;
        let mut chars = text.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '/'
                && prev.is_some_and(|p| !p.is_whitespace() && p != '/')
                && chars.peek().is_some_and(|n| n.is_ascii_lowercase())
            {
                out.push('\n');
            }
            out.push(c);
            prev = Some(c);
        }
        return out;
    }
    text.to_string()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn colours_and_formats() {
        assert_eq!(
            to_ansi("§6gold §lbold §rplain"),
            "\x1b[0;33mgold \x1b[1mbold \x1b[0mplain\x1b[0m"
        );
        assert_eq!(to_ansi("§A§Oit"), "\x1b[0;92m\x1b[3mit\x1b[0m");
        assert_eq!(to_ansi("§kx§my§nz"), "\x1b[5mx\x1b[9my\x1b[4mz\x1b[0m");
    }

    #[test]
    fn every_colour_code_maps() {
        let expect = [
            30, 34, 32, 36, 31, 35, 33, 37, 90, 94, 92, 96, 91, 95, 93, 97,
        ];
        for (c, n) in "0123456789abcdef".chars().zip(expect) {
            assert_eq!(to_ansi(&format!("§{c}x")), format!("\x1b[0;{n}mx\x1b[0m"));
        }
    }

    #[test]
    fn hex_colours() {
        assert_eq!(
            to_ansi("§x§F§F§8§0§0§0orange"),
            "\x1b[0;38;2;255;128;0morange\x1b[0m"
        );
        assert_eq!(to_ansi("§#00ff7Fg"), "\x1b[0;38;2;0;255;127mg\x1b[0m");
        assert_eq!(strip("§x§F§F§8§0§0§0orange §#00ff7Fg"), "orange g");
    }

    #[test]
    fn unknown_and_trailing_codes_stay() {
        assert_eq!(to_ansi("a§zb"), "a§zb");
        assert_eq!(to_ansi("end§"), "end§");
        assert_eq!(strip("a§zb§"), "a§zb§");
        // A broken hex colour is not a code: `§x` stays as text, the `§F`s are colour codes.
        assert_eq!(strip("§x§F§Fhi"), "§xhi");
        assert_eq!(strip("§#12345"), "§#12345");
        assert_eq!(to_ansi("plain"), "plain");
    }

    #[test]
    fn strip_codes() {
        assert_eq!(strip("§6gold §lbold §rplain"), "gold bold plain");
        assert_eq!(strip("no codes"), "no codes");
        assert_eq!(strip("§§6x"), "§x");
    }

    #[test]
    fn fixes_parse_errors() {
        assert_eq!(
            fix_newlines("Unknown or incomplete command, see below for errorfoo bar<--[HERE]"),
            "Unknown or incomplete command, see below for error\nfoo bar<--[HERE]"
        );
        assert_eq!(
            fix_newlines("Invalid integer 'x'...gamerule x<--[HERE]"),
            "Invalid integer 'x'\n...gamerule x<--[HERE]"
        );
        // No certain place to break: unchanged.
        assert_eq!(
            fix_newlines("Odd messagex<--[HERE]"),
            "Odd messagex<--[HERE]"
        );
    }

    #[test]
    fn fixes_help() {
        assert_eq!(
            fix_newlines("/advancement (grant|revoke)/xp -> experience/reload/say <message>"),
            "/advancement (grant|revoke)\n/xp -> experience\n/reload\n/say <message>"
        );
        assert_eq!(fix_newlines("a/b"), "a/b");
        assert_eq!(fix_newlines("line\nother/x"), "line\nother/x");
    }
}
