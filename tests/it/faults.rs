//! Fault tests: `rcon` against a scripted, misbehaving server (closes, stalls, trickles, broken
//! size fields, missing terminators, stray packets, bad UTF-8). Every case must end with its
//! documented exit code, one error line, no panic, within the timeout + 1 s and under 20 MB of
//! peak RSS (issue 6; the table is in docs/hardening.md).

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::process::{Command, Output, Stdio};
use std::sync::Arc;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use crate::common::*;
use rconsole::rcon::packet::encode;

/// One step of what the fault server does on each connection.
enum Step {
    /// Reads one whole packet and remembers its id (the script ends if the client closes).
    Read,
    /// Writes bytes built from the id of the last packet read, in one write.
    Write(Box<dyn Fn(i32) -> Vec<u8> + Send + Sync>),
    /// Writes bytes built from the last id one at a time, pausing between them.
    Trickle(Box<dyn Fn(i32) -> Vec<u8> + Send + Sync>, Duration),
    /// Closes the connection (both directions); the script ends.
    Close,
    /// Reads and discards until the client goes away; never answers.
    Stall,
}

use Step::*;

/// A packet with the last id.
fn reply(kind: i32, body: &'static [u8]) -> Step {
    Write(Box::new(move |id| encode(id, kind, body)))
}

/// A packet with a fixed id.
fn packet(id: i32, kind: i32, body: &'static [u8]) -> Step {
    Write(Box::new(move |_| encode(id, kind, body)))
}

/// Raw bytes, whatever the last id.
fn raw(bytes: Vec<u8>) -> Step {
    Write(Box::new(move |_| bytes.clone()))
}

/// A header with this size field and the last id, type 0, followed by `rest`.
fn sized(size: i32, rest: &'static [u8]) -> Step {
    Write(Box::new(move |id| {
        let mut b = size.to_le_bytes().to_vec();
        b.extend(id.to_le_bytes());
        b.extend(0i32.to_le_bytes());
        b.extend(rest);
        b
    }))
}

/// Login accepted and the sentinel probe answered as vanilla does.
fn logged_in() -> Vec<Step> {
    vec![Read, reply(2, b""), Read, reply(0, b"Unknown request 0")]
}

/// [`logged_in`], the command read, then `then`.
fn on_command(then: Vec<Step>) -> Vec<Step> {
    let mut s = logged_in();
    s.push(Read);
    s.extend(then);
    s
}

/// Runs `script` on every connection it accepts, on a free port.
struct FaultServer {
    port: u16,
    connections: Arc<AtomicUsize>,
}

impl FaultServer {
    fn start(script: Vec<Step>) -> Self {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind");
        let port = listener.local_addr().expect("addr").port();
        let script = Arc::new(script);
        let connections = Arc::new(AtomicUsize::new(0));
        let count = Arc::clone(&connections);
        std::thread::spawn(move || {
            for stream in listener.incoming() {
                let Ok(stream) = stream else { continue };
                count.fetch_add(1, Ordering::SeqCst);
                let script = Arc::clone(&script);
                std::thread::spawn(move || play(stream, &script));
            }
        });
        Self { port, connections }
    }

    fn connections(&self) -> usize {
        self.connections.load(Ordering::SeqCst)
    }
}

fn read_packet(s: &mut TcpStream) -> Option<i32> {
    let mut head = [0u8; 4];
    s.read_exact(&mut head).ok()?;
    let size = i32::from_le_bytes(head);
    let size = usize::try_from(size)
        .ok()
        .filter(|&n| (10..=4096).contains(&n))?;
    let mut rest = vec![0u8; size];
    s.read_exact(&mut rest).ok()?;
    Some(i32::from_le_bytes(rest[0..4].try_into().expect("4 bytes")))
}

fn play(mut s: TcpStream, script: &[Step]) {
    let _ = s.set_nodelay(true);
    let mut last = 0;
    for step in script {
        match step {
            Read => match read_packet(&mut s) {
                Some(id) => last = id,
                None => return,
            },
            Write(f) => {
                if s.write_all(&f(last)).is_err() {
                    return;
                }
            }
            Trickle(f, pause) => {
                for b in f(last) {
                    if s.write_all(&[b]).is_err() {
                        return;
                    }
                    std::thread::sleep(*pause);
                }
            }
            Close => {
                let _ = s.shutdown(Shutdown::Both);
                return;
            }
            Stall => {
                let mut buf = [0u8; 1024];
                while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
                return;
            }
        }
    }
    // Script done: keep the connection open until the client leaves.
    let mut buf = [0u8; 1024];
    while matches!(s.read(&mut buf), Ok(n) if n > 0) {}
}

/// The time limit every case runs with.
const TIMEOUT: Duration = Duration::from_secs(1);
/// Peak RSS every case must stay under.
const MAX_RSS_KIB: u64 = 20 * 1024;
/// Address space every case runs under (Linux with GNU time): far below a 2^31-1 allocation.
const MAX_VIRTUAL_KIB: u64 = 256 * 1024;

/// What one run of `rcon` did.
struct Run {
    out: Output,
    took: Duration,
    /// Peak RSS in KiB, where it can be measured.
    rss_kib: Option<u64>,
}

/// Runs `cmd` under GNU time when it exists (exact peak RSS from the kernel), else with
/// /proc polling on Linux, else without an RSS figure.
fn measured(cmd: &mut Command) -> Run {
    let gnu_time = std::path::Path::new("/usr/bin/time");
    let start = Instant::now();
    if cfg!(target_os = "linux") && gnu_time.exists() {
        let report = tempfile::NamedTempFile::new().expect("temp file");
        // The address space is capped too: RSS only counts touched pages, so a huge allocation
        // that is never filled would go unseen; under the cap it fails (and aborts) instead.
        let mut timed = Command::new(gnu_time);
        timed
            .args(["-f", "%M", "-o"])
            .arg(report.path())
            .args([
                "sh",
                "-c",
                &format!("ulimit -v {MAX_VIRTUAL_KIB} && exec \"$0\" \"$@\""),
            ])
            .arg(cmd.get_program())
            .args(cmd.get_args())
            .stdin(Stdio::null());
        copy_env(cmd, &mut timed);
        let out = run(&mut timed);
        let took = start.elapsed();
        let text = std::fs::read_to_string(report.path()).unwrap_or_default();
        let rss_kib = text.lines().last().and_then(|l| l.trim().parse().ok());
        return Run { out, took, rss_kib };
    }
    let child = cmd
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rcon");
    let rss_kib = proc_peak_rss(child.id());
    let out = wait_with_timeout(child, Duration::from_secs(60));
    Run {
        out,
        took: start.elapsed(),
        rss_kib,
    }
}

/// Polls VmHWM of a running process until it exits (Linux only; a spike in its very last
/// moment can be missed, which is why GNU time is preferred).
fn proc_peak_rss(pid: u32) -> Option<u64> {
    if !cfg!(target_os = "linux") {
        return None;
    }
    let path = format!("/proc/{pid}/status");
    let mut peak = None;
    while let Ok(status) = std::fs::read_to_string(&path) {
        // Before exec the child is a copy of the test process: not rcon's memory.
        if !status.starts_with("Name:\trcon\n") {
            std::thread::sleep(Duration::from_millis(1));
            continue;
        }
        let hwm = status
            .lines()
            .find_map(|l| l.strip_prefix("VmHWM:"))
            .and_then(|v| v.trim().trim_end_matches("kB").trim().parse::<u64>().ok());
        match hwm {
            Some(v) => peak = Some(peak.unwrap_or(0).max(v)),
            None => break, // a zombie: the memory is gone
        }
        std::thread::sleep(Duration::from_millis(1));
    }
    peak
}

/// `rcon -t 1s list` against `server`.
fn rcon_list(server: &FaultServer, home: &std::path::Path) -> Command {
    let mut cmd = rcon_in(home);
    cmd.args(["-H", "127.0.0.1", "-P", &server.port.to_string()])
        .args([
            "-p",
            PASSWORD,
            "-t",
            &format!("{}ms", TIMEOUT.as_millis()),
            "list",
        ]);
    cmd
}

/// Runs `rcon -t 1s list` against a server playing `script` and checks the common promises:
/// the exit code, one `rcon: error:` line containing `message` (for failures), no panic and the
/// memory bound. How long it took is printed, not asserted: a loaded machine (Wine starting a
/// process) can take longer than any bound, and what ended the run is in the exit code and the
/// message (the deadline is exit 6 and says what it waited for; a run that never ends is killed
/// by `run`'s limit and fails on its exit code).
fn case(name: &str, script: Vec<Step>, exit: i32, message: &str) -> (Run, FaultServer) {
    let server = FaultServer::start(script);
    let home = home();
    let run = measured(&mut rcon_list(&server, home.path()));
    let err = stderr(&run.out);
    assert_eq!(run.out.status.code(), Some(exit), "{name}: stderr: {err}");
    assert!(!err.contains("panicked"), "{name}: {err}");
    eprintln!(
        "{name}: exit {exit}, {:?} with -t {TIMEOUT:?}, peak RSS {:?} KiB",
        run.took, run.rss_kib
    );
    if let Some(kib) = run.rss_kib {
        assert!(kib < MAX_RSS_KIB, "{name}: peak RSS {kib} KiB");
    }
    if exit != 0 {
        let errors: Vec<&str> = err
            .lines()
            .filter(|l| l.starts_with("rcon: error:"))
            .collect();
        assert_eq!(errors.len(), 1, "{name}: one error line: {err}");
        assert!(errors[0].contains(message), "{name}: {err}");
        assert!(!err.contains(PASSWORD), "{name}: password shown");
    }
    (run, server)
}

#[test]
fn close_before_login_is_a_refused_login() {
    // Accepted, closed before anything is read: the client cannot tell this from a server that
    // closes on a wrong password (Squad), so it is a login failure.
    case("close before login", vec![Close], 5, "login refused");
}

#[test]
fn close_after_reading_the_password_is_a_refused_login() {
    case(
        "close after password",
        vec![Read, Close],
        5,
        "closed the connection after the password",
    );
}

#[test]
fn close_after_login_on_every_connection() {
    // The probe sees the close and falls back (reconnecting twice); then the command's
    // connection closes too.
    let (run, server) = case(
        "close after login",
        vec![Read, reply(2, b""), Close],
        7,
        "before answering",
    );
    assert_eq!(server.connections(), 3);
    assert!(stderr(&run.out).contains("warning"), "{}", stderr(&run.out));
}

#[test]
fn close_on_the_command_before_answering() {
    case(
        "close on command",
        on_command(vec![Close]),
        7,
        "before answering; the command may or may not have run",
    );
}

#[test]
fn close_mid_fragment() {
    let (run, _) = case(
        "close mid-fragment",
        on_command(vec![
            Write(Box::new(|id| {
                let mut p = encode(id, 0, &[b'x'; 3000]);
                p.truncate(1500);
                p
            })),
            Close,
        ]),
        7,
        "mid-packet; output is incomplete",
    );
    assert!(run.out.stdout.is_empty(), "no partial packet is printed");
}

#[test]
fn close_mid_response_keeps_what_arrived() {
    let (run, _) = case(
        "close mid-response",
        on_command(vec![
            Write(Box::new(|id| encode(id, 0, &[b'y'; 4096]))),
            Close,
        ]),
        7,
        "mid-response; output is incomplete",
    );
    assert_eq!(run.out.stdout, [&[b'y'; 4096][..], b"\n"].concat());
}

#[test]
fn stall_at_login() {
    case(
        "stall at login",
        vec![Stall],
        6,
        "timed out after 1s while waiting for the login reply",
    );
}

#[test]
fn stall_on_the_command() {
    case(
        "stall on command",
        on_command(vec![Stall]),
        6,
        "timed out after 1s while waiting for the command's output",
    );
}

#[test]
fn stall_after_login_reading_the_probe_then_nothing() {
    // The probe's wait counts against the first command: the whole run ends within the
    // timeout + 1 s (the `case` bound), not after the probe's wait plus a whole timeout.
    let (_, server) = case(
        "stall after login",
        vec![Read, reply(2, b""), Read, Stall],
        6,
        "timed out after 1s while waiting for the command's output",
    );
    assert_eq!(server.connections(), 1, "no reconnect for a silent probe");
}

#[test]
fn one_byte_per_second_at_login() {
    case(
        "trickle login",
        vec![
            Read,
            Trickle(Box::new(|id| encode(id, 2, b"")), Duration::from_secs(1)),
        ],
        6,
        "waiting for the login reply",
    );
}

#[test]
fn one_byte_per_second_on_the_command() {
    case(
        "trickle output",
        on_command(vec![Trickle(
            Box::new(|id| encode(id, 0, b"There are 0 players")),
            Duration::from_secs(1),
        )]),
        6,
        "waiting for the rest of the output; output is incomplete",
    );
}

#[test]
fn size_fields_below_the_minimum() {
    for size in [-1, 0, 9, i32::MIN] {
        let (run, _) = case(
            &format!("size {size}"),
            on_command(vec![sized(size, b"abc\0\0")]),
            7,
            &format!("size field {size} is below the minimum of 10"),
        );
        // Said once (the cause used to be printed twice through the error chain).
        let err = stderr(&run.out);
        assert_eq!(err.matches("malformed packet").count(), 1, "{err}");
    }
}

#[test]
fn size_field_of_two_gigabytes_allocates_nothing() {
    case(
        "size 2^31-1 on output",
        on_command(vec![sized(i32::MAX, b"abc\0\0"), Stall]),
        7,
        "size field 2147483647 exceeds the limit",
    );
    case(
        "size 2^31-1 on login",
        vec![Read, sized(i32::MAX, b""), Stall],
        7,
        "this does not look like an RCON port",
    );
}

#[test]
fn size_field_at_the_limit_buffers_only_what_arrives() {
    // 16 MiB claimed, 64 KiB sent, then silence: a timeout, memory bounded by what was sent.
    case(
        "size 16 MiB, short body",
        on_command(vec![
            Write(Box::new(|id| {
                let mut b = (16i32 * 1024 * 1024).to_le_bytes().to_vec();
                b.extend(id.to_le_bytes());
                b.extend(0i32.to_le_bytes());
                b.extend(vec![b'z'; 64 * 1024]);
                b
            })),
            Stall,
        ]),
        6,
        "output is incomplete",
    );
}

#[test]
fn body_without_the_two_nuls() {
    case(
        "no terminator",
        on_command(vec![sized(11, b"abc"), Stall]),
        7,
        "is not NUL-terminated",
    );
}

#[test]
fn not_an_rcon_port() {
    // An HTTP server's answer: "HTTP" read as a size field is far over the limit.
    case(
        "http",
        vec![
            Read,
            raw(b"HTTP/1.1 400 Bad Request\r\nContent-Length: 0\r\n\r\n".to_vec()),
            Stall,
        ],
        7,
        "this does not look like an RCON port: the server's first bytes are 'HTTP/1.1 400 Bad', as from an HTTP or web server",
    );
}

#[test]
fn answers_with_an_unexpected_id_only() {
    // Packets with another id are never taken for this command's output.
    let (run, _) = case(
        "wrong id",
        on_command(vec![packet(999, 0, b"not yours"), Stall]),
        6,
        "waiting for the command's output",
    );
    assert!(run.out.stdout.is_empty());
}

#[test]
fn answers_with_an_unexpected_type_only() {
    let (run, _) = case(
        "wrong type",
        // (Type 2 with the command's id is output: a reimplementation sends output that way.)
        on_command(vec![reply(7, b"odd type"), reply(-3, b"odd type"), Stall]),
        6,
        "waiting for the command's output",
    );
    assert!(run.out.stdout.is_empty());
}

#[test]
fn unsolicited_packets_are_ignored() {
    // Chat pushes (Squad sends type 1), a stray login reply and an old id, before and between
    // the real answer's fragments: none of them shows up.
    let (run, _) = case(
        "unsolicited",
        on_command(vec![
            packet(0, 1, b"[Chat] hello"),
            packet(12345, 0, b"stray"),
            packet(77, 2, b""),
            reply(0, b"There are 0 of a max of 20 players online: "),
            packet(0, 1, b"[Chat] again"),
            Read,
            packet(-2, 0, b"Unknown request 0"),
        ]),
        0,
        "",
    );
    assert_eq!(
        stdout(&run.out),
        "There are 0 of a max of 20 players online: \n"
    );
    assert!(stderr(&run.out).is_empty(), "{}", stderr(&run.out));
}

#[test]
fn invalid_utf8_is_replaced_not_fatal() {
    let (run, _) = case(
        "invalid utf-8",
        on_command(vec![
            reply(0, b"ok \xff\xfe \xc3 end"),
            Read,
            packet(-2, 0, b"Unknown request 0"),
        ]),
        0,
        "",
    );
    assert_eq!(stdout(&run.out), "ok \u{fffd}\u{fffd} \u{fffd} end\n");
}

#[test]
fn login_answered_with_type_0_only() {
    // Source sends an empty type-0 packet before its login reply, so type-0 packets are skipped
    // while waiting for it; a server that sends nothing else ends in the timeout.
    case(
        "login type 0 only",
        vec![Read, reply(0, b""), reply(0, b"hello"), Stall],
        6,
        "waiting for the login reply",
    );
}

#[test]
fn login_answered_with_another_id() {
    case(
        "login other id",
        vec![Read, packet(4242, 2, b""), Stall],
        6,
        "waiting for the login reply",
    );
}
