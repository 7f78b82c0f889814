//! Each mode, run from its resolved plan: one server's session ([`single`] over [`session`],
//! with [`batch`] input and the [`console`]), several at once ([`fanout`]), `--follow`
//! ([`follow`] polls RCON and takes management notifications, [`follow_consoles`] the pushed
//! messages of BattlEye, WebRCON and telnet), the timed operations ([`timed`], [`countdown`]), `--mgmt` (`mgmt`, on several
//! servers `mgmt_fanout`; both only with the `mgmt` feature), the other consoles' application side ([`consoles`]), `--ping` and `--query`
//! ([`ping_query`]), the practice servers ([`practice`]),
//! and `--wait`'s retries of a session's first connection ([`wait`]).

pub mod batch;
pub mod console;
pub mod consoles;
pub mod countdown;
pub mod fanout;
pub mod follow;
pub mod interrupt;
#[cfg(feature = "mgmt")]
pub mod mgmt;
#[cfg(feature = "mgmt")]
pub mod mgmt_fanout;
pub mod ping_query;
pub mod practice;
pub mod session;
pub mod single;
pub mod timed;
pub mod wait;
