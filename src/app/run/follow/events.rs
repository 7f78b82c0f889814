//! What every `--follow` shares: the event ([`FollowEvent`]), its printing and `--exec`
//! ([`Emitter`]), and reconnecting a lost server ([`reconnect`]).

use std::io::Write;
use std::sync::Mutex;
use std::time::{Duration, SystemTime};

use serde_json::Value;

use crate::app::print::json::{JsonRecord, unix_secs, utc, utc_millis};
use crate::app::resolve::plan::FollowOptions;

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
