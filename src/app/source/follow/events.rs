//! What every `--follow` shares: the event ([`FollowEvent`]), and its printing and `--exec`
//! ([`Emitter`]). Reconnecting a lost server is the event loop's (`runner/follow.rs`).

use std::io::Write;
use std::sync::Mutex;
use std::time::SystemTime;

use serde_json::Value;

use crate::app::print::json::{unix_secs, utc};
use crate::app::print::output::{EventRecord, Printer, Style, event_json};
#[cfg(feature = "mgmt")]
use crate::app::resolve::args::LogLevel;
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

/// The level of a console log line (MSMP Console's `console:notification/log/event`), when
/// `n` is one; `None` for any other notification.
#[cfg(feature = "mgmt")]
fn log_level(n: &rconsole::mgmt::Notification) -> Option<&str> {
    (n.method == rconsole::mgmt::command::LOG_EVENT)
        .then(|| n.params.pointer("/0/level").and_then(Value::as_str))
        .map(Option::unwrap_or_default)
}

/// Whether `n` is shown under `--log-level`: a console log line at `min` or above (a level
/// this client does not know is shown), and any other notification.
#[cfg(feature = "mgmt")]
pub fn shown(n: &rconsole::mgmt::Notification, min: Option<LogLevel>) -> bool {
    use clap::ValueEnum;
    match (log_level(n), min) {
        (Some(level), Some(min)) => LogLevel::from_str(level, true)
            .ok()
            .is_none_or(|l| l >= min),
        _ => true,
    }
}

/// The event for a management notification: a console log line is a `log` event whose text
/// is `LEVEL message`.
#[cfg(feature = "mgmt")]
pub fn from_notification(n: &rconsole::mgmt::Notification, server: &str) -> FollowEvent {
    if let Some(level) = log_level(n) {
        let message = n.params.pointer("/0/message").and_then(Value::as_str);
        return FollowEvent {
            kind: "log".into(),
            player: None,
            server: server.to_string(),
            params: n.params.clone(),
            text: Some(format!("{level} {}", message.unwrap_or_default())),
            raw: None,
        };
    }
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

/// Prints events (text or NDJSON, through the one [`Printer`]) and runs `--exec` for each, in
/// order, from any thread.
pub struct Emitter {
    exec: Option<String>,
    /// Prefix lines with `[server]` (several servers).
    label: bool,
    /// Held while an event is printed and its `--exec` runs, so events stay in order.
    printer: Mutex<Printer>,
}

impl Emitter {
    /// From the command line; `label` with several servers.
    pub fn new(options: &FollowOptions, label: bool) -> Emitter {
        let style = if options.json {
            Style::Json
        } else {
            Style::Raw
        };
        Emitter {
            exec: options.exec.clone(),
            label,
            printer: Mutex::new(Printer::new(style, false)),
        }
    }

    /// Prints one event and runs `--exec` for it.
    pub fn emit(&self, e: &FollowEvent) -> std::io::Result<()> {
        let mut printer = self.printer.lock().unwrap_or_else(|p| p.into_inner());
        let now = SystemTime::now();
        let event = e.record();
        printer.event(&event, now, self.label)?;
        if let Some(cmd) = &self.exec {
            run_exec(cmd, e, &utc(unix_secs(now)), &event_json(&event, now));
        }
        Ok(())
    }
}

impl FollowEvent {
    /// The event as the sink prints it.
    fn record(&self) -> EventRecord<'_> {
        EventRecord {
            server: &self.server,
            kind: &self.kind,
            player: self.player.as_deref(),
            text: self.text.as_deref(),
            params: (!self.params.is_null()).then_some(&self.params),
            raw: self.raw.as_deref(),
        }
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
                Ok(s) => crate::app::print::output::warning(&format!(
                    "--exec for event {} exited with {s}",
                    e.kind
                )),
                Err(err) => crate::app::print::output::warning(&format!("--exec: {err}")),
            }
        }
        Err(err) => crate::app::print::output::warning(&format!("cannot run --exec: {err}")),
    }
}
