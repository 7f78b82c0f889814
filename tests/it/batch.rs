//! Batch input through the real binary: mcfunction files and stdin against practice servers,
//! failure policy, JSON records, colours, and a program talking to `rcon --json` through pipes.

use std::io::Write;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::*;
use rconsole::practice::PracticeMode;

/// A generated mcfunction text with every kind of line, and the commands it must produce.
fn mcfunction(lines: usize) -> (String, Vec<String>) {
    let mut text = String::from("\u{feff}# generated test function\n");
    let mut expected = Vec::new();
    let mut n = 1;
    while n < lines {
        let i = expected.len();
        match i % 5 {
            0 => {
                text.push_str(&format!("say plain {i}\n"));
                n += 1;
            }
            1 => {
                // Long comments make the input big in bytes, so a client that kept the input in
                // memory would show in its peak RSS.
                let pad = "-".repeat(500);
                text.push_str(&format!("# comment {i} {pad} \\\n   still comment\n\n"));
                text.push_str(&format!("  /echo slash {i}  \n"));
                n += 4;
            }
            2 => {
                text.push_str(&format!("echo joined \\\n    {i} \\\n  end\n"));
                n += 3;
                expected.push(format!("echo joined {i} end"));
                continue;
            }
            3 => {
                text.push_str(&format!("\t\r\nsay a # not a comment {i}\r\n"));
                n += 2;
            }
            _ => {
                text.push_str(&format!("echo {i}\n"));
                n += 1;
            }
        }
        expected.push(match i % 5 {
            0 => format!("say plain {i}"),
            1 => format!("echo slash {i}"),
            3 => format!("say a # not a comment {i}"),
            _ => format!("echo {i}"),
        });
    }
    (text, expected)
}

/// Runs `cmd` with `input` written to its stdin through a pipe; on Linux also returns the
/// child's peak resident set size in KiB (VmHWM, polled from /proc while it runs).
fn run_piped(cmd: &mut Command, input: String) -> (std::process::Output, Option<u64>) {
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rcon");
    let mut stdin = child.stdin.take().expect("stdin");
    let writer = std::thread::spawn(move || {
        let _ = stdin.write_all(input.as_bytes());
    });
    let pid = child.id();
    let peak = std::sync::Arc::new(std::sync::atomic::AtomicU64::new(0));
    let done = std::sync::Arc::new(std::sync::atomic::AtomicBool::new(false));
    let poller = {
        let (peak, done) = (peak.clone(), done.clone());
        std::thread::spawn(move || {
            while !done.load(std::sync::atomic::Ordering::SeqCst) {
                if let Some(kb) = vm_hwm(pid) {
                    peak.fetch_max(kb, std::sync::atomic::Ordering::SeqCst);
                }
                std::thread::sleep(Duration::from_millis(5));
            }
        })
    };
    let out = wait_with_timeout(child, Duration::from_secs(120));
    done.store(true, std::sync::atomic::Ordering::SeqCst);
    poller.join().unwrap();
    writer.join().unwrap();
    let kb = peak.load(std::sync::atomic::Ordering::SeqCst);
    (out, (kb > 0).then_some(kb))
}

#[cfg(target_os = "linux")]
fn vm_hwm(pid: u32) -> Option<u64> {
    let status = rcon_status(pid)?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    line.split_whitespace().nth(1)?.parse().ok()
}

#[cfg(not(target_os = "linux"))]
fn vm_hwm(_pid: u32) -> Option<u64> {
    None
}

#[test]
fn stdin_mcfunction_reaches_strict_vanilla_exactly() {
    let server = strict_vanilla();
    let home = home();
    let (text, expected) = mcfunction(2_000);
    let (out, _) = run_piped(&mut rcon_for(&server, home.path()), text);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(server.commands(), expected);
    assert_eq!(server.connections(), 1, "one connection, no reconnects");
    assert!(server.violations().is_empty(), "{:?}", server.violations());
    let err = stderr(&out);
    assert!(err.contains("<stdin>:6: leading '/' removed"), "{err}");
    assert_eq!(err.matches("leading '/'").count(), 1, "warned once: {err}");
}

#[test]
fn twenty_thousand_lines_stream_in_flat_memory() {
    // Vanilla's read rules without the per-read delay, so 20,000 lines run in seconds.
    let server = server(PracticeMode::Vanilla, Duration::ZERO);
    let home = home();
    let (small, small_expected) = mcfunction(2_000);
    let (big, big_expected) = mcfunction(20_000);
    let (out, small_peak) = run_piped(&mut rcon_for(&server, home.path()), small);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let (out, big_peak) = run_piped(&mut rcon_for(&server, home.path()), big);
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    let mut expected = small_expected;
    expected.extend(big_expected);
    assert_eq!(server.commands(), expected);
    assert_eq!(server.connections(), 2, "one connection per run");
    assert!(server.violations().is_empty(), "{:?}", server.violations());
    if cfg!(target_os = "linux") {
        let (small, big) = (small_peak.unwrap(), big_peak.unwrap());
        eprintln!("peak RSS: {small} KiB for 2,000 lines, {big} KiB for 20,000 lines");
        // Ten times the input may not cost more than 1 MiB more memory.
        assert!(
            big < small + 1024,
            "peak RSS grew with input size: {small} KiB for 2,000 lines, {big} KiB for 20,000"
        );
    }
}

/// Writes `text` to `dir/name`; returns the path as given to `-f`.
pub(crate) fn write_file(dir: &std::path::Path, name: &str, text: &str) -> String {
    let path = dir.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

#[test]
fn bad_line_stops_with_file_and_line() {
    let server = strict_vanilla();
    let home = home();
    let file = write_file(
        home.path(),
        "f.mcfunction",
        "echo one\n# c\nnosuchcmd x\necho three\n",
    );
    let out = run(rcon_for(&server, home.path()).args(["-f", &file]));
    assert_eq!(out.status.code(), Some(1), "stderr: {}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains(&format!("{file}:3")), "{err}");
    assert!(err.contains("--keep-going"), "{err}");
    assert_eq!(server.commands(), ["echo one", "nosuchcmd x"]);
}

#[test]
fn keep_going_sends_every_other_line() {
    let server = strict_vanilla();
    let home = home();
    let long = format!("echo {}", "x".repeat(2000));
    let text = format!("echo one\nnosuchcmd\n{long}\n$say $(who)\necho five\n");
    let file = write_file(home.path(), "f.mcfunction", &text);
    let out = run(rcon_for(&server, home.path()).args(["--keep-going", "-f", &file]));
    assert!(!out.status.success());
    let err = stderr(&out);
    assert!(err.contains(&format!("{file}:2")), "{err}");
    assert!(
        err.contains(&format!("{file}:3: command is 2005 bytes")),
        "{err}"
    );
    assert!(
        err.contains(&format!("{file}:4: macro line needs a value for $(who)")),
        "{err}"
    );
    assert!(err.contains("3 of 5 commands failed"), "{err}");
    assert_eq!(server.commands(), ["echo one", "nosuchcmd", "echo five"]);
    assert_eq!(stdout(&out).lines().last(), Some("five"));
}

#[test]
fn too_long_line_is_refused_not_sent() {
    let server = strict_vanilla();
    let home = home();
    let text = format!("echo a\necho {}\necho c\n", "é".repeat(800));
    let file = write_file(home.path(), "long.mcfunction", &text);
    // Every line of every file is checked before the first command, a -c one included.
    let good = write_file(home.path(), "good.mcfunction", "echo g\n");
    let out = run(rcon_for(&server, home.path()).args(["-c", "echo c", "-f", &good, "-f", &file]));
    assert_eq!(out.status.code(), Some(8), "stderr: {}", stderr(&out));
    assert_eq!(
        stderr(&out),
        format!(
            "rcon: error: {file}:2: command is 1605 bytes of UTF-8, over the limit of 1446; \
nothing was sent (every line of a file is checked before the first command goes out; \
--keep-going sends the others)\n"
        )
    );
    assert_eq!(stdout(&out), "");
    assert!(server.commands().is_empty(), "{:?}", server.commands());
    // Stdin streams: its lines are checked as they come, so the first one ran.
    let mut cmd = rcon_for(&server, home.path());
    let (out, _) = run_piped(cmd.args(["-f", "-"]), text);
    assert_eq!(out.status.code(), Some(8), "stderr: {}", stderr(&out));
    assert!(
        stderr(&out).contains("<stdin>:2: command is 1605 bytes"),
        "{}",
        stderr(&out)
    );
    assert_eq!(server.commands(), ["echo a"]);
}

#[test]
fn macros_are_filled_from_flags() {
    let server = strict_vanilla();
    let home = home();
    let file = write_file(
        home.path(),
        "m.mcfunction",
        "$echo $(a) and $(b)\necho $(a)\n",
    );
    let out =
        run(rcon_for(&server, home.path())
            .args(["--macro", "a=Alex", "--macro", "b=x=y", "-f", &file]));
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(server.commands(), ["echo Alex and x=y", "echo $(a)"]);
}

#[test]
fn files_run_in_order_after_command_line_commands() {
    let server = strict_vanilla();
    let home = home();
    let a = write_file(home.path(), "a", "echo a1\necho a2");
    let b = write_file(home.path(), "b", "echo b1\n");
    let out =
        run(rcon_for(&server, home.path())
            .args(["-c", "echo c", "-f", &a, "-f", &b, "echo", "word"]));
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(
        server.commands(),
        ["echo c", "echo word", "echo a1", "echo a2", "echo b1"]
    );
    assert_eq!(stdout(&out), "c\nword\na1\na2\nb1\n");
}

#[test]
fn echo_prints_each_command_before_its_output() {
    let server = strict_vanilla();
    let home = home();
    let (out, _) = run_piped(
        rcon_for(&server, home.path()).arg("--echo"),
        "echo 1\nsay x\necho 2\n".into(),
    );
    assert!(out.status.success());
    assert_eq!(stdout(&out), "> echo 1\n1\n> say x\n\n> echo 2\n2\n");
}

#[test]
fn delay_spaces_commands() {
    let server = strict_vanilla();
    let home = home();
    let start = Instant::now();
    let (out, _) = run_piped(
        rcon_for(&server, home.path()).args(["--delay", "150ms"]),
        "echo 1\necho 2\necho 3\n".into(),
    );
    assert!(out.status.success());
    assert!(
        start.elapsed() >= Duration::from_millis(300),
        "{:?}",
        start.elapsed()
    );
}

#[test]
fn empty_stdin_sends_nothing() {
    let server = strict_vanilla();
    let home = home();
    let out = run(&mut rcon_for(&server, home.path()));
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert!(stderr(&out).contains("nothing was sent"));
    assert_eq!(server.connections(), 0);
}

#[test]
fn json_records_match_the_commands() {
    let server = strict_vanilla();
    let home = home();
    let input = "echo one\n# skip\nnosuchcmd\nchars 5000\nsay hi\n";
    let (out, _) = run_piped(
        rcon_for(&server, home.path()).args(["--json", "--keep-going"]),
        input.into(),
    );
    assert_eq!(out.status.code(), Some(1));
    let records: Vec<serde_json::Value> = stdout(&out)
        .lines()
        .map(|l| serde_json::from_str(l).expect("each line is JSON"))
        .collect();
    let commands: Vec<&str> = records
        .iter()
        .map(|r| r["command"].as_str().unwrap())
        .collect();
    assert_eq!(commands, server.commands());
    assert_eq!(commands, ["echo one", "nosuchcmd", "chars 5000", "say hi"]);
    assert_eq!(records[0]["response"], "one");
    assert_eq!(records[0]["ok"], true);
    assert_eq!(records[0]["line"], 1);
    assert_eq!(records[0]["file"], "<stdin>");
    assert_eq!(records[1]["ok"], false);
    assert_eq!(records[1]["line"], 3);
    assert!(records[1]["error"].as_str().unwrap().contains("<--[HERE]"));
    assert_eq!(
        records[2]["response"].as_str().unwrap(),
        rconsole::practice::sample_text(5000)
    );
    assert!(records[3]["elapsed_ms"].as_f64().unwrap() >= 0.0);
}

#[test]
fn a_program_gets_each_answer_before_sending_the_next() {
    let server = strict_vanilla();
    let home = home();
    let mut child = rcon_for(&server, home.path())
        .arg("--json")
        .arg("--keep-going")
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let rx = lines_of(&mut child);
    for (i, command) in ["echo first", "nosuchcmd", "chars 9000", "echo last"]
        .iter()
        .enumerate()
    {
        writeln!(stdin, "{command}").unwrap();
        stdin.flush().unwrap();
        let line = rx
            .recv_timeout(Duration::from_secs(10))
            .unwrap_or_else(|_| {
                panic!("no answer to command {i} ({command}) while stdin stays open")
            });
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["command"], *command);
        assert_eq!(
            server.commands().len(),
            i + 1,
            "one command per line written"
        );
    }
    drop(stdin);
    let out = wait_with_timeout(child, Duration::from_secs(10));
    assert_eq!(
        out.status.code(),
        Some(1),
        "the parse error is reported at the end"
    );
}

#[test]
fn colours_follow_the_color_flag_and_pipes() {
    let server = strict_vanilla();
    let home = home();
    let cmd = "echo §6gold §lbold §rplain";
    let out = run(rcon_for(&server, home.path()).args(["--color", "always", cmd]));
    assert_eq!(
        stdout(&out),
        "\x1b[0;33mgold \x1b[1mbold \x1b[0mplain\x1b[0m\n"
    );
    let out = run(rcon_for(&server, home.path()).args(["--color", "never", cmd]));
    assert_eq!(stdout(&out), "gold bold plain\n");
    // auto, with NO_COLOR unset: stdout is a pipe, so no colour.
    let out = run(rcon_for(&server, home.path())
        .env_remove("NO_COLOR")
        .arg(cmd));
    assert_eq!(stdout(&out), "gold bold plain\n");
    let out = run(rcon_for(&server, home.path()).args(["--raw", cmd]));
    assert_eq!(stdout(&out), "§6gold §lbold §rplain\n");
}

#[test]
fn fix_newlines_splits_help() {
    let server = strict_vanilla();
    let home = home();
    let out = run(rcon_for(&server, home.path()).args(["--fix-newlines", "help"]));
    let text = stdout(&out);
    assert!(text.lines().count() > 50, "{text}");
    assert!(text.lines().all(|l| l.starts_with('/')), "{text}");
    let out = run(rcon_for(&server, home.path()).arg("help"));
    assert_eq!(stdout(&out).lines().count(), 1);
}

#[test]
fn stop_in_batch_closes_and_exits() {
    let server = strict_vanilla();
    let home = home();
    let start = Instant::now();
    let (out, _) = run_piped(&mut rcon_for(&server, home.path()), "echo a\nstop\n".into());
    assert!(out.status.success(), "stderr: {}", stderr(&out));
    assert_eq!(stdout(&out), "a\nStopping the server\n");
    assert!(start.elapsed() < Duration::from_secs(5));
}

#[test]
fn resume_needs_exactly_one_input_before_anything_is_sent() {
    let server = strict_vanilla();
    let home = home();
    let a = write_file(home.path(), "a.mcfunction", "echo a\n");
    let b = write_file(home.path(), "b.mcfunction", "echo b\n");
    for args in [
        &["--resume", "-c", "echo c", "-f", &a, "-f", &b][..],
        &["--resume", "echo", "word"][..],
    ] {
        let out = run(rcon_for(&server, home.path())
            .args(args)
            .stdin(Stdio::null()));
        assert_eq!(out.status.code(), Some(2), "{args:?}: {}", stderr(&out));
        assert_eq!(
            stderr(&out),
            "rcon: error: --resume needs exactly one input, one -f FILE or stdin (the journal \
is kept per input and server)\n",
            "{args:?}"
        );
    }
    assert!(server.commands().is_empty(), "{:?}", server.commands());
}

/// A batch whose stdout is closed (`rcon -f FILE | head -1`, issue 41) stops sending: one line
/// says how many commands ran and from which `file:line` the rest was not sent, the status is
/// 141 (as a shell reports SIGPIPE), and the journal lets `--resume` send exactly the rest.
#[test]
fn a_closed_stdout_stops_a_batch_and_resume_sends_the_rest() {
    use std::io::BufRead;
    let server = strict_vanilla();
    let home = home();
    let file = home.path().join("n500.mcfunction");
    // Answers of 3,000 characters: the pipe fills long before the batch ends, so rcon is
    // still sending when the reader goes away, however slow this test is to close it.
    let all: Vec<String> = (1..=500).map(|i| format!("chars {}", 3000 + i)).collect();
    std::fs::write(&file, all.join("\n") + "\n").unwrap();
    let file = file.to_str().unwrap();
    let mut child = rcon_for(&server, home.path())
        .args(["-f", file])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rcon");
    // Read one answer, then close the pipe, as `head -1` does.
    let mut first = String::new();
    std::io::BufReader::new(child.stdout.take().unwrap())
        .read_line(&mut first)
        .unwrap();
    assert_eq!(first.trim_end().chars().count(), 3001, "the first answer");
    let out = wait_with_timeout(child, Duration::from_secs(60));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(141), "{err}");
    assert_eq!(err.lines().count(), 1, "{err}");
    let ran = server.commands().len();
    assert!(ran < all.len(), "the whole batch was sent: {err}");
    let lines = |first: usize, last: usize| match first == last {
        true => format!("{file}:{first}"),
        false => format!("{file}:{first}-{last}"),
    };
    let want = format!(
        "rcon: error: interrupted by a closed stdout: {ran} command{} ran ({}), none was in flight, {} not sent ({})\n",
        if ran == 1 { "" } else { "s" },
        lines(1, ran),
        all.len() - ran,
        lines(ran + 1, all.len())
    );
    assert_eq!(err, want);
    // --resume goes on with the first line not sent: every line ran once, in order.
    let out = run(rcon_for(&server, home.path())
        .args(["--resume", "-f", file])
        .stdout(Stdio::null()));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(server.commands(), all);
}

/// A refused login is not a command failure (issue 39): `--keep-going` does not go past it, so
/// a 200-line file, stdin, `-c` commands and several servers each log in once, say so in one
/// line, and exit 5; `--retry` never tries a wrong password again.
#[test]
fn a_refused_login_is_one_attempt_even_with_keep_going() {
    let home = home();
    let lines: String = (1..=200).map(|i| format!("echo {i}\n")).collect();
    let file = write_file(home.path(), "f.mcfunction", &lines);
    let wrong = |cmd: &mut Command| {
        cmd.env("RCON_PASSWORD", "not-the-password");
    };
    let cases: [&[&str]; 5] = [
        &["--keep-going", "-f", &file],
        &["--keep-going", "--retry", "3", "-f", &file],
        &["--keep-going", "-"],
        &["--keep-going", "-c", "echo a", "-c", "echo b", "-f", &file],
        &["-c", "echo a", "-c", "echo b"],
    ];
    for args in cases {
        let server = strict_vanilla();
        let mut cmd = rcon_for(&server, home.path());
        wrong(&mut cmd);
        cmd.args(args);
        let out = if args.contains(&"-") {
            run_with_stdin(&mut cmd, &lines)
        } else {
            run(&mut cmd)
        };
        let err = stderr(&out);
        assert_eq!(out.status.code(), Some(5), "{args:?}: {err}");
        assert_eq!(logins(&server), 1, "{args:?}: one login attempt");
        assert_eq!(err.lines().count(), 1, "{args:?}: {err}");
        assert!(err.contains("wrong password"), "{args:?}: {err}");
        assert!(!err.contains("--keep-going"), "{args:?}: no hint: {err}");
        assert!(server.commands().is_empty(), "{args:?}");
    }
    // Several servers: one attempt and one line each.
    let (a, b) = (strict_vanilla(), strict_vanilla());
    let mut cmd = rcon_in(home.path());
    wrong(&mut cmd);
    let out = run(cmd.args([
        "--target",
        &format!("a=127.0.0.1:{}", a.port()),
        "--target",
        &format!("b=127.0.0.1:{}", b.port()),
        "--keep-going",
        "-f",
        &file,
    ]));
    let err = stderr(&out);
    assert_eq!(out.status.code(), Some(5), "{err}");
    assert_eq!((logins(&a), logins(&b)), (1, 1), "{err}");
    let errors: Vec<&str> = err
        .lines()
        .filter(|l| l.starts_with("rcon: error:"))
        .collect();
    assert_eq!(errors.len(), 2, "one line per server: {err}");
}
