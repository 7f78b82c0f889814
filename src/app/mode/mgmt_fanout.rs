//! `--mgmt` over several servers (`-s a,b`, a group, `--all`), and `--follow` of their
//! notifications (labelled `[NAME]`): the same method calls on each
//! server at once, one thread per server, each answer labelled as RCON fan-out labels it (every
//! line `[NAME] ...` through [`crate::app::print::output::prefixed`]; with `--json` a `server` field), a
//! failure as `rcon: error: [NAME] ...` on stderr, and the worst exit status of all. A server's
//! method that fails is reported and the next one runs (as with one server); a server that
//! cannot be reached or refuses the secret stops there. Each server's URL, trust and secret
//! come from its own profile (the secrets are read first, one server after another, so a
//! prompt never races another).

use crate::app::exit::{Exit, exit_for, fail};
use crate::app::mode::mgmt::{self, MgmtTarget};
use crate::app::resolve::plan::FollowOptions;
use crate::app::resolve::plan::MgmtPlan;
use crate::app::resolve::settings::Settings;

/// Runs the method calls on every server.
pub fn run(plan: &MgmtPlan, servers: Vec<(String, Settings)>) -> anyhow::Result<Exit> {
    let calls = mgmt::calls(plan);
    if plan.url.is_some() {
        return Err(fail(
            Exit::Usage,
            "--mgmt URL names one server; with several, each profile's mgmt_url is used (give --mgmt without a URL)",
        ));
    }
    let refuse = |what: &str| {
        fail(
            Exit::Usage,
            format!(
                "{what} with --mgmt works on one server; on several, --mgmt calls methods (rcon --mgmt -s a,b players) and follows notifications (--follow), and --countdown, --every and --if work over RCON"
            ),
        )
    };
    if let Some(options) = &plan.follow {
        if !calls.is_empty() {
            return Err(fail(
                Exit::Usage,
                "--follow runs no commands (it prints events); run them separately",
            ));
        }
        return follow(plan, options, servers);
    }
    if plan.timing.is_some() {
        return Err(refuse("a timed operation"));
    }
    if calls.is_empty() {
        return Err(fail(
            Exit::Usage,
            "--mgmt on several servers needs the methods to call (words or -c); the console and stdin work with one server",
        ));
    }
    let mut targets: Vec<(String, anyhow::Result<MgmtTarget>)> = Vec::new();
    for (name, settings) in servers {
        let target = mgmt::resolve(plan, &settings).map(|mut t| {
            t.name = name.clone();
            t
        });
        targets.push((name, target));
    }
    let json = plan.json;
    let handles: Vec<_> = targets
        .into_iter()
        .map(|(name, target)| {
            let calls = calls.clone();
            std::thread::spawn(move || one(&name, target, &calls, json))
        })
        .collect();
    let mut worst = Exit::Success;
    for h in handles {
        let exit = h.join().unwrap_or(Exit::Connection);
        worst = worst.max(exit);
    }
    Ok(worst)
}

/// `--follow --mgmt` on several servers: each server's notifications on a thread of its own,
/// lines labelled `[NAME]`. Every server is connected to first, so one that cannot be reached
/// fails the run at once; later losses are retried per server, as with one.
fn follow(
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
            fail(exit, format!("{}: {e:#}", target.name))
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
                        eprintln!("rcon: error: [{}] {e:#}", target.name);
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
fn one(name: &str, target: anyhow::Result<MgmtTarget>, calls: &[Vec<String>], json: bool) -> Exit {
    let stop = |e: &anyhow::Error| {
        eprintln!("rcon: error: [{name}] {e:#}");
        exit_for(e)
    };
    let target = match target {
        Ok(t) => t,
        Err(e) => return stop(&e),
    };
    let (mut client, schema) = match target.connect() {
        Ok(c) => c,
        Err(e) => return stop(&e),
    };
    let mut worst = Exit::Success;
    for (i, words) in calls.iter().enumerate() {
        if let Err(e) = mgmt::run_words(&mut client, &schema, words, json, name, true) {
            let exit = exit_for(&e);
            let call = words.join(" ");
            if exit != Exit::CommandFailed {
                let later = calls.len() - i - 1;
                let not_sent = if later > 0 {
                    format!("; {later} later not sent")
                } else {
                    String::new()
                };
                eprintln!("rcon: error: [{name}] '{call}': {e:#}{not_sent}");
                client.close();
                return worst.max(exit);
            }
            eprintln!("rcon: error: [{name}] '{call}': {e:#}");
            worst = worst.max(exit);
        }
    }
    client.close();
    worst
}
