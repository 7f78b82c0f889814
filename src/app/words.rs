//! Wording shared by every message, with no dependency on the rest of the application (a
//! leaf, so the error and output modules can both use it).

/// `text` without the ` (os error N)` that Rust's I/O errors end with: a user reads
/// "Connection refused", not the errno. Every stderr line goes through this
/// ([`crate::app::print::progress::stderr`]), and so does the error text of JSON records
/// ([`crate::app::exit::chain`]).
pub fn without_os_codes(text: &str) -> std::borrow::Cow<'_, str> {
    const MARK: &str = " (os error ";
    if !text.contains(MARK) {
        return std::borrow::Cow::Borrowed(text);
    }
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(MARK) {
        let after = &rest[at + MARK.len()..];
        let digits = after
            .find(|c: char| !c.is_ascii_digit() && c != '-')
            .unwrap_or(after.len());
        if digits > 0 && after[digits..].starts_with(')') {
            out.push_str(&rest[..at]);
            rest = &after[digits + 1..];
        } else {
            out.push_str(&rest[..at + MARK.len()]);
            rest = after;
        }
    }
    out.push_str(rest);
    std::borrow::Cow::Owned(out)
}

/// A command shortened for messages.
pub fn short(command: &str) -> String {
    let mut s: String = command.chars().take(60).collect();
    if s.len() < command.len() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn os_error_codes_are_dropped_and_nothing_else() {
        assert_eq!(
            without_os_codes(
                "cannot connect to 127.0.0.1:1: Connection refused (os error 111); 1 command not sent"
            ),
            "cannot connect to 127.0.0.1:1: Connection refused; 1 command not sent"
        );
        assert_eq!(
            without_os_codes("a (os error 2): b (os error 10061)"),
            "a: b"
        );
        assert_eq!(without_os_codes("kept (os error x)"), "kept (os error x)");
        assert_eq!(without_os_codes("plain"), "plain");
    }
}
