//! What stdout shows for each answer: one line end per answer whatever the server ends it with.

use std::time::Duration;

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
