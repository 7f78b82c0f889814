//! `rcon --dialect battleye` against the BattlEye practice server (UDP): the common console
//! experience, a lossy network (drops, duplicates, reordering, bad CRCs on a seeded pattern),
//! the Reforger answer stream, keep-alive (scaled down here; the real 45 s on a fake clock in
//! `src/consoles/tests/battleye.rs`), and "no answer at all".

use std::path::Path;
use std::process::{Child, Stdio};
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

/// The pause between the batch's commands: well past [`EXPIRY`], so that a server starved of
/// CPU for a while still notices the silence before the second command arrives.
const DELAY: &str = "1200ms";
/// How long the practice servers keep a silent client (45 s on real servers).
const EXPIRY: Duration = Duration::from_millis(500);

/// The same batch with keep-alives every `keepalive`: two commands `DELAY` apart, with short
/// retransmits (a late keep-alive answer must not leave the client silent either).
fn idle_batch(server: &ConsoleServer, keepalive: &str, timeout: &str, home: &Path) -> Child {
    let file = home.join("two.txt");
    std::fs::write(&file, "count\ncount\n").unwrap();
    rcon_dialect(server, "battleye", home)
        .env("RCON_BATTLEYE_KEEPALIVE", keepalive)
        .env("RCON_BATTLEYE_RETRANSMIT", "100ms")
        .args(["--delay", DELAY, "--timeout", timeout, "-f"])
        .arg(&file)
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rcon")
}

#[test]
fn keepalive_keeps_an_idle_session_logged_in() {
    // Scaled down (the real 45 s runs on a fake clock in src/consoles/tests/battleye.rs), and
    // both runs at once, so the whole test takes about the delay plus one timeout.
    // With keep-alives every 100 ms the client is never silent for the server's 500 ms.
    let kept = expiring_server(EXPIRY);
    // Without them (an interval longer than the run) the same batch fails: the check can fail.
    let dropped = expiring_server(EXPIRY);
    let (home_kept, home_dropped) = (home(), home());
    let with = idle_batch(&kept, "100ms", "3s", home_kept.path());
    let without = idle_batch(&dropped, "60s", "1s", home_dropped.path());
    let (with, without) = (
        wait_with_timeout(with, Duration::from_secs(60)),
        wait_with_timeout(without, Duration::from_secs(60)),
    );

    assert!(with.status.success(), "{}", stderr(&with));
    assert_eq!(stdout(&with), "count 1\ncount 2\n");
    let stats = kept.stats();
    // Never forgotten while it ran (a forgotten client's command goes unanswered), and no
    // second login. (Once the run ends, this server forgets it too.)
    assert_eq!(stats.logins.load(Ordering::SeqCst), 1, "no second login");
    assert!(stats.keepalives.load(Ordering::SeqCst) >= 2);

    // The first command ran; the second went to a server that had forgotten the client.
    assert_eq!(stdout(&without), "count 1\n", "{}", stderr(&without));
    assert_eq!(without.status.code(), Some(6), "{}", stderr(&without));
    assert!(
        stderr(&without).contains("timed out"),
        "{}",
        stderr(&without)
    );
    let stats = dropped.stats();
    assert_eq!(stats.expired.load(Ordering::SeqCst), 1);
    assert_eq!(stats.keepalives.load(Ordering::SeqCst), 0);
}

/// A login starts a new session, as on a real server: a client that reuses an earlier client's
/// address and port (the system hands ephemeral ports out again; this test uses one socket)
/// gets its own answers, not those the server kept for the earlier session's sequence numbers
/// to answer a repeat. (The practice server kept them: a suite run got another run's answers.)
#[test]
fn a_new_login_from_a_reused_address_is_a_new_session() {
    use rconsole::consoles::battleye::{COMMAND, LOGIN, decode, encode};
    let server = console_server(Kind::BattlEye);
    let socket = std::net::UdpSocket::bind("127.0.0.1:0").unwrap();
    socket.connect(server.addr()).unwrap();
    socket
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // The next datagram of `kind` (server messages are skipped), its payload.
    let receive = |kind: u8| -> Vec<u8> {
        let mut buf = [0u8; 2048];
        loop {
            let n = socket.recv(&mut buf).expect("an answer within 10 s");
            let payload = decode(&buf[..n]).expect("a valid datagram");
            if payload.first() == Some(&kind) {
                return payload.to_vec();
            }
        }
    };
    for word in ["first", "second"] {
        let login = [&[LOGIN][..], PASSWORD.as_bytes()].concat();
        socket.send(&encode(&login)).unwrap();
        assert_eq!(receive(LOGIN), [LOGIN, 1], "{word}: the login");
        let command = [&[COMMAND, 0][..], format!("echo {word}").as_bytes()].concat();
        socket.send(&encode(&command)).unwrap();
        let answer = receive(COMMAND);
        assert_eq!(&answer[..2], [COMMAND, 0], "{word}");
        assert_eq!(String::from_utf8_lossy(&answer[2..]), word);
    }
    assert_eq!(server.stats().executed.load(Ordering::SeqCst), 2);
}
