//! The 7 Days to Die telnet console, sans-IO (docs/protocol.md section 8): a password prompt,
//! then free-form lines, with the server's log lines streaming at any time.
//!
//! - Login: the server asks `Please enter password:`; the client sends the password and a line
//!   end; `Logon successful.` means in, `Password incorrect` means refused. A server without a
//!   telnet password greets with `*** Connected with 7DTD server.` and is in at once.
//! - Log lines (`2026-12-02T01:30:00 12.345 INF ...`: a timestamp, the uptime, a level) are
//!   server messages wherever they fall, never part of an answer.
//! - 7 Days to Die marks no end of an answer, so a command's answer is every other line that
//!   arrives until [`Telnet`]'s idle gap passes after the last of them (or after the command, if
//!   none came). The bytes of a line still arriving count (a lost TCP segment can hold a line's
//!   end back longer than the gap), and a last line without a line end when the gap passes is
//!   the answer's last line, not the start of whatever the server sends next. The start of a
//!   log line (its timestamp) does neither: it waits for its line end, as a message.
//! - Telnet negotiation (`IAC ...`) is stripped and never answered (7 Days to Die sends none).

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use crate::engine::{Action, Direction, Machine, Protocol, Traced};
use crate::error::Error;

/// Longest command sent, in UTF-8 bytes.
pub const MAX_COMMAND_BYTES: usize = 4096;

/// Longest line kept; a longer one is cut into pieces of this size.
pub const MAX_LINE: usize = 64 * 1024;

const IAC: u8 = 255;

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum TelnetState {
    New,
    PasswordSent,
    Ready,
    Failed,
}

/// The timestamp a log line starts with, `YYYY-MM-DDTHH:MM:SS `: `D` is a digit.
const STAMP: &[u8; 20] = b"DDDD-DD-DDTDD:DD:DD ";

/// Whether `bytes` start like a log line's timestamp, as far as they go: the start of a line
/// still arriving may be a log line's.
fn starts_like_stamp(bytes: &[u8]) -> bool {
    bytes.iter().zip(STAMP).all(|(&b, &want)| match want {
        b'D' => b.is_ascii_digit(),
        other => b == other,
    })
}

/// Whether `line` is one of 7 Days to Die's log lines: `YYYY-MM-DDTHH:MM:SS uptime LEVEL ...`.
pub fn is_log_line(line: &str) -> bool {
    if line.len() < STAMP.len() || !starts_like_stamp(line.as_bytes()) {
        return false;
    }
    let mut words = line[20..].split(' ');
    let uptime = words.next().unwrap_or("");
    let level = words.next().unwrap_or("");
    uptime.parse::<f64>().is_ok() && matches!(level, "INF" | "WRN" | "ERR" | "EXC" | "LOG")
}

/// The telnet exchange.
pub struct Telnet {
    password: String,
    timeout: Duration,
    idle_gap: Duration,
    state: TelnetState,
    started: Option<Instant>,
    /// Bytes of a line not yet ended.
    partial: Vec<u8>,
    /// Bytes of an unfinished negotiation sequence.
    iac: Vec<u8>,
    /// The command waiting: its answer lines so far and the last activity.
    pending: Option<(Vec<String>, Instant, Instant)>,
    actions: VecDeque<Action>,
    tracing: bool,
}

impl Telnet {
    /// An exchange that logs in with `password`; answers end after `idle_gap` of quiet.
    pub fn new(password: &str, timeout: Duration, idle_gap: Duration, tracing: bool) -> Self {
        Telnet {
            password: password.to_string(),
            timeout,
            idle_gap,
            state: TelnetState::New,
            started: None,
            partial: Vec::new(),
            iac: Vec::new(),
            pending: None,
            actions: VecDeque::new(),
            tracing,
        }
    }

    /// Drops negotiation sequences (`IAC cmd opt`, `IAC SB ... IAC SE`, `IAC IAC` = 255).
    fn strip(&mut self, data: &[u8]) -> Vec<u8> {
        let mut out = Vec::with_capacity(data.len());
        for &b in data {
            if self.iac.is_empty() {
                if b == IAC {
                    self.iac.push(b);
                } else {
                    out.push(b);
                }
                continue;
            }
            self.iac.push(b);
            let seq = &self.iac;
            let done = match seq[1] {
                IAC => {
                    out.push(IAC);
                    true
                }
                250 => seq.len() >= 3 && seq[seq.len() - 2] == IAC && b == 240, // SB ... IAC SE
                251..=254 => seq.len() == 3, // WILL/WONT/DO/DONT opt
                _ => true,
            };
            if done || seq.len() > 1024 {
                self.iac.clear();
            }
        }
        out
    }

    fn line(&mut self, line: String, now: Instant) {
        match self.state {
            TelnetState::New => {
                if line.starts_with("***") {
                    // No password configured: already in.
                    self.state = TelnetState::Ready;
                    self.actions.push_back(Action::LoggedIn);
                } else if line.to_ascii_lowercase().contains("password") {
                    self.prompt(now);
                }
            }
            TelnetState::PasswordSent => {
                let lower = line.to_ascii_lowercase();
                if lower.contains("incorrect") || lower.contains("wrong") {
                    self.state = TelnetState::Failed;
                    self.actions.push_back(Action::Fail(Error::LoginRefused));
                } else if lower.contains("logon successful") || lower.starts_with("***") {
                    self.state = TelnetState::Ready;
                    self.actions.push_back(Action::LoggedIn);
                }
            }
            TelnetState::Ready => {
                let log = is_log_line(&line);
                match self.pending.as_mut() {
                    Some((lines, _, last)) if !log => {
                        lines.push(line);
                        *last = now;
                    }
                    _ => {
                        if !line.is_empty() {
                            self.actions.push_back(Action::Message(line));
                        }
                    }
                }
            }
            TelnetState::Failed => {}
        }
    }

    /// The answer, whole: its text, then its end.
    fn answer(&mut self, text: String) {
        self.actions.push_back(Action::Output(text.into_bytes()));
        self.actions.push_back(Action::Done { close: false });
    }

    /// The line under way without its line end, if any: at the end of an answer it is the
    /// last line, not the start of the next one.
    fn take_partial(&mut self) -> Option<String> {
        let raw = std::mem::take(&mut self.partial);
        let line = String::from_utf8_lossy(&raw)
            .trim_end_matches('\r')
            .to_string();
        (!line.is_empty()).then_some(line)
    }

    fn prompt(&mut self, now: Instant) {
        if self.state == TelnetState::PasswordSent {
            return;
        }
        self.state = TelnetState::PasswordSent;
        if self.tracing {
            self.actions.push_back(Action::Trace(Traced::new(
                Protocol::Telnet,
                Direction::Sent,
                Vec::new(),
                "password line (hidden)",
            )));
        }
        let mut bytes = self.password.as_bytes().to_vec();
        bytes.extend_from_slice(b"\r\n");
        self.actions.push_back(Action::Send(bytes));
        self.started = Some(now);
    }
}

impl Machine for Telnet {
    fn start(&mut self, now: Instant) {
        self.started = Some(now);
    }

    fn command(&mut self, command: &str, now: Instant) {
        let mut bytes = command.as_bytes().to_vec();
        bytes.extend_from_slice(b"\r\n");
        if self.tracing {
            self.actions.push_back(Action::Trace(Traced::new(
                Protocol::Telnet,
                Direction::Sent,
                bytes.clone(),
                "command line",
            )));
        }
        self.actions.push_back(Action::Send(bytes));
        self.pending = Some((Vec::new(), now, now));
    }

    fn receive(&mut self, data: &[u8], now: Instant) {
        if self.tracing {
            self.actions.push_back(Action::Trace(Traced::new(
                Protocol::Telnet,
                Direction::Received,
                data.to_vec(),
                "telnet bytes",
            )));
        }
        let clean = self.strip(data);
        // Whether this chunk ends inside a line: bytes of the answer may still be arriving.
        let mut unfinished = false;
        for b in clean {
            unfinished = b != b'\n';
            if b == b'\n' {
                let mut raw = std::mem::take(&mut self.partial);
                if raw.last() == Some(&b'\r') {
                    raw.pop();
                }
                self.line(String::from_utf8_lossy(&raw).into_owned(), now);
            } else if b != b'\0' {
                self.partial.push(b);
                if self.partial.len() >= MAX_LINE {
                    let raw = std::mem::take(&mut self.partial);
                    self.line(String::from_utf8_lossy(&raw).into_owned(), now);
                }
            }
        }
        // The start of a log line in transit does not hold the answer open, as a whole one
        // does not.
        if unfinished
            && !self.partial.is_empty()
            && !starts_like_stamp(&self.partial)
            && let Some((_, _, last)) = self.pending.as_mut()
        {
            *last = now;
        }
        // The prompt has no line end.
        if matches!(self.state, TelnetState::New)
            && String::from_utf8_lossy(&self.partial)
                .to_ascii_lowercase()
                .contains("password:")
        {
            self.partial.clear();
            self.prompt(now);
        }
    }

    fn closed(&mut self) -> Option<String> {
        let (mut lines, _, _) = self.pending.take()?;
        lines.extend(self.take_partial());
        Some(lines.join("\n"))
    }

    fn tick(&mut self, now: Instant) {
        match self.state {
            TelnetState::Ready => {
                if let Some((_, since, last)) = &self.pending {
                    if now.duration_since(*last) >= self.idle_gap {
                        let (mut lines, _, _) = self.pending.take().expect("checked");
                        // A log line in transit stays for its line end: it is a message.
                        if !starts_like_stamp(&self.partial) {
                            lines.extend(self.take_partial());
                        }
                        self.answer(lines.join("\n"));
                    } else if now.duration_since(*since) >= self.timeout {
                        self.pending = None;
                        self.actions.push_back(Action::Fail(Error::Timeout {
                            phase: crate::error::Phase::Answer,
                            what: "waiting for the telnet answer",
                            after: self.timeout,
                        }));
                    }
                }
            }
            TelnetState::New | TelnetState::PasswordSent => {
                if self
                    .started
                    .is_some_and(|s| now.duration_since(s) >= self.timeout)
                {
                    self.state = TelnetState::Failed;
                    self.actions.push_back(Action::Fail(Error::Timeout {
                        phase: crate::error::Phase::Login,
                        what: "waiting for the telnet password prompt or its reply",
                        after: self.timeout,
                    }));
                }
            }
            TelnetState::Failed => {}
        }
    }

    fn poll(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    fn wake(&self) -> Option<Instant> {
        match self.state {
            TelnetState::Ready => self
                .pending
                .as_ref()
                .map(|(_, since, last)| (*last + self.idle_gap).min(*since + self.timeout)),
            TelnetState::Failed => None,
            _ => self.started.map(|s| s + self.timeout),
        }
    }
}

#[cfg(test)]
mod tests {
    // Log lines; the exchange's tables per state are in `consoles/tests/telnet.rs`.
    use super::*;

    const LOG: &str = "2026-12-02T01:30:00 12.345 INF Executing command 'version' by Telnet";

    #[test]
    fn log_lines() {
        assert!(is_log_line(LOG));
        assert!(is_log_line("2026-12-02T01:30:00 0.5 WRN x"));
        assert!(!is_log_line("Game version: V 1.0"));
        assert!(!is_log_line("2026-12-02T01:30:00 soon INF x"));
        assert!(!is_log_line("2026-12-02 01:30:00 1.0 INF x"));
    }

    proptest::proptest! {
        #[test]
        fn any_bytes_never_panic(chunks in proptest::collection::vec(
            proptest::collection::vec(proptest::num::u8::ANY, 0..64), 0..20)) {
            let now = Instant::now();
            let mut ex = Telnet::new("pw", Duration::from_secs(5), Duration::from_millis(200), false);
            ex.start(now);
            ex.receive(b"Please enter password:\r\nLogon successful.\r\n", now);
            ex.command("x", now);
            for c in &chunks {
                ex.receive(c, now);
                ex.tick(now + Duration::from_millis(300));
            }
            while ex.poll().is_some() {}
        }
    }
}
