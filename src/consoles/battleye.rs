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

use super::ConsoleNotice::AnswerAsMessages;
use crate::engine::{Action, Direction, Machine, Notice, Protocol, Traced};
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
            let mut traced = Traced::new(Protocol::BattlEye, Direction::Sent, bytes, what);
            traced.hidden = hidden;
            self.actions.push_back(Action::Trace(traced));
        }
        self.last_sent = Some(now);
        self.actions.push_back(Action::Send(datagram));
    }

    fn trace_received(&mut self, datagram: &[u8], what: String) {
        if self.tracing {
            self.actions.push_back(Action::Trace(Traced::new(
                Protocol::BattlEye,
                Direction::Received,
                datagram.to_vec(),
                what,
            )));
        }
    }

    fn fail(&mut self, e: Error) {
        self.state = BattlEyeState::Failed;
        // Messages held back for the answer were acknowledged, so the server never sends them
        // again: they go out before the failure.
        if let Some(p) = self.pending.take() {
            self.actions.extend(p.held.into_iter().map(Action::Message));
        }
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

    /// Gives the answer; held server messages go on as messages, before its end (nothing
    /// follows an answer's end).
    fn finish(&mut self, answer: String) {
        if let Some(p) = self.pending.take() {
            self.actions.push_back(Action::Output(answer.into_bytes()));
            self.actions.extend(p.held.into_iter().map(Action::Message));
            self.actions.push_back(Action::Done { close: false });
        }
    }
}

impl Machine for BattlEye {
    fn start(&mut self, now: Instant) {
        self.state = BattlEyeState::LoggingIn;
        self.login_first = Some(now);
        self.send_login(now, false);
    }

    fn command(&mut self, command: &str, now: Instant) {
        if self.state != BattlEyeState::Ready {
            // A failure is final: a login still under way must not report success later.
            self.fail(Error::Closed {
                phase: crate::error::Phase::Login,
                partial: false,
                when: "before the command (not logged in)",
            });
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
                            self.actions
                                .push_back(Action::Warning(Notice::new(AnswerAsMessages)));
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
    // The packet format; the exchange's tables per state are in `consoles/tests/battleye.rs`.

    use super::*;

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

    proptest::proptest! {
        #[test]
        fn any_datagrams_never_panic(datagrams in proptest::collection::vec(
            proptest::collection::vec(proptest::num::u8::ANY, 0..64), 0..20)) {
            let now = Instant::now();
            let mut ex = BattlEye::new("pw", Timings::default(), false);
            ex.start(now);
            ex.receive(&encode(&[LOGIN, 1]), now);
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
