//! The one progress line on stderr, redrawn in place: a batch file's `lines done / total`,
//! fan-out's `N of M done`, `--wait`'s `waiting for SERVER`. Every mode draws it here, so it is
//! drawn and erased the same way everywhere: cut to [`LINE_MAX`] characters (a wrapped line
//! cannot be redrawn in place), erased before other output reaches the terminal and when it is
//! dropped, and erased by a signal that ends the process
//! ([`crate::app::interrupt::progress_line`]).
//!
//! Every other line on stderr goes through [`stderr`] (the sink's `print::stderr!`), and stdout's
//! output on the same terminal through [`around`]: the line is erased, the text written, the
//! line drawn again below it, so an error or a warning during a batch is never written into
//! the middle of the progress text.

use std::fmt;
use std::io::{self, Write};
use std::sync::{Mutex, MutexGuard};

/// The line is cut to this many characters, so that it never wraps on an 80-column terminal.
pub const LINE_MAX: usize = 79;

/// Erases the terminal's current line and puts the cursor at its start.
const ERASE: &str = "\r\x1b[2K";

/// What the progress line shows now, while it is shown.
static SHOWN: Mutex<Option<String>> = Mutex::new(None);

fn shown() -> MutexGuard<'static, Option<String>> {
    SHOWN.lock().unwrap_or_else(|e| e.into_inner())
}

/// Writes `args` (and a newline with `newline`) on stderr in one write, without Rust's
/// ` (os error N)` ([`crate::app::words::without_os_codes`]), around the progress line if one
/// is shown: erased first, drawn again after a text that ends its line. A closed or full stderr
/// is ignored.
pub fn stderr(args: fmt::Arguments<'_>, newline: bool) {
    let text = match args.as_str() {
        Some(fixed) => std::borrow::Cow::Borrowed(fixed),
        None => std::borrow::Cow::Owned(args.to_string()),
    };
    // Rust's I/O errors end with their errno; the user reads the words.
    let mut text = crate::app::words::without_os_codes(&text).into_owned();
    if newline {
        text.push('\n');
    }
    let shown = shown();
    let mut err = io::stderr().lock();
    let Some(line) = shown.as_deref() else {
        let _ = err.write_all(text.as_bytes());
        return;
    };
    let _ = write!(err, "{ERASE}{text}");
    if text.ends_with('\n') {
        let _ = err.write_all(line.as_bytes());
    }
    let _ = err.flush();
}

/// Runs `write` (output on stdout, which is the terminal the progress line is drawn on) with
/// the line erased before and drawn again after, when one is shown.
pub fn around<T>(write: impl FnOnce() -> T) -> T {
    let shown = shown();
    let Some(line) = shown.as_deref() else {
        return write();
    };
    let mut err = io::stderr().lock();
    let _ = write!(err, "{ERASE}");
    let _ = err.flush();
    let result = write();
    let _ = err.write_all(line.as_bytes());
    let _ = err.flush();
    result
}

/// Whether stderr is a terminal (the progress line, password prompts), asked once.
pub fn stderr_is_terminal() -> bool {
    use std::io::IsTerminal;
    static TERMINAL: std::sync::OnceLock<bool> = std::sync::OnceLock::new();
    *TERMINAL.get_or_init(|| std::io::stderr().is_terminal())
}

/// The progress line; draws nothing when it is off (stderr is not a terminal).
#[derive(Debug)]
pub struct ProgressLine {
    on: bool,
    shown: bool,
}

impl ProgressLine {
    /// A line that is drawn only when `on`.
    pub fn new(on: bool) -> Self {
        ProgressLine { on, shown: false }
    }

    /// A line that is drawn when stderr is a terminal.
    pub fn on_terminal() -> Self {
        Self::new(stderr_is_terminal())
    }

    /// Draws `line` in place of what the line showed.
    pub fn show(&mut self, line: &str) {
        if !self.on {
            return;
        }
        let mut shown = self::shown();
        let mut err = io::stderr().lock();
        let _ = write!(err, "{ERASE}{}", cut(line));
        let _ = err.flush();
        *shown = Some(cut(line).to_string());
        if !self.shown {
            self.shown = true;
            crate::app::interrupt::progress_line(true);
        }
    }

    /// Erases the line (before other output, and at the end).
    pub fn clear(&mut self) {
        if self.shown {
            let mut shown = self::shown();
            let mut err = io::stderr().lock();
            *shown = None;
            let _ = write!(err, "{ERASE}");
            let _ = err.flush();
            self.shown = false;
            crate::app::interrupt::progress_line(false);
        }
    }
}

impl Drop for ProgressLine {
    /// A run that ends early (an error, a signal) leaves no stale line for the shell's prompt.
    fn drop(&mut self) {
        self.clear();
    }
}

/// `line`, cut to [`LINE_MAX`] characters.
fn cut(line: &str) -> &str {
    match line.char_indices().nth(LINE_MAX) {
        Some((at, _)) => &line[..at],
        None => line,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_long_line_is_cut_so_that_it_never_wraps() {
        let long = "é".repeat(200);
        assert_eq!(cut(&long).chars().count(), LINE_MAX);
        assert_eq!(cut("short"), "short");
        let exact = "x".repeat(LINE_MAX);
        assert_eq!(cut(&exact), exact);
    }

    #[test]
    fn a_line_that_is_off_is_never_shown() {
        let mut line = ProgressLine::new(false);
        line.show("rcon: 1 of 2 done");
        assert!(!line.shown);
        assert!(!line.on);
    }
}
