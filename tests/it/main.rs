//! The integration suite as one test binary, so that it compiles and links once: the real `rcon`
//! binary against real servers, files and terminals. `cargo test --test it NAME::` runs one
//! area; `cargo test --release --test it -- --ignored load::` runs the million-command load test.

mod common;

mod batch;
mod config;
#[cfg(unix)]
mod console;
mod defects;
mod dialects;
mod engine;
mod fanout;
mod faults;
mod interop;
mod load;
mod oneshot;
#[cfg(unix)]
mod prompt;
mod query;
mod sentinel_auto;
#[cfg(unix)]
mod ssh;
mod status;
#[cfg(unix)]
mod terminal;
mod trace;
