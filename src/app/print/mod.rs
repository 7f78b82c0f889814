//! What reaches the terminal: command output in every style ([`output`]) and packet traces
//! ([`trace`]).

pub mod output;
pub mod trace;
