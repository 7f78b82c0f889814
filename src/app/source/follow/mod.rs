//! `--follow`: server events as they happen, until interrupted. RCON servers are polled
//! ([`poll`]); BattlEye, WebRCON and telnet servers push their messages ([`pushed`]); the
//! management protocol's notifications are followed by `mgmt` (with the `mgmt` feature). All
//! of them print events and run `--exec` through [`events`].

pub mod events;
pub mod poll;
pub mod pushed;

use crate::app::exit::Exit;
use crate::app::resolve::plan::FollowOptions;
use crate::app::resolve::settings::Settings;

/// Follows one or several servers: the pushed messages when none of them speaks RCON, else
/// `list` polled.
pub fn run(options: &FollowOptions, servers: Vec<(String, Settings)>) -> anyhow::Result<Exit> {
    if servers
        .iter()
        .all(|(_, s)| s.dialect.value.dialect().protocol != rconsole::consoles::Protocol::Rcon)
    {
        return pushed::run(options, servers);
    }
    poll::run(options, servers)
}
