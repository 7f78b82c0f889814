//! A practice management server that follows vanilla's schema of the version it plays
//! ([`MgmtVersion`]; docs/protocol.md section 9): the documented methods (allowlist, bans,
//! ip_bans, operators, players, server status/save/stop/system_message, server settings, game
//! rules) on in-memory state, `rpc.discover`, and the notifications (players joined/left,
//! server started/stopping/saving/saved, allowlist, operators, bans and ip_bans added/removed,
//! game rule updated), over
//! `wss://` (a certificate and key the caller provides, e.g. generated in a test) or `ws://`.
//! It logs clients in as vanilla does: the secret as `Authorization: Bearer` (the Origin is
//! not looked at), and from 1.21.11 on also the browser's way, the subprotocol
//! `minecraft-v1,SECRET`, for which the Origin must be in the allowed list.
//! Tests and demos only: player joins are simulated with [`MgmtPracticeServer::join`].
//!
//! - `document`: the `rpc.discover` answer of each version.
//! - `rpc`: the JSON-RPC envelope and vanilla's checks of a parameter, with the `data` of
//!   each refusal.
//! - `world`: the state and the methods.
//! - `mods`: the methods and notifications of the server mods it can play beside vanilla's
//!   ([`MgmtPracticeConfig::mods`]): MSMP Enhanced's and MSMP Console's console commands.
//!
//! It listens on TCP, or on Unix on a Unix domain socket ([`MgmtPracticeConfig::unix_socket`],
//! as MSMP Enhanced can), speaking the same WebSocket over it.

mod document;
mod mods;
mod rpc;
mod world;

use std::collections::VecDeque;
use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};
use tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tungstenite::{Message, WebSocket};

pub use document::discover_document;
pub use mods::{LOG_EVENT, LOG_TIME, MgmtMod, extend_document};

/// Which vanilla release the practice server plays: the schema, the game rules and the ways
/// to log in differ (docs/protocol.md section 9).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum MgmtVersion {
    /// 1.21.9 and 1.21.10: game rules named in camelCase (`keepInventory`), every value a
    /// string (`{"key": "keepInventory", "value": "false"}`); the secret only as
    /// `Authorization: Bearer`.
    V1_21_9,
    /// 1.21.11 and later: game rules named by identifier (`minecraft:keep_inventory`) with
    /// typed values (`false`, `3`); the secret as `Authorization: Bearer`, or from a browser as
    /// the subprotocol `minecraft-v1,SECRET` with an allowed Origin.
    #[default]
    V1_21_11,
}

impl MgmtVersion {
    /// The release it plays, as `server/status` names it.
    pub fn name(self) -> &'static str {
        match self {
            MgmtVersion::V1_21_9 => "1.21.10",
            MgmtVersion::V1_21_11 => "1.21.11",
        }
    }
}

/// How the practice server runs.
#[derive(Debug, Clone)]
pub struct MgmtPracticeConfig {
    /// Where to listen (port 0 picks a free one).
    pub bind: SocketAddr,
    /// The secret clients must send.
    pub secret: String,
    /// PEM certificate chain and PEM private key for `wss://`; `None` serves `ws://`.
    pub tls: Option<(Vec<u8>, Vec<u8>)>,
    /// Like `management-server-allowed-origins`: the Origins a browser logging in with the
    /// `minecraft-v1,SECRET` subprotocol (1.21.11 and later) may come from. A client that
    /// sends `Authorization: Bearer` is never refused for its Origin, as on vanilla.
    pub allowed_origins: Vec<String>,
    /// The vanilla release to play.
    pub version: MgmtVersion,
    /// Hold each answer this long before sending it (`rpc.discover`'s excepted, so a client
    /// connects at once), as a slow or busy server would: for tests of what a client does
    /// while it waits (Ctrl-C). The connection goes on meanwhile: notifications are sent, and
    /// a client that leaves, or the server stopping, drops the answers still held.
    pub answer_delay: Option<Duration>,
    /// The server mods played beside vanilla's methods (none by default): their methods in
    /// `rpc.discover` and answered, their notifications sent.
    pub mods: Vec<MgmtMod>,
    /// Listen on this Unix domain socket instead of `bind` (Unix only; elsewhere starting
    /// fails with `Unsupported`). The socket file is created, and removed when the server
    /// stops; its permissions are the system's default for a new file.
    pub unix_socket: Option<std::path::PathBuf>,
}

impl Default for MgmtPracticeConfig {
    fn default() -> Self {
        MgmtPracticeConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            secret: "practice".into(),
            tls: None,
            allowed_origins: Vec::new(),
            version: MgmtVersion::default(),
            answer_delay: None,
            mods: Vec::new(),
            unix_socket: None,
        }
    }
}

struct Hub {
    state: Mutex<world::World>,
    /// The console commands the mods' methods ran, in order.
    commands: Mutex<Vec<String>>,
    /// What they changed, kept from one command to the next.
    game: crate::practice::PracticeGame,
    clients: Mutex<Vec<Sender<String>>>,
    stop: AtomicBool,
    config: MgmtPracticeConfig,
    tls: Option<Arc<rustls::ServerConfig>>,
}

impl Hub {
    /// A hub with no socket, for the unit tests of the message handling.
    #[cfg(test)]
    fn for_test(version: MgmtVersion) -> Hub {
        Hub {
            state: Mutex::new(world::World::default()),
            commands: Mutex::new(Vec::new()),
            game: crate::practice::PracticeGame::default(),
            clients: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            config: MgmtPracticeConfig {
                version,
                ..MgmtPracticeConfig::default()
            },
            tls: None,
        }
    }

    /// The `rpc.discover` answer of the version played, with the mods' methods.
    fn document(&self) -> Value {
        let mut doc = discover_document(self.config.version);
        mods::extend_document(&mut doc, &self.config.mods);
        doc
    }

    fn broadcast(&self, method: &str, params: Option<Value>) {
        self.notify_as(&format!("minecraft:notification/{method}"), params);
    }

    /// Sends a notification under its full name to every connected client.
    fn notify_as(&self, method: &str, params: Option<Value>) {
        let mut m = json!({"jsonrpc": "2.0", "method": method});
        if let Some(p) = params {
            m["params"] = json!([p]);
        }
        let text = m.to_string();
        self.clients
            .lock()
            .expect("clients")
            .retain(|tx| tx.send(text.clone()).is_ok());
    }
}

/// A running practice management server; stops when dropped.
pub struct MgmtPracticeServer {
    addr: SocketAddr,
    shared: Arc<Hub>,
    thread: Option<JoinHandle<()>>,
}

impl MgmtPracticeServer {
    /// Starts listening.
    pub fn start(config: MgmtPracticeConfig) -> io::Result<MgmtPracticeServer> {
        let tls = match &config.tls {
            Some((cert, key)) => Some(Arc::new(server_config(cert, key)?)),
            None => None,
        };
        let (listener, addr) = Listener::bind(&config)?;
        let shared = Arc::new(Hub {
            state: Mutex::new(world::World::default()),
            commands: Mutex::new(Vec::new()),
            game: crate::practice::PracticeGame::default(),
            clients: Mutex::new(Vec::new()),
            stop: AtomicBool::new(false),
            config,
            tls,
        });
        let s = Arc::clone(&shared);
        let thread = std::thread::spawn(move || accept_loop(listener, s));
        Ok(MgmtPracticeServer {
            addr,
            shared,
            thread: Some(thread),
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

    /// Its URL for `rcon --mgmt`: `ws://ADDR` (`wss://` with TLS), or `unix:PATH` on a Unix
    /// domain socket.
    pub fn url(&self) -> String {
        if let Some(path) = &self.shared.config.unix_socket {
            return format!("unix:{}", path.display());
        }
        let scheme = if self.shared.tls.is_some() {
            "wss"
        } else {
            "ws"
        };
        format!("{scheme}://{}", self.addr)
    }

    /// The console commands the mods' methods ran, in order, as sent.
    pub fn commands(&self) -> Vec<String> {
        self.shared.commands.lock().expect("commands").clone()
    }

    /// Writes a console log line: with MSMP Console played, every client gets it as that
    /// mod's `console:notification/log/event` (`level` such as `INFO`, `WARN`, `ERROR`).
    pub fn log(&self, level: &str, message: &str) {
        self.shared.log(level, message);
    }

    /// A player joins: online, and `players/joined` is sent.
    pub fn join(&self, name: &str) {
        let p = world::player(name);
        self.shared
            .state
            .lock()
            .expect("state")
            .online
            .push(p.clone());
        self.shared.broadcast("players/joined", Some(p));
    }

    /// A player leaves: `players/left` is sent.
    pub fn leave(&self, name: &str) {
        let p = world::player(name);
        self.shared
            .state
            .lock()
            .expect("state")
            .online
            .retain(|o| o["name"] != p["name"]);
        self.shared.broadcast("players/left", Some(p));
    }

    /// Sends any notification (`server/started`, ...) to every connected client.
    pub fn notify(&self, method: &str, params: Option<Value>) {
        self.shared.broadcast(method, params);
    }

    /// How many clients are connected now.
    pub fn clients(&self) -> usize {
        let mut c = self.shared.clients.lock().expect("clients");
        // A probe message drops senders whose connection has gone.
        c.retain(|tx| tx.send(String::new()).is_ok());
        c.len()
    }

    /// The texts sent with `server/system_message`, in order.
    pub fn system_messages(&self) -> Vec<String> {
        let st = self.shared.state.lock().expect("state");
        st.messages.iter().map(|(text, _)| text.clone()).collect()
    }

    /// The `overlay` flags of those messages, in order.
    pub fn system_message_overlays(&self) -> Vec<bool> {
        let st = self.shared.state.lock().expect("state");
        st.messages.iter().map(|(_, overlay)| *overlay).collect()
    }

    /// Whether `server/stop` was called (the server then stops listening).
    pub fn stopped(&self) -> bool {
        self.shared.stop.load(Ordering::SeqCst)
    }

    /// Blocks until the server stops (`server/stop`).
    pub fn wait(mut self) {
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }

    /// Stops: `server/stopping` is sent, connections close, the port is freed.
    pub fn shutdown(mut self) {
        self.stop_now();
    }

    fn stop_now(&mut self) {
        if !self.shared.stop.load(Ordering::SeqCst) {
            // Queued before the stop is set: a session that sees the stop has it to send (it
            // was lost when a session checked the flag between the two).
            self.shared.broadcast("server/stopping", None);
            self.shared.stop.store(true, Ordering::SeqCst);
        }
        if let Some(t) = self.thread.take() {
            let _ = t.join();
        }
    }
}

impl Drop for MgmtPracticeServer {
    fn drop(&mut self) {
        self.stop_now();
    }
}

fn server_config(cert: &[u8], key: &[u8]) -> io::Result<rustls::ServerConfig> {
    let bad = |e: String| io::Error::new(io::ErrorKind::InvalidInput, e);
    let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(cert)
        .collect::<Result<_, _>>()
        .map_err(|e| bad(format!("certificate: {e}")))?;
    let key = PrivateKeyDer::from_pem_slice(key).map_err(|e| bad(format!("key: {e}")))?;
    rustls::ServerConfig::builder_with_provider(Arc::new(rustls::crypto::ring::default_provider()))
        .with_safe_default_protocol_versions()
        .map_err(|e| bad(e.to_string()))?
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .map_err(|e| bad(e.to_string()))
}

/// A stream the server accepted: TCP, or a Unix domain socket.
trait Conn: Read + Write + Send + Sync {
    fn set_read_timeout(&self, wait: Option<Duration>) -> io::Result<()>;
    fn try_clone(&self) -> io::Result<Box<dyn Conn>>;
}

impl Conn for TcpStream {
    fn set_read_timeout(&self, wait: Option<Duration>) -> io::Result<()> {
        TcpStream::set_read_timeout(self, wait)
    }
    fn try_clone(&self) -> io::Result<Box<dyn Conn>> {
        Ok(Box::new(TcpStream::try_clone(self)?))
    }
}

#[cfg(unix)]
impl Conn for std::os::unix::net::UnixStream {
    fn set_read_timeout(&self, wait: Option<Duration>) -> io::Result<()> {
        std::os::unix::net::UnixStream::set_read_timeout(self, wait)
    }
    fn try_clone(&self) -> io::Result<Box<dyn Conn>> {
        Ok(Box::new(std::os::unix::net::UnixStream::try_clone(self)?))
    }
}

/// Where the server listens.
enum Listener {
    Tcp(TcpListener),
    #[cfg(unix)]
    Unix(std::os::unix::net::UnixListener, std::path::PathBuf),
}

impl Listener {
    /// Listens where `config` says, without blocking in `accept`; the address (`bind` for a
    /// Unix socket).
    fn bind(config: &MgmtPracticeConfig) -> io::Result<(Listener, SocketAddr)> {
        match &config.unix_socket {
            #[cfg(unix)]
            Some(path) => {
                let l = std::os::unix::net::UnixListener::bind(path)?;
                l.set_nonblocking(true)?;
                Ok((Listener::Unix(l, path.clone()), config.bind))
            }
            #[cfg(not(unix))]
            Some(_) => Err(io::Error::new(
                io::ErrorKind::Unsupported,
                "Unix domain sockets are a Unix feature",
            )),
            None => {
                let l = TcpListener::bind(config.bind)?;
                l.set_nonblocking(true)?;
                let addr = l.local_addr()?;
                Ok((Listener::Tcp(l), addr))
            }
        }
    }

    fn accept(&self) -> io::Result<Box<dyn Conn>> {
        match self {
            Listener::Tcp(l) => {
                let (s, _) = l.accept()?;
                s.set_nonblocking(false)?;
                s.set_nodelay(true)?;
                Ok(Box::new(s))
            }
            #[cfg(unix)]
            Listener::Unix(l, _) => {
                let (s, _) = l.accept()?;
                s.set_nonblocking(false)?;
                Ok(Box::new(s))
            }
        }
    }
}

impl Drop for Listener {
    fn drop(&mut self) {
        #[cfg(unix)]
        if let Listener::Unix(_, path) = self {
            let _ = std::fs::remove_file(path);
        }
    }
}

fn accept_loop(listener: Listener, shared: Arc<Hub>) {
    let mut conns = Vec::new();
    while !shared.stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok(stream) => {
                let s = Arc::clone(&shared);
                conns.push(std::thread::spawn(move || {
                    let _ = serve(stream, s);
                }));
            }
            Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                std::thread::sleep(Duration::from_millis(10));
            }
            Err(_) => std::thread::sleep(Duration::from_millis(10)),
        }
    }
    drop(listener);
    for c in conns {
        let _ = c.join();
    }
}

enum ServerStream {
    Plain(Box<dyn Conn>),
    Tls(Box<rustls::StreamOwned<rustls::ServerConnection, Box<dyn Conn>>>),
}

impl Read for ServerStream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            ServerStream::Plain(s) => s.read(buf),
            ServerStream::Tls(s) => s.read(buf),
        }
    }
}

impl Write for ServerStream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            ServerStream::Plain(s) => s.write(buf),
            ServerStream::Tls(s) => s.write(buf),
        }
    }
    fn flush(&mut self) -> io::Result<()> {
        match self {
            ServerStream::Plain(s) => s.flush(),
            ServerStream::Tls(s) => s.flush(),
        }
    }
}

// tungstenite's handshake callback fixes the large error type.
#[allow(clippy::result_large_err)]
fn serve(stream: Box<dyn Conn>, shared: Arc<Hub>) -> io::Result<()> {
    stream.set_read_timeout(Some(Duration::from_secs(10)))?;
    let tcp = stream.try_clone()?;
    let s = match &shared.tls {
        Some(config) => {
            let conn =
                rustls::ServerConnection::new(Arc::clone(config)).map_err(io::Error::other)?;
            let mut tls = rustls::StreamOwned::new(conn, stream);
            while tls.conn.is_handshaking() {
                tls.conn.complete_io(&mut tls.sock)?;
            }
            ServerStream::Tls(Box::new(tls))
        }
        None => ServerStream::Plain(stream),
    };
    let config = shared.config.clone();
    let check = move |req: &Request, mut resp: Response| -> Result<Response, ErrorResponse> {
        match authorize(&config, req) {
            Ok(protocol) => {
                if let Some(p) = protocol {
                    resp.headers_mut().insert(
                        "Sec-WebSocket-Protocol",
                        tungstenite::http::HeaderValue::from_static(p),
                    );
                }
                Ok(resp)
            }
            Err(why) => {
                // Vanilla's refusal: 401 with a JSON body saying why.
                let body = json!({"error": "Unauthorized", "message": why}).to_string();
                let mut e = ErrorResponse::new(Some(body));
                *e.status_mut() = tungstenite::http::StatusCode::UNAUTHORIZED;
                let h = e.headers_mut();
                h.insert(
                    "Content-Type",
                    tungstenite::http::HeaderValue::from_static("application/json"),
                );
                h.insert(
                    "Connection",
                    tungstenite::http::HeaderValue::from_static("close"),
                );
                Err(e)
            }
        }
    };
    let mut ws = tungstenite::accept_hdr(s, check).map_err(io::Error::other)?;
    let (tx, rx) = mpsc::channel();
    shared.clients.lock().expect("clients").push(tx);
    tcp.set_read_timeout(Some(Duration::from_millis(20)))?;
    let result = session(&mut ws, &shared, &rx);
    let _ = ws.close(None);
    let _ = ws.flush();
    result
}

fn session(
    ws: &mut WebSocket<ServerStream>,
    shared: &Hub,
    rx: &Receiver<String>,
) -> io::Result<()> {
    // Answers held back by `answer_delay`, with when each is due, in order.
    let mut held: VecDeque<(Instant, String)> = VecDeque::new();
    loop {
        // The stop is read before the queue is sent: it is set after its announcement is
        // queued, so a session that sees it sends `server/stopping` first.
        let stopping = shared.stop.load(Ordering::SeqCst);
        send_queued(ws, rx)?;
        if stopping {
            return Ok(());
        }
        while held.front().is_some_and(|(due, _)| *due <= Instant::now()) {
            let (_, reply) = held.pop_front().expect("looked at above");
            ws.send(Message::text(reply)).map_err(io::Error::other)?;
        }
        match ws.read() {
            Ok(Message::Text(t)) => {
                if let Some(reply) = rpc::answer(shared, t.as_str()) {
                    // Notifications the call caused go first, as vanilla sends them.
                    send_queued(ws, rx)?;
                    match shared.config.answer_delay {
                        Some(delay) if !t.as_str().contains("\"rpc.discover\"") => {
                            held.push_back((Instant::now() + delay, reply));
                        }
                        _ => ws.send(Message::text(reply)).map_err(io::Error::other)?,
                    }
                }
            }
            Ok(Message::Close(_)) => return Ok(()),
            Ok(_) => {}
            Err(tungstenite::Error::Io(e))
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) => {}
            Err(e) => return Err(io::Error::other(e)),
        }
    }
}

/// Sends the notifications queued for this client.
fn send_queued(ws: &mut WebSocket<ServerStream>, rx: &Receiver<String>) -> io::Result<()> {
    while let Ok(text) = rx.try_recv() {
        if !text.is_empty() {
            ws.send(Message::text(text)).map_err(io::Error::other)?;
        }
    }
    Ok(())
}

/// Whether a WebSocket upgrade logs in, as vanilla decides (docs/protocol.md section 9): a
/// Bearer secret is checked and nothing else; without one, 1.21.11 and later take the secret
/// from the subprotocol `minecraft-v1,SECRET`, and only then check the Origin. `Ok` carries
/// the subprotocol to answer with; `Err` the message of the 401.
fn authorize(
    config: &MgmtPracticeConfig,
    req: &Request,
) -> Result<Option<&'static str>, &'static str> {
    let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
    let matches = |token: &str| !token.is_empty() && token == config.secret;
    if let Some(token) = header("authorization").and_then(|v| v.strip_prefix("Bearer ")) {
        return if matches(token.trim()) {
            Ok(None)
        } else {
            Err("Invalid API key")
        };
    }
    if config.version == MgmtVersion::V1_21_11
        && let Some(token) =
            header("sec-websocket-protocol").and_then(|v| v.strip_prefix("minecraft-v1,"))
    {
        let origin = header("origin").unwrap_or("");
        if origin.is_empty() || !config.allowed_origins.iter().any(|o| o == origin) {
            return Err("Origin Not Allowed");
        }
        return if matches(token.trim()) {
            Ok(Some("minecraft-v1"))
        } else {
            Err("Invalid API key")
        };
    }
    Err("Missing API key")
}
