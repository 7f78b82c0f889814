//! The one blocking driver: runs a [`Machine`] over a [`Link`] (a byte stream, a UDP socket),
//! for the RCON [`crate::Client`] and the consoles' [`crate::consoles::Console`]
//! alike.
//!
//! It holds no protocol decisions: it writes what the machine asks for, one send per
//! [`Action::Send`], waits in the link's read until the machine's next deadline (or
//! [`CANCEL_POLL`] when a cancel flag is set), feeds it bytes, closes and clock readings, and
//! hands its other actions on (the answer to the caller, server messages to the sink, warnings,
//! traces and what was learned to the [`Observer`]). It never sleeps and never polls: with
//! nothing to read, the only wait is the link's.
//!
//! The machine is ticked only when a wait ends with nothing read, never right after input:
//! bytes already waiting are read before a quiet timer is let fire (on a loaded machine the
//! rest of an answer may sit in the socket when its quiet gap is due).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use super::machine::{Action, Machine};
use super::{CANCEL_POLL, MessageSink, Observer, Options, later};
use crate::error::{Error, Result, TransportFailure};
use crate::transport::link::{Link, Recv};

/// What a drive waits for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Goal {
    /// The login (and, for RCON, the probe): [`Action::LoggedIn`].
    Ready,
    /// The pending command's answer. `stops_server`: a close ends it, with what
    /// [`Machine::closed`] gives (for machines that leave closes to the driver).
    Answer {
        /// The command stops the server.
        stops_server: bool,
    },
    /// Keeps the connection going (messages, acknowledgements, keep-alives) until this instant,
    /// or until the link's wait is woken early ([`Recv::Woken`]: a command wants the
    /// connection).
    Until(Instant),
}

/// Opens a fresh link to the same server, for a machine that asks for one
/// ([`Action::Reconnect`]).
pub type Opener = Box<dyn FnMut() -> Result<Box<dyn Link>> + Send>;

/// Where the driver reads the time: the system's clock unless a test sets its own.
pub type Clock = Arc<dyn Fn() -> Instant + Send + Sync>;

/// A machine, its connection and where its actions go.
pub struct Driver<M> {
    /// The protocol machine.
    pub machine: M,
    link: Option<Box<dyn Link>>,
    opener: Option<Opener>,
    observer: Arc<dyn Observer>,
    /// Where server messages go.
    pub sink: Option<MessageSink>,
    /// Abandons a command when it turns true (Ctrl-C).
    pub cancel: Option<Arc<AtomicBool>>,
    timeout: Duration,
    /// Put before warnings and notes (the server, for RCON).
    label: Option<String>,
    clock: Option<Clock>,
}

impl<M> std::fmt::Debug for Driver<M> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Driver")
            .field("connected", &self.link.is_some())
            .field("timeout", &self.timeout)
            .finish_non_exhaustive()
    }
}

/// Whether a read error means the peer reset the connection (a close with an error).
fn is_reset(e: &std::io::Error) -> bool {
    matches!(
        e.kind(),
        std::io::ErrorKind::ConnectionReset
            | std::io::ErrorKind::ConnectionAborted
            | std::io::ErrorKind::BrokenPipe
    )
}

fn write_error(source: std::io::Error, timeout: Duration) -> Error {
    if TransportFailure::find(&source).is_none() && source.kind() == std::io::ErrorKind::TimedOut {
        Error::Timeout {
            phase: crate::error::Phase::Send,
            what: "sending",
            after: timeout,
        }
    } else {
        Error::io("while sending", source)
    }
}

fn read_clock(clock: &Option<Clock>) -> Instant {
    match clock {
        Some(clock) => clock(),
        None => Instant::now(),
    }
}

/// What a wait on the link gave, once the link is no longer borrowed.
enum Got {
    Timeout,
    Woken,
    Closed,
    Failed(std::io::Error),
}

impl<M: Machine> Driver<M> {
    /// A driver for `machine` with the timeout, observer and cancel flag of `opts`; no link
    /// yet.
    pub fn new(machine: M, opts: &Options) -> Self {
        Driver {
            machine,
            link: None,
            opener: None,
            observer: Arc::clone(&opts.observer),
            sink: None,
            cancel: opts.cancel.clone(),
            timeout: opts.timeout,
            label: None,
            clock: None,
        }
    }

    /// Puts `label` (the server) before every warning and note.
    pub fn with_label(mut self, label: String) -> Self {
        self.label = Some(label);
        self
    }

    /// How to open a new link when the machine asks for one.
    pub fn with_opener(mut self, opener: Opener) -> Self {
        self.opener = Some(opener);
        self
    }

    /// Reads the time from `clock` instead of the system's (tests).
    pub fn with_clock(mut self, clock: Clock) -> Self {
        self.clock = Some(clock);
        self
    }

    /// The time now.
    pub fn now(&self) -> Instant {
        read_clock(&self.clock)
    }

    /// Opens a link with the opener and starts the login on it (the machine's
    /// [`Machine::start`]); does not wait.
    pub fn open(&mut self) -> Result<()> {
        let link = match self.opener.as_mut() {
            Some(open) => open()?,
            None => {
                return Err(Error::Protocol(
                    "the driver has no way to open a connection".into(),
                ));
            }
        };
        self.attach(link);
        Ok(())
    }

    /// Takes `link` as the connection and starts the login on it; does not wait.
    pub fn attach(&mut self, link: Box<dyn Link>) {
        self.drop_link();
        self.link = Some(link);
        let now = self.now();
        self.machine.start(now);
    }

    /// Something another thread calls to end the link's wait early (see [`Goal::Until`]);
    /// `None` without a link, or when the link cannot be woken.
    pub fn waker(&mut self) -> Option<crate::transport::Waker> {
        self.link.as_mut()?.waker()
    }

    /// Whether a link is open (the peer may have closed it unseen).
    pub fn is_connected(&self) -> bool {
        self.link.is_some()
    }

    /// Closes the link; the machine learns it is gone.
    pub fn close(&mut self) {
        self.drop_link();
        self.machine.disconnect();
    }

    fn drop_link(&mut self) {
        if let Some(mut link) = self.link.take() {
            if let Some(bytes) = self.machine.farewell() {
                let _ = link.send(&bytes, later(read_clock(&self.clock), self.timeout));
            }
            link.close();
        }
    }

    /// Checks, waiting at most a millisecond, whether the peer closed the connection since the
    /// last drive; bytes that did arrive go to the machine (which drops them as stale) and its
    /// actions are handed on. A closed connection is dropped.
    pub fn check_open(&mut self) -> bool {
        let now = self.now();
        let Some(link) = self.link.as_mut() else {
            return false;
        };
        match link.recv(now + Duration::from_millis(1)) {
            Ok(Recv::Data(data)) => {
                self.machine.receive(data, now);
                let _ = self.actions(Goal::Ready, &mut None);
                self.link.is_some()
            }
            Ok(Recv::Timeout | Recv::Woken) => true,
            Ok(Recv::Closed) | Err(_) => {
                self.close();
                false
            }
        }
    }

    /// Hands the machine's queued actions on. `Ok(true)` when `goal` was reached.
    fn actions(&mut self, goal: Goal, out: &mut Option<&mut Vec<u8>>) -> Result<bool> {
        let mut reached = false;
        while let Some(action) = self.machine.poll() {
            match action {
                Action::Send(bytes) => {
                    let deadline = later(self.now(), self.timeout);
                    let Some(link) = self.link.as_mut() else {
                        return Err(Error::Closed {
                            phase: crate::error::Phase::Send,
                            partial: false,
                            when: "before the request could be sent",
                        });
                    };
                    let sent = link.send(&bytes, deadline);
                    self.machine.recycle(bytes);
                    if let Err(e) = sent {
                        self.close();
                        return Err(write_error(e, self.timeout));
                    }
                }
                Action::LoggedIn => reached |= goal == Goal::Ready,
                Action::Output(bytes) => {
                    if let Some(out) = out.as_mut() {
                        // One piece is the whole answer most of the time: take it as it is.
                        if out.is_empty() {
                            **out = bytes;
                        } else {
                            out.extend_from_slice(&bytes);
                        }
                    }
                }
                Action::Done { close } => {
                    if close {
                        self.drop_link();
                    }
                    return Ok(true);
                }
                Action::Message(text) => {
                    if let Some(sink) = &self.sink {
                        sink(&text);
                    }
                }
                Action::Trace(traced) => self.observer.trace(&traced),
                Action::Warning(w) => match &self.label {
                    Some(label) => self.observer.warning(&format!("{label}: {w}")),
                    None => self.observer.warning(&w.to_string()),
                },
                Action::Note(n) => match &self.label {
                    Some(label) => self.observer.note(&format!("{label}: {n}")),
                    None => self.observer.note(&n.to_string()),
                },
                Action::Learned(l) => self.observer.learned(l),
                Action::Fail(e) => {
                    self.close();
                    return Err(e);
                }
                Action::Reconnect => {
                    self.drop_link();
                    self.open()?;
                }
            }
        }
        Ok(reached)
    }

    /// Runs the machine until `goal`: the answer is appended to `out` (partial on error, for a
    /// machine that gives it in pieces).
    pub fn drive(&mut self, goal: Goal, out: Option<&mut Vec<u8>>) -> Result<()> {
        let mut out = out;
        loop {
            if self.actions(goal, &mut out)? {
                return Ok(());
            }
            let now = self.now();
            let wake = self
                .machine
                .wake()
                .unwrap_or_else(|| later(now, self.timeout));
            let wait_until = match goal {
                Goal::Until(t) => {
                    if now >= t {
                        return Ok(());
                    }
                    wake.min(t)
                }
                _ => match &self.cancel {
                    Some(flag) => {
                        if flag.swap(false, Ordering::SeqCst) {
                            // The machine is mid-command: start afresh next time.
                            self.close();
                            return Err(Error::Cancelled);
                        }
                        wake.min(now + CANCEL_POLL)
                    }
                    None => wake,
                },
            };
            let Some(link) = self.link.as_mut() else {
                if matches!(goal, Goal::Until(_)) {
                    return Ok(());
                }
                return Err(Error::Closed {
                    phase: crate::error::Phase::Send,
                    partial: false,
                    when: "before the request could be sent",
                });
            };
            let got = match link.recv(wait_until) {
                Ok(Recv::Data(data)) => {
                    self.machine.receive(data, read_clock(&self.clock));
                    continue;
                }
                Ok(Recv::Timeout) => Got::Timeout,
                Ok(Recv::Woken) => Got::Woken,
                Ok(Recv::Closed) => Got::Closed,
                Err(e) => Got::Failed(e),
            };
            let closed = match got {
                Got::Timeout => {
                    // A socket timeout may end a little before the instant asked for.
                    let now = self.now();
                    let now = if wait_until == wake {
                        now.max(wake)
                    } else {
                        now
                    };
                    self.machine.tick(now);
                    continue;
                }
                Got::Woken => {
                    let now = self.now();
                    self.machine.tick(now);
                    // Someone wants the connection (a command for a background reader).
                    if let Goal::Until(_) = goal {
                        self.actions(goal, &mut out)?;
                        return Ok(());
                    }
                    continue;
                }
                Got::Closed => false,
                Got::Failed(e) if is_reset(&e) && self.machine.peer_closed(true, self.now()) => {
                    self.drop_link();
                    continue;
                }
                Got::Failed(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => false,
                Got::Failed(source) => {
                    self.close();
                    return Err(Error::io("while reading", source));
                }
            };
            // An orderly close (`closed` is whether the machine already took it).
            if closed || self.machine.peer_closed(false, self.now()) {
                self.drop_link();
                continue;
            }
            return self.closed_before(goal, out);
        }
    }

    /// The peer closed the connection before `goal` and the machine left the close to the
    /// driver: the connection is dropped, and the close ends the answer of a command that stops
    /// the server (with what [`Machine::closed`] gives); anything else failed.
    fn closed_before(&mut self, goal: Goal, out: Option<&mut Vec<u8>>) -> Result<()> {
        self.close();
        if let Goal::Answer { stops_server: true } = goal
            && let Some(answer) = self.machine.closed()
        {
            if let Some(out) = out {
                out.extend_from_slice(answer.as_bytes());
            }
            return Ok(());
        }
        let (phase, partial, when) = match goal {
            Goal::Ready => (crate::error::Phase::Login, false, "during login"),
            Goal::Answer { .. } => (
                crate::error::Phase::Answer,
                true,
                "mid-response; output is incomplete",
            ),
            Goal::Until(_) => (crate::error::Phase::Idle, false, "while idle"),
        };
        Err(Error::Closed {
            phase,
            partial,
            when,
        })
    }
}

#[cfg(test)]
mod tests {
    //! The driver on an in-memory link and a fake clock: what it writes, how long it waits,
    //! what it hands on. The machine is a toy that speaks lines: `login` -> `ok`, a command is
    //! sent as it is and its answer is every `ans:` chunk until a quiet gap, `msg:` chunks are
    //! server messages.

    use std::collections::VecDeque;
    use std::io::ErrorKind;
    use std::sync::Mutex;

    use super::*;
    use crate::engine::Notice;
    use crate::transport::link::memory::{FakeClock, MemoryLink, Read, Record};

    const GAP: Duration = Duration::from_millis(100);

    #[derive(Default)]
    struct Toy {
        actions: VecDeque<Action>,
        /// The answer so far and when its gap ends.
        pending: Option<(String, Instant)>,
        logged_in: bool,
        /// Takes closes itself (as RCON does).
        own_closes: bool,
        starts: u32,
    }

    impl Machine for Toy {
        fn start(&mut self, _now: Instant) {
            self.starts += 1;
            self.actions.push_back(Action::Send(b"login".to_vec()));
        }
        fn command(&mut self, command: &str, now: Instant) {
            self.actions
                .push_back(Action::Send(command.as_bytes().to_vec()));
            self.pending = Some((String::new(), now + GAP));
        }
        fn receive(&mut self, data: &[u8], now: Instant) {
            let text = String::from_utf8_lossy(data).into_owned();
            if text == "ok" && !self.logged_in {
                self.logged_in = true;
                self.actions.push_back(Action::LoggedIn);
            } else if text == "again" {
                self.actions.push_back(Action::Reconnect);
            } else if text == "odd" {
                self.actions.push_back(Action::Warning(Notice::new("odd")));
            } else if let Some(m) = text.strip_prefix("msg:") {
                self.actions.push_back(Action::Message(m.to_string()));
            } else if let Some(a) = text.strip_prefix("ans:")
                && let Some((answer, until)) = self.pending.as_mut()
            {
                answer.push_str(a);
                *until = now + GAP;
            }
        }
        fn tick(&mut self, now: Instant) {
            if let Some((_, until)) = &self.pending
                && now >= *until
            {
                let (answer, _) = self.pending.take().unwrap();
                self.actions.push_back(Action::Output(answer.into_bytes()));
                self.actions.push_back(Action::Done { close: false });
            }
        }
        fn poll(&mut self) -> Option<Action> {
            self.actions.pop_front()
        }
        fn wake(&self) -> Option<Instant> {
            self.pending.as_ref().map(|(_, until)| *until)
        }
        fn closed(&mut self) -> Option<String> {
            self.pending.take().map(|(answer, _)| answer)
        }
        fn peer_closed(&mut self, _reset: bool, _now: Instant) -> bool {
            if self.own_closes {
                self.pending = None;
                self.actions.push_back(Action::Done { close: true });
            }
            self.own_closes
        }
    }

    /// What the observer heard.
    #[derive(Default)]
    struct Heard(Mutex<Vec<String>>);

    impl Observer for Heard {
        fn warning(&self, message: &str) {
            self.0.lock().unwrap().push(format!("warning {message}"));
        }
    }

    struct Setup {
        driver: Driver<Toy>,
        clock: FakeClock,
        record: Record,
        heard: Arc<Heard>,
        messages: Arc<Mutex<Vec<String>>>,
    }

    /// A driver of a fresh [`Toy`] on a link that reads `script`, logged in.
    fn setup(toy: Toy, script: Vec<Read>) -> Setup {
        let clock = FakeClock::new();
        let mut script = script;
        script.insert(0, Read::Data(1, b"ok".to_vec()));
        let (link, record) = MemoryLink::new(script, &clock);
        let heard = Arc::new(Heard::default());
        let opts = Options {
            timeout: Duration::from_secs(5),
            observer: heard.clone(),
            ..Options::default()
        };
        let messages = Arc::new(Mutex::new(Vec::new()));
        let sink = {
            let messages = Arc::clone(&messages);
            Arc::new(move |m: &str| messages.lock().unwrap().push(m.to_string()))
        };
        let mut driver = Driver::new(toy, &opts)
            .with_clock(clock.source())
            .with_label("toy:1".into());
        driver.sink = Some(sink);
        driver.attach(Box::new(link));
        driver.drive(Goal::Ready, None).expect("logged in");
        Setup {
            driver,
            clock,
            record,
            heard,
            messages,
        }
    }

    fn writes(record: &Record) -> Vec<String> {
        record
            .writes
            .lock()
            .unwrap()
            .iter()
            .map(|w| String::from_utf8_lossy(w).into_owned())
            .collect()
    }

    const ANSWER: Goal = Goal::Answer {
        stops_server: false,
    };

    #[test]
    fn one_send_per_write_and_the_answer_ends_at_the_machines_deadline_on_the_fake_clock() {
        let mut s = setup(
            Toy::default(),
            vec![
                Read::Data(10, b"ans:a".to_vec()),
                Read::Data(20, b"msg:hello".to_vec()),
                Read::Data(30, b"ans:b".to_vec()),
                Read::Silence,
            ],
        );
        let start = s.clock.now();
        s.driver.machine.command("cmd", start);
        let mut out = Vec::new();
        s.driver.drive(ANSWER, Some(&mut out)).unwrap();
        assert_eq!(out, b"ab");
        assert_eq!(writes(&s.record), ["login", "cmd"]);
        assert_eq!(*s.messages.lock().unwrap(), ["hello"]);
        // The last wait was until the gap after the last chunk, and the clock stopped there:
        // nothing waited longer, and the machine was ticked at its deadline, not before.
        let last = *s.record.waits.lock().unwrap().last().unwrap();
        assert_eq!(last, start + Duration::from_millis(60) + GAP);
        assert_eq!(s.clock.now(), last);
    }

    #[test]
    fn a_wait_never_passes_the_cancel_poll_and_a_cancel_closes_the_link() {
        let mut s = setup(Toy::default(), vec![Read::Silence, Read::Silence]);
        let flag = Arc::new(AtomicBool::new(false));
        s.driver.cancel = Some(Arc::clone(&flag));
        let t0 = s.clock.now();
        s.driver.machine.command("cmd", t0);
        let mut out = Vec::new();
        // Two silences of one cancel poll each pass, then the gap ends the answer.
        s.driver.drive(ANSWER, Some(&mut out)).unwrap();
        let waits = s.record.waits.lock().unwrap().clone();
        assert_eq!(waits[1], t0 + CANCEL_POLL);
        assert_eq!(waits[2], t0 + CANCEL_POLL * 2);
        flag.store(true, Ordering::SeqCst);
        s.driver.machine.command("cmd2", s.clock.now());
        let err = s.driver.drive(ANSWER, Some(&mut out)).unwrap_err();
        assert!(matches!(err, Error::Cancelled), "{err}");
        assert!(*s.record.closed.lock().unwrap());
        assert!(!s.driver.is_connected());
        assert!(!flag.load(Ordering::SeqCst), "the flag is taken");
    }

    #[test]
    fn a_close_mid_answer_is_an_incomplete_answer_and_the_link_is_dropped() {
        let mut s = setup(
            Toy::default(),
            vec![Read::Data(1, b"ans:a".to_vec()), Read::Close],
        );
        s.driver.machine.command("cmd", s.clock.now());
        let mut out = Vec::new();
        let err = s.driver.drive(ANSWER, Some(&mut out)).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Closed {
                    phase: crate::error::Phase::Answer,
                    partial: true,
                    when: "mid-response; output is incomplete"
                }
            ),
            "{err}"
        );
        assert!(*s.record.closed.lock().unwrap());
        assert!(!s.driver.is_connected());
    }

    #[test]
    fn a_close_ends_the_answer_of_a_command_that_stops_the_server() {
        let mut s = setup(
            Toy::default(),
            vec![Read::Data(1, b"ans:stopping".to_vec()), Read::Close],
        );
        s.driver.machine.command("stop", s.clock.now());
        let mut out = Vec::new();
        let goal = Goal::Answer { stops_server: true };
        s.driver.drive(goal, Some(&mut out)).unwrap();
        assert_eq!(out, b"stopping");
        assert!(!s.driver.is_connected());
    }

    #[test]
    fn a_machine_that_takes_closes_decides_what_a_close_or_a_reset_means() {
        for end in [Read::Close, Read::Fail(ErrorKind::ConnectionReset)] {
            let toy = Toy {
                own_closes: true,
                ..Toy::default()
            };
            let mut s = setup(toy, vec![Read::Data(1, b"ans:a".to_vec()), end.clone()]);
            s.driver.machine.command("cmd", s.clock.now());
            let mut out = Vec::new();
            s.driver.drive(ANSWER, Some(&mut out)).unwrap();
            assert!(!s.driver.is_connected(), "{end:?}");
        }
        // Another read error is the link's failure, for every machine.
        let mut s = setup(Toy::default(), vec![Read::Fail(ErrorKind::Other)]);
        s.driver.machine.command("cmd", s.clock.now());
        let err = s.driver.drive(ANSWER, None).unwrap_err();
        assert!(matches!(err, Error::Io { .. }), "{err}");
        assert!(*s.record.closed.lock().unwrap());
    }

    #[test]
    fn keeping_a_connection_going_returns_at_its_instant_or_when_woken() {
        let mut s = setup(
            Toy::default(),
            vec![Read::Data(5, b"msg:one".to_vec()), Read::Silence],
        );
        let until = s.clock.now() + Duration::from_secs(1);
        s.driver.drive(Goal::Until(until), None).unwrap();
        assert_eq!(*s.messages.lock().unwrap(), ["one"]);
        assert_eq!(
            s.clock.now(),
            until,
            "waited in the link, until the instant"
        );
        let mut s = setup(Toy::default(), vec![Read::Woken]);
        let until = s.clock.now() + Duration::from_secs(1);
        s.driver.drive(Goal::Until(until), None).unwrap();
        assert!(s.clock.now() < until, "a wake-up ends the wait early");
    }

    #[test]
    fn warnings_carry_the_label_and_a_reconnect_opens_a_new_link_and_starts_again() {
        let mut s = setup(Toy::default(), vec![Read::Data(1, b"odd".to_vec())]);
        let clock = s.clock.clone();
        let second = Arc::new(Mutex::new(None));
        let opener = {
            let second = Arc::clone(&second);
            Box::new(move || {
                let (link, record) = MemoryLink::new(vec![Read::Data(1, b"ok".to_vec())], &clock);
                *second.lock().unwrap() = Some(record);
                Ok(Box::new(link) as Box<dyn Link>)
            })
        };
        s.driver = s.driver.with_opener(opener);
        s.driver.machine.logged_in = false;
        s.driver.machine.receive(b"again", s.clock.now());
        s.driver.drive(Goal::Ready, None).unwrap();
        assert_eq!(s.driver.machine.starts, 2);
        assert!(*s.record.closed.lock().unwrap(), "the old link is closed");
        let second = second.lock().unwrap().clone().unwrap();
        assert_eq!(writes(&second), ["login"]);
        // The first link's "odd" was read before: its warning went out with the label.
        let mut s2 = setup(Toy::default(), vec![Read::Data(1, b"odd".to_vec())]);
        let until = s2.clock.now() + Duration::from_millis(1);
        s2.driver.drive(Goal::Until(until), None).unwrap();
        assert_eq!(s2.heard.0.lock().unwrap()[0], "warning toy:1: odd");
        drop(s);
    }
}
