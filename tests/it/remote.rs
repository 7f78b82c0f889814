//! `--remote` end to end (issue 21): a real OpenSSH `sshd` on loopback (tests/it/common/sshd.rs)
//! whose sessions get `RCON_DATA_DIR` from `SetEnv`, the binary under test on both sides
//! (`--remote-rcon` names it by its absolute path), a practice server behind. Needs `sshd`,
//! `ssh` and `ssh-keygen`; without them each test prints `SKIPPED` and passes, unless
//! RCONSOLE_STRICT=1 is set.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::sshd::Sshd;
use crate::common::*;
use rconsole::practice::{PracticeConfig, PracticeMode, PracticeServer, sample_text};

/// How long a test waits for something that should happen soon; a hang fails, never a delay.
const LIMIT: Duration = Duration::from_secs(60);

/// An sshd whose sessions keep rcon's data (the journal) in `data`.
fn remote_sshd(data: &Path) -> Option<Sshd> {
    Sshd::start_with_if_installed(&format!("SetEnv RCON_DATA_DIR={}\n", data.display()))
}

/// `rcon --ssh ... --remote` with the binary under test on the remote side.
fn rcon_remote(sshd: &Sshd, home: &Path, rcon_port: u16) -> Command {
    let mut cmd = sshd.rcon(home, "user_key", "known_hosts", rcon_port);
    cmd.arg("--remote").arg("--remote-rcon").arg(rcon_bin());
    cmd
}

fn numbered(n: usize) -> String {
    (1..=n).map(|i| format!("echo line {i}\n")).collect()
}

fn numbered_commands(n: usize) -> Vec<String> {
    (1..=n).map(|i| format!("echo line {i}")).collect()
}

#[test]
fn a_file_through_remote_prints_what_local_mode_prints() {
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let file = home.path().join("mixed.mcfunction");
    let mut text = String::from("# a comment\nlist\n/say with a slash\nchars 5000\n");
    text.push_str(&numbered(300));
    text.push_str("bogus command\necho after the failure\n");
    std::fs::write(&file, &text).unwrap();
    let file = file.to_str().unwrap();
    for extra in [
        &["--keep-going"][..],
        &["--keep-going", "--json"][..],
        &[][..],
    ] {
        let local = run(sshd
            .rcon(home.path(), "user_key", "known_hosts", server.port())
            .args(extra)
            .args(["-f", file]));
        let before = server.commands().len();
        let remote = run(rcon_remote(&sshd, home.path(), server.port())
            .args(extra)
            .args(["-f", file]));
        let strip = |out: &str| -> String {
            out.lines()
                .map(|l| match serde_json::from_str::<serde_json::Value>(l) {
                    Ok(mut v) if v.is_object() => {
                        v.as_object_mut().unwrap().remove("elapsed_ms");
                        v.as_object_mut().unwrap().remove("time");
                        v.to_string()
                    }
                    _ => l.to_string(),
                })
                .collect::<Vec<_>>()
                .join("\n")
        };
        assert_eq!(
            strip(&stdout(&remote)),
            strip(&stdout(&local)),
            "{extra:?}: {}",
            stderr(&remote)
        );
        assert_eq!(stderr(&remote), stderr(&local), "{extra:?}");
        assert_eq!(remote.status.code(), local.status.code(), "{extra:?}");
        let mut want = vec![
            "list".to_string(),
            "say with a slash".into(),
            "chars 5000".into(),
        ];
        want.extend(numbered_commands(300));
        want.push("bogus command".into());
        if !extra.is_empty() {
            want.push("echo after the failure".into());
        }
        assert_eq!(server.commands()[before..], want[..], "{extra:?}");
    }
    assert!(
        stdout(&run(
            rcon_remote(&sshd, home.path(), server.port()).args(["-c", "chars 20000"])
        ))
        .starts_with(&sample_text(20000))
    );
    assert_eq!(server.violations(), Vec::<String>::new());
}

#[test]
fn commands_and_stdin_run_remotely_and_failures_stop_there() {
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let out = run(rcon_remote(&sshd, home.path(), server.port()).args([
        "-c",
        "echo one",
        "-c",
        "bogus",
        "-c",
        "echo never",
    ]));
    assert_eq!(out.status.code(), Some(1), "{}", stderr(&out));
    assert!(stdout(&out).starts_with("one\n"), "{}", stdout(&out));
    assert_eq!(
        stderr(&out),
        "rcon: error: command 'bogus': the server could not parse the command (<--[HERE]); 1 later command not sent (--keep-going continues past failures)\n"
    );
    assert!(!server.commands().contains(&"echo never".to_string()));

    let mut child = rcon_remote(&sshd, home.path(), server.port())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    {
        use std::io::Write;
        let mut stdin = child.stdin.take().unwrap();
        stdin.write_all(numbered(50).as_bytes()).unwrap();
    }
    let out = wait_with_timeout(child, LIMIT);
    assert!(out.status.success(), "{}", stderr(&out));
    let want: String = (1..=50).map(|i| format!("line {i}\n")).collect();
    assert_eq!(stdout(&out), want);
}

#[test]
fn a_missing_remote_program_is_exit_10_naming_what_to_do() {
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let out = run(sshd
        .rcon(home.path(), "user_key", "known_hosts", server.port())
        .args(["--remote", "--remote-rcon", "/nonexistent/rcon", "list"]));
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with("rcon: error: the remote rcon '/nonexistent/rcon' was not found"),
        "{err}"
    );
    assert!(
        err.contains("--remote-rcon") && err.contains("install rcon"),
        "{err}"
    );
    assert_eq!(server.connections(), 0);
}

/// A fake remote program: a shell script in `dir`.
fn script(dir: &Path, name: &str, body: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, format!("#!/bin/sh\n{body}\n")).unwrap();
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    }
    path.to_str().unwrap().to_string()
}

#[test]
fn another_protocol_version_or_an_old_rcon_is_exit_10_naming_both_versions() {
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let newer = script(
        home.path(),
        "newer",
        r#"echo '{"type":"hello","protocol":99,"version":"9.9.9"}'; cat >/dev/null"#,
    );
    let old = script(
        home.path(),
        "old",
        "echo \"rcon: error: unexpected argument '$1' found (rcon --help lists the options)\" >&2; exit 2",
    );
    let out = run(sshd
        .rcon(home.path(), "user_key", "known_hosts", server.port())
        .args(["--remote", "--remote-rcon", &newer, "list"]));
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("version 9.9.9")
            && err.contains("protocol 99")
            && err.contains(&format!("version {}", env!("CARGO_PKG_VERSION"))),
        "{err}"
    );
    let out = run(sshd
        .rcon(home.path(), "user_key", "known_hosts", server.port())
        .args(["--remote", "--remote-rcon", &old, "list"]));
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(
        err.contains("does not speak the remote protocol") && err.contains("--remote-serve"),
        "{err}"
    );
    assert_eq!(server.connections(), 0);
}

/// The processes whose parent is `pid`, by name (Linux: /proc).
#[cfg(target_os = "linux")]
fn children(pid: u32, name: &str) -> Vec<u32> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(stat) = std::fs::read_to_string(entry.path().join("stat")) else {
            continue;
        };
        // pid (comm) state ppid ...
        let Some((head, rest)) = stat.rsplit_once(") ") else {
            continue;
        };
        let comm = head.split_once(" (").map(|(_, c)| c).unwrap_or("");
        let ppid: u32 = rest
            .split(' ')
            .nth(1)
            .and_then(|p| p.parse().ok())
            .unwrap_or(0);
        if ppid == pid && comm == name {
            found.extend(
                entry
                    .file_name()
                    .to_str()
                    .and_then(|p| p.parse::<u32>().ok()),
            );
        }
    }
    found
}

/// The processes whose command line holds `word`, with their argv and environment.
#[cfg(target_os = "linux")]
fn processes_with(word: &str) -> Vec<(Vec<u8>, Vec<u8>)> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        if cmdline.windows(word.len()).any(|w| w == word.as_bytes()) {
            let environ = std::fs::read(entry.path().join("environ")).unwrap_or_default();
            found.push((cmdline, environ));
        }
    }
    found
}

#[cfg(target_os = "linux")]
fn wait_for_commands(server: &PracticeServer, n: usize) {
    let start = std::time::Instant::now();
    while server.commands().len() < n {
        assert!(
            start.elapsed() < LIMIT,
            "the server got {} commands, not {n}",
            server.commands().len()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[cfg(target_os = "linux")]
fn spawn(cmd: &mut Command) -> std::process::Child {
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap()
}

#[cfg(target_os = "linux")]
#[test]
fn the_password_is_never_on_the_remote_command_line_environment_or_journal() {
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let file = home.path().join("slow.mcfunction");
    std::fs::write(&file, numbered(200)).unwrap();
    let child = spawn(rcon_remote(&sshd, home.path(), server.port()).args([
        "--delay",
        "10ms",
        "-f",
        file.to_str().unwrap(),
    ]));
    wait_for_commands(&server, 20);
    let serving = processes_with("--remote-serve");
    assert!(!serving.is_empty(), "the remote side runs");
    for (argv, env) in &serving {
        for text in [argv, env] {
            assert!(
                !text
                    .windows(PASSWORD.len())
                    .any(|w| w == PASSWORD.as_bytes()),
                "password in the remote process"
            );
        }
    }
    let journals: Vec<_> = std::fs::read_dir(data.path().join("journal"))
        .unwrap()
        .flatten()
        .collect();
    assert_eq!(journals.len(), 1, "one journal while the file runs");
    let journal = std::fs::read_to_string(journals[0].path()).unwrap();
    assert!(
        journal.contains("\"answered\"") && !journal.contains(PASSWORD),
        "{journal}"
    );
    let out = wait_with_timeout(child, LIMIT);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(!stderr(&out).contains(PASSWORD) && !stdout(&out).contains(PASSWORD));
    assert_eq!(
        std::fs::read_dir(data.path().join("journal"))
            .unwrap()
            .count(),
        0,
        "a finished run clears its journal"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn ssh_killed_mid_file_names_the_lines_and_resume_runs_each_line_once() {
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let file = home.path().join("build.mcfunction");
    std::fs::write(&file, numbered(400)).unwrap();
    let path = file.to_str().unwrap();
    let child =
        spawn(rcon_remote(&sshd, home.path(), server.port()).args(["--delay", "5ms", "-f", path]));
    wait_for_commands(&server, 100);
    let ssh = children(child.id(), "ssh");
    assert_eq!(ssh.len(), 1, "rcon runs one ssh");
    // SAFETY: kill(2) on the ssh this test's rcon started.
    unsafe { libc::kill(ssh[0] as libc::pid_t, libc::SIGKILL) };
    let out = wait_with_timeout(child, LIMIT);
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(err.contains(&format!("ran: {path}:1-")), "{err}");
    assert!(err.contains("in doubt"), "{err}");
    assert!(
        err.contains(&format!("not sent: every line after {path}:")),
        "{err}"
    );
    assert!(err.contains("--resume"), "{err}");
    let ran_before = server.commands().len();
    assert!(ran_before < 400, "stopped half way");

    let out = run(rcon_remote(&sshd, home.path(), server.port()).args(["--resume", "-f", path]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("resuming"), "{}", stderr(&out));
    assert_eq!(
        server.commands(),
        numbered_commands(400),
        "every line ran exactly once, in order"
    );
    // Finished: nothing is left to resume.
    let out = run(rcon_remote(&sshd, home.path(), server.port()).args(["--resume", "-f", path]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(stderr(&out).contains("no journal"), "{}", stderr(&out));
    assert_eq!(server.commands().len(), 400);
}

#[cfg(target_os = "linux")]
#[test]
fn a_server_restart_mid_file_is_crossed_with_retry() {
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let mut first = strict_vanilla();
    let addr = first.addr();
    let home = home();
    let file = home.path().join("long.mcfunction");
    std::fs::write(&file, numbered(300)).unwrap();
    let child = spawn(rcon_remote(&sshd, home.path(), addr.port()).args([
        "--delay",
        "5ms",
        "--retry",
        "20",
        "--resend-in-doubt",
        "-f",
        file.to_str().unwrap(),
    ]));
    wait_for_commands(&first, 100);
    first.shutdown();
    let second = PracticeServer::start(PracticeConfig {
        bind: addr,
        password: PASSWORD.into(),
        mode: PracticeMode::Vanilla,
        read_delay: Duration::from_millis(2),
    })
    .expect("the restarted server listens on the same port");
    let out = wait_with_timeout(child, LIMIT);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("reconnecting"), "{}", stderr(&out));
    let want: String = (1..=300).map(|i| format!("line {i}\n")).collect();
    assert_eq!(stdout(&out), want, "each answer printed once");
    let mut all = first.commands();
    let later = second.commands();
    // The line in flight when the server went down was sent again (--resend-in-doubt).
    if all.last() == later.first() {
        all.pop();
    }
    all.extend(later);
    assert_eq!(all, numbered_commands(300));
}

/// Local mode (no ssh, no `--remote`) journals a file too: a server that goes away mid-file
/// leaves a journal, and `--resume` against the restarted server runs the rest, each line once
/// (the line in flight when it went away only with `--resend-in-doubt`).
#[test]
fn local_mode_resumes_a_file_after_the_server_went_away() {
    let mut first = strict_vanilla();
    let addr = first.addr();
    let home = home();
    let file = home.path().join("local.mcfunction");
    std::fs::write(&file, numbered(300)).unwrap();
    let path = file.to_str().unwrap();
    let rcon = |extra: &[&str]| {
        let mut cmd = rcon_at(addr.port(), home.path());
        cmd.args(extra).args(["-f", path]);
        cmd
    };
    let child = rcon(&["--delay", "5ms"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while first.commands().len() < 100 {
        assert!(
            start.elapsed() < LIMIT,
            "the server got {} commands",
            first.commands().len()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    first.shutdown();
    let out = wait_with_timeout(child, LIMIT);
    assert!(!out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("stopped here"), "{}", stderr(&out));
    let second = PracticeServer::start(PracticeConfig {
        bind: addr,
        password: PASSWORD.into(),
        mode: PracticeMode::Vanilla,
        read_delay: Duration::from_millis(2),
    })
    .expect("the restarted server listens on the same port");
    let mut out = run(&mut rcon(&["--resume"]));
    if out.status.code() == Some(8) {
        let err = stderr(&out);
        assert!(
            err.contains("was sent but never answered") && err.contains("--resend-in-doubt"),
            "{err}"
        );
        assert!(second.commands().is_empty(), "nothing was sent");
        out = run(&mut rcon(&["--resume", "--resend-in-doubt"]));
    }
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("resuming"), "{}", stderr(&out));
    let mut all = first.commands();
    let later = second.commands();
    if all.last() == later.first() {
        all.pop();
    }
    all.extend(later);
    assert_eq!(all, numbered_commands(300), "every line once, in order");
    let out = run(&mut rcon(&["--resume"]));
    assert_eq!(out.status.code(), Some(2), "finished: {}", stderr(&out));
}

/// Ctrl-C reaches rcon alone (ssh runs in its own process group): rcon ends the stream in
/// order, the remote side stops after the command it runs, and the report is exact: what it
/// says ran is what the server got and what stdout shows; `--resume` runs the rest once.
#[cfg(target_os = "linux")]
#[test]
fn ctrl_c_with_remote_reports_exactly_what_ran_and_resume_finishes() {
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let file = home.path().join("stop.mcfunction");
    std::fs::write(&file, numbered(400)).unwrap();
    let path = file.to_str().unwrap();
    let child =
        spawn(rcon_remote(&sshd, home.path(), server.port()).args(["--delay", "5ms", "-f", path]));
    wait_for_commands(&server, 50);
    // SAFETY: kill(2) on the rcon this test started.
    unsafe { libc::kill(child.id() as libc::pid_t, libc::SIGINT) };
    let out = wait_with_timeout(child, LIMIT);
    assert_eq!(out.status.code(), Some(130), "{}", stderr(&out));
    let ran = server.commands().len();
    assert_eq!(
        stdout(&out).lines().count(),
        ran,
        "every answer that ran is on stdout"
    );
    let err = stderr(&out);
    let prefix =
        format!("rcon: error: interrupted by Ctrl-C: {ran} commands ran, none was in flight, ");
    assert!(err.starts_with(&prefix), "{err}");
    let not_sent: usize = err[prefix.len()..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a count of lines not sent");
    assert!(ran + not_sent <= 400, "{err}");
    assert!(
        err.ends_with(&format!(" not sent and the rest of {path} was not read\n"))
            || err.ends_with(" not sent\n"),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let out = run(rcon_remote(&sshd, home.path(), server.port()).args(["--resume", "-f", path]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.commands(), numbered_commands(400));
}
