//! The config file, profiles, precedence (flags > environment > profile > defaults), password
//! sources and `--print-config`/`--list-servers`, run through the real binary in a temp home.

use std::path::{Path, PathBuf};
use std::time::Duration;

use crate::common::{PASSWORD, home, rcon_in, run, stderr, stdout};
use rconsole::practice::{PracticeConfig, PracticeMode, PracticeServer};

/// A vanilla practice server with its own password.
fn server_with(password: &str) -> PracticeServer {
    PracticeServer::start(PracticeConfig {
        password: password.into(),
        mode: PracticeMode::Vanilla,
        read_delay: Duration::from_millis(1),
        ..PracticeConfig::default()
    })
    .expect("start practice server")
}

/// Writes `text` as the default config file in `home` (Linux/BSD layout via XDG_CONFIG_HOME)
/// and returns its path; owner-only permissions so no warning is printed.
fn write_config(dir: &Path, text: &str) -> PathBuf {
    let path = dir.join("rcon-test.toml");
    std::fs::write(&path, text).unwrap();
    private(&path);
    path
}

fn private(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o600)).unwrap();
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// Asserts no secret leaked into either stream.
fn no_secret(out: &std::process::Output, secrets: &[&str]) {
    for s in secrets {
        assert!(
            !stdout(out).contains(s),
            "stdout leaks {s}: {}",
            stdout(out)
        );
        assert!(
            !stderr(out).contains(s),
            "stderr leaks {s}: {}",
            stderr(out)
        );
    }
}

/// The line of `--print-config` output for `key`.
fn row(out: &std::process::Output, key: &str) -> String {
    stdout(out)
        .lines()
        .find(|l| l.split_whitespace().next() == Some(key))
        .unwrap_or_else(|| panic!("no {key} row in:\n{}", stdout(out)))
        .to_string()
}

fn two_profiles(a: &PracticeServer, b: &PracticeServer) -> String {
    format!(
        "# two servers\n[servers.alpha]\nhost = \"127.0.0.1\"\nport = {}\npassword = \"pw-alpha-1\"\n\n[servers.beta]\nhost = \"127.0.0.1:{}\"\npassword = \"pw-beta-2\"\ntimeout = \"4s\"\n",
        a.port(),
        b.port()
    )
}

#[test]
fn dash_s_talks_to_the_named_server() {
    let (a, b) = (server_with("pw-alpha-1"), server_with("pw-beta-2"));
    let home = home();
    let cfg = write_config(home.path(), &two_profiles(&a, &b));

    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .args(["-s", "beta", "list"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stdout(&out).contains("players online"), "{}", stdout(&out));
    assert_eq!(b.commands(), ["list"]);
    assert!(a.commands().is_empty());

    let out = run(rcon_in(home.path())
        .args(["--config"])
        .arg(&cfg)
        .env("RCON_SERVER", "alpha")
        .arg("seed"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(a.commands(), ["seed"]);
    assert_eq!(b.commands(), ["list"]);
    no_secret(&out, &["pw-alpha-1", "pw-beta-2"]);
}

#[test]
fn default_profile_applies_without_dash_s() {
    let (a, b) = (server_with("pw-alpha-1"), server_with("pw-beta-2"));
    let home = home();
    let text = two_profiles(&a, &b).replace("[servers.beta]", "[servers.default]");
    let cfg = write_config(home.path(), &text);
    let out = run(rcon_in(home.path()).env("RCON_CONFIG", &cfg).arg("list"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(b.commands(), ["list"]);
    // -s still picks another one.
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .args(["-s", "alpha", "list"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(a.commands(), ["list"]);
}

#[test]
fn print_config_shows_sources_and_no_password() {
    let home = home();
    let cfg = write_config(
        home.path(),
        "[servers.survival]\nhost = \"profile.example\"\nport = 1111\npassword = \"s3cret-in-file\"\ntimeout = \"3s\"\nsentinel = \"idle\"\n",
    );
    // Profile values and defaults.
    let out = run(rcon_in(home.path()).env("RCON_CONFIG", &cfg).args([
        "-s",
        "survival",
        "--print-config",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let at = |line: u32| format!("profile survival ({}:{line})", cfg.display());
    assert!(row(&out, "host").contains("profile.example"));
    assert!(row(&out, "host").ends_with(&at(2)), "{}", row(&out, "host"));
    assert!(row(&out, "port").ends_with(&at(3)), "{}", row(&out, "port"));
    assert!(row(&out, "password").contains("********"));
    assert!(row(&out, "password").ends_with(&at(4)));
    assert!(row(&out, "timeout").contains("3s"));
    assert!(row(&out, "sentinel").ends_with(&at(6)));
    assert!(row(&out, "idle_gap").ends_with("default"));
    assert!(row(&out, "server").contains("flag --server"));
    assert!(row(&out, "config").contains(&cfg.display().to_string()));
    no_secret(&out, &["s3cret-in-file"]);

    // Environment beats the profile; flags beat the environment.
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .env("RCON_SERVER", "survival")
        .env("RCON_HOST", "env.example")
        .env("RCON_PORT", "2222")
        .env("RCON_PASSWORD", "s3cret-from-env")
        .env("RCON_TIMEOUT", "7s")
        .args(["--port", "3333", "--timeout", "9s", "--print-config"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(row(&out, "server").ends_with("env RCON_SERVER"));
    assert!(row(&out, "host").contains("env.example"));
    assert!(row(&out, "host").ends_with("env RCON_HOST"));
    assert!(row(&out, "port").contains("3333"));
    assert!(row(&out, "port").ends_with("flag --port"));
    assert!(row(&out, "password").ends_with("env RCON_PASSWORD"));
    assert!(row(&out, "timeout").contains("9s"));
    assert!(row(&out, "timeout").ends_with("flag --timeout"));
    assert!(row(&out, "sentinel").ends_with(&at(6)));
    no_secret(&out, &["s3cret-in-file", "s3cret-from-env"]);

    // A flag password is masked too.
    let out = run(rcon_in(home.path()).env("RCON_CONFIG", &cfg).args([
        "-p",
        "s3cret-flag",
        "--print-config",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(row(&out, "password").ends_with("flag --password"));
    assert!(row(&out, "host").ends_with("default"));
    no_secret(&out, &["s3cret-flag"]);
}

#[test]
fn precedence_when_connecting() {
    let server = server_with(PASSWORD);
    let home = home();
    let cfg = write_config(
        home.path(),
        &format!(
            "[servers.default]\nhost = \"127.0.0.1\"\nport = {}\npassword = \"wrong-profile\"\n",
            server.port()
        ),
    );
    // The profile's wrong password: login refused (5).
    let out = run(rcon_in(home.path()).env("RCON_CONFIG", &cfg).arg("list"));
    assert_eq!(out.status.code(), Some(5), "{}", stderr(&out));
    // The environment beats the profile.
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .env("RCON_PASSWORD", PASSWORD)
        .arg("list"));
    assert!(out.status.success(), "{}", stderr(&out));
    // A flag beats the environment.
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .env("RCON_PASSWORD", "wrong-env")
        .args(["-p", PASSWORD, "list"]));
    assert!(out.status.success(), "{}", stderr(&out));
    // RCON_PORT beats the profile's port (nothing listens on port 1: cannot connect, 4).
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .env("RCON_PASSWORD", PASSWORD)
        .env("RCON_PORT", "1")
        .arg("list"));
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    no_secret(&out, &["wrong-profile", PASSWORD]);
    assert_eq!(server.commands(), ["list", "list"]);
}

#[test]
fn password_file_flag_and_env() {
    let server = server_with(PASSWORD);
    let home = home();
    let file = home.path().join("secret");
    std::fs::write(&file, format!("{PASSWORD}\n")).unwrap();
    let base = || {
        let mut c = rcon_in(home.path());
        c.args(["-H", "127.0.0.1", "-P", &server.port().to_string()]);
        c
    };
    let out = run(base().arg("--password-file").arg(&file).arg("list"));
    assert!(out.status.success(), "{}", stderr(&out));
    let out = run(base().env("RCON_PASSWORD_FILE", &file).arg("seed"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.commands(), ["list", "seed"]);
    // --password-file (a flag) beats RCON_PASSWORD (the environment).
    let out = run(base()
        .env("RCON_PASSWORD", "wrong")
        .arg("--password-file")
        .arg(&file)
        .arg("list"));
    assert!(out.status.success(), "{}", stderr(&out));
    // Both password flags: usage error.
    let out = run(base()
        .args(["-p", "x", "--password-file"])
        .arg(&file)
        .arg("list"));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    // A missing file: configuration error naming it.
    let out = run(base()
        .arg("--password-file")
        .arg(home.path().join("nope"))
        .arg("list"));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("nope"));
    assert!(stderr(&out).contains("--password-file"));
    no_secret(&out, &[PASSWORD]);
}

#[test]
fn profile_password_file_is_relative_to_the_config() {
    let server = server_with(PASSWORD);
    let home = home();
    std::fs::write(home.path().join("pw.txt"), format!("{PASSWORD}\r\n")).unwrap();
    let cfg = write_config(
        home.path(),
        &format!(
            "[servers.s]\nhost = \"127.0.0.1\"\nport = {}\npassword_file = \"pw.txt\"\n",
            server.port()
        ),
    );
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .args(["-s", "s", "list"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.commands(), ["list"]);
}

#[test]
fn profile_password_command() {
    let server = server_with(PASSWORD);
    let home = home();
    // cmd's `echo` ends the line with \r\n, which is stripped like \n.
    let print = if cfg!(windows) {
        format!("echo {PASSWORD}")
    } else {
        // Doubled: the TOML string below reads `\\` as one backslash.
        format!("printf '%s\\\\n' {PASSWORD}")
    };
    let cfg = write_config(
        home.path(),
        &format!(
            "[servers.s]\nhost = \"127.0.0.1\"\nport = {}\npassword_command = \"{print}\"\n\n[servers.bad]\nhost = \"127.0.0.1\"\nport = {}\npassword_command = \"exit 7\"\n",
            server.port(),
            server.port()
        ),
    );
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .args(["-s", "s", "list"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let out =
        run(rcon_in(home.path())
            .env("RCON_CONFIG", &cfg)
            .args(["-s", "s", "--print-config"]));
    assert!(row(&out, "password").contains("password_command"));
    no_secret(&out, &[PASSWORD]);
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .args(["-s", "bad", "list"]));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("password command"));
    assert_eq!(server.commands(), ["list"]);
}

#[test]
fn mcrcon_variables_are_fallbacks() {
    let server = server_with(PASSWORD);
    let home = home();
    let out = run(rcon_in(home.path())
        .env("MCRCON_HOST", "127.0.0.1")
        .env("MCRCON_PORT", server.port().to_string())
        .env("MCRCON_PASS", PASSWORD)
        .arg("list"));
    assert!(out.status.success(), "{}", stderr(&out));
    // RCON_PASSWORD wins over MCRCON_PASS.
    let out = run(rcon_in(home.path())
        .env("MCRCON_HOST", "127.0.0.1")
        .env("MCRCON_PORT", server.port().to_string())
        .env("MCRCON_PASS", "wrong")
        .env("RCON_PASSWORD", PASSWORD)
        .arg("seed"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.commands(), ["list", "seed"]);
    let out = run(rcon_in(home.path())
        .env("MCRCON_HOST", "127.0.0.1")
        .env("MCRCON_PASS", PASSWORD)
        .arg("--print-config"));
    assert!(row(&out, "host").ends_with("env MCRCON_HOST"));
    assert!(row(&out, "password").ends_with("env MCRCON_PASS"));
    no_secret(&out, &[PASSWORD]);
}

#[test]
fn no_password_and_no_terminal_lists_the_ways_and_exits_2() {
    let server = server_with(PASSWORD);
    let home = home();
    let out = run(rcon_in(home.path()).args([
        "-H",
        "127.0.0.1",
        "-P",
        &server.port().to_string(),
        "list",
    ]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    for way in [
        "--password",
        "RCON_PASSWORD",
        "--password-file",
        "RCON_PASSWORD_FILE",
        "password_file",
        "password_command",
        "MCRCON_PASS",
    ] {
        assert!(err.contains(way), "{way} missing from: {err}");
    }
    assert_eq!(server.connections(), 0);
}

#[test]
fn typo_in_a_profile_key_exits_3_naming_file_line_and_key() {
    let home = home();
    let cfg = write_config(
        home.path(),
        "[servers.a]\nhost = \"x\"\n\n[servers.survival]\nhots = \"y\"\npasword = \"hunter\"\n",
    );
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .args(["-s", "survival", "list"]));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains(&format!("{}:5:", cfg.display())),
        "file and line: {err}"
    );
    assert!(err.contains("'hots'"), "key: {err}");
    assert_eq!(err.lines().count(), 1, "{err}");

    // A bad value names the key, and a mistyped password value is not echoed.
    let cfg = write_config(home.path(), "[servers.a]\nport = \"abc\"\n");
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .arg("--print-config"));
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("key 'port'"), "{}", stderr(&out));
    let cfg = write_config(home.path(), "[servers.a]\npassword = 424242\n");
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .arg("--print-config"));
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("key 'password'"), "{}", stderr(&out));
    no_secret(&out, &["424242"]);
}

#[test]
fn unknown_profile_exits_3_listing_the_names() {
    let home = home();
    let cfg = write_config(home.path(), "[servers.alpha]\n[servers.beta]\n");
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .args(["-s", "gamma", "list"]));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("'gamma'"));
    assert!(stderr(&out).contains("alpha, beta"), "{}", stderr(&out));
    // No config file at all.
    let out = run(rcon_in(home.path()).args(["-s", "gamma", "list"]));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    // --no-config with -s is a usage error.
    let out = run(rcon_in(home.path()).args(["--no-config", "-s", "gamma", "list"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn missing_default_file_is_fine_missing_named_file_is_not() {
    let home = home();
    let out = run(rcon_in(home.path()).arg("--print-config"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(row(&out, "config").contains("not found"));
    let missing = home.path().join("missing.toml");
    let out = run(rcon_in(home.path())
        .arg("--config")
        .arg(&missing)
        .arg("--print-config"));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(stderr(&out).contains("missing.toml"));
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &missing)
        .arg("--list-servers"));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
}

#[test]
fn no_config_ignores_even_a_broken_file() {
    let home = home();
    let cfg = write_config(home.path(), "this is not toml [");
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .arg("--print-config"));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .args(["--no-config", "--print-config"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(row(&out, "config").contains("--no-config"));
    // --help and --version never read the config file.
    for flag in ["--help", "--version", "-h"] {
        let out = run(rcon_in(home.path()).env("RCON_CONFIG", &cfg).arg(flag));
        assert!(out.status.success(), "{flag}: {}", stderr(&out));
    }
}

#[cfg(target_os = "linux")]
#[test]
fn default_path_is_under_xdg_config_home() {
    let home = home();
    let dir = home.path().join("config").join("rconsole");
    std::fs::create_dir_all(&dir).unwrap();
    let path = dir.join("config.toml");
    std::fs::write(&path, "[servers.default]\nhost = \"from-default-file\"\n").unwrap();
    let out = run(rcon_in(home.path())
        .env_remove("RCON_CONFIG_DIR")
        .arg("--print-config"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(row(&out, "config").contains(&path.display().to_string()));
    assert!(row(&out, "host").contains("from-default-file"));
}

/// `RCON_CONFIG_DIR` moves the default path on every platform (Windows ignores `APPDATA`, so
/// this is what keeps these tests off a real user's config there): the file is read as the
/// default one, and a missing one is fine, as at the platform's path.
#[test]
fn config_dir_variable_moves_the_default_path() {
    let home = home();
    let dir = home.path().join("portable config");
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG_DIR", &dir)
        .arg("--print-config"));
    assert!(out.status.success(), "{}", stderr(&out));
    let expected = dir.join("config.toml").display().to_string();
    assert!(row(&out, "config").contains(&expected), "{}", stdout(&out));
    assert!(
        row(&out, "config").contains("not found"),
        "{}",
        stdout(&out)
    );
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("config.toml"),
        "[servers.default]\nhost = \"from-config-dir\"\n",
    )
    .unwrap();
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG_DIR", &dir)
        .arg("--print-config"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        row(&out, "config").contains("default path"),
        "{}",
        stdout(&out)
    );
    assert!(
        row(&out, "host").contains("from-config-dir"),
        "{}",
        stdout(&out)
    );
}

/// A password command holding a quoted path with spaces runs as typed: on Windows `cmd.exe`
/// gets the line unquoted (issue 12: std's quoting turned `"` into `\"` and this exited 3).
#[test]
fn password_command_with_a_quoted_path_with_spaces() {
    let server = server_with(PASSWORD);
    let home = home();
    let dir = home.path().join("my secrets");
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("pw file.txt");
    std::fs::write(&file, format!("{PASSWORD}\n")).unwrap();
    let reader = if cfg!(windows) { "type" } else { "cat" };
    let command = format!("{reader} \"{}\"", file.display());
    let cfg = write_config(
        home.path(),
        &format!(
            "[servers.s]\nhost = \"127.0.0.1\"\nport = {}\npassword_command = '{command}'\n",
            server.port()
        ),
    );
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .args(["-s", "s", "list"]));
    assert!(out.status.success(), "{command}: {}", stderr(&out));
    assert_eq!(server.commands(), ["list"]);
    no_secret(&out, &[PASSWORD]);
}

#[cfg(unix)]
#[test]
fn readable_config_with_a_password_warns_once() {
    use std::os::unix::fs::PermissionsExt;
    let home = home();
    let cfg = write_config(home.path(), "[servers.default]\npassword = \"pw-x\"\n");
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .arg("--print-config"));
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
    std::fs::set_permissions(&cfg, std::fs::Permissions::from_mode(0o640)).unwrap();
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .arg("--print-config"));
    assert!(out.status.success());
    assert_eq!(
        stderr(&out).matches("warning").count(),
        1,
        "{}",
        stderr(&out)
    );
    assert!(stderr(&out).contains("chmod 600"));
    no_secret(&out, &["pw-x"]);
    // No password in the file: no warning.
    let cfg = home.path().join("open.toml");
    std::fs::write(&cfg, "[servers.default]\nhost = \"h\"\n").unwrap();
    std::fs::set_permissions(&cfg, std::fs::Permissions::from_mode(0o644)).unwrap();
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .arg("--print-config"));
    assert!(!stderr(&out).contains("warning"), "{}", stderr(&out));
}

#[test]
fn list_servers_shows_names_and_addresses_only() {
    let home = home();
    let cfg = write_config(
        home.path(),
        "[servers.survival]\nhost = \"mc.example.com\"\npassword = \"pw-list\"\n\n[servers.creative]\nhost = \"[::1]:25580\"\n\n[servers.local]\nport = 25599\n",
    );
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .arg("--list-servers"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "creative  [::1]:25580\nlocal     localhost:25599\nsurvival  mc.example.com:25575\n"
    );
    no_secret(&out, &["pw-list"]);
    // No file: nothing on stdout, a note on stderr, success.
    let out = run(rcon_in(home.path()).arg("--list-servers"));
    assert!(out.status.success());
    assert!(out.stdout.is_empty());
}

/// Every `[servers.…]` TOML example in README.md and docs/ must load (so the documented example
/// stays valid as keys change).
#[test]
fn documented_examples_load() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut found = 0;
    for doc in ["README.md", "docs/config.md"] {
        let Ok(text) = std::fs::read_to_string(root.join(doc)) else {
            continue;
        };
        for block in text.split("```toml\n").skip(1) {
            let block = block.split("```").next().unwrap();
            if !block.contains("[servers.") {
                continue;
            }
            found += 1;
            let home = home();
            let cfg = write_config(home.path(), block);
            let out = run(rcon_in(home.path())
                .env("RCON_CONFIG", &cfg)
                .arg("--list-servers"));
            assert!(out.status.success(), "{doc}: {}", stderr(&out));
            assert!(stdout(&out).contains("survival"), "{doc}: {}", stdout(&out));
        }
    }
    assert!(
        found > 0,
        "no configuration example found in README.md or docs/"
    );
}

#[test]
fn empty_variables_count_as_unset() {
    let home = home();
    let cfg = write_config(home.path(), "[servers.default]\nhost = \"from-profile\"\n");
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", &cfg)
        .env("RCON_HOST", "")
        .env("RCON_SERVER", "")
        .env("RCON_PASSWORD", "")
        .env("MCRCON_HOST", "")
        .arg("--print-config"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        row(&out, "host").contains("from-profile"),
        "{}",
        stdout(&out)
    );
    // Not set; no terminal to ask on in a test.
    assert!(
        row(&out, "password").contains("(not set, and no terminal to ask on"),
        "{}",
        stdout(&out)
    );
    // An empty RCON_CONFIG means the default path.
    let out = run(rcon_in(home.path())
        .env("RCON_CONFIG", "")
        .arg("--print-config"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        row(&out, "config").contains("default path"),
        "{}",
        stdout(&out)
    );
}
