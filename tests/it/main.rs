//! The integration suite as one test binary, so that it compiles and links once: the real `rcon`
//! binary against real servers, files and terminals. `cargo test --test it NAME::` runs one
//! area; `cargo test --release --test it -- --ignored load::` runs the million-command load test.

mod common;

mod batch;
mod battleye;
mod compat;
#[cfg(unix)]
mod completion;
mod config;
mod console;
mod consoles_common;
mod consoles_console;
mod consoles_fanout;
mod consoles_peers;
mod countdown;
mod defects;
mod dialects;
mod engine;
mod fanout;
mod faults;
mod fleet;
mod fleet_consoles;
mod follow;
mod follow_consoles;
mod interop;
mod inventory;
mod layout;
mod load;
mod messages;
mod mgmt;
mod mgmt_commands;
mod mgmt_config;
mod mgmt_fanout;
mod oneshot;
mod output;
mod platform;
mod practice;
#[cfg(unix)]
mod prompt;
mod query;
mod relearn;
#[cfg(unix)]
mod remote;
mod sentinel_auto;
#[cfg(unix)]
mod ssh;
mod status;
mod stream;
mod telnet;
mod terminal;
mod trace;
mod wait;
mod webrcon;
