//! The one handler on the fleet's event loop ([`Runner`]): whatever the mode (several servers'
//! commands, `--follow`, the timed plan, `--mgmt` calls), it is the one place a command is sent
//! to a target ([`Runner`]'s `next`), and it keeps each target's command under way (what, when
//! sent, the bytes of its answer), hands a report to the observer it is for ([`observe`]),
//! counts `--retry`'s connect retries and tells the mode what each command came to. What to
//! send and what an outcome means is the mode's [`LoopPlan`].

use std::sync::Arc;
use std::time::{Duration, Instant};

use rconsole::Error;
use rconsole::consoles::Protocol;
use rconsole::fleet::{self, Next, Report};
use rconsole::rcon::client::Observer;

use crate::app::exit::chain;
use crate::app::runner::policy::Retries;

/// What a handler on the event loop keeps of a server whose target the loop took.
pub struct Looped {
    /// The label in output and messages.
    pub name: String,
    /// Where it is, for warnings.
    pub describe: String,
    /// Where its engine warnings go.
    pub observer: Arc<dyn Observer>,
    /// RCON, or one of the other consoles.
    pub protocol: Protocol,
}

/// Servers on the event loop: each target, and what a handler keeps of each, in order.
pub type LoopTargets = (Vec<fleet::FleetTarget>, Vec<Looped>);

/// What the event loop reports that only a target's observer hears (warnings and notes, worded
/// with `describe`, what was learned, traces); any other report is given back.
pub fn observe(observer: &dyn Observer, describe: &str, report: Report) -> Option<Report> {
    match report {
        Report::Warning(w) => observer.warning(&format!("{describe}: {w}")),
        Report::Note(n) => observer.note(&format!("{describe}: {n}")),
        Report::Learned(l) => observer.learned(l),
        Report::Traced(t) => observer.trace(&t),
        other => return Some(other),
    }
    None
}

/// What a target does next, as a mode says it: a command (`what` it is to the mode, given back
/// with its outcome), a wait, or the end.
pub enum Move<W> {
    /// Send `text`, not before `not_before` (`--delay`); `then_close`: it stops the server.
    Send {
        /// The command to the mode.
        what: W,
        /// The command as sent.
        text: String,
        /// It stops the server: its answer (or the close) ends it, then the connection closes.
        then_close: bool,
        /// Nothing follows it on this connection (the next move is [`Move::Close`]): it ends as
        /// the one-server session's last command does ([`fleet::Next::Command`]).
        last: bool,
        /// Not sent before then.
        not_before: Option<Instant>,
    },
    /// Nothing to send: stay connected and ask again then.
    Wait(Instant),
    /// Done: close the connection.
    Close,
}

impl<W> Move<W> {
    /// Send `text` at once, a command that does not stop the server.
    pub fn send(what: W, text: String) -> Self {
        Move::Send {
            what,
            text,
            then_close: false,
            last: false,
            not_before: None,
        }
    }
}

/// A command under way: what it is to the mode, and how long ago it was sent.
pub type Under<W> = Option<(W, Duration)>;

/// The command under way, when it was sent (or may be, after `--delay`).
pub type Sent<W> = Option<(W, Instant)>;

/// A mode's part of a run on the event loop: what each target sends and what its outcomes
/// mean. The [`Runner`] does the rest.
pub trait LoopPlan {
    /// A command under way, as the mode knows it.
    type What;
    /// Target `t`'s next move: when it is logged in and after each command's outcome.
    fn next(&mut self, t: usize) -> Move<Self::What>;
    /// `what`, sent `took` ago, was answered with `raw`.
    fn answered(&mut self, t: usize, what: Self::What, raw: Vec<u8>, took: Duration);
    /// `t` failed (its connect or login, or `under`, the command under way, with the part of
    /// its answer that came): the target is over.
    fn failed(&mut self, t: usize, under: Under<Self::What>, raw: Vec<u8>, error: Error);
    /// The loop refused `what` before sending it (too long, a NUL byte); the target goes on.
    /// By default a failure of the command, with no time taken.
    fn refused(&mut self, t: usize, what: Self::What, error: Error) {
        self.failed(t, Some((what, Duration::ZERO)), Vec::new(), error);
    }
    /// A signal (or the mode) cancelled the run: `t` is over, `under` in doubt.
    fn cancelled(&mut self, _t: usize, _under: Under<Self::What>, _raw: Vec<u8>) {}
    /// `t`'s connection was lost (`under`: the command under way, taken if the mode fails it
    /// here): `Some(at)` connects it again then ([`fleet::Handler::lost`]).
    fn lost(&mut self, _t: usize, _under: &mut Sent<Self::What>, _e: &Error) -> Option<Instant> {
        None
    }
    /// `t` began its first connection attempt.
    fn started(&mut self, _t: usize) {}
    /// `t`'s connect failed and is tried again after `delay` (`retries` counts it): warned.
    fn retrying(&mut self, _t: usize, retries: &Retries, error: &Error, delay: Duration) {
        crate::app::print::output::warning(&retries.warning(&chain(error), delay));
    }
    /// A message the server of `t` pushed.
    fn message(&mut self, _t: usize, _text: String) {}
    /// `t` was closed as its plan said ([`Move::Close`]).
    fn finished(&mut self, _t: usize) {}
    /// The loop's waker was raised ([`fleet::Handler::woken`]).
    fn woken(&mut self) {}
}

/// One target as the runner keeps it.
struct Held<W> {
    looped: Looped,
    under: Sent<W>,
    /// Its answer so far.
    raw: Vec<u8>,
    /// Connect retries so far, of `--retry N`.
    retries: Retries,
}

/// The one [`fleet::Handler`] of the application: see the module.
pub struct Runner<P: LoopPlan> {
    plan: P,
    held: Vec<Held<P::What>>,
}

impl<P: LoopPlan> Runner<P> {
    /// `plan` over `servers` (the loop's targets, in order), `retry`: `--retry N`.
    pub fn new(plan: P, servers: Vec<Looped>, retry: u32) -> Self {
        let held = servers
            .into_iter()
            .map(|looped| Held {
                looped,
                under: None,
                raw: Vec::new(),
                retries: Retries::new(retry),
            })
            .collect();
        Runner { plan, held }
    }

    /// Runs `targets` to the end; gives the plan back.
    pub fn run(
        mut self,
        targets: Vec<fleet::FleetTarget>,
        opts: fleet::FleetOptions,
    ) -> std::io::Result<P> {
        fleet::run(targets, opts, &mut self)?;
        Ok(self.plan)
    }
}

impl<P: LoopPlan> fleet::Handler for Runner<P> {
    /// The one function that sends a command on the loop.
    fn next(&mut self, t: usize) -> Next {
        match self.plan.next(t) {
            Move::Send {
                what,
                text,
                then_close,
                last,
                not_before,
            } => {
                let held = &mut self.held[t];
                held.under = Some((what, not_before.unwrap_or_else(Instant::now)));
                held.raw.clear();
                Next::Command {
                    text,
                    then_close,
                    last,
                    not_before,
                }
            }
            Move::Wait(until) => Next::Wait { until },
            Move::Close => Next::Close,
        }
    }

    fn report(&mut self, t: usize, report: Report) {
        let held = &mut self.held[t];
        let looped = &held.looped;
        let Some(report) = observe(looped.observer.as_ref(), &looped.describe, report) else {
            return;
        };
        let under = |h: &mut Held<P::What>| h.under.take().map(|(w, at)| (w, at.elapsed()));
        match report {
            Report::Connecting { attempt: 1 } => self.plan.started(t),
            Report::Output(bytes) => held.raw.extend_from_slice(&bytes),
            Report::Done => {
                if let Some((what, took)) = under(held) {
                    let raw = std::mem::take(&mut held.raw);
                    self.plan.answered(t, what, raw, took);
                }
            }
            Report::Refused(e) => {
                if let Some((what, _)) = held.under.take() {
                    self.plan.refused(t, what, e);
                }
            }
            Report::Failed(Error::Cancelled) => {
                let under = under(held);
                self.plan.cancelled(t, under, std::mem::take(&mut held.raw));
            }
            Report::Failed(e) => {
                let under = under(held);
                self.plan.failed(t, under, std::mem::take(&mut held.raw), e);
            }
            Report::Retrying { error, delay } => {
                held.retries.next();
                self.plan.retrying(t, &held.retries, &error, delay);
            }
            Report::Finished(learned) => {
                if learned.is_some() {
                    held.looped.observer.learned(learned);
                }
                self.plan.finished(t);
            }
            Report::Message(text) => self.plan.message(t, text),
            _ => {}
        }
    }

    fn lost(&mut self, t: usize, error: &Error) -> Option<Instant> {
        let held = &mut self.held[t];
        let again = self.plan.lost(t, &mut held.under, error);
        if again.is_some() {
            // Connected again: nothing under way is sent again.
            held.under = None;
            held.raw.clear();
        }
        again
    }

    fn woken(&mut self) {
        self.plan.woken();
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use rconsole::practice::{PracticeConfig, PracticeServer};

    /// Sends its commands in turn and writes down what came of each.
    struct Script {
        commands: Vec<String>,
        next: usize,
        heard: Vec<String>,
    }

    impl LoopPlan for Script {
        type What = usize;

        fn next(&mut self, _: usize) -> Move<usize> {
            let Some(command) = self.commands.get(self.next) else {
                return Move::Close;
            };
            self.next += 1;
            Move::send(self.next - 1, command.clone())
        }

        fn answered(&mut self, _: usize, what: usize, raw: Vec<u8>, _: Duration) {
            let text = String::from_utf8_lossy(&raw);
            self.heard.push(format!("{what}: {}", text.trim_end()));
        }

        fn failed(&mut self, _: usize, under: Under<usize>, _: Vec<u8>, error: Error) {
            let under = under.map(|(what, took)| (what, took.is_zero()));
            self.heard.push(format!("{under:?} failed: {error}"));
        }

        fn finished(&mut self, _: usize) {
            self.heard.push("finished".into());
        }
    }

    /// Each answer comes back with what the plan sent; a command the loop refuses (too long)
    /// is that command's failure with no time taken, and the target goes on to the next.
    #[test]
    fn each_outcome_comes_back_with_its_command_and_a_refused_one_is_passed() {
        let server = PracticeServer::start(PracticeConfig::default()).unwrap();
        let target = fleet::FleetTarget::rcon(
            "127.0.0.1",
            server.port(),
            rconsole::Password::new("practice"),
            Default::default(),
        );
        let script = Script {
            commands: vec!["echo hi".into(), "x".repeat(100_000), "echo bye".into()],
            next: 0,
            heard: Vec::new(),
        };
        let looped = Looped {
            name: "s".into(),
            describe: "s".into(),
            observer: Arc::new(rconsole::engine::Silent),
            protocol: Protocol::Rcon,
        };
        let runner = Runner::new(script, vec![looped], 0);
        let script = runner.run(vec![target], Default::default()).unwrap();
        assert_eq!(script.heard.len(), 4, "{:?}", script.heard);
        assert_eq!(script.heard[0], "0: hi");
        assert!(
            script.heard[1].starts_with("Some((1, true)) failed: command is 100000 bytes"),
            "{:?}",
            script.heard
        );
        assert_eq!(script.heard[2..], ["2: bye", "finished"]);
    }
}
