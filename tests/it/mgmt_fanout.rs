//! `--mgmt` over several servers: the method runs on each (profiles with their own mgmt_url),
//! output labelled `[NAME] ` per line as RCON fan-out labels it, `server` in JSON, failures as
//! `rcon: error: [NAME] ...`, the worst exit status; what does not work on several is refused.

use serde_json::Value;

use crate::common::{self, mgmt};
use crate::consoles_fanout::write_config;

fn profile(name: &str, url: &str, cert: &std::path::Path) -> String {
    format!(
        "[servers.{name}]\nhost = \"127.0.0.1\"\nmgmt_url = \"{url}\"\nmgmt_cert = {}\n\n",
        // A TOML string: a Windows path's backslashes are escapes in a basic string.
        toml::Value::String(cert.display().to_string())
    )
}

fn sorted(text: &str) -> Vec<String> {
    let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
    lines.sort();
    lines
}

#[test]
fn a_method_on_several_servers_labelled_by_server() {
    let tls = mgmt::tls();
    let (a, b) = (mgmt::server(&tls), mgmt::server(&tls));
    a.join("Steve");
    b.join("Alex");
    b.join("Notch");
    let home = common::home();
    write_config(
        home.path(),
        &format!(
            "{}{}[servers.both]\nservers = [\"a\", \"b\"]\n",
            profile("a", &mgmt::url(&a), &tls.cert),
            profile("b", &mgmt::url(&b), &tls.cert)
        ),
    );
    let rcon = || {
        let mut c = common::rcon_in(home.path());
        c.env("RCON_MGMT_SECRET", mgmt::SECRET);
        c
    };
    let out = common::run(rcon().args(["--mgmt", "-s", "a,b", "-c", "players"]));
    assert!(out.status.success(), "{}", common::stderr(&out));
    assert_eq!(
        sorted(&common::stdout(&out)),
        ["[a] Steve", "[b] Alex", "[b] Notch"]
    );
    // A group, JSON with the server's name.
    let out = common::run(rcon().args(["-s", "both", "--json", "--mgmt", "players"]));
    assert!(out.status.success(), "{}", common::stderr(&out));
    let mut got: Vec<(String, usize)> = common::stdout(&out)
        .lines()
        .map(|l| {
            let v: Value = serde_json::from_str(l).unwrap();
            assert_eq!(v["ok"], true, "{v}");
            assert_eq!(v["method"], "minecraft:players", "{v}");
            (
                v["server"].as_str().unwrap().to_string(),
                v["result"].as_array().unwrap().len(),
            )
        })
        .collect();
    got.sort();
    assert_eq!(got, [("a".to_string(), 1), ("b".to_string(), 2)]);
    assert!(!common::stderr(&out).contains(mgmt::SECRET));
}

#[test]
fn a_dead_server_fails_alone_with_the_worst_exit_status() {
    let tls = mgmt::tls();
    let a = mgmt::server(&tls);
    a.join("Steve");
    let home = common::home();
    write_config(
        home.path(),
        &format!(
            "{}{}",
            profile("a", &mgmt::url(&a), &tls.cert),
            profile("dead", "wss://127.0.0.1:1", &tls.cert)
        ),
    );
    let out = common::run(
        common::rcon_in(home.path())
            .env("RCON_MGMT_SECRET", mgmt::SECRET)
            .args(["--mgmt", "-s", "a,dead", "-c", "players"]),
    );
    assert_eq!(out.status.code(), Some(4), "{}", common::stderr(&out));
    assert_eq!(common::stdout(&out), "[a] Steve\n");
    let err = common::stderr(&out);
    assert!(err.starts_with("rcon: error: [dead] "), "{err}");
    assert!(err.contains("cannot connect"), "{err}");
}

#[test]
fn what_needs_one_server_is_refused_on_several_and_a_dead_follow_fails_at_once() {
    let home = common::home();
    let tls = mgmt::tls();
    write_config(
        home.path(),
        &format!(
            "{}{}",
            profile("a", "wss://127.0.0.1:1", &tls.cert),
            profile("b", "wss://127.0.0.1:2", &tls.cert)
        ),
    );
    for (args, says) in [
        (
            &[
                "--mgmt",
                "-s",
                "a,b",
                "--countdown",
                "1s",
                "--then",
                "server stop",
            ][..],
            "a timed operation with --mgmt works on one server",
        ),
        (
            &["--mgmt", "-s", "a,b", "--follow"][..],
            "a: cannot connect",
        ),
        (
            &["--mgmt", "wss://127.0.0.1:3", "-s", "a,b", "players"][..],
            "--mgmt URL names one server",
        ),
        (&["--mgmt", "-s", "a,b"][..], "needs the methods to call"),
    ] {
        let out = common::run(
            common::rcon_in(home.path())
                .env("RCON_MGMT_SECRET", mgmt::SECRET)
                .args(args),
        );
        // A follow connects to every server first: a dead one fails at once (exit 4).
        let want = if says.contains("cannot connect") {
            4
        } else {
            2
        };
        assert_eq!(
            out.status.code(),
            Some(want),
            "{args:?}: {}",
            common::stderr(&out)
        );
        assert!(
            common::stderr(&out).contains(says),
            "{args:?}: {}",
            common::stderr(&out)
        );
    }
}

#[test]
fn notifications_of_several_servers_are_followed_with_their_names() {
    let tls = mgmt::tls();
    let (a, b) = (mgmt::server(&tls), mgmt::server(&tls));
    let home = common::home();
    write_config(
        home.path(),
        &format!(
            "{}{}",
            profile("a", &mgmt::url(&a), &tls.cert),
            profile("b", &mgmt::url(&b), &tls.cert)
        ),
    );
    let mut f = crate::follow::Follower::spawn(
        common::rcon_in(home.path())
            .env("RCON_MGMT_SECRET", mgmt::SECRET)
            .args(["--mgmt", "-s", "a,b", "--follow"]),
    );
    // Each server's thread says it follows, in either order.
    let mut said = [f.wait_err("following "), f.wait_err("following ")];
    said.sort();
    assert!(
        said[0].contains("following a ") && said[1].contains("following b "),
        "{said:?}"
    );
    b.join("Alex");
    let line = f.line();
    let rest = line
        .strip_prefix("[b] ")
        .unwrap_or_else(|| panic!("{line:?}"));
    assert_eq!(crate::follow::after_time(rest), "joined Alex");
    a.join("Steve");
    let line = f.line();
    let rest = line
        .strip_prefix("[a] ")
        .unwrap_or_else(|| panic!("{line:?}"));
    assert_eq!(crate::follow::after_time(rest), "joined Steve");
}
