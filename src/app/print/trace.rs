//! `-v/--trace`: every packet sent and received, on stderr, as a hex dump under a line with its
//! decoded header fields and the time since the trace started. The login packet's body (the
//! password) is never printed: the engine hands it over empty, and only its header is shown.

use std::fmt::Write as _;
use std::time::Instant;

use rconsole::rcon::client::{Direction, Observer};
use rconsole::rcon::exchange::Traced;
use rconsole::rcon::packet::encode;

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

    fn packet(&self, p: &Traced) {
        let direction = if p.sent {
            Direction::Sent
        } else {
            Direction::Received
        };
        let name = p.label;
        let mut out = self.head(direction);
        if p.hidden {
            let _ = writeln!(
                out,
                " size=? id={} type={} ({name}) body=<password hidden>",
                p.id, p.kind
            );
        } else {
            let bytes = encode(p.id, p.kind, &p.body);
            let _ = writeln!(
                out,
                " size={} id={} type={} ({name}) body={} bytes",
                bytes.len() - 4,
                p.id,
                p.kind,
                p.body.len()
            );
            out.push_str(&hex_dump(&bytes));
        }
        super::progress::stderr(format_args!("{out}"), false);
    }

    fn wants_packets(&self) -> bool {
        true
    }

    fn frame(&self, direction: Direction, bytes: &[u8], what: &str) {
        self.raw(direction, bytes, what);
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
