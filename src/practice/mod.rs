//! The practice server: an in-process RCON server that behaves like the real ones, for tests,
//! demos (`rcon --demo`) and benchmarks (`rcon --practice-server`).
//!
//! In [`PracticeMode::Vanilla`] it reads exactly like a vanilla Minecraft server (docs/protocol.md section 2):
//! one `read()` of at most 1460 bytes per packet, closing the connection on any read that is not
//! exactly one packet, output split every 4096 UTF-16 units, `Unknown request <hex>` for other
//! packet types. [`PracticeConfig::read_delay`] sleeps before each read, so a client that sends two
//! packets back to back is caught every time. The other modes reproduce how other servers answer
//! the end-of-output sentinel (docs/protocol.md section 4). Everything received is recorded so tests
//! can assert on it.

use std::io::{self, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::Duration;

mod game;

use crate::rcon::packet::{
    Decoder, TYPE_COMMAND, TYPE_LOGIN, TYPE_LOGIN_REPLY, TYPE_OUTPUT, encode,
};

/// How the practice server behaves.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
#[non_exhaustive]
pub enum PracticeMode {
    /// Strict vanilla Minecraft (and Paper/Spigot): one packet per read, 4096-unit fragments.
    #[default]
    Vanilla,
    /// Source engine: empty type-0 packet before the login reply; an empty type-0 packet is
    /// mirrored and followed by a trailer whose body is `00 01 00 00`; 4096-byte fragments.
    Source,
    /// A reimplementation that mirrors an empty type-0 packet (same id, empty body) and sends
    /// each answer as one packet.
    Mirror,
    /// Like [`PracticeMode::Source`] but the trailer body is 8 bytes, `00 00 00 01 00 00 00 00`.
    MirrorTrailer8,
    /// Answers any non-command packet with a login-failure-shaped packet (id -1, type 2), then
    /// closes the connection.
    RejectSentinel,
    /// Closes the connection on any packet whose id is not positive; mirrors positive ones.
    ClosesOnNonPositiveId,
    /// Factorio: one packet per answer of any size, no reply at all to type-0 packets.
    Factorio,
    /// Palworld (as reported): every reply carries id 0, no reply to type-0 packets, and for
    /// output that is not ASCII or is longer than 4096 bytes the size field claims
    /// [`PALWORLD_OVERCLAIM`] bytes more than are sent (docs/protocol.md section 4).
    Palworld,
    /// A Minecraft reimplementation seen on the wire (docs/protocol.md section 4):
    /// output as type 2 with the request id, one packet of any size, then an empty type-2 packet
    /// with the same id that ends every answer (an empty answer is that packet alone). It closes
    /// the connection on any packet type it does not know (type 0 included), discarding replies
    /// still queued; answers a wrong password with no packet, only a close; handles several
    /// packets in one read; closes on incoming packets over [`END_MARKER_MAX_PACKET`] bytes.
    EndMarker,
    /// Another reimplementation, read the way it reads (docs/protocol.md section 4): each
    /// turn of its loop is one `read()` of at most [`ONE_PER_READ_BUFFER`] bytes appended to a
    /// buffer, then **one** packet taken from that buffer and handled; a second packet that came
    /// in the same read waits there until the next read returns bytes. A packet cut off at the
    /// end of the buffer, a size outside 10..=1456 or a body whose first NUL is not the packet's
    /// second-last byte closes the connection. Every packet that is not a command is taken as a
    /// login attempt: the right password logs in (type-2 reply, the request's id), anything else
    /// (a sentinel, any probe) gets id -1, type 2, and a close. A command before login gets
    /// nothing at all. Output: one type-0 packet per message (a line, or a block such as the help
    /// page), never split; nothing at all for an empty answer. A connection that sends nothing
    /// for [`ONE_PER_READ_IDLE_CLOSE`] is closed.
    SilentEmpty,
}

/// The largest packet, size field included, that [`PracticeMode::EndMarker`] reads.
pub const END_MARKER_MAX_PACKET: usize = 1500;

/// How many bytes one read of [`PracticeMode::SilentEmpty`] takes at most.
pub const ONE_PER_READ_BUFFER: usize = 1460;

/// How long [`PracticeMode::SilentEmpty`] waits in one read before it closes the connection.
pub const ONE_PER_READ_IDLE_CLOSE: Duration = Duration::from_secs(30);

/// How many unhandled bytes [`PracticeMode::SilentEmpty`] keeps before it closes the connection.
const ONE_PER_READ_MAX_BUFFERED: usize = 64 * 1024;

impl PracticeMode {
    /// Every mode, for listings and tests.
    pub const ALL: [PracticeMode; 10] = [
        PracticeMode::Vanilla,
        PracticeMode::Source,
        PracticeMode::Mirror,
        PracticeMode::MirrorTrailer8,
        PracticeMode::RejectSentinel,
        PracticeMode::ClosesOnNonPositiveId,
        PracticeMode::Factorio,
        PracticeMode::Palworld,
        PracticeMode::EndMarker,
        PracticeMode::SilentEmpty,
    ];

    /// The mode's name on the command line.
    pub fn name(self) -> &'static str {
        match self {
            PracticeMode::Vanilla => "vanilla",
            PracticeMode::Source => "source",
            PracticeMode::Mirror => "mirror",
            PracticeMode::MirrorTrailer8 => "mirror-trailer8",
            PracticeMode::RejectSentinel => "reject-sentinel",
            PracticeMode::ClosesOnNonPositiveId => "close-nonpositive",
            PracticeMode::Factorio => "factorio",
            PracticeMode::Palworld => "palworld",
            PracticeMode::EndMarker => "end-marker",
            PracticeMode::SilentEmpty => "silent-empty",
        }
    }

    /// The mode with this name.
    pub fn from_name(name: &str) -> Option<PracticeMode> {
        PracticeMode::ALL.into_iter().find(|m| m.name() == name)
    }
}

/// How many bytes too many the Palworld mode's size field claims for long or non-ASCII output.
pub const PALWORLD_OVERCLAIM: usize = 64;

/// Settings of a practice server.
#[derive(Debug, Clone)]
pub struct PracticeConfig {
    /// Address to listen on; port 0 picks a free port.
    pub bind: SocketAddr,
    /// The RCON password.
    pub password: String,
    /// The dialect to emulate.
    pub mode: PracticeMode,
    /// Sleep this long before each read (vanilla mode), so that two packets sent back to back
    /// arrive in one read and get the connection closed, as on a real server under load.
    pub read_delay: Duration,
}

impl Default for PracticeConfig {
    fn default() -> Self {
        Self {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            password: "practice".into(),
            mode: PracticeMode::Vanilla,
            read_delay: Duration::ZERO,
        }
    }
}

/// Something the server saw, in order.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Observed {
    /// A client connected (connection number).
    Connected(u64),
    /// A packet arrived. The body of a login packet is not recorded.
    Packet {
        /// Connection number.
        conn: u64,
        /// Request id.
        id: i32,
        /// Packet type.
        kind: i32,
        /// Body up to the first NUL, lossily decoded (empty for logins).
        body: String,
    },
    /// The server closed a connection because the client broke the read rules.
    Violation {
        /// Connection number.
        conn: u64,
        /// What was wrong.
        reason: String,
    },
    /// The client closed its connection.
    Disconnected(u64),
    /// A read or a write failed and the server gave up the connection, as on a close (an
    /// interrupted read is tried again).
    IoFailed {
        /// Connection number.
        conn: u64,
        /// `"read"` or `"write"`.
        during: &'static str,
        /// The error, as the system gave it.
        error: String,
    },
}

#[derive(Default)]
struct ServerState {
    events: Mutex<Vec<Observed>>,
    /// A handle on each open connection, so `stop` can close them; removed when it ends.
    streams: Mutex<std::collections::HashMap<u64, TcpStream>>,
    stopping: AtomicBool,
    next_conn: AtomicU64,
    /// Who is online ([`PracticeServer::set_players`]) and what the server commands changed.
    game: Mutex<game::Game>,
}

impl ServerState {
    fn record(&self, e: Observed) {
        self.events.lock().expect("events lock").push(e);
    }
}

/// A running practice server. Dropping it shuts it down.
pub struct PracticeServer {
    addr: SocketAddr,
    shared: Arc<ServerState>,
    /// The accept loop, which gives the listener back when it stops.
    accept: Option<thread::JoinHandle<TcpListener>>,
}

impl std::fmt::Debug for PracticeServer {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PracticeServer")
            .field("addr", &self.addr)
            .finish_non_exhaustive()
    }
}

impl PracticeServer {
    /// Starts listening and serving in background threads.
    pub fn start(config: PracticeConfig) -> io::Result<Self> {
        Self::serve(TcpListener::bind(config.bind)?, config)
    }

    /// Stops this server as [`PracticeServer::shutdown`] does (every connection closed; what
    /// it saw stays readable) and starts another with `config` on the same listening socket
    /// (`config.bind` is not used): a server restarted on the same address, without the port
    /// ever being free for another socket of the machine to take meanwhile. Connections made
    /// in between wait in the listen queue for the new server, as they would for a server
    /// that is slow to come back.
    pub fn restart(&mut self, config: PracticeConfig) -> io::Result<PracticeServer> {
        stop(&self.shared, self.addr);
        let listener = self
            .accept
            .take()
            .ok_or_else(|| io::Error::other("the practice server was already shut down"))?
            .join()
            .map_err(|_| io::Error::other("the practice server's accept loop panicked"))?;
        Self::serve(listener, config)
    }

    /// Serves on a listener the caller already holds (`config.bind` is not used): a server
    /// that comes up on a port reserved beforehand, which no other socket of the machine could
    /// take meanwhile.
    pub fn serve(listener: TcpListener, config: PracticeConfig) -> io::Result<Self> {
        let addr = listener.local_addr()?;
        let shared = Arc::new(ServerState::default());
        let accept_shared = Arc::clone(&shared);
        let accept = thread::Builder::new()
            .name("practice-accept".into())
            .spawn(move || accept_loop(listener, config, accept_shared))?;
        Ok(Self {
            addr,
            shared,
            accept: Some(accept),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// Everything seen so far.
    pub fn events(&self) -> Vec<Observed> {
        self.shared.events.lock().expect("events lock").clone()
    }

    /// Bodies of the command (type 2) packets received from logged-in clients, in order.
    pub fn commands(&self) -> Vec<String> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Observed::Packet {
                    kind: TYPE_COMMAND,
                    body,
                    ..
                } => Some(body),
                _ => None,
            })
            .collect()
    }

    /// Connections the server closed because the client broke the read rules.
    pub fn violations(&self) -> Vec<String> {
        self.events()
            .into_iter()
            .filter_map(|e| match e {
                Observed::Violation { reason, .. } => Some(reason),
                _ => None,
            })
            .collect()
    }

    /// Sets who is online, as `list` reports it (for tests of `--follow` and `--if`).
    pub fn set_players(&self, names: &[&str]) {
        self.shared.game.lock().expect("game lock").online =
            names.iter().map(|n| n.to_string()).collect();
    }

    /// How many connections were accepted.
    pub fn connections(&self) -> usize {
        self.events()
            .iter()
            .filter(|e| matches!(e, Observed::Connected(_)))
            .count()
    }

    /// Blocks until the server is stopped (by [`PracticeServer::shutdown`] from another handle
    /// or by the `stop` command).
    pub fn wait(mut self) {
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }

    /// Stops accepting and closes every connection.
    pub fn shutdown(&mut self) {
        stop(&self.shared, self.addr);
        if let Some(h) = self.accept.take() {
            let _ = h.join();
        }
    }
}

impl Drop for PracticeServer {
    fn drop(&mut self) {
        self.shutdown();
    }
}

fn stop(shared: &ServerState, addr: SocketAddr) {
    if shared.stopping.swap(true, Ordering::SeqCst) {
        return;
    }
    for (_, s) in shared.streams.lock().expect("streams lock").drain() {
        let _ = s.shutdown(Shutdown::Both);
    }
    // Wake the accept loop.
    let _ = TcpStream::connect_timeout(&addr, Duration::from_millis(200));
}

/// Serves until stopped, then gives the listener back ([`PracticeServer::restart`]).
fn accept_loop(
    listener: TcpListener,
    config: PracticeConfig,
    shared: Arc<ServerState>,
) -> TcpListener {
    let addr = listener.local_addr().ok();
    for stream in listener.incoming() {
        if shared.stopping.load(Ordering::SeqCst) {
            break;
        }
        let Ok(stream) = stream else { continue };
        let conn = shared.next_conn.fetch_add(1, Ordering::SeqCst) + 1;
        shared.record(Observed::Connected(conn));
        if let Ok(clone) = stream.try_clone() {
            shared
                .streams
                .lock()
                .expect("streams lock")
                .insert(conn, clone);
        }
        let config = config.clone();
        let shared = Arc::clone(&shared);
        let _ = thread::Builder::new()
            .name(format!("practice-conn-{conn}"))
            .spawn(move || {
                let _ = stream.set_nodelay(true);
                let mut session = Connection {
                    stream,
                    conn,
                    authed: false,
                    config,
                    shared: Arc::clone(&shared),
                    addr,
                };
                let outcome = match session.config.mode {
                    PracticeMode::Vanilla => session.serve_vanilla(),
                    PracticeMode::EndMarker => session.serve_end_marker(),
                    PracticeMode::SilentEmpty => session.serve_one_per_read(),
                    _ => session.serve_stream(),
                };
                // Close the socket as a real server does when a session ends (the handle kept
                // for `stop` would otherwise hold it open: a client that half-closes and waits
                // for the server's FIN, like npm rcon-client, would wait forever, and every
                // finished connection would keep a file descriptor).
                let _ = session.stream.shutdown(Shutdown::Both);
                shared.streams.lock().expect("streams lock").remove(&conn);
                let event = match outcome {
                    ConnectionEnd::Violation(reason) => Observed::Violation { conn, reason },
                    ConnectionEnd::ClientClosed | ConnectionEnd::ServerClosed => {
                        Observed::Disconnected(conn)
                    }
                };
                if !shared.stopping.load(Ordering::SeqCst) {
                    shared.record(event);
                }
            });
    }
    listener
}

enum ConnectionEnd {
    Violation(String),
    ClientClosed,
    ServerClosed,
}

struct Connection {
    stream: TcpStream,
    conn: u64,
    authed: bool,
    config: PracticeConfig,
    shared: Arc<ServerState>,
    addr: Option<SocketAddr>,
}

/// What a command asks the connection to do besides answering.
enum After {
    Nothing,
    /// Send only the first fragment, then close (the `drop` command).
    CloseAfterFirst,
    /// Stop the whole server after answering (the `stop` command).
    StopServer,
}

impl Connection {
    fn send(&mut self, id: i32, kind: i32, body: &[u8]) -> io::Result<()> {
        // One write per packet, as vanilla does.
        self.stream.write_all(&encode(id, kind, body))
    }

    /// One read: `None` once the client closed or a read failed (written down, unless the
    /// server is stopping). An interrupted read is tried again, as a real server's is.
    fn read_some(&mut self, buf: &mut [u8]) -> Option<usize> {
        loop {
            match self.stream.read(buf) {
                Ok(0) => return None,
                Ok(n) => return Some(n),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) => {
                    self.io_failed("read", &e);
                    return None;
                }
            }
        }
    }

    /// Writes down a failed read or write, unless the server is stopping (which closes every
    /// connection under its reads).
    fn io_failed(&self, during: &'static str, e: &io::Error) {
        if !self.shared.stopping.load(Ordering::SeqCst) {
            self.shared.record(Observed::IoFailed {
                conn: self.conn,
                during,
                error: e.to_string(),
            });
        }
    }

    fn record_packet(&self, id: i32, kind: i32, body: &[u8]) {
        let body = if kind == TYPE_LOGIN {
            String::new()
        } else {
            String::from_utf8_lossy(body).into_owned()
        };
        self.shared.record(Observed::Packet {
            conn: self.conn,
            id,
            kind,
            body,
        });
    }

    fn serve_vanilla(&mut self) -> ConnectionEnd {
        let mut buf = [0u8; 1460];
        loop {
            if !self.config.read_delay.is_zero() {
                thread::sleep(self.config.read_delay);
            }
            let Some(n) = self.read_some(&mut buf) else {
                return ConnectionEnd::ClientClosed;
            };
            if n < 10 {
                return ConnectionEnd::Violation(format!("read of {n} bytes, fewer than 10"));
            }
            let size = i32::from_le_bytes(buf[0..4].try_into().expect("4 bytes"));
            if i64::from(size) != n as i64 - 4 {
                return ConnectionEnd::Violation(format!(
                    "size field {size} but one read gave {n} bytes (packets coalesced or split)"
                ));
            }
            let id = i32::from_le_bytes(buf[4..8].try_into().expect("4 bytes"));
            let kind = i32::from_le_bytes(buf[8..12].try_into().expect("4 bytes"));
            let raw = &buf[12..n];
            let body = &raw[..raw.iter().position(|&b| b == 0).unwrap_or(raw.len())];
            self.record_packet(id, kind, body);
            let result = match kind {
                TYPE_COMMAND if self.authed => {
                    let command = String::from_utf8_lossy(body).into_owned();
                    self.run(id, &command)
                }
                TYPE_COMMAND => self.send(-1, TYPE_LOGIN_REPLY, b"").map(|_| After::Nothing),
                TYPE_LOGIN => {
                    let ok = !body.is_empty() && body == self.config.password.as_bytes();
                    self.authed = ok;
                    let reply_id = if ok { id } else { -1 };
                    self.send(reply_id, TYPE_LOGIN_REPLY, b"")
                        .map(|_| After::Nothing)
                }
                other => {
                    let text = format!("Unknown request {:x}", other as u32);
                    self.send(id, TYPE_OUTPUT, text.as_bytes())
                        .map(|_| After::Nothing)
                }
            };
            if let Some(end) = self.after(result) {
                return end;
            }
        }
    }

    /// What an answer means for the connection: `None` to go on serving.
    fn after(&self, result: io::Result<After>) -> Option<ConnectionEnd> {
        match result {
            Ok(After::Nothing) => None,
            Ok(After::CloseAfterFirst) => Some(ConnectionEnd::ServerClosed),
            Ok(After::StopServer) => {
                if let Some(addr) = self.addr {
                    stop(&self.shared, addr);
                }
                Some(ConnectionEnd::ServerClosed)
            }
            Err(e) => {
                self.io_failed("write", &e);
                Some(ConnectionEnd::ClientClosed)
            }
        }
    }

    fn serve_stream(&mut self) -> ConnectionEnd {
        let mut decoder = Decoder::default();
        let mut buf = [0u8; 8192];
        loop {
            let Some(n) = self.read_some(&mut buf) else {
                return ConnectionEnd::ClientClosed;
            };
            decoder.feed(&buf[..n]);
            loop {
                let packet = match decoder.next_packet() {
                    Ok(Some(p)) => p,
                    Ok(None) => break,
                    Err(e) => return ConnectionEnd::Violation(e.to_string()),
                };
                self.record_packet(packet.id, packet.kind, &packet.body);
                let result = self.answer_stream(packet.id, packet.kind, &packet.body);
                if let Some(end) = self.after(result) {
                    return end;
                }
            }
        }
    }

    /// [`PracticeMode::EndMarker`]: every packet of one read is handled and the replies go out together
    /// after it, unless a packet of an unknown type (or too large) closes the connection first,
    /// and then the queued replies are discarded.
    fn serve_end_marker(&mut self) -> ConnectionEnd {
        let mut decoder = Decoder::default();
        let mut buf = [0u8; 8192];
        loop {
            let Some(n) = self.read_some(&mut buf) else {
                return ConnectionEnd::ClientClosed;
            };
            if let Some(size) = buf[..n].get(..4).filter(|_| decoder.buffered() == 0) {
                let size = i32::from_le_bytes(size.try_into().expect("4 bytes"));
                if size < 0 || size as usize + 4 > END_MARKER_MAX_PACKET {
                    return ConnectionEnd::Violation(format!(
                        "packet of {} bytes",
                        i64::from(size) + 4
                    ));
                }
            }
            decoder.feed(&buf[..n]);
            let mut queued: Vec<u8> = Vec::new();
            let mut after = After::Nothing;
            loop {
                let packet = match decoder.next_packet() {
                    Ok(Some(p)) => p,
                    Ok(None) => break,
                    Err(e) => return ConnectionEnd::Violation(e.to_string()),
                };
                self.record_packet(packet.id, packet.kind, &packet.body);
                if packet.wire_len() > END_MARKER_MAX_PACKET {
                    return ConnectionEnd::Violation(format!(
                        "packet of {} bytes",
                        packet.wire_len()
                    ));
                }
                match packet.kind {
                    TYPE_LOGIN => {
                        let ok = !packet.body.is_empty()
                            && packet.body == self.config.password.as_bytes();
                        if !ok {
                            return ConnectionEnd::ServerClosed;
                        }
                        self.authed = true;
                        queued.extend(encode(packet.id, TYPE_LOGIN_REPLY, b""));
                    }
                    TYPE_COMMAND if !self.authed => {
                        queued.extend(encode(-1, TYPE_LOGIN_REPLY, b""));
                    }
                    TYPE_COMMAND => {
                        let (text, then) =
                            respond(&String::from_utf8_lossy(&packet.body), &self.shared);
                        if !text.is_empty() {
                            queued.extend(encode(packet.id, TYPE_COMMAND, text.as_bytes()));
                        }
                        queued.extend(encode(packet.id, TYPE_COMMAND, b""));
                        after = then;
                    }
                    other => {
                        return ConnectionEnd::Violation(format!("unknown packet type {other}"));
                    }
                }
            }
            let result = self
                .stream
                .write_all(&queued)
                .map(|()| std::mem::replace(&mut after, After::Nothing));
            if let Some(end) = self.after(result) {
                return end;
            }
        }
    }

    /// [`PracticeMode::SilentEmpty`]: one read, then at most one packet handled, per turn.
    fn serve_one_per_read(&mut self) -> ConnectionEnd {
        let mut incoming: Vec<u8> = Vec::new();
        let mut buf = [0u8; ONE_PER_READ_BUFFER];
        let _ = self.stream.set_read_timeout(Some(ONE_PER_READ_IDLE_CLOSE));
        loop {
            if incoming.len() > ONE_PER_READ_MAX_BUFFERED {
                return ConnectionEnd::Violation(format!("{} bytes unhandled", incoming.len()));
            }
            if !self.config.read_delay.is_zero() {
                thread::sleep(self.config.read_delay);
            }
            let n = match self.stream.read(&mut buf) {
                Ok(0) => return ConnectionEnd::ClientClosed,
                Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                Err(e)
                    if matches!(
                        e.kind(),
                        io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                    ) =>
                {
                    return ConnectionEnd::ServerClosed;
                }
                Err(_) => return ConnectionEnd::ClientClosed,
                Ok(n) => n,
            };
            incoming.extend_from_slice(&buf[..n]);
            let (id, kind, body) = match take_one_packet(&mut incoming) {
                Ok(Some(p)) => p,
                Ok(None) => continue,
                Err(reason) => return ConnectionEnd::Violation(reason),
            };
            self.record_packet(id, kind, &body);
            let result = match kind {
                TYPE_COMMAND if self.authed => {
                    let command = String::from_utf8_lossy(&body).into_owned();
                    self.run(id, &command)
                }
                TYPE_COMMAND => Ok(After::Nothing),
                _ if !body.is_empty() && body == self.config.password.as_bytes() => {
                    self.authed = true;
                    self.send(id, TYPE_LOGIN_REPLY, b"").map(|_| After::Nothing)
                }
                _ => {
                    // A failed login attempt (a sentinel, a probe, a wrong password): the reply
                    // is written, then the connection closed.
                    let sent = self.send(-1, TYPE_LOGIN_REPLY, b"");
                    let _ = self.stream.shutdown(Shutdown::Both);
                    sent.map(|_| After::CloseAfterFirst)
                }
            };
            if let Some(end) = self.after(result) {
                return end;
            }
        }
    }

    fn answer_stream(&mut self, id: i32, kind: i32, body: &[u8]) -> io::Result<After> {
        let mode = self.config.mode;
        if mode == PracticeMode::ClosesOnNonPositiveId && id <= 0 {
            let _ = self.stream.shutdown(Shutdown::Both);
            return Ok(After::CloseAfterFirst);
        }
        let reply_id = |id: i32| {
            if mode == PracticeMode::Palworld {
                0
            } else {
                id
            }
        };
        match kind {
            TYPE_LOGIN => {
                let ok = !body.is_empty() && body == self.config.password.as_bytes();
                self.authed = ok;
                if mode == PracticeMode::Source {
                    self.send(id, TYPE_OUTPUT, b"")?;
                }
                let reply = if ok { reply_id(id) } else { -1 };
                self.send(reply, TYPE_LOGIN_REPLY, b"")?;
                Ok(After::Nothing)
            }
            TYPE_COMMAND if !self.authed => {
                self.send(-1, TYPE_LOGIN_REPLY, b"")?;
                Ok(After::Nothing)
            }
            TYPE_COMMAND => {
                let command = String::from_utf8_lossy(body).into_owned();
                self.run(id, &command)
            }
            _ => match mode {
                PracticeMode::Source => {
                    self.send(id, TYPE_OUTPUT, b"")?;
                    self.send(id, TYPE_OUTPUT, &[0, 1, 0, 0])?;
                    Ok(After::Nothing)
                }
                PracticeMode::MirrorTrailer8 => {
                    self.send(id, TYPE_OUTPUT, b"")?;
                    self.send(id, TYPE_OUTPUT, &[0, 0, 0, 1, 0, 0, 0, 0])?;
                    Ok(After::Nothing)
                }
                PracticeMode::Mirror | PracticeMode::ClosesOnNonPositiveId => {
                    self.send(id, TYPE_OUTPUT, b"")?;
                    Ok(After::Nothing)
                }
                PracticeMode::RejectSentinel => {
                    self.send(-1, TYPE_LOGIN_REPLY, b"")?;
                    let _ = self.stream.shutdown(Shutdown::Both);
                    Ok(After::CloseAfterFirst)
                }
                PracticeMode::Factorio
                | PracticeMode::Palworld
                | PracticeMode::Vanilla
                | PracticeMode::EndMarker
                | PracticeMode::SilentEmpty => Ok(After::Nothing),
            },
        }
    }

    /// Runs a built-in command and sends its answer split as the mode splits.
    fn run(&mut self, id: i32, command: &str) -> io::Result<After> {
        let (text, after) = respond(command, &self.shared);
        let reply_id = if self.config.mode == PracticeMode::Palworld {
            0
        } else {
            id
        };
        let fragments: Vec<Vec<u8>> = match self.config.mode {
            PracticeMode::Vanilla => split_utf16(&text, 4096),
            // One packet per message, nothing for no message.
            PracticeMode::SilentEmpty if text.is_empty() => Vec::new(),
            PracticeMode::SilentEmpty => text.split('\n').map(|m| m.as_bytes().to_vec()).collect(),
            PracticeMode::Source | PracticeMode::MirrorTrailer8 => {
                split_bytes(text.as_bytes(), 4096)
            }
            _ => vec![text.into_bytes()],
        };
        for (i, fragment) in fragments.iter().enumerate() {
            if self.config.mode == PracticeMode::Palworld
                && (fragment.len() > 4096 || !fragment.is_ascii())
            {
                let mut bytes = encode(reply_id, TYPE_OUTPUT, fragment);
                let claimed =
                    (fragment.len() + crate::rcon::packet::OVERHEAD + PALWORLD_OVERCLAIM) as i32;
                bytes[..4].copy_from_slice(&claimed.to_le_bytes());
                self.stream.write_all(&bytes)?;
                continue;
            }
            self.send(reply_id, TYPE_OUTPUT, fragment)?;
            if i == 0 && matches!(after, After::CloseAfterFirst) {
                let _ = self.stream.shutdown(Shutdown::Both);
                return Ok(after);
            }
        }
        if fragments.is_empty() && matches!(after, After::CloseAfterFirst) {
            let _ = self.stream.shutdown(Shutdown::Both);
        }
        Ok(after)
    }
}

/// The first packet of [`PracticeMode::SilentEmpty`]'s buffer, removed from it: `Ok(None)` for
/// fewer than 4 bytes; an error (the connection closes) for a size outside 10..=1456, a packet
/// not wholly in the buffer, a body whose first NUL is not the packet's second-last byte, or a
/// body that is not UTF-8. The body is scanned for its NUL through the whole buffer, as the
/// server does, so a packet cut short is refused rather than waited for.
fn take_one_packet(incoming: &mut Vec<u8>) -> Result<Option<(i32, i32, Vec<u8>)>, String> {
    let Some(size) = incoming.get(..4) else {
        return Ok(None);
    };
    let size = i64::from(i32::from_le_bytes(size.try_into().expect("4 bytes")));
    let len = size + 4;
    if !(0..=ONE_PER_READ_BUFFER as i64).contains(&len) {
        return Err(format!("packet of {len} bytes"));
    }
    let len = len as usize;
    if incoming.len() < 12 {
        return Err(format!("{} bytes, not a whole packet", incoming.len()));
    }
    let id = i32::from_le_bytes(incoming[4..8].try_into().expect("4 bytes"));
    let kind = i32::from_le_bytes(incoming[8..12].try_into().expect("4 bytes"));
    let rest = &incoming[12..];
    let (body, end) = match rest.iter().position(|&b| b == 0) {
        // The body, its NUL, and one more byte must end exactly at the packet's end.
        Some(nul) if 12 + nul + 2 == len && incoming.len() >= len => (rest[..nul].to_vec(), len),
        _ => {
            return Err(format!(
                "size field {size} does not match the packet's terminators ({} bytes buffered)",
                incoming.len()
            ));
        }
    };
    if std::str::from_utf8(&body).is_err() {
        return Err("body is not UTF-8".into());
    }
    incoming.drain(..end);
    Ok(Some((id, kind, body)))
}

/// Splits like vanilla's `sendCmdResponse`: every 4096 UTF-16 units, one (possibly empty)
/// fragment at least. A surrogate pair cut in two becomes `?` on each side, as Java's encoder does.
pub fn split_utf16(text: &str, units: usize) -> Vec<Vec<u8>> {
    let utf16: Vec<u16> = text.encode_utf16().collect();
    if utf16.is_empty() {
        return vec![Vec::new()];
    }
    utf16
        .chunks(units)
        .map(|chunk| {
            char::decode_utf16(chunk.iter().copied())
                .map(|r| r.unwrap_or('?'))
                .collect::<String>()
                .into_bytes()
        })
        .collect()
}

/// Splits at a byte count, ignoring character boundaries (as Source does).
fn split_bytes(bytes: &[u8], size: usize) -> Vec<Vec<u8>> {
    if bytes.is_empty() {
        return vec![Vec::new()];
    }
    bytes.chunks(size).map(<[u8]>::to_vec).collect()
}

/// `n` UTF-16 units of multibyte text (1-, 2- and 3-byte UTF-8 characters, no surrogates), the
/// same for every call: what the `chars N` command answers.
pub fn sample_text(n: usize) -> String {
    const PATTERN: [char; 8] = ['a', 'é', '€', 'ж', '中', 'ß', 'Ω', '!'];
    (0..n).map(|i| PATTERN[i % PATTERN.len()]).collect()
}

/// `n` ASCII characters (so `n` bytes and `n` UTF-16 units), the same for every call: what the
/// `ascii N` command answers. With it a fragment of exactly 4096 bytes can be produced.
pub fn ascii_text(n: usize) -> String {
    (0..n).map(|i| char::from(b'a' + (i % 26) as u8)).collect()
}

/// The commands the practice server knows, for `help` and documentation.
pub const BUILTINS: &str = "echo TEXT | echoln TEXT | chars N | ascii N | lines N | sleep MS | drop N | help | stop, and vanilla's server commands: list, say, msg, seed, save-all, save-on, save-off, whitelist, op, deop, kick, ban, ban-ip, banlist, pardon, pardon-ip, time, weather, gamerule, difficulty, setidletimeout, tp";

/// The practice server's command table and game state for another front end (the practice
/// management server's command methods, `crate::mgmt::practice`): commands answer alike over
/// both protocols, and what one changes (the whitelist, operators, the time, ...) the next one
/// sees, as on the RCON practice server and a real one.
#[derive(Default)]
pub struct PracticeGame(ServerState);

impl PracticeGame {
    /// The text `command` is answered with while `players` are online, and whether it stops
    /// the server.
    pub fn answer(&self, command: &str, players: &[String]) -> (String, bool) {
        self.0.game.lock().expect("game lock").online = players.to_vec();
        let (text, after) = respond(command, &self.0);
        (text, matches!(after, After::StopServer))
    }
}

/// The names of the commands the practice server lists in `help` and runs itself, sorted:
/// what a tab completion from its command set offers.
pub fn command_names() -> Vec<&'static str> {
    let help = HELP.iter().filter_map(|usage| usage.strip_prefix('/'));
    let builtins = BUILTINS.split(" | ");
    let mut names: Vec<&str> = help
        .chain(builtins)
        .filter_map(|u| u.split(' ').next())
        .collect();
    names.sort_unstable();
    names.dedup();
    names
}

/// The choices the `help` usage of command `name` lists for its first argument
/// (`/time (add|query|set)` gives `add`, `query`, `set`).
pub fn first_argument_choices(name: &str) -> Vec<&'static str> {
    let Some(usage) = HELP.iter().find_map(|u| {
        let rest = u.strip_prefix('/')?.strip_prefix(name)?;
        rest.strip_prefix(' ')
    }) else {
        return Vec::new();
    };
    let group = usage.split(' ').next().unwrap_or("");
    let inner = group
        .strip_prefix('(')
        .and_then(|g| g.strip_suffix(')'))
        .or_else(|| group.strip_prefix('[').and_then(|g| g.strip_suffix(']')));
    inner
        .map(|g| g.split('|').filter(|c| !c.starts_with('<')).collect())
        .unwrap_or_default()
}

/// The answer to a command, and what happens after.
fn respond(command: &str, shared: &ServerState) -> (String, After) {
    let (word, rest) = command.split_once(' ').unwrap_or((command, ""));
    let number = || rest.trim().parse::<usize>().ok();
    match word {
        "echo" => (rest.to_string(), After::Nothing),
        // The text and a line end, as servers that end every message with one answer (the C++
        // servers; Forge and plugins with `\n` too).
        "echoln" => (format!("{rest}\n"), After::Nothing),
        "chars" if number().is_some() => (sample_text(number().unwrap_or(0)), After::Nothing),
        "ascii" if number().is_some() => (ascii_text(number().unwrap_or(0)), After::Nothing),
        // Several feedback messages: one line each, joined with newlines.
        "lines" if number().is_some() => {
            let n = number().unwrap_or(0).min(100_000);
            let lines: Vec<String> = (1..=n).map(|i| format!("line {i} of {n}")).collect();
            (lines.join("\n"), After::Nothing)
        }
        "drop" if number().is_some() => {
            (sample_text(number().unwrap_or(0)), After::CloseAfterFirst)
        }
        "sleep" if number().is_some() => {
            let ms = number().unwrap_or(0).min(600_000);
            thread::sleep(Duration::from_millis(ms as u64));
            (format!("Slept {ms} ms"), After::Nothing)
        }
        "help" if rest.is_empty() => (HELP.concat(), After::Nothing),
        "seed" => ("Seed: [-4172144997902289642]".into(), After::Nothing),
        "stop" => ("Stopping the server".into(), After::StopServer),
        _ => match shared.game.lock().expect("game lock").answer(command) {
            // Several feedback messages reach an RCON client with nothing between them.
            Some(messages) => (messages.concat(), After::Nothing),
            None => (unknown_command(command), After::Nothing),
        },
    }
}

/// Vanilla's parse error for a command the practice server does not play: an unknown word
/// is refused where it starts; a command `help` lists is taken as incomplete, as it is when
/// given bare.
fn unknown_command(command: &str) -> String {
    let word = command.split(' ').next().unwrap_or_default();
    let listed = HELP.iter().any(|usage| {
        usage
            .strip_prefix('/')
            .and_then(|u| u.strip_prefix(word))
            .is_some_and(|after| after.is_empty() || after.starts_with(' '))
    });
    let cursor = if listed && !word.is_empty() {
        command.len()
    } else {
        0
    };
    game::parse_error(game::UNKNOWN, command, cursor)
}

/// A vanilla-like `help`: one usage per command, joined with no separator as vanilla does over
/// RCON (MC-7569); longer than one 4096-unit fragment.
const HELP: [&str; 101] = [
    "/advancement (grant|revoke)",
    "/attribute <target> <attribute> (base|get|modifier)",
    "/execute (align|anchored|as|at|facing|if|in|on|positioned|rotated|store|summon|unless|run)",
    "/bossbar (add|get|list|remove|set)",
    "/clear [<targets>]",
    "/clone (<begin>|from)",
    "/damage <target> <amount> [<damageType>]",
    "/data (get|merge|modify|remove)",
    "/datapack (disable|enable|list)",
    "/debug (function|start|stop)",
    "/defaultgamemode <gamemode>",
    "/difficulty [peaceful|easy|normal|hard]",
    "/effect (clear|give)",
    "/me <action>",
    "/enchant <targets> <enchantment> [<level>]",
    "/experience (add|query|set)",
    "/xp -> experience",
    "/fill <from> <to> <block> [destroy|hollow|keep|outline|replace]",
    "/fillbiome <from> <to> <biome> [replace]",
    "/forceload (add|query|remove)",
    "/function <name> [<arguments>|with]",
    "/gamemode <gamemode> [<target>]",
    "/gamerule (announceAdvancements|blockExplosionDropDecay|commandBlockOutput|commandModificationBlockLimit|disableElytraMovementCheck|disableRaids|doDaylightCycle|doEntityDrops|doFireTick|doImmediateRespawn|doInsomnia|doLimitedCrafting|doMobLoot|doMobSpawning|doPatrolSpawning|doTileDrops|doTraderSpawning|doVinesSpread|doWardenSpawning|doWeatherCycle|drowningDamage|enderPearlsVanishOnDeath|fallDamage|fireDamage|forgiveDeadPlayers|freezeDamage|globalSoundEvents|keepInventory|lavaSourceConversion|logAdminCommands|maxCommandChainLength|maxEntityCramming|mobExplosionDropDecay|mobGriefing|naturalRegeneration|playersSleepingPercentage|randomTickSpeed|reducedDebugInfo|sendCommandFeedback|showDeathMessages|snowAccumulationHeight|spawnRadius|spectatorsGenerateChunks|tntExplosionDropDecay|universalAnger|waterSourceConversion)",
    "/give <targets> <item> [<count>]",
    "/help [<command>]",
    "/item (modify|replace)",
    "/kick <targets> [<reason>]",
    "/kill [<targets>]",
    "/list [uuids]",
    "/locate (biome|poi|structure)",
    "/loot (give|insert|replace|spawn)",
    "/msg <targets> <message>",
    "/tell -> msg",
    "/w -> msg",
    "/particle <name> [<pos>]",
    "/place (feature|jigsaw|structure|template)",
    "/playsound <sound> (ambient|block|hostile|master|music|neutral|player|record|voice|weather)",
    "/reload",
    "/recipe (give|take)",
    "/return (<value>|fail|run)",
    "/ride <target> (dismount|mount)",
    "/say <message>",
    "/schedule (clear|function)",
    "/scoreboard (objectives|players)",
    "/seed",
    "/setblock <pos> <block> [destroy|keep|replace]",
    "/spawnpoint [<targets>]",
    "/setworldspawn [<pos>]",
    "/spectate [<target>]",
    "/spreadplayers <center> <spreadDistance> <maxRange> (<respectTeams>|under)",
    "/stopsound <targets> [*|ambient|block|hostile|master|music|neutral|player|record|voice|weather]",
    "/summon <entity> [<pos>]",
    "/tag <targets> (add|list|remove)",
    "/team (add|empty|join|leave|list|modify|remove)",
    "/teammsg <message>",
    "/tm -> teammsg",
    "/teleport (<location>|<destination>|<targets>)",
    "/tp -> teleport",
    "/tellraw <targets> <message>",
    "/time (add|query|set)",
    "/title <targets> (actionbar|clear|reset|subtitle|times|title)",
    "/trigger <objective> [add|set]",
    "/weather (clear|rain|thunder)",
    "/worldborder (add|center|damage|get|set|warning)",
    "/jfr (start|stop)",
    "/ban-ip <target> [<reason>]",
    "/banlist [ips|players]",
    "/ban <targets> [<reason>]",
    "/deop <targets>",
    "/op <targets>",
    "/pardon <targets>",
    "/pardon-ip <target>",
    "/perf (start|stop)",
    "/save-all [flush]",
    "/save-off",
    "/save-on",
    "/setidletimeout <minutes>",
    "/stop",
    "/transfer <hostname> [<port>] [<players>]",
    "/random (reset|roll|value)",
    "/tick (freeze|query|rate|sprint|step|unfreeze)",
    "/rotate <target> (<rotation>|facing)",
    "/test (clearall|clearthat|clearthese|create|locate|pos|resetclosest|resetthat|resetthese|run|runclosest|runfailed|runmultiple|runthat|runthese|stop|verify)",
    "/dialog (clear|show)",
    "/waypoint (list|modify)",
    "/fetchprofile (id|name)",
    "/version",
    "/publish [<allowCommands>] [<gamemode>] [<port>]",
    "/swing [<targets>]",
    "/stopwatch (create|query|remove|restart)",
    "/function <name> [<arguments>|with (block|entity|storage)]",
    "/data modify (block|entity|storage) <target> <targetPath> (append|insert|merge|prepend|set) (from|string|value)",
    "/scoreboard objectives (add|list|modify|remove|setdisplay)",
    "/scoreboard players (add|display|enable|get|list|operation|remove|reset|set)",
    "/item replace (block|entity) <target> <slot> (from|with)",
    "/execute if (biome|block|blocks|data|dimension|entity|function|items|loaded|predicate|score)",
    "/execute store (result|success) (block|bossbar|entity|score|storage)",
    "/attribute <target> <attribute> modifier (add|remove|value)",
    "/loot (give|insert|replace|spawn) <targets> (fish|kill|loot|mine)",
    "/worldborder warning (distance|time)",
    "/whitelist (add|list|off|on|reload|remove)",
];

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn vanilla_split_counts_utf16_units() {
        assert_eq!(split_utf16("", 4096), vec![Vec::<u8>::new()]);
        let exact = sample_text(4096);
        assert_eq!(split_utf16(&exact, 4096).len(), 1, "no empty trailer");
        let parts = split_utf16(&sample_text(8193), 4096);
        assert_eq!(parts.len(), 3);
        assert_eq!(parts.concat(), sample_text(8193).into_bytes());
        // A surrogate pair cut at the boundary turns into two '?'.
        let text = format!("{}😀", "a".repeat(4095));
        let parts = split_utf16(&text, 4096);
        assert_eq!(parts[0].last(), Some(&b'?'));
        assert_eq!(parts[1], b"?");
    }

    #[test]
    fn sample_text_length_is_in_utf16_units() {
        for n in [0, 1, 7, 4095, 4096, 4097] {
            assert_eq!(sample_text(n).encode_utf16().count(), n);
        }
    }

    #[test]
    fn help_is_longer_than_a_fragment() {
        assert!(HELP.concat().encode_utf16().count() > 4096);
    }

    #[test]
    fn unknown_command_format() {
        assert_eq!(
            unknown_command("foo"),
            "Unknown or incomplete command, see below for errorfoo<--[HERE]"
        );
        // An unknown word is where the error is: the whole input follows the message.
        assert_eq!(
            unknown_command("a very long command"),
            "Unknown or incomplete command, see below for errora very long command<--[HERE]"
        );
        // A listed command is incomplete: at most ten characters before the end.
        assert_eq!(
            unknown_command("give @a minecraft:diamond"),
            "Unknown or incomplete command, see below for error...ft:diamond<--[HERE]"
        );
    }

    #[test]
    fn a_half_closed_session_is_closed_by_the_server() {
        let server = PracticeServer::start(PracticeConfig::default()).unwrap();
        let mut s = TcpStream::connect(server.addr()).unwrap();
        s.write_all(&encode(1, TYPE_LOGIN, b"practice")).unwrap();
        s.shutdown(Shutdown::Write).unwrap();
        s.set_read_timeout(Some(Duration::from_secs(5))).unwrap();
        let mut got = Vec::new();
        // The login reply, then end of stream (not a timeout).
        s.read_to_end(&mut got).unwrap();
        assert_eq!(got, encode(1, TYPE_LOGIN_REPLY, b""));
        // The handle kept for `stop` is dropped just after the socket is shut down.
        let start = std::time::Instant::now();
        while !server.shared.streams.lock().unwrap().is_empty() {
            assert!(start.elapsed() < Duration::from_secs(5), "handle kept");
            thread::sleep(Duration::from_millis(1));
        }
    }

    #[test]
    fn mode_names_round_trip() {
        for m in PracticeMode::ALL {
            assert_eq!(PracticeMode::from_name(m.name()), Some(m));
        }
    }
}
