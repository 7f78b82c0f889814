//! The schedule of the timed operations, as a source of commands: `--countdown` with
//! announcements, `--then`, `--every`, `--if`, sent through a [`Runner`] (an RCON session,
//! `mode/timed.rs`, or a management client) and printed through the one printer. One
//! schedule drives every server of a group, so a countdown on several servers runs in step.
//! Ctrl-C during a countdown or a wait cancels cleanly: nothing more is sent except
//! `--cancel-announce`, and the exit status is 130. Ctrl-C while a run's commands are being
//! sent lets that run finish first (a run is never cut in half).
//!
//! The clock is real time; the `RCON_CLOCK_SPEED` environment variable (a test hook) makes it
//! run N times faster, so tests can count down ten minutes in one second.

use std::time::{Duration, Instant};

use crate::app::exit::Exit;
use crate::app::print::output::{Printer, Record, Style};
use crate::app::print::stderr;
use crate::app::resolve::plan::Timing;
use crate::app::runner::interrupt;

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

/// Catches Ctrl-C from now on (a second Ctrl-C still cancels the same way).
fn catch_interrupt() {
    interrupt::catch();
}

fn interrupted() -> bool {
    interrupt::raised()
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

    /// Sleeps until schedule time `at`; `false` if Ctrl-C came first.
    pub fn sleep_until(&self, at: Duration) -> bool {
        loop {
            if interrupted() {
                return false;
            }
            let now = self.elapsed();
            if now >= at {
                return true;
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

/// Runs `command` on every server in step (one thread each, so a slow or dead server delays
/// no other), then reports in the servers' order; the worst status.
fn on_all(printer: &mut Printer, runners: &mut [Box<dyn Runner>], command: &str) -> Exit {
    let label = runners.len() > 1;
    // Each result with the time from sending to the end of its answer (JSON's elapsed_ms).
    let timed = |r: &mut Box<dyn Runner>| {
        let start = Instant::now();
        let result = r.run(command);
        (result, start.elapsed())
    };
    let results: Vec<(anyhow::Result<String>, Duration)> = if let [only] = runners {
        vec![timed(only)]
    } else {
        std::thread::scope(|scope| {
            let running: Vec<_> = runners
                .iter_mut()
                .map(|r| scope.spawn(move || timed(r)))
                .collect();
            running
                .into_iter()
                .map(|t| {
                    t.join().unwrap_or_else(|_| {
                        (
                            Err(anyhow::anyhow!("the command's thread failed")),
                            Duration::ZERO,
                        )
                    })
                })
                .collect()
        })
    };
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
    for r in runners.iter_mut() {
        let name = r.name().to_string();
        r.connect()
            .map_err(|e| e.context(format!("{name}: nothing was sent")))?;
        for c in &planned {
            r.check(c)
                .map_err(|e| e.context(format!("{name}: '{c}': nothing was sent")))?;
        }
    }
    catch_interrupt();
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
                let mut ok = Vec::new();
                for (i, r) in runners.iter_mut().enumerate() {
                    match r.players() {
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
                &clock,
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
                Some(exit) => worst = worst.max(exit),
                None => return Ok(Exit::Interrupted),
            }
        }
        let Some(every) = timing.every else {
            return Ok(worst);
        };
        round_start += every;
        if !clock.sleep_until(round_start) {
            stderr!("rcon: stopped (Ctrl-C) before the next run");
            return Ok(Exit::Interrupted);
        }
    }
}

/// One countdown (if any) and the final commands; `None` when cancelled.
fn one_round(
    timing: &Timing,
    printer: &mut Printer,
    clock: &Clock,
    start: Duration,
    runners: &mut [Box<dyn Runner>],
    finals: &[String],
) -> Option<Exit> {
    let mut worst = Exit::Success;
    if let Some(total) = timing.countdown {
        for left in schedule(total, &timing.at) {
            if !clock.sleep_until(start + total - left) {
                return cancel(timing, printer, clock, start + total, runners);
            }
            if let Some(t) = &timing.announce {
                worst = worst.max(on_all(printer, runners, &fill(t, left)));
            }
        }
        if !clock.sleep_until(start + total) {
            return cancel(timing, printer, clock, start + total, runners);
        }
    }
    // Once the final commands start they all run: a run is never cut in half (`save-all`
    // without its `stop`); Ctrl-C is heard at the waits.
    for c in finals {
        worst = worst.max(on_all(printer, runners, c));
    }
    Some(worst)
}

fn cancel(
    timing: &Timing,
    printer: &mut Printer,
    clock: &Clock,
    end: Duration,
    runners: &mut [Box<dyn Runner>],
) -> Option<Exit> {
    let left = end.saturating_sub(clock.elapsed());
    stderr!(
        "rcon: countdown cancelled (Ctrl-C) with {} left; nothing more was sent{}",
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
    None
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
