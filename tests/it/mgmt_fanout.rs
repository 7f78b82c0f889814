//! `--mgmt` over several servers: the method runs on each (profiles with their own mgmt_url),
//! output labelled `[NAME] ` per line as RCON fan-out labels it, `server` in JSON, failures as
//! `rcon: error: [NAME] ...`, the worst exit status; what does not work on several is refused.

use serde_json::Value;

use crate::common::{self, mgmt};
use crate::consoles_fanout::write_config;

fn profile(name: &str, url: &str, cert: &std::path::Path) -> String {
    format!(
        "[servers.{name}]\nhost = \"127.0.0.1\"\nmgmt_url = \"{url}\"\nmgmt_cert = {}\n\n",
        // A TOML string: a Windows path's backslashes are escapes in a basic string.
        toml::Value::String(cert.display().to_string())
    )
}

/// A config with profiles `a` and `b` on those management servers.
fn two_servers(
    home: &std::path::Path,
    tls: &mgmt::Tls,
    a: &rconsole::mgmt::practice::MgmtPracticeServer,
    b: &rconsole::mgmt::practice::MgmtPracticeServer,
) {
    write_config(
        home,
        &format!(
            "{}{}",
            profile("a", &mgmt::url(a), &tls.cert),
            profile("b", &mgmt::url(b), &tls.cert)
        ),
    );
}

/// `rcon --mgmt -s a,dead` with profile `a` on `alive` and `dead` on a port nobody listens on.
fn with_a_dead_one(
    home: &std::path::Path,
    tls: &mgmt::Tls,
    alive: &rconsole::mgmt::practice::MgmtPracticeServer,
) -> std::process::Command {
    write_config(
        home,
        &format!(
            "{}{}",
            profile("a", &mgmt::url(alive), &tls.cert),
            profile("dead", "wss://127.0.0.1:1", &tls.cert)
        ),
    );
    let mut cmd = common::rcon_in(home);
    cmd.env("RCON_MGMT_SECRET", mgmt::SECRET)
        .args(["--mgmt", "-s", "a,dead"]);
    cmd
}

fn sorted(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.sort();
    lines
}

#[test]
fn a_method_on_several_servers_labelled_by_server() {
    let tls = mgmt::tls();
    let (a, b) = (mgmt::server(&tls), mgmt::server(&tls));
    a.join("Steve");
    b.join("Alex");
    b.join("Notch");
    let home = common::home();
    write_config(
        home.path(),
        &format!(
            "{}{}[servers.both]\nservers = [\"a\", \"b\"]\n",
            profile("a", &mgmt::url(&a), &tls.cert),
            profile("b", &mgmt::url(&b), &tls.cert)
        ),
    );
    let rcon = || {
        let mut c = common::rcon_in(home.path());
        c.env("RCON_MGMT_SECRET", mgmt::SECRET);
        c
    };
    let out = common::run(rcon().args(["--mgmt", "-s", "a,b", "-c", "players"]));
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_eq!(
        sorted(&common::stdout(&out)),
        ["[a] Steve", "[b] Alex", "[b] Notch"]
    );
    // A group, JSON with the server's name.
    let out = common::run(rcon().args(["-s", "both", "--json", "--mgmt", "players"]));
    assert!(out.status.success(), "{}", common::stderr(&out));
    let mut got: Vec<(String, usize)> = common::stdout(&out)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["ok"], true, "{v}");
            assert_eq!(v["method"], "minecraft:players", "{v}");
            (
                v["server"].as_str().unwrap().to_string(),
                v["result"].as_array().unwrap().len(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(got, [("a".to_string(), 1), ("b".to_string(), 2)]);
    assert!(!common::stderr(&out).contains(mgmt::SECRET));
    // Each server checks every call before its first: a mistyped one sends nothing anywhere.
    let out = common::run(rcon().args([
        "--mgmt",
        "-s",
        "a,b",
        "-c",
        "server system_message hello",
        "-c",
        "bogus",
    ]));
    assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
    assert_eq!(common::stdout(&out), "");
    let err = sorted(&common::stderr(&out));
    assert_eq!(err.len(), 2, "{err:?}");
    for (line, name) in err.iter().zip(["a", "b"]) {
        let want = format!("rcon: error: [{name}] 'bogus': no management method matches 'bogus'");
        assert!(line.starts_with(&want), "{line}");
        assert!(line.ends_with("; none of the 2 calls was sent"), "{line}");
    }
    assert!(a.system_messages().is_empty() && b.system_messages().is_empty());
}

/// Ctrl-C stops every server's calls (here in `--delay`'s pause after each one's first call)
/// and one line says what ran on all of them, as RCON fan-out does; the answers are on stdout.
#[cfg(unix)]
#[test]
fn ctrl_c_stops_every_servers_calls_with_one_line() {
    use std::process::Stdio;
    let tls = mgmt::tls();
    let (a, b) = (mgmt::server(&tls), mgmt::server(&tls));
    a.join("Steve");
    b.join("Alex");
    let home = common::home();
    write_config(
        home.path(),
        &format!(
            "{}{}",
            profile("a", &mgmt::url(&a), &tls.cert),
            profile("b", &mgmt::url(&b), &tls.cert)
        ),
    );
    let mut child = common::rcon_in(home.path())
        .env("RCON_MGMT_SECRET", mgmt::SECRET)
        .args(["--mgmt", "-s", "a,b", "--delay", "60s"])
        .args(["-c", "players", "-c", "players"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = common::lines_of(&mut child);
    let limit = std::time::Duration::from_secs(30);
    let mut got = Vec::new();
    for _ in 0..2 {
        got.push(rx.recv_timeout(limit).expect("each server's first answer"));
    }
    common::signal(&child, libc::SIGINT);
    let out = common::wait_with_timeout(child, limit);
    got.extend(rx.iter());
    got.sort();
    assert_eq!(out.status.code(), Some(130), "{}", common::stderr(&out));
    assert_eq!(got, ["[a] Steve", "[b] Alex"]);
    assert_eq!(
        common::stderr(&out),
        "rcon: error: interrupted by Ctrl-C: 2 commands ran on 2 servers, none was in flight, \
2 not sent\n"
    );
}

#[test]
fn a_dead_server_fails_alone_with_the_worst_exit_status() {
    let tls = mgmt::tls();
    let a = mgmt::server(&tls);
    a.join("Steve");
    let home = common::home();
    let out = common::run(with_a_dead_one(home.path(), &tls, &a).args(["-c", "players"]));
    assert_eq!(out.status.code(), Some(4), "{}", common::stderr(&out));
    assert_eq!(common::stdout(&out), "[a] Steve\n");
    let err = common::stderr(&out);
    assert!(err.starts_with("rcon: error: [dead] "), "{err}");
    assert!(err.contains("cannot connect"), "{err}");
}

/// `--retry N` on several management servers: each unreachable one is tried again N times,
/// counted on its own (one warning per pause, `retry 1 of 2` then `retry 2 of 2`), fails alone
/// with its one error line, and the server that answered printed its result.
#[test]
fn each_of_several_servers_counts_its_own_retries() {
    let tls = mgmt::tls();
    let a = mgmt::server(&tls);
    a.join("Steve");
    let (x, y) = (common::closed_port(), common::closed_port());
    let home = common::home();
    let url = |port: u16| format!("wss://127.0.0.1:{port}");
    write_config(
        home.path(),
        &format!(
            "{}{}{}",
            profile("a", &mgmt::url(&a), &tls.cert),
            profile("x", &url(x.port()), &tls.cert),
            profile("y", &url(y.port()), &tls.cert)
        ),
    );
    let out = common::run(
        common::rcon_in(home.path())
            .env("RCON_MGMT_SECRET", mgmt::SECRET)
            .args(["--mgmt", "-s", "a,x,y", "--retry", "2", "-c", "players"]),
    );
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert_eq!(common::stdout(&out), "[a] Steve\n", "{err}");
    for (name, port) in [("x", x.port()), ("y", y.port())] {
        let at = format!("127.0.0.1:{port}");
        let retries: Vec<&str> = err
            .lines()
            .filter(|l| l.contains(&at) && l.contains("retrying in"))
            .collect();
        assert_eq!(retries.len(), 2, "{name}: {err}");
        assert!(retries[0].starts_with("rcon: warning: "), "{err}");
        assert!(retries[0].ends_with("(retry 1 of 2)"), "{name}: {err}");
        assert!(retries[1].ends_with("(retry 2 of 2)"), "{name}: {err}");
        let failed = format!("rcon: error: [{name}] ");
        let failures: Vec<&str> = err.lines().filter(|l| l.starts_with(&failed)).collect();
        assert_eq!(failures.len(), 1, "{name}: {err}");
        assert!(failures[0].contains("cannot connect"), "{err}");
    }
    assert_eq!(err.lines().count(), 6, "{err}");
}

#[test]
fn what_needs_one_server_is_refused_on_several_and_a_dead_follow_fails_at_once() {
    let home = common::home();
    let tls = mgmt::tls();
    write_config(
        home.path(),
        &format!(
            "{}{}",
            profile("a", "wss://127.0.0.1:1", &tls.cert),
            profile("b", "wss://127.0.0.1:2", &tls.cert)
        ),
    );
    for (args, says) in [
        (
            &["--mgmt", "-s", "a,b", "--follow"][..],
            "rcon: error: [a] cannot connect",
        ),
        (
            &["--mgmt", "wss://127.0.0.1:3", "-s", "a,b", "players"][..],
            "--mgmt URL names one server",
        ),
        (&["--mgmt", "-s", "a,b"][..], "needs the methods to call"),
    ] {
        let out = common::run(
            common::rcon_in(home.path())
                .env("RCON_MGMT_SECRET", mgmt::SECRET)
                .args(args),
        );
        // A follow connects to every server first: a dead one fails at once (exit 4).
        let want = if says.contains("cannot connect") {
            4
        } else {
            2
        };
        assert_eq!(
            out.status.code(),
            Some(want),
            "{args:?}: {}",
            common::stderr(&out)
        );
        assert!(
            common::stderr(&out).contains(says),
            "{args:?}: {}",
            common::stderr(&out)
        );
    }
}

/// A countdown over the management protocol on a group: every server connects first, then
/// gets each announcement and the final call in step; records carry their server.
#[test]
fn a_countdown_on_several_servers_runs_in_step() {
    let tls = mgmt::tls();
    let (a, b) = (mgmt::server(&tls), mgmt::server(&tls));
    let home = common::home();
    two_servers(home.path(), &tls, &a, &b);
    let out = common::run(
        common::rcon_in(home.path())
            .env("RCON_MGMT_SECRET", mgmt::SECRET)
            .env("RCON_CLOCK_SPEED", "120")
            .args([
                "--mgmt",
                "-s",
                "a,b",
                "--json",
                "--countdown",
                "2m",
                "--at",
                "1m,10s",
            ])
            .args(["--announce", "server system_message Restart in {left}"])
            .args(["--then", "server stop"]),
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_eq!(common::stderr(&out), "");
    for server in [&a, &b] {
        assert_eq!(
            server.system_messages(),
            ["Restart in 1 minute", "Restart in 10 seconds"]
        );
        assert!(server.stopped());
    }
    // Each step's records in the servers' order.
    let records: Vec<(String, String)> = common::stdout(&out)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["ok"], true, "{v}");
            (
                v["server"].as_str().unwrap().to_string(),
                v["command"].as_str().unwrap().to_string(),
            )
        })
        .collect();
    let servers: Vec<&str> = records.iter().map(|(s, _)| s.as_str()).collect();
    assert_eq!(servers, ["a", "b", "a", "b", "a", "b"], "{records:?}");
    assert_eq!(records[5].1, "server stop");
    // A server that cannot be reached takes no part, in one line; the others count down
    // (issue 41), and an announcement's `true` prints nothing, as RCON's `say` answers nothing.
    let c = mgmt::server(&tls);
    let out = common::run(
        with_a_dead_one(home.path(), &tls, &c)
            .env("RCON_CLOCK_SPEED", "120")
            .args(["--countdown", "1m", "--at", "10s"])
            .args(["--announce", "server system_message Restart in {left}"]),
    );
    let err = common::stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("rcon: error: [dead] "), "{err}");
    assert!(err.ends_with("; nothing was sent to it\n"), "{err}");
    assert_eq!(c.system_messages(), ["Restart in 10 seconds"]);
    assert_eq!(common::stdout(&out), "");
}

#[test]
fn notifications_of_several_servers_are_followed_with_their_names() {
    let tls = mgmt::tls();
    let (a, b) = (mgmt::server(&tls), mgmt::server(&tls));
    let home = common::home();
    two_servers(home.path(), &tls, &a, &b);
    let mut f = crate::follow::Follower::spawn(
        common::rcon_in(home.path())
            .env("RCON_MGMT_SECRET", mgmt::SECRET)
            .args(["--mgmt", "-s", "a,b", "--follow"]),
    );
    // Each server's thread says it follows, in either order.
    let mut said = [f.wait_err("following "), f.wait_err("following ")];
    said.sort();
    assert!(
        said[0].contains("following a ") && said[1].contains("following b "),
        "{said:?}"
    );
    b.join("Alex");
    let line = f.line();
    let rest = line
        .strip_prefix("[b] ")
        .unwrap_or_else(|| panic!("{line:?}"));
    assert_eq!(crate::follow::after_time(rest), "joined Alex");
    a.join("Steve");
    let line = f.line();
    let rest = line
        .strip_prefix("[a] ")
        .unwrap_or_else(|| panic!("{line:?}"));
    assert_eq!(crate::follow::after_time(rest), "joined Steve");
}

/// Ctrl-C ends every server's wait at once, whatever it waits for: here `a`'s call, which the
/// server holds for an hour, and `b`'s TLS handshake with a listener that never answers; one
/// line says `a`'s call was in flight and `b`'s was not sent, long before `--timeout` (60 s).
#[cfg(unix)]
#[test]
fn ctrl_c_ends_a_waiting_call_and_a_waiting_handshake_at_once() {
    use rconsole::mgmt::practice::MgmtPracticeConfig;
    use std::io::{BufRead, BufReader};
    use std::process::Stdio;
    let tls = mgmt::tls();
    let a = mgmt::start_with(MgmtPracticeConfig {
        answer_delay: Some(std::time::Duration::from_secs(3600)),
        ..mgmt::config(&tls)
    });
    let silent = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let b_url = format!("wss://{}", silent.local_addr().unwrap());
    let home = common::home();
    write_config(
        home.path(),
        &format!(
            "{}{}",
            profile("a", &mgmt::url(&a), &tls.cert),
            profile("b", &b_url, &tls.cert)
        ),
    );
    let mut child = common::rcon_in(home.path())
        .env("RCON_MGMT_SECRET", mgmt::SECRET)
        .args(["--mgmt", "-s", "a,b", "--trace", "--timeout", "60s"])
        .args(["-c", "players"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The hang guard only: the run ends long before it, or waits for --timeout.
    let limit = std::time::Duration::from_secs(30);
    let (accepted_tx, accepted) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        let _ = accepted_tx.send(silent.accept().map(|(stream, _)| stream));
    });
    let stderr_pipe = child.stderr.take().unwrap();
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || {
        for line in BufReader::new(stderr_pipe).lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // Held open, unanswered, until the run ends.
    let _b = accepted
        .recv_timeout(limit)
        .expect("b's connection")
        .unwrap();
    loop {
        let line = rx.recv_timeout(limit).expect("the trace of a's call");
        if line.starts_with("rcon: trace > ") && line.contains("minecraft:players") {
            break;
        }
    }
    common::signal(&child, libc::SIGINT);
    let out = common::wait_with_timeout(child, limit);
    let rest: Vec<String> = rx.iter().collect();
    assert_eq!(out.status.code(), Some(130), "{rest:?}");
    assert_eq!(common::stdout(&out), "");
    let errors: Vec<&String> = rest
        .iter()
        .filter(|l| !l.starts_with("rcon: trace"))
        .collect();
    assert_eq!(
        errors,
        [
            "rcon: error: interrupted by Ctrl-C: 0 commands ran on 2 servers, 1 was in flight \
             and may or may not have run ([a] 'players'), 1 not sent"
        ],
        "{rest:?}"
    );
}

/// How many servers the thread-count tests start, and the most threads rcon may have for them.
#[cfg(target_os = "linux")]
const SERVERS: usize = 40;
#[cfg(target_os = "linux")]
const MAX_THREADS: usize = 4;

/// A profile `s0`, `s1`, ... for each of `servers` in `home`'s config file; their names.
#[cfg(target_os = "linux")]
fn profiles_for(
    home: &std::path::Path,
    servers: &[rconsole::mgmt::practice::MgmtPracticeServer],
    tls: &mgmt::Tls,
) -> Vec<String> {
    let names: Vec<String> = (0..servers.len()).map(|i| format!("s{i}")).collect();
    let config: String = names
        .iter()
        .zip(servers)
        .map(|(name, s)| profile(name, &mgmt::url(s), &tls.cert))
        .collect();
    write_config(home, &config);
    names
}

/// Many servers' calls and their follow run on the event loop, not a thread per server: with
/// forty servers, each holding its connection in `--delay`'s pause after its first call (then
/// each followed), rcon runs on at most 4 threads. Read from /proc while it runs.
#[cfg(target_os = "linux")]
#[test]
fn many_servers_calls_and_follow_run_on_a_bounded_number_of_threads() {
    use std::process::Stdio;
    let tls = mgmt::tls();
    let servers: Vec<_> = (0..SERVERS).map(|_| mgmt::server(&tls)).collect();
    let home = common::home();
    let names = profiles_for(home.path(), &servers, &tls);
    let rcon = || {
        let mut c = common::rcon_in(home.path());
        c.env("RCON_MGMT_SECRET", mgmt::SECRET)
            .args(["--mgmt", "-s", &names.join(",")]);
        c
    };
    let threads = |pid: u32| {
        crate::fanout::threads_and_fds(pid)
            .expect("the running rcon's status")
            .0
    };
    let limit = std::time::Duration::from_secs(60);
    let mut child = rcon()
        .args(["--delay", "60s", "-c", "players", "-c", "players"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = common::lines_of(&mut child);
    for _ in 0..SERVERS {
        let line = rx.recv_timeout(limit).expect("each server's first answer");
        assert!(line.ends_with("] (none)"), "{line}");
    }
    // Every server waits in its pause now, its connection open.
    let running = threads(child.id());
    common::signal(&child, libc::SIGINT);
    let out = common::wait_with_timeout(child, limit);
    assert_eq!(out.status.code(), Some(130), "{}", common::stderr(&out));
    assert!(
        running <= MAX_THREADS,
        "{running} threads for {SERVERS} servers' calls"
    );
    let mut f = crate::follow::Follower::spawn(rcon().arg("--follow"));
    for _ in 0..SERVERS {
        f.wait_err("following ");
    }
    let following = threads(f.child.id());
    assert!(
        following <= MAX_THREADS,
        "{following} threads following {SERVERS} servers"
    );
}

/// A countdown on many servers runs on the event loop too, not a thread per server: with
/// forty servers that each hold the answer to its first announcement, rcon runs on at most 4
/// threads while every announcement is under way. Read from /proc while it runs.
#[cfg(target_os = "linux")]
#[test]
fn a_countdown_on_many_servers_runs_on_a_bounded_number_of_threads() {
    use rconsole::mgmt::practice::MgmtPracticeConfig;
    use std::process::Stdio;
    let tls = mgmt::tls();
    let servers: Vec<_> = (0..SERVERS)
        .map(|_| {
            mgmt::start_with(MgmtPracticeConfig {
                answer_delay: Some(std::time::Duration::from_secs(3600)),
                ..mgmt::config(&tls)
            })
        })
        .collect();
    let home = common::home();
    let names = profiles_for(home.path(), &servers, &tls);
    let mut child = common::rcon_in(home.path())
        .env("RCON_MGMT_SECRET", mgmt::SECRET)
        .args(["--mgmt", "-s", &names.join(",")])
        .args([
            "--countdown",
            "10m",
            "--announce",
            "server system_message {left}",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Every server has its first announcement, its answer held back: every call is under way.
    crate::countdown::interrupt::wait_until("every server's first announcement", || {
        servers.iter().all(|s| !s.system_messages().is_empty())
    });
    let running = crate::fanout::threads_and_fds(child.id());
    child.kill().unwrap();
    let out = child.wait_with_output().unwrap();
    let running = running
        .unwrap_or_else(|| panic!("the running rcon's status: {}", common::stderr(&out)))
        .0;
    assert!(
        running <= MAX_THREADS,
        "{running} threads for {SERVERS} servers' countdown"
    );
}
