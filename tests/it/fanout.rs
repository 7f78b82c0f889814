//! Several servers at once (`--target NAME=HOST:PORT`): labelled and complete output, the worst
//! exit status, one error line a failed server, and a dead or silent server that delays
//! nobody else.

use std::io::{BufRead, BufReader};
use std::process::Stdio;
use std::time::{Duration, Instant};

use crate::common::*;
use rconsole::practice::{PracticeMode, PracticeServer, sample_text};

fn black_hole() -> u16 {
    crate::common::black_hole().port()
}

fn target(name: &str, port: u16) -> String {
    format!("{name}=127.0.0.1:{port}")
}

fn fanout(home: &std::path::Path, targets: &[String]) -> std::process::Command {
    let mut cmd = rcon_in(home);
    cmd.env("RCON_PASSWORD", PASSWORD);
    for t in targets {
        cmd.args(["--target", t]);
    }
    cmd
}

/// The lines of `stdout` that carry `name`'s label, without it.
fn labelled(stdout: &str, name: &str) -> Vec<String> {
    let tag = format!("[{name}]");
    stdout
        .lines()
        .filter_map(|l| l.strip_prefix(&tag))
        .map(|rest| rest.strip_prefix(' ').unwrap_or(rest).to_string())
        .collect()
}

#[test]
fn three_servers_one_down_two_complete_and_one_error_line() {
    let lobby = strict_vanilla();
    let survival = server(PracticeMode::Source, Duration::ZERO);
    let dead = closed_port();
    let home = home();
    let out = run(fanout(
        home.path(),
        &[
            target("lobby", lobby.port()),
            target("survival", survival.port()),
            target("dead", dead.port()),
        ],
    )
    .args([
        "-t",
        "2s",
        "-c",
        "list",
        "-c",
        "chars 9000",
        "-c",
        "echo a\nb",
    ]));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let text = stdout(&out);
    let expected = vec![
        "There are 0 of a max of 20 players online: ".to_string(),
        sample_text(9000),
        "a".into(),
        "b".into(),
    ];
    assert!(labelled(&text, "lobby") == expected, "lobby:\n{text}");
    assert!(labelled(&text, "survival") == expected, "survival:\n{text}");
    assert!(labelled(&text, "dead").is_empty());
    assert!(
        text.lines().all(|l| l.starts_with('[')),
        "every line labelled"
    );
    let err = stderr(&out);
    assert!(
        err.starts_with("rcon: error: [dead] cannot connect"),
        "{err}"
    );
    assert_eq!(
        err.lines().count(),
        1,
        "one line for the failed server: {err}"
    );
    assert_eq!(lobby.connections(), 1);
    assert_eq!(survival.connections(), 1);
}

#[test]
fn a_silent_server_delays_nobody_and_costs_one_timeout() {
    let a = strict_vanilla();
    let b = strict_vanilla();
    let hole = black_hole();
    let home = home();
    let timeout = Duration::from_secs(2);
    let start = Instant::now();
    let mut child = fanout(
        home.path(),
        &[
            target("a", a.port()),
            target("silent", hole),
            target("b", b.port()),
        ],
    )
    .args(["-t", "2s", "-c", "echo one", "-c", "echo two"])
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .spawn()
    .expect("spawn rcon");
    // Read stdout as it comes, noting when each line arrived.
    let stdout = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        BufReader::new(stdout)
            .lines()
            .map(|l| (l.unwrap(), start.elapsed()))
            .collect::<Vec<_>>()
    });
    let out = wait_with_timeout(child, Duration::from_secs(60));
    let took = start.elapsed();
    let lines = reader.join().unwrap();
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(took < timeout * 2, "took {took:?}, more than one timeout");
    let text: String = lines.iter().map(|(l, _)| format!("{l}\n")).collect();
    assert_eq!(labelled(&text, "a"), ["one", "two"]);
    assert_eq!(labelled(&text, "b"), ["one", "two"]);
    // The live servers' output came out long before the silent one timed out.
    for (line, at) in &lines {
        assert!(*at < timeout / 2, "'{line}' printed only after {at:?}");
    }
    let err = stderr(&out);
    assert!(err.starts_with("rcon: error: [silent] timed out"), "{err}");
    assert_eq!(
        err.lines().count(),
        1,
        "one line for the failed server: {err}"
    );
}

#[test]
fn group_prints_one_block_per_server() {
    let a = strict_vanilla();
    let b = strict_vanilla();
    let home = home();
    let out = run(
        fanout(home.path(), &[target("a", a.port()), target("b", b.port())]).args([
            "--group",
            "-c",
            "echo x",
            "-c",
            "echo y\nz",
        ]),
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let a_block = "[a]\nx\ny\nz\n";
    let b_block = "[b]\nx\ny\nz\n";
    assert!(
        text == format!("{a_block}{b_block}") || text == format!("{b_block}{a_block}"),
        "{text}"
    );
    assert_eq!(stderr(&out), "");
}

#[test]
fn json_names_the_server_of_every_result() {
    let a = strict_vanilla();
    let dead = closed_port();
    let home = home();
    let out = run(fanout(
        home.path(),
        &[target("a", a.port()), target("dead", dead.port())],
    )
    .args(["--json", "-c", "seed", "-c", "nosuchcommand"]));
    // The parse error on `a` gives 1, the dead server 4: the worst wins.
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let values: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
        .collect();
    assert_eq!(values.len(), 3, "{}", stdout(&out));
    let of = |name: &str| -> Vec<&serde_json::Value> {
        values.iter().filter(|v| v["server"] == name).collect()
    };
    let a_results = of("a");
    assert_eq!(a_results[0]["command"], "seed");
    assert_eq!(a_results[0]["response"], "Seed: [-4172144997902289642]");
    assert_eq!(a_results[0]["ok"], true);
    assert_eq!(a_results[1]["ok"], false, "parse error is not ok");
    let dead_results = of("dead");
    assert_eq!(dead_results.len(), 1);
    // As with one server: the first command's record carries the connection error.
    assert_eq!(dead_results[0]["command"], "seed");
    assert_eq!(dead_results[0]["ok"], false);
    assert!(
        dead_results[0]["error"]
            .as_str()
            .unwrap()
            .contains("cannot connect")
    );
}

#[test]
fn worst_exit_status_wins_and_all_ok_is_quiet() {
    let a = strict_vanilla();
    let b = strict_vanilla();
    let home = home();
    let out = run(fanout(home.path(), &[target("a", a.port()), target("b", b.port())]).arg("list"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stderr(&out), "", "no summary when all servers succeed");
    // A parse error on every server: exit 1, both named.
    let out = run(
        fanout(home.path(), &[target("a", a.port()), target("b", b.port())]).arg("nosuchcommand"),
    );
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    let mut lines: Vec<&str> = err.lines().collect();
    lines.sort_unstable();
    assert_eq!(
        lines,
        ["a", "b"].map(|s| format!(
            "rcon: error: [{s}] command 'nosuchcommand': the server could not parse the command (<--[HERE])"
        ))
    );
}

#[test]
fn more_servers_than_the_thread_pool_are_all_served() {
    let servers: Vec<PracticeServer> = (0..20).map(|_| strict_vanilla()).collect();
    let targets: Vec<String> = servers
        .iter()
        .enumerate()
        .map(|(i, s)| target(&format!("s{i}"), s.port()))
        .collect();
    let home = home();
    let out = run(fanout(home.path(), &targets).arg("echo hello"));
    assert!(out.status.success(), "{}", stderr(&out));
    for i in 0..20 {
        assert_eq!(labelled(&stdout(&out), &format!("s{i}")), ["hello"]);
    }
}

#[test]
fn bad_targets_are_usage_errors() {
    let home = home();
    for bad in [
        &["--target", "nohost"][..],
        &["--target", "=127.0.0.1:1"],
        &["--target", "a=127.0.0.1:1", "--target", "a=127.0.0.1:2"],
        &["--target", "a b=127.0.0.1:1"],
    ] {
        let out = run(rcon_in(home.path())
            .env("RCON_PASSWORD", PASSWORD)
            .args(bad)
            .arg("list"));
        assert_eq!(out.status.code(), Some(2), "{bad:?}: {}", stderr(&out));
    }
    let out = run(rcon_in(home.path()).args(["--target", "a=127.0.0.1:1", "list"]));
    assert_eq!(out.status.code(), Some(2), "no password: {}", stderr(&out));
}

/// Writes `text` as a config file in `home` (owner-only, as a config holding passwords should
/// be) and returns its path, for `RCON_CONFIG`: the default path is the platform's (Windows asks
/// the shell for known folders and ignores `APPDATA`), so only the variable keeps it private on
/// every OS (issue 12).
fn write_config(home: &std::path::Path, text: &str) -> std::path::PathBuf {
    let path = home.join("fanout.toml");
    std::fs::write(&path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    path
}

#[test]
fn profiles_fan_out_by_list_group_and_all() {
    let a = server(PracticeMode::Vanilla, Duration::ZERO);
    let b = server(PracticeMode::Source, Duration::ZERO);
    let home = home();
    let config = write_config(
        home.path(),
        &format!(
            "[servers.a]\nhost = \"127.0.0.1\"\nport = {}\npassword = \"{PASSWORD}\"\n\n\
             [servers.b]\nhost = \"127.0.0.1\"\nport = {}\npassword = \"{PASSWORD}\"\ndialect = \"source\"\n\n\
             [servers.both]\nservers = [\"a\", \"b\"]\n",
            a.port(),
            b.port()
        ),
    );
    for selection in [&["-s", "a,b"][..], &["-s", "both"], &["--all"]] {
        let out = run(rcon_in(home.path())
            .env("RCON_CONFIG", &config)
            .args(selection)
            .arg("echo hi"));
        assert!(out.status.success(), "{selection:?}: {}", stderr(&out));
        let mut lines: Vec<String> = stdout(&out).lines().map(String::from).collect();
        lines.sort();
        assert_eq!(lines, ["[a] hi", "[b] hi"], "{selection:?}");
    }
    assert_eq!(a.commands(), ["echo hi"; 3]);
    assert_eq!(b.commands(), ["echo hi"; 3]);

    // The profile's dialect applies per server.
    let out =
        run(rcon_in(home.path())
            .env("RCON_CONFIG", &config)
            .args(["-s", "b", "--print-config"]));
    let text = stdout(&out);
    let line = text.lines().find(|l| l.starts_with("dialect")).unwrap();
    assert!(
        line.contains("source") && line.contains("profile b"),
        "{text}"
    );
    assert!(!text.contains(PASSWORD));

    // A name that is not a profile is a config error naming it.
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &config)
        .args(["-s", "a,nope", "list"]));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("nope"));
}

/// Threads and open descriptors of a running process (Linux).
#[cfg(target_os = "linux")]
pub(crate) fn threads_and_fds(pid: u32) -> Option<(usize, usize)> {
    let status = rcon_status(pid)?;
    let threads = status
        .lines()
        .find_map(|l| l.strip_prefix("Threads:"))?
        .trim()
        .parse()
        .ok()?;
    let fds = std::fs::read_dir(format!("/proc/{pid}/fd")).ok()?.count();
    Some((threads, fds))
}

/// A hundred servers with `--parallel 16`: every answer arrives, labelled, while rcon never
/// holds more than 16 connections, on one event-loop thread, whatever the number of servers.
#[cfg(target_os = "linux")]
#[test]
fn a_hundred_servers_stay_within_thread_and_descriptor_bounds() {
    const SERVERS: usize = 100;
    let servers: Vec<PracticeServer> = (0..SERVERS)
        .map(|_| server(PracticeMode::Vanilla, Duration::from_millis(1)))
        .collect();
    let home = home();
    let mut cmd = rcon_in(home.path());
    cmd.env("RCON_PASSWORD", PASSWORD);
    for (i, s) in servers.iter().enumerate() {
        cmd.args(["--target", &format!("s{i}=127.0.0.1:{}", s.port())]);
    }
    cmd.args(["--parallel", "16", "-c", "echo hi", "-c", "chars 5000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    let child = cmd.spawn().expect("spawn rcon");
    let pid = child.id();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    let mut peak = (0, 0);
    let out = loop {
        if let Some((t, f)) = threads_and_fds(pid) {
            peak = (peak.0.max(t), peak.1.max(f));
        }
        match rx.recv_timeout(Duration::from_millis(1)) {
            Ok(out) => break out.expect("wait"),
            Err(std::sync::mpsc::RecvTimeoutError::Timeout) => continue,
            Err(e) => panic!("{e}"),
        }
    };
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    for i in 0..SERVERS {
        assert!(text.contains(&format!("[s{i}] hi\n")), "s{i} missing");
        assert!(
            text.contains(&format!("[s{i}] {}\n", sample_text(5000))),
            "s{i}'s long answer missing or incomplete"
        );
    }
    assert_eq!(text.lines().count(), 2 * SERVERS);
    // The main (printing) thread and the event loop's; stdio, the poller and 16 sockets.
    assert!(peak.0 <= 3, "peak threads {}", peak.0);
    assert!(peak.1 <= 16 + 16, "peak descriptors {}", peak.1);
    assert!(peak.0 > 0, "the process was never sampled");
    for s in &servers {
        assert_eq!(s.connections(), 1);
        assert!(s.violations().is_empty());
    }
}

/// The keys of a JSON record, sorted.
fn keys(v: &serde_json::Value) -> Vec<String> {
    let mut k: Vec<String> = v.as_object().expect("an object").keys().cloned().collect();
    k.sort();
    k
}

#[test]
fn one_json_schema_for_one_server_and_several() {
    let a = strict_vanilla();
    let b = strict_vanilla();
    let home = home();
    let file = home.path().join("f.mcfunction");
    std::fs::write(&file, "echo from-file\nnosuchcommand\n").unwrap();
    let file = file.to_str().unwrap();
    let args = ["--json", "--keep-going", "-c", "§aecho §bhi", "-f", file];
    let single = run(rcon_for(&a, home.path()).args(args));
    let several =
        run(fanout(home.path(), &[target("a", a.port()), target("b", b.port())]).args(args));
    let parse = |out: &std::process::Output| -> Vec<serde_json::Value> {
        stdout(out)
            .lines()
            .map(|l| serde_json::from_str(l).expect("one JSON object per line"))
            .collect()
    };
    let single = parse(&single);
    let several = parse(&several);
    assert_eq!(single.len(), 3);
    assert_eq!(several.len(), 6);
    let base = [
        "command",
        "elapsed_ms",
        "error",
        "event",
        "ok",
        "reason",
        "response",
        "server",
        "time",
    ];
    let batch = [
        "command",
        "elapsed_ms",
        "error",
        "event",
        "file",
        "line",
        "ok",
        "reason",
        "response",
        "server",
        "time",
    ];
    for (i, v) in single.iter().enumerate() {
        let want: Vec<&str> = if i == 0 {
            base.to_vec()
        } else {
            batch.to_vec()
        };
        assert_eq!(keys(v), want, "{v}");
    }
    for v in &several {
        let mut want: Vec<&str> = if v["file"].is_null() {
            base.to_vec()
        } else {
            batch.to_vec()
        };
        want.sort();
        assert_eq!(keys(v), want, "{v}");
    }
    // The same values, whichever the mode (elapsed aside).
    for server in ["a", "b"] {
        let mine: Vec<&serde_json::Value> =
            several.iter().filter(|v| v["server"] == server).collect();
        assert_eq!(mine.len(), 3);
        for (s, m) in single.iter().zip(mine) {
            for key in [
                "command", "response", "ok", "error", "reason", "file", "line",
            ] {
                assert_eq!(s.get(key), m.get(key), "{key}: {s} vs {m}");
            }
        }
    }
    assert_eq!(single[1]["line"], 1);
    assert_eq!(single[2]["ok"], false);
    assert_eq!(single[2]["reason"], "command");
    assert!(single[1]["reason"].is_null());
    assert!(single[0]["elapsed_ms"].is_number());
}

#[test]
fn fanout_batch_stops_at_the_first_failure_with_file_and_line() {
    let a = strict_vanilla();
    let home = home();
    let file = home.path().join("f.mcfunction");
    std::fs::write(&file, "echo one\nnosuchcommand\necho three\necho four\n").unwrap();
    let f = file.to_str().unwrap();
    let b = strict_vanilla();
    let out =
        run(fanout(home.path(), &[target("a", a.port()), target("b", b.port())]).args(["-f", f]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("[a] {f}:2: command 'nosuchcommand': ")),
        "{err}"
    );
    assert!(err.contains("2 later commands not sent"), "{err}");
    assert_eq!(a.commands(), ["echo one", "nosuchcommand"]);
    assert_eq!(b.commands(), ["echo one", "nosuchcommand"]);
    // --keep-going sends the rest.
    let a = strict_vanilla();
    let out = run(fanout(home.path(), &[target("a", a.port())]).args(["--keep-going", "-f", f]));
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(a.commands().len(), 4);
    assert!(
        stderr(&out).contains(&format!("[a] {f}:2: command")),
        "{}",
        stderr(&out)
    );
    // A dead server: nothing was sent, and the count says so without "later".
    let dead = closed_port();
    let out = run(fanout(home.path(), &[target("dead", dead.port())]).args(["-f", f]));
    assert_eq!(out.status.code(), Some(4));
    let err = stderr(&out);
    assert!(err.contains("; 4 commands not sent"), "{err}");
    assert!(!err.contains("later"), "{err}");
    // A line that can never be sent is named by file and line, before anything goes out.
    let long = home.path().join("long.mcfunction");
    std::fs::write(&long, format!("echo one\n\necho {}\n", "x".repeat(1500))).unwrap();
    let l = long.to_str().unwrap();
    let a = strict_vanilla();
    let out = run(fanout(home.path(), &[target("a", a.port())]).args(["-f", l]));
    assert_eq!(out.status.code(), Some(8), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "rcon: error: {l}:3: command is 1505 bytes of UTF-8, over the limit of 1446; nothing was sent\n"
        )
    );
    assert!(a.commands().is_empty(), "{:?}", a.commands());
}

#[test]
fn fanout_reads_piped_stdin_and_honours_output_flags() {
    let a = strict_vanilla();
    let b = strict_vanilla();
    let home = home();
    let targets = [target("a", a.port()), target("b", b.port())];
    let mut child = fanout(home.path(), &targets)
        .arg("--echo")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"echo \xc2\xa7apiped\n").unwrap();
    }
    let out = wait_with_timeout(child, Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    // § codes stripped as for one server (NO_COLOR), the command echoed under the label.
    assert_eq!(labelled(&stdout(&out), "a"), ["> echo §apiped", "piped"]);
    assert_eq!(labelled(&stdout(&out), "b"), ["> echo §apiped", "piped"]);
    // Flags that cannot apply to several servers are refused, not ignored.
    for flag in ["--raw", "--trace"] {
        let out = run(fanout(home.path(), &targets).args([flag, "list"]));
        assert_eq!(out.status.code(), Some(2), "{flag}: {}", stderr(&out));
        assert!(stderr(&out).contains(flag), "{}", stderr(&out));
    }
    assert_eq!(a.commands(), ["echo §apiped"]);
}

/// SIGTERM (and Ctrl-C, the same code) while two servers each run their second of three
/// commands (issue 20): the answers already printed stay, each server's in-flight command is
/// named, the rest is counted as not sent, in one line for the whole run, exit 143. The
/// process used to end by the signal with no word of what ran.
#[cfg(unix)]
#[test]
fn a_signal_mid_fan_out_keeps_the_answers_and_says_what_was_not_sent() {
    use std::io::Read;
    let home = home();
    let a = strict_vanilla();
    let b = strict_vanilla();
    let mut child = fanout(home.path(), &[target("a", a.port()), target("b", b.port())])
        .args(["-c", "echo one", "-c", "sleep 30000", "-c", "echo three"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut reader = BufReader::new(child.stdout.take().unwrap());
    let mut seen = Vec::new();
    for _ in 0..2 {
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        seen.push(line);
    }
    seen.sort();
    assert_eq!(seen, ["[a] one\n", "[b] one\n"]);
    for server in [&a, &b] {
        let start = Instant::now();
        while !server.commands().iter().any(|c| c == "sleep 30000") {
            assert!(
                start.elapsed() < Duration::from_secs(30),
                "{:?}",
                server.commands()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
    }
    // SAFETY: a signal to a child this test started and has not waited for.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) },
        0
    );
    let mut rest = String::new();
    reader.read_to_string(&mut rest).unwrap();
    let out = wait_with_timeout(child, Duration::from_secs(30));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(143), "{err}");
    assert_eq!(rest, "", "nothing after the first answers");
    assert_eq!(
        err.trim_end(),
        "rcon: error: interrupted by SIGTERM: 2 commands ran on 2 servers, 2 were in flight \
         and may or may not have run ([a] 'sleep 30000', [b] 'sleep 30000'), 2 not sent"
    );
    for server in [&a, &b] {
        assert!(!server.commands().iter().any(|c| c == "echo three"));
    }
}

/// A server's last command ends as the one-server run's does: on servers whose answers end by
/// silence and that refuse the end-of-output sentinel, the last command's refusal ends its
/// answer, not the quiet gap. An answer slower than the gap (`sleep 300` against a gap of
/// 50 ms) arrives whole on every server (it came empty, ended by the gap, before the fleet
/// knew a command was the last), and each server ran it once.
#[test]
fn fanout_ends_each_servers_last_command_by_the_sentinels_refusal() {
    let a = server(PracticeMode::SilentEmpty, Duration::ZERO);
    let b = server(PracticeMode::RejectSentinel, Duration::ZERO);
    let home = home();
    let targets = [target("a", a.port()), target("b", b.port())];
    let args = ["-t", "10s", "--idle-gap", "50ms", "-c", "sleep 300"];
    let out = run(fanout(home.path(), &targets).args(args));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(labelled(&text, "a"), ["Slept 300 ms"], "{text}");
    assert_eq!(labelled(&text, "b"), ["Slept 300 ms"], "{text}");
    // Only what each server's probe learned: no answer reported late.
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 2, "{err}");
    let learned = |l: &str| l.contains("end by a quiet gap");
    assert!(err.lines().all(learned), "{err}");
    for s in [&a, &b] {
        assert_eq!(s.commands(), ["sleep 300"], "ran once");
        assert!(s.violations().is_empty(), "{:?}", s.violations());
    }
}
