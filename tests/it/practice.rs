//! The practice servers play along (issue 41): the RCON one answers the server commands its
//! `help` lists as vanilla 1.21 does, the management one notifies list changes and takes
//! players joining and leaving from its stdin, and every line of the README's Quick tour runs.

use std::io::{BufRead, BufReader, Write};
use std::process::Stdio;

use crate::common::{self, home, rcon_for, rcon_in, run, stderr, stdout};
use crate::follow::{Follower, after_time};

/// The Quick tour's line, against `--demo`'s own server: `save-all` answers, in vanilla's two
/// messages joined with nothing between them (MC-7569).
#[test]
fn say_save_all_and_list_run_on_the_demo_server() {
    let home = home();
    let out = run(rcon_in(home.path()).args([
        "--demo",
        "-c",
        "say backup in 5 min",
        "-c",
        "save-all",
        "list",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "\nSaving the game (this may take a moment!)Saved the game\nThere are 0 of a max of 20 players online: \n"
    );
}

/// The server commands change what later ones report, each answer in vanilla's words, over
/// the strict one-packet-per-read server; a word vanilla refuses is refused with its parse
/// error.
#[test]
fn server_commands_answer_as_vanilla_1_21_does() {
    let server = common::strict_vanilla();
    server.set_players(&["Steve", "Alex"]);
    let home = home();
    let cases = [
        ("save-off", "Automatic saving is now disabled"),
        ("save-off", "Saving is already turned off"),
        ("save-on", "Automatic saving is now enabled"),
        ("whitelist on", "Whitelist is now turned on"),
        ("whitelist add Bob", "Added Bob to the whitelist"),
        ("whitelist add Bob", "Player is already whitelisted"),
        ("whitelist list", "There are 1 whitelisted player(s): Bob"),
        ("whitelist remove Bob", "Removed Bob from the whitelist"),
        ("whitelist off", "Whitelist is now turned off"),
        ("op Steve", "Made Steve a server operator"),
        ("deop Steve", "Made Steve no longer a server operator"),
        (
            "deop Steve",
            "Nothing changed. The player is not an operator",
        ),
        ("msg Alex hello", "You whisper to Alex: hello"),
        ("kick Alex too loud", "Kicked Alex: too loud"),
        ("list", "There are 1 of a max of 20 players online: Steve"),
        (
            "list uuids",
            "There are 1 of a max of 20 players online: Steve (5627dd98-e6be-3c21-b8a8-e92344183641)",
        ),
        ("ban Griefer", "Banned Griefer: Banned by an operator."),
        (
            "banlist players",
            "There are 1 ban(s):Griefer was banned by Rcon: Banned by an operator.",
        ),
        ("pardon Griefer", "Unbanned Griefer"),
        ("time set noon", "Set the time to 6000"),
        ("time query daytime", "The time is 6000"),
        ("weather rain", "Set the weather to rain"),
        (
            "gamerule doDaylightCycle false",
            "Gamerule doDaylightCycle is now set to: false",
        ),
        ("difficulty", "The difficulty is Easy"),
        ("difficulty hard", "The difficulty has been set to Hard"),
        ("seed", "Seed: [-4172144997902289642]"),
        (
            "tp Steve 0 -60 0",
            "Teleported Steve to 0.500000, -60.000000, 0.500000",
        ),
        ("say hi", ""),
    ];
    let mut cmd = rcon_for(&server, home.path());
    for (command, _) in &cases {
        cmd.args(["-c", command]);
    }
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    let mut got = text.lines();
    for (command, want) in cases {
        assert_eq!(got.next(), Some(want), "{command}: {text}");
    }
    assert!(server.violations().is_empty(), "{:?}", server.violations());
    // `m` is no unit of time: refused after the unit, as vanilla reads it, and the run fails.
    let out = run(rcon_for(&server, home.path()).args(["weather", "clear", "10m"]));
    assert_eq!(stdout(&out), "Invalid unit... clear 10m<--[HERE]\n");
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

/// `operators`, `bans` and `ip_bans` changes are notified as vanilla names them; a setting
/// such as the difficulty is not (vanilla's `rpc.discover` lists no notification for it).
#[test]
fn list_changes_are_notified_and_settings_are_not() {
    let tls = common::mgmt::tls();
    let server = common::mgmt::server(&tls);
    let home = home();
    let mut f = Follower::spawn(
        common::mgmt::rcon(&server, &tls, home.path()).args(["--follow", "--json"]),
    );
    f.wait_err("following");
    let call = |words: &[&str]| {
        let out = run(common::mgmt::rcon(&server, &tls, home.path()).args(words));
        assert!(out.status.success(), "{words:?}: {}", stderr(&out));
    };
    let mut next = || -> serde_json::Value { serde_json::from_str(&f.line()).unwrap() };
    call(&["serversettings", "difficulty", "set", "hard"]);
    call(&["operators", "add", "Steve"]);
    let e = next();
    assert_eq!(e["event"], "operators/added", "{e}");
    assert_eq!(e["params"][0]["player"]["name"], "Steve", "{e}");
    assert_eq!(e["params"][0]["permissionLevel"], 4, "{e}");
    call(&["operators", "remove", "Steve"]);
    assert_eq!(next()["event"], "operators/removed");
    call(&[
        "bans",
        "add",
        r#"[{"player":{"name":"Griefer"},"reason":"grief"}]"#,
    ]);
    let e = next();
    assert_eq!(e["event"], "bans/added", "{e}");
    assert_eq!(e["params"][0]["reason"], "grief", "{e}");
    call(&["bans", "remove", "Griefer"]);
    let e = next();
    assert_eq!(
        (e["event"].as_str(), e["params"][0]["name"].as_str()),
        (Some("bans/removed"), Some("Griefer")),
        "{e}"
    );
    call(&["ip_bans", "add", r#"[{"ip":"10.0.0.9"}]"#]);
    let e = next();
    assert_eq!(e["event"], "ip_bans/added", "{e}");
    assert_eq!(e["params"][0]["ip"], "10.0.0.9", "{e}");
    call(&["ip_bans", "remove", "10.0.0.9"]);
    let e = next();
    assert_eq!(e["event"], "ip_bans/removed", "{e}");
    assert_eq!(e["params"][0], "10.0.0.9", "{e}");
}

/// `rcon --practice-mgmt` names its default secret on its start line and makes players join
/// and leave when told so on its stdin.
#[test]
fn practice_mgmt_takes_joins_and_leaves_from_stdin() {
    let home = home();
    let mut server = Killed(
        rcon_in(home.path())
            .args(["--practice-mgmt", "127.0.0.1:0"])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .expect("spawn rcon --practice-mgmt"),
    );
    let url = common::lines_of(&mut server.0).recv().expect("the URL");
    let mut start = String::new();
    BufReader::new(server.0.stderr.take().unwrap())
        .read_line(&mut start)
        .unwrap();
    assert!(start.contains("; the secret is practice;"), "{start}");
    assert!(start.contains("`join NAME` or `leave NAME`"), "{start}");
    let mut f = Follower::spawn(
        rcon_in(home.path())
            .args(["--mgmt", &url, "--follow"])
            .env("RCON_MGMT_SECRET", "practice"),
    );
    f.wait_err("following");
    let stdin = server.0.stdin.as_mut().unwrap();
    stdin.write_all(b"join Steve\n").unwrap();
    assert_eq!(after_time(&f.line()), "joined Steve");
    stdin.write_all(b"leave Steve\n").unwrap();
    assert_eq!(after_time(&f.line()), "left Steve");
}

/// A child process killed when the test ends, however it ends.
struct Killed(std::process::Child);

impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// The README's Quick tour, line by line (`sh -c`, so Unix only).
#[cfg(unix)]
mod tour {
    use std::process::Command;

    use crate::common::{self, home, rcon_in, run, stderr, stdout};

    /// Every line of the README's Quick tour, read from README.md, runs with its hosts and
    /// profiles pointed at practice servers; it must succeed with nothing refused. A new or
    /// changed line is covered as it is written; a line this test does not know how to run fails
    /// it until it is taught.
    #[test]
    fn every_quick_tour_line_runs_against_the_practice_server() {
        let readme = std::fs::read_to_string(concat!(env!("CARGO_MANIFEST_DIR"), "/README.md"))
            .expect("README.md");
        let lines = quick_tour(&readme);
        assert!(lines.len() >= 8, "{lines:?}");
        let servers: Vec<_> = (0..3).map(|_| common::strict_vanilla()).collect();
        let status = crate::status::slp_peer("modern", None);
        let home = home();
        let tour = Tour::new(home.path(), &servers);
        for line in &lines {
            // Needs an SSH server to log in to and a key made with ssh-keygen: tests/it/ssh.rs
            // runs --ssh against a real OpenSSH server.
            if line.contains("--ssh") {
                continue;
            }
            assert!(
                line.starts_with("rcon "),
                "the test cannot run {line:?} yet"
            );
            let ping_port = status.as_ref().map(|p| p.port);
            if line.contains("--ping") && ping_port.is_none() {
                continue;
            }
            let shell_line = rewrite_hosts(line, servers[0].port(), ping_port.unwrap_or(0));
            let before: usize = servers.iter().map(|s| s.commands().len()).sum();
            let out = run(&mut tour.sh(&shell_line));
            let (out_text, err_text) = (stdout(&out), stderr(&out));
            assert!(
                out.status.success(),
                "{line}\n{shell_line}\n{out_text}{err_text}"
            );
            assert!(!out_text.contains("<--[HERE]"), "{line}\n{out_text}");
            assert!(!err_text.contains("rcon: error"), "{line}\n{err_text}");
            let after: usize = servers.iter().map(|s| s.commands().len()).sum();
            let local = ["--demo", "--ping", "--install-links"];
            if !local.iter().any(|flag| line.contains(flag)) {
                assert!(after > before, "{line} sent nothing to the servers");
            }
        }
        assert!(tour.home.join(".local/bin/mcrcon").exists());
    }

    /// The command lines of the README's Quick tour block, comments removed.
    fn quick_tour(readme: &str) -> Vec<String> {
        let section = readme
            .split("\n## Quick tour\n")
            .nth(1)
            .expect("a Quick tour section");
        let block = section
            .split("```sh\n")
            .nth(1)
            .and_then(|b| b.split("\n```").next())
            .expect("a sh block in the Quick tour");
        block
            .lines()
            .map(|l| l.split("  #").next().unwrap_or(l).trim().to_string())
            .filter(|l| !l.is_empty())
            .collect()
    }

    /// The example hosts pointed at loopback: `mc.example.net:PORT` at the first server, a bare
    /// host at 127.0.0.1 (the port comes from RCON_PORT), the host after `--ping` at the status
    /// server.
    fn rewrite_hosts(line: &str, rcon_port: u16, ping_port: u16) -> String {
        let words: Vec<&str> = line.split(' ').collect();
        let mut out = Vec::new();
        for (i, word) in words.iter().enumerate() {
            let host = word.split(':').next().unwrap_or(word);
            let rewritten = match (host, i.checked_sub(1).map(|p| words[p])) {
                ("mc" | "mc.example.net", Some("--ping")) => format!("127.0.0.1:{ping_port}"),
                ("mc" | "mc.example.net", _) if word.contains(':') => {
                    format!("127.0.0.1:{rcon_port}")
                }
                ("mc" | "mc.example.net", _) => "127.0.0.1".to_string(),
                _ => word.to_string(),
            };
            out.push(rewritten);
        }
        out.join(" ")
    }

    /// Where the tour runs: a home whose config has the profiles the tour names (`survival`,
    /// `lobby1`, `lobby2`), a working directory with `build.mcfunction`, and `rcon` on PATH.
    struct Tour {
        home: std::path::PathBuf,
        bin: std::path::PathBuf,
        env: Command,
    }

    impl Tour {
        fn new(home: &std::path::Path, servers: &[rconsole::practice::PracticeServer]) -> Tour {
            use std::os::unix::fs::PermissionsExt;
            let config = home.join("config/rconsole");
            std::fs::create_dir_all(&config).unwrap();
            let mut profiles = String::new();
            for (name, server) in ["survival", "lobby1", "lobby2"].iter().zip(servers) {
                profiles.push_str(&format!(
                    "[servers.{name}]\nhost = \"127.0.0.1\"\nport = {}\npassword = \"{}\"\n\n",
                    server.port(),
                    common::PASSWORD
                ));
            }
            let file = config.join("config.toml");
            std::fs::write(&file, profiles).unwrap();
            std::fs::set_permissions(&file, std::fs::Permissions::from_mode(0o600)).unwrap();
            std::fs::write(home.join("build.mcfunction"), "say building\nlist\n").unwrap();
            std::fs::write(home.join("stdin.txt"), "list\n").unwrap();
            // No ~/.local/bin: a fresh account, where `--install-links` creates it.
            let bin = home.join("bin");
            std::fs::create_dir_all(&bin).unwrap();
            std::os::unix::fs::symlink(common::rcon_bin(), bin.join("rcon")).unwrap();
            let mut env = rcon_in(home);
            env.env("RCON_HOST", "127.0.0.1")
                .env("RCON_PORT", servers[0].port().to_string())
                .env("RCON_PASSWORD", common::PASSWORD)
                .env("PASS", common::PASSWORD);
            Tour {
                home: home.to_path_buf(),
                bin,
                env,
            }
        }

        /// `sh -c LINE` in the tour's home, with `list` on stdin (a console line without a
        /// terminal reads its commands there).
        fn sh(&self, line: &str) -> Command {
            let mut sh = Command::new("sh");
            sh.arg("-c").arg(line).current_dir(&self.home);
            common::copy_env(&self.env, &mut sh);
            let path = std::env::var("PATH").unwrap_or_default();
            sh.env("PATH", format!("{}:{path}", self.bin.display()))
                .stdin(std::fs::File::open(self.home.join("stdin.txt")).unwrap());
            sh
        }
    }
}
