//! Error and status messages in words a user reads, never Rust's: a bad number on the command
//! line, a mistyped config value, singular counts, a practice server whose port is taken.

use std::process::Output;

use crate::common::*;

/// The one stderr line of a failed run, after checking its exit status.
fn one_error(out: &Output, code: i32) -> String {
    let err = stderr(out);
    assert_eq!(out.status.code(), Some(code), "stderr: {err}");
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert!(err.starts_with("rcon: error: "), "{err}");
    for leak in [
        "invalid digit",
        "os error",
        "u16",
        "u32",
        "found a integer",
        "found a array",
    ] {
        assert!(!err.contains(leak), "Rust's text '{leak}' leaked: {err}");
    }
    err
}

#[test]
fn a_bad_number_on_the_command_line_says_what_is_expected() {
    let home = home();
    for (args, env, want) in [
        (
            &["-P", "abc", "list"][..],
            None,
            "invalid value 'abc' for '--port <PORT>': expected a port number from 1 to 65535",
        ),
        (
            &["-P", "70000", "list"][..],
            None,
            "expected a port number from 1 to 65535",
        ),
        (
            &["-H", "localhost", "list"][..],
            Some(("RCON_PORT", "abc")),
            "environment variable RCON_PORT: expected a port number from 1 to 65535",
        ),
        (
            &["--retry", "twice", "list"][..],
            None,
            "'twice' for '--retry <N>': expected a whole number from 0 to",
        ),
        (
            &["--parallel", "0", "list"][..],
            None,
            "'0' for '--parallel <N>': expected a whole number from 1 to",
        ),
    ] {
        let mut cmd = rcon_in(home.path());
        cmd.env("RCON_PASSWORD", PASSWORD);
        if let Some((key, value)) = env {
            cmd.env(key, value);
        }
        let out = run(cmd.args(args));
        let err = one_error(&out, 2);
        assert!(err.contains(want), "{args:?}: {err}");
    }
}

#[test]
fn a_mistyped_config_value_is_named_in_words() {
    let home = home();
    let dir = home.path().join("config").join("rconsole");
    std::fs::create_dir_all(&dir).unwrap();
    for (value, want) in [
        (
            "port = \"abc\"",
            "key 'port' in [servers.default]: expected a port number from 1 to 65535, found \"abc\"",
        ),
        (
            "port = 70000",
            "expected a port number from 1 to 65535, found 70000",
        ),
        (
            "port = 1.5",
            "expected a port number from 1 to 65535, found a decimal number",
        ),
        (
            "password = 5",
            "key 'password' in [servers.default]: expected a quoted string, found an integer",
        ),
        (
            "timeout = [5]",
            "expected a duration such as \"5s\" or \"500ms\", found an array",
        ),
    ] {
        std::fs::write(
            dir.join("config.toml"),
            format!("[servers.default]\nhost = \"127.0.0.1\"\n{value}\n"),
        )
        .unwrap();
        let out = run(rcon_in(home.path()).arg("list"));
        let err = one_error(&out, 3);
        assert!(err.contains("config.toml:3: "), "{value}: {err}");
        assert!(err.contains(want), "{value}: {err}");
    }
    // A quoted port number is taken as the number.
    std::fs::write(
        dir.join("config.toml"),
        "[servers.default]\nhost = \"127.0.0.1\"\nport = \"25599\"\n",
    )
    .unwrap();
    let out = run(rcon_in(home.path()).arg("--print-config"));
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(stdout(&out).contains("25599"), "{}", stdout(&out));
}

#[test]
fn one_learned_command_is_singular() {
    let server = strict_vanilla();
    let home = home();
    let out = run(rcon_for(&server, home.path()).arg("echo hi"));
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let out = run(rcon_for(&server, home.path()).arg("--print-config"));
    let text = stdout(&out);
    assert!(text.contains(" over 1 command; "), "{text}");
}

#[test]
fn a_practice_server_on_a_busy_port_says_so_and_exits_4() {
    let busy = std::net::TcpListener::bind("127.0.0.1:0").unwrap();
    let addr = busy.local_addr().unwrap().to_string();
    let home = home();
    for mode in ["vanilla", "telnet"] {
        let out =
            run(rcon_in(home.path()).args(["--practice-server", &addr, "--practice-mode", mode]));
        let err = one_error(&out, 4);
        assert!(
            err.contains(&format!(
                "--practice-server: cannot listen on {addr}: the address is already in use"
            )),
            "{mode}: {err}"
        );
    }
}

/// I/O failures say what happened in words, without Rust's errno suffix, on stderr and in
/// JSON records alike.
#[test]
fn io_failures_carry_no_os_error_codes() {
    let home = home();
    let closed = closed_port();
    let port = closed.port().to_string();
    let out = run(rcon_in(home.path()).args(["-H", "127.0.0.1", "-P", &port, "-p", "x", "list"]));
    let err = one_error(&out, 4);
    assert!(
        err.contains("Connection refused") || err.contains("refused"),
        "{err}"
    );
    let out = run(rcon_in(home.path()).args(["--config", "/nonexistent/rcon.toml", "list"]));
    let err = one_error(&out, 3);
    assert!(err.contains("cannot read config file"), "{err}");
    let out = run(rcon_in(home.path()).args(["--demo", "-f", "/nonexistent/cmds.txt"]));
    one_error(&out, 2);
    let out = run(rcon_in(home.path()).args([
        "-H",
        "127.0.0.1",
        "-P",
        &port,
        "-p",
        "x",
        "--json",
        "list",
    ]));
    assert_eq!(out.status.code(), Some(4));
    let record: serde_json::Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    let error = record["error"].as_str().unwrap();
    assert!(error.starts_with("cannot connect to 127.0.0.1:"), "{error}");
    assert!(!error.contains("os error"), "{error}");
}

/// `--wait` giving up is one line: how long it waited and the last attempt's failure together
/// (issue 41: it was a line ending in "the last one failed:" and a second `rcon: error:` line).
#[test]
fn giving_up_a_wait_is_one_line_with_the_last_failure() {
    let home = home();
    let closed = closed_port();
    let out = run(rcon_at(closed.port(), home.path()).args(["--wait", "1s", "list"]));
    let err = one_error(&out, 4);
    let addr = format!("127.0.0.1:{}", closed.port());
    assert!(
        err.starts_with(&format!(
            "rcon: error: {addr} was not up after waiting 1s ("
        )),
        "{err}"
    );
    assert!(
        err.contains(&format!("the last one failed: cannot connect to {addr}: ")),
        "{err}"
    );
    assert!(err.ends_with("; 1 command not sent\n"), "{err}");
}

/// A server of a fan-out that fails is one line, `rcon: error: [NAME] ...`, and nothing else
/// on stderr when it is not a terminal (issue 41: a summary and a list of the failed servers
/// repeated it in two more lines).
#[test]
fn a_failed_server_of_a_fanout_is_one_line() {
    let (a, b) = (strict_vanilla(), strict_vanilla());
    let dead = closed_port();
    let home = home();
    let mut cmd = rcon_in(home.path());
    cmd.env("RCON_PASSWORD", PASSWORD);
    for (name, port) in [("a", a.port()), ("b", b.port()), ("c", dead.port())] {
        cmd.args(["--target", &format!("{name}=127.0.0.1:{port}")]);
    }
    let out = run(cmd.arg("list"));
    let err = one_error(&out, 4);
    let want = format!(
        "rcon: error: [c] cannot connect to 127.0.0.1:{}: ",
        dead.port()
    );
    assert!(err.starts_with(&want), "{err}");
    assert!(err.ends_with("; 1 command not sent\n"), "{err}");
    assert_eq!(stdout(&out).lines().count(), 2, "{}", stdout(&out));
}
