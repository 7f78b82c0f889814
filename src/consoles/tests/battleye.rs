//! BattlEye RCon's tables, one per state: new, logging in, ready and idle (keep-alives, server
//! messages), a command under way (retransmits, parts in any order, duplicates, the Reforger
//! quirk), failed. The clocks are the defaults: timeout 10 s, retransmit 1 s, keep-alive 30 s,
//! idle gap 250 ms.

use super::*;
use crate::consoles::battleye::{BattlEye, COMMAND, LOGIN, MESSAGE, Timings, decode, encode};

impl Subject for BattlEye {
    const STREAM: bool = false;

    /// `login "pw"`, `cmd SEQ "text"` (a keep-alive is an empty one), `ack SEQ`.
    fn show(sent: &[u8]) -> String {
        let payload = match decode(sent) {
            Ok(p) => p,
            Err(e) => return format!("invalid datagram: {e}"),
        };
        let text = |b: &[u8]| format!("{:?}", String::from_utf8_lossy(b));
        match payload {
            [LOGIN, password @ ..] => format!("login {}", text(password)),
            [COMMAND, seq, command @ ..] => format!("cmd {seq} {}", text(command)),
            [MESSAGE, seq] => format!("ack {seq}"),
            other => format!("unknown payload {other:02x?}"),
        }
    }
}

fn make(tracing: bool) -> BattlEye {
    BattlEye::new(PASSWORD, Timings::default(), tracing)
}

/// The login reply: accepted or refused.
fn login(ok: bool) -> Step {
    In(encode(&[LOGIN, u8::from(ok)]))
}

/// A whole answer to command `seq`.
fn answer(seq: u8, text: &str) -> Step {
    let mut p = vec![COMMAND, seq];
    p.extend_from_slice(text.as_bytes());
    In(encode(&p))
}

/// Part `index` of `count` of the answer to command `seq`.
fn part(seq: u8, count: u8, index: u8, text: &str) -> Step {
    let mut p = vec![COMMAND, seq, 0x00, count, index];
    p.extend_from_slice(text.as_bytes());
    In(encode(&p))
}

/// Server message `seq`.
fn message(seq: u8, text: &str) -> Step {
    let mut p = vec![MESSAGE, seq];
    p.extend_from_slice(text.as_bytes());
    In(encode(&p))
}

/// The same datagram with a wrong CRC.
fn bad_crc(step: Step) -> Step {
    match step {
        In(mut d) => {
            d[3] ^= 0x5A;
            In(d)
        }
        other => other,
    }
}

const SENT_LOGIN: &str = r#"send login "s3cr3t""#;

/// The tables below spell the default clocks out; this is where they are pinned.
#[test]
fn the_tables_run_on_the_default_clocks() {
    let t = Timings::default();
    assert_eq!(t.timeout, Duration::from_secs(10));
    assert_eq!(t.retransmit, Duration::from_secs(1));
    assert_eq!(t.keepalive, Duration::from_secs(30));
    assert_eq!(t.idle_gap, Duration::from_millis(250));
}

/// State: new, before the driver starts the login.
#[test]
fn state_new() {
    let cases = vec![
        case(
            "nothing is due, and input is ignored",
            vec![Wait(60_000), login(true), message(0, "x"), answer(0, "y")],
            &[],
        ),
        case(
            "a command fails: not logged in",
            vec![Cmd("x")],
            &["fail server closed the connection before the command (not logged in)"],
        ),
    ];
    check("battleye new", make, &[], cases);
}

/// State: logging in (every case starts the login itself, so its datagram shows).
#[test]
fn state_logging_in() {
    let mut lost: Vec<String> = vec![SENT_LOGIN.into()];
    lost.extend((1..10).map(|s| format!("@{s}000 {SENT_LOGIN}")));
    lost.push("@10000 fail timed out after 10s while waiting for the BattlEye login reply (no answer at all: is BattlEye RCon enabled...".into());
    let cases = vec![
        case(
            "0x00 0x01: logged in",
            vec![Start, login(true)],
            &[SENT_LOGIN, "logged in"],
        ),
        case(
            "0x00 0x00: refused",
            vec![Start, login(false)],
            &[SENT_LOGIN, "fail login refused: wrong password"],
        ),
        Case {
            name: "no reply: the login again each second, then a timeout with the hint".into(),
            steps: vec![Start, Wait(10_000)],
            want: lost,
        },
        case(
            "the first login lost: the reply to the second",
            vec![Start, Wait(1500), login(true)],
            &[SENT_LOGIN, "@1000 send login \"s3cr3t\"", "@1500 logged in"],
        ),
        case(
            "a duplicate reply logs in once",
            vec![Start, login(true), login(true)],
            &[SENT_LOGIN, "logged in"],
        ),
        case(
            "messages and answers before the reply are ignored, not acknowledged",
            vec![Start, message(0, "x"), answer(0, "y"), login(true)],
            &[SENT_LOGIN, "logged in"],
        ),
        case(
            "a bad CRC, a short datagram, a foreign one, an unknown type and a cut reply are dropped",
            vec![
                Start,
                bad_crc(login(true)),
                In(b"BE".to_vec()),
                In(b"GET / HTTP/1.1\r\n\r\n".to_vec()),
                In(encode(&[0x07, 1])),
                In(encode(&[LOGIN])),
                login(true),
            ],
            &[SENT_LOGIN, "logged in"],
        ),
        case(
            "a command before the reply fails, and the login with it",
            vec![Start, Cmd("x"), Wait(20_000), login(true)],
            &[
                SENT_LOGIN,
                "fail server closed the connection before the command (not logged in)",
            ],
        ),
        case(
            "a close: datagrams have no close, so no partial answer",
            vec![Start, Close],
            &[SENT_LOGIN, "closed -> None"],
        ),
    ];
    check("battleye logging in", make, &[], cases);
}

/// State: ready, no command under way: keep-alives and server messages.
#[test]
fn state_ready_idle() {
    let mut unanswered: Vec<String> = (30..40)
        .map(|s| format!("@{s}000 send cmd 0 \"\""))
        .collect();
    unanswered.push("@40000 fail timed out after 10s while waiting for the keep-alive's answer (server gone, or it logged this client out)".into());

    // 200 s idle, each keep-alive answered at once: one every 30 s, never the 45 s of silence
    // after which a real server drops the client, and no answer of one shows.
    let mut idle = Vec::new();
    let mut keepalives = Vec::new();
    for k in 0..6u8 {
        idle.extend([Wait(30_000), answer(k, "")]);
        keepalives.push(format!("@{}000 send cmd {k} \"\"", 30 * (u64::from(k) + 1)));
    }
    idle.push(Wait(20_000));

    // Server message sequence numbers: a repeat within the last 64 is a resend of one whose
    // ack was lost; further back it is the next lap of the wrap, a new message.
    let lap = |n: u8| -> (Vec<Step>, Vec<String>) {
        let mut steps = Vec::new();
        let mut want = Vec::new();
        for seq in 0..n {
            steps.push(message(seq, &format!("m{seq}")));
            want.push(format!("send ack {seq}"));
            want.push(format!("message \"m{seq}\""));
        }
        steps.push(message(0, "again"));
        want.push("send ack 0".into());
        (steps, want)
    };
    let (resend, resend_want) = lap(64); // the repeat: acknowledged, not delivered
    let (next_lap, mut next_lap_want) = lap(65);
    next_lap_want.push("message \"again\"".into());

    let cases = vec![
        case(
            "nothing for 30 s: a keep-alive; its empty answer is swallowed; the next 30 s on",
            vec![Wait(30_000), answer(0, ""), Wait(30_000)],
            &["@30000 send cmd 0 \"\"", "@60000 send cmd 1 \"\""],
        ),
        Case {
            name: "the default clocks beat the server's 45 s over 200 idle seconds".into(),
            steps: idle,
            want: keepalives,
        },
        case(
            "a lost keep-alive goes again each second with the same seq",
            vec![Wait(31_500), answer(0, ""), Wait(30_000)],
            &[
                "@30000 send cmd 0 \"\"",
                "@31000 send cmd 0 \"\"",
                "@61000 send cmd 1 \"\"",
            ],
        ),
        Case {
            name: "an unanswered keep-alive fails the session after the timeout".into(),
            steps: vec![Wait(40_000)],
            want: unanswered,
        },
        case(
            "a server message is acknowledged and delivered at once",
            vec![message(0, "hi")],
            &["send ack 0", "message \"hi\""],
        ),
        case(
            "a resent message is acknowledged again and delivered once",
            vec![message(3, "hi"), message(3, "hi")],
            &["send ack 3", "message \"hi\"", "send ack 3"],
        ),
        Case {
            name: "a repeat within the last 64 messages is a resend".into(),
            steps: resend,
            want: resend_want,
        },
        Case {
            name: "a repeat further back is the next lap of the wrap".into(),
            steps: next_lap,
            want: next_lap_want,
        },
        case(
            "an ack is traffic: the keep-alive comes 30 s after it",
            vec![Wait(20_000), message(0, "hi"), Wait(30_000)],
            &[
                "@20000 send ack 0",
                "@20000 message \"hi\"",
                "@50000 send cmd 0 \"\"",
            ],
        ),
        case(
            "a command while a keep-alive is out: the keep-alive's answer is not the command's",
            vec![Wait(30_000), Cmd("x"), answer(0, ""), answer(1, "out")],
            &[
                "@30000 send cmd 0 \"\"",
                "@30000 send cmd 1 \"x\"",
                "@30000 answer \"out\"",
            ],
        ),
        case(
            "late answers, a late login reply and a bad CRC are ignored",
            vec![
                answer(0, "late"),
                part(5, 2, 0, "a"),
                login(true),
                bad_crc(message(0, "x")),
            ],
            &[],
        ),
    ];
    check("battleye ready", make, &[Start, login(true)], cases);
}

/// State: a command under way (`x`, sent as seq 0 at the case's start).
#[test]
fn state_command() {
    let mut lost: Vec<String> = (1..10)
        .map(|s| format!("@{s}000 send cmd 0 \"x\""))
        .collect();
    lost.push("@10000 fail timed out after 10s while waiting for the BattlEye answer (retransmitted with the same sequence number)".into());

    // A server that answered before goes silent: the message it sent meanwhile still shows.
    let mut silent = vec![
        "answer \"ok\"".to_string(),
        "send cmd 1 \"y\"".into(),
        "send ack 0".into(),
    ];
    silent.extend((1..10).map(|s| format!("@{s}000 send cmd 1 \"y\"")));
    silent.push("@10000 message \"chat\"".into());
    silent.push("@10000 fail timed out after 10s while waiting for the BattlEye answer...".into());

    // Three parts in each of the six orders.
    let mut cases: Vec<Case> = Vec::new();
    for order in [
        [0, 1, 2],
        [0, 2, 1],
        [1, 0, 2],
        [1, 2, 0],
        [2, 0, 1],
        [2, 1, 0],
    ] {
        cases.push(case(
            &format!("three parts in the order {order:?}"),
            order
                .iter()
                .map(|&i| part(0, 3, i, ["A", "B", "C"][usize::from(i)]))
                .collect(),
            &["answer \"ABC\""],
        ));
    }

    // Sequence numbers wrap from 255 to 0.
    let mut wrap = vec![answer(0, "k")];
    let mut wrap_want = vec!["answer \"k\"".to_string()];
    for i in 1..300u32 {
        let seq = (i % 256) as u8;
        wrap.extend([Cmd("c"), answer(seq, "k")]);
        wrap_want.extend([format!("send cmd {seq} \"c\""), "answer \"k\"".into()]);
    }

    cases.extend([
        case("one datagram", vec![answer(0, "hello")], &["answer \"hello\""]),
        case("an empty answer", vec![answer(0, "")], &["answer \"\""]),
        case(
            "a duplicate part overwrites itself",
            vec![part(0, 2, 1, "B"), part(0, 2, 1, "B"), part(0, 2, 0, "A")],
            &["answer \"AB\""],
        ),
        case(
            "a part after the answer is a late duplicate",
            vec![part(0, 2, 0, "A"), part(0, 2, 1, "B"), part(0, 2, 1, "B")],
            &["answer \"AB\""],
        ),
        case(
            "a part beyond its count fails",
            vec![part(0, 2, 5, "x")],
            &["fail protocol error: BattlEye answer part 5 of 2 does not fit"],
        ),
        case(
            "a count of zero fails",
            vec![part(0, 0, 0, "x")],
            &["fail protocol error: BattlEye answer part 0 of 0 does not fit"],
        ),
        case(
            "parts that disagree on the count fail",
            vec![part(0, 3, 0, "A"), part(0, 2, 1, "B")],
            &["fail protocol error: BattlEye answer part 1 of 2 does not fit"],
        ),
        case(
            "an answer to another seq is stale",
            vec![answer(5, "nope"), answer(0, "yes")],
            &["answer \"yes\""],
        ),
        Case {
            name: "no answer: sent again each second with the same seq, then the timeout".into(),
            steps: vec![Wait(10_000)],
            want: lost,
        },
        case(
            "an answer after a retransmit; the answer to the second copy is ignored",
            vec![Wait(1000), answer(0, "out"), answer(0, "out")],
            &["@1000 send cmd 0 \"x\"", "@1000 answer \"out\""],
        ),
        case(
            "a message during the command: acknowledged at once, delivered after the answer",
            vec![message(9, "chat"), answer(0, "out")],
            &["send ack 9", "answer \"out\"", "message \"chat\""],
        ),
        case(
            "a resent message during the command: acknowledged twice, delivered once",
            vec![message(9, "chat"), message(9, "chat"), answer(0, "out")],
            &[
                "send ack 9",
                "send ack 9",
                "answer \"out\"",
                "message \"chat\"",
            ],
        ),
        case(
            "a broadcast around an empty answer (`say -1 hi`) stays a message",
            vec![message(0, "RCon admin: hi"), answer(0, "")],
            &["send ack 0", "answer \"\"", "message \"RCon admin: hi\""],
        ),
        case(
            "Reforger: messages and no answer: after the retransmit and the gap, they are the answer",
            vec![
                Wait(100),
                message(0, "line 1"),
                Wait(100),
                message(1, "line 2"),
                Wait(1200),
            ],
            &[
                "@100 send ack 0",
                "@200 send ack 1",
                "@1000 send cmd 0 \"x\"",
                "@1250 warning the server answered with server messages (0x02) instead of a command answer (a known Arma Reforger behaviour); taking them as the answer",
                "@1250 answer \"line 1\\nline 2\"",
            ],
        ),
        case(
            "Reforger: a message after the retransmit moves the end to the gap after it",
            vec![message(0, "a"), Wait(1100), message(1, "b"), Wait(400)],
            &[
                "send ack 0",
                "@1000 send cmd 0 \"x\"",
                "@1100 send ack 1",
                "@1350 warning the server answered with server messages...",
                "@1350 answer \"a\\nb\"",
            ],
        ),
        case(
            "Reforger: the warning once per session",
            vec![
                message(0, "a"),
                Wait(1250),
                Cmd("y"),
                message(1, "b"),
                Wait(1250),
            ],
            &[
                "send ack 0",
                "@1000 send cmd 0 \"x\"",
                "@1250 warning the server answered with server messages...",
                "@1250 answer \"a\"",
                "@1250 send cmd 1 \"y\"",
                "@1250 send ack 1",
                "@2250 send cmd 1 \"y\"",
                "@2500 answer \"b\"",
            ],
        ),
        case(
            "a server that answered once never gets the quirk, however late its answer",
            vec![
                answer(0, "ok"),
                Cmd("say -1 hi"),
                message(0, "RCon admin: hi"),
                Wait(1600),
                answer(1, ""),
            ],
            &[
                "answer \"ok\"",
                "send cmd 1 \"say -1 hi\"",
                "send ack 0",
                "@1000 send cmd 1 \"say -1 hi\"",
                "@1600 answer \"\"",
                "@1600 message \"RCon admin: hi\"",
            ],
        ),
        case(
            "a failure still delivers the messages held for the answer (they were acknowledged)",
            vec![
                answer(0, "ok"),
                Cmd("y"),
                message(0, "chat"),
                part(1, 2, 7, "x"),
            ],
            &[
                "answer \"ok\"",
                "send cmd 1 \"y\"",
                "send ack 0",
                "message \"chat\"",
                "fail protocol error: BattlEye answer part 7 of 2 does not fit",
            ],
        ),
        Case {
            name: "a timeout still delivers the messages held for the answer".into(),
            steps: vec![answer(0, "ok"), Cmd("y"), message(0, "chat"), Wait(10_000)],
            want: silent,
        },
        case(
            "a bad CRC is dropped",
            vec![bad_crc(answer(0, "bad")), answer(0, "good")],
            &["answer \"good\""],
        ),
        case(
            "the next command takes the next seq",
            vec![answer(0, "a"), Cmd("y"), answer(1, "b")],
            &["answer \"a\"", "send cmd 1 \"y\"", "answer \"b\""],
        ),
        Case {
            name: "sequence numbers wrap from 255 to 0".into(),
            steps: wrap,
            want: wrap_want,
        },
        case(
            "no keep-alive while a command runs",
            vec![Wait(5000), answer(0, "out"), Wait(30_000)],
            &[
                "@1000 send cmd 0 \"x\"",
                "@2000 send cmd 0 \"x\"",
                "@3000 send cmd 0 \"x\"",
                "@4000 send cmd 0 \"x\"",
                "@5000 send cmd 0 \"x\"",
                "@5000 answer \"out\"",
                "@35000 send cmd 1 \"\"",
            ],
        ),
    ]);
    check(
        "battleye command",
        make,
        &[Start, login(true), Cmd("x")],
        cases,
    );
}

/// State: failed (here: the login refused).
#[test]
fn state_failed() {
    let cases = vec![
        case(
            "input is ignored and nothing acknowledged",
            vec![login(true), message(0, "x"), answer(0, "y")],
            &[],
        ),
        case("nothing is due", vec![Wait(120_000)], &[]),
        case(
            "a command fails at once",
            vec![Cmd("x")],
            &["fail server closed the connection before the command (not logged in)"],
        ),
    ];
    check("battleye failed", make, &[Start, login(false)], cases);
}

/// Datagrams with a wrong CRC are counted (for `--trace`), whatever the state.
#[test]
fn bad_crcs_are_counted() {
    let h = Harness::run(
        make(false),
        "bad CRCs",
        &[Start, login(true)],
        &[bad_crc(message(0, "x")), Cmd("x"), bad_crc(answer(0, "y"))],
    );
    assert_eq!(h.ex.bad_crc(), 2);
}
