//! `rcon --dialect webrcon` against the WebRCON practice server (Rust's JSON over WebSocket):
//! the common console experience, and the password that sits in the URL path kept out of
//! traces, errors and --print-config.

use crate::common::*;
use crate::consoles_common::*;
use rconsole::consoles::practice::Kind;

#[test]
fn webrcon_basics() {
    check_basics(Kind::WebRcon, "webrcon", "[rcon] executing");
}

#[test]
fn the_password_in_the_url_is_never_shown() {
    let server = console_server(Kind::WebRcon);
    let home = home();
    let out = run(rcon_dialect(&server, "webrcon", home.path()).args(["--trace", "echo x"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("|GET /******** HT|"), "{err}");
    assert!(err.contains("password in the path hidden"), "{err}");
    assert!(!err.contains(PASSWORD), "{err}");

    let out = run(rcon_dialect(&server, "webrcon", home.path()).arg("--print-config"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stdout(&out).contains(PASSWORD), "{}", stdout(&out));
    assert!(stdout(&out).contains("webrcon"), "{}", stdout(&out));

    // Nobody listening: the error names the address, not the URL with the password.
    let closed = crate::common::closed_port();
    let port = closed.port();
    let out = run(rcon_at(port, home.path()).args(["--dialect", "webrcon", "echo x"]));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(!stderr(&out).contains(PASSWORD), "{}", stderr(&out));
}

#[test]
fn default_port_is_28016() {
    let home = home();
    let out = run(rcon_in(home.path()).args(["--dialect", "webrcon", "--print-config"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out)
            .lines()
            .any(|l| l.starts_with("port") && l.contains("28016")),
        "{}",
        stdout(&out)
    );
}

/// A server that answers each connection's first request with `answer`, then closes it.
fn http_answering(answer: &'static str) -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            std::thread::spawn(move || {
                let (mut got, mut buf) = (Vec::new(), [0u8; 1024]);
                while !got.windows(4).any(|w| w == b"\r\n\r\n") {
                    match s.read(&mut buf) {
                        Ok(n @ 1..) => got.extend_from_slice(&buf[..n]),
                        _ => return,
                    }
                }
                let _ = s.write_all(answer.as_bytes());
            });
        }
    });
    port
}

/// `rcon --dialect webrcon` at two targets `a` and `b` on `port`.
fn two_targets(port: u16, home: &std::path::Path) -> std::process::Command {
    let mut cmd = rcon_in(home);
    cmd.env("RCON_PASSWORD", PASSWORD)
        .args(["--dialect", "webrcon", "-t", "2s"]);
    for name in ["a", "b"] {
        cmd.args(["--target", &format!("{name}=127.0.0.1:{port}")]);
    }
    cmd
}

/// A refused or unanswered upgrade reads the same for one server (the console driver) and
/// for several (the event loop): one WebSocket machine under both.
#[test]
fn a_refused_or_unanswered_upgrade_reads_alike_for_one_server_and_several() {
    let refused = http_answering("HTTP/1.1 404 Not Found\r\nContent-Length: 0\r\n\r\n");
    let unanswered = black_hole();
    let cases = [
        (
            refused,
            7,
            "the WebSocket upgrade was refused with HTTP 404 Not Found (is this Rust's WebRCON port, with rcon.web 1?)",
        ),
        (
            unanswered.port(),
            6,
            "timed out after 2s while waiting for the WebSocket upgrade",
        ),
    ];
    let home = home();
    for (port, code, words) in cases {
        let out =
            run(rcon_at(port, home.path()).args(["--dialect", "webrcon", "-t", "2s", "echo x"]));
        assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains(words), "{err}");
        assert!(!err.contains(PASSWORD), "{err}");
        let out = run(two_targets(port, home.path()).arg("echo x"));
        assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
        let err = stderr(&out);
        for name in ["a", "b"] {
            assert!(
                err.lines()
                    .any(|l| l.contains(&format!("[{name}]")) && l.contains(words)),
                "{name}: {err}"
            );
        }
    }
}

/// A WebRCON server that answers every command with `ok` and reports, for each connection,
/// whether the client ended it with a close frame.
fn webrcon_recording_closes() -> (u16, std::sync::mpsc::Receiver<bool>) {
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for s in listener.incoming().flatten() {
            let tx = tx.clone();
            std::thread::spawn(move || {
                let Ok(mut ws) = tungstenite::accept(s) else {
                    return;
                };
                loop {
                    match ws.read() {
                        Ok(tungstenite::Message::Text(t)) => {
                            let req: serde_json::Value = serde_json::from_str(t.as_str()).unwrap();
                            let reply = serde_json::json!({
                                "Identifier": req["Identifier"],
                                "Message": "ok",
                            });
                            let _ = ws.send(tungstenite::Message::text(reply.to_string()));
                        }
                        Ok(tungstenite::Message::Close(_)) => break,
                        Ok(_) => {}
                        Err(_) => return tx.send(false).unwrap_or_default(),
                    }
                }
                let _ = tx.send(true);
            });
        }
    });
    (port, rx)
}

/// A client done with a WebRCON server says goodbye with a close frame, one server or
/// several, as the WebSocket links it replaced did.
#[test]
fn a_finished_session_ends_with_a_close_frame() {
    let (port, closes) = webrcon_recording_closes();
    let home = home();
    let out = run(rcon_at(port, home.path()).args(["--dialect", "webrcon", "echo x"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ok\n");
    let out = run(two_targets(port, home.path()).arg("echo x"));
    assert!(out.status.success(), "{}", stderr(&out));
    for _ in 0..3 {
        let closed = closes.recv_timeout(std::time::Duration::from_secs(30));
        assert_eq!(closed, Ok(true));
    }
}
