//! The `rcon` application: everything between argv and the library, in three stages by folder:
//! [`resolve`] turns argv, the environment and the config file into one [`plan::Mode`]; [`run`](mod@run)
//! runs each mode from its plan; [`print`](mod@print) is what reaches the terminal. [`run()`](fn@run) is a single
//! match on the mode. Before them, [`compat`] turns a personality's command line (rcon run as
//! `mcrcon` or `rcon-cli`) into rcon's.

pub mod compat;
pub mod exit;
#[cfg(test)]
mod generate;
pub mod learned;
pub mod print;
pub mod remote;
pub mod resolve;
pub mod run;
pub mod shared;

use exit::{Exit, fail};
use print::output;
use resolve::plan::{self, Mode};
use resolve::settings::{self, ConfigFile};
pub use run::timed::MgmtHooks;
// For rcon-mgmt's main; rcon itself never names it.
#[cfg(feature = "mgmt")]
#[allow(unused_imports)]
pub use run::timed::MGMT_HOOKS;
use run::timed::{hand_to_mgmt_binary, run_timed};
use run::{fanout, follow, ping_query, practice, single};

/// Runs the program; the returned status is the process's exit code. `mgmt`: what runs the
/// management protocol in this binary (`rcon-mgmt` passes it; `rcon` hands `--mgmt` over).
pub fn run(mgmt: Option<MgmtHooks>) -> anyhow::Result<Exit> {
    let plan = plan::resolve(plan::parse(), mgmt.is_some())?;
    rconsole::consoles::set_tuning(plan.tuning);
    match plan.mode {
        Mode::HandToMgmt => hand_to_mgmt_binary(),
        Mode::Practice(p) => practice::serve(&p),
        Mode::PracticeMgmt(p) => match mgmt {
            Some(hooks) => (hooks.serve)(&p),
            None => hand_to_mgmt_binary(),
        },
        Mode::ListServers(file) => list_servers(&file),
        Mode::InstallLinks(dir) => compat::links::install(&dir),
        Mode::Probe(probe) => ping_query::run(&probe),
        Mode::PrintConfig(servers) => print_config(&servers),
        Mode::MgmtFanout(plan, servers) => match mgmt {
            Some(hooks) => (hooks.fanout)(&plan, servers),
            None => hand_to_mgmt_binary(),
        },
        Mode::Mgmt(plan, settings) => match mgmt {
            Some(hooks) => (hooks.run)(&plan, &settings),
            None => hand_to_mgmt_binary(),
        },
        Mode::Follow(options, servers) => follow::run_rcon(&options, servers),
        Mode::Timed(plan) => run_timed(plan),
        Mode::Fanout(plan) if plan.servers.iter().any(|(_, s)| s.remote) => Err(fail(
            Exit::Usage,
            "--remote runs on one server at a time for now; several servers go through ssh -W without it",
        )),
        Mode::Fanout(plan) => fanout::run_plan(plan),
        Mode::Session(plan) if plan.settings.remote && !plan.demo => remote::client::run(*plan),
        Mode::Session(plan) => single::run(*plan),
        Mode::RemoteServe => remote::serve::serve(),
    }
}

/// `--list-servers`: the profiles and groups of the config file.
fn list_servers(file: &ConfigFile) -> anyhow::Result<Exit> {
    let (text, note) = settings::list_servers(file);
    if let Some(note) = note {
        eprintln!("rcon: {note}");
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
