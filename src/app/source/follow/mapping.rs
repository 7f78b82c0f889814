//! How the messages BattlEye, WebRCON and telnet servers push become `--follow` events:
//! recognisable joins and leaves become `joined` / `left` events, every other line a `message`
//! event; each carries the line as the server sent it (`raw`).
//!
//! The mapping ([`event_for`]):
//! - BattlEye (DayZ, Arma): `Player #N NAME (IP:PORT) connected` is `joined NAME`,
//!   `Player #N NAME disconnected` is `left NAME`.
//! - 7 Days to Die telnet: `Player connected, entityid=.., name=NAME, ...` is `joined NAME`,
//!   `Player disconnected: ... PlayerName='NAME' ...` is `left NAME`; the log line's time,
//!   uptime and level are cut from `text` (kept in `raw`). Lines about the telnet session
//!   itself (its banner, `Telnet connection from`, `Executing command ... by Telnet`) are no
//!   events.
//! - Rust WebRCON: `IP:PORT/STEAMID/NAME joined [...]` is `joined NAME`,
//!   `IP:PORT/STEAMID/NAME disconnecting: REASON` is `left NAME`; a chat frame (its Message is
//!   JSON with `Username` and `Message`) is a `message` with text `NAME: TEXT`.

use rconsole::consoles::Protocol;

use crate::app::source::follow::events::FollowEvent;

/// The event for one pushed line of `protocol`, or `None` for lines that are no event (empty,
/// or about the console session itself).
pub fn event_for(protocol: Protocol, line: &str, server: &str) -> Option<FollowEvent> {
    let raw = line.trim_end_matches(['\r', '\n']);
    if raw.trim().is_empty() {
        return None;
    }
    let (kind, player, text) = match protocol {
        Protocol::BattlEye => battleye(raw),
        Protocol::Telnet => telnet(raw)?,
        Protocol::WebRcon => webrcon(raw),
        Protocol::Rcon => return None,
    };
    Some(FollowEvent {
        kind: kind.to_string(),
        player,
        server: server.to_string(),
        params: serde_json::Value::Null,
        text,
        raw: Some(raw.to_string()),
    })
}

type Mapped = (&'static str, Option<String>, Option<String>);

fn message(text: &str) -> Mapped {
    ("message", None, Some(text.to_string()))
}

fn battleye(line: &str) -> Mapped {
    let named = line
        .strip_prefix("Player #")
        .and_then(|r| r.split_once(' '))
        .filter(|(n, _)| !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()))
        .map(|(_, rest)| rest);
    if let Some(rest) = named {
        if let Some(head) = rest.strip_suffix(") connected")
            && let Some((name, _addr)) = head.rsplit_once(" (")
            && !name.is_empty()
        {
            return ("joined", Some(name.to_string()), None);
        }
        if let Some(name) = rest.strip_suffix(" disconnected")
            && !name.is_empty()
        {
            return ("left", Some(name.to_string()), None);
        }
    }
    message(line)
}

/// A 7 Days to Die log line without its `TIME UPTIME LEVEL ` start.
fn log_text(line: &str) -> &str {
    if !rconsole::consoles::telnet::is_log_line(line) {
        return line;
    }
    let mut parts = line.splitn(4, ' ');
    match (parts.next(), parts.next(), parts.next(), parts.next()) {
        (Some(_), Some(_), Some(_), Some(rest)) => rest,
        _ => line,
    }
}

fn telnet(line: &str) -> Option<Mapped> {
    let text = log_text(line);
    let session_noise = text.starts_with("***")
        || text.starts_with("Press 'help'")
        || text.starts_with("Telnet connection from")
        || text.starts_with("Telnet connection closed")
        || (text.starts_with("Executing command '") && text.contains("by Telnet from"));
    if session_noise {
        return None;
    }
    if let Some(fields) = text.strip_prefix("Player connected, ")
        && let Some(name) = fields
            .split(", ")
            .find_map(|f| f.strip_prefix("name="))
            .filter(|n| !n.is_empty())
    {
        return Some(("joined", Some(name.to_string()), None));
    }
    if let Some(fields) = text.strip_prefix("Player disconnected: ")
        && let Some((_, after)) = fields.split_once("PlayerName='")
        && let Some((name, _)) = after.split_once('\'')
        && !name.is_empty()
    {
        return Some(("left", Some(name.to_string()), None));
    }
    Some(message(text))
}

fn webrcon(line: &str) -> Mapped {
    if let Ok(v) = serde_json::from_str::<serde_json::Value>(line)
        && let (Some(user), Some(said)) = (
            v.get("Username").and_then(|u| u.as_str()),
            v.get("Message").and_then(|m| m.as_str()),
        )
    {
        return ("message", None, Some(format!("{user}: {said}")));
    }
    // IP:PORT/STEAMID/NAME joined [os/STEAMID] and IP:PORT/STEAMID/NAME disconnecting: REASON
    let mut parts = line.splitn(3, '/');
    if let (Some(addr), Some(id), Some(rest)) = (parts.next(), parts.next(), parts.next())
        && addr.contains(':')
        && !id.is_empty()
        && id.bytes().all(|b| b.is_ascii_digit())
    {
        if let Some((name, _)) = rest.rsplit_once(" joined [")
            && !name.is_empty()
        {
            return ("joined", Some(name.to_string()), None);
        }
        if let Some((name, _)) = rest.split_once(" disconnecting: ")
            && !name.is_empty()
        {
            return ("left", Some(name.to_string()), None);
        }
    }
    message(line)
}

/// The lines of one pushed message: WebRCON's chat JSON is one, anything else line by line.
pub fn split(protocol: Protocol, text: &str) -> Vec<&str> {
    if protocol == Protocol::WebRcon && text.trim_start().starts_with('{') {
        return vec![text];
    }
    text.lines().collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use rconsole::consoles::practice::{Kind, Push, push_lines};

    fn mapped(protocol: Protocol, line: &str) -> Option<(String, Option<String>, Option<String>)> {
        event_for(protocol, line, "s").map(|e| (e.kind, e.player, e.text))
    }

    fn joined(n: &str) -> Option<(String, Option<String>, Option<String>)> {
        Some(("joined".into(), Some(n.into()), None))
    }

    fn left(n: &str) -> Option<(String, Option<String>, Option<String>)> {
        Some(("left".into(), Some(n.into()), None))
    }

    fn msg(t: &str) -> Option<(String, Option<String>, Option<String>)> {
        Some(("message".into(), None, Some(t.into())))
    }

    #[test]
    fn battleye_lines() {
        let b = Protocol::BattlEye;
        assert_eq!(
            mapped(b, "Player #3 Big Steve (10.0.0.1:2304) connected"),
            joined("Big Steve")
        );
        assert_eq!(mapped(b, "Player #12 Alex disconnected"), left("Alex"));
        for other in [
            "Player #3 Steve - BE GUID: 0123",
            "Verified GUID (0123) of player #3 Steve",
            "(Global) Steve: I connected",
            "Player #x Steve disconnected",
            "Player # Steve (1.2.3.4:1) connected",
        ] {
            assert_eq!(mapped(b, other), msg(other), "{other}");
        }
        assert_eq!(mapped(b, "  "), None);
    }

    #[test]
    fn telnet_lines() {
        let t = Protocol::Telnet;
        assert_eq!(
            mapped(
                t,
                "2026-12-02T01:30:00 123.456 INF Player connected, entityid=171, name=Steve, pltfmid=Steam_1, ip=1.2.3.4"
            ),
            joined("Steve")
        );
        assert_eq!(
            mapped(
                t,
                "2026-12-02T01:30:00 123.456 INF Player disconnected: EntityID=171, PlayerID='7656', OwnerID='7656', PlayerName='Steve Two'"
            ),
            left("Steve Two")
        );
        assert_eq!(
            mapped(
                t,
                "2026-12-02T01:30:00 123.456 INF GMSG: Player 'Steve' joined the game"
            ),
            msg("GMSG: Player 'Steve' joined the game")
        );
        for noise in [
            "*** Connected with 7DTD server.",
            "Press 'help' to get a list of all commands. Press 'exit' to end session.",
            "2026-12-02T01:30:00 123.456 INF Telnet connection from: 127.0.0.1:4000",
            "2026-12-02T01:30:00 123.456 INF Executing command 'gt' by Telnet from 127.0.0.1:4000",
            "",
        ] {
            assert_eq!(mapped(t, noise), None, "{noise}");
        }
    }

    #[test]
    fn webrcon_lines() {
        let w = Protocol::WebRcon;
        assert_eq!(
            mapped(w, "127.0.0.1:5/7656/Steve joined [windows/7656]"),
            joined("Steve")
        );
        assert_eq!(
            mapped(w, "127.0.0.1:5/7656/A/B disconnecting: timed out"),
            left("A/B")
        );
        assert_eq!(
            mapped(
                w,
                r#"{"Channel":0,"Message":"hi there","Username":"Steve"}"#
            ),
            msg("Steve: hi there")
        );
        assert_eq!(
            mapped(w, "Saving 1234 entities"),
            msg("Saving 1234 entities")
        );
        assert_eq!(mapped(w, "a/b/c joined [x]"), msg("a/b/c joined [x]"));
    }

    #[test]
    fn what_the_practice_servers_push_maps_to_the_events_of_their_game() {
        for (kind, protocol) in [
            (Kind::BattlEye, Protocol::BattlEye),
            (Kind::Telnet, Protocol::Telnet),
            (Kind::WebRcon, Protocol::WebRcon),
        ] {
            let first = |p: Push| {
                let (line, _) = push_lines(kind, &p).remove(0);
                mapped(protocol, &line)
            };
            assert_eq!(
                first(Push::Join("Steve".into())),
                joined("Steve"),
                "{kind:?}"
            );
            assert_eq!(
                first(Push::Leave("Steve".into())),
                left("Steve"),
                "{kind:?}"
            );
            let chat = first(Push::Chat("Steve".into(), "hi".into())).unwrap();
            assert_eq!(chat.0, "message", "{kind:?}");
            assert!(chat.2.unwrap().contains("hi"), "{kind:?}");
        }
    }
}
