//! `--dialect` end to end against the practice server's Source, Factorio and Palworld modes:
//! complete output for short and long answers, and each dialect's own way of ending output.

use std::time::Duration;

use crate::common::*;
use rconsole::practice::{Observed, PracticeMode, sample_text};

/// Short, empty, ASCII-long and multibyte-long answers, in one session.
const SIZES: [usize; 6] = [0, 1, 4095, 4097, 10_000, 100_000];

fn size_commands(cmd: &mut std::process::Command) -> String {
    cmd.args(["-c", "list", "-c", "echo short answer"]);
    for n in SIZES {
        cmd.args(["-c", &format!("chars {n}")]);
    }
    let mut expected = String::from("There are 0 of a max of 20 players online: \nshort answer\n");
    for n in SIZES {
        expected.push_str(&sample_text(n));
        expected.push('\n');
    }
    expected
}

fn type0_packets(server: &rconsole::practice::PracticeServer) -> usize {
    server
        .events()
        .iter()
        .filter(|e| matches!(e, Observed::Packet { kind: 0, .. }))
        .count()
}

#[test]
fn source_dialect_trusts_the_mirror_and_drops_the_trailer() {
    let server = server(PracticeMode::Source, Duration::ZERO);
    let home = home();
    let mut cmd = rcon_for(&server, home.path());
    cmd.args(["--dialect", "source"]);
    let expected = size_commands(&mut cmd);
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out) == expected, "Source output differs");
    assert_eq!(stderr(&out), "", "no probe, no fallback warning");
    assert_eq!(server.connections(), 1);
    // One sentinel per command and no probe after login.
    assert_eq!(type0_packets(&server), 2 + SIZES.len());
}

#[test]
fn source_dialect_allows_longer_commands_than_minecraft() {
    let server = server(PracticeMode::Source, Duration::ZERO);
    let home = home();
    let text = "x".repeat(3000);
    let out = run(rcon_for(&server, home.path()).args(["--dialect", "source", "echo", &text]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{text}\n"));
    // Over Source's own limit: refused locally, exit 8, nothing sent.
    let long = "x".repeat(5000);
    let out = run(rcon_for(&server, home.path()).args(["--dialect", "source", "echo", &long]));
    assert_eq!(out.status.code(), Some(8), "{}", stderr(&out));
    assert!(stderr(&out).contains("4086"), "{}", stderr(&out));
}

#[test]
fn factorio_dialect_takes_one_packet_per_answer_and_sends_no_marker() {
    let server = server(PracticeMode::Factorio, Duration::ZERO);
    let home = home();
    let mut cmd = rcon_for(&server, home.path());
    cmd.args(["--dialect", "factorio"]);
    let expected = size_commands(&mut cmd);
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out) == expected, "Factorio output differs");
    assert_eq!(stderr(&out), "");
    assert_eq!(type0_packets(&server), 0, "no end-of-output marker sent");
    assert_eq!(server.connections(), 1);
}

#[test]
fn palworld_dialect_matches_id_zero_and_shows_overclaimed_packets() {
    let server = server(PracticeMode::Palworld, Duration::ZERO);
    let home = home();
    let mut cmd = rcon_for(&server, home.path());
    cmd.args(["--dialect", "palworld"]);
    let expected = size_commands(&mut cmd);
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out) == expected, "Palworld output differs");
    // Multibyte or long answers come with a size field that claims more than is sent: each is
    // shown as far as it arrived, with a warning (`chars 0` and `chars 1` are ASCII: exact).
    let warnings = stderr(&out).matches("rcon: warning:").count();
    assert_eq!(
        warnings,
        SIZES.iter().filter(|&&n| n > 1).count(),
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("declared a"), "{}", stderr(&out));
    assert_eq!(type0_packets(&server), 0, "no end-of-output marker sent");
    assert_eq!(server.connections(), 1);
}

#[test]
fn palworld_without_the_dialect_times_out_with_a_hint() {
    let server = server(PracticeMode::Palworld, Duration::ZERO);
    let home = home();
    let out = run(rcon_for(&server, home.path()).args(["-t", "1s", "list"]));
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("--dialect palworld"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn sentinel_flag_overrides_the_dialect() {
    // Source mirrors the sentinel, so forcing the idle method still works but sends none.
    let server = server(PracticeMode::Source, Duration::ZERO);
    let home = home();
    let out = run(rcon_for(&server, home.path()).args([
        "--dialect",
        "source",
        "--sentinel",
        "idle",
        "--idle-gap",
        "100ms",
        "chars 5000",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{}\n", sample_text(5000)));
    assert_eq!(type0_packets(&server), 0);
}

#[test]
fn dialect_comes_from_the_environment_and_bad_names_are_usage_errors() {
    let server = server(PracticeMode::Factorio, Duration::ZERO);
    let home = home();
    let out = run(rcon_for(&server, home.path())
        .env("RCON_DIALECT", "factorio")
        .arg("list"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(type0_packets(&server), 0);
    let out = run(rcon_for(&server, home.path()).args(["--dialect", "quake", "list"]));
    assert_eq!(out.status.code(), Some(2));
}

#[test]
fn source_dialect_against_a_third_party_source_server() {
    // PyPI `rcon-server`: empty packet before the login reply, mirror plus an 8-byte trailer,
    // 4086-byte packets; ASCII only.
    let Some(peer) = peer("pypi_rcon_server.py", PASSWORD) else {
        return;
    };
    let home = home();
    let sizes = [1usize, 4086, 4087, 10_000, 50_000];
    let mut cmd = rcon_peer(&peer, PASSWORD, home.path());
    cmd.args(["--dialect", "source", "-c", "list", "-c", "echo short"]);
    for n in sizes {
        cmd.args(["-c", &format!("along {n}")]);
    }
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut expected = String::from("There are 0 of a max of 20 players online: \nshort\n");
    for n in sizes {
        expected.push_str(&peer_ascii(n));
        expected.push('\n');
    }
    assert!(
        stdout(&out) == expected,
        "output differs:\n{}",
        stdout(&out)
    );
    assert_eq!(stderr(&out), "");
}

#[test]
fn factorio_dialect_against_a_third_party_single_packet_server() {
    // PyPI `rcon-fake`: no packet before the login reply, each answer one packet of any size.
    let Some(peer) = peer("pypi_rcon_fake.py", PASSWORD) else {
        return;
    };
    let home = home();
    let mut cmd = rcon_peer(&peer, PASSWORD, home.path());
    cmd.args(["--dialect", "factorio", "-c", "list", "-c", "echo short"]);
    for n in [1usize, 4097, 20_000] {
        cmd.args(["-c", &format!("long {n}")]);
    }
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    let mut expected = String::from("There are 0 of a max of 20 players online: \nshort\n");
    for n in [1usize, 4097, 20_000] {
        expected.push_str(&peer_long(n));
        expected.push('\n');
    }
    assert!(
        stdout(&out) == expected,
        "output differs:\n{}",
        stdout(&out)
    );
    assert_eq!(stderr(&out), "");
}

/// Palworld's replies carry no usable id, so an answer the quiet gap cut off would arrive under
/// the next command: a slow answer (longer than any gap) is waited for and stays under its own
/// command.
#[test]
fn palworld_slow_answers_stay_under_their_command() {
    let server = server(PracticeMode::Palworld, Duration::ZERO);
    let home = home();
    let out = run(rcon_for(&server, home.path()).args([
        "--dialect",
        "palworld",
        "-t",
        "5s",
        "-c",
        "sleep 1200",
        "-c",
        "echo after",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Slept 1200 ms\nafter\n");
}
