//! The timed operations (`--countdown`, `--every`, `--if`) on one or several RCON servers, and
//! `--mgmt`, which `rcon` hands to the `rcon-mgmt` program.

use std::sync::Arc;

use anyhow::Context;

use crate::app::exit::{Exit, fail};
use crate::app::print::output::{Printer, Style};
use crate::app::resolve::plan::{MgmtPlan, PracticePlan, TimedPlan};
use crate::app::resolve::settings::Settings;
use crate::app::run::countdown;
use crate::app::run::session::Session;
use crate::app::shared::StderrObserver;
use crate::app::shared::refuse_unsendable;

/// Servers by name, as a fan-out runs them.
pub type Servers = Vec<(String, Settings)>;

/// What runs the management protocol in this binary: `rcon-mgmt` passes [`MGMT_HOOKS`];
/// `rcon` passes `None` and hands `--mgmt` to `rcon-mgmt`, so the TLS and WebSocket code is not
/// even in the binary a plain RCON run loads (measured: it added ~20% to a one-shot's peak RSS).
#[derive(Clone, Copy)]
pub struct MgmtHooks {
    /// `--mgmt` on one server.
    pub run: fn(&MgmtPlan, &Settings) -> anyhow::Result<Exit>,
    /// `--mgmt` on several servers.
    pub fanout: fn(&MgmtPlan, Servers) -> anyhow::Result<Exit>,
    /// `--practice-mgmt`.
    pub serve: fn(&PracticePlan) -> anyhow::Result<Exit>,
}

/// `rcon-mgmt`'s hooks.
#[cfg(feature = "mgmt")]
#[allow(dead_code)] // referenced only by rcon-mgmt's main
pub const MGMT_HOOKS: MgmtHooks = MgmtHooks {
    run: crate::app::run::mgmt::run,
    fanout: crate::app::run::mgmt_fanout::run,
    serve: crate::app::run::mgmt::serve_practice,
};

/// The timed operations (`--countdown`, `--every`, `--if`) on one or several RCON servers.
pub fn run_timed(plan: TimedPlan) -> anyhow::Result<Exit> {
    let TimedPlan {
        servers,
        commands,
        timing,
    } = plan;
    let mut all: Vec<String> = timing.then.clone();
    all.extend(commands.iter().cloned());
    all.extend(
        timing
            .announce
            .iter()
            .map(|t| countdown::fill(t, std::time::Duration::ZERO)),
    );
    refuse_unsendable(&all, servers.iter().map(|(_, s)| s))?;
    let mut runners: Vec<Box<dyn countdown::Runner>> = Vec::new();
    for (name, s) in &servers {
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
    countdown::run(&timing, runners, &commands)
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

/// Runs one command on the session (connecting first if needed) and returns its output as
/// text; a failed command closes the connection, so the next one reconnects.
pub fn run_text(session: &mut Session, command: &str) -> rconsole::Result<String> {
    let client = session.connect()?;
    let mut raw = Vec::new();
    match crate::app::run::session::execute(client, command, &mut raw, false) {
        Ok(()) => Ok(rconsole::rcon::packet::decode_output_owned(raw)),
        Err(e) => {
            client.close();
            Err(e)
        }
    }
}
