//! Table-driven tests of the console exchanges (BattlEye, telnet, WebRCON), one table per state
//! of each, on a fake clock (after ureq-proto's `test/state_*`, like the RCON exchange's own
//! tables in `src/rcon/exchange/tests.rs`).
//!
//! A case is a list of [`Step`]s (server input, the clock moving on, a command, a close) and the
//! log of everything the exchange did, in order, each entry stamped with the fake clock. The
//! harness drives an exchange as a driver does (the engine's `driver.rs`, the fleet's loop),
//! and checks on every case what a table cannot say by itself:
//! - `wake()` tells the truth: a tick before it does nothing, a tick at it moves the wake time on
//!   (or the driver would spin), and a failed exchange wants no more ticks;
//! - tracing changes nothing but the traces, and no trace, warning, failure, answer or message
//!   holds the password;
//! - on a byte stream (telnet), the input split at every position, or fed a byte at a time,
//!   gives the same log.

mod battleye;
mod telnet;
mod webrcon;

use std::time::{Duration, Instant};

use super::{Action, ConsoleExchange};

/// The password every case logs in with; it must never show outside what is sent.
const PASSWORD: &str = "s3cr3t";

/// What happens in a case, in order.
#[derive(Debug, Clone)]
enum Step {
    /// The driver starts the login.
    Start,
    /// The server sends this datagram (BattlEye), text frame (WebRCON) or chunk of the stream
    /// (telnet); the driver hands it over and ticks, at the same instant.
    In(Vec<u8>),
    /// The clock moves on by this many milliseconds. The driver sleeps until each wake time on
    /// the way and ticks there, then ticks once more at the end.
    Wait(u64),
    /// The application gives a command.
    Cmd(&'static str),
    /// The server closed the connection; the log shows what `closed()` gave.
    Close,
}

use Step::*;

/// One row of a table: what happens, and the log it must give.
struct Case {
    name: String,
    steps: Vec<Step>,
    /// Log entries: `send ...` (as the console shows what it sent), `logged in`,
    /// `answer "..."`, `message "..."`, `warning ...`, `fail ...`, `closed -> ...`; prefixed
    /// with `@MS ` when they happened after the case's start. An entry ending in `...` matches
    /// any entry that starts with the rest.
    want: Vec<String>,
}

/// A case whose log is written out in full.
fn case(name: &str, steps: Vec<Step>, want: &[&str]) -> Case {
    Case {
        name: name.to_string(),
        steps,
        want: want.iter().map(|s| s.to_string()).collect(),
    }
}

/// An exchange under test, and how a table reads what it sends.
trait Subject: ConsoleExchange {
    /// The link is a byte stream, so the input may arrive split anywhere (telnet), rather
    /// than as whole datagrams or frames.
    const STREAM: bool;
    /// What one sent datagram, frame or chunk means, e.g. `cmd 0 "x"`.
    fn show(sent: &[u8]) -> String;
}

/// Drives one exchange on a fake clock and logs what it does.
struct Harness<E> {
    ex: E,
    /// The table and case, for messages.
    name: String,
    /// The case's start: log entries are stamped relative to it.
    t0: Instant,
    now: Instant,
    log: Vec<String>,
    /// Everything but sends that the exchange said, traces included: checked for the password.
    said: Vec<String>,
    failed: bool,
}

impl<E: Subject> Harness<E> {
    fn new(ex: E, name: &str) -> Self {
        let now = Instant::now();
        Harness {
            ex,
            name: name.to_string(),
            t0: now,
            now,
            log: Vec::new(),
            said: Vec::new(),
            failed: false,
        }
    }

    fn record(&mut self, what: String) {
        let ms = self.now.duration_since(self.t0).as_millis();
        self.log.push(if ms == 0 {
            what
        } else {
            format!("@{ms} {what}")
        });
    }

    fn drain(&mut self) {
        while let Some(action) = self.ex.poll() {
            let what = match action {
                Action::Send(bytes) => {
                    let shown = E::show(&bytes);
                    self.record(format!("send {shown}"));
                    continue;
                }
                Action::Trace(t) => {
                    self.said
                        .push(String::from_utf8_lossy(&t.bytes).into_owned());
                    self.said.push(t.what.into_owned());
                    continue;
                }
                Action::LoggedIn => "logged in".to_string(),
                Action::Output(bytes) => format!("answer {:?}", String::from_utf8_lossy(&bytes)),
                Action::Done { close: false } => continue,
                Action::Message(text) => format!("message {text:?}"),
                Action::Warning(text) => format!("warning {text}"),
                Action::Fail(e) => {
                    self.failed = true;
                    format!("fail {e}")
                }
                // No console closes by its answer, learns or reconnects.
                other => panic!("{}: a console gave {other:?}", self.name),
            };
            self.said.push(what.clone());
            self.record(what);
        }
        if self.failed {
            assert_eq!(
                self.ex.wake(),
                None,
                "{}: a failed exchange wants no more ticks; log: {:#?}",
                self.name,
                self.log
            );
        }
    }

    /// A driver may tick after any input, and ticks at every wake: nothing may be due by then,
    /// or it would spin.
    fn check_wake(&self, after: &str) {
        if let Some(w) = self.ex.wake() {
            assert!(
                w > self.now,
                "{}: after {after} at @{}, wake() is already due (@{}): the driver would spin",
                self.name,
                self.now.duration_since(self.t0).as_millis(),
                w.duration_since(self.t0).as_millis(),
            );
        }
    }

    fn step(&mut self, step: &Step) {
        match step {
            Start => self.ex.start(self.now),
            In(bytes) => {
                self.ex.receive(bytes, self.now);
                self.ex.tick(self.now);
            }
            Wait(ms) => {
                let end = self.now + Duration::from_millis(*ms);
                while let Some(w) = self.ex.wake().filter(|w| *w <= end) {
                    self.now = self.now.max(w);
                    self.ex.tick(self.now);
                    self.drain();
                    self.check_wake("a tick at the wake time");
                }
                self.now = end;
                // Nothing is due before the wake time (the driver ticks after any input too).
                let before = self.log.len();
                self.ex.tick(self.now);
                self.drain();
                assert_eq!(
                    self.log[before..],
                    [] as [String; 0],
                    "{}: a tick before wake() acted: wake() said later than the exchange meant",
                    self.name
                );
            }
            Cmd(command) => self.ex.command(command, self.now),
            Close => {
                let got = self.ex.closed();
                self.record(format!("closed -> {got:?}"));
            }
        }
        self.drain();
        self.check_wake(&format!("{step:?}"));
    }

    fn run(ex: E, name: &str, given: &[Step], steps: &[Step]) -> Self {
        let mut h = Harness::new(ex, name);
        for s in given {
            h.step(s);
        }
        h.log.clear();
        h.t0 = h.now;
        for s in steps {
            h.step(s);
        }
        h
    }
}

/// Whether `got` is the log `want` describes.
fn log_matches(want: &[String], got: &[String]) -> bool {
    want.len() == got.len()
        && want
            .iter()
            .zip(got)
            .all(|(w, g)| match w.strip_suffix("...") {
                Some(stem) => g.starts_with(stem),
                None => w == g,
            })
}

/// Inputs up to this long are also fed split at every position.
const MAX_SPLIT: usize = 512;

/// `steps` with the input of step `at` split after byte `k`.
fn split_at(steps: &[Step], at: usize, k: usize) -> Vec<Step> {
    let mut out = steps.to_vec();
    if let In(bytes) = &steps[at] {
        out.splice(at..=at, [In(bytes[..k].to_vec()), In(bytes[k..].to_vec())]);
    }
    out
}

/// `steps` with every input fed one byte at a time.
fn bytewise(steps: &[Step]) -> Vec<Step> {
    steps
        .iter()
        .flat_map(|s| match s {
            In(bytes) => bytes.iter().map(|b| In(vec![*b])).collect(),
            other => vec![other.clone()],
        })
        .collect()
}

/// Runs one table: every case starts from a fresh exchange (`make(tracing)`) taken through
/// `given` (the state the table is about), then runs its steps.
fn check<E: Subject>(table: &str, make: impl Fn(bool) -> E, given: &[Step], cases: Vec<Case>) {
    for c in cases {
        let name = format!("{table}: {}", c.name);
        let h = Harness::run(make(false), &name, given, &c.steps);
        assert!(
            log_matches(&c.want, &h.log),
            "{name}\n want: {:#?}\n  got: {:#?}",
            c.want,
            h.log
        );
        let traced = Harness::run(make(true), &name, given, &c.steps);
        assert_eq!(traced.log, h.log, "{name}: tracing changed what happened");
        for text in h.said.iter().chain(&traced.said) {
            assert!(
                !text.contains(PASSWORD),
                "{name}: the password shows in {text:?}"
            );
        }
        if !E::STREAM {
            continue;
        }
        let again = |steps: Vec<Step>, how: &str| {
            let got = Harness::run(make(false), &name, given, &steps).log;
            assert_eq!(got, h.log, "{name}: the input {how} gave another log");
        };
        again(bytewise(&c.steps), "fed a byte at a time");
        for (at, step) in c.steps.iter().enumerate() {
            // Every split of a long line is the same split as far as the exchange can tell:
            // the byte-at-a-time run above covers those.
            if let In(bytes) = step
                && bytes.len() <= MAX_SPLIT
            {
                for k in 1..bytes.len() {
                    again(
                        split_at(&c.steps, at, k),
                        &format!("of step {at} split after byte {k}"),
                    );
                }
            }
        }
    }
}
