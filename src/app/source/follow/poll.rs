//! `--follow` on RCON servers: `list` polled every `--poll` (default 5s) and diffed into
//! `joined` / `left` events. A lost connection is said on stderr and retried every poll, and
//! the follow goes on; changes made while the server was away come as events after the
//! reconnect.

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use crate::app::exit::Exit;
use crate::app::print::output::{Printer, Style};
use crate::app::print::stderr;
use crate::app::resolve::plan::{DEFAULT_POLL, FollowOptions};
use crate::app::resolve::settings::Settings;
use crate::app::runner::session::Session;
use crate::app::runner::{at_once, fanout};
use crate::app::shared::parse_list;
use crate::app::source::follow::events::Emitter;
use crate::app::source::follow::looped::{self, diff, first_players, following};

/// Follows one or several RCON servers by polling `list`: on the event loop, or where a server
/// cannot be driven there (`--remote`, a tunnel on Windows), a thread per server.
pub fn run(options: &FollowOptions, servers: Vec<(String, Settings)>) -> anyhow::Result<Exit> {
    let poll = options.poll.unwrap_or(DEFAULT_POLL);
    let emitter = Arc::new(Emitter::new(options, servers.len() > 1));
    let several = servers.len() > 1;
    let threads = fanout::needs_threads(&servers, "--follow")?;
    if threads {
        return on_threads(servers, poll, &emitter);
    }
    let names: Vec<String> = servers.iter().map(|(n, _)| n.clone()).collect();
    let servers = fanout::servers(servers, several)?;
    looped::run(names, servers, looped::Watch::Poll(poll), &emitter)
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
        let session = Session::new(
            settings.connector()?,
            password,
            settings.options(fanout::observer(&name, several)),
            Printer::new(Style::Raw, false),
        );
        sessions.push((name, session));
    }
    crate::app::learned::defer(true);
    let first = at_once::try_each(&mut sessions, |(name, session)| {
        list(session).map_err(|e| {
            crate::app::exit::fail(
                crate::app::exit::Exit::from_error(&e),
                match several {
                    true => format!("[{name}] {}", crate::app::exit::chain(&e)),
                    false => crate::app::exit::chain(&e),
                },
            )
        })
    });
    crate::app::learned::defer(false);
    let mut followers = Vec::with_capacity(sessions.len());
    for ((name, session), text) in sessions.into_iter().zip(first) {
        let text = text?;
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
