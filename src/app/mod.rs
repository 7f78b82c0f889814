//! The `rcon` application: everything between argv and the library, by folder, each importing
//! only the ones below it (docs/architecture.md). [`resolve`] turns argv, the environment and
//! the config file into one [`plan::Mode`] (a personality's command line, rcon run as `mcrcon`
//! or `rcon-cli`, translated first by [`resolve::compat`]); then commands come from a
//! [`source`] (files and stdin, the schedule, `--follow`'s events), a [`runner`] sends them (one
//! server's session and its console, a fan-out, `--wait`, the event loops of `--follow` and the
//! timed plan), to servers reached directly or through [`remote`] (`--remote`), and the sink,
//! [`print`](mod@print), is what reaches the terminal; Ctrl-C is [`interrupt`]. The other modes
//! (timed runs, ping and query, practice servers, `--remote-serve`, `--mgmt`) are in [`mode`].
//! [`run()`](fn@run) is a single match on the mode.

pub mod exit;
#[cfg(test)]
mod generate;
pub mod interrupt;
pub mod learned;
pub mod mode;
pub mod print;
pub mod remote;
pub mod resolve;
pub mod runner;
pub mod shared;
pub mod source;
pub mod words;

use exit::Exit;
use mode::timed::run_timed;
use mode::{ping_query, practice};
use print::{output, stderr};
use resolve::plan::{self, Mode};
use resolve::settings::{self, ConfigFile};
use runner::{fanout, follow, single};

/// Runs the program; the returned status is the process's exit code.
pub fn run() -> anyhow::Result<Exit> {
    let plan = plan::resolve(plan::parse()?)?;
    rconsole::consoles::set_tuning(plan.tuning);
    match plan.mode {
        Mode::Practice(p) => practice::serve(&p),
        #[cfg(feature = "mgmt")]
        Mode::PracticeMgmt(p) => mode::mgmt::serve_practice(&p),
        Mode::ListServers(file) => list_servers(&file),
        Mode::Learned(forget) => list_learned(forget.as_deref()),
        Mode::InstallLinks(dir) => mode::links::install(&dir),
        Mode::Probe(probe) => ping_query::run(&probe),
        Mode::PrintConfig(servers) => print_config(&servers),
        #[cfg(feature = "mgmt")]
        Mode::MgmtFanout(plan, servers) => mode::mgmt_fleet::run(&plan, servers),
        #[cfg(feature = "mgmt")]
        Mode::MgmtFanoutFollow(plan, options, servers) => {
            mode::mgmt_fleet::follow(&plan, &options, servers)
        }
        #[cfg(feature = "mgmt")]
        Mode::Mgmt(plan, session) => mode::mgmt_fleet::single(&plan, *session),
        #[cfg(feature = "mgmt")]
        Mode::MgmtFollow(plan, options, settings) => {
            let name = settings.target();
            mode::mgmt_fleet::follow(&plan, &options, vec![(name, *settings)])
        }
        #[cfg(feature = "mgmt")]
        Mode::MgmtTimed(plan, timing, servers) => mode::mgmt_fleet::timed(&plan, &timing, servers),
        // Resolution refuses these without the feature (plan::without_mgmt); never reached.
        #[cfg(not(feature = "mgmt"))]
        Mode::PracticeMgmt(_)
        | Mode::MgmtFanout(..)
        | Mode::MgmtFanoutFollow(..)
        | Mode::Mgmt(..)
        | Mode::MgmtFollow(..)
        | Mode::MgmtTimed(..) => Err(plan::without_mgmt()),
        Mode::FollowPolled(options, servers) => {
            let every = options.poll.unwrap_or(plan::DEFAULT_POLL);
            follow::follow(&options, servers, follow::Watch::Poll(every))
        }
        Mode::FollowPushed(options, servers) => {
            follow::follow(&options, servers, follow::Watch::Pushed)
        }
        Mode::Timed(plan) => run_timed(plan),
        Mode::Fanout(plan) => fanout::run_plan(plan),
        Mode::RemoteSession(plan) => runner::remote_batch::run(*plan),
        // The console over --remote is the local console on a remote session (runner/single.rs).
        Mode::Session(plan) => single::run(*plan),
        Mode::RemoteServe => mode::remote_serve::serve(),
    }
}

/// `--learned`: what is remembered about servers, after forgetting `forget`'s entry.
fn list_learned(forget: Option<&str>) -> anyhow::Result<Exit> {
    if let Some(key) = forget {
        stderr!("rcon: {}", learned::forget(key));
    }
    output::print_text(&learned::list())?;
    Ok(Exit::Success)
}

/// `--list-servers`: the profiles and groups of the config file.
fn list_servers(file: &ConfigFile) -> anyhow::Result<Exit> {
    let (text, note) = settings::list_servers(file);
    if let Some(note) = note {
        stderr!("rcon: {note}");
    }
    output::print_text(&text)?;
    Ok(Exit::Success)
}

/// `--print-config`: each server's resolved settings and where each came from.
fn print_config(servers: &[(Option<String>, String)]) -> anyhow::Result<Exit> {
    for (name, text) in servers {
        match name {
            Some(name) => output::print_text(&format!("[{name}]\n{text}"))?,
            None => output::print_text(text)?,
        }
    }
    Ok(Exit::Success)
}
