//! Engine v2 against every practice mode, including the two reimplementations seen on the wire
//! (end-marker: type-2 output and its own end marker; silent-empty: one packet per message and
//! nothing for an empty answer): complete, byte-identical, in order; learned once per server;
//! re-learned when another implementation takes the port.

use std::time::Duration;

use crate::common::*;
use rconsole::practice::{Observed, PracticeMode, PracticeServer, ascii_text, sample_text};

fn start(mode: PracticeMode) -> PracticeServer {
    server(mode, Duration::ZERO)
}

/// The dialect flags a mode needs (the minecraft default probes).
fn dialect_args(mode: PracticeMode) -> Vec<&'static str> {
    match mode {
        PracticeMode::Factorio => vec!["--dialect", "factorio"],
        PracticeMode::Palworld => vec!["--dialect", "palworld"],
        PracticeMode::Source | PracticeMode::MirrorTrailer8 => vec!["--dialect", "source"],
        _ => vec![],
    }
}

const MODES: [PracticeMode; 9] = [
    PracticeMode::Vanilla,
    PracticeMode::Source,
    PracticeMode::Mirror,
    PracticeMode::MirrorTrailer8,
    PracticeMode::RejectSentinel,
    PracticeMode::ClosesOnNonPositiveId,
    PracticeMode::Factorio,
    PracticeMode::EndMarker,
    PracticeMode::SilentEmpty,
];

fn sentinels_seen(server: &PracticeServer) -> usize {
    server
        .events()
        .into_iter()
        .filter(|e| matches!(e, Observed::Packet { kind: 0, .. }))
        .count()
}

#[test]
fn every_mode_gives_complete_answers_in_order() {
    let mut whole_help: Option<String> = None;
    assert_eq!(MODES[0], PracticeMode::Vanilla);
    for mode in MODES {
        let server = start(mode);
        let home = home();
        let mut cmd = rcon_for(&server, home.path());
        cmd.args(dialect_args(mode)).args(["-t", "5s", "--json"]);
        cmd.args([
            "-c",
            "list",
            "-c",
            "help",
            "-c",
            "say hi",
            "-c",
            "chars 100000",
        ]);
        for i in 0..200 {
            cmd.args(["-c", &format!("echo line {i}")]);
        }
        let out = run(&mut cmd);
        assert!(out.status.success(), "{}: {}", mode.name(), stderr(&out));
        let records: Vec<serde_json::Value> = stdout(&out)
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        assert_eq!(records.len(), 204, "{}", mode.name());
        let responses: Vec<String> = records
            .iter()
            .map(|r| r["response"].as_str().unwrap().to_string())
            .collect();
        // The whole help, as the first mode (vanilla, which marks every end) gave it.
        let help = whole_help.get_or_insert_with(|| responses[1].clone());
        assert!(
            help.starts_with("/advancement")
                && help.ends_with("/whitelist (add|list|off|on|reload|remove)"),
            "{help}"
        );
        let mut expected = vec![
            "There are 0 of a max of 20 players online: ".to_string(),
            help.clone(),
            String::new(),
            sample_text(100_000),
        ];
        expected.extend((0..200).map(|i| format!("line {i}")));
        assert_answers(mode, &responses, &expected, &stderr(&out));
        // The end-marker server closes on the probe's two sentinels, and only there.
        let allowed = if mode == PracticeMode::EndMarker {
            2
        } else {
            0
        };
        let violations = server.violations();
        assert_eq!(violations.len(), allowed, "{}: {violations:?}", mode.name());
        assert!(
            violations.iter().all(|v| v == "unknown packet type 0"),
            "{}: {violations:?}",
            mode.name()
        );
    }
}

#[test]
fn end_marker_server_is_learned_once_and_needs_no_sentinel() {
    let server = start(PracticeMode::EndMarker);
    let home = home();
    let first = run(rcon_for(&server, home.path()).args(["-c", "say hi", "-c", "list"]));
    assert!(first.status.success(), "{}", stderr(&first));
    assert_eq!(
        stdout(&first),
        "\nThere are 0 of a max of 20 players online: \n"
    );
    assert_eq!(
        stderr(&first).matches("warning").count(),
        1,
        "one note on first learning: {}",
        stderr(&first)
    );
    assert!(
        stderr(&first).contains("rcon --forget"),
        "{}",
        stderr(&first)
    );
    let before = server.connections();
    for _ in 0..2 {
        let again =
            run(rcon_for(&server, home.path()).args(["--trace", "-c", "say hi", "-c", "help"]));
        assert!(again.status.success(), "{}", stderr(&again));
        let err = stderr(&again);
        assert!(
            !err.contains("rcon: warning"),
            "no warning after the first run: {err}"
        );
        assert!(
            !err.contains("(end-of-output sentinel)"),
            "no probe once learned: {err}"
        );
        assert!(err.contains("(end of output)"), "{err}");
        assert!(!err.contains("hunter2"), "password hidden in traces");
    }
    assert_eq!(server.connections(), before + 2, "one connection per run");
}

#[test]
fn silent_empty_server_answers_empty_commands_without_waiting_for_the_timeout() {
    let server = start(PracticeMode::SilentEmpty);
    let home = home();
    // -t 10s: a wait for the timeout would exit 6; the quiet gap ends the empty answer.
    let out = run(rcon_for(&server, home.path()).args([
        "-t", "10s", "-c", "say hi", "-c", "list", "-c", "lines 3", "-c", "say bye",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        // One packet per message, joined as received: no newline is invented.
        "\nThere are 0 of a max of 20 players online: \nline 1 of 3line 2 of 3line 3 of 3\n\n"
    );
    assert_eq!(
        stderr(&out).matches("warning").count(),
        1,
        "{}",
        stderr(&out)
    );
    // Learned: the next run makes no probe. What was remembered is checked by its first
    // answer (docs/protocol.md section 3): a sentinel once the gap passed, whose refusal
    // closes the connection, so one reconnect; the last command's sentinel is the other.
    let before = server.connections();
    let zero_before = sentinels_seen(&server);
    let again = run(rcon_for(&server, home.path()).args(["-c", "say hi", "-c", "list"]));
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(
        stdout(&again),
        "\nThere are 0 of a max of 20 players online: \n"
    );
    assert_eq!(stderr(&again), "", "no warning once learned");
    assert_eq!(server.connections(), before + 2);
    // No probe (two sentinels on two connections before the first command); one sentinel
    // behind the first command, one behind the last.
    assert_eq!(
        sentinels_seen(&server),
        zero_before + 2,
        "no probe once learned"
    );
    // The last command of a run: its first packet sends a sentinel (the server has read the
    // command by then, so the sentinel has a read of its own) and the server's refusal of it
    // ends the answer; an empty last answer sends nothing behind the command and ends after
    // the quiet gap (a sentinel in the command's read would wait there for ever).
    let last = run(rcon_for(&server, home.path()).args(["--trace", "-c", "say hi", "-c", "list"]));
    assert!(last.status.success(), "{}", stderr(&last));
    assert_eq!(
        stdout(&last),
        "\nThere are 0 of a max of 20 players online: \n"
    );
    let trace = stderr(&last);
    assert!(trace.contains("(sentinel rejected)"), "{trace}");
    assert_eq!(
        trace.matches("(end-of-output sentinel)").count(),
        2,
        "the first answer's check and the last command's: {trace}"
    );
    let empty_last =
        run(rcon_for(&server, home.path()).args(["--trace", "-c", "list", "-c", "say hi"]));
    assert!(empty_last.status.success(), "{}", stderr(&empty_last));
    assert_eq!(
        stdout(&empty_last),
        "There are 0 of a max of 20 players online: \n\n"
    );
    // The sentinel only once the gap has passed (after the command, never right behind it).
    let trace = stderr(&empty_last);
    assert_eq!(
        trace.matches("(end-of-output sentinel)").count(),
        2,
        "the first answer's check and the last command's: {trace}"
    );
    assert!(trace.contains("(sentinel rejected)"), "{trace}");
    assert!(server.violations().is_empty(), "{:?}", server.violations());
    // --print-config shows what was learned.
    let cfg = run(rcon_for(&server, home.path()).arg("--print-config"));
    assert!(
        stdout(&cfg).contains("answers end by silence"),
        "{}",
        stdout(&cfg)
    );
    // --forget probes again.
    let forgot = run(rcon_for(&server, home.path()).args(["--forget", "list"]));
    assert!(forgot.status.success(), "{}", stderr(&forgot));
    assert!(
        sentinels_seen(&server) > zero_before,
        "probed again after --forget"
    );
}

#[test]
fn vanilla_short_answers_take_one_round_trip_once_probed() {
    let server = server(PracticeMode::Vanilla, Duration::from_millis(2));
    let home = home();
    let mut cmd = rcon_for(&server, home.path());
    for i in 0..50 {
        cmd.args(["-c", &format!("echo {i}")]);
    }
    cmd.args(["-c", "ascii 4096", "-c", "ascii 4095", "-c", "chars 5000"]);
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    let expected: String = (0..50).map(|i| format!("{i}\n")).collect::<String>()
        + &format!(
            "{}\n{}\n{}\n",
            ascii_text(4096),
            ascii_text(4095),
            sample_text(5000)
        );
    assert_eq!(stdout(&out), expected);
    assert_eq!(server.violations(), Vec::<String>::new());
    // The probe, then a sentinel only after the two full fragments (4096 bytes, and the first
    // 4096 units of the 5000-character answer).
    assert_eq!(sentinels_seen(&server), 3);
}

#[test]
fn a_server_swapped_for_another_implementation_is_relearned_with_nothing_lost() {
    for (from, to) in [
        (PracticeMode::Vanilla, PracticeMode::SilentEmpty),
        (PracticeMode::Vanilla, PracticeMode::EndMarker),
        (PracticeMode::EndMarker, PracticeMode::SilentEmpty),
        (PracticeMode::SilentEmpty, PracticeMode::Vanilla),
        (PracticeMode::EndMarker, PracticeMode::Vanilla),
    ] {
        let server = start(from);
        let home = home();
        let learn = run(rcon_for(&server, home.path()).arg("list"));
        assert!(learn.status.success(), "{from:?}: {}", stderr(&learn));
        let server = swap(server, to, Duration::ZERO);
        let out = run(rcon_for(&server, home.path()).args([
            "-t",
            "5s",
            "-c",
            "say hi",
            "-c",
            "list",
            "-c",
            "echo after",
            "-c",
            "chars 9000",
        ]));
        assert!(out.status.success(), "{from:?} -> {to:?}: {}", stderr(&out));
        assert_eq!(
            stdout(&out),
            format!(
                "\nThere are 0 of a max of 20 players online: \nafter\n{}\n",
                sample_text(9000)
            ),
            "{from:?} -> {to:?}: {}",
            stderr(&out)
        );
        assert!(
            server
                .violations()
                .iter()
                .all(|v| v == "unknown packet type 0"),
            "{from:?} -> {to:?}: {:?}",
            server.violations()
        );
        // And the run after that is quiet again.
        let third = run(rcon_for(&server, home.path()).args(["-c", "say hi", "-c", "list"]));
        assert!(
            third.status.success(),
            "{from:?} -> {to:?}: {}",
            stderr(&third)
        );
        assert_eq!(stderr(&third), "", "{from:?} -> {to:?}");
    }
}

#[test]
fn learned_file_tolerates_corruption_and_read_only_directories() {
    let server = start(PracticeMode::SilentEmpty);
    let home = home();
    let data = home.path().join("data");
    std::fs::create_dir_all(data.join("rconsole")).unwrap();
    let file = data.join("rconsole").join("learned-servers.toml");
    std::fs::write(&file, "this is [not toml\n\0\0").unwrap();
    let out = run(rcon_for(&server, home.path()).arg("list"));
    assert!(out.status.success(), "{}", stderr(&out));
    assert!(std::fs::read_to_string(&file).unwrap().contains("silence"));
    // No secret in the file.
    assert!(!std::fs::read_to_string(&file).unwrap().contains(PASSWORD));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let dir = data.join("rconsole");
        std::fs::remove_file(&file).unwrap();
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o500)).unwrap();
        let out = run(rcon_for(&server, home.path()).arg("list"));
        std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o700)).unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
}

#[test]
fn commands_after_stop_are_not_sent_because_the_server_stopped() {
    let server = strict_vanilla();
    let home = home();
    let out = run(rcon_for(&server, home.path()).args(["-c", "stop", "-c", "list"]));
    let err = stderr(&out);
    assert!(!err.contains("wrong password"), "{err}");
    assert!(err.contains("stopped the server"), "{err}");
    assert_eq!(stdout(&out), "Stopping the server\n");
    assert_eq!(server.commands(), vec!["stop".to_string()]);
}

#[test]
fn learned_file_survives_many_rcons_writing_at_once() {
    let servers: Vec<PracticeServer> = (0..8).map(|_| start(PracticeMode::SilentEmpty)).collect();
    let home = home();
    let children: Vec<_> = servers
        .iter()
        .map(|s| {
            rcon_for(s, home.path())
                .arg("list")
                .stdout(std::process::Stdio::piped())
                .stderr(std::process::Stdio::piped())
                .spawn()
                .unwrap()
        })
        .collect();
    for child in children {
        let out = child.wait_with_output().unwrap();
        assert!(out.status.success(), "{}", stderr(&out));
    }
    // Whole and readable: one writer's version won each time, none was torn.
    let file = home.path().join("data/rconsole/learned-servers.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    let parsed: toml::Table = toml::from_str(&text).expect("a whole TOML file");
    let servers_table = parsed["servers"].as_table().unwrap();
    assert!(!servers_table.is_empty());
    for entry in servers_table.values() {
        assert_eq!(entry["method"].as_str(), Some("silence"));
    }
    // No temporary files left behind.
    let leftovers: Vec<_> = std::fs::read_dir(file.parent().unwrap())
        .unwrap()
        .filter_map(|e| e.ok())
        .filter(|e| e.file_name().to_string_lossy().starts_with('.'))
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

/// The server that handles one packet per read (docs/protocol.md section 4), emulated read for
/// read, with a pause before each read so that two packets written back to back always share
/// one: a one-shot command with empty output, and a last empty `-c`, succeed every time. (A
/// client that writes a sentinel right behind the command waits for ever here: the sentinel
/// stays in the server's buffer until more bytes come.)
#[test]
fn one_packet_per_read_server_ends_empty_last_commands_every_time() {
    let server = server(PracticeMode::SilentEmpty, Duration::from_millis(2));
    let home = home();
    // Learn the server once (the probe), as every later run starts from what was learned.
    let first = run(rcon_for(&server, home.path()).args(["-t", "5s", "say hi"]));
    assert!(first.status.success(), "{}", stderr(&first));
    let runs = 25;
    for i in 0..runs {
        let one_shot = run(rcon_for(&server, home.path()).args(["-t", "5s", &format!("say {i}")]));
        assert!(one_shot.status.success(), "run {i}: {}", stderr(&one_shot));
        assert_eq!(stdout(&one_shot), "\n", "run {i}");
        let last = run(rcon_for(&server, home.path())
            .args(["-t", "5s", "-c", "say a", "-c", "seed", "-c", "say c"]));
        assert!(last.status.success(), "run {i}: {}", stderr(&last));
        assert_eq!(
            stdout(&last),
            "\nSeed: [-4172144997902289642]\n\n",
            "run {i}"
        );
    }
    let said = server
        .commands()
        .iter()
        .filter(|c| c.starts_with("say "))
        .count();
    assert_eq!(said, 1 + runs * 3, "every command ran once");
    assert!(server.violations().is_empty(), "{:?}", server.violations());
}

/// A server that reads one packet per read and is slower than the quiet gap (here: a stall of
/// 300 ms before each read, against a gap of 20 ms, as a loaded machine makes it): every command
/// ends by the gap before its answer comes, and the last one's sentinel queues behind them. Its
/// refusal comes after every answer before it, so the run waits for it: each answer comes under
/// its command or is reported late with its text, none dropped because the run ended first.
/// (It was: the gap after the sentinel ended the run, and all three answers were lost without
/// a word, the failure of the two tests above on a loaded machine.)
#[test]
fn a_stalled_one_packet_per_read_server_loses_no_answer_at_the_end_of_a_run() {
    let server = server(PracticeMode::SilentEmpty, Duration::from_millis(300));
    // Nothing remembered: the run probes (the server refuses both sentinels) and learns the
    // refusal, so no command of it checks a remembered method.
    let home = home();
    let out = run(rcon_for(&server, home.path()).args([
        "-t",
        "10s",
        "--idle-gap",
        "20ms",
        "--json",
        "-c",
        "echo one",
        "-c",
        "echo two",
        "-c",
        "echo three",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    let responses = responses(&out);
    let expected = ["one", "two", "three"].map(String::from);
    assert_answers(
        PracticeMode::SilentEmpty,
        &responses,
        &expected,
        &stderr(&out),
    );
    assert!(server.violations().is_empty(), "{:?}", server.violations());
}

/// A server that handles one packet per read, stalled for longer than the quiet gap (a `sleep`
/// command, as a loaded machine makes it): the commands sent meanwhile wait unread in its
/// buffer, each handled only when more bytes come, so every later answer came one command late
/// and was reported instead of shown, for the rest of the run, each costing a whole gap. The
/// first late answer makes the next command end as a last one does: its sentinel's refusal
/// comes after every command held, and closes the connection; the run goes on in step on a new
/// one, every command run once, every answer shown under its command or reported.
#[test]
fn a_one_packet_per_read_server_that_fell_behind_is_caught_up() {
    let server = start(PracticeMode::SilentEmpty);
    let home = home();
    // Learned once, so the run starts from what was learned (its first answer checks it).
    let learn = run(rcon_for(&server, home.path()).arg("list"));
    assert!(learn.status.success(), "{}", stderr(&learn));
    let before = server.connections();
    let mut cmd = rcon_for(&server, home.path());
    cmd.args(["-t", "10s", "--idle-gap", "50ms", "--json"])
        .args(["-c", "echo first", "-c", "sleep 300"]);
    for i in 0..20 {
        cmd.args(["-c", &format!("echo answer {i}")]);
    }
    let out = run(&mut cmd);
    assert!(out.status.success(), "{}", stderr(&out));
    let expected: Vec<String> = ["first".to_string(), "Slept 300 ms".to_string()]
        .into_iter()
        .chain((0..20).map(|i| format!("answer {i}")))
        .collect();
    let err = stderr(&out);
    assert_answers(PracticeMode::SilentEmpty, &responses(&out), &expected, &err);
    // The first answer's check, then the stall's catching up (more on a loaded machine).
    assert!(
        server.connections() - before >= 3,
        "{} connections\n{err}",
        server.connections() - before
    );
    let answered = server
        .commands()
        .iter()
        .filter(|c| c.starts_with("echo answer "))
        .count();
    assert_eq!(answered, 20, "every command ran once");
    assert!(server.violations().is_empty(), "{:?}", server.violations());
}

/// Checks a run's answers against what each command should have answered: every one exact, in
/// order (0 lost, 0 mixed). Where a server marks no end of an answer at all (the modes whose
/// answers end by silence: `silent-empty`, `reject-sentinel`), an answer slower than the quiet
/// gap cannot be told from an empty one, nor a pause between two of its packets from its end
/// (docs/protocol.md): such an answer may come short (empty, or cut after a packet), and each one
/// that does must be reported on stderr with its text (its request id keeps it from ever showing
/// under another command), never dropped without a word. Everywhere else every answer is exact
/// and nothing is reported late.
fn assert_answers(mode: PracticeMode, responses: &[String], expected: &[String], err: &str) {
    assert_eq!(responses.len(), expected.len(), "{}: {err}", mode.name());
    let ends_by_silence = matches!(
        mode,
        PracticeMode::SilentEmpty | PracticeMode::RejectSentinel
    );
    let late: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("rcon: warning:") && l.contains("is not shown under it"))
        .collect();
    let short: Vec<usize> = (0..responses.len())
        .filter(|&i| responses[i] != expected[i])
        .collect();
    let wrong: Vec<(usize, &String)> = short
        .iter()
        .map(|&i| (i, &responses[i]))
        .filter(|&(i, r)| {
            // Ended by the gap before (all of) its answer came: what came is the answer's
            // start, and its rest is reported; a single short answer is reported by its text.
            let reported = if r.is_empty() && !expected[i].contains('\n') && expected[i].len() < 60
            {
                late.iter()
                    .any(|l| l.contains(&format!("{:?}", expected[i])))
            } else {
                !late.is_empty()
            };
            !(ends_by_silence && expected[i].starts_with(r.as_str()) && reported)
        })
        .collect();
    assert!(
        wrong.is_empty(),
        "{}: lost or mixed: {wrong:?}\n{err}",
        mode.name()
    );
    assert!(
        late.len() >= short.len(),
        "{}: {} answers short, {} reported late\n{err}",
        mode.name(),
        short.len(),
        late.len()
    );
    if !ends_by_silence {
        assert!(late.is_empty(), "{}: {err}", mode.name());
    }
}

/// Keeps every core busy until dropped: spinning threads, each bounded by `limit`.
struct BusyCores {
    stop: std::sync::Arc<std::sync::atomic::AtomicBool>,
    threads: Vec<std::thread::JoinHandle<()>>,
}

impl BusyCores {
    fn start(limit: Duration) -> Self {
        use std::sync::atomic::{AtomicBool, Ordering};
        let stop = std::sync::Arc::new(AtomicBool::new(false));
        let cores = std::thread::available_parallelism().map_or(2, |n| n.get());
        let threads = (0..cores)
            .map(|_| {
                let stop = std::sync::Arc::clone(&stop);
                std::thread::spawn(move || {
                    let until = std::time::Instant::now() + limit;
                    let mut x = 0u64;
                    while !stop.load(Ordering::Relaxed) && std::time::Instant::now() < until {
                        for i in 0..10_000u64 {
                            x = x.wrapping_mul(6364136223846793005).wrapping_add(i);
                        }
                        std::hint::black_box(x);
                    }
                })
            })
            .collect();
        Self { stop, threads }
    }
}

impl Drop for BusyCores {
    fn drop(&mut self) {
        self.stop.store(true, std::sync::atomic::Ordering::Relaxed);
        for t in self.threads.drain(..) {
            let _ = t.join();
        }
    }
}

/// Under CPU load (every core spinning, and every mode's run at once), 1,000 commands against
/// every practice mode: every answer arrives whole, under its own command, in order: 0 lost, 0
/// mixed. Where a server marks no end of an answer at all (the modes whose answers end by
/// silence: `silent-empty`, `reject-sentinel`), an answer slower than the quiet gap cannot be
/// told from an empty one; it must then be reported on stderr with its text (its request id
/// keeps it from ever showing under another command), never dropped without a word. Everywhere
/// else every response is exact.
#[test]
fn a_loaded_machine_loses_and_mixes_no_answer_in_any_mode() {
    let _busy = BusyCores::start(Duration::from_secs(180));
    let runs: Vec<_> = PracticeMode::ALL
        .into_iter()
        .map(|mode| {
            std::thread::spawn(move || {
                let server = start(mode);
                let home = home();
                let mut cmd = rcon_for(&server, home.path());
                cmd.args(dialect_args(mode)).args(["-t", "10s", "--json"]);
                for i in 0..1000 {
                    cmd.args(["-c", &format!("echo answer {i} of 1000")]);
                }
                (mode, run(&mut cmd))
            })
        })
        .collect();
    for handle in runs {
        let (mode, out) = handle.join().expect("a run's thread");
        assert!(out.status.success(), "{}: {}", mode.name(), stderr(&out));
        let responses = responses(&out);
        assert_eq!(responses.len(), 1000, "{}", mode.name());
        let expected: Vec<String> = (0..1000).map(|i| format!("answer {i} of 1000")).collect();
        assert_answers(mode, &responses, &expected, &stderr(&out));
    }
}

/// Vanilla remembered at an address where a server that closes on non-positive ids now runs:
/// its one-packet answer of 5000 characters is no vanilla fragment, so the close that the
/// sentinel after it draws ends the answer whole. The run re-learns on the spot with nothing
/// lost (every command, in order, exit 0, one warning saying what was forgotten), and the
/// learned store holds what the new server does. (It was exit 7, "output is incomplete".)
#[test]
fn a_remembered_server_that_closes_on_the_probe_is_relearned_with_nothing_lost() {
    let server = start(PracticeMode::Vanilla);
    let home = home();
    let learn = run(rcon_for(&server, home.path()).arg("list"));
    assert!(learn.status.success(), "{}", stderr(&learn));
    let server = swap(server, PracticeMode::ClosesOnNonPositiveId, Duration::ZERO);
    let args = [
        "-t",
        "5s",
        "-c",
        "echo hi",
        "-c",
        "chars 5000",
        "-c",
        "echo after",
        "-c",
        "chars 5000",
    ];
    let out = run(rcon_for(&server, home.path()).args(args));
    assert!(out.status.success(), "{}", stderr(&out));
    let long = sample_text(5000);
    assert_eq!(stdout(&out), format!("hi\n{long}\nafter\n{long}\n"));
    let err = stderr(&out);
    assert!(err.contains("what was learned is forgotten"), "{err}");
    assert!(!err.contains("error"), "{err}");
    assert_eq!(
        server.commands(),
        ["echo hi", "chars 5000", "echo after", "chars 5000"],
        "each command ran once"
    );
    let file = home.path().join("data/rconsole/learned-servers.toml");
    let text = std::fs::read_to_string(&file).unwrap();
    assert!(text.contains("method = \"positive-sentinel\""), "{text}");
    let again = run(rcon_for(&server, home.path()).args(args));
    assert!(again.status.success(), "{}", stderr(&again));
    assert_eq!(stdout(&again), stdout(&out));
    assert_eq!(stderr(&again), "");
}

/// `--demo` runs against its own in-process server: it leaves nothing in the learned store that a
/// real server at the default address would later be taken for.
#[test]
fn demo_leaves_no_learned_entry() {
    let home = home();
    let out = run(rconsole_demo(home.path()).args(["-c", "list", "-c", "help"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let file = home.path().join("data/rconsole/learned-servers.toml");
    let text = std::fs::read_to_string(&file).unwrap_or_default();
    assert!(!text.contains("[servers."), "{text}");
}

fn rconsole_demo(home: &std::path::Path) -> std::process::Command {
    let mut cmd = rcon_in(home);
    cmd.arg("--demo");
    cmd
}

/// The `response` of each `--json` record `out` printed, in order.
fn responses(out: &std::process::Output) -> Vec<String> {
    stdout(out)
        .lines()
        .map(|l| {
            let v: serde_json::Value = serde_json::from_str(l).unwrap();
            v["response"].as_str().unwrap().to_string()
        })
        .collect()
}
