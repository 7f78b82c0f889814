//! Byte-stream transports the engine runs over, and the one place that opens TCP sockets.
//!
//! The engine only needs "read some bytes before a deadline" and "write one packet", so TCP, an
//! SSH tunnel's pipes, a Unix domain socket (`unix`, for the management protocol) or
//! anything else can carry RCON.

pub mod link;
pub mod tunnel;
#[cfg(unix)]
pub mod unix;

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpStream, ToSocketAddrs};
use std::time::{Duration, Instant};

use crate::error::{Error, Result};

/// A shared connector is a connector: a session can keep its connector while a client (which
/// owns a boxed one, for reconnects) holds a handle to the same one.
impl<C: Connector + ?Sized> Connector for std::sync::Arc<C> {
    fn connect(&self, timeout: Duration) -> Result<Box<dyn Transport>> {
        (**self).connect(timeout)
    }

    fn describe(&self) -> String {
        (**self).describe()
    }

    fn address(&self) -> String {
        (**self).address()
    }
}

/// A connected byte stream.
pub trait Transport: Send {
    /// Reads at least one byte, waiting no later than `deadline`. `Ok(0)` means the peer closed
    /// the stream; a deadline that passes gives an error of kind [`io::ErrorKind::TimedOut`].
    fn read_before(&mut self, buf: &mut [u8], deadline: Instant) -> io::Result<usize>;
    /// Writes one whole packet, in one `write` call where the stream allows it (docs/protocol.md
    /// section 3: a vanilla server must see each packet in one read).
    fn write_packet(&mut self, bytes: &[u8], deadline: Instant) -> io::Result<()>;
    /// A short description of the peer, for messages.
    fn peer(&self) -> String;
    /// Something another thread calls to end a [`Transport::read_before`] under way (or the
    /// next one) early, with an error of kind [`io::ErrorKind::Interrupted`]; `None` when the
    /// transport cannot be woken.
    fn waker(&mut self) -> Option<Waker> {
        None
    }
    /// Closes the stream; further reads see end of stream.
    fn close(&mut self) {}
}

/// Ends a wait in a link or transport early, from another thread (a command that wants the
/// connection a background reader waits on).
pub type Waker = std::sync::Arc<dyn Fn() + Send + Sync>;

/// A [`Waker`] for a link that waits in `poll`: a `mio::Waker` on `token`, made on the first
/// call and kept in `slot`, so every waker handed out wakes the same poll.
pub(crate) fn poll_waker(
    poll: &mio::Poll,
    slot: &mut Option<std::sync::Arc<mio::Waker>>,
    token: mio::Token,
) -> Option<Waker> {
    if slot.is_none() {
        *slot = Some(std::sync::Arc::new(
            mio::Waker::new(poll.registry(), token).ok()?,
        ));
    }
    let waker = std::sync::Arc::clone(slot.as_ref()?);
    Some(std::sync::Arc::new(move || {
        let _ = waker.wake();
    }))
}

/// Something that can open a fresh [`Transport`] to the same server, for reconnects.
pub trait Connector: Send + Sync {
    /// Opens a new connection, giving up after `timeout`.
    fn connect(&self, timeout: Duration) -> Result<Box<dyn Transport>>;
    /// Where this connector goes, e.g. `localhost:25575`, or `localhost:25575 via ssh host`.
    fn describe(&self) -> String;
    /// The `host:port` the connection reaches in the end, through any tunnel: what a protocol
    /// that names its server (a WebSocket's URL and `Host` header) names.
    fn address(&self) -> String {
        self.describe()
    }
}

fn remaining(deadline: Instant) -> io::Result<Duration> {
    let left = deadline.saturating_duration_since(Instant::now());
    if left.is_zero() {
        Err(io::Error::new(io::ErrorKind::TimedOut, "deadline passed"))
    } else {
        Ok(left)
    }
}

/// A TCP connection with Nagle's algorithm off, non-blocking, waited on with the system's
/// readiness poll (`mio`: epoll, kqueue, or AFD on Windows).
///
/// Deadlines are kept to the millisecond: a socket receive timeout (`SO_RCVTIMEO`) counts in
/// kernel ticks, so a 10 ms quiet gap (the end of every answer on a server with no end marker)
/// took 15-16 ms on a 250 Hz Linux kernel, a readiness poll 10.3 ms.
#[derive(Debug)]
pub struct TcpTransport {
    stream: mio::net::TcpStream,
    poll: mio::Poll,
    events: mio::Events,
    peer: String,
    /// The last read found nothing to read: the poll will report the next data (its readiness
    /// is edge-triggered), so the next read may wait first.
    drained: bool,
    /// Reads to go before polling is tried again, after a poll that found nothing.
    spin_cooldown: u8,
    /// Made on the first [`Transport::waker`] call (a one-shot never pays for it).
    waker: Option<std::sync::Arc<mio::Waker>>,
    /// A wake-up was seen by a poll and not yet reported by a read.
    woken: bool,
}

const TOKEN: mio::Token = mio::Token(0);
const WAKE: mio::Token = mio::Token(1);

impl TcpTransport {
    /// Wraps a connected stream, turning on `TCP_NODELAY`.
    pub fn new(stream: TcpStream) -> io::Result<Self> {
        stream.set_nodelay(true)?;
        stream.set_nonblocking(true)?;
        let peer = stream
            .peer_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| "server".into());
        let mut stream = mio::net::TcpStream::from_std(stream);
        let poll = mio::Poll::new()?;
        poll.registry()
            .register(&mut stream, TOKEN, mio::Interest::READABLE)?;
        Ok(Self {
            stream,
            poll,
            events: mio::Events::with_capacity(4),
            peer,
            drained: false,
            spin_cooldown: 0,
            waker: None,
            woken: false,
        })
    }
}

/// How long a read polls before it sleeps in the kernel. On a fast link (loopback, a LAN, an
/// SSH tunnel's local end) the answer usually arrives within this, and catching it without a
/// sleep and a wake-up saves a large part of each round trip. Bounded, and it yields the CPU
/// between tries, so a server on the same machine is not starved.
const SPIN: Duration = Duration::from_micros(40);
/// After a poll that found nothing (a slow link, a loaded machine), this many reads sleep in the
/// kernel at once before polling is tried again: polling only where it pays off.
const SPIN_COOLDOWN: u8 = 32;

impl TcpTransport {
    /// One read without waiting: `None` if nothing is there.
    fn try_read(&mut self, buf: &mut [u8]) -> io::Result<Option<usize>> {
        loop {
            match self.stream.read(buf) {
                Ok(n) => {
                    self.drained = false;
                    return Ok(Some(n));
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    self.drained = true;
                    return Ok(None);
                }
                Err(e) => return Err(e),
            }
        }
    }

    /// Tries reads for up to [`SPIN`] (never past `deadline`); `None` if nothing came.
    fn spin_read(&mut self, buf: &mut [u8], deadline: Instant) -> io::Result<Option<usize>> {
        let until = (Instant::now() + SPIN).min(deadline);
        loop {
            if let Some(n) = self.try_read(buf)? {
                return Ok(Some(n));
            }
            if Instant::now() >= until {
                return Ok(None);
            }
            // Let the server (often on this machine: a tunnel, a local server) run.
            std::thread::yield_now();
        }
    }

    /// Sleeps until the socket may be ready or `deadline` passes (then `TimedOut`).
    fn wait(&mut self, deadline: Instant) -> io::Result<()> {
        let left = remaining(deadline)?;
        match self.poll.poll(&mut self.events, Some(left)) {
            Ok(()) => {
                self.woken |= self.events.iter().any(|e| e.token() == WAKE);
                Ok(())
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(()),
            Err(e) => Err(e),
        }
    }

    /// Reports a wake-up seen by a poll, once.
    fn take_wake(&mut self) -> io::Result<()> {
        if std::mem::take(&mut self.woken) {
            return Err(io::Error::new(io::ErrorKind::Interrupted, "woken"));
        }
        Ok(())
    }

    /// Writes what a first `write` left over, waiting for room in the send buffer.
    fn write_rest(&mut self, mut rest: &[u8], deadline: Instant) -> io::Result<()> {
        self.poll.registry().reregister(
            &mut self.stream,
            TOKEN,
            mio::Interest::READABLE | mio::Interest::WRITABLE,
        )?;
        let written = loop {
            if rest.is_empty() {
                break Ok(());
            }
            match self.stream.write(rest) {
                Ok(0) => break Err(io::ErrorKind::WriteZero.into()),
                Ok(n) => rest = &rest[n..],
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    if let Err(e) = self.wait(deadline) {
                        break Err(e);
                    }
                }
                Err(e) => break Err(e),
            }
        };
        // Readiness for reading may have been reported to the write's wait: look again.
        self.drained = false;
        self.poll
            .registry()
            .reregister(&mut self.stream, TOKEN, mio::Interest::READABLE)?;
        written
    }
}

impl Transport for TcpTransport {
    fn read_before(&mut self, buf: &mut [u8], deadline: Instant) -> io::Result<usize> {
        if !self.drained
            && let Some(n) = self.try_read(buf)?
        {
            return Ok(n);
        }
        self.take_wake()?;
        if self.spin_cooldown == 0 {
            if let Some(n) = self.spin_read(buf, deadline)? {
                return Ok(n);
            }
            self.spin_cooldown = SPIN_COOLDOWN;
        } else {
            self.spin_cooldown -= 1;
        }
        // Nothing was there (the reads above found the socket drained): wait for readiness.
        loop {
            match self.wait(deadline) {
                Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "read timed out"));
                }
                other => other?,
            }
            if let Some(n) = self.try_read(buf)? {
                return Ok(n);
            }
            self.take_wake()?;
        }
    }

    fn write_packet(&mut self, bytes: &[u8], deadline: Instant) -> io::Result<()> {
        // One write() call: small packets always go out whole (docs/protocol.md section 3); only
        // a full send buffer leaves part of it, and the rest waits for room.
        let first = loop {
            match self.stream.write(bytes) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                other => break other,
            }
        };
        match first {
            Ok(n) if n == bytes.len() => Ok(()),
            Ok(n) => self.write_rest(&bytes[n..], deadline),
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => self.write_rest(bytes, deadline),
            Err(e) => Err(e),
        }
    }

    fn peer(&self) -> String {
        self.peer.clone()
    }

    fn waker(&mut self) -> Option<Waker> {
        poll_waker(&self.poll, &mut self.waker, WAKE)
    }

    fn close(&mut self) {
        let _ = self.stream.shutdown(Shutdown::Both);
    }
}

/// Splits `HOST:PORT`, `[v6]:PORT`, `[v6]` or a bare host; a bare IPv6 address (two or more
/// colons, no brackets) is a host without a port.
pub fn split_host_port(input: &str) -> (String, Option<u16>) {
    if let Some(rest) = input.strip_prefix('[')
        && let Some((host, after)) = rest.split_once(']')
    {
        let port = after.strip_prefix(':').and_then(|p| p.parse().ok());
        return (host.to_string(), port);
    }
    if input.matches(':').count() == 1 {
        let (host, port) = input.split_once(':').expect("one colon");
        if let Ok(port) = port.parse() {
            return (host.to_string(), Some(port));
        }
    }
    (input.to_string(), None)
}

/// Opens TCP connections to a host name, trying every address it resolves to.
#[derive(Debug, Clone)]
pub struct TcpConnector {
    host: String,
    port: u16,
}

impl TcpConnector {
    /// A connector for `host` (name, IPv4 or IPv6, brackets allowed) and `port`.
    pub fn new(host: &str, port: u16) -> Self {
        let host = host
            .strip_prefix('[')
            .and_then(|h| h.strip_suffix(']'))
            .unwrap_or(host);
        Self {
            host: host.to_string(),
            port,
        }
    }
}

impl Connector for TcpConnector {
    fn connect(&self, timeout: Duration) -> Result<Box<dyn Transport>> {
        let deadline = crate::time::later(Instant::now(), timeout);
        let timed_out = Error::Timeout {
            phase: crate::error::Phase::Connect,
            what: "connecting",
            after: timeout,
        };
        let addrs: Vec<SocketAddr> = (self.host.as_str(), self.port)
            .to_socket_addrs()
            .map_err(|source| Error::Resolve {
                host: self.host.clone(),
                source,
            })?
            .collect();
        if addrs.is_empty() {
            return Err(Error::Resolve {
                host: self.host.clone(),
                source: io::Error::new(io::ErrorKind::NotFound, "no addresses"),
            });
        }
        let mut last = None;
        for addr in &addrs {
            let left = match remaining(deadline) {
                Ok(left) => left,
                Err(_) => break,
            };
            match TcpStream::connect_timeout(addr, left) {
                Ok(stream) => {
                    let transport = TcpTransport::new(stream).map_err(|source| Error::Io {
                        when: "while setting up the socket",
                        source,
                    })?;
                    return Ok(Box::new(transport));
                }
                Err(e) => last = Some((addr, e)),
            }
        }
        match last {
            Some((_, e))
                if matches!(
                    e.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::WouldBlock
                ) =>
            {
                Err(timed_out)
            }
            Some((addr, source)) => Err(Error::Connect {
                addr: addr.to_string(),
                source,
            }),
            None => Err(timed_out),
        }
    }

    fn describe(&self) -> String {
        if self.host.contains(':') {
            format!("[{}]:{}", self.host, self.port)
        } else {
            format!("{}:{}", self.host, self.port)
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn host_port_forms() {
        assert_eq!(
            split_host_port("mc.example:25576"),
            ("mc.example".into(), Some(25576))
        );
        assert_eq!(split_host_port("mc.example"), ("mc.example".into(), None));
        assert_eq!(split_host_port("[::1]:25575"), ("::1".into(), Some(25575)));
        assert_eq!(split_host_port("[::1]"), ("::1".into(), None));
        assert_eq!(split_host_port("::1"), ("::1".into(), None));
        assert_eq!(
            split_host_port("127.0.0.1:1"),
            ("127.0.0.1".into(), Some(1))
        );
    }

    /// A read ends when another thread wakes it, a wake-up given before the read is kept for
    /// it, and data still comes through afterwards.
    #[test]
    fn a_tcp_read_ends_when_woken() {
        let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
        let stream = TcpStream::connect(listener.local_addr().unwrap()).unwrap();
        let (mut server, _) = listener.accept().unwrap();
        let mut t = TcpTransport::new(stream).unwrap();
        let wake = t.waker().unwrap();
        let far = Instant::now() + Duration::from_secs(60);
        let mut buf = [0u8; 16];
        wake();
        let e = t.read_before(&mut buf, far).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::Interrupted);
        let waker = std::thread::spawn(move || wake());
        let e = t.read_before(&mut buf, far).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::Interrupted);
        waker.join().unwrap();
        server.write_all(b"hi").unwrap();
        let n = t.read_before(&mut buf, far).unwrap();
        assert_eq!(&buf[..n], b"hi");
    }

    #[test]
    fn describe_brackets_v6() {
        assert_eq!(TcpConnector::new("[::1]", 5).describe(), "[::1]:5");
        assert_eq!(TcpConnector::new("::1", 5).describe(), "[::1]:5");
        assert_eq!(TcpConnector::new("localhost", 5).describe(), "localhost:5");
    }
}
