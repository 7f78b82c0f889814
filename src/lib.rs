//! rconsole: a correct RCON client library, plus a practice server that behaves like the real
//! ones.
//!
//! The modules, by concern:
//!
//! - [`engine`]: what every protocol engine shares, below all of them: the one options type,
//!   the observer, the password, cancellation, the [`engine::Remote`] session interface, the
//!   one sans-IO protocol [`engine::Machine`] shape (RCON and every console) and the one
//!   blocking [`engine::driver`] that runs a machine over a link.
//! - [`dialect`]: the server families (Minecraft, Source, ..., BattlEye, WebRCON, telnet) as
//!   data, and [`open`], which picks the RCON client or a console for one: above both.
//! - [`rcon`]: the RCON protocol and its engine: the packet codec, the sans-IO
//!   [`rcon::exchange`] state machine (login, the end-of-output probe, what ends an answer,
//!   timers), which is an [`engine::Machine`] itself, and the [`rcon::client`] session.
//! - [`fleet`]: the event loop that runs many exchanges at once over non-blocking sockets.
//! - [`transport`]: byte streams the engines run over (TCP, the only module that opens
//!   sockets) and [`transport::tunnel`], a byte stream over a child process's pipes (`ssh -W`,
//!   a proxy command), and the [`transport::link`]s the driver waits in (a stream, UDP).
//! - `ws` (private): the one sans-I/O WebSocket client codec, which WebRCON's and the
//!   management protocol's machines run over their streams.
//! - [`consoles`]: the other remote consoles (BattlEye RCon, Rust's WebRCON, 7 Days to Die
//!   telnet), sans-IO machines, with their session ([`consoles::Console`]) and practice servers.
//! - [`minecraft`]: the Server List Ping, the UDP query and SRV records, sans-IO, and their
//!   network driver.
//! - [`text`]: the `.mcfunction` line rules for batch input and `§` formatting codes to ANSI or
//!   plain text.
//! - `mgmt` (cargo feature `mgmt`, on by default): the Minecraft Server Management Protocol
//!   (JSON-RPC over WebSocket, TLS) client and a practice management server.
//! - [`practice`]: an in-process RCON server with a strict vanilla mode and other dialects, for
//!   tests, demos and benchmarks.
//! - [`error`]: the library's one error type.
//!
//! Embedding: connect, log in and run commands; long output comes back whole. (This example
//! starts the practice server, so it does something only with the `practice` feature.)
//!
//! ```
//! # #[cfg(feature = "practice")] {
//! use rconsole::practice::{PracticeConfig, PracticeServer};
//! use rconsole::transport::TcpConnector;
//! use rconsole::{Client, ClientOptions, Password};
//!
//! let server = PracticeServer::start(PracticeConfig::default())?; // strict vanilla, password "practice"
//! let connector = Box::new(TcpConnector::new("127.0.0.1", server.port()));
//! let mut client = Client::connect(connector, Password::new("practice"), ClientOptions::default())?;
//! assert_eq!(client.command("echo hello")?, "hello");
//! assert_eq!(client.command("chars 10000")?.encode_utf16().count(), 10_000); // 3 fragments
//! # }
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```
//!
//! Features: `cli` (default) builds the `rcon` binary and carries its crates (clap, rustyline,
//! toml, directories, rpassword, anyhow); `practice` (default, implied by `cli`) adds the
//! practice server. With `rconsole = { version = "...", default-features = false }` the library
//! needs only serde, serde_json, thiserror and mio (with libc on Unix, for the fleet's
//! descriptor limit); the codecs work on byte buffers:
//!
//! ```
//! use rconsole::rcon::packet::{Decoder, encode};
//!
//! let bytes = encode(7, 2, b"list"); // id 7, type 2 (command)
//! let mut decoder = Decoder::default();
//! decoder.feed(&bytes);
//! let packet = decoder.next_packet()?.expect("one whole packet");
//! assert_eq!((packet.id, packet.kind, &packet.body[..]), (7, 2, &b"list"[..]));
//! # Ok::<(), rconsole::rcon::packet::DecodeError>(())
//! ```
//!
//! Out of scope here: argument parsing, configuration files, the interactive console, reading
//! batch files and writing to the terminal. Those belong to the `rcon` binary.

pub mod consoles;
pub mod dialect;
pub mod engine;
pub mod error;
pub mod fleet;
#[cfg(feature = "mgmt")]
pub mod mgmt;
pub mod minecraft;
#[cfg(feature = "practice")]
pub mod practice;
pub mod rcon;
pub mod text;
mod time;
pub mod transport;
mod ws;

pub use dialect::{Dialect, open};
pub use engine::format_duration;
pub use error::{Error, ErrorKind, Phase, Result};
pub use rcon::client::{Client, ClientOptions, EndDetection, Password};
