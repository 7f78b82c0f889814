//! The modes of issue 14 on top of the one-shot/batch/console run: `--follow`, the timed
//! operations (`--countdown`, `--every`, `--if`) on one or several RCON servers, and `--mgmt`,
//! which `rcon` hands to the `rcon-mgmt` program.

use std::sync::Arc;

use anyhow::Context;

use super::args::Args;
use super::exit::{Exit, fail};
use super::output::{Printer, Style};
use super::session::Session;
use super::settings::Settings;
use super::{StderrObserver, countdown, follow, refuse_unsendable};

/// What runs `--mgmt` in this binary: `rcon-mgmt` passes [`run_mgmt`]; `rcon` passes `None`
/// and hands `--mgmt` to `rcon-mgmt`, so the TLS and WebSocket code is not even in the binary
/// a plain RCON run loads (measured: it added ~20% to a one-shot's peak RSS).
pub type MgmtRun = fn(&Args, &Settings) -> anyhow::Result<Exit>;

/// `--follow`, or the timed operations (`--countdown`, `--every`, `--if`), on one or several
/// RCON servers; `None` when neither was asked for.
pub fn run_special(
    args: &Args,
    servers: &[(String, Settings)],
    commands: &[String],
) -> anyhow::Result<Option<Exit>> {
    if args.follow {
        if !commands.is_empty() || !args.files.is_empty() {
            return Err(fail(
                Exit::Usage,
                "--follow runs no commands (it prints events); run them separately",
            ));
        }
        return follow::run_rcon(args, servers.to_vec()).map(Some);
    }
    if args.countdown.is_none() && args.every.is_none() && args.condition.is_none() {
        return Ok(None);
    }
    let mut all: Vec<String> = args.then.clone();
    all.extend(commands.iter().cloned());
    all.extend(
        args.announce
            .iter()
            .map(|t| countdown::fill(t, std::time::Duration::ZERO)),
    );
    refuse_unsendable(&all, servers.iter().map(|(_, s)| s))?;
    let mut runners: Vec<Box<dyn countdown::Runner>> = Vec::new();
    for (name, s) in servers {
        let mut session = Session::new(
            s.connector()?,
            s.password()?,
            s.options(Arc::new(StderrObserver)),
            Printer::new(Style::Raw, false),
        );
        // BattlEye, WebRCON and telnet servers get their own protocol, as one-shot runs do.
        session.set_protocol(s.dialect.value.dialect().protocol);
        runners.push(Box::new(countdown::RconRunner {
            name: name.clone(),
            session,
        }));
    }
    countdown::run(args, runners, commands).map(Some)
}

/// `rcon --mgmt ...` runs `rcon-mgmt ...` (the same arguments) from rcon's own directory.
pub fn hand_to_mgmt_binary() -> anyhow::Result<Exit> {
    let name = if cfg!(windows) {
        "rcon-mgmt.exe"
    } else {
        "rcon-mgmt"
    };
    let exe = std::env::current_exe().context("cannot find where rcon is installed")?;
    let sibling = exe.with_file_name(name);
    if !sibling.is_file() {
        return Err(fail(
            Exit::Usage,
            format!(
                "--mgmt runs {}, which is not there (it is built and installed with rcon unless the `mgmt` cargo feature is off)",
                sibling.display()
            ),
        ));
    }
    let mut cmd = std::process::Command::new(&sibling);
    cmd.args(std::env::args_os().skip(1));
    #[cfg(unix)]
    {
        use std::os::unix::process::CommandExt;
        let err = cmd.exec();
        Err(fail(
            Exit::Usage,
            format!("cannot run {}: {err}", sibling.display()),
        ))
    }
    #[cfg(not(unix))]
    {
        let status = cmd
            .status()
            .with_context(|| format!("cannot run {}", sibling.display()))?;
        std::process::exit(status.code().unwrap_or(1));
    }
}

/// `--mgmt`: the management protocol instead of RCON (in the `rcon-mgmt` binary).
#[cfg(feature = "mgmt")]
#[allow(dead_code)] // referenced only by rcon-mgmt's main
pub fn run_mgmt(args: &Args, settings: &Settings) -> anyhow::Result<Exit> {
    let (url, words) = mgmt_words(args);
    super::mgmt::run(args, settings, url, &words)
}

/// `--mgmt`'s URL (if one was given) and the method calls, as words.
#[cfg(feature = "mgmt")]
#[allow(dead_code)] // referenced only by rcon-mgmt's main
pub fn mgmt_words(args: &Args) -> (Option<&str>, Vec<Vec<String>>) {
    let mut words: Vec<Vec<String>> = args
        .commands
        .iter()
        .map(|c| super::mgmt::split_words(c))
        .collect();
    // `--mgmt players`: clap took the first command word for the URL; a URL has a scheme.
    let (url, first) = match args.mgmt.as_deref() {
        Some("") | None => (None, None),
        Some(u) if u.contains("://") => (Some(u), None),
        Some(word) => (None, Some(word.to_string())),
    };
    // A quoted 'allowlist add Alex' is three words too (JSON values stay whole).
    let trailing: Vec<String> = first
        .into_iter()
        .chain(args.command.iter().cloned())
        .flat_map(|w| super::mgmt::split_words(&w))
        .collect();
    if !trailing.is_empty() {
        words.push(trailing);
    }
    (url, words)
}

/// `--mgmt` over several servers, set by `rcon-mgmt`'s main (so `rcon` links none of it).
pub type MgmtFanout = fn(&Args, Vec<(String, Settings)>) -> anyhow::Result<Exit>;

/// Where `rcon-mgmt` puts its [`MgmtFanout`]; unset in `rcon`, which hands `--mgmt` over first.
pub static MGMT_FANOUT: std::sync::OnceLock<MgmtFanout> = std::sync::OnceLock::new();

/// Runs one command on the session (connecting first if needed) and returns its output as
/// text; a failed command closes the connection, so the next one reconnects.
pub fn run_text(session: &mut Session, command: &str) -> rconsole::Result<String> {
    let client = session.connect()?;
    let mut raw = Vec::new();
    match super::session::execute(client, command, &mut raw, false) {
        Ok(()) => Ok(rconsole::packet::decode_output_owned(raw)),
        Err(e) => {
            client.close();
            Err(e)
        }
    }
}
