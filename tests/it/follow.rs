//! `--follow` through a pipe and in a real PTY: RCON (a poll of `list` diffed into joined/left)
//! and management notifications, each with a server restart in the middle, and `--exec`.

use crate::common;
use crate::common::mgmt;

use std::io::{BufRead, BufReader};
use std::process::{Child, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::{Duration, Instant};

use serde_json::Value;

/// Long enough for a loaded machine; the waits end as soon as the line is there.
const WAIT: Duration = Duration::from_secs(30);

/// A running `rcon --follow` with its output lines arriving on channels.
pub(crate) struct Follower {
    pub(crate) child: Child,
    out: Receiver<String>,
    err: Receiver<String>,
    seen_err: Vec<String>,
}

impl Follower {
    pub(crate) fn spawn(cmd: &mut std::process::Command) -> Follower {
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn rcon");
        let lines = |r: Box<dyn std::io::Read + Send>| {
            let (tx, rx) = mpsc::channel();
            std::thread::spawn(move || {
                for line in BufReader::new(r).lines() {
                    let Ok(line) = line else { break };
                    if tx.send(line).is_err() {
                        break;
                    }
                }
            });
            rx
        };
        let out = lines(Box::new(child.stdout.take().unwrap()));
        let err = lines(Box::new(child.stderr.take().unwrap()));
        Follower {
            child,
            out,
            err,
            seen_err: Vec::new(),
        }
    }

    /// The next stdout line.
    pub(crate) fn line(&mut self) -> String {
        self.out.recv_timeout(WAIT).unwrap_or_else(|_| {
            let _ = self.child.kill();
            panic!(
                "no event line within {WAIT:?}; stderr: {:?}",
                self.drain_err()
            )
        })
    }

    pub(crate) fn drain_err(&mut self) -> Vec<String> {
        while let Ok(l) = self.err.try_recv() {
            self.seen_err.push(l);
        }
        self.seen_err.clone()
    }

    /// Waits for a stderr line containing `needle`.
    pub(crate) fn wait_err(&mut self, needle: &str) -> String {
        let deadline = Instant::now() + WAIT;
        loop {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.err.recv_timeout(left) {
                Ok(l) => {
                    self.seen_err.push(l.clone());
                    if l.contains(needle) {
                        return l;
                    }
                }
                Err(_) => {
                    let _ = self.child.kill();
                    panic!("stderr never said {needle:?}: {:?}", self.seen_err)
                }
            }
        }
    }
}

impl Drop for Follower {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// `2026-12-02T01:30:00Z EVENT...`: the time is RFC 3339 UTC, the rest is returned.
pub(crate) fn after_time(line: &str) -> &str {
    let (time, rest) = line.split_once(' ').unwrap_or_else(|| panic!("{line:?}"));
    assert_eq!(time.len(), 20, "{line:?}");
    assert!(
        time.ends_with('Z') && time.as_bytes()[10] == b'T',
        "{line:?}"
    );
    rest
}

#[test]
fn rcon_poll_through_a_pipe_survives_a_restart() {
    let server = common::restartable_vanilla("127.0.0.1:0".parse().unwrap());
    let addr = server.addr();
    let home = common::home();
    // --exec's command is sh (the Windows build runs cmd): its files are checked on Unix only.
    #[cfg(unix)]
    let (events, stdin_copy) = (
        home.path().join("events.txt"),
        home.path().join("stdin.txt"),
    );
    let mut cmd = common::rcon_for(&server, home.path());
    cmd.args(["--follow", "--poll", "100ms", "--json"]);
    #[cfg(unix)]
    cmd.arg("--exec").arg(format!(
        "printf '%s %s %s\\n' \"$RCON_EVENT\" \"$RCON_EVENT_PLAYER\" \"${{RCON_PASSWORD:-no password}}\" >> '{}'; cat >> '{}'",
        events.display(),
        stdin_copy.display()
    ));
    let mut f = Follower::spawn(&mut cmd);
    let note = f.wait_err("following");
    assert!(note.contains("polling `list` every 100ms"), "{note}");

    server.set_players(&["Steve"]);
    let e: Value = serde_json::from_str(&f.line()).unwrap();
    assert_eq!(e["event"], "joined");
    assert_eq!(e["player"], "Steve");
    assert_eq!(e["server"], format!("127.0.0.1:{}", addr.port()));
    // The one record schema (issue 20): an event has a command record's keys, plus its player.
    assert_eq!(
        common::json_keys(&e),
        [
            "command",
            "elapsed_ms",
            "error",
            "event",
            "ok",
            "player",
            "reason",
            "response",
            "server",
            "time"
        ],
        "{e}"
    );
    assert!(e["command"].is_null() && e["ok"] == true, "{e}");
    server.set_players(&["Steve", "Alex"]);
    let e: Value = serde_json::from_str(&f.line()).unwrap();
    assert_eq!(
        (e["event"].as_str(), e["player"].as_str()),
        (Some("joined"), Some("Alex"))
    );

    // The server goes away: said once, then retried. Held while down: refused, and no other
    // test's server can take the port meanwhile.
    let down = common::stop_holding(addr, || drop(server));
    f.wait_err("connection lost");
    let server = down.serve(common::vanilla_config(addr));
    server.set_players(&["Alex"]);
    f.wait_err("reconnected");
    // What changed while it was away comes as events after the reconnect.
    let e: Value = serde_json::from_str(&f.line()).unwrap();
    assert_eq!(
        (e["event"].as_str(), e["player"].as_str()),
        (Some("left"), Some("Steve"))
    );
    server.set_players(&["Alex", "Bob"]);
    let e: Value = serde_json::from_str(&f.line()).unwrap();
    assert_eq!(
        (e["event"].as_str(), e["player"].as_str()),
        (Some("joined"), Some("Bob"))
    );

    #[cfg(unix)]
    {
        // --exec ran once per event, in order, with the event in the environment (and not
        // the password) and as JSON on stdin.
        let deadline = Instant::now() + WAIT;
        while std::fs::read_to_string(&events)
            .unwrap_or_default()
            .lines()
            .count()
            < 4
        {
            assert!(Instant::now() < deadline, "exec did not run 4 times");
            std::thread::sleep(Duration::from_millis(20));
        }
        assert_eq!(
            std::fs::read_to_string(&events).unwrap(),
            "joined Steve no password\njoined Alex no password\nleft Steve no password\njoined Bob no password\n"
        );
        let stdin_lines = std::fs::read_to_string(&stdin_copy).unwrap();
        let first: Value = serde_json::from_str(stdin_lines.lines().next().unwrap()).unwrap();
        assert_eq!(first["event"], "joined");
        assert_eq!(first["player"], "Steve");
    }
    assert!(
        !f.drain_err().iter().any(|l| l.contains(common::PASSWORD)),
        "the password appeared on stderr"
    );
}

#[test]
fn management_notifications_through_a_pipe_survive_a_restart() {
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let addr = server.addr();
    let home = common::home();
    let mut f = Follower::spawn(mgmt::rcon(&server, &tls, home.path()).arg("--follow"));
    f.wait_err("following");
    server.join("Steve");
    assert_eq!(after_time(&f.line()), "joined Steve");
    // A save made by another client is seen as notifications.
    let out = common::run(mgmt::rcon(&server, &tls, home.path()).args(["server", "save"]));
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_eq!(after_time(&f.line()), "saving");
    assert_eq!(after_time(&f.line()), "saved");
    server.leave("Steve");
    assert_eq!(after_time(&f.line()), "left Steve");

    // Restart: the stop is announced, the connection lost, retried, and following goes on.
    server.shutdown();
    // Held while down, let go only as the server binds it again.
    let down = common::hold_port(addr);
    assert_eq!(after_time(&f.line()), "stopping");
    f.wait_err("connection lost");
    drop(down);
    let server = mgmt::start(addr, &tls, None);
    f.wait_err("reconnected");
    server.join("Alex");
    assert_eq!(after_time(&f.line()), "joined Alex");
    assert!(!f.drain_err().iter().any(|l| l.contains(mgmt::SECRET)));
}

#[test]
fn a_follow_that_cannot_connect_at_first_fails_at_once() {
    let home = common::home();
    let out = common::run(common::rcon_at(1, home.path()).args(["--follow", "--poll", "100ms"]));
    assert_eq!(out.status.code(), Some(4), "{}", common::stderr(&out));
    assert!(
        common::stderr(&out).contains("cannot connect"),
        "{}",
        common::stderr(&out)
    );
}

/// Every server of a group is connected to at once before the follow starts: a server that
/// never answers fails the run after one timeout, and by then the next one was tried too (one
/// after another, the run ended at the first and never reached the second). The same for the
/// consoles that push their messages (telnet here).
#[test]
fn a_group_is_connected_to_at_once_and_a_silent_server_fails_it_after_one_timeout() {
    for dialect in ["minecraft", "telnet"] {
        let (a, b) = (common::black_hole(), common::black_hole());
        let home = common::home();
        let out = common::run(
            common::rcon_in(home.path())
                .env("RCON_PASSWORD", common::PASSWORD)
                .args(["--dialect", dialect, "-t", "1s"])
                .args(["--target", &format!("a=127.0.0.1:{}", a.port())])
                .args(["--target", &format!("b=127.0.0.1:{}", b.port())])
                .arg("--follow"),
        );
        let err = common::stderr(&out);
        assert_eq!(out.status.code(), Some(6), "{dialect}: {err}");
        assert!(err.starts_with("rcon: error: [a] "), "{dialect}: {err}");
        assert_eq!(
            (a.accepted_at_least(1), b.accepted_at_least(1)),
            (1, 1),
            "{dialect}: {err}"
        );
    }
}

/// A large group is followed on the event loop: one thread for all of its servers (Linux
/// counts them in /proc; a thread per server before), its connections within a soft
/// descriptor limit far below what it needs (raised, as fan-out raises it), and every server
/// asked again and again.
#[cfg(target_os = "linux")]
#[test]
fn a_large_group_is_followed_on_one_event_loop() {
    let server = common::strict_vanilla();
    let home = common::home();
    let inventory = common::same_server_inventory(home.path(), 200, server.port());
    let mut cmd = common::rcon_in(home.path());
    cmd.env("RCON_PASSWORD", common::PASSWORD).args([
        "--targets",
        &inventory,
        "--poll",
        "100ms",
        "--follow",
    ]);
    let mut f = Follower::spawn(&mut common::under_ulimit(&cmd, "-Sn 128"));
    let line = f.wait_err("rcon: following");
    assert!(
        line.starts_with("rcon: following s0, s1, s2 and 197 more servers by polling"),
        "{line}"
    );
    // `sh` ran `exec rcon`: the same process.
    let threads = std::fs::read_dir(format!("/proc/{}/task", f.child.id()))
        .unwrap()
        .count();
    assert!(threads <= 3, "{threads} threads for 200 servers");
    let deadline = Instant::now() + WAIT;
    let lists = || server.commands().iter().filter(|c| *c == "list").count();
    while lists() < 600 {
        assert!(Instant::now() < deadline, "{} polls in {WAIT:?}", lists());
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(
        f.drain_err().iter().all(|l| !l.contains("error")),
        "{:?}",
        f.drain_err()
    );
    // What the first answers taught is written once every server has answered, while the
    // follow goes on (not only when it ends, which a service's follow may never do).
    let learned = home.path().join("data/rconsole/learned-servers.toml");
    let text = std::fs::read_to_string(&learned).unwrap_or_default();
    assert!(
        text.contains(&format!("\"127.0.0.1:{} minecraft\"", server.port())),
        "{text:?}"
    );
}

mod pty {
    use super::*;
    use common::term::Term;

    #[test]
    fn rcon_poll_in_a_terminal() {
        let server = common::restartable_vanilla("127.0.0.1:0".parse().unwrap());
        let home = common::home();
        let mut term = Term::start(server.addr(), home.path(), &["--follow", "--poll", "100ms"]);
        term.wait_for("Ctrl-C stops");
        server.set_players(&["Steve"]);
        term.wait_for("Z joined Steve");
        server.set_players(&[]);
        term.wait_for("Z left Steve");
        term.send("\x03");
        // Ctrl-C ends it (the signal's status).
        assert_ne!(term.exit_code(), 0);
    }

    #[test]
    fn management_notifications_in_a_terminal_across_a_restart() {
        let tls = mgmt::tls();
        let server = mgmt::server(&tls);
        let addr = server.addr();
        let home = common::home();
        let mut args = mgmt::pty_args(&server, &tls, home.path());
        args.push("--follow".into());
        let args: Vec<&str> = args.iter().map(String::as_str).collect();
        let mut term = Term::start_with(home.path(), &args);
        term.wait_for("Ctrl-C stops");
        server.join("Steve");
        term.wait_for("Z joined Steve");
        server.shutdown();
        let down = common::hold_port(addr);
        term.wait_for("Z stopping");
        term.wait_for("connection lost");
        drop(down);
        let server = mgmt::start(addr, &tls, None);
        term.wait_for("reconnected");
        server.join("Alex");
        term.wait_for("Z joined Alex");
        term.send("\x03");
        assert_ne!(term.exit_code(), 0);
        assert!(!term.raw().contains(mgmt::SECRET));
    }
}

#[test]
fn several_servers_are_followed_at_once_with_their_names() {
    let a = common::restartable_vanilla("127.0.0.1:0".parse().unwrap());
    let b = common::restartable_vanilla("127.0.0.1:0".parse().unwrap());
    let home = common::home();
    let mut f = Follower::spawn(
        common::rcon_in(home.path())
            .env("RCON_PASSWORD", common::PASSWORD)
            .args(["--target", &format!("a=127.0.0.1:{}", a.port())])
            .args(["--target", &format!("b=127.0.0.1:{}", b.port())])
            .args(["--follow", "--poll", "100ms"]),
    );
    f.wait_err("following a, b");
    joins_come_labelled(&mut f, &a, &b);
}

/// A player joins `b`, then another `a`: each join comes as an event labelled with its
/// server's name (`[b]`, `[a]`), in that order.
pub(crate) fn joins_come_labelled(
    f: &mut Follower,
    a: &rconsole::practice::PracticeServer,
    b: &rconsole::practice::PracticeServer,
) {
    b.set_players(&["Steve"]);
    let line = f.line();
    let rest = line
        .strip_prefix("[b] ")
        .unwrap_or_else(|| panic!("{line:?}"));
    assert_eq!(after_time(rest), "joined Steve");
    a.set_players(&["Alex"]);
    let line = f.line();
    let rest = line
        .strip_prefix("[a] ")
        .unwrap_or_else(|| panic!("{line:?}"));
    assert_eq!(after_time(rest), "joined Alex");
}
