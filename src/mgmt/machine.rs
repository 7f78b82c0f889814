//! The management protocol as a machine of the one shape, [`crate::engine::Machine`]: TLS
//! (rustls's `ClientConnection`, itself sans-I/O), the WebSocket upgrade and frames
//! (tungstenite over an in-memory `Wire`) and JSON-RPC on top, with bytes and clock readings
//! in and actions out, so the event loop ([`crate::fleet`]) drives a management server as it
//! drives an RCON one, many at once on one thread.
//!
//! The upgrade carries the secret as `Authorization: Bearer` (and an `Origin` when asked);
//! [`Action::LoggedIn`] comes when the server accepted it. A command is a call, written by
//! [`call_line`] (`METHOD [PARAMS]`); its answer ([`Action::Output`], then [`Action::Done`]) is the server's JSON-RPC
//! response as it came, which [`answer`] reads (a refused call is an answer, not a failure:
//! the connection goes on). A notification is an [`Action::Message`] with the notification's
//! JSON text ([`super::jsonrpc::parse`] reads it). Failures are [`crate::Error::Management`] with the
//! [`MgmtError`]'s wording and class.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::Arc;
use std::time::Instant;

use serde_json::Value;
use tungstenite::client::IntoClientRequest;
use tungstenite::handshake::client::Request;
use tungstenite::http::HeaderValue;

use super::jsonrpc::{self, Incoming, RpcError};
use super::{ConnectOptions, Endpoint, MgmtError, MgmtResult};
use crate::engine::{Action, Machine};
use crate::ws::{WsCodec, WsEvent};

/// A call as a machine's command: the method, a space, and the params as a JSON array (none:
/// the method alone).
pub fn call_line(method: &str, params: &[Value]) -> String {
    match params {
        [] => method.to_string(),
        _ => format!("{method} {}", Value::Array(params.to_vec())),
    }
}

/// What the answer ([`Action::Output`]) of `method`'s call says: its result, or the server's refusal.
pub fn answer(method: &str, text: &str) -> MgmtResult<Value> {
    match jsonrpc::parse(text)? {
        Incoming::Response { outcome, .. } => outcome.map_err(|e| rpc_error(method, e)),
        Incoming::Notification(_) => {
            Err(MgmtError::Protocol("a notification, not an answer".into()))
        }
    }
}

/// A JSON-RPC error for `method` as the management error it is.
fn rpc_error(method: &str, e: RpcError) -> MgmtError {
    MgmtError::Rpc {
        method: method.to_string(),
        code: e.code,
        message: e.message,
        data: e.data,
    }
}

/// The connection: TLS (or nothing) under the WebSocket. What arrived is decrypted into the
/// codec ([`Conn::feed`]); what the codec writes is encrypted and taken out whole
/// ([`Conn::take`]). Written before the TLS handshake ends, it waits in rustls until then.
struct Conn {
    tls: Option<Box<rustls::ClientConnection>>,
    ws: WsCodec,
}

impl Conn {
    /// Bytes from the socket: decrypted (TLS) into the codec.
    fn feed(&mut self, mut data: &[u8]) -> Result<(), rustls::Error> {
        let Some(tls) = self.tls.as_mut() else {
            self.ws.receive(data);
            return Ok(());
        };
        while !data.is_empty() {
            if tls.read_tls(&mut data).is_err() {
                return Err(rustls::Error::General("too much TLS data at once".into()));
            }
            tls.process_new_packets()?;
            let mut buf = [0u8; 16 * 1024];
            while let Ok(n @ 1..) = tls.reader().read(&mut buf) {
                self.ws.receive(&buf[..n]);
            }
        }
        Ok(())
    }

    /// What to send: TLS records (a handshake's, an alert, data) or plain bytes.
    fn take(&mut self) -> Vec<u8> {
        let plain = self.ws.take();
        let Some(tls) = self.tls.as_mut() else {
            return plain;
        };
        let _ = tls.writer().write_all(&plain);
        let mut out = Vec::new();
        while tls.wants_write() {
            if tls.write_tls(&mut out).is_err() {
                break;
            }
        }
        out
    }
}

/// One management server's connection as a machine ([`Machine`]).
pub struct MgmtMachine {
    endpoint: Endpoint,
    opts: ConnectOptions,
    /// The TLS settings (`wss://`), made once.
    tls: Option<Arc<rustls::ClientConfig>>,
    /// The connection, while there is one.
    conn: Option<Conn>,
    actions: VecDeque<Action>,
    /// When the upgrade or the call under way gives up.
    deadline: Option<Instant>,
    next_id: u64,
    /// The call under way: its id.
    pending: Option<u64>,
    /// Why the connection failed last ([`MgmtMachine::take_failure`]).
    failure: Option<MgmtError>,
}

impl MgmtMachine {
    /// A machine for the server at `endpoint`, with `opts`' secret, Origin, trust, time limit
    /// and trace (its cancel flag is the driver's business). An unusable trust setting is the
    /// `Err`, before anything is sent.
    pub fn new(endpoint: Endpoint, opts: ConnectOptions) -> MgmtResult<MgmtMachine> {
        let tls = match endpoint.tls {
            true => Some(Arc::new(opts.trust.client_config()?)),
            false => None,
        };
        Ok(MgmtMachine {
            endpoint,
            opts,
            tls,
            conn: None,
            actions: VecDeque::new(),
            deadline: None,
            next_id: 1,
            pending: None,
            failure: None,
        })
    }

    /// Why the connection failed (an [`Action::Fail`] gives the engine's error for it), in the
    /// management protocol's own terms, for a blocking caller that words and classes them so
    /// ([`super::MgmtClient`]).
    pub fn take_failure(&mut self) -> Option<MgmtError> {
        self.failure.take()
    }

    fn fail(&mut self, e: MgmtError) {
        self.send_pending();
        self.conn = None;
        self.deadline = None;
        self.pending = None;
        self.actions
            .push_back(Action::Fail(crate::Error::Management {
                message: e.to_string(),
                kind: super::error_kind(&e),
            }));
        self.failure = Some(e);
    }

    fn trace(&self, direction: &str, text: &str) {
        if let Some(t) = self.opts.trace {
            t(direction, text);
        }
    }

    /// Queues what the connection has for the socket.
    fn send_pending(&mut self) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        let bytes = conn.take();
        if !bytes.is_empty() {
            self.actions.push_back(Action::Send(bytes));
        }
    }

    /// The WebSocket is open.
    fn upgraded(&mut self) {
        self.deadline = None;
        let origin = self
            .opts
            .origin
            .as_deref()
            .map(|o| format!(", Origin: {o}"))
            .unwrap_or_default();
        let peer = self.endpoint.url();
        self.trace(
            "=",
            &format!("WebSocket open to {peer} (Authorization: Bearer ****{origin})"),
        );
        self.actions.push_back(Action::LoggedIn);
    }

    /// Takes every whole step of the upgrade and every whole frame the connection holds.
    fn read_frames(&mut self) {
        loop {
            let Some(conn) = self.conn.as_mut() else {
                return;
            };
            let upgrading = conn.ws.upgrading();
            let text = match conn.ws.next() {
                None => return,
                Some(WsEvent::Upgraded(_)) => {
                    self.upgraded();
                    continue;
                }
                Some(WsEvent::Failed(e)) if upgrading => {
                    return self.fail(upgrade_failure(e, &self.endpoint));
                }
                Some(WsEvent::Failed(e)) => return self.fail(ws_error(e)),
                Some(WsEvent::Text(t)) => t,
                Some(WsEvent::Binary(_)) => continue,
                // An answer that came just before the close (`server stop`'s) is given
                // first: the socket's close then ends the connection (`peer_closed`).
                Some(WsEvent::Closed)
                    if self
                        .actions
                        .iter()
                        .any(|a| matches!(a, Action::Done { .. })) =>
                {
                    return conn.ws.close();
                }
                Some(WsEvent::Closed) => return self.fail(MgmtError::Closed),
            };
            self.trace("<", &text);
            match jsonrpc::parse(&text) {
                Ok(Incoming::Notification(_)) => self.actions.push_back(Action::Message(text)),
                Ok(Incoming::Response { id, outcome }) => {
                    let ours = match (id, self.pending) {
                        (Some(got), Some(want)) => got == want,
                        // An error about a request the server could not read: the call's.
                        (None, Some(_)) => outcome.is_err(),
                        _ => false,
                    };
                    if ours {
                        self.pending = None;
                        self.deadline = None;
                        self.actions.push_back(Action::Output(text.into_bytes()));
                        self.actions.push_back(Action::Done { close: false });
                    }
                }
                Err(e) => return self.fail(e),
            }
        }
    }

    /// A new connection: TLS (`wss://`) and the upgrade's first bytes.
    fn connection(&self) -> MgmtResult<Conn> {
        let tls = match &self.tls {
            Some(config) => {
                let name = rustls::pki_types::ServerName::try_from(self.endpoint.host.clone())
                    .map_err(|_| {
                        MgmtError::Trust(format!("'{}' is not a host name", self.endpoint.host))
                    })?;
                let tls = rustls::ClientConnection::new(Arc::clone(config), name).map_err(|e| {
                    MgmtError::Tls {
                        peer: self.endpoint.url(),
                        source: io::Error::other(e),
                    }
                })?;
                Some(Box::new(tls))
            }
            None => None,
        };
        let request = upgrade_request(&self.endpoint, &self.opts)?;
        Ok(Conn {
            tls,
            ws: WsCodec::connect(request),
        })
    }
}

impl Machine for MgmtMachine {
    fn start(&mut self, now: Instant) {
        self.conn = None;
        self.pending = None;
        self.failure = None;
        self.deadline = Some(now + self.opts.timeout);
        match self.connection() {
            Ok(conn) => self.conn = Some(conn),
            Err(e) => return self.fail(e),
        }
        self.read_frames();
        self.send_pending();
    }

    /// `command` is a [`call_line`].
    fn command(&mut self, command: &str, now: Instant) {
        let (method, params) = match command.split_once(' ') {
            Some((m, p)) => (m, serde_json::from_str::<Vec<Value>>(p)),
            None => (command, Ok(Vec::new())),
        };
        let Some(conn) = self.conn.as_mut().filter(|c| !c.ws.upgrading()) else {
            return self.fail(MgmtError::Closed);
        };
        let Ok(params) = params else {
            return self.fail(MgmtError::Protocol(format!("'{command}' is not a call")));
        };
        let id = self.next_id;
        self.next_id += 1;
        let text = jsonrpc::request(id, method, &params);
        let sent = conn.ws.send(&text);
        self.trace(">", &text);
        if let Err(e) = sent {
            return self.fail(ws_error(e));
        }
        self.pending = Some(id);
        self.deadline = Some(now + self.opts.timeout);
        self.send_pending();
    }

    fn receive(&mut self, data: &[u8], _now: Instant) {
        let Some(conn) = self.conn.as_mut() else {
            return;
        };
        if let Err(e) = conn.feed(data) {
            let peer = self.endpoint.url();
            return self.fail(MgmtError::Tls {
                peer,
                source: io::Error::new(io::ErrorKind::InvalidData, e),
            });
        }
        self.read_frames();
        self.send_pending();
    }

    fn tick(&mut self, now: Instant) {
        if self.deadline.is_none_or(|d| d > now) {
            return;
        }
        let what = match self.conn.as_ref().is_some_and(|c| c.ws.upgrading()) {
            true => "connecting to the management server",
            false => "waiting for the answer",
        };
        self.fail(MgmtError::Timeout {
            what,
            after: self.opts.timeout,
        });
    }

    fn poll(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    fn wake(&self) -> Option<Instant> {
        self.deadline
    }

    /// A close means what the blocking client says it means: during the upgrade, most likely
    /// the wrong kind of port; later, a lost connection.
    fn peer_closed(&mut self, _reset: bool, _now: Instant) -> bool {
        let e = match &self.conn {
            Some(c) if c.ws.upgrading() && c.tls.as_ref().is_some_and(|t| t.is_handshaking()) => {
                tls_closed(&self.endpoint)
            }
            Some(c) if c.ws.upgrading() => closed_before_upgrade(&self.endpoint),
            _ => MgmtError::Closed,
        };
        self.fail(e);
        true
    }

    fn disconnect(&mut self) {
        self.conn = None;
        self.pending = None;
        self.deadline = None;
    }
}

/// The upgrade request: the URL, the secret as `Authorization: Bearer`, the `Origin` if any.
fn upgrade_request(endpoint: &Endpoint, opts: &ConnectOptions) -> MgmtResult<Request> {
    let mut request = endpoint
        .ws_url()
        .into_client_request()
        .map_err(|e| MgmtError::Handshake(e.to_string()))?;
    let headers = request.headers_mut();
    let bearer = HeaderValue::from_str(&format!("Bearer {}", opts.secret.expose()))
        .map_err(|_| MgmtError::Handshake("the secret is not valid in an HTTP header".into()))?;
    headers.insert("Authorization", bearer);
    if let Some(origin) = &opts.origin {
        let v = HeaderValue::from_str(origin)
            .map_err(|_| MgmtError::Handshake(format!("'{origin}' is not a valid Origin")))?;
        headers.insert("Origin", v);
    }
    Ok(request)
}

/// The server closed the connection in the middle of the TLS handshake.
fn tls_closed(endpoint: &Endpoint) -> MgmtError {
    MgmtError::Tls {
        peer: endpoint.url(),
        source: io::Error::other(
            "the server closed the connection during the handshake (is it a ws:// server?)",
        ),
    }
}

/// The server closed the connection before answering the upgrade.
fn closed_before_upgrade(endpoint: &Endpoint) -> MgmtError {
    MgmtError::Handshake(format!(
        "the server closed the connection before answering the upgrade (is {} a management port{}?)",
        endpoint.port,
        if endpoint.tls {
            ""
        } else {
            ", and without TLS"
        }
    ))
}

/// What an upgrade that failed means: a refused secret (401), another HTTP answer, a close.
fn upgrade_failure(e: tungstenite::Error, endpoint: &Endpoint) -> MgmtError {
    match e {
        tungstenite::Error::Http(resp) if resp.status().as_u16() == 401 => {
            MgmtError::Unauthorized {
                reason: unauthorized_reason(resp.body().as_deref()),
            }
        }
        tungstenite::Error::Http(resp) => {
            MgmtError::Handshake(format!("the server answered HTTP {}", resp.status()))
        }
        tungstenite::Error::Protocol(tungstenite::error::ProtocolError::HandshakeIncomplete) => {
            closed_before_upgrade(endpoint)
        }
        e => match ws_error(e) {
            MgmtError::Closed => closed_before_upgrade(endpoint),
            other => other,
        },
    }
}

/// A WebSocket error as the management error it is (the peer closing: [`MgmtError::Closed`];
/// so is a call sent after the peer's close frame came, with the answer before it: `server
/// stop`'s).
fn ws_error(e: tungstenite::Error) -> MgmtError {
    use tungstenite::error::ProtocolError;
    match e {
        tungstenite::Error::ConnectionClosed
        | tungstenite::Error::AlreadyClosed
        | tungstenite::Error::Protocol(ProtocolError::SendAfterClosing) => MgmtError::Closed,
        tungstenite::Error::Io(io) if io.kind() == io::ErrorKind::UnexpectedEof => {
            MgmtError::Closed
        }
        tungstenite::Error::Io(io) => MgmtError::Io(io),
        other => MgmtError::WebSocket(Box::new(other)),
    }
}

/// The `message` of vanilla's 401 body, `{"error":"Unauthorized","message":"Invalid API key"}`
/// (whatever of it arrived with the headers), kept short and printable.
fn unauthorized_reason(body: Option<&[u8]>) -> Option<String> {
    let body: Value = serde_json::from_slice(body?).ok()?;
    let message = body.get("message")?.as_str()?;
    let message: String = message
        .chars()
        .filter(|c| !c.is_control())
        .take(200)
        .collect();
    (!message.is_empty()).then_some(message)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::ws::testing::frame;
    use std::time::Duration;

    /// A machine for `ws://127.0.0.1:1/` (no TLS: the bytes on the wire are the WebSocket's).
    fn machine() -> MgmtMachine {
        let opts = ConnectOptions {
            secret: crate::Password::new("s3cret".to_string()),
            origin: None,
            trust: super::super::Trust::PublicRoots,
            timeout: Duration::from_secs(10),
            trace: None,
            cancel: None,
        };
        MgmtMachine::new(Endpoint::parse("ws://127.0.0.1:1").unwrap(), opts).unwrap()
    }

    fn actions(m: &mut MgmtMachine) -> Vec<Action> {
        std::iter::from_fn(|| m.poll()).collect()
    }

    /// The request the machine sent, and the server's answer accepting it.
    fn upgrade(m: &mut MgmtMachine, now: Instant) -> (String, Vec<u8>) {
        m.start(now);
        let sent = match actions(m).as_slice() {
            [Action::Send(bytes)] => String::from_utf8(bytes.clone()).unwrap(),
            other => panic!("{other:?}"),
        };
        let answer = crate::ws::testing::accept(&sent);
        (sent, answer)
    }

    const NOTE: &str = r#"{"jsonrpc":"2.0","method":"minecraft:notification/players/joined","params":[{"name":"Steve"}]}"#;

    #[test]
    fn the_upgrade_and_a_notification_split_at_every_byte() {
        let now = Instant::now();
        let (sent, _) = upgrade(&mut machine(), now);
        assert!(
            sent.to_ascii_lowercase()
                .contains("authorization: bearer s3cret\r\n"),
            "{sent}"
        );
        // Each machine's upgrade has its own key, so its own answer.
        let len = upgrade(&mut machine(), now).1.len() + frame(NOTE).len();
        for cut in 0..=len {
            let mut m = machine();
            let (_, mut wire) = upgrade(&mut m, now);
            wire.extend(frame(NOTE));
            m.receive(&wire[..cut], now);
            m.receive(&wire[cut..], now);
            let got = actions(&mut m);
            assert!(
                matches!(got.as_slice(), [Action::LoggedIn, Action::Message(t)] if t == NOTE),
                "cut at {cut}: {got:?}"
            );
        }
    }

    #[test]
    fn a_call_is_answered_by_its_id_and_times_out_without_one() {
        let now = Instant::now();
        let mut m = machine();
        let (_, wire) = upgrade(&mut m, now);
        m.receive(&wire, now);
        assert!(matches!(actions(&mut m).as_slice(), [Action::LoggedIn]));
        m.command(&call_line("minecraft:players", &[]), now);
        assert!(matches!(actions(&mut m).as_slice(), [Action::Send(_)]));
        assert_eq!(m.wake(), Some(now + Duration::from_secs(10)));
        // Another id's answer is not this call's; its own is, whole.
        let other = r#"{"jsonrpc":"2.0","id":7,"result":[]}"#;
        let own = r#"{"jsonrpc":"2.0","id":1,"result":[{"name":"Steve"}]}"#;
        m.receive(&[frame(other), frame(own)].concat(), now);
        match actions(&mut m).as_slice() {
            [Action::Output(t), Action::Done { close: false }] => {
                let t = std::str::from_utf8(t).unwrap();
                assert_eq!(answer("minecraft:players", t).unwrap()[0]["name"], "Steve")
            }
            other => panic!("{other:?}"),
        }
        assert_eq!(m.wake(), None);
        // A call nobody answers fails at its deadline.
        m.command(&call_line("minecraft:bans", &[serde_json::json!(1)]), now);
        actions(&mut m);
        m.tick(now + Duration::from_secs(11));
        match actions(&mut m).as_slice() {
            [Action::Fail(e)] => {
                assert_eq!(e.kind(), crate::ErrorKind::Timeout);
                assert!(e.to_string().contains("waiting for the answer"), "{e}");
            }
            other => panic!("{other:?}"),
        }
    }

    /// `server stop`: the server answers and closes at once, both in one read. The answer is
    /// given, not lost to the close; the socket's close then ends the connection.
    #[test]
    fn an_answer_that_comes_with_the_close_is_given() {
        let now = Instant::now();
        let mut m = machine();
        let (_, wire) = upgrade(&mut m, now);
        m.receive(&wire, now);
        actions(&mut m);
        m.command(&call_line("minecraft:server/stop", &[]), now);
        actions(&mut m);
        let own = r#"{"jsonrpc":"2.0","id":1,"result":true}"#;
        m.receive(&[frame(own), vec![0x88, 0x00]].concat(), now);
        let got: Vec<Action> = actions(&mut m)
            .into_iter()
            .filter(|a| !matches!(a, Action::Send(_)))
            .collect();
        assert!(
            matches!(got.as_slice(), [Action::Output(t), Action::Done { .. }] if t == own.as_bytes()),
            "{got:?}"
        );
        assert!(m.peer_closed(false, now));
        assert!(matches!(actions(&mut m).as_slice(), [Action::Fail(_)]));
        // A call sent after the close came, before the socket's close is seen, fails as a
        // closed connection, not as the WebSocket's own complaint.
        let mut m = machine();
        let (_, wire) = upgrade(&mut m, now);
        m.receive(&wire, now);
        m.command(&call_line("minecraft:server/stop", &[]), now);
        m.receive(&[frame(own), vec![0x88, 0x00]].concat(), now);
        actions(&mut m);
        m.command(&call_line("minecraft:players", &[]), now);
        match actions(&mut m).as_slice() {
            [Action::Fail(e)] => assert_eq!(e.to_string(), MgmtError::Closed.to_string()),
            other => panic!("{other:?}"),
        }
    }

    /// The server's close frame while a call waits: the call fails as a closed connection,
    /// and nothing is written first (a write to a server that closed meets its reset, which
    /// would be reported instead, as a write that failed).
    #[test]
    fn a_close_frame_with_no_answer_fails_the_call_and_writes_nothing() {
        let now = Instant::now();
        let mut m = machine();
        let (_, wire) = upgrade(&mut m, now);
        m.receive(&wire, now);
        m.command(&call_line("minecraft:players", &[]), now);
        actions(&mut m);
        m.receive(&[0x88, 0x00], now);
        match actions(&mut m).as_slice() {
            [Action::Fail(e)] => assert_eq!(e.to_string(), MgmtError::Closed.to_string()),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn a_refused_secret_and_a_close_during_the_upgrade() {
        let now = Instant::now();
        let mut m = machine();
        upgrade(&mut m, now);
        let body = r#"{"error":"Unauthorized","message":"Invalid API key"}"#;
        let refused = format!(
            "HTTP/1.1 401 Unauthorized\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        );
        m.receive(refused.as_bytes(), now);
        match actions(&mut m).as_slice() {
            [Action::Fail(e)] => {
                assert_eq!(e.kind(), crate::ErrorKind::Login);
                assert!(e.to_string().contains("Invalid API key"), "{e}");
            }
            other => panic!("{other:?}"),
        }
        let mut m = machine();
        upgrade(&mut m, now);
        assert!(m.peer_closed(false, now));
        match actions(&mut m).as_slice() {
            [Action::Fail(e)] => assert!(e.to_string().contains("management port"), "{e}"),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn reasons_of_a_refusal() {
        let body = br#"{"error":"Unauthorized","message":"Invalid API key"}"#;
        assert_eq!(
            unauthorized_reason(Some(body)).as_deref(),
            Some("Invalid API key")
        );
        for other in [
            &b""[..],
            b"Unauthorized",
            br#"{"message":""}"#,
            br#"{"message":1}"#,
        ] {
            assert_eq!(unauthorized_reason(Some(other)), None);
        }
        assert_eq!(unauthorized_reason(None), None);
        assert_eq!(
            unauthorized_reason(Some(b"{\"message\":\"a\\u001b[2Jb\"}")).as_deref(),
            Some("a[2Jb")
        );
    }
}
