//! Many RCON sessions from one thread: an event loop over non-blocking TCP sockets (mio) that
//! drives one [`Exchange`] per target, the same state machine the blocking [`crate::Client`]
//! drives, so there is no second protocol implementation.
//!
//! Every target's connect, login, probe and commands progress at once; nothing here blocks on
//! one target (a name is resolved before the loop starts, on a few helper threads). At most
//! [`FleetOptions::parallel`] connections are open at a time; the next target starts as soon as one
//! finishes, so a dead server holds one slot for its own timeout and delays nobody else. A
//! connect that fails (refused, unreachable, timed out) is tried again [`FleetOptions::retries`]
//! times, after a back-off that doubles, without holding a slot meanwhile.
//!
//! What to run is the caller's business: a [`Handler`] is asked for each target's next step
//! when it is logged in and after each command, and told everything that happens ([`Report`]).
//! Tunnels (`ssh -W`, proxy commands) are child processes with blocking pipes; they are not
//! driven here (the `rcon` binary runs them on helper threads with the blocking client).
//!
//! Out of scope: printing, policy (what a failure means for the next command), passwords'
//! sources. Those belong to the caller.

use std::cmp::Reverse;
use std::collections::{BinaryHeap, HashMap, VecDeque};
use std::io::{self, Read, Write};
use std::net::{SocketAddr, ToSocketAddrs};
use std::time::{Duration, Instant};

use mio::net::TcpStream;
use mio::{Events, Interest, Poll, Token};

use crate::error::Error;
use crate::rcon::client::Password;
use crate::rcon::exchange::{Event, Exchange, Learned, Traced};

mod limits;
pub use limits::raise_fd_limit;

/// One server to drive.
#[derive(Debug)]
pub struct FleetTarget {
    /// Host name or address (IPv6 without brackets).
    pub host: String,
    /// TCP port.
    pub port: u16,
    /// The RCON password.
    pub password: Password,
    /// The exchange's settings (its timeout also bounds connecting).
    pub config: crate::engine::Options,
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
    /// When set, looked at at least every [`crate::engine::CANCEL_POLL`]: a `true` ends every
    /// target not yet finished with [`Error::Cancelled`] (its connection closed; a command
    /// under way may or may not have run) and the run returns.
    pub cancel: Option<std::sync::Arc<std::sync::atomic::AtomicBool>>,
}

impl Default for FleetOptions {
    fn default() -> Self {
        Self {
            parallel: DEFAULT_PARALLEL,
            retries: 0,
            backoff: Duration::from_millis(200),
            cancel: None,
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
        /// Wait until then before sending it.
        not_before: Option<Instant>,
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
    Warning(crate::rcon::notice::Notice),
    /// A notice about what was learned, worth showing once.
    Note(crate::rcon::notice::Notice),
    /// The end-of-output method was settled (`Some`) or should be forgotten (`None`).
    Learned(Option<Learned>),
    /// A packet went over the wire (only when the observer wants packets: [`crate::engine::Observer::wants_packets`]).
    Traced(Traced),
}

/// The caller's side of a fleet run.
pub trait Handler {
    /// What `target` does next: called when it is logged in, and after each command that
    /// completed ([`Report::Done`]) or was refused ([`Report::Refused`]).
    fn next(&mut self, target: usize) -> Next;
    /// Something happened to `target`.
    fn report(&mut self, target: usize, report: Report);
}

#[derive(Debug)]
enum Phase {
    /// Not started yet.
    Pending,
    /// Waiting to try connecting again.
    Backoff,
    /// A non-blocking connect is under way.
    Connecting,
    /// Connected: the exchange runs.
    Open,
    /// Connected and ready, waiting for a command's `not_before`.
    Delay,
    /// Done (finished or failed).
    Over,
}

struct Slot {
    phase: Phase,
    exchange: Exchange,
    password: Password,
    addrs: Vec<SocketAddr>,
    addr_index: usize,
    stream: Option<TcpStream>,
    /// Bytes of a packet the socket did not take whole yet.
    unsent: VecDeque<u8>,
    /// When connecting gives up, the back-off ends, or a delayed command is due.
    wake_at: Option<Instant>,
    attempt: u32,
    /// A command to start once logged in again (after a stop command closed the connection).
    queued: Option<(String, bool)>,
    /// The deadline last put on the timer heap, to avoid duplicates.
    armed: Option<Instant>,
}

/// Runs every target to the end, calling `handler` as things happen. Returns when every target
/// is finished or failed; an `Err` only when the event loop itself cannot run.
pub fn run(
    targets: Vec<FleetTarget>,
    opts: FleetOptions,
    handler: &mut dyn Handler,
) -> io::Result<()> {
    let resolved = resolve_all(&targets);
    let mut poll = Poll::new()?;
    let mut sessions: Vec<Slot> = Vec::with_capacity(targets.len());
    let mut early: Vec<(usize, Error)> = Vec::new();
    for (i, (t, addrs)) in targets.into_iter().zip(resolved).enumerate() {
        let addrs = match addrs {
            Ok(a) => a,
            Err(e) => {
                early.push((i, e));
                Vec::new()
            }
        };
        sessions.push(Slot {
            phase: Phase::Pending,
            exchange: Exchange::new(t.config),
            password: t.password,
            addrs,
            addr_index: 0,
            stream: None,
            unsent: VecDeque::new(),
            wake_at: None,
            attempt: 0,
            queued: None,
            armed: None,
        });
    }
    let mut lp = Loop {
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
        lp.start_more(&poll, handler);
        if lp.finished() {
            return Ok(());
        }
        let now = Instant::now();
        let wait = lp
            .timers
            .peek()
            .map(|Reverse((at, _))| at.saturating_duration_since(now));
        // Round up, so a wake-up never comes before its deadline and spins.
        let mut wait = wait.map(|w| w + Duration::from_micros(500));
        if lp.opts.cancel.is_some() {
            wait = Some(wait.map_or(crate::engine::CANCEL_POLL, |w| {
                w.min(crate::engine::CANCEL_POLL)
            }));
        }
        match poll.poll(&mut events, wait) {
            Ok(()) => {}
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        }
        for ev in events.iter() {
            let i = ev.token().0;
            lp.on_ready(i, &poll, handler);
        }
        lp.fire_timers(&poll, handler);
        if lp.finished() {
            return Ok(());
        }
        if lp
            .opts
            .cancel
            .as_ref()
            .is_some_and(|c| c.load(std::sync::atomic::Ordering::SeqCst))
        {
            lp.cancel_all(&poll, handler);
            return Ok(());
        }
    }
}

struct Loop {
    sessions: Vec<Slot>,
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

    /// Starts a connection attempt to the next address (the first one for a new attempt).
    fn connect(&mut self, i: usize, poll: &Poll, handler: &mut dyn Handler) {
        let s = &mut self.sessions[i];
        if !matches!(s.phase, Phase::Connecting) {
            s.attempt += 1;
            s.addr_index = 0;
            handler.report(i, Report::Connecting { attempt: s.attempt });
        }
        let timeout = s.exchange.config().timeout;
        loop {
            let Some(&addr) = s.addrs.get(s.addr_index) else {
                let err = Error::Connect {
                    addr: "no address".into(),
                    source: io::Error::new(io::ErrorKind::NotFound, "no addresses"),
                };
                self.connect_failed(i, err, poll, handler);
                return;
            };
            match TcpStream::connect(addr) {
                Ok(mut stream) => {
                    if let Err(source) = poll.registry().register(
                        &mut stream,
                        Token(i),
                        Interest::READABLE | Interest::WRITABLE,
                    ) {
                        self.fail(
                            i,
                            Error::Io {
                                when: "while setting up the socket",
                                source,
                            },
                            poll,
                            handler,
                        );
                        return;
                    }
                    let s = &mut self.sessions[i];
                    s.stream = Some(stream);
                    s.phase = Phase::Connecting;
                    if s.addr_index == 0 || s.wake_at.is_none() {
                        s.wake_at = Some(Instant::now() + timeout);
                    }
                    self.arm(i);
                    return;
                }
                Err(source) => {
                    s.addr_index += 1;
                    if s.addr_index >= s.addrs.len() {
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

    /// A connect failed for good on this attempt: back off and retry, or fail the target.
    fn connect_failed(&mut self, i: usize, err: Error, poll: &Poll, handler: &mut dyn Handler) {
        let s = &mut self.sessions[i];
        if let Some(mut stream) = s.stream.take() {
            let _ = poll.registry().deregister(&mut stream);
        }
        s.wake_at = None;
        if s.attempt <= self.opts.retries {
            let delay = crate::engine::retry_pause(self.opts.backoff, s.attempt);
            s.phase = Phase::Backoff;
            s.wake_at = Some(Instant::now() + delay);
            self.active -= 1;
            self.backing_off += 1;
            handler.report(i, Report::Retrying { error: err, delay });
            self.arm(i);
        } else {
            self.fail(i, err, poll, handler);
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

    /// Ends the target with an error.
    fn fail(&mut self, i: usize, err: Error, poll: &Poll, handler: &mut dyn Handler) {
        self.close(i, poll);
        self.sessions[i].phase = Phase::Over;
        self.active -= 1;
        handler.report(i, Report::Failed(err));
    }

    fn close(&mut self, i: usize, poll: &Poll) {
        let s = &mut self.sessions[i];
        // Dropping the socket closes it (and sends the FIN): no shutdown call needed, which
        // saves a system call per server.
        if let Some(mut stream) = s.stream.take() {
            let _ = poll.registry().deregister(&mut stream);
        }
        s.unsent.clear();
        s.wake_at = None;
    }

    /// Puts the target's next deadline on the timer heap.
    fn arm(&mut self, i: usize) {
        let s = &mut self.sessions[i];
        let at = match s.phase {
            Phase::Open => s.exchange.poll_timeout(),
            Phase::Connecting | Phase::Backoff | Phase::Delay => s.wake_at,
            Phase::Pending | Phase::Over => None,
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
            match s.phase {
                Phase::Open => {
                    if s.exchange.poll_timeout().is_some_and(|d| d <= now) {
                        s.exchange.handle_timeout(now);
                        self.after_exchange(i, poll, handler);
                    } else {
                        self.arm(i);
                    }
                }
                Phase::Connecting if s.wake_at.is_some_and(|w| w <= now) => {
                    let timeout = s.exchange.config().timeout;
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
                Phase::Backoff if s.wake_at.is_some_and(|w| w <= now) => {
                    s.wake_at = None;
                    self.backing_off -= 1;
                    // Back in line, ahead of targets that never started.
                    self.pending.push_front(i);
                }
                Phase::Delay if s.wake_at.is_some_and(|w| w <= now) => {
                    s.wake_at = None;
                    s.phase = Phase::Open;
                    let (text, then_close) = s.queued.take().expect("a delayed command");
                    self.start(i, text, then_close, poll, handler);
                }
                _ => self.arm(i),
            }
        }
    }

    fn on_ready(&mut self, i: usize, poll: &Poll, handler: &mut dyn Handler) {
        let Some(s) = self.sessions.get_mut(i) else {
            return;
        };
        match s.phase {
            Phase::Connecting => {
                let Some(stream) = s.stream.as_ref() else {
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
                s.phase = Phase::Open;
                s.wake_at = None;
                let now = Instant::now();
                s.exchange.connected(s.password.expose(), now);
                self.after_exchange(i, poll, handler);
                // Bytes may already be waiting (edge-triggered: read now).
                self.read(i, poll, handler);
            }
            Phase::Open | Phase::Delay => {
                self.flush(i, poll, handler);
                self.read(i, poll, handler);
            }
            _ => {}
        }
    }

    /// The connect to the current address failed: the next address, or a failed attempt.
    fn next_addr(&mut self, i: usize, e: io::Error, poll: &Poll, handler: &mut dyn Handler) {
        let s = &mut self.sessions[i];
        if let Some(mut stream) = s.stream.take() {
            let _ = poll.registry().deregister(&mut stream);
        }
        let addr = s.addrs[s.addr_index];
        s.addr_index += 1;
        if s.addr_index < s.addrs.len() {
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
            if !matches!(s.phase, Phase::Open | Phase::Delay) {
                return;
            }
            let Some(stream) = s.stream.as_mut() else {
                return;
            };
            match stream.read(&mut self.buf) {
                Ok(0) => {
                    s.exchange.handle_closed(false, Instant::now());
                    self.close(i, poll);
                    self.after_exchange(i, poll, handler);
                    return;
                }
                Ok(n) => {
                    s.exchange.handle_input(&self.buf[..n], Instant::now());
                    self.after_exchange(i, poll, handler);
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
                    s.exchange.handle_closed(true, Instant::now());
                    self.close(i, poll);
                    self.after_exchange(i, poll, handler);
                    return;
                }
                Err(source) => {
                    s.exchange.disconnect();
                    let err = Error::Io {
                        when: "while reading",
                        source,
                    };
                    self.fail(i, err, poll, handler);
                    return;
                }
            }
        }
    }

    /// Writes what the exchange queued; each packet in one write call where the socket takes
    /// it (docs/protocol.md section 3).
    fn flush(&mut self, i: usize, poll: &Poll, handler: &mut dyn Handler) {
        let s = &mut self.sessions[i];
        let Some(stream) = s.stream.as_mut() else {
            return;
        };
        loop {
            if s.unsent.is_empty() {
                match s.exchange.poll_transmit() {
                    Some(bytes) => s.unsent.extend(bytes),
                    None => return,
                }
            }
            let (front, _) = s.unsent.as_slices();
            let chunk = if front.len() == s.unsent.len() {
                front.to_vec()
            } else {
                s.unsent.iter().copied().collect()
            };
            match stream.write(&chunk) {
                Ok(n) => {
                    s.unsent.drain(..n);
                }
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => return,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(source) => {
                    s.exchange.disconnect();
                    let err = Error::Io {
                        when: "while sending",
                        source,
                    };
                    self.fail(i, err, poll, handler);
                    return;
                }
            }
        }
    }

    /// Writes what the exchange wants sent and hands its events on, acting on them.
    fn after_exchange(&mut self, i: usize, poll: &Poll, handler: &mut dyn Handler) {
        self.flush(i, poll, handler);
        while let Some(event) = self.sessions[i].exchange.poll_event() {
            if matches!(self.sessions[i].phase, Phase::Over) {
                return;
            }
            match event {
                Event::Ready => match self.sessions[i].queued.take() {
                    Some((text, then_close)) => self.start(i, text, then_close, poll, handler),
                    None => self.ask(i, poll, handler),
                },
                Event::Output(bytes) => handler.report(i, Report::Output(bytes)),
                Event::Done => {
                    if self.sessions[i].exchange.is_disconnected() {
                        self.close(i, poll);
                    }
                    handler.report(i, Report::Done);
                    self.ask(i, poll, handler);
                }
                Event::Failed(e) => {
                    self.fail(i, e, poll, handler);
                    return;
                }
                Event::Reconnect => {
                    self.close(i, poll);
                    self.sessions[i].phase = Phase::Connecting;
                    self.sessions[i].addr_index = 0;
                    self.sessions[i].wake_at = None;
                    self.connect(i, poll, handler);
                    return;
                }
                Event::Warning(w) => handler.report(i, Report::Warning(w)),
                Event::Note(n) => handler.report(i, Report::Note(n)),
                Event::Learned(l) => handler.report(i, Report::Learned(Some(l))),
                Event::Forget => handler.report(i, Report::Learned(None)),
                Event::Traced(t) => handler.report(i, Report::Traced(t)),
            }
            self.flush(i, poll, handler);
        }
        self.arm(i);
    }

    /// Asks the handler for the target's next step and takes it.
    fn ask(&mut self, i: usize, poll: &Poll, handler: &mut dyn Handler) {
        match handler.next(i) {
            Next::Close => {
                self.close(i, poll);
                let s = &mut self.sessions[i];
                s.exchange.disconnect();
                s.phase = Phase::Over;
                self.active -= 1;
                let learned = s.exchange.learned();
                handler.report(i, Report::Finished(learned));
            }
            Next::Command {
                text,
                then_close,
                not_before,
            } => {
                let s = &mut self.sessions[i];
                match not_before {
                    Some(at) if at > Instant::now() => {
                        s.queued = Some((text, then_close));
                        s.phase = Phase::Delay;
                        s.wake_at = Some(at);
                        self.arm(i);
                    }
                    _ => self.start(i, text, then_close, poll, handler),
                }
            }
        }
    }

    fn start(
        &mut self,
        i: usize,
        text: String,
        then_close: bool,
        poll: &Poll,
        handler: &mut dyn Handler,
    ) {
        let s = &mut self.sessions[i];
        if let Err(e) = s.exchange.check_command(&text) {
            handler.report(i, Report::Refused(e));
            return self.ask(i, poll, handler);
        }
        if s.stream.is_none() || !s.exchange.is_ready() {
            // A stop command closed the connection: log in again first.
            s.queued = Some((text, then_close));
            s.exchange.disconnect();
            s.phase = Phase::Connecting;
            s.addr_index = 0;
            s.wake_at = None;
            return self.connect(i, poll, handler);
        }
        match s.exchange.start_command(&text, then_close, Instant::now()) {
            Ok(()) => self.after_exchange(i, poll, handler),
            Err(e) => {
                handler.report(i, Report::Refused(e));
                self.ask(i, poll, handler);
            }
        }
    }
}

/// Resolves every target's host: literal addresses directly, names once each on up to eight
/// helper threads (the resolver blocks), so the loop itself never waits on DNS.
fn resolve_all(targets: &[FleetTarget]) -> Vec<Result<Vec<SocketAddr>, Error>> {
    let mut names: Vec<&str> = Vec::new();
    for t in targets {
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
        .iter()
        .map(|t| {
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
