//! Text rules that need no network: batch input lines and output formatting.
//!
//! - [`mcfunction`]: the `.mcfunction` line rules for batch input, sans-IO.
//! - [`render`]: `§` formatting codes to ANSI or plain text.

pub mod mcfunction;
pub mod render;
