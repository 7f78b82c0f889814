//! `--ssh` and `--proxy-command` end to end: a real OpenSSH `sshd` started on loopback with a
//! generated host key and user key, tunnelling to a practice server. Needs `sshd`, `ssh` and
//! `ssh-keygen` (Debian: openssh-server, openssh-client); without them the sshd tests skip
//! loudly, or fail when RCONSOLE_STRICT=1 is set.

use std::process::Command;
use std::time::{Duration, Instant};

use crate::common::sshd::Sshd;
use crate::common::term::Term;
use crate::common::*;
use rconsole::practice::{PracticeMode, sample_text};

#[test]
fn commands_run_through_a_real_sshd() {
    let Some(sshd) = Sshd::start_if_installed() else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let out = run(sshd
        .rcon(home.path(), "user_key", "known_hosts", server.port())
        .args(["-c", "list", "-c", "chars 10000", "-c", "echo done"]));
    assert!(
        out.status.success(),
        "{}\nsshd log:\n{}",
        stderr(&out),
        sshd.log()
    );
    assert_eq!(
        stdout(&out),
        format!(
            "There are 0 of a max of 20 players online: \n{}\ndone\n",
            sample_text(10000)
        )
    );
    assert_eq!(server.violations(), Vec::<String>::new());
    assert_eq!(server.connections(), 1);
    assert_eq!(server.commands(), ["list", "chars 10000", "echo done"]);
    assert!(
        !stderr(&out).contains(PASSWORD) && !stdout(&out).contains(PASSWORD),
        "password leaked"
    );
}

#[test]
fn wrong_key_exits_9_naming_the_ssh_failure() {
    let Some(sshd) = Sshd::start_if_installed() else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let started = Instant::now();
    let out = run(sshd
        .rcon(home.path(), "wrong_key", "known_hosts", server.port())
        .arg("list"));
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.starts_with("rcon: error: "), "{err}");
    assert!(
        err.contains("ssh ") && err.contains("Permission denied"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "one line: {err}");
    assert_eq!(server.connections(), 0, "nothing reached the RCON server");
    assert!(
        started.elapsed() < Duration::from_secs(10),
        "failed fast, never prompted"
    );
}

#[test]
fn unknown_host_key_exits_9() {
    let Some(sshd) = Sshd::start_if_installed() else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let out = run(sshd
        .rcon(home.path(), "user_key", "empty_known_hosts", server.port())
        .arg("list"));
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("Host key verification failed"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.connections(), 0);
}

#[test]
fn closed_rcon_port_behind_the_tunnel_exits_9_with_the_reason() {
    let Some(sshd) = Sshd::start_if_installed() else {
        return;
    };
    let home = home();
    let closed = closed_port();
    let out = run(sshd
        .rcon(home.path(), "user_key", "known_hosts", closed.port())
        .arg("list"));
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("open failed") || err.contains("refused"),
        "{err}"
    );
}

#[test]
fn proxy_command_runs_ssh_with_placeholders() {
    let Some(sshd) = Sshd::start_if_installed() else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let mut proxy = String::from("ssh -o BatchMode=yes");
    for option in sshd.options("user_key", "known_hosts") {
        proxy.push_str(&format!(" -o '{option}'"));
    }
    proxy.push_str(&format!(
        " -p {} -W %h:%p {}@127.0.0.1",
        sshd.port, sshd.user
    ));
    let out = run(rcon_in(home.path())
        .env("RCON_PASSWORD", PASSWORD)
        .args(["--proxy-command", &proxy])
        .args(["-H", "127.0.0.1", "-P", &server.port().to_string()])
        .args(["-c", "seed", "-c", "chars 5000"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        format!("Seed: [-4172144997902289642]\n{}\n", sample_text(5000))
    );
}

#[test]
fn failing_proxy_command_exits_9_with_its_message() {
    let home = home();
    let out = run(rcon_in(home.path())
        .env("RCON_PASSWORD", PASSWORD)
        .args([
            "--proxy-command",
            "echo \"tunnel to %h port %p refused\" >&2; exit 3",
        ])
        .args(["-H", "mc.invalid", "-P", "25575", "list"]));
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "rcon: error: proxy command failed (exit status 3): tunnel to mc.invalid port 25575 refused; 1 command not sent\n"
    );
}

/// A tunnel that dies is exit 9 under every dialect that runs through one, not a lost
/// connection (7): the failure is the carrier's, whatever speaks over it.
#[test]
fn a_dead_tunnel_is_exit_9_for_every_dialect() {
    let home = home();
    for dialect in [
        "minecraft",
        "source",
        "factorio",
        "palworld",
        "telnet",
        "webrcon",
    ] {
        let out = run(rcon_in(home.path())
            .env("RCON_PASSWORD", PASSWORD)
            .args(["--dialect", dialect])
            .args(["--proxy-command", "sleep 0.2; echo tunnel gone >&2; exit 3"])
            .args(["-H", "game.invalid", "list"]));
        assert_eq!(out.status.code(), Some(9), "{dialect}: {}", stderr(&out));
        assert!(
            stderr(&out).contains("proxy command failed (exit status 3): tunnel gone"),
            "{dialect}: {}",
            stderr(&out)
        );
    }
}

/// The console dialects through a working proxy command: WebRCON's URL and `Host` name the
/// server behind the tunnel, not the tunnel's description.
#[test]
fn console_dialects_work_through_a_proxy_command() {
    use crate::consoles_common::console_server;
    use rconsole::consoles::practice::Kind;
    if Command::new("bash").arg("-c").arg("true").status().is_err() {
        crate::common::skip("bash not installed");
        return;
    }
    let proxy = "exec bash -c 'exec 3<>/dev/tcp/%h/%p; cat <&3 & cat >&3; wait'";
    for (kind, dialect) in [(Kind::WebRcon, "webrcon"), (Kind::Telnet, "telnet")] {
        let server = console_server(kind);
        let home = home();
        let out = run(rcon_in(home.path())
            .env("RCON_PASSWORD", PASSWORD)
            .args(["--proxy-command", proxy, "--dialect", dialect])
            .args(["-H", "127.0.0.1", "-P", &server.port().to_string()])
            .args(["-c", "echo through the tunnel"]));
        assert!(out.status.success(), "{dialect}: {}", stderr(&out));
        assert_eq!(stdout(&out), "through the tunnel\n", "{dialect}");
    }
}

#[test]
fn bad_ssh_destination_and_placeholder_are_usage_errors() {
    let home = home();
    for args in [
        &["--ssh", "user@", "list"][..],
        &["--ssh", "-oProxyCommand=x", "list"],
        &["--proxy-command", "nc %x", "list"],
    ] {
        let out = run(rcon_in(home.path())
            .env("RCON_PASSWORD", PASSWORD)
            .args(args));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
    }
}

#[test]
fn practice_server_in_palworld_mode_works_through_a_proxy_command_with_the_dialect() {
    // The tunnel is transparent to the dialect: `cat`-like plumbing via a shell proxy that
    // execs a second rcon practice client would be overkill; bash's /dev/tcp is enough.
    if Command::new("bash").arg("-c").arg("true").status().is_err() {
        crate::common::skip("bash not installed");
        return;
    }
    let server = server(PracticeMode::Palworld, Duration::ZERO);
    let home = home();
    let proxy = "exec bash -c 'exec 3<>/dev/tcp/%h/%p; cat <&3 & cat >&3; wait'";
    let out = run(rcon_in(home.path())
        .env("RCON_PASSWORD", PASSWORD)
        .args(["--proxy-command", proxy, "--dialect", "palworld"])
        .args(["-H", "127.0.0.1", "-P", &server.port().to_string()])
        .args(["-c", "echo hi", "-c", "list"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "hi\nThere are 0 of a max of 20 players online: \n"
    );
}

#[test]
fn several_targets_share_one_ssh_host() {
    let Some(sshd) = Sshd::start_if_installed() else {
        return;
    };
    let live = strict_vanilla();
    let gone = closed_port();
    let home = home();
    let mut cmd = rcon_in(home.path());
    cmd.env("RCON_PASSWORD", PASSWORD)
        .args(["--ssh", &sshd.destination()])
        .args(["--target", &format!("live=127.0.0.1:{}", live.port())])
        .args(["--target", &format!("gone=127.0.0.1:{}", gone.port())]);
    for option in sshd.options("user_key", "known_hosts") {
        cmd.args(["--ssh-option", &option]);
    }
    let out = run(cmd.arg("seed"));
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    assert_eq!(stdout(&out), "[live] Seed: [-4172144997902289642]\n");
    let err = stderr(&out);
    assert_eq!(
        err.lines().count(),
        1,
        "one line for the failed server: {err}"
    );
    assert!(err.starts_with("rcon: error: [gone] "), "{err}");
}

/// The interactive console through the tunnel: a real PTY, commands typed and answered, long
/// output in full, `:quit` exits 0.
#[test]
fn console_runs_through_a_real_sshd() {
    let Some(sshd) = Sshd::start_if_installed() else {
        return;
    };
    let server = server(PracticeMode::Vanilla, Duration::from_millis(2));
    let home = home();
    let port = server.port().to_string();
    let destination = sshd.destination();
    let mut args = vec![
        "--ssh",
        destination.as_str(),
        "-H",
        "127.0.0.1",
        "-P",
        &port,
    ];
    let options = sshd.options("user_key", "known_hosts");
    for option in &options {
        args.extend(["--ssh-option", option.as_str()]);
    }
    let mut term = Term::start_with(home.path(), &args);
    let prompt = format!("127.0.0.1:{port}> ");
    term.wait_for(&prompt);
    term.enter(&prompt, "echo through the tunnel");
    term.wait_for("through the tunnel");
    term.enter(&prompt, "chars 6000");
    term.wait_for_raw(&sample_text(6000));
    term.line(&prompt, ":quit");
    assert_eq!(term.exit_code(), 0, "{}", term.screen());
    assert_eq!(
        server.commands(),
        ["echo through the tunnel", "chars 6000"],
        "{}",
        sshd.log()
    );
}

/// The control sockets of the runs of `cmd`'s user under `tmp` (its TMPDIR, no
/// XDG_RUNTIME_DIR): connection sharing's directory (docs/ssh.md).
#[cfg(unix)]
fn control_sockets(tmp: &std::path::Path) -> Vec<std::path::PathBuf> {
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    std::fs::read_dir(tmp.join(format!("rconsole-ssh-{uid}")))
        .map(|dir| dir.flatten().map(|e| e.path()).collect())
        .unwrap_or_default()
}

/// How many SSH logins the sshd accepted.
fn logins_accepted(sshd: &Sshd) -> usize {
    sshd.log().matches("Accepted publickey").count()
}

/// Ends the shared connection behind `socket` (as a test must not leave it for its 60 s).
#[cfg(unix)]
fn close_master(socket: &std::path::Path) -> std::process::Output {
    Command::new("ssh")
        .arg("-o")
        .arg(format!("ControlPath={}", socket.display()))
        .args(["-O", "exit", "127.0.0.1"])
        .output()
        .expect("run ssh -O exit")
}

/// One-shots through `--ssh` to the same host share one SSH connection (issue 39): the sshd
/// accepts one login for three runs (`RCON_NO_SSH_REUSE=0` is no); `--no-ssh-reuse` (or
/// `RCON_NO_SSH_REUSE=1`) logs in each
/// time. The socket is in a 0700 directory of this user's under the temporary directory.
#[cfg(unix)]
#[test]
fn one_shots_through_ssh_share_one_connection_unless_told_not_to() {
    use std::os::unix::fs::{MetadataExt, PermissionsExt};
    let Some(sshd) = Sshd::start_if_installed() else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let tmp = tempfile::tempdir().unwrap();
    let one_shot = |extra: &[&str], env: Option<(&str, &str)>| {
        let mut cmd = sshd.rcon(home.path(), "user_key", "known_hosts", server.port());
        cmd.env("TMPDIR", tmp.path()).args(extra).arg("list");
        if let Some((key, value)) = env {
            cmd.env(key, value);
        }
        let out = run(&mut cmd);
        assert!(out.status.success(), "{}", stderr(&out));
        assert_eq!(stderr(&out), "", "nothing said");
    };
    one_shot(&[], None);
    one_shot(&[], None);
    // A variable that says no (`0`, `false`) leaves sharing on.
    one_shot(&[], Some(("RCON_NO_SSH_REUSE", "0")));
    assert_eq!(logins_accepted(&sshd), 1, "{}", sshd.log());
    let sockets = control_sockets(tmp.path());
    assert_eq!(sockets.len(), 1, "one control socket");
    let dir = std::fs::metadata(sockets[0].parent().unwrap()).unwrap();
    // SAFETY: geteuid has no preconditions.
    assert_eq!(dir.uid(), unsafe { libc::geteuid() });
    assert_eq!(dir.permissions().mode() & 0o777, 0o700);
    one_shot(&["--no-ssh-reuse"], None);
    one_shot(&[], Some(("RCON_NO_SSH_REUSE", "1")));
    assert_eq!(logins_accepted(&sshd), 3, "{}", sshd.log());
    assert_eq!(server.commands(), ["list"; 5]);
    assert!(close_master(&sockets[0]).status.success());
}

/// A sharing directory that is not this user's alone is refused (issue 39): one warning line,
/// the run goes on with its own connection, and no socket is made there.
#[cfg(unix)]
#[test]
fn a_sharing_directory_of_another_user_is_refused() {
    use std::os::unix::fs::PermissionsExt;
    let Some(sshd) = Sshd::start_if_installed() else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let tmp = tempfile::tempdir().unwrap();
    // SAFETY: geteuid has no preconditions.
    let uid = unsafe { libc::geteuid() };
    let dir = tmp.path().join(format!("rconsole-ssh-{uid}"));
    std::fs::create_dir(&dir).unwrap();
    let expected = if uid == 0 {
        // Planted by another user (root can make one).
        std::os::unix::fs::chown(&dir, Some(65534), Some(65534)).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        "is owned by uid 65534, not by you"
    } else {
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o777)).unwrap();
        "is open to other users"
    };
    for _ in 0..2 {
        let out = run(sshd
            .rcon(home.path(), "user_key", "known_hosts", server.port())
            .env("TMPDIR", tmp.path())
            .arg("list"));
        assert!(out.status.success(), "{}", stderr(&out));
        let err = stderr(&out);
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(
            err.starts_with("rcon: warning: not sharing SSH connections: ")
                && err.contains(expected),
            "{err}"
        );
    }
    assert_eq!(logins_accepted(&sshd), 2, "each run its own connection");
    assert_eq!(
        std::fs::read_dir(&dir).unwrap().count(),
        0,
        "no socket there"
    );
}

/// Another user cannot use this user's shared connection (issue 39): as root, a run's control
/// socket answers `ssh -O check` for root and refuses uid 65534 (`setpriv`), with the
/// temporary directory itself open to all.
#[cfg(target_os = "linux")]
#[test]
fn another_user_cannot_use_the_shared_connection() {
    use std::os::unix::fs::PermissionsExt;
    // SAFETY: geteuid has no preconditions.
    if unsafe { libc::geteuid() } != 0 {
        skip("not root: cannot run a command as another user");
        return;
    }
    if Command::new("setpriv").arg("--version").output().is_err() {
        skip("setpriv not installed (util-linux)");
        return;
    }
    let Some(sshd) = Sshd::start_if_installed() else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let tmp = tempfile::tempdir().unwrap();
    std::fs::set_permissions(tmp.path(), std::fs::Permissions::from_mode(0o1777)).unwrap();
    let out = run(sshd
        .rcon(home.path(), "user_key", "known_hosts", server.port())
        .env("TMPDIR", tmp.path())
        .arg("list"));
    assert!(out.status.success(), "{}", stderr(&out));
    let sockets = control_sockets(tmp.path());
    assert_eq!(sockets.len(), 1);
    let check = |as_other: bool| {
        let mut cmd = if as_other {
            let mut c = Command::new("setpriv");
            c.args(["--reuid=65534", "--regid=65534", "--clear-groups", "ssh"]);
            c
        } else {
            Command::new("ssh")
        };
        cmd.arg("-o")
            .arg(format!("ControlPath={}", sockets[0].display()))
            .args(["-O", "check", "127.0.0.1"])
            .output()
            .expect("run ssh -O check")
    };
    let own = check(false);
    assert!(own.status.success(), "{}", stderr(&own));
    let other = check(true);
    assert!(!other.status.success(), "another user reached the master");
    assert!(
        stderr(&other).contains("Permission denied"),
        "{}",
        stderr(&other)
    );
    assert!(close_master(&sockets[0]).status.success());
}
