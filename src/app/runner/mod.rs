//! What runs commands on servers: one server's [`session`] (connects on first use, one command
//! at a time, prints each result), the mode that drives it ([`single`]: the command line's
//! commands, then [`batch`] input, then the console), a list of commands on any target, an
//! RCON session or a management client ([`commands`]), several servers at once ([`fanout`]),
//! `--wait` on a first connection ([`wait`]), the one [`policy`] every runner asks
//! (`--keep-going`, `--delay`, `--echo`, `--retry`, what ran), and Ctrl-C / `SIGTERM` as a
//! flag and an alarm that ends any pause at once ([`interrupt`]).

pub mod batch;
pub mod commands;
pub mod fanout;
pub mod interrupt;
pub mod policy;
pub mod session;
pub mod single;
pub mod wait;
