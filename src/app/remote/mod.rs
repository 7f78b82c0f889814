//! `--remote` (issue 21, docs/remote.md) as a way to a server: rcon on the SSH host runs the
//! commands next to the server, this rcon streams them there. [`link`] is the ssh child and
//! what opens it (the handshake, `--remote-install`'s copy, [`install`]), [`session`] one link
//! as a `Remote` (for the console), [`machine`] the remote protocol as a machine on the fleet's
//! event loop (several servers, `--follow`, the timed runs), [`proto`] the versioned stdio
//! protocol between the two sides, [`journal`] what a batch run records so it can say exactly
//! what ran and `--resume` (its SHA-256 is ring's). The runners drive them: the batch run over
//! `--remote` is `runner/remote_batch.rs`; the remote side, `--remote-serve`, is a mode
//! (`mode/remote_serve.rs`).

pub mod install;
pub mod journal;
pub mod link;
pub mod machine;
pub mod proto;
pub mod session;
