//! `--remote` (issue 21, docs/remote.md): rcon on the SSH host runs the commands next to the
//! server, this rcon streams them there and prints the answers. [`client`] is this side,
//! [`serve`] the remote side (`--remote-serve`), [`session`] one link as a `Remote` (for the
//! console), [`machine`] the remote protocol as a machine on the fleet's event loop (several
//! servers, `--follow`, the timed runs), [`proto`] the versioned stdio protocol between them,
//! [`install`] `--remote-install`, [`journal`] what a batch run records so it can say exactly
//! what ran and `--resume` (its SHA-256 is ring's).

pub mod client;
pub mod install;
pub mod journal;
pub mod machine;
pub mod proto;
pub mod serve;
pub mod session;
