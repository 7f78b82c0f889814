//! The library's error type: what can go wrong between `rcon` and a server. It names no
//! protocol's types: a codec's own error is carried boxed, and each codec says how its errors
//! become this one.

use std::io;
use std::time::Duration;

use crate::time::format_duration;

/// Everything the connection engine can fail with.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum Error {
    /// The host name did not resolve to any address.
    #[error("cannot resolve {host}")]
    Resolve {
        /// The name as given.
        host: String,
        /// What the resolver said.
        source: io::Error,
    },
    /// No address of the server accepted the connection.
    #[error("cannot connect to {addr}")]
    Connect {
        /// The address (or the last of several) that was tried.
        addr: String,
        /// Why the last attempt failed.
        source: io::Error,
    },
    /// The server refused the password (a login reply with id -1).
    #[error("login refused: wrong password")]
    LoginRefused,
    /// The server closed the connection after the password was sent, without a reply.
    #[error(
        "login refused: server closed the connection after the password was sent (wrong password, or not an RCON port)"
    )]
    LoginClosed,
    /// Something did not happen within its time limit.
    #[error("timed out after {} while {what}", format_duration(*after))]
    Timeout {
        /// Which part of the conversation it was.
        phase: Phase,
        /// What was being waited for, in words.
        what: &'static str,
        /// The limit that ran out.
        after: Duration,
    },
    /// No login reply in time, but replies with other ids came: the server answers with an id
    /// of its own (Palworld sends 0).
    #[error(
        "timed out after {} while waiting for the login reply (replies with another id came, as Palworld servers send)",
        format_duration(*after)
    )]
    LoginReplyOtherIds {
        /// The limit that ran out.
        after: Duration,
    },
    /// The server closed the connection before the current exchange was complete.
    #[error("server closed the connection {when}")]
    Closed {
        /// Which part of the conversation was under way.
        phase: Phase,
        /// Whether part of an answer had already come (what was printed is incomplete).
        partial: bool,
        /// What was under way, in words, e.g. `during login` or `mid-response; output is
        /// incomplete`.
        when: &'static str,
    },
    /// A read or write on an established connection failed.
    #[error("connection lost {when}")]
    Io {
        /// What was under way.
        when: &'static str,
        /// The operating system's error.
        source: io::Error,
    },
    /// The server sent bytes its protocol does not allow (after valid ones: a broken server):
    /// the codec's own error ([`crate::rcon::packet::DecodeError`]).
    #[error("protocol error: {0}")]
    Decode(Box<dyn std::error::Error + Send + Sync>),
    /// The first bytes from the server are not RCON at all: a wrong port.
    #[error(
        "this does not look like an RCON port: the server's first bytes are '{first}', as from {looks}"
    )]
    NotRcon {
        /// What the bytes look like (an HTTP server, a Minecraft game port...).
        looks: &'static str,
        /// The first bytes, printable ASCII kept, the rest shown as dots.
        first: String,
    },
    /// Nothing at all came back after the password within the time limit.
    #[error(
        "timed out after {} while waiting for the login reply: nothing came back, so this does not look like an RCON port (Minecraft's is rcon.port in server.properties, 25575 by default; the game port never answers RCON)",
        format_duration(*after)
    )]
    NoLoginReply {
        /// The limit that ran out.
        after: Duration,
    },
    /// The user interrupted the command; the connection was closed.
    #[error("interrupted; the connection was closed (the command may or may not have run)")]
    Cancelled,
    /// A command after one that stopped the server; nothing was sent.
    #[error("not sent: an earlier command stopped the server")]
    ServerStopped,
    /// The server answered in a way the protocol does not allow.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The command is longer than a server can read; nothing was sent.
    #[error("command is {len} bytes of UTF-8, over the limit of {max}; not sent")]
    CommandTooLong {
        /// Length of the command in UTF-8 bytes.
        len: usize,
        /// The limit in force.
        max: usize,
    },
    /// The command contains a NUL byte, which would cut it short on the server; nothing was sent.
    #[error("command contains a NUL character; not sent")]
    CommandHasNul,
    /// The WebSocket layer (WebRCON) failed in a way of its own: kept as tungstenite's error,
    /// not its text, so a caller can tell a TLS, HTTP or framing failure apart.
    #[error("WebSocket {when}: {source}")]
    WebSocket {
        /// What was under way.
        when: &'static str,
        /// tungstenite's error.
        source: Box<tungstenite::Error>,
    },
    /// The transport (for example an SSH tunnel) failed in a way of its own.
    #[error("{0}")]
    Transport(String),
    /// The far side of a tunnel cannot serve (`rcon --remote`: the program there is missing, too
    /// old or speaks another protocol version); the message says what to install.
    #[error("{0}")]
    Remote(String),
    /// A server tried again until a time limit (`rcon --wait`) never came up: the last
    /// attempt's failure is the cause, and decides the kind.
    #[error(
        "{server} was not up after waiting {} ({attempts} attempt{}), the last one failed",
        format_duration(*waited),
        if *attempts == 1 { "" } else { "s" }
    )]
    NotUp {
        /// The server, as messages name it (`host:port`).
        server: String,
        /// The time limit that passed.
        waited: Duration,
        /// Attempts made.
        attempts: u32,
        /// The last attempt's failure.
        #[source]
        last: Box<Error>,
    },
    /// A management connection that runs console commands (`crate::mgmt::command`) failed:
    /// its own message, and the class it belongs to.
    #[error("{message}")]
    Management {
        /// What went wrong, as the management client says it.
        message: String,
        /// Its class.
        kind: ErrorKind,
    },
    /// A status ping (Server List Ping) or query (UDP) reply that cannot be understood: the
    /// decoder's own error ([`crate::minecraft::status::StatusError`],
    /// [`crate::minecraft::query::QueryError`]).
    #[error(transparent)]
    Reply(Box<dyn std::error::Error + Send + Sync>),
}

/// Which part of a conversation a time limit ran out in.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum Phase {
    /// Opening the connection (TCP, or starting a tunnel).
    Connect,
    /// Logging in (the password's reply, a prompt, a WebSocket upgrade).
    Login,
    /// Writing a request.
    Send,
    /// Waiting for an answer (a command's, a status ping's, a query's).
    Answer,
    /// Keeping an idle session alive.
    Idle,
}

/// Broad classes of [`Error`], for mapping to exit codes.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum ErrorKind {
    /// Could not reach the server (DNS, refused, unreachable).
    Connect,
    /// Wrong password.
    Login,
    /// A time limit ran out.
    Timeout,
    /// The connection dropped or the server broke the protocol.
    Connection,
    /// The request was refused locally and never sent.
    Refused,
    /// The transport failed (tunnel command, SSH).
    Transport,
    /// The program at the far side of a tunnel cannot serve ([`Error::Remote`]).
    Remote,
}

impl Error {
    /// A read or write on an established link failed: the carrier's own failure (a tunnel
    /// that exited, see [`TransportFailure`]) is [`Error::Transport`], whatever the dialect;
    /// anything else is [`Error::Io`] with what was under way.
    pub fn io(when: &'static str, source: io::Error) -> Error {
        match TransportFailure::find(&source) {
            Some(failure) => Error::Transport(failure.0.clone()),
            None => Error::Io { when, source },
        }
    }

    /// The class of this error.
    pub fn kind(&self) -> ErrorKind {
        match self {
            Error::Resolve { .. } | Error::Connect { .. } => ErrorKind::Connect,
            Error::LoginRefused | Error::LoginClosed => ErrorKind::Login,
            Error::Timeout { .. }
            | Error::NoLoginReply { .. }
            | Error::LoginReplyOtherIds { .. } => ErrorKind::Timeout,
            Error::Closed { .. }
            | Error::Io { .. }
            | Error::Decode(_)
            | Error::NotRcon { .. }
            | Error::Cancelled
            | Error::Protocol(_)
            | Error::WebSocket { .. }
            | Error::Reply(_) => ErrorKind::Connection,
            Error::CommandTooLong { .. } | Error::CommandHasNul | Error::ServerStopped => {
                ErrorKind::Refused
            }
            Error::Transport(_) => ErrorKind::Transport,
            Error::Remote(_) => ErrorKind::Remote,
            Error::NotUp { last, .. } => last.kind(),
            Error::Management { kind, .. } => *kind,
        }
    }
}

/// What a [`Transport`](crate::transport::Transport) wraps in an [`io::Error`] when the carrier
/// itself failed (an SSH tunnel that exited, a proxy command that could not start), so that the
/// engine reports [`Error::Transport`] rather than a dropped connection or a refused login.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct TransportFailure(pub String);

impl TransportFailure {
    /// An [`io::Error`] carrying this failure.
    pub fn into_io(self) -> io::Error {
        io::Error::other(self)
    }

    /// The failure inside `e`, if `e` carries one.
    pub fn find(e: &io::Error) -> Option<&TransportFailure> {
        e.get_ref()?.downcast_ref::<TransportFailure>()
    }
}

/// Result with the library's [`Error`].
pub type Result<T, E = Error> = std::result::Result<T, E>;
