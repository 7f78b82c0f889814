//! What runs commands on servers: one server's [`session`] (connects on first use, one command
//! at a time, prints each result), the mode that drives it ([`single`]: the command line's
//! commands, then [`batch`] input, then the interactive [`console`], which reads its lines and
//! runs each on the session, reconnecting when the server went away), a list of commands on
//! any target, an RCON session or a management client ([`commands`]), several servers at once
//! ([`fanout`]), `--follow` and the timed plan on the fleet's event loop ([`follow`],
//! [`timed`]; each a plan of the loop's one handler, [`looped`]), a batch over `--remote`
//! ([`remote_batch`]), `--wait` on a first connection ([`wait`]), and the one [`policy`] every runner asks (`--keep-going`, `--delay`, `--echo`,
//! `--retry`, what ran). Ctrl-C / `SIGTERM`, a flag and an alarm that ends any pause at once,
//! is [`interrupt`](mod@crate::app::interrupt), below the sources, which look at it too.

pub mod batch;
pub mod commands;
pub mod console;
pub mod fanout;
pub mod follow;
pub mod looped;
pub mod policy;
pub mod remote_batch;
pub mod session;
pub mod single;
pub mod timed;
pub mod wait;
