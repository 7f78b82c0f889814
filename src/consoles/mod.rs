//! The remote consoles that are not Source-style RCON (docs/protocol.md section 8): BattlEye
//! RCon over UDP, Rust's WebRCON over WebSocket and the 7 Days to Die telnet console.
//!
//! Each protocol is a sans-IO exchange ([`ConsoleExchange`]): bytes (a datagram, a WebSocket text
//! frame, a chunk of a TCP stream) and clock ticks go in, [`Action`]s come out (what to send,
//! an answer, a server message, a trace line, when to wake). The exchanges never touch a socket
//! or sleep; [`driver`] moves their bytes over UDP, a WebSocket or a [`Transport`] and gives the
//! application one [`Remote`] for every dialect, which the RCON [`Client`] implements too.
//!
//! What this module does not own: the RCON engine ([`crate::rcon::client`]), argument parsing and
//! terminal output (the `rcon` binary).
//!
//! ```
//! # #[cfg(feature = "practice")] {
//! use rconsole::consoles::practice::{self, ConsoleServer, Kind};
//! use rconsole::consoles::{self, Protocol};
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
//!     consoles::open(Protocol::BattlEye, connector, Password::new("practice"), opts)?;
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

use std::sync::Arc;
use std::time::Instant;

use crate::error::{Error, Result};
use crate::rcon::exchange::Learned;
use crate::{Client, ClientOptions, Password};

pub use driver::{Console, Tuning, set_tuning};

/// Which wire protocol a dialect speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Source-style RCON over TCP (Minecraft, Source, Factorio, Palworld): [`Client`].
    Rcon,
    /// BattlEye RCon over UDP (DayZ, Arma 2/3, Arma Reforger).
    BattlEye,
    /// Rust's WebRCON: JSON over a WebSocket.
    WebRcon,
    /// The 7 Days to Die telnet console.
    Telnet,
}

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
    Warning(String),
    /// The exchange failed; the connection is no longer usable.
    Fail(Error),
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

/// Where server messages go (the console's live printer, stderr with `--messages`, JSON).
pub type MessageSink = Arc<dyn Fn(&str) + Send + Sync>;

/// One logged-in session with a server, whatever its protocol: what the application runs
/// commands through.
pub trait Remote: Send {
    /// Runs one command, appending its output to `out` (partial on error).
    fn command_into(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()>;
    /// Runs a command that stops the server, then closes the connection.
    fn command_then_close(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()>;
    /// Runs the session's last command; the connection is closed afterwards in any case.
    fn command_into_last(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()> {
        let result = self.command_into(command, out);
        self.close();
        result
    }
    /// Closes the connection (the next command reconnects).
    fn close(&mut self);
    /// Whether the connection still looks open; a dead one is dropped.
    fn check_open(&mut self) -> bool;
    /// Whether a connection is open.
    fn is_connected(&self) -> bool;
    /// Drops any connection and logs in again.
    fn reconnect(&mut self) -> Result<()>;
    /// Where this session goes, e.g. `localhost:2306`.
    fn server(&self) -> String;
    /// Longest command the server reads.
    fn max_command_bytes(&self) -> usize;
    /// Sends server messages to `sink`; with `live`, also while no command runs (a background
    /// thread keeps reading, acknowledging and keeping the login alive). RCON servers send no
    /// messages, so the default ignores it.
    fn set_messages(&mut self, _sink: MessageSink, _live: bool) {}
    /// What was learned about the server's answers this session, for next time (RCON only).
    fn learned(&self) -> Option<Learned> {
        None
    }
    /// Sets (or clears) the flag that abandons the command under way (Ctrl-C in the console).
    fn set_cancel(&mut self, cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>);
}

impl Remote for Client {
    fn command_into(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()> {
        Client::command_into(self, command, out)
    }
    fn command_then_close(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()> {
        Client::command_then_close(self, command, out)
    }
    fn command_into_last(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()> {
        Client::command_into_last(self, command, out)
    }
    fn close(&mut self) {
        Client::close(self)
    }
    fn check_open(&mut self) -> bool {
        Client::check_open(self)
    }
    fn is_connected(&self) -> bool {
        Client::is_connected(self)
    }
    fn reconnect(&mut self) -> Result<()> {
        Client::reconnect(self)
    }
    fn server(&self) -> String {
        Client::server(self)
    }
    fn max_command_bytes(&self) -> usize {
        Client::max_command_bytes(self)
    }
    fn learned(&self) -> Option<Learned> {
        Client::learned(self)
    }
    fn set_cancel(&mut self, cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>) {
        Client::set_cancel(self, cancel)
    }
}

/// Opens a logged-in session of `protocol`: the RCON [`Client`] or a [`Console`].
pub fn open(
    protocol: Protocol,
    connector: Box<dyn crate::transport::Connector>,
    password: Password,
    opts: ClientOptions,
) -> Result<Box<dyn Remote>> {
    match protocol {
        Protocol::Rcon => Ok(Box::new(Client::connect(connector, password, opts)?)),
        other => Ok(Box::new(Console::connect(
            other, connector, password, opts,
        )?)),
    }
}
