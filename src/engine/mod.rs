//! What every protocol engine shares, below all of them: the one options type, the observer
//! that hears warnings and traces, the password, cancellation, the session interface the
//! application runs commands through ([`Remote`]), how durations are written in messages, the
//! one protocol machine shape ([`Machine`], [`machine`]) and the one blocking [`driver`] that
//! runs a machine over a [link](crate::transport::link).
//!
//! The RCON engine ([`crate::rcon`]) and the other consoles ([`crate::consoles`]) both build
//! on this module and neither borrows from the other; which of them serves a dialect is
//! decided above both, in [`crate::dialect`].
//!
//! Nothing here names a protocol's types: what a machine learned about its server
//! ([`Learned`]) and what it tells the user ([`Notice`]) are the machine's own values, carried
//! as they are; what went over the wire is a [`Traced`]. The settings only RCON reads (how
//! answers end, the probe's wait, incoming size) are plain values the consoles ignore, and the
//! RCON client supplies the defaults ([`crate::rcon::client::ClientOptions`]).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::Duration;

use crate::error::{Error, Result};

pub mod driver;
pub mod machine;
pub use crate::time::format_duration;
pub(crate) use crate::time::later;

pub use machine::{Action, Ending, Learned, Machine, Notice, Opaque, Said, Traced};

/// Which wire protocol a dialect speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Protocol {
    /// Source-style RCON over TCP (Minecraft, Source, Factorio, Palworld): [`crate::Client`].
    Rcon,
    /// BattlEye RCon over UDP (DayZ, Arma 2/3, Arma Reforger).
    BattlEye,
    /// Rust's WebRCON: JSON over a WebSocket.
    WebRcon,
    /// The 7 Days to Die telnet console.
    Telnet,
}

/// Which way a traced packet or chunk of bytes went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Client to server.
    Sent,
    /// Server to client.
    Received,
}

/// Receives what the engine does, for warnings, packet traces and remembering servers.
pub trait Observer: Send + Sync {
    /// A one-line warning for the user (stderr in the CLI).
    fn warning(&self, _message: &str) {}
    /// What was learned about the server, worth saying once (when it is first learned).
    fn note(&self, message: &str) {
        self.warning(message);
    }
    /// A packet, datagram, frame or chunk went over the wire, labelled by what it was in
    /// context. A password is never in it.
    fn trace(&self, _traced: &Traced) {}
    /// Whether [`Observer::trace`] wants to be called (lets the hot path skip the work).
    fn wants_packets(&self) -> bool {
        false
    }
    /// What the machine learned about this server was settled (`Some`: remember it) or turned
    /// out wrong and should be forgotten (`None`).
    fn learned(&self, _learned: Option<Learned>) {}
}

/// An observer that ignores everything.
#[derive(Debug, Default)]
pub struct Silent;
impl Observer for Silent {}

/// How often a blocking wait looks at [`Options::cancel`].
pub const CANCEL_POLL: Duration = Duration::from_millis(50);

/// The longest pause between two attempts of `--retry`.
pub const MAX_RETRY_PAUSE: Duration = Duration::from_secs(5);

/// The pause before retry number `retry` (1 for the first) of `--retry`, for every way rcon
/// retries (the fleet's event loop, one server, batch input, fan-out's threads): `first`,
/// doubled for each further retry, never longer than [`MAX_RETRY_PAUSE`].
pub fn retry_pause(first: Duration, retry: u32) -> Duration {
    first
        .saturating_mul(2u32.saturating_pow(retry.saturating_sub(1)))
        .min(MAX_RETRY_PAUSE)
}

/// How the end of an answer is found, where a protocol has a choice (RCON; the consoles'
/// answers end by their own rules): learned, or forced.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum EndDetection {
    /// Use what was learned about the server, else probe after login.
    #[default]
    Detect,
    /// The id -2 sentinel, without a probe.
    Negative,
    /// A positive-id sentinel, without a probe.
    Positive,
    /// A quiet gap, without a probe.
    Idle,
    /// Every command is answered with at least one packet: the answer ends a quiet gap after
    /// its last packet, and a slow first packet is waited for up to the timeout, never taken
    /// for an empty answer (Palworld, whose replies carry no usable id: an answer cut off by
    /// the gap would arrive under the next command).
    Answered,
    /// Vanilla's split rule, without a probe (unsafe on servers that split below 4096 bytes).
    Auto,
    /// One packet per answer (Factorio).
    SinglePacket,
}

/// The settings of a session, for every protocol (the one options type: the blocking client,
/// the consoles' driver and the fleet's event loop all take it, and the RCON
/// [`Exchange`](crate::rcon::exchange::Exchange) reads its settings from it).
#[derive(Clone)]
pub struct Options {
    /// Bounds connecting, logging in, and the whole wait for one command's output.
    pub timeout: Duration,
    /// How the end of output is found (RCON).
    pub end: EndDetection,
    /// A fixed quiet gap, instead of the adaptive one (see
    /// [`Exchange::quiet_gap`](crate::rcon::exchange::Exchange::quiet_gap)); for the consoles
    /// whose answers end by silence, the gap (else 250 ms).
    pub idle_gap: Option<Duration>,
    /// The longest wait for the sentinel probe's answer (RCON; it is also bounded by round
    /// trips: see [`Exchange::probe_wait`](crate::rcon::exchange::Exchange::probe_wait)).
    pub probe_timeout: Duration,
    /// Longest command body, in UTF-8 bytes.
    pub max_command_bytes: usize,
    /// Largest incoming size field (RCON).
    pub max_incoming: usize,
    /// Match output packets and login replies whatever their id (Palworld answers with id 0).
    pub any_reply_id: bool,
    /// When the quiet gap passes while a packet is still incomplete (its size field claimed
    /// more bytes than arrived, as reported for Palworld), return what arrived with a warning.
    pub partial_on_idle: bool,
    /// What was learned about this server in an earlier session (skips the probe).
    pub learned: Option<Learned>,
    /// Where warnings, traces and learned facts go.
    pub observer: Arc<dyn Observer>,
    /// When set, checked at least every [`CANCEL_POLL`] while waiting: a `true` abandons the
    /// command under way (the connection is closed) with
    /// [`crate::Error::Cancelled`].
    pub cancel: Option<Arc<AtomicBool>>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("timeout", &self.timeout)
            .field("end", &self.end)
            .field("idle_gap", &self.idle_gap)
            .field("probe_timeout", &self.probe_timeout)
            .field("max_command_bytes", &self.max_command_bytes)
            .field("max_incoming", &self.max_incoming)
            .field("any_reply_id", &self.any_reply_id)
            .field("partial_on_idle", &self.partial_on_idle)
            .field("learned", &self.learned)
            .finish_non_exhaustive()
    }
}

/// The password, kept out of `Debug` output.
#[derive(Clone)]
pub struct Password(String);

impl Password {
    /// Wraps a password.
    pub fn new(p: impl Into<String>) -> Self {
        Self(p.into())
    }
    /// The password itself, for the login packet.
    pub fn expose(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Debug for Password {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Password(****)")
    }
}

/// Where server messages go (the console's live printer, stderr with `--messages`, JSON).
pub type MessageSink = Arc<dyn Fn(&str) + Send + Sync>;

/// Completes a partial command from the server itself: where the part the candidates
/// replace starts (a byte offset into the partial command), and the candidates; `None` when
/// the server could not be asked.
pub type Suggest = Arc<dyn Fn(&str) -> Option<(usize, Vec<String>)> + Send + Sync>;

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
    fn set_cancel(&mut self, cancel: Option<Arc<AtomicBool>>);
    /// The server's own completion of a partial command, when it offers one (a management
    /// server with MSMP Enhanced); the console then asks it rather than its own list.
    fn suggest(&self) -> Option<Suggest> {
        None
    }
}

/// Checks a command against the limits before anything is sent: no NUL byte (it would cut the
/// command short on the server), at most `max` bytes of UTF-8.
pub fn check_command(command: &str, max: usize) -> Result<()> {
    if command.contains('\0') {
        return Err(Error::CommandHasNul);
    }
    if command.len() > max {
        return Err(Error::CommandTooLong {
            len: command.len(),
            max,
        });
    }
    Ok(())
}
