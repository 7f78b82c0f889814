//! Load: a 50 MB response reassembled from 4096-unit vanilla fragments, and (once batch mode
//! reads stdin) a 1,000,000-command stream with flat memory (issue 6, part 3).

use std::time::Duration;

use crate::common::*;
use rconsole::practice::{PracticeMode, sample_text};

#[test]
fn fifty_megabyte_response_is_reassembled() {
    // 25,000,000 UTF-16 units of the sample text are 50,000,000 bytes of UTF-8, in 6,104
    // fragments.
    const UNITS: usize = 25_000_000;
    let server = server(PracticeMode::Vanilla, Duration::ZERO);
    let home = home();
    let out = run(rcon_for(&server, home.path()).args([
        "-t",
        "120s",
        "-c",
        &format!("chars {UNITS}"),
        "-c",
        "echo after",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let (big, rest) = text.split_at(text.len() - "\nafter\n".len());
    assert_eq!(rest, "\nafter\n");
    assert_eq!(big.len(), 50_000_000);
    assert!(big == sample_text(UNITS), "content differs");
    assert!(server.violations().is_empty());
    assert_eq!(server.connections(), 1);
}

/// Peak RSS so far of a running process, from /proc (Linux).
#[cfg(target_os = "linux")]
fn vm_hwm_kib(pid: u32) -> u64 {
    let status = rcon_status(pid).expect("status of the running rcon");
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.trim().trim_end_matches("kB").trim().parse().ok())
        .expect("VmHWM")
}

/// A million commands piped into `rcon` complete in order, and its peak RSS after the first
/// 100,000 does not grow by more than 2 MB over the remaining 900,000.
///
/// Slow against a debug `rcon`; `.ci/cross.sh musl` runs it against the static release one
/// (`RCONSOLE_TEST_BIN=... cargo test --locked --test it -- --ignored load::`), and `.ci/run`
/// without the cross builds in release (`cargo test --release --locked --test it -- --ignored
/// load::`).
///
/// Linux only because the peak RSS comes from `/proc`; the stream itself is the same code
/// everywhere, and the Windows run of `batch.rs` pipes commands through it.
#[cfg(target_os = "linux")]
#[test]
#[ignore = "slow against a debug rcon: run against a release one, as .ci does"]
fn million_command_stream_has_flat_memory() {
    use std::io::{BufRead, BufReader, Write};
    use std::process::Stdio;
    const N: usize = 1_000_000;
    let server = server(PracticeMode::Vanilla, Duration::ZERO);
    let home = home();
    let mut child = rcon_for(&server, home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rcon");
    let pid = child.id();
    let mut stdin = child.stdin.take().expect("stdin");
    // The writer hands stdin back still open, so rcon is alive when its memory is read.
    let writer = std::thread::spawn(move || {
        let mut w = std::io::BufWriter::new(&mut stdin);
        for i in 0..N {
            writeln!(w, "echo {i}").expect("write command");
        }
        w.flush().expect("flush");
        drop(w);
        stdin
    });
    let mut lines = BufReader::new(child.stdout.take().expect("stdout")).lines();
    let mut at_100k = 0;
    for i in 0..N {
        let line = lines
            .next()
            .unwrap_or_else(|| panic!("output ended after {i} lines"))
            .expect("read line");
        assert_eq!(line, i.to_string());
        if i == 100_000 {
            at_100k = vm_hwm_kib(pid);
        }
    }
    let at_end = vm_hwm_kib(pid);
    drop(writer.join().expect("writer"));
    let status = child.wait().expect("wait");
    assert!(status.success());
    assert!(
        at_end <= at_100k + 2048,
        "peak RSS grew from {at_100k} KiB to {at_end} KiB"
    );
    assert_eq!(server.connections(), 1);
    assert!(server.violations().is_empty());
}
