//! Behaviour that only shows on a terminal (issue 10): vanilla's one-line `help` gets its line
//! breaks back, Ctrl-D at the password prompt, and what a failed `:reconnect` says.

use std::process::Command;

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

/// Runs `rcon ARGS` on a pty (python3's stdlib `pty`, so it is the controlling terminal), waits
/// for the password prompt with echo off, presses Ctrl-D, and prints what the terminal showed.
const CTRL_D_DRIVER: &str = r#"
import os, pty, select, sys, termios, time
rcon, args = sys.argv[1], sys.argv[2:]
pid, fd = pty.fork()
if pid == 0:
    os.execv(rcon, [rcon] + args)
seen = b""
def pump(until, limit):
    global seen
    end = time.time() + limit
    while time.time() < end:
        if until(seen):
            return True
        r, _, _ = select.select([fd], [], [], 0.05)
        if r:
            try:
                chunk = os.read(fd, 4096)
            except OSError:
                return False
            if not chunk:
                return False
            seen += chunk
    return until(seen)
if not pump(lambda s: b"Password" in s, 20):
    sys.stdout.buffer.write(seen)
    os.kill(pid, 9)
    sys.exit(90)
end = time.time() + 20
while termios.tcgetattr(fd)[3] & termios.ECHO:
    if time.time() > end:
        os.kill(pid, 9)
        sys.exit(91)
    time.sleep(0.01)
os.write(fd, b"\x04")
pump(lambda s: False, 30)
_, status = os.waitpid(pid, 0)
sys.stdout.buffer.write(seen)
sys.exit(os.waitstatus_to_exitcode(status))
"#;

#[test]
fn ctrl_d_at_the_password_prompt_is_one_clear_line() {
    let python_ok = Command::new("python3")
        .args(["-c", "import pty, termios"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !python_ok {
        crate::common::skip("python3 with pty not available");
        return;
    }
    let server = crate::common::strict_vanilla();
    let home = home();
    let template = rcon_in(home.path());
    let mut cmd = Command::new("python3");
    for (key, value) in template.get_envs() {
        match value {
            Some(v) => cmd.env(key, v),
            None => cmd.env_remove(key),
        };
    }
    cmd.arg("-c")
        .arg(CTRL_D_DRIVER)
        .arg(env!("CARGO_BIN_EXE_rcon"))
        .args(["-H", "127.0.0.1", "-P", &server.port().to_string(), "list"]);
    let out = run(&mut cmd);
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
    server.shutdown();
    term.line(&p, ":reconnect");
    term.wait_for("is still down after");
    let screen = term.screen();
    assert!(!screen.contains("not sent"), "{screen}");
}
