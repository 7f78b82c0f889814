//! The one WebSocket client codec, sans-I/O: tungstenite's client over an in-memory wire, so
//! the upgrade and the frames move by bytes in ([`WsCodec::receive`]) and bytes out
//! ([`WsCodec::take`]), never by a socket. Rust's WebRCON machine (`WebRconStream` in
//! [`crate::consoles::webrcon`]) runs it over a plain stream and the management protocol's
//! machine over TLS (its own layer, outside this one); the blocking driver and the event loop
//! move their bytes as they move any other machine's.

use std::collections::VecDeque;
use std::io::{self, Read, Write};

use tungstenite::handshake::MidHandshake;
use tungstenite::handshake::client::{ClientHandshake, Request, Response};
use tungstenite::{HandshakeError, Message, WebSocket};

/// What the codec read, in order.
#[derive(Debug)]
pub(crate) enum WsEvent {
    /// The server accepted the upgrade (its answer's status is in the response).
    Upgraded(Box<Response>),
    /// A text frame (a message: tungstenite joins fragments).
    Text(String),
    /// A binary frame.
    Binary(Vec<u8>),
    /// The server's close frame came (the answer to it goes with [`WsCodec::close`], or with
    /// the next read).
    Closed,
    /// The upgrade or the connection failed: tungstenite's error (a refused upgrade, a broken
    /// frame, the stream's end where tungstenite calls it one).
    Failed(tungstenite::Error),
}

/// The bytes between the stream and tungstenite: what arrived and was not read yet, and what
/// was written for the stream. An empty input is `WouldBlock` (tungstenite resumes later)
/// until the peer closed the stream ([`WsCodec::end`]): then it is the end of the stream.
#[derive(Default)]
struct Wire {
    input: VecDeque<u8>,
    output: Vec<u8>,
    ended: bool,
}

impl Read for Wire {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        if self.input.is_empty() && !self.ended {
            return Err(io::ErrorKind::WouldBlock.into());
        }
        self.input.read(buf)
    }
}

impl Write for Wire {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.output.extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Where the connection is.
enum State {
    Upgrading(Box<MidHandshake<ClientHandshake<Wire>>>),
    Open(Box<WebSocket<Wire>>),
    /// The upgrade failed.
    Over,
}

/// One WebSocket client connection, as bytes in and events and bytes out.
pub(crate) struct WsCodec {
    state: State,
    /// What the upgrade's first step gave, for the first [`WsCodec::next`].
    early: Option<WsEvent>,
}

impl WsCodec {
    /// Begins the upgrade `request` asks for: its bytes wait in [`WsCodec::take`].
    pub(crate) fn connect(request: Request) -> WsCodec {
        let mut codec = WsCodec {
            state: State::Over,
            early: None,
        };
        codec.early = codec.step(tungstenite::client::client(request, Wire::default()));
        codec
    }

    fn step(
        &mut self,
        step: Result<(WebSocket<Wire>, Response), HandshakeError<ClientHandshake<Wire>>>,
    ) -> Option<WsEvent> {
        match step {
            Ok((ws, response)) => {
                self.state = State::Open(Box::new(ws));
                Some(WsEvent::Upgraded(Box::new(response)))
            }
            Err(HandshakeError::Interrupted(mid)) => {
                self.state = State::Upgrading(Box::new(mid));
                None
            }
            Err(HandshakeError::Failure(e)) => Some(WsEvent::Failed(e)),
        }
    }

    fn wire(&mut self) -> Option<&mut Wire> {
        match &mut self.state {
            State::Upgrading(mid) => Some(mid.get_mut().get_mut()),
            State::Open(ws) => Some(ws.get_mut()),
            State::Over => None,
        }
    }

    /// Whether the upgrade is still under way.
    pub(crate) fn upgrading(&self) -> bool {
        matches!(self.state, State::Upgrading(_))
    }

    /// Bytes from the stream.
    pub(crate) fn receive(&mut self, data: &[u8]) {
        if let Some(wire) = self.wire() {
            wire.input.extend(data);
        }
    }

    /// The peer closed the stream: what is left to read ends there.
    pub(crate) fn end(&mut self) {
        if let Some(wire) = self.wire() {
            wire.ended = true;
        }
    }

    /// The next thing read, if a whole one arrived. Pings are answered (the pong waits in
    /// [`WsCodec::take`]).
    pub(crate) fn next(&mut self) -> Option<WsEvent> {
        if let Some(early) = self.early.take() {
            return Some(early);
        }
        if self.upgrading() {
            let State::Upgrading(mid) = std::mem::replace(&mut self.state, State::Over) else {
                return None;
            };
            return self.step(mid.handshake());
        }
        let State::Open(ws) = &mut self.state else {
            return None;
        };
        loop {
            match ws.read() {
                Ok(Message::Text(t)) => return Some(WsEvent::Text(t.as_str().to_string())),
                Ok(Message::Binary(b)) => return Some(WsEvent::Binary(b.to_vec())),
                Ok(Message::Close(_)) => return Some(WsEvent::Closed),
                Ok(_) => {}
                Err(tungstenite::Error::Io(e)) if e.kind() == io::ErrorKind::WouldBlock => {
                    let _ = ws.flush();
                    return None;
                }
                Err(e) => return Some(WsEvent::Failed(e)),
            }
        }
    }

    /// Sends `text` as one text frame.
    pub(crate) fn send(&mut self, text: &str) -> Result<(), tungstenite::Error> {
        match &mut self.state {
            State::Open(ws) => ws.send(Message::text(text)),
            _ => Err(tungstenite::Error::AlreadyClosed),
        }
    }

    /// Sends the close frame (or the answer to the server's), once the upgrade is done.
    pub(crate) fn close(&mut self) {
        if let State::Open(ws) = &mut self.state {
            let _ = ws.close(None);
            let _ = ws.flush();
        }
    }

    /// The bytes for the stream, taken out.
    pub(crate) fn take(&mut self) -> Vec<u8> {
        self.wire()
            .map(|w| std::mem::take(&mut w.output))
            .unwrap_or_default()
    }
}

/// The server's side of the codec's exchanges, for the machines' tests.
#[cfg(test)]
pub(crate) mod testing {
    /// The server's answer accepting the upgrade request `sent` (its `Sec-WebSocket-Key`).
    pub fn accept(sent: &str) -> Vec<u8> {
        let key = sent
            .lines()
            .find_map(|l| l.strip_prefix("Sec-WebSocket-Key: "))
            .expect("a key");
        let accept = tungstenite::handshake::derive_accept_key(key.trim().as_bytes());
        format!(
            "HTTP/1.1 101 Switching Protocols\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n\
             Sec-WebSocket-Accept: {accept}\r\n\r\n"
        )
        .into_bytes()
    }

    /// A text frame as a server sends it (unmasked, under 126 bytes).
    pub fn frame(text: &str) -> Vec<u8> {
        let mut f = vec![0x81, u8::try_from(text.len()).unwrap()];
        f.extend_from_slice(text.as_bytes());
        f
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use tungstenite::client::IntoClientRequest;

    /// A codec whose upgrade to `ws://h:1/` the server accepted.
    fn open() -> WsCodec {
        let mut ws = WsCodec::connect("ws://h:1/".into_client_request().unwrap());
        let sent = String::from_utf8(ws.take()).unwrap();
        assert!(sent.starts_with("GET / HTTP/1.1\r\n"), "{sent}");
        ws.receive(&testing::accept(&sent));
        assert!(matches!(ws.next(), Some(WsEvent::Upgraded(r)) if r.status() == 101));
        ws
    }

    /// A ping is answered with a pong (masked, as a client's frames are) and is not an
    /// event; a stream that ends without a close frame is tungstenite's reset, and one that
    /// ends during the upgrade its unfinished handshake.
    #[test]
    fn pings_are_answered_and_an_end_reads_as_tungstenite_reads_it() {
        let mut ws = open();
        ws.receive(&[0x89, 0x01, b'p', 0x81, 0x01, b'x']);
        assert!(matches!(ws.next(), Some(WsEvent::Text(t)) if t == "x"));
        assert!(ws.next().is_none());
        let pong = ws.take();
        assert_eq!(&pong[..2], &[0x8a, 0x81], "{pong:?}");
        ws.end();
        assert!(matches!(
            ws.next(),
            Some(WsEvent::Failed(tungstenite::Error::Protocol(
                tungstenite::error::ProtocolError::ResetWithoutClosingHandshake
            )))
        ));
        let mut ws = WsCodec::connect("ws://h:1/".into_client_request().unwrap());
        assert!(ws.upgrading());
        ws.end();
        assert!(matches!(
            ws.next(),
            Some(WsEvent::Failed(tungstenite::Error::Protocol(
                tungstenite::error::ProtocolError::HandshakeIncomplete
            )))
        ));
        assert!(!ws.upgrading() && ws.take().is_empty());
    }
}
