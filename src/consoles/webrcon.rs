//! Rust's WebRCON, sans-IO: JSON messages over a WebSocket whose URL path is the password
//! (docs/protocol.md section 8). [`WebRcon`] is the exchange of frames; [`WebRconStream`] runs
//! it over a byte stream, with the WebSocket upgrade (which is the login) and the frames of
//! the one WebSocket codec (`crate::ws`), so the blocking driver and the event loop drive it
//! over a plain TCP link or a tunnel as they drive telnet.
//!
//! A request is `{"Identifier": n, "Message": command, "Name": "rconsole"}`; the reply carries
//! the same `Identifier`. Anything else (chat and log lines, with `Identifier` 0 or -1, or
//! replies to a command that already timed out) is a server message, never part of an answer.

use std::collections::VecDeque;
use std::io;
use std::time::{Duration, Instant};

use serde::Deserialize;
use tungstenite::client::IntoClientRequest;

use super::ConsoleNotice;
use crate::engine::{Action, Direction, Machine, Notice, Password, Protocol, Traced};
use crate::error::{Error, Phase};
use crate::ws::{WsCodec, WsEvent};

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

/// The WebRCON exchange of text frames, once the upgrade logged in ([`WebRconStream`] runs it
/// over a stream).
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
                phase: Phase::Answer,
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

/// Percent-encodes a password for the URL path (everything but unreserved characters).
pub fn encode_path(password: &str) -> String {
    let mut out = String::with_capacity(password.len());
    for b in password.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~".contains(&b) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}

/// WebRCON over a byte stream (TCP, or a tunnel's pipes), for one connection: the WebSocket
/// upgrade to `ws://ADDRESS/PASSWORD` (the login, given up after the timeout), then
/// [`WebRcon`] over its text frames. The password is never traced: the trace shows the
/// request line with the path masked.
pub struct WebRconStream {
    address: String,
    password: Password,
    timeout: Duration,
    tracing: bool,
    inner: WebRcon,
    /// The connection, while there is one.
    ws: Option<WsCodec>,
    /// When the upgrade gives up, while it is under way.
    upgrade_until: Option<Instant>,
    /// The server's close frame came: its close of the stream follows, and decides (nothing
    /// more is read or sent; the answer to the close frame goes at the driver's close).
    closing: bool,
    actions: VecDeque<Action>,
}

impl WebRconStream {
    /// The machine for the server at `address` (`host:port`, as its URL and `Host` header
    /// name it), logging in with `password`; the upgrade and each command give up after
    /// `timeout`.
    pub fn new(address: &str, password: Password, timeout: Duration, tracing: bool) -> Self {
        WebRconStream {
            address: address.to_string(),
            password,
            timeout,
            tracing,
            inner: WebRcon::new(timeout, tracing),
            ws: None,
            upgrade_until: None,
            closing: false,
            actions: VecDeque::new(),
        }
    }

    fn trace(&mut self, direction: Direction, line: String, what: &'static str) {
        if self.tracing {
            let traced = Traced::new(Protocol::WebRcon, direction, line.into_bytes(), what);
            self.actions.push_back(Action::Trace(traced));
        }
    }

    fn fail(&mut self, e: Error) {
        self.disconnect();
        self.actions.push_back(Action::Fail(e));
    }

    /// Takes what the codec read, hands the exchange its frames and its sends to the codec,
    /// and queues the codec's bytes for the stream.
    fn step(&mut self, now: Instant) {
        while let Some(event) = self
            .ws
            .as_mut()
            .filter(|_| !self.closing)
            .and_then(WsCodec::next)
        {
            match event {
                WsEvent::Upgraded(response) => {
                    self.upgrade_until = None;
                    let line = format!("HTTP/1.1 {}", response.status());
                    self.trace(Direction::Received, line, "WebSocket upgrade accepted");
                    self.inner.start(now);
                }
                WsEvent::Text(t) => self.inner.receive(t.as_bytes(), now),
                WsEvent::Binary(b) => self.inner.receive(&b, now),
                WsEvent::Closed => self.closing = true,
                WsEvent::Failed(e) if self.upgrade_until.is_some() => {
                    return self.fail(upgrade_error(e));
                }
                WsEvent::Failed(e) => return self.fail(Error::io("while reading", ws_io(e))),
            }
            self.exchange();
        }
        self.exchange();
    }

    /// Moves the exchange's actions on, its frames through the codec.
    fn exchange(&mut self) {
        while let Some(action) = self.inner.poll() {
            match (action, self.ws.as_mut()) {
                (Action::Send(frame), Some(ws)) if !self.closing => {
                    // Refused only once the peer closed: its close of the stream decides.
                    let _ = ws.send(&String::from_utf8_lossy(&frame));
                }
                (Action::Send(_), _) => {}
                (other, _) => self.actions.push_back(other),
            }
        }
        let bytes = self.ws.as_mut().map(WsCodec::take).unwrap_or_default();
        if !bytes.is_empty() {
            self.actions.push_back(Action::Send(bytes));
        }
    }
}

impl Machine for WebRconStream {
    fn start(&mut self, now: Instant) {
        self.disconnect();
        let target = &self.address;
        let url = format!("ws://{target}/{}", encode_path(self.password.expose()));
        let line = format!("GET /******** HTTP/1.1 (Host: {target})");
        self.trace(
            Direction::Sent,
            line,
            "WebSocket upgrade (password in the path hidden)",
        );
        match url.into_client_request() {
            Ok(request) => {
                self.ws = Some(WsCodec::connect(request));
                self.upgrade_until = Some(now + self.timeout);
                self.step(now);
            }
            Err(e) => self.fail(upgrade_error(e)),
        }
    }

    fn command(&mut self, command: &str, now: Instant) {
        self.inner.command(command, now);
        self.exchange();
    }

    fn receive(&mut self, data: &[u8], now: Instant) {
        if let Some(ws) = self.ws.as_mut() {
            ws.receive(data);
            self.step(now);
        }
    }

    fn tick(&mut self, now: Instant) {
        if self.upgrade_until.is_some_and(|u| u <= now) {
            return self.fail(Error::Timeout {
                phase: Phase::Login,
                what: "waiting for the WebSocket upgrade",
                after: self.timeout,
            });
        }
        self.inner.tick(now);
        self.exchange();
    }

    fn poll(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    fn wake(&self) -> Option<Instant> {
        self.ws.as_ref()?;
        self.upgrade_until.or_else(|| self.inner.wake())
    }

    /// A close during the upgrade is the upgrade's failure, as tungstenite words it; a close
    /// with no close frame before it, the connection's loss. After the server's close frame,
    /// the close is the driver's to read, as for any console.
    fn peer_closed(&mut self, reset: bool, now: Instant) -> bool {
        match self.ws.as_mut() {
            Some(_) if reset && self.upgrade_until.is_some() => {
                let reset = io::Error::from(io::ErrorKind::ConnectionReset);
                self.fail(Error::io("during the WebSocket upgrade", reset));
                true
            }
            Some(ws) if !reset && !self.closing => {
                ws.end();
                self.step(now);
                true
            }
            _ => false,
        }
    }

    fn disconnect(&mut self) {
        self.ws = None;
        self.upgrade_until = None;
        self.closing = false;
        self.inner = WebRcon::new(self.timeout, self.tracing);
    }

    fn farewell(&mut self) -> Option<Vec<u8>> {
        let ws = self.ws.as_mut()?;
        ws.close();
        Some(ws.take()).filter(|b| !b.is_empty())
    }
}

/// A WebSocket error as the I/O error it is (the peer's close: the end of the stream).
fn ws_io(e: tungstenite::Error) -> io::Error {
    match e {
        tungstenite::Error::Io(e) => e,
        tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => {
            io::Error::new(io::ErrorKind::UnexpectedEof, "closed by the server")
        }
        // The typed error rides along as the io::Error's source, not as its text.
        other => io::Error::other(other),
    }
}

/// A failed WebSocket upgrade: a refused password (Rust answers 401, or closes), another
/// HTTP answer, anything else tungstenite's own.
fn upgrade_error(e: tungstenite::Error) -> Error {
    match e {
        tungstenite::Error::Http(r) if r.status() == 401 || r.status() == 403 => {
            Error::LoginRefused
        }
        tungstenite::Error::Http(r) => Error::Protocol(format!(
            "the WebSocket upgrade was refused with HTTP {} (is this Rust's WebRCON port, with rcon.web 1?)",
            r.status()
        )),
        // Rust closes the connection on a wrong password.
        tungstenite::Error::Io(e) if e.kind() == io::ErrorKind::UnexpectedEof => Error::LoginClosed,
        tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => {
            Error::LoginClosed
        }
        tungstenite::Error::Io(e) => Error::io("during the WebSocket upgrade", e),
        other => Error::WebSocket {
            when: "upgrade failed",
            source: Box::new(other),
        },
    }
}

#[cfg(test)]
mod tests {
    // The exchange's tables per state are in `consoles/tests/webrcon.rs`.
    use super::*;
    use crate::ws::testing::frame;

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

    #[test]
    fn passwords_are_percent_encoded_in_the_path() {
        assert_eq!(encode_path("abc-1_2.~"), "abc-1_2.~");
        assert_eq!(encode_path("a b/c?d#é"), "a%20b%2Fc%3Fd%23%C3%A9");
    }

    /// A [`WebRconStream`] to `game:28016` with password `s3 cr/t`, its timeout 5 s.
    fn stream(tracing: bool) -> WebRconStream {
        let password = Password::new("s3 cr/t");
        WebRconStream::new("game:28016", password, Duration::from_secs(5), tracing)
    }

    fn actions(m: &mut WebRconStream) -> Vec<Action> {
        std::iter::from_fn(|| m.poll()).collect()
    }

    /// Starts `m`: the upgrade request it sent, and the answer that accepts it.
    fn upgrade(m: &mut WebRconStream, now: Instant) -> (String, Vec<u8>) {
        m.start(now);
        let sent = actions(m)
            .into_iter()
            .find_map(|a| match a {
                Action::Send(bytes) => Some(String::from_utf8(bytes).unwrap()),
                _ => None,
            })
            .expect("the upgrade request");
        let answer = crate::ws::testing::accept(&sent);
        (sent, answer)
    }

    fn failure(m: &mut WebRconStream) -> Error {
        match actions(m).pop() {
            Some(Action::Fail(e)) => e,
            other => panic!("{other:?}"),
        }
    }

    /// The password is the URL's path, percent-encoded, and shows in no trace; the upgrade's
    /// answer and a frame after it, split anywhere, are the login and a server message.
    #[test]
    fn the_upgrade_is_the_login_and_its_answer_may_come_split_anywhere() {
        let now = Instant::now();
        let mut m = stream(true);
        m.start(now);
        let got = actions(&mut m);
        let traced: Vec<String> = got
            .iter()
            .filter_map(|a| match a {
                Action::Trace(t) => Some(String::from_utf8_lossy(&t.bytes).into_owned()),
                _ => None,
            })
            .collect();
        assert_eq!(traced, ["GET /******** HTTP/1.1 (Host: game:28016)"]);
        let sent = upgrade(&mut stream(false), now).0;
        assert!(sent.starts_with("GET /s3%20cr%2Ft HTTP/1.1\r\n"), "{sent}");
        assert!(sent.contains("Host: game:28016\r\n"), "{sent}");
        let log = frame(&request(0, "log line"));
        let len = upgrade(&mut stream(false), now).1.len() + log.len();
        for cut in 0..=len {
            let mut m = stream(false);
            let (_, mut wire) = upgrade(&mut m, now);
            wire.extend(&log);
            m.receive(&wire[..cut], now);
            m.receive(&wire[cut..], now);
            let got = actions(&mut m);
            assert!(
                matches!(got.as_slice(), [Action::LoggedIn, Action::Message(t)] if t == "log line"),
                "cut at {cut}: {got:?}"
            );
        }
        // A command goes as one masked text frame; its reply is the answer.
        let mut m = stream(false);
        let (_, wire) = upgrade(&mut m, now);
        m.receive(&wire, now);
        actions(&mut m);
        m.command("status", now);
        assert!(
            matches!(actions(&mut m).as_slice(), [Action::Send(f)] if f[0] == 0x81 && f[1] & 0x80 != 0)
        );
        m.receive(&frame(&request(1, "hostname: x")), now);
        assert!(matches!(
            actions(&mut m).as_slice(),
            [Action::Output(o), Action::Done { close: false }] if o == b"hostname: x"
        ));
        // Closing politely: the close frame.
        let bye = m.farewell().expect("a close frame");
        assert_eq!(bye[0], 0x88, "{bye:?}");
    }

    /// Each way an upgrade fails, in the words the loop and the console driver both used.
    #[test]
    fn an_upgrade_refused_broken_off_or_unanswered() {
        let now = Instant::now();
        let mut m = stream(false);
        upgrade(&mut m, now);
        m.receive(
            b"HTTP/1.1 401 Unauthorized\r\nContent-Length: 0\r\n\r\n",
            now,
        );
        assert!(matches!(failure(&mut m), Error::LoginRefused));
        assert_eq!(m.wake(), None);
        let mut m = stream(false);
        upgrade(&mut m, now);
        m.receive(b"HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n", now);
        assert_eq!(
            failure(&mut m).to_string(),
            "protocol error: the WebSocket upgrade was refused with HTTP 404 Not Found (is \
             this Rust's WebRCON port, with rcon.web 1?)"
        );
        let mut m = stream(false);
        upgrade(&mut m, now);
        assert!(m.peer_closed(false, now));
        assert!(matches!(
            failure(&mut m),
            Error::WebSocket {
                when: "upgrade failed",
                ..
            }
        ));
        let mut m = stream(false);
        upgrade(&mut m, now);
        assert_eq!(m.wake(), Some(now + Duration::from_secs(5)));
        m.tick(now + Duration::from_secs(5));
        assert_eq!(
            failure(&mut m).to_string(),
            "timed out after 5s while waiting for the WebSocket upgrade"
        );
        assert_eq!(m.farewell(), None);
    }

    /// A close with no close frame before it is the connection's loss; after the server's
    /// close frame (whose answer goes out), the close is the driver's to read.
    #[test]
    fn a_close_with_and_without_the_close_frame() {
        let now = Instant::now();
        let mut m = stream(false);
        let (_, wire) = upgrade(&mut m, now);
        m.receive(&wire, now);
        actions(&mut m);
        assert!(m.peer_closed(false, now));
        assert!(matches!(
            failure(&mut m),
            Error::Io {
                when: "while reading",
                ..
            }
        ));
        let mut m = stream(false);
        let (_, wire) = upgrade(&mut m, now);
        m.receive(&wire, now);
        m.command("status", now);
        actions(&mut m);
        m.receive(&[0x88, 0x00], now);
        m.receive(&frame(&request(1, "after the close")), now);
        m.command("more", now);
        // Nothing is read or written after it (a write could meet the server's reset).
        assert!(actions(&mut m).is_empty());
        assert!(!m.peer_closed(false, now));
        assert!(actions(&mut m).is_empty());
        let reply = m.farewell().expect("the answer to the close frame");
        assert_eq!(reply[0], 0x88, "{reply:?}");
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
