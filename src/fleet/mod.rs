//! Many sessions from one thread: an event loop over non-blocking links (mio) that drives one
//! protocol machine per target, a `Box<dyn` [`Machine`]`>` of the one shape the blocking driver
//! ([`crate::engine::driver`]) runs too (RCON's [`Exchange`](crate::rcon::exchange::Exchange),
//! the consoles' machines of [`crate::consoles`]), so there is no second protocol
//! implementation and no protocol match in the loop: it writes each [`Action::Send`] (one
//! packet, datagram or message per write; never two RCON packets in one), feeds the machine
//! bytes, closes and clock readings, hands its other actions to the [`Handler`] as [`Report`]s,
//! and decides what a close means as that driver does ([`Machine::peer_closed`],
//! [`Machine::closed`]). Which machine a target gets is settled once, in `machine.rs`.
//!
//! Any dialect over any link: RCON and the 7 Days to Die telnet console over a TCP stream,
//! BattlEye over UDP datagrams, Rust's WebRCON over a TCP stream (its machine does the
//! WebSocket, the upgrade included), and
//! any of the stream protocols through a tunnel ([`Tunnel`]: `ssh -W` or a proxy command; on
//! Unix the child's pipes registered with the poll, on Windows moved by threads that wake the
//! loop). A tunnel that dies is the transport failure it is ([`Error::Transport`], with the
//! last line the child printed on stderr). A tunnel whose child is the far end itself
//! ([`Tunnel::command`]: `rcon --remote`'s `ssh HOST rcon --remote-serve`) is driven the same
//! way, with the caller's machine ([`FleetTarget::machine`]) speaking over its pipes and its
//! [`FarEnd`] reading its failures.
//!
//! Every target's connect, login, probe and commands progress at once; nothing here blocks on
//! one target (a name is resolved before the loop starts, on a few helper threads). At most
//! [`FleetOptions::parallel`] connections are open at a time; the next target starts as soon as one
//! finishes, so a dead server holds one slot for its own timeout and delays nobody else. A
//! connect that fails (refused, unreachable, timed out, a tunnel that could not start or died
//! before the login) is tried again [`FleetOptions::retries`] times, after a back-off that
//! doubles, without holding a slot meanwhile.
//!
//! What to run is the caller's business: a [`Handler`] is asked for each target's next step
//! when it is logged in and after each command, and told everything that happens ([`Report`]).
//!
//! Out of scope: printing, policy (what a failure means for the next command), passwords'
//! sources. Those belong to the caller.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

use mio::net::{TcpStream, UdpSocket};
use mio::{Events, Interest, Poll, Token};

use crate::consoles::Protocol;
use crate::engine::{Action, Ending, Learned, Machine, Notice, Password, Traced};
use crate::error::Error;

mod limits;
mod link;
mod machine;
mod wake;
pub use limits::raise_fd_limit;
pub use link::{FarEnd, Tunnel};
pub use wake::Alarm;

use link::{Link, Stream, TunnelChild};

/// After a tunnel closes its stdout: how long to wait for it to exit and say why (as the
/// blocking tunnel waits).
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// One server to drive.
pub struct FleetTarget {
    /// Host name or address (IPv6 without brackets).
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// The RCON password.
    pub password: Password,
    /// The machine's settings (its timeout also bounds connecting).
    pub config: crate::engine::Options,
    /// Which protocol the server speaks.
    pub protocol: Protocol,
    /// Reach it through this tunnel, not directly: `host` and `port` are then the
    /// server as the far side sees it.
    pub tunnel: Option<Tunnel>,
    /// Reach it on this Unix domain socket (Unix), not `host:port` (a management server's
    /// `unix:` URL).
    pub unix: Option<std::path::PathBuf>,
    /// Speak this machine over the link instead of `protocol`'s (`rcon --remote`: the remote
    /// protocol to the rcon at a [`Tunnel::command`]'s far end; the management protocol's
    /// [`MgmtMachine`](crate::mgmt::machine::MgmtMachine) over a plain stream, a tunnel or a
    /// Unix socket). `protocol` still says which link to open (RCON: a stream, nothing on
    /// top); `config` gives the timeout and the observer.
    pub machine: Option<Box<dyn Machine>>,
}

impl std::fmt::Debug for FleetTarget {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FleetTarget")
            .field("host", &self.host)
            .field("port", &self.port)
            .field("protocol", &self.protocol)
            .field("tunnel", &self.tunnel)
            .finish_non_exhaustive()
    }
}

impl FleetTarget {
    /// The machine [`run`] drives this target with: its own ([`FleetTarget::machine`]: a
    /// protocol the loop does not know by name, such as `rcon --remote`'s or the management
    /// protocol's), else its protocol's.
    fn take_machine(&mut self) -> Box<dyn Machine> {
        self.machine.take().unwrap_or_else(|| {
            let address = match &self.tunnel {
                Some(tunnel) => tunnel.address().to_string(),
                None => crate::transport::Connector::describe(
                    &crate::transport::TcpConnector::new(&self.host, self.port),
                ),
            };
            let (config, password) = (self.config.clone(), self.password.clone());
            machine::new(self.protocol, config, password, address)
        })
    }

    /// An RCON server reached directly.
    pub fn rcon(host: &str, port: u16, password: Password, config: crate::engine::Options) -> Self {
        FleetTarget {
            host: host.to_string(),
            port,
            password,
            config,
            protocol: Protocol::Rcon,
            tunnel: None,
            machine: None,
            unix: None,
        }
    }
}

/// Settings of a fleet run.
#[derive(Debug, Clone)]
pub struct FleetOptions {
    /// At most this many connections are open (or being opened) at once.
    pub parallel: usize,
    /// How many times a failed connect is tried again.
    pub retries: u32,
    /// The wait before the first retry; it doubles for each further one, up to
    /// [`crate::engine::MAX_RETRY_PAUSE`].
    pub backoff: Duration,
    /// When raised (it wakes the loop), ends every target not yet finished with
    /// [`Error::Cancelled`] (its connection closed; a command under way may or may not have
    /// run) and the run returns.
    pub cancel: Option<Alarm>,
    /// The loop's waker, looked at when raised (which wakes the loop) and after every round of
    /// events. Raised, the loop lowers it and asks every target that waits ([`Next::Wait`]) for
    /// its next step at once, and connects at once every target waiting to connect again
    /// ([`Handler::lost`]); a delayed command keeps its time. The handler raises it when
    /// something it waited for happened (every target ready, a signal), so the loop can be
    /// handed a new step while it runs.
    pub wake: Option<Alarm>,
}

impl Default for FleetOptions {
    fn default() -> Self {
        Self {
            parallel: DEFAULT_PARALLEL,
            retries: 0,
            backoff: Duration::from_millis(200),
            cancel: None,
            wake: None,
        }
    }
}

/// The default cap on open connections: enough that ten thousand targets run at once, so a
/// fleet takes about one timeout however many of its servers are dead. It needs as many file
/// descriptors, plus a few: see [`raise_fd_limit`].
pub const DEFAULT_PARALLEL: usize = 10_000;

/// What a target does next.
#[derive(Debug)]
pub enum Next {
    /// Run this command, not before `not_before` (a delay between commands).
    Command {
        /// The command.
        text: String,
        /// A command that stops the server: its first packet (or the close) ends it, then the
        /// connection is closed (see [`crate::Client::command_then_close`]).
        then_close: bool,
        /// Nothing follows it on this connection (the target's next step is [`Next::Close`]):
        /// the machine may end its answer by a step that also ends the connection
        /// ([`Ending::Last`]), as the one-server session ends its last command.
        last: bool,
        /// Wait until then before sending it.
        not_before: Option<Instant>,
    },
    /// Nothing to send now: stay connected (reading what the server pushes, a console's
    /// keep-alive going on) and ask again at `until`.
    Wait {
        /// When to ask again.
        until: Instant,
    },
    /// Nothing more: close the connection; the target is finished.
    Close,
}

/// Something that happened to a target, in order.
#[derive(Debug)]
#[non_exhaustive]
pub enum Report {
    /// A connection attempt started (`attempt` counts from 1).
    Connecting {
        /// Which attempt.
        attempt: u32,
    },
    /// Output bytes of the command under way.
    Output(Vec<u8>),
    /// The command under way is complete.
    Done,
    /// The command was refused before anything was sent (too long, a NUL byte); the session
    /// goes on.
    Refused(Error),
    /// Connecting failed and will be tried again after `delay`.
    Retrying {
        /// Why this attempt failed.
        error: Error,
        /// The wait before the next attempt.
        delay: Duration,
    },
    /// Connecting, logging in or the command under way failed: the target is finished.
    Failed(Error),
    /// The handler said [`Next::Close`]: the target is finished. Carries what is known about
    /// the server now, to remember.
    Finished(Option<Learned>),
    /// A one-line warning.
    Warning(Notice),
    /// A notice about what was learned, worth showing once.
    Note(Notice),
    /// What was learned about the server was settled (`Some`) or should be forgotten (`None`).
    Learned(Option<Learned>),
    /// Something went over the wire (only when the observer wants packets:
    /// [`crate::engine::Observer::wants_packets`]), as [`crate::engine::Observer::trace`] takes
    /// it.
    Traced(Traced),
    /// A message the server sent on its own (a console's chat, log line or event); never
    /// part of an answer.
    Message(String),
}

/// The caller's side of a fleet run.
pub trait Handler {
    /// What `target` does next: called when it is logged in, and after each command that
    /// completed ([`Report::Done`]) or was refused ([`Report::Refused`]).
    fn next(&mut self, target: usize) -> Next;
    /// Something happened to `target`.
    fn report(&mut self, target: usize, report: Report);
    /// `target` failed (its connect, after the retries, its login or the command under way),
    /// or the server closed its connection while nothing was under way: `Some(at)` connects it
    /// again at `at` and goes on (asking [`Handler::next`] once it is
    /// logged in, a command under way not sent again), instead of ending it with
    /// [`Report::Failed`]. For runs that last until stopped (`--follow`). By default a failure
    /// ends the target.
    fn lost(&mut self, _target: usize, _error: &Error) -> Option<Instant> {
        None
    }
    /// The waker was set ([`FleetOptions::wake`]): called before the waiting targets are asked
    /// again, so the handler can look at what woke it (a signal) even when no target waits.
    fn woken(&mut self) {}
}

/// Where a target is; each phase holds what is valid in it, its deadline among them
/// ([`Phase::deadline`]).
#[derive(Debug)]
enum Phase {
    /// Not started yet, or back in line after a back-off.
    Pending,
    /// Waiting until then to try connecting again.
    Backoff { until: Instant },
    /// A non-blocking connect to `addrs[addr]` is under way, given up at `until` (a link that
    /// needs no connect, a tunnel or a UDP socket, has none).
    Connecting { until: Option<Instant>, addr: usize },
    /// A tunnel closed its output (or stopped reading): waiting for it to exit, to tell a
    /// failed tunnel from a plain close; `until` the grace ends, `then` is what a clean exit
    /// means, and `resume` when a delayed command that was waiting is due.
    Exiting {
        until: Instant,
        then: Fallback,
        resume: Option<Instant>,
    },
    /// Connected: the machine runs.
    Open,
    /// Connected and ready, waiting until then for a command's `not_before` or the end of a
    /// [`Next::Wait`].
    Delay { until: Instant },
    /// Done (finished or failed).
    Over,
}

impl Phase {
    /// Connecting from the first address, no deadline yet: [`Loop::connect`] counts no new
    /// attempt from here (a reconnect after a stop command, a link that needs no connect).
    const CONNECTING: Phase = Phase::Connecting {
        until: None,
        addr: 0,
    };

    /// When the phase ends by itself, if it does (an open connection's clock is its
    /// machine's).
    fn deadline(&self) -> Option<Instant> {
        match self {
            Phase::Backoff { until } | Phase::Exiting { until, .. } | Phase::Delay { until } => {
                Some(*until)
            }
            Phase::Connecting { until, .. } => *until,
            Phase::Pending | Phase::Open | Phase::Over => None,
        }
    }
}

/// Where the conversation on the current connection is: what the blocking driver's
/// [`Goal`](crate::engine::driver::Goal) would be waiting for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Stage {
    /// Logging in ([`Action::LoggedIn`] is due).
    LoggingIn,
    /// Logged in, no command under way.
    Idle,
    /// A command is under way (`stops_server`: a close ends its answer, and the connection is
    /// closed after it).
    Command { stops_server: bool },
}

/// What a tunnel that ended cleanly (or too slowly to tell) means.
#[derive(Debug)]
enum Fallback {
    /// The server closed the connection.
    Closed,
    /// This error (a write that failed).
    Error(Error),
}

struct Slot {
    phase: Phase,
    /// The target's protocol, whichever it is: the loop drives it only through the trait.
    machine: Box<dyn Machine>,
    /// Which link to open (a UDP socket for BattlEye, else a stream).
    protocol: Protocol,
    /// Bounds connecting, logging in and each answer.
    timeout: Duration,
    tunnel: Option<Tunnel>,
    /// A Unix domain socket to connect to instead.
    unix: Option<std::path::PathBuf>,
    addrs: Vec<SocketAddr>,
    link: Option<Link>,
    /// The tunnel's process, while one runs.
    child: Option<TunnelChild>,
    /// What the machine asked to send ([`Action::Send`]) that the link has not taken whole yet:
    /// one packet, datagram or message each, written one at a time (never two RCON packets in
    /// one write: a vanilla server handles one packet per read).
    outbox: Outbox,
    /// How much of the first of `outbox` a stream already took.
    sent: usize,
    attempt: u32,
    /// A command to start once logged in again (after a stop command closed the connection).
    queued: Option<(String, Ending)>,
    /// The deadline last put on the timer heap, to avoid duplicates.
    armed: Option<Instant>,
    /// Where the current connection's conversation is.
    stage: Stage,
}

impl Slot {
    /// A target's slot before its first connect, `addrs` resolved.
    fn new(mut t: FleetTarget, addrs: Vec<SocketAddr>) -> Slot {
        Slot {
            phase: Phase::Pending,
            timeout: t.config.timeout,
            machine: t.take_machine(),
            protocol: t.protocol,
            tunnel: t.tunnel,
            unix: t.unix,
            addrs,
            link: None,
            child: None,
            outbox: Outbox::default(),
            sent: 0,
            attempt: 0,
            queued: None,
            armed: None,
            stage: Stage::LoggingIn,
        }
    }
}

/// Sends waiting for the link, in order. The first is held apart, so the usual case (one send
/// at a time, written at once) costs no allocation per target.
#[derive(Default)]
struct Outbox {
    first: Option<Vec<u8>>,
    rest: VecDeque<Vec<u8>>,
}

impl Outbox {
    fn push_back(&mut self, bytes: Vec<u8>) {
        if self.first.is_none() {
            self.first = Some(bytes);
        } else {
            self.rest.push_back(bytes);
        }
    }

    fn front(&self) -> Option<&Vec<u8>> {
        self.first.as_ref()
    }

    fn pop_front(&mut self) -> Option<Vec<u8>> {
        let first = self.first.take();
        self.first = self.rest.pop_front();
        first
    }

    fn clear(&mut self) {
        self.first = None;
        self.rest.clear();
    }
}

/// Runs every target to the end, calling `handler` as things happen. Returns when every target
/// is finished or failed; an `Err` only when the event loop itself cannot run.
pub fn run(
    targets: Vec<FleetTarget>,
    opts: FleetOptions,
    handler: &mut dyn Handler,
) -> io::Result<()> {
    let resolved = resolve_all(targets.iter());
    run_resolved(targets.into_iter().zip(resolved).collect(), opts, handler)
}

/// [`run`], every target with the addresses its name resolved to (or why it did not).
fn run_resolved(
    targets: Vec<(FleetTarget, Result<Vec<SocketAddr>, Error>)>,
    opts: FleetOptions,
    handler: &mut dyn Handler,
) -> io::Result<()> {
    let mut poll = Poll::new()?;
    let mut sessions: Vec<Slot> = Vec::with_capacity(targets.len());
    let mut early: Vec<(usize, Error)> = Vec::new();
    for (i, (t, addrs)) in targets.into_iter().enumerate() {
        let addrs = match addrs {
            Ok(a) => a,
            Err(e) => {
                early.push((i, e));
                Vec::new()
            }
        };
        sessions.push(Slot::new(t, addrs));
    }
    let alarms = opts.cancel.iter().chain(&opts.wake).cloned().collect();
    let mut lp = Loop {
        wakes: wake::Wakes::new(&poll, alarms)?,
        sessions,
        timers: BinaryHeap::new(),
        pending: (0..0).collect(),
        active: 0,
        backing_off: 0,
        opts,
        buf: vec![0; 64 * 1024],
    };
    for (i, e) in early {
        lp.sessions[i].phase = Phase::Over;
        handler.report(i, Report::Failed(e));
    }
    lp.pending = (0..lp.sessions.len())
        .filter(|&i| matches!(lp.sessions[i].phase, Phase::Pending))
        .collect();
    let mut events = Events::with_capacity(1024);
    loop {
        lp.woken(&poll, handler);
        lp.start_more(&poll, handler);
        if lp.finished() {
            return Ok(());
        }
        if lp.opts.cancel.as_ref().is_some_and(Alarm::is_raised) {
            lp.cancel_all(&poll, handler);
            return Ok(());
        }
        let now = Instant::now();
        let wait = lp
            .timers
            .peek()
            .map(|Reverse((at, _))| at.saturating_duration_since(now));
        // Round up, so a wake-up never comes before its deadline and spins.
        let wait = wait.map(|w| w + Duration::from_micros(500));
        match poll.poll(&mut events, wait) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        for ev in events.iter() {
            lp.on_event(ev.token(), &poll, handler);
        }
        lp.fire_timers(&poll, handler);
    }
}

struct Loop {
    sessions: Vec<Slot>,
    /// What wakes the loop besides the links: the alarms, the tunnels' threads (Windows).
    wakes: wake::Wakes,
    timers: BinaryHeap<Reverse<(Instant, usize)>>,
    pending: VecDeque<usize>,
    /// Targets holding (or opening) a connection, or waiting to send a delayed command.
    active: usize,
    /// Targets waiting to retry connecting.
    backing_off: usize,
    opts: FleetOptions,
    buf: Vec<u8>,
}

impl Loop {
    /// Whether every target is finished (timers left on the heap belong to finished ones).
    fn finished(&self) -> bool {
        self.active == 0 && self.backing_off == 0 && self.pending.is_empty()
    }

    fn start_more(&mut self, poll: &Poll, handler: &mut dyn Handler) {
        while self.active < self.opts.parallel.max(1) {
            let Some(i) = self.pending.pop_front() else {
                return;
            };
            self.active += 1;
            self.connect(i, poll, handler);
        }
    }

    /// Starts a connection attempt: a tunnel's child, a UDP socket, or a TCP connect to the
    /// next address (the first one for a new attempt).
    fn connect(&mut self, i: usize, poll: &Poll, handler: &mut dyn Handler) {
        let s = &mut self.sessions[i];
        let mut index = match s.phase {
            Phase::Connecting { addr, .. } => addr,
            _ => {
                s.attempt += 1;
                handler.report(i, Report::Connecting { attempt: s.attempt });
                0
            }
        };
        s.stage = Stage::LoggingIn;
        if let Some(path) = &s.unix {
            // A local connect does not wait on a network: it succeeds or fails at once.
            match link::unix(path) {
                Ok(stream) => self.attach(i, Link::Stream(stream), poll, handler),
                Err(e) => self.connect_failed(i, e, poll, handler),
            }
            return;
        }
        if let Some(tunnel) = &s.tunnel {
            match tunnel.spawn(self.wakes.ring(i)) {
                Ok((pipe, mut child)) => {
                    if let Err(source) = child.register(poll.registry(), Token(i)) {
                        child.close(poll.registry());
                        self.fail(i, setup_error(source), poll, handler);
                        return;
                    }
                    self.sessions[i].child = Some(child);
                    let link = Link::Stream(Stream::Pipe(Box::new(pipe)));
                    self.attach(i, link, poll, handler);
                }
                Err(e) => self.connect_failed(i, e, poll, handler),
            }
            return;
        }
        let timeout = s.timeout;
        loop {
            let Some(&addr) = s.addrs.get(index) else {
                let err = Error::Connect {
                    addr: "no address".into(),
                    source: io::Error::new(io::ErrorKind::NotFound, "no addresses"),
                };
                self.connect_failed(i, err, poll, handler);
                return;
            };
            if s.protocol == Protocol::BattlEye {
                // Nothing to wait for: the login's own timeout decides.
                match udp_to(addr) {
                    Ok(socket) => self.attach(i, Link::Udp(socket), poll, handler),
                    Err(e) => self.connect_failed(i, e, poll, handler),
                }
                return;
            }
            match TcpStream::connect(addr) {
                Ok(mut stream) => {
                    if let Err(source) = poll.registry().register(
                        &mut stream,
                        Token(i),
                        Interest::READABLE | Interest::WRITABLE,
                    ) {
                        self.fail(i, setup_error(source), poll, handler);
                        return;
                    }
                    let s = &mut self.sessions[i];
                    s.link = Some(Link::Stream(Stream::Tcp(stream)));
                    // The next address keeps the first one's deadline.
                    let until = match s.phase {
                        Phase::Connecting { until: Some(u), .. } if index > 0 => u,
                        _ => Instant::now() + timeout,
                    };
                    s.phase = Phase::Connecting {
                        until: Some(until),
                        addr: index,
                    };
                    self.arm(i);
                    return;
                }
                Err(source) => {
                    index += 1;
                    if index >= s.addrs.len() {
                        let err = Error::Connect {
                            addr: addr.to_string(),
                            source,
                        };
                        self.connect_failed(i, err, poll, handler);
                        return;
                    }
                }
            }
        }
    }

    /// A link that needs no connect to wait for (a tunnel, a UDP socket): registers it and
    /// goes on as after a connect.
    fn attach(&mut self, i: usize, mut link: Link, poll: &Poll, handler: &mut dyn Handler) {
        if let Err(source) = link.register(poll.registry(), Token(i)) {
            link.close(poll.registry());
            self.fail(i, setup_error(source), poll, handler);
            return;
        }
        self.sessions[i].link = Some(link);
        self.sessions[i].phase = Phase::CONNECTING;
        self.opened(i, poll, handler);
    }

    /// The link is up: the login.
    fn opened(&mut self, i: usize, poll: &Poll, handler: &mut dyn Handler) {
        let s = &mut self.sessions[i];
        s.phase = Phase::Open;
        s.machine.start(Instant::now());
        self.after_machine(i, poll, handler);
        // Bytes may already be waiting (edge-triggered: read now).
        self.read(i, poll, handler);
    }
    /// A connect failed for good on this attempt: back off and retry, or fail the target.
    fn connect_failed(&mut self, i: usize, err: Error, poll: &Poll, handler: &mut dyn Handler) {
        self.close(i, poll);
        let s = &mut self.sessions[i];
        s.machine.disconnect();
        // A far end that cannot serve stays so: no retry.
        if s.attempt <= self.opts.retries && err.kind() != crate::error::ErrorKind::Remote {
            let delay = crate::engine::retry_pause(self.opts.backoff, s.attempt);
            s.phase = Phase::Backoff {
                until: Instant::now() + delay,
            };
            self.active -= 1;
            self.backing_off += 1;
            handler.report(i, Report::Retrying { error: err, delay });
            self.arm(i);
        } else {
            self.fail(i, err, poll, handler);
        }
    }

    /// While the waker is raised ([`FleetOptions::wake`]): lowers it, tells the handler, and
    /// takes the steps of every target that waits, due now (a [`Next::Wait`] is asked again, a
    /// lost target connects).
    fn woken(&mut self, poll: &Poll, handler: &mut dyn Handler) {
        while self.opts.wake.as_ref().is_some_and(Alarm::take) {
            handler.woken();
            self.wake_waiting();
            self.fire_timers(poll, handler);
        }
    }

    /// Every target that waits is due now, for [`Loop::fire_timers`].
    fn wake_waiting(&mut self) {
        let now = Instant::now();
        for i in 0..self.sessions.len() {
            let s = &mut self.sessions[i];
            let until = match &mut s.phase {
                Phase::Delay { until } if s.queued.is_none() => until,
                Phase::Backoff { until } => until,
                _ => continue,
            };
            if *until > now {
                *until = now;
                self.arm(i);
            }
        }
    }

    /// Ends every target not yet finished with [`Error::Cancelled`].
    fn cancel_all(&mut self, poll: &Poll, handler: &mut dyn Handler) {
        for i in 0..self.sessions.len() {
            if matches!(self.sessions[i].phase, Phase::Over) {
                continue;
            }
            self.close(i, poll);
            self.sessions[i].phase = Phase::Over;
            handler.report(i, Report::Failed(Error::Cancelled));
        }
        self.pending.clear();
        self.active = 0;
        self.backing_off = 0;
    }

    /// Ends the target with an error, or where the handler takes the loss
    /// ([`Handler::lost`]), connects it again later.
    fn fail(&mut self, i: usize, err: Error, poll: &Poll, handler: &mut dyn Handler) {
        self.close(i, poll);
        self.sessions[i].machine.disconnect();
        if let Some(at) = handler.lost(i, &err) {
            return self.retake(i, at);
        }
        self.sessions[i].phase = Phase::Over;
        self.active -= 1;
        handler.report(i, Report::Failed(err));
    }

    /// A lost target the handler takes back ([`Handler::lost`]): closed, it waits until `at`
    /// without holding a slot, then connects again.
    fn retake(&mut self, i: usize, at: Instant) {
        let s = &mut self.sessions[i];
        s.phase = Phase::Backoff { until: at };
        s.stage = Stage::LoggingIn;
        s.queued = None;
        s.attempt = 0;
        self.active -= 1;
        self.backing_off += 1;
        self.arm(i);
    }

    fn close(&mut self, i: usize, poll: &Poll) {
        let s = &mut self.sessions[i];
        // Dropping the socket closes it (and sends the FIN): no shutdown call needed, which
        // saves a system call per server. A tunnel's child is ended.
        if let Some(mut link) = s.link.take() {
            if let (Some(bytes), Link::Stream(stream)) = (s.machine.farewell(), &mut link) {
                let _ = stream.write(&bytes);
            }
            link.close(poll.registry());
        }
        if let Some(child) = s.child.take() {
            child.close(poll.registry());
        }
        s.outbox.clear();
        s.sent = 0;
    }

    /// Puts the target's next deadline on the timer heap.
    fn arm(&mut self, i: usize) {
        let s = &mut self.sessions[i];
        let at = match s.phase {
            Phase::Open => s.machine.wake(),
            // A console keeps its clock between commands (BattlEye's keep-alive).
            Phase::Delay { until } => Some(s.machine.wake().map_or(until, |w| w.min(until))),
            _ => s.phase.deadline(),
        };
        if let Some(at) = at
            && s.armed != Some(at)
        {
            s.armed = Some(at);
            self.timers.push(Reverse((at, i)));
        }
    }

    fn fire_timers(&mut self, poll: &Poll, handler: &mut dyn Handler) {
        let now = Instant::now();
        while let Some(Reverse((at, i))) = self.timers.peek().copied() {
            if at > now {
                return;
            }
            self.timers.pop();
            let s = &mut self.sessions[i];
            if s.armed == Some(at) {
                s.armed = None;
            }
            let due = s.phase.deadline().is_some_and(|w| w <= now);
            match s.phase {
                Phase::Open => {
                    if s.machine.wake().is_some_and(|d| d <= now) {
                        s.machine.tick(now);
                        self.after_machine(i, poll, handler);
                    } else {
                        self.arm(i);
                    }
                }
                Phase::Connecting { .. } if due => {
                    let timeout = s.timeout;
                    self.connect_failed(
                        i,
                        Error::Timeout {
                            phase: crate::error::Phase::Connect,
                            what: "connecting",
                            after: timeout,
                        },
                        poll,
                        handler,
                    );
                }
                Phase::Exiting { .. } if due => self.check_exit(i, poll, handler),
                Phase::Backoff { .. } if due => {
                    s.phase = Phase::Pending;
                    self.backing_off -= 1;
                    // Back in line, ahead of targets that never started.
                    self.pending.push_front(i);
                }
                Phase::Delay { .. } if due => {
                    s.phase = Phase::Open;
                    match s.queued.take() {
                        Some((text, ending)) => self.start(i, text, ending, poll, handler),
                        // A wait ([`Next::Wait`]) is over: what next?
                        None => self.ask(i, poll, handler),
                    }
                }
                Phase::Delay { .. } if s.machine.wake().is_some_and(|d| d <= now) => {
                    s.machine.tick(now);
                    self.after_machine(i, poll, handler);
                }
                _ => self.arm(i),
            }
        }
    }

    /// `token` turned ready: a target's link, or a wake-up (and the targets whose tunnel rang).
    fn on_event(&mut self, token: Token, poll: &Poll, handler: &mut dyn Handler) {
        if !wake::Wakes::is_wake(token) {
            return self.on_ready(token.0, poll, handler);
        }
        for i in self.wakes.woken() {
            self.on_ready(i, poll, handler);
        }
    }

    fn on_ready(&mut self, i: usize, poll: &Poll, handler: &mut dyn Handler) {
        let Some(s) = self.sessions.get_mut(i) else {
            return;
        };
        if let Some(child) = s.child.as_mut() {
            child.drain_stderr(poll.registry());
        }
        match s.phase {
            Phase::Connecting { .. } => {
                let Some(Link::Stream(Stream::Tcp(stream))) = s.link.as_ref() else {
                    return;
                };
                match stream.take_error() {
                    Ok(None) => {}
                    Ok(Some(e)) | Err(e) => {
                        return self.next_addr(i, e, poll, handler);
                    }
                }
                match stream.peer_addr() {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::NotConnected => return,
                    Err(e) => return self.next_addr(i, e, poll, handler),
                }
                let _ = stream.set_nodelay(true);
                self.opened(i, poll, handler);
            }
            Phase::Open | Phase::Delay { .. } => {
                self.flush(i, poll, handler);
                self.read(i, poll, handler);
            }
            Phase::Exiting { .. } => self.check_exit(i, poll, handler),
            _ => {}
        }
    }

    /// The connect to the current address failed: the next address, or a failed attempt.
    fn next_addr(&mut self, i: usize, e: io::Error, poll: &Poll, handler: &mut dyn Handler) {
        let s = &mut self.sessions[i];
        if let Some(link) = s.link.take() {
            link.close(poll.registry());
        }
        let Phase::Connecting { until, addr: index } = s.phase else {
            return;
        };
        let addr = s.addrs[index];
        if index + 1 < s.addrs.len() {
            s.phase = Phase::Connecting {
                until,
                addr: index + 1,
            };
            self.connect(i, poll, handler);
        } else {
            let err = Error::Connect {
                addr: addr.to_string(),
                source: e,
            };
            self.connect_failed(i, err, poll, handler);
        }
    }

    fn read(&mut self, i: usize, poll: &Poll, handler: &mut dyn Handler) {
        loop {
            let s = &mut self.sessions[i];
            if !matches!(s.phase, Phase::Open | Phase::Delay { .. }) {
                return;
            }
            let Some(link) = s.link.as_mut() else {
                return;
            };
            let got = match link {
                Link::Stream(stream) => stream.read(&mut self.buf),
                Link::Udp(socket) => match socket.recv(&mut self.buf) {
                    // Nobody listens (yet): the machine's timeout decides. (Linux reports the
                    // ICMP "port unreachable" as refused, Windows as reset.)
                    Err(e)
                        if matches!(
                            e.kind(),
                            io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset
                        ) =>
                    {
                        continue;
                    }
                    // An empty datagram is not a close.
                    Ok(0) => continue,
                    other => other,
                },
            };
            match got {
                Ok(0) => {
                    self.closed(i, None, poll, handler);
                    return;
                }
                Ok(n) => {
                    s.machine.receive(&self.buf[..n], Instant::now());
                    self.after_machine(i, poll, handler);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionReset
                            | io::ErrorKind::ConnectionAborted
                            | io::ErrorKind::BrokenPipe
                    ) =>
                {
                    self.closed(i, Some(e), poll, handler);
                    return;
                }
                Err(source) => {
                    self.link_failed(i, "while reading", source, poll, handler);
                    return;
                }
            }
        }
    }

    /// The server closed the connection (`reset`: abruptly, with this error). Through a
    /// tunnel, the tunnel's exit says first whether it failed.
    fn closed(
        &mut self,
        i: usize,
        reset: Option<io::Error>,
        poll: &Poll,
        handler: &mut dyn Handler,
    ) {
        if self.sessions[i].tunnel.is_some() && reset.is_none() {
            return self.begin_exit(i, Fallback::Closed, poll, handler);
        }
        self.peer_closed(i, reset, poll, handler);
    }

    /// What a close by the server means, as the blocking driver decides it: the machine's own
    /// meaning when it reads one into closes ([`Machine::peer_closed`]: RCON); otherwise an
    /// abrupt close is the read error it is, and an orderly one ends a stopping command's answer
    /// ([`Machine::closed`]), fails a login or an answer under way, and while idle only means
    /// the next command connects again.
    fn peer_closed(
        &mut self,
        i: usize,
        reset: Option<io::Error>,
        poll: &Poll,
        handler: &mut dyn Handler,
    ) {
        let s = &mut self.sessions[i];
        let idle = s.stage == Stage::Idle;
        if s.machine.peer_closed(reset.is_some(), Instant::now()) {
            self.close(i, poll);
            self.after_machine(i, poll, handler);
            let s = &self.sessions[i];
            if idle && s.link.is_none() && matches!(s.phase, Phase::Open | Phase::Delay { .. }) {
                self.idle_closed(i, handler);
            }
            return;
        }
        if let Some(e) = reset {
            return self.link_failed(i, "while reading", e, poll, handler);
        }
        let stage = s.stage;
        // Asked before the disconnect, which may drop the connection's machine.
        let answer = match stage {
            Stage::Command { stops_server: true } => s.machine.closed(),
            _ => None,
        };
        self.close(i, poll);
        self.sessions[i].machine.disconnect();
        match (stage, answer) {
            (_, Some(answer)) => self.answered(i, answer.into_bytes(), poll, handler),
            (Stage::LoggingIn, None) => self.fail(
                i,
                Error::Closed {
                    phase: crate::error::Phase::Login,
                    partial: false,
                    when: "during login",
                },
                poll,
                handler,
            ),
            (Stage::Command { .. }, None) => self.fail(
                i,
                Error::Closed {
                    phase: crate::error::Phase::Answer,
                    partial: true,
                    when: "mid-response; output is incomplete",
                },
                poll,
                handler,
            ),
            (Stage::Idle, None) => {
                self.arm(i);
                self.idle_closed(i, handler);
            }
        }
    }

    /// The server closed the connection while nothing was under way: a loss where the handler
    /// wants the server back at once (a follow, [`Handler::lost`]); otherwise the next command
    /// connects again.
    fn idle_closed(&mut self, i: usize, handler: &mut dyn Handler) {
        let closed = Error::Closed {
            phase: crate::error::Phase::Idle,
            partial: false,
            when: "while idle",
        };
        if let Some(at) = handler.lost(i, &closed) {
            self.sessions[i].machine.disconnect();
            self.retake(i, at);
        }
    }

    /// A read or write failed: through a tunnel, its exit says first whether it failed.
    fn link_failed(
        &mut self,
        i: usize,
        when: &'static str,
        source: io::Error,
        poll: &Poll,
        handler: &mut dyn Handler,
    ) {
        let err = Error::io(when, source);
        if self.sessions[i].tunnel.is_some() && !matches!(err, Error::Transport(_)) {
            return self.begin_exit(i, Fallback::Error(err), poll, handler);
        }
        self.fail(i, err, poll, handler);
    }

    /// A tunnel closed its output or stopped reading: wait (without blocking the loop) for it
    /// to exit, to tell a failed tunnel from a plain close.
    fn begin_exit(&mut self, i: usize, then: Fallback, poll: &Poll, handler: &mut dyn Handler) {
        let s = &mut self.sessions[i];
        let resume = match s.phase {
            Phase::Delay { until } => Some(until),
            _ => None,
        };
        let until = Instant::now() + EXIT_GRACE;
        s.phase = Phase::Exiting {
            until,
            then,
            resume,
        };
        self.check_exit(i, poll, handler);
    }

    fn check_exit(&mut self, i: usize, poll: &Poll, handler: &mut dyn Handler) {
        let now = Instant::now();
        let s = &mut self.sessions[i];
        let Some(child) = s.child.as_mut() else {
            return self.after_exit(i, poll, handler);
        };
        match child.try_wait() {
            Some(status) if !status.success() => {
                let err = child.failure(poll.registry(), status);
                self.close(i, poll);
                let s = &mut self.sessions[i];
                s.machine.disconnect();
                // A tunnel that died before the login is a connect that failed: --retry
                // applies, as it does to a tunnel that could not start.
                if s.stage != Stage::LoggingIn {
                    self.fail(i, err, poll, handler);
                } else {
                    s.phase = Phase::CONNECTING;
                    self.connect_failed(i, err, poll, handler);
                }
            }
            Some(_) => self.after_exit(i, poll, handler),
            None if s.phase.deadline().is_some_and(|u| now >= u) => {
                self.after_exit(i, poll, handler)
            }
            // Woken when it exits (its token turns ready), or at the grace's end.
            None => match child.watch_exit(poll.registry(), Token(i)) {
                Ok(()) => self.arm(i),
                Err(_) => self.after_exit(i, poll, handler),
            },
        }
    }

    /// The tunnel ended cleanly (or did not say in time): the close or error it stood for.
    fn after_exit(&mut self, i: usize, poll: &Poll, handler: &mut dyn Handler) {
        let (then, resume) = match std::mem::replace(&mut self.sessions[i].phase, Phase::Open) {
            Phase::Exiting { then, resume, .. } => (Some(then), resume),
            _ => (None, None),
        };
        self.close(i, poll);
        let s = &mut self.sessions[i];
        if let Some(until) = resume {
            s.phase = Phase::Delay { until };
        }
        match then {
            Some(Fallback::Error(e)) => {
                s.machine.disconnect();
                self.fail(i, e, poll, handler);
            }
            Some(Fallback::Closed) | None => self.peer_closed(i, None, poll, handler),
        }
    }

    /// Writes what the machine asked to send, in order: each packet in one write call where
    /// the link takes it (docs/protocol.md section 3) and never with the next one, each
    /// datagram whole. Sent buffers are dropped, not given back
    /// ([`Machine::recycle`]): a spare buffer kept by each of 10,000 machines costs more
    /// memory than the allocation it saves.
    fn flush(&mut self, i: usize, poll: &Poll, handler: &mut dyn Handler) {
        let s = &mut self.sessions[i];
        if !matches!(s.phase, Phase::Open | Phase::Delay { .. }) {
            return;
        }
        let Some(link) = s.link.as_mut() else {
            return;
        };
        let failed = match link {
            Link::Stream(stream) => loop {
                let Some(packet) = s.outbox.front() else {
                    return;
                };
                match stream.write(&packet[s.sent..]) {
                    Ok(0) if s.sent < packet.len() => break io::ErrorKind::WriteZero.into(),
                    Ok(n) => {
                        s.sent += n;
                        if s.sent >= packet.len() {
                            s.outbox.pop_front();
                            s.sent = 0;
                        }
                    }
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                    Err(e) => break e,
                }
            },
            Link::Udp(socket) => loop {
                let Some(datagram) = s.outbox.front() else {
                    return;
                };
                match socket.send(datagram) {
                    Ok(_) => {}
                    Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    // An ICMP "port unreachable" from an earlier datagram: the server may come
                    // back; the machine's timeout decides.
                    Err(e)
                        if matches!(
                            e.kind(),
                            io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset
                        ) => {}
                    Err(e) => break e,
                }
                s.outbox.pop_front();
            },
        };
        self.link_failed(i, "while sending", failed, poll, handler);
    }

    /// Takes the machine's actions in order, as the blocking driver does: sends are written,
    /// reports go to the handler. The login counts once the batch is taken, so a server
    /// message that came with it is reported first, not lost when the target then closes; an
    /// answer's [`Action::Done`] counts at once (nothing of the answer follows it).
    fn after_machine(&mut self, i: usize, poll: &Poll, handler: &mut dyn Handler) {
        let mut logged_in = false;
        loop {
            let s = &mut self.sessions[i];
            if matches!(s.phase, Phase::Over) {
                return;
            }
            let Some(action) = s.machine.poll() else {
                break;
            };
            match action {
                Action::Send(bytes) => {
                    s.outbox.push_back(bytes);
                    self.flush(i, poll, handler);
                }
                Action::LoggedIn => logged_in = true,
                Action::Output(bytes) => handler.report(i, Report::Output(bytes)),
                Action::Done { close } => self.done(i, close, poll, handler),
                Action::Message(text) => handler.report(i, Report::Message(text)),
                Action::Trace(traced) => handler.report(i, Report::Traced(traced)),
                Action::Warning(w) => handler.report(i, Report::Warning(w)),
                Action::Note(n) => handler.report(i, Report::Note(n)),
                Action::Learned(l) => handler.report(i, Report::Learned(l)),
                Action::Fail(e) => return self.fail(i, e, poll, handler),
                Action::Reconnect => {
                    self.close(i, poll);
                    let s = &mut self.sessions[i];
                    s.phase = Phase::CONNECTING;
                    return self.connect(i, poll, handler);
                }
            }
        }
        if logged_in && self.sessions[i].stage == Stage::LoggingIn {
            self.sessions[i].stage = Stage::Idle;
            match self.sessions[i].queued.take() {
                Some((text, ending)) => self.start(i, text, ending, poll, handler),
                None => self.ask(i, poll, handler),
            }
        }
        self.arm(i);
    }

    /// A whole answer came: the output, then the command is done.
    fn answered(&mut self, i: usize, output: Vec<u8>, poll: &Poll, handler: &mut dyn Handler) {
        handler.report(i, Report::Output(output));
        self.done(i, false, poll, handler);
    }

    /// The command under way is complete (`close`: the machine is done with the connection);
    /// after a command that stops the server the connection is closed too.
    fn done(&mut self, i: usize, close: bool, poll: &Poll, handler: &mut dyn Handler) {
        let s = &mut self.sessions[i];
        let stops_server = matches!(s.stage, Stage::Command { stops_server: true });
        s.stage = Stage::Idle;
        if close || stops_server {
            self.close(i, poll);
            self.sessions[i].machine.disconnect();
        }
        handler.report(i, Report::Done);
        self.ask(i, poll, handler);
    }

    /// Asks the handler for the target's next step and takes it.
    fn ask(&mut self, i: usize, poll: &Poll, handler: &mut dyn Handler) {
        match handler.next(i) {
            Next::Close => {
                self.close(i, poll);
                let s = &mut self.sessions[i];
                s.machine.disconnect();
                s.phase = Phase::Over;
                self.active -= 1;
                let learned = s.machine.learned();
                handler.report(i, Report::Finished(learned));
            }
            Next::Wait { until } => {
                let s = &mut self.sessions[i];
                s.queued = None;
                s.phase = Phase::Delay { until };
                self.arm(i);
            }
            Next::Command {
                text,
                then_close,
                last,
                not_before,
            } => {
                let ending = match (then_close, last) {
                    (true, _) => Ending::StopsServer,
                    (false, true) => Ending::Last,
                    (false, false) => Ending::Normal,
                };
                let s = &mut self.sessions[i];
                match not_before {
                    Some(at) if at > Instant::now() => {
                        s.queued = Some((text, ending));
                        s.phase = Phase::Delay { until: at };
                        self.arm(i);
                    }
                    _ => self.start(i, text, ending, poll, handler),
                }
            }
        }
    }

    fn start(
        &mut self,
        i: usize,
        text: String,
        ending: Ending,
        poll: &Poll,
        handler: &mut dyn Handler,
    ) {
        let s = &mut self.sessions[i];
        if let Err(e) = s.machine.check_command(&text) {
            handler.report(i, Report::Refused(e));
            return self.ask(i, poll, handler);
        }
        if s.link.is_none() || s.stage != Stage::Idle {
            // A stop command (or the server, while idle) closed the connection: log in again
            // first.
            s.queued = Some((text, ending));
            self.close(i, poll);
            let s = &mut self.sessions[i];
            s.machine.disconnect();
            s.phase = Phase::CONNECTING;
            return self.connect(i, poll, handler);
        }
        s.stage = Stage::Command {
            stops_server: ending == Ending::StopsServer,
        };
        s.machine.command_with(&text, ending, Instant::now());
        self.after_machine(i, poll, handler);
    }
}

/// One UDP socket connected to `addr`, as the blocking driver opens it.
fn udp_to(addr: SocketAddr) -> Result<UdpSocket, Error> {
    let local: SocketAddr = if addr.is_ipv4() {
        (std::net::Ipv4Addr::UNSPECIFIED, 0).into()
    } else {
        (std::net::Ipv6Addr::UNSPECIFIED, 0).into()
    };
    UdpSocket::bind(local)
        .and_then(|u| u.connect(addr).map(|()| u))
        .map_err(|source| Error::Connect {
            addr: addr.to_string(),
            source,
        })
}

fn setup_error(source: io::Error) -> Error {
    Error::Io {
        when: "while setting up the socket",
        source,
    }
}

/// Resolves every direct target's host: literal addresses directly, names once each on up to eight
/// helper threads (the resolver blocks), so the loop itself never waits on DNS.
fn resolve_all<'t>(
    targets: impl Iterator<Item = &'t FleetTarget> + Clone,
) -> Vec<Result<Vec<SocketAddr>, Error>> {
    let mut names: Vec<&str> = Vec::new();
    for t in targets
        .clone()
        .filter(|t| t.tunnel.is_none() && t.unix.is_none())
    {
        if t.host.parse::<std::net::IpAddr>().is_err() && !names.contains(&t.host.as_str()) {
            names.push(&t.host);
        }
    }
    let mut found: HashMap<&str, Result<Vec<std::net::IpAddr>, String>> = HashMap::new();
    if !names.is_empty() {
        let chunks: Vec<&[&str]> = names.chunks(names.len().div_ceil(8)).collect();
        std::thread::scope(|scope| {
            let handles: Vec<_> = chunks
                .into_iter()
                .map(|chunk| {
                    scope.spawn(move || {
                        chunk
                            .iter()
                            .map(|&name| {
                                let r = (name, 0)
                                    .to_socket_addrs()
                                    .map(|a| a.map(|a| a.ip()).collect::<Vec<_>>())
                                    .map_err(|e| e.to_string());
                                (name, r)
                            })
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            for h in handles {
                if let Ok(list) = h.join() {
                    found.extend(list);
                }
            }
        });
    }
    targets
        .map(|t| {
            // The far side of a tunnel resolves the name; a Unix socket has none.
            if t.tunnel.is_some() || t.unix.is_some() {
                return Ok(Vec::new());
            }
            if let Ok(ip) = t.host.parse::<std::net::IpAddr>() {
                return Ok(vec![SocketAddr::new(ip, t.port)]);
            }
            let resolve_err = |why: String| Error::Resolve {
                host: t.host.clone(),
                source: io::Error::new(io::ErrorKind::NotFound, why),
            };
            match found.get(t.host.as_str()) {
                Some(Ok(ips)) if !ips.is_empty() => {
                    Ok(ips.iter().map(|ip| SocketAddr::new(*ip, t.port)).collect())
                }
                Some(Ok(_)) => Err(resolve_err("no addresses".into())),
                Some(Err(why)) => Err(resolve_err(why.clone())),
                None => Err(resolve_err("not resolved".into())),
            }
        })
        .collect()
}

#[cfg(all(test, feature = "practice"))]
mod tests;
