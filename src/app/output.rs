//! Writing command output to stdout: one write and one flush per command, so a program reading
//! `rcon` through a pipe sees each answer as soon as it is complete.

use std::io::{self, Write};

/// Where command output goes.
pub struct Printer {
    out: io::Stdout,
    buf: Vec<u8>,
}

impl Printer {
    /// A printer on stdout.
    pub fn stdout() -> Self {
        Self {
            out: io::stdout(),
            buf: Vec::with_capacity(8192),
        }
    }

    /// Prints one command's output followed by a newline, and flushes.
    pub fn response(&mut self, text: &str) -> io::Result<()> {
        self.buf.clear();
        self.buf.extend_from_slice(text.as_bytes());
        self.buf.push(b'\n');
        let mut lock = self.out.lock();
        lock.write_all(&self.buf)?;
        lock.flush()
    }
}

impl Printer {
    /// Prints text as is (no newline added), and flushes.
    pub fn text(&mut self, text: &str) -> io::Result<()> {
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
