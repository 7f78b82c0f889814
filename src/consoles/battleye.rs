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

/// Where the exchange is; each state holds what is valid in it, and its deadlines follow from
/// that ([`BattlEye::timers`]).
#[derive(Debug)]
enum BattlEyeState {
    New,
    /// The login, sent again until its reply comes.
    LoggingIn(Resent),
    Ready(Session),
    Failed,
}

/// A datagram sent again every [`Timings::retransmit`] until its answer comes, given up
/// [`Timings::timeout`] after it first went out: the login (whose `seq` is unused), a
/// keep-alive or a command.
#[derive(Debug)]
struct Resent {
    seq: u8,
    datagram: Vec<u8>,
    first: Instant,
    /// When it was last sent again, if it was.
    again: Option<Instant>,
}

impl Resent {
    fn new(seq: u8, datagram: Vec<u8>, now: Instant) -> Self {
        Resent {
            seq,
            datagram,
            first: now,
            again: None,
        }
    }

    fn last(&self) -> Instant {
        self.again.unwrap_or(self.first)
    }

    /// The datagram to send again at `now`.
    fn again(&mut self, now: Instant) -> Vec<u8> {
        self.again = Some(now);
        self.datagram.clone()
    }
}

/// What a [`Resent`] datagram waits for, as its traces and its timeout say it.
#[derive(Debug, Clone, Copy)]
enum Waiting {
    Login,
    KeepAlive,
    Answer,
}

impl Waiting {
    /// What a trace says when it is sent again.
    fn again(self, seq: u8) -> String {
        match self {
            Waiting::Login => "login again, no reply yet (password hidden)".into(),
            Waiting::KeepAlive => format!("keep-alive seq={seq} again"),
            Waiting::Answer => format!("command seq={seq} again, no answer yet"),
        }
    }

    /// The failure when its answer has not come `after` it first went out.
    fn timeout(self, after: Duration) -> Error {
        let (phase, what) = match self {
            Waiting::Login => (crate::error::Phase::Login, NO_ANSWER),
            Waiting::KeepAlive => (
                crate::error::Phase::Idle,
                "waiting for the keep-alive's answer (server gone, or it logged this client out)",
            ),
            Waiting::Answer => (
                crate::error::Phase::Answer,
                "waiting for the BattlEye answer (retransmitted with the same sequence number)",
            ),
        };
        Error::Timeout { phase, what, after }
    }
}

/// A logged-in session.
#[derive(Debug)]
struct Session {
    /// When anything was last sent: after [`Timings::keepalive`] of silence a keep-alive goes.
    last_sent: Instant,
    /// Sequence numbers of the server messages seen lately (the server resends one whose ack
    /// it missed); enough to tell a resend from the next lap of the wrap.
    seen: VecDeque<u8>,
    /// Whether any command got a `0x01` answer (then the Reforger quirk is ruled out).
    answered: bool,
    warned_quirk: bool,
    work: Work,
}

/// What a session waits for.
#[derive(Debug)]
enum Work {
    Idle,
    /// A keep-alive's answer: unanswered for the timeout, the server is gone (or logged this
    /// client out) and the session fails, so a reconnect can follow.
    KeepAlive(Resent),
    Command(Pending),
}

/// The command waiting for its answer.
#[derive(Debug)]
struct Pending {
    out: Resent,
    /// Parts of a multi-part answer, by index.
    parts: Vec<Option<Vec<u8>>>,
    /// Server messages held back while the command is pending, and when the last came.
    held: Vec<String>,
    last_held: Option<Instant>,
}

impl Pending {
    /// With the Reforger quirk: when the held messages become the answer (`gap` after both
    /// the last of them and the retransmission), unless the server has answered with `0x01`.
    fn quiet(&self, answered: bool, gap: Duration) -> Option<Instant> {
        match (self.last_held, self.out.again, answered) {
            (Some(held), Some(again), false) => held.max(again).checked_add(gap),
            _ => None,
        }
    }
}

/// The exchange's timers, each one deadline with one meaning, in the order they are served
/// when several are due (quinn-proto's timer table, in small).
#[derive(Debug, Clone, Copy)]
enum Timer {
    /// The held server messages are the answer (the Reforger quirk).
    Quiet,
    /// The login, keep-alive or command went unanswered for [`Timings::timeout`].
    GiveUp,
    /// It is sent again.
    Resend,
    /// Nothing was sent for [`Timings::keepalive`]: a keep-alive goes out.
    KeepAlive,
}

/// The BattlEye RCon exchange: login, commands, acks, keep-alive, retransmission.
pub struct BattlEye {
    password: String,
    timings: Timings,
    state: BattlEyeState,
    next_seq: u8,
    actions: VecDeque<Action>,
    tracing: bool,
    bad_crc: u64,
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
            next_seq: 0,
            actions: VecDeque::new(),
            tracing,
            bad_crc: 0,
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
        if let BattlEyeState::Ready(s) = &mut self.state {
            s.last_sent = now;
        }
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
        // Messages held back for the answer were acknowledged, so the server never sends them
        // again: they go out before the failure.
        if let BattlEyeState::Ready(Session {
            work: Work::Command(p),
            ..
        }) = std::mem::replace(&mut self.state, BattlEyeState::Failed)
        {
            self.actions.extend(p.held.into_iter().map(Action::Message));
        }
        self.actions.push_back(Action::Fail(e));
    }

    fn take_seq(&mut self) -> u8 {
        let seq = self.next_seq;
        self.next_seq = self.next_seq.wrapping_add(1);
        seq
    }

    /// The session, when logged in.
    fn session(&mut self) -> Option<&mut Session> {
        match &mut self.state {
            BattlEyeState::Ready(s) => Some(s),
            _ => None,
        }
    }

    fn on_login_reply(&mut self, ok: bool) {
        let BattlEyeState::LoggingIn(login) = &self.state else {
            return; // a duplicate of the reply
        };
        if !ok {
            return self.fail(Error::LoginRefused);
        }
        self.state = BattlEyeState::Ready(Session {
            last_sent: login.last(),
            seen: VecDeque::with_capacity(SEEN),
            answered: false,
            warned_quirk: false,
            work: Work::Idle,
        });
        self.actions.push_back(Action::LoggedIn);
    }

    fn on_message(&mut self, seq: u8, text: &[u8], now: Instant) {
        // Acknowledge every copy: the server resends until it sees an ack.
        self.send(
            encode(&[MESSAGE, seq]),
            format!("ack of server message seq={seq}"),
            now,
            false,
        );
        let Some(s) = self.session() else { return };
        if s.seen.contains(&seq) {
            return;
        }
        if s.seen.len() == SEEN {
            s.seen.pop_front();
        }
        s.seen.push_back(seq);
        let text = String::from_utf8_lossy(text).into_owned();
        match &mut s.work {
            Work::Command(p) => {
                p.held.push(text);
                p.last_held = Some(now);
            }
            _ => self.actions.push_back(Action::Message(text)),
        }
    }

    fn on_answer(&mut self, seq: u8, body: &[u8]) {
        let Some(s) = self.session() else { return };
        let p = match &mut s.work {
            Work::KeepAlive(k) if k.seq == seq => {
                s.work = Work::Idle;
                return;
            }
            Work::Command(p) if p.out.seq == seq => p,
            // A late duplicate of an answer already given, or of an older one.
            _ => return,
        };
        s.answered = true;
        match Self::part(p, body) {
            Ok(Some(answer)) => self.finish(answer),
            Ok(None) => {}
            Err(e) => self.fail(e),
        }
    }

    /// Puts one answer datagram's `body` into the command's answer: the answer once it is
    /// whole, an error when a part does not fit the others.
    fn part(p: &mut Pending, body: &[u8]) -> Result<Option<String>, Error> {
        if body.len() < 3 || body[0] != 0x00 {
            return Ok(Some(String::from_utf8_lossy(body).into_owned()));
        }
        let (count, index) = (usize::from(body[1]), usize::from(body[2]));
        if count == 0 || index >= count || (!p.parts.is_empty() && p.parts.len() != count) {
            return Err(Error::Protocol(format!(
                "BattlEye answer part {index} of {count} does not fit"
            )));
        }
        if p.parts.is_empty() {
            p.parts = vec![None; count];
        }
        p.parts[index] = Some(body[3..].to_vec());
        if !p.parts.iter().all(Option::is_some) {
            return Ok(None);
        }
        let whole: Vec<u8> = p.parts.drain(..).flatten().flatten().collect();
        Ok(Some(String::from_utf8_lossy(&whole).into_owned()))
    }

    /// Gives the answer; held server messages go on as messages, before its end (nothing
    /// follows an answer's end).
    fn finish(&mut self, answer: String) {
        let Some(s) = self.session() else { return };
        if let Work::Command(p) = std::mem::replace(&mut s.work, Work::Idle) {
            self.actions.push_back(Action::Output(answer.into_bytes()));
            self.actions.extend(p.held.into_iter().map(Action::Message));
            self.actions.push_back(Action::Done { close: false });
        }
    }

    /// When each timer is due in this state, if it is set: the one place the deadlines come
    /// from, for [`Machine::wake`] and [`Machine::tick`] alike.
    fn timers(&self) -> [(Timer, Option<Instant>); 4] {
        let t = self.timings;
        let (resent, quiet, keepalive) = match &self.state {
            BattlEyeState::LoggingIn(r) => (Some(r), None, None),
            BattlEyeState::Ready(s) => match &s.work {
                Work::Idle => (None, None, s.last_sent.checked_add(t.keepalive)),
                Work::KeepAlive(r) => (Some(r), None, None),
                Work::Command(p) => (Some(&p.out), p.quiet(s.answered, t.idle_gap), None),
            },
            BattlEyeState::New | BattlEyeState::Failed => (None, None, None),
        };
        [
            (Timer::Quiet, quiet),
            (
                Timer::GiveUp,
                resent.and_then(|r| r.first.checked_add(t.timeout)),
            ),
            (
                Timer::Resend,
                resent.and_then(|r| r.last().checked_add(t.retransmit)),
            ),
            (Timer::KeepAlive, keepalive),
        ]
    }

    /// The Reforger quirk: the held server messages are the answer.
    fn answer_with_held(&mut self) {
        let Some(s) = self.session() else { return };
        let Work::Command(p) = &mut s.work else {
            return;
        };
        let answer = std::mem::take(&mut p.held).join("\n");
        if !std::mem::replace(&mut s.warned_quirk, true) {
            self.actions
                .push_back(Action::Warning(Notice::new(AnswerAsMessages)));
        }
        self.finish(answer);
    }

    /// The login, keep-alive or command waiting for its answer, if any, and which it is.
    fn waiting(&mut self) -> Option<(Waiting, &mut Resent)> {
        match &mut self.state {
            BattlEyeState::LoggingIn(r) => Some((Waiting::Login, r)),
            BattlEyeState::Ready(s) => match &mut s.work {
                Work::Idle => None,
                Work::KeepAlive(r) => Some((Waiting::KeepAlive, r)),
                Work::Command(p) => Some((Waiting::Answer, &mut p.out)),
            },
            BattlEyeState::New | BattlEyeState::Failed => None,
        }
    }

    fn give_up(&mut self) {
        if let Some((waiting, _)) = self.waiting() {
            let e = waiting.timeout(self.timings.timeout);
            self.fail(e);
        }
    }

    fn resend(&mut self, now: Instant) {
        if let Some((waiting, r)) = self.waiting() {
            let (what, datagram) = (waiting.again(r.seq), r.again(now));
            self.send(datagram, what, now, matches!(waiting, Waiting::Login));
        }
    }

    fn send_keepalive(&mut self, now: Instant) {
        let seq = self.take_seq();
        let datagram = encode(&[COMMAND, seq]);
        let Some(s) = self.session() else { return };
        s.work = Work::KeepAlive(Resent::new(seq, datagram.clone(), now));
        self.send(datagram, format!("keep-alive seq={seq}"), now, false);
    }
}

impl Machine for BattlEye {
    fn start(&mut self, now: Instant) {
        let mut payload = vec![LOGIN];
        payload.extend_from_slice(self.password.as_bytes());
        let datagram = encode(&payload);
        self.state = BattlEyeState::LoggingIn(Resent::new(0, datagram.clone(), now));
        self.send(datagram, "login (password hidden)".into(), now, true);
    }

    fn command(&mut self, command: &str, now: Instant) {
        if self.session().is_none() {
            // A failure is final: a login still under way must not report success later.
            self.fail(Error::Closed {
                phase: crate::error::Phase::Login,
                partial: false,
                when: "before the command (not logged in)",
            });
            return;
        }
        let seq = self.take_seq();
        let mut payload = vec![COMMAND, seq];
        payload.extend_from_slice(command.as_bytes());
        let datagram = encode(&payload);
        self.send(datagram.clone(), format!("command seq={seq}"), now, false);
        if let Some(s) = self.session() {
            // A keep-alive under way is forgotten: the command keeps the login alive too.
            s.work = Work::Command(Pending {
                out: Resent::new(seq, datagram, now),
                parts: Vec::new(),
                held: Vec::new(),
                last_held: None,
            });
        }
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
        let ready = matches!(self.state, BattlEyeState::Ready(_));
        match (payload.first().copied(), payload.get(1).copied()) {
            (Some(LOGIN), Some(ok)) => {
                self.trace_received(
                    datagram,
                    format!("login reply: {}", if ok == 1 { "ok" } else { "refused" }),
                );
                self.on_login_reply(ok == 1);
            }
            (Some(COMMAND), Some(seq)) => {
                let body = &payload[2..];
                let what = if body.len() >= 3 && body[0] == 0 {
                    format!("answer seq={seq} part {} of {}", body[2], body[1])
                } else {
                    format!("answer seq={seq}")
                };
                self.trace_received(datagram, what);
                if ready {
                    self.on_answer(seq, body);
                }
            }
            (Some(MESSAGE), Some(seq)) => {
                self.trace_received(datagram, format!("server message seq={seq}"));
                if ready {
                    self.on_message(seq, &payload[2..], now);
                }
            }
            _ => self.trace_received(datagram, "ignored: unknown packet type".into()),
        }
    }

    fn tick(&mut self, now: Instant) {
        match crate::engine::machine::first_due(self.timers(), now) {
            Some(Timer::Quiet) => self.answer_with_held(),
            Some(Timer::GiveUp) => self.give_up(),
            Some(Timer::Resend) => self.resend(now),
            Some(Timer::KeepAlive) => self.send_keepalive(now),
            None => {}
        }
    }

    fn poll(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    fn wake(&self) -> Option<Instant> {
        crate::engine::machine::earliest(self.timers())
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
