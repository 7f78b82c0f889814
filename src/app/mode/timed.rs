//! The timed operations (`--countdown`, `--every`, `--if`) on one or several RCON servers:
//! on the fleet's event loop ([`schedule::looped`]), or where a server cannot be driven there
//! (`--remote`, a tunnel on Windows) with blocking sessions ([`schedule::run`]).

use crate::app::exit::Exit;
use crate::app::exit::fail;
use crate::app::print::output::{Printer, Style};
use crate::app::resolve::plan::TimedPlan;
use crate::app::runner::fanout;
use crate::app::runner::session::{Session, run_text};
use crate::app::shared::refuse_unsendable;
use crate::app::source::schedule;

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
            .map(|t| schedule::fill(t, std::time::Duration::ZERO)),
    );
    refuse_unsendable(&all, servers.iter().map(|(_, s)| s))?;
    // Every server holds its connection for the whole schedule: a group larger than the
    // descriptor limit is said before anything is sent.
    let threads = fanout::needs_threads(&servers, "a timed run")?;
    let several = servers.len() > 1;
    if !threads {
        // Each password read once per file or command, the prompt asked once for all.
        let servers = fanout::servers(servers, several)?;
        return schedule::looped::run(&timing, servers, &commands);
    }
    let passwords = fanout::passwords(&servers)?;
    let mut runners: Vec<Box<dyn schedule::Runner>> = Vec::new();
    for ((name, s), password) in servers.iter().zip(passwords) {
        let mut session = Session::new(
            s.connector()?,
            password,
            s.options(fanout::observer(name, several)),
            Printer::new(Style::Raw, false),
        );
        // BattlEye, WebRCON and telnet servers get their own protocol, as one-shot runs do.
        session.set_protocol(s.dialect.value.dialect().protocol);
        // `--every 1d stop` with a supervisor that restarts the server: each run is sent.
        session.refuse_after_stop = false;
        runners.push(Box::new(RconRunner {
            name: name.clone(),
            session,
        }));
    }
    schedule::run(&timing, runners, &commands)
}

/// An RCON server as a countdown's [`Runner`](schedule::Runner).
pub struct RconRunner {
    /// Its name.
    pub name: String,
    /// Its session.
    pub session: Session,
}

impl schedule::Runner for RconRunner {
    fn name(&self) -> &str {
        &self.name
    }
    fn run(&mut self, command: &str) -> anyhow::Result<String> {
        // The connection sat idle since the last step (minutes, in a long countdown): one the
        // server closed meanwhile (a restart, an idle limit) is noticed now and replaced,
        // rather than the command sent into it and then in doubt.
        if let Some(client) = self.session.client()
            && client.is_connected()
        {
            client.check_open();
        }
        match run_text(&mut self.session, command) {
            Ok(t) if crate::app::shared::is_parse_error(t.as_bytes()) => {
                Err(fail(Exit::CommandFailed, t))
            }
            Ok(t) => Ok(t),
            Err(e) => Err(anyhow::Error::new(e)),
        }
    }
    fn connect(&mut self) -> anyhow::Result<()> {
        self.session
            .connect()
            .map(|_| ())
            .map_err(anyhow::Error::new)
    }
    fn players(&mut self) -> anyhow::Result<usize> {
        schedule::count(self.run("list"))
    }
}
