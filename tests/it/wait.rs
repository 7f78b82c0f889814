//! `--wait DURATION` (issue 23): a server that comes up after rcon starts, a port forwarder
//! that accepts and closes before the server is up, a login with no answer yet; a wrong
//! password is final at once; giving up with the last failure's status; the progress line on a
//! terminal.

use std::io::Read;
use std::net::{TcpListener, TcpStream};
use std::process::Stdio;
use std::time::Duration;

use crate::common::term::Term;
use crate::common::*;
use rconsole::practice::{Observed, PracticeConfig, PracticeServer};

/// The practice server (test password) on `port`, which rcon is already trying.
fn server_on(port: ClosedPort) -> PracticeServer {
    port.serve(PracticeConfig {
        password: PASSWORD.into(),
        ..PracticeConfig::default()
    })
}

/// What a forwarder in front of the server does with one accepted connection.
#[derive(Clone, Copy)]
enum Early {
    /// Close it at once, as a container's port forwarder does before the server listens.
    Close,
    /// Keep it open and say nothing until the client leaves (a server still starting).
    Silent,
}

/// A forwarder on a free port: its first `early.len()` connections get those treatments, the
/// rest are relayed to `backend`. Returns its port.
fn forwarder(early: Vec<Early>, backend: u16) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for (n, conn) in listener.incoming().enumerate() {
            let Ok(mut client) = conn else { return };
            match early.get(n) {
                Some(Early::Close) => drop(client),
                Some(Early::Silent) => {
                    // Read until the client gives up and closes.
                    let mut sink = Vec::new();
                    let _ = client.read_to_end(&mut sink);
                }
                None => {
                    relay(client, backend);
                    return;
                }
            }
        }
    });
    port
}

/// Copies bytes both ways between `client` and the server on `backend`.
fn relay(client: TcpStream, backend: u16) {
    let server = TcpStream::connect(("127.0.0.1", backend)).unwrap();
    let _ = client.set_nodelay(true);
    let _ = server.set_nodelay(true);
    let (mut c2, mut s2) = (client.try_clone().unwrap(), server.try_clone().unwrap());
    let (mut c, mut s) = (client, server);
    std::thread::spawn(move || {
        let _ = std::io::copy(&mut c2, &mut s2);
        let _ = s2.shutdown(std::net::Shutdown::Write);
    });
    let _ = std::io::copy(&mut s, &mut c);
    let _ = c.shutdown(std::net::Shutdown::Write);
}

#[test]
fn waits_for_a_server_that_starts_later() {
    let home = home();
    let port = closed_port();
    let child = rcon_at(port.port(), home.path())
        .args(["--wait", "20s", "list"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rcon");
    // The scenario: the server comes up three seconds after rcon starts trying.
    std::thread::sleep(Duration::from_secs(3));
    let server = server_on(port);
    let out = wait_with_timeout(child, Duration::from_secs(60));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with("There are 0 of a max of 20 players online"),
        "{}",
        stdout(&out)
    );
    assert_eq!(server.commands(), ["list"]);
    // Piped stderr: no progress line, nothing at all.
    assert_eq!(stderr(&out), "");
}

#[test]
fn a_wrong_password_is_final_at_once() {
    let server = strict_vanilla();
    let home = home();
    let out = run(rcon_for(&server, home.path())
        .env("RCON_PASSWORD", "wrong")
        .args(["--wait", "10m", "list"]));
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    assert!(stderr(&out).contains("wrong password"), "{}", stderr(&out));
    // One login, not retried.
    let logins = server
        .events()
        .iter()
        .filter(|e| matches!(e, Observed::Packet { kind: 3, .. }))
        .count();
    assert_eq!((server.connections(), logins), (1, 1));
}

#[test]
fn a_connection_closed_before_the_server_is_up_is_tried_again() {
    let server = strict_vanilla();
    let port = forwarder(vec![Early::Close, Early::Close], server.port());
    let home = home();
    let out = run(rcon_at(port, home.path()).args(["--wait", "1m", "seed"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Seed: [-4172144997902289642]\n");
    assert_eq!(server.commands(), ["seed"]);
    // Without --wait the same forwarder fails the first attempt.
    let port = forwarder(vec![Early::Close], server.port());
    let out = run(rcon_at(port, home.path()).arg("seed"));
    assert!(!out.status.success());
}

#[test]
fn a_login_with_no_answer_yet_is_tried_again() {
    let server = strict_vanilla();
    let port = forwarder(vec![Early::Silent], server.port());
    let home = home();
    let out = run(rcon_at(port, home.path()).args(["--timeout", "500ms", "--wait", "1m", "seed"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.commands(), ["seed"]);
}

#[test]
fn past_the_limit_the_last_failure_decides_the_status() {
    let home = home();
    // Nothing listens: 4, as without --wait.
    let closed = closed_port();
    let out = run(rcon_at(closed.port(), home.path()).args(["--wait", "1s", "list"]));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("was not up after waiting 1s"), "{err}");
    assert!(err.contains("cannot connect"), "{err}");
    // Always silent: 6 (timed out).
    let silent = forwarder(vec![Early::Silent; 100], 1);
    let out =
        run(rcon_at(silent, home.path()).args(["--timeout", "300ms", "--wait", "1s", "list"]));
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
}

#[test]
fn wait_is_for_one_server_session() {
    let home = home();
    for extra in [
        &[
            "--target",
            "a=127.0.0.1:1",
            "--target",
            "b=127.0.0.1:2",
            "list",
        ][..],
        &["--ping", "127.0.0.1:1"],
        &["--every", "1s", "list"],
    ] {
        let out = run(rcon_in(home.path())
            .env("RCON_PASSWORD", PASSWORD)
            .args(["--wait", "5s"])
            .args(extra));
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("--wait applies to"),
            "{}",
            stderr(&out)
        );
    }
}

#[test]
fn a_terminal_shows_one_progress_line_while_waiting() {
    let home = home();
    let closed = closed_port();
    let (port, addr) = (closed.port(), closed.addr());
    let mut term = Term::start(addr, home.path(), &["--wait", "1m", "seed"]);
    term.wait_for(&format!("waiting for 127.0.0.1:{port}"));
    let server = server_on(closed);
    assert_eq!(term.exit_code(), 0, "{}", term.screen());
    let screen = term.screen();
    assert!(screen.contains("Seed: [-4172144997902289642]"), "{screen}");
    // The line was cleared once the server answered.
    assert!(!screen.contains("waiting for"), "{screen}");
    assert_eq!(server.commands(), ["seed"]);
}
