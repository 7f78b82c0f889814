//! `--sentinel auto` against the strict vanilla practice server: a first fragment under 4096
//! bytes ends the output without a sentinel (one round trip), anything longer still gets the
//! sentinel, and nothing is lost or reordered at the boundaries (issue 6, part 5).

use std::time::Duration;

use crate::common::*;
use rconsole::practice::{Observed, PracticeMode, ascii_text, sample_text};

/// Sentinel packets (id -2, type 0, empty) the server received.
fn sentinels(server: &rconsole::practice::PracticeServer) -> usize {
    server
        .events()
        .into_iter()
        .filter(|e| matches!(e, Observed::Packet { id: -2, kind: 0, body, .. } if body.is_empty()))
        .count()
}

#[test]
fn boundaries_are_complete_and_in_order() {
    let server = strict_vanilla();
    let home = home();
    // (command, expected output, whether the first fragment is under 4096 bytes)
    let cases: Vec<(String, String, bool)> = vec![
        ("echo short".into(), "short".into(), true),
        ("ascii 0".into(), String::new(), true),
        // 4095 bytes: the last fragment by vanilla's rule, no sentinel.
        ("ascii 4095".into(), ascii_text(4095), true),
        // Exactly 4096 bytes in one fragment, with no trailer: only the sentinel ends it.
        ("ascii 4096".into(), ascii_text(4096), false),
        ("ascii 4097".into(), ascii_text(4097), false),
        ("ascii 8192".into(), ascii_text(8192), false),
        // Multibyte text: 4096 units are more than 4096 bytes, so the sentinel is sent even
        // for a single fragment; fewer units can also pass 4096 bytes.
        ("chars 2100".into(), sample_text(2100), false),
        ("chars 4095".into(), sample_text(4095), false),
        ("chars 4096".into(), sample_text(4096), false),
        ("chars 20000".into(), sample_text(20000), false),
        ("chars 2000".into(), sample_text(2000), true),
        (
            "list".into(),
            "There are 0 of a max of 20 players online: ".into(),
            true,
        ),
    ];
    let mut cmd = rcon_for(&server, home.path());
    cmd.args(["--sentinel", "auto"]);
    for (c, _, _) in &cases {
        cmd.args(["-c", c]);
    }
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    let expected: String = cases
        .iter()
        .map(|(_, text, _)| format!("{text}\n"))
        .collect();
    assert!(stdout(&out) == expected, "output differs from the expected");
    assert!(stderr(&out).is_empty(), "{}", stderr(&out));
    assert_eq!(server.violations(), Vec::<String>::new());
    assert_eq!(server.connections(), 1, "zero reconnects");
    let long = cases.iter().filter(|(_, _, short)| !short).count();
    assert_eq!(
        sentinels(&server),
        long,
        "one sentinel per long output, no probe"
    );
    for (_, text, short) in &cases {
        assert_eq!(text.len() < 4096, *short, "case table agrees with the rule");
    }
}

#[test]
fn long_streams_of_short_outputs_send_no_sentinel() {
    let server = strict_vanilla();
    let home = home();
    let mut cmd = rcon_for(&server, home.path());
    cmd.args(["--sentinel", "auto"]);
    for i in 0..500 {
        cmd.args(["-c", &format!("echo {i}")]);
    }
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    let expected: String = (0..500).map(|i| format!("{i}\n")).collect();
    assert_eq!(stdout(&out), expected);
    assert_eq!(sentinels(&server), 0);
    assert_eq!(server.commands().len(), 500);
    assert!(server.violations().is_empty());
}

#[test]
fn forge_like_byte_splitting_is_also_safe() {
    // Source mode splits every 4096 bytes like Forge 1.16.3+: a short first fragment is still
    // the last one.
    let server = server(PracticeMode::Source, std::time::Duration::ZERO);
    let home = home();
    let sizes = [1usize, 1365, 1366, 2048, 4096, 9000];
    let mut cmd = rcon_for(&server, home.path());
    cmd.args(["--sentinel", "auto"]);
    for n in sizes {
        cmd.args(["-c", &format!("chars {n}")]);
    }
    cmd.args(["-c", "echo end"]);
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    let expected: String = sizes
        .iter()
        .map(|&n| sample_text(n) + "\n")
        .chain(["end\n".to_string()])
        .collect();
    assert!(stdout(&out) == expected, "output differs from the expected");
}

#[test]
fn default_uses_the_sentinel_only_where_the_server_is_not_known_to_be_vanilla() {
    // Vanilla (probed): the probe's sentinel only; short answers are complete as they come.
    let server = strict_vanilla();
    let home = home();
    let out = run(rcon_for(&server, home.path()).args(["-c", "echo a", "-c", "echo b"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(sentinels(&server), 1);
    // A mirroring server (not vanilla): the probe plus one per command.
    let server = crate::common::server(PracticeMode::Mirror, Duration::ZERO);
    let out = run(rcon_for(&server, home.path()).args(["-c", "echo a", "-c", "echo b"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "a\nb\n");
    assert_eq!(sentinels(&server), 3);
}

/// A server slower than a second to read each packet (a loaded machine): vanilla always
/// answers, and the sentinel that goes out when a command's answer is late waits for four of
/// the slowest round trips seen (here the login's), so it never reaches the server before the
/// command was read. Sent after a fixed second it shared the command's read, and strict vanilla
/// closed the connection ("size field 23 but one read gave 41 bytes").
#[test]
fn a_server_slow_to_read_gets_no_sentinel_in_the_commands_read() {
    let server = server(PracticeMode::Vanilla, Duration::from_millis(1500));
    let home = home();
    let out = run(rcon_for(&server, home.path()).args([
        "--sentinel",
        "auto",
        "-t",
        "20s",
        "-c",
        "echo one",
        "-c",
        "echo two",
    ]));
    assert_eq!(server.violations(), Vec::<String>::new());
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "one\ntwo\n");
    assert_eq!(stderr(&out), "");
    assert_eq!(server.commands(), ["echo one", "echo two"]);
    assert_eq!(server.connections(), 1, "zero reconnects");
    assert_eq!(
        sentinels(&server),
        0,
        "both answers came before the late sentinel"
    );
}
