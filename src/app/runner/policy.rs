//! The one policy a run of commands goes by, whatever their source (the command line, files
//! and stdin, the schedule) and whatever runs them (one session, several servers on the event
//! loop, the `--remote` client and its remote side, a management server). A [`Policy`] is
//! built once from the resolved [`BatchPolicy`] (or fan-out's [`FanoutPolicy`]) and every
//! runner asks it instead of deciding itself:
//!
//! - after a failure, go on or stop ([`Policy::goes_on_after`]: `--keep-going`, never past a
//!   refused login), the hint a stopped run gives ([`Policy::hint`]), and whether the files
//!   are checked before anything is sent ([`Policy::checks_ahead`]);
//! - the pause before the next command ([`Policy::pause_before`] for a blocking runner, cut
//!   short by Ctrl-C or `SIGTERM` at once; [`Policy::not_before`] on the event loop: `--delay`);
//! - the echo of a command before its output ([`Policy::echo`]: `--echo`);
//! - the one retry schedule with its one back-off ([`Policy::retries`], [`Policy::may_retry`]:
//!   `--retry`), and a first connection tried again under it ([`Retries::connect`]);
//! - what ran and what it adds up to ([`Tally`]), and what a signal made of a command under
//!   way ([`Tally::caught`]).

use std::time::{Duration, Instant};

use crate::app::exit::{Exit, fail};
use crate::app::interrupt::{self, Stop};
use crate::app::print::interrupted::Lines;
use crate::app::resolve::plan::{BatchPolicy, FanoutPolicy};

/// The decisions of a run: see the module.
#[derive(Debug, Clone, Copy)]
pub struct Policy {
    keep_going: bool,
    delay: Option<Duration>,
    echo: bool,
    retry: u32,
    resend_in_doubt: bool,
}

impl From<&BatchPolicy> for Policy {
    fn from(policy: &BatchPolicy) -> Policy {
        Policy {
            keep_going: policy.keep_going,
            delay: policy.delay,
            echo: policy.echo,
            retry: policy.retry,
            resend_in_doubt: policy.resend_in_doubt,
        }
    }
}

impl From<&FanoutPolicy> for Policy {
    fn from(policy: &FanoutPolicy) -> Policy {
        Policy {
            keep_going: policy.keep_going,
            delay: policy.delay,
            echo: policy.echo,
            retry: policy.retries,
            resend_in_doubt: false,
        }
    }
}

impl Policy {
    /// The policy of the remote side of `--remote`, which is sent `--keep-going` and `--delay`.
    pub fn remote_side(keep_going: bool, delay: Option<Duration>) -> Policy {
        Policy {
            keep_going,
            delay,
            echo: false,
            retry: 0,
            resend_in_doubt: false,
        }
    }

    /// Whether every line of the files is checked before the first command goes out (a typo
    /// in the last file sends nothing): not with `--keep-going`, which reports such a line
    /// when it comes and goes on.
    pub fn checks_ahead(&self) -> bool {
        !self.keep_going
    }

    /// Whether the run goes on after a failure with this exit status: with `--keep-going`,
    /// unless it is a refused login ([`Exit::passable`]).
    pub fn goes_on_after(&self, exit: Exit) -> bool {
        self.keep_going && exit.passable()
    }

    /// What the message of a failure that stopped the run adds when `--keep-going` would have
    /// gone on past it (`exit` is passable) and something was left to run.
    pub fn hint(passable: bool) -> &'static str {
        if passable {
            " (--keep-going continues past failures)"
        } else {
            ""
        }
    }

    /// `--delay` before the next command once one was sent (`any_sent`), cut short at once
    /// by a signal `stop` catches. Returns whether one did.
    pub fn pause_before(&self, any_sent: bool, stop: Option<&Stop>) -> bool {
        match self.delay {
            Some(delay) if any_sent => interrupt::pause(delay, stop),
            _ => false,
        }
    }

    /// `--delay` on the event loop: when command `index` (0 is the first) may be sent, `None`
    /// for at once.
    pub fn not_before(&self, index: usize) -> Option<Instant> {
        self.delay
            .filter(|_| index > 0)
            .map(|delay| Instant::now() + delay)
    }

    /// `--echo`: prints `command` through `print` before its output.
    pub fn echo<E>(
        &self,
        command: &str,
        print: impl FnOnce(&str) -> Result<(), E>,
    ) -> Result<(), E> {
        if self.echo { print(command) } else { Ok(()) }
    }

    /// `--retry N`: the one schedule of reconnects, with its one back-off.
    pub fn retries(&self) -> Retries {
        Retries::new(self.retry)
    }

    /// Whether a run that lost its connection may reconnect and go on: `--retry` has tries
    /// left and `--keep-going` does not pass the failure instead.
    pub fn may_retry(&self, retries: &Retries) -> bool {
        !self.keep_going && retries.left() > 0
    }

    /// `--resend-in-doubt`: a line that went out without its whole answer may be sent again.
    pub fn resends_in_doubt(&self) -> bool {
        self.resend_in_doubt
    }
}

/// A command under way when a signal came: [`Tally::caught`].
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Caught {
    /// Answered in full first: it counts as run.
    Ran,
    /// Sent, not answered in full: it may or may not have run.
    InFlight,
    /// Never went out.
    NotSent,
}

/// The first pause of `--retry`; it doubles for each further one, up to
/// [`rconsole::engine::MAX_RETRY_PAUSE`].
pub const RETRY_BACKOFF: Duration = Duration::from_millis(200);

/// What is left of `--retry N`: the one count and schedule of every runner that retries (the
/// event loop's targets take the same [`RETRY_BACKOFF`] through `FleetOptions::backoff`).
#[derive(Debug, Clone, Copy, Default)]
pub struct Retries {
    allowed: u32,
    used: u32,
}

impl Retries {
    /// `allowed` retries after the first attempt.
    pub fn new(allowed: u32) -> Self {
        Retries { allowed, used: 0 }
    }

    /// Counts one more retry and returns the pause before it (200 ms, 400 ms, 800 ms... up to
    /// 5 s), or `None` when every retry is used.
    pub fn next(&mut self) -> Option<Duration> {
        if self.used >= self.allowed {
            return None;
        }
        self.used += 1;
        Some(rconsole::engine::retry_pause(RETRY_BACKOFF, self.used))
    }

    /// Retries used so far.
    pub fn used(&self) -> u32 {
        self.used
    }

    /// Retries `--retry N` allows in all.
    pub fn allowed(&self) -> u32 {
        self.allowed
    }

    /// Retries not used yet.
    pub fn left(&self) -> u32 {
        self.allowed - self.used
    }

    /// The warning before the pause of the retry just counted: `WHY; retrying in 400ms
    /// (retry 2 of 3)`.
    pub fn warning(&self, why: &str, delay: Duration) -> String {
        format!(
            "{why}; retrying in {} (retry {} of {})",
            rconsole::format_duration(delay),
            self.used,
            self.allowed
        )
    }

    /// The warning before the pause of a batch's reconnect just counted: `WHY; reconnecting in
    /// 400ms (1 retry left)`.
    pub fn reconnecting(&self, why: &str, pause: Duration) -> String {
        let left = self.left();
        format!(
            "{why}; reconnecting in {} ({left} retr{} left)",
            rconsole::format_duration(pause),
            if left == 1 { "y" } else { "ies" }
        )
    }

    /// A first connection, `open`ed again while `worth` says its error may pass and retries
    /// are left, one warning (the error in the words of `chain`) before each pause; a pause
    /// that `stopped` cuts short (Ctrl-C or `SIGTERM`: [`interrupt::interrupted`]) ends the
    /// tries with `cancelled`.
    pub fn connect<T, E>(
        mut self,
        mut open: impl FnMut() -> Result<T, E>,
        (worth, chain): (impl Fn(&E) -> bool, impl Fn(&E) -> String),
        mut stopped: impl FnMut() -> bool,
        cancelled: impl FnOnce() -> E,
    ) -> Result<T, E> {
        loop {
            match open() {
                Err(err) if worth(&err) => {
                    let Some(delay) = self.next() else {
                        return Err(err);
                    };
                    crate::app::print::output::warning(&self.warning(&chain(&err), delay));
                    if interrupt::pause_until(delay, &mut stopped) {
                        return Err(cancelled());
                    }
                }
                other => return other,
            }
        }
    }
}

/// The running totals over every input of one invocation.
#[derive(Debug, Default)]
pub struct Tally {
    /// Commands and unsendable lines seen.
    pub lines: u64,
    /// Commands sent.
    pub sent: u64,
    /// Lines that failed (not sent, or failed on the server or the connection).
    pub failed: u64,
    /// The exit status the failures add up to.
    pub worst: Option<Exit>,
    /// `--retry`: reconnects made mid-input so far, and how many are left.
    pub retries: Retries,
    /// The lines that ran (answered in full), by input, for the report of a stopped run.
    pub ran_at: Vec<Lines>,
}

impl Tally {
    /// A failure with this exit status: counted, and the worst one kept.
    pub fn count_failure(&mut self, exit: Exit) {
        self.failed += 1;
        self.worst = Some(self.worst.map_or(exit, |w| w.max(exit)));
    }

    /// What a signal that came while a command ran makes of it: answered in full before the
    /// signal, it ran (and is counted); otherwise it went out and is in flight, or (no
    /// connection yet) it never went out.
    pub fn caught(&mut self, answered: bool, sent: bool) -> Caught {
        if answered {
            self.sent += 1;
            Caught::Ran
        } else if sent {
            Caught::InFlight
        } else {
            Caught::NotSent
        }
    }

    /// The exit status for the whole run, with a summary message when anything failed.
    pub fn finish(&self) -> anyhow::Result<Exit> {
        match self.worst {
            None => Ok(Exit::Success),
            Some(exit) => Err(fail(
                exit,
                format!(
                    "{} of {} command{} failed (see above)",
                    self.failed,
                    self.lines,
                    if self.lines == 1 { "" } else { "s" }
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(keep_going: bool, delay: Option<Duration>) -> Policy {
        Policy::remote_side(keep_going, delay)
    }

    #[test]
    fn keep_going_passes_every_failure_but_a_refused_login() {
        assert!(!policy(false, None).goes_on_after(Exit::CommandFailed));
        assert!(policy(true, None).goes_on_after(Exit::CommandFailed));
        assert!(policy(true, None).goes_on_after(Exit::Connection));
        assert!(!policy(true, None).goes_on_after(Exit::Login));
    }

    #[test]
    fn the_delay_is_before_every_command_but_the_first() {
        let p = policy(false, Some(Duration::from_secs(60)));
        assert_eq!(p.not_before(0), None);
        assert!(p.not_before(1).is_some());
        assert_eq!(policy(false, None).not_before(1), None);
        // Nothing sent yet: no pause.
        assert!(!p.pause_before(false, None));
    }

    #[test]
    fn a_retry_needs_tries_left_and_no_keep_going() {
        let p = Policy {
            retry: 1,
            ..policy(false, None)
        };
        let mut retries = p.retries();
        assert!(p.may_retry(&retries));
        assert!(retries.next().is_some());
        assert!(!p.may_retry(&retries));
        let kept = Policy {
            keep_going: true,
            ..p
        };
        assert!(!kept.may_retry(&kept.retries()));
    }

    #[test]
    fn retries_double_from_200ms_up_to_5s_and_stop_at_n() {
        let mut r = Retries::new(7);
        let pauses: Vec<u128> = std::iter::from_fn(|| r.next())
            .map(|d| d.as_millis())
            .collect();
        assert_eq!(pauses, [200, 400, 800, 1600, 3200, 5000, 5000]);
        assert_eq!((r.used(), r.left(), r.allowed()), (7, 0, 7));
        assert_eq!(Retries::new(0).next(), None);
    }

    #[test]
    fn the_warnings_say_which_retry_and_what_is_left() {
        let mut r = Retries::new(2);
        let pause = r.next().unwrap();
        assert_eq!(
            r.warning("refused", pause),
            "refused; retrying in 200ms (retry 1 of 2)"
        );
        assert_eq!(
            r.reconnecting("x:3: lost", pause),
            "x:3: lost; reconnecting in 200ms (1 retry left)"
        );
        let pause = r.next().unwrap();
        assert_eq!(
            r.reconnecting("lost", pause),
            "lost; reconnecting in 400ms (0 retries left)"
        );
    }

    #[test]
    fn a_connect_is_tried_again_while_worth_it_and_retries_are_left() {
        let mut calls = 0;
        let got: Result<u32, &str> = Retries::new(1).connect(
            || {
                calls += 1;
                Err("refused")
            },
            (|_: &&str| true, |e: &&str| e.to_string()),
            || false,
            || "cancelled",
        );
        assert_eq!((got, calls), (Err("refused"), 2));
        let mut calls = 0;
        let got: Result<u32, &str> = Retries::new(3).connect(
            || {
                calls += 1;
                Err("login refused")
            },
            (|_: &&str| false, |e: &&str| e.to_string()),
            || false,
            || "cancelled",
        );
        assert_eq!((got, calls), (Err("login refused"), 1));
        // A signal during the pause: the tries end there.
        let mut calls = 0;
        let got: Result<u32, &str> = Retries::new(3).connect(
            || {
                calls += 1;
                Err("refused")
            },
            (|_: &&str| true, |e: &&str| e.to_string()),
            || true,
            || "cancelled",
        );
        assert_eq!((got, calls), (Err("cancelled"), 1));
    }

    #[test]
    fn a_signal_counts_a_command_by_how_far_it_got() {
        let mut tally = Tally::default();
        assert_eq!(tally.caught(false, true), Caught::InFlight);
        assert_eq!(tally.caught(false, false), Caught::NotSent);
        assert_eq!(tally.sent, 0);
        assert_eq!(tally.caught(true, true), Caught::Ran);
        assert_eq!(tally.sent, 1);
    }

    #[test]
    fn the_tally_keeps_the_worst_failure() {
        let mut tally = Tally::default();
        tally.count_failure(Exit::CommandFailed);
        tally.count_failure(Exit::Login);
        tally.count_failure(Exit::CommandFailed);
        assert_eq!(
            (tally.failed, tally.worst),
            (3, Some(Exit::CommandFailed.max(Exit::Login)))
        );
    }
}
