//! `rcon --dialect webrcon` against the WebRCON practice server (Rust's JSON over WebSocket):
//! the common console experience, and the password that sits in the URL path kept out of
//! traces, errors and --print-config.

use crate::common::*;
use crate::consoles_common::*;
use rconsole::consoles::practice::Kind;

#[test]
fn webrcon_basics() {
    check_basics(Kind::WebRcon, "webrcon", "[rcon] executing");
}

#[test]
fn the_password_in_the_url_is_never_shown() {
    let server = console_server(Kind::WebRcon);
    let home = home();
    let out = run(rcon_dialect(&server, "webrcon", home.path()).args(["--trace", "echo x"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("|GET /******** HT|"), "{err}");
    assert!(err.contains("password in the path hidden"), "{err}");
    assert!(!err.contains(PASSWORD), "{err}");

    let out = run(rcon_dialect(&server, "webrcon", home.path()).arg("--print-config"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stdout(&out).contains(PASSWORD), "{}", stdout(&out));
    assert!(stdout(&out).contains("webrcon"), "{}", stdout(&out));

    // Nobody listening: the error names the address, not the URL with the password.
    let closed = crate::common::closed_port();
    let port = closed.port();
    let out = run(rcon_at(port, home.path()).args(["--dialect", "webrcon", "echo x"]));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(!stderr(&out).contains(PASSWORD), "{}", stderr(&out));
}

#[test]
fn default_port_is_28016() {
    let home = home();
    let out = run(rcon_in(home.path()).args(["--dialect", "webrcon", "--print-config"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out)
            .lines()
            .any(|l| l.starts_with("port") && l.contains("28016")),
        "{}",
        stdout(&out)
    );
}
