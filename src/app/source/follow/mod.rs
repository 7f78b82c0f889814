//! `--follow`: server events as they happen, until interrupted. RCON servers are polled
//! (`Mode::FollowPolled`); BattlEye, WebRCON and telnet servers push their messages
//! (`Mode::FollowPushed`; the resolver tells them apart), both on the fleet's event loop
//! ([`looped`]); the management protocol's notifications are followed by `mgmt` (with the
//! `mgmt` feature). All of them print events and run `--exec` through [`events`].

pub mod events;
pub mod looped;
pub mod mapping;
