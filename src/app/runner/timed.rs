//! The timed plan (`--countdown`, `--every`, `--if`) on the fleet's event loop, for every
//! RCON and console server (`--remote` ones included): one thread for the whole
//! group, each server walking the plan on its own [`Timeline`] and waiting for its next step
//! on its open connection ([`fleet::Next::Wait`]). Every server connects first; the plan's
//! clock starts when each has logged in or failed to (the loop's waker hands them their first
//! step), and a server that could not log in takes no part ([`left_out`]). A signal wakes
//! every waiting server: a countdown is cancelled (with `--cancel-announce`), a run between
//! two `--every` runs ends, a run's final commands that have begun all go out. A connection
//! the server closes while a server waits is opened again for its next step; a step whose
//! server cannot be reached fails, and the plan goes on. RCON servers and management servers
//! walk the plan alike; how a step is said and its answer read is each one's [`Speech`] (a
//! management server reads `rpc.discover` first, and a planned command its schema refuses
//! ends the run with nothing sent).

use std::time::{Duration, Instant};

use rconsole::fleet;

use crate::app::exit::{Exit, chain, fail};
use crate::app::interrupt::{self, Signal, Stop};
use crate::app::resolve::plan::Timing;
use crate::app::runner::fanout;
use crate::app::runner::policy::{RETRY_BACKOFF, Retries};
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
    let mut rcon = Rcon;
    run_targets(timing, fanout::looped(servers), commands, &mut rcon, 0)
}

/// [`run`] over targets made already, spoken to through `speech` (a management server's
/// calls); a connect that fails is tried again up to `retries` times (`--retry`).
pub fn run_targets(
    timing: &Timing,
    (targets, servers): LoopTargets,
    commands: &[String],
    speech: &mut dyn Speech,
    retries: u32,
) -> anyhow::Result<Exit> {
    let plan = Schedule::new(timing, commands);
    let count = servers.len();
    // Ctrl-C and SIGTERM set the signals' flag, which is the loop's waker too: while the group
    // connects they end the run with nothing sent; once the plan runs, every waiting server is
    // asked again at once. Where the guard cannot be installed they keep their effect.
    let stop = Stop::catch();
    let wake = interrupt::shared_alarm();
    let end = fleet::Alarm::new();
    let opts = fleet::FleetOptions {
        parallel: count.max(1),
        retries,
        backoff: RETRY_BACKOFF,
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
        opening: vec![false; count],
        refused: (0..count).map(|_| None).collect(),
        retried: vec![Retries::new(retries); count],
        clock: None,
        failed: None,
        flight: (0..count).map(|_| None).collect(),
        raw: vec![Vec::new(); count],
        speech,
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

/// Servers on the event loop: each target, and what a handler keeps of each, in order.
pub type LoopTargets = (Vec<fleet::FleetTarget>, Vec<fanout::Looped>);

/// How a timed run speaks to its servers: RCON's commands as they are ([`Rcon`]), or a
/// management server's method words as calls (`crate::app::mode::mgmt_fleet::timed`).
pub trait Speech {
    /// What each server is sent first, once connected, before the plan starts
    /// (`rpc.discover`), if anything.
    fn opening(&self) -> Option<String> {
        None
    }
    /// Server `t`'s answer to the opening: the outer `Err` ends the run before anything is
    /// sent (a planned command its server refuses); the inner one leaves the server out.
    fn opened(&mut self, _t: usize, _answer: String) -> anyhow::Result<anyhow::Result<()>> {
        Ok(Ok(()))
    }
    /// What server `t` is sent for `step`, and whether the server closes the connection after
    /// it (`stop`); `Err` when it cannot be said (the step fails, nothing is sent).
    fn say(&mut self, t: usize, step: &Step) -> anyhow::Result<(String, bool)>;
    /// What server `t`'s answer (`raw`) to `step`, sent `took` ago, came to.
    fn heard(&mut self, t: usize, step: &Step, raw: Vec<u8>, took: Duration) -> Took;
}

/// RCON: a step's command is sent as it is; `list` counts the players for `--if`.
struct Rcon;

impl Speech for Rcon {
    fn say(&mut self, _t: usize, step: &Step) -> anyhow::Result<(String, bool)> {
        let then_close = step.kind != StepKind::Count && is_stop_command(&step.command);
        Ok((step.command.clone(), then_close))
    }

    fn heard(&mut self, _t: usize, step: &Step, raw: Vec<u8>, took: Duration) -> Took {
        let parse_error = is_parse_error(&raw);
        let text = rconsole::rcon::packet::decode_output_owned(raw);
        let result = match parse_error {
            true => Err(fail(Exit::CommandFailed, text)),
            false => Ok(text),
        };
        match step.kind {
            StepKind::Count => Took::Players(count(result)),
            _ => Took::Answer(result, took),
        }
    }
}

/// A step under way on a server: what it is and when it was sent.
struct Flight {
    step: Step,
    sent: Instant,
}

/// The timed plan's side of the event loop.
struct Timer<'a> {
    plan: Schedule,
    board: Board,
    lines: Vec<Timeline>,
    servers: Vec<fanout::Looped>,
    /// Whether each server's login (and its [`Speech::opening`]) came to an end.
    ready: Vec<bool>,
    /// Whether each server was sent the opening.
    opening: Vec<bool>,
    /// What ends the run, by server: a planned command its server refuses.
    refused: Vec<Option<anyhow::Error>>,
    /// Connect attempts tried again, by server, of how many are allowed (`--retry`).
    retried: Vec<Retries>,
    /// The plan's clock, from when every server was ready.
    clock: Option<ScheduleClock>,
    /// A signal while the group connected: the run ended, nothing sent.
    failed: Option<anyhow::Error>,
    flight: Vec<Option<Flight>>,
    raw: Vec<Vec<u8>>,
    speech: &'a mut dyn Speech,
    /// The signals' guard.
    stop: Option<Stop>,
    /// The signal, with the schedule time it was first seen ([`Timeline::due`]).
    signal: Option<(Signal, Duration)>,
    wake: fleet::Alarm,
    /// Raised to end every server: the plan could not start.
    end: fleet::Alarm,
}

impl Timer<'_> {
    /// Server `t` logged in (or could not): when every server has, the plan's clock starts
    /// and the waker hands each its first step; the servers that could not log in take no
    /// part, each said in its one line ([`left_out`]).
    fn settled(&mut self, t: usize, result: Result<(), anyhow::Error>) {
        if let Err(e) = result {
            left_out(&mut self.board, &self.plan, (t, &mut self.lines[t]), e);
        }
        self.ready[t] = true;
        if !self.ready.iter().all(|r| *r) {
            return;
        }
        crate::app::learned::defer(false);
        if let Some(e) = self.refused.iter_mut().find_map(Option::take) {
            // The first in the servers' order; nothing was sent to any.
            self.failed = Some(e);
            self.end.raise();
            return;
        }
        self.clock = Some(ScheduleClock::new());
        self.wake.raise();
    }

    /// Server `t`'s answer to the opening ([`Speech::opening`]).
    fn opened(&mut self, t: usize, raw: Vec<u8>) {
        let answer = String::from_utf8_lossy(&raw).into_owned();
        match self.speech.opened(t, answer) {
            Ok(result) => self.settled(t, result),
            Err(e) => {
                self.refused[t] = Some(e);
                self.settled(t, Ok(()));
            }
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

    /// Server `t`'s answer came: to its step under way, else to the opening.
    fn answered(&mut self, t: usize) {
        let raw = std::mem::take(&mut self.raw[t]);
        let Some(Flight { step, sent }) = self.flight[t].take() else {
            if !self.ready[t] {
                self.opened(t, raw);
            }
            return;
        };
        let took = self.speech.heard(t, &step, raw, sent.elapsed());
        self.completed(t, step, took);
    }

    /// Server `t`'s step under way (else its opening) failed for `error`.
    fn step_failed(&mut self, t: usize, error: anyhow::Error) {
        let Some(Flight { step, sent }) = self.flight[t].take() else {
            if !self.ready[t] {
                self.settled(t, Err(error));
            }
            return;
        };
        self.step_done(t, step, Err(error), sent.elapsed());
    }

    fn step_done(&mut self, t: usize, step: Step, result: anyhow::Result<String>, took: Duration) {
        let took = match step.kind {
            StepKind::Count => Took::Players(count(result)),
            _ => Took::Answer(result, took),
        };
        self.completed(t, step, took);
    }

    fn completed(&mut self, t: usize, step: Step, took: Took) {
        completed(
            &mut self.board,
            &self.plan,
            (t, &mut self.lines[t]),
            step,
            took,
        );
    }
}

impl fleet::Handler for Timer<'_> {
    fn next(&mut self, t: usize) -> fleet::Next {
        if !self.ready[t] && !self.opening[t] {
            self.opening[t] = true;
            match self.speech.opening() {
                Some(text) => {
                    return fleet::Next::Command {
                        text,
                        then_close: false,
                        not_before: None,
                    };
                }
                None => self.settled(t, Ok(())),
            }
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
        loop {
            let Some(step) = self.due(t, &clock) else {
                return fleet::Next::Close;
            };
            if step.at > clock.elapsed() {
                return fleet::Next::Wait {
                    until: clock.instant(step.at),
                };
            }
            match self.speech.say(t, &step) {
                Ok((text, then_close)) => {
                    self.flight[t] = Some(Flight {
                        step,
                        sent: Instant::now(),
                    });
                    return fleet::Next::Command {
                        text,
                        then_close,
                        not_before: None,
                    };
                }
                // Nothing sent: the step failed, and the next is asked for.
                Err(e) => self.step_done(t, step, Err(e), Duration::ZERO),
            }
        }
    }

    fn report(&mut self, t: usize, report: fleet::Report) {
        let Some(report) = self.servers[t].observe(report) else {
            return;
        };
        match report {
            fleet::Report::Output(bytes) => self.raw[t].extend_from_slice(&bytes),
            fleet::Report::Done => self.answered(t),
            fleet::Report::Refused(e) => self.step_failed(t, anyhow::Error::new(e)),
            fleet::Report::Retrying { error, delay } => {
                // The loop keeps the same schedule; this one counts for the warning.
                let retries = &mut self.retried[t];
                retries.next();
                let warning = retries.warning(&chain(&error), delay);
                crate::app::print::output::warning(&warning);
            }
            fleet::Report::Finished(learned) if learned.is_some() => {
                self.servers[t].observer.learned(learned)
            }
            fleet::Report::Failed(rconsole::Error::Cancelled) => {}
            fleet::Report::Failed(e) if !self.ready[t] => {
                self.settled(t, Err(anyhow::Error::new(e)));
            }
            fleet::Report::Failed(e) => {
                // Only where `lost` let the server go: its step under way failed.
                self.step_failed(t, anyhow::Error::new(e));
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
