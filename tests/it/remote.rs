//! `--remote` end to end (issue 21): a real OpenSSH `sshd` on loopback (tests/it/common/sshd.rs)
//! whose sessions get `RCON_DATA_DIR` from `SetEnv`, the binary under test on both sides
//! (`--remote-rcon` names it by its absolute path), a practice server behind. Needs `sshd`,
//! `ssh` and `ssh-keygen`; without them each test prints `SKIPPED` and passes, unless
//! RCONSOLE_STRICT=1 is set.

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

#[cfg(target_os = "linux")]
use crate::common::link::DelayLink;
use crate::common::sshd::Sshd;
use crate::common::*;
use rconsole::practice::{PracticeConfig, PracticeMode, sample_text};

/// How long a test waits for something that should happen soon; a hang fails, never a delay.
const LIMIT: Duration = Duration::from_secs(60);

/// An sshd whose sessions keep rcon's data (the journal) in `data`.
pub(crate) fn remote_sshd(data: &Path) -> Option<Sshd> {
    Sshd::start_with_if_installed(&format!("SetEnv RCON_DATA_DIR={}\n", data.display()))
}

/// `rcon --ssh ... --remote` with the binary under test on the remote side.
pub(crate) fn rcon_remote(sshd: &Sshd, home: &Path, rcon_port: u16) -> Command {
    let mut cmd = sshd.rcon(home, "user_key", "known_hosts", rcon_port);
    cmd.arg("--remote").arg("--remote-rcon").arg(rcon_bin());
    cmd
}

/// What a restarted server runs: strict vanilla, as [`strict_vanilla`] starts it.
fn vanilla_again() -> PracticeConfig {
    PracticeConfig {
        password: PASSWORD.into(),
        mode: PracticeMode::Vanilla,
        read_delay: Duration::from_millis(2),
        ..PracticeConfig::default()
    }
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

    // A file's unsendable line is found before anything goes to the SSH host, as locally.
    let file = home.path().join("bad.mcfunction");
    std::fs::write(&file, format!("echo first\necho {}\n", "x".repeat(2000))).unwrap();
    let before = server.commands().len();
    let out = run(rcon_remote(&sshd, home.path(), server.port())
        .arg("-f")
        .arg(&file));
    assert_eq!(out.status.code(), Some(8), "{}", stderr(&out));
    assert!(
        stderr(&out).contains(
            ":2: command is 2005 bytes of UTF-8, over the limit of 1446; nothing was sent"
        ),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.commands().len(), before);

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

/// A countdown through `--remote` takes the blocking route (the remote rcon runs each step)
/// and walks the same plan as one on the event loop: the announcements at their times, then
/// the final command, printed as they are answered.
#[test]
fn a_countdown_runs_through_remote_as_it_runs_locally() {
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let out = run(rcon_remote(&sshd, home.path(), server.port())
        .env("RCON_CLOCK_SPEED", "30")
        .args([
            "--countdown",
            "3s",
            "--at",
            "2s,1s",
            "--announce",
            "echo {seconds}",
        ])
        .args(["--then", "seed"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "2\n1\nSeed: [-4172144997902289642]\n");
    assert_eq!(server.commands(), ["echo 2", "echo 1", "seed"]);
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
    assert!(err.contains("--remote-install"), "{err}");
    assert_eq!(server.connections(), 0);

    // Several servers: the same exit status and message for each (it was exit 9, a tunnel's).
    let other = strict_vanilla();
    let mut cmd = sshd.rcon_through(home.path(), "user_key", "known_hosts");
    let out = run(cmd.args([
        "--remote",
        "--remote-rcon",
        "/nonexistent/rcon",
        "--target",
        &format!("a=127.0.0.1:{}", server.port()),
        "--target",
        &format!("b=127.0.0.1:{}", other.port()),
        "list",
    ]));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(10), "{err}");
    for name in ["a", "b"] {
        assert!(
            err.lines().any(|l| l.starts_with(&format!(
                "rcon: error: [{name}] the remote rcon '/nonexistent/rcon' was not found"
            ))),
            "{err}"
        );
    }
    assert_eq!(server.connections() + other.connections(), 0);
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

/// The ssh processes (Linux: /proc) going to `sshd`'s port: this test's only.
#[cfg(target_os = "linux")]
fn ssh_to(sshd: &Sshd) -> Vec<u32> {
    let port = format!("\0-p\0{}\0", sshd.port);
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        let comm = std::fs::read_to_string(entry.path().join("comm")).unwrap_or_default();
        let cmdline = std::fs::read(entry.path().join("cmdline")).unwrap_or_default();
        if comm.trim() == "ssh" && cmdline.windows(port.len()).any(|w| w == port.as_bytes()) {
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

#[cfg(target_os = "linux")]
fn wait_for_commands(server: &rconsole::practice::PracticeServer, n: usize) {
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
    // The record and the answers it keeps until the client has printed them.
    let mut journals: Vec<_> = std::fs::read_dir(data.path().join("journal"))
        .unwrap()
        .flatten()
        .map(|e| e.path())
        .collect();
    journals.sort();
    assert_eq!(
        journals.len(),
        2,
        "one journal while the file runs: {journals:?}"
    );
    assert_eq!(journals[0].extension().unwrap(), "answers");
    let journal = std::fs::read_to_string(&journals[1]).unwrap();
    assert!(
        journal.contains("\"answered\"") && !journal.contains(PASSWORD),
        "{journal}"
    );
    assert!(
        !std::fs::read_to_string(&journals[0])
            .unwrap()
            .contains(PASSWORD)
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

/// `rcon --ssh ... --remote` through `link` (a [`DelayLink`] in front of `sshd`).
#[cfg(target_os = "linux")]
fn rcon_via(link: &DelayLink, sshd: &Sshd, home: &Path, rcon_port: u16) -> Command {
    let mut cmd = rcon_in(home);
    let dest = format!("{}@127.0.0.1:{}", sshd.user, link.port);
    cmd.env("RCON_PASSWORD", PASSWORD).args([
        "--ssh",
        &dest,
        "-H",
        "127.0.0.1",
        "-P",
        &rcon_port.to_string(),
    ]);
    // The host key is the one known for sshd's own port.
    let alias = format!("HostKeyAlias=[127.0.0.1]:{}", sshd.port);
    for option in sshd
        .options("user_key", "known_hosts")
        .iter()
        .chain([&alias])
    {
        cmd.args(["--ssh-option", option]);
    }
    cmd.arg("--remote").arg("--remote-rcon").arg(rcon_bin());
    cmd
}

/// A 50 ms round trip (25 ms each way), as in issue 39.
#[cfg(target_os = "linux")]
const ONE_WAY: Duration = Duration::from_millis(25);

/// The number after `key` in `text` (`F:12-40` gives 12 and 40 for `F:`).
#[cfg(target_os = "linux")]
fn range_after(text: &str, key: &str) -> (usize, usize) {
    let at = text
        .find(key)
        .unwrap_or_else(|| panic!("no {key:?} in {text}"))
        + key.len();
    let digits: String = text[at..]
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == '-')
        .collect();
    let (a, b) = digits.split_once('-').unwrap_or((&digits, &digits));
    (a.parse().unwrap(), b.parse().unwrap())
}

/// What each line printed, in order: `echo line N` answers `line N` (text), and a `--json`
/// record names its command.
#[cfg(target_os = "linux")]
fn printed(out: &str, json: bool) -> Vec<String> {
    if !json {
        return out.lines().map(|l| format!("echo {l}")).collect();
    }
    out.lines()
        .map(|l| {
            let record: serde_json::Value = serde_json::from_str(l).expect("a JSON record");
            record["command"].as_str().expect("command").to_string()
        })
        .collect()
}

/// A 400-line file through `--remote` over a 50 ms link, dropped a quarter of the way (ssh
/// killed, or the link gone silent and then ssh killed): the message's ranges hold against
/// the server's log, and `--resume` alone prints each answer the first run did not, once,
/// and runs each line once. With `lose_kept`, the kept answers are removed from the remote
/// journal first: the resume still runs the rest once, but names the answers lost and is not
/// exit 0.
#[cfg(target_os = "linux")]
fn drop_mid_file_then_resume(silent: bool, json: bool, lose_kept: bool) {
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let link = DelayLink::start(sshd.port, ONE_WAY);
    let server = strict_vanilla();
    let home = home();
    let file = home.path().join("build.mcfunction");
    std::fs::write(&file, numbered(400)).unwrap();
    let path = file.to_str().unwrap();
    let format: &[&str] = if json { &["--json"] } else { &[] };
    let mut first = rcon_via(&link, &sshd, home.path(), server.port());
    let child = spawn(first.args(format).args(["--delay", "5ms", "-f", path]));
    wait_for_commands(&server, 100);
    if silent {
        link.stop();
    }
    let ssh = children(child.id(), "ssh");
    assert_eq!(ssh.len(), 1, "rcon runs one ssh");
    // SAFETY: kill(2) on the ssh this test's rcon started.
    unsafe { libc::kill(ssh[0] as libc::pid_t, libc::SIGKILL) };
    let out = wait_with_timeout(child, LIMIT);
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    let shown = printed(&stdout(&out), json);
    let (one, answered) = range_after(&err, &format!("ran (answered): {path}:"));
    assert_eq!((one, answered), (1, shown.len()), "{err}");
    let (after, window_end) = range_after(
        &err,
        &format!("may have run, or be running still): {path}:"),
    );
    assert_eq!(after, answered + 1, "{err}");
    let (not_sent, last) = range_after(&err, &format!("not sent: {path}:"));
    assert_eq!((not_sent, last), (window_end + 1, 400), "{err}");
    assert!(err.contains("`--resume` asks the remote journal"), "{err}");
    assert!(!err.contains("at most the first ran"), "{err}");

    if lose_kept {
        let journal = |ext: &str| {
            let entries = std::fs::read_dir(data.path().join("journal")).unwrap();
            let mut paths = entries.flatten().map(|e| e.path());
            paths.find(|p| p.extension().unwrap() == ext).expect(ext)
        };
        // Once the earlier remote side has let go of its journal (it still appends answers
        // until it notices its client is gone), its kept answers go.
        let record = std::fs::File::open(journal("json")).unwrap();
        let start = std::time::Instant::now();
        while record.try_lock().is_err() {
            assert!(
                start.elapsed() < LIMIT,
                "the earlier remote side did not end"
            );
            std::thread::sleep(Duration::from_millis(20));
        }
        std::fs::remove_file(journal("answers")).unwrap();
    }
    // The silenced connection stays silent; the resume's new one goes through.
    let mut again = rcon_via(&link, &sshd, home.path(), server.port());
    let out = run(again.args(format).args(["--resume", "-f", path]));
    let err = stderr(&out);
    if lose_kept {
        assert_eq!(out.status.code(), Some(9), "{err}");
        let (ran, _) = range_after(&err, &format!("resuming {path} after line "));
        let lost = range_after(&err, &format!("answers lost: {path}:"));
        assert_eq!(lost, (answered + 1, ran), "{err}");
        let mut all = shown;
        all.extend(printed(&stdout(&out), json));
        let mut want = numbered_commands(400);
        want.drain(answered..ran);
        assert_eq!(all, want, "every other answer once");
        assert_eq!(
            server.commands(),
            numbered_commands(400),
            "every line ran once"
        );
        return;
    }
    assert!(out.status.success(), "{err}");
    // What the first run ran, by the remote journal, is inside what its message said.
    let (ran, _) = range_after(&err, &format!("resuming {path} after line "));
    assert!(
        answered <= ran && ran <= window_end,
        "{answered} <= {ran} <= {window_end}: {err}"
    );
    let mut all = shown;
    all.extend(printed(&stdout(&out), json));
    assert_eq!(all, numbered_commands(400), "every answer once, in order");
    assert_eq!(
        server.commands(),
        numbered_commands(400),
        "every line ran once"
    );
}

#[cfg(target_os = "linux")]
#[test]
fn ssh_killed_mid_file_names_the_ranges_and_resume_prints_every_answer_once() {
    drop_mid_file_then_resume(false, false, false);
}

#[cfg(target_os = "linux")]
#[test]
fn ssh_killed_mid_file_with_json_records_each_answer_once_across_resume() {
    drop_mid_file_then_resume(false, true, false);
}

#[cfg(target_os = "linux")]
#[test]
fn a_silent_drop_mid_file_names_the_window_and_resume_waits_for_the_old_remote() {
    drop_mid_file_then_resume(true, false, false);
}

/// Exit status tells the truth: answers that ran but were never printed are named, exit 9.
#[cfg(target_os = "linux")]
#[test]
fn answers_lost_with_the_remote_journal_are_named_and_not_exit_0() {
    drop_mid_file_then_resume(true, false, true);
}

/// A link gone silent leaves the remote side's input open: it notices the client is gone when
/// the heartbeats stop, and runs nothing more after the command it runs then. Here the run
/// paces its 30 lines a second apart, all of them already sent: a remote side that ran on
/// through them would keep the journal past the 20 s a resume waits for it (exit 8).
#[cfg(target_os = "linux")]
#[test]
fn a_silent_drop_stops_the_remote_side_at_its_next_command() {
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let link = DelayLink::start(sshd.port, ONE_WAY);
    let server = strict_vanilla();
    let home = home();
    let file = home.path().join("paced.mcfunction");
    std::fs::write(&file, numbered(30)).unwrap();
    let path = file.to_str().unwrap();
    let mut first = rcon_via(&link, &sshd, home.path(), server.port());
    let child = spawn(first.args(["--delay", "1s", "-f", path]));
    wait_for_commands(&server, 2);
    link.stop();
    let ssh = children(child.id(), "ssh");
    // SAFETY: kill(2) on the ssh this test's rcon started.
    unsafe { libc::kill(ssh[0] as libc::pid_t, libc::SIGKILL) };
    let out = wait_with_timeout(child, LIMIT);
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let mut shown = stdout(&out);
    let out =
        run(rcon_via(&link, &sshd, home.path(), server.port()).args(["--resume", "-f", path]));
    assert!(out.status.success(), "{}", stderr(&out));
    shown.push_str(&stdout(&out));
    assert_eq!(
        printed(&shown, false),
        numbered_commands(30),
        "every answer once"
    );
    assert_eq!(
        server.commands(),
        numbered_commands(30),
        "every line ran once"
    );
}

/// `--retry 3` across two kills of ssh in one run of 2,000 lines: exit 0 only with every
/// answer printed once, each line run once.
#[cfg(target_os = "linux")]
#[test]
fn retry_across_two_kills_prints_all_2000_answers_once() {
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let link = DelayLink::start(sshd.port, ONE_WAY);
    let server = strict_vanilla();
    let home = home();
    let file = home.path().join("big.mcfunction");
    std::fs::write(&file, numbered(2000)).unwrap();
    let mut cmd = rcon_via(&link, &sshd, home.path(), server.port());
    let child = spawn(cmd.args([
        "--retry",
        "3",
        "--delay",
        "1ms",
        "-f",
        file.to_str().unwrap(),
    ]));
    let mut killed = Vec::new();
    for at in [500, 1200] {
        wait_for_commands(&server, at);
        let start = std::time::Instant::now();
        let ssh = loop {
            match children(child.id(), "ssh").as_slice() {
                [pid] if !killed.contains(pid) => break *pid,
                _ => {
                    assert!(start.elapsed() < LIMIT, "no new ssh");
                    std::thread::sleep(Duration::from_millis(10));
                }
            }
        };
        // SAFETY: kill(2) on the ssh this test's rcon started.
        unsafe { libc::kill(ssh as libc::pid_t, libc::SIGKILL) };
        killed.push(ssh);
    }
    let out = wait_with_timeout(child, LIMIT);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stderr(&out).matches("reconnecting").count(),
        2,
        "{}",
        stderr(&out)
    );
    assert_eq!(
        printed(&stdout(&out), false),
        numbered_commands(2000),
        "every answer once"
    );
    assert_eq!(
        server.commands(),
        numbered_commands(2000),
        "every line ran once"
    );
}

/// One run at a time per journal on the SSH host: a resume that finds an earlier remote side
/// still keeping the file's journal waits for it, saying so, sends nothing beside it, and goes
/// on once it has ended.
#[cfg(target_os = "linux")]
#[test]
fn a_resume_waits_while_an_earlier_remote_side_keeps_the_journal() {
    use std::io::{BufRead, Write};
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let file = home.path().join("held.mcfunction");
    std::fs::write(&file, numbered(50)).unwrap();
    let path = file.to_str().unwrap();
    let sum = Command::new("sha256sum").arg(path).output().unwrap();
    let key = String::from_utf8(sum.stdout).unwrap()[..64].to_string();
    // An earlier remote side as ssh runs it there, keeping the journal; it promised no
    // heartbeat (a version 1 client), so it lasts until its input ends.
    let mut holder = rcon_in(home.path())
        .env("RCON_DATA_DIR", data.path())
        .arg("--remote-serve")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut input = holder.stdin.take().unwrap();
    let port = server.port().to_string();
    let frames = [
        serde_json::json!({"type": "hello", "protocol": 1, "version": "test"}),
        serde_json::json!({"type": "settings", "args": ["-H", "127.0.0.1", "-P", port], "password": PASSWORD}),
        serde_json::json!({"type": "batch", "key": key, "input": path}),
    ];
    for frame in frames {
        writeln!(input, "{frame}").unwrap();
    }
    let answers = lines_of(&mut holder);
    while !answers
        .recv_timeout(LIMIT)
        .unwrap()
        .contains("\"type\":\"journal\"")
    {}

    let mut resume =
        spawn(rcon_remote(&sshd, home.path(), server.port()).args(["--resume", "-f", path]));
    let mut err = std::io::BufReader::new(resume.stderr.take().unwrap()).lines();
    let waiting = err.next().and_then(Result::ok).unwrap_or_default();
    assert!(
        waiting.starts_with("rcon: the remote rcon of an earlier run on ")
            && waiting.contains(&format!("still keeps the journal of {path}: waiting up to")),
        "{waiting}"
    );
    assert!(server.commands().is_empty(), "nothing ran beside it");
    // Its input ends: it stops, and the resume goes on.
    drop(input);
    assert!(holder.wait().unwrap().success());
    let rest: Vec<String> = err.map_while(Result::ok).collect();
    let out = wait_with_timeout(resume, LIMIT);
    assert!(out.status.success(), "{rest:?}");
    assert_eq!(server.commands(), numbered_commands(50), "{rest:?}");
    assert_eq!(stdout(&out).lines().count(), 50);
}

/// One run at a time per journal, in local mode too: a second run of the same file against the
/// same server waits, saying so, until the first has ended; it never runs beside it.
#[test]
fn a_second_run_of_a_journaled_file_waits_for_the_first() {
    let server = strict_vanilla();
    let home = home();
    let file = home.path().join("twice.mcfunction");
    std::fs::write(&file, numbered(100)).unwrap();
    let path = file.to_str().unwrap();
    let first = rcon_for(&server, home.path())
        .args(["--delay", "20ms", "-f", path])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let start = std::time::Instant::now();
    while server.commands().len() < 10 {
        assert!(start.elapsed() < LIMIT, "the first run did not start");
        std::thread::sleep(Duration::from_millis(10));
    }
    let second = run(rcon_for(&server, home.path()).args(["-f", path]));
    let first = wait_with_timeout(first, LIMIT);
    assert!(first.status.success(), "{}", stderr(&first));
    assert!(second.status.success(), "{}", stderr(&second));
    let err = stderr(&second);
    assert!(
        err.starts_with("rcon: another rcon (pid ") && err.contains("still keeps the journal of"),
        "{err}"
    );
    let mut twice = numbered_commands(100);
    twice.extend(numbered_commands(100));
    assert_eq!(server.commands(), twice, "one run, then the other");
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
    // Restarted on its listening socket: the port is never free for another socket of the
    // machine to take (binding it again failed now and then under load, EADDRINUSE).
    let second = first
        .restart(vanilla_again())
        .expect("the server restarts on its listening socket");
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
    // Restarted on its listening socket: every connection closes (rcon, without --retry,
    // stops there), and the port is never free for another socket to take.
    let second = first.restart(vanilla_again()).expect("the server restarts");
    let out = wait_with_timeout(child, LIMIT);
    assert!(!out.status.success(), "{}", stderr(&out));
    // The line in flight, or (the connection closed between two lines) the next one.
    let err = stderr(&out);
    assert!(
        err.contains("was in flight and may or may not have run") || err.contains("stopped here"),
        "{err}"
    );
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
    // What ran by file:line range, as the server's log has it.
    let prefix = format!(
        "rcon: error: interrupted by Ctrl-C: {ran} commands ran ({path}:1-{ran}), none was in flight, "
    );
    assert!(err.starts_with(&prefix), "{err}");
    let not_sent: usize = err[prefix.len()..]
        .split(' ')
        .next()
        .and_then(|n| n.parse().ok())
        .expect("a count of lines not sent");
    assert!(ran + not_sent <= 400, "{err}");
    // What was streamed and not run, by file:line range: the lines right after those that ran.
    let range = match not_sent {
        0 => String::new(),
        1 => format!(" ({path}:{})", ran + 1),
        n => format!(" ({path}:{}-{})", ran + 1, ran + n),
    };
    assert!(
        err.ends_with(&format!(
            " not sent{range} and the rest of {path} was not read\n"
        )) || err.ends_with(&format!(" not sent{range}\n")),
        "{err}"
    );
    assert_eq!(err.lines().count(), 1, "{err}");
    let out = run(rcon_remote(&sshd, home.path(), server.port()).args(["--resume", "-f", path]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.commands(), numbered_commands(400));
}

/// An sshd whose sessions find no rcon on their PATH (`bin` comes first: a fake `uname` or
/// `sha256sum` there wins) and keep their cache in `cache`.
fn install_sshd(data: &Path, cache: &Path, bin: &Path) -> Option<Sshd> {
    Sshd::start_with_if_installed(&format!(
        "SetEnv RCON_DATA_DIR={} XDG_CACHE_HOME={} PATH={}:/usr/bin:/bin\n",
        data.display(),
        cache.display(),
        bin.display()
    ))
}

/// Where `--remote-install` keeps this rcon in the remote cache.
fn cached_copy(cache: &Path) -> std::path::PathBuf {
    cache.join("rconsole/bin").join(format!(
        "rcon-{}-{}-{}",
        env!("CARGO_PKG_VERSION"),
        std::env::consts::OS,
        std::env::consts::ARCH
    ))
}

#[cfg(unix)]
#[test]
fn remote_install_copies_this_rcon_once_and_runs_as_local_mode() {
    use std::os::unix::fs::MetadataExt;
    let (data, cache, bin) = (tempfile::tempdir().unwrap(), home(), home());
    let Some(sshd) = install_sshd(data.path(), cache.path(), bin.path()) else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let file = home.path().join("install.mcfunction");
    std::fs::write(&file, format!("list\nbogus\n{}", numbered(50))).unwrap();
    let file = file.to_str().unwrap();
    let local = run(sshd
        .rcon(home.path(), "user_key", "known_hosts", server.port())
        .args(["--keep-going", "-f", file]));
    let remote = || {
        let mut cmd = sshd.rcon(home.path(), "user_key", "known_hosts", server.port());
        cmd.args(["--remote", "--remote-install", "--keep-going", "-f", file]);
        run(&mut cmd)
    };
    let first = remote();
    assert_eq!(stdout(&first), stdout(&local), "{}", stderr(&first));
    assert_eq!(
        first.status.code(),
        local.status.code(),
        "{}",
        stderr(&first)
    );
    let (note, rest) = stderr(&first)
        .split_once('\n')
        .map(|(a, b)| (a.to_string(), b.to_string()))
        .unwrap();
    assert!(
        note.starts_with("rcon: copied this rcon") && note.contains("--remote-install"),
        "{note}"
    );
    assert_eq!(rest, stderr(&local));
    let copy = cached_copy(cache.path());
    let meta = std::fs::metadata(&copy).expect("the copy is in the remote cache");
    assert_eq!(
        std::fs::read(&copy).unwrap(),
        std::fs::read(rcon_bin()).unwrap()
    );
    let second = remote();
    assert_eq!(stdout(&second), stdout(&local), "{}", stderr(&second));
    assert_eq!(stderr(&second), stderr(&local), "no second copy");
    let again = std::fs::metadata(&copy).unwrap();
    assert_eq!(
        (again.ino(), again.mtime_nsec()),
        (meta.ino(), meta.mtime_nsec()),
        "the cached copy was reused, not copied again"
    );
    let leftovers: Vec<_> = std::fs::read_dir(copy.parent().unwrap())
        .unwrap()
        .flatten()
        .map(|e| e.file_name())
        .collect();
    assert_eq!(leftovers.len(), 1, "{leftovers:?}");
}

/// Several servers with `--remote-install` on a host without rcon: the copy is made once,
/// before the run, and every server's commands run on it.
#[cfg(unix)]
#[test]
fn remote_install_with_several_servers_copies_once_and_runs_each() {
    let (data, cache, bin) = (tempfile::tempdir().unwrap(), home(), home());
    let Some(sshd) = install_sshd(data.path(), cache.path(), bin.path()) else {
        return;
    };
    let (a, b) = (strict_vanilla(), strict_vanilla());
    let home = home();
    let mut cmd = sshd.rcon_through(home.path(), "user_key", "known_hosts");
    let out = run(cmd.args([
        "--remote",
        "--remote-install",
        "--target",
        &format!("a=127.0.0.1:{}", a.port()),
        "--target",
        &format!("b=127.0.0.1:{}", b.port()),
        "echo hi",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let printed = stdout(&out);
    let mut lines: Vec<&str> = printed.lines().collect();
    lines.sort();
    assert_eq!(lines, ["[a] hi", "[b] hi"]);
    let err = stderr(&out);
    assert_eq!(err.matches("rcon: copied this rcon").count(), 1, "{err}");
    assert!(cached_copy(cache.path()).exists());
    assert_eq!(
        (a.commands(), b.commands()),
        (vec!["echo hi".to_string()], vec!["echo hi".to_string()])
    );
}

#[cfg(unix)]
#[test]
fn remote_install_refuses_another_architecture_naming_both() {
    let (data, cache, bin) = (tempfile::tempdir().unwrap(), home(), home());
    let other = if std::env::consts::ARCH == "aarch64" {
        "x86_64"
    } else {
        "aarch64"
    };
    script(
        bin.path(),
        "uname",
        &format!("case \"$1\" in -s) echo Linux;; -m) echo {other};; *) echo Linux {other};; esac"),
    );
    let Some(sshd) = install_sshd(data.path(), cache.path(), bin.path()) else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let out = run(sshd
        .rcon(home.path(), "user_key", "known_hosts", server.port())
        .args(["--remote", "--remote-install", "-c", "list"]));
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains(&format!("the SSH host is Linux {other}"))
            && err.contains(&format!(
                "this rcon is built for {} {}",
                std::env::consts::OS,
                std::env::consts::ARCH
            ))
            && err.contains(&format!("install rcon {}", env!("CARGO_PKG_VERSION"))),
        "{err}"
    );
    assert!(
        !cache.path().join("rconsole").exists(),
        "nothing was copied"
    );
    assert_eq!(server.connections(), 0);
}

#[cfg(unix)]
#[test]
fn remote_install_refuses_a_copy_whose_checksum_differs() {
    let (data, cache, bin) = (tempfile::tempdir().unwrap(), home(), home());
    script(bin.path(), "sha256sum", "echo 0000000000000000  \"$1\"");
    let Some(sshd) = install_sshd(data.path(), cache.path(), bin.path()) else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let out = run(sshd
        .rcon(home.path(), "user_key", "known_hosts", server.port())
        .args(["--remote", "--remote-install", "-c", "list"]));
    assert_eq!(out.status.code(), Some(10), "{}", stderr(&out));
    let err = stderr(&out);
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("has SHA-256 0000000000000000") && err.contains("it was removed"),
        "{err}"
    );
    let dir = cache.path().join("rconsole/bin");
    assert_eq!(std::fs::read_dir(&dir).unwrap().count(), 0, "no copy kept");
    assert_eq!(server.connections(), 0);
}

/// `rcon --ssh ... --remote ARGS` in a pseudo-terminal, the binary under test on both sides.
#[cfg(target_os = "linux")]
fn remote_term(
    sshd: &Sshd,
    home: &Path,
    rcon_port: u16,
    extra: &[&str],
) -> crate::common::term::Term {
    let dest = sshd.destination();
    let port = rcon_port.to_string();
    let bin = rcon_bin();
    let mut args: Vec<String> = vec!["--ssh".into(), dest];
    for option in sshd.options("user_key", "known_hosts") {
        args.push("--ssh-option".into());
        args.push(option);
    }
    args.extend([
        "--remote".into(),
        "--remote-rcon".into(),
        bin.display().to_string(),
    ]);
    args.extend(["-H".into(), "127.0.0.1".into(), "-P".into(), port]);
    args.extend(extra.iter().map(|s| s.to_string()));
    let args: Vec<&str> = args.iter().map(String::as_str).collect();
    crate::common::term::Term::start_with(home, &args)
}

/// The console over `--remote`: each typed line runs on the SSH host's rcon as it is typed and
/// its answer shows as in local mode; a failed command does not end the session; when the
/// remote side is lost, the next command starts a new one.
#[cfg(target_os = "linux")]
#[test]
fn the_console_runs_over_remote_line_by_line_and_survives_a_lost_link() {
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let mut term = remote_term(&sshd, home.path(), server.port(), &["-i"]);
    let p = format!("127.0.0.1:{}> ", server.port());
    term.wait_for(&p);
    term.wait_for("rcon: connected to 127.0.0.1:");
    term.enter(&p, "echo hello there");
    term.wait_for("\nhello there\n");
    assert_eq!(server.commands(), ["echo hello there"], "sent as typed");
    term.enter(&p, "nosuchcommand");
    term.wait_for("Unknown or incomplete command");
    term.enter(&p, "chars 3000");
    term.wait_for_raw(&sample_text(3000));
    // The ssh under the console dies: the next command reconnects (a new ssh, a new remote).
    let ssh = ssh_to(&sshd);
    assert_eq!(ssh.len(), 1, "one ssh under the console");
    // SAFETY: kill(2) on the ssh this test's rcon started.
    unsafe { libc::kill(ssh[0] as libc::pid_t, libc::SIGKILL) };
    // Dead (a zombie until rcon reaps it) before the next line is typed.
    let stat = format!("/proc/{}/stat", ssh[0]);
    let start = std::time::Instant::now();
    while std::fs::read_to_string(&stat).is_ok_and(|s| !s.contains(") Z ")) {
        assert!(start.elapsed() < LIMIT, "ssh did not die");
        std::thread::sleep(Duration::from_millis(10));
    }
    term.enter(&p, "echo after the drop");
    term.wait_for("\nafter the drop\n");
    term.line(&p, ":quit");
    assert_eq!(term.exit_code(), 0, "{}", term.screen());
    assert_eq!(
        server.commands(),
        [
            "echo hello there",
            "nosuchcommand",
            "chars 3000",
            "echo after the drop"
        ]
    );
}

/// Fan-out with `--remote`: one remote side per target, each through its own ssh; the layout
/// (prefixed lines, `--group`, `--json`) and the exit status are those of local fan-out.
#[test]
fn fan_out_over_remote_prints_what_local_fan_out_prints() {
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let (a, b) = (strict_vanilla(), strict_vanilla());
    let home = home();
    // The remote program logs each start, then is the binary under test.
    let starts = home.path().join("starts.log");
    let logged = script(
        home.path(),
        "logged-rcon",
        &format!(
            "echo \"$$\" >> '{}'; exec '{}' \"$@\"",
            starts.display(),
            rcon_bin().display()
        ),
    );
    let file = home.path().join("fan.mcfunction");
    std::fs::write(&file, format!("list\n{}", numbered(20))).unwrap();
    let targets = [
        format!("alpha=127.0.0.1:{}", a.port()),
        format!("beta=127.0.0.1:{}", b.port()),
    ];
    let fan = |remote: bool, extra: &[&str]| {
        let mut cmd = sshd.rcon_through(home.path(), "user_key", "known_hosts");
        if remote {
            cmd.args(["--remote", "--remote-rcon", &logged]);
        }
        for t in &targets {
            cmd.args(["--target", t]);
        }
        cmd.args(extra);
        run(&mut cmd)
    };
    let strip = |out: &str, group: bool| -> Vec<Vec<String>> {
        let lines: Vec<String> = out
            .lines()
            .map(|l| match serde_json::from_str::<serde_json::Value>(l) {
                Ok(mut v) if v.is_object() => {
                    v.as_object_mut().unwrap().remove("elapsed_ms");
                    v.as_object_mut().unwrap().remove("time");
                    v.to_string()
                }
                _ => l.to_string(),
            })
            .collect();
        // Servers answer concurrently: each server's lines keep their order, and with
        // --group each server's block (from its `[name]` line) is whole.
        let mut blocks: Vec<Vec<String>> = Vec::new();
        for line in lines {
            match blocks.last_mut() {
                Some(block) if !(group && line.starts_with('[')) => block.push(line),
                _ => blocks.push(vec![line]),
            }
        }
        if !group {
            let mut all = blocks.concat();
            all.sort_by_key(|l| l.contains("beta"));
            return vec![all];
        }
        blocks.sort();
        blocks
    };
    let f = file.to_str().unwrap();
    for extra in [
        &["-f", f][..],
        &["--group", "-f", f][..],
        &["--json", "-c", "echo one", "-c", "bogus", "-c", "echo two"][..],
    ] {
        let (before_a, before_b) = (a.commands().len(), b.commands().len());
        let local = fan(false, extra);
        let (local_a, local_b) = (
            a.commands()[before_a..].to_vec(),
            b.commands()[before_b..].to_vec(),
        );
        let started = std::fs::read_to_string(&starts)
            .unwrap_or_default()
            .lines()
            .count();
        let remote = fan(true, extra);
        let now = std::fs::read_to_string(&starts)
            .unwrap_or_default()
            .lines()
            .count();
        assert_eq!(now - started, 2, "one remote side per target");
        let group = extra.contains(&"--group");
        assert_eq!(
            strip(&stdout(&remote), group),
            strip(&stdout(&local), group),
            "{extra:?}: {}",
            stderr(&remote)
        );
        assert_eq!(remote.status.code(), local.status.code(), "{extra:?}");
        let after_a = before_a + 2 * local_a.len();
        let after_b = before_b + 2 * local_b.len();
        assert_eq!(a.commands().len(), after_a, "{extra:?}");
        assert_eq!(b.commands().len(), after_b, "{extra:?}");
        assert_eq!(a.commands()[before_a + local_a.len()..], local_a[..]);
        assert_eq!(b.commands()[before_b + local_b.len()..], local_b[..]);
    }
}

/// The threads of process `pid` (Linux: /proc).
#[cfg(target_os = "linux")]
fn threads_of(pid: u32) -> usize {
    crate::fanout::threads_and_fds(pid)
        .expect("rcon is running")
        .0
}

/// Fan-out `--remote` on 50 SSH hosts (50 targets through the one sshd) runs on the event loop:
/// while every host's ssh and remote side is up, rcon has at most 4 threads (it had a thread
/// per host, and three more for each link's pipes and heartbeat).
#[cfg(target_os = "linux")]
#[test]
fn fan_out_over_remote_on_50_hosts_runs_with_at_most_4_threads() {
    let data = tempfile::tempdir().unwrap();
    // 50 ssh connections at once: sshd's default MaxStartups would drop some.
    let extra = format!(
        "SetEnv RCON_DATA_DIR={}\nMaxStartups 200\n",
        data.path().display()
    );
    let Some(sshd) = Sshd::start_with_if_installed(&extra) else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let mut cmd = sshd.rcon_through(home.path(), "user_key", "known_hosts");
    cmd.args(["--remote", "--remote-rcon"]).arg(rcon_bin());
    for i in 0..50 {
        cmd.args(["--target", &format!("h{i}=127.0.0.1:{}", server.port())]);
    }
    // Each host holds its link between the two commands until the run is stopped.
    let child = spawn(cmd.args(["-t", "5m", "--delay", "1h", "-c", "list", "-c", "list"]));
    let pid = child.id();
    // 50 ssh handshakes and remote sides at once take long on a loaded machine.
    let start = std::time::Instant::now();
    while server.commands().len() < 50 || children(pid, "ssh").len() < 50 {
        assert!(
            start.elapsed() < 5 * LIMIT,
            "{} of 50 hosts answered, {} ssh run",
            server.commands().len(),
            children(pid, "ssh").len()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let threads = (0..20)
        .map(|_| {
            std::thread::sleep(Duration::from_millis(5));
            threads_of(pid)
        })
        .max()
        .unwrap();
    eprintln!("fan-out --remote on 50 hosts: {threads} threads");
    signal(&child, libc::SIGTERM);
    let out = wait_with_timeout(child, LIMIT);
    assert_eq!(out.status.code(), Some(143), "{}", stderr(&out));
    assert!(threads <= 4, "{threads} threads for 50 --remote hosts");
}

/// `--follow` over `--remote` on two servers runs on the event loop with the others: both are
/// followed, their events named, and rcon keeps at most 4 threads (it had a thread per server
/// and three per link).
#[cfg(target_os = "linux")]
#[test]
fn follow_over_remote_runs_on_the_event_loop() {
    use crate::follow::Follower;
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let a = restartable_vanilla("127.0.0.1:0".parse().unwrap());
    let b = restartable_vanilla("127.0.0.1:0".parse().unwrap());
    let home = home();
    let mut cmd = sshd.rcon_through(home.path(), "user_key", "known_hosts");
    cmd.args(["--remote", "--remote-rcon"]).arg(rcon_bin());
    let mut f = Follower::spawn(
        cmd.args(["--target", &format!("a=127.0.0.1:{}", a.port())])
            .args(["--target", &format!("b=127.0.0.1:{}", b.port())])
            .args(["--follow", "--poll", "100ms"]),
    );
    f.wait_err("following a, b");
    let threads = threads_of(f.child.id());
    crate::follow::joins_come_labelled(&mut f, &a, &b);
    let threads = threads.max(threads_of(f.child.id()));
    assert!(
        threads <= 4,
        "{threads} threads following 2 --remote servers"
    );
}

/// Local mode journals stdin as well: piping the same lines again with `--resume` goes on after
/// the last answered line, each line once; other lines are refused (exit 2, nothing sent).
#[test]
fn local_mode_resumes_stdin_when_the_same_lines_are_piped_again() {
    let mut first = strict_vanilla();
    let addr = first.addr();
    let home = home();
    let input = numbered(300);
    let rcon = |extra: &[&str]| {
        let mut cmd = rcon_at(addr.port(), home.path());
        cmd.args(extra);
        cmd
    };
    let mut child = rcon(&["--delay", "5ms"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let text = input.clone();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(text.as_bytes());
    });
    let start = std::time::Instant::now();
    while first.commands().len() < 100 {
        assert!(
            start.elapsed() < LIMIT,
            "the server got {}",
            first.commands().len()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
    let second = first.restart(vanilla_again()).expect("the server restarts");
    let out = wait_with_timeout(child, LIMIT);
    let _ = writer.join();
    assert!(!out.status.success(), "{}", stderr(&out));
    // Other lines: refused before anything is sent, and the journal is kept.
    let other = run_with_stdin(
        &mut rcon(&["--resume", "--resend-in-doubt"]),
        &numbered(300).replace("line 7\n", "line seven\n"),
    );
    assert_eq!(other.status.code(), Some(2), "{}", stderr(&other));
    assert!(
        stderr(&other).contains("<stdin> is not the input of the run that stopped"),
        "{}",
        stderr(&other)
    );
    assert!(second.commands().is_empty(), "nothing was sent");
    let mut out = run_with_stdin(&mut rcon(&["--resume"]), &input);
    if out.status.code() == Some(8) {
        assert!(stderr(&out).contains("<stdin>:"), "{}", stderr(&out));
        assert!(second.commands().is_empty(), "nothing was sent");
        out = run_with_stdin(&mut rcon(&["--resume", "--resend-in-doubt"]), &input);
    }
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("resuming <stdin> after line"),
        "{}",
        stderr(&out)
    );
    let mut all = first.commands();
    let later = second.commands();
    if all.last() == later.first() {
        all.pop();
    }
    all.extend(later);
    assert_eq!(all, numbered_commands(300), "every line once, in order");
    let out = run_with_stdin(&mut rcon(&["--resume"]), &input);
    assert_eq!(out.status.code(), Some(2), "finished: {}", stderr(&out));
}

/// `--remote` journals stdin on the SSH host: ssh killed mid-stdin, then the same lines piped
/// again with `--resume` run the rest once; other lines are refused with nothing sent.
#[cfg(target_os = "linux")]
#[test]
fn ssh_killed_mid_stdin_and_resume_with_the_same_lines_runs_each_once() {
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let input = numbered(400);
    let mut child = rcon_remote(&sshd, home.path(), server.port())
        .args(["--delay", "5ms"])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let text = input.clone();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(text.as_bytes());
    });
    wait_for_commands(&server, 100);
    let ssh = ssh_to(&sshd);
    assert_eq!(ssh.len(), 1, "rcon runs one ssh");
    // SAFETY: kill(2) on the ssh this test's rcon started.
    unsafe { libc::kill(ssh[0] as libc::pid_t, libc::SIGKILL) };
    let out = wait_with_timeout(child, LIMIT);
    let _ = writer.join();
    assert_eq!(out.status.code(), Some(9), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("ran (answered): <stdin>:1-"), "{err}");
    assert!(
        err.contains("`--resume` with the same lines on stdin"),
        "{err}"
    );
    let ran_before = server.commands().len();
    assert!(ran_before < 400, "stopped half way");

    let other = run_with_stdin(
        rcon_remote(&sshd, home.path(), server.port()).args(["--resume", "--resend-in-doubt"]),
        &input.replace("line 3\n", "line three\n"),
    );
    assert_eq!(other.status.code(), Some(2), "{}", stderr(&other));
    assert!(
        stderr(&other).contains("<stdin> is not the input of the run that stopped"),
        "{}",
        stderr(&other)
    );
    assert_eq!(server.commands().len(), ran_before, "nothing was sent");

    let out = run_with_stdin(
        rcon_remote(&sshd, home.path(), server.port()).args(["--resume"]),
        &input,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("resuming <stdin>"),
        "{}",
        stderr(&out)
    );
    assert_eq!(
        server.commands(),
        numbered_commands(400),
        "every line ran exactly once, in order"
    );
}

/// Local mode's `--retry N` crosses a server restart mid-file as `--remote` does: it goes on
/// after the last answered line on a new connection; the line in flight is sent again only
/// with `--resend-in-doubt` (without it the run stops naming that line, and `--resume
/// --resend-in-doubt` finishes it).
#[test]
fn local_mode_retry_crosses_a_server_restart_mid_file() {
    for resend in [true, false] {
        let mut first = strict_vanilla();
        let addr = first.addr();
        let home = home();
        let file = home.path().join("retry.mcfunction");
        std::fs::write(&file, numbered(300)).unwrap();
        let path = file.to_str().unwrap();
        let mut args = vec!["--delay", "5ms", "--retry", "20"];
        if resend {
            args.push("--resend-in-doubt");
        }
        let child = rcon_at(addr.port(), home.path())
            .args(&args)
            .args(["-f", path])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let start = std::time::Instant::now();
        while first.commands().len() < 100 {
            assert!(
                start.elapsed() < LIMIT,
                "the server got {}",
                first.commands().len()
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        // Restarted on its listening socket: the port is never free for another socket of
        // the machine to take (binding it again failed now and then under load, EADDRINUSE).
        let second = first
            .restart(vanilla_again())
            .expect("the server restarts on its listening socket");
        let out = wait_with_timeout(child, LIMIT);
        let err = stderr(&out);
        let mut printed = stdout(&out);
        if !out.status.success() {
            // Only without --resend-in-doubt, and only when a line was in flight.
            assert!(!resend, "{err}");
            assert!(
                err.contains("was in flight and may or may not have run")
                    && err.contains("--resend-in-doubt"),
                "{err}"
            );
            let again = run(rcon_at(addr.port(), home.path()).args([
                "--resume",
                "--resend-in-doubt",
                "-f",
                path,
            ]));
            assert!(again.status.success(), "{}", stderr(&again));
            printed.push_str(&stdout(&again));
        } else {
            assert!(err.contains("reconnecting"), "{err}");
        }
        let want: String = (1..=300).map(|i| format!("line {i}\n")).collect();
        assert_eq!(printed, want, "each answer printed once");
        let mut all = first.commands();
        let later = second.commands();
        // The line in flight when the server went down was sent again (--resend-in-doubt).
        if all.last() == later.first() {
            all.pop();
        }
        all.extend(later);
        assert_eq!(all, numbered_commands(300), "resend {resend}");
    }
}

/// What `--remote` cannot do yet is refused while the command line is read, naming the flags,
/// before any password is asked for or ssh started (no sshd needed: nothing connects).
#[test]
fn flags_remote_cannot_honour_are_usage_errors_naming_them() {
    let home = home();
    for (extra, want) in [
        (&["--trace"][..], "--trace cannot be used with --remote yet"),
        (
            &["--messages", "--wait", "5s"][..],
            "--messages and --wait cannot be used with --remote yet",
        ),
    ] {
        let out = run(crate::common::rcon_in(home.path())
            .args(["--remote", "--ssh", "nobody@127.0.0.1", "-p", "x"])
            .args(extra)
            .arg("list"));
        assert_eq!(out.status.code(), Some(2), "{extra:?}: {}", stderr(&out));
        assert!(
            stderr(&out).starts_with(&format!("rcon: error: {want} ")),
            "{}",
            stderr(&out)
        );
        assert_eq!(stderr(&out).lines().count(), 1, "{}", stderr(&out));
    }
}

/// A refused login through a tunnel and through `--remote` (issue 39): `--keep-going` does not
/// go past it; one login attempt in the server's log, one line, exit 5.
#[test]
fn a_refused_login_through_ssh_or_remote_is_one_attempt() {
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let home = home();
    let file = home.path().join("f.mcfunction");
    std::fs::write(&file, numbered(200)).unwrap();
    let path = file.to_str().unwrap();
    for remote in [false, true] {
        for args in [
            &["--keep-going", "-f", path][..],
            &[
                "--keep-going",
                "--retry",
                "2",
                "-c",
                "echo a",
                "-c",
                "echo b",
            ][..],
        ] {
            let server = strict_vanilla();
            let mut cmd = if remote {
                rcon_remote(&sshd, home.path(), server.port())
            } else {
                sshd.rcon(home.path(), "user_key", "known_hosts", server.port())
            };
            let out = run(cmd.env("RCON_PASSWORD", "not-the-password").args(args));
            let err = stderr(&out);
            assert_eq!(
                out.status.code(),
                Some(5),
                "remote {remote} {args:?}: {err}"
            );
            assert_eq!(logins(&server), 1, "remote {remote} {args:?}: {err}");
            assert_eq!(err.lines().count(), 1, "remote {remote} {args:?}: {err}");
            assert!(!err.contains("--keep-going"), "{err}");
            assert!(server.commands().is_empty());
        }
    }
}

/// A plain `--ssh` tunnel killed while a line is in flight (issue 39): the server got that
/// line, so it ran; `--resume` refuses it naming both flags, and `--resume --skip-in-doubt`
/// goes on after it: the server's log has every line exactly once.
#[cfg(target_os = "linux")]
#[test]
fn a_tunnel_killed_mid_file_resumes_past_the_line_in_doubt_with_skip_in_doubt() {
    let Some(sshd) = Sshd::start_if_installed() else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let file = home.path().join("tunnel.mcfunction");
    let mut lines = numbered_commands(30);
    // The server holds line 21's answer until the tunnel is gone.
    lines[20] = "sleep 60000".into();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let path = file.to_str().unwrap();
    let rcon = |extra: &[&str]| {
        let mut cmd = sshd.rcon(home.path(), "user_key", "known_hosts", server.port());
        cmd.args(extra).args(["-f", path]);
        cmd
    };
    // --retry does not send the line in doubt again: the run stops there.
    let child = spawn(&mut rcon(&["--retry", "2"]));
    wait_for_commands(&server, 21);
    let ssh = children(child.id(), "ssh");
    assert_eq!(ssh.len(), 1, "rcon runs one ssh");
    // SAFETY: kill(2) on the ssh this test's rcon started.
    unsafe { libc::kill(ssh[0] as libc::pid_t, libc::SIGKILL) };
    let out = wait_with_timeout(child, LIMIT);
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(9), "{err}");
    // One line: what ran, the line in doubt, what was not sent, by file:line (issue 39 item 6).
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.starts_with(&format!("rcon: error: {path}:21: ssh ")),
        "{err}"
    );
    assert!(
        err.contains(&format!(
            ": 20 commands ran ({path}:1-20), {path}:21 ('sleep 60000') was in flight and may or may not have run, 9 not sent ({path}:22-30); --retry does not send"
        )),
        "{err}"
    );
    assert_eq!(err.matches("may or may not").count(), 1, "{err}");
    assert!(err.contains("--skip-in-doubt"), "{err}");

    let out = run(&mut rcon(&["--resume"]));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(8), "{err}");
    assert!(
        err.contains(&format!("{path}:21 was sent but never answered"))
            && err.contains("--resend-in-doubt")
            && err.contains("--skip-in-doubt"),
        "{err}"
    );
    assert_eq!(server.commands().len(), 21, "nothing was sent");

    let out = run(&mut rcon(&["--resume", "--skip-in-doubt"]));
    let err = stderr(&out);
    assert!(out.status.success(), "{err}");
    assert!(err.contains("after line 21"), "{err}");
    assert_eq!(
        server.commands(),
        lines,
        "every line exactly once, in order"
    );
    assert_eq!(
        stdout(&out),
        (22..=30).map(|i| format!("line {i}\n")).collect::<String>()
    );
    // Finished: the journal is gone.
    let out = run(&mut rcon(&["--resume"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

/// `--remote` one-shots share one SSH connection too (issue 39): two runs, one SSH login.
#[test]
fn remote_one_shots_share_one_ssh_connection() {
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let tmp = tempfile::tempdir().unwrap();
    for _ in 0..2 {
        let out = run(rcon_remote(&sshd, home.path(), server.port())
            .env("TMPDIR", tmp.path())
            .args(["-c", "list"]));
        assert!(out.status.success(), "{}", stderr(&out));
    }
    assert_eq!(
        sshd.log().matches("Accepted publickey").count(),
        1,
        "{}",
        sshd.log()
    );
    assert_eq!(server.commands(), ["list", "list"]);
    for socket in std::fs::read_dir(tmp.path()).unwrap().flatten() {
        for socket in std::fs::read_dir(socket.path()).unwrap().flatten() {
            let _ = Command::new("ssh")
                .arg("-o")
                .arg(format!("ControlPath={}", socket.path().display()))
                .args(["-O", "exit", "127.0.0.1"])
                .output();
        }
    }
}

/// `--resume --skip-in-doubt` with stdin (issue 39): the same lines piped again are checked
/// through the last answered line, the line in doubt (it reached the server) is taken as run,
/// and the run goes on after it: every line exactly once across the two servers' logs.
#[cfg(target_os = "linux")]
#[test]
fn local_mode_skips_a_stdin_line_in_doubt_that_ran() {
    let mut first = strict_vanilla();
    let addr = first.addr();
    let home = home();
    let mut lines = numbered_commands(30);
    lines[20] = "sleep 60000".into();
    let input = lines.join("\n") + "\n";
    let rcon = |extra: &[&str]| {
        let mut cmd = rcon_at(addr.port(), home.path());
        cmd.args(extra);
        cmd
    };
    let mut child = spawn(rcon(&[]).stdin(Stdio::piped()));
    let mut stdin = child.stdin.take().unwrap();
    let text = input.clone();
    let writer = std::thread::spawn(move || {
        use std::io::Write;
        let _ = stdin.write_all(text.as_bytes());
    });
    wait_for_commands(&first, 21);
    // Line 21 reached the server; its connection closes before the answer.
    let second = first.restart(vanilla_again()).expect("the server restarts");
    let out = wait_with_timeout(child, LIMIT);
    let _ = writer.join();
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(7), "{err}");
    assert!(
        err.contains("20 commands ran (<stdin>:1-20), <stdin>:21 ('sleep 60000') was in flight"),
        "{err}"
    );
    let out = run_with_stdin(&mut rcon(&["--resume", "--skip-in-doubt"]), &input);
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("after line 21"), "{}", stderr(&out));
    let mut all = first.commands();
    all.extend(second.commands());
    assert_eq!(all, lines, "every line exactly once, in order");
}

/// `--remote --resume --skip-in-doubt` (issue 39): the remote side killed while line 21 runs
/// on the server leaves it in doubt in the remote journal; `--resume` refuses it naming both
/// flags, `--resume --skip-in-doubt` goes on after it: every line exactly once.
#[cfg(target_os = "linux")]
#[test]
fn remote_resume_skips_the_line_in_doubt_with_skip_in_doubt() {
    let data = tempfile::tempdir().unwrap();
    let Some(sshd) = remote_sshd(data.path()) else {
        return;
    };
    let server = strict_vanilla();
    let home = home();
    let file = home.path().join("remote-doubt.mcfunction");
    let mut lines = numbered_commands(30);
    lines[20] = "sleep 60000".into();
    std::fs::write(&file, lines.join("\n") + "\n").unwrap();
    let path = file.to_str().unwrap();
    let rcon = |extra: &[&str]| {
        let mut cmd = rcon_remote(&sshd, home.path(), server.port());
        cmd.args(extra).args(["-f", path]);
        cmd
    };
    let child = spawn(&mut rcon(&[]));
    wait_for_commands(&server, 21);
    // This test's remote side: its sshd gives it this test's data dir (other tests, and other
    // suites on the machine, run remote sides of their own at the same time).
    let ours = format!("RCON_DATA_DIR={}", data.path().display());
    let serving: Vec<u32> = std::fs::read_dir("/proc")
        .unwrap()
        .flatten()
        .filter(|e| {
            let cmdline = std::fs::read(e.path().join("cmdline")).unwrap_or_default();
            let environ = std::fs::read(e.path().join("environ")).unwrap_or_default();
            let word = b"--remote-serve";
            cmdline.windows(word.len()).any(|w| w == word)
                && environ.split(|b| *b == 0).any(|v| v == ours.as_bytes())
                && std::fs::read_to_string(e.path().join("comm")).is_ok_and(|c| c.trim() == "rcon")
        })
        .filter_map(|e| e.file_name().to_str()?.parse().ok())
        .collect();
    assert_eq!(serving.len(), 1, "one remote side");
    // SAFETY: kill(2) on the remote side this test's rcon started.
    unsafe { libc::kill(serving[0] as libc::pid_t, libc::SIGKILL) };
    let out = wait_with_timeout(child, LIMIT);
    assert!(!out.status.success(), "{}", stderr(&out));

    let out = run(&mut rcon(&["--resume"]));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(8), "{err}");
    assert!(
        err.contains(&format!("{path}:21 was sent but never answered"))
            && err.contains("--skip-in-doubt"),
        "{err}"
    );
    let out = run(&mut rcon(&["--resume", "--skip-in-doubt"]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(stderr(&out).contains("after line 21"), "{}", stderr(&out));
    assert_eq!(
        server.commands(),
        lines,
        "every line exactly once, in order"
    );
}
