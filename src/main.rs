//! `rcon`: the command-line program. Parses arguments, runs the session, maps errors to the
//! documented exit codes (see `app::exit`).

/// `eprintln!` for the whole binary, shadowing std's: a closed or full stderr
/// (`rcon ... 2>&1 >/dev/null | head -1`) is ignored, as a closed stdout is, instead of
/// panicking (which aborts the release build). Declared before `mod app` so every module uses it.
macro_rules! eprintln {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = writeln!(std::io::stderr(), $($arg)*);
    }};
}

/// `eprint!` likewise.
macro_rules! eprint {
    ($($arg:tt)*) => {{
        use std::io::Write as _;
        let _ = write!(std::io::stderr(), $($arg)*);
    }};
}

mod app;

/// On the static musl build, dlmalloc instead of musl's allocator (see Cargo.toml).
#[cfg(all(target_os = "linux", target_env = "musl"))]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

use std::process::ExitCode;

use app::exit::{Exit, exit_for};

fn main() -> ExitCode {
    let exit = match app::run() {
        Ok(exit) => exit,
        Err(err) if app::print::output::is_broken_pipe(&err) => Exit::Success,
        Err(err) => {
            eprintln!("rcon: error: {err:#}");
            exit_for(&err)
        }
    };
    // Run as mcrcon or rcon-cli, the status is that program's (1 for any failure).
    app::compat::status(exit).code()
}
