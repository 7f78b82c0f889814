//! Behaviour whose implementation differs by platform, checked the same way on every one
//! (issue 12): a closed stdout is not a failure.

mod common;

use std::io::Read;
use std::process::Stdio;
use std::time::Duration;

use common::*;
use rconsole::practice::Mode;

/// `rcon ... | head -c 10`: the reader goes away after 10 bytes, and rcon ends quietly with
/// success (on Windows the write fails with os error 232 or 233, not `BrokenPipe`; that exited 7
/// with "Pipe not connected" before).
#[test]
fn closed_stdout_is_success_without_a_message() {
    let server = server(Mode::Vanilla, Duration::ZERO);
    let home = home();
    let mut child = rcon_for(&server, home.path())
        .args(["-c", "chars 4000000", "-c", "chars 4000000"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rcon");
    let mut stdout = child.stdout.take().expect("stdout");
    let mut first = [0u8; 10];
    stdout.read_exact(&mut first).expect("the first 10 bytes");
    drop(stdout);
    let out = wait_with_timeout(child, Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stderr(&out), "");
}
