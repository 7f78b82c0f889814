//! The sink: what reaches the terminal. Command output in every style, `--follow` events and
//! the countdown's results through the one `Printer`, and the runners' warnings ([`output`]);
//! the one JSON record schema of every mode ([`json`]); server messages of `--messages` and the
//! console ([`messages`]); packet traces ([`trace`]); the line that says what a signal stopped
//! ([`interrupted`]); the one progress line on stderr ([`progress`]).

pub mod interrupted;
pub mod json;
pub mod messages;
pub mod output;
pub mod progress;
pub mod trace;
