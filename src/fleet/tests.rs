//! The event loop against in-process practice servers: output per target in order, a dead
//! target's connect failure and its retries, the next address after a refused one, a refused
//! command that does not end the session, a delay between commands, and a reconnect after a
//! command that closes the connection.

use std::collections::VecDeque;
use std::net::TcpListener;
use std::time::{Duration, Instant};

use super::*;
use crate::practice::{PracticeConfig, PracticeMode, PracticeServer};

const PASSWORD: &str = "fleet-test";

fn practice(mode: PracticeMode) -> PracticeServer {
    PracticeServer::start(PracticeConfig {
        password: PASSWORD.into(),
        mode,
        ..PracticeConfig::default()
    })
    .unwrap()
}

fn target(port: u16) -> FleetTarget {
    FleetTarget::rcon(
        "127.0.0.1",
        port,
        Password::new(PASSWORD),
        crate::engine::Options {
            timeout: Duration::from_secs(10),
            ..crate::engine::Options::default()
        },
    )
}

/// A loopback port that refuses connections while the socket lives: bound, never listening, so
/// no listener of a test running beside can take it (as it could a port bound and let go).
fn closed_port() -> (socket2::Socket, u16) {
    let socket = socket2::Socket::new(socket2::Domain::IPV4, socket2::Type::STREAM, None).unwrap();
    let any = std::net::SocketAddr::from(([127, 0, 0, 1], 0));
    socket.bind(&any.into()).unwrap();
    let port = socket.local_addr().unwrap().as_socket().unwrap().port();
    (socket, port)
}

/// Runs a script per target and writes down what happened, as text.
struct Script {
    steps: Vec<VecDeque<(String, bool, Option<Duration>)>>,
    log: Vec<Vec<String>>,
    output: Vec<Vec<u8>>,
    done_at: Vec<Vec<Instant>>,
    /// How many more failures of each target to take as losses ([`Handler::lost`]).
    lose: Vec<u32>,
}

impl Script {
    fn new(steps: Vec<Vec<(&str, bool, Option<Duration>)>>) -> Self {
        let n = steps.len();
        Self {
            steps: steps
                .into_iter()
                .map(|s| {
                    s.into_iter()
                        .map(|(t, c, d)| (t.to_string(), c, d))
                        .collect()
                })
                .collect(),
            log: vec![Vec::new(); n],
            output: vec![Vec::new(); n],
            done_at: vec![Vec::new(); n],
            lose: vec![0; n],
        }
    }
}

impl Handler for Script {
    fn next(&mut self, t: usize) -> Next {
        match self.steps[t].pop_front() {
            Some((text, then_close, delay)) => {
                let not_before = delay.map(|d| Instant::now() + d);
                Next::Command {
                    text,
                    then_close,
                    last: false,
                    not_before,
                }
            }
            None => Next::Close,
        }
    }

    fn report(&mut self, t: usize, report: Report) {
        let line = match report {
            Report::Output(bytes) => {
                self.output[t].extend_from_slice(&bytes);
                return;
            }
            Report::Done => {
                self.done_at[t].push(Instant::now());
                let text =
                    String::from_utf8_lossy(&std::mem::take(&mut self.output[t])).into_owned();
                format!("done {text}")
            }
            Report::Connecting { attempt } => format!("connecting {attempt}"),
            Report::Refused(e) => format!("refused {e}"),
            Report::Retrying { delay, .. } => {
                format!("retrying {}", crate::engine::format_duration(delay))
            }
            Report::Failed(e) => format!("failed {e}"),
            Report::Finished(_) => "finished".into(),
            _ => return,
        };
        self.log[t].push(line);
    }

    fn lost(&mut self, t: usize, error: &Error) -> Option<Instant> {
        if self.lose[t] == 0 {
            return None;
        }
        self.lose[t] -= 1;
        // What came of the failed command before it failed (a part of its answer).
        let part = std::mem::take(&mut self.output[t]).len();
        self.log[t].push(format!("lost {error} ({part} bytes)"));
        Some(Instant::now() + Duration::from_millis(20))
    }
}

#[test]
fn every_target_runs_its_commands_in_order_and_a_dead_one_fails_alone() {
    let a = practice(PracticeMode::Vanilla);
    let b = practice(PracticeMode::Source);
    let (_held, dead) = closed_port();
    let script = |n: usize| (0..n).map(|_| ("echo x", false, None)).collect::<Vec<_>>();
    let mut h = Script::new(vec![
        vec![
            ("echo a1", false, None),
            ("chars 9000", false, None),
            ("echo a3", false, None),
        ],
        vec![("echo b1", false, None), ("echo b2", false, None)],
        script(2),
    ]);
    run(
        vec![target(a.port()), target(b.port()), target(dead)],
        FleetOptions::default(),
        &mut h,
    )
    .unwrap();
    let long = crate::practice::sample_text(9000);
    assert_eq!(
        h.log[0],
        [
            "connecting 1",
            "done a1",
            &format!("done {long}"),
            "done a3",
            "finished"
        ]
    );
    assert_eq!(h.log[1], ["connecting 1", "done b1", "done b2", "finished"]);
    assert_eq!(h.log[2].len(), 2, "{:?}", h.log[2]);
    assert!(
        h.log[2][1].starts_with("failed cannot connect to 127.0.0.1:"),
        "{:?}",
        h.log[2]
    );
    assert_eq!(a.connections(), 1);
    assert!(a.violations().is_empty(), "{:?}", a.violations());
}

/// The server that handles one packet per read (`silent-empty`: no end marker, nothing for an
/// empty answer), driven through the one machine shape: every answer on every target, the
/// empty last one included, is complete and ends by the quiet gap, not by the timeout (a
/// packet the server left unread, or an answer lost, would fail the target with a timeout).
#[test]
fn one_packet_per_read_servers_answer_every_command_the_last_empty_one_included() {
    let s = practice(PracticeMode::SilentEmpty);
    let script = || {
        vec![
            ("say hi", false, None),
            ("list", false, None),
            ("lines 3", false, None),
            ("say bye", false, None),
        ]
    };
    let mut h = Script::new(vec![script(), script(), script()]);
    let targets = (0..3).map(|_| target(s.port())).collect();
    run(targets, FleetOptions::default(), &mut h).unwrap();
    for log in &h.log {
        assert_eq!(
            log,
            &[
                "connecting 1",
                "done ",
                "done There are 0 of a max of 20 players online: ",
                "done line 1 of 3line 2 of 3line 3 of 3",
                "done ",
                "finished"
            ]
        );
    }
    assert!(s.violations().is_empty(), "{:?}", s.violations());
}

#[test]
fn retries_back_off_without_holding_a_slot() {
    let (_held, dead) = closed_port();
    let live = practice(PracticeMode::Vanilla);
    let mut h = Script::new(vec![
        vec![("echo x", false, None)],
        vec![("echo y", false, None)],
    ]);
    let opts = FleetOptions {
        parallel: 1,
        retries: 2,
        backoff: Duration::from_millis(20),
        ..FleetOptions::default()
    };
    run(vec![target(dead), target(live.port())], opts, &mut h).unwrap();
    assert_eq!(
        h.log[0][..5],
        [
            "connecting 1",
            "retrying 20ms",
            "connecting 2",
            "retrying 40ms",
            "connecting 3"
        ]
    );
    assert!(
        h.log[0][5].starts_with("failed cannot connect"),
        "{:?}",
        h.log[0]
    );
    // With one slot, the live target ran while the dead one waited to retry.
    assert_eq!(h.log[1], ["connecting 1", "done y", "finished"]);
}

#[test]
fn a_refused_command_is_reported_and_the_session_goes_on() {
    let s = practice(PracticeMode::Vanilla);
    let mut h = Script::new(vec![vec![
        ("echo a", false, None),
        ("bad\0nul", false, None),
        ("echo c", false, None),
    ]]);
    run(vec![target(s.port())], FleetOptions::default(), &mut h).unwrap();
    assert_eq!(h.log[0].len(), 5, "{:?}", h.log[0]);
    assert_eq!(h.log[0][1], "done a");
    assert!(
        h.log[0][2].starts_with("refused command contains a NUL"),
        "{:?}",
        h.log[0]
    );
    assert_eq!(h.log[0][3..], ["done c", "finished"]);
    assert_eq!(s.commands(), ["echo a", "echo c"]);
}

#[test]
fn a_delay_holds_the_next_command_back_and_a_closing_command_reconnects() {
    let s = practice(PracticeMode::Vanilla);
    let delay = Duration::from_millis(100);
    let mut h = Script::new(vec![vec![
        ("echo one", true, None),
        ("echo two", false, Some(delay)),
    ]]);
    run(vec![target(s.port())], FleetOptions::default(), &mut h).unwrap();
    assert_eq!(
        h.log[0],
        ["connecting 1", "done one", "done two", "finished"]
    );
    // The first command closed the connection after its answer: the second needed a new one.
    assert_eq!(s.connections(), 2);
    assert_eq!(s.commands(), ["echo one", "echo two"]);
    // A lower bound only: the second answer cannot come before the delay has passed.
    assert!(h.done_at[0][1] >= h.done_at[0][0] + delay);
}

/// A handler that takes a failure as a loss ([`Handler::lost`]) has the target connected again
/// and asked for its next command: the command that failed is not sent again. A connect that
/// fails is a loss too, until the handler ends it.
#[test]
fn a_lost_target_connects_again_and_goes_on_until_the_handler_ends_it() {
    let s = practice(PracticeMode::Vanilla);
    let (_held, dead) = closed_port();
    let mut h = Script::new(vec![
        vec![
            ("echo a", false, None),
            // The server sends the answer's first packet, then closes the connection.
            ("drop 20000", false, None),
            ("echo c", false, None),
        ],
        vec![("echo x", false, None)],
    ]);
    h.lose = vec![1, 2];
    run(
        vec![target(s.port()), target(dead)],
        FleetOptions::default(),
        &mut h,
    )
    .unwrap();
    assert_eq!(h.log[0].len(), 6, "{:?}", h.log[0]);
    assert_eq!(h.log[0][..2], ["connecting 1", "done a"]);
    assert!(h.log[0][2].starts_with("lost "), "{:?}", h.log[0]);
    assert_eq!(h.log[0][3..], ["connecting 1", "done c", "finished"]);
    assert_eq!(s.commands(), ["echo a", "drop 20000", "echo c"]);
    assert_eq!(s.connections(), 2);
    let dead_log: Vec<&str> = h.log[1]
        .iter()
        .map(|l| &l[..l.find(' ').unwrap_or(l.len())])
        .collect();
    assert_eq!(
        dead_log,
        [
            "connecting",
            "lost",
            "connecting",
            "lost",
            "connecting",
            "failed"
        ],
        "{:?}",
        h.log[1]
    );
}

/// A cancel (Ctrl-C in the application) ends every target not yet finished with
/// `Error::Cancelled`, the one waiting for an answer included, and the run returns at once.
#[test]
fn a_cancel_ends_every_unfinished_target_and_returns() {
    let s = practice(PracticeMode::Vanilla);
    let mut h = Script::new(vec![
        vec![
            ("echo a", false, None),
            ("sleep 30000", false, None),
            ("echo c", false, None),
        ],
        vec![("echo b", false, None), ("sleep 30000", false, None)],
    ]);
    let cancel = Alarm::new();
    let start = Instant::now();
    std::thread::scope(|scope| {
        let flag = cancel.clone();
        let server = &s;
        scope.spawn(move || {
            // Raised once both sleeps are on the server: each target has a command under way.
            let start = Instant::now();
            while server
                .commands()
                .iter()
                .filter(|c| *c == "sleep 30000")
                .count()
                < 2
            {
                assert!(start.elapsed() < Duration::from_secs(20));
                std::thread::sleep(Duration::from_millis(5));
            }
            flag.raise();
        });
        let opts = FleetOptions {
            cancel: Some(cancel.clone()),
            ..FleetOptions::default()
        };
        run(vec![target(s.port()), target(s.port())], opts, &mut h).unwrap();
    });
    assert!(start.elapsed() < Duration::from_secs(20));
    assert_eq!(h.log[0][1], "done a");
    assert_eq!(h.log[1][1], "done b");
    for log in &h.log {
        assert!(
            log.last().unwrap().starts_with("failed interrupted"),
            "{log:?}"
        );
    }
}

/// Reads one RCON packet: its id and body.
fn read_packet(stream: &mut std::net::TcpStream) -> std::io::Result<(i32, Vec<u8>)> {
    use std::io::Read;
    let mut len = [0u8; 4];
    stream.read_exact(&mut len)?;
    let mut rest = vec![0u8; i32::from_le_bytes(len) as usize];
    stream.read_exact(&mut rest)?;
    let id = i32::from_le_bytes(rest[..4].try_into().unwrap());
    Ok((id, rest[8..rest.len() - 2].to_vec()))
}

/// The fake servers' side of a connection: the next one accepted, its login answered.
fn accept_login(listener: &TcpListener) -> std::net::TcpStream {
    use std::io::Write;
    let (mut s, _) = listener.accept().unwrap();
    let (id, _) = read_packet(&mut s).unwrap();
    s.write_all(&crate::rcon::packet::encode(id, 2, b""))
        .unwrap();
    s
}

/// Answers one command on `s` with its own text, in one packet.
fn echo_one(s: &mut std::net::TcpStream) {
    use std::io::Write;
    let (id, body) = read_packet(s).unwrap();
    s.write_all(&crate::rcon::packet::encode(id, 0, &body))
        .unwrap();
}

/// A server that closes an idle connection while a delayed command waits: the command runs at
/// its time on a new connection (the delay's deadline used to go with the connection, and the
/// target waited for ever).
#[test]
fn a_close_during_a_delay_reconnects_for_the_delayed_command() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        for keep_open in [false, true] {
            let mut s = accept_login(&listener);
            echo_one(&mut s);
            if keep_open {
                // Until the client closes.
                while read_packet(&mut s).is_ok() {}
            }
        }
    });
    let mut t = target(port);
    t.config.end = crate::rcon::exchange::EndDetection::SinglePacket;
    let mut h = Script::new(vec![vec![
        ("first", false, None),
        ("second", false, Some(Duration::from_millis(300))),
    ]]);
    // A target that waits for ever fails the test instead of hanging it.
    let cancel = Alarm::new();
    let watchdog = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(20));
        watchdog.raise();
    });
    let opts = FleetOptions {
        cancel: Some(cancel),
        ..FleetOptions::default()
    };
    run(vec![t], opts, &mut h).unwrap();
    assert_eq!(
        h.log[0],
        ["connecting 1", "done first", "done second", "finished"]
    );
    server.join().unwrap();
}

/// A handler that waits ([`Next::Wait`]) keeps the connection and is asked again when the wait
/// is over; a close by the server meanwhile is a loss the handler may take: connected again
/// (logged in anew) and asked again.
#[test]
fn a_wait_holds_the_connection_and_a_close_meanwhile_is_a_loss() {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let server = std::thread::spawn(move || {
        // The first connection: a login and one command, then closed while the client waits.
        let mut s = accept_login(&listener);
        echo_one(&mut s);
        std::thread::sleep(Duration::from_millis(100));
        drop(s);
        // The second: a login, held until the client closes it.
        let mut s = accept_login(&listener);
        while read_packet(&mut s).is_ok() {}
    });

    struct Waiter {
        asked: u32,
        log: Vec<String>,
    }
    impl Handler for Waiter {
        fn next(&mut self, _: usize) -> Next {
            self.asked += 1;
            let now = Instant::now();
            match self.asked {
                1 => Next::Command {
                    text: "first".into(),
                    then_close: false,
                    last: false,
                    not_before: None,
                },
                // The server closes the connection during this wait.
                2 => Next::Wait {
                    until: now + Duration::from_secs(10),
                },
                // After the reconnect: a short wait that ends by itself.
                3 => Next::Wait {
                    until: now + Duration::from_millis(50),
                },
                _ => Next::Close,
            }
        }
        fn report(&mut self, _: usize, report: Report) {
            match report {
                Report::Connecting { .. } => self.log.push("connecting".into()),
                Report::Done => self.log.push("done".into()),
                Report::Failed(e) => self.log.push(format!("failed {e}")),
                Report::Finished(_) => self.log.push("finished".into()),
                _ => {}
            }
        }
        fn lost(&mut self, _: usize, error: &Error) -> Option<Instant> {
            self.log.push(format!("lost {error}"));
            Some(Instant::now())
        }
    }

    let mut t = target(port);
    t.config.end = crate::rcon::exchange::EndDetection::SinglePacket;
    let mut h = Waiter {
        asked: 0,
        log: Vec::new(),
    };
    let start = Instant::now();
    run(vec![t], FleetOptions::default(), &mut h).unwrap();
    assert_eq!(h.log.len(), 5, "{:?}", h.log);
    assert_eq!(h.log[..2], ["connecting", "done"]);
    assert!(h.log[2].starts_with("lost "), "{:?}", h.log);
    assert_eq!(h.log[3..], ["connecting", "finished"]);
    assert_eq!(h.asked, 4);
    // The ten-second wait ended with the close, not by its time.
    assert!(start.elapsed() < Duration::from_secs(10));
    server.join().unwrap();
}

/// The waker ([`FleetOptions::wake`]) hands the running loop a new step: two targets wait for
/// an hour once logged in; when the second is ready the handler sets the waker, and both are
/// asked again at once (a step that depends on every target, as a group's countdown does), the
/// handler told first ([`Handler::woken`]). A target waiting to connect again is connected at
/// once too.
#[test]
fn the_waker_asks_every_waiting_target_again_at_once() {
    let server = practice(PracticeMode::Vanilla);
    let (_held, dead) = closed_port();

    struct Gate {
        wake: Alarm,
        ready: Vec<bool>,
        log: Vec<Vec<String>>,
        woken: u32,
    }
    impl Handler for Gate {
        fn next(&mut self, t: usize) -> Next {
            if !self.ready[t] {
                self.ready[t] = true;
                self.log[t].push("ready".into());
                if self.ready[..2].iter().all(|r| *r) {
                    self.wake.raise();
                }
                return Next::Wait {
                    until: Instant::now() + Duration::from_secs(3600),
                };
            }
            match self.log[t].last().map(String::as_str) {
                Some("ready") => Next::Command {
                    text: format!("echo {t}"),
                    then_close: false,
                    last: false,
                    not_before: None,
                },
                _ => Next::Close,
            }
        }
        fn report(&mut self, t: usize, report: Report) {
            match report {
                Report::Done => self.log[t].push("done".into()),
                Report::Failed(e) => self.log[t].push(format!("failed {e}")),
                Report::Finished(_) => self.log[t].push("finished".into()),
                _ => {}
            }
        }
        fn woken(&mut self) {
            self.woken += 1;
        }
        fn lost(&mut self, t: usize, _: &Error) -> Option<Instant> {
            // The refused target: taken back once, an hour from now; the waker cuts it short.
            if self.log[t].is_empty() {
                self.log[t].push("lost".into());
                return Some(Instant::now() + Duration::from_secs(3600));
            }
            None
        }
    }

    let wake = Alarm::new();
    let mut h = Gate {
        wake: wake.clone(),
        ready: vec![false, false, true],
        log: vec![Vec::new(); 3],
        woken: 0,
    };
    // Without the waker the targets would wait an hour: the watchdog fails the test instead.
    let cancel = Alarm::new();
    let watchdog = cancel.clone();
    std::thread::spawn(move || {
        std::thread::sleep(Duration::from_secs(20));
        watchdog.raise();
    });
    let start = Instant::now();
    let opts = FleetOptions {
        wake: Some(wake),
        cancel: Some(cancel),
        ..FleetOptions::default()
    };
    run(
        vec![target(server.port()), target(server.port()), target(dead)],
        opts,
        &mut h,
    )
    .unwrap();
    assert!(start.elapsed() < Duration::from_secs(60), "{:?}", h.log);
    for t in 0..2 {
        assert_eq!(h.log[t], ["ready", "done", "finished"], "{:?}", h.log);
    }
    assert_eq!(h.log[2].len(), 2, "{:?}", h.log);
    // The handler heard the wake-up it asked for, once.
    assert_eq!(h.woken, 1);
    assert!(h.log[2][1].starts_with("failed "), "{:?}", h.log);
}

/// A cancel raised on another thread wakes a loop that sleeps with nothing else to wake it
/// for: the one target waits 3 s (no timer before then, nothing on the wire), and the
/// cancel, raised once the loop's thread sleeps in the poll (Linux says where a thread sleeps),
/// ends it at once. Were the alarm not to wake the loop, the wait would end first and the
/// target finish instead.
#[cfg(target_os = "linux")]
#[test]
fn a_cancel_raised_elsewhere_wakes_a_sleeping_loop() {
    struct Idle(std::sync::mpsc::Sender<libc::pid_t>, Vec<&'static str>);
    impl Handler for Idle {
        fn next(&mut self, _: usize) -> Next {
            if !self.1.is_empty() {
                return Next::Close;
            }
            self.1.push("waiting");
            // SAFETY: gettid has no preconditions.
            let _ = self.0.send(unsafe { libc::gettid() });
            Next::Wait {
                until: Instant::now() + Duration::from_secs(3),
            }
        }
        fn report(&mut self, _: usize, report: Report) {
            match report {
                Report::Failed(Error::Cancelled) => self.1.push("cancelled"),
                Report::Failed(_) => self.1.push("failed"),
                Report::Finished(_) => self.1.push("finished"),
                _ => {}
            }
        }
    }
    let s = practice(PracticeMode::Vanilla);
    let cancel = Alarm::new();
    let (tx, rx) = std::sync::mpsc::channel();
    let raiser = cancel.clone();
    std::thread::spawn(move || {
        let Ok(tid) = rx.recv() else { return };
        let wchan = format!("/proc/self/task/{tid}/wchan");
        while !std::fs::read_to_string(&wchan).is_ok_and(|w| w.contains("poll")) {
            std::thread::yield_now();
        }
        raiser.raise();
    });
    let mut h = Idle(tx, Vec::new());
    let opts = FleetOptions {
        cancel: Some(cancel),
        ..FleetOptions::default()
    };
    // Nothing to probe after the login: no timer runs while the target waits.
    let mut t = target(s.port());
    t.config.end = crate::rcon::exchange::EndDetection::SinglePacket;
    run(vec![t], opts, &mut h).unwrap();
    assert_eq!(h.1, ["waiting", "cancelled"]);
}

#[test]
fn a_refused_first_address_goes_on_to_the_next_within_one_attempt() {
    let (_held, dead) = closed_port();
    let live = practice(PracticeMode::Vanilla);
    let mut h = Script::new(vec![vec![("echo x", false, None)]]);
    let addrs = vec![
        SocketAddr::from(([127, 0, 0, 1], dead)),
        SocketAddr::from(([127, 0, 0, 1], live.port())),
    ];
    run_resolved(
        vec![(target(live.port()), Ok(addrs))],
        FleetOptions::default(),
        &mut h,
    )
    .unwrap();
    // One attempt: the refusal moved on to the second address, it was no failed connect.
    assert_eq!(h.log[0], ["connecting 1", "done x", "finished"]);
}
