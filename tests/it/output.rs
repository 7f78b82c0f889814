//! What stdout shows for each answer: one line end per answer whatever the server ends it with,
//! and colour as `--color` and the environment (NO_COLOR, CLICOLOR, CLICOLOR_FORCE, TERM) say,
//! checked into a pipe and in a real terminal.

use std::time::Duration;

use crate::common::term::Term;
use crate::common::*;
use rconsole::practice::PracticeMode;

#[test]
fn an_answer_that_ends_in_a_newline_gets_no_blank_line_after_it() {
    let server = strict_vanilla();
    let home = home();
    let out = run(rcon_for(&server, home.path()).args([
        "-c",
        "echoln first",
        "-c",
        "echoln second",
        "-c",
        "echo third",
        "-c",
        "say nothing back",
    ]));
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    // An empty answer is still one empty line: one record per command.
    assert_eq!(stdout(&out), "first\nsecond\nthird\n\n");
    // The same through the path that decodes and renders: § codes, colour, fixed newlines.
    let out = run(rcon_for(&server, home.path()).args([
        "--color",
        "always",
        "--fix-newlines",
        "echoln §6gold",
    ]));
    assert_eq!(stdout(&out), "\x1b[0;33mgold\x1b[0m\n");
    // Raw and JSON keep the answer as it came.
    let out = run(rcon_for(&server, home.path()).args(["--raw", "echoln x"]));
    assert_eq!(stdout(&out), "x\n");
    let out = run(rcon_for(&server, home.path()).args(["--json", "echoln x"]));
    let record: serde_json::Value = serde_json::from_str(&stdout(&out)).unwrap();
    assert_eq!(record["response"], "x\n");
}

#[test]
fn batch_answers_ending_in_newlines_are_one_line_each() {
    let server = server(PracticeMode::Mirror, Duration::ZERO);
    let home = home();
    let path = home.path().join("f.mcfunction");
    std::fs::write(&path, "echoln a\necholn b\necho c\n").unwrap();
    let out = run(rcon_for(&server, home.path()).args(["-f", path.to_str().unwrap()]));
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), "a\nb\nc\n");
}

const GOLD: &str = "echo §6gold";
const COLOURED: &str = "\x1b[0;33mgold\x1b[0m\n";

#[test]
fn clicolor_force_colours_a_pipe_unless_no_color_is_set() {
    let server = strict_vanilla();
    let home = home();
    let piped = |env: &[(&str, &str)], remove: &[&str]| {
        let mut cmd = rcon_for(&server, home.path());
        for key in remove {
            cmd.env_remove(key);
        }
        for (key, value) in env {
            cmd.env(key, value);
        }
        let out = run(cmd.arg(GOLD));
        assert!(out.status.success(), "stderr: {}", stderr(&out));
        stdout(&out)
    };
    assert_eq!(piped(&[], &["NO_COLOR"]), "gold\n", "a pipe gets no colour");
    assert_eq!(piped(&[("CLICOLOR_FORCE", "1")], &["NO_COLOR"]), COLOURED);
    assert_eq!(
        piped(&[("CLICOLOR_FORCE", "1"), ("CLICOLOR", "0")], &["NO_COLOR"]),
        COLOURED,
        "CLICOLOR_FORCE wins over CLICOLOR=0"
    );
    assert_eq!(
        piped(&[("CLICOLOR_FORCE", "0")], &["NO_COLOR"]),
        "gold\n",
        "CLICOLOR_FORCE=0 forces nothing"
    );
    assert_eq!(
        piped(&[("CLICOLOR_FORCE", "1"), ("NO_COLOR", "1")], &[]),
        "gold\n",
        "NO_COLOR wins over CLICOLOR_FORCE"
    );
    assert_eq!(
        piped(&[("NO_COLOR", "1")], &[]).as_str(),
        "gold\n",
        "--color auto honours NO_COLOR"
    );
    let mut cmd = rcon_for(&server, home.path());
    let out = run(cmd.env("NO_COLOR", "1").args(["--color", "always", GOLD]));
    assert_eq!(stdout(&out), COLOURED, "--color always wins over NO_COLOR");
}

/// What `echo §6gold` prints in a terminal with `env` (NO_COLOR removed unless given).
fn in_a_terminal(env: &[(&str, Option<&str>)]) -> String {
    let server = strict_vanilla();
    let home = home();
    let port = server.port().to_string();
    let mut all = vec![("NO_COLOR", None)];
    all.extend_from_slice(env);
    let mut term = Term::start_with_env(
        home.path(),
        &[
            "-H",
            "127.0.0.1",
            "-P",
            &port,
            "-c",
            GOLD,
            "-c",
            "echo done",
        ],
        &all,
    );
    assert_eq!(term.exit_code(), 0, "screen:\n{}", term.screen());
    let raw = term.raw();
    assert!(raw.contains("done"), "{raw:?}");
    raw
}

#[test]
fn a_terminal_gets_colour_unless_term_is_dumb_or_clicolor_is_0() {
    let colour = "\x1b[0;33mgold";
    let raw = in_a_terminal(&[]);
    assert!(raw.contains(colour), "a terminal gets colour: {raw:?}");
    let raw = in_a_terminal(&[("TERM", Some("dumb"))]);
    assert!(
        !raw.contains(colour) && raw.contains("gold"),
        "TERM=dumb: {raw:?}"
    );
    let raw = in_a_terminal(&[("CLICOLOR", Some("0"))]);
    assert!(
        !raw.contains(colour) && raw.contains("gold"),
        "CLICOLOR=0: {raw:?}"
    );
    let raw = in_a_terminal(&[("CLICOLOR", Some("1"))]);
    assert!(raw.contains(colour), "CLICOLOR=1 leaves colour on: {raw:?}");
}

/// One JSON schema (issue 20): a one-shot, a batch file, several servers and the timed
/// operations (`--countdown`; `--every` prints through the same code) give records with the
/// same keys; `--countdown` printed `output` instead of `response` and no `error`, `reason` or
/// `elapsed_ms`, and one server's records had no `server`. (`--follow` events: in follow.rs.)
#[test]
fn every_mode_prints_records_with_the_same_keys() {
    let server = strict_vanilla();
    let home = home();
    let file = home.path().join("cmds.mcfunction");
    std::fs::write(&file, "seed\n").unwrap();
    let target = format!("a=127.0.0.1:{}", server.port());
    let keys = |args: &[&str]| -> Vec<String> {
        let out = run(rcon_for(&server, home.path())
            .env("RCON_CLOCK_SPEED", "30")
            .arg("--json")
            .args(args));
        assert!(out.status.success(), "{args:?}: {}", stderr(&out));
        let text = stdout(&out);
        let last = text.lines().last().expect("a record");
        let v: serde_json::Value = serde_json::from_str(last).unwrap();
        assert_eq!(v["command"], "seed", "{args:?}: {v}");
        assert!(v["elapsed_ms"].is_number(), "{args:?}: {v}");
        let mut k = json_keys(&v);
        // What only batch records have: file:line.
        k.retain(|k| !matches!(k.as_str(), "file" | "line"));
        k
    };
    let want = keys(&["seed"]);
    assert_eq!(
        want,
        [
            "command",
            "elapsed_ms",
            "error",
            "event",
            "ok",
            "reason",
            "response",
            "server",
            "time"
        ]
    );
    let f = file.to_str().unwrap();
    for args in [
        &["-f", f][..],
        &["--target", &target, "seed"],
        &[
            "--countdown",
            "1s",
            "--at",
            "1s",
            "--announce",
            "say {seconds}",
            "seed",
        ],
    ] {
        assert_eq!(keys(args), want, "{args:?}");
    }
}
