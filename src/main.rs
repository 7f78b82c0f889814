//! `rcon`: the command-line program. Parses arguments, runs the session, maps errors to the
//! documented exit codes (see `app::exit`).
//!
//! On Linux with glibc the program starts without std's runtime start (`no_main`): that start
//! asks glibc for the main thread's stack bounds, which glibc answers by reading and parsing
//! `/proc/self/maps` line by line with `sscanf` (100,000 instructions, 9% of a one-shot
//! `list`, callgrind), for a guard-page message on stack overflow that a one-shot never
//! needs. [`start`] does the rest of what that start does and rcon relies on: standard
//! descriptors 0-2 open, `SIGPIPE` ignored (a closed stdout is an `EPIPE` error rcon
//! accounts for, exit 141), and the arguments are read as std reads them there (glibc hands
//! them to std's `.init_array` entry).
#![cfg_attr(all(target_os = "linux", target_env = "gnu", not(test)), no_main)]

mod app;
#[cfg(all(target_os = "linux", target_env = "gnu"))]
mod arena;

/// On Linux with glibc, the start-up arena before glibc's allocator (see `arena.rs`).
#[cfg(all(target_os = "linux", target_env = "gnu"))]
#[global_allocator]
static ALLOCATOR: arena::Arena = arena::Arena::new();

/// On the static musl build, dlmalloc instead of musl's allocator (see Cargo.toml).
#[cfg(all(target_os = "linux", target_env = "musl"))]
#[global_allocator]
static ALLOCATOR: dlmalloc::GlobalDlmalloc = dlmalloc::GlobalDlmalloc;

use app::exit::{EarlyExit, Exit, exit_for};

/// Runs rcon; the exit status as rcon, or the program it is run as (mcrcon, rcon-cli: 1 for
/// any failure), reports it.
fn run() -> Exit {
    let exit = match app::run() {
        Ok(exit) => exit,
        Err(err) if app::print::output::is_broken_pipe(&err) => Exit::Success,
        Err(err) => {
            // Help, version, Ctrl-C at the prompt: said already, and the status is final.
            if let Some(exit) = EarlyExit::of(&err) {
                return exit;
            }
            app::print::stderr!("rcon: error: {err:#}");
            exit_for(&err)
        }
    };
    // Run as mcrcon or rcon-cli, the status is that program's (1 for any failure).
    app::resolve::compat::status(exit)
}

#[cfg(any(not(all(target_os = "linux", target_env = "gnu")), test))]
fn main() -> std::process::ExitCode {
    run().code()
}

/// The C entry point glibc's start calls (see the module text).
#[cfg(all(target_os = "linux", target_env = "gnu", not(test)))]
#[unsafe(no_mangle)]
extern "C" fn main(_argc: libc::c_int, _argv: *const *const libc::c_char) -> libc::c_int {
    start();
    // `exit` flushes stdout as returning from std's `main` does.
    std::process::exit(run() as i32)
}

/// What std's runtime start does that rcon needs, for the `no_main` start: 0, 1 and 2 open
/// (on `/dev/null` when the caller closed one, so that no socket or file rcon opens takes its
/// number and receives output meant for the terminal), and `SIGPIPE` ignored.
#[cfg(all(target_os = "linux", target_env = "gnu", not(test)))]
fn start() {
    // SAFETY: plain libc calls on descriptors 0-2 and a path literal; no Rust object owns
    // those descriptors yet, and nothing else runs in the process.
    unsafe {
        for fd in 0..=2 {
            if libc::fcntl(fd, libc::F_GETFD) == -1
                && std::io::Error::last_os_error().raw_os_error() == Some(libc::EBADF)
                && libc::open(c"/dev/null".as_ptr(), libc::O_RDWR) == -1
            {
                libc::abort();
            }
        }
        libc::signal(libc::SIGPIPE, libc::SIG_IGN);
    }
}
