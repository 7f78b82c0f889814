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
use crate::app::runner::looped::{LoopPlan, LoopTargets, Move, Runner, Sent, Under};
use crate::app::runner::policy::RETRY_BACKOFF;
use crate::app::shared::{is_parse_error, is_stop_command};
use crate::app::source::schedule::{
    Board, Schedule, ScheduleClock, Step, StepKind, Timeline, Took, completed, count, left_out,
};

/// How long a server that waits for the others is asked again, at the latest (the waker asks
/// it sooner).
const IDLE: Duration = Duration::from_secs(3600);

/// Runs the timed plan on `servers`; `commands` are the command line's, after `--then`'s.
pub fn run(timing: &Timing, servers: LoopTargets, commands: &[String]) -> anyhow::Result<Exit> {
    run_targets(timing, servers, commands, &mut Rcon, 0)
}

/// [`run`], spoken to through `speech` (a management server's calls); a connect that fails is
/// tried again up to `retries` times (`--retry`).
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
    let timer = Timer {
        board: Board::new(
            servers.iter().map(|s| s.name.clone()).collect(),
            &plan,
            timing.json,
        ),
        lines: vec![Timeline::default(); count],
        plan,
        ready: vec![false; count],
        opening: vec![false; count],
        refused: (0..count).map(|_| None).collect(),
        clock: None,
        failed: None,
        speech,
        stop,
        signal: None,
        wake,
        end,
    };
    // What the servers teach at login is written once, when every one has logged in.
    crate::app::learned::defer(true);
    let ran = Runner::new(timer, servers, retries).run(targets, opts);
    crate::app::learned::defer(false);
    let timer = ran?;
    if let Some(e) = timer.failed {
        return Err(e);
    }
    Ok(timer.board.finish())
}

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

/// The timed plan on the event loop.
struct Timer<'a> {
    plan: Schedule,
    board: Board,
    lines: Vec<Timeline>,
    /// Whether each server's login (and its [`Speech::opening`]) came to an end.
    ready: Vec<bool>,
    /// Whether each server was sent the opening.
    opening: Vec<bool>,
    /// What ends the run, by server: a planned command its server refuses.
    refused: Vec<Option<anyhow::Error>>,
    /// The plan's clock, from when every server was ready.
    clock: Option<ScheduleClock>,
    /// A signal while the group connected: the run ended, nothing sent.
    failed: Option<anyhow::Error>,
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

impl LoopPlan for Timer<'_> {
    /// The step under way; `None`: the opening.
    type What = Option<Step>;

    fn next(&mut self, t: usize) -> Move<Option<Step>> {
        if !self.ready[t] && !self.opening[t] {
            self.opening[t] = true;
            match self.speech.opening() {
                Some(text) => return Move::send(None, text),
                None => self.settled(t, Ok(())),
            }
        }
        if self.failed.is_some() || self.lines[t].is_over() {
            return Move::Close;
        }
        let Some(clock) = self.clock else {
            // Waiting for the others to log in.
            return Move::Wait(Instant::now() + IDLE);
        };
        loop {
            let Some(step) = self.due(t, &clock) else {
                return Move::Close;
            };
            if step.at > clock.elapsed() {
                return Move::Wait(clock.instant(step.at));
            }
            match self.speech.say(t, &step) {
                Ok((text, then_close)) => {
                    return Move::Send {
                        what: Some(step),
                        text,
                        then_close,
                        last: false,
                        not_before: None,
                    };
                }
                // Nothing sent: the step failed, and the next is asked for.
                Err(e) => self.step_done(t, step, Err(e), Duration::ZERO),
            }
        }
    }

    /// Server `t`'s answer came: to its step under way, else to the opening.
    fn answered(&mut self, t: usize, what: Option<Step>, raw: Vec<u8>, took: Duration) {
        match what {
            Some(step) => {
                let took = self.speech.heard(t, &step, raw, took);
                self.completed(t, step, took);
            }
            None if !self.ready[t] => self.opened(t, raw),
            None => {}
        }
    }

    /// Server `t`'s step (else its opening) was refused: it failed, and the plan goes on.
    fn refused(&mut self, t: usize, what: Option<Step>, e: rconsole::Error) {
        match what {
            Some(step) => self.step_done(t, step, Err(e.into()), Duration::ZERO),
            None if !self.ready[t] => self.settled(t, Err(e.into())),
            None => {}
        }
    }

    /// Before the plan: the server takes no part. After: only where `lost` let the server go;
    /// its step under way failed.
    fn failed(&mut self, t: usize, under: Under<Option<Step>>, _: Vec<u8>, e: rconsole::Error) {
        if !self.ready[t] {
            return self.settled(t, Err(e.into()));
        }
        if let Some((Some(step), took)) = under {
            self.step_done(t, step, Err(e.into()), took);
        }
        self.lines[t].abandon();
        self.board.moved(t, self.lines[t].position());
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

    fn lost(
        &mut self,
        t: usize,
        under: &mut Sent<Option<Step>>,
        error: &rconsole::Error,
    ) -> Option<Instant> {
        if !self.ready[t] || self.failed.is_some() || self.lines[t].is_over() {
            return None;
        }
        let Some(clock) = self.clock else {
            // Closed while it waited for the others: connected again in a second, or at once
            // when the plan starts (the waker).
            return Some(Instant::now() + Duration::from_secs(1));
        };
        let failure = || fail(Exit::from_error(error), chain(error));
        if let Some((Some(step), sent)) = under.take() {
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
