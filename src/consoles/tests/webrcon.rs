//! Rust's WebRCON tables, one per state: new (the WebSocket upgrade was the login), ready (frames
//! with identifier 0 or -1 are the server's own messages), a command under way (its answer is
//! the frame with its identifier; timeouts; frames that are not its JSON). Timeout 5 s.

use super::*;
use crate::consoles::webrcon::{CLIENT_NAME, WebRcon};

impl Subject for WebRcon {
    const STREAM: bool = false;

    /// `request ID "command"` for a well-formed request, else the raw frame.
    fn show(sent: &[u8]) -> String {
        let raw = String::from_utf8_lossy(sent);
        let Ok(serde_json::Value::Object(o)) = serde_json::from_slice(sent) else {
            return format!("frame {raw}");
        };
        match (
            o.len(),
            o.get("Identifier").and_then(|v| v.as_i64()),
            o.get("Message").and_then(|v| v.as_str()),
            o.get("Name").and_then(|v| v.as_str()),
        ) {
            (3, Some(id), Some(message), Some(CLIENT_NAME)) => format!("request {id} {message:?}"),
            _ => format!("frame {raw}"),
        }
    }
}

fn make(tracing: bool) -> WebRcon {
    WebRcon::new(Duration::from_secs(5), tracing)
}

/// A frame as Rust sends it.
fn frame(id: i64, message: &str) -> Step {
    let f = serde_json::json!({
        "Identifier": id,
        "Message": message,
        "Type": "Generic",
        "Stacktrace": "",
    });
    In(f.to_string().into_bytes())
}

/// A frame of any text.
fn raw(s: &str) -> Step {
    In(s.as_bytes().to_vec())
}

/// State: new: the driver starts once the upgrade (with the password in the path) is done.
#[test]
fn state_new() {
    let cases = vec![
        case("start: logged in", vec![Start], &["logged in"]),
        case(
            "nothing is due before a command",
            vec![Start, Wait(60_000)],
            &["logged in"],
        ),
    ];
    check("webrcon new", make, &[], cases);
}

/// State: ready, no command under way.
#[test]
fn state_ready() {
    let cases = vec![
        case(
            "a log line (Identifier 0) is a message",
            vec![frame(0, "log line")],
            &["message \"log line\""],
        ),
        case(
            "chat (Identifier -1) is a message",
            vec![frame(-1, "[CHAT] x: hi")],
            &["message \"[CHAT] x: hi\""],
        ),
        case(
            "a reply with nothing pending is a message",
            vec![frame(7, "late")],
            &["message \"late\""],
        ),
        case(
            "a frame without Identifier is a message",
            vec![raw(r#"{"Message":"hi"}"#)],
            &["message \"hi\""],
        ),
        case(
            "a frame that is not JSON is ignored with a warning",
            vec![raw("not json")],
            &["warning ignored a WebRCON frame that is not its JSON: ..."],
        ),
        case(
            "commands go with increasing identifiers",
            vec![Cmd("a"), frame(1, "x"), Cmd("b"), frame(2, "y")],
            &[
                "send request 1 \"a\"",
                "answer \"x\"",
                "send request 2 \"b\"",
                "answer \"y\"",
            ],
        ),
        case("nothing is due", vec![Wait(60_000)], &[]),
        case("a close: no answer", vec![Close], &["closed -> None"]),
    ];
    check("webrcon ready", make, &[Start], cases);
}

/// State: a command under way (`status`, sent as Identifier 1 at the case's start).
#[test]
fn state_command() {
    let cases = vec![
        case(
            "the frame with its identifier is the answer",
            vec![frame(1, "hostname: x")],
            &["answer \"hostname: x\""],
        ),
        case(
            "frames with 0, -1 and other identifiers around it are messages",
            vec![
                frame(0, "log line"),
                frame(-1, "chat"),
                frame(7, "late"),
                frame(1, "out"),
                frame(0, "after"),
            ],
            &[
                "message \"log line\"",
                "message \"chat\"",
                "message \"late\"",
                "answer \"out\"",
                "message \"after\"",
            ],
        ),
        case(
            "a frame that is not JSON, then the answer",
            vec![raw("not json"), frame(1, "out")],
            &[
                "warning ignored a WebRCON frame that is not its JSON: ...",
                "answer \"out\"",
            ],
        ),
        case(
            "an identifier that is not a number is not its JSON",
            vec![raw(r#"{"Identifier":"1","Message":"x"}"#), frame(1, "out")],
            &[
                "warning ignored a WebRCON frame that is not its JSON: ...",
                "answer \"out\"",
            ],
        ),
        case(
            "JSON that is not an object is not its JSON",
            vec![
                raw(r#"[1,"x"]"#),
                raw("[]"),
                raw("null"),
                raw("42"),
                raw(r#""text""#),
                frame(1, "out"),
            ],
            &[
                "warning ignored a WebRCON frame that is not its JSON: ...",
                "warning ignored a WebRCON frame that is not its JSON: ...",
                "warning ignored a WebRCON frame that is not its JSON: ...",
                "warning ignored a WebRCON frame that is not its JSON: ...",
                "warning ignored a WebRCON frame that is not its JSON: ...",
                "answer \"out\"",
            ],
        ),
        case(
            "a reply without Message is an empty answer",
            vec![raw(r#"{"Identifier":1}"#)],
            &["answer \"\""],
        ),
        case(
            "a second reply with the same identifier is a message",
            vec![frame(1, "out"), frame(1, "out")],
            &["answer \"out\"", "message \"out\""],
        ),
        case(
            "no reply: a timeout",
            vec![frame(0, "log line"), Wait(5000)],
            &[
                "message \"log line\"",
                "@5000 fail timed out after 5s while waiting for the WebRCON reply",
            ],
        ),
        case(
            "the reply just before the timeout",
            vec![Wait(4999), frame(1, "out"), Wait(60_000)],
            &["@4999 answer \"out\""],
        ),
        case(
            "a close: no partial answer",
            vec![Close],
            &["closed -> None"],
        ),
    ];
    check("webrcon command", make, &[Start, Cmd("status")], cases);
}
