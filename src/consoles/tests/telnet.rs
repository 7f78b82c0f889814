//! The 7 Days to Die telnet console's tables, one per state: new (waiting for the prompt),
//! password sent, ready with log lines, a command until the idle gap, failed. Timeout 5 s, idle
//! gap 200 ms. Every input is also fed split at every position and a byte at a time.

use super::*;
use crate::consoles::telnet::{MAX_LINE, Telnet};

impl Subject for Telnet {
    const STREAM: bool = true;

    /// The line sent, quoted with its line end.
    fn show(sent: &[u8]) -> String {
        format!("{:?}", String::from_utf8_lossy(sent))
    }
}

fn make(tracing: bool) -> Telnet {
    Telnet::new(
        PASSWORD,
        Duration::from_secs(5),
        Duration::from_millis(200),
        tracing,
    )
}

/// Server text.
fn text(s: &str) -> Step {
    In(s.as_bytes().to_vec())
}

/// Server bytes.
fn raw(b: &[u8]) -> Step {
    In(b.to_vec())
}

const PROMPT: &str = "Please enter password:";
const SENT_PASSWORD: &str = r#"send "s3cr3t\r\n""#;
const LOG: &str = "2026-12-02T01:30:00 12.345 INF Executing command 'version' by Telnet";
const LOG2: &str = "2026-12-02T01:30:01 13.000 WRN Chat (from '-non-player-'): hi";

/// The steps that log in.
fn logged_in() -> Vec<Step> {
    vec![Start, text(PROMPT), text("Logon successful.\r\n")]
}

/// State: new, waiting for the password prompt.
#[test]
fn state_new() {
    let cases = vec![
        case(
            "a prompt line: the password goes",
            vec![text("Please enter password:\r\n")],
            &[SENT_PASSWORD],
        ),
        case(
            "a prompt without a line end",
            vec![text(PROMPT)],
            &[SENT_PASSWORD],
        ),
        case(
            "negotiation before the prompt is stripped, not answered",
            vec![raw(b"\xff\xfb\x01\xff\xfd\x03Please enter password:")],
            &[SENT_PASSWORD],
        ),
        case(
            "a subnegotiation before the prompt is stripped",
            vec![raw(b"\xff\xfa\x18\x01\xff\xf0Please enter password:")],
            &[SENT_PASSWORD],
        ),
        case(
            "no password set: the 7DTD greeting is the login",
            vec![text("*** Connected with 7DTD server.\r\n")],
            &["logged in"],
        ),
        case(
            "other lines before the prompt are ignored",
            vec![text("Welcome\r\n\r\nPlease enter password:\r\n")],
            &[SENT_PASSWORD],
        ),
        case(
            "the prompt twice: the password goes once",
            vec![text("Please enter password:\r\nPlease enter password:\r\n")],
            &[SENT_PASSWORD],
        ),
        case(
            "no prompt: a timeout",
            vec![text("hello\r\n"), Wait(5000)],
            &[
                "@5000 fail timed out after 5s while waiting for the telnet password prompt or its reply",
            ],
        ),
        case(
            "a late prompt: the timeout counts from it",
            vec![
                Wait(4000),
                text(PROMPT),
                Wait(4000),
                text("Logon successful.\r\n"),
            ],
            &["@4000 send \"s3cr3t\\r\\n\"", "@8000 logged in"],
        ),
        case(
            "a close before the prompt: no answer",
            vec![Close],
            &["closed -> None"],
        ),
        case(
            "a command before the login fails, and the login with it",
            vec![Cmd("x"), text(PROMPT), Wait(5000)],
            &["fail server closed the connection before the command (not logged in)"],
        ),
    ];
    check("telnet new", make, &[Start], cases);
}

/// State: the password sent, waiting for the verdict.
#[test]
fn state_password_sent() {
    let cases = vec![
        case(
            "Logon successful: in",
            vec![text("Logon successful.\r\n")],
            &["logged in"],
        ),
        case(
            "the banner after it in the same chunk: server messages, empty lines dropped",
            vec![text(
                "Logon successful.\r\n\r\n\r\n*** Connected with 7DTD server.\r\nPress 'help' to get a list of all commands.\r\n\r\n",
            )],
            &[
                "logged in",
                "message \"*** Connected with 7DTD server.\"",
                "message \"Press 'help' to get a list of all commands.\"",
            ],
        ),
        case(
            "Password incorrect: refused",
            vec![text("Password incorrect, please enter password:\r\n")],
            &["fail login refused: wrong password"],
        ),
        case(
            "a wrong password, in other words: refused",
            vec![text("Wrong password.\r\n")],
            &["fail login refused: wrong password"],
        ),
        case(
            "the 7DTD greeting also means in",
            vec![text("*** Connected with 7DTD server.\r\n")],
            &["logged in"],
        ),
        case(
            "other lines, then the verdict",
            vec![text("\r\nplease wait\r\n"), text("Logon successful.\r\n")],
            &["logged in"],
        ),
        case(
            "a command before the verdict fails, and the login with it",
            vec![Cmd("x"), text("Logon successful.\r\n")],
            &["fail server closed the connection before the command (not logged in)"],
        ),
        case(
            "no verdict: a timeout 5 s after the password",
            vec![Wait(5000)],
            &[
                "@5000 fail timed out after 5s while waiting for the telnet password prompt or its reply",
            ],
        ),
    ];
    check("telnet password sent", make, &[Start, text(PROMPT)], cases);
}

/// State: ready, no command under way: the server's lines are messages.
#[test]
fn state_ready() {
    let cases = vec![
        case(
            "a log line is a message",
            vec![text(&format!("{LOG}\r\n"))],
            &[&format!("message {LOG:?}")],
        ),
        case(
            "any other line is a message too",
            vec![text("Day 1, 08:00\n")],
            &["message \"Day 1, 08:00\""],
        ),
        case("empty lines are dropped", vec![text("\r\n\n")], &[]),
        case("nothing is due", vec![Wait(60_000)], &[]),
        case("a close: no answer", vec![Close], &["closed -> None"]),
        case(
            "a command goes as a line; no output: an empty answer after the gap",
            vec![Cmd("say hi"), Wait(200)],
            &["send \"say hi\\r\\n\"", "@200 answer \"\""],
        ),
    ];
    check("telnet ready", make, &logged_in(), cases);
}

/// State: a command under way (`version`, sent at the case's start): its answer is every line
/// that is not a log line, until the idle gap after the last.
#[test]
fn state_command() {
    // Lines every 150 ms never leave a 200 ms gap: the timeout ends it.
    let mut endless = Vec::new();
    for i in 0..34 {
        endless.extend([text(&format!("line {i}\r\n")), Wait(150)]);
    }
    let long = vec![b'x'; MAX_LINE + 10];
    let mut long_input = long.clone();
    long_input.extend_from_slice(b"\r\n");
    let cases = vec![
        case(
            "no output: an empty answer after the gap",
            vec![Wait(200)],
            &["@200 answer \"\""],
        ),
        case(
            "lines until the gap after the last",
            vec![
                Wait(50),
                text("Game version: V 1.0\r\n"),
                Wait(100),
                text("Mapping: x\r\n"),
                Wait(300),
            ],
            &["@350 answer \"Game version: V 1.0\\nMapping: x\""],
        ),
        case(
            "log lines are messages at once, never in the answer",
            vec![
                text(&format!("{LOG}\r\nGame version: V 1.0\r\n{LOG2}\r\n")),
                Wait(200),
            ],
            &[
                &format!("message {LOG:?}"),
                &format!("message {LOG2:?}"),
                "@200 answer \"Game version: V 1.0\"",
            ],
        ),
        case(
            "a log line does not hold the answer back",
            vec![
                text("a\r\n"),
                Wait(150),
                text(&format!("{LOG}\r\n")),
                Wait(50),
            ],
            &[&format!("@150 message {LOG:?}"), "@200 answer \"a\""],
        ),
        case(
            "bare line feeds end lines too; empty lines inside are kept",
            vec![text("a\n\nb\r\n"), Wait(200)],
            &["@200 answer \"a\\n\\nb\""],
        ),
        case(
            "negotiation and NULs inside the answer are stripped",
            vec![
                raw(b"ver\xff\xfb\x01si\xff\xfa\x18\x00\xff\xf0on\0 1\r\n"),
                Wait(200),
            ],
            &["@200 answer \"version 1\""],
        ),
        case(
            "IAC IAC is a 255 byte of text",
            vec![raw(b"a\xff\xffb\r\n"), Wait(200)],
            &["@200 answer \"a\u{fffd}b\""],
        ),
        case(
            "UTF-8 split anywhere",
            vec![text("Spieler: Jörg 🎮\r\n"), Wait(200)],
            &["@200 answer \"Spieler: Jörg 🎮\""],
        ),
        case(
            "an answer that never goes quiet times out",
            endless,
            &["@5000 fail timed out after 5s while waiting for the telnet answer"],
        ),
        case(
            "a line still arriving holds the answer open",
            vec![
                text("a\r\nlong li"),
                Wait(150),
                text("ne, still"),
                Wait(150),
                text(" coming\r\n"),
                Wait(200),
            ],
            &["@500 answer \"a\\nlong line, still coming\""],
        ),
        case(
            "a last line without a line end is the answer's, not the next line's",
            vec![text("a\r\nno line end"), Wait(200), text("next\r\n")],
            &["@200 answer \"a\\nno line end\"", "@200 message \"next\""],
        ),
        case(
            "a log line without its line end at the gap waits for it, as a message",
            vec![text(LOG), Wait(200), text("\r\n")],
            &["@200 answer \"\"", &format!("@200 message {LOG:?}")],
        ),
        case(
            "a log line in transit neither holds the answer open nor joins it",
            vec![
                text("a\r\n"),
                Wait(150),
                text("2026-12-02T01:30:00 1"),
                Wait(100),
                text("2.345 INF x\r\n"),
            ],
            &[
                "@200 answer \"a\"",
                "@250 message \"2026-12-02T01:30:00 12.345 INF x\"",
            ],
        ),
        case(
            "lines after the answer are messages",
            vec![text("a\r\n"), Wait(200), text("b\r\n")],
            &["@200 answer \"a\"", "@200 message \"b\""],
        ),
        case(
            "a close mid-answer (a stopping server) gives the lines so far",
            vec![text("Shutting down\r\nbye\r"), Close],
            &["closed -> Some(\"Shutting down\\nbye\")"],
        ),
        Case {
            name: "a line over 64 KiB is cut into pieces".into(),
            steps: vec![In(long_input), Wait(200)],
            want: vec![format!(
                "@200 answer {:?}",
                format!("{}\n{}", "x".repeat(MAX_LINE), "x".repeat(10))
            )],
        },
    ];
    let mut given = logged_in();
    given.push(Cmd("version"));
    check("telnet command", make, &given, cases);
}

/// State: failed (here: the password refused).
#[test]
fn state_failed() {
    let cases = vec![case(
        "input is ignored and nothing is due",
        vec![
            text("Logon successful.\r\n"),
            text(&format!("{LOG}\r\n")),
            Wait(60_000),
        ],
        &[],
    )];
    check(
        "telnet failed",
        make,
        &[
            Start,
            text(PROMPT),
            text("Password incorrect, please enter password:\r\n"),
        ],
        cases,
    );
}
