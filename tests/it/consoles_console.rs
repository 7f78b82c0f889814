//! The console (a real PTY) on BattlEye, WebRCON and telnet: commands answer as on RCON, and
//! the server's own messages appear live above the prompt, marked `[server]`, while the line
//! being typed stays intact below them.

use crate::common::term::Term;
use crate::consoles_common::*;
use std::sync::atomic::Ordering;

use rconsole::consoles::practice::Kind;

fn check_console(kind: Kind, dialect: &str) {
    let server = console_server(kind);
    let home = crate::common::home();
    // Telnet answers end on an idle gap: 500 ms, well short of `later`'s 1.5 s.
    let mut term = Term::start(
        server.addr(),
        home.path(),
        &["--dialect", dialect, "--idle-gap", "500ms"],
    );
    let prompt = format!("127.0.0.1:{}> ", server.port());
    term.wait_for_line(&prompt, "");
    term.enter(&prompt, "echo first");
    term.wait_for("first");
    // `later` answers `ok`, then the server sends a message on its own 1.5 s afterwards, while
    // the console waits at the prompt with a half-typed line.
    term.enter(&prompt, "later live news");
    term.send("echo sec");
    term.wait_for("Server: live news");
    // The half-typed line is still there, below the message, and runs when finished.
    term.wait_for_line(&prompt, "echo sec");
    term.send("ond\r");
    term.wait_for_line(&prompt, "");
    let screen = term.screen();
    let lines: Vec<&str> = screen.lines().collect();
    let msg = lines
        .iter()
        .position(|l| l.contains("Server: live news"))
        .expect("message on screen");
    assert!(lines[msg].starts_with("[server] "), "{dialect}:\n{screen}");
    let typed = lines
        .iter()
        .position(|l| l.ends_with("> echo second"))
        .expect("typed line on screen");
    assert!(
        msg < typed,
        "{dialect}: the message is above the edited line:\n{screen}"
    );
    let next = lines[typed + 1..]
        .iter()
        .find(|l| !l.starts_with("[server] "));
    assert_eq!(next, Some(&"second"), "{dialect}:\n{screen}");
    // The message never went into a command's output: `later` answered just `ok`.
    let later = lines
        .iter()
        .position(|l| l.ends_with("> later live news"))
        .expect("later on screen");
    let answers: Vec<&&str> = lines[later + 1..typed]
        .iter()
        .filter(|l| !l.starts_with("[server] "))
        .collect();
    assert_eq!(answers, [&"ok"], "{dialect}:\n{screen}");
    term.line(&prompt, ":quit");
    assert_eq!(term.exit_code(), 0, "{dialect}");
}

#[test]
fn battleye_console_shows_server_messages_live() {
    check_console(Kind::BattlEye, "battleye");
}

#[test]
fn webrcon_console_shows_server_messages_live() {
    check_console(Kind::WebRcon, "webrcon");
}

#[test]
fn telnet_console_shows_server_messages_live() {
    check_console(Kind::Telnet, "telnet");
}

/// Ctrl-C while a console command waits abandons it, as with RCON; the next command logs in
/// again and works.
fn check_ctrl_c(kind: Kind, dialect: &str) {
    let server = console_server(kind);
    let home = crate::common::home();
    let mut term = Term::start(server.addr(), home.path(), &["--dialect", dialect]);
    let prompt = format!("127.0.0.1:{}> ", server.port());
    term.wait_for_line(&prompt, "");
    term.line(&prompt, "hang");
    // Ctrl-C once the command is out (before that the console would drop it as stale).
    let start = std::time::Instant::now();
    while server.stats().executed.load(Ordering::SeqCst) == 0 {
        assert!(
            start.elapsed() < crate::common::term::LIMIT,
            "hang never arrived"
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    term.send("\x03");
    term.wait_for("interrupted: the command was abandoned");
    term.wait_for_line(&prompt, "");
    term.enter(&prompt, "echo after");
    term.wait_for("\nafter");
    term.line(&prompt, ":quit");
    assert_eq!(term.exit_code(), 0, "{dialect}");
}

#[test]
fn battleye_ctrl_c_abandons_a_command() {
    check_ctrl_c(Kind::BattlEye, "battleye");
}

#[test]
fn webrcon_ctrl_c_abandons_a_command() {
    check_ctrl_c(Kind::WebRcon, "webrcon");
}
