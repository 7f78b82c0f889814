//! Shared helpers for the integration tests: the real `rcon` binary with a hermetic
//! environment, and practice servers on free loopback ports.
#![allow(dead_code)]

pub mod link;
pub mod mgmt;
#[cfg(unix)]
pub mod sshd;
pub mod term;

use std::path::Path;
use std::process::{Command, Output, Stdio};
use std::time::Duration;

use rconsole::practice::{PracticeConfig, PracticeMode, PracticeServer};

/// The password every test server uses.
pub const PASSWORD: &str = "hunter2-secret";

/// The `rcon` binary under test: `RCONSOLE_TEST_BIN` when set (a release or static musl build,
/// as .ci/cross.sh tests it), else the one cargo built with these tests.
pub fn rcon_bin() -> std::path::PathBuf {
    std::env::var_os("RCONSOLE_TEST_BIN")
        .filter(|p| !p.is_empty())
        .map(std::path::PathBuf::from)
        .unwrap_or_else(|| env!("CARGO_BIN_EXE_rcon").into())
}

/// The `rcon` binary with no RCON_*/MCRCON_* variables, no colour, and HOME, the XDG
/// directories, `RCON_CONFIG_DIR` and `RCON_DATA_DIR` pointed into `home` so nothing leaks in
/// from (or out to) the real user. (`APPDATA` is set too, but Windows ignores it: the two
/// RCON_* directories are what keep the config, history and learned servers private there.)
pub fn rcon_in(home: &Path) -> Command {
    program_in(&rcon_bin(), home)
}

/// [`rcon_in`] for `program`: rcon under another name (a link made by `--install-links`).
pub fn program_in(program: &Path, home: &Path) -> Command {
    let mut cmd = Command::new(program);
    for (key, _) in std::env::vars() {
        if key.starts_with("RCON_") || key.starts_with("MCRCON_") || key.starts_with("XDG_") {
            cmd.env_remove(key);
        }
    }
    cmd.env("NO_COLOR", "1")
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("config"))
        .env("XDG_DATA_HOME", home.join("data"))
        .env("APPDATA", home.join("appdata"))
        .env("LOCALAPPDATA", home.join("localappdata"))
        .env("RCON_CONFIG_DIR", home.join("config").join("rconsole"))
        .env("RCON_DATA_DIR", home.join("data").join("rconsole"))
        .stdin(Stdio::null());
    cmd
}

/// Whether a missing peer or system tool fails the test instead of skipping it: set
/// `RCONSOLE_STRICT=1` (as `.ci/run` does). Not `CI`, which every hosted CI sets on every OS,
/// including those where a peer cannot be installed.
pub fn strict() -> bool {
    std::env::var_os("RCONSOLE_STRICT").is_some_and(|v| v == "1")
}

/// Skips the rest of a test for a missing peer or tool, visibly: the line goes straight to
/// the terminal (libtest captures `eprintln!`, so a skip would show only on failure), next to
/// the test's `... ok`. In strict mode (`RCONSOLE_STRICT=1`) it fails the test instead.
pub fn skip(what: &str) {
    assert!(
        !strict(),
        "RCONSOLE_STRICT=1 but {what}: .ci/run installs every peer and tool"
    );
    use std::io::Write;
    let _ = writeln!(
        std::io::stderr(),
        "\nSKIPPED: {what} (the test passes without checking; RCONSOLE_STRICT=1 fails instead)"
    );
}

/// A temporary home directory for one test.
pub fn home() -> tempfile::TempDir {
    tempfile::tempdir().expect("temp dir")
}

/// `rcon` pointed at `server` with the test password, in a fresh temporary home.
pub fn rcon_for(server: &PracticeServer, home: &Path) -> Command {
    rcon_at(server.port(), home)
}

/// `rcon` pointed at 127.0.0.1:`port` with the test password (for servers the test scripts
/// itself), in a fresh temporary home.
pub fn rcon_at(port: u16, home: &Path) -> Command {
    let mut cmd = rcon_in(home);
    cmd.args(["-H", "127.0.0.1", "-P", &port.to_string()])
        .env("RCON_PASSWORD", PASSWORD);
    cmd
}

/// How many login packets `server` received: its log of every login attempt (the password is
/// not recorded).
pub fn logins(server: &PracticeServer) -> usize {
    server
        .events()
        .iter()
        .filter(|e| {
            matches!(
                e,
                rconsole::practice::Observed::Packet {
                    kind: rconsole::rcon::packet::TYPE_LOGIN,
                    ..
                }
            )
        })
        .count()
}

/// Starts a practice server in `mode` with `read_delay` before each read, on a [`listener`]
/// (its port can be held before it stops: [`stop_holding`]).
pub fn server(mode: PracticeMode, read_delay: Duration) -> PracticeServer {
    let bind = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    let config = PracticeConfig {
        bind,
        password: PASSWORD.into(),
        mode,
        read_delay,
    };
    PracticeServer::serve(listener(bind), config).expect("start practice server")
}

/// Restarts a practice server in another `mode` on the same port, on its listening socket (so
/// the port is never free for another socket to take meanwhile).
pub fn swap(mut old: PracticeServer, mode: PracticeMode, read_delay: Duration) -> PracticeServer {
    old.restart(PracticeConfig {
        password: PASSWORD.into(),
        mode,
        read_delay,
        ..PracticeConfig::default()
    })
    .expect("the server restarts on its listening socket")
}

/// A strict vanilla server that delays each read by 2 ms, so a client that sends two packets
/// back to back is caught.
pub fn strict_vanilla() -> PracticeServer {
    server(PracticeMode::Vanilla, Duration::from_millis(2))
}

/// Strict vanilla's settings on `bind`, for a server a test stops and starts again there
/// ([`restartable_vanilla`], [`stop_holding`]).
pub fn vanilla_config(bind: std::net::SocketAddr) -> rconsole::practice::PracticeConfig {
    rconsole::practice::PracticeConfig {
        bind,
        password: PASSWORD.into(),
        mode: PracticeMode::Vanilla,
        read_delay: Duration::from_millis(2),
    }
}

/// Strict vanilla on a [`listener`] at `bind` (port 0: a free one), so a test can stop it and
/// start it again on the same address.
pub fn restartable_vanilla(bind: std::net::SocketAddr) -> PracticeServer {
    PracticeServer::serve(listener(bind), vanilla_config(bind)).expect("start practice server")
}

/// `cmd` (its program, arguments and environment) run by `sh` after `ulimit LIMIT`, so the
/// binary under test meets a lower descriptor or memory limit than the test's own.
#[cfg(unix)]
pub fn under_ulimit(cmd: &Command, limit: &str) -> Command {
    let mut sh = Command::new("sh");
    sh.arg("-c")
        .arg(format!("ulimit {limit} && exec \"$0\" \"$@\""))
        .arg(cmd.get_program())
        .args(cmd.get_args())
        .stdin(Stdio::null());
    copy_env(cmd, &mut sh);
    sh
}

/// Gives `to` the environment changes made on `from` (what it sets and what it removes).
pub fn copy_env(from: &Command, to: &mut Command) {
    for (key, value) in from.get_envs() {
        match value {
            Some(v) => to.env(key, v),
            None => to.env_remove(key),
        };
    }
}

/// A `--targets` file (in `home`) of `count` servers `s0`, `s1`, ... that are all the one on
/// `port`: a large group without a server each.
#[cfg(unix)]
pub fn same_server_inventory(home: &Path, count: usize, port: u16) -> String {
    let mut text = String::from("name,host,port\n");
    for i in 0..count {
        text.push_str(&format!("s{i},127.0.0.1,{port}\n"));
    }
    let path = home.join("fleet.csv");
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// Runs a command to completion, with a guard against hangs. The guard is generous (a hang is
/// forever, not minutes): a 50 MB answer under Wine on a loaded 2-core machine took over 60 s.
pub fn run(cmd: &mut Command) -> Output {
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rcon");
    wait_with_timeout(child, Duration::from_secs(300))
}

/// Waits for a child, killing it (and failing the test) if it runs past `limit`.
pub fn wait_with_timeout(child: std::process::Child, limit: Duration) -> Output {
    let id = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(limit) {
        Ok(out) => out.expect("wait for rcon"),
        Err(_) => {
            kill(id);
            panic!("rcon (pid {id}) did not finish within {limit:?}");
        }
    }
}

fn kill(pid: u32) {
    #[cfg(unix)]
    let _ = Command::new("kill").args(["-9", &pid.to_string()]).status();
    #[cfg(windows)]
    let _ = Command::new("taskkill")
        .args(["/F", "/PID", &pid.to_string()])
        .status();
}

/// Stdout as text.
pub fn stdout(out: &Output) -> String {
    String::from_utf8(out.stdout.clone()).expect("stdout is UTF-8")
}

/// Stderr as text.
/// The keys of a JSON record, sorted: what the one-schema tests compare.
pub fn json_keys(record: &serde_json::Value) -> Vec<String> {
    let mut keys: Vec<String> = record
        .as_object()
        .expect("a JSON object")
        .keys()
        .cloned()
        .collect();
    keys.sort_unstable();
    keys
}

pub fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

/// A third-party server from tests/peers/ (installed by tests/peers/install.sh), stopped on
/// drop.
pub struct Peer {
    child: std::process::Child,
    /// The port it listens on (127.0.0.1).
    pub port: u16,
}

impl Drop for Peer {
    fn drop(&mut self) {
        drop(self.child.stdin.take());
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts a tests/peers/ launcher (`*.py` in the peers' venv, `*.js` with node), or returns
/// `None` after a visible skip note when the peers are not installed (a failure in strict mode,
/// see [`strict`]).
pub fn peer(launcher: &str, password: &str) -> Option<Peer> {
    use std::io::BufRead;
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers");
    let not_installed = || {
        skip(&format!(
            "peer {launcher} not installed (run tests/peers/install.sh)"
        ));
        None
    };
    let (program, installed) = if launcher.ends_with(".py") {
        let py = venv_python(&dir);
        let ok = py.exists();
        (py, ok)
    } else {
        let ok = dir.join("node_modules/.rconsole-stamp").exists();
        (std::path::PathBuf::from("node"), ok)
    };
    if !installed {
        return not_installed();
    }
    let spawned = Command::new(program)
        .arg(dir.join(launcher))
        .args(["--password", password, "--port", "0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn();
    let mut child = match spawned {
        // `node` not on PATH (Wine sees only Windows programs): not installed for this OS.
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return not_installed(),
        other => other.expect("start peer"),
    };
    let mut line = String::new();
    std::io::BufReader::new(child.stdout.take().expect("peer stdout"))
        .read_line(&mut line)
        .expect("read the peer's PORT line");
    let port = line
        .trim()
        .strip_prefix("PORT ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{launcher} printed {line:?} instead of PORT <n>"));
    Some(Peer { child, port })
}

/// The Python of the peers' venv in `dir`, in the venv layout of the OS running the tests
/// (`Scripts\python.exe` on Windows), so a venv installed for Linux is "not installed" for a
/// Windows build run under Wine rather than an ELF program Wine cannot pipe to.
pub fn venv_python(dir: &Path) -> std::path::PathBuf {
    if cfg!(windows) {
        dir.join(".venv").join("Scripts").join("python.exe")
    } else {
        dir.join(".venv").join("bin").join("python")
    }
}

/// `rcon` pointed at a peer with `password`, in a fresh temporary home.
pub fn rcon_peer(peer: &Peer, password: &str, home: &Path) -> Command {
    let mut cmd = rcon_in(home);
    cmd.args(["-H", "127.0.0.1", "-P", &peer.port.to_string()])
        .env("RCON_PASSWORD", password);
    cmd
}

/// N Unicode scalar values of "é€😀a" repeated: what the peers' `long N` answers.
pub fn peer_long(n: usize) -> String {
    "é€😀a".chars().cycle().take(n).collect()
}

/// N letters a-z repeated: what the peers' `along N` answers.
pub fn peer_ascii(n: usize) -> String {
    ('a'..='z').cycle().take(n).collect()
}

/// `/proc/PID/status` of a child once it runs `rcon` (Linux). Until exec the child is a copy of
/// the test process, with its memory and descriptors, so earlier samples would measure the test,
/// not rcon; `None` then, and once the process is gone.
pub fn rcon_status(pid: u32) -> Option<String> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    (status.lines().next()? == "Name:\trcon").then_some(status)
}

/// A loopback port that refuses every connection for as long as this lives: a socket bound to
/// it that never listens. A port bound and then let go can be taken by a listener of a test
/// running beside (the thousand-server fleet test binds a thousand): a "dead" target then
/// reached another test's live server (seen under Wine in CI, failing both tests). Holding the
/// port keeps it ours; [`ClosedPort::listen`] brings a server up on it later.
pub struct ClosedPort {
    socket: socket2::Socket,
    port: u16,
}

impl ClosedPort {
    pub fn port(&self) -> u16 {
        self.port
    }

    pub fn addr(&self) -> std::net::SocketAddr {
        std::net::SocketAddr::from(([127, 0, 0, 1], self.port))
    }

    /// Listens on the port, which was never free meanwhile.
    pub fn listen(self) -> std::net::TcpListener {
        self.socket.listen(128).expect("listen on the held port");
        self.socket.into()
    }

    /// A practice server (test password, `config` otherwise) on the port.
    pub fn serve(self, config: PracticeConfig) -> PracticeServer {
        PracticeServer::serve(self.listen(), config).expect("serve on the held port")
    }
}

/// A server that accepts, reads and never answers; it lives as long as the test process.
pub struct BlackHole {
    port: u16,
    accepted: std::sync::Arc<std::sync::atomic::AtomicUsize>,
}

impl BlackHole {
    pub fn port(&self) -> u16 {
        self.port
    }

    /// How many connections it has accepted.
    pub fn accepted(&self) -> usize {
        self.accepted.load(std::sync::atomic::Ordering::SeqCst)
    }

    /// How many connections it has accepted, once that is at least `n` or ten seconds have
    /// passed (its thread may not have run yet on a loaded machine when a client is done).
    pub fn accepted_at_least(&self, n: usize) -> usize {
        let deadline = std::time::Instant::now() + Duration::from_secs(10);
        while self.accepted() < n && std::time::Instant::now() < deadline {
            std::thread::sleep(Duration::from_millis(10));
        }
        self.accepted()
    }
}

/// A [`BlackHole`] on a free loopback port: each connection is read (and held) until the
/// client closes it.
pub fn black_hole() -> BlackHole {
    use std::io::Read;
    let l = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let accepted = std::sync::Arc::new(std::sync::atomic::AtomicUsize::new(0));
    let count = std::sync::Arc::clone(&accepted);
    std::thread::spawn(move || {
        for mut s in l.incoming().flatten() {
            count.fetch_add(1, std::sync::atomic::Ordering::SeqCst);
            std::thread::spawn(move || {
                let mut buf = [0u8; 1024];
                while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
            });
        }
    });
    BlackHole { port, accepted }
}

/// A port nothing listens on, held for as long as the value lives (see [`ClosedPort`]).
pub fn closed_port() -> ClosedPort {
    hold_port(std::net::SocketAddr::from(([127, 0, 0, 1], 0)))
}

/// The port of a server just stopped, held while it is down (see [`ClosedPort`]): connections
/// are refused as by a stopped server, and no test running beside can take the port before the
/// server comes back on it ([`ClosedPort::serve`], or dropping the hold right before a server of
/// another kind binds the port again). Between the stop and the hold the port is free for an
/// instant; [`stop_holding`] closes that gap for servers on a [`listener`].
pub fn hold_port(addr: std::net::SocketAddr) -> ClosedPort {
    let socket = sharable(addr);
    let port = socket
        .local_addr()
        .expect("the bound address")
        .as_socket()
        .expect("an IP address")
        .port();
    ClosedPort { socket, port }
}

/// A socket bound to `addr` that a [`hold_port`] can share while it listens: SO_REUSEADDR, as
/// std's TcpListener::bind sets on Unix (a stopped server's closed connections may still be in
/// TIME_WAIT on the port), and on Unix SO_REUSEPORT, which lets a second socket of this process
/// bind the port while the first still listens (connections go only to listening sockets).
fn sharable(addr: std::net::SocketAddr) -> socket2::Socket {
    use socket2::{Domain, Socket, Type};
    let socket = Socket::new(Domain::for_address(addr), Type::STREAM, None).expect("a socket");
    #[cfg(unix)]
    {
        socket.set_reuse_address(true).expect("SO_REUSEADDR");
        socket.set_reuse_port(true).expect("SO_REUSEPORT");
    }
    socket
        .bind(&addr.into())
        .unwrap_or_else(|e| panic!("bind {addr}: {e}"));
    socket
}

/// A listening socket on `addr` (port 0: a free one) for a practice server
/// ([`PracticeServer::serve`]) whose port a test will hold while the server is down.
pub fn listener(addr: std::net::SocketAddr) -> std::net::TcpListener {
    let socket = sharable(addr);
    socket.listen(128).expect("listen");
    socket.into()
}

/// Stops a server on a [`listener`] (`stop`) and holds its port while it is down. On Unix the
/// hold is bound first, beside the listening socket, so the port is never free: a test's
/// outgoing connection or another test's listener took it in the instant between a stop and a
/// later hold ("hold 127.0.0.1:35681: Address already in use", once in ten loaded runs).
/// Elsewhere (no SO_REUSEPORT) the hold follows the stop.
pub fn stop_holding(addr: std::net::SocketAddr, stop: impl FnOnce()) -> ClosedPort {
    if cfg!(unix) {
        let held = hold_port(addr);
        stop();
        held
    } else {
        stop();
        hold_port(addr)
    }
}

/// Sends `signal` to the running `rcon`.
#[cfg(unix)]
pub fn signal(child: &std::process::Child, signal: libc::c_int) {
    // SAFETY: sends a signal to a child this test started and has not waited for.
    assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
}

/// Sends each stdout line of `child` as it arrives.
pub fn lines_of(child: &mut std::process::Child) -> std::sync::mpsc::Receiver<String> {
    use std::io::BufRead;
    let stdout = child.stdout.take().expect("stdout piped");
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in std::io::BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    rx
}

/// Runs `cmd` with `input` on its stdin.
pub fn run_with_stdin(cmd: &mut Command, input: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let input = input.to_string();
    // The child may stop reading (a refused --resume): a broken pipe is expected then.
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let out = wait_with_timeout(child, Duration::from_secs(60));
    let _ = writer.join();
    out
}
