//! What runs commands on servers: one server's [`session`] (connects on first use, one command
//! at a time, prints each result), the mode that drives it ([`single`]: the command line's
//! commands, then [`batch`] input, then the console), the one policy a list of commands runs
//! under on any target, an RCON session or a management client ([`commands`]), several
//! servers at once ([`fanout`]), `--wait` and `--retry` on a first connection ([`wait`]), and Ctrl-C / `SIGTERM` as a flag
//! the runners poll ([`interrupt`]).

pub mod batch;
pub mod commands;
pub mod fanout;
pub mod interrupt;
pub mod policy;
pub mod session;
pub mod single;
pub mod wait;
