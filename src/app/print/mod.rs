//! What reaches the terminal: command output in every style ([`output`]), the one JSON record
//! schema of every mode ([`json`]) and packet traces ([`trace`]).

pub mod json;
pub mod output;
pub mod trace;
