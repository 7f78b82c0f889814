//! The timed operations (`--countdown`, `--every`, `--if`) on one or several RCON servers, on
//! the fleet's event loop ([`runner::timed`](crate::app::runner::timed)), `--remote` servers included.

use crate::app::exit::Exit;
use crate::app::resolve::plan::TimedPlan;
use crate::app::runner::{fanout, timed};
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
    fanout::hold_every_connection(&servers, "a timed run")?;
    let several = servers.len() > 1;
    // Each password read once per file or command, the prompt asked once for all.
    let servers = fanout::servers(servers, several)?;
    timed::run(&timing, servers, &commands)
}
