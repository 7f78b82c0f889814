//! `rcon --ping` against a real third-party Minecraft-protocol server (node-minecraft-protocol,
//! installed by tests/peers-status/install.sh), plus failure modes against local stubs.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::PathBuf;
use std::process::{Child, Command, Stdio};

use crate::common::{home, rcon_in, run, stderr, stdout};

/// A running peer server; killed when dropped.
pub(crate) struct Peer {
    child: Child,
    pub(crate) port: u16,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

fn peers_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/peers-status")
}

/// Starts the node-minecraft-protocol peer in `mode`, or returns `None` (with a loud message) when
/// it is not installed (visibly); with RCONSOLE_STRICT=1 a missing peer fails the test.
pub(crate) fn slp_peer(mode: &str, motd: Option<&str>) -> Option<Peer> {
    let installed = peers_dir()
        .join("node_modules/minecraft-protocol/package.json")
        .exists();
    let node = Command::new("node")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !installed || !node {
        crate::common::skip(
            "the status ping peer is not installed (needs node; run tests/peers-status/install.sh)",
        );
        return None;
    }
    let mut cmd = Command::new("node");
    cmd.arg(peers_dir().join("slp-server.js")).arg(mode);
    if let Some(m) = motd {
        cmd.arg(m);
    }
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .spawn()
        .expect("spawn node");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read the peer's port");
    let v: serde_json::Value = serde_json::from_str(&line).expect("peer prints {\"port\": N}");
    let port = v["port"].as_u64().expect("port") as u16;
    Some(Peer { child, port })
}

fn ping(port: u16, extra: &[&str]) -> std::process::Output {
    let home = home();
    let mut cmd = rcon_in(home.path());
    cmd.arg("--ping")
        .arg(format!("127.0.0.1:{port}"))
        .args(extra);
    run(&mut cmd)
}

#[test]
fn ping_real_server_prints_version_players_motd() {
    let Some(peer) = slp_peer("modern", None) else {
        return;
    };
    let out = ping(peer.port, &[]);
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(text.contains("version:   1.20.4 (protocol 765)"), "{text}");
    assert!(text.contains("players:   2/42"), "{text}");
    assert!(text.contains("sample:    Alex, Steve"), "{text}");
    // NO_COLOR: the § codes are removed, not shown.
    assert!(text.contains("motd:      Peer MOTD\n"), "{text}");
    assert!(text.contains("latency:   "), "{text}");
    assert!(!text.contains("legacy"), "{text}");
}

#[test]
fn ping_json_is_the_servers_json_plus_latency() {
    let Some(peer) = slp_peer("modern", None) else {
        return;
    };
    let out = ping(peer.port, &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("valid JSON");
    assert_eq!(v["status"]["version"]["name"], "1.20.4");
    assert_eq!(v["status"]["players"]["max"], 42);
    assert_eq!(v["status"]["description"]["text"], "§aPeer §lMOTD");
    assert_eq!(v["legacy"], false);
    assert!(v["latency_ms"].as_f64().is_some(), "{v}");
    assert_eq!(v["address"], format!("127.0.0.1:{}", peer.port));
}

#[test]
fn ping_renders_chat_component_motd() {
    let component =
        r#"{"text":"Hi ","color":"gold","extra":[{"text":"there","bold":true},"\n2nd line"]}"#;
    let Some(peer) = slp_peer("modern", Some(component)) else {
        return;
    };
    let out = ping(peer.port, &[]);
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        text.contains("motd:      Hi there\n           2nd line\n"),
        "{text}"
    );
}

#[test]
fn ping_legacy_flag_uses_fe01() {
    let Some(peer) = slp_peer("modern", None) else {
        return;
    };
    let out = ping(peer.port, &["--legacy"]);
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        text.contains("answered:  legacy FE 01 ping\n") || text.ends_with("legacy FE 01 ping"),
        "{text}"
    );
    assert!(text.contains("version:   1.20.4 (protocol 765)"), "{text}");
    assert!(text.contains("players:   0/42"), "{text}");
    assert!(text.contains("motd:      Peer MOTD"), "{text}");
}

#[test]
fn ping_falls_back_to_legacy_when_modern_status_is_refused() {
    let Some(peer) = slp_peer("legacy-only", None) else {
        return;
    };
    let out = ping(peer.port, &["--json"]);
    assert!(out.status.success(), "{}", stderr(&out));
    let v: serde_json::Value = serde_json::from_str(&stdout(&out)).expect("valid JSON");
    assert_eq!(v["legacy"], true);
    assert_eq!(v["status"]["version"]["protocol"], 765);
    assert_eq!(v["status"]["players"]["max"], 42);
    assert_eq!(v["status"]["description"], "§aPeer §lMOTD");

    let out = ping(peer.port, &[]);
    assert!(
        stdout(&out).contains("legacy FE 01 ping (the modern ping failed"),
        "{}",
        stdout(&out)
    );
}

#[test]
fn ping_trace_shows_frames() {
    let Some(peer) = slp_peer("modern", None) else {
        return;
    };
    let out = ping(peer.port, &["--trace"]);
    assert!(out.status.success());
    let err = stderr(&out);
    assert!(
        err.contains("sent 19 bytes (frame id=0 len=17, frame id=0 len=2)"),
        "{err}"
    );
    assert!(err.contains("(frame id=1 len=10)"), "{err}");
}

#[test]
fn ping_refused_is_exit_4() {
    let port = {
        let l = TcpListener::bind("127.0.0.1:0").unwrap();
        l.local_addr().unwrap().port()
    };
    let out = ping(port, &[]);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).starts_with("rcon: error: status ping of 127.0.0.1:"));
}

/// A server that accepts and then answers every connection with `reply` (or nothing).
fn stub(reply: &'static [u8]) -> u16 {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut held = Vec::new();
        for mut s in l.incoming().flatten() {
            let mut buf = [0u8; 256];
            let _ = s.read(&mut buf);
            if !reply.is_empty() {
                let _ = s.write_all(reply);
            }
            held.push(s);
        }
    });
    port
}

#[test]
fn ping_silent_server_is_exit_6() {
    let port = stub(b"");
    let out = ping(port, &["-t", "600ms"]);
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(stderr(&out).contains("timed out"), "{}", stderr(&out));
}

#[test]
fn ping_malformed_reply_is_exit_7() {
    // A frame holding the string "abc": not JSON; and not a legacy reply either.
    let port = stub(b"\x05\x00\x03abc");
    let out = ping(port, &["-t", "2s"]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("not valid JSON"), "{err}");
    assert!(err.contains("legacy ping failed too"), "{err}");
}

#[test]
fn ping_oversized_frame_is_refused_before_reading_it() {
    // Claims a 256 MiB frame.
    let port = stub(b"\x80\x80\x80\x80\x01");
    let out = ping(port, &["-t", "2s", "--json"]);
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("exceeds the limit"),
        "{}",
        stderr(&out)
    );
}

/// A DNS server on loopback that answers every query with one SRV record pointing at
/// `target:port` (and "no such name" for anything but SRV).
fn dns_responder(target: &'static str, port: u16) -> u16 {
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let dns_port = socket.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let mut buf = [0u8; 512];
        while let Ok((n, from)) = socket.recv_from(&mut buf) {
            let q = &buf[..n];
            // Header, then the question as sent (name, type, class).
            let mut reply = q.to_vec();
            reply[2] = 0x81;
            reply[3] = 0x80;
            let is_srv = q.len() > 16 && q[n - 4..n - 2] == [0, 33];
            if !is_srv {
                reply[3] = 0x83;
                socket.send_to(&reply, from).unwrap();
                continue;
            }
            reply[7] = 1;
            reply.extend_from_slice(&[0xC0, 12, 0, 33, 0, 1, 0, 0, 1, 44]);
            let mut rdata = vec![0, 5, 0, 10];
            rdata.extend_from_slice(&port.to_be_bytes());
            for label in target.split('.') {
                rdata.push(label.len() as u8);
                rdata.extend_from_slice(label.as_bytes());
            }
            rdata.push(0);
            reply.extend_from_slice(&(rdata.len() as u16).to_be_bytes());
            reply.extend_from_slice(&rdata);
            socket.send_to(&reply, from).unwrap();
        }
    });
    dns_port
}

#[test]
fn ping_without_a_port_follows_the_srv_record() {
    let Some(peer) = slp_peer("modern", None) else {
        return;
    };
    let dns = dns_responder("localhost", peer.port);
    let home = home();
    let out = run(rcon_in(home.path())
        .env("RCON_DNS_SERVER", format!("127.0.0.1:{dns}"))
        .args(["--ping", "mc.example.test"]));
    let text = stdout(&out);
    assert!(out.status.success(), "{text}{}", stderr(&out));
    assert!(
        text.contains(&format!("server:    localhost:{}\n", peer.port)),
        "{text}"
    );
    assert!(
        text.contains("srv:       _minecraft._tcp.mc.example.test\n"),
        "{text}"
    );
    assert!(text.contains("version:   1.20.4 (protocol 765)"), "{text}");

    // With a port, no SRV lookup: the port given is used (nothing listens there: exit 4).
    let closed = std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port();
    let out = run(rcon_in(home.path())
        .env("RCON_DNS_SERVER", format!("127.0.0.1:{dns}"))
        .args(["--ping", &format!("localhost:{closed}")]));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
}
