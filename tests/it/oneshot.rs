//! One-shot `rcon` against practice servers in each dialect and against misbehaving servers:
//! completeness, order, sentinel handling, exit codes (issue: core).

use std::io::{Read, Write};
use std::net::TcpListener;
use std::time::{Duration, Instant};

use crate::common::*;
use rconsole::practice::{Observed, PracticeMode, sample_text};

#[test]
fn demo_prints_long_reassembled_help() {
    let home = home();
    let out = run(rcon_in(home.path()).args(["--demo", "help"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(text.encode_utf16().count() > 4096, "help spans fragments");
    assert!(text.starts_with("/advancement"));
    assert!(
        text.trim_end()
            .ends_with("/whitelist (add|list|off|on|reload|remove)")
    );
    assert_eq!(
        text.matches('\n').count(),
        1,
        "one newline after the output"
    );
    assert!(
        stderr(&out).is_empty(),
        "nothing on stderr: {}",
        stderr(&out)
    );
}

#[test]
fn two_hundred_commands_in_order_without_disconnects() {
    let server = strict_vanilla();
    let home = home();
    let mut cmd = rcon_for(&server, home.path());
    for i in 0..200 {
        cmd.args(["-c", &format!("echo line {i}")]);
    }
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    let expected: String = (0..200).map(|i| format!("line {i}\n")).collect();
    assert_eq!(stdout(&out), expected);
    assert_eq!(server.violations(), Vec::<String>::new());
    assert_eq!(server.connections(), 1, "one connection, zero reconnects");
    let echoed: Vec<String> = server.commands();
    assert_eq!(echoed.len(), 200);
    // The sentinel is the empty id -2 type-0 packet: once the probe has shown vanilla, short
    // answers need none (vanilla's split rule), so only the probe's goes out.
    let sentinels = server
        .events()
        .into_iter()
        .filter(|e| matches!(e, Observed::Packet { id: -2, kind: 0, body, .. } if body.is_empty()))
        .count();
    assert_eq!(sentinels, 1);
    assert!(!stdout(&out).contains("Unknown request"));
}

#[test]
fn fragment_boundaries_come_back_byte_identical() {
    let server = strict_vanilla();
    let home = home();
    let sizes = [0usize, 1, 4095, 4096, 4097, 8192, 20000, 100000];
    let mut cmd = rcon_for(&server, home.path());
    for n in sizes {
        cmd.args(["-c", &format!("chars {n}")]);
    }
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    let expected: String = sizes.iter().map(|&n| sample_text(n) + "\n").collect();
    assert!(
        stdout(&out) == expected,
        "outputs differ from the expected text"
    );
    assert!(server.violations().is_empty());
    assert_eq!(server.connections(), 1);
}

#[test]
fn source_login_and_trailer_never_leak() {
    let server = server(PracticeMode::Source, Duration::ZERO);
    let home = home();
    let out = run(rcon_for(&server, home.path()).args([
        "-c",
        "chars 20000",
        "-c",
        "echo after",
        "-c",
        "echo",
        "-c",
        "echo last",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("{}\nafter\n\nlast\n", sample_text(20000))
    );
}

#[test]
fn every_sentinel_answer_style_ends_output_cleanly() {
    for mode in [
        PracticeMode::Vanilla,
        PracticeMode::Source,
        PracticeMode::Mirror,
        PracticeMode::MirrorTrailer8,
        PracticeMode::RejectSentinel,
        PracticeMode::ClosesOnNonPositiveId,
    ] {
        let server = server(mode, Duration::ZERO);
        let home = home();
        let out = run(rcon_for(&server, home.path()).args([
            "-c",
            "echo one",
            "-c",
            "chars 9000",
            "-c",
            "list",
            "-c",
            "chars 5",
        ]));
        let name = mode.name();
        assert!(out.status.success(), "{name}: {}", stderr(&out));
        assert_eq!(
            stdout(&out),
            format!(
                "one\n{}\nThere are 0 of a max of 20 players online: \n{}\n",
                sample_text(9000),
                sample_text(5)
            ),
            "{name}"
        );
        assert_eq!(
            server.commands(),
            ["echo one", "chars 9000", "list", "chars 5"],
            "{name}: each command sent once"
        );
        let warnings = stderr(&out).matches("warning").count();
        match mode {
            PracticeMode::RejectSentinel | PracticeMode::ClosesOnNonPositiveId => {
                assert_eq!(warnings, 1, "{name}: warned once: {}", stderr(&out))
            }
            _ => assert_eq!(warnings, 0, "{name}: {}", stderr(&out)),
        }
    }
}

#[test]
fn wrong_password_exits_5_with_one_line() {
    let server = strict_vanilla();
    let home = home();
    let out = run(rcon_for(&server, home.path())
        .env("RCON_PASSWORD", "not-it")
        .arg("list"));
    assert_eq!(out.status.code(), Some(5));
    assert!(out.stdout.is_empty());
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("login refused"), "{err}");
    assert!(!err.contains("not-it"));
}

#[test]
fn closed_port_exits_4() {
    let closed = closed_port();
    let port = closed.port();
    let home = home();
    let out = run(rcon_at(port, home.path()).args(["list"]));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(stderr(&out).contains("cannot connect"), "{}", stderr(&out));
}

/// A server that accepts and reads but never answers.
fn black_hole() -> (u16, std::thread::JoinHandle<()>) {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    let h = std::thread::spawn(move || {
        if let Ok((mut s, _)) = l.accept() {
            let mut buf = [0u8; 1024];
            while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
        }
    });
    (port, h)
}

#[test]
fn silent_server_exits_6_within_the_timeout() {
    let (port, _h) = black_hole();
    let home = home();
    let start = Instant::now();
    let out = run(rcon_at(port, home.path()).args(["-t", "1s", "list"]));
    // Printed, not asserted: a loaded machine can take longer than any bound. The deadline is
    // what ended it (exit 6, "timed out"); a run that never ends fails on `run`'s limit.
    eprintln!("took {:?} with -t 1s", start.elapsed());
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(stderr(&out).contains("timed out"), "{}", stderr(&out));
}

/// Logs in, then answers the command one byte per 100 ms, forever.
#[test]
fn trickling_output_is_bounded_by_the_timeout() {
    let l = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = l.local_addr().unwrap().port();
    // Whether the client left before the whole packet was written (500 s at this pace).
    let server = std::thread::spawn(move || {
        let Ok((mut s, _)) = l.accept() else {
            return false;
        };
        let mut buf = [0u8; 1460];
        let n = s.read(&mut buf).unwrap_or(0);
        if n < 12 {
            return false;
        }
        let id = i32::from_le_bytes(buf[4..8].try_into().unwrap());
        let _ = s.write_all(&rconsole::rcon::packet::encode(id, 2, b""));
        // The probe gets its vanilla answer; the command gets a never-ending packet.
        let _ = s.read(&mut buf);
        let _ = s.write_all(&rconsole::rcon::packet::encode(-2, 0, b"Unknown request 0"));
        let _ = s.read(&mut buf);
        let id = i32::from_le_bytes(buf[4..8].try_into().unwrap_or([0; 4]));
        let mut packet = rconsole::rcon::packet::encode(id, 0, &[b'x'; 5000]);
        packet.truncate(5000);
        for b in packet {
            if s.write_all(&[b]).is_err() {
                return true;
            }
            std::thread::sleep(Duration::from_millis(100));
        }
        false
    });
    let home = home();
    let start = Instant::now();
    let out = run(rcon_at(port, home.path()).args(["-t", "1500ms", "list"]));
    // Printed, not asserted: a loaded machine can take longer than any bound. What bounds the
    // wait is the deadline for the whole output (exit 6) while the server still trickles.
    eprintln!("took {:?} with -t 1500ms", start.elapsed());
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("waiting for the rest of the output"),
        "{}",
        stderr(&out)
    );
    assert!(server.join().unwrap(), "rcon waited for the whole packet");
}

#[test]
fn close_mid_response_exits_7_and_says_incomplete() {
    let server = strict_vanilla();
    let home = home();
    let out = run(rcon_for(&server, home.path()).args([
        "-c",
        "echo first",
        "-c",
        "drop 20000",
        "-c",
        "echo never",
    ]));
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("incomplete"), "{err}");
    assert!(err.contains("1 later command not sent"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // What did arrive is kept: the first command's output and the first fragment of the second.
    let text = stdout(&out);
    assert!(text.starts_with("first\n"));
    assert_eq!(text.len(), "first\n".len() + sample_text(4096).len() + 1);
    assert_eq!(server.commands(), ["echo first", "drop 20000"]);
}

#[test]
fn overlong_command_exits_8_and_nothing_is_sent() {
    let server = strict_vanilla();
    let home = home();
    let long = format!("say {}", "x".repeat(1443)); // 1447 bytes
    let out = run(rcon_for(&server, home.path()).args(["-c", "list", "-c", &long]));
    assert_eq!(out.status.code(), Some(8), "{}", stderr(&out));
    assert!(stderr(&out).contains("1447"), "{}", stderr(&out));
    assert!(stderr(&out).contains("1446"), "{}", stderr(&out));
    assert!(out.stdout.is_empty());
    assert_eq!(server.connections(), 0, "the server receives nothing");

    // 1446 bytes is sent, with one warning about small-MTU links (docs/protocol.md section 2).
    let ok = format!("say {}", "x".repeat(1442));
    let out = run(rcon_for(&server, home.path()).args(["-c", &ok, "-c", &ok]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.commands(), [ok.clone(), ok]);
    let err = stderr(&out);
    assert_eq!(err.matches("small MTU").count(), 1, "{err}");
    assert!(err.contains("1446 bytes"), "{err}");

    // Up to 1386 bytes: no warning.
    let short = format!("say {}", "x".repeat(1382));
    let out = run(rcon_for(&server, home.path()).arg(&short));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

#[test]
fn trailing_words_form_one_command_hyphens_included() {
    let server = strict_vanilla();
    let home = home();
    let out = run(rcon_for(&server, home.path()).args(["tp", "@p", "0", "-60", "0"]));
    // One command, which vanilla runs: nobody is online to be teleported.
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "No entity was found\n");
    assert_eq!(server.commands(), ["tp @p 0 -60 0"]);
}

#[test]
fn host_with_port_and_ipv6_forms() {
    let server = strict_vanilla();
    let home = home();
    let out = run(rcon_in(home.path()).env("RCON_PASSWORD", PASSWORD).args([
        "-H",
        &format!("127.0.0.1:{}", server.port()),
        "list",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));

    if let Ok(l) = TcpListener::bind("[::1]:0") {
        drop(l);
        let v6 = rconsole::practice::PracticeServer::start(rconsole::practice::PracticeConfig {
            bind: "[::1]:0".parse().unwrap(),
            password: PASSWORD.into(),
            ..Default::default()
        })
        .unwrap();
        let out = run(rcon_in(home.path()).env("RCON_PASSWORD", PASSWORD).args([
            "-H",
            &format!("[::1]:{}", v6.port()),
            "echo v6",
        ]));
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stdout(&out), "v6\n");
    }
}

#[test]
fn stop_closes_the_connection_at_once() {
    let server = strict_vanilla();
    let home = home();
    let out = run(rcon_for(&server, home.path()).arg("stop"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Stopping the server\n");
    // No sentinel after stop: the last packet the server saw is the command.
    let last = server
        .events()
        .into_iter()
        .rfind(|e| matches!(e, Observed::Packet { .. }));
    assert!(
        matches!(last, Some(Observed::Packet { kind: 2, ref body, .. }) if body == "stop"),
        "{last:?}"
    );
}

/// `--demo` with a live or timed mode is a usage error naming both flags, never a run that
/// silently drops the mode (or, for BattlEye's --follow, opens the console instead).
#[test]
fn demo_refuses_live_and_timed_modes_by_name() {
    let home = home();
    for (args, flag) in [
        (&["--every", "1s", "list"][..], "--every"),
        (&["--countdown", "10s", "--then", "stop"], "--countdown"),
        (&["--if", "players < 5", "list"], "--if"),
        (&["--follow"], "--follow"),
        (&["--dialect", "battleye", "--follow"], "--follow"),
    ] {
        let out = run(rcon_in(home.path()).arg("--demo").args(args));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.contains("--demo") && err.contains(flag),
            "{args:?}: {err}"
        );
        assert_eq!(err.lines().count(), 1, "{err}");
        assert_eq!(stdout(&out), "", "{args:?}");
    }
}
