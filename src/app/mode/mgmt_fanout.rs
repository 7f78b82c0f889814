//! `--mgmt` over several servers (`-s a,b`, a group, `--all`), and `--follow` of their
//! notifications (labelled `[NAME]`): the same method calls on each server at once (on at
//! most [`at_once::MAX_WORKERS`] threads, each taking the next server), each answer labelled
//! as RCON fan-out labels it (every line `[NAME] ...` through
//! [`crate::app::print::output::prefixed`]; with `--json` a `server` field), a failure as
//! `rcon: error: [NAME] ...` on stderr, and the worst exit status of all. A server's method
//! that fails is reported and the next one runs (as with one server); a server that cannot be
//! reached or refuses the secret stops there. Each server's URL, trust and secret come from
//! its own profile (the secrets are read first, one server after another, so a prompt never
//! races another). Each server's calls run under the one runner policy (`--keep-going`,
//! `--delay`, `--echo`, `--retry`: [`mgmt::MgmtSession::run_calls`]); Ctrl-C and SIGTERM stop
//! every server's calls, and one line says what ran on all of them.

use crate::app::exit::{Exit, exit_for, fail};
use crate::app::mode::mgmt::{self, MgmtTarget};
use crate::app::print::interrupted::Interrupted;
use crate::app::print::output::error;
use crate::app::resolve::plan::FollowOptions;
use crate::app::resolve::plan::MgmtPlan;
use crate::app::resolve::settings::Settings;
use crate::app::runner::at_once;
use crate::app::runner::commands;
use crate::app::runner::interrupt::Stop;

/// Runs the method calls on every server.
pub fn run(plan: &MgmtPlan, servers: Vec<(String, Settings)>) -> anyhow::Result<Exit> {
    // What several servers cannot do was refused while resolving (plan::mgmt_fanout_plan).
    let calls = mgmt::calls(plan);
    let mut targets: Vec<(String, anyhow::Result<MgmtTarget>)> = Vec::new();
    for (name, settings) in servers {
        let target = mgmt::resolve(plan, &settings).map(|mut t| {
            t.name = name.clone();
            t
        });
        targets.push((name, target));
    }
    let servers = targets.len();
    // Ctrl-C and SIGTERM stop every server's calls; one line then says what ran on all.
    let stop = Stop::catch();
    // Every server at once, on at most `at_once::MAX_WORKERS` threads.
    let mut targets: Vec<Option<(String, anyhow::Result<MgmtTarget>)>> =
        targets.into_iter().map(Some).collect();
    let ended: Vec<Ended> = at_once::each(&mut targets, |slot| {
        let (name, target) = slot.take().expect("each server is run once");
        one(&name, target, &calls, plan, stop.as_ref())
    })
    .into_iter()
    .map(|e| e.unwrap_or(Ended::failed(Exit::Connection)))
    .collect();
    let mut worst = Exit::Success;
    let mut ran = 0;
    let mut stopped: Option<Interrupted> = None;
    for end in ended {
        worst = worst.max(end.exit);
        ran += end.ran;
        if let Some(this) = end.stopped {
            match stopped.as_mut() {
                None => stopped = Some(this),
                Some(all) => {
                    all.in_flight.extend(this.in_flight);
                    all.not_sent += this.not_sent;
                }
            }
        }
    }
    match stopped {
        Some(mut all) => {
            all.ran = ran;
            all.servers = Some(servers);
            all.in_flight.sort();
            Err(commands::error(&all))
        }
        None => Ok(worst),
    }
}

/// What one server's calls came to.
struct Ended {
    exit: Exit,
    ran: u64,
    stopped: Option<Interrupted>,
}

impl Ended {
    fn failed(exit: Exit) -> Ended {
        Ended {
            exit,
            ran: 0,
            stopped: None,
        }
    }
}

/// `--follow --mgmt` on several servers: each server's notifications on a thread of its own,
/// lines labelled `[NAME]`. Every server is connected to first, so one that cannot be reached
/// fails the run at once; later losses are retried per server, as with one.
pub fn follow(
    plan: &MgmtPlan,
    options: &FollowOptions,
    servers: Vec<(String, Settings)>,
) -> anyhow::Result<Exit> {
    let mut targets = Vec::new();
    for (name, settings) in servers {
        let mut target = mgmt::resolve(plan, &settings)?;
        target.name = name;
        drop(target.connect().map_err(|e| {
            let exit = exit_for(&e);
            fail(exit, format!("[{}] {e:#}", target.name))
        })?);
        targets.push(target);
    }
    std::thread::scope(|scope| {
        for target in &targets {
            scope.spawn(move || {
                // The follow ends only when stdout fails (a closed pipe): end the whole run.
                let result = mgmt::run_mgmt(options, target, true);
                let code = match result {
                    Ok(exit) => exit,
                    Err(e) if crate::app::print::output::is_broken_pipe(&e) => Exit::Success,
                    Err(e) => {
                        error(Some(&target.name), &format!("{e:#}"));
                        exit_for(&e)
                    }
                };
                std::process::exit(code as i32);
            });
        }
    });
    Ok(Exit::Success)
}

/// One server's calls; its exit status.
fn one(
    name: &str,
    target: anyhow::Result<MgmtTarget>,
    calls: &[Vec<String>],
    plan: &MgmtPlan,
    signals: Option<&Stop>,
) -> Ended {
    let failed = |e: &anyhow::Error| {
        error(Some(name), &format!("{e:#}"));
        Ended::failed(exit_for(e))
    };
    let mut target = match target {
        Ok(t) => t,
        Err(e) => return failed(&e),
    };
    // The signals are caught already: a handshake looks at them too.
    target.opts.cancel = signals.map(Stop::flag);
    let mut session = match mgmt::MgmtSession::connect(target, plan.policy.retry, plan.json, true) {
        Ok(s) => s,
        Err(e) => {
            // Stopped while connecting: none of its calls was sent.
            if let Some(signal) = signals.and_then(Stop::received) {
                let lines: Vec<String> = calls.iter().map(|w| w.join(" ")).collect();
                let halted = commands::Halted {
                    signal,
                    in_flight: None,
                    next: 0,
                };
                let tally = crate::app::runner::batch::Tally::default();
                return Ended {
                    exit: Exit::Success,
                    ran: 0,
                    stopped: Some(halted.interrupted(
                        &lines,
                        commands::Rest::Nothing,
                        &tally,
                        Some(name),
                    )),
                };
            }
            return failed(&e);
        }
    };
    let result = session.run_calls(calls, &plan.policy, signals);
    session.close();
    match result {
        Ok(ran) => Ended {
            exit: ran.exit,
            ran: ran.ran,
            stopped: ran.stopped,
        },
        Err(e) => {
            error(None, &format!("{e:#}"));
            Ended::failed(exit_for(&e))
        }
    }
}
