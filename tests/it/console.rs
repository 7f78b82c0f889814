//! The interactive console in a real pseudo-terminal, read back through a terminal emulator
//! (vt100), so the assertions are on what a person would see. A Unix PTY, or ConPTY on
//! Windows (portable-pty; under Wine in .ci/cross.sh).

use std::net::SocketAddr;
use std::time::Duration;

use rconsole::practice::{PracticeConfig, PracticeMode, PracticeServer};

use crate::common::PASSWORD;
use crate::common::term::Term;

fn start_server(bind: SocketAddr) -> PracticeServer {
    PracticeServer::serve(crate::common::listener(bind), config(bind))
        .expect("start practice server")
}

/// The same server on a port held while it was down.
fn serve(port: crate::common::ClosedPort) -> PracticeServer {
    let addr = port.addr();
    port.serve(config(addr))
}

fn config(bind: SocketAddr) -> PracticeConfig {
    PracticeConfig {
        bind,
        password: PASSWORD.into(),
        mode: PracticeMode::Vanilla,
        read_delay: Duration::from_millis(2),
    }
}

fn prompt(server: &PracticeServer) -> String {
    format!("127.0.0.1:{}> ", server.port())
}

#[test]
fn runs_commands_and_shows_long_output_in_full() {
    let server = start_server("127.0.0.1:0".parse().unwrap());
    let home = crate::common::home();
    let mut term = Term::start(server.addr(), home.path(), &[]);
    let p = prompt(&server);
    term.wait_for(&p);
    term.wait_for("rcon: connected to 127.0.0.1:");
    term.wait_for(":help lists console commands");
    term.enter(&p, "echo hello there");
    term.wait_for("\nhello there\n");
    term.enter(&p, "chars 10000");
    term.wait_for_raw(&rconsole::practice::sample_text(10_000));
    term.enter(&p, "nosuchcommand");
    term.wait_for("Unknown or incomplete command");
    term.enter(&p, ":help");
    term.wait_for(":reconnect");
    term.line(&p, ":quit");
    assert_eq!(term.exit_code(), 0);
    assert_eq!(
        server.commands(),
        ["echo hello there", "chars 10000", "nosuchcommand"]
    );
}

#[test]
fn tab_completes_command_names() {
    let server = start_server("127.0.0.1:0".parse().unwrap());
    let home = crate::common::home();
    let mut term = Term::start(server.addr(), home.path(), &[]);
    let p = prompt(&server);
    term.wait_for(&p);
    term.send("gam\t");
    term.wait_for_line(&p, "game");
    term.send("\t");
    term.wait_for("gamemode");
    term.wait_for("gamerule");
    term.send("r\t");
    term.wait_for_line(&p, "gamerule");
    // The completion ended with a space: the next word follows directly.
    term.send("keepInventory");
    term.wait_for_line(&p, "gamerule keepInventory");
    term.send("\r");
    term.wait_for("Gamerule keepInventory is currently set to: false");
    term.wait_for_line(&p, "");
    term.send(":rec\t");
    term.wait_for_line(&p, ":reconnect");
    // Ctrl-U clears the line; Ctrl-D on the empty line leaves.
    term.send("\x15");
    term.wait_for_line(&p, "");
    term.send("\x04");
    assert_eq!(term.exit_code(), 0);
    assert_eq!(server.commands(), ["gamerule keepInventory"]);
}

#[test]
fn history_persists_in_the_data_dir_without_the_password() {
    let server = start_server("127.0.0.1:0".parse().unwrap());
    let home = crate::common::home();
    let p = prompt(&server);
    {
        let mut term = Term::start(server.addr(), home.path(), &[]);
        term.wait_for(&p);
        term.enter(&p, "echo one");
        term.enter(&p, &format!("say my password is {PASSWORD}"));
        term.enter(&p, "echo two");
        term.enter(&p, "echo one");
        term.line(&p, ":quit");
        assert_eq!(term.exit_code(), 0);
    }
    let file = home
        .path()
        .join("data")
        .join("rconsole")
        .join("history.txt");
    let history = std::fs::read_to_string(&file).expect("history in the data dir");
    assert!(!history.contains(PASSWORD), "{history}");
    assert_eq!(history, "echo two\necho one\n:quit\n");
    let work = std::fs::read_dir(home.path().join("work")).unwrap().count();
    assert_eq!(work, 0, "nothing written to the working directory");
    // Windows: the data directory's ACL (the user's profile) keeps it private; no mode bits.
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let mode = std::fs::metadata(&file).unwrap().permissions().mode();
        assert_eq!(mode & 0o077, 0, "history is private: {mode:o}");
    }

    let mut term = Term::start(server.addr(), home.path(), &[]);
    term.wait_for(&p);
    term.send("\x1b[A");
    term.wait_for_line(&p, ":quit");
    term.send("\x1b[A");
    term.wait_for_line(&p, "echo one");
    term.send("\x1b[A");
    term.wait_for_line(&p, "echo two");
    term.send("\r");
    term.wait_for_line(&p, "");
    term.enter(&p, ":history");
    term.wait_for("    3  echo two");
    // Completion offers words from history.
    term.send("say tw\t");
    term.wait_for_line(&p, "say two");
    term.send("\x03");
    term.wait_for_line(&p, "");
    // Ctrl-D on an empty line leaves with status 0.
    term.send("\x04");
    assert_eq!(term.exit_code(), 0);
    let sent = server.commands();
    assert_eq!(sent.len(), 5, "{sent:?}");
    assert_eq!(sent.last().map(String::as_str), Some("echo two"));
}

#[test]
fn ctrl_c_clears_the_line() {
    let server = start_server("127.0.0.1:0".parse().unwrap());
    let home = crate::common::home();
    let mut term = Term::start(server.addr(), home.path(), &[]);
    let p = prompt(&server);
    term.wait_for(&p);
    term.send("echo never sent");
    term.wait_for_line(&p, "echo never sent");
    term.send("\x03");
    term.wait_for_line(&p, "");
    term.enter(&p, "echo kept");
    term.wait_for("\nkept\n");
    term.send("\x04");
    assert_eq!(term.exit_code(), 0);
    assert_eq!(server.commands(), ["echo kept"]);
}

#[test]
fn reconnects_after_the_server_restarts() {
    let mut server = start_server("127.0.0.1:0".parse().unwrap());
    let addr = server.addr();
    let home = crate::common::home();
    let mut term = Term::start(addr, home.path(), &[]);
    let p = prompt(&server);
    term.wait_for(&p);
    term.enter(&p, "echo before");
    term.wait_for("\nbefore\n");

    // Killed while the console sits idle, back before the next command.
    let server = serve(crate::common::stop_holding(addr, || server.shutdown()));
    term.enter(&p, "echo after restart");
    term.wait_for("the server closed the connection; reconnecting");
    term.wait_for("\nafter restart\n");
    assert_eq!(server.commands(), ["echo after restart"]);

    // `stop`: the console closes its connection at once and says so.
    let down = crate::common::stop_holding(addr, || {
        term.enter(&p, "stop");
        term.wait_for("the server is stopping");
        server.wait();
    });

    // Down for good: retries with back-off, then gives up on this command without hanging.
    term.line(&p, "echo while down");
    term.wait_for("retrying in 500ms");
    term.wait_for("is still down after 5 attempts");
    term.wait_for_line(&p, "");

    // Back up: the next command reconnects and succeeds.
    let server = serve(down);
    term.enter(&p, "echo back");
    term.wait_for("reconnected to");
    term.wait_for("\nback\n");
    assert_eq!(server.commands(), ["echo back"]);
    term.line(&p, ":quit");
    assert_eq!(term.exit_code(), 0);
}

#[test]
fn interactive_flag_opens_the_console_after_commands() {
    let server = start_server("127.0.0.1:0".parse().unwrap());
    let home = crate::common::home();
    let mut term = Term::start(server.addr(), home.path(), &["-i", "echo first"]);
    let p = prompt(&server);
    term.wait_for("first");
    term.wait_for(&p);
    term.enter(&p, "echo second");
    term.wait_for("\nsecond\n");
    term.line(&p, ":quit");
    assert_eq!(term.exit_code(), 0);
    assert_eq!(server.commands(), ["echo first", "echo second"]);
}

#[test]
fn progress_bar_for_files_on_a_terminal_only() {
    let server = start_server("127.0.0.1:0".parse().unwrap());
    let home = crate::common::home();
    let file = home.path().join("many.mcfunction");
    let text: String = (0..300).map(|i| format!("say {i}\n")).collect();
    std::fs::write(&file, text).unwrap();
    let path = file.to_str().unwrap();
    let mut term = Term::start(server.addr(), home.path(), &["-f", path]);
    assert_eq!(term.exit_code(), 0);
    term.wait_for_raw(&format!("{path}: "));
    assert!(term.raw().contains("/300 lines ("), "{}", term.raw());
    assert_eq!(server.commands().len(), 300);
    // Piped: no bar.
    let out = crate::common::run(crate::common::rcon_for(&server, home.path()).args(["-f", path]));
    assert!(out.status.success());
    assert!(!crate::common::stderr(&out).contains("lines/s"));
}

#[test]
fn ctrl_c_abandons_the_running_command_and_returns_to_the_prompt() {
    let server = start_server("127.0.0.1:0".parse().unwrap());
    let home = crate::common::home();
    let mut term = Term::start(server.addr(), home.path(), &[]);
    let p = prompt(&server);
    term.wait_for(&p);
    term.line(&p, "sleep 30000");
    // The command is under way (the server has it) before the key is pressed.
    let start = std::time::Instant::now();
    while !server.commands().iter().any(|c| c == "sleep 30000") {
        assert!(
            start.elapsed() < Duration::from_secs(10),
            "command never arrived"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    term.send("\x03");
    term.wait_for("interrupted: the command was abandoned");
    // Still in the console: the next command reconnects and runs.
    term.enter(&p, "echo after");
    term.wait_for("\nafter\n");
    term.send("\x04");
    assert_eq!(
        term.exit_code(),
        0,
        "the console ends normally, not with 130"
    );
    assert!(
        server.connections() >= 2,
        "the abandoned connection was replaced"
    );
}

/// A paste of several lines into a terminal that does not bracket pastes arrives as keys, each
/// line ending in Enter, all in one read: every line runs, in order, and each is in history
/// (rustyline used to drop what it had read past the first Enter).
#[cfg(unix)]
#[test]
fn a_paste_without_bracketed_paste_runs_every_line_in_order() {
    let server = start_server("127.0.0.1:0".parse().unwrap());
    let home = crate::common::home();
    let mut term = Term::start(server.addr(), home.path(), &[]);
    let p = prompt(&server);
    term.wait_for(&p);
    term.send("echo one\recho two\recho three\r");
    term.wait_for("\nthree\n");
    term.wait_for_line(&p, "");
    term.enter(&p, ":history");
    term.wait_for("    3  echo three");
    term.send("\x04");
    assert_eq!(term.exit_code(), 0);
    assert_eq!(server.commands(), ["echo one", "echo two", "echo three"]);
    let history = std::fs::read_to_string(
        home.path()
            .join("data")
            .join("rconsole")
            .join("history.txt"),
    )
    .unwrap();
    assert_eq!(history, "echo one\necho two\necho three\n:history\n");
}

/// Ctrl-C while the console waits between reconnect attempts stops the back-off at once: the
/// command is not sent, no later attempt is made, and the prompt is back (the console goes on).
#[cfg(unix)]
#[test]
fn ctrl_c_stops_the_reconnect_back_off_at_once() {
    let mut server = start_server("127.0.0.1:0".parse().unwrap());
    let addr = server.addr();
    let home = crate::common::home();
    let mut term = Term::start(addr, home.path(), &[]);
    let p = prompt(&server);
    term.wait_for(&p);
    term.enter(&p, "echo before");
    let down = crate::common::stop_holding(addr, || server.shutdown());
    term.line(&p, "echo while down");
    // The second pause (1 s), with 2 s and 4 s still to come.
    term.wait_for("retrying in 1s");
    term.send("\x03");
    term.wait_for("rcon: interrupted: stopped reconnecting to 127.0.0.1:");
    term.wait_for_line(&p, "");
    let screen = term.screen();
    assert!(!screen.contains("retrying in 2s"), "{screen}");
    assert!(!screen.contains("still down after"), "{screen}");
    // Still the console: the server is back, the next command reconnects.
    let server = serve(down);
    term.enter(&p, "echo back");
    term.wait_for("\nback\n");
    term.send("\x04");
    assert_eq!(term.exit_code(), 0);
    assert_eq!(server.commands(), ["echo back"]);
}

/// Ctrl-C while a line of a paste without bracketed paste runs abandons it and sends none of
/// the lines pasted after it (the line editor had already read them).
#[cfg(unix)]
#[test]
fn ctrl_c_during_a_paste_without_bracketed_paste_sends_no_later_line() {
    let server = start_server("127.0.0.1:0".parse().unwrap());
    let home = crate::common::home();
    let mut term = Term::start(server.addr(), home.path(), &[]);
    let p = prompt(&server);
    term.wait_for(&p);
    term.send("sleep 30000\recho pasted after\r");
    let start = std::time::Instant::now();
    while !server.commands().iter().any(|c| c == "sleep 30000") {
        assert!(
            start.elapsed() < crate::common::term::LIMIT,
            "command never arrived"
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    term.send("\x03");
    term.wait_for("interrupted: the command was abandoned");
    term.wait_for_line(&p, "");
    term.enter(&p, "echo typed");
    term.wait_for("\ntyped\n");
    term.send("\x04");
    assert_eq!(term.exit_code(), 0);
    assert_eq!(server.commands(), ["sleep 30000", "echo typed"]);
}

/// Ctrl-C while the console's first connection waits for the server (`--wait`): there is no
/// console to go back to, so rcon ends with 130 and says so (the wait used to go on).
#[cfg(unix)]
#[test]
fn ctrl_c_while_the_console_waits_for_the_server_exits_130() {
    let home = crate::common::home();
    let closed = crate::common::closed_port();
    let (port, addr) = (closed.port(), closed.addr());
    let mut term = Term::start(addr, home.path(), &["--wait", "5m"]);
    term.wait_for(&format!("waiting for 127.0.0.1:{port}"));
    term.send("\x03");
    assert_eq!(term.exit_code(), 130, "{}", term.screen());
    let screen = term.screen();
    assert!(!screen.contains("waiting for"), "{screen}");
    assert!(
        screen.contains(&format!(
            "rcon: error: interrupted by Ctrl-C while connecting to 127.0.0.1:{port}"
        )),
        "{screen}"
    );
}

/// A paste larger than the line editor reads at once (1 KiB): the rest waits in the terminal
/// while the first lines run, and still every line runs, in order.
#[cfg(unix)]
#[test]
fn a_long_paste_without_bracketed_paste_runs_every_line_in_order() {
    let server = start_server("127.0.0.1:0".parse().unwrap());
    let home = crate::common::home();
    let mut term = Term::start(server.addr(), home.path(), &[]);
    let p = prompt(&server);
    term.wait_for(&p);
    let lines: Vec<String> = (0..150)
        .map(|i| format!("echo pasted line {i:03}"))
        .collect();
    let paste: String = lines.iter().map(|l| format!("{l}\r")).collect();
    assert!(paste.len() > 3000);
    term.send(&paste);
    term.wait_for("\npasted line 149\n");
    term.wait_for_line(&p, "");
    term.send("\x04");
    assert_eq!(term.exit_code(), 0);
    assert_eq!(server.commands(), lines);
}

/// A server that ignores the end-of-output probe (Factorio): the probe's wait counts against the
/// first command's time limit, but the time the console sat at its prompt does not. A command
/// typed longer than `-t` after the login gets its answer, not an instant "timed out".
#[test]
fn the_first_command_after_an_ignored_probe_and_an_idle_prompt_is_answered() {
    let bind: SocketAddr = "127.0.0.1:0".parse().unwrap();
    let server = PracticeServer::serve(
        crate::common::listener(bind),
        PracticeConfig {
            mode: PracticeMode::Factorio,
            ..config(bind)
        },
    )
    .expect("start practice server");
    let home = crate::common::home();
    let mut term = Term::start(server.addr(), home.path(), &["-t", "2s"]);
    let p = prompt(&server);
    term.wait_for(&p);
    term.wait_for("rcon: connected to 127.0.0.1:");
    // Idle at the prompt for longer than the timeout.
    std::thread::sleep(Duration::from_secs(3));
    term.enter(&p, "echo after idle");
    term.wait_for("\nafter idle\n");
    term.line(&p, ":quit");
    assert_eq!(term.exit_code(), 0);
    assert!(!term.screen().contains("timed out"), "{}", term.screen());
    assert_eq!(server.commands(), ["echo after idle"]);
    assert_eq!(server.connections(), 1, "no reconnect");
}
