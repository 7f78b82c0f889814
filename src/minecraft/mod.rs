//! Minecraft's other ways in besides RCON: the game protocol's Server List Ping, the UDP query,
//! and the DNS SRV records that name a server's port.
//!
//! - [`varint`], [`status`], [`query`], [`srv`]: the codecs, sans-IO.
//! - [`driver`]: runs the status ping, the query and the SRV lookup over the network.

pub mod driver;
pub mod query;
pub mod srv;
pub mod status;
pub mod varint;
