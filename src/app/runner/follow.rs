//! `--follow` on the fleet's event loop, for every server (`--remote` ones included): RCON servers asked `list` every `--poll` ([`Watch::Poll`]), BattlEye,
//! WebRCON and telnet servers read for what they push ([`Watch::Pushed`]), one thread for the
//! whole group. Every server is connected to at once; the follow begins when each has answered
//! (or logged in), and the first failure in the group's order ends it before that. A
//! connection lost later (the server closed it, a command or keep-alive failed) is said once
//! and connected again ([`fleet::Handler::lost`]): every poll for RCON, every second for the
//! consoles, until the server is back (`reconnected; following again`).

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use rconsole::consoles::Protocol;
use rconsole::fleet;
use serde_json::Value;

use crate::app::exit::{Exit, chain, fail};
use crate::app::print::stderr;
use crate::app::resolve::plan::FollowOptions;
use crate::app::resolve::settings::Settings;
use crate::app::runner::fanout;
use crate::app::runner::looped::{LoopPlan, LoopTargets, Move, Runner, Sent, Under};
use crate::app::shared::parse_list;
use crate::app::source::follow::events::{Emitter, FollowEvent};
use crate::app::source::follow::mapping;

/// How a console that pushes its messages is connected again after a loss.
const RETRY: Duration = Duration::from_secs(1);

/// How a consoles' wait for pushed messages is broken up: it is asked again this often.
const IDLE: Duration = Duration::from_secs(3600);

/// After this long without a notification, the management follow checks the connection with
/// a `server/status` call.
#[cfg(feature = "mgmt")]
pub const MGMT_CHECK: Duration = Duration::from_secs(15);

/// What a follow watches.
#[derive(Debug, Clone, Copy)]
pub enum Watch {
    /// RCON: `list`, every so often, diffed into `joined` and `left`.
    Poll(Duration),
    /// Each console's pushed messages.
    Pushed,
    /// A management server's notifications, its log lines at this level and above; the
    /// connection is checked with a small call after a quiet spell.
    #[cfg(feature = "mgmt")]
    Notifications(Option<crate::app::resolve::args::LogLevel>),
}

/// The events between two `list` answers: `left` first, then `joined`, each by name.
pub fn diff(before: &BTreeSet<String>, now: &BTreeSet<String>, server: &str) -> Vec<FollowEvent> {
    let ev = |kind: &str, p: &String| FollowEvent {
        kind: kind.into(),
        player: Some(p.clone()),
        server: server.into(),
        params: Value::Null,
        text: None,
        raw: None,
    };
    before
        .difference(now)
        .map(|p| ev("left", p))
        .chain(now.difference(before).map(|p| ev("joined", p)))
        .collect()
}

/// Says that the follow has begun, once every server answered its first `list`.
pub fn following(names: &[String], poll: Duration) {
    stderr!(
        "rcon: following {} by polling `list` every {}; Ctrl-C stops",
        crate::app::shared::some_names(names),
        rconsole::format_duration(poll)
    );
}

/// The players in a first `list` answer, with a warning when it has none.
pub fn first_players(name: &str, text: &str) -> Option<BTreeSet<String>> {
    let known = parse_list(text);
    if known.is_none() {
        crate::app::print::output::warning(&format!(
            "{name}: the `list` answer has no player list; no events until it has: {text}"
        ));
    }
    known
}

/// Says that the follow of pushed messages has begun, once every server is logged in.
pub fn following_pushed(names: &[String]) {
    stderr!(
        "rcon: following {} (the messages the server pushes); Ctrl-C stops",
        crate::app::shared::some_names(names)
    );
}

/// How a follow on the event loop ended.
enum Ended {
    /// A server could not be reached, or failed its first `list`.
    Failed(anyhow::Error),
    /// stdout failed (a closed pipe).
    Output(std::io::Error),
}

/// Follows one or several servers (RCON's polled `list`, the consoles' pushed messages: `watch`)
/// on the event loop, printing their events, until stdout fails; an error when a server cannot
/// be reached at first.
pub fn follow(
    options: &FollowOptions,
    servers: Vec<(String, Settings)>,
    watch: Watch,
) -> anyhow::Result<Exit> {
    let several = servers.len() > 1;
    fanout::hold_every_connection(&servers, "--follow")?;
    let emitter = Emitter::new(options, several);
    run_targets(fanout::servers(servers, several)?, watch, &emitter)
}

/// [`follow`] over targets made already (a management server's, with its machine), printing
/// through `emitter`.
pub fn run_targets(
    (targets, servers): LoopTargets,
    watch: Watch,
    emitter: &Emitter,
) -> anyhow::Result<Exit> {
    let count = servers.len();
    let names = servers.iter().map(|s| s.name.clone()).collect();
    let stop = fleet::Alarm::new();
    let opts = fleet::FleetOptions {
        parallel: count.max(1),
        retries: 0,
        backoff: RETRY,
        cancel: Some(stop.clone()),
        wake: None,
    };
    let now = Instant::now();
    let follower = Follower {
        protocols: servers.iter().map(|s| s.protocol).collect(),
        first: (0..count).map(|_| None).collect(),
        known: vec![None; count],
        down: vec![Down::Up; count],
        // The first poll, or a management server's first check (which settles it), at once.
        due: vec![now; count],
        names,
        watch,
        emitter,
        stop: stop.clone(),
        ended: None,
    };
    // Until every server has answered once, what is learned is kept to be written once.
    crate::app::learned::defer(true);
    // The loop runs until a failure or a closed stdout stops it.
    let ran = Runner::new(follower, servers, 0).run(targets, opts);
    crate::app::learned::defer(false);
    match ran?.ended {
        Some(Ended::Failed(e)) => Err(e),
        Some(Ended::Output(e)) => Err(e.into()),
        None => Ok(Exit::Success),
    }
}

/// Where a server's connection is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Down {
    /// Connected (or never lost).
    Up,
    /// Lost, and said so.
    Lost,
    /// Lost, and a reconnect failed too, which was said (consoles).
    Retrying,
}

/// The follow's plan on the event loop.
struct Follower<'e> {
    names: Vec<String>,
    protocols: Vec<Protocol>,
    /// Each server's first answer (or login): `Ok`, or why it failed; `None` until then.
    first: Vec<Option<Result<(), anyhow::Error>>>,
    /// RCON: the players of the last `list`.
    known: Vec<Option<BTreeSet<String>>>,
    down: Vec<Down>,
    /// RCON: when each server's next `list` is due.
    due: Vec<Instant>,
    watch: Watch,
    emitter: &'e Emitter,
    stop: fleet::Alarm,
    /// What ended the follow, the first time.
    ended: Option<Ended>,
}

impl Follower<'_> {
    /// A server's first answer (or login) came to `result`; when every server's has, the
    /// follow begins, or the first failure in the servers' order ends it.
    fn settled(&mut self, t: usize, result: Result<(), anyhow::Error>) {
        self.first[t] = Some(result);
        if self.first.iter().any(Option::is_none) {
            return;
        }
        let failed = self
            .first
            .iter_mut()
            .find_map(|r| r.as_mut().and_then(|r| r.as_mut().err()))
            .map(|e| std::mem::replace(e, anyhow::anyhow!("reported")));
        // What the first answers taught about the servers, written once for all of them.
        crate::app::learned::defer(false);
        match (failed, self.watch) {
            (Some(e), _) => self.end(Ended::Failed(e)),
            (None, Watch::Poll(every)) => following(&self.names, every),
            (None, Watch::Pushed) => following_pushed(&self.names),
            #[cfg(feature = "mgmt")]
            (None, Watch::Notifications(_)) => {
                for name in &self.names {
                    stderr!("rcon: following {name} (management notifications); Ctrl-C stops");
                }
            }
        }
    }

    fn end(&mut self, ended: Ended) {
        self.stop.raise();
        self.ended.get_or_insert(ended);
    }

    /// Back after a loss: said once.
    fn back(&mut self, t: usize) {
        if self.down[t] != Down::Up {
            stderr!("rcon: {}: reconnected; following again", self.names[t]);
            self.down[t] = Down::Up;
        }
    }

    /// Logged in: the first time, this server is ready; after a loss, it is back.
    fn logged_in(&mut self, t: usize) {
        if self.first[t].is_none() {
            self.settled(t, Ok(()));
        } else {
            self.back(t);
        }
    }

    /// A `list` answer.
    fn answer(&mut self, t: usize, text: &str) {
        if self.first[t].is_none() {
            self.known[t] = first_players(&self.names[t], text);
            return self.settled(t, Ok(()));
        }
        self.back(t);
        let Some(now) = parse_list(text) else {
            return;
        };
        if let Some(before) = &self.known[t] {
            for e in diff(before, &now, &self.names[t]) {
                if let Err(err) = self.emitter.emit(&e) {
                    return self.end(Ended::Output(err));
                }
            }
        }
        self.known[t] = Some(now);
    }

    /// A message a console pushed: its lines as events.
    fn pushed(&mut self, t: usize, text: &str) {
        #[cfg(feature = "mgmt")]
        if let Watch::Notifications(level) = self.watch {
            let Ok(rconsole::mgmt::jsonrpc::Incoming::Notification(n)) =
                rconsole::mgmt::jsonrpc::parse(text)
            else {
                return;
            };
            let e = crate::app::source::follow::events::from_notification(&n, &self.names[t]);
            if crate::app::source::follow::events::shown(&n, level)
                && let Err(err) = self.emitter.emit(&e)
            {
                self.end(Ended::Output(err));
            }
            return;
        }
        let protocol = self.protocols[t];
        for line in mapping::split(protocol, text) {
            if let Some(e) = mapping::event_for(protocol, line, &self.names[t])
                && let Err(err) = self.emitter.emit(&e)
            {
                return self.end(Ended::Output(err));
            }
        }
    }
}

impl LoopPlan for Follower<'_> {
    type What = ();

    fn next(&mut self, t: usize) -> Move<()> {
        if self.stop.is_raised() {
            return Move::Close;
        }
        match self.watch {
            Watch::Poll(_) => Move::Send {
                what: (),
                text: "list".into(),
                then_close: false,
                last: false,
                not_before: Some(self.due[t]),
            },
            Watch::Pushed => {
                self.logged_in(t);
                Move::Wait(Instant::now() + IDLE)
            }
            // Logged in, or a quiet spell passed: a small call tells a server that vanished
            // without closing (power loss, a dropped route) from a quiet one. The first call's
            // answer settles the server (see `report`): once it came, the server has taken the
            // connection as a listener, so "following" promises no notification is missed.
            #[cfg(feature = "mgmt")]
            Watch::Notifications(_) => {
                if self.first[t].is_some() {
                    self.back(t);
                }
                let now = Instant::now();
                if self.due[t] > now {
                    return Move::Wait(self.due[t]);
                }
                self.due[t] = now + MGMT_CHECK;
                Move::send((), "minecraft:server/status".into())
            }
        }
    }

    fn answered(&mut self, t: usize, _: (), raw: Vec<u8>, _: Duration) {
        match self.watch {
            Watch::Poll(every) => self.due[t] = Instant::now() + every,
            // The check's answer: the connection is alive (the first one: the server is
            // followed).
            _ => {
                if self.first[t].is_none() {
                    self.settled(t, Ok(()));
                }
                return;
            }
        }
        // Decoded as the blocking client decodes an answer.
        self.answer(t, &rconsole::rcon::packet::decode_output_owned(raw));
    }

    fn message(&mut self, t: usize, text: String) {
        if !matches!(self.watch, Watch::Poll(_)) {
            self.pushed(t, &text);
        }
    }

    /// Only a first connect or answer fails a server; later losses are taken (`lost`).
    fn failed(&mut self, t: usize, _: Under<()>, _: Vec<u8>, e: rconsole::Error) {
        if self.first[t].is_some() {
            return;
        }
        // Labelled as fan-out labels a server's error line, when there are several.
        let why = chain(&e);
        let message = match self.names.len() {
            1 => why,
            _ => format!("[{}] {why}", self.names[t]),
        };
        let failed = fail(Exit::from_error(&e), message);
        self.settled(t, Err(failed));
    }

    fn lost(&mut self, t: usize, _: &mut Sent<()>, error: &rconsole::Error) -> Option<Instant> {
        if self.first[t].is_none() || self.stop.is_raised() {
            return None;
        }
        let name = &self.names[t];
        let now = Instant::now();
        match self.watch {
            Watch::Poll(every) => {
                if self.down[t] == Down::Up {
                    stderr!(
                        "rcon: {name}: connection lost ({}); reconnecting every {}",
                        chain(error),
                        rconsole::format_duration(every)
                    );
                    self.down[t] = Down::Lost;
                }
                // Asked at once when back: the wait was the reconnect's.
                self.due[t] = now;
                Some(now + every)
            }
            _ => {
                match self.down[t] {
                    Down::Up => {
                        stderr!("rcon: {name}: connection lost; reconnecting every second");
                        self.down[t] = Down::Lost;
                        // The first try is at once, as the threads' follow tried.
                        return Some(now);
                    }
                    Down::Lost => {
                        stderr!(
                            "rcon: {name}: cannot reconnect yet ({}); retrying every {}",
                            chain(error),
                            rconsole::format_duration(RETRY)
                        );
                        self.down[t] = Down::Retrying;
                    }
                    Down::Retrying => {}
                }
                Some(now + RETRY)
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn list_answers() {
        let set = |v: &[&str]| v.iter().map(|s| s.to_string()).collect::<BTreeSet<_>>();
        assert_eq!(
            parse_list("There are 2 of a max of 20 players online: Steve, Alex"),
            Some(set(&["Alex", "Steve"]))
        );
        assert_eq!(
            parse_list("There are 0 of a max of 20 players online: "),
            Some(set(&[]))
        );
        assert_eq!(
            parse_list("There are 1/20 players online:\n§aNotch"),
            Some(set(&["Notch"]))
        );
        assert_eq!(parse_list("Unknown command"), None);
    }

    #[test]
    fn diffs() {
        let a: BTreeSet<String> = ["A".into(), "B".into()].into();
        let b: BTreeSet<String> = ["B".into(), "C".into()].into();
        let got: Vec<(String, Option<String>)> = diff(&a, &b, "s")
            .into_iter()
            .map(|e| (e.kind, e.player))
            .collect();
        assert_eq!(
            got,
            [
                ("left".into(), Some("A".into())),
                ("joined".into(), Some("C".into()))
            ]
        );
        assert!(diff(&a, &a, "s").is_empty());
    }
}
