//! The RCON exchange as a sans-IO state machine: login, the end-of-output probe, commands, what
//! ends an answer, what is stale, and what an expired timer means.
//!
//! It is the engine's one machine shape ([`Machine`]) itself: bytes, closes and clock readings
//! go in ([`Machine::receive`], [`Machine::peer_closed`], [`Machine::tick`]); packets to write
//! and what happened come out as [`Action`]s ([`Machine::poll`]), with the next instant to wake
//! up at ([`Machine::wake`]). It never blocks, sleeps or owns a socket, so the blocking driver
//! ([`crate::rcon::client::Client`]) and the event loop over many connections ([`crate::fleet`])
//! drive the same code.
//!
//! How an answer ends depends on the server (docs/protocol.md section 3):
//! - [`EndMethod::Vanilla`]: the server answered the probe with `Unknown request 0`, so it splits
//!   only at 4096 UTF-16 units; a first fragment under 4096 bytes is the whole answer (one round
//!   trip), a longer one is followed by the id -2 sentinel.
//! - [`EndMethod::Sentinel`] / [`EndMethod::PositiveSentinel`]: a sentinel after the first
//!   fragment, the answer ends at its reply.
//! - [`EndMethod::EndMarker`]: the server ends every answer with an empty packet carrying the
//!   command's id (output as type 2).
//! - [`EndMethod::Silence`]: nothing marks the end and an empty answer sends nothing; the answer
//!   ends after a quiet gap that starts when the command is sent and adapts to round trips and
//!   answer latencies seen on the server.
//! - [`EndMethod::Idle`]: the server ignores sentinels but answers every command: the answer ends
//!   a quiet gap after its last packet.
//! - [`EndMethod::SinglePacket`]: one packet is the whole answer (Factorio).
//!
//! The probe runs once per server: what it learns comes out as [`Action::Learned`] for the caller
//! to remember, and goes back in as [`Options::learned`] next time. What was remembered is a
//! hypothesis (docs/protocol.md section 3): answers that contradict it (another implementation
//! now runs on that port) make the answer under way end by a sentinel sent on its own, whose
//! reply settles the method again, with nothing lost; a remembered quiet gap is checked by the
//! session's first answer the same way before any command follows it.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::engine::{
    Action, Direction, Ending, Learned, Machine, Notice, Options, Password, Protocol, Traced,
};
pub use crate::engine::{EndDetection, check_command};
use crate::error::{Error, Result};
pub use crate::rcon::method::EndMethod;
use crate::rcon::notice::{Finding, RconNotice, SentinelReaction};
use crate::rcon::packet::{DecodeError, Decoder, Packet, encode, encode_into};

/// A request id, as the client chose it and the server echoes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct RequestId(pub i32);

impl RequestId {
    /// The id a server puts on a refused login (and some on other refusals).
    pub const LOGIN_FAILED: RequestId = RequestId(-1);
    /// The id of the end-of-output sentinel (docs/protocol.md section 3).
    pub const SENTINEL: RequestId = RequestId(-2);
}

/// What the client sends: each has its wire type.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Request {
    /// `SERVERDATA_AUTH`, type 3; the body is the password and is never shown.
    Login,
    /// `SERVERDATA_EXECCOMMAND`, type 2.
    Command,
    /// An empty type-0 packet whose reply marks the end of an answer.
    Sentinel,
}

impl Request {
    /// The packet type on the wire.
    pub fn wire_type(self) -> i32 {
        match self {
            Request::Login => 3,
            Request::Command => 2,
            Request::Sentinel => 0,
        }
    }

    /// A label for traces.
    pub fn label(self) -> &'static str {
        match self {
            Request::Login => "login",
            Request::Command => "command",
            Request::Sentinel => "end-of-output sentinel",
        }
    }
}

/// The packet type of output (`SERVERDATA_RESPONSE_VALUE`) from vanilla and Source.
const OUTPUT: i32 = 0;
/// The packet type of a login reply (`SERVERDATA_AUTH_RESPONSE`); some servers also send output
/// with it.
const AUTH_RESPONSE: i32 = 2;
/// What vanilla answers to a type-0 packet (docs/protocol.md section 2).
const VANILLA_SENTINEL_REPLY: &[u8] = b"Unknown request 0";
/// Vanilla splits output every 4096 UTF-16 units, so any fragment but the last is at least this
/// many bytes long.
const VANILLA_FRAGMENT: usize = 4096;

/// What a received packet was, in the context it arrived in (for traces).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Role {
    /// The reply to the login: accepted.
    LoginReply,
    /// A refusal (id -1).
    LoginRefused,
    /// Source's empty packet before the login reply.
    PreLogin,
    /// Output of the command under way.
    Output,
    /// An empty packet with the command's id that ends its answer.
    EndMarker,
    /// The reply to a sentinel.
    SentinelReply,
    /// A login-failure-shaped answer to a sentinel: the server does not take sentinels.
    SentinelRejected,
    /// Belongs to nothing under way (an old sentinel's trailer, a late answer): dropped.
    Stale,
}

impl Role {
    /// A label for traces.
    pub fn label(self) -> &'static str {
        match self {
            Role::LoginReply => "login reply",
            Role::LoginRefused => "login refused",
            Role::PreLogin => "empty packet before the login reply",
            Role::Output => "output",
            Role::EndMarker => "end of output",
            Role::SentinelReply => "sentinel reply",
            Role::SentinelRejected => "sentinel rejected",
            Role::Stale => "stale, dropped",
        }
    }
}

/// What the probe (and later answers) taught about a server; the caller stores it per server
/// (it comes out in a [`Learned`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct ServerFacts {
    /// How its answers end.
    pub method: EndMethod,
    /// The shortest round trip seen (login, probe).
    pub rtt: Duration,
    /// The longest time from a command to the first packet of its answer.
    pub latency: Duration,
    /// How many answers `latency` was taken over.
    pub samples: u32,
    /// The server answers a sentinel with a login failure (and closes), after everything sent
    /// before it: for the last command of a session that refusal is an end marker.
    pub refuses_sentinel: bool,
}

/// The smallest quiet gap, once the server has answered [`TRUSTED_SAMPLES`] commands.
pub const GAP_FLOOR: Duration = Duration::from_millis(50);
/// The smallest quiet gap before that: a server that runs commands on its game tick (20 per
/// second) may take up to 50 ms to answer, more on a loaded machine.
pub const GAP_FLOOR_UNLEARNED: Duration = Duration::from_millis(100);
/// How many answers must have been timed before [`GAP_FLOOR`] applies.
pub const TRUSTED_SAMPLES: u32 = 3;
/// The smallest quiet gap after a packet of an answer.
pub const GAP_AFTER_PACKET_FLOOR: Duration = Duration::from_millis(10);
/// The longest adaptive gap.
pub const GAP_CEILING: Duration = Duration::from_secs(1);
/// With [`EndMethod::Vanilla`], the least time a command may go without any answer before the
/// sentinel goes out anyway (vanilla always answers, so silence this long means another server,
/// or a stalled one). Long, so that the command packet has surely been read and the two never
/// share one read; on a server or machine seen to be slower it is longer
/// ([`Exchange::late_sentinel`]).
pub const VANILLA_LATE_SENTINEL: Duration = Duration::from_secs(1);
/// With [`EndMethod::EndMarker`], how long an answer may stay completely silent before it counts
/// as empty.
pub const END_MARKER_SILENCE: Duration = Duration::from_secs(1);

/// The state of the connection's conversation; each state holds what is valid in it, and its
/// deadlines follow from that ([`Exchange::timers`]).
#[derive(Debug)]
enum State {
    /// No connection: waiting for [`Machine::start`].
    Disconnected,
    /// The password went out.
    LoggingIn {
        id: RequestId,
        sent_at: Instant,
        other_id: bool,
    },
    /// A sentinel on its own, after login.
    Probing {
        id: RequestId,
        sent_at: Instant,
        positive: bool,
    },
    /// Logged in, nothing under way.
    Ready,
    /// Logged in, nothing under way yet, after a probe that went unanswered for `waited`: the
    /// first command's time limit counts that wait, so that a server that stalls after login
    /// costs one timeout in all, not the probe's wait on top (the time a console stays idle
    /// before that command is not counted).
    ProbeIgnored { waited: Duration },
    /// A command under way.
    Command(Box<InFlight>),
}

/// The exchange's timers, each one deadline with one meaning (quinn-proto's timer table, in
/// small): the login's and the probe's follow from their states, a command's are set and stopped
/// as its answer comes ([`Timers`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Timer {
    /// No login reply within the timeout.
    Login,
    /// The probe's sentinel went unanswered for [`Exchange::probe_wait`]: the server ignores
    /// sentinels.
    Probe,
    /// The command's time limit (`--timeout`): the answer is incomplete, or never came.
    Answer,
    /// The quiet gap that ends an answer with no end marker (silence, idle); on the last
    /// command to a server that refuses sentinels, the gap after which the sentinel goes out.
    Gap,
    /// Vanilla: no packet this long, so the sentinel goes out late ([`Exchange::late_sentinel`]).
    LateSentinel,
    /// The server's own end marker: an answer silent this long is empty ([`END_MARKER_SILENCE`]).
    MarkerSilence,
    /// A sentinel that checks what was remembered ([`InFlight::check`]) went unanswered this
    /// long after the answer's last packet: the server ignores sentinels.
    CheckReply,
}

impl Timer {
    /// The table's order: the first due in it is served first (a command's limit before its
    /// quiet timers).
    const ALL: [Timer; 7] = [
        Timer::Login,
        Timer::Probe,
        Timer::Answer,
        Timer::Gap,
        Timer::LateSentinel,
        Timer::MarkerSilence,
        Timer::CheckReply,
    ];
    /// The timers that end or move an answer on silence (all but [`Timer::Answer`]).
    const QUIET: [Timer; 3] = [Timer::Gap, Timer::LateSentinel, Timer::MarkerSilence];
}

/// When each of a command's [`Timer`]s is due, if it is set.
#[derive(Debug, Default)]
struct Timers([Option<Instant>; 7]);

impl Timers {
    fn set(&mut self, timer: Timer, at: Instant) {
        self.0[timer as usize] = Some(at);
    }

    fn stop(&mut self, timer: Timer) {
        self.0[timer as usize] = None;
    }

    /// Stops every timer of [`Timer::QUIET`] (an end marker or a sentinel ends this answer now).
    fn stop_quiet(&mut self) {
        for t in Timer::QUIET {
            self.stop(t);
        }
    }
}

#[derive(Debug)]
struct InFlight {
    id: RequestId,
    sent_at: Instant,
    /// The method for this answer (may change on evidence).
    method: EndMethod,
    /// The answer's limit and the quiet timers of its method.
    timers: Timers,
    sentinel: Option<RequestId>,
    got_first: bool,
    /// Stop commands: the first packet or the close ends it, then the connection is closed.
    then_close: bool,
    /// The last command to a server that refuses sentinels: its first packet sends the
    /// sentinel whose refusal ends the answer (see [`Exchange::start_last_command`]).
    sentinel_after_first: bool,
    /// That sentinel went out when the quiet gap passed with no packet. It may share a read
    /// with the command: for the last command each gap with no refusal sends another, which
    /// gives it a read of its own; for a check, a gap after the last packet ends the answer.
    sentinel_after_gap: bool,
    /// The last packet of the answer is as long as a fragment some server follows with more
    /// ([`may_continue`]), so a close after it may have cut the answer short.
    last_may_continue: bool,
    /// This answer checks the method remembered for the server (docs/protocol.md section 3):
    /// its id -2 sentinel's reply settles the method (`Unknown request 0`: vanilla; another
    /// reply: the sentinel), a refusal settles this method, and no reply within
    /// [`Exchange::probe_wait`] of the last packet settles [`EndMethod::Idle`].
    check: Option<EndMethod>,
}

/// Whether an output packet's body could be a fragment that more of the same answer follows:
/// vanilla splits every 4096 UTF-16 units, Source at 4096 body bytes, other servers at 4086.
/// Anything else is the last packet of its answer on every server known
/// (docs/protocol.md section 4).
fn may_continue(body: &[u8]) -> bool {
    let len = body.len();
    if (4086..=VANILLA_FRAGMENT).contains(&len) {
        return true;
    }
    len > VANILLA_FRAGMENT
        && String::from_utf8_lossy(body).encode_utf16().count() == VANILLA_FRAGMENT
}

/// What a reply to the id -2 sentinel says about the server: vanilla answers it with `Unknown
/// request 0`, other servers mirror it (docs/protocol.md sections 3 and 4).
fn sentinel_method(p: &Packet) -> EndMethod {
    if p.kind == OUTPUT && p.body == VANILLA_SENTINEL_REPLY {
        EndMethod::Vanilla
    } else {
        EndMethod::Sentinel
    }
}

/// The next probe step: which sentinel goes out on its own after the next login.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Probe {
    /// None: the method is settled (learned, forced or probed).
    Settled,
    /// The id -2 sentinel.
    Negative,
    /// A positive-id sentinel (after the server refused the id -2 one).
    Positive,
}

/// What one conversation knows about its server: the value [`ServerFacts`] is made from and
/// [`Options::learned`] starts it with, apart from the connection's state.
#[derive(Debug)]
struct ServerModel {
    /// The method in force once probed, learned or forced; `None` until the probe settles it.
    method: Option<EndMethod>,
    /// The probe step still to try on the next login.
    probe: Probe,
    /// How the server reacted to the sentinels it refused, in order.
    rejected: Vec<SentinelReaction>,
    /// The shortest round trip seen.
    rtt: Option<Duration>,
    /// The longest round trip of this session (login, probe, a command's first packet): how
    /// late a server here may read a packet ([`Exchange::late_sentinel`]).
    slowest: Duration,
    /// The longest time from a command to its first packet, over `samples` answers.
    latency: Duration,
    samples: u32,
    /// The server answers sentinels with a login failure (see [`ServerFacts::refuses_sentinel`]).
    refuses_sentinel: bool,
    /// The probe went unanswered in time (a busy server may still answer it late).
    probe_unanswered: bool,
    /// Whether the method in force came from [`Options::learned`] and no answer of this
    /// session has confirmed it yet.
    remembered: bool,
}

impl ServerModel {
    /// What `cfg` says before the first connection: a forced method, what was learned, or
    /// nothing yet (probe).
    fn new(cfg: &Options) -> Self {
        let detect = cfg.end == EndDetection::Detect;
        let remembered = cfg.learned.as_ref().and_then(Learned::get::<ServerFacts>);
        let (method, probe) = match cfg.end {
            EndDetection::Detect => match remembered {
                Some(l) => (Some(l.method), Probe::Settled),
                None => (None, Probe::Negative),
            },
            EndDetection::Negative => (Some(EndMethod::Sentinel), Probe::Settled),
            EndDetection::Positive => (Some(EndMethod::PositiveSentinel), Probe::Settled),
            EndDetection::Idle => (Some(EndMethod::Silence), Probe::Settled),
            EndDetection::Answered => (Some(EndMethod::Idle), Probe::Settled),
            EndDetection::Auto => (Some(EndMethod::Vanilla), Probe::Settled),
            EndDetection::SinglePacket => (Some(EndMethod::SinglePacket), Probe::Settled),
        };
        let learned = remembered.filter(|_| detect);
        ServerModel {
            method,
            probe,
            rejected: Vec::new(),
            rtt: learned.map(|l| l.rtt),
            slowest: Duration::ZERO,
            latency: learned.map_or(Duration::ZERO, |l| l.latency),
            samples: learned.map_or(0, |l| l.samples),
            refuses_sentinel: learned.is_some_and(|l| l.refuses_sentinel),
            probe_unanswered: false,
            remembered: learned.is_some(),
        }
    }

    /// Forgets everything: the next login probes again, as for a server never seen.
    fn forget(&mut self) {
        self.method = None;
        self.probe = Probe::Negative;
        self.rejected.clear();
        self.rtt = None;
        self.latency = Duration::ZERO;
        self.samples = 0;
        self.refuses_sentinel = false;
        self.remembered = false;
    }

    fn sample_rtt(&mut self, rtt: Duration) {
        self.rtt = Some(self.rtt.map_or(rtt, |r| r.min(rtt)));
        self.slowest = self.slowest.max(rtt);
    }
}

/// The warnings a session gives once.
#[derive(Debug, Default)]
struct Warned {
    /// An answer packet larger than one TCP segment of a typical link.
    mtu: bool,
    /// A late answer.
    late: bool,
    /// The request id of the last late answer reported (one warning per answer).
    late_reported: Option<i32>,
}

/// One RCON conversation over a sequence of connections to the same server.
#[derive(Debug)]
pub struct Exchange {
    cfg: Options,
    /// Logs in on each connection.
    password: Password,
    /// A command that could not be started, reported by the next [`Machine::poll`].
    refused: Option<Error>,
    /// Whether to emit [`Action::Trace`] (the observer wants packets).
    trace: bool,
    decoder: Decoder,
    state: State,
    /// What is known about the server: learned earlier, probed, or seen in its answers.
    server: ServerModel,
    next_id: i32,
    /// The last command whose answer ended by a quiet gap: its id and when it was sent, to
    /// recognise a late answer.
    quiet_ended: Option<(RequestId, Instant)>,
    /// What the probe found, said once the first answer has settled the method for good (a
    /// server that refuses sentinels may turn out to have its own end marker).
    pending_note: Option<Finding>,
    /// The warnings given once per session.
    warned: Warned,
    /// Whether anything valid arrived on this connection (to tell "not RCON" apart).
    valid_seen: bool,
    /// A late answer came on this connection from a server that refuses sentinels: it may hold
    /// commands unread (docs/protocol.md section 3), so the next command ends as a last one does.
    behind: bool,
    first_bytes: Vec<u8>,
    outbox: VecDeque<Vec<u8>>,
    /// Written packets' buffers, for reuse.
    spare: Vec<Vec<u8>>,
    events: VecDeque<Action>,
}

impl Exchange {
    /// A conversation that logs in with `password` on each connection, starting when the first
    /// one is made ([`Machine::start`]).
    pub fn new(cfg: Options, password: Password) -> Self {
        Self {
            password,
            refused: None,
            decoder: Decoder::new(cfg.max_incoming),
            trace: cfg.observer.wants_packets(),
            server: ServerModel::new(&cfg),
            cfg,
            state: State::Disconnected,
            next_id: 0,
            quiet_ended: None,
            pending_note: None,
            warned: Warned::default(),
            valid_seen: false,
            behind: false,
            first_bytes: Vec::new(),
            outbox: VecDeque::new(),
            spare: Vec::new(),
            events: VecDeque::new(),
        }
    }

    /// The settings.
    pub fn config(&self) -> &Options {
        &self.cfg
    }

    /// Whether a command can be started now.
    pub fn is_ready(&self) -> bool {
        matches!(self.state, State::Ready | State::ProbeIgnored { .. })
    }

    /// Whether a connection is needed before anything can happen.
    pub fn is_disconnected(&self) -> bool {
        matches!(self.state, State::Disconnected)
    }

    /// The method in force, once known.
    pub fn method(&self) -> Option<EndMethod> {
        self.server.method
    }

    /// What is known about the server now (for remembering at the end of a session), once the
    /// method is settled by a probe or by evidence, and only when the method is not forced.
    pub fn facts(&self) -> Option<ServerFacts> {
        if self.cfg.end != EndDetection::Detect {
            return None;
        }
        Some(ServerFacts {
            method: self.server.method?,
            rtt: self.server.rtt.unwrap_or(Duration::ZERO),
            latency: self.server.latency,
            samples: self.server.samples,
            refuses_sentinel: self.server.refuses_sentinel,
        })
    }

    /// The quiet gap in force: [`Options::idle_gap`] if set, else eight round trips or four
    /// times the longest recent answer latency, whichever is longer, within [`GAP_FLOOR`] (or
    /// [`GAP_FLOOR_UNLEARNED`] before [`TRUSTED_SAMPLES`] answers were timed) and
    /// [`GAP_CEILING`].
    pub fn quiet_gap(&self) -> Duration {
        if let Some(g) = self.cfg.idle_gap {
            return g;
        }
        let floor = if self.server.samples >= TRUSTED_SAMPLES {
            GAP_FLOOR
        } else {
            GAP_FLOOR_UNLEARNED
        };
        let rtt = self.server.rtt.unwrap_or(Duration::ZERO);
        rtt.saturating_mul(8)
            .max(self.server.latency.saturating_mul(4))
            .clamp(floor, GAP_CEILING)
    }

    /// With [`EndMethod::Vanilla`], how long a command goes without any packet before the
    /// sentinel goes out anyway: four times the slowest round trip of the session or the
    /// slowest answer remembered, at least [`VANILLA_LATE_SENTINEL`], at most half the timeout
    /// (unless that is under the floor). A server that was slow to read the login or an earlier
    /// command may be as slow to read this one, and a sentinel written before it reads the
    /// command would share its read: vanilla closes the connection on that (docs/protocol.md
    /// section 3).
    pub fn late_sentinel(&self) -> Duration {
        self.server
            .slowest
            .max(self.server.latency)
            .saturating_mul(4)
            .min(self.cfg.timeout / 2)
            .max(VANILLA_LATE_SENTINEL)
    }

    /// How long the probe waits for its answer: twenty login round trips, at least 500 ms, at
    /// most [`Options::probe_timeout`] and the timeout.
    pub fn probe_wait(&self) -> Duration {
        let rtt = self.server.rtt.unwrap_or(Duration::ZERO);
        rtt.saturating_mul(20)
            .max(Duration::from_millis(500))
            .min(self.cfg.probe_timeout)
            .min(self.cfg.timeout)
    }

    /// Starts a command (the exchange must be ready). With `then_close` (a command that stops
    /// the server) the answer ends at its first packet or the close, with no sentinel.
    pub fn start_command(&mut self, command: &str, then_close: bool, now: Instant) -> Result<()> {
        self.check_command(command)?;
        if !self.is_ready() {
            return Err(Error::Closed {
                phase: crate::error::Phase::Send,
                partial: false,
                when: "before the command could be sent",
            });
        }
        let method = self.server.method.unwrap_or(EndMethod::Silence);
        // docs/protocol.md section 2: over a small MTU a packet near the 1460-byte read can
        // arrive in two pieces, and the server then closes the connection.
        if !self.warned.mtu
            && self.cfg.max_command_bytes == crate::rcon::packet::MAX_COMMAND_BYTES
            && command.len() > SMALL_MTU_COMMAND_BYTES
        {
            self.warned.mtu = true;
            self.events
                .push_back(Action::Warning(Notice::new(RconNotice::LongCommand {
                    bytes: command.len(),
                })));
        }
        let waited = match self.state {
            State::ProbeIgnored { waited } => waited,
            _ => Duration::ZERO,
        };
        let id = self.alloc_id();
        self.send(id, Request::Command, command.as_bytes());
        let mut timers = Timers::default();
        timers.set(
            Timer::Answer,
            later(now, self.cfg.timeout.saturating_sub(waited)),
        );
        if !then_close {
            match method {
                EndMethod::Silence => timers.set(Timer::Gap, later(now, self.quiet_gap())),
                EndMethod::Vanilla => {
                    timers.set(Timer::LateSentinel, later(now, self.late_sentinel()));
                }
                EndMethod::EndMarker => timers.set(
                    Timer::MarkerSilence,
                    later(now, END_MARKER_SILENCE.max(self.quiet_gap())),
                ),
                _ => {}
            }
        }
        // A remembered quiet gap is the one method that lets the next command go out while
        // an answer may still come: on a server that reads one packet per read and was
        // wrongly remembered, that next command shares a read and the server closes. So the
        // session's first answer sends the sentinel once the server has read the command (as
        // the last command does), and its reply or refusal confirms or corrects the method
        // before anything else is written (docs/protocol.md section 3).
        let check = (self.server.remembered
            && !then_close
            && method == EndMethod::Silence
            && self.server.refuses_sentinel)
            .then_some(EndMethod::Silence);
        // A server that refuses sentinels and answered late may hold commands unread, each
        // handled only when more bytes come, so that every later answer would come one command
        // late. This command ends as the last one does: the refusal of its sentinel comes after
        // every one of them, and the connection it closes is replaced by one in step.
        let behind = std::mem::take(&mut self.behind)
            && !then_close
            && method == EndMethod::Silence
            && self.server.refuses_sentinel;
        self.state = State::Command(Box::new(InFlight {
            id,
            sent_at: now,
            method,
            timers,
            sentinel: None,
            got_first: false,
            then_close,
            sentinel_after_first: check.is_some() || behind,
            sentinel_after_gap: false,
            last_may_continue: false,
            check,
        }));
        Ok(())
    }

    /// Starts the last command of a session (nothing follows it on this connection). On a
    /// server known to answer a sentinel with a login failure after everything before it (the
    /// silent-empty kind), the first packet of the answer sends the sentinel, and its refusal
    /// ends the answer exactly, however slowly the rest comes; the server then closes the
    /// connection, which was to end anyway. With no packet by the quiet gap the sentinel goes
    /// out then. It never goes right behind the command: such a server handles one packet per
    /// read, and a sentinel that shares the command's read waits there until more bytes come,
    /// so each further gap with no refusal sends another sentinel (docs/protocol.md section 4);
    /// the refusal comes after every answer before it, so none is lost by ending the run first.
    /// Elsewhere the same as
    /// [`Exchange::start_command`].
    pub fn start_last_command(&mut self, command: &str, now: Instant) -> Result<()> {
        self.start_command(command, false, now)?;
        if let State::Command(c) = &mut self.state {
            // Nothing follows it to be protected; a reply to its sentinel still corrects
            // what was remembered, a refusal still ends it however slowly the rest comes.
            c.check = None;
            if self.server.refuses_sentinel && c.method == EndMethod::Silence {
                c.sentinel_after_first = true;
            }
        }
        Ok(())
    }

    /// A timer of the command under way is due ([`Timer`]): it is stopped, then served.
    fn command_timeout(&mut self, timer: Timer, now: Instant) {
        let gap = self.quiet_gap();
        let Some(c) = self.in_flight() else { return };
        c.timers.stop(timer);
        match timer {
            Timer::Answer => {
                let got = c.got_first || self.decoder.buffered() > 0;
                let Some(c) = self.take_command() else { return };
                if self.take_partial(&c) {
                    self.finish_quiet(&c);
                    return;
                }
                self.fail(Error::Timeout {
                    phase: crate::error::Phase::Answer,
                    what: if got {
                        "waiting for the rest of the output; output is incomplete"
                    } else {
                        "waiting for the command's output"
                    },
                    after: self.cfg.timeout,
                });
            }
            Timer::Gap
                if c.method == EndMethod::Silence
                    && c.sentinel_after_first
                    && c.sentinel.is_none()
                    && !c.got_first =>
            {
                // The last command's gap passed with no packet: by now the server has
                // long read the command, so a sentinel has a read of its own, and its
                // refusal comes after an answer that is only late. Should it share the
                // command's read after all (a server that had not read the command
                // yet), the next gap sends another (below).
                c.sentinel = Some(RequestId::SENTINEL);
                c.sentinel_after_gap = true;
                c.timers.set(Timer::Gap, later(now, gap));
                self.send(RequestId::SENTINEL, Request::Sentinel, b"");
            }
            Timer::Gap if c.sentinel_after_gap && c.check.is_none() => {
                // The last command's sentinel drew no refusal within a gap: it shares a read
                // with the command (or with commands before it, on a server slower than the
                // gap) and waits in the server's buffer for more bytes. Another sentinel gives
                // it a read; the refusal still comes after every answer before it, so none is
                // lost by ending the run first. The answer's limit bounds the wait.
                c.timers.set(Timer::Gap, later(now, gap));
                self.send(RequestId::SENTINEL, Request::Sentinel, b"");
            }
            Timer::LateSentinel if c.sentinel.is_none() => {
                // Vanilla always answers; this long a silence means a stalled or a
                // different server. The command packet has been read by now (four of the
                // slowest round trips seen), so the sentinel has a read of its own.
                // Its reply corrects what was remembered, if it was; no packet has come,
                // so none of the check's wait.
                let sid = RequestId::SENTINEL;
                c.sentinel = Some(sid);
                self.send(sid, Request::Sentinel, b"");
            }
            Timer::CheckReply => {
                // The sentinel that checked what was remembered went unanswered: the
                // server ignores sentinels, and all it wrote for the command came before
                // this long a silence; its answers end by a quiet gap after their last
                // packet. A late reply still turns it back (see `probe_unanswered`).
                let Some(c) = self.take_command() else { return };
                self.server.probe_unanswered = true;
                self.server.refuses_sentinel = false;
                self.settle(EndMethod::Idle);
                self.server.remembered = false;
                self.finish_quiet(&c);
            }
            Timer::LateSentinel | Timer::Login | Timer::Probe => {}
            Timer::Gap | Timer::MarkerSilence => {
                let Some(c) = self.take_command() else { return };
                self.take_partial(&c);
                self.finish_quiet(&c);
                if c.check.is_some() && c.sentinel.is_some() {
                    // The checking sentinel went out after the gap and drew no refusal:
                    // it shared the command's read on a server that reads one packet per
                    // read and waits there for more bytes. A command written behind it
                    // would meet its refusal; a new connection leaves it behind.
                    self.disconnect();
                }
            }
        }
    }

    /// When each timer is due in this state, if it is set: the one place the deadlines come
    /// from, for [`Machine::wake`] and [`Machine::tick`] alike.
    fn timers(&self) -> [(Timer, Option<Instant>); 7] {
        let mut at = [None; 7];
        match &self.state {
            State::LoggingIn { sent_at, .. } => {
                at[Timer::Login as usize] = Some(later(*sent_at, self.cfg.timeout));
            }
            State::Probing { sent_at, .. } => {
                at[Timer::Probe as usize] = Some(later(*sent_at, self.probe_wait()));
            }
            State::Command(c) => at = c.timers.0,
            State::Disconnected | State::Ready | State::ProbeIgnored { .. } => {}
        }
        Timer::ALL.map(|t| (t, at[t as usize]))
    }

    /// No login reply within the timeout: what the server did instead says why.
    fn login_timeout(&mut self) {
        let State::LoggingIn { other_id, .. } = self.state else {
            return;
        };
        let after = self.cfg.timeout;
        let err = if !self.valid_seen && self.first_bytes.is_empty() {
            Error::NoLoginReply { after }
        } else if other_id {
            Error::LoginReplyOtherIds { after }
        } else {
            Error::Timeout {
                phase: crate::error::Phase::Login,
                what: "waiting for the login reply",
                after,
            }
        };
        self.fail(err);
    }

    /// A command taken out ([`Exchange::take_command`]) whose answer ended by silence: noted,
    /// to recognise a late answer, and done.
    fn finish_quiet(&mut self, c: &InFlight) {
        self.quiet_ended = Some((c.id, c.sent_at));
        self.done();
    }

    fn alloc_id(&mut self) -> RequestId {
        // Positive and increasing; wraps back to 1 rather than to a negative id.
        self.next_id = if self.next_id >= i32::MAX - 1 {
            1
        } else {
            self.next_id + 1
        };
        RequestId(self.next_id)
    }

    fn send(&mut self, id: RequestId, request: Request, body: &[u8]) {
        let hidden = request == Request::Login;
        if self.trace {
            // The login's body (the password) is left out: the trace has its header only.
            let shown = if hidden { &[][..] } else { body };
            let mut traced = Traced::new(
                Protocol::Rcon,
                Direction::Sent,
                encode(id.0, request.wire_type(), shown),
                request.label(),
            );
            traced.hidden = hidden;
            self.events.push_back(Action::Trace(traced));
        }
        let mut bytes = self.spare.pop().unwrap_or_default();
        encode_into(id.0, request.wire_type(), body, &mut bytes);
        self.outbox.push_back(bytes);
    }

    fn trace(&mut self, p: &Packet, role: Role) {
        if self.trace {
            self.events.push_back(Action::Trace(Traced::new(
                Protocol::Rcon,
                Direction::Received,
                encode(p.id, p.kind, &p.body),
                role.label(),
            )));
        }
    }

    fn fail(&mut self, err: Error) {
        self.say_pending_note();
        self.state = State::Disconnected;
        self.decoder.clear();
        self.outbox.clear();
        self.events.push_back(Action::Fail(err));
    }

    fn decode_error(&self, e: DecodeError) -> Error {
        if self.valid_seen {
            Error::Decode(Box::new(e))
        } else {
            self.not_rcon()
        }
    }

    /// The server's first bytes are not RCON: say what they look like.
    fn not_rcon(&self) -> Error {
        let b = &self.first_bytes;
        let looks = if b.starts_with(b"HTTP/") || b.starts_with(b"<") {
            "an HTTP or web server"
        } else if b.starts_with(b"SSH-") {
            "an SSH server"
        } else if b.first() == Some(&0xFF) && b.get(3) == Some(&0) {
            "a Minecraft game port (a legacy disconnect)"
        } else if b.len() >= 2 && usize::from(b[0]) == b.len() - 1 {
            "a Minecraft game port"
        } else {
            "something that is not RCON"
        };
        let shown: String = b
            .iter()
            .take(16)
            .map(|&c| {
                if c.is_ascii_graphic() || c == b' ' {
                    char::from(c)
                } else {
                    '.'
                }
            })
            .collect();
        Error::NotRcon {
            looks,
            first: shown,
        }
    }

    fn is_reply_id(&self, p: &Packet, id: RequestId) -> bool {
        p.id == id.0 || (self.cfg.any_reply_id && p.id != RequestId::LOGIN_FAILED.0)
    }

    fn on_packet(&mut self, p: Packet, now: Instant) {
        match &mut self.state {
            State::Disconnected => {}
            State::Ready | State::ProbeIgnored { .. } => {
                self.late_answer(&p, now);
                self.trace(&p, Role::Stale);
            }
            State::LoggingIn { id, sent_at, .. } => {
                let (id, sent_at) = (*id, *sent_at);
                let reply_id = self.is_reply_id(&p, id);
                // Source sends an empty type-0 packet before the reply.
                if p.kind == OUTPUT {
                    self.trace(&p, Role::PreLogin);
                    return;
                }
                // Id -1 is the protocol's refusal; some reimplementations instead echo the
                // request id with type -1.
                if p.id == RequestId::LOGIN_FAILED.0 || (p.id == id.0 && p.kind == -1) {
                    self.trace(&p, Role::LoginRefused);
                    self.fail(Error::LoginRefused);
                    return;
                }
                // The reply is type 2; some reimplementations echo the login's type 3.
                let is_reply = p.kind == AUTH_RESPONSE || p.kind == Request::Login.wire_type();
                if !(is_reply && reply_id) {
                    if let State::LoggingIn { other_id, .. } = &mut self.state {
                        *other_id = true;
                    }
                    self.trace(&p, Role::Stale);
                    return;
                }
                self.trace(&p, Role::LoginReply);
                self.server.sample_rtt(now - sent_at);
                match self.server.probe {
                    probe @ (Probe::Negative | Probe::Positive) if self.server.method.is_none() => {
                        let positive = probe == Probe::Positive;
                        let sid = if positive {
                            self.alloc_id()
                        } else {
                            RequestId::SENTINEL
                        };
                        self.send(sid, Request::Sentinel, b"");
                        self.state = State::Probing {
                            id: sid,
                            sent_at: now,
                            positive,
                        };
                    }
                    _ => {
                        self.state = State::Ready;
                        self.events.push_back(Action::LoggedIn);
                    }
                }
            }
            State::Probing {
                id,
                sent_at,
                positive,
                ..
            } => {
                let (id, sent_at, positive) = (*id, *sent_at, *positive);
                if p.id == id.0 {
                    self.trace(&p, Role::SentinelReply);
                    self.server.sample_rtt(now - sent_at);
                    let method = if positive {
                        EndMethod::PositiveSentinel
                    } else {
                        sentinel_method(&p)
                    };
                    self.settle(method);
                    self.state = State::Ready;
                    self.events.push_back(Action::LoggedIn);
                } else if p.id == RequestId::LOGIN_FAILED.0 {
                    self.server.refuses_sentinel = true;
                    self.trace(&p, Role::SentinelRejected);
                    self.probe_rejected(positive, SentinelReaction::RefusesLogin);
                } else {
                    self.trace(&p, Role::Stale);
                }
            }
            State::Command(_) => self.on_command_packet(p, now),
        }
    }

    /// The probe's sentinel was refused: the connection is gone; try the next probe step on a
    /// new one, or settle on the quiet gap.
    fn probe_rejected(&mut self, positive: bool, how: SentinelReaction) {
        self.server.rejected.push(how);
        self.state = State::Disconnected;
        self.decoder.clear();
        self.outbox.clear();
        if positive {
            self.server.probe = Probe::Settled;
            self.settle(EndMethod::Silence);
        } else {
            self.server.probe = Probe::Positive;
        }
        self.events.push_back(Action::Reconnect);
    }

    /// The probe (or evidence) settled the method: announce it once.
    fn settle(&mut self, method: EndMethod) {
        // Silence refined to idle (an empty answer came as an empty packet) contradicts
        // nothing: no note (unless a check found that the server ignores the sentinels it
        // was remembered to refuse).
        let refined = self.server.method == Some(EndMethod::Silence)
            && method == EndMethod::Idle
            && !self.server.probe_unanswered;
        let was = self.server.method;
        let changed = was.is_some_and(|m| m != method) && !refined;
        self.server.method = Some(method);
        self.server.probe = Probe::Settled;
        let rejected = std::mem::take(&mut self.server.rejected);
        if self.cfg.end != EndDetection::Detect {
            return;
        }
        if let Some(was) = was.filter(|_| changed && self.server.remembered) {
            self.server.remembered = false;
            self.pending_note = None;
            self.note(Finding::Contradicts { was }, method);
        } else if !rejected.is_empty() {
            let finding = Finding::Sentinels(rejected);
            if method == EndMethod::Silence {
                // Its first answer may still show an end marker of its own.
                self.pending_note = Some(finding);
            } else {
                self.note(finding, method);
            }
        } else if let Some(finding) = self.pending_note.take() {
            self.note(finding, method);
        }
        if let Some(l) = self.facts() {
            self.events
                .push_back(Action::Learned(Some(Learned::new(l))));
        }
    }

    fn note(&mut self, finding: Finding, method: EndMethod) {
        self.events
            .push_back(Action::Note(Notice::new(RconNotice::Settled {
                finding,
                method,
            })));
    }

    /// The command under way is complete.
    fn done(&mut self) {
        self.say_pending_note();
        self.events.push_back(Action::Done { close: false });
    }

    fn say_pending_note(&mut self) {
        if let Some(finding) = self.pending_note.take() {
            let method = self.server.method.unwrap_or(EndMethod::Silence);
            self.note(finding, method);
        }
    }

    fn on_command_packet(&mut self, p: Packet, now: Instant) {
        if self.on_sentinel_answer(&p) {
            return;
        }
        let Some(c) = self.in_flight() else { return };
        let id = c.id;
        let is_output = (p.kind == OUTPUT || p.kind == AUTH_RESPONSE)
            && (p.id == id.0
                || (self.cfg.any_reply_id && p.id != RequestId::LOGIN_FAILED.0 && p.id >= 0));
        if !is_output {
            return self.on_other_packet(&p, now);
        }
        let first = self.time_first_packet(now);
        let Some(c) = self.in_flight() else { return };
        if c.then_close {
            self.trace(&p, Role::Output);
            self.events.push_back(Action::Output(p.body));
            // The connection is closed at once: a connected client keeps a vanilla server from
            // stopping cleanly.
            self.take_command();
            self.state = State::Disconnected;
            self.done();
            return;
        }
        // The server's own end marker: output as type 2, ended by an empty type-2 packet with
        // the command's id (no other known server sends type 2 for output).
        if p.kind == AUTH_RESPONSE {
            return self.on_marked_output(p);
        }
        let method = c.method;
        let body_len = p.body.len();
        // A packet as long as a full vanilla fragment (or longer) may well be followed by
        // more of the same answer, which a loaded server writes later: the whole gap then.
        let gap = if body_len >= VANILLA_FRAGMENT {
            self.quiet_gap()
        } else {
            self.quiet_gap_for_answer()
        };
        let last_may_continue = may_continue(&p.body);
        self.trace(&p, Role::Output);
        self.events.push_back(Action::Output(p.body));
        let Some(c) = self.in_flight() else { return };
        c.last_may_continue = last_may_continue;
        if !self.checks_remembered(method, body_len, now) {
            self.after_output(method, body_len, first, later(now, gap), now);
        }
    }

    /// A packet under a command that is not its output: a refused session, the probe's
    /// sentinel answered late, or something stale (a late answer is reported).
    fn on_other_packet(&mut self, p: &Packet, now: Instant) {
        if p.id == RequestId::LOGIN_FAILED.0 && p.kind == AUTH_RESPONSE {
            self.trace(p, Role::LoginRefused);
            self.fail(Error::Protocol(
                "server answered the command with a login failure (session no longer authenticated)"
                    .into(),
            ));
            return;
        }
        // The probe's sentinel answered late (a busy server): it does take sentinels after
        // all, and later commands can use them.
        if p.id == RequestId::SENTINEL.0
            && self.server.probe_unanswered
            && self.server.method == Some(EndMethod::Idle)
        {
            self.server.probe_unanswered = false;
            self.trace(p, Role::SentinelReply);
            self.settle(sentinel_method(p));
            return;
        }
        self.late_answer(p, now);
        self.trace(p, Role::Stale);
    }

    /// Times the answer's first packet (when this is it): the answer latency and a round
    /// trip. Whether it was the first.
    fn time_first_packet(&mut self, now: Instant) -> bool {
        let Some(c) = self.in_flight() else {
            return false;
        };
        let first = !c.got_first;
        c.got_first = true;
        if first {
            // The slowest answer, decaying by 1/64 with every answer, so one slow moment (a
            // loaded machine, a lag spike) widens the gap for a while, not for ever.
            let latency = now - c.sent_at;
            self.server.latency = latency.max(self.server.latency - self.server.latency / 64);
            self.server.samples = self.server.samples.saturating_add(1);
            // A command's first packet is a round trip too (plus the server's work): without
            // it the gap after a packet would rest on the login's one sample, which a loaded
            // moment can make eight times too long for the whole session (Palworld: 64 ms a
            // command instead of 10).
            self.server.sample_rtt(latency);
        }
        first
    }

    /// Output of type 2, which only a server with its own end marker sends: the method is
    /// that from now on, and an empty packet ends the answer.
    fn on_marked_output(&mut self, p: Packet) {
        let Some(c) = self.in_flight() else { return };
        if c.method != EndMethod::EndMarker {
            c.method = EndMethod::EndMarker;
            c.timers.stop_quiet();
            self.settle(EndMethod::EndMarker);
        }
        if p.body.is_empty() {
            self.trace(&p, Role::EndMarker);
            self.answered();
        } else {
            if let State::Command(c) = &mut self.state {
                c.timers.stop_quiet();
            }
            self.trace(&p, Role::Output);
            self.events.push_back(Action::Output(p.body));
        }
    }

    /// A packet of output came (`gap_end`: when its quiet gap ends): what it means for the end
    /// of the answer under `method`, the first packet or a later one.
    fn after_output(
        &mut self,
        method: EndMethod,
        body_len: usize,
        first: bool,
        gap_end: Instant,
        now: Instant,
    ) {
        let State::Command(c) = &mut self.state else {
            return;
        };
        match method {
            EndMethod::SinglePacket => self.answered(),
            EndMethod::Silence | EndMethod::EndMarker if body_len == 0 => {
                // An empty packet for an empty answer (where an end marker was expected:
                // another server now): this server answers every command, so waiting for a
                // first packet is safe (and a slow answer is never cut off).
                self.take_command();
                self.settle(EndMethod::Idle);
                self.done();
            }
            EndMethod::Silence if c.sentinel_after_first => {
                // The server has read the command (it answered): a sentinel now has a read of
                // its own, and its refusal comes after the rest of this answer.
                if c.sentinel.is_none() {
                    c.sentinel = Some(RequestId::SENTINEL);
                    c.timers.stop_quiet();
                    self.send(RequestId::SENTINEL, Request::Sentinel, b"");
                } else if c.sentinel_after_gap {
                    c.timers.set(Timer::Gap, gap_end);
                }
            }
            EndMethod::Silence | EndMethod::Idle => {
                c.timers.set(Timer::Gap, gap_end);
            }
            EndMethod::EndMarker => {
                // Type-0 output where an end marker was expected: another server now; fall back
                // to the quiet gap for this answer and remember that.
                c.method = EndMethod::Silence;
                c.timers.stop_quiet();
                c.timers.set(Timer::Gap, gap_end);
                self.settle(EndMethod::Silence);
            }
            EndMethod::Vanilla => {
                c.timers.stop_quiet();
                if first && c.sentinel.is_none() {
                    if body_len < VANILLA_FRAGMENT {
                        self.answered();
                    } else if self.server.remembered {
                        self.check_remembered(EndMethod::Silence, now);
                    } else {
                        c.sentinel = Some(RequestId::SENTINEL);
                        self.send(RequestId::SENTINEL, Request::Sentinel, b"");
                    }
                }
            }
            EndMethod::Sentinel | EndMethod::PositiveSentinel => {
                if first && c.sentinel.is_none() {
                    let sid = if method == EndMethod::PositiveSentinel {
                        self.alloc_id()
                    } else {
                        RequestId::SENTINEL
                    };
                    if let State::Command(c) = &mut self.state {
                        c.sentinel = Some(sid);
                    }
                    self.send(sid, Request::Sentinel, b"");
                    if self.server.remembered {
                        self.check_remembered(EndMethod::Silence, now);
                    }
                }
            }
        }
    }

    /// A packet that answers the sentinel out for the command under way: its reply ends the
    /// answer (and confirms or corrects what was remembered); a refusal means the server takes
    /// sentinels for logins (and closes), and it answers in order, so the answer was complete
    /// before it. Whether the packet was that.
    fn on_sentinel_answer(&mut self, p: &Packet) -> bool {
        let State::Command(c) = &mut self.state else {
            return false;
        };
        // 1. The reply to our sentinel ends the answer (and confirms or corrects what was
        // remembered).
        if c.sentinel == Some(RequestId(p.id)) {
            let checked = c.check.is_some() || self.server.remembered;
            let method = match c.method {
                EndMethod::PositiveSentinel => EndMethod::PositiveSentinel,
                _ => sentinel_method(p),
            };
            self.take_command();
            self.trace(p, Role::SentinelReply);
            if checked {
                self.server.refuses_sentinel = false;
                self.settle(method);
                self.server.remembered = false;
            }
            self.done();
            return true;
        }
        // 2. A refusal while a sentinel is out: the server takes sentinels for logins (and
        // closes). It answers in order, so the command's answer was complete before it.
        if c.sentinel.is_some() && p.id == RequestId::LOGIN_FAILED.0 {
            let method = c.check.unwrap_or(EndMethod::Silence);
            self.server.refuses_sentinel = true;
            self.take_command();
            self.trace(p, Role::SentinelRejected);
            self.settle(method);
            self.server.remembered = false;
            self.done();
            self.state = State::Disconnected;
            self.decoder.clear();
            return true;
        }
        false
    }

    /// Whether an answer's packet (of `body_len` bytes, under `method`) is evidence to check what
    /// was remembered on (docs/protocol.md section 3): an empty packet where a quiet gap was
    /// remembered for a server that refuses sentinels (it answers every command), type-0 output
    /// where an end marker was, the first packet under a remembered quiet gap, or a packet of
    /// an answer being checked; if so, the check goes on ([`Exchange::check_remembered`]).
    fn checks_remembered(&mut self, method: EndMethod, body_len: usize, now: Instant) -> bool {
        let State::Command(c) = &self.state else {
            return false;
        };
        let remembered = self.server.remembered;
        let fallback = match method {
            EndMethod::Silence if body_len == 0 && remembered && self.server.refuses_sentinel => {
                EndMethod::Idle
            }
            EndMethod::Silence if c.check.is_some() => EndMethod::Silence,
            EndMethod::EndMarker if remembered && body_len == 0 => EndMethod::Idle,
            EndMethod::EndMarker if remembered => EndMethod::Silence,
            EndMethod::Sentinel | EndMethod::PositiveSentinel
                if c.check.is_some() || (remembered && c.sentinel.is_some()) =>
            {
                c.check.unwrap_or(EndMethod::Silence)
            }
            _ => return false,
        };
        self.check_remembered(fallback, now);
        true
    }

    /// Checks the method remembered for the server on the answer under way, whose packets show
    /// that the server has read the command: the id -2 sentinel goes out now, alone (unless a
    /// sentinel is out already), so that its reply, which comes after everything the server
    /// writes for the command, ends the answer and settles the method ([`InFlight::check`];
    /// `fallback` is what a refusal settles). Called again for each packet of the answer, to
    /// wait for the reply from the last one.
    fn check_remembered(&mut self, fallback: EndMethod, now: Instant) {
        let wait = self.probe_wait();
        let Some(c) = self.in_flight() else { return };
        c.check = Some(fallback);
        c.timers.stop_quiet();
        c.timers.set(Timer::CheckReply, later(now, wait));
        if c.method != EndMethod::PositiveSentinel {
            c.method = EndMethod::Sentinel;
        }
        if c.sentinel.is_none() {
            c.sentinel = Some(RequestId::SENTINEL);
            self.send(RequestId::SENTINEL, Request::Sentinel, b"");
        }
    }

    /// The gap after a packet of an answer: a server writes the messages of one answer back to
    /// back, so eight round trips, at least [`GAP_AFTER_PACKET_FLOOR`] and at most the gap
    /// before a first packet.
    fn quiet_gap_for_answer(&self) -> Duration {
        if let Some(g) = self.cfg.idle_gap {
            return g;
        }
        let rtt = self.server.rtt.unwrap_or(Duration::ZERO);
        rtt.saturating_mul(8)
            .clamp(GAP_AFTER_PACKET_FLOOR, self.quiet_gap())
    }

    /// A packet for a command whose answer had already ended: never dropped without a word.
    /// For the command that last ended by a quiet gap, its latency is remembered so the gap
    /// grows (said once); any output packet with the id of an earlier command of ours is
    /// reported, once per command, with the start of its text.
    fn late_answer(&mut self, p: &Packet, now: Instant) {
        let ours = p.id > 0
            && p.id <= self.next_id
            && (p.kind == OUTPUT || p.kind == AUTH_RESPONSE)
            && !p.body.is_empty();
        if !ours {
            return;
        }
        self.behind |= self.server.refuses_sentinel;
        if self.warned.late_reported == Some(p.id) {
            return;
        }
        self.warned.late_reported = Some(p.id);
        let quiet = self
            .quiet_ended
            .filter(|(id, _)| p.id == id.0 && self.cfg.idle_gap.is_none());
        let text = String::from_utf8_lossy(&p.body);
        let preview: String = text.chars().take(LATE_PREVIEW_CHARS).collect();
        let cut = preview.len() < text.len();
        let after_gap = quiet.map(|(_, sent_at)| {
            let late = now - sent_at;
            self.server.latency = self.server.latency.max(late);
            let grows = (!std::mem::replace(&mut self.warned.late, true)).then(|| self.quiet_gap());
            (late, grows)
        });
        self.events
            .push_back(Action::Warning(Notice::new(RconNotice::LateAnswer {
                id: p.id,
                preview,
                cut,
                bytes: p.body.len(),
                after_gap,
            })));
        if after_gap.is_none() {
            return;
        }
        if let Some(l) = self.facts() {
            self.events
                .push_back(Action::Learned(Some(Learned::new(l))));
        }
    }

    /// The command under way, if there is one.
    fn in_flight(&mut self) -> Option<&mut InFlight> {
        match &mut self.state {
            State::Command(c) => Some(c),
            _ => None,
        }
    }

    /// The answer under way is complete: ready for the next command.
    fn answered(&mut self) {
        self.take_command();
        self.done();
    }

    /// The command under way, if there is one, taken out: the exchange is ready again.
    fn take_command(&mut self) -> Option<Box<InFlight>> {
        match std::mem::replace(&mut self.state, State::Ready) {
            State::Command(c) => Some(c),
            other => {
                self.state = other;
                None
            }
        }
    }

    /// With [`Options::partial_on_idle`]: delivers the body of a packet that is still incomplete
    /// (its size field claimed more than arrived) with a warning. Whether anything was delivered.
    fn take_partial(&mut self, c: &InFlight) -> bool {
        if !self.cfg.partial_on_idle || self.decoder.buffered() == 0 {
            return false;
        }
        let Some(partial) = self.decoder.take_partial() else {
            return false;
        };
        let p = &partial.packet;
        if !(p.kind == OUTPUT && self.is_reply_id(p, c.id)) {
            return false;
        }
        self.events
            .push_back(Action::Warning(Notice::new(RconNotice::PartialPacket {
                declared: partial.declared,
                received: partial.received,
            })));
        self.events.push_back(Action::Output(partial.packet.body));
        true
    }
}

impl Machine for Exchange {
    /// A new connection is open: the login goes out.
    fn start(&mut self, now: Instant) {
        self.decoder.clear();
        self.outbox.clear();
        self.valid_seen = false;
        self.behind = false;
        self.first_bytes.clear();
        let id = self.alloc_id();
        let password = self.password.clone();
        self.send(id, Request::Login, password.expose().as_bytes());
        self.state = State::LoggingIn {
            id,
            sent_at: now,
            other_id: false,
        };
    }

    fn command(&mut self, command: &str, now: Instant) {
        self.command_with(command, Ending::Normal, now);
    }

    /// Starts a command, `ending` saying what follows it (see [`Exchange::start_command`] and
    /// [`Exchange::start_last_command`]); a command that cannot start fails through the next
    /// [`Machine::poll`] and leaves the connection as it was.
    fn command_with(&mut self, command: &str, ending: Ending, now: Instant) {
        let started = match ending {
            Ending::Normal => self.start_command(command, false, now),
            Ending::StopsServer => self.start_command(command, true, now),
            Ending::Last => self.start_last_command(command, now),
        };
        if let Err(e) = started {
            self.refused = Some(e);
        }
    }

    /// Bytes arrived.
    fn receive(&mut self, bytes: &[u8], now: Instant) {
        if !self.valid_seen && self.first_bytes.len() < 64 {
            let take = (64 - self.first_bytes.len()).min(bytes.len());
            self.first_bytes.extend_from_slice(&bytes[..take]);
        }
        self.decoder.feed(bytes);
        loop {
            match self.decoder.next_packet() {
                Ok(Some(p)) => {
                    self.valid_seen = true;
                    self.on_packet(p, now);
                    if matches!(self.state, State::Disconnected) {
                        return;
                    }
                }
                Ok(None) => break,
                Err(e) => {
                    let err = self.decode_error(e);
                    self.fail(err);
                    return;
                }
            }
        }
        // Part of a packet: with a quiet gap, the silence starts over once an answer has begun
        // (or, where partial packets are shown, at any byte); so does the wait for a checking
        // sentinel's reply.
        let wait = self.probe_wait();
        if self.decoder.buffered() > 0
            && let State::Command(c) = &mut self.state
            && c.check.is_some()
        {
            c.timers.set(Timer::CheckReply, later(now, wait));
        }
        let gap = self.quiet_gap();
        if self.decoder.buffered() > 0
            && let State::Command(c) = &mut self.state
            && matches!(c.method, EndMethod::Silence | EndMethod::Idle)
            && (c.got_first || self.cfg.partial_on_idle)
        {
            c.timers.set(Timer::Gap, later(now, gap));
        }
    }

    /// Call when [`Machine::wake`]'s instant has passed: serves the first timer due (the
    /// login's, the probe's or one of the command's).
    fn tick(&mut self, now: Instant) {
        match crate::engine::machine::first_due(self.timers(), now) {
            None => {}
            Some(Timer::Login) => self.login_timeout(),
            Some(Timer::Probe) => {
                // The server ignores sentinels (Factorio-like); the connection is fine.
                self.server.probe_unanswered = true;
                self.server.rejected.push(SentinelReaction::Ignores);
                self.settle(EndMethod::Idle);
                self.state = State::ProbeIgnored {
                    waited: self.probe_wait(),
                };
                self.events.push_back(Action::LoggedIn);
            }
            Some(timer) => self.command_timeout(timer, now),
        }
    }

    /// A command that could not start first, then the packets to write (one per
    /// [`Action::Send`], each with one write call), then what happened, in order. A
    /// [`Action::Done`] says whether the connection is over as the exchange stands when it is
    /// taken (a quiet answer's check may drop the connection right after ending the answer).
    fn poll(&mut self) -> Option<Action> {
        if let Some(e) = self.refused.take() {
            return Some(Action::Fail(e));
        }
        if let Some(packet) = self.outbox.pop_front() {
            return Some(Action::Send(packet));
        }
        match self.events.pop_front()? {
            Action::Done { .. } => Some(Action::Done {
                close: self.is_disconnected(),
            }),
            action => Some(action),
        }
    }

    /// When to call [`Machine::tick`] if nothing arrives first; `None` when nothing is awaited.
    fn wake(&self) -> Option<Instant> {
        crate::engine::machine::earliest(self.timers())
    }

    /// The peer closed the connection (`reset`: with an error rather than an orderly close).
    /// Both end the conversation alike today. RCON reads its own meaning into a close (a stop
    /// command's end, a server that closes on sentinels, an incomplete answer): always `true`.
    fn peer_closed(&mut self, _reset: bool, _now: Instant) -> bool {
        let mid_packet = self.decoder.buffered() > 0;
        match std::mem::replace(&mut self.state, State::Disconnected) {
            State::Disconnected | State::Ready | State::ProbeIgnored { .. } => {}
            State::LoggingIn { .. } => {
                let err = if self.valid_seen || self.first_bytes.is_empty() {
                    Error::LoginClosed
                } else {
                    self.not_rcon()
                };
                self.events.push_back(Action::Fail(err));
            }
            State::Probing { positive, .. } => {
                self.probe_rejected(positive, SentinelReaction::Closes);
            }
            State::Command(c) => {
                self.say_pending_note();
                let got_first = c.got_first || self.take_partial(&c);
                if c.then_close || (got_first && c.method == EndMethod::SinglePacket) {
                    self.done();
                } else if c.sentinel.is_some() && !got_first {
                    // The server closed on a sentinel sent into a silent answer: it is not what
                    // was remembered, and the command may or may not have run.
                    self.events.push_back(Action::Learned(None));
                    self.events.push_back(Action::Fail(Error::Closed {
                        phase: crate::error::Phase::Answer,
                        partial: false,
                        when: "before answering; the command may or may not have run",
                    }));
                } else if c.sentinel.is_some() && self.server.remembered {
                    // The server closed on the end-of-output probe that what was remembered
                    // about it called safe: another server took the address. Forget it, and
                    // probe afresh on the next connection of this run.
                    let vanilla_rule = c.method == EndMethod::Vanilla
                        || (c.check.is_some() && self.server.method == Some(EndMethod::Vanilla));
                    self.events.push_back(Action::Learned(None));
                    self.server.forget();
                    if vanilla_rule && got_first && !c.last_may_continue {
                        // Vanilla was remembered, so the sentinel went out after a first packet
                        // of 4096 bytes or more that is no vanilla fragment (not 4096 UTF-16
                        // units) and no fragment of any other server known: a server that sends
                        // each answer as one packet of any size, which read the sentinel after
                        // the command and closed on it. All it wrote for the command came
                        // before the close: the answer is whole, re-learned on the spot with
                        // nothing lost. (With a sentinel method remembered the sentinel follows
                        // a packet of any size, and a close after it says nothing of the rest.)
                        self.events.push_back(Action::Warning(Notice::new(
                            RconNotice::ClosedOnRemembered,
                        )));
                        self.done();
                        self.decoder.clear();
                        self.outbox.clear();
                        return true;
                    }
                    self.events.push_back(Action::Fail(Error::Closed {
                        phase: crate::error::Phase::Answer,
                        partial: true,
                        when: "mid-response; output is incomplete (it closed after the \
                               end-of-output probe, which the server remembered at this address \
                               answers: what was learned about it is forgotten and the next \
                               connection probes again, as `rcon --forget` does)",
                    }));
                } else {
                    self.events.push_back(Action::Fail(Error::Closed {
                        phase: crate::error::Phase::Answer,
                        partial: got_first || mid_packet,
                        when: if got_first {
                            "mid-response; output is incomplete"
                        } else if mid_packet {
                            "mid-packet; output is incomplete"
                        } else {
                            "before answering; the command may or may not have run"
                        },
                    }));
                }
            }
        }
        self.decoder.clear();
        self.outbox.clear();
        true
    }

    /// The connection is gone (closed by the driver): the next command needs a new one.
    fn disconnect(&mut self) {
        self.state = State::Disconnected;
        self.decoder.clear();
        self.outbox.clear();
    }

    /// Checks a command against the limits before anything is sent.
    fn check_command(&self, command: &str) -> Result<()> {
        check_command(command, self.cfg.max_command_bytes)
    }

    fn learned(&self) -> Option<Learned> {
        self.facts().map(Learned::new)
    }

    /// Gives a written packet's buffer back, to be reused for the next one (saves an
    /// allocation per packet; optional).
    fn recycle(&mut self, mut buf: Vec<u8>) {
        if self.spare.len() < 4 {
            buf.clear();
            self.spare.push(buf);
        }
    }
}

/// How much of a late answer's text its warning shows.
const LATE_PREVIEW_CHARS: usize = 120;

/// Commands longer than this (a 1400-byte packet) get a one-time warning on a vanilla-style
/// server, whose one-read-per-packet rule a small MTU can break (docs/protocol.md section 2).
pub const SMALL_MTU_COMMAND_BYTES: usize = 1386;

use crate::time::later;

#[cfg(test)]
mod tests;
