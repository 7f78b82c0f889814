//! Behaviour whose implementation differs by platform, checked the same way on every one
//! (issue 12): a closed stdout is not a failure; `--version` names the commit.

use std::io::Read;
use std::process::Stdio;
use std::time::Duration;

use crate::common::*;
use rconsole::practice::PracticeMode;

/// `rcon ... | head -c 10`: the reader goes away after 10 bytes, and rcon ends quietly with
/// success (on Windows the write fails with os error 232 or 233, not `BrokenPipe`; that exited 7
/// with "Pipe not connected" before).
#[test]
fn closed_stdout_is_success_without_a_message() {
    let server = server(PracticeMode::Vanilla, Duration::ZERO);
    let home = home();
    let mut child = rcon_for(&server, home.path())
        // A generous timeout: under Wine on a loaded machine the default one can run out.
        .args(["-t", "60s", "-c", "chars 4000000", "-c", "chars 4000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rcon");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 10];
    let read = stdout.read_exact(&mut first);
    drop(stdout);
    let out = wait_with_timeout(child, Duration::from_secs(300));
    assert!(
        read.is_ok(),
        "no output ({read:?}); stderr: {}",
        stderr(&out)
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}

/// `rcon --version` says the version and the commit it was built from (build.rs): 12 hex
/// digits (with `-dirty` for uncommitted changes), or `unknown` without git; when git can be
/// asked here, it is this checkout's commit.
#[test]
fn version_names_the_commit() {
    let home = home();
    let out = run(rcon_in(home.path()).arg("--version"));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let rest = text
        .trim_end()
        .strip_prefix(concat!("rcon ", env!("CARGO_PKG_VERSION"), " (commit "))
        .and_then(|r| r.strip_suffix(')'))
        .unwrap_or_else(|| panic!("unexpected --version: {text:?}"));
    let commit = rest.strip_suffix("-dirty").unwrap_or(rest);
    assert!(
        commit == "unknown"
            || (commit.len() == 12 && commit.chars().all(|c| c.is_ascii_hexdigit())),
        "{text:?}"
    );
    let git = std::process::Command::new("git")
        .args(["rev-parse", "--short=12", "HEAD"])
        .current_dir(env!("CARGO_MANIFEST_DIR"))
        .output();
    if let Ok(git) = git
        && git.status.success()
        && std::env::var_os("RCONSOLE_COMMIT").is_none()
    {
        assert_eq!(
            commit,
            String::from_utf8_lossy(&git.stdout).trim(),
            "{text:?}"
        );
    }
}
