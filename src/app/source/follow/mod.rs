//! `--follow`'s events: how the messages consoles push become events ([`mapping`]), and
//! how every event is printed and runs `--exec` ([`events`]). RCON servers are polled
//! (`Mode::FollowPolled`); BattlEye, WebRCON and telnet servers push their messages
//! (`Mode::FollowPushed`; the resolver tells them apart), both on the fleet's event loop
//! ([`runner::follow`](crate::app::runner::follow)), which also follows the management
//! protocol's notifications (with the `mgmt` feature).

pub mod events;
pub mod mapping;
