//! `--print-config` shows the management settings of the resolved profile (URL, TLS, how the
//! certificate is trusted, Origin, where the secret comes from) with their sources, and never
//! the secret.

use crate::common;
use crate::consoles_fanout::write_config;

const PROFILE: &str = "[servers.survival]\nhost = \"127.0.0.1\"\nport = 25575\npassword = \"rcon-pass\"\nmgmt_url = \"wss://127.0.0.1:25585\"\nmgmt_cert = \"server.pem\"\nmgmt_origin = \"https://admin.example\"\nmgmt_secret_file = \"mgmt.secret\"\n";

/// The value and source columns of the row `key`.
fn row(text: &str, key: &str) -> String {
    let line = text
        .lines()
        .find(|l| l.split_whitespace().next() == Some(key))
        .unwrap_or_else(|| panic!("no {key} row: {text}"));
    line[key.len()..]
        .split_whitespace()
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn the_profile_management_settings_with_their_sources() {
    let home = common::home();
    write_config(home.path(), PROFILE);
    let out = common::run(common::rcon_in(home.path()).args(["-s", "survival", "--print-config"]));
    assert!(out.status.success(), "{}", common::stderr(&out));
    let text = common::stdout(&out);
    let cfg = home.path().join("config").join("rconsole");
    let at = |line: u32| {
        format!(
            "profile survival ({}:{line})",
            cfg.join("config.toml").display()
        )
    };
    assert_eq!(
        row(&text, "mgmt_url"),
        format!("wss://127.0.0.1:25585 {}", at(5))
    );
    assert_eq!(row(&text, "mgmt_tls"), format!("on (wss://) {}", at(5)));
    assert_eq!(
        row(&text, "mgmt_trust"),
        format!(
            "certificate file {} {}",
            cfg.join("server.pem").display(),
            at(6)
        )
    );
    assert_eq!(
        row(&text, "mgmt_origin"),
        format!("https://admin.example {}", at(7))
    );
    assert_eq!(
        row(&text, "mgmt_secret"),
        format!(
            "******** (from file {}) {}",
            cfg.join("mgmt.secret").display(),
            at(8)
        )
    );
    assert!(!text.contains("rcon-pass"), "{text}");
}

#[test]
fn flags_and_environment_win_and_the_secret_is_never_shown() {
    let home = common::home();
    write_config(home.path(), PROFILE);
    let out = common::run(
        common::rcon_in(home.path())
            .env(
                "RCON_MGMT_SECRET",
                "s3cr3tvalue0123456789abcdefghijklmnopqrs",
            )
            .env("RCON_MGMT_FINGERPRINT", "AB:CD:EF")
            .args([
                "-s",
                "survival",
                "--mgmt",
                "ws://127.0.0.1:9",
                "--print-config",
            ]),
    );
    assert!(out.status.success(), "{}", common::stderr(&out));
    let text = common::stdout(&out);
    assert_eq!(row(&text, "mgmt_url"), "ws://127.0.0.1:9 flag --mgmt");
    assert_eq!(row(&text, "mgmt_tls"), "off (ws://) flag --mgmt");
    assert_eq!(row(&text, "mgmt_trust"), "(no TLS)");
    assert_eq!(row(&text, "mgmt_secret"), "******** env RCON_MGMT_SECRET");
    assert!(!text.contains("s3cr3tvalue"), "{text}");
    assert!(!common::stderr(&out).contains("s3cr3tvalue"));

    let out = common::run(
        common::rcon_in(home.path())
            .env("RCON_MGMT_FINGERPRINT", "AB:CD:EF")
            .args([
                "-s",
                "survival",
                "--mgmt-origin",
                "https://other",
                "--print-config",
            ]),
    );
    let text = common::stdout(&out);
    assert_eq!(
        row(&text, "mgmt_trust"),
        "pinned SHA-256 AB:CD:EF env RCON_MGMT_FINGERPRINT"
    );
    assert_eq!(
        row(&text, "mgmt_origin"),
        "https://other flag --mgmt-origin"
    );
}

#[test]
fn nothing_about_management_when_nothing_is_set() {
    let home = common::home();
    let out = common::run(common::rcon_in(home.path()).args(["-H", "127.0.0.1", "--print-config"]));
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert!(
        !common::stdout(&out).contains("mgmt"),
        "{}",
        common::stdout(&out)
    );
}

/// A trust or Origin given by its environment variable is shown as coming from the variable,
/// and the same given as a flag (either spelling) as the flag.
#[test]
fn flag_and_environment_sources_are_told_apart() {
    let home = common::home();
    let print = |cmd: &mut std::process::Command| {
        let out = common::run(cmd.args(["--mgmt", "wss://127.0.0.1:1", "--print-config"]));
        assert!(out.status.success(), "{}", common::stderr(&out));
        common::stdout(&out)
    };
    let text = print(
        common::rcon_in(home.path())
            .env("RCON_MGMT_CERT", "/certs/a.pem")
            .env("RCON_MGMT_ORIGIN", "https://a.example"),
    );
    assert_eq!(
        row(&text, "mgmt_trust"),
        "certificate file /certs/a.pem env RCON_MGMT_CERT"
    );
    assert_eq!(
        row(&text, "mgmt_origin"),
        "https://a.example env RCON_MGMT_ORIGIN"
    );
    let text = print(
        common::rcon_in(home.path())
            .env("RCON_MGMT_ORIGIN", "https://a.example")
            .args([
                "--mgmt-cert=/certs/b.pem",
                "--mgmt-origin",
                "https://b.example",
            ]),
    );
    assert_eq!(
        row(&text, "mgmt_trust"),
        "certificate file /certs/b.pem flag --mgmt-cert"
    );
    assert_eq!(
        row(&text, "mgmt_origin"),
        "https://b.example flag --mgmt-origin"
    );
}
