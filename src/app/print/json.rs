//! The one JSON record schema, for every mode: one-shot, `-c`, batch, the console, several
//! servers, `--every`, `--countdown`, `--if` and `--follow` events. Each record is one line
//! with the same keys:
//!
//! - `time`: when the record was complete, RFC 3339 UTC with milliseconds;
//! - `server`: the server's name (its profile, else `host:port`), `null` when it has none;
//! - `event`: `command` for a command's result, else the `--follow` event (`joined`, `left`,
//!   `message`, a management notification's path...);
//! - `command`: the command as sent (`null` for an event no command asked for);
//! - `response`: the answer as text (an event's text, else empty);
//! - `ok`, `error`, `reason`: whether it succeeded, and if not why, in words and in one word;
//! - `elapsed_ms`: from the command's send to the end of its answer (`null` for events).
//!
//! Context a record has only in some modes is added, never renamed: `file` and `line` for
//! batch input, `player`, `params` and `raw` for events; `method`, `params` and `result` (the
//! JSON-RPC result as the server sent it) for a management call.

use std::time::{Duration, SystemTime};

use serde::Serialize;
use serde_json::Value;

/// One record, as printed.
#[derive(Serialize)]
pub struct JsonRecord<'a> {
    /// RFC 3339 UTC, milliseconds.
    pub time: String,
    /// The server's name.
    pub server: Option<&'a str>,
    /// `command`, or the event's kind.
    pub event: &'a str,
    /// The command as sent.
    pub command: Option<&'a str>,
    /// The answer as text.
    pub response: &'a str,
    /// Whether it succeeded.
    pub ok: bool,
    /// Why it failed.
    pub error: Option<&'a str>,
    /// Why it failed in one word (`timeout`, `connect`, `command`...).
    pub reason: Option<&'a str>,
    /// Send to end of answer, in milliseconds (microsecond precision).
    pub elapsed_ms: Option<f64>,
    /// The batch file.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub file: Option<&'a str>,
    /// The line in it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub line: Option<u64>,
    /// The player an event is about.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub player: Option<&'a str>,
    /// A management call's method.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub method: Option<&'a str>,
    /// A management notification's params, or a call's.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub params: Option<&'a Value>,
    /// A management call's result as the server sent it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub result: Option<&'a Value>,
    /// A pushed console message exactly as the server sent it.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub raw: Option<&'a str>,
}

impl<'a> JsonRecord<'a> {
    /// A command's result, stamped now.
    pub fn command(server: Option<&'a str>, command: &'a str, response: &'a str) -> Self {
        JsonRecord {
            time: utc_millis(SystemTime::now()),
            server,
            event: "command",
            command: Some(command),
            response,
            ok: true,
            error: None,
            reason: None,
            elapsed_ms: None,
            file: None,
            line: None,
            player: None,
            method: None,
            params: None,
            result: None,
            raw: None,
        }
    }

    /// An event no command asked for, at `time`.
    pub fn event(time: String, server: &'a str, event: &'a str, response: &'a str) -> Self {
        JsonRecord {
            time,
            event,
            command: None,
            ..JsonRecord::command(Some(server), "", response)
        }
    }

    /// Appends the record and a newline to `buf`.
    pub fn write(&self, buf: &mut Vec<u8>) {
        // Plain strings, numbers and JSON values cannot fail to serialise.
        if serde_json::to_writer(&mut *buf, self).is_ok() {
            buf.push(b'\n');
        }
    }

    /// The record as one line, without the newline.
    pub fn to_line(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

/// A duration in milliseconds, rounded to the microsecond.
pub fn millis(d: Duration) -> f64 {
    (d.as_secs_f64() * 1e6).round() / 1e3
}

/// Seconds since 1970.
pub fn unix_secs(t: SystemTime) -> u64 {
    unix(t).0
}

/// `t` as `2026-12-02T01:30:00.250Z`.
pub fn utc_millis(t: SystemTime) -> String {
    let (secs, ms) = unix(t);
    let whole = utc(secs);
    format!("{}.{ms:03}Z", whole.trim_end_matches('Z'))
}

fn unix(t: SystemTime) -> (u64, u32) {
    t.duration_since(SystemTime::UNIX_EPOCH)
        .map(|d| (d.as_secs(), d.subsec_millis()))
        .unwrap_or((0, 0))
}

/// Seconds since 1970 as an RFC 3339 UTC time (days to civil date: Howard Hinnant's algorithm).
pub fn utc(secs: u64) -> String {
    let days = (secs / 86_400) as i64;
    let rem = secs % 86_400;
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let d = doy - (153 * mp + 2) / 5 + 1;
    let m = if mp < 10 { mp + 3 } else { mp - 9 };
    let y = yoe + era * 400 + i64::from(m <= 2);
    format!(
        "{y:04}-{m:02}-{d:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn civil_dates() {
        assert_eq!(utc(0), "1970-01-01T00:00:00Z");
        assert_eq!(utc(951_782_400), "2000-02-29T00:00:00Z");
        assert_eq!(utc(1_796_175_000), "2026-12-02T01:30:00Z");
        let t = SystemTime::UNIX_EPOCH + Duration::from_millis(1_796_175_000_250);
        assert_eq!(utc_millis(t), "2026-12-02T01:30:00.250Z");
    }

    /// Command results and events have the same keys; context keys only add to them.
    #[test]
    fn commands_and_events_share_the_keys() {
        let keys = |r: &JsonRecord<'_>| -> Vec<String> {
            let v: Value = serde_json::from_str(&r.to_line()).unwrap();
            v.as_object().unwrap().keys().cloned().collect()
        };
        let c = JsonRecord::command(Some("lobby"), "list", "There are 0");
        let e = JsonRecord::event(utc_millis(SystemTime::now()), "lobby", "joined", "");
        assert_eq!(keys(&c), keys(&e));
        assert_eq!(
            keys(&c),
            [
                "command",
                "elapsed_ms",
                "error",
                "event",
                "ok",
                "reason",
                "response",
                "server",
                "time"
            ]
        );
    }
}
