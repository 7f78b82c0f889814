//! The Minecraft Server Management Protocol (1.21.9+, docs/protocol.md section 9): JSON-RPC 2.0 over
//! WebSocket, TLS by default, a bearer secret, typed `minecraft:` methods described by
//! `rpc.discover`, and notifications pushed by the server.
//!
//! - [`jsonrpc`]: the JSON-RPC 2.0 messages, sans-IO.
//! - [`schema`]: the `rpc.discover` (OpenRPC) document, and words such as `allowlist add Steve`
//!   mapped onto a method and its parameters, sans-IO.
//! - [`tls`]: how the server's certificate is trusted (the system's roots, a certificate file,
//!   or a pinned SHA-256 fingerprint; never "anything").
//! - [`client`]: the blocking client over any [`crate::transport::Transport`] (TCP, SSH tunnel,
//!   proxy command).
//! - [`machine`]: the protocol as a machine ([`crate::engine::Machine`]) for the event loop.
//! - [`command`]: console commands through a server mod's method, as a
//!   [`crate::engine::Remote`] (issue 42).
//! - [`practice`]: an in-process management server with the documented methods and
//!   notifications, for tests and demos.
//!
//! Out of scope: the RCON protocol (the rest of the crate). Vanilla has no "run a command"
//! method; [`command`] uses the ones server mods add.

pub mod client;
pub mod command;
pub mod jsonrpc;
pub mod machine;
pub mod practice;
pub mod schema;
pub mod tls;

pub use client::{ConnectOptions, Endpoint, MgmtClient};
pub use jsonrpc::Notification;
pub use schema::Schema;
pub use tls::Trust;

/// What can go wrong talking to a management server.
#[derive(Debug, thiserror::Error)]
#[non_exhaustive]
pub enum MgmtError {
    /// The URL given for the server is not `ws://HOST:PORT` or `wss://HOST:PORT`.
    #[error("invalid management URL '{url}': {why}")]
    Url {
        /// The URL as given.
        url: String,
        /// What is wrong with it.
        why: &'static str,
    },
    /// Opening the connection (TCP or tunnel) failed.
    #[error(transparent)]
    Connect(crate::Error),
    /// The TLS handshake failed, typically because the certificate is not trusted.
    #[error("TLS with {peer} failed: {source}")]
    Tls {
        /// The server.
        peer: String,
        /// What rustls said.
        source: std::io::Error,
    },
    /// A certificate or fingerprint given to trust could not be used.
    #[error("{0}")]
    Trust(String),
    /// The server answered the WebSocket upgrade with 401. This client sends its secret as
    /// `Authorization: Bearer`, which vanilla never refuses for its `Origin` (it checks the
    /// Origin only for browsers, which send the secret as a WebSocket subprotocol), so a 401
    /// means a missing or wrong secret (docs/protocol.md section 9).
    #[error(
        "the management server refused the secret (HTTP 401{}): it is missing or wrong",
        .reason.as_deref().map(|r| format!(", {r}")).unwrap_or_default()
    )]
    Unauthorized {
        /// The `message` of the server's 401 body (`Invalid API key`), when it sent one.
        reason: Option<String>,
    },
    /// The WebSocket upgrade failed for another reason.
    #[error("WebSocket handshake failed: {0}")]
    Handshake(String),
    /// Nothing arrived within the time limit.
    #[error("timed out after {} while {what}", crate::engine::format_duration(*after))]
    Timeout {
        /// What was being waited for.
        what: &'static str,
        /// The limit.
        after: std::time::Duration,
    },
    /// The server closed the connection.
    #[error("the management server closed the connection")]
    Closed,
    /// The cancel flag ([`MgmtClient::set_cancel`]) stopped a wait for the server (Ctrl-C or
    /// `SIGTERM`); the call may or may not have run, and the connection is done with.
    #[error("abandoned while waiting for the management server (interrupted)")]
    Cancelled,
    /// Reading or writing the connection failed.
    #[error("connection to the management server failed: {0}")]
    Io(std::io::Error),
    /// The WebSocket layer failed (framing, TLS inside it, capacity): tungstenite's own error.
    #[error("WebSocket error: {0}")]
    WebSocket(Box<tungstenite::Error>),
    /// The server sent something that is not JSON-RPC 2.0.
    #[error("protocol error: {0}")]
    Protocol(String),
    /// The server answered a call with a JSON-RPC error; its `data`, which says what exactly is
    /// wrong, is part of the message.
    #[error(
        "{method}: the server answered error {code}: {message}{}",
        .data.as_deref().map(|d| format!(": {d}")).unwrap_or_default()
    )]
    Rpc {
        /// The method called.
        method: String,
        /// The JSON-RPC error code.
        code: i64,
        /// The error message (`Invalid params`).
        message: String,
        /// The error's `data` (`No key overlay in MapLike[...]`), if any.
        data: Option<String>,
    },
    /// The words do not name a method the server lists in `rpc.discover`.
    #[error("no management method matches '{words}'{hint}")]
    UnknownMethod {
        /// The words as given.
        words: String,
        /// A suggestion, with its leading separator, or empty.
        hint: String,
    },
    /// An argument does not fit the method's parameter.
    #[error("{method}: {why}")]
    BadArgument {
        /// The method.
        method: String,
        /// What is wrong.
        why: String,
    },
}

/// Results of this module.
pub type MgmtResult<T> = std::result::Result<T, MgmtError>;

/// A management error as the engine's, keeping its message; an abandoned wait stays
/// [`crate::Error::Cancelled`], so Ctrl-C is reported as everywhere else.
pub(crate) fn engine_error(e: MgmtError) -> crate::Error {
    match e {
        MgmtError::Cancelled => crate::Error::Cancelled,
        MgmtError::Connect(inner) => inner,
        e => crate::Error::Management {
            message: e.to_string(),
            kind: error_kind(&e),
        },
    }
}

/// The engine's class of a management error.
pub(crate) fn error_kind(e: &MgmtError) -> crate::ErrorKind {
    match e {
        MgmtError::Connect(inner) => inner.kind(),
        MgmtError::Unauthorized { .. } => crate::ErrorKind::Login,
        MgmtError::Timeout { .. } => crate::ErrorKind::Timeout,
        MgmtError::Tls { .. } | MgmtError::Trust(_) => crate::ErrorKind::Connect,
        _ => crate::ErrorKind::Connection,
    }
}
