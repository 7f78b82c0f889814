//! rconsole: a correct RCON client library, plus a practice server that behaves like the real
//! ones.
//!
//! - [`packet`]: the wire format, sans-IO (encoding, incremental decoding, limits).
//! - [`transport`]: byte streams the engine runs over; the only module that opens sockets.
//! - [`process`]: a byte stream over a child process's pipes (`ssh -W`, a proxy command).
//! - [`dialect`]: what differs between Minecraft, Source, Factorio and Palworld servers.
//! - [`exchange`]: the RCON conversation as a sans-IO state machine: login, the end-of-output
//!   probe, what ends an answer, what is stale, timers.
//! - [`client`]: the blocking driver that runs an [`exchange::Exchange`] over a transport.
//! - [`varint`], [`status`], [`query`]: the Minecraft game protocol's Server List Ping and the
//!   UDP query, sans-IO.
//! - [`srv`]: DNS SRV records for `--ping HOST` without a port, sans-IO.
//! - [`net`]: drives the status ping, the query and the SRV lookup over the network.
//! - [`mcfunction`]: the `.mcfunction` line rules for batch input, sans-IO.
//! - `mgmt` (cargo feature `mgmt`, on by default): the Minecraft Server Management Protocol
//!   (JSON-RPC over WebSocket, TLS) client and a practice management server.
//! - [`render`]: `§` formatting codes to ANSI or plain text.
//! - [`practice`]: an in-process server with a strict vanilla mode and other dialects, for tests,
//!   demos and benchmarks.
//!
//! Embedding: connect, log in and run commands; long output comes back whole.
//!
//! ```
//! use rconsole::practice::{Config, PracticeServer};
//! use rconsole::transport::TcpConnector;
//! use rconsole::{Client, Options, Password};
//!
//! let server = PracticeServer::start(Config::default())?; // strict vanilla, password "practice"
//! let connector = Box::new(TcpConnector::new("127.0.0.1", server.port()));
//! let mut client = Client::connect(connector, Password::new("practice"), Options::default())?;
//! assert_eq!(client.command("echo hello")?, "hello");
//! assert_eq!(client.command("chars 10000")?.encode_utf16().count(), 10_000); // 3 fragments
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Out of scope here: argument parsing, configuration files, the interactive console, reading
//! batch files and writing to the terminal. Those belong to the `rcon` binary.

pub mod client;
pub mod dialect;
pub mod error;
pub mod exchange;
pub mod mcfunction;
#[cfg(feature = "mgmt")]
pub mod mgmt;
pub mod net;
pub mod packet;
pub mod practice;
pub mod process;
pub mod query;
pub mod render;
pub mod srv;
pub mod status;
pub mod transport;
pub mod varint;

pub use client::{Client, EndDetection, Options, Password};
pub use dialect::Dialect;
pub use error::{Error, ErrorKind, Result};

use std::time::Duration;

/// Formats a duration the way the command line accepts it: `1.5s`, `250ms`.
pub fn format_duration(d: Duration) -> String {
    let ms = d.as_millis();
    if ms >= 1000 && ms.is_multiple_of(1000) {
        format!("{}s", ms / 1000)
    } else if ms >= 1000 {
        format!("{:.1}s", d.as_secs_f64())
    } else {
        format!("{ms}ms")
    }
}

/// Parses `5s`, `500ms`, `1.5s`, `2m` or a bare number of seconds.
pub fn parse_duration(text: &str) -> std::result::Result<Duration, String> {
    let t = text.trim();
    let split = t
        .find(|c: char| !(c.is_ascii_digit() || c == '.'))
        .unwrap_or(t.len());
    let (num, unit) = t.split_at(split);
    let value: f64 = num
        .parse()
        .map_err(|_| format!("invalid duration '{text}' (examples: 5s, 500ms, 1.5s, 2m)"))?;
    let scale = match unit.trim() {
        "" | "s" | "sec" | "secs" => 1.0,
        "ms" => 0.001,
        "m" | "min" => 60.0,
        "h" => 3600.0,
        _ => {
            return Err(format!(
                "invalid duration unit in '{text}' (use ms, s, m or h)"
            ));
        }
    };
    let secs = value * scale;
    if !secs.is_finite() || secs > 86_400.0 * 365.0 {
        return Err(format!("duration '{text}' is out of range"));
    }
    Ok(Duration::from_secs_f64(secs))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn durations() {
        assert_eq!(parse_duration("5s"), Ok(Duration::from_secs(5)));
        assert_eq!(parse_duration("500ms"), Ok(Duration::from_millis(500)));
        assert_eq!(parse_duration("1.5s"), Ok(Duration::from_millis(1500)));
        assert_eq!(parse_duration("2m"), Ok(Duration::from_secs(120)));
        assert_eq!(parse_duration("3"), Ok(Duration::from_secs(3)));
        assert!(parse_duration("fast").is_err());
        assert!(parse_duration("5y").is_err());
        assert!(parse_duration("").is_err());
        assert_eq!(format_duration(Duration::from_millis(1500)), "1.5s");
        assert_eq!(format_duration(Duration::from_secs(5)), "5s");
        assert_eq!(format_duration(Duration::from_millis(20)), "20ms");
    }
}
