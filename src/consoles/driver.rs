//! The thin blocking driver under every [`ConsoleExchange`]: moves its bytes over a UDP socket, a
//! WebSocket (tungstenite) or a [`Transport`], sleeps only in socket reads until the exchange's
//! wake time, and offers the result as a [`Remote`]. With live messages on (the console), a
//! background thread keeps reading while no command runs, so server messages show as they
//! arrive and BattlEye's acks and keep-alives go out on time.

use std::io::{self, Read, Write};
use std::net::{ToSocketAddrs, UdpSocket};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::battleye::{self, BattlEye};
use super::telnet::Telnet;
use super::webrcon::WebRcon;
use super::{Action, ConsoleExchange, MessageSink, Protocol, Remote};
use crate::engine::{CANCEL_POLL, Direction, Observer, Options as ClientOptions, Password};
use crate::error::{Error, Result};
use crate::transport::{Connector, Transport};

/// How the driver reaches the server.
trait Link: Send {
    /// Sends one datagram, frame or chunk.
    fn send(&mut self, bytes: &[u8]) -> io::Result<()>;
    /// Waits until `deadline` for the next datagram, frame or chunk; `None` when the deadline
    /// passed; an error of kind `UnexpectedEof` when the server closed the connection.
    fn recv(&mut self, deadline: Instant) -> io::Result<Option<Vec<u8>>>;
    /// Closes the link.
    fn close(&mut self) {}
}

fn closed() -> io::Error {
    io::Error::new(io::ErrorKind::UnexpectedEof, "closed by the server")
}

/// BattlEye: one connected UDP socket.
struct UdpLink {
    socket: UdpSocket,
    buf: Vec<u8>,
}

impl Link for UdpLink {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        match self.socket.send(bytes) {
            // An ICMP "port unreachable" from an earlier datagram: the server may come back;
            // the exchange's timeout decides.
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset
                ) =>
            {
                Ok(())
            }
            other => other.map(|_| ()),
        }
    }

    fn recv(&mut self, deadline: Instant) -> io::Result<Option<Vec<u8>>> {
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(None);
            }
            self.socket.set_read_timeout(Some(left))?;
            match self.socket.recv(&mut self.buf) {
                Ok(n) => return Ok(Some(self.buf[..n].to_vec())),
                // A signal (Ctrl-C) interrupts the wait: the driver looks at its cancel flag.
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock
                            | io::ErrorKind::TimedOut
                            | io::ErrorKind::Interrupted
                    ) =>
                {
                    return Ok(None);
                }
                // Nobody listens (yet): keep waiting until the deadline. (Linux reports the
                // ICMP "port unreachable" as refused, Windows as reset.)
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset
                    ) =>
                {
                    std::thread::sleep(left.min(Duration::from_millis(20)));
                }
                Err(e) => return Err(e),
            }
        }
    }
}

/// Telnet: the byte stream itself.
struct StreamLink {
    transport: Box<dyn Transport>,
    buf: Vec<u8>,
    timeout: Duration,
}

impl Link for StreamLink {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.transport
            .write_packet(bytes, Instant::now() + self.timeout)
    }

    fn recv(&mut self, deadline: Instant) -> io::Result<Option<Vec<u8>>> {
        match self.transport.read_before(&mut self.buf, deadline) {
            Ok(0) => Err(closed()),
            Ok(n) => Ok(Some(self.buf[..n].to_vec())),
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::TimedOut | io::ErrorKind::Interrupted
                ) =>
            {
                Ok(None)
            }
            Err(e) => Err(e),
        }
    }

    fn close(&mut self) {
        self.transport.close();
    }
}

/// A [`Transport`] as the `Read + Write` tungstenite wants: a read past the deadline is
/// `WouldBlock`, which tungstenite treats as "try again later".
struct Blocking {
    transport: Box<dyn Transport>,
    deadline: Instant,
    timeout: Duration,
}

impl Read for Blocking {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self.transport.read_before(buf, self.deadline) {
            Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                Err(io::Error::new(io::ErrorKind::WouldBlock, "deadline passed"))
            }
            other => other,
        }
    }
}

impl Write for Blocking {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        self.transport
            .write_packet(buf, Instant::now() + self.timeout)?;
        Ok(buf.len())
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// WebRCON: a WebSocket; each text frame is one message of the exchange.
struct WsLink {
    ws: tungstenite::WebSocket<Blocking>,
}

impl Link for WsLink {
    fn send(&mut self, bytes: &[u8]) -> io::Result<()> {
        let text = String::from_utf8_lossy(bytes).into_owned();
        self.ws
            .send(tungstenite::Message::text(text))
            .map_err(ws_io)
    }

    fn recv(&mut self, deadline: Instant) -> io::Result<Option<Vec<u8>>> {
        self.ws.get_mut().deadline = deadline;
        loop {
            match self.ws.read() {
                Ok(tungstenite::Message::Text(t)) => return Ok(Some(t.as_bytes().to_vec())),
                Ok(tungstenite::Message::Binary(b)) => return Ok(Some(b.to_vec())),
                Ok(tungstenite::Message::Close(_)) => return Err(closed()),
                Ok(_) => continue, // ping, pong: tungstenite answers pings itself
                Err(tungstenite::Error::Io(e))
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::Interrupted
                    ) =>
                {
                    return Ok(None);
                }
                Err(e) => return Err(ws_io(e)),
            }
        }
    }

    fn close(&mut self) {
        let _ = self.ws.close(None);
        let _ = self.ws.flush();
        self.ws.get_mut().transport.close();
    }
}

fn ws_io(e: tungstenite::Error) -> io::Error {
    match e {
        tungstenite::Error::Io(e) => e,
        tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => closed(),
        // The typed error rides along as the io::Error's source, not as its text.
        other => io::Error::other(other),
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

/// BattlEye's retransmit and keep-alive intervals, for every session of the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// A command whose answer has not come for this long is sent again (default 1 s).
    pub retransmit: Duration,
    /// An empty command goes out when nothing was sent for this long (default 30 s).
    pub keepalive: Duration,
}

impl Default for Tuning {
    fn default() -> Self {
        let d = battleye::Timings::default();
        Tuning {
            retransmit: d.retransmit,
            keepalive: d.keepalive,
        }
    }
}

static TUNING: std::sync::OnceLock<Tuning> = std::sync::OnceLock::new();

/// Sets the BattlEye intervals for every later session (the `rcon` binary takes them from
/// `RCON_BATTLEYE_RETRANSMIT` / `RCON_BATTLEYE_KEEPALIVE`). Only the first call counts.
pub fn set_tuning(tuning: Tuning) {
    let _ = TUNING.set(tuning);
}

/// The BattlEye clocks: the timeout and idle gap of `opts`, the intervals of [`set_tuning`].
fn battleye_timings(opts: &ClientOptions) -> battleye::Timings {
    let t = TUNING.get().copied().unwrap_or_default();
    battleye::Timings {
        timeout: opts.timeout,
        idle_gap: idle_gap(opts),
        retransmit: t.retransmit,
        keepalive: t.keepalive,
    }
}

/// The silence that ends an answer where the protocol marks no end: `--idle-gap`, else 250 ms.
fn idle_gap(opts: &ClientOptions) -> Duration {
    opts.idle_gap
        .unwrap_or(battleye::Timings::default().idle_gap)
}

/// What a drive waits for.
#[derive(Clone, Copy)]
enum DriveGoal {
    Login,
    Answer,
    Until(Instant),
}

/// One connection: the exchange and its link.
struct Engine {
    ex: Box<dyn ConsoleExchange>,
    link: Box<dyn Link>,
    observer: Arc<dyn Observer>,
    sink: Option<MessageSink>,
    timeout: Duration,
    /// Abandons a command when it turns true (Ctrl-C).
    cancel: Option<Arc<AtomicBool>>,
    dead: bool,
    /// The command under way stops the server: a close ends its answer.
    stopping: bool,
}

impl Engine {
    /// Runs the exchange until `goal`; returns the answer for [`DriveGoal::Answer`].
    fn drive(&mut self, goal: DriveGoal) -> Result<Option<String>> {
        loop {
            // Actions queued after the answer (held server messages, traces) still go out.
            let mut answer = None;
            let mut logged_in = false;
            while let Some(action) = self.ex.poll() {
                match action {
                    Action::Send(bytes) => {
                        if let Err(e) = self.link.send(&bytes) {
                            self.dead = true;
                            return Err(Error::io("while sending", e));
                        }
                    }
                    Action::LoggedIn => logged_in = true,
                    Action::Answer(text) => answer = Some(text),
                    Action::Message(text) => {
                        if let Some(sink) = &self.sink {
                            sink(&text);
                        }
                    }
                    Action::Trace { sent, bytes, what } => {
                        let d = if sent {
                            Direction::Sent
                        } else {
                            Direction::Received
                        };
                        self.observer.frame(d, &bytes, &what);
                    }
                    Action::Warning(w) => self.observer.warning(&w.to_string()),
                    Action::Fail(e) => {
                        self.dead = true;
                        return Err(e);
                    }
                }
            }
            if answer.is_some() {
                return Ok(answer);
            }
            if logged_in && matches!(goal, DriveGoal::Login) {
                return Ok(None);
            }
            let now = Instant::now();
            let mut wake = self.ex.wake().unwrap_or(now + self.timeout);
            if let DriveGoal::Until(t) = goal {
                if now >= t {
                    return Ok(None);
                }
                wake = wake.min(t);
            } else if let Some(flag) = &self.cancel {
                if flag.swap(false, Ordering::SeqCst) {
                    // The exchange is mid-command: start afresh next time.
                    self.dead = true;
                    return Err(Error::Cancelled);
                }
                wake = wake.min(now + CANCEL_POLL);
            }
            match self.link.recv(wake) {
                Ok(Some(data)) => {
                    let now = Instant::now();
                    self.ex.receive(&data, now);
                    self.ex.tick(now);
                }
                Ok(None) => self.ex.tick(Instant::now()),
                Err(e) => {
                    self.dead = true;
                    if e.kind() == io::ErrorKind::UnexpectedEof
                        && self.stopping
                        && matches!(goal, DriveGoal::Answer)
                        && let Some(answer) = self.ex.closed()
                    {
                        return Ok(Some(answer));
                    }
                    return Err(if e.kind() == io::ErrorKind::UnexpectedEof {
                        Error::Closed {
                            when: match goal {
                                DriveGoal::Login => "during login",
                                DriveGoal::Answer => "mid-response; output is incomplete",
                                DriveGoal::Until(_) => "while idle",
                            },
                        }
                    } else {
                        Error::io("while reading", e)
                    });
                }
            }
        }
    }
}

/// A logged-in session of BattlEye RCon, WebRCON or telnet: the [`Remote`] for those dialects.
pub struct Console {
    protocol: Protocol,
    connector: Arc<dyn Connector>,
    password: Password,
    opts: ClientOptions,
    engine: Arc<Mutex<Option<Engine>>>,
    pump_state: Arc<PumpState>,
    sink: Option<MessageSink>,
    pump: Option<JoinHandle<()>>,
}

/// What the background reader waits on, with no polling: a command holding the engine
/// (`busy`), a change of engine (`generation`, after a command, which may have reconnected),
/// and the end.
#[derive(Default)]
struct PumpState {
    flags: Mutex<PumpFlags>,
    wake: std::sync::Condvar,
}

#[derive(Default)]
struct PumpFlags {
    busy: bool,
    generation: u64,
    stop: bool,
}

impl PumpState {
    fn update(&self, f: impl FnOnce(&mut PumpFlags)) {
        f(&mut self.flags.lock().unwrap_or_else(|p| p.into_inner()));
        self.wake.notify_all();
    }
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Console")
            .field("protocol", &self.protocol)
            .field("server", &self.connector.describe())
            .finish_non_exhaustive()
    }
}

impl Console {
    /// Connects and logs in.
    pub fn connect(
        protocol: Protocol,
        connector: Box<dyn Connector>,
        password: Password,
        opts: ClientOptions,
    ) -> Result<Console> {
        let mut console = Console {
            protocol,
            connector: Arc::from(connector),
            password,
            opts,
            engine: Arc::new(Mutex::new(None)),
            pump_state: Arc::default(),
            sink: None,
            pump: None,
        };
        console.reconnect()?;
        // BattlEye drops a client silent for 45 s: keep it logged in between commands too (a
        // batch --delay, a pause in the console), not only while one runs.
        if protocol == Protocol::BattlEye {
            console.start_pump();
        }
        Ok(console)
    }

    fn open(&self) -> Result<Engine> {
        let tracing = self.opts.observer.wants_packets();
        let timeout = self.opts.timeout;
        let (ex, link): (Box<dyn ConsoleExchange>, Box<dyn Link>) = match self.protocol {
            Protocol::BattlEye => {
                let target = self.connector.describe();
                let addr = target
                    .to_socket_addrs()
                    .map_err(|source| Error::Resolve {
                        host: target.clone(),
                        source,
                    })?
                    .next()
                    .ok_or_else(|| Error::Resolve {
                        host: target.clone(),
                        source: io::Error::new(io::ErrorKind::NotFound, "no address"),
                    })?;
                let local = if addr.is_ipv4() {
                    "0.0.0.0:0"
                } else {
                    "[::]:0"
                };
                let socket = UdpSocket::bind(local)
                    .and_then(|s| s.connect(addr).map(|()| s))
                    .map_err(|source| Error::Connect {
                        addr: addr.to_string(),
                        source,
                    })?;
                (
                    Box::new(BattlEye::new(
                        self.password.expose(),
                        battleye_timings(&self.opts),
                        tracing,
                    )),
                    Box::new(UdpLink {
                        socket,
                        buf: vec![0; battleye::MAX_DATAGRAM],
                    }),
                )
            }
            Protocol::Telnet => {
                let transport = self.connector.connect(timeout)?;
                (
                    Box::new(Telnet::new(
                        self.password.expose(),
                        timeout,
                        idle_gap(&self.opts),
                        tracing,
                    )),
                    Box::new(StreamLink {
                        transport,
                        buf: vec![0; 64 * 1024],
                        timeout,
                    }),
                )
            }
            Protocol::WebRcon => {
                let link = self.websocket(tracing)?;
                (Box::new(WebRcon::new(timeout, tracing)), Box::new(link))
            }
            Protocol::Rcon => {
                return Err(Error::Protocol(
                    "RCON runs on the RCON client, not a console driver".into(),
                ));
            }
        };
        Ok(Engine {
            ex,
            link,
            observer: Arc::clone(&self.opts.observer),
            sink: self.sink.clone(),
            timeout,
            cancel: self.opts.cancel.clone(),
            dead: false,
            stopping: false,
        })
    }

    /// Opens the WebSocket `ws://host:port/PASSWORD`. The password is never traced: the trace
    /// shows the request line with the path masked.
    fn websocket(&self, tracing: bool) -> Result<WsLink> {
        let timeout = self.opts.timeout;
        let target = self.connector.address();
        let transport = self.connector.connect(timeout)?;
        let deadline = Instant::now() + timeout;
        let stream = Blocking {
            transport,
            deadline,
            timeout,
        };
        let url = format!("ws://{target}/{}", encode_path(self.password.expose()));
        if tracing {
            let line = format!("GET /******** HTTP/1.1 (Host: {target})");
            self.opts.observer.frame(
                Direction::Sent,
                line.as_bytes(),
                "WebSocket upgrade (password in the path hidden)",
            );
        }
        let mut attempt = tungstenite::client::client(url.as_str(), stream);
        loop {
            match attempt {
                Ok((ws, response)) => {
                    if tracing {
                        let line = format!("HTTP/1.1 {}", response.status());
                        self.opts.observer.frame(
                            Direction::Received,
                            line.as_bytes(),
                            "WebSocket upgrade accepted",
                        );
                    }
                    return Ok(WsLink { ws });
                }
                Err(tungstenite::HandshakeError::Interrupted(mid)) => {
                    if Instant::now() >= deadline {
                        return Err(Error::Timeout {
                            phase: crate::error::Phase::Login,
                            what: "waiting for the WebSocket upgrade",
                            after: timeout,
                        });
                    }
                    attempt = mid.handshake();
                }
                Err(tungstenite::HandshakeError::Failure(e)) => {
                    return Err(match e {
                        tungstenite::Error::Http(r) if r.status() == 401 || r.status() == 403 => {
                            Error::LoginRefused
                        }
                        tungstenite::Error::Http(r) => Error::Protocol(format!(
                            "the WebSocket upgrade was refused with HTTP {} (is this Rust's WebRCON port, with rcon.web 1?)",
                            r.status()
                        )),
                        // Rust closes the connection on a wrong password.
                        tungstenite::Error::Io(e) if e.kind() == io::ErrorKind::UnexpectedEof => {
                            Error::LoginClosed
                        }
                        tungstenite::Error::ConnectionClosed
                        | tungstenite::Error::AlreadyClosed => Error::LoginClosed,
                        tungstenite::Error::Io(e) => Error::io("during the WebSocket upgrade", e),
                        other => Error::WebSocket {
                            when: "upgrade failed",
                            source: Box::new(other),
                        },
                    });
                }
            }
        }
    }

    /// Runs one command; `stopping`: it stops the server, so a close ends its answer.
    fn run(&mut self, command: &str, out: &mut Vec<u8>, stopping: bool) -> Result<()> {
        crate::engine::check_command(command, self.opts.max_command_bytes)?;
        self.with_engine(|e| {
            e.stopping = stopping;
            e.ex.command(command, Instant::now());
            let answer = e.drive(DriveGoal::Answer)?.unwrap_or_default();
            out.extend_from_slice(answer.as_bytes());
            Ok(())
        })
    }

    /// Runs `f` on the live engine, with the background reader held off.
    fn with_engine<T>(&mut self, f: impl FnOnce(&mut Engine) -> Result<T>) -> Result<T> {
        self.pump_state.update(|f| f.busy = true);
        let result = (|| {
            let mut guard = self.engine.lock().unwrap_or_else(|p| p.into_inner());
            if guard.as_ref().is_none_or(|e| e.dead) {
                drop(guard);
                self.reconnect()?;
                guard = self.engine.lock().unwrap_or_else(|p| p.into_inner());
            }
            let engine = guard.as_mut().expect("connected above");
            f(engine)
        })();
        self.pump_state.update(|f| {
            f.busy = false;
            f.generation += 1;
        });
        result
    }

    fn start_pump(&mut self) {
        if self.pump.is_some() {
            return;
        }
        let (engine, state) = (Arc::clone(&self.engine), Arc::clone(&self.pump_state));
        let handle = std::thread::spawn(move || {
            let mut seen = None;
            loop {
                {
                    // While a command runs, or after the engine died until a command brings a
                    // new one, sleep until told (no polling).
                    let flags = state.flags.lock().unwrap_or_else(|p| p.into_inner());
                    let flags = state
                        .wake
                        .wait_while(flags, |f| !f.stop && (f.busy || seen == Some(f.generation)))
                        .unwrap_or_else(|p| p.into_inner());
                    if flags.stop {
                        return;
                    }
                    seen = None;
                    let generation = flags.generation;
                    drop(flags);
                    let mut guard = engine.lock().unwrap_or_else(|p| p.into_inner());
                    match guard.as_mut() {
                        Some(e) if !e.dead => {
                            // Reads what arrives and sends the keep-alive when it is due; a
                            // command waits at most this long for the engine.
                            let _ = e.drive(DriveGoal::Until(
                                Instant::now() + Duration::from_millis(50),
                            ));
                        }
                        _ => seen = Some(generation),
                    }
                }
            }
        });
        self.pump = Some(handle);
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        if let Some(handle) = self.pump.take() {
            self.pump_state.update(|f| f.stop = true);
            let _ = handle.join();
        }
        self.close();
    }
}

impl Remote for Console {
    fn command_into(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()> {
        self.run(command, out, false)
    }

    fn command_then_close(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()> {
        let result = self.run(command, out, true);
        self.close();
        result
    }

    fn close(&mut self) {
        let mut guard = self.engine.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(mut e) = guard.take() {
            e.link.close();
        }
    }

    fn check_open(&mut self) -> bool {
        let guard = self.engine.lock().unwrap_or_else(|p| p.into_inner());
        match guard.as_ref() {
            Some(e) => !e.dead,
            None => false,
        }
    }

    fn is_connected(&self) -> bool {
        let guard = self.engine.lock().unwrap_or_else(|p| p.into_inner());
        guard.is_some()
    }

    fn reconnect(&mut self) -> Result<()> {
        self.close();
        let mut engine = self.open()?;
        engine.ex.start(Instant::now());
        engine.drive(DriveGoal::Login)?;
        *self.engine.lock().unwrap_or_else(|p| p.into_inner()) = Some(engine);
        Ok(())
    }

    fn server(&self) -> String {
        self.connector.describe()
    }

    fn max_command_bytes(&self) -> usize {
        self.opts.max_command_bytes
    }

    fn set_cancel(&mut self, cancel: Option<Arc<AtomicBool>>) {
        self.opts.cancel = cancel.clone();
        if let Some(e) = self
            .engine
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
        {
            e.cancel = cancel;
        }
    }

    fn set_messages(&mut self, sink: MessageSink, live: bool) {
        self.sink = Some(Arc::clone(&sink));
        if let Some(e) = self
            .engine
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .as_mut()
        {
            e.sink = Some(sink);
        }
        if live {
            self.start_pump();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn passwords_are_percent_encoded_in_the_path() {
        assert_eq!(encode_path("abc-1_2.~"), "abc-1_2.~");
        assert_eq!(encode_path("a b/c?d#é"), "a%20b%2Fc%3Fd%23%C3%A9");
    }
}
