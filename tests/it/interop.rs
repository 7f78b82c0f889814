//! `rcon` against third-party RCON servers the project did not write (tests/peers/, installed by
//! `tests/peers/install.sh`): each answers the end-of-output sentinel its own way, and several
//! commands in one session (short and multi-fragment output) must come back complete and in order,
//! as must a timed run's (`--if`, `--countdown`) on the event loop.
//!
//! Without the peers installed these tests say so loudly and pass, unless `RCONSOLE_STRICT=1` is set, where a
//! missing peer is a failure.

use crate::common::*;

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

    // A timed run (the fleet's event loop): `--if` counts the players from `list`, then a
    // countdown's announcement and its final command, each answer whole.
    let out = run(rcon_peer(&peer, password, home.path())
        .env("RCON_CLOCK_SPEED", "20")
        .args(["--if", "players < 1", "--countdown", "2s", "--at", "1s"])
        .args(["--announce", "echo {seconds}", "--then", "echo done"]));
    assert!(out.status.success(), "{launcher}: {}", stderr(&out));
    assert_eq!(stdout(&out), "1\ndone\n", "{launcher}: {}", stderr(&out));
}

const LIST: &str = "There are 0 of a max of 20 players online: ";

/// PyPI rcon-fake: mirrors the sentinel (empty body, same id); one packet of any size.
#[test]
fn pypi_rcon_fake_mirror() {
    check_session(
        "pypi_rcon_fake.py",
        &[
            ("echo hello", "hello".into()),
            ("long 20000", peer_long(20000)),
            ("list", LIST.into()),
            ("empty", String::new()),
            ("long 5", peer_long(5)),
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
            ("along 20000", peer_ascii(20000)),
            ("list", LIST.into()),
            ("along 4086", peer_ascii(4086)),
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
            ("long 20000", peer_long(20000)),
            ("list", LIST.into()),
            ("long 3", peer_long(3)),
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
            ("along 20000", peer_ascii(20000)),
            ("list", LIST.into()),
        ],
        true,
    );
}
