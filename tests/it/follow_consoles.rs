//! `--follow` with BattlEye, WebRCON and telnet: the messages the practice consoles push (as
//! the real games word them: a stand-in player joins, chats and leaves through the `join`,
//! `chat` and `leave` test hooks run by a second client) come out as joined/left/message
//! events, through a pipe (NDJSON, `--exec`) and in a real PTY, across a server restart.

use std::net::SocketAddr;
use std::time::Duration;

use rconsole::consoles::practice::{ConsoleServer, ConsoleServerConfig, Kind};
use serde_json::Value;

use crate::common;
use crate::consoles_common::rcon_dialect;
use crate::consoles_fanout::write_config;
use crate::follow::{Follower, after_time};

fn config(kind: Kind, bind: SocketAddr) -> ConsoleServerConfig {
    ConsoleServerConfig {
        bind,
        password: common::PASSWORD.into(),
        kind,
        ..ConsoleServerConfig::default()
    }
}

fn start(kind: Kind, bind: SocketAddr) -> ConsoleServer {
    match kind {
        Kind::BattlEye | Kind::BattlEyeLossy | Kind::BattlEyeReforger => {
            ConsoleServer::start(config(kind, bind))
        }
        // On a listener a hold can share, so the port is never free while the server restarts
        // (common::stop_holding, then back_on).
        Kind::WebRcon | Kind::Telnet => {
            ConsoleServer::serve(common::listener(bind), config(kind, bind))
        }
    }
    .expect("start practice console server")
}

/// A WebRCON or telnet server of `kind` again on the port `held` kept while it was down.
fn back_on(kind: Kind, held: common::ClosedPort) -> ConsoleServer {
    let addr = held.addr();
    ConsoleServer::serve(held.listen(), config(kind, addr)).expect("serve on the held port")
}

/// A profile `[servers.NAME]` for 127.0.0.1:`port` with the test password.
fn profile(name: &str, port: u16, dialect: &str) -> String {
    format!(
        "[servers.{name}]\nhost = \"127.0.0.1\"\nport = {port}\npassword = \"{}\"\ndialect = \"{dialect}\"\n\n",
        common::PASSWORD
    )
}

/// Runs a test hook (`join Steve`, ...) on `server` as another client.
fn hook(server: &ConsoleServer, dialect: &str, words: &[&str]) {
    let home = common::home();
    let out = common::run(rcon_dialect(server, dialect, home.path()).args(words));
    assert!(out.status.success(), "{words:?}: {}", common::stderr(&out));
    assert_eq!(common::stdout(&out), "ok\n", "{words:?}");
}

/// What each game pushes, as (event, player, text) per line, after the mapping.
struct Expect {
    kind: Kind,
    dialect: &'static str,
    /// Lines that follow a `joined` (the BE GUID line, 7DTD's GMSG line).
    after_join: fn(&str) -> Vec<String>,
    after_leave: fn(&str) -> Vec<String>,
    chat: fn(&str, &str) -> String,
}

fn none(_: &str) -> Vec<String> {
    Vec::new()
}

const BATTLEYE: Expect = Expect {
    kind: Kind::BattlEye,
    dialect: "battleye",
    after_join: |n| {
        vec![format!(
            "Player #0 {n} - BE GUID: 0123456789abcdef0123456789abcdef"
        )]
    },
    after_leave: none,
    chat: |n, t| format!("(Global) {n}: {t}"),
};

const TELNET: Expect = Expect {
    kind: Kind::Telnet,
    dialect: "telnet",
    after_join: |n| vec![format!("GMSG: Player '{n}' joined the game")],
    after_leave: |n| vec![format!("GMSG: Player '{n}' left the game")],
    chat: |n, t| {
        format!("Chat (from 'Steam_76561198000000001', entity id '171', to 'Global'): '{n}': {t}")
    },
};

const WEBRCON: Expect = Expect {
    kind: Kind::WebRcon,
    dialect: "webrcon",
    after_join: none,
    after_leave: none,
    chat: |n, t| format!("{n}: {t}"),
};

fn event(f: &mut Follower) -> Value {
    let line = f.line();
    serde_json::from_str(&line).unwrap_or_else(|e| panic!("{e}: {line:?}"))
}

fn expect_player(f: &mut Follower, want: &str, player: &str, server: &str) {
    let e = event(f);
    assert_eq!(e["event"], want, "{e}");
    assert_eq!(e["player"], player, "{e}");
    assert_eq!(e["server"], server, "{e}");
    let raw = e["raw"].as_str().unwrap_or_else(|| panic!("no raw: {e}"));
    assert!(raw.contains(player), "{e}");
    assert!(e["time"].as_str().is_some_and(|t| t.ends_with('Z')), "{e}");
}

fn expect_message(f: &mut Follower, text: &str) {
    let e = event(f);
    assert_eq!(e["event"], "message", "{e}");
    assert_eq!(e["response"], text, "{e}");
    let raw = e["raw"].as_str().unwrap_or_else(|| panic!("no raw: {e}"));
    if raw.starts_with('{') {
        // Rust's chat: the frame's Message is the chat as JSON, kept as it came.
        let chat: Value = serde_json::from_str(raw).unwrap();
        assert_eq!(
            format!(
                "{}: {}",
                chat["Username"].as_str().unwrap(),
                chat["Message"].as_str().unwrap()
            ),
            text
        );
    } else {
        assert!(raw.ends_with(text), "{e}");
    }
    assert!(e.get("player").is_none(), "{e}");
}

fn follow_through_a_pipe_across_a_restart(x: &Expect) {
    let server = start(x.kind, "127.0.0.1:0".parse().unwrap());
    let addr = server.addr();
    let name = addr.to_string();
    let home = common::home();
    // --exec's command is sh (the Windows build runs cmd): its file is checked on Unix only.
    #[cfg(unix)]
    let events = home.path().join("events.txt");
    let mut cmd = rcon_dialect(&server, x.dialect, home.path());
    // A vanished BattlEye server is noticed by its unanswered keep-alive.
    cmd.env("RCON_BATTLEYE_KEEPALIVE", "300ms")
        .args(["-t", "3s", "--follow", "--json"]);
    #[cfg(unix)]
    cmd.arg("--exec").arg(format!(
        "printf '%s|%s|%s|%s\\n' \"$RCON_EVENT\" \"$RCON_EVENT_PLAYER\" \"$RCON_EVENT_TEXT\" \"${{RCON_PASSWORD:-no password}}\" >> '{}'",
        events.display()
    ));
    let mut f = Follower::spawn(&mut cmd);
    let note = f.wait_err("following");
    assert!(note.contains("the messages the server pushes"), "{note}");

    hook(&server, x.dialect, &["join", "Steve"]);
    expect_player(&mut f, "joined", "Steve", &name);
    for m in (x.after_join)("Steve") {
        expect_message(&mut f, &m);
    }
    hook(&server, x.dialect, &["chat", "Steve", "hello there"]);
    expect_message(&mut f, &(x.chat)("Steve", "hello there"));
    hook(&server, x.dialect, &["leave", "Steve"]);
    expect_player(&mut f, "left", "Steve", &name);
    for m in (x.after_leave)("Steve") {
        expect_message(&mut f, &m);
    }

    // The server goes away: said once, retried, and the follow goes on after it is back.
    // A TCP server's port is held while it is down (from before the stop, so nobody takes it
    // in between), let go once the server listens on it again. (BattlEye's is a UDP port: a
    // TCP socket of anyone may have the same number.)
    let down = match x.kind {
        Kind::BattlEye => {
            drop(server);
            None
        }
        _ => Some(common::stop_holding(addr, || drop(server))),
    };
    f.wait_err("connection lost");
    let server = match down {
        Some(held) => back_on(x.kind, held),
        None => start(x.kind, addr),
    };
    f.wait_err("reconnected");
    hook(&server, x.dialect, &["join", "Alex"]);
    expect_player(&mut f, "joined", "Alex", &name);
    for m in (x.after_join)("Alex") {
        expect_message(&mut f, &m);
    }

    #[cfg(unix)]
    {
        // --exec ran once per event, in order, with the event in the environment and without
        // the password.
        let mut want: Vec<String> = vec!["joined|Steve||no password".into()];
        let msg = |t: String| format!("message||{t}|no password");
        want.extend((x.after_join)("Steve").into_iter().map(msg));
        want.push(msg((x.chat)("Steve", "hello there")));
        want.push("left|Steve||no password".into());
        want.extend((x.after_leave)("Steve").into_iter().map(msg));
        want.push("joined|Alex||no password".into());
        want.extend((x.after_join)("Alex").into_iter().map(msg));
        let deadline = std::time::Instant::now() + Duration::from_secs(30);
        let got = loop {
            let got = std::fs::read_to_string(&events).unwrap_or_default();
            if got.lines().count() >= want.len() || std::time::Instant::now() > deadline {
                break got;
            }
            std::thread::sleep(Duration::from_millis(20));
        };
        assert_eq!(got.lines().collect::<Vec<_>>(), want, "{}", x.dialect);
    }
    assert!(
        !f.drain_err().iter().any(|l| l.contains(common::PASSWORD)),
        "the password appeared on stderr"
    );
}

#[test]
fn battleye_messages_through_a_pipe_survive_a_restart() {
    follow_through_a_pipe_across_a_restart(&BATTLEYE);
}

#[test]
fn telnet_messages_through_a_pipe_survive_a_restart() {
    follow_through_a_pipe_across_a_restart(&TELNET);
}

#[test]
fn webrcon_messages_through_a_pipe_survive_a_restart() {
    follow_through_a_pipe_across_a_restart(&WEBRCON);
}

#[test]
fn poll_is_refused_for_consoles_and_a_mixed_group_is_refused() {
    let server = start(Kind::Telnet, "127.0.0.1:0".parse().unwrap());
    let home = common::home();
    let out = common::run(
        rcon_dialect(&server, "telnet", home.path()).args(["--follow", "--poll", "1s"]),
    );
    assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
    assert!(
        common::stderr(&out).starts_with("rcon: error: --poll is for RCON servers"),
        "{}",
        common::stderr(&out)
    );
    let rcon = common::server(rconsole::practice::PracticeMode::Vanilla, Duration::ZERO);
    write_config(
        home.path(),
        &format!(
            "{}{}",
            profile("a", rcon.port(), "minecraft"),
            profile("b", server.port(), "telnet")
        ),
    );
    let out = common::run(common::rcon_in(home.path()).args(["-s", "a,b", "--follow"]));
    assert_eq!(out.status.code(), Some(2), "{}", common::stderr(&out));
    assert!(
        common::stderr(&out).contains("not both at once"),
        "{}",
        common::stderr(&out)
    );
}

#[test]
fn a_console_follow_that_cannot_log_in_fails_at_once() {
    let server = start(Kind::WebRcon, "127.0.0.1:0".parse().unwrap());
    let home = common::home();
    let out = common::run(
        rcon_dialect(&server, "webrcon", home.path())
            .env("RCON_PASSWORD", "wrong")
            .arg("--follow"),
    );
    assert_eq!(out.status.code(), Some(5), "{}", common::stderr(&out));
    assert!(!common::stderr(&out).contains("following"));
}

#[test]
fn several_consoles_are_followed_with_their_names() {
    let a = start(Kind::Telnet, "127.0.0.1:0".parse().unwrap());
    let b = start(Kind::BattlEye, "127.0.0.1:0".parse().unwrap());
    let home = common::home();
    write_config(
        home.path(),
        &format!(
            "{}{}",
            profile("a", a.port(), "telnet"),
            profile("b", b.port(), "battleye")
        ),
    );
    let mut f = Follower::spawn(common::rcon_in(home.path()).args(["-s", "a,b", "--follow"]));
    f.wait_err("following a, b");
    hook(&b, "battleye", &["leave", "Steve"]);
    let line = f.line();
    let rest = line
        .strip_prefix("[b] ")
        .unwrap_or_else(|| panic!("{line:?}"));
    assert_eq!(after_time(rest), "left Steve");
    hook(&a, "telnet", &["chat", "Alex", "hi"]);
    let line = f.line();
    let rest = line
        .strip_prefix("[a] ")
        .unwrap_or_else(|| panic!("{line:?}"));
    assert_eq!(
        after_time(rest),
        "message Chat (from 'Steam_76561198000000001', entity id '171', to 'Global'): 'Alex': hi"
    );
}

#[test]
fn telnet_messages_in_a_terminal_across_a_restart() {
    use common::term::Term;
    let server = start(Kind::Telnet, "127.0.0.1:0".parse().unwrap());
    let addr = server.addr();
    let home = common::home();
    let mut term = Term::start(addr, home.path(), &["--dialect", "telnet", "--follow"]);
    term.wait_for("Ctrl-C stops");
    hook(&server, "telnet", &["join", "Steve"]);
    term.wait_for("Z joined Steve");
    term.wait_for("Z message GMSG: Player 'Steve' joined the game");
    let down = common::stop_holding(addr, || drop(server));
    term.wait_for("connection lost");
    let server = back_on(Kind::Telnet, down);
    term.wait_for("reconnected");
    hook(&server, "telnet", &["leave", "Steve"]);
    term.wait_for("Z left Steve");
    term.send("\x03");
    assert_ne!(term.exit_code(), 0);
    assert!(!term.raw().contains(common::PASSWORD));
}

/// A large group of consoles is followed on the event loop as RCON's is: one thread for all of
/// its servers (Linux counts them in /proc; a thread per server before), and every server's
/// pushed message comes out.
#[cfg(target_os = "linux")]
#[test]
fn a_large_group_of_consoles_is_followed_on_one_event_loop() {
    let server = start(Kind::Telnet, "127.0.0.1:0".parse().unwrap());
    let home = common::home();
    let inventory = common::same_server_inventory(home.path(), 100, server.port());
    let mut f = Follower::spawn(
        common::rcon_in(home.path())
            .env("RCON_PASSWORD", common::PASSWORD)
            .args(["--dialect", "telnet", "--targets", &inventory, "--follow"]),
    );
    let line = f.wait_err("rcon: following");
    assert!(
        line.starts_with("rcon: following s0, s1, s2 and 97 more servers (the messages"),
        "{line}"
    );
    let threads = std::fs::read_dir(format!("/proc/{}/task", f.child.id()))
        .unwrap()
        .count();
    assert!(threads <= 3, "{threads} threads for 100 servers");
    hook(&server, "telnet", &["join", "Steve"]);
    let mut joined = std::collections::BTreeSet::new();
    while joined.len() < 100 {
        let line = f.line();
        if let Some((name, rest)) = line.strip_prefix('[').and_then(|l| l.split_once("] "))
            && after_time(rest) == "joined Steve"
        {
            joined.insert(name.to_string());
        }
    }
}
