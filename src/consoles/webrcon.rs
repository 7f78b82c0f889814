//! Rust's WebRCON, sans-IO: JSON messages over a WebSocket whose URL path is the password
//! (docs/protocol.md section 8). The driver does the WebSocket upgrade (which is the login)
//! and hands this exchange each text frame.
//!
//! A request is `{"Identifier": n, "Message": command, "Name": "rconsole"}`; the reply carries
//! the same `Identifier`. Anything else (chat and log lines, with `Identifier` 0 or -1, or
//! replies to a command that already timed out) is a server message, never part of an answer.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use serde::Deserialize;

use super::ConsoleNotice;
use crate::engine::{Action, Direction, Machine, Notice, Protocol, Traced};
use crate::error::Error;

/// Longest command sent, in UTF-8 bytes.
pub const MAX_COMMAND_BYTES: usize = 65_536;

/// The name requests carry.
pub const CLIENT_NAME: &str = "rconsole";

/// A frame from the server, as far as the client needs it.
#[derive(Debug, Deserialize)]
struct WebRconFrame {
    #[serde(rename = "Identifier", default)]
    identifier: i64,
    #[serde(rename = "Message", default)]
    message: String,
}

/// The request frame for `command` with `identifier`.
pub fn request(identifier: i64, command: &str) -> String {
    serde_json::json!({
        "Identifier": identifier,
        "Message": command,
        "Name": CLIENT_NAME,
    })
    .to_string()
}

/// The WebRCON exchange.
pub struct WebRcon {
    timeout: Duration,
    next_id: i64,
    pending: Option<(i64, Instant)>,
    actions: VecDeque<Action>,
    tracing: bool,
    started: bool,
}

impl WebRcon {
    /// An exchange whose commands give up after `timeout`.
    pub fn new(timeout: Duration, tracing: bool) -> Self {
        WebRcon {
            timeout,
            next_id: 1,
            pending: None,
            actions: VecDeque::new(),
            tracing,
            started: false,
        }
    }

    fn trace(&mut self, sent: bool, bytes: &[u8], what: String) {
        if self.tracing {
            let direction = if sent {
                Direction::Sent
            } else {
                Direction::Received
            };
            self.actions.push_back(Action::Trace(Traced::new(
                Protocol::WebRcon,
                direction,
                bytes.to_vec(),
                what,
            )));
        }
    }
}

impl Machine for WebRcon {
    fn start(&mut self, _now: Instant) {
        // The upgrade with the password in the path was the login.
        self.started = true;
        self.actions.push_back(Action::LoggedIn);
    }

    fn command(&mut self, command: &str, now: Instant) {
        let id = self.next_id;
        // Identifiers stay positive: 0 and -1 are the server's own messages.
        self.next_id = if self.next_id >= i64::from(i32::MAX) {
            1
        } else {
            self.next_id + 1
        };
        let frame = request(id, command);
        self.trace(true, frame.as_bytes(), format!("request Identifier={id}"));
        self.actions.push_back(Action::Send(frame.into_bytes()));
        self.pending = Some((id, now));
    }

    fn receive(&mut self, data: &[u8], _now: Instant) {
        // Only an object: serde would also read a struct from an array (`[1, "x"]` as
        // Identifier 1), which no WebRCON server sends.
        let reply: WebRconFrame = match serde_json::from_slice(data)
            .and_then(|o| serde_json::from_value(serde_json::Value::Object(o)))
        {
            Ok(r) => r,
            Err(e) => {
                self.trace(false, data, "not WebRCON JSON; ignored".into());
                self.actions.push_back(Action::Warning(Notice::new(
                    ConsoleNotice::NotWebRconJson {
                        reason: e.to_string(),
                    },
                )));
                return;
            }
        };
        match self.pending {
            Some((id, _)) if id == reply.identifier => {
                self.trace(false, data, format!("reply Identifier={id}"));
                self.pending = None;
                self.actions
                    .push_back(Action::Output(reply.message.into_bytes()));
                self.actions.push_back(Action::Done { close: false });
            }
            _ => {
                self.trace(
                    false,
                    data,
                    format!("server message Identifier={}", reply.identifier),
                );
                self.actions.push_back(Action::Message(reply.message));
            }
        }
    }

    fn tick(&mut self, now: Instant) {
        if let Some((_, since)) = self.pending
            && now.duration_since(since) >= self.timeout
        {
            self.pending = None;
            self.actions.push_back(Action::Fail(Error::Timeout {
                phase: crate::error::Phase::Answer,
                what: "waiting for the WebRCON reply",
                after: self.timeout,
            }));
        }
    }

    fn poll(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    fn wake(&self) -> Option<Instant> {
        self.pending.map(|(_, since)| since + self.timeout)
    }
}

#[cfg(test)]
mod tests {
    // The exchange's tables per state are in `consoles/tests/webrcon.rs`.
    use super::*;

    /// Identifiers wrap after `i32::MAX` (what Rust's own `int` holds) to 1, never to 0 or -1,
    /// which are the server's own messages. (Too many commands for a table to reach.)
    #[test]
    fn identifiers_wrap_to_one() {
        let now = Instant::now();
        let mut ex = WebRcon::new(Duration::from_secs(5), false);
        ex.start(now);
        ex.next_id = i64::from(i32::MAX);
        for (id, message) in [(i64::from(i32::MAX), "a"), (1, "b")] {
            ex.command(message, now);
            ex.receive(request(id, "out").as_bytes(), now);
        }
        let mut got = Vec::new();
        while let Some(a) = ex.poll() {
            match a {
                Action::Send(frame) => got.push(String::from_utf8(frame).unwrap()),
                Action::Output(bytes) => got.push(String::from_utf8(bytes).unwrap()),
                _ => {}
            }
        }
        assert_eq!(
            got,
            [
                request(i64::from(i32::MAX), "a"),
                "out".into(),
                request(1, "b"),
                "out".into()
            ]
        );
    }

    proptest::proptest! {
        #[test]
        fn any_frames_never_panic(frames in proptest::collection::vec(".{0,80}", 0..20)) {
            let now = Instant::now();
            let mut ex = WebRcon::new(Duration::from_secs(5), false);
            ex.start(now);
            ex.command("x", now);
            for f in &frames {
                ex.receive(f.as_bytes(), now);
            }
            while ex.poll().is_some() {}
        }
    }
}
