//! `rcon` against third-party RCON servers the project did not write (tests/peers/, installed by
//! `tests/peers/install.sh`): each answers the end-of-output sentinel its own way, and several
//! commands in one session (short and multi-fragment output) must come back complete and in order.
//!
//! Without the peers installed these tests say so loudly and pass, unless `CI` is set, where a
//! missing peer is a failure.

mod common;

use std::io::{BufRead, BufReader};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};

use common::*;

fn peers_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/peers")
}

/// A running peer; killed on drop.
struct Peer {
    child: Child,
    port: u16,
}

impl Drop for Peer {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Starts a launcher, or returns `None` (after a loud note) when the peers are not installed
/// outside CI.
fn peer(launcher: &str, password: &str) -> Option<Peer> {
    let dir = peers_dir();
    let (program, installed) = if launcher.ends_with(".py") {
        let py = dir.join(".venv/bin/python");
        let ok = py.exists();
        (py, ok)
    } else {
        (
            PathBuf::from("node"),
            dir.join("node_modules/.rconsole-stamp").exists(),
        )
    };
    if !installed {
        assert!(
            std::env::var_os("CI").is_none(),
            "peer {launcher} is not installed; run tests/peers/install.sh"
        );
        eprintln!("SKIPPED: peer {launcher} not installed (run tests/peers/install.sh)");
        return None;
    }
    let mut child = Command::new(program)
        .arg(dir.join(launcher))
        .args(["--password", password, "--port", "0"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .expect("start peer");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read PORT line");
    let port = line
        .trim()
        .strip_prefix("PORT ")
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("{launcher} printed {line:?} instead of PORT <n>"));
    Some(Peer { child, port })
}

/// N Unicode scalar values of "é€😀a" repeated: what the peers' `long N` answers.
fn long_text(n: usize) -> String {
    "é€😀a".chars().cycle().take(n).collect()
}

fn rcon_peer(peer: &Peer, password: &str, home: &Path) -> Command {
    let mut cmd = rcon_in(home);
    cmd.args(["-H", "127.0.0.1", "-P", &peer.port.to_string(), "-t", "10s"])
        .env("RCON_PASSWORD", password);
    cmd
}

/// Runs the session and checks every answer, in order.
fn check_session(launcher: &str, commands: &[(&str, String)], expect_warning: bool) {
    let password = "peer-pass-1";
    let Some(peer) = peer(launcher, password) else {
        return;
    };
    let home = home();
    let mut cmd = rcon_peer(&peer, password, home.path());
    for (c, _) in commands {
        cmd.args(["-c", c]);
    }
    let out = run(&mut cmd);
    assert!(out.status.success(), "{launcher}: {}", stderr(&out));
    let expected: String = commands.iter().map(|(_, r)| format!("{r}\n")).collect();
    let got = stdout(&out);
    assert!(
        got == expected,
        "{launcher}: output differs\n got {} bytes: {:?}\nwant {} bytes: {:?}",
        got.len(),
        got.chars().take(200).collect::<String>(),
        expected.len(),
        expected.chars().take(200).collect::<String>()
    );
    let warned = stderr(&out).contains("warning");
    assert_eq!(warned, expect_warning, "{launcher}: {}", stderr(&out));

    // A wrong password is refused with exit 5 by every peer.
    let out = run(rcon_peer(&peer, "wrong", home.path()).arg("list"));
    assert_eq!(out.status.code(), Some(5), "{launcher}: {}", stderr(&out));
}

/// N ASCII letters a-z repeated: what the peers' `along N` answers.
fn ascii_text(n: usize) -> String {
    ('a'..='z').cycle().take(n).collect()
}

const LIST: &str = "There are 0 of a max of 20 players online: ";

/// PyPI rcon-fake: mirrors the sentinel (empty body, same id); one packet of any size.
#[test]
fn pypi_rcon_fake_mirror() {
    check_session(
        "pypi_rcon_fake.py",
        &[
            ("echo hello", "hello".into()),
            ("long 20000", long_text(20000)),
            ("list", LIST.into()),
            ("empty", String::new()),
            ("long 5", long_text(5)),
        ],
        false,
    );
}

/// PyPI rcon-server: mirror plus an 8-byte trailer; splits every 4086 characters; ASCII only.
#[test]
fn pypi_rcon_server_mirror_and_8_byte_trailer() {
    check_session(
        "pypi_rcon_server.py",
        &[
            ("echo hello", "hello".into()),
            ("along 20000", ascii_text(20000)),
            ("list", LIST.into()),
            ("along 4086", ascii_text(4086)),
            ("echo after", "after".into()),
        ],
        false,
    );
}

/// PyPI rconx: closes the connection on any id <= 0, splits every 4086 bytes (cutting UTF-8
/// characters): rcon warns once and uses a positive-id sentinel.
#[test]
fn pypi_rconx_closes_on_nonpositive_ids() {
    check_session(
        "pypi_rconx.py",
        &[
            ("echo hello", "hello".into()),
            ("long 20000", long_text(20000)),
            ("list", LIST.into()),
            ("long 3", long_text(3)),
        ],
        true,
    );
}

/// npm rcon-server: answers no sentinel at all (and replies to login with type 3): rcon warns
/// once and ends each output after the idle gap.
#[test]
fn npm_rcon_server_answers_no_sentinel() {
    check_session(
        "npm_rcon_server.js",
        &[
            ("echo hello", "hello".into()),
            ("along 20000", ascii_text(20000)),
            ("list", LIST.into()),
        ],
        true,
    );
}
