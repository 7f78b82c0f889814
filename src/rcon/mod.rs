//! The RCON protocol and its engine.
//!
//! - [`packet`]: the wire format, sans-IO (encoding, incremental decoding, limits).
//! - [`exchange`]: the conversation as a sans-IO state machine, the engine's one
//!   [`crate::engine::Machine`] shape: login, the end-of-output probe, what ends an answer,
//!   what is stale, timers.
//! - [`method`]: how a server's answers end, as the exchange probes and learns it.
//! - [`notice`]: what the exchange tells the user that is not an error, typed.
//! - [`client`]: the RCON session ([`client::Client`]): the machine run by the engine's blocking
//!   driver over a byte stream.

pub mod client;
pub mod exchange;
pub mod method;
pub mod notice;
pub mod packet;

// What differs between Minecraft, Source, Factorio and Palworld servers is data in
// [`crate::dialect`], above this module: the engine has no per-game code paths.
