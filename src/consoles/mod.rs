//! The remote consoles that are not Source-style RCON (docs/protocol.md section 8): BattlEye
//! RCon over UDP, Rust's WebRCON over WebSocket and the 7 Days to Die telnet console.
//!
//! Each protocol is a sans-IO machine ([`crate::engine::Machine`], here also named
//! [`ConsoleExchange`]), the same shape as the RCON one: bytes (a datagram, a chunk of a TCP
//! stream) and clock ticks go in, [`Action`]s come out (what to send, an answer, a server
//! message, a trace line, when to wake); WebRCON's does its WebSocket itself, with the crate's
//! one codec. The machines never touch a socket or sleep; the engine's one
//! [driver](crate::engine::driver) moves their bytes over UDP or a [`Transport`], and [`driver`]
//! gives the application one [`Remote`] for these dialects, as the RCON [`crate::Client`] does
//! for RCON.
//!
//! What this module does not own: the RCON engine ([`crate::rcon::client`]), which engine serves
//! a dialect ([`crate::dialect::open`], above both), argument parsing and terminal output (the
//! `rcon` binary).
//!
//! ```
//! # #[cfg(feature = "practice")] {
//! use rconsole::consoles::practice::{self, ConsoleServer, Kind};
//! use rconsole::consoles::Protocol;
//! use rconsole::transport::TcpConnector;
//! use rconsole::{Dialect, ClientOptions, Password};
//!
//! let server = ConsoleServer::start(practice::ConsoleServerConfig {
//!     kind: Kind::BattlEyeLossy, // drops, duplicates, reorders and corrupts datagrams
//!     ..practice::ConsoleServerConfig::default() // password "practice"
//! })?;
//! let mut opts = ClientOptions::default();
//! Dialect::BATTLEYE.apply(&mut opts);
//! let connector = Box::new(TcpConnector::new("127.0.0.1", server.port())); // names the address
//! let mut remote =
//!     rconsole::open(Protocol::BattlEye, connector, Password::new("practice"), opts)?;
//! let mut out = Vec::new();
//! remote.command_into("chars 3000", &mut out)?; // three parts, put back in order
//! assert_eq!(String::from_utf8(out)?.chars().count(), 3000);
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! [`Transport`]: crate::transport::Transport

pub mod battleye;
pub mod driver;
#[cfg(feature = "practice")]
pub mod practice;
pub mod telnet;
pub mod webrcon;

#[cfg(test)]
mod tests;

pub use crate::engine::{Action, MessageSink, Protocol, Remote};
pub use driver::{Console, Tuning, set_tuning};

/// The consoles' name for the one protocol machine shape, [`crate::engine::Machine`]: code
/// written against it still compiles.
pub use crate::engine::Machine as ConsoleExchange;

/// What a console's machine tells the user that is not an error, carried in an
/// [`engine::Notice`](crate::engine::Notice); its [`Display`](std::fmt::Display) is the
/// wording `rcon` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum ConsoleNotice {
    /// BattlEye: the server answered a command with server messages (0x02) instead of a command
    /// answer, a known Arma Reforger behaviour; they are taken as the answer.
    AnswerAsMessages,
    /// WebRCON: a frame that is not WebRCON's JSON was ignored.
    NotWebRconJson {
        /// Why it could not be read.
        reason: String,
    },
}

impl std::fmt::Display for ConsoleNotice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            ConsoleNotice::AnswerAsMessages => f.write_str(
                "the server answered with server messages (0x02) instead of a command answer (a \
                 known Arma Reforger behaviour); taking them as the answer",
            ),
            ConsoleNotice::NotWebRconJson { reason } => {
                write!(f, "ignored a WebRCON frame that is not its JSON: {reason}")
            }
        }
    }
}
