//! Console commands over the management protocol (issue 42): against the practice management
//! server playing each mod's published schema (MSMP Enhanced's `msmpenhanced:command/run`,
//! MSMP Console's `console:send`), the same commands as over RCON to the RCON practice server,
//! compared: stdout, stderr, exit status and `--json` records.

use std::path::Path;
use std::process::{Command, Output};

use rconsole::mgmt::practice::{MgmtMod, MgmtPracticeConfig, MgmtPracticeServer};
use rconsole::practice::PracticeServer;
use serde_json::Value;

use crate::common::{self, mgmt, run, stderr, stdout};

/// Each mod alone, then both (MSMP Enhanced's method is the one chosen).
const PLAYS: [&[MgmtMod]; 3] = [
    &[MgmtMod::Enhanced],
    &[MgmtMod::Console],
    &[MgmtMod::Enhanced, MgmtMod::Console],
];

/// The practice management server with `mods`, over TLS.
fn mgmt_server(tls: &mgmt::Tls, mods: &[MgmtMod]) -> MgmtPracticeServer {
    mgmt::start_with(MgmtPracticeConfig {
        mods: mods.to_vec(),
        ..mgmt::config(tls)
    })
}

/// A record without what differs between any two runs (its time, the server's name, how long
/// it took).
fn shape(line: &str) -> Value {
    let mut v: Value = serde_json::from_str(line).unwrap_or_else(|e| panic!("{line}: {e}"));
    let o = v.as_object_mut().expect("a JSON object");
    for key in ["time", "server", "elapsed_ms"] {
        assert!(o.remove(key).is_some(), "{line} has no {key}");
    }
    v
}

/// What a run printed, with `--json` records reduced to their [`shape`].
fn outcome(out: &Output, json: bool) -> (Option<i32>, String, String) {
    let text = stdout(out);
    let text = if json {
        text.lines()
            .map(|l| shape(l).to_string() + "\n")
            .collect::<String>()
    } else {
        text
    };
    (out.status.code(), text, stderr(out))
}

/// Runs `args` over RCON against `rcon` and over the management protocol against `server`, and
/// checks that both printed and exited alike; returns what the RCON run printed.
fn same(
    rcon: &PracticeServer,
    server: &MgmtPracticeServer,
    tls: &mgmt::Tls,
    home: &Path,
    args: &[&str],
    prepare: impl Fn(&mut Command),
) -> (Option<i32>, String, String) {
    let json = args.contains(&"--json");
    let mut over_rcon = common::rcon_for(rcon, home);
    over_rcon.args(args);
    prepare(&mut over_rcon);
    let mut over_mgmt = mgmt::rcon(server, tls, home);
    over_mgmt.args(args);
    prepare(&mut over_mgmt);
    let want = outcome(&run(&mut over_rcon), json);
    let got = outcome(&run(&mut over_mgmt), json);
    assert_eq!(got, want, "{args:?}");
    want
}

/// What one console command changes, the next one sees, as on the RCON practice server and a
/// real one: in two runs, `whitelist add` then `whitelist list` (and `op`, `time`) answer as
/// over RCON (each management server keeps its game across connections).
#[test]
fn a_command_sees_what_an_earlier_one_changed() {
    let tls = mgmt::tls();
    let home = common::home();
    for mods in PLAYS {
        // Both servers start empty each round.
        let rcon = common::strict_vanilla();
        let server = mgmt_server(&tls, mods);
        let none = |_: &mut Command| {};
        let args = [
            "-c",
            "whitelist add Steve",
            "-c",
            "op Alex",
            "-c",
            "time set 1234",
        ];
        same(&rcon, &server, &tls, home.path(), &args, none);
        let (code, out, _) = same(
            &rcon,
            &server,
            &tls,
            home.path(),
            &[
                "-c",
                "whitelist list",
                "-c",
                "op Alex",
                "-c",
                "time query daytime",
            ],
            none,
        );
        assert_eq!(code, Some(0), "{mods:?}");
        assert!(
            out.contains("There are 1 whitelisted player(s): Steve"),
            "{mods:?}: {out}"
        );
        assert!(
            out.contains("Nothing changed. The player already is an operator"),
            "{mods:?}: {out}"
        );
        assert!(out.contains("The time is 1234"), "{mods:?}: {out}");
    }
}

#[test]
fn one_shot_and_c_commands_run_as_over_rcon() {
    let tls = mgmt::tls();
    let home = common::home();
    let rcon = common::strict_vanilla();
    for mods in PLAYS {
        let server = mgmt_server(&tls, mods);
        let none = |_: &mut Command| {};
        let said = same(&rcon, &server, &tls, home.path(), &["say", "hi"], none);
        assert_eq!(said.0, Some(0));
        let (code, out, err) = same(
            &rcon,
            &server,
            &tls,
            home.path(),
            &[
                "-c",
                "list",
                "-c",
                "time set day",
                "-c",
                "frobnicate",
                "-c",
                "lines 3",
            ],
            none,
        );
        assert_eq!(code, Some(1), "{mods:?}: the parse error fails the run");
        assert!(out.contains("Set the time to 1000"), "{out}");
        assert!(
            out.starts_with("There are 0 of a max of 20 players online"),
            "{out}"
        );
        assert!(err.contains("1 later command not sent"), "{err}");
        for args in [
            &["--json", "-c", "list", "-c", "time set day"][..],
            &[
                "--json",
                "--keep-going",
                "-c",
                "seed",
                "-c",
                "nope",
                "-c",
                "lines 2",
            ],
            &["--echo", "-c", "seed", "-c", "lines 2"],
        ] {
            let (_, out, _) = same(&rcon, &server, &tls, home.path(), args, none);
            assert!(!out.is_empty(), "{args:?}");
        }
        // A method's words still call the method.
        let out = run(mgmt::rcon(&server, &tls, home.path()).arg("players"));
        assert_eq!(
            (out.status.code(), stdout(&out)),
            (Some(0), "(none)\n".into())
        );
    }
}

#[test]
fn a_200_line_function_file_and_stdin_run_with_the_mcfunction_rules() {
    let tls = mgmt::tls();
    let home = common::home();
    let rcon = common::strict_vanilla();
    let mut text = String::from("# a function of 200 lines\n\n");
    for i in 1.. {
        match (i % 4, text.lines().count()) {
            (_, 200..) => break,
            (3, ..=197) => text.push_str(&format!("echo one command \\\n  over two lines {i}\n")),
            (0, _) => text.push_str(&format!("echo line {i}\n")),
            (1, _) => text.push_str(&format!("say line {i}\n")),
            _ => text.push_str("list\n"),
        }
    }
    assert_eq!(text.lines().count(), 200);
    let file = home.path().join("restart.mcfunction");
    std::fs::write(&file, &text).unwrap();
    let file = file.to_str().unwrap().to_string();
    for mods in PLAYS {
        let server = mgmt_server(&tls, mods);
        let (code, out, _) = same(&rcon, &server, &tls, home.path(), &["-f", &file], |_| {});
        assert_eq!(code, Some(0), "{mods:?}");
        assert!(out.contains("one command over two lines 3\n"), "{out}");
        same(
            &rcon,
            &server,
            &tls,
            home.path(),
            &["--json", "-f", &file],
            |_| {},
        );
        let stdin = |c: &mut Command| {
            c.stdin(std::fs::File::open(&file).unwrap());
        };
        same(&rcon, &server, &tls, home.path(), &["--json"], stdin);
    }
}

#[test]
fn a_server_without_a_command_method_says_what_it_lacks() {
    let tls = mgmt::tls();
    let home = common::home();
    let server = mgmt::server(&tls);
    let out = run(mgmt::rcon(&server, &tls, home.path()).args(["say", "hi"]));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("no management method matches 'say hi'")
            && err.contains("neither msmpenhanced:command/run nor console:send"),
        "{err}"
    );
    let file = home.path().join("f.mcfunction");
    std::fs::write(&file, "say hi\n").unwrap();
    let out = run(mgmt::rcon(&server, &tls, home.path()).arg("-f").arg(&file));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).starts_with("rcon: error: -f with --mgmt: the management server offers no method that runs a console command"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.system_messages(), Vec::<String>::new());
}

#[test]
fn a_countdown_announces_through_say_as_over_rcon() {
    let tls = mgmt::tls();
    let home = common::home();
    for mods in PLAYS {
        let rcon = common::strict_vanilla();
        let server = mgmt_server(&tls, mods);
        let args = [
            "--json",
            "--countdown",
            "2m",
            "--at",
            "1m,10s",
            "--announce",
            "say Restart in {left}",
            "--then",
            "seed",
            "list",
        ];
        let (code, out, err) = same(&rcon, &server, &tls, home.path(), &args, |c| {
            c.env("RCON_CLOCK_SPEED", "120");
        });
        assert_eq!((code, err.as_str()), (Some(0), ""), "{mods:?}");
        assert_eq!(out.lines().count(), 4, "{out}");
        let want = [
            "say Restart in 1 minute",
            "say Restart in 10 seconds",
            "seed",
            "list",
        ];
        assert_eq!(server.commands(), want, "{mods:?}");
        assert!(rcon.commands().ends_with(&want.map(String::from)));
    }
}

/// A config with profiles `a` and `b`, each with an RCON port and a management URL.
fn two_profiles(
    home: &Path,
    tls: &mgmt::Tls,
    servers: [(&PracticeServer, &MgmtPracticeServer); 2],
) {
    let mut text = String::new();
    for (name, (rcon, server)) in ["a", "b"].iter().zip(servers) {
        text.push_str(&format!(
            "[servers.{name}]\nhost = \"127.0.0.1\"\nport = {}\nmgmt_url = \"{}\"\nmgmt_cert = {}\n\n",
            rcon.port(),
            mgmt::url(server),
            toml::Value::String(tls.cert.display().to_string())
        ));
    }
    crate::consoles_fanout::write_config(home, &text);
}

#[test]
fn commands_on_several_servers_run_as_rcon_fan_out_runs_them() {
    let tls = mgmt::tls();
    let home = common::home();
    let (ra, rb) = (common::strict_vanilla(), common::strict_vanilla());
    let (ma, mb) = (
        mgmt_server(&tls, &[MgmtMod::Enhanced]),
        mgmt_server(&tls, &[MgmtMod::Console]),
    );
    two_profiles(home.path(), &tls, [(&ra, &ma), (&rb, &mb)]);
    let sorted = |text: &str| {
        let mut lines: Vec<String> = text.lines().map(str::to_string).collect();
        lines.sort();
        lines
    };
    for args in [
        &["-c", "list", "-c", "say hi", "-c", "lines 2"][..],
        &["--json", "-c", "seed", "-c", "time set day"],
    ] {
        let json = args.contains(&"--json");
        let mut over_rcon = common::rcon_in(home.path());
        over_rcon
            .env("RCON_PASSWORD", common::PASSWORD)
            .args(["-s", "a,b"])
            .args(args);
        let mut over_mgmt = common::rcon_in(home.path());
        over_mgmt
            .env("RCON_MGMT_SECRET", mgmt::SECRET)
            .args(["--mgmt", "-s", "a,b"])
            .args(args);
        let (want, got) = (run(&mut over_rcon), run(&mut over_mgmt));
        assert_eq!(
            got.status.code(),
            want.status.code(),
            "{args:?}: {}",
            stderr(&got)
        );
        let (want, got) = (outcome(&want, json), outcome(&got, json));
        // The servers' lines interleave as their answers come.
        assert_eq!(sorted(&got.1), sorted(&want.1), "{args:?}");
        // Each failure is worded alike (RCON fan-out adds a summary of its own).
        let errors = |text: &str| -> Vec<String> {
            sorted(text)
                .into_iter()
                .filter(|l| l.starts_with("rcon: error: "))
                .collect()
        };
        assert_eq!(errors(&got.2), errors(&want.2), "{args:?}");
    }
    assert_eq!(
        ma.commands(),
        ["list", "say hi", "lines 2", "seed", "time set day"]
    );
}

#[test]
fn the_console_completes_from_the_server_when_it_offers_completion() {
    use common::term::Term;
    let tls = mgmt::tls();
    let home = common::home();
    // MSMP Enhanced completes from the server's own commands (`echoln` is none of vanilla's),
    // and a command's first argument (`time set`).
    let server = mgmt_server(&tls, &[MgmtMod::Enhanced]);
    let args = mgmt::pty_args(&server, &tls, home.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut term = Term::start_with(home.path(), &args);
    let p = format!("{}/> ", mgmt::url(&server));
    term.wait_for(&p);
    term.send("echol\t");
    term.wait_for_line(&p, "echoln ");
    term.send("hi\r");
    term.wait_for("\nhi\n");
    term.send("time s\t");
    term.wait_for_line(&p, "time set ");
    term.send("\x15");
    term.wait_for_line(&p, "");
    // A new connection (the console's :reconnect) runs commands and completes as the first.
    term.send(":reconnect\r");
    term.wait_for("reconnected to");
    term.send("asc\t");
    term.wait_for_line(&p, "ascii ");
    term.send("3\r");
    term.wait_for("\nabc\n");
    term.send("\x04");
    assert_eq!(term.exit_code(), 0);
    assert_eq!(server.commands(), ["echoln hi", "ascii 3"]);
    assert!(!term.raw().contains(mgmt::SECRET));

    // MSMP Console offers no completion: the console's own list (`tim` to `time`; nothing
    // knows `echol` in a fresh history).
    let home = common::home();
    let server = mgmt_server(&tls, &[MgmtMod::Console]);
    let args = mgmt::pty_args(&server, &tls, home.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut term = Term::start_with(home.path(), &args);
    let p = format!("{}/> ", mgmt::url(&server));
    term.wait_for(&p);
    term.send("tim\t");
    term.wait_for_line(&p, "time ");
    term.send("\x15echol\t\r");
    term.wait_for("Unknown or incomplete command");
    term.send("\x04");
    assert_eq!(term.exit_code(), 0);
    assert_eq!(server.commands(), ["echol"]);
}

#[test]
fn follow_prints_console_log_lines_beside_the_notifications() {
    use crate::follow::{Follower, after_time};
    let tls = mgmt::tls();
    let home = common::home();
    let server = mgmt_server(&tls, &[MgmtMod::Console]);
    let mut f = Follower::spawn(mgmt::rcon(&server, &tls, home.path()).arg("--follow"));
    f.wait_err("following");
    server.log("DEBUG", "Preparing spawn area");
    server.join("Steve");
    assert_eq!(after_time(&f.line()), "log DEBUG Preparing spawn area");
    assert_eq!(after_time(&f.line()), "joined Steve");
    // A command run by another client logs what it said.
    let out = run(mgmt::rcon(&server, &tls, home.path()).args(["say", "hello"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(after_time(&f.line()), "log INFO [Server] hello");
    let _ = f.child.kill();
    let _ = f.child.wait();

    // --log-level: lines below it are not shown; --json carries the line's fields.
    let mut f = Follower::spawn(mgmt::rcon(&server, &tls, home.path()).args([
        "--follow",
        "--json",
        "--log-level",
        "warn",
    ]));
    f.wait_err("following");
    server.log("INFO", "quiet");
    server.log("ERROR", "Encountered an unexpected exception");
    let v: Value = serde_json::from_str(&f.line()).unwrap();
    assert_eq!(v["event"], "log", "{v}");
    assert_eq!(
        v["response"], "ERROR Encountered an unexpected exception",
        "{v}"
    );
    assert_eq!(v["params"][0]["level"], "ERROR", "{v}");
    assert_eq!(
        v["params"][0]["timestamp"],
        rconsole::mgmt::practice::LOG_TIME
    );
    let _ = f.child.kill();
    let _ = f.child.wait();
    // Over RCON no log lines come: the flag is refused, not dropped.
    let out = run(common::rcon_at(1, home.path()).args(["--follow", "--log-level", "warn"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("use it with --mgmt"),
        "{}",
        stderr(&out)
    );
}

/// The same commands, console completion aside, through a Unix domain socket (MSMP Enhanced
/// can listen on one instead of a TCP port).
#[cfg(unix)]
#[test]
fn commands_and_the_log_through_a_unix_socket() {
    use crate::follow::{Follower, after_time};
    let home = common::home();
    let rcon = common::strict_vanilla();
    let socket = home.path().join("msmp.sock");
    let server = mgmt::start_with(MgmtPracticeConfig {
        secret: mgmt::SECRET.into(),
        mods: MgmtMod::ALL.to_vec(),
        unix_socket: Some(socket.clone()),
        ..MgmtPracticeConfig::default()
    });
    let url = format!("unix:{}", socket.display());
    assert_eq!(server.url(), url);
    let over_socket = || {
        let mut c = common::rcon_in(home.path());
        c.env("RCON_MGMT_SECRET", mgmt::SECRET)
            .args(["--mgmt", &url]);
        c
    };
    let file = home.path().join("f.mcfunction");
    std::fs::write(&file, "say a\nlist\nseed\n").unwrap();
    let file = file.to_str().unwrap();
    for args in [
        &["say", "hi"][..],
        &["--json", "-c", "list", "-c", "time set day"],
        &["-f", file],
    ] {
        let want = outcome(
            &run(common::rcon_for(&rcon, home.path()).args(args)),
            args[0] == "--json",
        );
        let got = outcome(&run(over_socket().args(args)), args[0] == "--json");
        assert_eq!(got, want, "{args:?}");
    }
    // A method too; no clear-text warning for a local socket.
    let out = run(over_socket().arg("players"));
    assert_eq!(
        (stdout(&out), stderr(&out)),
        ("(none)\n".into(), String::new())
    );
    let mut f = Follower::spawn(over_socket().arg("--follow"));
    f.wait_err("following");
    server.log("WARN", "Can't keep up!");
    assert_eq!(after_time(&f.line()), "log WARN Can't keep up!");
    let _ = f.child.kill();
    let _ = f.child.wait();
    // A wrong secret is refused over the socket as over TCP.
    let out = run(over_socket().env("RCON_MGMT_SECRET", "wrong"));
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    drop(server);
    assert!(
        !socket.exists(),
        "the socket file is removed when the server stops"
    );
    let out = run(common::rcon_in(home.path())
        .env("RCON_MGMT_SECRET", mgmt::SECRET)
        .args(["--mgmt", &url, "list"]));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(&format!("cannot connect to {url}")),
        "{}",
        stderr(&out)
    );
}

#[cfg(unix)]
#[test]
fn the_practice_management_server_plays_the_mods_from_the_command_line() {
    use std::io::BufRead;
    let home = common::home();
    let out = run(common::rcon_in(home.path()).args([
        "--practice-mgmt",
        "127.0.0.1:0",
        "--practice-mods",
        "enhanced,bogus",
    ]));
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("unknown --practice-mods 'bogus' (one of: enhanced, console)"),
        "{}",
        stderr(&out)
    );
    let socket = home.path().join("practice.sock");
    let at = format!("unix:{}", socket.display());
    let mut server = common::rcon_in(home.path())
        .args([
            "--practice-mgmt",
            &at,
            "--practice-mods",
            "enhanced,console",
        ])
        .args(["--practice-password", "s3cret"])
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut url = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    assert_eq!(url.trim(), at);
    let rcon = || {
        let mut c = common::rcon_in(home.path());
        c.args(["--mgmt", &at]).env("RCON_MGMT_SECRET", "s3cret");
        c
    };
    let out = run(rcon().args(["methods"]));
    let listed = stdout(&out);
    for m in [
        "msmpenhanced:command/run <command>",
        "msmpenhanced:command/suggest <partialCommand>",
        "console:send <send>",
    ] {
        assert!(listed.contains(m), "{listed}");
    }
    let out = run(rcon().args(["lines", "2"]));
    assert_eq!(
        stdout(&out),
        "line 1 of 2\nline 2 of 2\n",
        "{}",
        stderr(&out)
    );
    let out = run(rcon().args(["stop"]));
    assert_eq!(stdout(&out), "Stopping the server\n", "{}", stderr(&out));
    let out = common::wait_with_timeout(server, std::time::Duration::from_secs(30));
    assert!(out.status.success());
    assert!(!socket.exists());
}

#[test]
fn api_shows_the_version_and_what_the_server_offers_and_any_notification_is_followed() {
    use crate::follow::{Follower, after_time};
    use rconsole::mgmt::practice::MgmtVersion;
    let tls = mgmt::tls();
    let home = common::home();
    let old = mgmt::server_of(&tls, MgmtVersion::V1_21_9);
    let out = run(mgmt::rcon(&old, &tls, home.path()).args(["--json", "api"]));
    let v: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert_eq!(v["api_version"], "1.0.0", "{v}");
    assert_eq!(v["commands"], "(none: words name methods only)", "{v}");
    assert_eq!(v["completion"], "(none)", "{v}");

    let server = mgmt_server(&tls, &MgmtMod::ALL);
    let out = run(mgmt::rcon(&server, &tls, home.path()).arg("api"));
    let text = stdout(&out);
    assert!(text.starts_with("api_version   2.0.0 "), "{text}");
    assert!(
        text.contains("\ncommands      msmpenhanced:command/run "),
        "{text}"
    );
    assert!(
        text.contains("\nconsole_log   console:notification/log/event "),
        "{text}"
    );
    // A mod's method by its full name, its parameter from the words as for any method.
    let out = run(mgmt::rcon(&server, &tls, home.path()).args(["console:send", "seed"]));
    assert_eq!(
        stdout(&out),
        "command: seed\nresult: Seed: [-4172144997902289642]\nsuccess: true\n"
    );
    // A notification this client knows nothing of is followed under its name.
    let mut f = Follower::spawn(mgmt::rcon(&server, &tls, home.path()).arg("--follow"));
    f.wait_err("following");
    server.notify_as(
        "othermod:notification/player/fished",
        Some(serde_json::json!({"player": {"name": "Steve"}, "item": "cod"})),
    );
    assert_eq!(
        after_time(&f.line()),
        "othermod:notification/player/fished Steve"
    );
    let _ = f.child.kill();
    let _ = f.child.wait();
}

#[test]
fn a_profile_with_mgmt_is_reached_over_the_management_protocol_without_the_flag() {
    let tls = mgmt::tls();
    let home = common::home();
    let server = mgmt_server(&tls, &[MgmtMod::Console]);
    let secret = home.path().join("secret");
    std::fs::write(&secret, format!("{}\n", mgmt::SECRET)).unwrap();
    let path = |p: &Path| toml::Value::String(p.display().to_string());
    crate::consoles_fanout::write_config(
        home.path(),
        &format!(
            "[servers.survival]\nmgmt = \"{}\"\nmgmt_cert = {}\nmgmt_secret_file = {}\n",
            mgmt::url(&server),
            path(&tls.cert),
            path(&secret)
        ),
    );
    let rcon = || {
        let mut c = common::rcon_in(home.path());
        c.args(["-s", "survival"]);
        c
    };
    let out = run(rcon().args(["-c", "seed", "-c", "say hi"]));
    assert_eq!(
        (out.status.code(), stdout(&out), stderr(&out)),
        (
            Some(0),
            "Seed: [-4172144997902289642]\n\n".into(),
            String::new()
        )
    );
    let out = run(rcon().arg("players"));
    assert_eq!(stdout(&out), "(none)\n", "{}", stderr(&out));
    assert_eq!(server.commands(), ["seed", "say hi"]);
    let out = run(rcon().arg("--print-config"));
    let text = stdout(&out);
    let row = text
        .lines()
        .find(|l| l.starts_with("mgmt_url "))
        .unwrap_or("");
    assert!(row.contains(&mgmt::url(&server)), "{text}");
}

#[test]
fn the_console_notices_a_restarted_server_and_connects_again_before_the_next_command() {
    use common::term::Term;
    let tls = mgmt::tls();
    let home = common::home();
    let config = || MgmtPracticeConfig {
        mods: vec![MgmtMod::Console],
        ..mgmt::config(&tls)
    };
    let server = mgmt::start_with(config());
    let addr = server.addr();
    let args = mgmt::pty_args(&server, &tls, home.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut term = Term::start_with(home.path(), &args);
    let p = format!("{}/> ", mgmt::url(&server));
    term.wait_for(&p);
    term.enter(&p, "seed");
    term.wait_for("Seed: [");
    server.shutdown();
    // Held while down, let go only as the server binds it again.
    let down = common::hold_port(addr);
    drop(down);
    let server = mgmt::start_with(MgmtPracticeConfig {
        bind: addr,
        ..config()
    });
    term.send("lines 2\r");
    term.wait_for("the server closed the connection; reconnecting");
    term.wait_for("line 2 of 2");
    term.send("\x04");
    assert_eq!(term.exit_code(), 0);
    assert!(!term.raw().contains("rcon: error"), "{}", term.raw());
    assert_eq!(server.commands(), ["lines 2"]);
}
