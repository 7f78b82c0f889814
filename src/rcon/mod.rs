//! The RCON protocol and its engine.
//!
//! - [`packet`]: the wire format, sans-IO (encoding, incremental decoding, limits).
//! - [`dialect`]: what differs between Minecraft, Source, Factorio and Palworld servers.
//! - [`exchange`]: the conversation as a sans-IO state machine: login, the end-of-output
//!   probe, what ends an answer, what is stale, timers.
//! - [`client`]: the blocking driver that runs an [`exchange::Exchange`] over a transport.

pub mod client;
pub mod dialect;
pub mod exchange;
pub mod packet;
