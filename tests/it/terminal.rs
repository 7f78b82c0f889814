//! Behaviour that only shows on a terminal (issue 10): vanilla's one-line `help` gets its line
//! breaks back, Ctrl-D at the password prompt, and what a failed `:reconnect` says.

use crate::common::term::Term;
use crate::common::{home, rcon_in, run, stderr, stdout};

#[test]
fn help_on_a_terminal_is_one_command_per_line() {
    let home = home();
    let mut term = Term::start_with(home.path(), &["--demo", "help"]);
    assert_eq!(term.exit_code(), 0, "{}", term.screen());
    let raw = term.raw();
    // Each usage on its own line, as the game shows them in chat.
    assert!(
        raw.contains("/whitelist (add|list|off|on|reload|remove)"),
        "{raw}"
    );
    let lines: Vec<&str> = raw.lines().filter(|l| l.starts_with('/')).collect();
    assert!(lines.len() > 50, "{} lines: {raw}", lines.len());
    // The opt-out keeps the line as received.
    let mut term = Term::start_with(home.path(), &["--demo", "--no-fix-newlines", "help"]);
    assert_eq!(term.exit_code(), 0, "{}", term.screen());
    let raw = term.raw();
    let text = raw.trim_end();
    assert!(!text.contains('\n'), "line breaks added: {raw}");
    assert!(text.len() > 4096);
}

#[test]
fn piped_help_stays_exactly_as_received() {
    let home = home();
    let out = run(rcon_in(home.path()).args(["--demo", "help"]));
    assert_eq!(stdout(&out).matches('\n').count(), 1, "{}", stderr(&out));
    // Asked for explicitly, the breaks are restored on a pipe too.
    let out = run(rcon_in(home.path()).args(["--demo", "--fix-newlines", "help"]));
    assert!(stdout(&out).matches('\n').count() > 50);
}

// The prompt's driver is python3's `pty` module (Unix only), as in prompt.rs.
#[cfg(unix)]
#[test]
fn ctrl_d_at_the_password_prompt_is_one_clear_line() {
    let server = crate::common::strict_vanilla();
    let home = home();
    let port = server.port().to_string();
    let args = ["-H", "127.0.0.1", "-P", port.as_str(), "list"];
    let Some(out) = crate::prompt::at_the_prompt(home.path(), "\x04", &args) else {
        return;
    };
    let screen = stdout(&out);
    assert_eq!(out.status.code(), Some(2), "{screen}");
    let errors: Vec<&str> = screen.lines().filter(|l| l.contains("rcon:")).collect();
    assert_eq!(
        errors,
        ["rcon: error: no password entered (end of input at the prompt)"],
        "{screen}"
    );
    assert_eq!(server.connections(), 0);
}

#[test]
fn a_failed_reconnect_does_not_speak_of_a_command() {
    let mut server = crate::common::strict_vanilla();
    let home = home();
    let mut term = Term::start(server.addr(), home.path(), &[]);
    let port = server.port();
    let p = format!("127.0.0.1:{port}> ");
    term.wait_for(&p);
    term.enter(&p, "echo one");
    term.wait_for("\none\n");
    // Refused, and no other test's server can take the port, while it is down.
    let _down = crate::common::stop_holding(server.addr(), || server.shutdown());
    term.line(&p, ":reconnect");
    term.wait_for("is still down after");
    let screen = term.screen();
    assert!(!screen.contains("not sent"), "{screen}");
}

/// Waits until `server` has received `command`.
#[cfg(unix)]
fn wait_for_command(server: &rconsole::practice::PracticeServer, command: &str) {
    let start = std::time::Instant::now();
    while !server.commands().iter().any(|c| c == command) {
        assert!(
            start.elapsed() < crate::common::term::LIMIT,
            "{command:?} never arrived: {:?}",
            server.commands()
        );
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
}

/// Ctrl-C while the second of three `-c` commands runs: the first answer stays on the screen,
/// one line says what ran, what was in flight and what was not sent, as for batch input, and
/// the exit status is 130 (it used to end the process at once, saying nothing).
#[cfg(unix)]
#[test]
fn ctrl_c_during_dash_c_commands_says_what_ran_and_exits_130() {
    let server = crate::common::strict_vanilla();
    let home = home();
    let port = server.port().to_string();
    let mut term = Term::start_with(
        home.path(),
        &[
            "-H",
            "127.0.0.1",
            "-P",
            &port,
            "-c",
            "echo first answer",
            "-c",
            "sleep 30000",
            "-c",
            "echo never",
        ],
    );
    term.wait_for("first answer");
    wait_for_command(&server, "sleep 30000");
    term.send("\x03");
    assert_eq!(term.exit_code(), 130, "{}", term.screen());
    let screen = term.screen();
    assert!(
        screen.contains(
            "rcon: error: interrupted by Ctrl-C: 1 command ran, command 2 of 3 ('sleep 30000') \
             was in flight and may or may not have run, 1 not sent"
        ),
        "{screen}"
    );
    assert_eq!(server.commands(), ["echo first answer", "sleep 30000"]);
}

/// SIGTERM between the answers of `-c` commands into a pipe: the answers so far are on
/// stdout, the report on stderr, exit 143.
#[cfg(unix)]
#[test]
fn sigterm_during_dash_c_commands_keeps_the_answers() {
    use std::io::Read;
    let server = crate::common::strict_vanilla();
    let home = home();
    let mut child = crate::common::rcon_for(&server, home.path())
        .args(["-c", "echo one", "-c", "sleep 30000", "-c", "echo three"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    let mut first = [0u8; 4];
    child
        .stdout
        .as_mut()
        .unwrap()
        .read_exact(&mut first)
        .unwrap();
    assert_eq!(&first, b"one\n");
    wait_for_command(&server, "sleep 30000");
    // SAFETY: a signal to a child this test started and has not waited for.
    assert_eq!(
        unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGTERM) },
        0
    );
    let out = crate::common::wait_with_timeout(child, crate::common::term::LIMIT);
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert_eq!(stdout(&out), "", "nothing after the first answer");
    assert_eq!(
        stderr(&out).trim_end(),
        "rcon: error: interrupted by SIGTERM: 1 command ran, command 2 of 3 ('sleep 30000') \
         was in flight and may or may not have run, 1 not sent"
    );
}

/// Ctrl-C while `--wait` waits for the server: the wait ends at once, its progress line is
/// erased (it stayed on the screen when Ctrl-C ended the process), the report says nothing
/// was sent, exit 130.
#[cfg(unix)]
#[test]
fn ctrl_c_during_wait_erases_the_progress_line() {
    let home = home();
    let closed = crate::common::closed_port();
    let (port, addr) = (closed.port(), closed.addr());
    let mut term = Term::start(addr, home.path(), &["--wait", "5m", "seed"]);
    term.wait_for(&format!("waiting for 127.0.0.1:{port}"));
    term.send("\x03");
    assert_eq!(term.exit_code(), 130, "{}", term.screen());
    let screen = term.screen();
    assert!(!screen.contains("waiting for"), "{screen}");
    assert!(
        screen.contains(
            "rcon: error: interrupted by Ctrl-C: 0 commands ran, none was in flight, 1 not sent"
        ),
        "{screen}"
    );
}

/// Ctrl-C while `--retry` pauses between connection attempts: no further attempt, exit 130
/// with the report (the pauses double: 20 retries would take minutes).
#[cfg(unix)]
#[test]
fn ctrl_c_during_retry_pauses_stops_at_once() {
    let home = home();
    let closed = crate::common::closed_port();
    let addr = closed.addr();
    let mut term = Term::start(addr, home.path(), &["--retry", "20", "seed"]);
    term.wait_for("(retry 2 of 20)");
    term.send("\x03");
    assert_eq!(term.exit_code(), 130, "{}", term.screen());
    let screen = term.screen();
    assert!(!screen.contains("(retry 4 of 20)"), "{screen}");
    assert!(
        screen.contains("interrupted by Ctrl-C: 0 commands ran, none was in flight, 1 not sent"),
        "{screen}"
    );
}

/// Ctrl-C while several servers run, with the progress line on the terminal: the line is
/// erased before rcon ends (it stayed, `... 2 in flight^C`, with the shell's prompt after it).
#[cfg(unix)]
#[test]
fn ctrl_c_during_fan_out_erases_the_progress_line() {
    let home = home();
    let a = crate::common::strict_vanilla();
    let b = crate::common::strict_vanilla();
    let ta = format!("a=127.0.0.1:{}", a.port());
    let tb = format!("b=127.0.0.1:{}", b.port());
    let mut term = Term::start_with(
        home.path(),
        &["--target", &ta, "--target", &tb, "sleep 30000"],
    );
    term.wait_for("in flight");
    wait_for_command(&a, "sleep 30000");
    term.send("\x03");
    assert_eq!(term.exit_code(), 130, "{}", term.screen());
    let screen = term.screen();
    assert!(!screen.contains("done, 0 failed"), "{screen}");
    assert!(
        screen.contains("interrupted by Ctrl-C: 0 commands ran on 2 servers"),
        "{screen}"
    );
}

/// A batch with its output in a file and its progress line on the terminal: an error during
/// the run is a line of its own (it was written into the progress text, `... 205 lines/srcon:
/// error: ...`), and the progress line is drawn again below it.
#[cfg(unix)]
#[test]
fn an_error_during_a_batch_is_never_written_into_the_progress_line() {
    let home = home();
    let server = crate::common::strict_vanilla();
    let work = home.path().join("work");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::write(work.join("k.txt"), "list\nnosuchcmd\nlist\n").unwrap();
    let port = server.port().to_string();
    let rcon = crate::common::rcon_bin();
    let rcon = rcon.to_str().unwrap();
    let mut term = Term::start_program(
        home.path(),
        std::path::Path::new("/bin/sh"),
        &[
            "-c",
            r#"exec "$0" "$@" > out.txt"#,
            rcon,
            "-H",
            "127.0.0.1",
            "-P",
            &port,
            "--keep-going",
            "-f",
            "k.txt",
        ],
        &[],
    );
    assert_eq!(term.exit_code(), 1, "{}", term.screen());
    let screen = term.screen();
    let lines: Vec<&str> = screen.lines().filter(|l| !l.is_empty()).collect();
    assert_eq!(
        lines,
        [
            "rcon: error: k.txt:2: command 'nosuchcmd': the server could not parse the command \
(<--[HERE])",
            "rcon: error: 1 of 3 commands failed (see above)"
        ],
        "{screen}"
    );
    // The progress line was drawn, erased for the error and drawn again after it.
    let raw = term.raw();
    let error = raw.find("rcon: error: k.txt:2").expect("the error");
    assert!(raw[..error].contains("k.txt: 1/3 lines"), "{raw:?}");
    assert!(raw[..error].ends_with("\r\x1b[2K"), "{raw:?}");
    assert!(raw[error..].contains("\nk.txt: 1/3 lines"), "{raw:?}");
    assert_eq!(server.commands(), ["list", "nosuchcmd", "list"]);
    let out = std::fs::read_to_string(work.join("out.txt")).unwrap();
    assert_eq!(out.matches("players online").count(), 2, "{out}");
}
