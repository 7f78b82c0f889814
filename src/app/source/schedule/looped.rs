//! The timed plan (`--countdown`, `--every`, `--if`) on the fleet's event loop, for every
//! RCON and console server (`--remote` ones included): one thread for the whole
//! group, each server walking the plan on its own [`Timeline`] and waiting for its next step
//! on its open connection ([`fleet::Next::Wait`]). Every server connects first; the plan's
//! clock starts when each has logged in or failed to (the loop's waker hands them their first
//! step), and a server that could not log in takes no part ([`left_out`]). A signal wakes
//! every waiting server: a countdown is cancelled (with `--cancel-announce`), a run between
//! two `--every` runs ends, a run's final commands that have begun all go out. A connection
//! the server closes while a server waits is opened again for its next step; a step whose
//! server cannot be reached fails, and the plan goes on.

use std::time::{Duration, Instant};

use rconsole::fleet;

use crate::app::exit::{Exit, chain, fail};
use crate::app::resolve::plan::Timing;
use crate::app::runner::fanout;
use crate::app::runner::interrupt::{self, Signal, Stop};
use crate::app::shared::{is_parse_error, is_stop_command};
use crate::app::source::schedule::{
    Board, Schedule, ScheduleClock, Step, StepKind, Timeline, Took, completed, count, left_out,
};

/// How long a server that waits for the others is asked again, at the latest (the waker asks
/// it sooner).
const IDLE: Duration = Duration::from_secs(3600);

/// Runs the timed plan on `servers` (every one on the event loop's route); `commands` are the
/// command line's, after `--then`'s.
pub fn run(
    timing: &Timing,
    servers: Vec<fanout::Server>,
    commands: &[String],
) -> anyhow::Result<Exit> {
    let plan = Schedule::new(timing, commands);
    let count = servers.len();
    let (targets, servers) = fanout::looped(servers);
    // Ctrl-C and SIGTERM set the signals' flag, which is the loop's waker too: while the group
    // connects they end the run with nothing sent; once the plan runs, every waiting server is
    // asked again at once. Where the guard cannot be installed they keep their effect.
    let stop = Stop::catch();
    let wake = interrupt::shared_alarm();
    let end = fleet::Alarm::new();
    let opts = fleet::FleetOptions {
        parallel: count.max(1),
        retries: 0,
        backoff: Duration::from_secs(1),
        cancel: Some(end.clone()),
        wake: Some(wake.clone()),
    };
    let mut timer = Timer {
        board: Board::new(
            servers.iter().map(|s| s.name.clone()).collect(),
            &plan,
            timing.json,
        ),
        lines: vec![Timeline::default(); count],
        plan,
        servers,
        ready: vec![false; count],
        clock: None,
        failed: None,
        flight: (0..count).map(|_| None).collect(),
        raw: vec![Vec::new(); count],
        stop,
        signal: None,
        wake,
        end,
    };
    // What the servers teach at login is written once, when every one has logged in.
    crate::app::learned::defer(true);
    let ran = fleet::run(targets, opts, &mut timer);
    crate::app::learned::defer(false);
    ran?;
    if let Some(e) = timer.failed {
        return Err(e);
    }
    Ok(timer.board.finish())
}

/// A step under way on a server: what it is and when it was sent.
struct Flight {
    step: Step,
    sent: Instant,
}

/// The timed plan's side of the event loop.
struct Timer {
    plan: Schedule,
    board: Board,
    lines: Vec<Timeline>,
    servers: Vec<fanout::Looped>,
    /// Whether each server's login came to an end (logged in, or could not).
    ready: Vec<bool>,
    /// The plan's clock, from when every server was ready.
    clock: Option<ScheduleClock>,
    /// A signal while the group connected: the run ended, nothing sent.
    failed: Option<anyhow::Error>,
    flight: Vec<Option<Flight>>,
    raw: Vec<Vec<u8>>,
    /// The signals' guard.
    stop: Option<Stop>,
    /// The signal, with the schedule time it was first seen ([`Timeline::due`]).
    signal: Option<(Signal, Duration)>,
    wake: fleet::Alarm,
    /// Raised to end every server: the plan could not start.
    end: fleet::Alarm,
}

impl Timer {
    /// Server `t` logged in (or could not): when every server has, the plan's clock starts
    /// and the waker hands each its first step; the servers that could not log in take no
    /// part, each said in its one line ([`left_out`]).
    fn settled(&mut self, t: usize, result: Result<(), anyhow::Error>) {
        if let Err(e) = result {
            left_out(&mut self.board, &self.plan, (t, &mut self.lines[t]), e);
        }
        self.ready[t] = true;
        if self.ready.iter().all(|r| *r) {
            crate::app::learned::defer(false);
            self.clock = Some(ScheduleClock::new());
            self.wake.raise();
        }
    }

    /// Server `t`'s due step, the halt a signal caused said once; `None` when it is over.
    fn due(&mut self, t: usize, clock: &ScheduleClock) -> Option<Step> {
        let now = clock.elapsed();
        if self.signal.is_none() {
            self.signal = self
                .stop
                .as_ref()
                .and_then(Stop::received)
                .map(|s| (s, now));
        }
        let (step, halt) = self.lines[t].due(&self.plan, now, self.signal);
        if let Some(h) = halt {
            self.board.halt(h);
        }
        self.board.moved(t, self.lines[t].position());
        step
    }

    /// Server `t`'s step under way came to `result`.
    fn took(&mut self, t: usize, result: anyhow::Result<String>) {
        let Some(Flight { step, sent }) = self.flight[t].take() else {
            return;
        };
        self.step_done(t, step, result, sent.elapsed());
    }

    fn step_done(&mut self, t: usize, step: Step, result: anyhow::Result<String>, took: Duration) {
        let took = match step.kind {
            StepKind::Count => Took::Players(count(result)),
            _ => Took::Answer(result, took),
        };
        completed(
            &mut self.board,
            &self.plan,
            (t, &mut self.lines[t]),
            step,
            took,
        );
    }
}

impl fleet::Handler for Timer {
    fn next(&mut self, t: usize) -> fleet::Next {
        if !self.ready[t] {
            self.settled(t, Ok(()));
        }
        if self.failed.is_some() || self.lines[t].is_over() {
            return fleet::Next::Close;
        }
        let Some(clock) = self.clock else {
            // Waiting for the others to log in.
            return fleet::Next::Wait {
                until: Instant::now() + IDLE,
            };
        };
        let step = self.due(t, &clock);
        match step {
            None => fleet::Next::Close,
            Some(step) if step.at > clock.elapsed() => fleet::Next::Wait {
                until: clock.instant(step.at),
            },
            Some(step) => {
                let text = step.command.clone();
                let then_close = step.kind != StepKind::Count && is_stop_command(&text);
                self.flight[t] = Some(Flight {
                    step,
                    sent: Instant::now(),
                });
                fleet::Next::Command {
                    text,
                    then_close,
                    not_before: None,
                }
            }
        }
    }

    fn report(&mut self, t: usize, report: fleet::Report) {
        let Some(report) = self.servers[t].observe(report) else {
            return;
        };
        match report {
            fleet::Report::Output(bytes) => self.raw[t].extend_from_slice(&bytes),
            fleet::Report::Done => {
                let raw = std::mem::take(&mut self.raw[t]);
                let result = if is_parse_error(&raw) {
                    let text = rconsole::rcon::packet::decode_output_owned(raw);
                    Err(fail(Exit::CommandFailed, text))
                } else {
                    Ok(rconsole::rcon::packet::decode_output_owned(raw))
                };
                self.took(t, result);
            }
            fleet::Report::Refused(e) => self.took(t, Err(anyhow::Error::new(e))),
            fleet::Report::Finished(learned) if learned.is_some() => {
                self.servers[t].observer.learned(learned)
            }
            fleet::Report::Failed(rconsole::Error::Cancelled) => {}
            fleet::Report::Failed(e) if !self.ready[t] => {
                self.settled(t, Err(anyhow::Error::new(e)));
            }
            fleet::Report::Failed(e) => {
                // Only where `lost` let the server go: its step under way failed.
                self.took(t, Err(anyhow::Error::new(e)));
                self.lines[t].abandon();
                self.board.moved(t, self.lines[t].position());
            }
            _ => {}
        }
    }

    fn woken(&mut self) {
        // A signal while the group connects: the run ends, nothing sent.
        if self.clock.is_none()
            && self.failed.is_none()
            && let Some(signal) = self.stop.as_ref().and_then(Stop::received)
        {
            self.failed = Some(fail(
                signal.exit(),
                format!(
                    "stopped ({}) while connecting; nothing was sent",
                    signal.name()
                ),
            ));
            self.end.raise();
        }
    }

    fn lost(&mut self, t: usize, error: &rconsole::Error) -> Option<Instant> {
        self.raw[t].clear();
        if !self.ready[t] || self.failed.is_some() || self.lines[t].is_over() {
            return None;
        }
        let Some(clock) = self.clock else {
            // Closed while it waited for the others: connected again in a second, or at once
            // when the plan starts (the waker).
            return Some(Instant::now() + Duration::from_secs(1));
        };
        let failure = || fail(Exit::from_error(error), chain(error));
        if let Some(Flight { step, sent }) = self.flight[t].take() {
            // The step under way failed (it may or may not have run).
            self.step_done(t, step, Err(failure()), sent.elapsed());
        } else if let Some(step) = self.due(t, &clock)
            && step.at <= clock.elapsed()
        {
            // Connecting for a step that is due failed: that step fails.
            self.step_done(t, step, Err(failure()), Duration::ZERO);
        }
        // Connected again when its next step is due (at once if that has passed).
        let again = self.due(t, &clock).map(|step| clock.instant(step.at));
        let now = Instant::now();
        again.map(|at| at.max(now))
    }
}
