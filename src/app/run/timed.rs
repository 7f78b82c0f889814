//! The timed operations (`--countdown`, `--every`, `--if`) on one or several RCON servers.

use std::sync::Arc;

use crate::app::exit::Exit;
use crate::app::print::output::{Printer, Style};
use crate::app::resolve::plan::TimedPlan;
use crate::app::run::countdown;
use crate::app::run::session::Session;
use crate::app::shared::StderrObserver;
use crate::app::shared::refuse_unsendable;

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
