//! The defects a new user hit (issue 10), each reproduced against the real binary: closed
//! stderr, password files, inputs checked before sending, ports inside `-H`, config messages,
//! the `-c` failure policy, and the wording of errors.

use std::process::Stdio;

use crate::common::*;

fn write_file(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

/// Runs `cmd` with stderr a pipe whose reader is already gone (`2>&1 >/dev/null | head -1`
/// after head exited): every write to stderr fails with EPIPE.
#[cfg(unix)]
fn run_with_closed_stderr(cmd: &mut std::process::Command) -> std::process::Output {
    let (reader, writer) = std::io::pipe().unwrap();
    drop(reader);
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(writer)
        .spawn()
        .expect("spawn rcon");
    wait_with_timeout(child, std::time::Duration::from_secs(60))
}

#[cfg(unix)]
#[test]
fn a_closed_stderr_is_not_a_crash() {
    use std::os::unix::process::ExitStatusExt;
    let server = strict_vanilla();
    let home = home();
    // --trace writes every packet to stderr.
    let out = run_with_closed_stderr(rcon_for(&server, home.path()).args(["--trace", "echo hi"]));
    assert_eq!(out.status.signal(), None, "killed by a signal");
    assert_eq!(out.status.code(), Some(0));
    assert_eq!(stdout(&out), "hi\n");
    // --keep-going reports each bad line on stderr and goes on.
    let file = write_file(home.path(), "bad.mcfunction", "nosuchcmd\necho after\n");
    let out =
        run_with_closed_stderr(rcon_for(&server, home.path()).args(["-f", &file, "--keep-going"]));
    assert_eq!(out.status.signal(), None, "killed by a signal");
    assert_eq!(out.status.code(), Some(1));
    assert!(stdout(&out).ends_with("after\n"), "{}", stdout(&out));
}

#[test]
fn password_file_and_command_use_the_first_line() {
    let server = strict_vanilla();
    let home = home();
    // As `pass show` prints: the password, then other fields.
    let text = format!("{PASSWORD}\nurl: mc.example\nuser: admin\n");
    let file = write_file(home.path(), "pw", &text);
    let out = run(rcon_for(&server, home.path())
        .env_remove("RCON_PASSWORD")
        .args(["--password-file", &file, "echo ok"]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ok\n");
    // password_command runs under `sh -c` (`cmd /C` on Windows, which has no `cat`).
    if cfg!(windows) {
        return;
    }
    let config = write_file(
        home.path(),
        "rcon.toml",
        &format!(
            "[servers.a]\nhost = \"127.0.0.1\"\nport = {}\npassword_command = \"cat '{file}'\"\n",
            server.port()
        ),
    );
    let out = run(rcon_in(home.path()).args(["--config", &config, "-s", "a", "echo ok"]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "ok\n");
}

#[test]
fn the_practice_password_is_in_the_help_and_the_banner() {
    let home = home();
    let out = run(rcon_in(home.path()).arg("--help"));
    let help = stdout(&out);
    assert!(help.contains("[default: practice]"), "{help}");
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(readme.contains("Its password is `practice`"));
    // The banner names the default password, never one given with --practice-password.
    for (extra, want, never) in [
        (None, "(password practice)", None),
        (
            Some("s3cr3t-pw"),
            "(password from --practice-password)",
            Some("s3cr3t-pw"),
        ),
    ] {
        let mut cmd = rcon_in(home.path());
        cmd.args(["--practice-server", "127.0.0.1:0"]);
        if let Some(pw) = extra {
            cmd.args(["--practice-password", pw]);
        }
        let mut child = cmd
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        use std::io::BufRead;
        let mut err = std::io::BufReader::new(child.stderr.take().unwrap());
        let mut line = String::new();
        err.read_line(&mut line).unwrap();
        let _ = child.kill();
        let _ = child.wait();
        assert!(line.contains(want), "{line}");
        if let Some(secret) = never {
            assert!(!line.contains(secret), "{line}");
        }
    }
}

#[test]
fn every_input_is_checked_before_anything_is_sent() {
    let server = strict_vanilla();
    let home = home();
    let missing = home.path().join("missing.mcfunction");
    let out = run(rcon_for(&server, home.path()).args([
        "-c",
        "echo sent-first",
        "-f",
        missing.to_str().unwrap(),
    ]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("missing.mcfunction"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.connections(), 0, "nothing sent, no connection");
    // A directory is an input error (exit 2), found before the -c command goes out.
    let dir = format!("{}/", home.path().display());
    let out = run(rcon_for(&server, home.path()).args(["-c", "echo sent-first", "-f", &dir]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("is a directory"), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(server.connections(), 0);
}

#[test]
fn a_failed_c_command_stops_the_run_unless_keep_going() {
    let server = strict_vanilla();
    let home = home();
    let out = run(rcon_for(&server, home.path()).args(["-c", "bad", "-c", "echo after"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(server.commands(), ["bad"]);
    let err = stderr(&out);
    assert!(err.contains("command 'bad'"), "{err}");
    assert!(err.contains("1 later command not sent"), "{err}");
    assert!(err.contains("--keep-going"), "{err}");
    assert!(!stdout(&out).contains("after"));

    let server = strict_vanilla();
    let out =
        run(rcon_for(&server, home.path()).args(["--keep-going", "-c", "bad", "-c", "echo after"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert_eq!(server.commands(), ["bad", "echo after"]);
    assert!(stdout(&out).ends_with("after\n"));
    assert!(
        stderr(&out).contains("1 of 2 commands failed"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn delay_applies_to_c_commands() {
    let server = strict_vanilla();
    let home = home();
    let start = std::time::Instant::now();
    let out = run(rcon_for(&server, home.path()).args([
        "--delay", "200ms", "-c", "echo 1", "-c", "echo 2", "-c", "echo 3",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "1\n2\n3\n");
    // A lower bound only: two pauses of 200ms must have happened.
    assert!(start.elapsed() >= std::time::Duration::from_millis(400));
}

#[test]
fn a_refused_command_is_said_once() {
    let server = strict_vanilla();
    let home = home();
    let long = format!("say {}", "x".repeat(2000));
    let out = run(rcon_for(&server, home.path()).arg(&long));
    assert_eq!(out.status.code(), Some(8));
    let err = stderr(&out);
    assert_eq!(
        err.trim_end(),
        "rcon: error: the command is 2004 bytes of UTF-8, over the limit of 1446; nothing was sent"
    );
    assert_eq!(server.connections(), 0);
}

/// A TCP port that accepts and never answers.
fn silent_port() -> u16 {
    black_hole().port()
}

#[test]
fn bad_ports_are_usage_errors() {
    let home = home();
    for host in [
        "127.0.0.1:99999",
        "127.0.0.1:abc",
        "127.0.0.1:",
        "[::1",
        "http://x",
    ] {
        let out = run(rcon_in(home.path()).args(["-H", host, "-p", "x", "list"]));
        assert_eq!(out.status.code(), Some(2), "-H {host}: {}", stderr(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
        let out = run(rcon_in(home.path()).args(["--target", &format!("a={host}"), "list"]));
        assert_eq!(
            out.status.code(),
            Some(2),
            "--target a={host}: {}",
            stderr(&out)
        );
    }
    for argv in [["-P", "0"], ["-t", "0"], ["-t", "0ms"]] {
        let out = run(rcon_in(home.path()).args(argv).args(["-p", "x", "list"]));
        assert_eq!(out.status.code(), Some(2), "{argv:?}: {}", stderr(&out));
    }
    // A negative port is a bad value, not a flag to put after `--`.
    let out = run(rcon_in(home.path()).args(["-P", "-1", "list"]));
    assert_eq!(out.status.code(), Some(2));
    assert!(!stderr(&out).contains("-- -1"), "{}", stderr(&out));
    assert!(stderr(&out).contains("'-1'"), "{}", stderr(&out));
    // A bad value from the environment names the variable, not the flag.
    let out = run(rcon_in(home.path())
        .env("RCON_PORT", "abc")
        .args(["-p", "x", "list"]));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("RCON_PORT"), "{err}");
    assert!(!err.contains("--port"), "{err}");
}

#[test]
fn ping_and_query_read_the_config_only_for_a_named_profile() {
    let home = home();
    let port = silent_port();
    let config = write_file(home.path(), "broken.toml", "[servers.a\nhost = \n");
    // A broken config file does not matter to a ping that names no profile.
    let out = run(rcon_in(home.path()).env("RCON_CONFIG", &config).args([
        "--ping",
        &format!("127.0.0.1:{port}"),
        "-t",
        "300ms",
    ]));
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("timed out after 300ms"),
        "{}",
        stderr(&out)
    );
    let out = run(rcon_in(home.path()).env("RCON_CONFIG", &config).args([
        "--query",
        &format!("127.0.0.1:{port}"),
        "-t",
        "300ms",
    ]));
    // Nothing answers UDP there: the query itself fails (refused or timed out), not the config.
    assert!(matches!(out.status.code(), Some(4 | 6)), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("query of 127.0.0.1:"),
        "{}",
        stderr(&out)
    );
    // With -s, the profile's host and timeout are used.
    let config = write_file(
        home.path(),
        "good.toml",
        "[servers.mc]\nhost = \"127.0.0.1:25575\"\ntimeout = \"350ms\"\n",
    );
    let out = run(rcon_in(home.path()).env("RCON_CONFIG", &config).args([
        "-s",
        "mc",
        "--ping",
        &format!("127.0.0.1:{port}"),
    ]));
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("timed out after 350ms"),
        "{}",
        stderr(&out)
    );
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &config)
        .args(["-s", "mc", "--ping", "-t", "300ms"]));
    assert!(
        stderr(&out).contains("status ping of 127.0.0.1:25565"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn config_messages_name_the_real_place() {
    let home = home();
    let config = write_file(
        home.path(),
        "c.toml",
        "[servers.a]\nhost = \"127.0.0.1:1\"\n\n[server.b]\nhost = \"x\"\n",
    );
    let out = run(rcon_in(home.path()).args(["--config", &config, "--list-servers"]));
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.contains("c.toml:4: unknown table [server.b]"), "{err}");
    assert!(!err.contains("in [servers.a]"), "{err}");

    let config = write_file(
        home.path(),
        "g.toml",
        "[servers.a]\nhost = \"127.0.0.1:1\"\n[servers.lobbies]\nservers = [\"a\", \"nope\"]\n",
    );
    let out = run(rcon_in(home.path()).args(["--config", &config, "--list-servers"]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "a        127.0.0.1:1\nlobbies  group: a, nope\n"
    );
    let out =
        run(rcon_in(home.path()).args(["--config", &config, "-s", "lobbies", "-p", "x", "list"]));
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.contains("'nope'"), "{err}");
    assert!(err.contains("profile lobbies"), "{err}");
    assert!(!err.contains("flag --server"), "{err}");
}

#[test]
fn a_target_does_not_inherit_the_default_profiles_tunnel() {
    let server = strict_vanilla();
    let home = home();
    let config = write_file(
        home.path(),
        "c.toml",
        "[servers.default]\nhost = \"127.0.0.1\"\nproxy_command = \"exit 9\"\n",
    );
    let out = run(rcon_in(home.path()).env("RCON_PASSWORD", PASSWORD).args([
        "--config",
        &config,
        "--target",
        &format!("a=127.0.0.1:{}", server.port()),
        "echo hi",
    ]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "[a] hi\n");
}

#[test]
fn flags_that_would_be_ignored_are_refused() {
    let home = home();
    for argv in [
        &["--demo", "-H", "mc.example", "list"][..],
        &["--practice-mode", "source"],
        &["--practice-password", "x"],
    ] {
        let out = run(rcon_in(home.path()).args(argv));
        assert_eq!(out.status.code(), Some(2), "{argv:?}: {}", stderr(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    }
    // RCON_HOST in the environment does not stop --demo.
    let out = run(rcon_in(home.path())
        .env("RCON_HOST", "mc.example")
        .args(["--demo", "echo ok"]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
}

/// `--mgmt URL --target a=HOST` ignored the target; `--mgmt --target a=HOST` said "--mgmt needs
/// a URL". Both are one usage error naming both flags, raised while resolving.
#[test]
fn mgmt_with_target_is_refused_naming_both_flags() {
    let home = home();
    for argv in [
        &[
            "--mgmt",
            "ws://127.0.0.1:1",
            "--target",
            "a=127.0.0.1",
            "seed",
        ][..],
        &["--mgmt", "--target", "a=127.0.0.1", "list"],
    ] {
        let out = run(rcon_in(home.path()).args(argv));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{argv:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("--mgmt") && err.contains("--target"), "{err}");
    }
}

/// `--echo` was silently ignored by `--every` and `--countdown`: now a usage error naming both.
#[test]
fn echo_with_timed_modes_is_refused_naming_both_flags() {
    let home = home();
    for (argv, flag) in [
        (
            &[
                "-H",
                "127.0.0.1",
                "-p",
                "x",
                "--echo",
                "--every",
                "1s",
                "list",
            ][..],
            "--every",
        ),
        (
            &["-H", "127.0.0.1", "-p", "x", "--echo", "--countdown", "10s"],
            "--countdown",
        ),
    ] {
        let out = run(rcon_in(home.path()).args(argv));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{argv:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("--echo") && err.contains(flag), "{err}");
    }
}

/// `--follow` and the timed operations silently dropped the flags that shape a batch, its
/// retries or its output: `--countdown 5m --then stop -f restart.txt` counted down and sent
/// none of the file; `-i --exec CMD` and `--countdown ... --poll 1s` passed clap because
/// `--follow`, which they require, conflicts with `-i` and `--countdown`. Each is now one usage
/// error naming both flags, before anything is sent (the port is held closed: nothing listens).
#[test]
fn flags_the_live_and_timed_modes_would_ignore_are_refused_naming_both() {
    let home = home();
    let closed = crate::common::closed_port();
    let port = closed.port().to_string();
    let base = ["-H", "127.0.0.1", "-P", &port, "-p", "x"];
    let cases: &[(&[&str], &str, &str)] = &[
        (
            &["--countdown", "5m", "--then", "stop", "-f", "restart.txt"],
            "-f",
            "--countdown",
        ),
        (
            &["--every", "1h", "--keep-going", "-c", "save-all"],
            "--keep-going",
            "--every",
        ),
        (
            &["--every", "1h", "--delay", "1s", "-c", "save-all"],
            "--delay",
            "--every",
        ),
        (
            &["--countdown", "1m", "--retry", "2", "--then", "stop"],
            "--retry",
            "--countdown",
        ),
        (
            &["--if", "players < 5", "--macro", "a=b", "-c", "stop"],
            "--macro",
            "--if",
        ),
        (
            &["--every", "1h", "--trace", "-c", "list"],
            "--trace",
            "--every",
        ),
        (
            &["--every", "1h", "--raw", "-c", "list"],
            "--raw",
            "--every",
        ),
        (
            &["--every", "1h", "--parallel", "4", "-c", "list"],
            "--parallel",
            "--every",
        ),
        (&["--follow", "--keep-going"], "--keep-going", "--follow"),
        (&["--follow", "--retry", "1"], "--retry", "--follow"),
        (&["--follow", "--messages"], "--messages", "--follow"),
        (
            &["--follow", "--fix-newlines"],
            "--fix-newlines",
            "--follow",
        ),
        (&["--follow", "--group"], "--group", "--follow"),
        (&["-i", "--exec", "echo {}"], "--exec", "--follow"),
        (
            &["--countdown", "1m", "--poll", "1s", "--then", "stop"],
            "--poll",
            "--follow",
        ),
    ];
    for (argv, flag, mode) in cases {
        let out = run(rcon_in(home.path())
            .args(base)
            .args(*argv)
            .stdin(std::process::Stdio::null()));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{argv:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{argv:?}: {err}");
        assert!(
            err.contains(&format!("{flag} ")) && err.contains(mode),
            "{argv:?}: {err}"
        );
        assert!(stdout(&out).is_empty(), "{argv:?}");
    }
    // What they do honour still runs: --json with a timed operation (against a live server).
    let server = crate::common::strict_vanilla();
    let out = run(crate::common::rcon_for(&server, home.path())
        .env("RCON_CLOCK_SPEED", "100")
        .args(["--json", "--countdown", "1s", "--then", "seed"]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("\"command\":\"seed\""),
        "{}",
        stdout(&out)
    );
}

#[test]
fn wording_says_what_happened() {
    let home = home();
    // clap's list of missing arguments stays on one readable line.
    let out = run(rcon_in(home.path()).arg("--legacy"));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(err.contains("not provided: --ping"), "{err}");
    assert!(!err.contains(":;"), "{err}");
    // -i with one --target: not "works with one server".
    let out = run(rcon_in(home.path()).args(["-p", "x", "-i", "--target", "a=127.0.0.1:1"]));
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(!err.contains("works with one server"), "{err}");
    assert!(err.contains("--target"), "{err}");
    // --print-config with no terminal does not promise to ask on one.
    let out = run(rcon_in(home.path()).args(["--print-config", "-H", "127.0.0.1"]));
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let text = stdout(&out);
    assert!(!text.contains("will ask on the terminal"), "{text}");
    assert!(text.contains("no terminal to ask on"), "{text}");
}

/// `--retry N` was ignored for one server (issue 20): a refused first connect is now tried
/// again N times, with fan-out's rule and pauses, each retry named on stderr, then the error.
#[test]
fn retry_tries_one_refused_server_again_n_times() {
    let home = home();
    let closed = crate::common::closed_port();
    let port = closed.port();
    let out = run(rcon_at(port, home.path()).args(["--retry", "2", "list"]));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(4), "{err}");
    let retries: Vec<&str> = err.lines().filter(|l| l.contains("retrying in")).collect();
    assert_eq!(retries.len(), 2, "{err}");
    assert!(retries[0].contains("200ms (retry 1 of 2)"), "{err}");
    assert!(retries[1].contains("400ms (retry 2 of 2)"), "{err}");
    assert!(
        err.lines()
            .last()
            .unwrap()
            .starts_with("rcon: error: cannot connect"),
        "{err}"
    );
    assert!(err.contains("1 command not sent"), "{err}");

    // Without --retry: one attempt, no retry line.
    let out = run(rcon_at(port, home.path()).arg("list"));
    assert_eq!(out.status.code(), Some(4));
    assert!(!stderr(&out).contains("retrying"), "{}", stderr(&out));

    // --wait already retries until the server is up: both together is a usage error.
    let out = run(rcon_at(port, home.path()).args(["--retry", "2", "--wait", "1s", "list"]));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains("--retry") && err.contains("--wait"), "{err}");
}

/// `--print-config` with `--target` showed the default profile's address, and with `--demo` a
/// missing password for a session that needs none (issue 20).
#[test]
fn print_config_shows_the_targets_and_what_demo_uses() {
    let home = home();
    let out = run(rcon_in(home.path()).args([
        "--target",
        "a=10.0.0.5:25580",
        "--target",
        "b=host2",
        "--print-config",
    ]));
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    let a = text.find("[a]").expect("[a] block");
    let b = text.find("[b]").expect("[b] block");
    assert!(a < b, "{text}");
    let (block_a, block_b) = text.split_at(b);
    assert!(
        block_a.contains("10.0.0.5") && block_a.contains("25580"),
        "{text}"
    );
    assert!(block_b.contains("host2"), "{text}");
    assert!(!text.contains("localhost"), "{text}");
    // Each line says where its value came from: the target, not a default.
    let source = |block: &str, key: &str| {
        block
            .lines()
            .find(|l| l.starts_with(key))
            .unwrap_or_else(|| panic!("no {key} line in {block}"))
            .to_string()
    };
    assert!(
        source(block_a, "host").ends_with("flag --target a"),
        "{text}"
    );
    assert!(
        source(block_a, "port").ends_with("flag --target a"),
        "{text}"
    );
    assert!(
        source(block_b, "host").ends_with("flag --target b"),
        "{text}"
    );
    assert!(source(block_b, "port").ends_with("default"), "{text}");

    let out = run(rcon_in(home.path()).args(["--demo", "--print-config"]));
    let text = stdout(&out);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(text.contains("not needed"), "{text}");
    assert!(!text.contains("a session would fail"), "{text}");
    assert!(text.contains("practice server"), "{text}");
}

/// The timed and live flags are checked while the command line is resolved (issue 20): a
/// mistake there is a usage error naming the flag before any server is asked, where the runner
/// used to find it only after connecting (a refused port then hid it behind exit 4).
#[test]
fn timed_and_follow_flag_mistakes_are_usage_errors_before_connecting() {
    let home = home();
    let closed = crate::common::closed_port();
    let port = closed.port();
    for (args, says) in [
        (
            &["--every", "0s", "list"][..],
            "--every must be more than 0",
        ),
        (
            &["--announce", "bye {left}", "--every", "1m", "list"][..],
            "required arguments were not provided: --countdown",
        ),
        (&["--if", "tps < 5", "list"][..], "--if 'tps < 5'"),
        (&["--every", "1m"][..], "nothing to run"),
        (
            &["--every", "1m", "--countdown", "5m", "stop"][..],
            "must be longer than --countdown",
        ),
        (
            &["--follow", "--poll", "0s"][..],
            "--poll must be more than 0",
        ),
    ] {
        let out = run(rcon_at(port, home.path()).args(args));
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {err}");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains(says), "{args:?}: {err}");
    }
}

/// The practice servers' address and mode are checked while the command line is read: one
/// line each, exit 2, nothing listening.
#[test]
fn practice_address_and_mode_are_usage_errors() {
    let home = crate::common::home();
    for (args, want) in [
        (
            &["--practice-server", "nope"][..],
            "rcon: error: --practice-server: 'nope' is not IP:PORT\n",
        ),
        (
            &["--practice-mgmt", "127.0.0.1"][..],
            "rcon: error: --practice-mgmt: '127.0.0.1' is not IP:PORT\n",
        ),
    ] {
        let out = crate::common::run(crate::common::rcon_in(home.path()).args(args));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(crate::common::stderr(&out), want, "{args:?}");
        assert_eq!(crate::common::stdout(&out), "", "{args:?}");
    }
    let out = crate::common::run(crate::common::rcon_in(home.path()).args([
        "--practice-server",
        "127.0.0.1:0",
        "--practice-mode",
        "bogus",
    ]));
    assert_eq!(out.status.code(), Some(2));
    let err = crate::common::stderr(&out);
    assert!(
        err.starts_with("rcon: error: unknown --practice-mode 'bogus' (one of: vanilla, "),
        "{err}"
    );
    assert!(
        err.contains("silent-empty") && err.contains("telnet"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    assert_eq!(crate::common::stdout(&out), "");
}

/// An empty command (`rcon "$CMD"` with CMD unset, `-c ''`) is a usage error before anything
/// is sent: no server does anything useful with one (vanilla answers with a parse error).
#[test]
fn an_empty_command_is_refused_before_anything_is_sent() {
    let server = strict_vanilla();
    let home = home();
    for (args, want) in [
        (
            &[""][..],
            "rcon: error: the command is empty; nothing was sent\n",
        ),
        (
            &["-c", "echo one", "-c", "  "][..],
            "rcon: error: command 2 of 2 is empty; nothing was sent\n",
        ),
    ] {
        let out = run(rcon_for(&server, home.path()).args(args));
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert_eq!(stderr(&out), want, "{args:?}");
        assert_eq!(stdout(&out), "", "{args:?}");
    }
    assert!(server.commands().is_empty(), "{:?}", server.commands());
}

/// Issue 41: `rcon -h` is what the README says, "one line each under eight headings", at the
/// terminal widths clap sees (COLUMNS), with no `Options:` or `Arguments:` block first.
#[test]
fn short_help_is_one_line_each_under_eight_headings_at_80_and_100_columns() {
    let readme =
        std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md")).unwrap();
    assert!(readme.contains("`rcon -h` lists every option on one line under eight headings"));
    let home = home();
    for columns in ["80", "100"] {
        let out = run(rcon_in(home.path()).env("COLUMNS", columns).arg("-h"));
        assert!(out.status.success(), "{}", stderr(&out));
        let help = stdout(&out);
        let headings: Vec<&str> = help
            .lines()
            .filter(|l| !l.starts_with(' ') && l.ends_with(':'))
            .collect();
        assert_eq!(
            headings,
            [
                "Connection:",
                "Commands:",
                "Output:",
                "Several servers:",
                "Live and timed:",
                "Management:",
                "Practice:",
                "Status:"
            ],
            "{help}"
        );
        let width: usize = columns.parse().unwrap();
        for line in help.lines().filter(|l| l.starts_with(' ')) {
            let indent = line.len() - line.trim_start().len();
            assert!(
                matches!(indent, 2 | 6) && line.chars().count() <= width,
                "COLUMNS={columns}: {line:?} is not one entry on one line:\n{help}"
            );
        }
        assert!(help.contains("\n  -h, --help "), "{help}");
    }
}
