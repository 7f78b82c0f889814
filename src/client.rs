//! The connection engine: login, commands, end-of-output detection and reconnects, over any
//! [`Transport`].
//!
//! How a command's output is known to be complete (PROTOCOL.md section 3): after the command
//! (type 2) and once its *first* fragment has arrived, the engine sends an empty type-0 packet,
//! the sentinel, and collects fragments until the sentinel's reply comes back. Waiting for the
//! first fragment means the server has already consumed the command packet, so the two never
//! share one read on a vanilla server (which would close the connection). Only one packet is ever
//! in flight.
//!
//! Servers answer the sentinel in different ways (PROTOCOL.md section 4), so right after login the
//! engine sends one sentinel on its own and watches: a reply with the sentinel's id means the
//! strategy works; a login-failure-shaped reply, a closed connection or silence means it does
//! not, and the engine reconnects and falls back to the next strategy: id -2, then a positive id,
//! then an idle gap. Probing before any command means no command's output is ever at risk, and
//! a connection that closes mid-response is always reported as incomplete output, never mistaken
//! for a rejected sentinel.

use std::sync::Arc;
use std::time::{Duration, Instant};

use crate::error::{Error, Result, TransportFailure};
use crate::packet::{
    DEFAULT_MAX_INCOMING, Decoder, MAX_COMMAND_BYTES, Packet, TYPE_COMMAND, TYPE_LOGIN,
    TYPE_LOGIN_REPLY, TYPE_OUTPUT, encode_into,
};
use crate::transport::{Connector, Transport};

/// Commands longer than this (a 1400-byte packet) get a one-time warning on a vanilla-style
/// server, whose one-read-per-packet rule a small MTU can break (PROTOCOL.md section 2).
pub const SMALL_MTU_COMMAND_BYTES: usize = 1386;

/// The id the sentinel packet carries by default (PROTOCOL.md section 3).
pub const SENTINEL_ID: i32 = -2;

/// How the end of a command's output is found.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum EndDetection {
    /// Probe after login and pick the first of `Negative`, `Positive`, `Idle` the server accepts.
    #[default]
    Detect,
    /// Sentinel with id -2, trusted without a probe.
    Negative,
    /// Sentinel with a fresh positive id, for servers that close on ids <= 0.
    Positive,
    /// No sentinel: the output ends when nothing arrives for the idle gap.
    Idle,
    /// No sentinel when the first fragment is shorter than a vanilla fragment (4096 bytes), which
    /// by vanilla's split rule means the output is complete; otherwise the id -2 sentinel.
    Auto,
    /// No sentinel: one packet is the whole answer (Factorio).
    SinglePacket,
}

/// The strategy in force on a connection (what [`EndDetection::Detect`] settled on).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Strategy {
    Negative,
    Positive,
    Idle,
    Auto,
    SinglePacket,
}

impl Strategy {
    fn fallback(self) -> Option<Strategy> {
        match self {
            Strategy::Negative => Some(Strategy::Positive),
            Strategy::Positive => Some(Strategy::Idle),
            _ => None,
        }
    }

    fn describe(self) -> &'static str {
        match self {
            Strategy::Negative => "an id -2 end-of-output marker",
            Strategy::Positive => "a positive-id end-of-output marker",
            Strategy::Idle => "an idle gap",
            Strategy::Auto => "an end-of-output marker only for long output",
            Strategy::SinglePacket => "one packet per answer",
        }
    }
}

/// Which way a traced packet went.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Direction {
    /// Client to server.
    Sent,
    /// Server to client.
    Received,
}

/// Receives what the engine does, for warnings and packet traces.
pub trait Observer: Send + Sync {
    /// A one-line warning for the user (stderr in the CLI).
    fn warning(&self, _message: &str) {}
    /// A packet went over the wire. `body` is `None` for the login packet, whose body is the
    /// password and is never shown.
    fn packet(&self, _direction: Direction, _packet: &Packet, _body_hidden: bool) {}
    /// Whether [`Observer::packet`] wants to be called (lets the hot path skip the work).
    fn wants_packets(&self) -> bool {
        false
    }
    /// Bytes of another console protocol went over the wire (BattlEye, WebRCON, telnet; see
    /// [`crate::consoles`]), already masked: a password is never in them.
    fn frame(&self, _direction: Direction, _bytes: &[u8], _what: &str) {}
}

/// An observer that ignores everything.
#[derive(Debug, Default)]
pub struct Silent;
impl Observer for Silent {}

/// Settings of a [`Client`].
#[derive(Clone)]
pub struct Options {
    /// Bounds connecting, logging in, and the whole wait for one command's output.
    pub timeout: Duration,
    /// How the end of output is found.
    pub end: EndDetection,
    /// With the idle strategy: how long a silence ends the output.
    pub idle_gap: Duration,
    /// How long the sentinel probe after login may take before the server is taken not to
    /// answer sentinels at all.
    pub probe_timeout: Duration,
    /// Longest command body, in UTF-8 bytes.
    pub max_command_bytes: usize,
    /// Largest incoming size field.
    pub max_incoming: usize,
    /// Match output packets and login replies whatever their id (Palworld answers with id 0).
    /// Only sound with one request in flight, which is how the engine works.
    pub any_reply_id: bool,
    /// With the idle strategy: when the gap passes while a packet is still incomplete (its size
    /// field claimed more bytes than arrived, as reported for Palworld), return the part that
    /// arrived with a warning instead of waiting for the rest.
    pub partial_on_idle: bool,
    /// Where warnings and traces go.
    pub observer: Arc<dyn Observer>,
}

impl std::fmt::Debug for Options {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Options")
            .field("timeout", &self.timeout)
            .field("end", &self.end)
            .field("idle_gap", &self.idle_gap)
            .field("max_command_bytes", &self.max_command_bytes)
            .field("any_reply_id", &self.any_reply_id)
            .field("partial_on_idle", &self.partial_on_idle)
            .finish_non_exhaustive()
    }
}

impl Default for Options {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(10),
            end: EndDetection::Detect,
            idle_gap: Duration::from_millis(250),
            probe_timeout: Duration::from_secs(3),
            max_command_bytes: MAX_COMMAND_BYTES,
            max_incoming: DEFAULT_MAX_INCOMING,
            any_reply_id: false,
            partial_on_idle: false,
            observer: Arc::new(Silent),
        }
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

/// Checks a command against the limits before anything is sent.
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

/// A logged-in RCON session that reconnects when it has to.
pub struct Client {
    connector: Box<dyn Connector>,
    password: Password,
    opts: Options,
    conn: Option<Box<dyn Transport>>,
    decoder: Decoder,
    next_id: i32,
    strategy: Strategy,
    /// Whether the strategy still has to be probed on the next login.
    probe: bool,
    read_buf: Vec<u8>,
    /// Whether the small-MTU warning was given this session.
    warned_mtu: bool,
    /// Reused for every packet sent, so a command costs no allocation for encoding.
    write_buf: Vec<u8>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.connector.describe())
            .field("connected", &self.conn.is_some())
            .field("strategy", &self.strategy)
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects, logs in and settles the end-of-output strategy.
    pub fn connect(
        connector: Box<dyn Connector>,
        password: Password,
        opts: Options,
    ) -> Result<Self> {
        let (strategy, probe) = match opts.end {
            EndDetection::Detect => (Strategy::Negative, true),
            EndDetection::Negative => (Strategy::Negative, false),
            EndDetection::Positive => (Strategy::Positive, false),
            EndDetection::Idle => (Strategy::Idle, false),
            EndDetection::Auto => (Strategy::Auto, false),
            EndDetection::SinglePacket => (Strategy::SinglePacket, false),
        };
        let mut client = Self {
            decoder: Decoder::new(opts.max_incoming),
            connector,
            password,
            opts,
            conn: None,
            next_id: 0,
            strategy,
            probe,
            read_buf: vec![0; 64 * 1024],
            warned_mtu: false,
            write_buf: Vec::with_capacity(MAX_COMMAND_BYTES + 14),
        };
        client.reconnect()?;
        Ok(client)
    }

    /// Where this client is connected to, e.g. `localhost:25575`.
    pub fn server(&self) -> String {
        self.connector.describe()
    }

    /// Whether a connection is open (it may still have been closed by the peer unseen).
    pub fn is_connected(&self) -> bool {
        self.conn.is_some()
    }

    /// The limits on commands this client sends.
    pub fn max_command_bytes(&self) -> usize {
        self.opts.max_command_bytes
    }

    /// Closes the connection (the next command reconnects).
    pub fn close(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            conn.close();
        }
        self.decoder.clear();
    }

    /// Checks, waiting at most a millisecond, whether the server closed the connection since the
    /// last exchange (for example it stopped or restarted while an interactive session sat
    /// idle). A closed or failed connection is dropped, so the next command reconnects instead
    /// of being sent into a dead socket. Servers send nothing unasked; any bytes that did arrive
    /// stay in the decoder, which skips stale packets.
    pub fn check_open(&mut self) -> bool {
        let Some(conn) = self.conn.as_mut() else {
            return false;
        };
        let deadline = Instant::now() + Duration::from_millis(1);
        match conn.read_before(&mut self.read_buf, deadline) {
            Ok(0) => {
                self.close();
                false
            }
            Ok(n) => {
                self.decoder.feed(&self.read_buf[..n]);
                true
            }
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => true,
            Err(_) => {
                self.close();
                false
            }
        }
    }

    /// Drops any connection and opens a new, logged-in one (probing the strategy if needed).
    ///
    /// When the probe shows that the server rejects a sentinel, this reconnects and tries the
    /// next strategy; the user gets one warning naming what was rejected and what is used.
    pub fn reconnect(&mut self) -> Result<()> {
        let mut rejected: Vec<String> = Vec::new();
        loop {
            self.close();
            let conn = self.connector.connect(self.opts.timeout)?;
            self.conn = Some(conn);
            self.login()?;
            if !self.probe {
                break;
            }
            match self.probe_sentinel()? {
                ProbeResult::Accepted => {
                    self.probe = false;
                    break;
                }
                ProbeResult::Silent => {
                    rejected.push(format!(
                        "did not answer {} within {}",
                        self.strategy.describe(),
                        crate::format_duration(self.opts.probe_timeout)
                    ));
                    self.strategy = Strategy::Idle;
                    self.probe = false;
                    break;
                }
                ProbeResult::Rejected(how) => {
                    rejected.push(format!("{how} on {}", self.strategy.describe()));
                    let next = self.strategy.fallback().unwrap_or(Strategy::Idle);
                    self.strategy = next;
                    self.probe = next != Strategy::Idle;
                }
            }
        }
        if !rejected.is_empty() {
            let using = match self.strategy {
                Strategy::Idle => format!(
                    "{} of {} (--idle-gap)",
                    self.strategy.describe(),
                    crate::format_duration(self.opts.idle_gap)
                ),
                other => other.describe().to_string(),
            };
            self.warn(format!(
                "{} {}; using {using} for this session",
                self.server(),
                rejected.join(", then ")
            ));
        }
        Ok(())
    }

    fn warn(&self, message: String) {
        self.opts.observer.warning(&message);
    }

    fn alloc_id(&mut self) -> i32 {
        // Positive and increasing; wraps back to 1 rather than to a negative id.
        self.next_id = if self.next_id >= i32::MAX - 1 {
            1
        } else {
            self.next_id + 1
        };
        self.next_id
    }

    fn send(&mut self, id: i32, kind: i32, body: &[u8], deadline: Instant) -> Result<()> {
        let observer = &self.opts.observer;
        if observer.wants_packets() {
            let shown = if kind == TYPE_LOGIN { &[][..] } else { body };
            observer.packet(
                Direction::Sent,
                &Packet::new(id, kind, shown),
                kind == TYPE_LOGIN,
            );
        }
        self.write_buf.clear();
        encode_into(id, kind, body, &mut self.write_buf);
        let conn = self.conn.as_mut().ok_or(Error::Closed {
            when: "before the request could be sent",
        })?;
        conn.write_packet(&self.write_buf, deadline)
            .map_err(|source| {
                if let Some(failure) = TransportFailure::find(&source) {
                    Error::Transport(failure.0.clone())
                } else if source.kind() == std::io::ErrorKind::TimedOut {
                    Error::Timeout {
                        what: "sending",
                        after: self.opts.timeout,
                    }
                } else {
                    Error::Io {
                        when: "while sending",
                        source,
                    }
                }
            })
    }

    /// The next packet, or `Ok(None)` when the peer closed the stream.
    fn recv(&mut self, deadline: Instant) -> std::io::Result<Option<Packet>> {
        loop {
            match self.recv_step(deadline)? {
                Step::Packet(p) => return Ok(Some(p)),
                Step::Partial => continue,
                Step::Closed => return Ok(None),
            }
        }
    }

    /// A whole buffered packet if there is one, else at most one read.
    fn recv_step(&mut self, deadline: Instant) -> std::io::Result<Step> {
        if let Some(p) = self.decoded()? {
            return Ok(Step::Packet(p));
        }
        let Some(conn) = self.conn.as_mut() else {
            return Ok(Step::Closed);
        };
        let n = conn.read_before(&mut self.read_buf, deadline)?;
        if n == 0 {
            return Ok(Step::Closed);
        }
        self.decoder.feed(&self.read_buf[..n]);
        Ok(match self.decoded()? {
            Some(p) => Step::Packet(p),
            None => Step::Partial,
        })
    }

    fn decoded(&mut self) -> std::io::Result<Option<Packet>> {
        match self.decoder.next_packet() {
            Ok(Some(p)) => {
                if self.opts.observer.wants_packets() {
                    self.opts.observer.packet(Direction::Received, &p, false);
                }
                Ok(Some(p))
            }
            Ok(None) => Ok(None),
            Err(e) => Err(std::io::Error::new(std::io::ErrorKind::InvalidData, e)),
        }
    }

    /// Whether `packet` is output for the request `id` (any id but -1 when
    /// [`Options::any_reply_id`] is set).
    fn is_output_for(&self, packet: &Packet, id: i32) -> bool {
        packet.kind == TYPE_OUTPUT
            && (packet.id == id || (self.opts.any_reply_id && packet.id != -1))
    }

    /// Maps a failed read to the engine's error, dropping the connection.
    fn read_error(&mut self, e: std::io::Error, what: &'static str, after: Duration) -> Error {
        self.close();
        if let Some(failure) = TransportFailure::find(&e) {
            return Error::Transport(failure.0.clone());
        }
        if e.kind() == std::io::ErrorKind::TimedOut {
            return Error::Timeout { what, after };
        }
        if e.kind() == std::io::ErrorKind::InvalidData
            && let Some(inner) = e.get_ref()
            && let Some(decode) = inner.downcast_ref::<crate::packet::DecodeError>()
        {
            return Error::Decode(decode.clone());
        }
        Error::Io {
            when: "while reading",
            source: e,
        }
    }

    fn login(&mut self) -> Result<()> {
        let deadline = Instant::now() + self.opts.timeout;
        let id = self.alloc_id();
        let password = self.password.clone();
        self.send(id, TYPE_LOGIN, password.expose().as_bytes(), deadline)?;
        let mut other_id = false;
        loop {
            let packet = match self.recv(deadline) {
                Ok(Some(p)) => p,
                Ok(None) => {
                    self.close();
                    return Err(Error::LoginClosed);
                }
                // A server that closes with the password still unread resets the connection
                // instead: the same refusal, seen a little differently.
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::ConnectionAborted
                    ) && TransportFailure::find(&e).is_none() =>
                {
                    self.close();
                    return Err(Error::LoginClosed);
                }
                Err(e) => {
                    let what = if other_id {
                        "waiting for the login reply (a reply with another id came: Palworld does that, try --dialect palworld)"
                    } else {
                        "waiting for the login reply"
                    };
                    return Err(self.read_error(e, what, self.opts.timeout));
                }
            };
            // Source sends an empty type-0 packet before the reply (PROTOCOL.md section 4).
            if packet.kind == TYPE_OUTPUT {
                continue;
            }
            // Id -1 is the protocol's refusal; some reimplementations instead echo the request
            // id with type -1.
            if packet.id == -1 || (packet.id == id && packet.kind == -1) {
                self.close();
                return Err(Error::LoginRefused);
            }
            // The reply is type 2; some reimplementations echo the login's type 3.
            let is_reply = packet.kind == TYPE_LOGIN_REPLY || packet.kind == TYPE_LOGIN;
            if is_reply && (packet.id == id || self.opts.any_reply_id) {
                return Ok(());
            }
            other_id = true;
        }
    }

    fn sentinel_id(&mut self) -> i32 {
        match self.strategy {
            Strategy::Positive => self.alloc_id(),
            _ => SENTINEL_ID,
        }
    }

    fn probe_sentinel(&mut self) -> Result<ProbeResult> {
        let deadline = Instant::now() + self.opts.probe_timeout.min(self.opts.timeout);
        let id = self.sentinel_id();
        self.send(id, TYPE_OUTPUT, b"", deadline)?;
        loop {
            match self.recv(deadline) {
                Ok(Some(p)) if p.id == id => return Ok(ProbeResult::Accepted),
                Ok(Some(p)) if p.id == -1 => {
                    self.close();
                    return Ok(ProbeResult::Rejected("answered with a login failure"));
                }
                Ok(Some(_)) => continue,
                Ok(None) => {
                    self.close();
                    return Ok(ProbeResult::Rejected("closed the connection"));
                }
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                    return Ok(ProbeResult::Silent);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::ConnectionReset | std::io::ErrorKind::ConnectionAborted
                    ) =>
                {
                    self.close();
                    return Ok(ProbeResult::Rejected("reset the connection"));
                }
                Err(e) => {
                    return Err(self.read_error(e, "probing", self.opts.probe_timeout));
                }
            }
        }
    }

    /// Runs one command and returns its output as text.
    pub fn command(&mut self, command: &str) -> Result<String> {
        let mut out = Vec::new();
        self.command_into(command, &mut out)?;
        Ok(crate::packet::decode_output_owned(out))
    }

    /// Runs one command, appending its raw output bytes to `out`. On error, `out` holds whatever
    /// arrived before it. Reconnects first if the connection was closed.
    pub fn command_into(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()> {
        let (id, deadline) = self.send_command(command)?;
        self.collect(id, out, deadline)
    }

    /// Checks the command, reconnects if needed, and sends it: its id and the deadline for
    /// its whole output.
    fn send_command(&mut self, command: &str) -> Result<(i32, Instant)> {
        check_command(command, self.opts.max_command_bytes)?;
        // PROTOCOL.md section 2: a vanilla server must read each packet in one read; over a
        // link with a small MTU (VPNs, some tunnels) a packet near 1460 bytes can arrive in two
        // pieces, and the server then closes the connection.
        if !self.warned_mtu
            && self.opts.max_command_bytes == MAX_COMMAND_BYTES
            && command.len() > SMALL_MTU_COMMAND_BYTES
        {
            self.warned_mtu = true;
            self.warn(format!(
                "a command of {} bytes is sent as one {}-byte packet; over links with a small MTU \
                 (VPNs, some tunnels) a vanilla server may get it in two pieces and close the \
                 connection",
                command.len(),
                command.len() + 14
            ));
        }
        if self.conn.is_none() {
            self.reconnect()?;
        }
        let deadline = Instant::now() + self.opts.timeout;
        let id = self.alloc_id();
        self.send(id, TYPE_COMMAND, command.as_bytes(), deadline)
            .inspect_err(|_| self.close())?;
        Ok((id, deadline))
    }

    fn collect(&mut self, id: i32, out: &mut Vec<u8>, deadline: Instant) -> Result<()> {
        let mut sentinel: Option<i32> = None;
        let mut got_first = false;
        let mut idle_until: Option<Instant> = None;
        loop {
            let wait = match idle_until {
                Some(t) if t < deadline => t,
                _ => deadline,
            };
            let packet = match self.recv_step(wait) {
                Ok(Step::Packet(p)) => p,
                Ok(Step::Partial) => {
                    // Part of a packet arrived: with the idle strategy the silence starts over.
                    // Before the first whole packet this only counts when partial packets are
                    // shown (Palworld's first and only packet may never be whole).
                    if self.strategy == Strategy::Idle && (got_first || self.opts.partial_on_idle) {
                        idle_until = Some(Instant::now() + self.opts.idle_gap);
                    }
                    continue;
                }
                Ok(Step::Closed) => {
                    // Part of a packet received counts as an answer begun.
                    let mid_packet = self.decoder.buffered() > 0;
                    got_first |= self.take_partial(id, out);
                    self.close();
                    if got_first && sentinel.is_none() && self.strategy == Strategy::SinglePacket {
                        return Ok(());
                    }
                    return Err(Error::Closed {
                        when: if got_first {
                            "mid-response; output is incomplete"
                        } else if mid_packet {
                            "mid-packet; output is incomplete"
                        } else {
                            "before answering; the command may or may not have run"
                        },
                    });
                }
                // The idle gap passed before the overall deadline: the output is over.
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut && wait < deadline => {
                    self.take_partial(id, out);
                    return Ok(());
                }
                Err(e) => {
                    let what = if got_first || self.decoder.buffered() > 0 {
                        "waiting for the rest of the output; output is incomplete"
                    } else {
                        "waiting for the command's output"
                    };
                    return Err(self.read_error(e, what, self.opts.timeout));
                }
            };
            if sentinel == Some(packet.id) {
                return Ok(());
            }
            if self.is_output_for(&packet, id) {
                out.extend_from_slice(&packet.body);
                let first = !got_first;
                got_first = true;
                match self.strategy {
                    Strategy::SinglePacket => return Ok(()),
                    Strategy::Idle => idle_until = Some(Instant::now() + self.opts.idle_gap),
                    Strategy::Auto if first && packet.body.len() < 4096 => return Ok(()),
                    Strategy::Negative | Strategy::Positive | Strategy::Auto if first => {
                        let sid = self.sentinel_id();
                        self.send(sid, TYPE_OUTPUT, b"", deadline)
                            .inspect_err(|_| self.close())?;
                        sentinel = Some(sid);
                    }
                    _ => {}
                }
                continue;
            }
            if packet.id == -1 && packet.kind == TYPE_LOGIN_REPLY {
                self.close();
                return Err(Error::Protocol(
                    "server answered the command with a login failure (session no longer authenticated)"
                        .into(),
                ));
            }
            // Anything else is stale: a late reply to an earlier sentinel (Source's trailer), an
            // unsolicited packet, or output of a command that timed out. Never shown.
        }
    }

    /// With [`Options::partial_on_idle`]: appends the body of a packet that is still incomplete
    /// (its size field claimed more than arrived) and warns, so that the next command starts on
    /// a clean stream (PROTOCOL.md section 4, Palworld).
    /// Returns whether anything was appended.
    fn take_partial(&mut self, id: i32, out: &mut Vec<u8>) -> bool {
        if !self.opts.partial_on_idle || self.decoder.buffered() == 0 {
            return false;
        }
        let Some(partial) = self.decoder.take_partial() else {
            return false;
        };
        if !self.is_output_for(&partial.packet, id) {
            return false;
        }
        out.extend_from_slice(&partial.packet.body);
        self.warn(format!(
            "{} declared a {}-byte packet but sent {} bytes, then went quiet for {}; showing what arrived (the output may be incomplete)",
            self.server(),
            partial.declared,
            partial.received,
            crate::format_duration(self.opts.idle_gap)
        ));
        true
    }

    /// Sends a command after which the server is expected to shut down (`stop`): waits only for
    /// the first fragment of its answer (or the close), then closes the connection at once, since
    /// a connected RCON client keeps a vanilla server from shutting down cleanly. The raw output
    /// bytes are appended to `out`, as with [`Client::command_into`].
    pub fn command_then_close(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()> {
        let (id, deadline) = self.send_command(command)?;
        loop {
            match self.recv(deadline) {
                Ok(Some(p)) if self.is_output_for(&p, id) => {
                    out.extend_from_slice(&p.body);
                    break;
                }
                Ok(Some(_)) => continue,
                Ok(None) => break,
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                    return Err(self.read_error(
                        e,
                        "waiting for the command's output",
                        self.opts.timeout,
                    ));
                }
                // A reset while the server shuts down is the expected end.
                Err(_) => break,
            }
        }
        self.close();
        Ok(())
    }
}

/// What one step of reading gave.
enum Step {
    /// A whole packet.
    Packet(Packet),
    /// Bytes arrived, but not yet a whole packet.
    Partial,
    /// The peer closed the stream.
    Closed,
}

enum ProbeResult {
    Accepted,
    Rejected(&'static str),
    Silent,
}
