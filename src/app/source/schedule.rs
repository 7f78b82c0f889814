//! The schedule of the timed operations, as a source of commands: `--countdown` with
//! announcements, `--then`, `--every`, `--if`, sent through a [`Runner`] (an RCON session,
//! `mode/timed.rs`, or a management client) and printed through the one printer. One
//! schedule drives every server of a group, so a countdown on several servers runs in step.
//! Ctrl-C or `SIGTERM` (a service manager stopping the run, `kill`) during a countdown or a
//! wait cancels cleanly: nothing more is sent except `--cancel-announce`, one line names the
//! signal and the time left, and the exit status is 130 (Ctrl-C) or 143 (`SIGTERM`), the
//! runner's one signal policy ([`Stop`]). A signal while a run's commands are being sent lets
//! that run finish first (a run is never cut in half).
//!
//! The clock is real time; the `RCON_CLOCK_SPEED` environment variable (a test hook) makes it
//! run N times faster, so tests can count down ten minutes in one second.

use std::time::{Duration, Instant};

use crate::app::exit::Exit;
use crate::app::print::output::{Printer, Record, Style};
use crate::app::print::stderr;
use crate::app::resolve::plan::Timing;
use crate::app::runner::at_once;
use crate::app::runner::interrupt::{self, Signal, Stop};

/// Standard announcement times (time left), used within the countdown when `--at` is not
/// given; the countdown's start is announced too.
pub const MARKS: [u64; 14] = [3600, 1800, 900, 600, 300, 120, 60, 30, 10, 5, 4, 3, 2, 1];

/// What a countdown talks to: an RCON session or a management client.
pub trait Runner: Send {
    /// The server's name for output.
    fn name(&self) -> &str;
    /// Runs one command; its output as text.
    fn run(&mut self, command: &str) -> anyhow::Result<String>;
    /// How many players are online (for `--if`).
    fn players(&mut self) -> anyhow::Result<usize>;
    /// Connects now, so an unreachable server fails the run before anything is announced.
    fn connect(&mut self) -> anyhow::Result<()> {
        Ok(())
    }
    /// Checks a command before anything is sent: a management method's words against the
    /// server's schema (RCON commands are the server's to judge).
    fn check(&self, _command: &str) -> anyhow::Result<()> {
        Ok(())
    }
}

/// The signal that cancels the schedule, if one came: Ctrl-C or `SIGTERM` while the run's
/// [`Stop`] guard lives, or Ctrl-C alone where the guard could not be installed.
fn stopped(stop: Option<&Stop>) -> Option<Signal> {
    match stop {
        Some(stop) => stop.received(),
        None => interrupt::raised().then_some(Signal::Interrupt),
    }
}

/// Time as the schedule sees it: real time, sped up by `RCON_CLOCK_SPEED`.
pub struct Clock {
    start: Instant,
    speed: f64,
}

impl Clock {
    /// A clock starting now.
    pub fn new() -> Clock {
        let speed = std::env::var("RCON_CLOCK_SPEED")
            .ok()
            .and_then(|s| s.parse::<f64>().ok())
            .filter(|s| s.is_finite() && *s > 0.0)
            .unwrap_or(1.0);
        Clock {
            start: Instant::now(),
            speed,
        }
    }

    /// Schedule time since the start.
    pub fn elapsed(&self) -> Duration {
        self.start.elapsed().mul_f64(self.speed)
    }

    /// Sleeps until schedule time `at`; the signal, if one came first.
    pub fn sleep_until(&self, at: Duration, stop: Option<&Stop>) -> Option<Signal> {
        loop {
            if let Some(signal) = stopped(stop) {
                return Some(signal);
            }
            let now = self.elapsed();
            if now >= at {
                return None;
            }
            let left = (at - now).div_f64(self.speed);
            std::thread::sleep(left.min(Duration::from_millis(20)));
        }
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

/// Prints one command's result through the printer (the server named with several servers);
/// a failure is said on stderr.
fn report(
    printer: &mut Printer,
    runner: &dyn Runner,
    label: bool,
    command: &str,
    (result, elapsed): &(anyhow::Result<String>, Duration),
) {
    let (text, ok) = match result {
        Ok(t) => (t.clone(), true),
        Err(e) => (format!("{e:#}"), false),
    };
    if !ok && printer.style() != Style::Json {
        stderr!("rcon: error: {}: '{command}': {text}", runner.name());
        return;
    }
    let reason = result
        .as_ref()
        .err()
        .and_then(|e| crate::app::exit::exit_for(e).reason());
    let record = Record {
        command,
        raw: b"",
        ok,
        error: (!ok).then_some(text.as_str()),
        reason,
        elapsed: *elapsed,
        origin: None,
    };
    // A closed stdout does not stop the schedule (as before: it was never checked).
    let _ = printer.text_result(runner.name(), label, &record, &text);
}

/// Runs `command` on every server in step (at once, on at most [`at_once::MAX_WORKERS`]
/// threads, so a slow or dead server delays no other), then reports in the servers' order; the
/// worst status.
fn on_all(printer: &mut Printer, runners: &mut [Box<dyn Runner>], command: &str) -> Exit {
    let label = runners.len() > 1;
    // Each result with the time from sending to the end of its answer (JSON's elapsed_ms).
    let results: Vec<(anyhow::Result<String>, Duration)> = at_once::each(runners, |r| {
        let start = Instant::now();
        let result = r.run(command);
        (result, start.elapsed())
    })
    .into_iter()
    .map(|r| {
        r.unwrap_or_else(|| {
            (
                Err(anyhow::anyhow!("the command's thread failed")),
                Duration::ZERO,
            )
        })
    })
    .collect();
    let mut worst = Exit::Success;
    for (r, result) in runners.iter().zip(&results) {
        report(printer, r.as_ref(), label, command, result);
        if let (Err(e), _) = result {
            worst = worst.max(crate::app::exit::exit_for(e));
        }
    }
    worst
}

/// Runs the timed plan: `--if`, `--countdown` with its announcements, `--then` and the commands,
/// again every `--every`.
pub fn run(
    timing: &Timing,
    mut runners: Vec<Box<dyn Runner>>,
    commands: &[String],
) -> anyhow::Result<Exit> {
    let condition = timing.condition;
    let mut finals: Vec<String> = timing.then.clone();
    finals.extend(commands.iter().cloned());
    // Every command the run can send, as it will be sent (an announcement with its time).
    let mut planned: Vec<String> = finals.clone();
    if let (Some(total), Some(t)) = (timing.countdown, &timing.announce) {
        planned.extend(
            schedule(total, &timing.at)
                .iter()
                .map(|left| fill(t, *left)),
        );
    }
    if let (Some(total), Some(t)) = (timing.countdown, &timing.cancel_announce) {
        planned.push(fill(t, total));
    }
    // Every server connects, and every command is checked, before anything is sent to any;
    // the servers at once, the first failure in their order reported. What they teach about
    // their servers is written once for all of them, not once each.
    crate::app::learned::defer(true);
    let ready = at_once::each(&mut runners, |r| -> anyhow::Result<()> {
        let name = r.name().to_string();
        r.connect()
            .map_err(|e| e.context(format!("{name}: nothing was sent")))?;
        for c in &planned {
            r.check(c)
                .map_err(|e| e.context(format!("{name}: '{c}': nothing was sent")))?;
        }
        Ok(())
    });
    crate::app::learned::defer(false);
    for (r, result) in runners.iter().zip(ready) {
        result.unwrap_or_else(|| {
            Err(anyhow::anyhow!(
                "{}: nothing was sent: the connecting thread failed",
                r.name()
            ))
        })?;
    }
    // Ctrl-C and SIGTERM cancel from now on; where the guard cannot be installed, Ctrl-C
    // alone does (SIGTERM then ends the process, as by default).
    let stop = Stop::catch();
    if stop.is_none() {
        interrupt::catch();
    }
    let stop = stop.as_ref();
    // The results' one writer: JSON records with --json, else the answers as they came.
    let style = if timing.json { Style::Json } else { Style::Raw };
    let mut printer = Printer::new(style, false);
    let clock = Clock::new();
    let mut worst = Exit::Success;
    let mut round_start = Duration::ZERO;
    loop {
        let selected: Vec<usize> = match &condition {
            None => (0..runners.len()).collect(),
            Some(c) => {
                // Every server's count at once; said in the servers' order.
                let counts = at_once::each(&mut runners, |r| r.players());
                let mut ok = Vec::new();
                for (i, (r, count)) in runners.iter().zip(counts).enumerate() {
                    let count =
                        count.unwrap_or_else(|| Err(anyhow::anyhow!("the counting thread failed")));
                    match count {
                        Ok(n) if c.holds(n) => ok.push(i),
                        Ok(n) => stderr!(
                            "rcon: {}: not run: {n} players online, and the condition is '{c}'",
                            r.name()
                        ),
                        Err(e) => {
                            stderr!("rcon: error: {}: cannot count players: {e:#}", r.name());
                            worst = worst.max(crate::app::exit::exit_for(&e));
                        }
                    }
                }
                ok
            }
        };
        if !selected.is_empty() {
            // Keep the order; run the round on the servers where the condition held.
            let mut round: Vec<Box<dyn Runner>> = Vec::new();
            let mut rest: Vec<(usize, Box<dyn Runner>)> = Vec::new();
            for (i, r) in runners.drain(..).enumerate() {
                if selected.contains(&i) {
                    round.push(r);
                } else {
                    rest.push((i, r));
                }
            }
            let result = one_round(
                timing,
                &mut printer,
                (&clock, stop),
                round_start,
                &mut round,
                &finals,
            );
            // Put them back in order.
            let mut all: Vec<(usize, Box<dyn Runner>)> =
                selected.iter().copied().zip(round).chain(rest).collect();
            all.sort_by_key(|(i, _)| *i);
            runners = all.into_iter().map(|(_, r)| r).collect();
            match result {
                Ok(exit) => worst = worst.max(exit),
                Err(signal) => return Ok(signal.exit()),
            }
        }
        let Some(every) = timing.every else {
            return Ok(worst);
        };
        round_start += every;
        if let Some(signal) = clock.sleep_until(round_start, stop) {
            stderr!("rcon: stopped ({}) before the next run", signal.name());
            return Ok(signal.exit());
        }
    }
}

/// One countdown (if any) and the final commands; the signal when one cancelled it.
fn one_round(
    timing: &Timing,
    printer: &mut Printer,
    (clock, stop): (&Clock, Option<&Stop>),
    start: Duration,
    runners: &mut [Box<dyn Runner>],
    finals: &[String],
) -> Result<Exit, Signal> {
    let mut worst = Exit::Success;
    if let Some(total) = timing.countdown {
        let end = start + total;
        for left in schedule(total, &timing.at) {
            if let Some(signal) = clock.sleep_until(end - left, stop) {
                return Err(cancel(timing, printer, (clock, signal), end, runners));
            }
            if let Some(t) = &timing.announce {
                worst = worst.max(on_all(printer, runners, &fill(t, left)));
            }
        }
        if let Some(signal) = clock.sleep_until(end, stop) {
            return Err(cancel(timing, printer, (clock, signal), end, runners));
        }
    }
    // Once the final commands start they all run: a run is never cut in half (`save-all`
    // without its `stop`); a signal is heard at the waits.
    for c in finals {
        worst = worst.max(on_all(printer, runners, c));
    }
    Ok(worst)
}

/// Says that `signal` cancelled the countdown ending at `end` and sends `--cancel-announce`.
fn cancel(
    timing: &Timing,
    printer: &mut Printer,
    (clock, signal): (&Clock, Signal),
    end: Duration,
    runners: &mut [Box<dyn Runner>],
) -> Signal {
    let left = end.saturating_sub(clock.elapsed());
    stderr!(
        "rcon: countdown cancelled ({}) with {} left; nothing more was sent{}",
        signal.name(),
        format_left(left),
        if timing.cancel_announce.is_some() {
            " but the cancellation"
        } else {
            ""
        }
    );
    if let Some(t) = &timing.cancel_announce {
        on_all(printer, runners, &fill(t, left));
    }
    signal
}

#[cfg(test)]
mod tests {
    use super::*;

    fn secs(v: &[u64]) -> Vec<Duration> {
        v.iter().map(|s| Duration::from_secs(*s)).collect()
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
