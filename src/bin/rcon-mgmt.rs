//! `rcon-mgmt`: `rcon` with the Minecraft Server Management Protocol built in. `rcon --mgmt ...`
//! runs this program with the same arguments, so the TLS and WebSocket code stays out of the
//! binary every plain RCON run loads. It takes every `rcon` argument and behaves the same.

#[path = "../app/mod.rs"]
mod app;

use std::process::ExitCode;

use app::exit::{Exit, exit_for};

fn main() -> ExitCode {
    let (args, origins) = app::parse();
    let _ = app::dispatch::MGMT_FANOUT.set(app::mgmt_fanout::run);
    // Here, not in app::run: a reference from there would link the practice server's TLS
    // code into rcon too.
    let result = match &args.practice_mgmt {
        Some(addr) => app::mgmt::serve_practice(&args, addr),
        None => app::run(args, origins, Some(app::run_mgmt)),
    };
    match result {
        Ok(exit) => exit.code(),
        Err(err) => {
            if app::output::is_broken_pipe(&err) {
                return Exit::Success.code();
            }
            eprintln!("rcon: error: {err:#}");
            exit_for(&err).code()
        }
    }
}
