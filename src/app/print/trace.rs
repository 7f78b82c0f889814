//! `-v/--trace`: every packet sent and received, on stderr, as a hex dump under a line with its
//! decoded header fields and the time since the trace started. The login packet's body (the
//! password) is never printed: the engine hands it over empty, and only its header is shown.

use std::fmt::Write as _;
use std::time::Instant;

use rconsole::consoles::Protocol;
use rconsole::engine::{Direction, Observer, Traced};

/// Prints packet traces and warnings on stderr.
pub struct Trace {
    start: Instant,
}

impl Default for Trace {
    fn default() -> Self {
        Self::new()
    }
}

impl Trace {
    /// A trace whose clock starts now.
    pub fn new() -> Self {
        Self {
            start: Instant::now(),
        }
    }

    fn head(&self, direction: Direction) -> String {
        let ms = self.start.elapsed().as_secs_f64() * 1000.0;
        let dir = match direction {
            Direction::Sent => "sent",
            Direction::Received => "recv",
        };
        format!("rcon: trace +{ms:.1}ms {dir}")
    }

    /// Traces raw bytes of the status ping or the query, with what `describe` makes of them.
    pub fn raw(&self, direction: Direction, bytes: &[u8], describe: &str) {
        let mut out = format!(
            "{} {} bytes {describe}\n",
            self.head(direction),
            bytes.len()
        );
        out.push_str(&hex_dump(bytes));
        super::progress::stderr(format_args!("{out}"), false);
    }
}

/// What an RCON packet type means in the direction it went (docs/protocol.md section 1).
impl Observer for Trace {
    fn warning(&self, message: &str) {
        super::output::warning(message);
    }

    /// An RCON packet under a line with its header fields (its bytes are one whole packet:
    /// size, id, type, body and two NULs); another protocol's bytes as they are.
    fn trace(&self, t: &Traced) {
        let field = |at: usize| {
            let b = t.bytes.get(at..at + 4)?;
            Some(i32::from_le_bytes([b[0], b[1], b[2], b[3]]))
        };
        let (Protocol::Rcon, Some(id), Some(kind)) = (t.protocol, field(4), field(8)) else {
            return self.raw(t.direction, &t.bytes, &t.what);
        };
        let name = &t.what;
        let mut out = self.head(t.direction);
        if t.hidden {
            let _ = writeln!(
                out,
                " size=? id={id} type={kind} ({name}) body=<password hidden>"
            );
        } else {
            let _ = writeln!(
                out,
                " size={} id={id} type={kind} ({name}) body={} bytes",
                t.bytes.len() - 4,
                t.bytes.len().saturating_sub(14)
            );
            out.push_str(&hex_dump(&t.bytes));
        }
        super::progress::stderr(format_args!("{out}"), false);
    }

    fn wants_packets(&self) -> bool {
        true
    }
}

pub fn hex_dump(bytes: &[u8]) -> String {
    let mut out = String::with_capacity(bytes.len() * 4 + 16);
    for (i, line) in bytes.chunks(16).enumerate() {
        let _ = write!(out, "  {:04x} ", i * 16);
        for (j, b) in line.iter().enumerate() {
            if j == 8 {
                out.push(' ');
            }
            let _ = write!(out, " {b:02x}");
        }
        for j in line.len()..16 {
            out.push_str(if j == 8 { "    " } else { "   " });
        }
        out.push_str("  |");
        out.extend(line.iter().map(|&b| {
            if b.is_ascii_graphic() || b == b' ' {
                char::from(b)
            } else {
                '.'
            }
        }));
        out.push_str("|\n");
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hex_dump_layout() {
        let dump = hex_dump(b"\x0e\x00\x00\x00\x01\x00\x00\x00\x02\x00\x00\x00list\x00\x00");
        let lines: Vec<&str> = dump.lines().collect();
        assert_eq!(lines.len(), 2);
        assert_eq!(
            lines[0],
            "  0000  0e 00 00 00 01 00 00 00  02 00 00 00 6c 69 73 74  |............list|"
        );
        assert_eq!(
            lines[1],
            "  0010  00 00                                             |..|"
        );
        assert_eq!(hex_dump(&[]), "");
    }
}
