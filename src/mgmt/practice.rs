//! A practice management server: the documented methods (allowlist, bans, ip_bans, operators,
//! players, server status/save/stop/system_message, server settings, game rules) on in-memory
//! state, `rpc.discover`, and the notifications (players joined/left, server
//! started/stopping/saving/saved, allowlist added/removed), over `wss://` (a certificate and key
//! the caller provides, e.g. generated in a test) or `ws://`. It checks the bearer secret and,
//! when configured, the `Origin` header like the real server (PROTOCOL.md section 8).
//! Tests and demos only: player joins are simulated with [`MgmtPracticeServer::join`].

use std::io::{self, Read, Write};
use std::net::{SocketAddr, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, Sender};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::Duration;

use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};
use serde_json::{Value, json};
use tungstenite::handshake::server::{ErrorResponse, Request, Response};
use tungstenite::{Message, WebSocket};

/// How the practice server runs.
#[derive(Debug, Clone)]
pub struct MgmtPracticeConfig {
    /// Where to listen (port 0 picks a free one).
    pub bind: SocketAddr,
    /// The bearer secret clients must send.
    pub secret: String,
    /// PEM certificate chain and PEM private key for `wss://`; `None` serves `ws://`.
    pub tls: Option<(Vec<u8>, Vec<u8>)>,
    /// Like `management-server-allowed-origins`: when set, a request whose `Origin` is not in
    /// the list is refused with 401 (an empty list admits nobody); requests without an Origin
    /// header (non-browser clients) are let in, as the real server does.
    pub allowed_origins: Option<Vec<String>>,
}

impl Default for MgmtPracticeConfig {
    fn default() -> Self {
        MgmtPracticeConfig {
            bind: SocketAddr::from(([127, 0, 0, 1], 0)),
            secret: "practice".into(),
            tls: None,
            allowed_origins: None,
        }
    }
}

fn player(name: &str) -> Value {
    // A stable offline-style id from the name (not the real UUID algorithm; stable is enough).
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.to_lowercase().bytes() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    let id = format!(
        "{:08x}-{:04x}-3{:03x}-8{:03x}-{:012x}",
        h >> 32,
        (h >> 16) & 0xffff,
        h & 0xfff,
        (h >> 20) & 0xfff,
        h & 0xffff_ffff_ffff
    );
    json!({"id": id, "name": name})
}

/// The server's world: lists, settings, who is online.
#[derive(Debug)]
struct World {
    allowlist: Vec<Value>,
    bans: Vec<Value>,
    ip_bans: Vec<Value>,
    operators: Vec<Value>,
    online: Vec<Value>,
    difficulty: String,
    motd: String,
    autosave: bool,
    gamerules: Vec<(String, Value)>,
    saves: u64,
    messages: Vec<String>,
}

impl Default for World {
    fn default() -> Self {
        World {
            allowlist: Vec::new(),
            bans: Vec::new(),
            ip_bans: Vec::new(),
            operators: Vec::new(),
            online: Vec::new(),
            difficulty: "normal".into(),
            motd: "A Minecraft Server".into(),
            autosave: true,
            gamerules: vec![
                ("doDaylightCycle".into(), json!(true)),
                ("keepInventory".into(), json!(false)),
                ("randomTickSpeed".into(), json!(3)),
            ],
            saves: 0,
            messages: Vec::new(),
        }
    }
}

struct Hub {
    state: Mutex<World>,
    clients: Mutex<Vec<Sender<String>>>,
    stop: AtomicBool,
    config: MgmtPracticeConfig,
    tls: Option<Arc<rustls::ServerConfig>>,
}

impl Hub {
    fn broadcast(&self, method: &str, params: Option<Value>) {
        let mut m = json!({"jsonrpc": "2.0", "method": format!("minecraft:notification/{method}")});
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
        let listener = TcpListener::bind(config.bind)?;
        listener.set_nonblocking(true)?;
        let addr = listener.local_addr()?;
        let shared = Arc::new(Hub {
            state: Mutex::new(World::default()),
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

    /// A player joins: online, and `players/joined` is sent.
    pub fn join(&self, name: &str) {
        let p = player(name);
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
        let p = player(name);
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

    /// Messages sent with `server/system_message`, in order.
    pub fn system_messages(&self) -> Vec<String> {
        self.shared.state.lock().expect("state").messages.clone()
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
        if !self.shared.stop.swap(true, Ordering::SeqCst) {
            self.shared.broadcast("server/stopping", None);
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

fn accept_loop(listener: TcpListener, shared: Arc<Hub>) {
    let mut conns = Vec::new();
    while !shared.stop.load(Ordering::SeqCst) {
        match listener.accept() {
            Ok((stream, _)) => {
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
    Plain(TcpStream),
    Tls(Box<rustls::StreamOwned<rustls::ServerConnection, TcpStream>>),
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
fn serve(stream: TcpStream, shared: Arc<Hub>) -> io::Result<()> {
    stream.set_nonblocking(false)?;
    stream.set_nodelay(true)?;
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
    let check = move |req: &Request, resp: Response| -> Result<Response, ErrorResponse> {
        let header = |name: &str| req.headers().get(name).and_then(|v| v.to_str().ok());
        let bearer = header("authorization").and_then(|v| v.strip_prefix("Bearer "));
        let protocol = header("sec-websocket-protocol")
            .and_then(|v| v.split(',').map(str::trim).nth(1).map(str::to_string));
        let authorized =
            bearer == Some(config.secret.as_str()) || protocol.as_deref() == Some(&config.secret);
        let origin_ok = match (&config.allowed_origins, header("origin")) {
            (Some(list), Some(origin)) => list.iter().any(|o| o == origin),
            _ => true,
        };
        if authorized && origin_ok {
            Ok(resp)
        } else {
            let mut e = ErrorResponse::new(Some("Unauthorized".into()));
            *e.status_mut() = tungstenite::http::StatusCode::UNAUTHORIZED;
            Err(e)
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
    loop {
        // Notifications queued for this client go out first, so a stop is announced.
        while let Ok(text) = rx.try_recv() {
            if !text.is_empty() {
                ws.send(Message::text(text)).map_err(io::Error::other)?;
            }
        }
        if shared.stop.load(Ordering::SeqCst) {
            return Ok(());
        }
        match ws.read() {
            Ok(Message::Text(t)) => {
                if let Some(reply) = answer(shared, t.as_str()) {
                    ws.send(Message::text(reply)).map_err(io::Error::other)?;
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

fn error(id: &Value, code: i64, message: &str) -> String {
    json!({"jsonrpc": "2.0", "id": id, "error": {"code": code, "message": message}}).to_string()
}

/// Answers one request (`None` for a notification from the client).
fn answer(shared: &Hub, text: &str) -> Option<String> {
    let Ok(req) = serde_json::from_str::<Value>(text) else {
        return Some(error(&Value::Null, -32700, "Parse error"));
    };
    let id = req.get("id").cloned();
    let method = req.get("method").and_then(Value::as_str);
    let (Some(id), Some(method)) = (id, method) else {
        return req.get("id").map(|id| error(id, -32600, "Invalid Request"));
    };
    if req.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Some(error(&id, -32600, "Invalid Request"));
    }
    let doc = discover_document();
    let Some(spec) = doc["methods"]
        .as_array()
        .and_then(|ms| ms.iter().find(|m| m["name"] == method))
        .filter(|_| !method.contains(":notification/"))
    else {
        return Some(error(&id, -32601, "Method not found"));
    };
    // Positional or named params, in the order the schema lists them.
    let names: Vec<&str> = spec["params"]
        .as_array()
        .map(|ps| ps.iter().filter_map(|p| p["name"].as_str()).collect())
        .unwrap_or_default();
    let params: Vec<Value> = match req.get("params") {
        None | Some(Value::Null) => Vec::new(),
        Some(Value::Array(a)) => a.clone(),
        Some(Value::Object(o)) => names
            .iter()
            .map(|n| o.get(*n).cloned().unwrap_or(Value::Null))
            .collect(),
        Some(_) => return Some(error(&id, -32602, "Invalid params")),
    };
    if params.len() > names.len() {
        return Some(error(&id, -32602, "Invalid params: too many"));
    }
    let result = if method == "rpc.discover" {
        Ok(doc.clone())
    } else {
        call(shared, method, &params)
    };
    Some(match result {
        Ok(v) => json!({"jsonrpc": "2.0", "id": id, "result": v}).to_string(),
        Err(message) => error(&id, -32602, &format!("Invalid params: {message}")),
    })
}

fn list_of(params: &[Value], i: usize) -> Result<Vec<Value>, String> {
    match params.get(i) {
        Some(Value::Array(a)) => Ok(a.clone()),
        Some(other) => Err(format!("expected a list, got {other}")),
        None => Err("missing argument".into()),
    }
}

fn name_of(v: &Value) -> Option<String> {
    v.get("name")
        .or_else(|| v.pointer("/player/name"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// A player object filled in from `{"name": ...}` (the id is derived).
fn full_player(v: &Value) -> Result<Value, String> {
    name_of(v)
        .map(|n| player(&n))
        .ok_or_else(|| format!("{v} names no player"))
}

fn call(shared: &Hub, method: &str, params: &[Value]) -> Result<Value, String> {
    let m = method.strip_prefix("minecraft:").unwrap_or(method);
    let mut notes: Vec<(&str, Option<Value>)> = Vec::new();
    let result = {
        let mut st = shared.state.lock().expect("state");
        let st = &mut *st;
        let (list, kind) = match m.split('/').next().unwrap_or("") {
            "allowlist" => (Some(&mut st.allowlist), "player"),
            "bans" => (Some(&mut st.bans), "ban"),
            "ip_bans" => (Some(&mut st.ip_bans), "ip"),
            "operators" => (Some(&mut st.operators), "op"),
            _ => (None, ""),
        };
        let normalize = |v: &Value| -> Result<Value, String> {
            match kind {
                "player" => full_player(v),
                "ban" => Ok(json!({
                    "player": full_player(v.get("player").unwrap_or(v))?,
                    "reason": v.get("reason").cloned().unwrap_or(json!("Banned by an operator.")),
                    "source": v.get("source").cloned().unwrap_or(json!("Server")),
                })),
                "ip" => {
                    let ip = v
                        .get("ip")
                        .and_then(Value::as_str)
                        .ok_or_else(|| format!("{v} has no ip"))?;
                    Ok(
                        json!({"ip": ip, "reason": v.get("reason").cloned().unwrap_or(json!("Banned by an operator.")), "source": "Server"}),
                    )
                }
                _ => Ok(json!({
                    "player": full_player(v.get("player").unwrap_or(v))?,
                    "permissionLevel": v.get("permissionLevel").cloned().unwrap_or(json!(4)),
                    "bypassesPlayerLimit": v.get("bypassesPlayerLimit").cloned().unwrap_or(json!(false)),
                })),
            }
        };
        let key = |v: &Value| -> Value {
            match kind {
                "ip" => v.get("ip").cloned().unwrap_or(v.clone()),
                _ => name_of(v)
                    .map(|n| json!(n.to_lowercase()))
                    .unwrap_or(Value::Null),
            }
        };
        match (list, m.split_once('/').map(|(_, op)| op)) {
            (Some(list), None) => Ok(json!(list)),
            (Some(list), Some("set")) => {
                let items = list_of(params, 0)?
                    .iter()
                    .map(normalize)
                    .collect::<Result<Vec<_>, _>>()?;
                *list = items;
                Ok(json!(list))
            }
            (Some(list), Some("add")) => {
                for item in list_of(params, 0)? {
                    let item = normalize(&item)?;
                    if !list.iter().any(|x| key(x) == key(&item)) {
                        if kind == "player" {
                            notes.push(("allowlist/added", Some(item.clone())));
                        }
                        list.push(item);
                    }
                }
                Ok(json!(list))
            }
            (Some(list), Some("remove")) => {
                for item in list_of(params, 0)? {
                    let k = match (&item, kind) {
                        (Value::String(ip), "ip") => json!(ip),
                        _ => key(&item),
                    };
                    let before = list.len();
                    list.retain(|x| key(x) != k);
                    if kind == "player" && list.len() != before {
                        notes.push(("allowlist/removed", Some(full_player(&item)?)));
                    }
                }
                Ok(json!(list))
            }
            (Some(list), Some("clear")) => {
                list.clear();
                Ok(json!(list))
            }
            (Some(_), Some(op)) => Err(format!("unknown operation {op}")),
            (None, _) => match m {
                "players" => Ok(json!(st.online)),
                "players/kick" => {
                    let mut kicked = Vec::new();
                    for k in list_of(params, 0)? {
                        let name = name_of(&k).ok_or("no player to kick")?;
                        let before = st.online.len();
                        st.online.retain(|o| o["name"] != json!(name));
                        if st.online.len() != before {
                            kicked.push(player(&name));
                            notes.push(("players/left", Some(player(&name))));
                        }
                    }
                    Ok(json!(kicked))
                }
                "server/status" => Ok(json!({
                    "started": true,
                    "players": st.online,
                    "version": {"name": "1.21.10", "protocol": 773},
                })),
                "server/save" => {
                    st.saves += 1;
                    notes.push(("server/saving", None));
                    notes.push(("server/saved", None));
                    Ok(json!(true))
                }
                "server/stop" => {
                    shared.stop.store(true, Ordering::SeqCst);
                    notes.push(("server/stopping", None));
                    Ok(json!(true))
                }
                "server/system_message" => {
                    let msg = params
                        .first()
                        .and_then(|p| p.get("message"))
                        .and_then(Value::as_str)
                        .ok_or("no message")?;
                    st.messages.push(msg.to_string());
                    Ok(json!(true))
                }
                "serversettings/difficulty" => Ok(json!(st.difficulty)),
                "serversettings/difficulty/set" => {
                    let d = params
                        .first()
                        .and_then(Value::as_str)
                        .ok_or("no difficulty")?;
                    if !["peaceful", "easy", "normal", "hard"].contains(&d) {
                        return Err(format!("unknown difficulty {d}"));
                    }
                    st.difficulty = d.to_string();
                    Ok(json!(st.difficulty))
                }
                "serversettings/motd" => Ok(json!(st.motd)),
                "serversettings/motd/set" => {
                    st.motd = params
                        .first()
                        .and_then(Value::as_str)
                        .ok_or("no message")?
                        .to_string();
                    Ok(json!(st.motd))
                }
                "serversettings/autosave" => Ok(json!(st.autosave)),
                "serversettings/autosave/set" => {
                    st.autosave = params
                        .first()
                        .and_then(Value::as_bool)
                        .ok_or("not a boolean")?;
                    Ok(json!(st.autosave))
                }
                "gamerules" => Ok(Value::Array(
                    st.gamerules
                        .iter()
                        .map(|(k, v)| json!({"key": k, "value": v}))
                        .collect(),
                )),
                "gamerules/update" => {
                    let rule = params.first().ok_or("no game rule")?;
                    let k = rule["key"].as_str().ok_or("no key")?;
                    let entry = st
                        .gamerules
                        .iter_mut()
                        .find(|(name, _)| name == k)
                        .ok_or_else(|| format!("unknown game rule {k}"))?;
                    // Values keep their type: "false" for a boolean rule is false.
                    let v = &rule["value"];
                    let typed = match (&entry.1, v.as_str()) {
                        (Value::Bool(_), Some(s)) => {
                            json!(
                                s.parse::<bool>()
                                    .map_err(|_| format!("{s} is not a boolean"))?
                            )
                        }
                        (Value::Number(_), Some(s)) => {
                            json!(
                                s.parse::<i64>()
                                    .map_err(|_| format!("{s} is not an integer"))?
                            )
                        }
                        _ => v.clone(),
                    };
                    entry.1 = typed;
                    Ok(json!({"key": k, "value": entry.1}))
                }
                _ => Err("not implemented by the practice server".into()),
            },
        }
    };
    for (method, params) in notes {
        shared.broadcast(method, params);
    }
    result
}

fn method(name: &str, description: &str, params: Value, result: Value) -> Value {
    json!({"name": name, "description": description, "params": params, "result": {"name": "result", "schema": result}})
}

fn param(name: &str, schema: Value) -> Value {
    json!({"name": name, "required": true, "schema": schema})
}

fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn list(item: Value) -> Value {
    json!({"type": "array", "items": item})
}

/// The practice server's `rpc.discover` answer, in the OpenRPC shape the real server uses.
pub fn discover_document() -> Value {
    let mut methods = vec![method(
        "rpc.discover",
        "The schema of this server",
        json!([]),
        json!({"type": "object"}),
    )];
    for (list_name, item, remove_item) in [
        ("allowlist", r("player"), r("player")),
        ("bans", r("user_ban"), r("player")),
        ("ip_bans", r("incoming_ip_ban"), json!({"type": "string"})),
        ("operators", r("operator"), r("player")),
    ] {
        let stored = if list_name == "ip_bans" {
            r("ip_ban")
        } else {
            item.clone()
        };
        let what = list_name.replace('_', " ");
        methods.push(method(
            &format!("minecraft:{list_name}"),
            &format!("Get the {what}"),
            json!([]),
            list(stored.clone()),
        ));
        for (op, p, desc) in [
            (
                "set",
                Some(param(list_name, list(item.clone()))),
                "Replace the list",
            ),
            ("add", Some(param("add", list(item.clone()))), "Add entries"),
            (
                "remove",
                Some(param("remove", list(remove_item.clone()))),
                "Remove entries",
            ),
            ("clear", None, "Clear the list"),
        ] {
            methods.push(method(
                &format!("minecraft:{list_name}/{op}"),
                &format!("{desc} ({what})"),
                Value::Array(p.into_iter().collect()),
                list(stored.clone()),
            ));
        }
    }
    methods.extend([
        method(
            "minecraft:players",
            "Get all connected players",
            json!([]),
            list(r("player")),
        ),
        method(
            "minecraft:players/kick",
            "Kick players",
            json!([param("kick", list(r("kick_player")))]),
            list(r("player")),
        ),
        method(
            "minecraft:server/status",
            "Get server status",
            json!([]),
            r("server_state"),
        ),
        method(
            "minecraft:server/save",
            "Save server state",
            json!([{"name": "flush", "schema": {"type": "boolean"}}]),
            json!({"type": "boolean"}),
        ),
        method(
            "minecraft:server/stop",
            "Stop server",
            json!([]),
            json!({"type": "boolean"}),
        ),
        method(
            "minecraft:server/system_message",
            "Send a system message",
            json!([param("message", r("system_message"))]),
            json!({"type": "boolean"}),
        ),
        method(
            "minecraft:serversettings/difficulty",
            "Get the difficulty",
            json!([]),
            json!({"type": "string"}),
        ),
        method(
            "minecraft:serversettings/difficulty/set",
            "Set the difficulty",
            json!([param(
                "difficulty",
                json!({"type": "string", "enum": ["peaceful", "easy", "normal", "hard"]})
            )]),
            json!({"type": "string"}),
        ),
        method(
            "minecraft:serversettings/motd",
            "Get the message of the day",
            json!([]),
            json!({"type": "string"}),
        ),
        method(
            "minecraft:serversettings/motd/set",
            "Set the message of the day",
            json!([param("message", json!({"type": "string"}))]),
            json!({"type": "string"}),
        ),
        method(
            "minecraft:serversettings/autosave",
            "Whether the world is saved automatically",
            json!([]),
            json!({"type": "boolean"}),
        ),
        method(
            "minecraft:serversettings/autosave/set",
            "Turn automatic saving on or off",
            json!([param("enable", json!({"type": "boolean"}))]),
            json!({"type": "boolean"}),
        ),
        method(
            "minecraft:gamerules",
            "Get the game rules",
            json!([]),
            list(r("typed_rule")),
        ),
        method(
            "minecraft:gamerules/update",
            "Update a game rule",
            json!([param("gamerule", r("untyped_rule"))]),
            r("typed_rule"),
        ),
    ]);
    for (name, desc, p) in [
        ("players/joined", "A player joined", Some(r("player"))),
        ("players/left", "A player left", Some(r("player"))),
        ("server/started", "The server started", None),
        ("server/stopping", "The server is stopping", None),
        ("server/saving", "The server is saving", None),
        ("server/saved", "The server saved", None),
        (
            "allowlist/added",
            "A player was added to the allowlist",
            Some(r("player")),
        ),
        (
            "allowlist/removed",
            "A player was removed from the allowlist",
            Some(r("player")),
        ),
    ] {
        let params = p
            .map(|s| vec![json!({"name": "player", "schema": s})])
            .unwrap_or_default();
        methods.push(json!({"name": format!("minecraft:notification/{name}"), "description": desc, "params": params}));
    }
    let s = |v: Value| v;
    json!({
        "openrpc": "1.3.2",
        "info": {"title": "Minecraft Server JSON-RPC (rconsole practice server)", "version": "1.0.0"},
        "methods": methods,
        "components": {"schemas": {
            "player": s(json!({"type": "object", "properties": {"id": {"type": "string"}, "name": {"type": "string"}}})),
            "user_ban": s(json!({"type": "object", "required": ["player"], "properties": {"player": r("player"), "reason": {"type": "string"}, "source": {"type": "string"}, "expires": {"type": "string"}}})),
            "incoming_ip_ban": s(json!({"type": "object", "required": ["ip"], "properties": {"ip": {"type": "string"}, "player": r("player"), "reason": {"type": "string"}, "source": {"type": "string"}, "expires": {"type": "string"}}})),
            "ip_ban": s(json!({"type": "object", "properties": {"ip": {"type": "string"}, "reason": {"type": "string"}, "source": {"type": "string"}, "expires": {"type": "string"}}})),
            "operator": s(json!({"type": "object", "required": ["player"], "properties": {"player": r("player"), "permissionLevel": {"type": "integer"}, "bypassesPlayerLimit": {"type": "boolean"}}})),
            "kick_player": s(json!({"type": "object", "properties": {"player": r("player"), "message": r("message")}})),
            "message": s(json!({"type": "object", "properties": {"literal": {"type": "string"}, "translatable": {"type": "string"}}})),
            "system_message": s(json!({"type": "object", "required": ["message"], "properties": {"message": {"type": "string"}, "overlay": {"type": "boolean"}, "receivingPlayers": list(r("player"))}})),
            "server_state": s(json!({"type": "object", "properties": {"started": {"type": "boolean"}, "players": list(r("player")), "version": {"type": "object", "properties": {"name": {"type": "string"}, "protocol": {"type": "integer"}}}}})),
            "typed_rule": s(json!({"type": "object", "properties": {"key": {"type": "string"}, "type": {"type": "string"}, "value": {}}})),
            "untyped_rule": s(json!({"type": "object", "properties": {"key": {"type": "string"}, "value": {"type": "string"}}})),
        }},
    })
}
