//! `rcon --mgmt` against the practice management server over TLS with a certificate generated
//! for the test (verification on, the certificate trusted by file or by fingerprint), and the
//! practice server cross-checked by a third-party client (Python `websockets`,
//! tests/peers-mgmt).

use crate::common;
use crate::common::mgmt;

use std::io::Write;
use std::process::{Command, Stdio};

use rconsole::mgmt::practice::{MgmtPracticeConfig, MgmtPracticeServer, MgmtVersion};
use serde_json::{Value, json};

use common::{run, stderr, stdout};

fn ok(cmd: &mut Command) -> String {
    let out = run(cmd);
    assert!(
        out.status.success(),
        "status {:?}, stderr: {}",
        out.status,
        stderr(&out)
    );
    assert!(!stderr(&out).contains(mgmt::SECRET));
    stdout(&out)
}

#[test]
fn methods_over_tls_with_the_certificate_trusted_by_file() {
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let home = common::home();
    let rcon = || mgmt::rcon(&server, &tls, home.path());

    assert_eq!(ok(rcon().arg("players")), "(none)\n");
    server.join("Notch");
    assert_eq!(ok(rcon().arg("players")), "Notch\n");
    assert_eq!(
        ok(rcon().args(["allowlist", "add", "Steve", "Alex"])),
        "Steve\nAlex\n"
    );
    assert_eq!(ok(rcon().args(["allowlist", "remove", "Steve"])), "Alex\n");
    assert_eq!(ok(rcon().arg("allowlist")), "Alex\n");
    assert_eq!(ok(rcon().args(["server", "save"])), "true\n");
    assert_eq!(
        ok(rcon().args(["bans", "add", "Griefer"])),
        "Griefer (reason: Banned by an operator., source: Server)\n"
    );
    assert_eq!(
        ok(rcon().args(["ip-bans", "add", "10.0.0.9"])),
        "ip: 10.0.0.9, reason: Banned by an operator., source: Server\n"
    );
    assert_eq!(
        ok(rcon().args(["serversettings", "difficulty", "set", "hard"])),
        "hard\n"
    );
    assert_eq!(ok(rcon().args(["serversettings", "difficulty"])), "hard\n");
    assert_eq!(
        ok(rcon().args(["gamerules", "update", "minecraft:keep_inventory", "true"])),
        "minecraft:keep_inventory = true\n"
    );
    assert_eq!(
        ok(rcon().args(["server", "system_message", "Hello", "there"])),
        "true\n"
    );
    assert_eq!(server.system_messages(), ["Hello there"]);
    assert_eq!(server.system_message_overlays(), [false]);
    let status = ok(rcon().args(["server", "status"]));
    assert!(status.contains("started: true"), "{status}");
    assert!(status.contains("players: Notch"), "{status}");

    // Several -c lines and the trailing words run in one connection, in order.
    assert_eq!(
        ok(rcon().args([
            "-c",
            "operators add Alex",
            "-c",
            "operators clear",
            "operators"
        ])),
        "Alex (bypassesPlayerLimit: false, permissionLevel: 4)\n(none)\n(none)\n"
    );

    // --json: the one record every mode prints (issue 20), with the method, its params and
    // the result added; it used to be {method, params, result, ok} alone.
    let line = ok(rcon().args(["--json", "allowlist", "add", "Zed"]));
    let v: Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(
        common::json_keys(&v),
        [
            "command",
            "elapsed_ms",
            "error",
            "event",
            "method",
            "ok",
            "params",
            "reason",
            "response",
            "result",
            "server",
            "time"
        ],
        "{v}"
    );
    assert_eq!(v["event"], "command");
    // One server's records name it too (the profile, else the URL), as RCON's do.
    assert_eq!(v["server"], format!("{}/", mgmt::url(&server)), "{v}");
    assert_eq!(v["command"], "allowlist add Zed");
    assert_eq!(v["response"], "Alex\nZed");
    assert!(v["elapsed_ms"].as_f64().unwrap() > 0.0, "{v}");
    assert_eq!(v["method"], "minecraft:allowlist/add");
    assert_eq!(v["params"], json!([[{"name": "Zed"}]]));
    assert_eq!(v["ok"], true);
    let names: Vec<&str> = v["result"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| p["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, ["Alex", "Zed"]);

    // `methods` lists what rpc.discover offers, notifications left out.
    let methods = ok(rcon().arg("methods"));
    assert!(methods.contains("allowlist add <add>"), "{methods}");
    assert!(methods.contains("server save"), "{methods}");
    assert!(!methods.contains("notification"), "{methods}");
}

#[test]
fn method_lines_from_stdin() {
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let home = common::home();
    let mut child = mgmt::rcon(&server, &tls, home.path())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    child
        .stdin
        .take()
        .unwrap()
        .write_all(b"# a comment\nallowlist add Steve\n\nbogus thing\nallowlist\n")
        .unwrap();
    let out = common::wait_with_timeout(child, std::time::Duration::from_secs(60));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Steve\nSteve\n");
    assert!(
        stderr(&out).contains("stdin:4: no management method matches 'bogus thing'"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn an_untrusted_certificate_is_refused() {
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let home = common::home();
    // No --mgmt-cert: the system's trust store (here a file of another certificate, so the
    // test does not depend on the machine's) does not know a self-signed certificate.
    let other = mgmt::tls();
    let out = run(common::rcon_in(home.path())
        .args(["--mgmt", &mgmt::url(&server), "players"])
        .env("SSL_CERT_FILE", &other.cert)
        .env("RCON_MGMT_SECRET", mgmt::SECRET));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.starts_with("rcon: error: TLS with wss://127.0.0.1:"),
        "{err}"
    );
    assert!(err.contains("--mgmt-cert"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(!err.contains(mgmt::SECRET));
    // Another certificate than the server's is refused too.
    let out = run(common::rcon_in(home.path())
        .args(["--mgmt", &mgmt::url(&server), "--mgmt-cert"])
        .arg(&other.cert)
        .arg("players")
        .env("RCON_MGMT_SECRET", mgmt::SECRET));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    // The host name is checked: the certificate names 127.0.0.1 and localhost, so a server
    // with it at 127.0.0.2 is refused though the certificate is the one given. (macOS has no
    // 127.0.0.2. The server listens there itself: dialling 127.0.0.2 at the other server's
    // port reached whatever another test had listening there.)
    if !cfg!(target_os = "macos") {
        let elsewhere = mgmt::start("127.0.0.2:0".parse().unwrap(), &tls, None);
        let out = run(common::rcon_in(home.path())
            .args([
                "--mgmt",
                &format!("wss://127.0.0.2:{}", elsewhere.port()),
                "--mgmt-cert",
            ])
            .arg(&tls.cert)
            .arg("players")
            .env("RCON_MGMT_SECRET", mgmt::SECRET));
        assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(
            err.starts_with("rcon: error: TLS with wss://127.0.0.2:")
                && err.contains("not valid for name \"127.0.0.2\""),
            "{err}"
        );
    }
}

#[test]
fn the_system_trust_store_is_the_default() {
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let home = common::home();
    // A store that holds the server's certificate trusts it without --mgmt-cert.
    let out = run(common::rcon_in(home.path())
        .args(["--mgmt", &mgmt::url(&server), "players"])
        .env("SSL_CERT_FILE", &tls.cert)
        .env("RCON_MGMT_SECRET", mgmt::SECRET));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "(none)\n");
}

#[test]
fn a_pinned_fingerprint_is_trusted_and_only_that_one() {
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let home = common::home();
    let pinned = |fp: &str| {
        run(common::rcon_in(home.path())
            .args([
                "--mgmt",
                &mgmt::url(&server),
                "--mgmt-fingerprint",
                fp,
                "players",
            ])
            .env("RCON_MGMT_SECRET", mgmt::SECRET))
    };
    let out = pinned(&tls.fingerprint);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "(none)\n");
    let out = pinned(&mgmt::tls().fingerprint);
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("not the pinned one"),
        "{}",
        stderr(&out)
    );
    let out = pinned("12:34");
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
}

#[test]
fn a_wrong_secret_is_a_login_failure_and_the_origin_never_is() {
    let tls = mgmt::tls();
    let origin = "https://panel.example";
    let server = mgmt::start(
        "127.0.0.1:0".parse().unwrap(),
        &tls,
        Some(vec![origin.to_string()]),
    );
    let home = common::home();
    let out = run(mgmt::rcon(&server, &tls, home.path())
        .env("RCON_MGMT_SECRET", "not-the-secret")
        .arg("players"));
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    let err = stderr(&out);
    // The server's own reason, and what to check; no word about an Origin, which vanilla
    // never holds against a client that sends its secret as a Bearer token.
    assert!(err.contains("HTTP 401, Invalid API key"), "{err}");
    assert!(err.contains("check the secret"), "{err}");
    assert!(!err.to_lowercase().contains("origin"), "{err}");
    assert!(!err.contains("not-the-secret"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    // An Origin the server does not list is no reason to refuse rcon, nor is the one it lists.
    for o in ["https://evil.example", origin] {
        assert_eq!(
            ok(mgmt::rcon(&server, &tls, home.path()).args(["--mgmt-origin", o, "players"])),
            "(none)\n"
        );
    }
}

#[test]
fn the_practice_server_checks_the_origin_of_browsers_only_as_vanilla_does() {
    let Some(_) = mgmt::peer_python() else { return };
    let tls = mgmt::tls();
    let allowed = "https://panel.example";
    let status = |version: MgmtVersion, browser: bool, origin: Option<&str>| {
        let server = mgmt::start_with(MgmtPracticeConfig {
            version,
            allowed_origins: vec![allowed.to_string()],
            ..mgmt::config(&tls)
        });
        let mut env = vec![];
        if browser {
            env.push(("MGMT_BROWSER", "1"));
        }
        if let Some(o) = origin {
            env.push(("MGMT_ORIGIN", o));
        }
        let answers = peer_calls_with(
            &mgmt::url(&server),
            &tls.cert,
            &env,
            &[json!({"method": "minecraft:players"})],
        );
        match answers.first() {
            Some(a) if a.get("handshake_status").is_some() => a["handshake_status"].clone(),
            Some(a) => json!(if a.get("result").is_some() {
                "in"
            } else {
                "error"
            }),
            None => json!("nothing"),
        }
    };
    use MgmtVersion::{V1_21_9, V1_21_11};
    // A Bearer client: never refused for its Origin.
    assert_eq!(status(V1_21_11, false, Some("https://evil.example")), "in");
    assert_eq!(status(V1_21_9, false, Some("https://evil.example")), "in");
    // A browser (the secret as the minecraft-v1 subprotocol, 1.21.11 and later): its Origin
    // must be listed.
    assert_eq!(status(V1_21_11, true, Some(allowed)), "in");
    assert_eq!(status(V1_21_11, true, Some("https://evil.example")), 401);
    assert_eq!(status(V1_21_11, true, None), 401);
    // 1.21.9 and 1.21.10 know only the Bearer header.
    assert_eq!(status(V1_21_9, true, Some(allowed)), 401);
}

#[test]
fn bad_words_are_usage_errors_and_server_errors_fail_the_command() {
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let home = common::home();
    let out = run(mgmt::rcon(&server, &tls, home.path()).args(["allowlist", "frobnicate"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("did you mean: allowlist, allowlist add"),
        "{}",
        stderr(&out)
    );
    // A typo in the first word gets the suggestion too (issue 41), and nothing is called.
    let out = run(mgmt::rcon(&server, &tls, home.path()).args(["allowlst", "add", "Bob"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "rcon: error: no management method matches 'allowlst add Bob' (did you mean: allowlist \
add?); as a console command: the management server offers no method that runs a console \
command (neither msmpenhanced:command/run nor console:send is in its rpc.discover; install MSMP \
Enhanced or MSMP Console on it)\n"
    );
    // The server's refusal comes with its `data`, which says what exactly is wrong.
    let out = run(mgmt::rcon(&server, &tls, home.path()).args([
        "gamerules",
        "update",
        "minecraft:no_such_rule",
        "1",
    ]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "rcon: error: minecraft:gamerules/update: the server answered error -32602: Invalid params: \
Unknown registry key in ResourceKey[minecraft:root / minecraft:game_rule]: minecraft:no_such_rule\n"
    );
    let out = run(mgmt::rcon(&server, &tls, home.path()).args([
        "--json",
        "server",
        "system_message",
        r#"{"message":{"literal":"x"}}"#,
    ]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let want = r#"No key overlay in MapLike[{"message":{"literal":"x"}}]"#;
    assert!(stderr(&out).contains(want), "{}", stderr(&out));
    let line: Value = serde_json::from_str(stdout(&out).trim()).unwrap();
    assert!(line["error"].as_str().unwrap().contains(want), "{line}");
    assert_eq!(line["ok"], false, "{line}");
    assert_eq!(line["reason"], "command", "{line}");
    assert!(line.get("result").is_none(), "{line}");
    assert!(server.system_messages().is_empty());
    for (args, code, want) in [
        (
            &["--mgmt", "http://127.0.0.1:1", "players"][..],
            2,
            "must start with wss://",
        ),
        (&["--mgmt", "players"], 2, "--mgmt needs a URL"),
        (
            &["--mgmt", "wss://127.0.0.1:1", "players"],
            4,
            "cannot connect",
        ),
    ] {
        let out = run(common::rcon_in(home.path())
            .args(args)
            .env("RCON_MGMT_SECRET", mgmt::SECRET));
        assert_eq!(out.status.code(), Some(code), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(want), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn every_call_is_checked_before_the_first_is_sent_and_a_stop_says_what_was_not() {
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let home = common::home();
    // A mistyped second call: the first, a valid system message, never reaches the server.
    let out = run(mgmt::rcon(&server, &tls, home.path()).args([
        "-c",
        "server system_message first",
        "-c",
        "bogus thing",
        "-c",
        "players",
    ]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "rcon: error: no management method matches 'bogus thing' (`rcon --mgmt methods` lists \
them); as a console command: the management server offers no method that runs a console \
command (neither msmpenhanced:command/run nor console:send is in its rpc.discover; install MSMP \
Enhanced or MSMP Console on it); none of the 3 calls was sent\n"
    );
    assert_eq!(stdout(&out), "");
    assert!(server.system_messages().is_empty());
    // A lost connection names the call under way and how many later ones were not sent.
    let out = run(mgmt::rcon(&server, &tls, home.path()).args([
        "-c",
        "server stop",
        "-c",
        "players",
        "-c",
        "players",
        "-c",
        "players",
    ]));
    assert_eq!(out.status.code(), Some(7), "{}", stderr(&out));
    assert!(server.stopped());
    assert_eq!(
        stderr(&out),
        "rcon: error: 'players': the management server closed the connection; 2 later not sent\n"
    );
}

/// The calls run under the runner policy of RCON's commands: `--echo` before each, `--delay`
/// between them, and Ctrl-C during the pause stops them with the one line that says what ran
/// and what was not sent; what was answered is on stdout.
#[cfg(unix)]
#[test]
fn calls_echo_pause_and_stop_at_ctrl_c_as_rcon_commands_do() {
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let home = common::home();
    let mut child = mgmt::rcon(&server, &tls, home.path())
        .args(["--echo", "--delay", "60s"])
        .args([
            "-c",
            "allowlist add Steve",
            "-c",
            "allowlist",
            "-c",
            "players",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let rx = common::lines_of(&mut child);
    let limit = std::time::Duration::from_secs(30);
    let mut got = Vec::new();
    for _ in 0..2 {
        got.push(rx.recv_timeout(limit).expect("the first call's answer"));
    }
    common::signal(&child, libc::SIGINT);
    let out = common::wait_with_timeout(child, limit);
    got.extend(rx.iter());
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_eq!(got, ["> allowlist add Steve", "Steve"]);
    assert_eq!(
        stderr(&out),
        "rcon: error: interrupted by Ctrl-C: 1 command ran, none was in flight, 2 not sent\n"
    );
}

/// Method lines from stdin stop at Ctrl-C as batch input from stdin does: the answers so far
/// on stdout, then the one line. The signal lands either just after the first answer or in the
/// pause after the next line was read, so the line says `1 not sent and` only in the second
/// case; both end with the rest of stdin unread.
#[cfg(unix)]
#[test]
fn stdin_lines_stop_at_ctrl_c_with_the_one_line() {
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let home = common::home();
    let mut child = mgmt::rcon(&server, &tls, home.path())
        .args(["--delay", "60s"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    stdin
        .write_all(b"allowlist add Steve\nallowlist\nplayers\n")
        .unwrap();
    let rx = common::lines_of(&mut child);
    let limit = std::time::Duration::from_secs(30);
    let first = rx.recv_timeout(limit).expect("the first line's answer");
    common::signal(&child, libc::SIGINT);
    let out = common::wait_with_timeout(child, limit);
    drop(stdin);
    let mut got = vec![first];
    got.extend(rx.iter());
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    assert_eq!(got, ["Steve"]);
    let err = stderr(&out);
    let head = "rcon: error: interrupted by Ctrl-C: 1 command ran, none was in flight, ";
    let tail = ["1 not sent and ", ""].map(|n| format!("{n}the rest of stdin was not read\n"));
    assert!(
        err.strip_prefix(head)
            .is_some_and(|t| tail.contains(&t.to_string())),
        "{err}"
    );
}

/// A call waiting for a slow server's answer is abandoned at Ctrl-C (the `-c` calls) or
/// `SIGTERM` (method lines from stdin): the run ends at once, not after `--timeout`, with the
/// one line naming the call that was in flight, and exits 130 or 143. The server holds every
/// answer for an hour; the signal is sent once `--trace` shows the call went out.
#[cfg(unix)]
#[test]
fn a_signal_abandons_a_call_waiting_for_its_answer() {
    use std::io::{BufRead, BufReader};
    let tls = mgmt::tls();
    let server = mgmt::start_with(MgmtPracticeConfig {
        answer_delay: Some(std::time::Duration::from_secs(3600)),
        ..mgmt::config(&tls)
    });
    let home = common::home();
    let cases = [
        (
            libc::SIGINT,
            &["-c", "players", "-c", "allowlist"][..],
            130,
            "rcon: error: interrupted by Ctrl-C: 0 commands ran, command 1 of 2 ('players') \
             was in flight and may or may not have run, 1 not sent",
        ),
        (
            libc::SIGTERM,
            &[],
            143,
            "rcon: error: interrupted by SIGTERM: 0 commands ran, stdin:1 ('players') was in \
             flight and may or may not have run, the rest of stdin was not read",
        ),
    ];
    for (signal, calls, code, want) in cases {
        let mut child = mgmt::rcon(&server, &tls, home.path())
            .args(["--trace", "--timeout", "60s"])
            .args(calls)
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(b"players\nallowlist\n").unwrap();
        let stderr_pipe = child.stderr.take().unwrap();
        let (tx, rx) = std::sync::mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stderr_pipe).lines() {
                let Ok(line) = line else { break };
                if tx.send(line).is_err() {
                    break;
                }
            }
        });
        // The hang guard only: the run ends long before it, or waits for --timeout (60 s).
        let limit = std::time::Duration::from_secs(30);
        loop {
            let line = rx.recv_timeout(limit).expect("the trace of the call");
            if line.starts_with("rcon: trace > ") && line.contains("minecraft:players") {
                break;
            }
        }
        // SAFETY: sends a signal to a child this test started and has not waited for.
        assert_eq!(unsafe { libc::kill(child.id() as libc::pid_t, signal) }, 0);
        let out = common::wait_with_timeout(child, limit);
        drop(stdin);
        let rest: Vec<String> = rx.iter().collect();
        assert_eq!(out.status.code(), Some(code), "{rest:?}");
        assert_eq!(stdout(&out), "");
        let errors: Vec<&String> = rest
            .iter()
            .filter(|l| !l.starts_with("rcon: trace"))
            .collect();
        assert_eq!(errors, [want], "{rest:?}");
    }
}

/// `--keep-going` goes on past a lost connection (each later call connects again and says why
/// it failed); without it the run stops there and says how many calls were not sent (above).
#[test]
fn keep_going_goes_on_past_a_lost_connection() {
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let home = common::home();
    let out = run(mgmt::rcon(&server, &tls, home.path()).args([
        "--keep-going",
        "-c",
        "server stop",
        "-c",
        "players",
        "-c",
        "players",
    ]));
    assert!(server.stopped());
    assert!(!out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(lines.len(), 2, "{err}");
    assert!(
        lines
            .iter()
            .all(|l| l.starts_with("rcon: error: 'players': ")),
        "{err}"
    );
    assert!(!err.contains("not sent"), "{err}");
}

/// `--retry N` tries a management server that cannot be reached again, as it does an RCON
/// server: one warning before each pause, then the connection's error and its exit status.
#[test]
fn retry_tries_an_unreachable_management_server_again() {
    let home = common::home();
    let closed = common::closed_port();
    let url = format!("wss://127.0.0.1:{}", closed.port());
    let out = run(common::rcon_in(home.path())
        .env("RCON_MGMT_SECRET", mgmt::SECRET)
        .args(["--mgmt", &url, "--retry", "2", "players"]));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    let err = stderr(&out);
    let retries: Vec<&str> = err.lines().filter(|l| l.contains("retrying in")).collect();
    assert_eq!(retries.len(), 2, "{err}");
    assert!(retries[0].starts_with("rcon: warning: "), "{err}");
    assert!(retries[0].ends_with("(retry 1 of 2)"), "{err}");
    assert!(retries[1].ends_with("(retry 2 of 2)"), "{err}");
    assert!(err.contains("cannot connect"), "{err}");
}

/// Ctrl-C or SIGTERM while the management console's first connection is tried again
/// (`--retry`) ends rcon at once with the signal's status and one line saying so, as RCON's
/// console does: there is no console to go back to. (The retries used to go on to the last.)
#[cfg(unix)]
#[test]
fn a_signal_while_the_management_console_retries_its_connection_ends_rcon() {
    use std::io::BufRead;
    for (signal, name, code) in [
        (libc::SIGINT, "Ctrl-C", 130),
        (libc::SIGTERM, "SIGTERM", 143),
    ] {
        let home = common::home();
        let closed = common::closed_port();
        let url = format!("wss://127.0.0.1:{}", closed.port());
        let mut child = common::rcon_in(home.path())
            .env("RCON_MGMT_SECRET", mgmt::SECRET)
            .args(["--mgmt", &url, "--retry", "20", "-i"])
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn rcon");
        let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut first = String::new();
        err.read_line(&mut first).unwrap();
        assert!(first.contains("retrying in"), "{first}");
        common::signal(&child, signal);
        let mut rest = String::new();
        std::io::Read::read_to_string(&mut err, &mut rest).unwrap();
        let status = child.wait().unwrap();
        assert_eq!(status.code(), Some(code), "{first}{rest}");
        assert!(
            rest.contains(&format!(
                "rcon: error: interrupted by {name} while connecting to wss://127.0.0.1:{}/",
                closed.port()
            )),
            "{first}{rest}"
        );
        // The pause was cut short: not every retry was tried.
        assert!(!rest.contains("(retry 20 of 20)"), "{first}{rest}");
    }
}

/// What `--mgmt` cannot honour is a usage error naming the flag, before any server is asked
/// (the URL here has nothing listening): RCON's journal, command files with a live or timed
/// mode (they run on one server that runs console commands), and `--echo` with a live or
/// timed mode.
#[test]
fn flags_mgmt_cannot_honour_are_refused_not_dropped() {
    let home = common::home();
    let file = home.path().join("calls.txt");
    std::fs::write(&file, "players\n").unwrap();
    let file = file.to_str().unwrap();
    let closed = common::closed_port();
    let url = format!("wss://127.0.0.1:{}", closed.port());
    for (args, says) in [
        (
            &["-f", file, "--every", "1m", "players"][..],
            "-f cannot be used with --mgmt here",
        ),
        (
            &["--resume", "players"],
            "--resume cannot be used with --mgmt",
        ),
        (
            &["--macro", "a=b", "--follow"],
            "--macro cannot be used with --mgmt here",
        ),
        (
            &["--follow", "--echo"],
            "--echo cannot be used with --follow",
        ),
        (
            &["--every", "1m", "--echo", "players"],
            "--echo cannot be used with --every",
        ),
    ] {
        let out = run(common::rcon_in(home.path())
            .env("RCON_MGMT_SECRET", mgmt::SECRET)
            .args(["--mgmt", &url])
            .args(args));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert!(stderr(&out).contains(says), "{args:?}: {}", stderr(&out));
    }
}

/// A profile `survival` in `home`'s config with the server's URL, its certificate (a file
/// beside the config) and the secret (in a file, with a newline).
fn survival_profile(home: &std::path::Path, server: &MgmtPracticeServer, tls: &mgmt::Tls) {
    let dir = home.join("config/rconsole");
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(dir.join("mgmt-secret"), format!("{}\n", mgmt::SECRET)).unwrap();
    std::fs::copy(&tls.cert, dir.join("survival.pem")).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        format!(
            "[servers.survival]\nhost = \"127.0.0.1\"\nmgmt_url = \"{}\"\nmgmt_cert = \"survival.pem\"\nmgmt_secret_file = \"mgmt-secret\"\n",
            mgmt::url(server)
        ),
    )
    .unwrap();
}

#[test]
fn a_profile_holds_url_certificate_and_secret_file() {
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let home = common::home();
    survival_profile(home.path(), &server, &tls);
    server.join("Steve");
    let out = run(common::rcon_in(home.path()).args(["--mgmt", "-s", "survival", "players"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Steve\n");
}

/// Runs the calls through the third-party client; one result (or error) per call.
fn peer_calls(server_url: &str, cert: &std::path::Path, calls: &[Value]) -> Vec<Value> {
    peer_calls_with(server_url, cert, &[], calls)
}

/// [`peer_calls`] with more of the peer's environment (`MGMT_ORIGIN`, `MGMT_BROWSER`).
fn peer_calls_with(
    server_url: &str,
    cert: &std::path::Path,
    env: &[(&str, &str)],
    calls: &[Value],
) -> Vec<Value> {
    let py = mgmt::peer_python().expect("checked by the caller");
    let mut child = Command::new(py)
        .arg(mgmt::peer_script())
        .arg(server_url)
        .arg(cert)
        .envs(env.iter().copied())
        .env("MGMT_SECRET", mgmt::SECRET)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("start the peer");
    let mut input = String::new();
    for c in calls {
        input.push_str(&c.to_string());
        input.push('\n');
    }
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = common::wait_with_timeout(child, std::time::Duration::from_secs(60));
    assert!(out.status.success(), "peer: {}", stderr(&out));
    stdout(&out)
        .lines()
        .map(|l| serde_json::from_str::<Value>(l).unwrap())
        .filter(|v| v.get("notification").is_none())
        .collect()
}

#[test]
fn the_third_party_client_agrees_on_every_method_called() {
    let Some(_) = mgmt::peer_python() else { return };
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let home = common::home();
    server.join("Notch");
    let words: &[&[&str]] = &[
        &["players"],
        &["allowlist", "add", "Steve", "Alex"],
        &["allowlist", "remove", "Steve"],
        &["allowlist"],
        &["bans", "add", "Griefer"],
        &["ip-bans", "add", "10.0.0.9"],
        &["operators", "add", "Alex"],
        &["serversettings", "difficulty", "set", "hard"],
        &["serversettings", "motd", "set", "Hello", "there"],
        &["serversettings", "autosave", "set", "false"],
        &["gamerules", "update", "minecraft:random_tick_speed", "7"],
        &["gamerules"],
        &["server", "save"],
        &["server", "status"],
        &["server", "system_message", "Hi"],
    ];
    for w in words {
        // rcon makes the call; the peer repeats exactly that call (every one is idempotent
        // on this state) and must get the same result.
        let line = ok(mgmt::rcon(&server, &tls, home.path())
            .arg("--json")
            .args(*w));
        let ours: Value = serde_json::from_str(line.trim()).unwrap();
        assert_eq!(ours["ok"], true, "{w:?}: {ours}");
        let theirs = peer_calls(
            &mgmt::url(&server),
            &tls.cert,
            &[json!({"method": ours["method"], "params": ours["params"]})],
        );
        assert_eq!(theirs, [json!({"result": ours["result"]})], "{w:?}");
    }
    // The schema both see is the same, and names every method rcon lists.
    let theirs = peer_calls(
        &mgmt::url(&server),
        &tls.cert,
        &[json!({"method": "rpc.discover"})],
    );
    let ours = ok(mgmt::rcon(&server, &tls, home.path()).args(["--json", "rpc.discover"]));
    let ours: Value = serde_json::from_str(ours.trim()).unwrap();
    assert_eq!(theirs[0]["result"], ours["result"]);
    // Errors agree too: an unknown method and bad params.
    let theirs = peer_calls(
        &mgmt::url(&server),
        &tls.cert,
        &[
            json!({"method": "minecraft:nope"}),
            json!({"method": "minecraft:allowlist/add", "params": ["x"]}),
        ],
    );
    assert_eq!(theirs[0]["error"]["code"], -32601);
    assert_eq!(theirs[1]["error"]["code"], -32602);
    let out = run(mgmt::rcon(&server, &tls, home.path()).args([
        "--json",
        "allowlist",
        "add",
        r#"["x"]"#,
    ]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("error -32602"), "{}", stderr(&out));
}

#[test]
fn console_tab_completes_method_names() {
    use common::term::Term;
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let home = common::home();
    let url = mgmt::url(&server);
    let args = mgmt::pty_args(&server, &tls, home.path());
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    let mut term = Term::start_with(home.path(), &args);
    let p = format!("{url}/ mgmt> ");
    term.wait_for(&p);
    term.wait_for("(management protocol)");
    term.send("allow\t");
    term.wait_for_line(&p, "allowlist");
    term.send(" a\t");
    term.wait_for_line(&p, "allowlist add");
    term.send("Steve\r");
    term.wait_for("\nSteve\n");
    term.send("server s\t\t");
    term.wait_for("save");
    term.wait_for("status");
    term.send("\x15");
    term.wait_for_line(&p, "");
    term.send("\x04");
    assert_eq!(term.exit_code(), 0);
    assert!(!term.raw().contains(mgmt::SECRET));
}

#[cfg(unix)]
#[test]
fn a_proxy_command_carries_the_management_protocol() {
    // TLS runs end to end through the tunnel: the proxy sees only ciphertext.
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let home = common::home();
    server.join("Steve");
    let proxy = "exec bash -c 'exec 3<>/dev/tcp/%h/%p; cat <&3 & cat >&3; wait'";
    let out = run(mgmt::rcon(&server, &tls, home.path()).args([
        "--proxy-command",
        proxy,
        "-c",
        "players",
        "allowlist add Alex",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Steve\nAlex\n");
}

#[test]
fn no_secret_and_no_terminal_is_a_usage_error_naming_the_sources() {
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let home = common::home();
    let out = run(mgmt::rcon(&server, &tls, home.path())
        .env_remove("RCON_MGMT_SECRET")
        .arg("players"));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("RCON_MGMT_SECRET"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.clients(), 0, "nothing connected without a secret");
}

#[test]
fn trace_shows_every_message_but_never_the_secret() {
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let home = common::home();
    let out = run(mgmt::rcon(&server, &tls, home.path()).args(["-v", "allowlist", "add", "Steve"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("rcon: trace = WebSocket open to wss://127.0.0.1:"),
        "{err}"
    );
    assert!(err.contains("(Authorization: Bearer ****)"), "{err}");
    assert!(
        err.contains(r#"rcon: trace > {"id":2,"jsonrpc":"2.0","method":"minecraft:allowlist/add","params":[[{"name":"Steve"}]]}"#),
        "{err}"
    );
    assert!(
        err.contains(r#"rcon: trace < {"id":2,"jsonrpc":"2.0","result":[{"#),
        "{err}"
    );
    assert!(!err.contains(mgmt::SECRET), "{err}");
    assert_eq!(stdout(&out), "Steve\n");
}

#[test]
fn the_practice_management_server_runs_from_the_command_line() {
    use std::io::BufRead;
    let home = common::home();
    let mut server = common::rcon_in(home.path())
        .args([
            "--practice-mgmt",
            "127.0.0.1:0",
            "--practice-password",
            "s3cret",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let mut url = String::new();
    std::io::BufReader::new(server.stdout.take().unwrap())
        .read_line(&mut url)
        .unwrap();
    let url = url.trim().to_string();
    assert!(url.starts_with("ws://127.0.0.1:"), "{url}");
    let rcon = || {
        let mut c = common::rcon_in(home.path());
        c.args(["--mgmt", &url]).env("RCON_MGMT_SECRET", "s3cret");
        c
    };
    let out = run(rcon().args(["allowlist", "add", "Steve"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Steve\n");
    // Loopback: no clear-text warning.
    assert_eq!(stderr(&out), "");
    let out = run(rcon().args(["server", "stop"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = common::wait_with_timeout(server, std::time::Duration::from_secs(30));
    assert!(out.status.success());
}

/// The `--json` output of one call of `words`: its params and result.
fn call_json(mut cmd: Command, words: &[&str]) -> (Value, Value) {
    let line = ok(cmd.arg("--json").args(words));
    let v: Value = serde_json::from_str(line.trim()).unwrap();
    assert_eq!(v["ok"], true, "{v}");
    (v["params"].clone(), v["result"].clone())
}

#[test]
fn game_rules_are_updated_with_the_value_types_of_each_versions_schema() {
    let tls = mgmt::tls();
    let home = common::home();
    // (version, words, params sent, result)
    let cases = [
        (
            MgmtVersion::V1_21_9,
            ["keepInventory", "true"],
            json!([{"key": "keepInventory", "value": "true"}]),
            json!({"key": "keepInventory", "value": "true", "type": "boolean"}),
        ),
        (
            MgmtVersion::V1_21_9,
            ["randomTickSpeed", "7"],
            json!([{"key": "randomTickSpeed", "value": "7"}]),
            json!({"key": "randomTickSpeed", "value": "7", "type": "integer"}),
        ),
        (
            MgmtVersion::V1_21_11,
            ["minecraft:keep_inventory", "true"],
            json!([{"key": "minecraft:keep_inventory", "value": true}]),
            json!({"key": "minecraft:keep_inventory", "value": true, "type": "boolean"}),
        ),
        (
            MgmtVersion::V1_21_11,
            ["minecraft:random_tick_speed", "7"],
            json!([{"key": "minecraft:random_tick_speed", "value": 7}]),
            json!({"key": "minecraft:random_tick_speed", "value": 7, "type": "integer"}),
        ),
    ];
    for (version, words, params, result) in cases {
        let server = mgmt::server_of(&tls, version);
        let rcon = || mgmt::rcon(&server, &tls, home.path());
        let (sent, got) = call_json(rcon(), &["gamerules", "update", words[0], words[1]]);
        assert_eq!((&sent, &got), (&params, &result), "{version:?} {words:?}");
        // The server holds the new value.
        let (_, rules) = call_json(rcon(), &["gamerules"]);
        assert!(
            rules.as_array().unwrap().contains(&result),
            "{version:?}: {rules}"
        );
        // Text output: KEY = VALUE.
        assert_eq!(
            ok(rcon().args(["gamerules", "update"]).args(words)),
            format!("{} = {}\n", words[0], words[1])
        );
    }
    // Each version refuses the other's value type, with its reason shown.
    for (version, words, why) in [
        (
            MgmtVersion::V1_21_9,
            [r#"{"key":"keepInventory","value":true}"#],
            "Invalid params: Not a string: true",
        ),
        (
            MgmtVersion::V1_21_11,
            [r#"{"key":"minecraft:keep_inventory","value":"true"}"#],
            r#"Invalid params: Not a boolean: "true""#,
        ),
    ] {
        let server = mgmt::server_of(&tls, version);
        let out = run(mgmt::rcon(&server, &tls, home.path())
            .args(["gamerules", "update"])
            .args(words));
        assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
        assert!(stderr(&out).contains(why), "{version:?}: {}", stderr(&out));
    }
}

#[test]
fn system_messages_and_saves_send_what_vanilla_requires() {
    let tls = mgmt::tls();
    let home = common::home();
    for version in [MgmtVersion::V1_21_9, MgmtVersion::V1_21_11] {
        let server = mgmt::server_of(&tls, version);
        let rcon = || mgmt::rcon(&server, &tls, home.path());
        let (sent, result) = call_json(rcon(), &["server", "system_message", "Back", "in", "5"]);
        assert_eq!(
            (sent, result),
            (
                json!([{"message": {"literal": "Back in 5"}, "overlay": false}]),
                json!(true)
            )
        );
        // Over the hotbar: the object as JSON.
        ok(rcon().args([
            "server",
            "system_message",
            r#"{"message":{"literal":"Look up"},"overlay":true}"#,
        ]));
        assert_eq!(server.system_messages(), ["Back in 5", "Look up"]);
        assert_eq!(server.system_message_overlays(), [false, true]);
        // `server save` is a save without flush; `server save flush` flushes.
        let (sent, result) = call_json(rcon(), &["server", "save"]);
        assert_eq!((sent, result), (json!([false]), json!(true)));
        let (sent, _) = call_json(rcon(), &["server", "save", "flush"]);
        assert_eq!(sent, json!([true]));
    }
}

/// Splits a README command line as `sh` would (plain words and '...' quotes are all the
/// examples use) and drops a trailing `# comment`.
fn shell_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur: Option<String> = None;
    let mut quoted = false;
    for c in line.chars() {
        match c {
            '\'' => {
                quoted = !quoted;
                cur.get_or_insert_with(String::new);
            }
            '#' if !quoted && cur.is_none() => break,
            c if c.is_whitespace() && !quoted => words.extend(cur.take()),
            c => cur.get_or_insert_with(String::new).push(c),
        }
    }
    assert!(!quoted, "unclosed quote in {line}");
    words.extend(cur);
    words
}

#[test]
fn every_management_example_in_the_readme_runs() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    let section = readme
        .split("\n## ")
        .find(|s| s.starts_with("Management protocol"))
        .expect("the management section");
    let examples: Vec<&str> = section
        .lines()
        .map(str::trim)
        .filter(|l| l.starts_with("rcon --mgmt"))
        .collect();
    assert!(examples.len() >= 8, "{examples:?}");
    // `server stop` ends the practice server: it runs last.
    let (stops, rest): (Vec<&str>, Vec<&str>) =
        examples.iter().partition(|l| l.contains("server stop"));
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    server.join("Steve");
    let home = common::home();
    survival_profile(home.path(), &server, &tls);
    // The first example names the server by URL and trusts server.pem.
    std::fs::copy(&tls.cert, home.path().join("server.pem")).unwrap();
    for line in rest.iter().chain(&stops) {
        let args: Vec<String> = shell_words(line)[1..]
            .iter()
            .map(|w| w.replace("wss://mc.example.net:25585", &mgmt::url(&server)))
            .collect();
        let out = run(common::rcon_in(home.path())
            .current_dir(home.path())
            .args(&args)
            .env("RCON_MGMT_SECRET", mgmt::SECRET)
            .env("RCON_CLOCK_SPEED", "600")
            .stdin(Stdio::null()));
        assert!(out.status.success(), "{line}: {}", stderr(&out));
        assert!(
            !stderr(&out).contains("rcon: error"),
            "{line}: {}",
            stderr(&out)
        );
    }
    assert!(server.stopped(), "no example stopped the server");
    assert!(
        server
            .system_messages()
            .iter()
            .any(|m| m.starts_with("Restart in")),
        "{:?}",
        server.system_messages()
    );
}

/// One binary: `rcon` copied alone into an empty directory (no program next to it) runs
/// `--mgmt` itself, as an archive, a package or `cargo install` leaves it.
#[test]
fn rcon_alone_in_its_directory_runs_the_management_protocol() {
    let tls = mgmt::tls();
    let server = mgmt::server(&tls);
    let home = common::home();
    let dir = tempfile::tempdir().unwrap();
    let alone = dir.path().join(common::rcon_bin().file_name().unwrap());
    std::fs::copy(common::rcon_bin(), &alone).unwrap();
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 1);
    let mut cmd = common::program_in(&alone, home.path());
    cmd.args(["--mgmt", &mgmt::url(&server), "--mgmt-cert"])
        .arg(&tls.cert)
        .env("RCON_MGMT_SECRET", mgmt::SECRET)
        .arg("players");
    assert_eq!(ok(&mut cmd), "(none)\n");
}
