//! Table-driven tests of the exchange, one table per state (after ureq-proto's `test/state_*`):
//! each case feeds packets, closes and clock ticks and checks what goes out and what happens.

use std::time::{Duration, Instant};

use super::*;
use crate::rcon::packet::{Decoder, encode};

/// What happens in a case, in order.
#[derive(Debug)]
enum Step {
    /// The server sends this packet (id, type, body); `None` as id means "the id the client
    /// used for its last packet".
    Recv(Option<i32>, i32, &'static [u8]),
    /// Raw bytes from the server.
    Bytes(&'static [u8]),
    /// The server closes the connection.
    Close,
    /// The clock moves on by this many milliseconds, and the timer is checked.
    Wait(u64),
    /// The client starts a command.
    Cmd(&'static str),
    /// The client starts the last command of the session.
    Last(&'static str),
}

use Step::*;

/// What the test expects to have seen after all steps.
#[derive(Debug, Default)]
struct Seen {
    /// Packets the client sent, as (wire type, id, body).
    sent: Vec<(i32, i32, Vec<u8>)>,
    output: Vec<u8>,
    done: usize,
    ready: usize,
    failed: Vec<String>,
    reconnects: usize,
    learned: Vec<EndMethod>,
    forgot: usize,
    notes: usize,
    warnings: usize,
}

struct Harness {
    ex: Exchange,
    now: Instant,
    seen: Seen,
    last_id: i32,
}

impl Harness {
    fn new(cfg: Options) -> Self {
        let now = Instant::now();
        let mut h = Self {
            ex: Exchange::new(cfg, Password::new("pw")),
            now,
            seen: Seen::default(),
            last_id: 0,
        };
        h.ex.start(now);
        h.drain();
        h
    }

    fn drain(&mut self) {
        while let Some(action) = self.ex.poll() {
            match action {
                Action::Send(bytes) => {
                    let mut d = Decoder::default();
                    d.feed(&bytes);
                    let p = d.next_packet().unwrap().unwrap();
                    self.last_id = p.id;
                    self.seen.sent.push((p.kind, p.id, p.body));
                }
                Action::LoggedIn => self.seen.ready += 1,
                Action::Output(b) => self.seen.output.extend(b),
                Action::Done { .. } => self.seen.done += 1,
                Action::Fail(e) => self.seen.failed.push(e.to_string()),
                // A reconnect queues a login.
                Action::Reconnect => {
                    self.seen.reconnects += 1;
                    self.ex.start(self.now);
                }
                Action::Warning(_) => self.seen.warnings += 1,
                Action::Note(_) => self.seen.notes += 1,
                Action::Learned(Some(l)) => {
                    let facts = l.get::<ServerFacts>().expect("RCON's facts");
                    self.seen.learned.push(facts.method);
                }
                Action::Learned(None) => self.seen.forgot += 1,
                Action::Message(_) | Action::Trace(_) => {}
            }
        }
    }

    fn step(&mut self, s: &Step) {
        match s {
            Recv(id, kind, body) => {
                let id = id.unwrap_or(self.last_id);
                self.ex.receive(&encode(id, *kind, body), self.now);
            }
            Bytes(b) => self.ex.receive(b, self.now),
            Close => {
                self.ex.peer_closed(false, self.now);
            }
            Wait(ms) => {
                self.now += Duration::from_millis(*ms);
                if self.ex.wake().is_some_and(|t| t <= self.now) {
                    self.ex.tick(self.now);
                }
            }
            Cmd(c) => self.ex.start_command(c, false, self.now).unwrap(),
            Last(c) => self.ex.start_last_command(c, self.now).unwrap(),
        }
        self.drain();
    }

    fn run(cfg: Options, steps: &[Step]) -> Self {
        let mut h = Self::new(cfg);
        for s in steps {
            h.step(s);
        }
        h
    }
}

fn cfg() -> Options {
    Options {
        timeout: Duration::from_secs(2),
        ..Options::default()
    }
}

/// What a session learned about a server that answers by `method`.
fn facts(method: EndMethod) -> ServerFacts {
    ServerFacts {
        method,
        rtt: Duration::from_micros(100),
        latency: Duration::from_micros(200),
        samples: 10,
        refuses_sentinel: false,
    }
}

/// The settings of a session that remembers `facts`.
fn remembered(facts: ServerFacts) -> Options {
    Options {
        learned: Some(Learned::new(facts)),
        ..cfg()
    }
}

fn learned(method: EndMethod) -> Options {
    remembered(facts(method))
}

fn sent_types(h: &Harness) -> Vec<i32> {
    h.seen.sent.iter().map(|s| s.0).collect()
}

/// State: logging in.
#[test]
fn state_login() {
    struct Case {
        name: &'static str,
        steps: Vec<Step>,
        ready: usize,
        failed: Option<&'static str>,
    }
    let cases = [
        Case {
            name: "vanilla reply",
            steps: vec![Recv(None, 2, b"")],
            ready: 0, // the probe goes out first
            failed: None,
        },
        Case {
            name: "source: empty type-0 before the reply",
            steps: vec![Recv(None, 0, b""), Recv(None, 2, b"")],
            ready: 0,
            failed: None,
        },
        Case {
            name: "refused with id -1",
            steps: vec![Recv(Some(-1), 2, b"")],
            ready: 0,
            failed: Some("login refused: wrong password"),
        },
        Case {
            name: "refused with type -1",
            steps: vec![Recv(None, -1, b"")],
            ready: 0,
            failed: Some("login refused: wrong password"),
        },
        Case {
            name: "server A: a close, no packet",
            steps: vec![Close],
            ready: 0,
            failed: Some("closed the connection after the password"),
        },
        Case {
            name: "nothing at all",
            steps: vec![Wait(2000)],
            ready: 0,
            failed: Some("does not look like an RCON port"),
        },
        Case {
            name: "an HTTP server",
            steps: vec![Bytes(b"HTTP/1.1 400 Bad Request\r\n\r\n")],
            ready: 0,
            failed: Some("as from an HTTP or web server"),
        },
        Case {
            name: "another id only",
            steps: vec![Recv(Some(4242), 2, b""), Wait(2000)],
            ready: 0,
            failed: Some("waiting for the login reply (replies with another id came"),
        },
        Case {
            name: "learned: ready at once",
            steps: vec![],
            ready: 0,
            failed: None,
        },
    ];
    for c in cases {
        let h = Harness::run(cfg(), &c.steps);
        assert_eq!(h.seen.ready, c.ready, "{}", c.name);
        match c.failed {
            Some(msg) => {
                assert_eq!(h.seen.failed.len(), 1, "{}: {:?}", c.name, h.seen.failed);
                assert!(
                    h.seen.failed[0].contains(msg),
                    "{}: {:?}",
                    c.name,
                    h.seen.failed
                );
            }
            None => assert!(h.seen.failed.is_empty(), "{}: {:?}", c.name, h.seen.failed),
        }
    }
    // With a learned method no probe follows the login.
    let h = Harness::run(learned(EndMethod::Vanilla), &[Recv(None, 2, b"")]);
    assert_eq!(h.seen.ready, 1);
    assert_eq!(sent_types(&h), vec![3]);
}

/// State: probing, right after login.
#[test]
fn state_probe() {
    struct Case {
        name: &'static str,
        steps: Vec<Step>,
        method: Option<EndMethod>,
        reconnects: usize,
        notes: usize,
    }
    let login = || Recv(None, 2, b"");
    let cases = [
        Case {
            name: "vanilla: Unknown request 0",
            steps: vec![login(), Recv(Some(-2), 0, b"Unknown request 0")],
            method: Some(EndMethod::Vanilla),
            reconnects: 0,
            notes: 0,
        },
        Case {
            name: "source: a mirror and a trailer",
            steps: vec![
                login(),
                Recv(Some(-2), 0, b""),
                Recv(Some(-2), 0, b"\x00\x01\x00\x00"),
            ],
            method: Some(EndMethod::Sentinel),
            reconnects: 0,
            notes: 0,
        },
        Case {
            name: "closes on ids <= 0: a positive sentinel works",
            steps: vec![login(), Close, login(), Recv(None, 0, b"")],
            method: Some(EndMethod::PositiveSentinel),
            reconnects: 1,
            notes: 1,
        },
        Case {
            name: "server A: closes on any sentinel",
            steps: vec![login(), Close, login(), Close, login()],
            method: Some(EndMethod::Silence),
            reconnects: 2,
            // Said with the first answer, which may still show an end marker.
            notes: 0,
        },
        Case {
            name: "server B: login failure and close on any sentinel",
            steps: vec![
                login(),
                Recv(Some(-1), 2, b""),
                login(),
                Recv(Some(-1), 2, b""),
                login(),
            ],
            method: Some(EndMethod::Silence),
            reconnects: 2,
            // Said with the first answer, which may still show an end marker.
            notes: 0,
        },
        Case {
            name: "factorio-like: no answer at all",
            steps: vec![login(), Wait(800)],
            method: Some(EndMethod::Idle),
            reconnects: 0,
            notes: 1,
        },
        Case {
            name: "an old packet is skipped",
            steps: vec![
                login(),
                Recv(Some(77), 0, b"stray"),
                Recv(Some(-2), 0, b"Unknown request 0"),
            ],
            method: Some(EndMethod::Vanilla),
            reconnects: 0,
            notes: 0,
        },
    ];
    for c in cases {
        let h = Harness::run(cfg(), &c.steps);
        assert_eq!(h.ex.method(), c.method, "{}", c.name);
        assert_eq!(h.seen.reconnects, c.reconnects, "{}", c.name);
        assert_eq!(h.seen.notes, c.notes, "{}", c.name);
        assert_eq!(h.seen.ready, 1, "{}: ready once", c.name);
        assert!(h.seen.failed.is_empty(), "{}: {:?}", c.name, h.seen.failed);
        assert_eq!(
            h.seen.learned,
            c.method.into_iter().collect::<Vec<_>>(),
            "{}",
            c.name
        );
    }
}

/// State: a command under way, per end method.
#[test]
fn state_command() {
    struct Case {
        name: &'static str,
        cfg: Options,
        steps: Vec<Step>,
        output: &'static [u8],
        done: usize,
        /// The wire types the client sent after the login.
        sent: Vec<i32>,
        failed: Option<&'static str>,
    }
    let big: &'static [u8] = Box::leak(vec![b'x'; 4096].into_boxed_slice());
    let login = || Recv(None, 2, b"");
    let cases = vec![
        Case {
            name: "vanilla learned: a short answer is one round trip",
            cfg: learned(EndMethod::Vanilla),
            steps: vec![login(), Cmd("list"), Recv(None, 0, b"There are 0")],
            output: b"There are 0",
            done: 1,
            sent: vec![2],
            failed: None,
        },
        Case {
            name: "vanilla learned: a full fragment is followed by the sentinel",
            cfg: learned(EndMethod::Vanilla),
            steps: vec![
                login(),
                Cmd("help"),
                Recv(None, 0, big),
                Recv(Some(1 + 1), 0, b"tail"),
                Recv(Some(-2), 0, b"Unknown request 0"),
            ],
            output: b"",
            done: 1,
            sent: vec![2, 0],
            failed: None,
        },
        Case {
            name: "vanilla learned, server B now: a silent answer, a late sentinel, -1",
            cfg: learned(EndMethod::Vanilla),
            steps: vec![login(), Cmd("say hi"), Wait(1000), Recv(Some(-1), 2, b"")],
            output: b"",
            done: 1,
            sent: vec![2, 0],
            failed: None,
        },
        Case {
            name: "vanilla learned, server A now: type-2 output and its end marker",
            cfg: learned(EndMethod::Vanilla),
            steps: vec![login(), Cmd("help"), Recv(None, 2, big), Recv(None, 2, b"")],
            output: b"",
            done: 1,
            sent: vec![2],
            failed: None,
        },
        Case {
            name: "sentinel: after the first fragment, ends at the mirror; trailer is stale",
            cfg: learned(EndMethod::Sentinel),
            steps: vec![
                login(),
                Cmd("list"),
                Recv(None, 0, b"a"),
                Recv(Some(-2), 0, b""),
                Recv(Some(-2), 0, b"\x00\x01\x00\x00"),
            ],
            output: b"a",
            done: 1,
            sent: vec![2, 0],
            failed: None,
        },
        Case {
            name: "end marker: text then the empty packet",
            cfg: learned(EndMethod::EndMarker),
            steps: vec![
                login(),
                Cmd("list"),
                Recv(None, 2, b"ab"),
                Recv(None, 2, b""),
            ],
            output: b"ab",
            done: 1,
            sent: vec![2],
            failed: None,
        },
        Case {
            name: "end marker: an empty answer is the marker alone",
            cfg: learned(EndMethod::EndMarker),
            steps: vec![login(), Cmd("say hi"), Recv(None, 2, b"")],
            output: b"",
            done: 1,
            sent: vec![2],
            failed: None,
        },
        Case {
            name: "silence: an empty answer ends after the gap from the command",
            cfg: learned(EndMethod::Silence),
            steps: vec![login(), Cmd("say hi"), Wait(51)],
            output: b"",
            done: 1,
            sent: vec![2],
            failed: None,
        },
        Case {
            name: "silence: messages, then the gap",
            cfg: learned(EndMethod::Silence),
            steps: vec![
                login(),
                Cmd("list"),
                Recv(None, 0, b"one"),
                Wait(1),
                Recv(None, 0, b"two"),
                Wait(1),
                Wait(10),
            ],
            output: b"onetwo",
            done: 1,
            sent: vec![2],
            failed: None,
        },
        Case {
            name: "silence, unlearned: the floor is 100ms",
            cfg: Options {
                end: EndDetection::Idle,
                ..cfg()
            },
            steps: vec![login(), Cmd("say hi"), Wait(60), Wait(50)],
            output: b"",
            done: 1,
            sent: vec![2],
            failed: None,
        },
        Case {
            name: "idle: no packet at all is a timeout",
            cfg: learned(EndMethod::Idle),
            steps: vec![login(), Cmd("list"), Wait(2000)],
            output: b"",
            done: 0,
            sent: vec![2],
            failed: Some("timed out after 2s while waiting for the command's output"),
        },
        Case {
            name: "single packet",
            cfg: Options {
                end: EndDetection::SinglePacket,
                ..cfg()
            },
            steps: vec![login(), Cmd("x"), Recv(None, 0, b"all")],
            output: b"all",
            done: 1,
            sent: vec![2],
            failed: None,
        },
        Case {
            name: "a login failure answering the command",
            cfg: learned(EndMethod::Sentinel),
            steps: vec![login(), Cmd("x"), Recv(Some(-1), 2, b"")],
            output: b"",
            done: 0,
            sent: vec![2],
            failed: Some("answered the command with a login failure"),
        },
        Case {
            name: "close mid-response",
            cfg: learned(EndMethod::Sentinel),
            steps: vec![login(), Cmd("x"), Recv(None, 0, b"part"), Close],
            output: b"part",
            done: 0,
            sent: vec![2, 0],
            failed: Some("mid-response; output is incomplete"),
        },
        Case {
            name: "stale packets never show",
            cfg: learned(EndMethod::Sentinel),
            steps: vec![
                login(),
                Cmd("x"),
                Recv(Some(0), 1, b"[Chat] hi"),
                Recv(Some(999), 0, b"not yours"),
                Recv(None, 0, b"yes"),
                Recv(Some(-2), 0, b""),
            ],
            output: b"yes",
            done: 1,
            sent: vec![2, 0],
            failed: None,
        },
        Case {
            name: "a malformed packet after valid ones is a protocol error, said once",
            cfg: learned(EndMethod::Sentinel),
            steps: vec![
                login(),
                Cmd("x"),
                Bytes(b"\xff\xff\xff\xff\x00\x00\x00\x00"),
            ],
            output: b"",
            done: 0,
            sent: vec![2],
            failed: Some("protocol error: malformed packet: size field -1 is below"),
        },
    ];
    for c in cases {
        let h = Harness::run(c.cfg, &c.steps);
        if !c.output.is_empty() {
            assert_eq!(h.seen.output, c.output, "{}", c.name);
        }
        assert_eq!(h.seen.done, c.done, "{}", c.name);
        assert_eq!(&sent_types(&h)[1..], &c.sent[..], "{}", c.name);
        match c.failed {
            Some(msg) => {
                assert_eq!(h.seen.failed.len(), 1, "{}: {:?}", c.name, h.seen.failed);
                assert!(
                    h.seen.failed[0].contains(msg),
                    "{}: {:?}",
                    c.name,
                    h.seen.failed
                );
                let once = h.seen.failed[0].matches("malformed").count() <= 1;
                assert!(once, "{}: {:?}", c.name, h.seen.failed);
            }
            None => assert!(h.seen.failed.is_empty(), "{}: {:?}", c.name, h.seen.failed),
        }
    }
}

/// The last command of a session on a server that refuses sentinels in order (and handles one
/// packet per read): nothing goes right behind the command; the first packet of the answer sends
/// the sentinel, whose refusal ends the answer exactly; with no packet, the sentinel goes out
/// after the quiet gap, and again after each further gap until it is refused.
#[test]
fn state_last_command() {
    let cfg = remembered(ServerFacts {
        refuses_sentinel: true,
        ..facts(EndMethod::Silence)
    });
    let login = || Recv(None, 2, b"");
    // An empty answer: only the command goes out; once the quiet gap has passed (the command
    // long read), the sentinel, whose refusal ends the answer.
    let h = Harness::run(cfg.clone(), &[login(), Last("say hi")]);
    assert_eq!(&sent_types(&h)[1..], &[2], "no sentinel behind the command");
    assert_eq!(h.seen.done, 0);
    let h = Harness::run(
        cfg.clone(),
        &[login(), Last("say hi"), Wait(51), Recv(Some(-1), 2, b"")],
    );
    assert_eq!(&sent_types(&h)[1..], &[2, 0], "the sentinel after the gap");
    assert_eq!(h.seen.done, 1);
    assert!(h.seen.failed.is_empty(), "{:?}", h.seen.failed);
    // An answer slower than the gap still comes under its command: the refusal follows it.
    let h = Harness::run(
        cfg.clone(),
        &[
            login(),
            Last("list"),
            Wait(51),
            Wait(20),
            Recv(Some(2), 0, b"late"),
            Recv(Some(-1), 2, b""),
        ],
    );
    assert_eq!(h.seen.output, b"late");
    assert_eq!(h.seen.done, 1);
    assert_eq!(h.seen.warnings, 0);
    // A sentinel that shared the command's read after all (not refused within a gap): another
    // gives it a read, and the refusal ends the answer.
    let h = Harness::run(
        cfg.clone(),
        &[
            login(),
            Last("say hi"),
            Wait(51),
            Wait(51),
            Recv(Some(-1), 2, b""),
        ],
    );
    assert_eq!(
        &sent_types(&h)[1..],
        &[2, 0, 0],
        "another sentinel a gap later"
    );
    assert_eq!(h.seen.done, 1);
    assert!(h.seen.failed.is_empty(), "{:?}", h.seen.failed);
    // Messages, then the refusal: the sentinel after the first, all of them, in order, even
    // when the rest comes long after the gap would have passed.
    let h = Harness::run(
        cfg.clone(),
        &[
            login(),
            Last("list"),
            Recv(Some(2), 0, b"a"),
            Wait(900),
            Recv(Some(2), 0, b"b"),
            Recv(Some(-1), 2, b""),
        ],
    );
    assert_eq!(
        &sent_types(&h)[1..],
        &[2, 0],
        "one sentinel, after the first packet"
    );
    assert_eq!(h.seen.sent.last().map(|p| p.1), Some(-2));
    assert_eq!(h.seen.output, b"ab");
    assert_eq!(h.seen.done, 1);
    assert!(h.seen.failed.is_empty(), "{:?}", h.seen.failed);
    // Not known to refuse sentinels: the quiet gap as usual, no sentinel.
    let h = Harness::run(
        learned(EndMethod::Silence),
        &[login(), Last("say hi"), Wait(51)],
    );
    assert_eq!(&sent_types(&h)[1..], &[2]);
    assert_eq!(h.seen.done, 1);
    // Vanilla: the last command is like any other.
    let h = Harness::run(
        learned(EndMethod::Vanilla),
        &[login(), Last("list"), Recv(None, 0, b"x")],
    );
    assert_eq!(&sent_types(&h)[1..], &[2]);
    assert_eq!(h.seen.done, 1);
}

/// Vanilla remembered, and another server at the address that sends each answer as one packet
/// and closes on the id -2 sentinel: a long first packet that is no vanilla fragment draws the
/// sentinel, and the close after it ends the answer whole, with what was learned forgotten. A
/// close after a packet that may be a fragment (4096 UTF-16 units) still fails as incomplete.
#[test]
fn state_relearn_on_a_close_after_a_packet_no_server_continues() {
    let login = || Recv(None, 2, b"");
    // The harness's packets are static.
    let leak = |s: String| -> &'static [u8] { Box::leak(s.into_boxed_str()).as_bytes() };
    let whole = leak("é".repeat(5000));
    let h = Harness::run(
        learned(EndMethod::Vanilla),
        &[login(), Cmd("chars"), Recv(None, 0, whole), Close],
    );
    assert_eq!(
        h.seen.sent.last().map(|p| p.1),
        Some(-2),
        "the sentinel went out"
    );
    assert_eq!(h.seen.output, whole);
    assert_eq!(h.seen.done, 1);
    assert!(h.seen.failed.is_empty(), "{:?}", h.seen.failed);
    assert_eq!(h.seen.warnings, 1, "said once");
    assert_eq!(h.seen.forgot, 1);
    assert!(h.ex.is_disconnected());
    for fragment in [leak("é".repeat(4096)), leak("x".repeat(4096))] {
        let h = Harness::run(
            learned(EndMethod::Vanilla),
            &[login(), Cmd("chars"), Recv(None, 0, fragment), Close],
        );
        assert_eq!(h.seen.done, 0, "{} bytes", fragment.len());
        assert_eq!(h.seen.failed.len(), 1, "{} bytes", fragment.len());
        assert!(
            h.seen.failed[0].contains("output is incomplete"),
            "{:?}",
            h.seen.failed
        );
    }
}

/// Re-learning: evidence that contradicts the remembered method.
#[test]
fn state_relearn() {
    // Vanilla remembered, server B now: the late sentinel's refusal settles the quiet gap and
    // the connection must be replaced.
    let h = Harness::run(
        learned(EndMethod::Vanilla),
        &[
            Recv(None, 2, b""),
            Cmd("say hi"),
            Wait(1000),
            Recv(Some(-1), 2, b""),
        ],
    );
    assert_eq!(h.ex.method(), Some(EndMethod::Silence));
    assert_eq!(h.seen.learned, vec![EndMethod::Silence]);
    assert!(h.ex.is_disconnected());
    // Vanilla remembered, server A now: the type-2 answer switches to its end marker and no
    // sentinel goes out (it would close the connection).
    let h = Harness::run(
        learned(EndMethod::Vanilla),
        &[
            Recv(None, 2, b""),
            Cmd("list"),
            Recv(None, 2, b"x"),
            Recv(None, 2, b""),
        ],
    );
    assert_eq!(h.ex.method(), Some(EndMethod::EndMarker));
    assert_eq!(h.seen.notes, 1, "said once");
    // End marker remembered, type-0 output now: a sentinel on its own checks the server, and
    // its reply (or refusal, or silence) settles the method, the answer whole before it.
    for (reply, method) in [
        (Some((-1, 2, &b""[..])), EndMethod::Silence),
        (Some((-2, 0, &b"Unknown request 0"[..])), EndMethod::Vanilla),
        (Some((-2, 0, &b""[..])), EndMethod::Sentinel),
        (None, EndMethod::Idle),
    ] {
        let mut h = Harness::run(
            learned(EndMethod::EndMarker),
            &[Recv(None, 2, b""), Cmd("list"), Recv(None, 0, b"x")],
        );
        assert_eq!(&sent_types(&h)[1..], &[2, 0], "{method:?}");
        assert_eq!(h.seen.done, 0, "{method:?}: the answer waits for the check");
        h.step(&Recv(Some(2), 0, b"y"));
        match reply {
            Some((id, kind, body)) => h.step(&Recv(Some(id), kind, body)),
            None => h.step(&Wait(500)),
        }
        assert_eq!(h.ex.method(), Some(method));
        assert_eq!(h.seen.done, 1, "{method:?}");
        assert_eq!(h.seen.output, b"xy", "{method:?}");
        assert_eq!(h.seen.notes, 1, "{method:?}: said once");
        assert_eq!(h.seen.learned, vec![method], "{method:?}");
        assert!(h.seen.failed.is_empty(), "{method:?}: {:?}", h.seen.failed);
    }
    // A late answer after a quiet gap is dropped, said once, and grows the gap.
    let mut h = Harness::run(
        learned(EndMethod::Silence),
        &[Recv(None, 2, b""), Cmd("list"), Wait(51)],
    );
    let id = h.last_id;
    let before = h.ex.quiet_gap();
    h.step(&Cmd("list"));
    h.step(&Recv(Some(id), 0, b"late"));
    assert!(h.seen.output.is_empty(), "late output is never mixed in");
    assert_eq!(h.seen.warnings, 1);
    assert!(h.ex.quiet_gap() > before);
    // A server that answers an empty answer with an empty packet answers every command: from
    // then on only silence after a packet ends an answer, and a slow answer is never cut off.
    let h = Harness::run(
        learned(EndMethod::Silence),
        &[
            Recv(None, 2, b""),
            Cmd("say hi"),
            Recv(None, 0, b""),
            Cmd("list"),
            Wait(500),
        ],
    );
    assert_eq!(h.ex.method(), Some(EndMethod::Idle));
    assert_eq!(h.seen.done, 1, "the slow second answer is still awaited");
    assert_eq!(h.seen.notes, 0, "a refinement, not a contradiction");
    // After a packet as long as a full vanilla fragment, the whole gap: more may follow late.
    let big: &'static [u8] = Box::leak(vec![b'x'; 4096].into_boxed_slice());
    let mut h = Harness::run(
        learned(EndMethod::Idle),
        &[
            Recv(None, 2, b""),
            Cmd("help"),
            Recv(None, 0, big),
            Wait(20),
        ],
    );
    assert_eq!(h.seen.done, 0, "not cut after the short gap");
    h.step(&Recv(Some(2), 0, b"rest"));
    h.step(&Wait(11));
    assert_eq!(h.seen.done, 1);
    assert_eq!(h.seen.output.len(), 4100);
}

/// A probe answered after its wait (a busy server): the late `Unknown request 0` during the
/// first command moves the next commands to vanilla's rule.
#[test]
fn state_probe_answered_late() {
    let h = Harness::run(
        cfg(),
        &[
            Recv(None, 2, b""),
            Wait(800),
            Cmd("list"),
            Recv(Some(-2), 0, b"Unknown request 0"),
            Recv(Some(2), 0, b"There are 0"),
            Wait(20),
        ],
    );
    assert_eq!(h.seen.output, b"There are 0");
    assert_eq!(h.seen.done, 1);
    assert_eq!(h.ex.method(), Some(EndMethod::Vanilla));
    assert_eq!(h.seen.learned, vec![EndMethod::Idle, EndMethod::Vanilla]);
}

/// A late answer from a server that refuses sentinels: it may hold commands unread, one packet
/// per read, and would answer every later command one late. The next command ends as the last
/// one does (the sentinel, whose refusal comes after every command held and closes the
/// connection), and the next connection is in step.
#[test]
fn state_behind_catches_up() {
    let login = || Recv(None, 2, b"");
    // The probe: both sentinels refused, each with a close; silence, refusing sentinels.
    let mut h = Harness::run(
        cfg(),
        &[
            login(),
            Recv(Some(-1), 2, b""),
            login(),
            Recv(Some(-1), 2, b""),
            login(),
        ],
    );
    assert_eq!(h.ex.method(), Some(EndMethod::Silence));
    let sent = h.seen.sent.len();
    h.step(&Cmd("say a"));
    let a = h.last_id;
    h.step(&Wait(101));
    h.step(&Cmd("say b"));
    h.step(&Recv(Some(a), 0, b"late a"));
    h.step(&Wait(101));
    assert_eq!(h.seen.done, 2);
    assert_eq!(h.seen.warnings, 1, "the late answer reported");
    // The gap has grown to four times the late answer's 101 ms.
    h.step(&Cmd("say c"));
    h.step(&Wait(405));
    h.step(&Recv(Some(-1), 2, b""));
    assert_eq!(
        &sent_types(&h)[sent..],
        &[2, 2, 2, 0],
        "the sentinel after the third command's gap"
    );
    assert_eq!(h.seen.done, 3);
    assert!(h.ex.is_disconnected(), "the refusal closed the connection");
    assert!(h.seen.failed.is_empty(), "{:?}", h.seen.failed);
    // On the next connection, commands end by the gap again.
    h.ex.start(h.now);
    h.drain();
    h.step(&login());
    h.step(&Cmd("say d"));
    h.step(&Wait(405));
    assert_eq!(h.seen.done, 4);
    assert_eq!(sent_types(&h).last(), Some(&2), "no sentinel");
}

/// A probe that went unanswered counts against the first command's time limit (a server that
/// stalls after login costs one timeout in all), but the time a console stays idle before that
/// command does not: typed after longer than the timeout, it still gets its answer.
#[test]
fn state_probe_ignored_then_idle() {
    // Right after the probe's wait (500 ms): the command has the rest of the 2 s.
    let h = Harness::run(
        cfg(),
        &[Recv(None, 2, b""), Wait(500), Cmd("list"), Wait(1499)],
    );
    assert_eq!(h.seen.ready, 1);
    assert!(h.seen.failed.is_empty(), "{:?}", h.seen.failed);
    let h = Harness::run(
        cfg(),
        &[Recv(None, 2, b""), Wait(500), Cmd("list"), Wait(1500)],
    );
    assert_eq!(h.seen.failed.len(), 1, "one timeout in all");
    // Idle for longer than the timeout first: the command's answer comes.
    let h = Harness::run(
        cfg(),
        &[
            Recv(None, 2, b""),
            Wait(500),
            Wait(5000),
            Cmd("list"),
            Wait(100),
            Recv(None, 0, b"There are 0"),
            Wait(1000),
        ],
    );
    assert!(h.seen.failed.is_empty(), "{:?}", h.seen.failed);
    assert_eq!(h.seen.output, b"There are 0");
    assert_eq!(h.seen.done, 1);
}

/// A slow round-trip sample (the login's, taken on a loaded moment, or remembered) does not set
/// the gap after a packet for the whole session: each command's first packet is a sample too.
#[test]
fn a_slow_login_does_not_stretch_every_answer() {
    let slow = remembered(ServerFacts {
        rtt: Duration::from_millis(8),
        ..facts(EndMethod::Silence)
    });
    let mut h = Harness::new(slow);
    h.step(&Wait(8));
    h.step(&Recv(None, 2, b""));
    assert_eq!(h.ex.quiet_gap_for_answer(), Duration::from_millis(64));
    for (n, text) in [b"one", b"two"].into_iter().enumerate() {
        h.step(&Cmd("list"));
        h.step(&Wait(1));
        h.step(&Recv(None, 0, text));
        h.step(&Wait(
            u64::try_from(GAP_AFTER_PACKET_FLOOR.as_millis()).unwrap() + 1,
        ));
        assert_eq!(
            h.seen.done,
            n + 1,
            "ended by the short gap after its packet"
        );
    }
    assert_eq!(h.seen.output, b"onetwo");
    assert_eq!(h.ex.quiet_gap_for_answer(), GAP_AFTER_PACKET_FLOOR);
}

/// Vanilla's late sentinel waits for four of the slowest round trips seen (here a login that
/// took 600 ms), so that a server this slow to read has read the command before it comes: a
/// second, then more, then half the timeout at most.
#[test]
fn the_late_sentinel_waits_longer_on_a_slow_server() {
    let mut h = Harness::new(Options {
        timeout: Duration::from_secs(10),
        ..learned(EndMethod::Vanilla)
    });
    assert_eq!(h.ex.late_sentinel(), VANILLA_LATE_SENTINEL);
    h.step(&Wait(600));
    h.step(&Recv(None, 2, b""));
    assert_eq!(h.ex.late_sentinel(), Duration::from_millis(2400));
    h.step(&Cmd("say hi"));
    h.step(&Wait(2399));
    assert_eq!(
        sent_types(&h),
        [3, 2],
        "no sentinel before the late one is due"
    );
    h.step(&Wait(1));
    assert_eq!(sent_types(&h), [3, 2, 0], "the late sentinel");
    h.step(&Recv(Some(-2), 0, b"Unknown request 0"));
    assert_eq!(h.seen.done, 1);
    // A slower answer, and the ceiling: half the timeout.
    h.step(&Cmd("list"));
    h.step(&Wait(2000));
    h.step(&Recv(None, 0, b"There are 0"));
    assert_eq!(h.seen.done, 2);
    assert_eq!(h.ex.late_sentinel(), Duration::from_secs(5));
}

/// The quiet gap: adaptive, with floors, or fixed.
#[test]
fn quiet_gap_rules() {
    let h = Harness::new(cfg());
    assert_eq!(h.ex.quiet_gap(), GAP_FLOOR_UNLEARNED);
    let h = Harness::new(learned(EndMethod::Silence));
    assert_eq!(h.ex.quiet_gap(), GAP_FLOOR);
    let slow = remembered(ServerFacts {
        latency: Duration::from_millis(40),
        ..facts(EndMethod::Silence)
    });
    assert_eq!(
        Harness::new(slow).ex.quiet_gap(),
        Duration::from_millis(160)
    );
    let fixed = Options {
        idle_gap: Some(Duration::from_millis(7)),
        ..cfg()
    };
    assert_eq!(Harness::new(fixed).ex.quiet_gap(), Duration::from_millis(7));
}

/// Every prefix of a valid answer fed byte by byte gives the same result.
#[test]
fn answers_survive_any_split() {
    let mut stream = encode(2, 0, b"hello ");
    stream.extend(encode(2, 0, b"world"));
    stream.extend(encode(-2, 0, b""));
    for chunk in 1..stream.len() {
        let mut h = Harness::run(
            learned(EndMethod::Sentinel),
            &[Recv(None, 2, b""), Cmd("x")],
        );
        for piece in stream.chunks(chunk) {
            h.ex.receive(piece, h.now);
            h.drain();
        }
        assert_eq!(h.seen.output, b"hello world", "chunk {chunk}");
        assert_eq!(h.seen.done, 1, "chunk {chunk}");
    }
}

mod fuzz {
    //! Whatever a server sends, whenever: the exchange never panics, output only ever comes
    //! from packets carrying the command's id, and each command ends at most once.
    use super::*;
    use proptest::prelude::*;

    #[derive(Debug, Clone)]
    enum Op {
        Packet {
            id_offset: i8,
            kind: i8,
            body: Vec<u8>,
        },
        Bytes(Vec<u8>),
        Close,
        Wait(u16),
        Command,
        Connect,
    }

    fn op() -> impl Strategy<Value = Op> {
        prop_oneof![
            4 => (-3i8..3, -2i8..4, proptest::collection::vec(any::<u8>(), 0..5000)).prop_map(
                |(id_offset, kind, body)| Op::Packet { id_offset, kind, body }
            ),
            1 => proptest::collection::vec(any::<u8>(), 0..40).prop_map(Op::Bytes),
            1 => Just(Op::Close),
            2 => (0u16..1200).prop_map(Op::Wait),
            2 => Just(Op::Command),
            1 => Just(Op::Connect),
        ]
    }

    fn end() -> impl Strategy<Value = EndDetection> {
        prop_oneof![
            Just(EndDetection::Detect),
            Just(EndDetection::Negative),
            Just(EndDetection::Positive),
            Just(EndDetection::Idle),
            Just(EndDetection::Auto),
            Just(EndDetection::SinglePacket),
        ]
    }

    proptest! {
        #![proptest_config(ProptestConfig::with_cases(400))]
        #[test]
        fn never_panics_and_never_mixes_output(
            end in end(),
            any_id in any::<bool>(),
            ops in proptest::collection::vec(op(), 0..60),
        ) {
            let cfg = Options { end, any_reply_id: any_id, partial_on_idle: any_id, ..cfg() };
            let mut ex = Exchange::new(cfg, Password::new("pw"));
            let mut now = Instant::now();
            let mut last_id = 0i32;
            let mut command_id: Option<i32> = None;
            ex.start(now);
            for op in ops {
                match op {
                    Op::Packet { id_offset, kind, body } => {
                        let id = last_id.saturating_add(i32::from(id_offset));
                        ex.receive(&encode(id, i32::from(kind), &body), now);
                    }
                    Op::Bytes(b) => ex.receive(&b, now),
                    Op::Close => {
                        ex.peer_closed(false, now);
                    }
                    Op::Wait(ms) => {
                        now += Duration::from_millis(u64::from(ms));
                        ex.tick(now);
                    }
                    Op::Command => {
                        if ex.is_ready() {
                            ex.start_command("list", false, now).unwrap();
                            command_id = None;
                        } else {
                            prop_assert!(ex.start_command("list", false, now).is_err());
                        }
                    }
                    Op::Connect => {
                        if ex.is_disconnected() {
                            ex.start(now);
                        }
                    }
                }
                while let Some(action) = ex.poll() {
                    match action {
                        Action::Send(bytes) => {
                            let mut d = Decoder::default();
                            d.feed(&bytes);
                            let p = d.next_packet().unwrap().unwrap();
                            prop_assert!(p.wire_len() == bytes.len());
                            if p.kind == 2 {
                                command_id = Some(p.id);
                            }
                            last_id = p.id;
                        }
                        Action::Output(_) => prop_assert!(command_id.is_some(), "output with no command"),
                        Action::Done { .. } | Action::Fail(_) => command_id = None,
                        Action::Reconnect => ex.start(now),
                        _ => {}
                    }
                }
            }
        }
    }
}

/// A packet for an answer that already ended is never dropped without a word: one warning per
/// late answer (its later packets add none), while idle or under the next command, and it is
/// never shown as the next command's output.
#[test]
fn late_answers_are_reported_once_each() {
    let login = || Recv(None, 2, b"");
    // Under the next command: the first command (id 2) ended by the quiet gap.
    let h = Harness::run(
        learned(EndMethod::Silence),
        &[
            login(),
            Cmd("a"),
            Wait(200),
            Cmd("b"),
            Recv(Some(2), 0, b"late one"),
            Recv(Some(2), 0, b"late two"),
            Recv(Some(3), 0, b"b's answer"),
            Wait(200),
        ],
    );
    assert_eq!(h.seen.output, b"b's answer");
    assert_eq!(h.seen.warnings, 1, "one warning for the late answer");
    assert_eq!(h.seen.done, 2);
    // While idle, after the answer ended.
    let h = Harness::run(
        learned(EndMethod::Silence),
        &[login(), Cmd("a"), Wait(200), Recv(Some(2), 0, b"late")],
    );
    assert_eq!(h.seen.warnings, 1);
    assert!(h.seen.output.is_empty());
    // Not ours (an id never used, a chat packet, Source's trailer): traced only.
    let h = Harness::run(
        learned(EndMethod::Silence),
        &[
            login(),
            Cmd("a"),
            Recv(Some(9), 0, b"not ours"),
            Recv(Some(0), 1, b"[Chat] hi"),
            Recv(Some(-2), 0, &[0, 1, 0, 0]),
            Wait(200),
        ],
    );
    assert_eq!(h.seen.warnings, 0);
}

/// A quiet gap remembered for a server that refuses sentinels: the session's first answer is
/// checked before any command follows it (docs/protocol.md section 3). The sentinel goes after
/// the first packet (or once the gap passed with none), never right behind the command; a
/// refusal confirms silence, vanilla's reply corrects it with one note, and a sentinel that
/// drew nothing in the gap after it costs the connection, not the next command.
#[test]
fn state_check_a_remembered_silence() {
    let silence = remembered(ServerFacts {
        refuses_sentinel: true,
        ..facts(EndMethod::Silence)
    });
    let login = || Recv(None, 2, b"");
    // Vanilla now: its reply to the sentinel after the first packet.
    let mut h = Harness::run(silence.clone(), &[login(), Cmd("list")]);
    assert_eq!(&sent_types(&h)[1..], &[2], "nothing behind the command");
    h.step(&Recv(Some(2), 0, b"There are 0"));
    assert_eq!(
        &sent_types(&h)[1..],
        &[2, 0],
        "the sentinel after the first packet"
    );
    assert_eq!(h.seen.done, 0);
    h.step(&Recv(Some(-2), 0, b"Unknown request 0"));
    assert_eq!(h.seen.done, 1);
    assert_eq!(h.seen.output, b"There are 0");
    assert_eq!(h.ex.method(), Some(EndMethod::Vanilla));
    assert_eq!(
        (h.seen.notes, h.seen.learned.clone()),
        (1, vec![EndMethod::Vanilla])
    );
    assert!(h.ex.is_ready(), "the connection goes on");
    // The next command is not checked again.
    h.step(&Cmd("seed"));
    h.step(&Recv(Some(3), 0, b"Seed"));
    assert_eq!(h.seen.done, 2);
    assert_eq!(
        sent_types(&h).len(),
        4,
        "no sentinel for vanilla's short answer"
    );
    // Vanilla's empty answer (an empty packet) is evidence too.
    let h = Harness::run(
        silence.clone(),
        &[
            login(),
            Cmd("say hi"),
            Recv(Some(2), 0, b""),
            Recv(Some(-2), 0, b"Unknown request 0"),
        ],
    );
    assert_eq!(h.ex.method(), Some(EndMethod::Vanilla));
    assert_eq!(h.seen.done, 1);
    // The same server still: the refusal confirms silence, no note; the connection is gone.
    let h = Harness::run(
        silence.clone(),
        &[
            login(),
            Cmd("list"),
            Recv(Some(2), 0, b"a"),
            Recv(Some(2), 0, b"b"),
            Recv(Some(-1), 2, b""),
        ],
    );
    assert_eq!(h.seen.output, b"ab");
    assert_eq!((h.seen.done, h.seen.notes), (1, 0));
    assert_eq!(h.ex.method(), Some(EndMethod::Silence));
    assert!(h.ex.is_disconnected());
    // An empty answer: the sentinel once the gap has passed, its refusal ends the answer.
    let h = Harness::run(
        silence.clone(),
        &[login(), Cmd("say hi"), Wait(51), Recv(Some(-1), 2, b"")],
    );
    assert_eq!(&sent_types(&h)[1..], &[2, 0]);
    assert_eq!((h.seen.done, h.seen.notes), (1, 0));
    // No refusal in the gap after it: it may sit unread behind the command, so the connection
    // is closed rather than written to.
    let h = Harness::run(
        silence.clone(),
        &[login(), Cmd("say hi"), Wait(51), Wait(51)],
    );
    assert_eq!(h.seen.done, 1);
    assert!(h.seen.failed.is_empty(), "{:?}", h.seen.failed);
    assert!(h.ex.is_disconnected());
    // A server that ignores sentinels now: after the probe's wait, a quiet gap after the
    // packet, said once.
    let h = Harness::run(
        silence,
        &[login(), Cmd("list"), Recv(Some(2), 0, b"x"), Wait(500)],
    );
    assert_eq!(h.seen.done, 1);
    assert_eq!(h.ex.method(), Some(EndMethod::Idle));
    assert_eq!(h.seen.notes, 1);
}

/// Vanilla remembered and a server that ignores sentinels now: the sentinel after a full
/// fragment goes unanswered, and after the probe's wait the answer ends whole with the quiet
/// gap after a packet settled (it used to wait for the timeout and fail as incomplete).
#[test]
fn state_check_a_remembered_vanilla_on_a_server_that_ignores_sentinels() {
    let big: &'static [u8] = Box::leak(vec![b'x'; 5000].into_boxed_slice());
    let h = Harness::run(
        learned(EndMethod::Vanilla),
        &[
            Recv(None, 2, b""),
            Cmd("help"),
            Recv(Some(2), 0, big),
            Wait(499),
        ],
    );
    assert_eq!(h.seen.done, 0);
    let mut h = h;
    h.step(&Wait(1));
    assert_eq!(h.seen.done, 1);
    assert!(h.seen.failed.is_empty(), "{:?}", h.seen.failed);
    assert_eq!(h.seen.output.len(), 5000);
    assert_eq!(h.ex.method(), Some(EndMethod::Idle));
    assert_eq!(
        (h.seen.notes, h.seen.learned.clone()),
        (1, vec![EndMethod::Idle])
    );
}
