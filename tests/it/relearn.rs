//! What is learned about a server is a hint, never a hazard (issue 40, docs/protocol.md section
//! 9): the store one server left, another server on the same port, a 2,000-line file. Every
//! answer comes whole under its own command, each command runs once, the server closes no
//! connection, one stderr line says what changed, and the entry is rewritten; the same through
//! `--remote`, whose side keeps its own store and takes `--forget`. `--learned` lists the store
//! and forgets one address. (Wall time against an empty store: `bench/relearn.py`.)

use std::path::Path;
use std::process::Output;
use std::time::Duration;

use crate::common::*;
use rconsole::practice::{PracticeMode, PracticeServer};

/// The file: short answers, empty ones (`say`), and every hundredth line `help`, longer than
/// one vanilla fragment.
fn file_commands() -> Vec<String> {
    (0..2000)
        .map(|i| match (i % 100, i % 4) {
            (99, _) => "help".to_string(),
            (_, 0) => format!("echo line {i}"),
            (_, 1) => format!("say {i}"),
            (_, 2) => "list".to_string(),
            _ => "seed".to_string(),
        })
        .collect()
}

/// What `command` answers on every practice mode (`help` as given).
fn answer(command: &str, help: &str) -> String {
    match command.split_once(' ') {
        Some(("echo", text)) => text.to_string(),
        Some(("say", _)) => String::new(),
        _ if command == "list" => "There are 0 of a max of 20 players online: ".to_string(),
        _ if command == "seed" => "Seed: [-4172144997902289642]".to_string(),
        _ => help.to_string(),
    }
}

/// The practice server's whole `help` answer, from a server and a store of its own.
fn help_text() -> String {
    let server = server(PracticeMode::Vanilla, Duration::ZERO);
    let home = home();
    let out = run(rcon_for(&server, home.path()).arg("help"));
    assert!(out.status.success(), "{}", stderr(&out));
    stdout(&out).trim_end_matches('\n').to_string()
}

/// The read delay a mode is started with: strict vanilla catches two packets in one read.
fn delay(mode: PracticeMode) -> Duration {
    if mode == PracticeMode::Vanilla {
        Duration::from_millis(2)
    } else {
        Duration::ZERO
    }
}

/// The one entry of the learned store in `data`, as (method, how).
fn entry(data: &Path) -> (String, String) {
    let text = std::fs::read_to_string(data.join("learned-servers.toml")).unwrap_or_default();
    let table: toml::Table = toml::from_str(&text).expect("a whole TOML file");
    let servers = table["servers"].as_table().expect("a servers table");
    assert_eq!(servers.len(), 1, "{text}");
    let e = servers.values().next().unwrap();
    let field = |k: &str| e.get(k).and_then(|v| v.as_str()).unwrap_or("").to_string();
    (field("method"), field("how"))
}

/// A swap as the user meets it: `learn` runs once against a `from` server, which is then
/// replaced on its port by a `to` server, against which `file` runs the 2,000 lines; both
/// with the same store, in `data`. Checks everything the issue asks of that run.
fn swap_and_run(
    from: PracticeMode,
    to: PracticeMode,
    (was, now): (&str, &str),
    data: &Path,
    rcon: &dyn Fn(u16) -> std::process::Command,
) {
    let first = server(from, delay(from));
    let learn = run(rcon(first.port()).arg("list"));
    assert!(learn.status.success(), "{}", stderr(&learn));
    assert_eq!(entry(data).0, was, "what the first server left");
    let server = swap(first, to, delay(to));
    let home = home();
    let commands = file_commands();
    let file = home.path().join("n2000.mcfunction");
    std::fs::write(&file, commands.join("\n") + "\n").unwrap();
    let out = run(rcon(server.port())
        .args(["-t", "10s", "--json", "-f"])
        .arg(&file));
    check_run(&out, &server, &commands, (was, now));
    assert_eq!(
        entry(data),
        (now.to_string(), format!("changed from {was}")),
        "the entry is rewritten"
    );
}

fn check_run(out: &Output, server: &PracticeServer, commands: &[String], (was, now): (&str, &str)) {
    let err = stderr(out);
    assert!(out.status.success(), "{was} -> {now}: {err}");
    let help = help_text();
    let records: Vec<serde_json::Value> = stdout(out)
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    assert_eq!(records.len(), commands.len(), "{was} -> {now}: {err}");
    for (record, command) in records.iter().zip(commands) {
        assert_eq!(record["command"].as_str(), Some(command.as_str()));
        assert_eq!(
            record["response"].as_str(),
            Some(answer(command, &help).as_str()),
            "{was} -> {now}: the answer to {command:?}\n{err}"
        );
    }
    assert_eq!(server.commands(), commands, "{was} -> {now}: each ran once");
    assert_eq!(server.violations(), Vec::<String>::new(), "{was} -> {now}");
    let lines: Vec<&str> = err.lines().collect();
    assert_eq!(
        lines.len(),
        1,
        "{was} -> {now}: one line says what changed\n{err}"
    );
    assert!(
        lines[0].starts_with("rcon: warning: ")
            && lines[0].contains(&format!("what was remembered (answers ending by {was})")),
        "{was} -> {now}: {err}"
    );
}

/// Locally: the store in the test's home.
fn swap_locally(from: PracticeMode, to: PracticeMode, methods: (&str, &str)) {
    let home = home();
    let data = home.path().join("data").join("rconsole");
    swap_and_run(from, to, methods, &data, &|port| rcon_at(port, home.path()));
}

#[test]
fn silent_empty_then_strict_vanilla() {
    swap_locally(
        PracticeMode::SilentEmpty,
        PracticeMode::Vanilla,
        ("silence", "vanilla"),
    );
}

#[test]
fn vanilla_then_the_end_marker_server() {
    swap_locally(
        PracticeMode::Vanilla,
        PracticeMode::EndMarker,
        ("vanilla", "end-marker"),
    );
}

#[test]
fn the_end_marker_server_then_vanilla() {
    swap_locally(
        PracticeMode::EndMarker,
        PracticeMode::Vanilla,
        ("end-marker", "vanilla"),
    );
}

/// The factorio mode under the minecraft dialect: it ignores sentinels and answers every
/// command, so its answers end by silence after their packet, as Palworld's do.
#[test]
fn vanilla_then_a_server_whose_answers_end_by_silence() {
    swap_locally(
        PracticeMode::Vanilla,
        PracticeMode::Factorio,
        ("vanilla", "idle"),
    );
}

#[cfg(unix)]
mod remote {
    //! The same through `--remote`: the store is the SSH host's (`RCON_DATA_DIR` from the
    //! sshd's `SetEnv`), filled by the remote side.

    use super::*;
    use crate::remote::{rcon_remote, remote_sshd};

    fn swap_remotely(from: PracticeMode, to: PracticeMode, methods: (&str, &str)) {
        let data = tempfile::tempdir().unwrap();
        let Some(sshd) = remote_sshd(data.path()) else {
            return;
        };
        let home = home();
        swap_and_run(from, to, methods, data.path(), &|port| {
            rcon_remote(&sshd, home.path(), port)
        });
        // Nothing was learned on this side.
        let local = home.path().join("data/rconsole/learned-servers.toml");
        assert!(!local.exists(), "{}", local.display());
    }

    #[test]
    fn silent_empty_then_strict_vanilla_through_remote() {
        swap_remotely(
            PracticeMode::SilentEmpty,
            PracticeMode::Vanilla,
            ("silence", "vanilla"),
        );
    }

    #[test]
    fn vanilla_then_the_end_marker_server_through_remote() {
        swap_remotely(
            PracticeMode::Vanilla,
            PracticeMode::EndMarker,
            ("vanilla", "end-marker"),
        );
    }

    #[test]
    fn the_end_marker_server_then_vanilla_through_remote() {
        swap_remotely(
            PracticeMode::EndMarker,
            PracticeMode::Vanilla,
            ("end-marker", "vanilla"),
        );
    }

    #[test]
    fn vanilla_then_a_server_whose_answers_end_by_silence_through_remote() {
        swap_remotely(
            PracticeMode::Vanilla,
            PracticeMode::Factorio,
            ("vanilla", "idle"),
        );
    }

    /// `--forget` and the profile key `forget` reach the remote side: its entry is dropped
    /// and the server probed afresh (no note, `how = "probe"`), where it used to stay and count
    /// on.
    #[test]
    fn forget_reaches_the_remote_side() {
        let data = tempfile::tempdir().unwrap();
        let Some(sshd) = remote_sshd(data.path()) else {
            return;
        };
        let home = home();
        let first = server(PracticeMode::SilentEmpty, Duration::ZERO);
        let learn = run(rcon_remote(&sshd, home.path(), first.port()).arg("list"));
        assert!(learn.status.success(), "{}", stderr(&learn));
        assert_eq!(entry(data.path()).0, "silence");
        let server = swap(first, PracticeMode::Vanilla, delay(PracticeMode::Vanilla));
        let forgot = run(rcon_remote(&sshd, home.path(), server.port()).args(["--forget", "list"]));
        assert!(forgot.status.success(), "{}", stderr(&forgot));
        assert_eq!(stderr(&forgot), "", "forgotten: nothing contradicted");
        assert_eq!(entry(data.path()), ("vanilla".into(), "probe".into()));
        // The profile key does the same.
        let server = swap(server, PracticeMode::SilentEmpty, Duration::ZERO);
        let config = home.path().join("config").join("rconsole");
        std::fs::create_dir_all(&config).unwrap();
        std::fs::write(
            config.join("config.toml"),
            "[servers.default]\nforget = true\n",
        )
        .unwrap();
        let keyed = run(rcon_remote(&sshd, home.path(), server.port()).arg("list"));
        assert!(keyed.status.success(), "{}", stderr(&keyed));
        assert_eq!(entry(data.path()), ("silence".into(), "probe".into()));
    }
}

/// `--learned` lists what is remembered (address and dialect, method, when and how, answers);
/// `--learned --forget` with an address forgets that one entry only.
#[test]
fn learned_lists_the_store_and_forgets_one_address() {
    let home = home();
    let empty = run(rcon_in(home.path()).arg("--learned"));
    assert!(empty.status.success(), "{}", stderr(&empty));
    assert!(
        stdout(&empty).starts_with("nothing remembered yet ("),
        "{}",
        stdout(&empty)
    );
    let a = server(PracticeMode::SilentEmpty, Duration::ZERO);
    let b = server(PracticeMode::Vanilla, Duration::ZERO);
    for s in [&a, &b] {
        let out = run(rcon_for(s, home.path()).args(["-c", "list", "-c", "seed"]));
        assert!(out.status.success(), "{}", stderr(&out));
    }
    let b = swap(b, PracticeMode::EndMarker, Duration::ZERO);
    let out = run(rcon_for(&b, home.path()).args(["-c", "list", "-c", "seed"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let listed = run(rcon_in(home.path()).arg("--learned"));
    assert!(listed.status.success(), "{}", stderr(&listed));
    let text = stdout(&listed);
    let line = |port: u16| {
        text.lines()
            .find(|l| l.starts_with(&format!("127.0.0.1:{port} minecraft ")))
            .unwrap_or_else(|| panic!("{port}: {text}"))
            .split_whitespace()
            .collect::<Vec<_>>()
            .join(" ")
    };
    assert!(
        line(a.port()).contains(" silence learned ") && line(a.port()).contains(" (probe), "),
        "{text}"
    );
    assert!(
        line(b.port()).contains(" end-marker learned ")
            && line(b.port()).contains("(changed from vanilla)"),
        "{text}"
    );
    let forgot = run(rcon_for(&b, home.path()).args(["--learned", "--forget"]));
    assert!(forgot.status.success(), "{}", stderr(&forgot));
    assert_eq!(
        stderr(&forgot),
        format!(
            "rcon: forgot what was learned about 127.0.0.1:{} minecraft (the next session probes it)\n",
            b.port()
        )
    );
    let left = stdout(&forgot);
    assert!(!left.contains(&format!(":{} ", b.port())), "{left}");
    assert!(
        left.contains(&format!("127.0.0.1:{} minecraft", a.port())),
        "{left}"
    );
    // With a command it is a usage error, never a run.
    let both = run(rcon_for(&b, home.path()).args(["--learned", "list"]));
    assert_eq!(both.status.code(), Some(2), "{}", stderr(&both));
    assert!(b.commands().len() == 2, "nothing ran: {:?}", b.commands());
}
