//! The blocking management-protocol client: a WebSocket (RFC 6455, tungstenite) over TLS
//! (rustls) or plain, over any [`Transport`], so SSH tunnels and proxy commands carry it as
//! they carry RCON. It sends the secret as `Authorization: Bearer` and, when asked, an `Origin`
//! header, which vanilla does not check for a Bearer client (docs/protocol.md section 9): it is
//! there for a proxy in front of the server that does.

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use tungstenite::{HandshakeError, Message, WebSocket};

use super::jsonrpc::{self, Incoming, Notification};
use super::machine::{is_wait, rpc_error, tls_closed, upgrade_failure, upgrade_request, ws_error};
use super::{MgmtError, MgmtResult, Trust};
use crate::Password;
use crate::engine::CANCEL_POLL;
use crate::transport::Transport;

/// Where a management server listens, from a `ws://` or `wss://` URL.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Endpoint {
    /// `wss://` (TLS) rather than `ws://`.
    pub tls: bool,
    /// Host name or address (IPv6 without brackets).
    pub host: String,
    /// Port.
    pub port: u16,
    /// Path, `/` by default.
    pub path: String,
    /// `unix:PATH`: the Unix domain socket the server listens on instead of a TCP port (MSMP
    /// Enhanced's option; Unix only), with `ws://localhost/` over it. `host` is then
    /// `localhost` and `port` 0.
    pub unix: Option<std::path::PathBuf>,
}

impl Endpoint {
    /// Parses `wss://HOST:PORT[/PATH]` or `ws://...`; `[::1]` for IPv6. The port is required
    /// (the server's `management-server-port` has no fixed default worth guessing). On Unix,
    /// `unix:PATH` is a server's Unix domain socket.
    pub fn parse(url: &str) -> MgmtResult<Endpoint> {
        let bad = |why| MgmtError::Url {
            url: url.to_string(),
            why,
        };
        if let Some(path) = url.strip_prefix("unix:") {
            if !cfg!(unix) {
                return Err(bad("unix: URLs name a Unix domain socket, a Unix feature"));
            }
            if path.is_empty() {
                return Err(bad("it has no socket path (unix:/path/to/msmp.sock)"));
            }
            return Ok(Endpoint {
                tls: false,
                host: "localhost".into(),
                port: 0,
                path: "/".into(),
                unix: Some(path.into()),
            });
        }
        let (tls, rest) = if let Some(r) = url.strip_prefix("wss://") {
            (true, r)
        } else if let Some(r) = url.strip_prefix("ws://") {
            (false, r)
        } else {
            return Err(bad("it must start with wss:// or ws://"));
        };
        let (authority, path) = match rest.find('/') {
            Some(i) => (&rest[..i], &rest[i..]),
            None => (rest, "/"),
        };
        if authority.contains('@') {
            return Err(bad("put the secret in a secret source, not in the URL"));
        }
        let (host, port) = if let Some(v6) = authority.strip_prefix('[') {
            let (h, p) = v6.split_once(']').ok_or_else(|| bad("unclosed ["))?;
            (h, p.strip_prefix(':'))
        } else {
            match authority.rsplit_once(':') {
                Some((h, p)) => (h, Some(p)),
                None => (authority, None),
            }
        };
        let port = port
            .ok_or_else(|| bad("it needs a port (wss://HOST:PORT)"))?
            .parse::<u16>()
            .ok()
            .filter(|p| *p != 0)
            .ok_or_else(|| bad("the port is not a number from 1 to 65535"))?;
        if host.is_empty() {
            return Err(bad("it has no host"));
        }
        Ok(Endpoint {
            tls,
            host: host.to_string(),
            port,
            path: path.to_string(),
            unix: None,
        })
    }

    /// The URL again, e.g. `wss://127.0.0.1:25585/`, or `unix:PATH`.
    pub fn url(&self) -> String {
        match &self.unix {
            Some(path) => format!("unix:{}", path.display()),
            None => self.ws_url(),
        }
    }

    /// The URL the WebSocket upgrade asks for (`ws://localhost/` over a Unix socket).
    pub(super) fn ws_url(&self) -> String {
        if self.unix.is_some() {
            return format!("ws://localhost{}", self.path);
        }
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        let scheme = if self.tls { "wss" } else { "ws" };
        format!("{scheme}://{host}:{}{}", self.port, self.path)
    }
}

/// How to connect.
#[derive(Debug, Clone)]
pub struct ConnectOptions {
    /// The bearer secret.
    pub secret: Password,
    /// An `Origin` header to send, if any.
    pub origin: Option<String>,
    /// How the certificate is checked (`wss://` only).
    pub trust: Trust,
    /// Limit for connecting and for each call.
    pub timeout: Duration,
    /// Called with `>` and each message sent, `<` and each one received, `=` and a note on the
    /// upgrade (whose secret is shown as `****`): for `--trace`.
    pub trace: Option<fn(&str, &str)>,
    /// Looked at at least every [`CANCEL_POLL`] during the TLS and WebSocket handshakes, and
    /// given to the connected client ([`MgmtClient::set_cancel`]): `true` abandons the wait with
    /// [`MgmtError::Cancelled`]. (Opening the transport itself, a TCP connect or a tunnel's
    /// start, is bounded by the timeout alone.)
    pub cancel: Option<Arc<AtomicBool>>,
}

/// `left` of a wait, cut to the cancel poll when there is a cancel flag; `Err` when it is set.
fn next_wait(cancel: Option<&AtomicBool>, left: Duration) -> MgmtResult<Duration> {
    match cancel {
        Some(flag) if flag.load(Ordering::SeqCst) => Err(MgmtError::Cancelled),
        Some(_) => Ok(left.min(CANCEL_POLL)),
        None => Ok(left),
    }
}

/// A [`Transport`] as a `Read + Write` stream with a wait limit per read.
struct Pipe {
    inner: Box<dyn Transport>,
    wait: Duration,
}

impl Read for Pipe {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.inner.read_before(buf, Instant::now() + self.wait) {
            // tungstenite and rustls resume after WouldBlock, which is what a passed wait is.
            Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                Err(io::Error::new(io::ErrorKind::WouldBlock, e))
            }
            other => other,
        }
    }
}

impl Write for Pipe {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.inner
            .write_packet(buf, Instant::now() + self.wait.max(Duration::from_secs(1)))?;
        Ok(buf.len())
    }
    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// Plain or TLS.
enum Stream {
    Plain(Pipe),
    Tls(Box<rustls::StreamOwned<rustls::ClientConnection, Pipe>>),
}

impl Stream {
    fn pipe(&mut self) -> &mut Pipe {
        match self {
            Stream::Plain(p) => p,
            Stream::Tls(s) => &mut s.sock,
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(p) => p.read(buf),
            Stream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Plain(p) => p.write(buf),
            Stream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            Stream::Plain(p) => p.flush(),
            Stream::Tls(s) => s.flush(),
        }
    }
}

/// A connected management client.
pub struct MgmtClient {
    trace: Option<fn(&str, &str)>,
    ws: WebSocket<Stream>,
    next_id: u64,
    queued: VecDeque<Notification>,
    timeout: Duration,
    peer: String,
    /// Looked at at least every [`CANCEL_POLL`] while waiting: `true` abandons the wait.
    cancel: Option<Arc<AtomicBool>>,
}

impl MgmtClient {
    /// Runs the TLS and WebSocket handshakes over `transport`.
    pub fn connect(
        transport: Box<dyn Transport>,
        endpoint: &Endpoint,
        opts: &ConnectOptions,
    ) -> MgmtResult<MgmtClient> {
        let peer = endpoint.url();
        let deadline = Instant::now() + opts.timeout;
        let cancel = opts.cancel.as_deref();
        // The wait for the next read of a handshake: what is left of the time limit, in steps of
        // the cancel poll; `Err` when the time is up or the cancel flag is set.
        let wait = || {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(MgmtError::Timeout {
                    what: "connecting to the management server",
                    after: opts.timeout,
                });
            }
            next_wait(cancel, left)
        };
        let pipe = Pipe {
            inner: transport,
            wait: wait()?,
        };
        let stream = if endpoint.tls {
            let config = Arc::new(opts.trust.client_config()?);
            let name = rustls::pki_types::ServerName::try_from(endpoint.host.clone())
                .map_err(|_| MgmtError::Trust(format!("'{}' is not a host name", endpoint.host)))?;
            let conn = rustls::ClientConnection::new(config, name).map_err(|e| MgmtError::Tls {
                peer: peer.clone(),
                source: io::Error::other(e),
            })?;
            let mut tls = rustls::StreamOwned::new(conn, pipe);
            while tls.conn.is_handshaking() {
                if let Err(e) = tls.conn.complete_io(&mut tls.sock) {
                    return Err(match e.kind() {
                        // A read that waited its step: rustls resumes where it was.
                        io::ErrorKind::WouldBlock => {
                            tls.sock.wait = wait()?;
                            continue;
                        }
                        io::ErrorKind::InvalidData => MgmtError::Tls {
                            peer: peer.clone(),
                            source: e,
                        },
                        io::ErrorKind::UnexpectedEof | io::ErrorKind::ConnectionReset => {
                            tls_closed(endpoint)
                        }
                        _ => MgmtError::Io(e),
                    });
                }
            }
            Stream::Tls(Box::new(tls))
        } else {
            Stream::Plain(pipe)
        };
        let request = upgrade_request(endpoint, opts)?;
        let mut upgrade = tungstenite::client::client(request, stream);
        let ws = loop {
            match upgrade {
                Ok((ws, _response)) => break ws,
                // A read that waited its step: the upgrade resumes where it was.
                Err(HandshakeError::Interrupted(mut mid)) => {
                    mid.get_mut().get_mut().pipe().wait = wait()?;
                    upgrade = mid.handshake();
                }
                Err(HandshakeError::Failure(e)) => return Err(upgrade_failure(e, endpoint)),
            }
        };
        if let Some(t) = opts.trace {
            let origin = opts
                .origin
                .as_deref()
                .map(|o| format!(", Origin: {o}"))
                .unwrap_or_default();
            t(
                "=",
                &format!("WebSocket open to {peer} (Authorization: Bearer ****{origin})"),
            );
        }
        Ok(MgmtClient {
            trace: opts.trace,
            ws,
            next_id: 1,
            queued: VecDeque::new(),
            timeout: opts.timeout,
            peer,
            cancel: opts.cancel.clone(),
        })
    }

    /// Makes every wait for the server ([`MgmtClient::call`],
    /// [`MgmtClient::next_notification`]) look at `flag` at least every [`CANCEL_POLL`] and,
    /// when it is `true`, end with [`MgmtError::Cancelled`]. The flag is left as it is (every
    /// client sharing it stops: a fan-out); after a cancelled call the connection is done with
    /// (a late answer would be taken for the next call's), so close it. `None` waits to the
    /// time limit.
    pub fn set_cancel(&mut self, flag: Option<Arc<AtomicBool>>) {
        self.cancel = flag;
    }

    /// The server's URL, for messages.
    pub fn peer(&self) -> &str {
        &self.peer
    }

    /// Calls `method` with positional `params` and waits for its result. Notifications that
    /// arrive meanwhile are kept for [`MgmtClient::next_notification`].
    pub fn call(&mut self, method: &str, params: &[Value]) -> MgmtResult<Value> {
        let id = self.next_id;
        self.next_id += 1;
        let deadline = Instant::now() + self.timeout;
        self.ws.get_mut().pipe().wait = self.timeout;
        let text = jsonrpc::request(id, method, params);
        if let Some(t) = self.trace {
            t(">", &text);
        }
        self.ws.send(Message::text(text)).map_err(ws_error)?;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Err(MgmtError::Timeout {
                    what: "waiting for the answer",
                    after: self.timeout,
                });
            }
            self.ws.get_mut().pipe().wait = next_wait(self.cancel.as_deref(), left)?;
            match self.read_one()? {
                Some(Incoming::Response {
                    id: Some(got),
                    outcome,
                }) if got == id => {
                    return outcome.map_err(|e| rpc_error(method, e));
                }
                Some(Incoming::Response {
                    id: None,
                    outcome: Err(e),
                }) => return Err(rpc_error(method, e)),
                Some(Incoming::Notification(n)) => self.queued.push_back(n),
                _ => {}
            }
        }
    }

    /// The next notification, waiting at most `wait`; `None` when none came.
    pub fn next_notification(&mut self, wait: Duration) -> MgmtResult<Option<Notification>> {
        if let Some(n) = self.queued.pop_front() {
            return Ok(Some(n));
        }
        let deadline = Instant::now() + wait;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            self.ws.get_mut().pipe().wait = next_wait(self.cancel.as_deref(), left)?;
            if let Some(Incoming::Notification(n)) = self.read_one()? {
                return Ok(Some(n));
            }
        }
    }

    /// Reads one frame; `None` for a wait that passed or a non-text frame.
    fn read_one(&mut self) -> MgmtResult<Option<Incoming>> {
        match self.ws.read() {
            Ok(Message::Text(t)) => {
                if let Some(trace) = self.trace {
                    trace("<", t.as_str());
                }
                jsonrpc::parse(t.as_str()).map(Some)
            }
            Ok(Message::Close(_)) => Err(MgmtError::Closed),
            Ok(_) => Ok(None),
            Err(e) if is_wait(&e) => Ok(None),
            Err(e) => Err(ws_error(e)),
        }
    }

    /// Closes the connection politely.
    pub fn close(mut self) {
        self.ws.get_mut().pipe().wait = Duration::from_millis(200);
        let _ = self.ws.close(None);
        let _ = self.ws.flush();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn urls() {
        let e = Endpoint::parse("wss://mc.example:25585").unwrap();
        assert_eq!(
            e,
            Endpoint {
                tls: true,
                host: "mc.example".into(),
                port: 25585,
                path: "/".into(),
                unix: None,
            }
        );
        let e = Endpoint::parse("ws://[::1]:8080/rpc").unwrap();
        assert_eq!(
            (e.tls, e.host.as_str(), e.port, e.path.as_str()),
            (false, "::1", 8080, "/rpc")
        );
        assert_eq!(e.url(), "ws://[::1]:8080/rpc");
        #[cfg(unix)]
        {
            let e = Endpoint::parse("unix:/run/mc/msmp.sock").unwrap();
            assert_eq!(
                e.unix.as_deref(),
                Some(std::path::Path::new("/run/mc/msmp.sock"))
            );
            assert_eq!((e.tls, e.url().as_str()), (false, "unix:/run/mc/msmp.sock"));
            assert_eq!(e.ws_url(), "ws://localhost/");
        }
        for bad in [
            "unix:",
            "http://x:1",
            "wss://x",
            "wss://:1",
            "wss://x:0",
            "wss://x:99999",
            "wss://u:secret@x:1",
            "wss://[::1:1",
        ] {
            assert!(Endpoint::parse(bad).is_err(), "{bad}");
        }
    }
}
