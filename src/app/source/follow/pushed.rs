//! `--follow` with BattlEye, WebRCON and telnet: the messages the server pushes, as events as
//! they arrive (nothing is polled). Recognisable joins and leaves become `joined` / `left`
//! events, every other line a `message` event; each carries the line as the server sent it
//! (`raw`). A lost connection (the server closed it, or a BattlEye keep-alive went unanswered
//! for the timeout) is said on stderr and retried every second, and the follow goes on. The
//! servers are read on the fleet's event loop ([`looped`]); `--remote` and tunnels on Windows
//! on a thread each.
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

use std::sync::Arc;
use std::sync::mpsc;
use std::time::Duration;

use rconsole::consoles::{MessageSink, Protocol, Remote};

use crate::app::exit::{Exit, chain, fail};
use crate::app::print::stderr;
use crate::app::resolve::plan::FollowOptions;
use crate::app::resolve::settings::Settings;
use crate::app::runner::{at_once, fanout};
use crate::app::shared::StderrObserver;
use crate::app::source::follow::events::{Emitter, FollowEvent, reconnect};
use crate::app::source::follow::looped;

/// How often a follow looks whether its connection is still there, and retries a lost one.
const CHECK: Duration = Duration::from_millis(200);
const RETRY: Duration = Duration::from_secs(1);

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

/// One server to follow: how to log in again.
struct ConsoleTarget {
    name: String,
    settings: Settings,
    protocol: Protocol,
    password: rconsole::Password,
}

impl ConsoleTarget {
    /// Logs in and starts the live reader; the session's own login lines are not events.
    fn open(&self, sink: &MessageSink) -> rconsole::Result<Box<dyn Remote>> {
        let connector = self
            .settings
            .connector()
            .map_err(|e| rconsole::Error::Protocol(format!("cannot make the connection: {e:#}")))?;
        let opts = self.settings.options(Arc::new(StderrObserver));
        let mut remote = rconsole::open(self.protocol, connector, self.password.clone(), opts)?;
        remote.set_messages(Arc::clone(sink), true);
        Ok(remote)
    }
}

/// Says that the follow has begun, once every server is logged in.
pub(super) fn following(names: &[String]) {
    stderr!(
        "rcon: following {} (the messages the server pushes); Ctrl-C stops",
        crate::app::shared::some_names(names)
    );
}

/// Follows the pushed messages of one or several BattlEye/WebRCON/telnet servers: on the event
/// loop, or where a server cannot be driven there (`--remote`, a tunnel on Windows), a thread
/// per server.
pub fn run(options: &FollowOptions, servers: Vec<(String, Settings)>) -> anyhow::Result<Exit> {
    let several = servers.len() > 1;
    if !looped::on_threads(&servers)? {
        let emitter = Emitter::new(options, several);
        let names: Vec<String> = servers.iter().map(|(n, _)| n.clone()).collect();
        let servers = fanout::servers(servers, several)?;
        return looped::run(names, servers, looped::Watch::Pushed, &emitter);
    }
    let emitter = Arc::new(Emitter::new(options, several));
    let (done, ended) = mpsc::channel::<std::io::Error>();
    // Connect to each first (all at once, each password read once), so a wrong address or
    // password fails at once; the first failure in the servers' order is the one said.
    let passwords = fanout::passwords(&servers)?;
    let mut targets = Vec::with_capacity(servers.len());
    for ((name, settings), password) in servers.into_iter().zip(passwords) {
        let protocol = settings.dialect.value.dialect().protocol;
        let target = ConsoleTarget {
            name: name.clone(),
            settings,
            protocol,
            password,
        };
        let sink: MessageSink = {
            let (emitter, done, name) = (Arc::clone(&emitter), done.clone(), name.clone());
            Arc::new(move |text: &str| {
                for line in split(protocol, text) {
                    if let Some(e) = event_for(protocol, line, &name)
                        && let Err(err) = emitter.emit(&e)
                    {
                        let _ = done.send(err);
                    }
                }
            })
        };
        targets.push((target, sink));
    }
    let opened = at_once::each(&mut targets, |(target, sink)| {
        target.open(sink).map_err(|e| {
            fail(
                Exit::from_error(&e),
                format!("{}: {}", target.name, chain(&e)),
            )
        })
    });
    let mut followers = Vec::with_capacity(targets.len());
    for ((target, sink), remote) in targets.into_iter().zip(opened) {
        let remote = remote.unwrap_or_else(|| {
            Err(anyhow::anyhow!(
                "{}: the connecting thread failed",
                target.name
            ))
        })?;
        followers.push((target, sink, remote));
    }
    following(
        &followers
            .iter()
            .map(|(t, ..)| t.name.clone())
            .collect::<Vec<_>>(),
    );
    for (target, sink, remote) in followers {
        std::thread::spawn(move || watch(target, sink, remote));
    }
    drop(done);
    match ended.recv() {
        // stdout is gone (a closed pipe): the follow ends.
        Ok(e) => Err(e.into()),
        Err(_) => Ok(Exit::Success),
    }
}

/// The lines of one pushed message: WebRCON's chat JSON is one, anything else line by line.
pub(super) fn split(protocol: Protocol, text: &str) -> Vec<&str> {
    if protocol == Protocol::WebRcon && text.trim_start().starts_with('{') {
        return vec![text];
    }
    text.lines().collect()
}

/// Keeps one server's session alive: a lost connection is said once, then retried
/// ([`reconnect`]).
fn watch(target: ConsoleTarget, sink: MessageSink, remote: Box<dyn Remote>) {
    let mut remote = remote;
    loop {
        std::thread::sleep(CHECK);
        if remote.check_open() {
            continue;
        }
        stderr!(
            "rcon: {}: connection lost; reconnecting every second",
            target.name
        );
        // The old session (and its reader) goes before the new one logs in.
        drop(remote);
        remote = reconnect(&target.name, RETRY, || Ok(target.open(&sink)?));
    }
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
