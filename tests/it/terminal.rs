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
    server.shutdown();
    term.line(&p, ":reconnect");
    term.wait_for("is still down after");
    let screen = term.screen();
    assert!(!screen.contains("not sent"), "{screen}");
}
