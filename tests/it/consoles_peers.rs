//! The practice consoles cross-checked with clients written by others, from PyPI (installed by
//! tests/peers-consoles/install.sh): berconpy for BattlEye RCon (which also checks our CRC32
//! byte order), webrcon for Rust's WebRCON, telnetlib3 for the 7 Days to Die telnet console.
//! Each logs in, runs commands (long multi-part answers too), sees the server's messages apart,
//! and is refused with a wrong password.
//!
//! Without the clients installed these tests say so loudly and pass, unless `RCONSOLE_STRICT=1`
//! is set, where that is a failure.

use std::path::{Path, PathBuf};
use std::process::Command;

use crate::common::*;
use crate::consoles_common::*;
use rconsole::consoles::practice::Kind;

/// The venv's python and the script, or `None` (after a note) when not installed.
fn client(script: &str) -> Option<(PathBuf, PathBuf)> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers-consoles");
    // The venv layout of the OS running the tests: a Linux venv is "not installed" for the
    // Windows build under Wine (which cannot pipe to an ELF program).
    let python = venv_python(&dir);
    if !python.exists() {
        skip(&format!(
            "{script} is not installed (run tests/peers-consoles/install.sh)"
        ));
        return None;
    }
    Some((python, dir.join(script)))
}

/// Runs a client script against `port`; its stdout lines.
fn talk(script: &str, port: u16, password: &str, commands: &[&str]) -> Option<(i32, Vec<String>)> {
    let (python, path) = client(script)?;
    let mut cmd = Command::new(python);
    cmd.arg(path)
        .args(["--port", &port.to_string(), "--password", password])
        .args(commands);
    let out = run(&mut cmd);
    let lines = stdout(&out).lines().map(String::from).collect();
    Some((out.status.code().unwrap_or(-1), lines))
}

/// `KIND <json string>` lines as (kind, text); `DONE` and the like as (line, "").
fn decode(lines: &[String]) -> Vec<(String, String)> {
    lines
        .iter()
        .map(|l| match l.split_once(' ') {
            Some((kind, json)) if json.starts_with('"') => (
                kind.to_string(),
                serde_json::from_str::<String>(json).expect("a JSON string"),
            ),
            _ => (l.clone(), String::new()),
        })
        .collect()
}

fn pair(kind: &str, text: &str) -> (String, String) {
    (kind.to_string(), text.to_string())
}

#[test]
fn berconpy_talks_to_the_battleye_practice_server() {
    let server = console_server(Kind::BattlEye);
    let commands = ["echo hi", "chars 2500", "count", "say from berconpy"];
    let Some((code, lines)) = talk("berconpy_client.py", server.port(), PASSWORD, &commands) else {
        return;
    };
    assert_eq!(code, 0, "{lines:?}");
    let long = rconsole::practice::sample_text(2500);
    let got = decode(&lines);
    assert!(
        got == [
            pair("ANSWER", "hi"),
            pair("ANSWER", &long),
            pair("ANSWER", "count 1"),
            pair("ANSWER", ""),
            pair("MESSAGE", "(Global) Server: from berconpy"),
            pair("DONE", ""),
        ],
        "berconpy saw: {:?}",
        got.iter()
            .map(|(k, t)| format!("{k} {}", t.chars().take(40).collect::<String>()))
            .collect::<Vec<_>>()
    );
    // berconpy acknowledged the message.
    let stats = server.stats();
    use std::sync::atomic::Ordering::SeqCst;
    assert_eq!(stats.acked.load(SeqCst), stats.messages.load(SeqCst));
    let (code, lines) = talk("berconpy_client.py", server.port(), "wrong", &["echo x"]).unwrap();
    assert_eq!((code, lines), (3, vec!["LOGIN REFUSED".to_string()]));
}

#[test]
fn webrcon_talks_to_the_webrcon_practice_server() {
    let server = console_server(Kind::WebRcon);
    let commands = ["echo hi", "chars 2500", "count", "say from webrcon"];
    let Some((code, lines)) = talk("webrcon_client.py", server.port(), PASSWORD, &commands) else {
        return;
    };
    assert_eq!(code, 0, "{lines:?}");
    let long = rconsole::practice::sample_text(2500);
    let got = decode(&lines);
    let answers: Vec<&str> = got
        .iter()
        .filter(|(k, _)| k == "ANSWER")
        .map(|(_, t)| t.as_str())
        .collect();
    assert!(
        answers == ["hi", long.as_str(), "count 1", ""],
        "webrcon answers: {:?}",
        answers
            .iter()
            .map(|t| t.chars().take(40).collect::<String>())
            .collect::<Vec<_>>()
    );
    assert!(
        got.contains(&pair("MESSAGE", "(Global) Server: from webrcon")),
        "{lines:?}"
    );
    assert_eq!(lines.last().map(String::as_str), Some("DONE"));
    let (code, _) = talk("webrcon_client.py", server.port(), "wrong", &["echo x"]).unwrap();
    assert_eq!(code, 3);
}

#[test]
fn telnetlib3_talks_to_the_telnet_practice_server() {
    let server = console_server(Kind::Telnet);
    let Some((code, lines)) = talk(
        "telnetlib3_client.py",
        server.port(),
        PASSWORD,
        &["echo hi", "count"],
    ) else {
        return;
    };
    assert_eq!(code, 0, "{lines:?}");
    let text: Vec<String> = lines
        .iter()
        .map(|l| serde_json::from_str::<String>(l.strip_prefix("LINE ").unwrap_or("\"\"")).unwrap())
        .collect();
    assert_eq!(text.first().map(String::as_str), Some("Logon successful."));
    let hi = text.iter().position(|l| l == "hi").expect("answer to echo");
    let count = text
        .iter()
        .position(|l| l == "count 1")
        .expect("answer to count");
    assert!(hi < count);
    assert!(
        text[..hi]
            .iter()
            .any(|l| l.contains("INF Executing command 'echo hi'"))
    );
    let (code, lines) = talk("telnetlib3_client.py", server.port(), "wrong", &["echo x"]).unwrap();
    assert_eq!((code, lines), (3, vec!["LOGIN REFUSED".to_string()]));
}
