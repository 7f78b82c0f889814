//! Writing command output to stdout: one write and one flush per command, so a program reading
//! `rcon` through a pipe sees each answer as soon as it is complete.

use std::io::{self, Write};

/// Where command output goes.
pub struct Printer {
    out: io::Stdout,
}

impl Printer {
    /// A printer on stdout.
    pub fn stdout() -> Self {
        Self { out: io::stdout() }
    }

    /// Prints one command's output followed by a newline, and flushes. Given an owned `String`,
    /// the newline is appended in place, so even a very long output is written without a copy.
    pub fn response(&mut self, text: impl Into<String>) -> io::Result<()> {
        let mut text = text.into();
        text.push('\n');
        let mut lock = self.out.lock();
        lock.write_all(text.as_bytes())?;
        lock.flush()
    }
}

/// Whether an error is a closed stdout (`rcon ... | head`), which is not a failure.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain().any(|c| {
        c.downcast_ref::<io::Error>()
            .is_some_and(|e| e.kind() == io::ErrorKind::BrokenPipe)
    })
}
