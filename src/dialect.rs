//! Server dialects, above the engines: what differs between Minecraft, Source, Factorio and
//! Palworld RCON, as data the [`Options`] are built from (docs/protocol.md sections 2-4), and the
//! other consoles (BattlEye, WebRCON, telnet; docs/protocol.md section 8), which name their
//! [`Protocol`]; and [`open`], which picks the engine for a protocol. The engines themselves
//! have no per-game code paths and know nothing of each other; a dialect only picks settings.

use crate::consoles::Console;
use crate::engine::{Options, Password, Protocol, Remote};
use crate::error::Result;
use crate::rcon::client::Client;
use crate::rcon::exchange::EndDetection;
use crate::transport::Connector;

/// Opens a logged-in session of `protocol`: the RCON [`Client`] or a [`Console`].
pub fn open(
    protocol: Protocol,
    connector: Box<dyn Connector>,
    password: Password,
    opts: Options,
) -> Result<Box<dyn Remote>> {
    match protocol {
        Protocol::Rcon => Ok(Box::new(Client::connect(connector, password, opts)?)),
        other => Ok(Box::new(Console::connect(
            other, connector, password, opts,
        )?)),
    }
}

/// One server family's RCON behaviour, as the engine needs to know it.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub struct Dialect {
    /// The name on the command line and in profiles.
    pub name: &'static str,
    /// One line for help texts.
    pub summary: &'static str,
    /// How the end of a command's output is found.
    pub end: EndDetection,
    /// Longest command body, in UTF-8 bytes, that the server reads whole.
    pub max_command_bytes: usize,
    /// Whether replies may carry any id (Palworld answers everything with id 0): output packets
    /// and login replies are matched to the outstanding request whatever their id.
    pub any_reply_id: bool,
    /// Whether a packet whose size field claims more bytes than ever arrive is shown as far as
    /// it got when the idle gap passes (with a warning), instead of waiting for the rest.
    pub partial_on_idle: bool,
    /// Whether the server reads several requests in flight. The engine never needs it (it
    /// waits for the first fragment before sending the sentinel); recorded for callers that
    /// want to pipeline.
    pub pipelining: bool,
    /// The wire protocol: RCON, or one of the other consoles.
    pub protocol: Protocol,
    /// The port used when none is given.
    pub default_port: u16,
}

impl Dialect {
    /// Vanilla Minecraft and its forks: probe the sentinel after login, 1446-byte commands.
    pub const MINECRAFT: Dialect = Dialect {
        name: "minecraft",
        summary: "vanilla, Paper, Spigot, Forge: probed end-of-output marker, 1446-byte commands",
        end: EndDetection::Detect,
        max_command_bytes: crate::rcon::packet::MAX_COMMAND_BYTES,
        any_reply_id: false,
        partial_on_idle: false,
        pipelining: false,
        protocol: Protocol::Rcon,
        default_port: 25575,
    };

    /// Source engine: the empty type-0 sentinel is mirrored (the trailer that follows is dropped
    /// as stale); Valve caps a packet's size field at 4096, so 4086-byte commands.
    pub const SOURCE: Dialect = Dialect {
        name: "source",
        summary: "CS2, TF2, GMod, Rust, ARK...: mirrored end-of-output marker, 4086-byte commands",
        end: EndDetection::Negative,
        max_command_bytes: 4086,
        any_reply_id: false,
        partial_on_idle: false,
        pipelining: true,
        protocol: Protocol::Rcon,
        default_port: 25575,
    };

    /// Factorio: one packet per answer, no sentinel.
    pub const FACTORIO: Dialect = Dialect {
        name: "factorio",
        summary: "Factorio: one packet per answer, no end-of-output marker",
        end: EndDetection::SinglePacket,
        max_command_bytes: 65_536,
        any_reply_id: false,
        partial_on_idle: false,
        pipelining: false,
        protocol: Protocol::Rcon,
        default_port: 25575,
    };

    /// Palworld (as reported): every reply has id 0 and long or non-ASCII replies can declare
    /// more bytes than they send, so replies are matched by order and end after an idle gap
    /// after their packet. Every command is answered (the clients that work with it read one
    /// packet per command), so a slow answer is waited for rather than taken for an empty one,
    /// which would put it under the next command.
    pub const PALWORLD: Dialect = Dialect {
        name: "palworld",
        summary: "Palworld: replies matched whatever their id, output ends after an idle gap",
        end: EndDetection::Answered,
        max_command_bytes: 4086,
        any_reply_id: true,
        partial_on_idle: true,
        pipelining: false,
        protocol: Protocol::Rcon,
        default_port: 25575,
    };

    /// BattlEye RCon over UDP (DayZ, Arma 2/3, Arma Reforger). Port 2306: Arma 3's default
    /// (game port 2302 + 4); DayZ configs usually set `RConPort` themselves.
    pub const BATTLEYE: Dialect = Dialect {
        name: "battleye",
        summary: "DayZ, Arma 2/3, Arma Reforger: BattlEye RCon over UDP, port 2306",
        end: EndDetection::SinglePacket,
        max_command_bytes: crate::consoles::battleye::MAX_COMMAND_BYTES,
        any_reply_id: false,
        partial_on_idle: false,
        pipelining: false,
        protocol: Protocol::BattlEye,
        default_port: 2306,
    };

    /// Rust (the game): WebRCON, JSON over a WebSocket, `rcon.port` 28016.
    pub const WEBRCON: Dialect = Dialect {
        name: "webrcon",
        summary: "Rust: WebRCON (JSON over WebSocket, rcon.web 1), port 28016",
        end: EndDetection::SinglePacket,
        max_command_bytes: crate::consoles::webrcon::MAX_COMMAND_BYTES,
        any_reply_id: false,
        partial_on_idle: false,
        pipelining: false,
        protocol: Protocol::WebRcon,
        default_port: 28016,
    };

    /// 7 Days to Die: the telnet console, `TelnetPort` 8081.
    pub const TELNET: Dialect = Dialect {
        name: "telnet",
        summary: "7 Days to Die: telnet console, answers end after --idle-gap, port 8081",
        end: EndDetection::Idle,
        max_command_bytes: crate::consoles::telnet::MAX_COMMAND_BYTES,
        any_reply_id: false,
        partial_on_idle: false,
        pipelining: false,
        protocol: Protocol::Telnet,
        default_port: 8081,
    };

    /// Every dialect, the default first.
    pub const ALL: [Dialect; 7] = [
        Dialect::MINECRAFT,
        Dialect::SOURCE,
        Dialect::FACTORIO,
        Dialect::PALWORLD,
        Dialect::BATTLEYE,
        Dialect::WEBRCON,
        Dialect::TELNET,
    ];

    /// The dialect with this name (case-insensitive).
    pub fn from_name(name: &str) -> Option<Dialect> {
        Dialect::ALL
            .into_iter()
            .find(|d| d.name.eq_ignore_ascii_case(name.trim()))
    }

    /// The names, for error messages: `minecraft, source, factorio, palworld`.
    pub fn names() -> String {
        let names: Vec<&str> = Dialect::ALL.iter().map(|d| d.name).collect();
        names.join(", ")
    }

    /// Sets the dialect's fields of `opts`, keeping the rest (timeouts, observer).
    pub fn apply(&self, opts: &mut Options) {
        opts.end = self.end;
        opts.max_command_bytes = self.max_command_bytes;
        opts.any_reply_id = self.any_reply_id;
        opts.partial_on_idle = self.partial_on_idle;
    }
}

impl Default for Dialect {
    fn default() -> Self {
        Dialect::MINECRAFT
    }
}

impl std::fmt::Display for Dialect {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.name)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_round_trip() {
        for d in Dialect::ALL {
            assert_eq!(Dialect::from_name(d.name), Some(d));
        }
        assert_eq!(Dialect::from_name("Source"), Some(Dialect::SOURCE));
        assert_eq!(Dialect::from_name("quake"), None);
        assert_eq!(Dialect::default(), Dialect::MINECRAFT);
        assert_eq!(
            Dialect::names(),
            "minecraft, source, factorio, palworld, battleye, webrcon, telnet"
        );
    }

    #[test]
    fn apply_sets_only_dialect_fields() {
        let mut opts = Options {
            timeout: std::time::Duration::from_secs(3),
            ..Options::default()
        };
        Dialect::PALWORLD.apply(&mut opts);
        assert_eq!(opts.end, EndDetection::Answered);
        assert!(opts.any_reply_id && opts.partial_on_idle);
        assert_eq!(opts.timeout, std::time::Duration::from_secs(3));
        Dialect::MINECRAFT.apply(&mut opts);
        assert_eq!(opts.end, EndDetection::Detect);
        assert!(!opts.any_reply_id && !opts.partial_on_idle);
        assert_eq!(opts.max_command_bytes, 1446);
    }
}
