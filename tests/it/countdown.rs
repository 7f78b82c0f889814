//! Timed operations against practice servers: the announcement sequence and final command of
//! `--countdown` (on a sped-up clock, RCON_CLOCK_SPEED), Ctrl-C cancelling it, `--every`,
//! `--if`, a group counting down in step, and a countdown over the management protocol.

use crate::common;
use crate::common::mgmt;

use std::time::{Duration, Instant};

use serde_json::Value;

use common::{run, stderr, stdout};

fn says(commands: &[&str]) -> Vec<String> {
    commands.iter().map(|c| c.to_string()).collect()
}

#[test]
fn a_countdown_announces_at_the_standard_times_then_runs_the_final_command() {
    let server = common::strict_vanilla();
    let home = common::home();
    let out = run(common::rcon_for(&server, home.path())
        .env("RCON_CLOCK_SPEED", "600")
        .args([
            "--countdown",
            "10m",
            "--announce",
            "say Restart in {left}",
            "--then",
            "stop",
        ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        server.commands(),
        says(&[
            "say Restart in 10 minutes",
            "say Restart in 5 minutes",
            "say Restart in 2 minutes",
            "say Restart in 1 minute",
            "say Restart in 30 seconds",
            "say Restart in 10 seconds",
            "say Restart in 5 seconds",
            "say Restart in 4 seconds",
            "say Restart in 3 seconds",
            "say Restart in 2 seconds",
            "say Restart in 1 second",
            "stop",
        ])
    );
    assert_eq!(stdout(&out), "Stopping the server\n");
}

#[test]
fn given_announcement_times_then_the_commands_in_order_as_json() {
    let server = common::strict_vanilla();
    let home = common::home();
    let out = run(common::rcon_for(&server, home.path())
        .env("RCON_CLOCK_SPEED", "30")
        .args([
            "--countdown",
            "3s",
            "--at",
            "2s,1s,5s",
            "--announce",
            "say {seconds}",
            "--then",
            "say go",
            "--json",
            "-c",
            "seed",
        ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        server.commands(),
        says(&["say 2", "say 1", "say go", "seed"])
    );
    let lines: Vec<Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(lines.len(), 4);
    assert_eq!(lines[3]["command"], "seed");
    assert_eq!(lines[3]["response"], "Seed: [-4172144997902289642]");
    assert_eq!(lines[3]["ok"], true);
}

#[test]
fn if_gates_the_run_on_the_player_count() {
    let server = common::strict_vanilla();
    server.set_players(&["a", "b", "c"]);
    let home = common::home();
    let out = run(common::rcon_for(&server, home.path()).args(["--if", "players < 2", "stop"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not run: 3 players online, and the condition is 'players < 2'"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.commands(), says(&["list"]));
    let out = run(common::rcon_for(&server, home.path()).args(["--if", "players>=3", "say hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.commands(), says(&["list", "list", "say hi"]));
    let out = run(common::rcon_for(&server, home.path()).args(["--if", "tps < 5", "say hi"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(server.commands().len(), 3, "nothing sent for a bad --if");
}

#[test]
fn an_unreachable_server_fails_before_anything_is_announced() {
    let home = common::home();
    let out = run(common::rcon_at(1, home.path()).args([
        "--countdown",
        "10s",
        "--announce",
        "say {left}",
        "--then",
        "stop",
    ]));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("nothing was sent"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
}

/// A countdown's announcements (`say`: an empty answer) on the event loop against the server
/// that reads one packet per read, answers an empty command with nothing at all and closes on
/// a sentinel (the practice `silent-empty` mode, docs/protocol.md section 4): every
/// announcement and the final command arrive once, each empty answer ends by the quiet gap (a
/// wait for the 10 s timeout would exit 6), and `--if` counts from its `list`.
#[test]
fn a_countdown_on_a_one_packet_per_read_server_that_answers_empty_with_nothing() {
    let server = common::server(
        rconsole::practice::PracticeMode::SilentEmpty,
        Duration::from_millis(2),
    );
    let home = common::home();
    let out = run(common::rcon_for(&server, home.path())
        .env("RCON_CLOCK_SPEED", "30")
        .args(["-t", "10s", "--if", "players < 1"])
        .args([
            "--countdown",
            "3s",
            "--at",
            "2s,1s",
            "--announce",
            "say {seconds}",
        ])
        .args(["--then", "say done", "-c", "seed"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        server.commands(),
        says(&["list", "say 2", "say 1", "say done", "seed"])
    );
    assert_eq!(stdout(&out), "Seed: [-4172144997902289642]\n");
}

/// Every server of a group is connected to at once before anything is announced: a server that
/// never answers is let go after one timeout, and by then the next one was tried too.
#[test]
fn a_group_is_connected_to_at_once_before_anything_is_announced() {
    let (a, b) = (common::black_hole(), common::black_hole());
    let home = common::home();
    let out = run(common::rcon_in(home.path())
        .env("RCON_PASSWORD", common::PASSWORD)
        .args(["-t", "1s"])
        .args(["--target", &format!("a=127.0.0.1:{}", a.port())])
        .args(["--target", &format!("b=127.0.0.1:{}", b.port())])
        .args(["--countdown", "1m", "--announce", "say {left}"]));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(6), "{err}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    for (line, name) in lines.iter().zip(["a", "b"]) {
        assert!(
            line.starts_with(&format!("rcon: error: [{name}] timed out")),
            "{err}"
        );
        assert!(line.ends_with("; nothing was sent to it"), "{err}");
    }
    assert_eq!(
        (a.accepted_at_least(1), b.accepted_at_least(1)),
        (1, 1),
        "{err}"
    );
}

/// One server of a group down from the start (issue 41): the servers that logged in count
/// down and get the final command; the one down is said in one line, labelled as fan-out
/// labels it, with a JSON record like fan-out's, and the exit status is its failure's.
#[test]
fn a_server_down_at_the_start_is_left_out_and_the_others_count_down() {
    let home = common::home();
    for json in [false, true] {
        let (a, b) = (common::strict_vanilla(), common::strict_vanilla());
        let dead = common::closed_port();
        let mut cmd = common::rcon_in(home.path());
        cmd.env("RCON_PASSWORD", common::PASSWORD)
            .env("RCON_CLOCK_SPEED", "30");
        for (name, port) in [("a", a.port()), ("b", b.port()), ("c", dead.port())] {
            cmd.args(["--target", &format!("{name}=127.0.0.1:{port}")]);
        }
        if json {
            cmd.arg("--json");
        }
        let out = run(cmd
            .args([
                "--countdown",
                "2s",
                "--at",
                "1s",
                "--announce",
                "say {left}",
            ])
            .args(["--then", "say done"]));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(4), "{err}");
        for server in [&a, &b] {
            assert_eq!(
                server.commands(),
                says(&["say 1 second", "say done"]),
                "{err}"
            );
        }
        assert_eq!(err.lines().count(), 1, "{err}");
        let want = format!(
            "rcon: error: [c] cannot connect to 127.0.0.1:{}: ",
            dead.port()
        );
        assert!(err.starts_with(&want), "{err}");
        assert!(err.ends_with("; nothing was sent to it\n"), "{err}");
        if !json {
            assert_eq!(stdout(&out), "", "say answers nothing");
            continue;
        }
        let records: Vec<(String, String, bool, String)> = stdout(&out)
            .lines()
            .map(|l| {
                let v: Value = serde_json::from_str(l).unwrap();
                (
                    v["server"].as_str().unwrap_or("").to_string(),
                    v["command"].as_str().unwrap_or("").to_string(),
                    v["ok"] == true,
                    v["reason"].as_str().unwrap_or("").to_string(),
                )
            })
            .collect();
        let row = |s: &str, c: &str, ok, r: &str| (s.into(), c.into(), ok, r.into());
        assert_eq!(
            records,
            [
                row("a", "say 1 second", true, ""),
                row("b", "say 1 second", true, ""),
                row("c", "say 1 second", false, "connect"),
                row("a", "say done", true, ""),
                row("b", "say done", true, ""),
            ]
        );
    }
}

/// `--every` on a group with a server down from the start (issue 41): the server that logged
/// in runs every time, the one down is said once (one line, one record) and not tried again,
/// and Ctrl-C ends the run as usual.
#[cfg(unix)]
#[test]
fn every_goes_on_without_a_server_down_at_the_start() {
    let a = common::strict_vanilla();
    let dead = common::closed_port();
    let home = common::home();
    let mut child = common::rcon_in(home.path())
        .env("RCON_PASSWORD", common::PASSWORD)
        .env("RCON_CLOCK_SPEED", "600")
        .args(["--target", &format!("a=127.0.0.1:{}", a.port())])
        .args(["--target", &format!("c=127.0.0.1:{}", dead.port())])
        .args(["--json", "--every", "1m", "say tick"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn rcon");
    let lines = common::lines_of(&mut child);
    let mut seen = Vec::new();
    while seen.iter().filter(|(s, _)| s == "a").count() < 3 {
        let line = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("no third run on a");
        let v: Value = serde_json::from_str(&line).unwrap();
        seen.push((v["server"].as_str().unwrap().to_string(), v["ok"] == true));
    }
    common::signal(&child, libc::SIGINT);
    let out = common::wait_with_timeout(child, Duration::from_secs(30));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    seen.extend(lines.iter().map(|l| {
        let v: Value = serde_json::from_str(&l).unwrap();
        (v["server"].as_str().unwrap().to_string(), v["ok"] == true)
    }));
    let of_c: Vec<bool> = seen.iter().filter(|(s, _)| s == "c").map(|r| r.1).collect();
    assert_eq!(of_c, [false], "{seen:?}");
    assert!(seen.iter().all(|(s, ok)| s == "c" || *ok), "{seen:?}");
    let mut err_lines = err.lines();
    let first = err_lines.next().unwrap_or("");
    assert!(
        first.starts_with("rcon: error: [c] cannot connect"),
        "{err}"
    );
    assert!(first.ends_with("; nothing was sent to it"), "{err}");
    assert_eq!(
        err_lines.collect::<Vec<_>>(),
        ["rcon: stopped (Ctrl-C) before the next run"]
    );
    assert!(a.commands().len() >= 3 && a.commands().iter().all(|c| c == "say tick"));
}

/// A countdown with nothing to send is a usage error, and one whose every `--at` time falls
/// outside it sends nothing; neither panics (both did).
#[test]
fn a_countdown_with_nothing_to_send_does_not_panic() {
    let server = common::strict_vanilla();
    let home = common::home();
    let out = run(common::rcon_for(&server, home.path()).args(["--countdown", "1s"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "rcon: error: --countdown has nothing to send: give --announce, --then or a command\n"
    );
    let out = run(common::rcon_for(&server, home.path()).args([
        "--countdown",
        "1s",
        "--at",
        "5s",
        "--announce",
        "say {left}",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    assert!(server.commands().is_empty(), "{:?}", server.commands());
}

#[test]
fn a_group_counts_down_in_step() {
    let a = common::strict_vanilla();
    let b = common::strict_vanilla();
    let home = common::home();
    let out = run(common::rcon_in(home.path())
        .env("RCON_PASSWORD", common::PASSWORD)
        .env("RCON_CLOCK_SPEED", "120")
        .args(["--target", &format!("a=127.0.0.1:{}", a.port())])
        .args(["--target", &format!("b=127.0.0.1:{}", b.port())])
        .args([
            "--countdown",
            "2m",
            "--at",
            "1m,30s",
            "--announce",
            "say {left}",
        ])
        .args(["--then", "say done", "-c", "seed"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let want = says(&["say 1 minute", "say 30 seconds", "say done", "seed"]);
    assert_eq!(a.commands(), want);
    assert_eq!(b.commands(), want);
    assert_eq!(
        stdout(&out),
        "[a] Seed: [-4172144997902289642]\n[b] Seed: [-4172144997902289642]\n"
    );
}

/// A countdown on `count` servers, all of them `server`, under `ulimit LIMIT`.
#[cfg(unix)]
fn counted_down(
    home: &std::path::Path,
    count: usize,
    port: u16,
    limit: &str,
) -> std::process::Output {
    let inventory = common::same_server_inventory(home, count, port);
    let mut cmd = common::rcon_in(home);
    cmd.env("RCON_PASSWORD", common::PASSWORD)
        .env("RCON_CLOCK_SPEED", "60")
        .args(["--targets", &inventory])
        .args([
            "--countdown",
            "1m",
            "--at",
            "30s",
            "--announce",
            "say {left}",
        ])
        .args(["--then", "say done"]);
    run(&mut common::under_ulimit(&cmd, limit))
}

/// Every server of a group holds its connection for the whole countdown: a group that needs
/// more descriptors than the soft limit raises it (as fan-out does) instead of failing half
/// way through connecting.
#[cfg(unix)]
#[test]
fn a_group_past_the_soft_descriptor_limit_counts_down() {
    let server = common::strict_vanilla();
    let home = common::home();
    let out = counted_down(home.path(), 300, server.port(), "-Sn 128");
    assert!(out.status.success(), "{}", stderr(&out));
    let commands = server.commands();
    for said in ["say 30 seconds", "say done"] {
        let times = commands.iter().filter(|c| *c == said).count();
        assert_eq!(times, 300, "{said}");
    }
}

/// A group that needs more descriptors than the hard limit allows is refused before anything
/// is sent, in one line that names the limit.
#[cfg(unix)]
#[test]
fn a_group_past_the_hard_descriptor_limit_is_refused_before_anything_is_sent() {
    let server = common::strict_vanilla();
    let home = common::home();
    let out = counted_down(home.path(), 300, server.port(), "-n 96");
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "rcon: error: a timed run on 300 servers holds 364 open files at once, but the limit is \
         96 (ulimit -n); nothing was sent\n"
    );
    assert_eq!(server.commands(), Vec::<String>::new());
}

/// A server restarted between two announcements (its connection closed while the countdown
/// waited) gets the next announcement on a new connection: the closed one is noticed before
/// anything is sent into it, so nothing fails and nothing is in doubt.
#[test]
fn a_server_restarted_during_the_countdown_gets_the_rest_of_it() {
    let first = common::restartable_vanilla("127.0.0.1:0".parse().unwrap());
    let addr = first.addr();
    let home = common::home();
    // Schedule time runs twice as fast: announcements 2 s apart in real time. --json: a
    // record on stdout says when an announcement's answer is in (the server having read the
    // command is not enough: stopped before it answers, the command is in doubt).
    let mut child = common::rcon_for(&first, home.path())
        .env("RCON_CLOCK_SPEED", "2")
        .args([
            "--json",
            "--countdown",
            "10s",
            "--at",
            "6s,2s",
            "--announce",
            "say {left}",
        ])
        .args(["--then", "say done"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn rcon");
    let lines = common::lines_of(&mut child);
    let record = |line: String| -> (String, bool) {
        let v: Value = serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line}"));
        (
            v["command"].as_str().unwrap_or("").to_string(),
            v["ok"] == true,
        )
    };
    let first_record = lines
        .recv_timeout(Duration::from_secs(30))
        .expect("no first announcement");
    assert_eq!(record(first_record), ("say 6 seconds".to_string(), true));
    let held = common::stop_holding(addr, || drop(first));
    let second = held.serve(common::vanilla_config(addr));
    let out = common::wait_with_timeout(child, Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
    let rest: Vec<(String, bool)> = lines.iter().map(record).collect();
    assert_eq!(
        rest,
        [
            ("say 2 seconds".to_string(), true),
            ("say done".to_string(), true)
        ]
    );
    assert_eq!(second.commands(), says(&["say 2 seconds", "say done"]));
}

/// A server of a group that goes down between two announcements and stays down: its later
/// steps fail (said on stderr, each naming the server and the command), the rest of the group
/// gets the whole countdown, and the exit status is the failure's.
#[test]
fn a_server_down_for_the_rest_of_a_group_countdown_fails_its_steps_alone() {
    let doomed = common::restartable_vanilla("127.0.0.1:0".parse().unwrap());
    let addr = doomed.addr();
    let stays = common::strict_vanilla();
    let home = common::home();
    let mut child = common::rcon_in(home.path())
        .env("RCON_PASSWORD", common::PASSWORD)
        .env("RCON_CLOCK_SPEED", "2")
        .args(["-t", "2s"])
        .args(["--target", &format!("a=127.0.0.1:{}", stays.port())])
        .args(["--target", &format!("b={addr}")])
        .args(["--json", "--countdown", "10s", "--at", "6s,2s"])
        .args(["--announce", "say {left}", "--then", "say done"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn rcon");
    let lines = common::lines_of(&mut child);
    // Both servers' first announcement is answered (printed in the servers' order)...
    for want in ["a", "b"] {
        let line = lines
            .recv_timeout(Duration::from_secs(30))
            .expect("no first announcement");
        let v: Value = serde_json::from_str(&line).unwrap();
        assert_eq!(
            (v["server"].as_str(), v["ok"].as_bool()),
            (Some(want), Some(true)),
            "{line}"
        );
    }
    // ...then b goes down for good.
    let _held = common::stop_holding(addr, || drop(doomed));
    let out = common::wait_with_timeout(child, Duration::from_secs(60));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    let rest: Vec<(String, String, bool)> = lines
        .iter()
        .map(|l| {
            let v: Value = serde_json::from_str(&l).unwrap();
            (
                v["server"].as_str().unwrap_or("").to_string(),
                v["command"].as_str().unwrap_or("").to_string(),
                v["ok"] == true,
            )
        })
        .collect();
    let row = |s: &str, c: &str, ok| (s.to_string(), c.to_string(), ok);
    assert_eq!(
        rest,
        [
            row("a", "say 2 seconds", true),
            row("b", "say 2 seconds", false),
            row("a", "say done", true),
            row("b", "say done", false),
        ]
    );
    assert_eq!(
        stays.commands(),
        says(&["say 6 seconds", "say 2 seconds", "say done"])
    );
}

/// A long `--every` on a large group runs on one event loop: one thread (counted in /proc),
/// one socket a server within a soft descriptor limit far below what it needs (raised), every
/// server's runs whole when Ctrl-C ends it between two runs.
#[cfg(target_os = "linux")]
#[test]
fn a_large_group_repeats_on_one_event_loop_until_ctrl_c() {
    let server = common::strict_vanilla();
    let home = common::home();
    let inventory = common::same_server_inventory(home.path(), 200, server.port());
    let mut cmd = common::rcon_in(home.path());
    cmd.env("RCON_PASSWORD", common::PASSWORD)
        .env("RCON_CLOCK_SPEED", "3600")
        .args(["--targets", &inventory])
        .args(["--every", "1h", "-c", "say tick", "-c", "seed"]);
    let child = common::under_ulimit(&cmd, "-Sn 128")
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("spawn rcon");
    let ticks = || {
        server
            .commands()
            .iter()
            .filter(|c| *c == "say tick")
            .count()
    };
    let deadline = Instant::now() + Duration::from_secs(60);
    while ticks() < 400 {
        assert!(Instant::now() < deadline, "{} ticks in a minute", ticks());
        std::thread::sleep(Duration::from_millis(20));
    }
    // `sh` ran `exec rcon`: the same process.
    let threads = std::fs::read_dir(format!("/proc/{}/task", child.id()))
        .unwrap()
        .count();
    assert!(threads <= 2, "{threads} threads for 200 servers");
    // A socket a server and a few more (a blocking session a server held a poller of its own).
    let files = std::fs::read_dir(format!("/proc/{}/fd", child.id()))
        .unwrap()
        .count();
    assert!(files < 200 + 32, "{files} open files for 200 servers");
    common::signal(&child, libc::SIGINT);
    let out = common::wait_with_timeout(child, Duration::from_secs(30));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(130), "{err}");
    assert_eq!(err, "rcon: stopped (Ctrl-C) before the next run\n");
    let commands = server.commands();
    let seeds = commands.iter().filter(|c| *c == "seed").count();
    assert_eq!(ticks(), seeds, "a run cut in half");
    assert_eq!(
        seeds % 200,
        0,
        "{seeds} seeds: not every server ran every run"
    );
}

/// A vanilla-like server (one packet per answer, `Unknown request 0` for the sentinel probe)
/// that answers `say done` only after 3 s; `answered` turns true when it has.
fn slow_to_answer(answered: std::sync::Arc<std::sync::atomic::AtomicBool>) -> u16 {
    use std::io::{Read, Write};
    let listener = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for stream in listener.incoming() {
            let Ok(mut stream) = stream else { return };
            let answered = answered.clone();
            std::thread::spawn(move || {
                let reply = |stream: &mut std::net::TcpStream, id: i32, kind: i32, body: &str| {
                    let mut out = Vec::new();
                    out.extend_from_slice(&(body.len() as i32 + 10).to_le_bytes());
                    out.extend_from_slice(&id.to_le_bytes());
                    out.extend_from_slice(&kind.to_le_bytes());
                    out.extend_from_slice(body.as_bytes());
                    out.extend_from_slice(&[0, 0]);
                    stream.write_all(&out)
                };
                loop {
                    let mut head = [0u8; 4];
                    if stream.read_exact(&mut head).is_err() {
                        return;
                    }
                    let mut rest = vec![0u8; i32::from_le_bytes(head) as usize];
                    if stream.read_exact(&mut rest).is_err() {
                        return;
                    }
                    let id = i32::from_le_bytes(rest[0..4].try_into().unwrap());
                    let kind = i32::from_le_bytes(rest[4..8].try_into().unwrap());
                    let body = String::from_utf8_lossy(&rest[8..rest.len() - 2]).into_owned();
                    let sent = match kind {
                        3 => reply(&mut stream, id, 2, ""),
                        2 if body == "say done" => {
                            std::thread::sleep(Duration::from_secs(3));
                            answered.store(true, std::sync::atomic::Ordering::SeqCst);
                            reply(&mut stream, id, 0, "")
                        }
                        2 => reply(&mut stream, id, 0, "ok"),
                        other => reply(&mut stream, id, 0, &format!("Unknown request {other:x}")),
                    };
                    if sent.is_err() {
                        return;
                    }
                }
            });
        }
    });
    port
}

/// In step means at once, not one after another: server `slow` takes 3 s to answer the final
/// command, and `fast` must get it before `slow` has answered (one server after another, `fast`
/// would get it only after `slow` had answered).
#[test]
fn a_slow_server_in_a_group_delays_no_other() {
    let answered = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let slow = slow_to_answer(answered.clone());
    let fast = common::strict_vanilla();
    let home = common::home();
    let mut child = common::rcon_in(home.path())
        .env("RCON_PASSWORD", common::PASSWORD)
        .args(["-t", "60s"])
        .args(["--target", &format!("slow=127.0.0.1:{slow}")])
        .args(["--target", &format!("fast=127.0.0.1:{}", fast.port())])
        .args(["--countdown", "1s", "--then", "say done"])
        .stdout(std::process::Stdio::null())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let start = Instant::now();
    let fast_has_it = || fast.commands().iter().any(|c| c == "say done");
    while !fast_has_it() && start.elapsed() < Duration::from_secs(90) {
        std::thread::sleep(Duration::from_millis(20));
    }
    let slow_had_answered = answered.load(std::sync::atomic::Ordering::SeqCst);
    let status = child.wait().unwrap();
    let mut err = String::new();
    std::io::Read::read_to_string(child.stderr.as_mut().unwrap(), &mut err).unwrap();
    assert!(status.success(), "{err}");
    assert!(fast_has_it(), "fast never got the command: {err}");
    assert!(
        !slow_had_answered,
        "fast got the command only after slow had answered: the group ran one server after another"
    );
    assert!(answered.load(std::sync::atomic::Ordering::SeqCst), "{err}");
}

#[test]
fn a_countdown_over_the_management_protocol() {
    use rconsole::mgmt::practice::MgmtVersion;
    let tls = mgmt::tls();
    let home = common::home();
    for version in [MgmtVersion::V1_21_9, MgmtVersion::V1_21_11] {
        let server = mgmt::server_of(&tls, version);
        let out = run(mgmt::rcon(&server, &tls, home.path())
            .env("RCON_CLOCK_SPEED", "120")
            .args(["--countdown", "2m", "--at", "1m,10s"])
            .args(["--announce", "server system_message Restart in {left}"])
            .args(["--then", "server save flush", "--then", "server stop"]));
        assert!(out.status.success(), "{version:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{version:?}");
        // Every call answers `true`, printed as nothing (issue 41), as RCON's `say` is.
        assert_eq!(stdout(&out), "", "{version:?}");
        assert_eq!(
            server.system_messages(),
            ["Restart in 1 minute", "Restart in 10 seconds"],
            "{version:?}"
        );
        // In the chat, not over the hotbar: `overlay`, which vanilla requires, is false.
        assert_eq!(server.system_message_overlays(), [false, false]);
        assert!(server.stopped(), "{version:?}");
    }
}

#[test]
fn a_management_countdown_whose_words_name_no_method_sends_nothing() {
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let home = common::home();
    for (announce, then, want) in [
        (
            "server system_mesage Restart in {left}",
            "server stop",
            "no management method matches 'server system_mesage Restart in 1 minute'",
        ),
        (
            "server system_message Restart in {left}",
            "serversettings autosave set",
            "missing argument <enable>",
        ),
    ] {
        let out = run(mgmt::rcon(&server, &tls, home.path())
            .env("RCON_CLOCK_SPEED", "120")
            .args(["--countdown", "2m", "--at", "1m"])
            .args(["--announce", announce, "--then", then]));
        assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(err.contains("nothing was sent"), "{err}");
        assert!(err.contains(want), "{err}");
        assert!(server.system_messages().is_empty());
        assert!(!server.stopped());
    }
}

#[cfg(unix)]
pub(crate) mod interrupt {
    use super::*;
    use std::process::Stdio;

    /// Waits until `done` (looked at every 20 ms; a hang guard of 30 s).
    pub(crate) fn wait_until(what: &str, mut done: impl FnMut() -> bool) {
        let deadline = Instant::now() + Duration::from_secs(30);
        while !done() {
            assert!(Instant::now() < deadline, "{what} never happened");
            std::thread::sleep(Duration::from_millis(20));
        }
    }

    /// A ten-minute countdown with a cancellation announcement, stopped by `signal` after its
    /// first announcement: the cancellation goes out, nothing else, and one line names the
    /// signal (`name`) with the time left; the exit status is `code`.
    fn a_signal_cancels_a_countdown(signal: libc::c_int, name: &str, code: i32) {
        let server = common::strict_vanilla();
        let home = common::home();
        let child = common::rcon_for(&server, home.path())
            .args(["--countdown", "10m", "--announce", "say Restart in {left}"])
            .args([
                "--cancel-announce",
                "say Restart cancelled",
                "--then",
                "stop",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_until("the first announcement", || !server.commands().is_empty());
        common::signal(&child, signal);
        let out = common::wait_with_timeout(child, Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
        assert_eq!(
            server.commands(),
            says(&["say Restart in 10 minutes", "say Restart cancelled"])
        );
        let err = stderr(&out);
        assert!(
            err.contains(&format!(
                "countdown cancelled ({name}) with 10 minutes left; nothing more was sent but \
                 the cancellation"
            )),
            "{err}"
        );
    }

    /// A group's countdown waits minutes between announcements on the event loop: Ctrl-C
    /// reaches every server at once (the loop's waker), each gets the cancellation, and one
    /// line says so for the group.
    #[test]
    fn ctrl_c_cancels_a_group_countdown_on_every_server_at_once() {
        let (a, b) = (common::strict_vanilla(), common::strict_vanilla());
        let home = common::home();
        let child = common::rcon_in(home.path())
            .env("RCON_PASSWORD", common::PASSWORD)
            .args(["--target", &format!("a=127.0.0.1:{}", a.port())])
            .args(["--target", &format!("b=127.0.0.1:{}", b.port())])
            .args(["--countdown", "10m", "--announce", "say Restart in {left}"])
            .args([
                "--cancel-announce",
                "say Restart cancelled",
                "--then",
                "stop",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_until("the first announcements", || {
            !a.commands().is_empty() && !b.commands().is_empty()
        });
        let signalled = Instant::now();
        common::signal(&child, libc::SIGINT);
        let out = common::wait_with_timeout(child, Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
        // Not at the next announcement (five minutes on): at once.
        assert!(signalled.elapsed() < Duration::from_secs(20));
        for server in [&a, &b] {
            assert_eq!(
                server.commands(),
                says(&["say Restart in 10 minutes", "say Restart cancelled"])
            );
        }
        let err = stderr(&out);
        assert_eq!(
            err.matches("countdown cancelled (Ctrl-C)").count(),
            1,
            "{err}"
        );
    }

    /// Ctrl-C while the group is still connecting (one server never answers its login) ends
    /// the run at once, in one line, and nothing reaches the server that was ready.
    #[test]
    fn ctrl_c_while_a_group_connects_sends_nothing() {
        let ready = common::strict_vanilla();
        let silent = common::black_hole();
        let home = common::home();
        let child = common::rcon_in(home.path())
            .env("RCON_PASSWORD", common::PASSWORD)
            .args(["-t", "60s"])
            .args(["--target", &format!("ready=127.0.0.1:{}", ready.port())])
            .args(["--target", &format!("silent=127.0.0.1:{}", silent.port())])
            .args(["--countdown", "1m", "--announce", "say {left}"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_until("both connections", || silent.accepted() >= 1);
        common::signal(&child, libc::SIGINT);
        let out = common::wait_with_timeout(child, Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
        assert_eq!(
            stderr(&out),
            "rcon: error: stopped (Ctrl-C) while connecting; nothing was sent\n"
        );
        assert_eq!(ready.commands(), Vec::<String>::new());
    }

    #[test]
    fn ctrl_c_cancels_a_countdown_and_announces_it() {
        a_signal_cancels_a_countdown(libc::SIGINT, "Ctrl-C", 130);
    }

    /// A service manager stopping a countdown (`systemctl stop`, `kill`): the players who were
    /// told of a restart are told it is off, as with Ctrl-C, and the exit status says SIGTERM.
    #[test]
    fn sigterm_cancels_a_countdown_and_announces_it() {
        a_signal_cancels_a_countdown(libc::SIGTERM, "SIGTERM", 143);
    }

    #[test]
    fn ctrl_c_without_a_cancel_announcement_sends_nothing_more() {
        let server = common::strict_vanilla();
        let home = common::home();
        let child = common::rcon_for(&server, home.path())
            .args([
                "--countdown",
                "1h",
                "--announce",
                "say {left}",
                "--then",
                "stop",
            ])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_until("the first announcement", || !server.commands().is_empty());
        common::signal(&child, libc::SIGINT);
        let out = common::wait_with_timeout(child, Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
        assert_eq!(server.commands(), says(&["say 1 hour"]));
    }

    /// `--every` stopped by `signal` (`name`) after three runs: whole runs only, one line that
    /// names the signal, exit status `code`.
    fn every_repeats_until(signal: libc::c_int, name: &str, code: i32) {
        let server = common::strict_vanilla();
        let home = common::home();
        let child = common::rcon_for(&server, home.path())
            .env("RCON_CLOCK_SPEED", "36000")
            .args(["--every", "1h", "-c", "say tick", "-c", "seed"])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        wait_until("three runs", || server.commands().len() >= 6);
        common::signal(&child, signal);
        let out = common::wait_with_timeout(child, Duration::from_secs(30));
        assert_eq!(out.status.code(), Some(code), "{}", stderr(&out));
        let commands = server.commands();
        // Whole runs, in order: each `say tick` is followed by its `seed`.
        for pair in commands.chunks(2) {
            assert_eq!(pair, ["say tick", "seed"], "{commands:?}");
        }
        assert!(
            stdout(&out)
                .lines()
                .all(|l| l == "Seed: [-4172144997902289642]")
        );
        let err = stderr(&out);
        assert!(
            err.contains(&format!("rcon: stopped ({name}) before the next run")),
            "{err}"
        );
    }

    #[test]
    fn every_repeats_until_ctrl_c() {
        every_repeats_until(libc::SIGINT, "Ctrl-C", 130);
    }

    #[test]
    fn every_repeats_until_sigterm() {
        every_repeats_until(libc::SIGTERM, "SIGTERM", 143);
    }
}

/// A countdown on each console dialect speaks that console's protocol (on the event loop, as
/// fan-out does): the announcements and the final command, each answered, nothing else run.
#[test]
fn a_countdown_on_each_console_speaks_its_protocol() {
    use crate::consoles_common::{console_server, rcon_dialect};
    use rconsole::consoles::practice::Kind;
    for (kind, dialect) in [
        (Kind::Telnet, "telnet"),
        (Kind::BattlEye, "battleye"),
        (Kind::WebRcon, "webrcon"),
    ] {
        let server = console_server(kind);
        let home = common::home();
        let out = run(rcon_dialect(&server, dialect, home.path())
            .env("RCON_CLOCK_SPEED", "30")
            .args([
                "--countdown",
                "3s",
                "--at",
                "2s,1s",
                "--announce",
                "echo {seconds}",
            ])
            .args(["--then", "echo done"]));
        assert!(out.status.success(), "{dialect}: {}", stderr(&out));
        assert_eq!(stdout(&out), "2\n1\ndone\n", "{dialect}");
        assert_eq!(
            server
                .stats()
                .executed
                .load(std::sync::atomic::Ordering::SeqCst),
            3,
            "{dialect}"
        );
    }
    // (--follow there follows the console's pushed messages: tests/it/follow_consoles.rs.)
}
