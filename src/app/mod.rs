//! The `rcon` application: everything between argv and the library, in three stages by folder:
//! [`resolve`] turns argv, the environment and the config file into one [`plan::Mode`]; [`run`](mod@run)
//! runs each mode from its plan; [`print`](mod@print) is what reaches the terminal. [`run()`](fn@run) is a single
//! match on the mode. Before them, [`compat`] turns a personality's command line (rcon run as
//! `mcrcon` or `rcon-cli`) into rcon's.

pub mod compat;
pub mod exit;
#[cfg(test)]
mod generate;
pub mod print;
pub mod remote;
pub mod resolve;
pub mod run;

use rconsole::rcon::client::{Observer, check_command};

use exit::{Exit, fail};
use print::output;
use resolve::plan::{self, Mode};
use resolve::settings::{self, ConfigFile, Settings};
use run::timed::run_timed;
use run::{fanout, follow, ping_query, practice, single};

/// Prints engine warnings on stderr.
struct StderrObserver;

impl Observer for StderrObserver {
    fn warning(&self, message: &str) {
        eprintln!("rcon: warning: {message}");
    }
}

/// Runs the program; the returned status is the process's exit code.
pub fn run() -> anyhow::Result<Exit> {
    match plan::resolve(plan::parse())? {
        Mode::Practice(p) => practice::serve(&p),
        #[cfg(feature = "mgmt")]
        Mode::PracticeMgmt(p) => run::mgmt::serve_practice(&p),
        Mode::ListServers(file) => list_servers(&file),
        Mode::InstallLinks(dir) => compat::links::install(&dir),
        Mode::Probe(probe) => ping_query::run(&probe),
        Mode::PrintConfig(servers) => print_config(&servers),
        #[cfg(feature = "mgmt")]
        Mode::MgmtFanout(plan, servers) => run::mgmt_fanout::run(&plan, servers),
        #[cfg(feature = "mgmt")]
        Mode::Mgmt(plan, settings) => run::mgmt::run(&plan, &settings),
        // Resolution refuses these without the feature (plan::without_mgmt); never reached.
        #[cfg(not(feature = "mgmt"))]
        Mode::PracticeMgmt(_) | Mode::MgmtFanout(..) | Mode::Mgmt(..) => Err(plan::without_mgmt()),
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

/// Refuses, before connecting anywhere, a command that can never be sent (too long for the
/// dialect, NUL byte), so the server receives nothing.
fn refuse_unsendable<'a>(
    commands: &[String],
    servers: impl IntoIterator<Item = &'a Settings>,
) -> anyhow::Result<()> {
    let max = servers
        .into_iter()
        .map(|s| s.dialect.value.dialect().max_command_bytes)
        .min()
        .unwrap_or(rconsole::rcon::packet::MAX_COMMAND_BYTES);
    for (i, c) in commands.iter().enumerate() {
        check_command(c, max).map_err(|e| {
            let which = if commands.len() > 1 {
                format!("command {} of {}", i + 1, commands.len())
            } else {
                "the command".to_string()
            };
            let why = match e {
                rconsole::Error::CommandTooLong { len, max } => {
                    format!("{which} is {len} bytes of UTF-8, over the limit of {max}")
                }
                rconsole::Error::CommandHasNul => format!("{which} contains a NUL character"),
                other => format!("{which}: {other}"),
            };
            fail(Exit::Refused, format!("{why}; nothing was sent"))
        })?;
    }
    Ok(())
}

/// Whether a command shuts the server down, after which the connection must be closed at once
/// (a connected client keeps a vanilla server from stopping cleanly).
pub fn is_stop_command(command: &str) -> bool {
    let word = command.trim_start().trim_start_matches('/');
    let word = word.split_whitespace().next().unwrap_or("");
    matches!(word, "stop" | "restart")
}

/// Whether the output (raw bytes) is vanilla's command parse error.
pub fn is_parse_error(raw: &[u8]) -> bool {
    raw.trim_ascii_end().ends_with(b"<--[HERE]")
}

/// A command shortened for messages.
pub(crate) fn short(command: &str) -> String {
    let mut s: String = command.chars().take(60).collect();
    if s.len() < command.len() {
        s.push('…');
    }
    s
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_commands() {
        assert!(is_stop_command("stop"));
        assert!(is_stop_command("/stop"));
        assert!(is_stop_command("  restart now"));
        assert!(!is_stop_command("stopwatch"));
        assert!(!is_stop_command("say stop"));
    }

    #[test]
    fn parse_errors() {
        assert!(is_parse_error(
            b"Unknown or incomplete command, see below for errorfoo<--[HERE]"
        ));
        assert!(is_parse_error(b"...foo<--[HERE]\n"));
        assert!(!is_parse_error(
            b"There are 0 of a max of 20 players online: "
        ));
    }
}
