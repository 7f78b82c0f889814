//! Practice servers for the other consoles (BattlEye RCon, WebRCON, 7 Days to Die telnet), in
//! process, on loopback: what the tests, `--demo --dialect ...` and `--practice-server` with a
//! console `--practice-mode` talk to. Each behaves as the protocol's notes say (docs/protocol.md
//! section 8) and is cross-checked with a third-party client (tests/peers-consoles).
//!
//! Modes: `battleye` (faithful), `battleye-lossy` (drops, duplicates, reorders and corrupts
//! datagrams both ways on a seeded pattern), `battleye-reforger` (answers with `0x02` messages
//! and no `0x01`, as reported for Arma Reforger), `webrcon`, `telnet`.
//!
//! Commands (all modes): `echo TEXT`, `chars N`, `count` (how many times `count` ran: a command
//! run twice shows), `say TEXT` (a server message before the answer), `later TEXT` (a server
//! message 1.5 s after the answer), `hang` (never answered; BattlEye and WebRCON), `players`,
//! `version`, `help`, `stop` (ends the server). Test hooks that stand in for players:
//! `join NAME`, `leave NAME` and `chat NAME TEXT` push to every logged-in client the lines
//! the real game pushes for a player joining, leaving or chatting (see [`push_lines`]).

use std::collections::{HashMap, VecDeque};
use std::io::{self, BufRead, BufReader, Write};
use std::net::{SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::{self, JoinHandle};
use std::time::{Duration, Instant};

use super::battleye::{self, COMMAND, LOGIN, MESSAGE};

/// Which console the practice server speaks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// BattlEye RCon, faithful.
    BattlEye,
    /// BattlEye RCon over a bad network: datagrams dropped, duplicated, reordered, corrupted.
    BattlEyeLossy,
    /// BattlEye RCon answering as a stream of server messages (Arma Reforger).
    BattlEyeReforger,
    /// Rust's WebRCON.
    WebRcon,
    /// The 7 Days to Die telnet console.
    Telnet,
}

impl Kind {
    /// Every mode.
    pub const ALL: [Kind; 5] = [
        Kind::BattlEye,
        Kind::BattlEyeLossy,
        Kind::BattlEyeReforger,
        Kind::WebRcon,
        Kind::Telnet,
    ];

    /// The name for `--practice-mode`.
    pub fn name(self) -> &'static str {
        match self {
            Kind::BattlEye => "battleye",
            Kind::BattlEyeLossy => "battleye-lossy",
            Kind::BattlEyeReforger => "battleye-reforger",
            Kind::WebRcon => "webrcon",
            Kind::Telnet => "telnet",
        }
    }

    /// The mode with this name.
    pub fn from_name(name: &str) -> Option<Kind> {
        Kind::ALL
            .into_iter()
            .find(|k| k.name().eq_ignore_ascii_case(name.trim()))
    }
}

/// How long after its answer `later` sends its message: well past a telnet idle gap, so the
/// message arrives while no command runs.
const LATER: Duration = Duration::from_millis(1500);

/// The commands the practice consoles know, for `help`.
pub const BUILTINS: &str = "echo TEXT | chars N | count | say TEXT | later TEXT | hang | players | version | help | stop | join NAME | leave NAME | chat NAME TEXT";

/// What a stand-in player does (the `join`, `leave` and `chat` commands).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Push {
    /// A player joins.
    Join(String),
    /// A player leaves.
    Leave(String),
    /// A player says something in global chat.
    Chat(String, String),
}

/// The messages `kind` pushes for `push`, as the real game words them: `(text, WebRCON Type)`.
/// BattlEye (DayZ/Arma): `Player #0 NAME (IP:PORT) connected` and the BE GUID line,
/// `Player #0 NAME disconnected`, `(Global) NAME: TEXT`. 7 Days to Die: `Player connected,
/// entityid=.., name=NAME, ...` and `GMSG: Player 'NAME' joined the game`, `Player
/// disconnected: ... PlayerName='NAME' ...` and `GMSG: ... left the game`, `Chat (from ...):
/// 'NAME': TEXT` (each a log line). Rust: `IP:PORT/STEAMID/NAME joined [os/STEAMID]`,
/// `IP:PORT/STEAMID/NAME disconnecting: disconnect` (Type Generic) and a Type Chat frame whose
/// Message is the chat as JSON.
pub fn push_lines(kind: Kind, push: &Push) -> Vec<(String, &'static str)> {
    const STEAM: &str = "76561198000000001";
    match (kind, push) {
        (Kind::WebRcon, Push::Join(n)) => vec![(
            format!("127.0.0.1:53554/{STEAM}/{n} joined [windows/{STEAM}]"),
            "Generic",
        )],
        (Kind::WebRcon, Push::Leave(n)) => vec![(
            format!("127.0.0.1:53554/{STEAM}/{n} disconnecting: disconnect"),
            "Generic",
        )],
        (Kind::WebRcon, Push::Chat(n, t)) => vec![(
            serde_json::json!({"Channel": 0, "Message": t, "UserId": STEAM, "Username": n,
                "Color": "#5af", "Time": 1_796_175_000})
            .to_string(),
            "Chat",
        )],
        (Kind::Telnet, Push::Join(n)) => vec![
            (
                format!(
                    "Player connected, entityid=171, name={n}, pltfmid=Steam_{STEAM}, crossid=EOS_0002aaaa, steamOwner=Steam_{STEAM}, ip=127.0.0.1"
                ),
                "",
            ),
            (format!("GMSG: Player '{n}' joined the game"), ""),
        ],
        (Kind::Telnet, Push::Leave(n)) => vec![
            (
                format!(
                    "Player disconnected: EntityID=171, PltfmId='Steam_{STEAM}', CrossId='EOS_0002aaaa', OwnerID='Steam_{STEAM}', PlayerName='{n}', ClientNumber='1'"
                ),
                "",
            ),
            (format!("GMSG: Player '{n}' left the game"), ""),
        ],
        (Kind::Telnet, Push::Chat(n, t)) => vec![(
            format!("Chat (from 'Steam_{STEAM}', entity id '171', to 'Global'): '{n}': {t}"),
            "",
        )],
        (_, Push::Join(n)) => vec![
            (format!("Player #0 {n} (127.0.0.1:2304) connected"), ""),
            (
                format!("Player #0 {n} - BE GUID: 0123456789abcdef0123456789abcdef"),
                "",
            ),
        ],
        (_, Push::Leave(n)) => vec![(format!("Player #0 {n} disconnected"), "")],
        (_, Push::Chat(n, t)) => vec![(format!("(Global) {n}: {t}"), "")],
    }
}

/// What the TCP practice servers pushed to every client so far: (text, WebRCON Type).
type PushLog = Mutex<Vec<(String, &'static str)>>;

/// How a practice console server is set up.
#[derive(Debug, Clone)]
pub struct ConsoleServerConfig {
    /// Where to listen (loopback; port 0 picks one).
    pub bind: SocketAddr,
    /// The password.
    pub password: String,
    /// The protocol and its quirks.
    pub kind: Kind,
    /// Seed of the lossy pattern.
    pub seed: u64,
    /// BattlEye: a client silent this long is logged out (45 s on real servers).
    pub expiry: Duration,
}

impl Default for ConsoleServerConfig {
    fn default() -> Self {
        ConsoleServerConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            password: "practice".into(),
            kind: Kind::BattlEye,
            seed: 1,
            expiry: Duration::from_secs(45),
        }
    }
}

/// What a practice server counted, for tests.
#[derive(Debug, Default)]
pub struct Stats {
    /// Commands executed (a retransmitted BattlEye command answered again is not counted).
    pub executed: AtomicU64,
    /// Repeated BattlEye commands answered from the cache, without running them.
    pub repeats: AtomicU64,
    /// Server messages sent (each counted once, however often resent).
    pub messages: AtomicU64,
    /// Server messages the client acknowledged.
    pub acked: AtomicU64,
    /// BattlEye datagrams from the client with a wrong CRC.
    pub bad_crc: AtomicU64,
    /// Logins accepted.
    pub logins: AtomicU64,
    /// BattlEye clients logged out for silence.
    pub expired: AtomicU64,
    /// Empty BattlEye commands (keep-alives) received.
    pub keepalives: AtomicU64,
}

/// A running practice console server.
pub struct ConsoleServer {
    addr: SocketAddr,
    stop: Arc<AtomicBool>,
    stats: Arc<Stats>,
    thread: Option<JoinHandle<()>>,
}

impl ConsoleServer {
    /// Starts the server on its own thread.
    pub fn start(config: ConsoleServerConfig) -> io::Result<ConsoleServer> {
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(Stats::default());
        let (addr, thread) = match config.kind {
            Kind::BattlEye | Kind::BattlEyeLossy | Kind::BattlEyeReforger => {
                let socket = UdpSocket::bind(config.bind)?;
                socket.set_read_timeout(Some(Duration::from_millis(20)))?;
                let addr = socket.local_addr()?;
                let (stop, stats) = (Arc::clone(&stop), Arc::clone(&stats));
                let t = thread::spawn(move || battleye_server(socket, config, &stop, &stats));
                (addr, t)
            }
            Kind::WebRcon | Kind::Telnet => {
                return ConsoleServer::serve(TcpListener::bind(config.bind)?, config);
            }
        };
        Ok(ConsoleServer {
            addr,
            stop,
            stats,
            thread: Some(thread),
        })
    }

    /// Starts a WebRCON or telnet server (`config.kind`; its `bind` is not used) on `listener`,
    /// already bound: a test that stops a server and starts it again on the same port can hold
    /// the port meanwhile with a socket sharing it, so nobody else takes it.
    pub fn serve(listener: TcpListener, config: ConsoleServerConfig) -> io::Result<ConsoleServer> {
        if !matches!(config.kind, Kind::WebRcon | Kind::Telnet) {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "only a WebRCON or telnet server listens on TCP",
            ));
        }
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let stop = Arc::new(AtomicBool::new(false));
        let stats = Arc::new(Stats::default());
        let (thread_stop, thread_stats) = (Arc::clone(&stop), Arc::clone(&stats));
        let thread =
            thread::spawn(move || tcp_server(listener, config, &thread_stop, &thread_stats));
        Ok(ConsoleServer {
            addr,
            stop,
            stats,
            thread: Some(thread),
        })
    }

    /// The address it listens on.
    pub fn addr(&self) -> SocketAddr {
        self.addr
    }

    /// Its port.
    pub fn port(&self) -> u16 {
        self.addr.port()
    }

    /// What it counted so far.
    pub fn stats(&self) -> &Stats {
        &self.stats
    }

    /// Blocks until a client runs `stop`.
    pub fn wait(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for ConsoleServer {
    fn drop(&mut self) {
        self.stop.store(true, Ordering::SeqCst);
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

/// What a command does.
struct ScriptedReply {
    /// The answer.
    text: String,
    /// Server messages sent before the answer.
    before: Vec<String>,
    /// A server message sent a moment after the answer.
    later: Option<String>,
    /// Stop the server after answering.
    stop: bool,
    /// Send no answer at all (`hang`).
    silent: bool,
    /// Messages for every logged-in client (`join`, `leave`, `chat`).
    push: Option<Push>,
}

fn respond(command: &str, counter: &AtomicU64) -> ScriptedReply {
    let (word, rest) = command.split_once(' ').unwrap_or((command, ""));
    let mut r = ScriptedReply {
        text: String::new(),
        before: Vec::new(),
        later: None,
        stop: false,
        silent: false,
        push: None,
    };
    match word {
        "echo" => r.text = rest.to_string(),
        "chars" => match rest.trim().parse::<usize>() {
            Ok(n) => r.text = crate::practice::sample_text(n.min(1 << 20)),
            Err(_) => r.text = "usage: chars N".into(),
        },
        "count" => {
            let n = counter.fetch_add(1, Ordering::SeqCst) + 1;
            r.text = format!("count {n}");
        }
        "say" => r.before.push(format!("(Global) Server: {rest}")),
        "later" => {
            r.text = "ok".into();
            r.later = Some(format!("(Global) Server: {rest}"));
        }
        "players" => {
            r.text = "Players on server:\n[#] [IP Address]:[Port] [Ping] [GUID] [Name]\n--------------------------------------------------\n(0 players in total)".into();
        }
        "version" => r.text = "rconsole practice console 1.0".into(),
        "hang" => r.silent = true,
        "join" | "leave" | "chat" if !rest.trim().is_empty() => {
            let rest = rest.trim();
            r.text = "ok".into();
            r.push = Some(match word {
                "join" => Push::Join(rest.into()),
                "leave" => Push::Leave(rest.into()),
                _ => {
                    let (n, t) = rest.split_once(' ').unwrap_or((rest, ""));
                    Push::Chat(n.into(), t.into())
                }
            });
        }
        "help" => r.text = format!("Commands: {BUILTINS}"),
        "stop" => {
            r.text = "Stopping the server".into();
            r.stop = true;
        }
        _ => r.text = format!("Unknown command: {command}"),
    }
    r
}

/// A small seeded generator for the lossy pattern (xorshift64*).
struct Pattern(u64);

impl Pattern {
    fn next(&mut self) -> u64 {
        let mut x = self.0;
        x ^= x >> 12;
        x ^= x << 25;
        x ^= x >> 27;
        self.0 = x;
        x.wrapping_mul(0x2545_F491_4F6C_DD1D)
    }
}

/// What the lossy pattern does to one datagram.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Fate {
    Deliver,
    Drop,
    Duplicate,
    Delay,
    Corrupt,
}

impl Pattern {
    fn fate(&mut self) -> Fate {
        match self.next() % 10 {
            0 => Fate::Drop,
            1 => Fate::Duplicate,
            2 => Fate::Delay,
            3 => Fate::Corrupt,
            _ => Fate::Deliver,
        }
    }
}

/// One BattlEye client the server knows.
struct BeClient {
    last_seen: Instant,
    /// Answers by sequence number (their datagrams), to answer a repeat without running it.
    answers: HashMap<u8, Vec<Vec<u8>>>,
    order: VecDeque<u8>,
    next_msg: u8,
    /// Unacknowledged messages: seq -> (datagram, last sent, tries).
    unacked: HashMap<u8, (Vec<u8>, Instant, u32)>,
    later: Vec<(Instant, String)>,
}

struct BeServer<'a> {
    socket: UdpSocket,
    config: ConsoleServerConfig,
    stats: &'a Stats,
    pattern: Pattern,
    /// Datagrams held back to be sent after the next one (reordering).
    held: Vec<(SocketAddr, Vec<u8>, Instant)>,
    clients: HashMap<SocketAddr, BeClient>,
    counter: AtomicU64,
}

impl BeServer<'_> {
    fn lossy(&self) -> bool {
        self.config.kind == Kind::BattlEyeLossy
    }

    fn send(&mut self, to: SocketAddr, datagram: Vec<u8>) {
        if !self.lossy() {
            let _ = self.socket.send_to(&datagram, to);
            return;
        }
        match self.pattern.fate() {
            Fate::Deliver => {
                let _ = self.socket.send_to(&datagram, to);
                self.flush_held(false);
            }
            Fate::Drop => {}
            Fate::Duplicate => {
                let _ = self.socket.send_to(&datagram, to);
                let _ = self.socket.send_to(&datagram, to);
            }
            Fate::Delay => self.held.push((to, datagram, Instant::now())),
            Fate::Corrupt => {
                let mut bad = datagram.clone();
                bad[2] ^= 0x5A;
                let _ = self.socket.send_to(&bad, to);
                // The corrupted copy is all the client gets this time.
            }
        }
    }

    /// Sends held datagrams: after a later one went out (reordered), or when held too long.
    fn flush_held(&mut self, only_old: bool) {
        let now = Instant::now();
        let mut keep = Vec::new();
        for (to, d, at) in std::mem::take(&mut self.held) {
            if !only_old || now.duration_since(at) >= Duration::from_millis(150) {
                let _ = self.socket.send_to(&d, to);
            } else {
                keep.push((to, d, at));
            }
        }
        self.held = keep;
    }

    fn message(&mut self, to: SocketAddr, text: &str) {
        let Some(c) = self.clients.get_mut(&to) else {
            return;
        };
        let seq = c.next_msg;
        c.next_msg = c.next_msg.wrapping_add(1);
        let mut payload = vec![MESSAGE, seq];
        payload.extend_from_slice(text.as_bytes());
        let d = battleye::encode(&payload);
        c.unacked.insert(seq, (d.clone(), Instant::now(), 1));
        self.stats.messages.fetch_add(1, Ordering::SeqCst);
        self.send(to, d);
    }

    fn answer(&mut self, to: SocketAddr, seq: u8, text: &str) -> Vec<Vec<u8>> {
        if self.config.kind == Kind::BattlEyeReforger && !text.is_empty() {
            // No 0x01 at all: the answer comes as server messages.
            for line in text.lines() {
                self.message(to, line);
            }
            return Vec::new();
        }
        let bytes = text.as_bytes();
        const PART: usize = 1000;
        if bytes.len() <= PART {
            let mut payload = vec![COMMAND, seq];
            payload.extend_from_slice(bytes);
            return vec![battleye::encode(&payload)];
        }
        let chunks: Vec<&[u8]> = bytes.chunks(PART).collect();
        let count = chunks.len().min(255);
        chunks
            .iter()
            .take(count)
            .enumerate()
            .map(|(i, c)| {
                let mut payload = vec![COMMAND, seq, 0, count as u8, i as u8];
                payload.extend_from_slice(c);
                battleye::encode(&payload)
            })
            .collect()
    }

    /// Handles one datagram; returns true when the server should stop.
    /// A login: a new session when the password is right, even from an address an earlier
    /// client used (its remembered answers are for that client's sequence numbers).
    fn login(&mut self, from: SocketAddr, password: &[u8], now: Instant) {
        let ok = password == self.config.password.as_bytes();
        if ok {
            self.stats.logins.fetch_add(1, Ordering::SeqCst);
            let session = BeClient {
                last_seen: now,
                answers: HashMap::new(),
                order: VecDeque::new(),
                next_msg: 0,
                unacked: HashMap::new(),
                later: Vec::new(),
            };
            self.clients.insert(from, session);
        }
        self.send(from, battleye::encode(&[LOGIN, u8::from(ok)]));
    }

    fn handle(&mut self, from: SocketAddr, datagram: &[u8]) -> bool {
        if self.lossy() && self.pattern.next().is_multiple_of(10) {
            return false; // lost on the way in
        }
        let payload = match battleye::decode(datagram) {
            Ok(p) => p.to_vec(),
            Err(battleye::PacketError::BadCrc { .. }) => {
                self.stats.bad_crc.fetch_add(1, Ordering::SeqCst);
                return false;
            }
            Err(_) => return false,
        };
        let now = Instant::now();
        match payload.first().copied() {
            Some(LOGIN) => self.login(from, &payload[1..], now),
            Some(COMMAND) if payload.len() >= 2 => {
                let Some(c) = self.clients.get_mut(&from) else {
                    return false; // not logged in (or expired): a real server ignores it
                };
                c.last_seen = now;
                let seq = payload[1];
                if let Some(cached) = c.answers.get(&seq).cloned() {
                    self.stats.repeats.fetch_add(1, Ordering::SeqCst);
                    for d in cached {
                        self.send(from, d);
                    }
                    return false;
                }
                let command = String::from_utf8_lossy(&payload[2..]).into_owned();
                let reply = if command.is_empty() {
                    self.stats.keepalives.fetch_add(1, Ordering::SeqCst);
                    None
                } else {
                    self.stats.executed.fetch_add(1, Ordering::SeqCst);
                    Some(respond(&command, &self.counter))
                };
                for m in reply.iter().flat_map(|r| r.before.iter()) {
                    self.message(from, m);
                }
                if let Some(push) = reply.as_ref().and_then(|r| r.push.as_ref()) {
                    let everyone: Vec<SocketAddr> = self.clients.keys().copied().collect();
                    for (text, _) in push_lines(self.config.kind, push) {
                        for &to in &everyone {
                            self.message(to, &text);
                        }
                    }
                }
                if reply.as_ref().is_some_and(|r| r.silent) {
                    return false;
                }
                let text = reply.as_ref().map(|r| r.text.as_str()).unwrap_or("");
                let datagrams = self.answer(from, seq, text);
                if let Some(c) = self.clients.get_mut(&from) {
                    c.answers.insert(seq, datagrams.clone());
                    c.order.push_back(seq);
                    if c.order.len() > 128
                        && let Some(old) = c.order.pop_front()
                    {
                        c.answers.remove(&old);
                    }
                    if let Some(l) = reply.as_ref().and_then(|r| r.later.clone()) {
                        c.later.push((now + LATER, l));
                    }
                }
                // Parts in reverse order when lossy: the client must sort them.
                let mut datagrams = datagrams;
                if self.lossy() {
                    datagrams.reverse();
                }
                for d in datagrams {
                    self.send(from, d);
                }
                return reply.is_some_and(|r| r.stop);
            }
            Some(MESSAGE) if payload.len() >= 2 => {
                if let Some(c) = self.clients.get_mut(&from) {
                    c.last_seen = now;
                    if c.unacked.remove(&payload[1]).is_some() {
                        self.stats.acked.fetch_add(1, Ordering::SeqCst);
                    }
                }
            }
            _ => {}
        }
        false
    }

    /// Resends unacknowledged messages, sends due `later` messages, forgets silent clients.
    fn housekeeping(&mut self) {
        let now = Instant::now();
        self.flush_held(true);
        let expiry = self.config.expiry;
        let before = self.clients.len();
        self.clients
            .retain(|_, c| now.duration_since(c.last_seen) < expiry);
        let gone = before - self.clients.len();
        self.stats.expired.fetch_add(gone as u64, Ordering::SeqCst);
        let mut resend = Vec::new();
        let mut later = Vec::new();
        for (addr, c) in self.clients.iter_mut() {
            for (d, last, tries) in c.unacked.values_mut() {
                if now.duration_since(*last) >= Duration::from_millis(300) && *tries < 20 {
                    *last = now;
                    *tries += 1;
                    resend.push((*addr, d.clone()));
                }
            }
            later.extend(take_due(&mut c.later, now).into_iter().map(|m| (*addr, m)));
        }
        for (addr, d) in resend {
            self.send(addr, d);
        }
        for (addr, m) in later {
            self.message(addr, &m);
        }
    }
}

fn battleye_server(
    socket: UdpSocket,
    config: ConsoleServerConfig,
    stop: &AtomicBool,
    stats: &Stats,
) {
    let seed = config.seed.max(1);
    let mut server = BeServer {
        socket,
        config,
        stats,
        pattern: Pattern(seed),
        held: Vec::new(),
        clients: HashMap::new(),
        counter: AtomicU64::new(0),
    };
    let mut buf = vec![0u8; battleye::MAX_DATAGRAM];
    while !stop.load(Ordering::SeqCst) {
        match server.socket.recv_from(&mut buf) {
            Ok((n, from)) => {
                let d = buf[..n].to_vec();
                if server.handle(from, &d) {
                    server.flush_held(false);
                    return;
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(_) => {}
        }
        server.housekeeping();
    }
}

fn tcp_server(
    listener: TcpListener,
    config: ConsoleServerConfig,
    stop: &Arc<AtomicBool>,
    stats: &Arc<Stats>,
) {
    let counter = Arc::new(AtomicU64::new(0));
    let pushed: Arc<PushLog> = Arc::new(Mutex::new(Vec::new()));
    let workers: Mutex<Vec<JoinHandle<()>>> = Mutex::new(Vec::new());
    while !stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, peer)) => {
                let (config, stop, stats, counter, pushed) = (
                    config.clone(),
                    Arc::clone(stop),
                    Arc::clone(stats),
                    Arc::clone(&counter),
                    Arc::clone(&pushed),
                );
                let t = thread::spawn(move || {
                    let _ = stream.set_nonblocking(false);
                    let _ = stream.set_nodelay(true);
                    let shared = SessionHub {
                        stats: &stats,
                        counter: &counter,
                        pushed: &pushed,
                        stop: &stop,
                    };
                    let ended = match config.kind {
                        Kind::WebRcon => webrcon_session(stream, &config, &shared),
                        _ => telnet_session(stream, peer, &config, &shared),
                    };
                    if let Ok(true) = ended {
                        stop.store(true, Ordering::SeqCst);
                    }
                });
                workers.lock().unwrap_or_else(|p| p.into_inner()).push(t);
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                thread::sleep(Duration::from_millis(10));
            }
            Err(_) => thread::sleep(Duration::from_millis(10)),
        }
    }
}

/// What the sessions of a TCP practice server share.
struct SessionHub<'a> {
    stats: &'a Stats,
    counter: &'a AtomicU64,
    /// Pushed to every client: each session sends what was added since it logged in.
    pushed: &'a PushLog,
    /// The server stopped (dropped): sessions close their connections, as a real server's do.
    stop: &'a AtomicBool,
}

impl SessionHub<'_> {
    /// The pushes since `seen`, moving `seen` on.
    fn pushes_since(&self, seen: &mut usize) -> Vec<(String, &'static str)> {
        let log = self.pushed.lock().unwrap_or_else(|p| p.into_inner());
        let new = log[(*seen).min(log.len())..].to_vec();
        *seen = log.len();
        new
    }

    fn push(&self, kind: Kind, push: &Push) {
        self.pushed
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .extend(push_lines(kind, push));
    }
}

/// The messages of `later` due by `now`, taken out of it in order.
fn take_due(later: &mut Vec<(Instant, String)>, now: Instant) -> Vec<String> {
    let (due, keep): (Vec<_>, Vec<_>) = later.drain(..).partition(|(t, _)| *t <= now);
    *later = keep;
    due.into_iter().map(|(_, m)| m).collect()
}

/// The WebSocket of a client that asked for the path of `password`; `None` for any other
/// (answered 401) or a failed handshake.
fn webrcon_accept(stream: TcpStream, password: &str) -> Option<tungstenite::WebSocket<TcpStream>> {
    use tungstenite::handshake::server::{ErrorResponse, Request, Response};
    let want = format!("/{}", super::webrcon::encode_path(password));
    // tungstenite's callback type is fixed: its error is an HTTP response.
    #[allow(clippy::result_large_err)]
    let check = |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
        if req.uri().path() == want {
            Ok(resp)
        } else {
            let mut e = ErrorResponse::new(Some("wrong password".into()));
            *e.status_mut() = tungstenite::http::StatusCode::UNAUTHORIZED;
            Err(e)
        }
    };
    tungstenite::accept_hdr(stream, check).ok()
}

/// One WebRCON message frame.
fn webrcon_frame(id: i64, message: &str, kind: &str) -> tungstenite::Message {
    tungstenite::Message::text(
        serde_json::json!({
            "Identifier": id,
            "Message": message,
            "Type": kind,
            "Stacktrace": "",
        })
        .to_string(),
    )
}

/// One WebRCON connection; `Ok(true)` when a client ran `stop`.
fn webrcon_session(
    stream: TcpStream,
    config: &ConsoleServerConfig,
    shared: &SessionHub,
) -> io::Result<bool> {
    let (stats, counter) = (shared.stats, shared.counter);
    let Some(mut ws) = webrcon_accept(stream, &config.password) else {
        return Ok(false);
    };
    stats.logins.fetch_add(1, Ordering::SeqCst);
    ws.get_mut()
        .set_read_timeout(Some(Duration::from_millis(50)))?;
    let mut later: Vec<(Instant, String)> = Vec::new();
    let mut seen = shared.pushes_since(&mut 0).len();
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            let _ = ws.close(None);
            let _ = ws.flush();
            return Ok(false);
        }
        for m in take_due(&mut later, Instant::now()) {
            stats.messages.fetch_add(1, Ordering::SeqCst);
            if ws.send(webrcon_frame(-1, &m, "Chat")).is_err() {
                return Ok(false);
            }
        }
        for (m, kind) in shared.pushes_since(&mut seen) {
            stats.messages.fetch_add(1, Ordering::SeqCst);
            let id = if kind == "Chat" { -1 } else { 0 };
            if ws.send(webrcon_frame(id, &m, kind)).is_err() {
                return Ok(false);
            }
        }
        let msg = match ws.read() {
            Ok(m) => m,
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                continue;
            }
            Err(_) => return Ok(false),
        };
        let tungstenite::Message::Text(text) = msg else {
            if msg.is_close() {
                return Ok(false);
            }
            continue;
        };
        let Ok(req) = serde_json::from_str::<serde_json::Value>(text.as_str()) else {
            continue;
        };
        let id = req["Identifier"].as_i64().unwrap_or(0);
        let command = req["Message"].as_str().unwrap_or("").to_string();
        stats.executed.fetch_add(1, Ordering::SeqCst);
        let reply = respond(&command, counter);
        // A console log line and any chat first: the client must keep them out of the answer.
        let mut out = vec![webrcon_frame(
            0,
            &format!("[rcon] executing '{command}'"),
            "Generic",
        )];
        stats.messages.fetch_add(1, Ordering::SeqCst);
        for m in &reply.before {
            stats.messages.fetch_add(1, Ordering::SeqCst);
            out.push(webrcon_frame(-1, m, "Chat"));
        }
        if !reply.silent {
            out.push(webrcon_frame(id, &reply.text, "Generic"));
        }
        for f in out {
            if ws.send(f).is_err() {
                return Ok(false);
            }
        }
        if let Some(p) = &reply.push {
            shared.push(config.kind, p);
        }
        if let Some(l) = reply.later {
            later.push((Instant::now() + LATER, l));
        }
        if reply.stop {
            let _ = ws.close(None);
            let _ = ws.flush();
            return Ok(true);
        }
    }
}

/// A 7 Days to Die log line.
fn log_line(text: &str) -> String {
    format!("2026-12-02T01:30:00 123.456 INF {text}\r\n")
}

/// The log line of a chat message the server says.
fn chat_line(message: &str) -> String {
    log_line(&format!(
        "Chat (from '-non-player-', entity id '-1', to 'Global'): {message}"
    ))
}

/// One telnet connection; `Ok(true)` when a client ran `stop`.
fn telnet_session(
    stream: TcpStream,
    peer: SocketAddr,
    config: &ConsoleServerConfig,
    shared: &SessionHub,
) -> io::Result<bool> {
    let (stats, counter) = (shared.stats, shared.counter);
    let mut out = stream.try_clone()?;
    stream.set_read_timeout(Some(Duration::from_millis(50)))?;
    let mut reader = BufReader::new(stream);
    out.write_all(b"Please enter password:\r\n")?;
    if !telnet_login(&mut reader, &mut out, &config.password, shared.stop)? {
        return Ok(false);
    }
    stats.logins.fetch_add(1, Ordering::SeqCst);
    out.write_all(
        b"Logon successful.\r\n\r\n\r\n*** Connected with 7DTD server.\r\n*** Server version: rconsole practice console 1.0\r\n\r\nPress 'help' to get a list of all commands. Press 'exit' to end session.\r\n\r\n",
    )?;
    out.write_all(log_line(&format!("Telnet connection from: {peer}")).as_bytes())?;
    let (mut later, mut line) = (Vec::new(), Vec::new());
    let mut seen = shared.pushes_since(&mut 0).len();
    loop {
        if shared.stop.load(Ordering::SeqCst) {
            return Ok(false);
        }
        for (m, _) in shared.pushes_since(&mut seen) {
            stats.messages.fetch_add(1, Ordering::SeqCst);
            out.write_all(log_line(&m).as_bytes())?;
        }
        for m in take_due(&mut later, Instant::now()) {
            stats.messages.fetch_add(1, Ordering::SeqCst);
            out.write_all(chat_line(&m).as_bytes())?;
        }
        let command = match read_line(&mut reader, &mut line) {
            Ok(Some(c)) => c,
            Ok(None) => continue,
            Err(_) => return Ok(false),
        };
        let command = command.trim().to_string();
        if command.is_empty() {
            continue;
        }
        if command == "exit" {
            return Ok(false);
        }
        stats.executed.fetch_add(1, Ordering::SeqCst);
        let reply = respond(&command, counter);
        let mut text = log_line(&format!(
            "Executing command '{command}' by Telnet from {peer}"
        ));
        stats.messages.fetch_add(1, Ordering::SeqCst);
        for m in &reply.before {
            stats.messages.fetch_add(1, Ordering::SeqCst);
            text.push_str(&chat_line(m));
        }
        for l in reply.text.lines() {
            text.push_str(l);
            text.push_str("\r\n");
        }
        out.write_all(text.as_bytes())?;
        if let Some(p) = &reply.push {
            shared.push(config.kind, p);
        }
        if let Some(l) = reply.later {
            later.push((Instant::now() + LATER, l));
        }
        if reply.stop {
            return Ok(true);
        }
    }
}

/// A line of the telnet client (without its line end and telnet negotiation), `None` while
/// none is complete yet; a closed connection is an error.
fn read_line(reader: &mut BufReader<TcpStream>, line: &mut Vec<u8>) -> io::Result<Option<String>> {
    match reader.read_until(b'\n', line) {
        Ok(0) => Err(io::Error::new(io::ErrorKind::UnexpectedEof, "closed")),
        Ok(_) if line.ends_with(b"\n") => {
            let raw = std::mem::take(line);
            // Drop telnet negotiation (a generic client may send some) and the line end.
            let text: Vec<u8> = strip_iac(&raw);
            Ok(Some(
                String::from_utf8_lossy(&text)
                    .trim_end_matches(['\r', '\n'])
                    .to_string(),
            ))
        }
        Ok(_) => Ok(None),
        Err(e)
            if matches!(
                e.kind(),
                io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
            ) =>
        {
            Ok(None)
        }
        Err(e) => Err(e),
    }
}

/// Asks for the password until the client gives it (`true`), fails three times or the server
/// stops (`false`).
fn telnet_login(
    reader: &mut BufReader<TcpStream>,
    out: &mut TcpStream,
    password: &str,
    stop: &AtomicBool,
) -> io::Result<bool> {
    let mut tries = 0;
    let mut line = Vec::new();
    loop {
        if stop.load(Ordering::SeqCst) {
            return Ok(false);
        }
        let Some(pw) = read_line(reader, &mut line)? else {
            continue;
        };
        if pw == password {
            return Ok(true);
        }
        tries += 1;
        if tries >= 3 {
            out.write_all(b"Password incorrect, closing connection.\r\n")?;
            return Ok(false);
        }
        out.write_all(b"Password incorrect, please enter password:\r\n")?;
    }
}

/// `bytes` without telnet negotiation sequences.
fn strip_iac(bytes: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] != 255 {
            out.push(bytes[i]);
            i += 1;
            continue;
        }
        match bytes.get(i + 1) {
            Some(255) => {
                out.push(255);
                i += 2;
            }
            Some(251..=254) => i += 3,
            Some(250) => {
                // Subnegotiation: skip to IAC SE.
                let mut j = i + 2;
                while j + 1 < bytes.len() && !(bytes[j] == 255 && bytes[j + 1] == 240) {
                    j += 1;
                }
                i = j + 2;
            }
            _ => i += 2,
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn mode_names_round_trip() {
        for k in Kind::ALL {
            assert_eq!(Kind::from_name(k.name()), Some(k));
        }
        assert_eq!(Kind::from_name("vanilla"), None);
    }

    #[test]
    fn lossy_pattern_is_seeded_and_does_everything() {
        let fates = |seed| {
            let mut p = Pattern(seed);
            (0..200).map(|_| p.fate()).collect::<Vec<_>>()
        };
        assert_eq!(fates(7), fates(7));
        let f = fates(7);
        for want in [
            Fate::Drop,
            Fate::Duplicate,
            Fate::Delay,
            Fate::Corrupt,
            Fate::Deliver,
        ] {
            assert!(f.contains(&want), "{want:?} never happens");
        }
    }

    #[test]
    fn negotiation_is_stripped() {
        assert_eq!(
            strip_iac(b"\xff\xfd\x01ab\xff\xffc\xff\xfa\x18\x01\xff\xf0d"),
            b"ab\xffcd"
        );
    }
}
