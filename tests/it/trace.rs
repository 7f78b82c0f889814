//! `rcon --trace` over a real RCON session: every packet is shown, the password never is.

use crate::common::{PASSWORD, home, rcon_for, run, stderr, strict_vanilla};

/// All bytes of the hex dumps in a trace, concatenated, so a password split across dump lines
/// is still found.
fn dumped_bytes(trace: &str) -> Vec<u8> {
    let mut bytes = Vec::new();
    for line in trace.lines() {
        let Some(rest) = line.strip_prefix("  ") else {
            continue;
        };
        let Some((hex, _ascii)) = rest.split_once("  |") else {
            continue;
        };
        // Skip the offset, keep the byte columns.
        for word in hex.split_whitespace().skip(1) {
            bytes.push(u8::from_str_radix(word, 16).expect("hex byte"));
        }
    }
    bytes
}

fn contains(haystack: &[u8], needle: &[u8]) -> bool {
    haystack.windows(needle.len()).any(|w| w == needle)
}

#[test]
fn trace_shows_packets_and_hides_the_password() {
    let server = strict_vanilla();
    let home = home();
    let mut cmd = rcon_for(&server, home.path());
    cmd.args(["--trace", "-c", "echo traced-command", "-c", "list"]);
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);

    // The login is shown without body or size.
    assert!(
        err.contains("size=? id=1 type=3 (login) body=<password hidden>"),
        "{err}"
    );
    // Commands and replies are dumped with decoded headers.
    assert!(err.contains("type=2 (command) body=19 bytes"), "{err}");
    assert!(err.contains("type=0 (output)"), "{err}");
    assert!(err.contains("type=2 (login reply)"), "{err}");
    assert!(err.contains("rcon: trace +"), "{err}");
    let bytes = dumped_bytes(&err);
    assert!(contains(&bytes, b"echo traced-command"), "{err}");
    assert!(contains(&bytes, b"list"), "{err}");

    // The password appears nowhere: not as text, not in any hex dump.
    assert!(!err.contains(PASSWORD), "{err}");
    assert!(!contains(&bytes, PASSWORD.as_bytes()), "{err}");
    let hex: Vec<String> = PASSWORD.bytes().map(|b| format!("{b:02x}")).collect();
    assert!(!err.contains(&hex.join(" ")), "{err}");
    assert!(!err.contains(&hex.join("")), "{err}");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(PASSWORD));
}

#[test]
fn no_trace_without_the_flag() {
    let server = strict_vanilla();
    let home = home();
    let mut cmd = rcon_for(&server, home.path());
    cmd.args(["echo", "quiet"]);
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains("rcon: trace"), "{}", stderr(&out));
}
