//! Fan-out over servers of mixed dialects: one command list on a BattlEye, a WebRCON and a
//! telnet practice server (and an RCON one) at once, each through its own protocol, output
//! labelled per server, JSON per command, a dead server reported without holding back others.

use crate::common::*;
use crate::consoles_common::*;
use rconsole::consoles::practice::Kind;
use rconsole::practice::PracticeMode;

pub(crate) fn write_config(home: &std::path::Path, text: &str) {
    let dir = home.join("config/rconsole");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.toml");
    std::fs::write(&path, text).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
}

#[test]
fn one_command_list_on_three_dialects_and_rcon() {
    let be = console_server(Kind::BattlEye);
    let web = console_server(Kind::WebRcon);
    let tel = console_server(Kind::Telnet);
    let mc = server(PracticeMode::Vanilla, std::time::Duration::ZERO);
    let home = home();
    let profile = |name: &str, port: u16, dialect: &str| {
        format!(
            "[servers.{name}]\nhost = \"127.0.0.1\"\nport = {port}\npassword = \"{PASSWORD}\"\ndialect = \"{dialect}\"\n\n"
        )
    };
    write_config(
        home.path(),
        &format!(
            "{}{}{}{}",
            profile("dayz", be.port(), "battleye"),
            profile("rust", web.port(), "webrcon"),
            profile("sdtd", tel.port(), "telnet").replace("\n\n", "\nidle_gap = \"750ms\"\n\n"),
            profile("mc", mc.port(), "minecraft"),
        ),
    );
    let out = run(rcon_in(home.path()).args([
        "-s",
        "dayz,rust,sdtd",
        "-c",
        "echo hi",
        "-c",
        "chars 3000",
        "-c",
        "say nobody sees this",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let long = rconsole::practice::sample_text(3000);
    let text = stdout(&out);
    for name in ["dayz", "rust", "sdtd"] {
        let mine: Vec<&str> = text
            .lines()
            .filter(|l| l.starts_with(&format!("[{name}]")))
            .collect();
        assert_eq!(
            mine,
            [
                format!("[{name}] hi"),
                format!("[{name}] {long}"),
                format!("[{name}]")
            ],
            "{name}"
        );
    }
    assert!(!stdout(&out).contains("nobody sees this"));

    // --messages: each server's own messages on stderr, labelled by server; stdout unchanged.
    let out = run(rcon_in(home.path()).args([
        "-s",
        "dayz,rust,sdtd",
        "--messages",
        "-c",
        "say seen by all",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stdout(&out).contains("seen by all"), "{}", stdout(&out));
    let err = stderr(&out);
    for name in ["dayz", "rust", "sdtd"] {
        assert!(
            err.lines()
                .any(|l| l.starts_with(&format!("[{name}] [server] ")) && l.contains("seen by all")),
            "{name}: {err}"
        );
    }

    // JSON: one record per server and command, named.
    let out = run(rcon_in(home.path()).args(["--all", "--json", "echo j"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let mut names: Vec<String> = stdout(&out)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["response"], "j", "{l}");
            v["server"].as_str().unwrap().to_string()
        })
        .collect();
    names.sort();
    assert_eq!(names, ["dayz", "mc", "rust", "sdtd"]);

    // A stopped server fails alone, with its own exit status; the others answer.
    drop(web);
    let out = run(rcon_in(home.path()).args(["-s", "dayz,rust,sdtd", "echo still"]));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(
        text.contains("[dayz] still") && text.contains("[sdtd] still"),
        "{text}"
    );
    assert!(stderr(&out).contains("rust"), "{}", stderr(&out));
}
