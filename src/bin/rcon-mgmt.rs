//! `rcon-mgmt`: `rcon` with the Minecraft Server Management Protocol built in. `rcon --mgmt ...`
//! runs this program with the same arguments, so the TLS and WebSocket code stays out of the
//! binary every plain RCON run loads. It takes every `rcon` argument and behaves the same.

#[path = "../app/mod.rs"]
mod app;

/// On the static musl build, dlmalloc instead of musl's allocator (see Cargo.toml).
#[cfg(all(target_os = "linux", target_env = "musl"))]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

use std::process::ExitCode;

use app::exit::{Exit, exit_for};

fn main() -> ExitCode {
    // The hooks are named here, not in app::run: a reference from there would link the
    // management client and its practice server's TLS code into rcon too.
    match app::run(Some(app::MGMT_HOOKS)) {
        Ok(exit) => exit.code(),
        Err(err) => {
            if app::print::output::is_broken_pipe(&err) {
                return Exit::Success.code();
            }
            eprintln!("rcon: error: {err:#}");
            exit_for(&err).code()
        }
    }
}
