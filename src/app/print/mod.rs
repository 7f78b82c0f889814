//! What reaches the terminal: command output in every style ([`output`]), the one JSON record
//! schema of every mode ([`json`]), packet traces ([`trace`]) and the line that says what a
//! signal stopped ([`interrupted`]).

pub mod interrupted;
pub mod json;
pub mod output;
pub mod trace;
