//! The schedule of the timed operations, as a source of commands: `--countdown` with
//! announcements, `--then`, `--every`, `--if`. The rules live here once: a [`Schedule`] (what
//! is sent when), a [`Timeline`] per server (where that server is in the plan, and what a
//! signal does to it) and a [`Board`] (each step's results printed in the servers' order
//! through the one printer, the halt said once). The fleet's event loop walks them
//! ([`runner::timed`](crate::app::runner::timed), every server: RCON and the consoles,
//! `--remote` ones included, and a management server spoken to through its `Speech`). One
//! clock drives every server of a group, so a countdown on several servers runs in step.
//! Ctrl-C or `SIGTERM` (a service manager stopping the run, `kill`) during a countdown or a
//! wait cancels cleanly: nothing more is sent except `--cancel-announce`, one line names the
//! signal and the time left, and the exit status is 130 (Ctrl-C) or 143 (`SIGTERM`), the
//! runner's one signal policy
//! ([`Stop`](crate::app::interrupt::Stop)). A signal while a run's commands are being sent lets
//! that run finish first (a run is never cut in half).
//!
//! The clock is real time; the `RCON_CLOCK_SPEED` environment variable (a test hook) makes it
//! run N times faster, so tests can count down ten minutes in one second.

use std::time::{Duration, Instant};

use crate::app::exit::Exit;
use crate::app::interrupt::Signal;
use crate::app::print::output::{Printer, Record, Style};
use crate::app::print::stderr;
use crate::app::resolve::plan::Timing;

/// Standard announcement times (time left), used within the countdown when `--at` is not
/// given; the countdown's start is announced too.
pub const MARKS: [u64; 14] = [3600, 1800, 900, 600, 300, 120, 60, 30, 10, 5, 4, 3, 2, 1];

/// Time as the schedule sees it: real time, sped up by `RCON_CLOCK_SPEED`.
#[derive(Debug, Clone, Copy)]
pub struct ScheduleClock {
    start: Instant,
    speed: f64,
}

impl ScheduleClock {
    /// A clock starting now.
    pub fn new() -> ScheduleClock {
        let speed = std::env::var("RCON_CLOCK_SPEED")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .unwrap_or(1.0);
        ScheduleClock {
            start: Instant::now(),
            speed,
        }
    }

    /// Schedule time since the start.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed().mul_f64(self.speed)
    }

    /// The instant schedule time `at` comes.
    pub fn instant(&self, at: Duration) -> Instant {
        self.start + at.div_f64(self.speed)
    }
}

/// The announcement times (time left, longest first) for a countdown of `total`: the given
/// ones within it, else its start and the standard marks below it.
pub fn schedule(total: Duration, given: &[Duration]) -> Vec<Duration> {
    let mut times: Vec<Duration> = if given.is_empty() {
        std::iter::once(total)
            .chain(MARKS.iter().map(|s| Duration::from_secs(*s)))
            .filter(|t| *t <= total && !t.is_zero())
            .collect()
    } else {
        given
            .iter()
            .copied()
            .filter(|t| *t <= total && !t.is_zero())
            .collect()
    };
    times.sort_by(|a, b| b.cmp(a));
    times.dedup();
    times
}

/// Time left in words: `10 minutes`, `1 minute 30 seconds`, `1 hour`, `45 seconds`.
pub fn format_left(d: Duration) -> String {
    let secs = d.as_secs_f64().round() as u64;
    let unit = |n: u64, word: &str| format!("{n} {word}{}", if n == 1 { "" } else { "s" });
    let (h, m, s) = (secs / 3600, secs % 3600 / 60, secs % 60);
    let mut parts = Vec::new();
    if h > 0 {
        parts.push(unit(h, "hour"));
    }
    if m > 0 {
        parts.push(unit(m, "minute"));
    }
    if s > 0 || parts.is_empty() {
        parts.push(unit(s, "second"));
    }
    parts.join(" ")
}

/// The announcement for `left`: `{left}` and `{seconds}` filled in.
pub fn fill(template: &str, left: Duration) -> String {
    template
        .replace("{left}", &format_left(left))
        .replace("{seconds}", &left.as_secs_f64().round().to_string())
}

/// Where a step sits in a timed run, in the order output is printed: its round (`--every`),
/// then its place in the round. A cancellation comes after every step of its round.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, PartialOrd, Ord)]
pub struct StepId {
    round: u64,
    index: usize,
}

impl StepId {
    /// After every step: a server that has nothing more to do.
    pub const END: StepId = StepId {
        round: u64::MAX,
        index: usize::MAX,
    };
}

/// What a step is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StepKind {
    /// `list`, to count the players for `--if`.
    Count,
    /// An announcement of the countdown.
    Announce,
    /// A final command (`--then`, then the command line's).
    Final,
    /// `--cancel-announce`, after a signal cancelled the countdown.
    Cancel,
}

/// A step a server is due to take.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Step {
    /// Where it sits.
    pub id: StepId,
    /// Schedule time ([`ScheduleClock`]) at which it is due; at once when that has passed.
    pub at: Duration,
    /// The command to send.
    pub command: String,
    /// What it is.
    pub kind: StepKind,
}

/// Why a run ended early, said once for the whole group ([`Board::halt`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Halt {
    /// A signal during the countdown, with this much left; `announced`: `--cancel-announce`
    /// goes out.
    Cancelled {
        signal: Signal,
        left: Duration,
        announced: bool,
    },
    /// A signal between two runs of `--every` (or before the first).
    BeforeNextRun(Signal),
}

impl Halt {
    /// The signal behind it.
    pub fn signal(self) -> Signal {
        match self {
            Halt::Cancelled { signal, .. } | Halt::BeforeNextRun(signal) => signal,
        }
    }
}

/// The timed plan every server of a run walks: `--if`'s count, the announcements of
/// `--countdown` at their times, the final commands at its end, again every `--every`.
pub struct Schedule {
    countdown: Option<Duration>,
    /// Time left at each announcement, longest first, with the announcement as sent.
    announcements: Vec<(Duration, String)>,
    finals: Vec<String>,
    every: Option<Duration>,
    condition: Option<crate::app::resolve::modes::Condition>,
    cancel: Option<String>,
}

impl Schedule {
    /// The plan of `timing`, the command line's `commands` after `--then`'s.
    pub fn new(timing: &Timing, commands: &[String]) -> Schedule {
        let mut finals = timing.then.clone();
        finals.extend(commands.iter().cloned());
        let announcements = match (timing.countdown, &timing.announce) {
            (Some(total), Some(t)) => schedule(total, &timing.at)
                .into_iter()
                .map(|left| (left, fill(t, left)))
                .collect(),
            _ => Vec::new(),
        };
        Schedule {
            countdown: timing.countdown,
            announcements,
            finals,
            every: timing.every,
            condition: timing.condition,
            cancel: timing.cancel_announce.clone(),
        }
    }

    /// Every command the run can send, as it will be sent (an announcement with its time, the
    /// cancellation with the whole countdown left), to check before anything is sent.
    #[cfg_attr(not(feature = "mgmt"), allow(dead_code))]
    pub fn planned(&self) -> Vec<String> {
        let mut all = self.finals.clone();
        all.extend(self.announcements.iter().map(|(_, a)| a.clone()));
        if let (Some(total), Some(t)) = (self.countdown, &self.cancel) {
            all.push(fill(t, total));
        }
        all
    }

    fn steps(&self) -> usize {
        usize::from(self.condition.is_some()) + self.announcements.len() + self.finals.len()
    }

    fn first_final(&self) -> usize {
        usize::from(self.condition.is_some()) + self.announcements.len()
    }

    /// The start and the end of the countdown of `round`, in schedule time.
    fn round(&self, round: u64) -> (Duration, Duration) {
        let start = self.every.map_or(Duration::ZERO, |e| {
            e.saturating_mul(round.min(u32::MAX as u64) as u32)
        });
        (start, start + self.countdown.unwrap_or(Duration::ZERO))
    }

    /// The step at `index` of `round`.
    fn step(&self, round: u64, index: usize) -> Step {
        let (start, end) = self.round(round);
        let id = StepId { round, index };
        let announced = index.checked_sub(usize::from(self.condition.is_some()));
        let (at, command, kind) = match announced {
            None => (start, "list".to_string(), StepKind::Count),
            Some(a) if a < self.announcements.len() => {
                let (left, text) = &self.announcements[a];
                (end - *left, text.clone(), StepKind::Announce)
            }
            Some(a) => (
                end,
                self.finals[a - self.announcements.len()].clone(),
                StepKind::Final,
            ),
        };
        Step {
            id,
            at,
            command,
            kind,
        }
    }
}

/// One server's place in a [`Schedule`]: the step it is due to take. The blocking runner and the
/// event loop both walk a plan with it, so a countdown, `--every` and `--if` behave the same
/// on every route.
#[derive(Debug, Clone, Default)]
pub struct Timeline {
    round: u64,
    index: usize,
    /// The cancellation it is due to send, once a signal cancelled its countdown.
    cancelling: Option<Step>,
    over: bool,
}

impl Timeline {
    /// Where it is, for the order of output.
    pub fn position(&self) -> StepId {
        match (&self.cancelling, self.over) {
            (_, true) => StepId::END,
            (Some(c), false) => c.id,
            (None, false) => StepId {
                round: self.round,
                index: self.index,
            },
        }
    }

    /// Whether it has nothing more to do.
    pub fn is_over(&self) -> bool {
        self.over
    }

    /// Ends it here: its server was let go (it failed and will not be connected again).
    pub fn abandon(&mut self) {
        self.over = true;
    }

    /// Its next step at schedule time `now`, or `None` when it has nothing more to do; with
    /// the halt a `signal` caused here, if it caused one. A signal cancels a countdown (the
    /// cancellation announced, if there is one) and ends a run between two `--every` runs; once
    /// a run's final commands have begun they all go out (a run is never cut in half). The
    /// signal comes with the schedule time it was first seen: a step due by then still goes
    /// out, so every server of a group, whatever order they are asked in, makes the same
    /// choice.
    pub fn due(
        &mut self,
        plan: &Schedule,
        now: Duration,
        signal: Option<(Signal, Duration)>,
    ) -> (Option<Step>, Option<Halt>) {
        // A plan with no step (every --at time outside the countdown, nothing after it).
        if self.over || plan.steps() == 0 {
            self.over = true;
            return (None, None);
        }
        if let Some(c) = &self.cancelling {
            return (Some(c.clone()), None);
        }
        let step = plan.step(self.round, self.index);
        if let Some((signal, seen)) = signal
            && step.at > seen
        {
            let running_finals = step.kind == StepKind::Final && self.index > plan.first_final();
            let counting_down = plan.countdown.is_some()
                && (step.kind == StepKind::Announce
                    || (step.kind == StepKind::Final && self.index == plan.first_final()));
            if counting_down {
                let (_, end) = plan.round(self.round);
                let left = end.saturating_sub(now);
                let halt = Halt::Cancelled {
                    signal,
                    left,
                    announced: plan.cancel.is_some(),
                };
                let Some(t) = &plan.cancel else {
                    self.over = true;
                    return (None, Some(halt));
                };
                let cancel = Step {
                    id: StepId {
                        round: self.round,
                        index: usize::MAX,
                    },
                    at: now,
                    command: fill(t, left),
                    kind: StepKind::Cancel,
                };
                self.cancelling = Some(cancel.clone());
                return (Some(cancel), Some(halt));
            }
            if !running_finals {
                self.over = true;
                return (None, Some(Halt::BeforeNextRun(signal)));
            }
        }
        (Some(step), None)
    }

    /// The step it was due to take is done (answered or failed); for `--if`'s count, `players`
    /// is the count, `None` when it failed.
    pub fn completed(&mut self, plan: &Schedule, kind: StepKind, players: Option<usize>) {
        match kind {
            StepKind::Cancel => self.over = true,
            StepKind::Count => {
                let holds =
                    players.is_some_and(|n| plan.condition.as_ref().is_none_or(|c| c.holds(n)));
                if holds {
                    self.index += 1;
                } else {
                    self.next_round(plan);
                }
            }
            StepKind::Announce | StepKind::Final => {
                self.index += 1;
                if self.index >= plan.steps() {
                    self.next_round(plan);
                }
            }
        }
    }

    fn next_round(&mut self, plan: &Schedule) {
        if plan.every.is_some() {
            self.round += 1;
            self.index = 0;
        } else {
            self.over = true;
        }
    }
}

/// What one server's step came to, for the [`Board`].
pub enum Outcome {
    /// A command's answer (or failure), with the time from sending it to the end of its answer.
    Answer {
        command: String,
        result: anyhow::Result<String>,
        elapsed: Duration,
    },
    /// `--if` did not hold: this many players were online.
    NotRun(usize),
    /// `--if`'s count failed.
    CountFailed(anyhow::Error),
    /// The server could not be reached before the plan started, so it takes no part; its
    /// first step is the command its JSON record names.
    Unreachable {
        command: String,
        error: anyhow::Error,
    },
}

/// Prints the outcomes of a timed run, each step's in the servers' order once every server has
/// taken it (or gone past it), and says once why the run ended early; keeps the worst status.
pub struct Board {
    printer: Printer,
    names: Vec<String>,
    condition: Option<String>,
    at: Vec<StepId>,
    /// The lowest position of all (what holds output back), and how many servers are there.
    low: (StepId, usize),
    held: std::collections::BTreeMap<StepId, Vec<(usize, Outcome)>>,
    worst: Exit,
    halt: Option<Halt>,
}

impl Board {
    /// A board for `names` (labelled when there are several), JSON records with `json`.
    pub fn new(names: Vec<String>, plan: &Schedule, json: bool) -> Board {
        let style = if json { Style::Json } else { Style::Raw };
        Board {
            printer: Printer::new(style, false),
            at: vec![StepId::default(); names.len()],
            low: (StepId::default(), names.len()),
            names,
            condition: plan.condition.as_ref().map(ToString::to_string),
            held: std::collections::BTreeMap::new(),
            worst: Exit::Success,
            halt: None,
        }
    }

    /// Server `server` took step `id` to `outcome`.
    pub fn record(&mut self, server: usize, id: StepId, outcome: Outcome) {
        let exit = match &outcome {
            Outcome::Answer { result: Err(e), .. }
            | Outcome::CountFailed(e)
            | Outcome::Unreachable { error: e, .. } => crate::app::exit::exit_for(e),
            _ => Exit::Success,
        };
        self.worst = self.worst.max(exit);
        self.held.entry(id).or_default().push((server, outcome));
    }

    /// Server `server` is now at `position` ([`Timeline::position`]): every step all servers
    /// have gone past is printed.
    /// Positions only move forward; only the last server to leave the lowest one can print
    /// anything, so a step of a large group costs one scan of the positions, not one a server.
    pub fn moved(&mut self, server: usize, position: StepId) {
        let before = std::mem::replace(&mut self.at[server], position);
        if before == position || before != self.low.0 {
            return;
        }
        self.low.1 -= 1;
        if self.low.1 > 0 {
            return;
        }
        let low = self.at.iter().min().copied().unwrap_or(StepId::END);
        self.low = (low, self.at.iter().filter(|p| **p == low).count());
        while let Some(entry) = self.held.first_entry() {
            if *entry.key() >= low && low != StepId::END {
                return;
            }
            let mut outcomes = entry.remove();
            outcomes.sort_by_key(|(server, _)| *server);
            for (server, outcome) in outcomes {
                self.print(server, outcome);
            }
        }
    }

    /// Prints one outcome: a failure as its one error line, labelled `[NAME]` on several
    /// servers as fan-out labels it ([`crate::app::print::output::error`]), and in JSON also
    /// as its record, as fan-out writes one.
    fn print(&mut self, server: usize, outcome: Outcome) {
        use crate::app::print::output::{error, note};
        use crate::app::shared::command_failed;
        let name = &self.names[server];
        let label = (self.names.len() > 1).then_some(name.as_str());
        let (command, result, elapsed) = match outcome {
            Outcome::NotRun(n) => {
                let condition = self.condition.as_deref().unwrap_or("");
                let why =
                    format!("not run: {n} players online, and the condition is '{condition}'");
                return note("", label, &why);
            }
            Outcome::CountFailed(e) => {
                return error(label, &format!("cannot count players: {}", chain_of(&e)));
            }
            Outcome::Unreachable { command, error: e } => {
                let to_it = if label.is_some() { " to it" } else { "" };
                error(label, &format!("{}; nothing was sent{to_it}", chain_of(&e)));
                (command, Err(e), Duration::ZERO)
            }
            Outcome::Answer {
                command,
                result: Err(e),
                elapsed,
            } => {
                error(label, &command_failed("", &command, &chain_of(&e)));
                (command, Err(e), elapsed)
            }
            Outcome::Answer {
                command,
                result,
                elapsed,
            } => (command, result, elapsed),
        };
        let (text, ok) = match &result {
            Ok(t) => (t.clone(), true),
            Err(e) => (chain_of(e), false),
        };
        let reason = result
            .as_ref()
            .err()
            .and_then(|e| crate::app::exit::exit_for(e).reason());
        let record = Record {
            command: &command,
            raw: b"",
            ok,
            error: (!ok).then_some(text.as_str()),
            reason,
            elapsed,
            origin: None,
        };
        // A closed stdout does not stop the schedule (as before: it was never checked).
        let _ = self
            .printer
            .text_result(name, label.is_some(), &record, &text);
    }

    /// Says, once for the group, why the run ends early.
    pub fn halt(&mut self, halt: Halt) {
        if self.halt.is_some() {
            return;
        }
        self.halt = Some(halt);
        match halt {
            Halt::Cancelled {
                signal,
                left,
                announced,
            } => stderr!(
                "rcon: countdown cancelled ({}) with {} left; nothing more was sent{}",
                signal.name(),
                format_left(left),
                if announced {
                    " but the cancellation"
                } else {
                    ""
                }
            ),
            Halt::BeforeNextRun(signal) => {
                stderr!("rcon: stopped ({}) before the next run", signal.name())
            }
        }
    }

    /// Prints what is left; the run's status: the signal's when one ended it early, else the
    /// worst of its steps.
    pub fn finish(mut self) -> Exit {
        for server in 0..self.at.len() {
            self.moved(server, StepId::END);
        }
        match self.halt {
            Some(h) => h.signal().exit(),
            None => self.worst,
        }
    }
}

/// The players in `list`'s answer (`--if`'s count over RCON), or why there is no count.
pub fn count(result: anyhow::Result<String>) -> anyhow::Result<usize> {
    let text = result?;
    crate::app::shared::parse_list(&text)
        .map(|p| p.len())
        .ok_or_else(|| {
            crate::app::exit::fail(
                Exit::CommandFailed,
                format!("the `list` answer has no player count: {text}"),
            )
        })
}

/// An error and its causes on one line, as every error line words them.
fn chain_of(e: &anyhow::Error) -> String {
    crate::app::exit::chain(e.as_ref())
}

/// Server `server` could not be reached (connect or login) before the plan started: it takes
/// no part, its one error line (and JSON record) is printed with its first step's, and the
/// others go on; the run's status is at least its failure's. The one rule of a group whose
/// servers did not all answer, for both drivers.
pub fn left_out(
    board: &mut Board,
    plan: &Schedule,
    (server, timeline): (usize, &mut Timeline),
    error: anyhow::Error,
) {
    let command = match plan.steps() {
        0 => String::new(),
        _ => plan.step(0, 0).command,
    };
    board.record(
        server,
        StepId::default(),
        Outcome::Unreachable { command, error },
    );
    timeline.abandon();
    board.moved(server, timeline.position());
}

/// What a server's step came to.
pub enum Took {
    /// A command's answer, with the time from sending it to the end of its answer.
    Answer(anyhow::Result<String>, Duration),
    /// `--if`'s count.
    Players(anyhow::Result<usize>),
}

/// Takes `step`'s result on `server` to the board and the server's timeline: a count decides
/// the round, anything else is printed in its turn.
pub fn completed(
    board: &mut Board,
    plan: &Schedule,
    (server, timeline): (usize, &mut Timeline),
    step: Step,
    took: Took,
) {
    let players = match took {
        Took::Players(Ok(n)) => {
            if plan.condition.as_ref().is_some_and(|c| !c.holds(n)) {
                board.record(server, step.id, Outcome::NotRun(n));
            }
            Some(n)
        }
        Took::Players(Err(e)) => {
            board.record(server, step.id, Outcome::CountFailed(e));
            None
        }
        Took::Answer(result, elapsed) => {
            board.record(
                server,
                step.id,
                Outcome::Answer {
                    command: step.command,
                    result,
                    elapsed,
                },
            );
            None
        }
    };
    timeline.completed(plan, step.kind, players);
    board.moved(server, timeline.position());
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(v: &[u64]) -> Vec<Duration> {
        v.iter().map(|s| Duration::from_secs(*s)).collect()
    }

    fn secs_f(s: u64) -> Duration {
        Duration::from_secs(s)
    }

    /// A countdown of 60 s announced at 30 s and 10 s, then `stop`.
    fn countdown(cancel: Option<&str>) -> Schedule {
        let timing = Timing {
            countdown: Some(secs_f(60)),
            announce: Some("say {left}".into()),
            at: secs(&[30, 10]),
            cancel_announce: cancel.map(String::from),
            ..Timing::default()
        };
        Schedule::new(&timing, &["stop".to_string()])
    }

    /// Walks `line` to its end with nothing going wrong: each step's time and command.
    fn walk(plan: &Schedule, line: &mut Timeline, players: Option<usize>) -> Vec<(u64, String)> {
        let mut seen = Vec::new();
        while let (Some(step), None) = line.due(plan, Duration::ZERO, None) {
            seen.push((step.at.as_secs(), step.command.clone()));
            line.completed(plan, step.kind, players);
            if seen.len() > 20 {
                break;
            }
        }
        seen
    }

    #[test]
    fn a_timeline_walks_the_announcements_then_the_finals() {
        let plan = countdown(None);
        assert_eq!(plan.planned(), ["stop", "say 30 seconds", "say 10 seconds"]);
        let got = walk(&plan, &mut Timeline::default(), None);
        let want = [(30, "say 30 seconds"), (50, "say 10 seconds"), (60, "stop")];
        let want: Vec<(u64, String)> = want.iter().map(|(a, c)| (*a, c.to_string())).collect();
        assert_eq!(got, want);
    }

    #[test]
    fn a_signal_cancels_a_countdown_with_its_announcement_once() {
        let plan = countdown(Some("say off ({left})"));
        let mut line = Timeline::default();
        let (step, _) = line.due(&plan, Duration::ZERO, None);
        line.completed(&plan, step.unwrap().kind, None);
        // Ctrl-C 35 s in: 25 s left, the cancellation due at once, said once.
        let now = secs_f(35);
        let (step, halt) = line.due(&plan, now, Some((Signal::Interrupt, now)));
        let step = step.unwrap();
        assert_eq!(
            (step.kind, step.command.as_str()),
            (StepKind::Cancel, "say off (25 seconds)")
        );
        assert_eq!(
            halt,
            Some(Halt::Cancelled {
                signal: Signal::Interrupt,
                left: secs_f(25),
                announced: true
            })
        );
        assert_eq!(
            line.due(&plan, now, Some((Signal::Interrupt, now))),
            (Some(step.clone()), None)
        );
        line.completed(&plan, StepKind::Cancel, None);
        assert_eq!(
            line.due(&plan, now, Some((Signal::Interrupt, now))),
            (None, None)
        );
        assert_eq!(line.position(), StepId::END);
        // Without a cancellation: nothing more at all.
        let plan = countdown(None);
        let mut line = Timeline::default();
        let (step, halt) = line.due(
            &plan,
            Duration::ZERO,
            Some((Signal::Terminate, Duration::ZERO)),
        );
        assert_eq!(step, None);
        assert!(matches!(
            halt,
            Some(Halt::Cancelled {
                announced: false,
                ..
            })
        ));
    }

    /// A group's servers are asked one after another: one asked after the signal came must
    /// choose as one asked before it did, so a step due by the time the signal was first seen
    /// still goes out everywhere.
    #[test]
    fn a_step_due_when_the_signal_was_first_seen_still_goes_out() {
        let timing = Timing {
            every: Some(secs_f(60)),
            ..Timing::default()
        };
        let plan = Schedule::new(&timing, &["save-all".to_string()]);
        let mut line = Timeline::default();
        line.completed(&plan, StepKind::Final, None);
        // The second run was due at 60 s; the signal was seen at 61 s, this server asked at 62 s.
        let (step, halt) = line.due(&plan, secs_f(62), Some((Signal::Interrupt, secs_f(61))));
        assert_eq!((step.unwrap().at, halt), (secs_f(60), None));
        line.completed(&plan, StepKind::Final, None);
        let (step, halt) = line.due(&plan, secs_f(62), Some((Signal::Interrupt, secs_f(61))));
        assert_eq!(
            (step, halt),
            (None, Some(Halt::BeforeNextRun(Signal::Interrupt)))
        );
    }

    #[test]
    fn final_commands_that_began_all_go_out_and_every_stops_between_runs() {
        let timing = Timing {
            every: Some(secs_f(3600)),
            ..Timing::default()
        };
        let plan = Schedule::new(&timing, &["save-all".to_string(), "say saved".to_string()]);
        let mut line = Timeline::default();
        let (step, _) = line.due(&plan, Duration::ZERO, None);
        line.completed(&plan, step.unwrap().kind, None);
        // A signal after the run's first command: its second still goes out.
        let signal = Some((Signal::Interrupt, secs_f(1)));
        let (step, halt) = line.due(&plan, secs_f(1), signal);
        assert_eq!((step.unwrap().command.as_str(), halt), ("say saved", None));
        line.completed(&plan, StepKind::Final, None);
        // Then the next run does not begin.
        let (step, halt) = line.due(&plan, secs_f(1), signal);
        assert_eq!(
            (step, halt),
            (None, Some(Halt::BeforeNextRun(Signal::Interrupt)))
        );
    }

    #[test]
    fn if_runs_a_round_only_where_it_holds_and_counts_again_next_time() {
        let timing = Timing {
            every: Some(secs_f(60)),
            condition: Some(crate::app::resolve::modes::Condition::parse("players < 2").unwrap()),
            ..Timing::default()
        };
        let plan = Schedule::new(&timing, &["say hi".to_string()]);
        let mut line = Timeline::default();
        let (count, _) = line.due(&plan, Duration::ZERO, None);
        let count = count.unwrap();
        assert_eq!(
            (count.kind, count.command.as_str()),
            (StepKind::Count, "list")
        );
        // Three online: not this round; the next round counts again at 60 s.
        line.completed(&plan, StepKind::Count, Some(3));
        let (next, _) = line.due(&plan, Duration::ZERO, None);
        let next = next.unwrap();
        assert_eq!((next.kind, next.at), (StepKind::Count, secs_f(60)));
        // One online: the round runs. A failed count is a round not run.
        line.completed(&plan, StepKind::Count, Some(1));
        let (run, _) = line.due(&plan, secs_f(60), None);
        assert_eq!(run.unwrap().command, "say hi");
        line.completed(&plan, StepKind::Final, None);
        line.completed(&plan, StepKind::Count, None);
        assert_eq!(
            line.due(&plan, Duration::ZERO, None).0.unwrap().at,
            secs_f(180)
        );
    }

    #[test]
    fn schedules() {
        assert_eq!(
            schedule(Duration::from_secs(600), &[]),
            secs(&[600, 300, 120, 60, 30, 10, 5, 4, 3, 2, 1])
        );
        assert_eq!(
            schedule(Duration::from_secs(90), &[]),
            secs(&[90, 60, 30, 10, 5, 4, 3, 2, 1])
        );
        assert_eq!(
            schedule(Duration::from_secs(600), &secs(&[60, 300, 900, 60])),
            secs(&[300, 60])
        );
    }

    #[test]
    fn words_for_time_left() {
        assert_eq!(format_left(Duration::from_secs(600)), "10 minutes");
        assert_eq!(format_left(Duration::from_secs(60)), "1 minute");
        assert_eq!(format_left(Duration::from_secs(90)), "1 minute 30 seconds");
        assert_eq!(format_left(Duration::from_secs(3600)), "1 hour");
        assert_eq!(format_left(Duration::from_secs(1)), "1 second");
        assert_eq!(format_left(Duration::ZERO), "0 seconds");
        assert_eq!(
            fill(
                "say Restart in {left} ({seconds}s)",
                Duration::from_secs(30)
            ),
            "say Restart in 30 seconds (30s)"
        );
    }
}
