//! `rcon`: the command-line program. Parses arguments, runs the session, maps errors to the
//! documented exit codes (see `app::exit`).

mod app;

/// On the static musl build, dlmalloc instead of musl's allocator (see Cargo.toml).
#[cfg(all(target_os = "linux", target_env = "musl"))]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

use std::process::ExitCode;

use app::exit::{EarlyExit, Exit, exit_for};

fn main() -> ExitCode {
    let exit = match app::run() {
        Ok(exit) => exit,
        Err(err) if app::print::output::is_broken_pipe(&err) => Exit::Success,
        Err(err) => {
            // Help, version, Ctrl-C at the prompt: said already, and the status is final.
            if let Some(exit) = EarlyExit::of(&err) {
                return exit.code();
            }
            app::print::stderr!("rcon: error: {err:#}");
            exit_for(&err)
        }
    };
    // Run as mcrcon or rcon-cli, the status is that program's (1 for any failure).
    app::compat::status(exit).code()
}
