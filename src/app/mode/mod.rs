//! The modes that are neither one server's session nor a fan-out of commands: the timed
//! operations on RCON servers ([`timed`], on [`super::source::schedule`]), `--ping` and
//! `--query` ([`ping_query`]), the practice servers ([`practice`]), `--install-links`
//! ([`links`]) and `--mgmt` (`mgmt`; on
//! the event loop, several servers' calls and every follow, `mgmt_fleet`; both only with the
//! `mgmt` feature).

pub mod links;
#[cfg(feature = "mgmt")]
pub mod mgmt;
#[cfg(feature = "mgmt")]
pub mod mgmt_fleet;
pub mod ping_query;
pub mod practice;
pub mod remote_serve;
pub mod timed;
