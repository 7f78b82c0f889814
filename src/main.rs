//! `rcon`: the command-line program. Parses arguments, runs the session, maps errors to the
//! documented exit codes (see `app::exit`).

mod app;

use std::process::ExitCode;

use app::exit::{Exit, exit_for};

fn main() -> ExitCode {
    let (args, origins) = app::parse();
    match app::run(args, origins, None) {
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
