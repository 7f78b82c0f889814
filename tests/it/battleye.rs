//! `rcon --dialect battleye` against the BattlEye practice server (UDP): the common console
//! experience, a lossy network (drops, duplicates, reordering, bad CRCs on a seeded pattern),
//! the Reforger answer stream, keep-alive (scaled down here; the real 45 s on a fake clock in
//! `src/consoles/battleye.rs`), and "no answer at all".

use std::sync::atomic::Ordering;
use std::time::Duration;

use crate::common::*;
use crate::consoles_common::*;
use rconsole::consoles::practice::{ConsoleServer, ConsoleServerConfig, Kind};

#[test]
fn battleye_basics() {
    check_basics(Kind::BattlEye, "battleye", "(Global) Server:");
}

#[test]
fn lossy_network_still_gives_every_answer_once_and_in_order() {
    let server = console_server(Kind::BattlEyeLossy);
    let home = home();
    let file = home.path().join("cmds.txt");
    let mut script = String::new();
    for i in 0..15 {
        script.push_str("count\n");
        if i % 5 == 0 {
            script.push_str("chars 4000\n");
            script.push_str(&format!("say message {i}\n"));
        }
    }
    script.push_str("echo last\n");
    std::fs::write(&file, &script).unwrap();
    let out = run(rcon_dialect(&server, "battleye", home.path())
        .env("RCON_BATTLEYE_RETRANSMIT", "300ms")
        .args([
            "--messages",
            "--timeout",
            "20s",
            "-f",
            file.to_str().unwrap(),
        ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let mut want = String::new();
    let long = rconsole::practice::sample_text(4000);
    for i in 0..15 {
        want.push_str(&format!("count {}\n", i + 1));
        if i % 5 == 0 {
            want.push_str(&format!("{long}\n\n"));
        }
    }
    want.push_str("last\n");
    assert!(stdout(&out) == want, "answers differ: {}", stdout(&out));
    let stats = server.stats();
    // Every command ran exactly once: 15 counts, 3 chars, 3 says, 1 echo.
    assert_eq!(stats.executed.load(Ordering::SeqCst), 22);
    assert!(
        stats.repeats.load(Ordering::SeqCst) > 0,
        "the pattern made the client retransmit"
    );
    // Every server message was delivered once, and acknowledged.
    let err = stderr(&out);
    for i in [0, 5, 10] {
        let n = err.matches(&format!("Server: message {i}\n")).count();
        assert_eq!(n, 1, "message {i} delivered {n} times: {err}");
    }
    let (sent, acked) = (
        stats.messages.load(Ordering::SeqCst),
        stats.acked.load(Ordering::SeqCst),
    );
    assert_eq!((sent, acked), (3, 3), "{err}");
}

#[test]
fn bad_crc_is_dropped_counted_and_traced() {
    let server = console_server(Kind::BattlEyeLossy);
    let home = home();
    let out = run(rcon_dialect(&server, "battleye", home.path())
        .env("RCON_BATTLEYE_RETRANSMIT", "200ms")
        .args(["--trace", "--timeout", "20s"])
        .args((0..12).flat_map(|_| ["-c", "count"])));
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("dropped: wrong CRC32") && err.contains("with a bad CRC so far"),
        "{err}"
    );
    let want: String = (1..=12).map(|i| format!("count {i}\n")).collect();
    assert_eq!(stdout(&out), want);
}

#[test]
fn reforger_answers_as_server_messages() {
    let server = console_server(Kind::BattlEyeReforger);
    let home = home();
    let out = run(rcon_dialect(&server, "battleye", home.path())
        .env("RCON_BATTLEYE_RETRANSMIT", "300ms")
        .args(["-c", "players", "-c", "count"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "Players on server:\n[#] [IP Address]:[Port] [Ping] [GUID] [Name]\n--------------------------------------------------\n(0 players in total)\ncount 1\n"
    );
    assert!(stderr(&out).contains("Arma Reforger"), "{}", stderr(&out));
    assert_eq!(server.stats().executed.load(Ordering::SeqCst), 2);
}

#[test]
fn no_answer_at_all_is_exit_6_with_a_hint() {
    // A bound UDP socket that never answers.
    let silent = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    let port = silent.local_addr().unwrap().port();
    let home = home();
    let out = run(rcon_at(port, home.path()).args([
        "--dialect",
        "battleye",
        "--timeout",
        "1s",
        "echo x",
    ]));
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("is BattlEye RCon enabled"), "{err}");
    assert!(!err.contains(PASSWORD), "{err}");
}

#[test]
fn default_port_is_2306() {
    let home = home();
    let out = run(rcon_in(home.path()).args(["--dialect", "battleye", "--print-config"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.lines()
            .any(|l| l.starts_with("port") && l.contains("2306")),
        "{text}"
    );
    assert!(text.contains("battleye"), "{text}");
}

/// Logs out a client silent for `expiry`, as real servers do after 45 s.
fn expiring_server(expiry: Duration) -> ConsoleServer {
    ConsoleServer::start(ConsoleServerConfig {
        password: PASSWORD.into(),
        kind: Kind::BattlEye,
        expiry,
        ..ConsoleServerConfig::default()
    })
    .unwrap()
}

#[test]
fn keepalive_keeps_an_idle_session_logged_in() {
    // Scaled down: the server forgets a client after 3 s of silence, the client sends an empty
    // command after 500 ms, and the batch waits 4 s between its commands.
    let server = expiring_server(Duration::from_secs(3));
    let home = home();
    let file = home.path().join("two.txt");
    std::fs::write(&file, "count\ncount\n").unwrap();
    let out = run(rcon_dialect(&server, "battleye", home.path())
        .env("RCON_BATTLEYE_KEEPALIVE", "500ms")
        .args([
            "--delay",
            "4s",
            "--timeout",
            "3s",
            "-f",
            file.to_str().unwrap(),
        ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "count 1\ncount 2\n");
    let stats = server.stats();
    assert_eq!(stats.logins.load(Ordering::SeqCst), 1, "no second login");
    assert!(stats.keepalives.load(Ordering::SeqCst) >= 2);

    // Without keep-alives (interval longer than the server's patience) the same batch fails:
    // the check above can fail.
    let server = expiring_server(Duration::from_secs(3));
    let out = run(rcon_dialect(&server, "battleye", home.path())
        .env("RCON_BATTLEYE_KEEPALIVE", "60s")
        .args([
            "--delay",
            "4s",
            "--timeout",
            "2s",
            "-f",
            file.to_str().unwrap(),
        ]));
    assert!(!out.status.success(), "{}", stdout(&out));
    assert_eq!(server.stats().expired.load(Ordering::SeqCst), 1);
}
