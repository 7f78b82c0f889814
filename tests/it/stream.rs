//! Batch answers as they complete, and a batch stopped half way: over a slow link every answer
//! reaches stdout while later commands are still to be sent; Ctrl-C (SIGINT) or SIGTERM leaves
//! every answer received on stdout, says in one line what ran, what was in flight and what was
//! not sent, and clears the progress line. The signal tests send real signals, so they are Unix
//! only; on Windows Ctrl-C reaches rcon through its console control handler, which sets the same
//! flag (src/app/interrupt.rs), and no console can be shared with a test process to send it.

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{Shutdown, SocketAddr, TcpListener, TcpStream};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use crate::batch::write_file;
use crate::common::*;
use rconsole::practice::{PracticeMode, PracticeServer};

/// How long a test waits for something the run should do soon; a hang fails, never a delay.
#[cfg(unix)]
const LIMIT: Duration = Duration::from_secs(60);

/// Starts `cmd` with stdout and stderr piped.
fn spawn(cmd: &mut Command) -> Child {
    cmd.stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rcon")
}

/// A TCP proxy for one connection that delivers every chunk `delay` after it arrived, each
/// way, keeping chunk boundaries (so a strict vanilla server behind it still gets one packet
/// per read): a link with a round trip of twice `delay`. Returns the port to connect to.
fn slow_link(target: SocketAddr, delay: Duration) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let Ok((client, _)) = listener.accept() else {
            return;
        };
        let server = TcpStream::connect(target).unwrap();
        for s in [&client, &server] {
            s.set_nodelay(true).unwrap();
        }
        forward(
            client.try_clone().unwrap(),
            server.try_clone().unwrap(),
            delay,
        );
        forward(server, client, delay);
    });
    port
}

/// Copies `from` to `to`, each chunk written `delay` after it was read.
fn forward(mut from: TcpStream, mut to: TcpStream, delay: Duration) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        while let Ok(n @ 1..) = from.read(&mut buf) {
            if tx
                .send((Instant::now() + delay, buf[..n].to_vec()))
                .is_err()
            {
                break;
            }
        }
    });
    std::thread::spawn(move || {
        for (due, bytes) in rx {
            // The link's latency, emulated by the link, never by the client.
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
            if to.write_all(&bytes).is_err() {
                break;
            }
        }
        let _ = to.shutdown(Shutdown::Write);
    });
}

/// Sends each stdout line of `child`, as it arrives, with how many commands `server` had
/// received at that moment.
fn watch_lines<'s>(
    scope: &'s std::thread::Scope<'s, '_>,
    child: &mut Child,
    server: &'s PracticeServer,
) -> mpsc::Receiver<(String, usize)> {
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    scope.spawn(move || {
        for line in BufReader::new(stdout).lines() {
            let Ok(line) = line else { break };
            if tx.send((line, server.commands().len())).is_err() {
                break;
            }
        }
    });
    rx
}

/// Waits until `server` has received `n` commands.
#[cfg(unix)]
fn wait_for_commands(server: &PracticeServer, n: usize) {
    let start = Instant::now();
    while server.commands().len() < n {
        assert!(
            start.elapsed() < LIMIT,
            "the server got {:?}, not {n} commands",
            server.commands()
        );
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_slow_link_gets_each_answer_while_later_commands_are_still_to_go() {
    const LINES: usize = 200;
    let server = server(PracticeMode::Vanilla, Duration::ZERO);
    // 50 ms round trips: the 200 commands take at least 10 s.
    let port = slow_link(server.addr(), Duration::from_millis(25));
    let home = home();
    let text: String = (1..=LINES).map(|i| format!("echo answer {i}\n")).collect();
    let file = write_file(home.path(), "many.mcfunction", &text);
    let mut child = spawn(rcon_at(port, home.path()).args(["-f", &file]));
    let seen: Vec<(String, usize)> = std::thread::scope(|scope| {
        let lines = watch_lines(scope, &mut child, &server);
        let seen = lines.iter().collect();
        let out = wait_with_timeout(child, Duration::from_secs(300));
        assert!(out.status.success(), "stderr: {}", stderr(&out));
        seen
    });
    let answers: Vec<&str> = seen.iter().map(|(line, _)| line.as_str()).collect();
    let expected: Vec<String> = (1..=LINES).map(|i| format!("answer {i}")).collect();
    assert_eq!(answers, expected);
    // Held answers all arrive once the last command has been answered; streamed ones arrive
    // while the run goes on: the first after about one command, answer N before command
    // N + 50 (50 round trips, 2.5 s of slack for a slow reader on a loaded machine).
    let (first, at_first) = &seen[0];
    assert!(
        *at_first < LINES,
        "the first answer ({first}) reached stdout only after all {LINES} commands were sent"
    );
    for (i, (line, at)) in seen.iter().enumerate() {
        assert!(
            *at <= i + 1 + 50,
            "'{line}' reached stdout only when the server had {at} commands"
        );
    }
}

/// A batch of five lines stopped by `sig` while line 3 (a 60 s `sleep`) runs; its stdout lines
/// (JSON records with `json`) and the server's commands.
#[cfg(unix)]
fn stopped_half_way(
    sig: libc::c_int,
    json: bool,
) -> (std::process::Output, Vec<String>, String, Vec<String>) {
    let server = server(PracticeMode::Vanilla, Duration::ZERO);
    let home = home();
    let file = write_file(
        home.path(),
        "slow.mcfunction",
        "echo one\necho two\nsleep 60000\n# a comment\necho four\necho five\n",
    );
    let mut child = spawn(
        rcon_for(&server, home.path())
            .args(["-f", &file])
            .args(json.then_some("--json")),
    );
    let lines = lines_of(&mut child);
    // The answers so far are on stdout while the third command runs.
    let mut got = Vec::new();
    for _ in 0..2 {
        got.push(
            lines
                .recv_timeout(LIMIT)
                .expect("an answer while the batch runs"),
        );
    }
    wait_for_commands(&server, 3);
    signal(&child, sig);
    let out = wait_with_timeout(child, LIMIT);
    got.extend(lines.iter());
    (out, got, file, server.commands())
}

#[cfg(unix)]
#[test]
fn sigint_half_way_keeps_the_answers_and_says_what_was_not_sent() {
    let (out, lines, file, commands) = stopped_half_way(libc::SIGINT, false);
    assert_eq!(out.status.code(), Some(130), "stderr: {}", stderr(&out));
    assert_eq!(lines, ["one", "two"]);
    assert_eq!(
        stderr(&out),
        format!(
            "rcon: error: interrupted by Ctrl-C: 2 commands ran ({file}:1-2), {file}:3 ('sleep 60000') was in flight and may or may not have run, 2 not sent ({file}:5-6)\n"
        )
    );
    assert_eq!(commands, ["echo one", "echo two", "sleep 60000"]);
}

#[cfg(unix)]
#[test]
fn sigterm_half_way_is_exit_143_with_the_same_report() {
    let (out, lines, file, _) = stopped_half_way(libc::SIGTERM, false);
    assert_eq!(out.status.code(), Some(143), "stderr: {}", stderr(&out));
    assert_eq!(lines, ["one", "two"]);
    assert_eq!(
        stderr(&out),
        format!(
            "rcon: error: interrupted by SIGTERM: 2 commands ran ({file}:1-2), {file}:3 ('sleep 60000') was in flight and may or may not have run, 2 not sent ({file}:5-6)\n"
        )
    );
}

#[cfg(unix)]
#[test]
fn json_records_say_which_command_was_interrupted() {
    let (out, lines, file, _) = stopped_half_way(libc::SIGINT, true);
    assert_eq!(out.status.code(), Some(130), "stderr: {}", stderr(&out));
    let records: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let responses: Vec<&str> = records[..2]
        .iter()
        .map(|r| r["response"].as_str().unwrap())
        .collect();
    assert_eq!(responses, ["one", "two"]);
    // The command in flight gets its record too, so a program waiting for one per line is
    // never left waiting; then nothing more.
    assert_eq!(records.len(), 3, "{lines:?}");
    assert_eq!(records[2]["command"], "sleep 60000");
    assert_eq!(records[2]["ok"], false);
    assert_eq!(records[2]["reason"], "interrupted");
    assert_eq!(records[2]["file"], file.as_str());
    assert_eq!(records[2]["line"], 3);
}

#[cfg(unix)]
#[test]
fn sigint_while_waiting_for_the_next_line_of_stdin_stops_at_once() {
    let server = server(PracticeMode::Vanilla, Duration::ZERO);
    let home = home();
    let mut child = spawn(
        rcon_for(&server, home.path())
            .arg("--json")
            .stdin(Stdio::piped()),
    );
    // The pipe stays open: rcon waits for a line that never comes.
    let mut stdin = child.stdin.take().unwrap();
    writeln!(stdin, "echo one").unwrap();
    let lines = lines_of(&mut child);
    let first = lines.recv_timeout(LIMIT).expect("the first answer");
    let record: serde_json::Value = serde_json::from_str(&first).unwrap();
    assert_eq!(record["response"], "one");
    signal(&child, libc::SIGINT);
    let out = wait_with_timeout(child, LIMIT);
    drop(stdin);
    assert_eq!(out.status.code(), Some(130), "stderr: {}", stderr(&out));
    assert_eq!(
        stderr(&out),
        "rcon: error: interrupted by Ctrl-C: 1 command ran (<stdin>:1), none was in flight, the rest of <stdin> was not read\n"
    );
}

#[cfg(unix)]
#[test]
fn stdin_from_a_file_is_counted_after_an_interruption() {
    let server = server(PracticeMode::Vanilla, Duration::ZERO);
    let home = home();
    let file = write_file(
        home.path(),
        "in.txt",
        "echo one\nsleep 60000\necho three\necho four\n",
    );
    let child = spawn(rcon_for(&server, home.path()).stdin(std::fs::File::open(&file).unwrap()));
    wait_for_commands(&server, 2);
    signal(&child, libc::SIGINT);
    let out = wait_with_timeout(child, LIMIT);
    assert_eq!(out.status.code(), Some(130), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), "one\n");
    assert_eq!(
        stderr(&out),
        "rcon: error: interrupted by Ctrl-C: 1 command ran (<stdin>:1), <stdin>:2 ('sleep 60000') was in flight and may or may not have run, 2 not sent (<stdin>:3-4)\n"
    );
}

#[cfg(unix)]
#[test]
fn ctrl_c_clears_the_progress_line() {
    use crate::common::term::Term;
    let server = server(PracticeMode::Vanilla, Duration::ZERO);
    let home = home();
    let file = write_file(
        home.path(),
        "f.mcfunction",
        "echo one\necho two\necho three\n",
    );
    let port = server.port().to_string();
    // A long --delay keeps the progress line on screen between the first and second command.
    let mut term = Term::start_with(
        home.path(),
        &[
            "-H",
            "127.0.0.1",
            "-P",
            &port,
            "--delay",
            "10m",
            "-f",
            &file,
        ],
    );
    term.wait_for("1/3 lines");
    term.send("\x03");
    assert_eq!(term.exit_code(), 130, "screen:\n{}", term.screen());
    let screen = term.screen();
    assert!(
        screen.contains("interrupted by Ctrl-C: 1 command ran (")
            && screen.contains("none was in flight, 2 not sent ("),
        "{screen}"
    );
    assert!(
        !screen.contains("lines/s"),
        "the progress line stayed:\n{screen}"
    );
    assert_eq!(server.commands(), ["echo one"]);
}
