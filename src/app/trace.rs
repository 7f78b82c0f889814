//! `-v/--trace`: every packet sent and received, on stderr, as a hex dump under a line with its
//! decoded header fields and the time since the trace started. The login packet's body (the
//! password) is never printed: the engine hands it over empty, and only its header is shown.

use std::fmt::Write as _;
use std::time::Instant;

use rconsole::client::{Direction, Observer};
use rconsole::packet::{Packet, TYPE_COMMAND, TYPE_LOGIN, TYPE_OUTPUT};

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
        eprint!("{out}");
    }
}

/// What an RCON packet type means in the direction it went (PROTOCOL.md section 1).
fn type_name(direction: Direction, p: &Packet) -> &'static str {
    match (direction, p.kind) {
        (Direction::Sent, TYPE_LOGIN) => "login",
        (Direction::Sent, TYPE_COMMAND) => "command",
        (Direction::Sent, TYPE_OUTPUT) if p.body.is_empty() => "end-of-output sentinel",
        (Direction::Received, 2) if p.id == -1 => "login reply: refused",
        (Direction::Received, 2) => "login reply",
        (Direction::Received, TYPE_OUTPUT) => "output",
        _ => "other",
    }
}

impl Observer for Trace {
    fn warning(&self, message: &str) {
        eprintln!("rcon: warning: {message}");
    }

    fn packet(&self, direction: Direction, packet: &Packet, body_hidden: bool) {
        let name = type_name(direction, packet);
        let mut out = self.head(direction);
        if body_hidden {
            // The size would tell the password's length: leave it out too.
            let _ = writeln!(
                out,
                " size=? id={} type={} ({name}) body=<password hidden>",
                packet.id, packet.kind
            );
        } else {
            let bytes = packet.encode();
            let _ = writeln!(
                out,
                " size={} id={} type={} ({name}) body={} bytes",
                bytes.len() - 4,
                packet.id,
                packet.kind,
                packet.body.len()
            );
            out.push_str(&hex_dump(&bytes));
        }
        eprint!("{out}");
    }

    fn wants_packets(&self) -> bool {
        true
    }

    fn frame(&self, direction: Direction, bytes: &[u8], what: &str) {
        self.raw(direction, bytes, what);
    }
}

/// Sixteen bytes a line: offset, hex, and the printable ASCII (others as `.`).
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

    #[test]
    fn type_names() {
        let p = |id, kind, body: &str| Packet::new(id, kind, body.as_bytes());
        assert_eq!(type_name(Direction::Sent, &p(1, 3, "")), "login");
        assert_eq!(type_name(Direction::Sent, &p(2, 2, "list")), "command");
        assert_eq!(
            type_name(Direction::Sent, &p(-2, 0, "")),
            "end-of-output sentinel"
        );
        assert_eq!(
            type_name(Direction::Received, &p(-1, 2, "")),
            "login reply: refused"
        );
        assert_eq!(type_name(Direction::Received, &p(2, 0, "x")), "output");
    }
}
