//! The one progress line on stderr, redrawn in place: a batch file's `lines done / total`,
//! fan-out's `N of M done`, `--wait`'s `waiting for SERVER`. Every mode draws it here, so it is
//! drawn and erased the same way everywhere: cut to [`LINE_MAX`] characters (a wrapped line
//! cannot be redrawn in place), erased before other output reaches the terminal and when it is
//! dropped, and erased by a signal that ends the process
//! ([`crate::app::runner::interrupt::progress_line`]).

use std::io::{self, IsTerminal, Write};

/// The line is cut to this many characters, so that it never wraps on an 80-column terminal.
pub const LINE_MAX: usize = 79;

/// Erases the terminal's current line and puts the cursor at its start.
const ERASE: &str = "\r\x1b[2K";

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
        Self::new(io::stderr().is_terminal())
    }

    /// Draws `line` in place of what the line showed.
    pub fn show(&mut self, line: &str) {
        if !self.on {
            return;
        }
        let mut err = io::stderr().lock();
        let _ = write!(err, "{ERASE}{}", cut(line));
        let _ = err.flush();
        if !self.shown {
            self.shown = true;
            crate::app::runner::interrupt::progress_line(true);
        }
    }

    /// Erases the line (before other output, and at the end).
    pub fn clear(&mut self) {
        if self.shown {
            let mut err = io::stderr().lock();
            let _ = write!(err, "{ERASE}");
            let _ = err.flush();
            self.shown = false;
            crate::app::runner::interrupt::progress_line(false);
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
