//! What runs commands on servers: one server's [`session`] (connects on first use, one command
//! at a time, prints each result), the mode that drives it ([`single`]: the command line's
//! commands, then [`batch`] input, then the interactive [`console`], which reads its lines and
//! runs each on the session, reconnecting when the server went away), the one policy a list
//! of commands runs under on any target, an RCON session or a management client
//! ([`commands`]), several servers at once ([`fanout`]), `--follow` and the timed plan on the
//! fleet's event loop ([`follow`], [`timed`]), a batch over `--remote` ([`remote_batch`]), and
//! `--wait` and `--retry` on a first connection ([`wait`]). Ctrl-C / `SIGTERM` as a flag the
//! runners poll is [`interrupt`](mod@crate::app::interrupt), below the sources, which look at
//! it too.

pub mod batch;
pub mod commands;
pub mod console;
pub mod fanout;
pub mod follow;
pub mod remote_batch;
pub mod session;
pub mod single;
pub mod timed;
pub mod wait;

/// Under its old path too, for the runners that name it so.
pub use crate::app::interrupt;
