//! The blocking management-protocol client: the protocol's one machine
//! ([`MgmtMachine`]: TLS, the WebSocket and JSON-RPC, sans-I/O) run by the one blocking driver
//! ([`Driver`]) over any [`Transport`], so SSH tunnels and proxy commands carry it as they
//! carry RCON. The console and the console-command session ([`super::command`]) use it; the
//! event loop runs the same machine for every other mode.

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::Duration;

use serde_json::Value;

use super::machine::{MgmtMachine, answer, call_line};
use super::{MgmtError, MgmtResult, Trust};
use crate::Password;
use crate::engine::Machine;
use crate::engine::driver::{Driver, Goal};
use crate::transport::Transport;
use crate::transport::link::StreamLink;

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
    /// Looked at at least every [`crate::engine::CANCEL_POLL`] during the TLS and WebSocket
    /// handshakes, and
    /// given to the connected client ([`MgmtClient::set_cancel`]): `true` abandons the wait with
    /// [`MgmtError::Cancelled`]. (Opening the transport itself, a TCP connect or a tunnel's
    /// start, is bounded by the timeout alone.)
    pub cancel: Option<Arc<AtomicBool>>,
}

/// A connected management client.
pub struct MgmtClient {
    driver: Driver<MgmtMachine>,
    peer: String,
    /// Notifications received (they are not this client's to show).
    heard: Arc<AtomicUsize>,
}

impl MgmtClient {
    /// Runs the TLS and WebSocket handshakes over `transport`.
    pub fn connect(
        transport: Box<dyn Transport>,
        endpoint: &Endpoint,
        opts: &ConnectOptions,
    ) -> MgmtResult<MgmtClient> {
        let machine = MgmtMachine::new(endpoint.clone(), opts.clone())?;
        let engine = crate::engine::Options {
            timeout: opts.timeout,
            cancel: opts.cancel.clone(),
            ..crate::engine::Options::default()
        };
        let heard = Arc::new(AtomicUsize::new(0));
        let mut driver = Driver::new(machine, &engine);
        let count = Arc::clone(&heard);
        driver.sink = Some(Arc::new(move |_: &str| {
            count.fetch_add(1, Ordering::Relaxed);
        }));
        driver.attach(Box::new(StreamLink::new(transport)));
        let mut client = MgmtClient {
            driver,
            peer: endpoint.url(),
            heard,
        };
        client.drive(Goal::Ready, None)?;
        Ok(client)
    }

    /// Runs the machine to `goal`; a failure is the machine's own [`MgmtError`] when it has
    /// one, else the driver's ([`MgmtError::Cancelled`], or the link's as
    /// [`MgmtError::Connect`]).
    fn drive(&mut self, goal: Goal, out: Option<&mut Vec<u8>>) -> MgmtResult<()> {
        self.driver
            .drive(goal, out)
            .map_err(|e| match (self.driver.machine.take_failure(), e) {
                (Some(own), _) => own,
                (None, crate::Error::Cancelled) => MgmtError::Cancelled,
                (None, e) => MgmtError::Connect(e),
            })
    }

    /// Makes every wait for the server look at `flag` at least every
    /// [`crate::engine::CANCEL_POLL`] and, when it is `true`, end with
    /// [`MgmtError::Cancelled`] (the flag taken, the connection closed). `None` waits to the
    /// time limit.
    pub fn set_cancel(&mut self, flag: Option<Arc<AtomicBool>>) {
        self.driver.cancel = flag;
    }

    /// The server's URL, for messages.
    pub fn peer(&self) -> &str {
        &self.peer
    }

    /// Calls `method` with positional `params` and waits for its result.
    pub fn call(&mut self, method: &str, params: &[Value]) -> MgmtResult<Value> {
        let now = self.driver.now();
        self.driver.machine.command(&call_line(method, params), now);
        let mut out = Vec::new();
        let goal = Goal::Answer {
            stops_server: false,
        };
        self.drive(goal, Some(&mut out))?;
        answer(method, &String::from_utf8_lossy(&out))
    }

    /// Reads what the server sent meanwhile, waiting a millisecond after the last of it (a
    /// close that follows a notification, `server/stopping`, is seen too); `false` when the
    /// connection is gone.
    pub fn alive(&mut self) -> bool {
        // Everything waiting, up to a bound (a busy server's log never pauses).
        for _ in 0..1000 {
            let before = self.heard.load(Ordering::Relaxed);
            let until = self.driver.now() + Duration::from_millis(1);
            if self.drive(Goal::Until(until), None).is_err() || !self.driver.is_connected() {
                return false;
            }
            if self.heard.load(Ordering::Relaxed) == before {
                return true;
            }
        }
        true
    }

    /// Closes the connection.
    pub fn close(mut self) {
        self.driver.close();
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
