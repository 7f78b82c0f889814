//! `--follow`: server events as they happen, until interrupted. With the management protocol,
//! its notifications; with RCON, `list` polled every `--poll` (default 5s) and diffed into
//! `joined` / `left` events. A lost connection is said on stderr and retried (every second for
//! the management protocol, every poll for RCON) and the follow goes on (a management
//! connection quiet for 15 s is checked with a `server/status` call); changes made while
//! the server was away come as events after the reconnect. `--exec` runs a program per event.

use std::collections::BTreeSet;
use std::io::Write;
use std::sync::{Arc, Mutex};
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::app::print::json::{JsonRecord, unix_secs, utc, utc_millis};

use crate::app::exit::Exit;
use crate::app::print::output::{Printer, Style};
use crate::app::resolve::plan::{DEFAULT_POLL, FollowOptions};
use crate::app::resolve::settings::Settings;
use crate::app::run::session::Session;

/// After this long without a notification, the management follow checks the connection with
/// a `server/status` call.
#[cfg(feature = "mgmt")]
const MGMT_CHECK: Duration = Duration::from_secs(15);

/// One event.
#[derive(Debug, Clone, PartialEq)]
pub struct FollowEvent {
    /// `joined`, `left`, `started`, `stopping`, `saving`, `saved`, or the notification's own
    /// path (`allowlist/added`) for others.
    pub kind: String,
    /// The player it is about, if any.
    pub player: Option<String>,
    /// The server (profile name or address).
    pub server: String,
    /// The notification's params (management protocol), else null.
    pub params: Value,
    /// What a pushed console message says (`message` events), for people.
    pub text: Option<String>,
    /// The console message exactly as the server pushed it (BattlEye, WebRCON, telnet).
    pub raw: Option<String>,
}

/// The event for a management notification.
#[cfg(feature = "mgmt")]
pub fn from_notification(n: &rconsole::mgmt::Notification, server: &str) -> FollowEvent {
    let path = n
        .method
        .strip_prefix("minecraft:notification/")
        .unwrap_or(&n.method);
    let kind = match path {
        "players/joined" => "joined",
        "players/left" => "left",
        "server/started" => "started",
        "server/stopping" => "stopping",
        "server/saving" => "saving",
        "server/saved" => "saved",
        other => other,
    };
    let first = match &n.params {
        Value::Array(a) => a.first().cloned().unwrap_or(Value::Null),
        other => other.clone(),
    };
    let player = first
        .get("name")
        .or_else(|| first.pointer("/player/name"))
        .and_then(Value::as_str)
        .map(str::to_string);
    FollowEvent {
        kind: kind.to_string(),
        player,
        server: server.to_string(),
        params: n.params.clone(),
        text: None,
        raw: None,
    }
}

/// The players in a `list` answer: vanilla's `There are 2 of a max of 20 players online: A, B`
/// (older and modded servers put the names on the next line); `None` if it is not one.
pub fn parse_list(text: &str) -> Option<BTreeSet<String>> {
    let plain = rconsole::text::render::strip(text);
    let (_, names) = plain.split_once("online:")?;
    Some(
        names
            .split([',', '\n'])
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect(),
    )
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

/// Prints events (text or NDJSON) and runs `--exec` for each, in order, from any thread.
pub struct Emitter {
    json: bool,
    exec: Option<String>,
    /// Prefix lines with `[server]` (several servers).
    label: bool,
    lock: Mutex<()>,
}

impl Emitter {
    /// From the command line; `label` with several servers.
    pub fn new(options: &FollowOptions, label: bool) -> Emitter {
        Emitter {
            json: options.json,
            exec: options.exec.clone(),
            label,
            lock: Mutex::new(()),
        }
    }

    /// The event's JSON line: the one record schema ([`crate::app::print::json`]).
    pub fn json_line(e: &FollowEvent, time: &str) -> String {
        let text = e.text.as_deref().unwrap_or("");
        let mut record = JsonRecord::event(time.to_string(), &e.server, &e.kind, text);
        record.player = e.player.as_deref();
        record.params = (!e.params.is_null()).then_some(&e.params);
        record.raw = e.raw.as_deref();
        record.to_line()
    }

    /// Prints one event and runs `--exec` for it.
    pub fn emit(&self, e: &FollowEvent) -> std::io::Result<()> {
        let _guard = self.lock.lock().unwrap_or_else(|p| p.into_inner());
        let now = SystemTime::now();
        let time = utc(unix_secs(now));
        let json_line = Self::json_line(e, &utc_millis(now));
        let line = if self.json {
            json_line.clone()
        } else {
            let mut l = format!("{time} {}", e.kind);
            if let Some(p) = e.player.as_ref().or(e.text.as_ref()) {
                l.push(' ');
                l.push_str(p);
            }
            if self.label {
                l = format!("[{}] {l}", e.server);
            }
            l
        };
        {
            let mut out = std::io::stdout().lock();
            writeln!(out, "{line}")?;
            out.flush()?;
        }
        if let Some(cmd) = &self.exec {
            run_exec(cmd, e, &time, &json_line);
        }
        Ok(())
    }
}

/// Runs the `--exec` program for one event and waits for it; a failure is a warning.
fn run_exec(cmd: &str, e: &FollowEvent, time: &str, json_line: &str) {
    use std::process::{Command, Stdio};
    #[cfg(unix)]
    let mut c = {
        let mut c = Command::new("sh");
        c.arg("-c").arg(cmd);
        c
    };
    #[cfg(windows)]
    let mut c = {
        let mut c = Command::new("cmd");
        c.arg("/C").arg(cmd);
        c
    };
    c.env("RCON_EVENT", &e.kind)
        .env("RCON_EVENT_PLAYER", e.player.as_deref().unwrap_or(""))
        .env("RCON_EVENT_SERVER", &e.server)
        .env("RCON_EVENT_TEXT", e.text.as_deref().unwrap_or(""))
        .env("RCON_EVENT_TIME", time)
        .env("RCON_EVENT_JSON", json_line)
        // The program gets the event, never the secrets rcon was given.
        .env_remove("RCON_PASSWORD")
        .env_remove("RCON_MGMT_SECRET")
        .stdin(Stdio::piped());
    match c.spawn() {
        Ok(mut child) => {
            if let Some(mut stdin) = child.stdin.take() {
                let _ = writeln!(stdin, "{json_line}");
            }
            match child.wait() {
                Ok(s) if s.success() => {}
                Ok(s) => eprintln!("rcon: warning: --exec for event {} exited with {s}", e.kind),
                Err(err) => eprintln!("rcon: warning: --exec: {err}"),
            }
        }
        Err(err) => eprintln!("rcon: warning: cannot run --exec: {err}"),
    }
}

/// Follows the management notifications of one server; `label` prefixes its lines with
/// `[name]` (one of several followed at once).
#[cfg(feature = "mgmt")]
pub fn run_mgmt(
    options: &FollowOptions,
    target: &crate::app::run::mgmt::MgmtTarget,
    label: bool,
) -> anyhow::Result<Exit> {
    let emitter = Emitter::new(options, label);
    let (mut client, _schema) = target.connect()?;
    eprintln!(
        "rcon: following {} (management notifications); Ctrl-C stops",
        target.name
    );
    loop {
        let mut quiet = Duration::ZERO;
        loop {
            match client.next_notification(Duration::from_secs(1)) {
                Ok(Some(n)) => {
                    quiet = Duration::ZERO;
                    emitter.emit(&from_notification(&n, &target.name))?
                }
                Ok(None) => {
                    // A server that vanished without closing (power loss, a dropped route)
                    // sends nothing: after a quiet spell, ask it something small.
                    quiet += Duration::from_secs(1);
                    if quiet >= MGMT_CHECK {
                        quiet = Duration::ZERO;
                        match client.call("minecraft:server/status", &[]) {
                            Ok(_) | Err(rconsole::mgmt::MgmtError::Rpc { .. }) => {}
                            Err(e) => {
                                eprintln!(
                                    "rcon: {}: connection lost ({e}); reconnecting",
                                    target.name
                                );
                                break;
                            }
                        }
                    }
                }
                Err(e) => {
                    eprintln!("rcon: {}: connection lost ({e}); reconnecting", target.name);
                    break;
                }
            }
        }
        client = reconnect(&target.name, Duration::from_secs(1), || target.connect()).0;
    }
}

/// Opens a lost server again, every `retry` until it works: the first failure is said once,
/// and so is the success.
pub fn reconnect<T>(name: &str, retry: Duration, mut open: impl FnMut() -> anyhow::Result<T>) -> T {
    let mut said = false;
    loop {
        match open() {
            Ok(opened) => {
                eprintln!("rcon: {name}: reconnected; following again");
                return opened;
            }
            Err(e) => {
                if !said {
                    eprintln!(
                        "rcon: {name}: cannot reconnect yet ({e:#}); retrying every {}",
                        rconsole::format_duration(retry)
                    );
                    said = true;
                }
                std::thread::sleep(retry);
            }
        }
    }
}

/// Follows one or several RCON servers by polling `list`.
pub fn run_rcon(options: &FollowOptions, servers: Vec<(String, Settings)>) -> anyhow::Result<Exit> {
    let poll = options.poll.unwrap_or(DEFAULT_POLL);
    if servers
        .iter()
        .all(|(_, s)| s.dialect.value.dialect().protocol != rconsole::consoles::Protocol::Rcon)
    {
        return crate::app::run::follow_consoles::run(options, servers);
    }
    let emitter = Arc::new(Emitter::new(options, servers.len() > 1));
    // Connect to each first, so a wrong address or password fails at once.
    let mut followers = Vec::new();
    for (name, settings) in servers {
        let opts = settings.options(Arc::new(crate::app::shared::StderrObserver));
        let mut session = Session::new(
            settings.connector()?,
            settings.password()?,
            opts,
            Printer::new(Style::Raw, false),
        );
        let text = list(&mut session).map_err(|e| {
            crate::app::exit::fail(
                crate::app::exit::Exit::from_error(&e),
                format!("{name}: {}", crate::app::exit::chain(&e)),
            )
        })?;
        let known = parse_list(&text);
        if known.is_none() {
            eprintln!(
                "rcon: warning: {name}: the `list` answer has no player list; no events until it has: {text}"
            );
        }
        followers.push((name, session, known));
    }
    eprintln!(
        "rcon: following {} by polling `list` every {}; Ctrl-C stops",
        followers
            .iter()
            .map(|(n, ..)| n.as_str())
            .collect::<Vec<_>>()
            .join(", "),
        rconsole::format_duration(poll)
    );
    // A poll loop ends only when stdout fails (closed pipe): the first to end ends the follow.
    let (done, ended) = std::sync::mpsc::channel();
    for (name, session, known) in followers {
        let emitter = Arc::clone(&emitter);
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
    crate::app::run::timed::run_text(session, "list")
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
                    eprintln!("rcon: {name}: reconnected; following again");
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
                    eprintln!(
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
