//! `rcon --query` against a UDP responder that follows the vanilla server's query code
//! (RemoteStatusListener): per-address challenge tokens, requests with a wrong or expired token
//! get no reply, 15-byte requests get the full stat.
//!
//! No installable third-party server speaks Query here (see docs/reach.md), so the responder is
//! written in this test; a third-party client (PyPI `mcstatus`) cross-checks it.

use std::collections::HashMap;
use std::net::{SocketAddr, UdpSocket};
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};

use crate::common::{home, rcon_in, run, stderr, stdout};

#[derive(Default)]
struct Seen {
    handshakes: AtomicUsize,
    stats: AtomicUsize,
}

/// Starts the responder; `drop_first_stat` makes the first token "expire" before it is used.
fn responder(drop_first_stat: bool) -> (u16, Arc<Seen>) {
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = socket.local_addr().unwrap().port();
    let seen = Arc::new(Seen::default());
    let seen2 = seen.clone();
    std::thread::spawn(move || {
        let tokens: Mutex<HashMap<SocketAddr, i32>> = Mutex::default();
        let mut next_token = 9_513_307;
        let mut buf = [0u8; 1460];
        loop {
            let Ok((n, from)) = socket.recv_from(&mut buf) else {
                return;
            };
            let p = &buf[..n];
            if n < 7 || p[0] != 0xfe || p[1] != 0xfd {
                continue;
            }
            let session = &p[3..7];
            match p[2] {
                9 => {
                    seen2.handshakes.fetch_add(1, Ordering::SeqCst);
                    next_token += 1;
                    tokens.lock().unwrap().insert(from, next_token);
                    let mut reply = vec![9];
                    reply.extend_from_slice(session);
                    reply.extend_from_slice(format!("{next_token}\0").as_bytes());
                    socket.send_to(&reply, from).unwrap();
                }
                0 if n >= 11 => {
                    let count = seen2.stats.fetch_add(1, Ordering::SeqCst);
                    let token = i32::from_be_bytes([p[7], p[8], p[9], p[10]]);
                    if tokens.lock().unwrap().get(&from) != Some(&token) {
                        continue;
                    }
                    if drop_first_stat && count == 0 {
                        // The token expired: vanilla sends nothing at all.
                        tokens.lock().unwrap().remove(&from);
                        continue;
                    }
                    let mut reply = vec![0];
                    reply.extend_from_slice(session);
                    if n == 15 {
                        reply.extend_from_slice(b"splitnum\0\x80\0");
                        for (k, v) in [
                            ("hostname", "A \u{a7}aQuery\u{a7}r Server"),
                            ("gametype", "SMP"),
                            ("game_id", "MINECRAFT"),
                            ("version", "1.20.4"),
                            (
                                "plugins",
                                "Paper on 1.20.4: WorldEdit 7.2.15; Essentials 2.20.1",
                            ),
                            ("map", "world"),
                            ("numplayers", "2"),
                            ("maxplayers", "20"),
                            ("hostport", "25565"),
                            ("hostip", "127.0.0.1"),
                        ] {
                            // Latin-1, as the server writes it.
                            reply.extend(k.chars().map(|c| c as u8));
                            reply.push(0);
                            reply.extend(v.chars().map(|c| c as u8));
                            reply.push(0);
                        }
                        reply.push(0);
                        reply.extend_from_slice(b"\x01player_\0\0Alex\0Steve\0\0");
                    } else {
                        reply.extend_from_slice(
                            b"A \xa7aQuery\xa7r Server\0SMP\0world\x002\x0020\0",
                        );
                        reply.extend_from_slice(&25565u16.to_le_bytes());
                        reply.extend_from_slice(b"127.0.0.1\0");
                    }
                    socket.send_to(&reply, from).unwrap();
                }
                _ => {}
            }
        }
    });
    (port, seen)
}

fn query(port: u16, extra: &[&str]) -> std::process::Output {
    let home = home();
    let mut cmd = rcon_in(home.path());
    cmd.arg("--query")
        .arg(format!("127.0.0.1:{port}"))
        .args(extra);
    run(&mut cmd)
}

#[test]
fn basic_stat() {
    let (port, seen) = responder(false);
    let out = query(port, &[]);
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.contains("motd:      A Query Server\n"), "{text}");
    assert!(text.contains("game type: SMP\n"), "{text}");
    assert!(text.contains("map:       world\n"), "{text}");
    assert!(text.contains("players:   2/20\n"), "{text}");
    assert!(text.contains("host:      127.0.0.1:25565\n"), "{text}");
    assert_eq!(seen.handshakes.load(Ordering::SeqCst), 1);
}

#[test]
fn full_stat_with_players_and_plugins() {
    let (port, _) = responder(false);
    let out = query(port, &["--full"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.contains("version:   1.20.4\n"), "{text}");
    assert!(text.contains("software:  Paper on 1.20.4\n"), "{text}");
    assert!(
        text.contains("plugins:   WorldEdit 7.2.15, Essentials 2.20.1\n"),
        "{text}"
    );
    assert!(text.contains("online:    Alex, Steve\n"), "{text}");
    assert!(text.contains("players:   2/20\n"), "{text}");

    let out = query(port, &["--full", "--json"]);
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(v["players"], serde_json::json!(["Alex", "Steve"]));
    assert_eq!(v["fields"]["hostname"], "A §aQuery§r Server");
    assert_eq!(v["plugins"][1], "Essentials 2.20.1");
}

#[test]
fn expired_token_is_retried_once_with_a_new_handshake() {
    let (port, seen) = responder(true);
    let out = query(port, &["-t", "3s", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("JSON");
    assert_eq!(v["map"], "world");
    assert_eq!(seen.handshakes.load(Ordering::SeqCst), 2);
    assert_eq!(seen.stats.load(Ordering::SeqCst), 2);
}

#[test]
fn silent_server_times_out_with_exit_6_after_two_handshakes() {
    // Bound but never answering, like a server with enable-query=false behind a firewall.
    let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = socket.local_addr().unwrap().port();
    let out = query(port, &["-t", "600ms"]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(stderr(&out).contains("enable-query"), "{}", stderr(&out));
    let mut buf = [0u8; 64];
    socket.set_nonblocking(true).unwrap();
    let mut handshakes = 0;
    while let Ok(n) = socket.recv(&mut buf) {
        if n == 7 && buf[2] == 9 {
            handshakes += 1;
        }
    }
    assert_eq!(handshakes, 2);
}

#[cfg(target_os = "linux")]
#[test]
fn closed_port_is_exit_4() {
    // Linux reports the ICMP port-unreachable on loopback as ECONNREFUSED.
    let port = {
        let s = UdpSocket::bind("127.0.0.1:0").unwrap();
        s.local_addr().unwrap().port()
    };
    let out = query(port, &["-t", "2s"]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
}

#[test]
fn trace_names_query_packets() {
    let (port, _) = responder(false);
    let out = query(port, &["-v"]);
    assert!(out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("sent 7 bytes (query handshake, session 0x0"),
        "{err}"
    );
    assert!(err.contains("sent 11 bytes (query basic stat"), "{err}");
}

/// The responder is checked against a third-party client, PyPI `mcstatus` (installed in
/// tests/peers/.venv): what it reads from the responder must be what `rcon --query --full`
/// reads, so the tests above exercise the protocol as real clients and servers speak it.
#[test]
fn mcstatus_reads_the_responder_as_rcon_does() {
    let python =
        std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers/.venv/bin/python");
    if !python.exists() {
        crate::common::skip("mcstatus not installed (run tests/peers/install.sh)");
        return;
    }
    let (port, _) = responder(false);
    let script = "import json, sys\n\
        from mcstatus import JavaServer\n\
        q = JavaServer('127.0.0.1', int(sys.argv[1]), query_port=int(sys.argv[1])).query()\n\
        print(json.dumps({'motd': q.motd.to_plain(), 'online': q.players.online,\n\
        'max': q.players.max, 'names': list(q.players.list), 'version': q.software.version,\n\
        'brand': q.software.brand, 'plugins': list(q.software.plugins), 'map': q.map_name}))\n";
    let out = std::process::Command::new(python)
        .args(["-c", script, &port.to_string()])
        .output()
        .expect("run mcstatus");
    assert!(
        out.status.success(),
        "mcstatus: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let theirs: serde_json::Value = serde_json::from_slice(&out.stdout).expect("mcstatus JSON");

    let out = query(port, &["--full", "--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let ours: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("rcon JSON");
    assert_eq!(theirs["names"], ours["players"]);
    assert_eq!(theirs["plugins"], ours["plugins"]);
    assert_eq!(theirs["brand"], ours["software"]);
    assert_eq!(theirs["version"], ours["fields"]["version"]);
    assert_eq!(theirs["map"], ours["fields"]["map"]);
    assert_eq!(
        theirs["online"].to_string(),
        ours["fields"]["numplayers"].as_str().unwrap()
    );
    assert_eq!(
        theirs["max"].to_string(),
        ours["fields"]["maxplayers"].as_str().unwrap()
    );
    assert_eq!(theirs["motd"], "A Query Server");
}
