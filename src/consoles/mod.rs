//! The remote consoles that are not Source-style RCON (docs/protocol.md section 8): BattlEye
//! RCon over UDP, Rust's WebRCON over WebSocket and the 7 Days to Die telnet console.
//!
//! Each protocol is a sans-IO exchange ([`ConsoleExchange`]): bytes (a datagram, a WebSocket text
//! frame, a chunk of a TCP stream) and clock ticks go in, [`Action`]s come out (what to send,
//! an answer, a server message, a trace line, when to wake). The exchanges never touch a socket
//! or sleep; [`driver`] moves their bytes over UDP, a WebSocket or a [`Transport`] and gives the
//! application one [`Remote`] for every dialect, which the RCON [`crate::Client`] implements too.
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

use std::time::Instant;

use crate::error::Error;

pub use crate::engine::{MessageSink, Protocol, Remote};
pub use driver::{Console, Tuning, set_tuning};

/// What an [`ConsoleExchange`] asks its driver to do, in order.
#[derive(Debug)]
pub enum Action {
    /// Send these bytes: one datagram (BattlEye), one text frame (WebRCON), stream bytes
    /// (telnet).
    Send(Vec<u8>),
    /// The login succeeded; commands may be given.
    LoggedIn,
    /// The pending command's answer, complete.
    Answer(String),
    /// A message the server sent on its own (chat, log line, event); never part of an answer.
    Message(String),
    /// What went over the wire, for `--trace`: the bytes are already masked (a password is
    /// never in them).
    Trace {
        /// Sent (true) or received.
        sent: bool,
        /// The bytes to show.
        bytes: Vec<u8>,
        /// What they are.
        what: String,
    },
    /// A one-line warning for the user.
    Warning(Notice),
    /// The exchange failed; the connection is no longer usable.
    Fail(Error),
}

/// What a console's exchange tells the user that is not an error, typed; its
/// [`Display`](std::fmt::Display) is the wording `rcon` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Notice {
    /// BattlEye: the server answered a command with server messages (0x02) instead of a command
    /// answer, a known Arma Reforger behaviour; they are taken as the answer.
    AnswerAsMessages,
    /// WebRCON: a frame that is not WebRCON's JSON was ignored.
    NotWebRconJson {
        /// Why it could not be read.
        reason: String,
    },
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::AnswerAsMessages => f.write_str(
                "the server answered with server messages (0x02) instead of a command answer (a \
                 known Arma Reforger behaviour); taking them as the answer",
            ),
            Notice::NotWebRconJson { reason } => {
                write!(f, "ignored a WebRCON frame that is not its JSON: {reason}")
            }
        }
    }
}

/// A protocol's decisions, as data in and actions out.
pub trait ConsoleExchange: Send {
    /// Begins the login (queues the first packets).
    fn start(&mut self, now: Instant);
    /// Gives a command to run; only one is pending at a time.
    fn command(&mut self, command: &str, now: Instant);
    /// Bytes arrived from the server.
    fn receive(&mut self, data: &[u8], now: Instant);
    /// The clock moved on (the wake time passed, or nothing arrived).
    fn tick(&mut self, now: Instant);
    /// The next action, if any.
    fn poll(&mut self) -> Option<Action>;
    /// When the exchange next needs a [`ConsoleExchange::tick`], if ever.
    fn wake(&self) -> Option<Instant>;
    /// The server closed the connection while a command that stops it was under way: the
    /// answer so far, when the protocol has one (its answers end by a quiet gap, which a
    /// stopping server does not wait for).
    fn closed(&mut self) -> Option<String> {
        None
    }
}
