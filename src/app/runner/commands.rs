//! The runner policy for a list of commands on one server's
//! [`Session`](super::session::Session), whatever speaks to it (RCON, another console, a
//! management server's console commands): the command line's `-c` commands and words. One
//! loop applies the one [`Policy`]:
//! `--delay` between commands, `--echo` before each, the first failure stops the run (nothing
//! later is sent, and the error says how many were not) unless `--keep-going`, which reports
//! each failure and counts it; Ctrl-C or `SIGTERM` stops the commands with the one line of
//! [`crate::app::print::interrupted`] (what ran, what was in flight, how many were not sent).
//! The target runs one command, prints its record through the sink and words its failures.

use std::sync::Arc;
use std::sync::atomic::AtomicBool;

use crate::app::exit::{Exit, fail};
use crate::app::interrupt::{Signal, Stop};
use crate::app::print::interrupted::{InFlight, Interrupted};
use crate::app::resolve::plan::BatchPolicy;
use crate::app::runner::policy::{Caught, Policy, Tally};

/// What became of one command on a [`Target`].
#[derive(Debug)]
pub struct Ran {
    /// It went out (false when refused before sending or no connection could be made).
    pub sent: bool,
    /// Its answer arrived complete (it may still have failed: a parse error, a refused call).
    pub answered: bool,
    /// Why it failed, if it did.
    pub failure: Option<Failure>,
}

/// A failed command, worded by its target.
#[derive(Debug)]
pub struct Failure {
    /// The exit status it adds to the run.
    pub exit: Exit,
    /// The message, with the command named as the target names it.
    pub message: String,
    /// The target's own rule: the run goes on after it without `--keep-going` (a management
    /// call the server refused is its answer, as the console takes it).
    pub goes_on: bool,
}

/// One server that runs commands one at a time and prints each one's record.
pub trait Target {
    /// Runs `command` and prints its record; `last`: nothing follows on this connection, so
    /// the answer may be ended by ending the connection. Only a failed write to stdout is an
    /// `Err`.
    fn run(&mut self, command: &str, last: bool) -> std::io::Result<Ran>;
    /// Prints `command` before its output (`--echo`).
    fn echo(&mut self, command: &str) -> std::io::Result<()>;
    /// Makes a wait for an answer abandon the command when `flag` turns true.
    fn set_cancel(&mut self, flag: Arc<AtomicBool>);
    /// The message of a failure that stops the run, `later` commands not sent after it (the
    /// failed one included when it never went out), `rest` what else was not run.
    fn stopped_here(&self, failure: &Failure, sent: bool, later: usize, rest: Rest) -> String;
}

/// What was still to run after the commands.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rest {
    /// Nothing.
    Nothing,
    /// Files or stdin.
    BatchInput,
    /// The console.
    Console,
}

/// RCON's wording of a failure that stops the commands: `...; 2 later commands and the batch
/// input not sent (--keep-going continues past failures)`.
pub fn stopped_here(failure: &Failure, sent: bool, later: usize, rest: Rest) -> String {
    let passable = failure.exit.passable();
    not_sent_after(&failure.message, (sent, later), rest, passable)
}

/// A failure's `message` that stops a run, with what that left unsent: `later` commands (the
/// failed one among them unless it was `sent`) and the `rest`; the hint about `--keep-going`
/// only where it would have gone on (`passable`) and something was left to run. The one
/// wording of every runner that stops at a failure (one server's, each of a fan-out's).
pub fn not_sent_after(
    message: &str,
    (sent, later): (bool, usize),
    rest: Rest,
    passable: bool,
) -> String {
    let mut message = message.to_string();
    let batch = rest == Rest::BatchInput;
    let and_batch = if batch { " and the batch input" } else { "" };
    if later > 0 {
        let which = if sent { " later" } else { "" };
        message.push_str(&format!(
            "; {later}{which} {}{and_batch} not sent",
            if later == 1 { "command" } else { "commands" }
        ));
    } else if batch {
        message.push_str("; the batch input was not sent");
    }
    // Only something after the failed command could have gone on, and never after a refused
    // login.
    let after = later - usize::from(!sent);
    message.push_str(Policy::hint((after > 0 || batch) && passable));
    message
}

/// Runs `commands` in order on `target` under `policy`, counting in `tally`; `rest` is what
/// runs after them. `signals`: Ctrl-C and `SIGTERM` stop the commands with the one line that
/// says what ran (else they keep their effect).
pub fn run(
    target: &mut dyn Target,
    commands: &[String],
    rest: Rest,
    policy: &BatchPolicy,
    tally: &mut Tally,
    signals: bool,
) -> anyhow::Result<()> {
    if commands.is_empty() {
        return Ok(());
    }
    let stop = if signals { Stop::catch() } else { None };
    match run_until(target, commands, rest, policy, tally, stop.as_ref())? {
        None => Ok(()),
        Some(halted) => Err(halted.interrupted(commands, rest, tally, None).error()),
    }
}

/// Where a signal stopped the commands.
#[derive(Debug, Clone, Copy)]
pub struct Halted {
    /// Which.
    pub signal: Signal,
    /// The command that was in flight (its index), if one was.
    pub in_flight: Option<usize>,
    /// The first command not sent (its index).
    pub next: usize,
}

impl Halted {
    /// What it stopped, the one account ([`Interrupted`]); `server` names the target when it
    /// is one of several (the caller then adds up every server's).
    pub fn interrupted(
        &self,
        commands: &[String],
        rest: Rest,
        tally: &Tally,
        server: Option<&str>,
    ) -> Interrupted {
        let mut stopped = Interrupted {
            not_sent: (commands.len() - self.next) as u64,
            not_run: match rest {
                Rest::Nothing => None,
                Rest::BatchInput => Some("the batch input"),
                Rest::Console => Some("the console"),
            },
            ..Interrupted::by(self.signal).ran(tally.sent, &[])
        };
        stopped.in_flight.extend(self.in_flight.map(|i| InFlight {
            server: server.map(str::to_string),
            at: match server {
                Some(_) => String::new(),
                None => command_label(i, commands.len()),
            },
            command: commands[i].clone(),
        }));
        stopped
    }
}

/// [`run`] with the signals caught by the caller (`stop`, shared by several servers' threads):
/// `Some` when a signal stopped the commands, for the caller to report.
pub fn run_until(
    target: &mut dyn Target,
    commands: &[String],
    rest: Rest,
    policy: &BatchPolicy,
    tally: &mut Tally,
    stop: Option<&Stop>,
) -> anyhow::Result<Option<Halted>> {
    if let Some(stop) = stop {
        target.set_cancel(stop.flag());
    }
    let policy = Policy::from(policy);
    let stopped = || stop.and_then(Stop::received);
    let halt = |signal: Signal, in_flight: Option<usize>, next: usize| {
        Ok(Some(Halted {
            signal,
            in_flight,
            next,
        }))
    };
    for (i, command) in commands.iter().enumerate() {
        policy.pause_before(tally.sent > 0, stop);
        if let Some(signal) = stopped() {
            return halt(signal, None, i);
        }
        tally.lines += 1;
        policy.echo(command, |c| target.echo(c))?;
        let last = i + 1 == commands.len() && rest == Rest::Nothing;
        let ran = target.run(command, last)?;
        if let Some(signal) = stopped() {
            return match tally.caught(ran.answered, ran.sent) {
                Caught::Ran => halt(signal, None, i + 1),
                Caught::InFlight => halt(signal, Some(i), i + 1),
                Caught::NotSent => halt(signal, None, i),
            };
        }
        if ran.sent {
            tally.sent += 1;
        }
        let Some(failure) = ran.failure else {
            continue;
        };
        tally.count_failure(failure.exit);
        if policy.goes_on_after(failure.exit) || failure.goes_on {
            crate::app::print::output::error(None, &failure.message);
            continue;
        }
        // What was not sent: this command too when it never went out, and every later one.
        let later = commands.len() - i - 1 + usize::from(!ran.sent);
        return Err(fail(
            failure.exit,
            target.stopped_here(&failure, ran.sent, later, rest),
        ));
    }
    Ok(None)
}

/// How the report names a command of the command line: `-c` commands and the trailing words
/// alike, by position when there are several.
fn command_label(i: usize, count: usize) -> String {
    if count == 1 {
        "the command".to_string()
    } else {
        format!("command {} of {count}", i + 1)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn failure() -> Failure {
        Failure {
            exit: Exit::CommandFailed,
            message: "command 'x': bad".into(),
            goes_on: false,
        }
    }

    #[test]
    fn rcon_words_what_a_failure_left_unsent() {
        let f = failure();
        assert_eq!(stopped_here(&f, true, 0, Rest::Nothing), "command 'x': bad");
        assert_eq!(
            stopped_here(&f, true, 2, Rest::Nothing),
            "command 'x': bad; 2 later commands not sent (--keep-going continues past failures)"
        );
        assert_eq!(
            stopped_here(&f, false, 1, Rest::Nothing),
            "command 'x': bad; 1 command not sent"
        );
        assert_eq!(
            stopped_here(&f, true, 0, Rest::BatchInput),
            "command 'x': bad; the batch input was not sent (--keep-going continues past failures)"
        );
        assert_eq!(
            stopped_here(&f, true, 1, Rest::BatchInput),
            "command 'x': bad; 1 later command and the batch input not sent (--keep-going \
             continues past failures)"
        );
        // A fan-out's server that lost its connection: --keep-going would not go on past it.
        assert_eq!(
            not_sent_after("lost", (true, 2), Rest::Nothing, false),
            "lost; 2 later commands not sent"
        );
    }
}
