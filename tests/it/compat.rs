//! The drop-in personalities (issue 23): rcon linked as `mcrcon` and `rcon-cli` by its own
//! `--install-links`, and `rcon --compat NAME`, run against the practice server with those
//! programs' documented examples (from mcrcon's README and man page and rcon-cli's README, in our
//! words); their exit statuses; rcon's note for one of its options after the command.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;

/// `rcon --install-links` into `home/bin`; returns that directory.
fn links(home: &Path) -> PathBuf {
    let dir = home.join("bin");
    std::fs::create_dir_all(&dir).unwrap();
    let out = run(rcon_in(home).arg("--install-links").arg(&dir));
    assert!(out.status.success(), "{}", stderr(&out));
    dir
}

/// The personality `name` as linked in `dir`, with the hermetic environment of [`rcon_in`].
fn as_program(dir: &Path, name: &str, home: &Path) -> Command {
    program_in(
        &dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX)),
        home,
    )
}

/// A strict vanilla server, a fresh home and the links in it.
struct Setup {
    server: rconsole::practice::PracticeServer,
    home: tempfile::TempDir,
    dir: PathBuf,
}

impl Setup {
    fn new() -> Setup {
        let home = home();
        let dir = links(home.path());
        Setup {
            server: strict_vanilla(),
            home,
            dir,
        }
    }

    /// The personality `name` with nothing set.
    fn bare(&self, name: &str) -> Command {
        as_program(&self.dir, name, self.home.path())
    }

    /// mcrcon pointed at the server with the test password (`-H -P -p`).
    fn mcrcon(&self) -> Command {
        let mut cmd = self.bare("mcrcon");
        let port = self.server.port().to_string();
        cmd.args(["-H", "127.0.0.1", "-P", &port, "-p", PASSWORD]);
        cmd
    }

    /// rcon-cli pointed at the server with the test password (`--host --port --password`).
    fn rcon_cli(&self) -> Command {
        let mut cmd = self.bare("rcon-cli");
        let port = self.server.port().to_string();
        cmd.args([
            "--host",
            "127.0.0.1",
            "--port",
            &port,
            "--password",
            PASSWORD,
        ]);
        cmd
    }
}

/// Runs `cmd` with `input` on its stdin through a pipe.
fn run_piped(cmd: &mut Command, input: &str) -> Output {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn");
    let mut stdin = child.stdin.take().expect("stdin");
    stdin.write_all(input.as_bytes()).unwrap();
    drop(stdin);
    wait_with_timeout(child, Duration::from_secs(120))
}

/// The practice server's `help` whole: one line from its first command to its last.
fn has_whole_help(text: &str) -> bool {
    text.lines().any(|l| {
        l.starts_with("/advancement")
            && l.ends_with("/whitelist (add|list|off|on|reload|remove)")
            && l.encode_utf16().count() > 4096
    })
}

#[test]
fn install_links_makes_both_names_and_never_replaces_another_program() {
    let home = home();
    let dir = links(home.path());
    for name in ["mcrcon", "rcon-cli"] {
        let link = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
        assert!(link.exists(), "{} missing", link.display());
    }
    // Again: nothing to do, and it says so.
    let again = run(rcon_in(home.path()).arg("--install-links").arg(&dir));
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(stdout(&again).matches("already runs").count(), 2);
    // A real mcrcon already there is left alone: exit 2, the file unchanged.
    let other = home.path().join("other");
    std::fs::create_dir_all(&other).unwrap();
    let foreign = other.join(format!("mcrcon{}", std::env::consts::EXE_SUFFIX));
    std::fs::write(&foreign, b"a different program").unwrap();
    let out = run(rcon_in(home.path()).arg("--install-links").arg(&other));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("exists and is not this rcon"));
    assert_eq!(std::fs::read(&foreign).unwrap(), b"a different program");
    // A file where the directory should be: a usage error.
    let file = home.path().join("a-file");
    std::fs::write(&file, b"not a directory").unwrap();
    let out = run(rcon_in(home.path()).arg("--install-links").arg(&file));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("is not a directory"),
        "{}",
        stderr(&out)
    );
}

/// The README's `rcon --install-links ~/.local/bin` on a fresh account, where that directory
/// does not exist yet: it is created, said so, and both names are in it.
#[test]
fn install_links_creates_a_missing_directory() {
    let home = home();
    let dir = home.path().join(".local").join("bin");
    let out = run(rcon_in(home.path()).arg("--install-links").arg(&dir));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).starts_with(&format!("created {}\n", dir.display())),
        "{}",
        stdout(&out)
    );
    for name in ["mcrcon", "rcon-cli"] {
        let link = dir.join(format!("{name}{}", std::env::consts::EXE_SUFFIX));
        assert!(link.exists(), "{} missing", link.display());
    }
}

#[test]
fn mcrcon_runs_each_argument_as_a_command_and_prints_help_whole() {
    let t = Setup::new();
    let out = run(t.mcrcon().args(["-c", "say hi", "list", "help"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(t.server.commands(), ["say hi", "list", "help"]);
    let text = stdout(&out);
    assert!(text.contains("There are 0 of a max of 20 players online"));
    assert!(
        has_whole_help(&text),
        "help not whole: {} bytes",
        text.len()
    );
    assert!(
        t.server.violations().is_empty(),
        "{:?}",
        t.server.violations()
    );
}

#[test]
fn mcrcon_readme_example_waits_between_commands_and_goes_on_past_unknown_ones() {
    // README: three commands with five seconds between them; here one second, and a command
    // the server does not know before the last: its parse error is printed and the run goes
    // on to stop, as mcrcon does (exit 0).
    let t = Setup::new();
    let start = Instant::now();
    let out = run(t.mcrcon().args([
        "-w",
        "1",
        "say Server is restarting!",
        "save-all",
        "frobnicate",
        "stop",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        t.server.commands(),
        [
            "say Server is restarting!",
            "save-all",
            "frobnicate",
            "stop"
        ]
    );
    assert!(stdout(&out).contains("Saved the game"), "{}", stdout(&out));
    assert!(stdout(&out).contains("<--[HERE]"), "{}", stdout(&out));
    assert!(stdout(&out).contains("Stopping the server"));
    // -w's pauses are a floor (two of one second each), not a speed measurement.
    assert!(
        start.elapsed() >= Duration::from_secs(2),
        "no pause between commands"
    );
}

#[test]
fn mcrcon_man_page_example_with_a_custom_port() {
    // The man page: one quoted command with a space, to a server on another port.
    let t = Setup::new();
    let out = run(t.mcrcon().arg("echo weather clear"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(t.server.commands(), ["echo weather clear"]);
    assert_eq!(stdout(&out), "weather clear\n");
}

#[test]
fn mcrcon_silent_raw_and_colours() {
    let t = Setup::new();
    // -s: the commands run, nothing is printed.
    let out = run(t.mcrcon().args(["-s", "list", "help"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "");
    assert_eq!(t.server.commands(), ["list", "help"]);
    // -r: the answer as received, § codes kept; -c: codes stripped.
    let out = run(t.mcrcon().args(["-r", "echo §6gold"]));
    assert_eq!(stdout(&out), "§6gold\n", "{}", stderr(&out));
    let out = run(t.mcrcon().args(["-c", "echo §6gold"]));
    assert_eq!(stdout(&out), "gold\n", "{}", stderr(&out));
}

#[test]
fn mcrcon_environment_and_options_over_it() {
    let t = Setup::new();
    let port = t.server.port().to_string();
    let with_env = |pass: &str| {
        let mut cmd = t.bare("mcrcon");
        cmd.env("MCRCON_HOST", "127.0.0.1")
            .env("MCRCON_PORT", &port)
            .env("MCRCON_PASS", pass);
        cmd
    };
    let out = run(with_env(PASSWORD).arg("seed"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "Seed: [-4172144997902289642]\n");
    // -p wins over a wrong MCRCON_PASS.
    let out = run(with_env("wrong").args(["-p", PASSWORD, "seed"]));
    assert!(out.status.success(), "{}", stderr(&out));
    // rcon's own variables and config file are not mcrcon's: a wrong RCON_PORT, a tiny
    // RCON_TIMEOUT and a default profile elsewhere change nothing.
    let config = t.home.path().join("config").join("rconsole");
    std::fs::create_dir_all(&config).unwrap();
    std::fs::write(
        config.join("config.toml"),
        "[servers.default]\nhost = \"192.0.2.1\"\nport = 1\n",
    )
    .unwrap();
    let out = run(t
        .mcrcon()
        .env("RCON_PORT", "1")
        .env("RCON_TIMEOUT", "1ms")
        .arg("seed"));
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn mcrcon_reads_piped_lines_without_commands() {
    // mcrcon with no command opens its terminal mode, which reads piped lines too.
    let t = Setup::new();
    let out = run_piped(&mut t.mcrcon(), "list\nseed\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(t.server.commands(), ["list", "seed"]);
}

#[test]
fn mcrcon_exits_1_on_any_failure() {
    let t = Setup::new();
    let port = t.server.port().to_string();
    // A wrong password (rcon's own status would be 5).
    let out = run(t
        .bare("mcrcon")
        .args(["-H", "127.0.0.1", "-P", &port, "-p", "wrong", "list"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stderr(&out).contains("wrong password"), "{}", stderr(&out));
    // Nothing listening (rcon's would be 4).
    let held = crate::common::closed_port();
    let closed = held.port().to_string();
    let out =
        run(t
            .bare("mcrcon")
            .args(["-H", "127.0.0.1", "-P", &closed, "-p", PASSWORD, "list"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    // An unknown option or a bad -w: one line, nothing sent (rcon's usage status would be 2).
    for bad in [&["-x", "list"][..], &["-w", "0", "list"], &["list", "-P"]] {
        let out = run(t.mcrcon().args(bad));
        assert_eq!(out.status.code(), Some(1), "{bad:?}: {}", stderr(&out));
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
        assert!(
            stderr(&out).starts_with("rcon: error: "),
            "{}",
            stderr(&out)
        );
    }
    assert!(t.server.commands().is_empty(), "{:?}", t.server.commands());
    // -h prints its usage, status 0.
    let out = run(t.bare("mcrcon").arg("-h"));
    assert!(out.status.success());
    assert!(
        stdout(&out).starts_with("Usage: mcrcon"),
        "{}",
        stdout(&out)
    );
}

/// Issue 41: with no password, the error lists what the personality reads and nothing else
/// (mcrcon reads no RCON_PASSWORD, no --password-file, no profile).
#[test]
fn a_missing_password_names_only_what_the_personality_reads() {
    let t = Setup::new();
    let port = t.server.port().to_string();
    let out = run(t.bare("mcrcon").env("RCON_PASSWORD", PASSWORD).args([
        "-H",
        "127.0.0.1",
        "-P",
        &port,
        "list",
    ]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("-p PASSWORD") && err.contains("MCRCON_PASS"),
        "{err}"
    );
    for foreign in ["RCON_PASSWORD", "--password-file", "profile", "--demo"] {
        assert!(!err.contains(foreign), "{foreign}: {err}");
    }
    let out = run(t.bare("rcon-cli").env("MCRCON_PASS", PASSWORD).args([
        "--host",
        "127.0.0.1",
        "--port",
        &port,
        "list",
    ]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("--password PASSWORD") && err.contains("RCON_PASSWORD"),
        "{err}"
    );
    for foreign in ["MCRCON_PASS", "--password-file", "profile", "--demo"] {
        assert!(!err.contains(foreign), "{foreign}: {err}");
    }
    assert!(t.server.commands().is_empty());
}

/// Issue 41: mcrcon's `-t` with piped input prints no console banner (stdin is no terminal);
/// the commands run, then the piped lines.
#[test]
fn mcrcon_terminal_mode_on_a_pipe_has_no_banner() {
    let t = Setup::new();
    let out = run_piped(t.mcrcon().arg("-t"), "echo p1\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!((stdout(&out).as_str(), stderr(&out).as_str()), ("p1\n", ""));
    let out = run_piped(t.mcrcon().args(["-t", "echo c1"]), "echo p2\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        (stdout(&out).as_str(), stderr(&out).as_str()),
        ("c1\np2\n", "")
    );
    assert_eq!(t.server.commands(), ["echo p1", "echo c1", "echo p2"]);
}

#[test]
fn rcon_cli_joins_the_words_into_one_command() {
    let t = Setup::new();
    let out = run(t.rcon_cli().args(["say", "hello", "world"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(t.server.commands(), ["say hello world"]);
    // Words with hyphens stay in the command; its own flags may follow them, as in cobra.
    let port = t.server.port().to_string();
    let out = run(t.bare("rcon-cli").args([
        "--host",
        "127.0.0.1",
        "echo",
        "tp @p 0 -60 0",
        "--port",
        &port,
        "--password",
        PASSWORD,
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "tp @p 0 -60 0\n");
}

#[test]
fn rcon_cli_readme_examples_with_the_environment() {
    // `rcon-cli --port 25575 stop` and `RCON_PORT=25575 rcon-cli stop`: the host defaults to
    // localhost, the password comes from RCON_PASSWORD (as in the itzg image).
    for by_env in [false, true] {
        let t = Setup::new();
        let port = t.server.port().to_string();
        let mut cmd = t.bare("rcon-cli");
        cmd.env("RCON_PASSWORD", PASSWORD);
        if by_env {
            cmd.env("RCON_PORT", &port);
        } else {
            cmd.args(["--port", &port]);
        }
        let out = run(cmd.arg("stop"));
        assert!(out.status.success(), "{by_env}: {}", stderr(&out));
        assert_eq!(t.server.commands(), ["stop"]);
        assert_eq!(stdout(&out), "Stopping the server\n");
    }
    // RCON_HOST too, and all three under the flags.
    let t = Setup::new();
    let out = run(t
        .bare("rcon-cli")
        .env("RCON_HOST", "127.0.0.1")
        .env("RCON_PORT", t.server.port().to_string())
        .env("RCON_PASSWORD", "wrong")
        .args(["--password", PASSWORD, "seed"]));
    assert!(out.status.success(), "{}", stderr(&out));
}

#[test]
fn rcon_cli_reads_its_config_file() {
    let t = Setup::new();
    let home = t.home.path();
    // What the itzg image writes into its data directory (the image's HOME).
    std::fs::write(
        home.join(".rcon-cli.yaml"),
        format!(
            "host: 127.0.0.1\nport: {}\npassword: \"{PASSWORD}\"\n",
            t.server.port()
        ),
    )
    .unwrap();
    let out = run(t.bare("rcon-cli").arg("list"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(t.server.commands(), ["list"]);
    // The .env form, named with --config.
    let env_file = home.join("other.env");
    std::fs::write(
        &env_file,
        format!("password={PASSWORD}\nport={}\n", t.server.port()),
    )
    .unwrap();
    let out = run(t.bare("rcon-cli").arg("--config").arg(&env_file).args([
        "--host",
        "127.0.0.1",
        "seed",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    // A config file it cannot read is an error naming the line.
    std::fs::write(home.join(".rcon-cli.yaml"), "rcon:\n  port: 1\n").unwrap();
    let out = run(t.bare("rcon-cli").arg("list"));
    assert_eq!(out.status.code(), Some(1));
    assert!(
        stderr(&out).contains(".rcon-cli.yaml:2"),
        "{}",
        stderr(&out)
    );
}

/// Issue 41: rcon-cli's defaults and config search are its current source's (cobra and viper),
/// not its README's usage text, which still says port 27015.
#[test]
fn rcon_cli_defaults_and_config_search_are_its_current_sources() {
    let t = Setup::new();
    let out = run(t.bare("rcon-cli").arg("--help"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stdout(&out).contains("(default: 25575)") && !stdout(&out).contains("27015"),
        "{}",
        stdout(&out)
    );
    // viper tries .json and .toml before .yaml: the first found is the one read.
    let home = t.home.path();
    std::fs::write(home.join(".rcon-cli.yaml"), "port: 1\npassword: wrong\n").unwrap();
    std::fs::write(
        home.join(".rcon-cli.toml"),
        format!(
            "host = \"127.0.0.1\"\nport = {}\npassword = \"{PASSWORD}\"\n",
            t.server.port()
        ),
    )
    .unwrap();
    let out = run(t.bare("rcon-cli").arg("list"));
    assert!(out.status.success(), "{}", stderr(&out));
    std::fs::write(
        home.join(".rcon-cli.json"),
        format!(
            "{{\"host\": \"127.0.0.1\", \"port\": {}, \"password\": \"{PASSWORD}\", \"extra\": [1]}}",
            t.server.port()
        ),
    )
    .unwrap();
    std::fs::remove_file(home.join(".rcon-cli.toml")).unwrap();
    let out = run(t.bare("rcon-cli").arg("seed"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(t.server.commands(), ["list", "seed"]);
}

/// Issue 41: rcon-cli's keyword `exit` closes its session, piped or typed, and never reaches
/// the server (where a Source server would stop).
#[test]
fn rcon_cli_exit_closes_the_session_and_is_never_sent() {
    let t = Setup::new();
    let out = run_piped(&mut t.rcon_cli(), "list\n  exit \nseed\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(t.server.commands(), ["list"]);
    // Any other word is a command, `exit` inside one too.
    let out = run_piped(&mut t.rcon_cli(), "say exit\nexit now\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(t.server.commands(), ["list", "say exit", "exit now"]);
    // mcrcon's personality has no such word: rcon's own rules.
    let out = run_piped(&mut t.mcrcon(), "exit\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(t.server.commands().last().map(String::as_str), Some("exit"));
}

#[cfg(unix)]
#[test]
fn rcon_cli_exit_leaves_its_console() {
    let t = Setup::new();
    let port = t.server.port().to_string();
    let program = t.dir.join("rcon-cli");
    let mut term = crate::common::term::Term::start_program(
        t.home.path(),
        &program,
        &["--host", "127.0.0.1", "--port", &port],
        &[],
    );
    let prompt = format!("127.0.0.1:{port}> ");
    term.wait_for(&prompt);
    term.wait_for("exit, :quit or Ctrl-D leaves");
    term.enter(&prompt, "echo one");
    term.line(&prompt, "exit");
    assert_eq!(term.exit_code(), 0, "{}", term.screen());
    assert_eq!(t.server.commands(), ["echo one"]);
}

#[test]
fn rcon_cli_reads_piped_lines_and_exits_1_on_failure() {
    // `docker exec -i mc rcon-cli` with commands on stdin.
    let t = Setup::new();
    let out = run_piped(&mut t.rcon_cli(), "list\nseed\n");
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(t.server.commands(), ["list", "seed"]);
    let out = run(t.rcon_cli().args(["--password", "wrong", "list"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    let out = run(t.bare("rcon-cli").args(["--bogus", "list"]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
}

#[test]
fn compat_flag_without_a_link() {
    let server = strict_vanilla();
    let home = home();
    let port = server.port().to_string();
    let out = run(rcon_in(home.path()).args([
        "--compat",
        "mcrcon",
        "-H",
        "127.0.0.1",
        "-P",
        &port,
        "-p",
        PASSWORD,
        "list",
        "seed",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(rcon_in(home.path()).args([
        "--compat=rcon-cli",
        "--host",
        "127.0.0.1",
        "--port",
        &port,
        "--password",
        PASSWORD,
        "echo",
        "a",
        "b",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.commands(), ["list", "seed", "echo a b"]);
    // Anywhere but first it is a usage error, and a personality's status is not used.
    let out = run(rcon_in(home.path()).args(["-H", "127.0.0.1", "--compat", "mcrcon", "list"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("must be the first argument"));
}

#[test]
fn an_rcon_option_after_the_command_is_sent_with_a_note() {
    let server = strict_vanilla();
    let home = home();
    let out = run(rcon_for(&server, home.path()).args(["echo", "x", "--json"]));
    assert!(out.status.success(), "{}", stderr(&out));
    // Sent as it was: the words after the command are the command's.
    assert_eq!(server.commands(), ["echo x --json"]);
    assert_eq!(stdout(&out), "x --json\n");
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.starts_with("rcon: note: '--json'"), "{err}");
    assert!(err.contains("rcon --json echo"), "{err}");
    // Negative numbers, unknown words and anything after `--` get no note.
    for words in [
        &["echo", "tp", "@p", "0", "-60", "0"][..],
        &["echo", "--bogus"],
        &["--", "echo", "--json"],
    ] {
        let out = run(rcon_for(&server, home.path()).args(words));
        assert!(out.status.success(), "{words:?}: {}", stderr(&out));
        assert_eq!(stderr(&out), "", "{words:?}");
    }
}

#[test]
fn mcrcon_habits_in_rcons_own_syntax_point_to_the_personality() {
    let home = home();
    for words in [
        &["-H", "h", "-p", "pw", "-t"][..],
        &["-w", "5", "say hi", "list"],
    ] {
        let out = run(rcon_in(home.path()).args(words));
        assert_eq!(out.status.code(), Some(2), "{words:?}: {}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(err.contains("rcon --compat mcrcon"), "{err}");
    }
}
