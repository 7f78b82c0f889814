//! Shared checks for the other consoles (BattlEye, WebRCON, telnet): the same experience as
//! RCON (one-shot, several -c, batch file, --json, --trace with the password masked, server
//! messages kept apart and shown with --messages), against the practice servers in process.

use std::path::Path;
use std::process::Command;

use rconsole::consoles::practice::{ConsoleServer, ConsoleServerConfig, Kind};

use crate::common::*;

/// A practice console server of `kind` with the test password.
pub fn console_server(kind: Kind) -> ConsoleServer {
    ConsoleServer::start(ConsoleServerConfig {
        password: PASSWORD.into(),
        kind,
        ..ConsoleServerConfig::default()
    })
    .expect("start practice console server")
}

/// `rcon --dialect DIALECT` pointed at `server`. Telnet answers end on an idle gap, so a
/// starved machine could cut one short at the default 250 ms: the tests allow 750 ms.
pub fn rcon_dialect(server: &ConsoleServer, dialect: &str, home: &Path) -> Command {
    let mut cmd = rcon_at(server.port(), home);
    cmd.args(["--dialect", dialect]);
    if dialect == "telnet" {
        cmd.args(["--idle-gap", TELNET_GAP]);
    }
    cmd
}

/// The idle gap the telnet tests use.
pub const TELNET_GAP: &str = "750ms";

/// What every console dialect must do, with `marker`: a piece of the server's own messages
/// (log line, chat) that the practice server sends around every answer.
pub fn check_basics(kind: Kind, dialect: &str, marker: &str) {
    let server = console_server(kind);
    let home = home();

    // One-shot, and several -c in one session, in order, complete (multi-part long output).
    let out = run(rcon_dialect(&server, dialect, home.path()).args(["echo", "hello", "world"]));
    assert!(out.status.success(), "{dialect}: {}", stderr(&out));
    assert_eq!(stdout(&out), "hello world\n", "{dialect}");
    let long = rconsole::practice::sample_text(5000);
    let out = run(rcon_dialect(&server, dialect, home.path()).args([
        "-c",
        "count",
        "-c",
        "chars 5000",
        "-c",
        "count",
        "-c",
        "say hi there",
    ]));
    assert!(out.status.success(), "{dialect}: {}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("count 1\n{long}\ncount 2\n\n"),
        "{dialect}: answers in order, server messages kept out"
    );
    assert!(
        !stdout(&out).contains(marker) && !stderr(&out).contains(marker),
        "{dialect}: server messages shown without --messages: {}",
        stderr(&out)
    );

    // --messages: on stderr, marked; stdout unchanged.
    let out = run(rcon_dialect(&server, dialect, home.path()).args([
        "--messages",
        "-c",
        "echo a",
        "-c",
        "say hi there",
    ]));
    assert!(out.status.success(), "{dialect}: {}", stderr(&out));
    assert_eq!(stdout(&out), "a\n\n", "{dialect}");
    let err = stderr(&out);
    assert!(
        err.lines()
            .any(|l| l.starts_with("[server] ") && l.contains("hi there")),
        "{dialect}: {err}"
    );

    // --json: one record per command; with --messages, message records too.
    let out = run(rcon_dialect(&server, dialect, home.path()).args([
        "--json",
        "--messages",
        "-c",
        "echo j",
        "-c",
        "say in json",
    ]));
    assert!(out.status.success(), "{dialect}: {}", stderr(&out));
    let records: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("every stdout line is JSON"))
        .collect();
    let commands: Vec<&serde_json::Value> =
        records.iter().filter(|r| r["event"] == "command").collect();
    assert_eq!(commands.len(), 2, "{dialect}: {records:?}");
    assert_eq!(commands[0]["command"], "echo j");
    assert_eq!(commands[0]["response"], "j");
    assert_eq!(commands[0]["ok"], true);
    assert!(
        records
            .iter()
            .any(|r| r["event"] == "message"
                && r["response"].as_str().unwrap_or("").contains("in json")),
        "{dialect}: {records:?}"
    );

    // A batch file.
    let file = home.path().join("cmds.txt");
    std::fs::write(&file, "echo one\n\n# a comment\necho two\ncount\n").unwrap();
    let out = run(rcon_dialect(&server, dialect, home.path()).args(["-f", file.to_str().unwrap()]));
    assert!(out.status.success(), "{dialect}: {}", stderr(&out));
    assert_eq!(stdout(&out), "one\ntwo\ncount 3\n", "{dialect}");

    // --trace shows the traffic, never the password.
    let out = run(rcon_dialect(&server, dialect, home.path()).args(["--trace", "echo traced"]));
    assert!(out.status.success(), "{dialect}: {}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("rcon: trace"), "{dialect}: {err}");
    assert!(
        err.contains("traced"),
        "{dialect}: the command is traced: {err}"
    );
    assert!(
        !err.contains(PASSWORD),
        "{dialect}: password in the trace: {err}"
    );
    assert!(err.contains("hidden"), "{dialect}: {err}");

    // A wrong password: exit 5, one line, no password echoed.
    let out = run(rcon_dialect(&server, dialect, home.path())
        .env("RCON_PASSWORD", "not-the-password")
        .arg("echo x"));
    assert_eq!(out.status.code(), Some(5), "{dialect}: {}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{dialect}: {err}");
    assert!(
        err.starts_with("rcon: error: login refused"),
        "{dialect}: {err}"
    );
    assert!(!err.contains("not-the-password"), "{dialect}: {err}");
}
