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
