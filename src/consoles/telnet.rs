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

/// Where the exchange is; each state holds what is valid in it, and its deadlines follow from
/// that ([`Telnet::timers`]).
#[derive(Debug)]
enum TelnetState {
    /// Not started: no clock runs yet.
    New,
    /// Waiting, since then, for the password prompt (or the greeting of a server without a
    /// password).
    Prompt(Instant),
    /// The password went then; waiting for the verdict.
    PasswordSent(Instant),
    /// Logged in, with the command's answer under way, if any.
    Ready(Option<Answer>),
    Failed,
}

/// A command's answer so far.
#[derive(Debug)]
struct Answer {
    lines: Vec<String>,
    /// When the command went: it times out [`Telnet`]'s timeout after.
    since: Instant,
    /// The last activity: the answer ends the idle gap after it.
    last: Instant,
}

/// The exchange's timers, in the order they are served when both are due.
#[derive(Debug, Clone, Copy)]
enum Timer {
    /// The idle gap after the answer's last line passed: the answer is whole.
    Gap,
    /// The login or the answer took the timeout.
    GiveUp,
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
    /// Bytes of a line not yet ended.
    partial: Vec<u8>,
    /// Bytes of an unfinished negotiation sequence.
    iac: Vec<u8>,
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
            partial: Vec::new(),
            iac: Vec::new(),
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
        match &mut self.state {
            TelnetState::New | TelnetState::Prompt(_) => {
                if line.starts_with("***") {
                    // No password configured: already in.
                    self.state = TelnetState::Ready(None);
                    self.actions.push_back(Action::LoggedIn);
                } else if line.to_ascii_lowercase().contains("password") {
                    self.prompt(now);
                }
            }
            TelnetState::PasswordSent(_) => {
                let lower = line.to_ascii_lowercase();
                if lower.contains("incorrect") || lower.contains("wrong") {
                    self.state = TelnetState::Failed;
                    self.actions.push_back(Action::Fail(Error::LoginRefused));
                } else if lower.contains("logon successful") || lower.starts_with("***") {
                    self.state = TelnetState::Ready(None);
                    self.actions.push_back(Action::LoggedIn);
                }
            }
            TelnetState::Ready(answer) => {
                let log = is_log_line(&line);
                match answer {
                    Some(a) if !log => {
                        a.lines.push(line);
                        a.last = now;
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
        self.state = TelnetState::PasswordSent(now);
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
    }

    /// When each timer is due in this state, if it is set: the one place the deadlines come
    /// from, for [`Machine::wake`] and [`Machine::tick`] alike.
    fn timers(&self) -> [(Timer, Option<Instant>); 2] {
        let (gap, give_up) = match &self.state {
            TelnetState::Prompt(since) | TelnetState::PasswordSent(since) => (None, Some(since)),
            TelnetState::Ready(Some(a)) => (a.last.checked_add(self.idle_gap), Some(&a.since)),
            TelnetState::New | TelnetState::Ready(None) | TelnetState::Failed => (None, None),
        };
        [
            (Timer::Gap, gap),
            (
                Timer::GiveUp,
                give_up.and_then(|s| s.checked_add(self.timeout)),
            ),
        ]
    }

    /// The idle gap passed: the answer is whole.
    fn end_answer(&mut self) {
        let TelnetState::Ready(Some(a)) =
            std::mem::replace(&mut self.state, TelnetState::Ready(None))
        else {
            return;
        };
        let mut lines = a.lines;
        // A log line in transit stays for its line end: it is a message.
        if !starts_like_stamp(&self.partial) {
            lines.extend(self.take_partial());
        }
        self.actions
            .push_back(Action::Output(lines.join("\n").into_bytes()));
        self.actions.push_back(Action::Done { close: false });
    }

    fn give_up(&mut self) {
        let (phase, what, then) = match self.state {
            // The connection stays usable: the next command may be answered.
            TelnetState::Ready(_) => (
                crate::error::Phase::Answer,
                "waiting for the telnet answer",
                TelnetState::Ready(None),
            ),
            _ => (
                crate::error::Phase::Login,
                "waiting for the telnet password prompt or its reply",
                TelnetState::Failed,
            ),
        };
        self.state = then;
        let after = self.timeout;
        let e = Error::Timeout { phase, what, after };
        self.actions.push_back(Action::Fail(e));
    }
}

impl Machine for Telnet {
    fn start(&mut self, now: Instant) {
        self.state = TelnetState::Prompt(now);
    }

    fn command(&mut self, command: &str, now: Instant) {
        if !matches!(self.state, TelnetState::Ready(_)) {
            // As BattlEye's: a failure is final, a login under way must not succeed later.
            self.state = TelnetState::Failed;
            self.actions.push_back(Action::Fail(Error::Closed {
                phase: crate::error::Phase::Login,
                partial: false,
                when: "before the command (not logged in)",
            }));
            return;
        }
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
        self.state = TelnetState::Ready(Some(Answer {
            lines: Vec::new(),
            since: now,
            last: now,
        }));
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
            && let TelnetState::Ready(Some(a)) = &mut self.state
        {
            a.last = now;
        }
        // The prompt has no line end.
        if matches!(self.state, TelnetState::New | TelnetState::Prompt(_))
            && String::from_utf8_lossy(&self.partial)
                .to_ascii_lowercase()
                .contains("password:")
        {
            self.partial.clear();
            self.prompt(now);
        }
    }

    fn closed(&mut self) -> Option<String> {
        let TelnetState::Ready(answer) = &mut self.state else {
            return None;
        };
        let mut lines = answer.take()?.lines;
        lines.extend(self.take_partial());
        Some(lines.join("\n"))
    }

    fn tick(&mut self, now: Instant) {
        match crate::engine::machine::first_due(self.timers(), now) {
            Some(Timer::Gap) => self.end_answer(),
            Some(Timer::GiveUp) => self.give_up(),
            None => {}
        }
    }

    fn poll(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    fn wake(&self) -> Option<Instant> {
        crate::engine::machine::earliest(self.timers())
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
