//! `--follow` with BattlEye, WebRCON and telnet: the messages the server pushes, as events as
//! they arrive (nothing is polled), mapped by [`mapping`](super::mapping). A lost connection
//! (the server closed it, or a BattlEye keep-alive went unanswered for the timeout) is said on
//! stderr and retried every second, and the follow goes on. The servers are read on the
//! fleet's event loop ([`looped`]); `--remote` and tunnels on Windows on a thread each.

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
use crate::app::source::follow::events::{Emitter, reconnect};
use crate::app::source::follow::looped;
use crate::app::source::follow::mapping::{event_for, split};

/// How often a follow looks whether its connection is still there, and retries a lost one.
const CHECK: Duration = Duration::from_millis(200);
const RETRY: Duration = Duration::from_secs(1);

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

/// Follows the pushed messages of one or several BattlEye/WebRCON/telnet servers: on the event
/// loop, or where a server cannot be driven there (`--remote`, a tunnel on Windows), a thread
/// per server.
pub fn run(options: &FollowOptions, servers: Vec<(String, Settings)>) -> anyhow::Result<Exit> {
    let several = servers.len() > 1;
    if !fanout::needs_threads(&servers, "--follow")? {
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
    let opened = at_once::try_each(&mut targets, |(target, sink)| {
        target.open(sink).map_err(|e| {
            fail(
                Exit::from_error(&e),
                format!("{}: {}", target.name, chain(&e)),
            )
        })
    });
    let mut followers = Vec::with_capacity(targets.len());
    for ((target, sink), remote) in targets.into_iter().zip(opened) {
        let remote = remote?;
        followers.push((target, sink, remote));
    }
    looped::following_pushed(
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
