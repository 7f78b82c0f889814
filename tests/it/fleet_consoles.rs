//! Fan-out of the other consoles (BattlEye over UDP, telnet, WebRCON) and of tunnelled targets
//! on the fleet's event loop: the practice servers sit behind relays in this process that see
//! every connection, so what runs at once is shown by what the server side observes, not by
//! timing. A gate that lets nothing through until more targets are connected than helper
//! threads could ever hold (64) proves the event loop runs them; a relay that holds every
//! answer while it checks whether an earlier connection is still open proves `--parallel 1`.

use std::collections::HashMap;
use std::io::{Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream, UdpSocket};
use std::sync::{Arc, Condvar, Mutex};
use std::thread;
use std::time::Duration;

use rconsole::consoles::practice::Kind;

use crate::common::*;
use crate::consoles_common::{TELNET_GAP, console_server};

/// More targets at once than fan-out's old helper threads (64) could hold.
const MANY: usize = 70;

/// Every client socket a relay accepted, shut down when the relay goes (so a tunnel's
/// leftover reader ends too).
#[derive(Default)]
struct Sockets(Mutex<Vec<TcpStream>>);

impl Sockets {
    fn keep(&self, s: &TcpStream) {
        if let Ok(c) = s.try_clone() {
            self.0.lock().unwrap().push(c);
        }
    }
}

impl Drop for Sockets {
    fn drop(&mut self) {
        for s in self.0.lock().unwrap().iter() {
            let _ = s.shutdown(Shutdown::Both);
        }
    }
}

/// Copies `from` to `to` until the end, then ends `to`'s sending side.
fn pump(mut from: TcpStream, mut to: TcpStream) {
    let mut buf = [0u8; 16 * 1024];
    loop {
        match from.read(&mut buf) {
            Ok(0) | Err(_) => break,
            Ok(n) => {
                if to.write_all(&buf[..n]).is_err() {
                    break;
                }
            }
        }
    }
    let _ = to.shutdown(Shutdown::Write);
}

/// A TCP relay to `upstream` that accepts `gate` connections before it forwards a byte for
/// any of them: targets run one after another would never all get through.
struct TcpGate {
    port: u16,
    _sockets: Arc<Sockets>,
}

impl TcpGate {
    fn start(upstream: u16, gate: usize) -> TcpGate {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let sockets = Arc::new(Sockets::default());
        let kept = Arc::clone(&sockets);
        thread::spawn(move || {
            let mut waiting = Vec::new();
            let mut open = false;
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                kept.keep(&client);
                waiting.push(client);
                if !open && waiting.len() < gate {
                    continue;
                }
                open = true;
                for client in waiting.drain(..) {
                    let server = TcpStream::connect(("127.0.0.1", upstream)).unwrap();
                    let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                    thread::spawn(move || pump(client, server));
                    thread::spawn(move || pump(s2, c2));
                }
            }
        });
        TcpGate {
            port,
            _sockets: sockets,
        }
    }
}

/// A socket of a UDP relay to `upstream` for the client `from`, whose answers go back to it
/// through `relay`.
fn upstream_for(relay: &Arc<UdpSocket>, from: SocketAddr, upstream: u16) -> UdpSocket {
    let up = UdpSocket::bind("127.0.0.1:0").unwrap();
    up.connect(("127.0.0.1", upstream)).unwrap();
    let (reader, back) = (up.try_clone().unwrap(), Arc::clone(relay));
    thread::spawn(move || {
        let mut buf = vec![0u8; 65_536];
        while let Ok(n) = reader.recv(&mut buf) {
            let _ = back.send_to(&buf[..n], from);
        }
    });
    up
}

/// A UDP relay to `upstream` that holds every datagram until `gate` distinct clients have
/// sent one, then forwards everything, both ways.
fn udp_gate(upstream: u16, gate: usize) -> u16 {
    let relay = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = relay.local_addr().unwrap().port();
    thread::spawn(move || {
        let relay = Arc::new(relay);
        let mut clients: HashMap<SocketAddr, UdpSocket> = HashMap::new();
        let mut held: Vec<(SocketAddr, Vec<u8>)> = Vec::new();
        let mut open = false;
        let mut buf = vec![0u8; 65_536];
        loop {
            let Ok((n, from)) = relay.recv_from(&mut buf) else {
                return;
            };
            let datagram = buf[..n].to_vec();
            clients
                .entry(from)
                .or_insert_with(|| upstream_for(&relay, from, upstream));
            if open {
                let _ = clients[&from].send(&datagram);
                continue;
            }
            // A login sent again while held is held once.
            if !held.iter().any(|(f, d)| *f == from && *d == datagram) {
                held.push((from, datagram));
            }
            if clients.len() >= gate {
                open = true;
                for (from, datagram) in held.drain(..) {
                    let _ = clients[&from].send(&datagram);
                }
            }
        }
    });
    port
}

/// `rcon` with `n` targets `t0..tN` at `port`, in `dialect`.
fn fanout(home: &std::path::Path, port: u16, dialect: &str, n: usize) -> std::process::Command {
    let mut cmd = rcon_in(home);
    cmd.env("RCON_PASSWORD", PASSWORD)
        .args(["--dialect", dialect, "-t", "20s"]);
    if dialect == "telnet" {
        cmd.args(["--idle-gap", TELNET_GAP]);
    }
    for i in 0..n {
        cmd.args(["--target", &format!("t{i}=127.0.0.1:{port}")]);
    }
    cmd
}

/// Checks that every target answered `echo NAME`-style commands, in order.
fn assert_each_answered(out: &std::process::Output, n: usize, lines: &[&str]) {
    assert!(out.status.success(), "{}", stderr(out));
    let text = stdout(out);
    for i in 0..n {
        let mine: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with(&format!("[t{i}] ")))
            .collect();
        let want: Vec<String> = lines.iter().map(|l| format!("[t{i}] {l}")).collect();
        assert_eq!(mine, want, "t{i}: {text}");
    }
}

/// By default every target of every dialect is open at once, far past the 64 helper threads
/// that once ran the consoles: each gate lets nothing through until all are connected.
#[test]
fn every_console_dialect_runs_all_targets_at_once() {
    for (kind, dialect) in [
        (Kind::BattlEye, "battleye"),
        (Kind::Telnet, "telnet"),
        (Kind::WebRcon, "webrcon"),
    ] {
        let server = console_server(kind);
        let (port, _gate) = if kind == Kind::BattlEye {
            (udp_gate(server.port(), MANY), None)
        } else {
            let gate = TcpGate::start(server.port(), MANY);
            (gate.port, Some(gate))
        };
        let home = home();
        let out = run(
            fanout(home.path(), port, dialect, MANY).args(["-c", "echo one", "-c", "echo two"])
        );
        assert_each_answered(&out, MANY, &["one", "two"]);
    }
}

/// What the one-at-a-time relay saw.
#[derive(Default)]
struct Watch {
    /// Answers are held (a new connection is being checked).
    frozen: bool,
    /// Per connection: the client has closed it.
    ended: Vec<bool>,
    /// A connection came while an earlier one was still open.
    overlap: bool,
}

/// A TCP relay that, at each new connection, holds every answer and waits for the earlier
/// connections to end. A client run one at a time closed its connection before opening the
/// next, so the wait ends at once; a client that opened two at once is still waiting for an
/// answer on the first, so it never ends it, and the relay writes down an overlap.
struct OneAtATime {
    port: u16,
    watch: Arc<(Mutex<Watch>, Condvar)>,
    _sockets: Arc<Sockets>,
}

impl OneAtATime {
    fn start(upstream: u16) -> OneAtATime {
        let listener = TcpListener::bind("127.0.0.1:0").unwrap();
        let port = listener.local_addr().unwrap().port();
        let watch: Arc<(Mutex<Watch>, Condvar)> = Arc::default();
        let sockets = Arc::new(Sockets::default());
        let (w, kept) = (Arc::clone(&watch), Arc::clone(&sockets));
        thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                kept.keep(&client);
                let (lock, changed) = &*w;
                let index = {
                    let mut state = lock.lock().unwrap();
                    state.frozen = true;
                    let (state, timeout) = changed
                        .wait_timeout_while(state, Duration::from_secs(10), |s| {
                            s.ended.iter().any(|e| !e)
                        })
                        .unwrap();
                    let mut state = state;
                    if timeout.timed_out() {
                        state.overlap = true;
                    }
                    state.frozen = false;
                    state.ended.push(false);
                    changed.notify_all();
                    state.ended.len() - 1
                };
                let server = TcpStream::connect(("127.0.0.1", upstream)).unwrap();
                let (c2, s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
                let up = Arc::clone(&w);
                thread::spawn(move || held_pump(client, server, &up, Some(index)));
                let down = Arc::clone(&w);
                thread::spawn(move || held_pump(s2, c2, &down, None));
            }
        });
        OneAtATime {
            port,
            watch,
            _sockets: sockets,
        }
    }

    fn overlap(&self) -> bool {
        self.watch.0.lock().unwrap().overlap
    }
}

/// Copies `from` to `to`, holding what it read while the relay is frozen; `client`: this is
/// that connection's client side, whose end is written down (and seen even while frozen).
fn held_pump(
    mut from: TcpStream,
    mut to: TcpStream,
    watch: &(Mutex<Watch>, Condvar),
    client: Option<usize>,
) {
    let (lock, changed) = watch;
    let mut pending = Vec::new();
    let mut buf = [0u8; 16 * 1024];
    loop {
        let n = from.read(&mut buf).unwrap_or(0);
        if n == 0 {
            if let Some(i) = client {
                lock.lock().unwrap().ended[i] = true;
                changed.notify_all();
            }
            let state = lock.lock().unwrap();
            drop(changed.wait_while(state, |s| s.frozen).unwrap());
            let _ = to.write_all(&pending);
            let _ = to.shutdown(Shutdown::Write);
            return;
        }
        pending.extend_from_slice(&buf[..n]);
        let state = lock.lock().unwrap();
        if state.frozen && client.is_some() {
            // Keep reading, so that a close after the last bytes is seen.
            continue;
        }
        drop(changed.wait_while(state, |s| s.frozen).unwrap());
        if to.write_all(&pending).is_err() {
            return;
        }
        pending.clear();
    }
}

/// A UDP relay that writes down which client each datagram came from, in order.
fn udp_log(upstream: u16) -> (u16, Arc<Mutex<Vec<SocketAddr>>>) {
    let relay = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = relay.local_addr().unwrap().port();
    let log: Arc<Mutex<Vec<SocketAddr>>> = Arc::default();
    let seen = Arc::clone(&log);
    thread::spawn(move || {
        let relay = Arc::new(relay);
        let mut clients: HashMap<SocketAddr, UdpSocket> = HashMap::new();
        let mut buf = vec![0u8; 65_536];
        loop {
            let Ok((n, from)) = relay.recv_from(&mut buf) else {
                return;
            };
            seen.lock().unwrap().push(from);
            let up = clients
                .entry(from)
                .or_insert_with(|| upstream_for(&relay, from, upstream));
            let _ = up.send(&buf[..n]);
        }
    });
    (port, log)
}

/// `--parallel 1` runs the targets one at a time, for every dialect: no telnet or WebRCON
/// connection opens while an earlier one is still open, and BattlEye's datagrams come from
/// one client after another, never interleaved.
#[test]
fn parallel_one_runs_console_targets_one_at_a_time() {
    const N: usize = 4;
    for (kind, dialect) in [(Kind::Telnet, "telnet"), (Kind::WebRcon, "webrcon")] {
        let server = console_server(kind);
        let relay = OneAtATime::start(server.port());
        let home = home();
        let out = run(fanout(home.path(), relay.port, dialect, N).args([
            "--parallel",
            "1",
            "-c",
            "echo one",
            "-c",
            "echo two",
        ]));
        assert_each_answered(&out, N, &["one", "two"]);
        assert!(
            !relay.overlap(),
            "{dialect}: two connections were open at once"
        );
    }

    let server = console_server(Kind::BattlEye);
    let (port, log) = udp_log(server.port());
    let home = home();
    let out = run(fanout(home.path(), port, "battleye", N).args([
        "--parallel",
        "1",
        "-c",
        "echo one",
        "-c",
        "echo two",
    ]));
    assert_each_answered(&out, N, &["one", "two"]);
    let mut order: Vec<SocketAddr> = log.lock().unwrap().clone();
    order.dedup();
    let mut distinct = order.clone();
    distinct.sort();
    distinct.dedup();
    assert_eq!(
        (order.len(), distinct.len()),
        (N, N),
        "BattlEye clients interleaved: {order:?}"
    );
}

/// The proxy command the tests tunnel through: bash's `/dev/tcp`, as in `ssh.rs`.
#[cfg(unix)]
const PROXY: &str = "exec bash -c 'exec 3<>/dev/tcp/%h/%p; cat <&3 & cat >&3; wait'";

#[cfg(unix)]
fn bash_present() -> bool {
    let present = std::process::Command::new("bash")
        .args(["-c", "true"])
        .status()
        .is_ok();
    if !present {
        skip("bash not installed");
    }
    present
}

#[cfg(unix)]
/// Tunnelled targets run on the event loop too: more proxy commands at once than the 64
/// helper threads that once ran them, every one through the gate, for telnet and WebRCON.
#[test]
fn tunnelled_targets_run_all_at_once_on_the_event_loop() {
    if !bash_present() {
        return;
    }
    for (kind, dialect) in [(Kind::Telnet, "telnet"), (Kind::WebRcon, "webrcon")] {
        let server = console_server(kind);
        let gate = TcpGate::start(server.port(), MANY);
        let home = home();
        let out = run(fanout(home.path(), gate.port, dialect, MANY).args([
            "--proxy-command",
            PROXY,
            "-c",
            "echo through the tunnel",
        ]));
        assert_each_answered(&out, MANY, &["through the tunnel"]);
    }
}

#[cfg(unix)]
/// A tunnel that dies is the transport failure it is, exit 9 with the tunnel's own last
/// words, under every dialect a fan-out runs through one, the WebSocket upgrade it breaks off
/// included.
#[test]
fn a_dead_tunnel_in_a_fanout_is_exit_9_for_every_dialect() {
    // The second closes its output first and exits later: the loop sleeps until the exit
    // (a thread blocked on it wakes the loop), then words the failure the same way.
    let tunnels = [
        "sleep 0.2; echo tunnel gone >&2; exit 3",
        "exec >&-; sleep 0.3; echo tunnel gone >&2; exit 3",
    ];
    for (dialect, tunnel) in ["minecraft", "telnet", "webrcon"]
        .into_iter()
        .flat_map(|d| tunnels.map(|t| (d, t)))
    {
        let home = home();
        let out = run(rcon_in(home.path())
            .env("RCON_PASSWORD", PASSWORD)
            .args(["--dialect", dialect])
            .args(["--proxy-command", tunnel])
            .args([
                "--target",
                "a=game.invalid:1",
                "--target",
                "b=game.invalid:2",
            ])
            .arg("list"));
        assert_eq!(out.status.code(), Some(9), "{dialect}: {}", stderr(&out));
        let err = stderr(&out);
        for name in ["a", "b"] {
            assert!(
                err.contains(&format!(
                    "rcon: error: [{name}] proxy command failed (exit status 3): tunnel gone; 1 command not sent"
                )),
                "{dialect}: {err}"
            );
        }
        assert_eq!(
            err.lines().count(),
            2,
            "one line a server: {dialect}: {err}"
        );
    }
}

/// A proxy command that dies at once, in the platform's shell.
const DEAD_TUNNEL: &str = if cfg!(windows) {
    "echo tunnel gone>&2& exit 3"
} else {
    "echo tunnel gone >&2; exit 3"
};

/// `--retry` tries a tunnel that died before the login again, with the one back-off, for a
/// console dialect too; on every platform (on Windows the tunnel's threads wake the loop with
/// its last words and its exit).
#[test]
fn retry_applies_to_a_tunnel_that_dies_before_the_login() {
    let home = home();
    let out = run(rcon_in(home.path())
        .env("RCON_PASSWORD", PASSWORD)
        .args(["--dialect", "telnet", "--retry", "1"])
        .args(["--proxy-command", DEAD_TUNNEL])
        .args([
            "--target",
            "a=game.invalid:1",
            "--target",
            "b=game.invalid:2",
        ])
        .arg("list"));
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let err = stderr(&out);
    for name in ["a", "b"] {
        assert!(
            err.contains(&format!(
                "[{name}] proxy command failed (exit status 3): tunnel gone; retrying in 200ms"
            )),
            "{err}"
        );
    }
}

/// Tunnelled targets run on the event loop on every platform (on Windows the threads that
/// move a pipe's bytes wake it): a fan-out through a proxy command that is a 7 Days to Die
/// console itself, in the platform's shell (it greets, reads the command, answers, then
/// waits for the client to go), each target answered.
#[test]
fn a_fanout_speaks_through_proxy_commands_on_every_platform() {
    let console = if cfg!(windows) {
        "echo *** Connected with 7DTD server.& set /p c=& echo through the tunnel& set /p c="
    } else {
        "echo '*** Connected with 7DTD server.'; read c; echo through the tunnel; read c"
    };
    let home = home();
    let out = run(rcon_in(home.path())
        .env("RCON_PASSWORD", PASSWORD)
        .args(["--dialect", "telnet", "--idle-gap", "1s", "-t", "20s"])
        .args(["--proxy-command", console])
        .args([
            "--target",
            "a=game.invalid:1",
            "--target",
            "b=game.invalid:2",
        ])
        .args(["-c", "echo through the tunnel"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let mut lines: Vec<&str> = text.lines().map(str::trim_end).collect();
    lines.sort_unstable();
    assert_eq!(lines, ["[a] through the tunnel", "[b] through the tunnel"]);
}

/// SIGTERM (Ctrl-C is the same code) while console targets wait for an answer: the answers
/// already printed stay, each target's command in flight is named, the rest is counted as not
/// sent, for every dialect the event loop runs.
#[cfg(unix)]
#[test]
fn a_signal_mid_console_fan_out_says_what_ran_for_every_dialect() {
    use std::io::BufRead;
    use std::process::Stdio;
    for (kind, dialect) in [
        (Kind::BattlEye, "battleye"),
        (Kind::Telnet, "telnet"),
        (Kind::WebRcon, "webrcon"),
    ] {
        let server = console_server(kind);
        let home = home();
        let mut child = fanout(home.path(), server.port(), dialect, 2)
            .args(["-c", "echo one", "-c", "hang", "-c", "echo three"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut reader = std::io::BufReader::new(child.stdout.take().unwrap());
        let mut seen = Vec::new();
        for _ in 0..2 {
            let mut line = String::new();
            reader.read_line(&mut line).unwrap();
            seen.push(line);
        }
        seen.sort();
        assert_eq!(seen, ["[t0] one\n", "[t1] one\n"], "{dialect}");
        // SAFETY: a signal to a child this test started and has not waited for.
        assert_eq!(
            unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) },
            0
        );
        let mut rest = String::new();
        reader.read_to_string(&mut rest).unwrap();
        let out = wait_with_timeout(child, Duration::from_secs(30));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(143), "{dialect}: {err}");
        assert_eq!(rest, "", "{dialect}: nothing after the first answers");
        assert!(
            err.contains(
                "interrupted by SIGTERM: 2 commands ran on 2 servers, 2 were in flight and \
                 may or may not have run ([t0] 'hang', [t1] 'hang'), 2 not sent"
            ),
            "{dialect}: {err}"
        );
    }
}

/// BattlEye targets waiting out a `--delay` on the event loop keep their sessions: the loop
/// keeps each exchange's clock between commands, so its keep-alives go out and a server that
/// forgets a client silent for 500 ms never forgets one (one login per target).
#[test]
fn battleye_targets_stay_logged_in_through_a_delay() {
    use rconsole::consoles::practice::{ConsoleServer, ConsoleServerConfig};
    use std::sync::atomic::Ordering;
    let server = ConsoleServer::start(ConsoleServerConfig {
        password: PASSWORD.into(),
        kind: Kind::BattlEye,
        expiry: Duration::from_millis(500),
        ..ConsoleServerConfig::default()
    })
    .unwrap();
    let home = home();
    let out = run(fanout(home.path(), server.port(), "battleye", 2)
        .env("RCON_BATTLEYE_KEEPALIVE", "100ms")
        .env("RCON_BATTLEYE_RETRANSMIT", "100ms")
        .args(["--delay", "1200ms", "-c", "echo one", "-c", "echo two"]));
    assert_each_answered(&out, 2, &["one", "two"]);
    let stats = server.stats();
    assert_eq!(stats.logins.load(Ordering::SeqCst), 2, "no second login");
    assert!(stats.keepalives.load(Ordering::SeqCst) >= 4);
}
