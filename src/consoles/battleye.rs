//! BattlEye RCon (DayZ, Arma 2/3, Arma Reforger), sans-IO: the packet format and the exchange
//! over UDP datagrams (docs/protocol.md section 8).
//!
//! A packet is `'B' 'E'`, a CRC32 (IEEE, the zlib one) over every byte from the `0xFF` on,
//! stored little-endian (the byte order berconpy, the PyPI client our practice server is
//! cross-checked with, reads and writes), `0xFF`, then the payload:
//! - login `0x00 password` -> `0x00 0x01` (ok) or `0x00 0x00` (refused);
//! - command `0x01 seq text` -> `0x01 seq text`, or for long answers several
//!   `0x01 seq 0x00 count index text` parts, which may arrive in any order;
//! - server message `0x02 seq text`, acknowledged with `0x02 seq`.
//!
//! UDP loses, duplicates and reorders datagrams, so:
//! - a command whose answer has not come within [`Timings::retransmit`] is sent again with the
//!   *same* sequence number (a BattlEye server answers a repeated sequence number without
//!   running the command again), until [`Timings::timeout`] gives up;
//! - parts are put in index order and duplicates overwrite themselves; answers to older
//!   sequence numbers are ignored;
//! - every server message is acknowledged each time it arrives (the ack may have been lost) and
//!   delivered once;
//! - an empty command keeps the login alive when nothing else was sent for
//!   [`Timings::keepalive`] (the server drops a client silent for 45 s);
//! - sequence numbers wrap from 255 to 0;
//! - a packet with a wrong CRC is dropped, counted and traced.
//!
//! The Reforger quirk (as reported): some servers answer a command with a stream of `0x02`
//! messages instead of a `0x01` answer. While a command is pending, `0x02` messages are held
//! back. A `0x01` answer (even an empty one: `say` is answered empty and its text broadcast as a
//! message) sends them on as server messages. When none comes, the command is retransmitted
//! as usual (harmless: same sequence number); if after that retransmission still no `0x01`
//! came, [`Timings::idle_gap`] passed since the last held message, and the server has never
//! answered a command with `0x01` in this session, the held messages are the answer (with a
//! one-time warning). So such a server costs one retransmit interval per command, and once a
//! server has answered normally its broadcasts are never taken for an answer, however lossy
//! the network.

use std::collections::VecDeque;
use std::time::{Duration, Instant};

use super::{Action, ConsoleExchange};
use crate::error::Error;

/// Packet type of the login.
pub const LOGIN: u8 = 0x00;
/// Packet type of a command and its answer.
pub const COMMAND: u8 = 0x01;
/// Packet type of a server message and its acknowledgement.
pub const MESSAGE: u8 = 0x02;

/// Longest datagram read; BattlEye parts are well under it.
pub const MAX_DATAGRAM: usize = 65_507;

/// Longest command sent, in UTF-8 bytes: one datagram under a typical 1500-byte MTU.
pub const MAX_COMMAND_BYTES: usize = 1400;

/// The CRC32 (IEEE 802.3, reflected, as zlib's `crc32`).
pub fn crc32(bytes: &[u8]) -> u32 {
    const fn table() -> [u32; 256] {
        let mut t = [0u32; 256];
        let mut i = 0;
        while i < 256 {
            let mut c = i as u32;
            let mut k = 0;
            while k < 8 {
                c = if c & 1 != 0 {
                    0xEDB8_8320 ^ (c >> 1)
                } else {
                    c >> 1
                };
                k += 1;
            }
            t[i] = c;
            i += 1;
        }
        t
    }
    const TABLE: [u32; 256] = table();
    let mut crc = 0xFFFF_FFFFu32;
    for &b in bytes {
        crc = TABLE[((crc ^ u32::from(b)) & 0xFF) as usize] ^ (crc >> 8);
    }
    !crc
}

/// One packet with its header: `'B' 'E' crc32-le 0xFF payload`.
pub fn encode(payload: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(payload.len() + 1);
    body.push(0xFF);
    body.extend_from_slice(payload);
    let mut out = Vec::with_capacity(body.len() + 6);
    out.extend_from_slice(b"BE");
    out.extend_from_slice(&crc32(&body).to_le_bytes());
    out.extend_from_slice(&body);
    out
}

/// Why a datagram is not a BattlEye packet.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum PacketError {
    /// Shorter than the 8-byte minimum (header and type).
    #[error("datagram of {len} bytes is too short for a BattlEye packet (at least {min})")]
    TooShort {
        /// Its length.
        len: usize,
        /// The minimum.
        min: usize,
    },
    /// It does not start with `BE` and have `0xFF` after the CRC.
    #[error("not a BattlEye packet (no 'BE' header)")]
    NoHeader,
    /// The CRC does not match the bytes.
    #[error("wrong CRC32 (header says {stated:08x}, bytes give {computed:08x})")]
    BadCrc {
        /// What the header says.
        stated: u32,
        /// What the bytes give.
        computed: u32,
    },
}

/// The payload of a datagram (from the type byte on), once header and CRC check out.
pub fn decode(datagram: &[u8]) -> Result<&[u8], PacketError> {
    if datagram.len() < 8 {
        return Err(PacketError::TooShort {
            len: datagram.len(),
            min: 8,
        });
    }
    if &datagram[..2] != b"BE" || datagram[6] != 0xFF {
        return Err(PacketError::NoHeader);
    }
    let stated = u32::from_le_bytes([datagram[2], datagram[3], datagram[4], datagram[5]]);
    let computed = crc32(&datagram[6..]);
    if stated != computed {
        return Err(PacketError::BadCrc { stated, computed });
    }
    Ok(&datagram[7..])
}

/// The exchange's clocks.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Timings {
    /// Gives up on a login or a command after this long without its answer.
    pub timeout: Duration,
    /// Sends a login or command again when its answer has not come for this long.
    pub retransmit: Duration,
    /// Sends an empty command when nothing was sent for this long (BattlEye drops a client
    /// after 45 s of silence).
    pub keepalive: Duration,
    /// With the Reforger quirk: the silence that ends an answer made of server messages.
    pub idle_gap: Duration,
}

impl Default for Timings {
    fn default() -> Self {
        Timings {
            timeout: Duration::from_secs(10),
            retransmit: Duration::from_secs(1),
            keepalive: Duration::from_secs(30),
            idle_gap: Duration::from_millis(250),
        }
    }
}

/// The hint that goes with "no answer at all".
const NO_ANSWER: &str = "waiting for the BattlEye login reply (no answer at all: is BattlEye RCon enabled, with RConPassword and RConPort in BEServer_x64.cfg, and is this its UDP port?)";

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum BattlEyeState {
    New,
    LoggingIn,
    Ready,
    Failed,
}

/// The command waiting for its answer.
#[derive(Debug)]
struct Pending {
    seq: u8,
    datagram: Vec<u8>,
    first_sent: Instant,
    last_sent: Instant,
    /// Parts of a multi-part answer, by index.
    parts: Vec<Option<Vec<u8>>>,
    /// When the command was last sent again, if it was.
    retransmitted: Option<Instant>,
    /// Server messages held back while the command is pending, and when the last came.
    held: Vec<String>,
    last_held: Option<Instant>,
}

/// The BattlEye RCon exchange: login, commands, acks, keep-alive, retransmission.
pub struct BattlEye {
    password: String,
    timings: Timings,
    state: BattlEyeState,
    login_first: Option<Instant>,
    login_last: Option<Instant>,
    next_seq: u8,
    pending: Option<Pending>,
    /// A keep-alive waiting for its answer: (seq, datagram, last sent).
    keepalive: Option<(u8, Vec<u8>, Instant)>,
    /// When the pending keep-alive first went out: unanswered for the timeout, the server is
    /// gone (or logged this client out) and the session fails, so a reconnect can follow.
    keepalive_first: Option<Instant>,
    last_sent: Option<Instant>,
    /// Sequence numbers of the server messages seen lately (the server resends one whose ack
    /// it missed); enough to tell a resend from the next lap of the wrap.
    seen: VecDeque<u8>,
    actions: VecDeque<Action>,
    tracing: bool,
    bad_crc: u64,
    warned_quirk: bool,
    /// Whether any command got a `0x01` answer (then the Reforger quirk is ruled out).
    answered: bool,
}

/// How many recent server-message sequence numbers are remembered.
const SEEN: usize = 64;

impl BattlEye {
    /// An exchange that logs in with `password`; `tracing` asks for [`Action::Trace`]s.
    pub fn new(password: &str, timings: Timings, tracing: bool) -> Self {
        BattlEye {
            password: password.to_string(),
            timings,
            state: BattlEyeState::New,
            login_first: None,
            login_last: None,
            next_seq: 0,
            pending: None,
            keepalive: None,
            keepalive_first: None,
            last_sent: None,
            seen: VecDeque::with_capacity(SEEN),
            actions: VecDeque::new(),
            tracing,
            bad_crc: 0,
            warned_quirk: false,
            answered: false,
        }
    }

    /// How many datagrams were dropped for a wrong CRC.
    pub fn bad_crc(&self) -> u64 {
        self.bad_crc
    }

    /// The sequence number the next command gets.
    pub fn next_seq(&self) -> u8 {
        self.next_seq
    }

    fn send(&mut self, datagram: Vec<u8>, what: String, now: Instant, hidden: bool) {
        if self.tracing {
            // A login's bytes (and its CRC, which would give the password away to a brute
            // force) are never shown.
            let bytes = if hidden { Vec::new() } else { datagram.clone() };
            self.actions.push_back(Action::Trace {
                sent: true,
                bytes,
                what,
            });
        }
        self.last_sent = Some(now);
        self.actions.push_back(Action::Send(datagram));
    }

    fn trace_received(&mut self, datagram: &[u8], what: String) {
        if self.tracing {
            self.actions.push_back(Action::Trace {
                sent: false,
                bytes: datagram.to_vec(),
                what,
            });
        }
    }

    fn fail(&mut self, e: Error) {
        self.state = BattlEyeState::Failed;
        self.pending = None;
        self.actions.push_back(Action::Fail(e));
    }

    fn send_login(&mut self, now: Instant, again: bool) {
        let mut payload = vec![LOGIN];
        payload.extend_from_slice(self.password.as_bytes());
        let what = if again {
            "login again, no reply yet (password hidden)"
        } else {
            "login (password hidden)"
        };
        self.send(encode(&payload), what.into(), now, true);
        self.login_last = Some(now);
    }

    fn take_seq(&mut self) -> u8 {
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        seq
    }

    fn on_message(&mut self, seq: u8, text: &[u8], now: Instant) {
        // Acknowledge every copy: the server resends until it sees an ack.
        self.send(
            encode(&[MESSAGE, seq]),
            format!("ack of server message seq={seq}"),
            now,
            false,
        );
        if self.seen.contains(&seq) {
            return;
        }
        if self.seen.len() == SEEN {
            self.seen.pop_front();
        }
        self.seen.push_back(seq);
        let text = String::from_utf8_lossy(text).into_owned();
        match self.pending.as_mut() {
            Some(p) => {
                p.held.push(text);
                p.last_held = Some(now);
            }
            None => self.actions.push_back(Action::Message(text)),
        }
    }

    fn on_answer(&mut self, seq: u8, body: &[u8], now: Instant) {
        if let Some((k, _, _)) = &self.keepalive
            && *k == seq
        {
            self.keepalive = None;
            return;
        }
        let Some(p) = self.pending.as_mut() else {
            return; // a late duplicate of an answer already given
        };
        if p.seq != seq {
            return;
        }
        self.answered = true;
        if body.len() >= 3 && body[0] == 0x00 {
            let (count, index) = (usize::from(body[1]), usize::from(body[2]));
            if count == 0 || index >= count || (!p.parts.is_empty() && p.parts.len() != count) {
                self.fail(Error::Protocol(format!(
                    "BattlEye answer part {index} of {count} does not fit"
                )));
                return;
            }
            if p.parts.is_empty() {
                p.parts = vec![None; count];
            }
            p.parts[index] = Some(body[3..].to_vec());
            if p.parts.iter().all(Option::is_some) {
                let mut whole = Vec::new();
                for part in p.parts.drain(..).flatten() {
                    whole.extend_from_slice(&part);
                }
                self.finish(String::from_utf8_lossy(&whole).into_owned());
            }
            return;
        }
        let _ = now;
        self.finish(String::from_utf8_lossy(body).into_owned());
    }

    /// Gives the answer; held server messages go on as messages.
    fn finish(&mut self, answer: String) {
        if let Some(p) = self.pending.take() {
            self.actions.push_back(Action::Answer(answer));
            for m in p.held {
                self.actions.push_back(Action::Message(m));
            }
        }
    }
}

impl ConsoleExchange for BattlEye {
    fn start(&mut self, now: Instant) {
        self.state = BattlEyeState::LoggingIn;
        self.login_first = Some(now);
        self.send_login(now, false);
    }

    fn command(&mut self, command: &str, now: Instant) {
        if self.state != BattlEyeState::Ready {
            self.actions.push_back(Action::Fail(Error::Closed {
                when: "before the command (not logged in)",
            }));
            return;
        }
        self.keepalive = None;
        let seq = self.take_seq();
        let mut payload = vec![COMMAND, seq];
        payload.extend_from_slice(command.as_bytes());
        let datagram = encode(&payload);
        self.send(datagram.clone(), format!("command seq={seq}"), now, false);
        self.pending = Some(Pending {
            seq,
            datagram,
            first_sent: now,
            last_sent: now,
            parts: Vec::new(),
            retransmitted: None,
            held: Vec::new(),
            last_held: None,
        });
    }

    fn receive(&mut self, datagram: &[u8], now: Instant) {
        let payload = match decode(datagram) {
            Ok(p) => p,
            Err(e) => {
                if matches!(e, PacketError::BadCrc { .. }) {
                    self.bad_crc += 1;
                }
                let what = format!("dropped: {e} ({} with a bad CRC so far)", self.bad_crc);
                self.trace_received(datagram, what);
                return;
            }
        };
        let kind = payload.first().copied();
        match (kind, payload.get(1).copied()) {
            (Some(LOGIN), Some(ok)) => {
                self.trace_received(
                    datagram,
                    format!("login reply: {}", if ok == 1 { "ok" } else { "refused" }),
                );
                if self.state != BattlEyeState::LoggingIn {
                    return; // a duplicate of the reply
                }
                if ok == 1 {
                    self.state = BattlEyeState::Ready;
                    self.actions.push_back(Action::LoggedIn);
                } else {
                    self.fail(Error::LoginRefused);
                }
            }
            (Some(COMMAND), Some(seq)) => {
                let body = &payload[2..];
                let what = if body.len() >= 3 && body[0] == 0 {
                    format!("answer seq={seq} part {} of {}", body[2], body[1])
                } else {
                    format!("answer seq={seq}")
                };
                self.trace_received(datagram, what);
                if self.state == BattlEyeState::Ready {
                    self.on_answer(seq, body, now);
                }
            }
            (Some(MESSAGE), Some(seq)) => {
                self.trace_received(datagram, format!("server message seq={seq}"));
                if self.state == BattlEyeState::Ready {
                    self.on_message(seq, &payload[2..], now);
                }
            }
            _ => self.trace_received(datagram, "ignored: unknown packet type".into()),
        }
    }

    fn tick(&mut self, now: Instant) {
        let t = self.timings;
        match self.state {
            BattlEyeState::LoggingIn => {
                let first = self.login_first.unwrap_or(now);
                if now.duration_since(first) >= t.timeout {
                    self.fail(Error::Timeout {
                        phase: crate::error::Phase::Login,
                        what: NO_ANSWER,
                        after: t.timeout,
                    });
                } else if self
                    .login_last
                    .is_some_and(|l| now.duration_since(l) >= t.retransmit)
                {
                    self.send_login(now, true);
                }
            }
            BattlEyeState::Ready => {
                if let Some(p) = self.pending.as_mut() {
                    if let (Some(last), Some(again)) = (p.last_held, p.retransmitted)
                        && !self.answered
                        && now.duration_since(last) >= t.idle_gap
                        && now.duration_since(again) >= t.idle_gap
                    {
                        let answer = std::mem::take(&mut p.held).join("\n");
                        if !self.warned_quirk {
                            self.warned_quirk = true;
                            self.actions.push_back(Action::Warning(
                                "the server answered with server messages (0x02) instead of a command answer (a known Arma Reforger behaviour); taking them as the answer".into(),
                            ));
                        }
                        self.finish(answer);
                        return;
                    }
                    if now.duration_since(p.first_sent) >= t.timeout {
                        self.fail(Error::Timeout {
 phase: crate::error::Phase::Answer,
                            what: "waiting for the BattlEye answer (retransmitted with the same sequence number)",
                            after: t.timeout,
                        });
                        return;
                    }
                    if now.duration_since(p.last_sent) >= t.retransmit {
                        p.last_sent = now;
                        p.retransmitted = Some(now);
                        let (seq, datagram) = (p.seq, p.datagram.clone());
                        self.send(
                            datagram,
                            format!("command seq={seq} again, no answer yet"),
                            now,
                            false,
                        );
                    }
                    return;
                }
                if let Some((seq, datagram, last)) = self.keepalive.clone() {
                    if self
                        .keepalive_first
                        .is_some_and(|f| now.duration_since(f) >= t.timeout)
                    {
                        self.keepalive = None;
                        self.fail(Error::Timeout {
 phase: crate::error::Phase::Idle,
                            what: "waiting for the keep-alive's answer (server gone, or it logged this client out)",
                            after: t.timeout,
                        });
                        return;
                    }
                    if now.duration_since(last) >= t.retransmit {
                        self.keepalive = Some((seq, datagram.clone(), now));
                        self.send(datagram, format!("keep-alive seq={seq} again"), now, false);
                    }
                    return;
                }
                if self
                    .last_sent
                    .is_none_or(|l| now.duration_since(l) >= t.keepalive)
                {
                    let seq = self.take_seq();
                    let datagram = encode(&[COMMAND, seq]);
                    self.keepalive = Some((seq, datagram.clone(), now));
                    self.keepalive_first = Some(now);
                    self.send(datagram, format!("keep-alive seq={seq}"), now, false);
                }
            }
            BattlEyeState::New | BattlEyeState::Failed => {}
        }
    }

    fn poll(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    fn wake(&self) -> Option<Instant> {
        let t = self.timings;
        match self.state {
            BattlEyeState::LoggingIn => {
                let first = self.login_first? + t.timeout;
                Some(first.min(self.login_last? + t.retransmit))
            }
            BattlEyeState::Ready => {
                if let Some(p) = &self.pending {
                    let mut w = (p.first_sent + t.timeout).min(p.last_sent + t.retransmit);
                    if let (Some(l), Some(r), false) = (p.last_held, p.retransmitted, self.answered)
                    {
                        w = w.min((l + t.idle_gap).max(r + t.idle_gap));
                    }
                    return Some(w);
                }
                if let Some((_, _, last)) = &self.keepalive {
                    let w = *last + t.retransmit;
                    return Some(self.keepalive_first.map_or(w, |f| w.min(f + t.timeout)));
                }
                Some(self.last_sent? + t.keepalive)
            }
            BattlEyeState::New | BattlEyeState::Failed => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn t() -> Timings {
        Timings {
            timeout: Duration::from_secs(10),
            retransmit: Duration::from_secs(1),
            keepalive: Duration::from_secs(30),
            idle_gap: Duration::from_millis(250),
        }
    }

    /// Drains the actions as short strings: `send <payload hex>`, `answer <text>`, ...
    fn drain(ex: &mut BattlEye) -> Vec<String> {
        let mut out = Vec::new();
        while let Some(a) = ex.poll() {
            out.push(match a {
                Action::Send(d) => {
                    let p = decode(&d).expect("we send valid packets");
                    let hex: Vec<String> = p.iter().map(|b| format!("{b:02x}")).collect();
                    format!("send {}", hex.join(" "))
                }
                Action::LoggedIn => "logged in".into(),
                Action::Answer(s) => format!("answer {s}"),
                Action::Message(s) => format!("message {s}"),
                Action::Warning(_) => "warning".into(),
                Action::Fail(e) => format!("fail {e}"),
                Action::Trace { .. } => continue,
            });
        }
        out
    }

    fn logged_in(now: Instant) -> BattlEye {
        let mut ex = BattlEye::new("pw", t(), false);
        ex.start(now);
        ex.receive(&encode(&[0, 1]), now);
        drain(&mut ex);
        ex
    }

    #[test]
    fn crc_matches_zlib_and_is_little_endian() {
        // zlib.crc32(b"123456789") == 0xCBF43926, the standard check value.
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        // berconpy's login packet for "pw": b"BE" + crc32(b"\xff\x00pw").to_bytes(4, "little")
        let p = encode(b"\x00pw");
        assert_eq!(&p[2..6], &crc32(b"\xff\x00pw").to_le_bytes());
        assert_eq!(&p[6..], b"\xff\x00pw");
    }

    #[test]
    fn decode_rejects_every_bad_shape() {
        let good = encode(&[1, 7, b'h', b'i']);
        assert_eq!(decode(&good), Ok(&[1, 7, b'h', b'i'][..]));
        // Every prefix shorter than the header is too short; longer ones fail the CRC.
        for n in 0..good.len() {
            let r = decode(&good[..n]);
            assert!(r.is_err(), "prefix {n} accepted");
            if n < 8 {
                assert!(matches!(r, Err(PacketError::TooShort { .. })));
            } else {
                assert!(matches!(r, Err(PacketError::BadCrc { .. })));
            }
        }
        let mut bad = good.clone();
        bad[9] ^= 1;
        assert!(matches!(decode(&bad), Err(PacketError::BadCrc { .. })));
        let mut bad = good.clone();
        bad[0] = b'X';
        assert_eq!(decode(&bad), Err(PacketError::NoHeader));
    }

    #[test]
    fn login_cases() {
        let now = Instant::now();
        let s = Duration::from_secs;
        // (reply, expected actions)
        let cases: [(Option<&[u8]>, &[&str]); 3] = [
            (Some(&[0, 1]), &["logged in"]),
            (Some(&[0, 0]), &["fail login refused: wrong password"]),
            (Some(&[2, 0, b'x']), &[]), // not logged in yet: a message is ignored
        ];
        for (reply, want) in cases {
            let mut ex = BattlEye::new("pw", t(), false);
            ex.start(now);
            assert_eq!(drain(&mut ex), ["send 00 70 77"]);
            if let Some(r) = reply {
                ex.receive(&encode(r), now);
            }
            assert_eq!(drain(&mut ex), want, "reply {reply:?}");
        }
        // No reply: the login is sent again each second, then a timeout with the hint.
        let mut ex = BattlEye::new("pw", t(), false);
        ex.start(now);
        drain(&mut ex);
        assert_eq!(ex.wake(), Some(now + s(1)));
        ex.tick(now + s(1));
        assert_eq!(drain(&mut ex), ["send 00 70 77"]);
        ex.tick(now + s(10));
        let got = drain(&mut ex);
        assert!(got[0].contains("is BattlEye RCon enabled"), "{got:?}");
    }

    #[test]
    fn command_cases() {
        let now = Instant::now();
        // (datagrams from the server after `command "x"` with seq 0, expected actions)
        let cases: Vec<(Vec<Vec<u8>>, Vec<&str>)> = vec![
            (vec![encode(b"\x01\x00hello")], vec!["answer hello"]),
            // Parts out of order, one duplicated.
            (
                vec![
                    encode(b"\x01\x00\x00\x03\x02C"),
                    encode(b"\x01\x00\x00\x03\x00A"),
                    encode(b"\x01\x00\x00\x03\x02C"),
                    encode(b"\x01\x00\x00\x03\x01B"),
                ],
                vec!["answer ABC"],
            ),
            // An answer to another seq is stale.
            (
                vec![encode(b"\x01\x05nope"), encode(b"\x01\x00yes")],
                vec!["answer yes"],
            ),
            // A server message during the command is acked, held, then delivered.
            (
                vec![encode(b"\x02\x09chat"), encode(b"\x01\x00out")],
                vec!["send 02 09", "answer out", "message chat"],
            ),
            // A duplicate message is acked again but delivered once.
            (
                vec![
                    encode(b"\x02\x09chat"),
                    encode(b"\x02\x09chat"),
                    encode(b"\x01\x00out"),
                ],
                vec!["send 02 09", "send 02 09", "answer out", "message chat"],
            ),
            // A bad CRC is dropped.
            (
                vec![
                    {
                        let mut d = encode(b"\x01\x00bad");
                        d[2] ^= 0xFF;
                        d
                    },
                    encode(b"\x01\x00good"),
                ],
                vec!["answer good"],
            ),
            // Parts that do not fit fail the exchange.
            (
                vec![encode(b"\x01\x00\x00\x02\x05x")],
                vec!["fail protocol error: BattlEye answer part 5 of 2 does not fit"],
            ),
        ];
        for (datagrams, want) in cases {
            let mut ex = logged_in(now);
            ex.command("x", now);
            assert_eq!(drain(&mut ex), ["send 01 00 78"]);
            for d in &datagrams {
                ex.receive(d, now);
            }
            assert_eq!(drain(&mut ex), want, "{datagrams:?}");
        }
        let mut ex = logged_in(now);
        ex.command("x", now);
        let mut d = encode(b"\x01\x00bad");
        d[3] ^= 1;
        ex.receive(&d, now);
        assert_eq!(ex.bad_crc(), 1);
    }

    #[test]
    fn retransmits_with_the_same_seq_then_times_out() {
        let now = Instant::now();
        let s = Duration::from_secs;
        let mut ex = logged_in(now);
        ex.command("x", now);
        drain(&mut ex);
        assert_eq!(ex.wake(), Some(now + s(1)));
        ex.tick(now + s(1));
        assert_eq!(drain(&mut ex), ["send 01 00 78"]);
        ex.tick(now + s(2));
        assert_eq!(drain(&mut ex), ["send 01 00 78"]);
        ex.tick(now + s(10));
        let got = drain(&mut ex);
        assert!(got[0].starts_with("fail timed out after 10s"), "{got:?}");
    }

    #[test]
    fn sequence_numbers_wrap() {
        let now = Instant::now();
        let mut ex = logged_in(now);
        for i in 0..300u32 {
            let seq = (i % 256) as u8;
            assert_eq!(ex.next_seq(), seq);
            ex.command("c", now);
            drain(&mut ex);
            ex.receive(&encode(&[1, seq, b'k']), now);
            assert_eq!(drain(&mut ex), ["answer k"]);
        }
    }

    #[test]
    fn keepalive_after_silence_and_its_answer_is_swallowed() {
        let now = Instant::now();
        let s = Duration::from_secs;
        let mut ex = logged_in(now);
        assert_eq!(ex.wake(), Some(now + s(30)));
        ex.tick(now + s(30));
        assert_eq!(drain(&mut ex), ["send 01 00"]);
        // Lost: sent again after the retransmit interval.
        ex.tick(now + s(31));
        assert_eq!(drain(&mut ex), ["send 01 00"]);
        ex.receive(&encode(&[1, 0]), now + s(31));
        assert_eq!(drain(&mut ex), Vec::<String>::new());
        assert_eq!(ex.wake(), Some(now + s(61)));
        // Idle server messages are delivered at once.
        ex.receive(&encode(b"\x02\x00hi"), now + s(32));
        assert_eq!(drain(&mut ex), ["send 02 00", "message hi"]);
    }

    /// The default clocks keep an idle session logged in on a real server, which drops a client
    /// that sent nothing for 45 s: over 200 idle seconds on a fake clock, ticked every 100 ms
    /// and each keep-alive answered as the server does, the client never goes 45 s without
    /// sending, and no answer of a keep-alive shows.
    #[test]
    fn default_keepalive_beats_the_servers_45_seconds() {
        let start = Instant::now();
        let mut ex = BattlEye::new("pw", Timings::default(), false);
        ex.start(start);
        assert_eq!(drain(&mut ex), ["send 00 70 77"], "the login");
        ex.receive(&encode(&[0, 1]), start);
        assert_eq!(drain(&mut ex), ["logged in"]);
        let mut last_sent = start;
        let mut keepalives = 0;
        for step in 1..=2000u64 {
            let now = start + Duration::from_millis(100 * step);
            ex.tick(now);
            for action in drain(&mut ex) {
                let payload: Vec<u8> = action
                    .strip_prefix("send ")
                    .unwrap_or_else(|| panic!("only keep-alives go out: {action}"))
                    .split(' ')
                    .map(|h| u8::from_str_radix(h, 16).unwrap())
                    .collect();
                assert_eq!(payload.len(), 2, "an empty command: {action}");
                last_sent = now;
                keepalives += 1;
                ex.receive(&encode(&payload), now);
            }
            assert_eq!(
                drain(&mut ex),
                Vec::<String>::new(),
                "answers are swallowed"
            );
            assert!(
                now - last_sent < Duration::from_secs(45),
                "silent for 45 s at {:?}: the server would drop the client",
                now - start
            );
        }
        assert!(keepalives >= 6, "{keepalives}");
    }

    #[test]
    fn an_unanswered_keepalive_fails_the_session_after_the_timeout() {
        let now = Instant::now();
        let s = Duration::from_secs;
        let mut ex = logged_in(now);
        ex.tick(now + s(30));
        assert_eq!(drain(&mut ex), ["send 01 00"]);
        for i in 1..10 {
            ex.tick(now + s(30 + i));
            assert_eq!(drain(&mut ex), ["send 01 00"], "retransmit {i}");
        }
        assert_eq!(ex.wake(), Some(now + s(40)));
        ex.tick(now + s(40));
        let got = drain(&mut ex);
        assert_eq!(got.len(), 1, "{got:?}");
        assert!(got[0].starts_with("fail"), "{got:?}");
        assert_eq!(ex.wake(), None);
    }

    #[test]
    fn reforger_stream_becomes_the_answer() {
        let now = Instant::now();
        let ms = Duration::from_millis;
        let mut ex = logged_in(now);
        ex.command("players", now);
        drain(&mut ex);
        ex.receive(&encode(b"\x02\x00line 1"), now + ms(100));
        ex.receive(&encode(b"\x02\x01line 2"), now + ms(200));
        assert_eq!(drain(&mut ex), ["send 02 00", "send 02 01"]);
        ex.tick(now + ms(500));
        assert_eq!(drain(&mut ex), Vec::<String>::new());
        // No 0x01 by the retransmit interval: sent again (same seq), then the stream counts.
        ex.tick(now + ms(1000));
        assert_eq!(drain(&mut ex), ["send 01 00 70 6c 61 79 65 72 73"]);
        assert_eq!(ex.wake(), Some(now + ms(1250)));
        ex.tick(now + ms(1250));
        assert_eq!(drain(&mut ex), ["warning", "answer line 1\nline 2"]);
    }

    #[test]
    fn a_server_that_answered_once_never_gets_the_quirk() {
        let now = Instant::now();
        let ms = Duration::from_millis;
        let mut ex = logged_in(now);
        ex.command("a", now);
        ex.receive(&encode(b"\x01\x00ok"), now);
        ex.command("say -1 hi", now);
        drain(&mut ex);
        // The broadcast comes, the empty answer is lost: retransmit, never the quirk.
        ex.receive(&encode(b"\x02\x00RCon admin: hi"), now);
        ex.tick(now + ms(1000));
        ex.tick(now + ms(1500));
        assert_eq!(
            drain(&mut ex),
            ["send 02 00", "send 01 01 73 61 79 20 2d 31 20 68 69"]
        );
        ex.receive(&encode(&[1, 1]), now + ms(1600));
        assert_eq!(drain(&mut ex), ["answer ", "message RCon admin: hi"]);
    }

    #[test]
    fn broadcasts_around_an_empty_answer_stay_messages() {
        // `say -1 hi`: the server broadcasts the text as a message and answers empty.
        let now = Instant::now();
        let mut ex = logged_in(now);
        ex.command("say -1 hi", now);
        drain(&mut ex);
        ex.receive(&encode(b"\x02\x00RCon admin: hi"), now);
        ex.receive(&encode(&[1, 0]), now);
        assert_eq!(
            drain(&mut ex),
            ["send 02 00", "answer ", "message RCon admin: hi"]
        );
    }

    proptest::proptest! {
        #[test]
        fn any_datagrams_never_panic(datagrams in proptest::collection::vec(
            proptest::collection::vec(proptest::num::u8::ANY, 0..64), 0..20)) {
            let now = Instant::now();
            let mut ex = logged_in(now);
            ex.command("x", now);
            for (i, d) in datagrams.iter().enumerate() {
                // Valid framing around random payloads, and raw random bytes.
                let t = now + Duration::from_millis(i as u64 * 100);
                ex.receive(&encode(d), t);
                ex.receive(d, t);
                ex.tick(t);
            }
            while ex.poll().is_some() {}
        }
    }
}
