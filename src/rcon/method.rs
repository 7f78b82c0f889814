//! How an RCON server's answers end ([`EndMethod`]): what the exchange probes, learns or is
//! told, with the stable names the application remembers them by (docs/protocol.md section 3).

/// How the end of a command's output is found (what is probed, learned or forced).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EndMethod {
    /// Vanilla's split rule: a short first fragment is complete, a full one is followed by the id
    /// -2 sentinel.
    Vanilla,
    /// The id -2 sentinel after the first fragment, answered by a mirror or `Unknown request`.
    Sentinel,
    /// A sentinel with a fresh positive id, for servers that close on ids <= 0.
    PositiveSentinel,
    /// The server's own end marker: an empty packet with the command's id.
    EndMarker,
    /// A quiet gap from the command on ends the answer (an empty answer sends nothing).
    Silence,
    /// A quiet gap after the last packet ends the answer (every answer has one).
    Idle,
    /// One packet is the whole answer.
    SinglePacket,
}

impl EndMethod {
    /// Every method, for parsing remembered names.
    pub const ALL: [EndMethod; 7] = [
        EndMethod::Vanilla,
        EndMethod::Sentinel,
        EndMethod::PositiveSentinel,
        EndMethod::EndMarker,
        EndMethod::Silence,
        EndMethod::Idle,
        EndMethod::SinglePacket,
    ];

    /// A stable name (for the file of learned servers).
    pub fn name(self) -> &'static str {
        match self {
            EndMethod::Vanilla => "vanilla",
            EndMethod::Sentinel => "sentinel",
            EndMethod::PositiveSentinel => "positive-sentinel",
            EndMethod::EndMarker => "end-marker",
            EndMethod::Silence => "silence",
            EndMethod::Idle => "idle",
            EndMethod::SinglePacket => "single-packet",
        }
    }

    /// The method with this name.
    pub fn from_name(name: &str) -> Option<EndMethod> {
        EndMethod::ALL.into_iter().find(|m| m.name() == name)
    }

    /// What it means, for messages.
    pub fn describe(self) -> &'static str {
        match self {
            EndMethod::Vanilla => {
                "vanilla's split rule (one round trip for short answers, the id -2 sentinel after a full fragment)"
            }
            EndMethod::Sentinel => "an id -2 end-of-output sentinel",
            EndMethod::PositiveSentinel => "a positive-id end-of-output sentinel",
            EndMethod::EndMarker => {
                "the server's own end marker (an empty reply with the command's id)"
            }
            EndMethod::Silence => "a quiet gap (an empty answer sends nothing)",
            EndMethod::Idle => "a quiet gap after the last packet",
            EndMethod::SinglePacket => "one packet per answer",
        }
    }
}
