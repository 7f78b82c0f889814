//! What the RCON exchange tells the user that is not an error, as typed values: the exchange
//! decides *that* something is worth saying and with which facts; [`Display`](std::fmt::Display)
//! gives the wording the `rcon` application prints (another front end can word them its own way).

use std::fmt;
use std::time::Duration;

use crate::rcon::method::EndMethod;
use crate::time::format_duration;

/// A notice from the exchange, carried in an [`Action::Warning`](crate::engine::Action::Warning)
/// or [`Action::Note`](crate::engine::Action::Note).
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum RconNotice {
    /// A command long enough that a link with a small MTU may deliver its packet in two pieces,
    /// which a vanilla server answers by closing the connection (docs/protocol.md section 2).
    LongCommand {
        /// The command's length in bytes.
        bytes: usize,
    },
    /// How the server's answers end was found out (or found to differ from what was
    /// remembered): what it did, and the method used from now on.
    Settled {
        /// What the server was seen to do.
        finding: Finding,
        /// The method in force from now on.
        method: EndMethod,
    },
    /// Output for a command whose answer had already ended: reported, never shown under
    /// another command.
    LateAnswer {
        /// The request id the packet carried.
        id: i32,
        /// The start of its text.
        preview: String,
        /// Whether the text goes on past the preview.
        cut: bool,
        /// The packet body's length in bytes.
        bytes: usize,
        /// For the answer the quiet gap had ended: how long after its command it came, and the
        /// gap it widens to (said once a session).
        after_gap: Option<(Duration, Option<Duration>)>,
    },
    /// The server closed the connection on the end-of-output sentinel that what was remembered
    /// about it called safe (another server took the address): the answer had come whole, what
    /// was learned is forgotten, and the next connection probes the server again.
    ClosedOnRemembered,
    /// A packet's size field claimed more than arrived before the server went quiet; what
    /// arrived is shown.
    PartialPacket {
        /// The length the size field declared.
        declared: usize,
        /// The bytes that arrived.
        received: usize,
    },
}

/// What a server was seen to do that settled its end-of-output method.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Finding {
    /// It answers otherwise than the method remembered for it.
    Contradicts {
        /// The method that was remembered.
        was: EndMethod,
    },
    /// How it treats end-of-output sentinels, per probe step (id -2, then a positive id).
    Sentinels(Vec<SentinelReaction>),
}

/// How a server treated an end-of-output sentinel.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
#[non_exhaustive]
pub enum SentinelReaction {
    /// It closed the connection.
    Closes,
    /// It answered with a login failure and closed.
    RefusesLogin,
    /// It did not answer at all.
    Ignores,
}

impl SentinelReaction {
    fn describe(self) -> &'static str {
        match self {
            SentinelReaction::Closes => "closes the connection on",
            SentinelReaction::RefusesLogin => "answers with a login failure and closes on",
            SentinelReaction::Ignores => "does not answer",
        }
    }
}

impl fmt::Display for Finding {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Finding::Contradicts { was } => write!(
                f,
                "answers differently from what was remembered (answers ending by {})",
                was.name()
            ),
            Finding::Sentinels(steps) => {
                let mut hows: Vec<&str> = steps.iter().map(|r| r.describe()).collect();
                hows.dedup();
                let which = if steps.len() > 1 {
                    " (id -2 and positive ids)"
                } else {
                    ""
                };
                write!(f, "{} end-of-output sentinels{which}", hows.join(" or "))
            }
        }
    }
}

impl fmt::Display for RconNotice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            RconNotice::LongCommand { bytes } => write!(
                f,
                "a command of {bytes} bytes is sent as one {}-byte packet; over links with a small \
                 MTU (VPNs, some tunnels) a vanilla server may get it in two pieces and close the \
                 connection",
                bytes + 14
            ),
            RconNotice::Settled { finding, method } => write!(
                f,
                "this server {finding}; its answers now end by {}",
                method.describe()
            ),
            RconNotice::LateAnswer {
                id,
                preview,
                cut,
                bytes,
                after_gap,
            } => {
                let more = if *cut { "..." } else { "" };
                match after_gap {
                    None => write!(
                        f,
                        "an answer to an earlier command (request id {id}) came after that answer \
                         had ended and is not shown under it: {preview:?}{more} ({bytes} bytes)"
                    ),
                    Some((late, grows)) => {
                        write!(
                            f,
                            "an answer came {} after its command was sent, after the quiet gap had \
                             ended it, and is not shown under it: {preview:?}{more} ({bytes} bytes)",
                            format_duration(*late)
                        )?;
                        match grows {
                            Some(gap) => write!(
                                f,
                                "; the gap for this server grows to {}",
                                format_duration(*gap)
                            ),
                            None => Ok(()),
                        }
                    }
                }
            }
            RconNotice::ClosedOnRemembered => f.write_str(
                "this server closed the connection on the end-of-output sentinel that what was \
                 remembered about this address called safe (another server now?); its answer had \
                 come whole; what was learned is forgotten and the next connection probes again",
            ),
            RconNotice::PartialPacket { declared, received } => write!(
                f,
                "the server declared a {declared}-byte packet but sent {received} bytes, then went \
                 quiet; showing what arrived (the output may be incomplete)"
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn each_notice_in_words() {
        let settled = RconNotice::Settled {
            finding: Finding::Sentinels(vec![
                SentinelReaction::RefusesLogin,
                SentinelReaction::RefusesLogin,
            ]),
            method: EndMethod::Silence,
        };
        assert_eq!(
            settled.to_string(),
            format!(
                "this server answers with a login failure and closes on end-of-output sentinels \
                 (id -2 and positive ids); its answers now end by {}",
                EndMethod::Silence.describe()
            )
        );
        let one = Finding::Sentinels(vec![SentinelReaction::Closes]);
        assert_eq!(
            one.to_string(),
            "closes the connection on end-of-output sentinels"
        );
        let two = Finding::Sentinels(vec![SentinelReaction::Closes, SentinelReaction::Ignores]);
        assert_eq!(
            two.to_string(),
            "closes the connection on or does not answer end-of-output sentinels (id -2 and \
             positive ids)"
        );
        let late = RconNotice::LateAnswer {
            id: 7,
            preview: "There are".into(),
            cut: true,
            bytes: 300,
            after_gap: Some((Duration::from_millis(120), Some(Duration::from_millis(480)))),
        };
        let text = late.to_string();
        assert!(
            text.starts_with("an answer came 120ms after its command was sent"),
            "{text}"
        );
        assert!(
            text.contains("\"There are\"... (300 bytes); the gap for this server grows to 480ms"),
            "{text}"
        );
        let stale = RconNotice::LateAnswer {
            id: 7,
            preview: "x".into(),
            cut: false,
            bytes: 1,
            after_gap: None,
        };
        assert!(stale.to_string().contains("(request id 7)"));
        assert!(stale.to_string().ends_with("\"x\" (1 bytes)"));
        assert!(
            RconNotice::LongCommand { bytes: 1400 }
                .to_string()
                .contains("one 1414-byte packet")
        );
        assert!(
            RconNotice::PartialPacket {
                declared: 100,
                received: 36
            }
            .to_string()
            .starts_with("the server declared a 100-byte packet but sent 36 bytes")
        );
    }
}
