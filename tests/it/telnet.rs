//! `rcon --dialect telnet` against the 7 Days to Die practice server: the common console
//! experience (log lines stream around every answer and are kept apart), and the default port.

use crate::common::*;
use crate::consoles_common::*;
use rconsole::consoles::practice::Kind;

#[test]
fn telnet_basics() {
    check_basics(Kind::Telnet, "telnet", "INF Executing command");
}

#[test]
fn default_port_is_8081() {
    let home = home();
    let out = run(rcon_in(home.path()).args(["--dialect", "telnet", "--print-config"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out)
            .lines()
            .any(|l| l.starts_with("port") && l.contains("8081")),
        "{}",
        stdout(&out)
    );
}

/// 7 Days to Die closes its telnet sessions as it stops; answers there end by a quiet gap, so
/// the close is what ends the answer of a stop command: its text, exit 0 (it was exit 7,
/// "server closed the connection mid-response", once the practice server closed its sessions).
#[test]
fn stop_ends_with_the_server_closing_the_session() {
    let server = console_server(Kind::Telnet);
    let home = home();
    let out = run(rcon_dialect(&server, "telnet", home.path()).arg("stop"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("Stopping the server"),
        "{}",
        stdout(&out)
    );
}
