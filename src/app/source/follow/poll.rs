//! `--follow` on RCON servers: `list` polled every `--poll` (default 5s) and diffed into
//! `joined` / `left` events. A lost connection is said on stderr and retried every poll, and
//! the follow goes on; changes made while the server was away come as events after the
//! reconnect.

use std::collections::BTreeSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, mpsc};
use std::time::{Duration, Instant};

use rconsole::fleet;

use serde_json::Value;

use crate::app::exit::Exit;
use crate::app::print::output::{Printer, Style};
use crate::app::print::stderr;
use crate::app::resolve::plan::{DEFAULT_POLL, FollowOptions};
use crate::app::resolve::settings::Settings;
use crate::app::runner::session::Session;
use crate::app::runner::{at_once, fanout};
use crate::app::shared::parse_list;
use crate::app::source::follow::events::{Emitter, FollowEvent};

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

/// Follows one or several RCON servers by polling `list`: on the event loop, or where a server
/// cannot be driven there (`--remote`, a tunnel on Windows), a thread per server.
pub fn run(options: &FollowOptions, servers: Vec<(String, Settings)>) -> anyhow::Result<Exit> {
    let poll = options.poll.unwrap_or(DEFAULT_POLL);
    let emitter = Arc::new(Emitter::new(options, servers.len() > 1));
    let several = servers.len() > 1;
    // Every connection is held for the whole follow: the socket (three pipes through a
    // tunnel), and on a thread its own poller.
    let tunnelled = |s: &Settings| s.ssh.is_some() || s.proxy_command.is_some();
    let threads = servers
        .iter()
        .any(|(_, s)| s.remote || (tunnelled(s) && !cfg!(unix)));
    let want = servers
        .iter()
        .map(|(_, s)| u64::from(threads) + if tunnelled(s) { 3 } else { 1 })
        .sum();
    fanout::hold_every_connection(servers.len(), want, "--follow")?;
    if threads {
        return on_threads(servers, poll, &emitter);
    }
    let names: Vec<String> = servers.iter().map(|(n, _)| n.clone()).collect();
    on_the_loop(names, fanout::servers(servers, several)?, poll, &emitter)
}

/// Says that the follow has begun, once every server answered its first `list`.
fn following(names: &[String], poll: Duration) {
    stderr!(
        "rcon: following {} by polling `list` every {}; Ctrl-C stops",
        crate::app::shared::some_names(names),
        rconsole::format_duration(poll)
    );
}

/// The players in a first `list` answer, with a warning when it has none.
fn first_players(name: &str, text: &str) -> Option<BTreeSet<String>> {
    let known = parse_list(text);
    if known.is_none() {
        crate::app::print::output::warning(&format!(
            "{name}: the `list` answer has no player list; no events until it has: {text}"
        ));
    }
    known
}

/// How a follow on the event loop ended.
enum Ended {
    /// A server could not be reached, or failed its first `list`.
    Failed(anyhow::Error),
    /// stdout failed (a closed pipe).
    Output(std::io::Error),
}

/// Every server on the event loop: `list` when each is logged in, then every `poll`; a lost
/// connection is said once and connected again every `poll` ([`fleet::Handler::lost`]).
fn on_the_loop(
    names: Vec<String>,
    servers: Vec<fanout::Server>,
    poll: Duration,
    emitter: &Emitter,
) -> anyhow::Result<Exit> {
    let count = servers.len();
    let mut targets = Vec::with_capacity(count);
    let mut observers = Vec::with_capacity(count);
    let mut describes = Vec::with_capacity(count);
    for s in servers {
        let fanout::Route::Fleet { host, port, tunnel } = s.route else {
            unreachable!("threaded routes are followed on threads");
        };
        observers.push(Arc::clone(&s.options.observer));
        describes.push(s.describe);
        targets.push(fleet::FleetTarget {
            host,
            port,
            password: s.password,
            config: s.options,
            protocol: s.protocol,
            tunnel,
        });
    }
    let stop = Arc::new(AtomicBool::new(false));
    let (tx, rx) = mpsc::channel();
    let opts = fleet::FleetOptions {
        parallel: count.max(1),
        retries: 0,
        backoff: poll,
        cancel: Some(Arc::clone(&stop)),
    };
    let now = Instant::now();
    let mut poller = Poller {
        first: (0..count).map(|_| None).collect(),
        known: vec![None; count],
        raw: vec![Vec::new(); count],
        down: vec![false; count],
        due: vec![now; count],
        names,
        observers,
        describes,
        poll,
        emitter,
        stop: Arc::clone(&stop),
        tx,
    };
    // Until every server has answered once, what is learned is kept to be written once.
    crate::app::learned::defer(true);
    let ran = std::thread::scope(|scope| {
        let event_loop = scope.spawn(|| {
            let ran = fleet::run(targets, opts, &mut poller);
            drop(poller);
            ran
        });
        // The loop runs until a failure or a closed stdout stops it.
        let ended = rx.recv();
        stop.store(true, Ordering::SeqCst);
        let ran = event_loop
            .join()
            .unwrap_or_else(|_| Err(std::io::Error::other("the event loop panicked")));
        (ended, ran)
    });
    crate::app::learned::defer(false);
    match ran {
        (Ok(Ended::Failed(e)), _) => Err(e),
        (Ok(Ended::Output(e)), _) => Err(e.into()),
        (Err(_), Err(e)) => Err(e.into()),
        (Err(_), Ok(())) => Ok(Exit::Success),
    }
}

/// The follow's side of the event loop.
struct Poller<'e> {
    names: Vec<String>,
    describes: Vec<String>,
    observers: Vec<Arc<dyn rconsole::rcon::client::Observer>>,
    /// Each server's first `list`: its players (`Ok`), or why it failed; `None` until then.
    first: Vec<Option<Result<(), anyhow::Error>>>,
    known: Vec<Option<BTreeSet<String>>>,
    raw: Vec<Vec<u8>>,
    /// The connection was lost, and said so: the next answer says it is back.
    down: Vec<bool>,
    /// When each server's next `list` is due.
    due: Vec<Instant>,
    poll: Duration,
    emitter: &'e Emitter,
    stop: Arc<AtomicBool>,
    tx: mpsc::Sender<Ended>,
}

impl Poller<'_> {
    /// A server's first `list` came to `result`; when every server's has, the follow begins,
    /// or the first failure in the servers' order ends it.
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
        match failed {
            Some(e) => self.end(Ended::Failed(e)),
            None => following(&self.names, self.poll),
        }
    }

    fn end(&mut self, ended: Ended) {
        self.stop.store(true, Ordering::SeqCst);
        let _ = self.tx.send(ended);
    }

    fn answer(&mut self, t: usize, text: &str) {
        if self.first[t].is_none() {
            self.known[t] = first_players(&self.names[t], text);
            return self.settled(t, Ok(()));
        }
        if self.down[t] {
            stderr!("rcon: {}: reconnected; following again", self.names[t]);
            self.down[t] = false;
        }
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
}

impl fleet::Handler for Poller<'_> {
    fn next(&mut self, t: usize) -> fleet::Next {
        if self.stop.load(Ordering::SeqCst) {
            return fleet::Next::Close;
        }
        fleet::Next::Command {
            text: "list".into(),
            then_close: false,
            not_before: Some(self.due[t]),
        }
    }

    fn report(&mut self, t: usize, report: fleet::Report) {
        let observer = self.observers[t].as_ref();
        let Some(report) = fanout::observe(observer, &self.describes[t], report) else {
            return;
        };
        match report {
            fleet::Report::Output(bytes) => self.raw[t].extend_from_slice(&bytes),
            fleet::Report::Done => {
                self.due[t] = Instant::now() + self.poll;
                // Decoded as the blocking client decodes an answer.
                let raw = std::mem::take(&mut self.raw[t]);
                self.answer(t, &rconsole::rcon::packet::decode_output_owned(raw));
            }
            fleet::Report::Finished(learned) if learned.is_some() => observer.learned(learned),
            fleet::Report::Failed(rconsole::Error::Cancelled) => {}
            // Only a first connect or `list` fails a server; later losses are taken (`lost`).
            fleet::Report::Failed(e) if self.first[t].is_none() => {
                let name = &self.names[t];
                let failed = crate::app::exit::fail(
                    crate::app::exit::Exit::from_error(&e),
                    format!("{name}: {}", crate::app::exit::chain(&e)),
                );
                self.settled(t, Err(failed));
            }
            _ => {}
        }
    }

    fn lost(&mut self, t: usize, error: &rconsole::Error) -> Option<Instant> {
        if self.first[t].is_none() || self.stop.load(Ordering::SeqCst) {
            return None;
        }
        self.raw[t].clear();
        if !self.down[t] {
            stderr!(
                "rcon: {}: connection lost ({}); reconnecting every {}",
                self.names[t],
                crate::app::exit::chain(error),
                rconsole::format_duration(self.poll)
            );
            self.down[t] = true;
        }
        // Asked at once when back: the wait was the reconnect's.
        let now = Instant::now();
        self.due[t] = now;
        Some(now + self.poll)
    }
}

/// Every server on a thread of its own with the blocking client: connected to at once first,
/// so a wrong address or password fails at once (the first failure in the servers' order),
/// then `list` every `poll`.
fn on_threads(
    servers: Vec<(String, Settings)>,
    poll: Duration,
    emitter: &Arc<Emitter>,
) -> anyhow::Result<Exit> {
    let several = servers.len() > 1;
    let passwords = fanout::passwords(&servers)?;
    let mut sessions = Vec::with_capacity(servers.len());
    for ((name, settings), password) in servers.into_iter().zip(passwords) {
        // With several servers, the engine's warnings name theirs, as fan-out's do.
        let observer: Arc<dyn rconsole::rcon::client::Observer> = if several {
            Arc::new(fanout::Labelled(name.clone()))
        } else {
            Arc::new(crate::app::shared::StderrObserver)
        };
        let session = Session::new(
            settings.connector()?,
            password,
            settings.options(observer),
            Printer::new(Style::Raw, false),
        );
        sessions.push((name, session));
    }
    crate::app::learned::defer(true);
    let first = at_once::each(&mut sessions, |(name, session)| {
        list(session).map_err(|e| {
            crate::app::exit::fail(
                crate::app::exit::Exit::from_error(&e),
                format!("{name}: {}", crate::app::exit::chain(&e)),
            )
        })
    });
    crate::app::learned::defer(false);
    let mut followers = Vec::with_capacity(sessions.len());
    for ((name, session), text) in sessions.into_iter().zip(first) {
        let text =
            text.unwrap_or_else(|| Err(anyhow::anyhow!("{name}: the connecting thread failed")))?;
        let known = first_players(&name, &text);
        followers.push((name, session, known));
    }
    let names: Vec<String> = followers.iter().map(|(n, ..)| n.clone()).collect();
    following(&names, poll);
    // A poll loop ends only when stdout fails (closed pipe): the first to end ends the follow.
    let (done, ended) = std::sync::mpsc::channel();
    for (name, session, known) in followers {
        let emitter = Arc::clone(emitter);
        let done = done.clone();
        std::thread::spawn(move || {
            let _ = done.send(poll_loop(name, session, known, poll, &emitter));
        });
    }
    drop(done);
    match ended.recv() {
        Ok(Err(e)) => Err(e.into()),
        _ => Ok(Exit::Success),
    }
}

fn list(session: &mut Session) -> rconsole::Result<String> {
    crate::app::runner::session::run_text(session, "list")
}

fn poll_loop(
    name: String,
    mut session: Session,
    mut known: Option<BTreeSet<String>>,
    poll: Duration,
    emitter: &Emitter,
) -> std::io::Result<()> {
    let mut down = false;
    loop {
        std::thread::sleep(poll);
        match list(&mut session) {
            Ok(text) => {
                if down {
                    stderr!("rcon: {name}: reconnected; following again");
                    down = false;
                }
                if let Some(now) = parse_list(&text) {
                    if let Some(before) = &known {
                        for e in diff(before, &now, &name) {
                            emitter.emit(&e)?;
                        }
                    }
                    known = Some(now);
                }
            }
            Err(e) => {
                if !down {
                    stderr!(
                        "rcon: {name}: connection lost ({}); reconnecting every {}",
                        crate::app::exit::chain(&e),
                        rconsole::format_duration(poll)
                    );
                    down = true;
                }
            }
        }
    }
}

#[cfg(test)]
mod tests {
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
