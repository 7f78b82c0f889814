//! The RCON packet codec: encoding and incremental decoding over byte buffers (sans-IO).
//!
//! Wire format (docs/protocol.md section 1): `i32le size | i32le id | i32le type | body | 0x00 | 0x00`,
//! where `size` counts everything after itself. Nothing here touches sockets or clocks, so the
//! decoder can be fed any fragmentation or coalescing of the byte stream and tested exhaustively.

use std::fmt;

/// Packet type of a login request (client to server), `SERVERDATA_AUTH`.
pub const TYPE_LOGIN: i32 = 3;
/// Packet type of a command request (client to server) and of a login reply (server to client).
pub const TYPE_COMMAND: i32 = 2;
/// Packet type of a login reply (server to client); the same number as [`TYPE_COMMAND`].
pub const TYPE_LOGIN_REPLY: i32 = 2;
/// Packet type of command output (server to client), `SERVERDATA_RESPONSE_VALUE`.
pub const TYPE_OUTPUT: i32 = 0;

/// Bytes of a packet besides its body: id, type and the two NUL terminators.
pub const OVERHEAD: usize = 10;
/// Smallest legal value of the size field (an empty body).
pub const MIN_SIZE: i32 = OVERHEAD as i32;
/// The largest command body, in UTF-8 bytes, that a vanilla server can read: it reads at most
/// 1460 bytes per packet, and 14 of them are framing (docs/protocol.md section 2).
pub const MAX_COMMAND_BYTES: usize = 1446;
/// The largest incoming size field accepted by default: 16 MiB.
///
/// Vanilla fragments are at most 12 298 bytes (4096 UTF-16 units of 3-byte UTF-8), but Factorio,
/// CS2 and some reimplementations send a whole response in one packet of any size, so the limit is
/// generous. It exists so that a hostile or broken size field (say 2^31-1) is refused before a
/// single byte of it is buffered.
pub const DEFAULT_MAX_INCOMING: usize = 16 * 1024 * 1024;

/// One RCON packet, with its body as raw bytes (decoding to text happens after fragments are
/// joined, so that a multibyte character cut at a fragment boundary survives).
#[derive(Clone, PartialEq, Eq)]
pub struct Packet {
    /// Request id chosen by the client and echoed by the server (-1 means login failed).
    pub id: i32,
    /// Packet type, see the `TYPE_*` constants.
    pub kind: i32,
    /// Body without its NUL terminators.
    pub body: Vec<u8>,
}

impl Packet {
    /// A packet with the given id, type and body.
    pub fn new(id: i32, kind: i32, body: impl Into<Vec<u8>>) -> Self {
        Self {
            id,
            kind,
            body: body.into(),
        }
    }

    /// The encoded bytes of this packet.
    pub fn encode(&self) -> Vec<u8> {
        encode(self.id, self.kind, &self.body)
    }

    /// Size of the encoded packet, including the 4-byte size field.
    pub fn wire_len(&self) -> usize {
        self.body.len() + OVERHEAD + 4
    }
}

impl fmt::Debug for Packet {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Packet")
            .field("id", &self.id)
            .field("kind", &self.kind)
            .field("body", &String::from_utf8_lossy(&self.body))
            .finish()
    }
}

/// Encodes one packet. The caller checks the body against its own limits first.
pub fn encode(id: i32, kind: i32, body: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(body.len() + OVERHEAD + 4);
    encode_into(id, kind, body, &mut out);
    out
}

/// Encodes one packet, appending it to `out` (lets a caller reuse one buffer for every packet).
pub fn encode_into(id: i32, kind: i32, body: &[u8], out: &mut Vec<u8>) {
    let size = body.len() + OVERHEAD;
    out.reserve(size + 4);
    out.extend_from_slice(&(size as i32).to_le_bytes());
    out.extend_from_slice(&id.to_le_bytes());
    out.extend_from_slice(&kind.to_le_bytes());
    out.extend_from_slice(body);
    out.extend_from_slice(&[0, 0]);
}

/// Why a byte stream is not valid RCON.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum DecodeError {
    /// The size field is smaller than the 10 bytes every packet has (or negative).
    #[error("malformed packet: size field {size} is below the minimum of {MIN_SIZE}")]
    SizeTooSmall {
        /// The size field as sent.
        size: i32,
    },
    /// The size field exceeds the configured maximum; nothing was buffered for it.
    #[error("malformed packet: size field {size} exceeds the limit of {max} bytes")]
    SizeTooLarge {
        /// The size field as sent.
        size: i64,
        /// The limit in force.
        max: usize,
    },
    /// The packet does not end with the NUL terminator(s).
    #[error("malformed packet: body of packet id {id} is not NUL-terminated")]
    MissingTerminator {
        /// The packet's id field.
        id: i32,
    },
}

impl From<DecodeError> for crate::error::Error {
    fn from(e: DecodeError) -> Self {
        crate::error::Error::Decode(Box::new(e))
    }
}

/// Incremental decoder: feed it bytes as they arrive, take out whole packets.
///
/// It copes with any split or coalescing of the stream. Size fields are checked against
/// `max_size` before anything is reserved for the packet, so memory stays bounded by what the
/// peer actually sent, never by what it claims.
#[derive(Debug)]
pub struct Decoder {
    buf: Vec<u8>,
    start: usize,
    max_size: usize,
}

impl Default for Decoder {
    fn default() -> Self {
        Self::new(DEFAULT_MAX_INCOMING)
    }
}

impl Decoder {
    /// A decoder that refuses size fields above `max_size` bytes.
    pub fn new(max_size: usize) -> Self {
        Self {
            buf: Vec::new(),
            start: 0,
            max_size,
        }
    }

    /// Appends received bytes.
    pub fn feed(&mut self, bytes: &[u8]) {
        if self.start > 0 && self.start == self.buf.len() {
            self.buf.clear();
            self.start = 0;
        } else if self.start > 64 * 1024 && self.start * 2 > self.buf.len() {
            self.buf.drain(..self.start);
            self.start = 0;
        }
        self.buf.extend_from_slice(bytes);
    }

    /// Bytes received but not yet returned as packets.
    pub fn buffered(&self) -> usize {
        self.buf.len() - self.start
    }

    /// Discards everything buffered (used after a reconnect).
    pub fn clear(&mut self) {
        self.buf.clear();
        self.start = 0;
    }

    /// The next whole packet, `Ok(None)` if more bytes are needed.
    ///
    /// After an error the stream cannot be resynchronised: the caller must drop the connection.
    pub fn next_packet(&mut self) -> Result<Option<Packet>, DecodeError> {
        let pending = &self.buf[self.start..];
        let Some(size) = header_size(pending, self.max_size)? else {
            return Ok(None);
        };
        let total = size + 4;
        if pending.len() < total {
            return Ok(None);
        }
        let frame = &pending[4..total];
        let id = i32::from_le_bytes(frame[0..4].try_into().expect("4 bytes"));
        let kind = i32::from_le_bytes(frame[4..8].try_into().expect("4 bytes"));
        let body = strip_terminator(&frame[8..]).ok_or(DecodeError::MissingTerminator { id })?;
        let packet = Packet::new(id, kind, body);
        self.start += total;
        Ok(Some(packet))
    }

    /// Takes the incomplete packet at the front of the buffer as far as it arrived, and empties
    /// the buffer. For servers whose size field can claim more bytes than they send (docs/protocol.md
    /// section 4, Palworld), once the caller has decided that no more will come. `None` when
    /// not even the id and type arrived. Call it only after [`Decoder::next_packet`] returned
    /// `Ok(None)`; a strict caller never calls it.
    pub fn take_partial(&mut self) -> Option<Partial> {
        let pending = &self.buf[self.start..];
        let result = match (header_size(pending, self.max_size), pending.get(4..12)) {
            (Ok(Some(size)), Some(head)) => {
                let id = i32::from_le_bytes(head[0..4].try_into().expect("4 bytes"));
                let kind = i32::from_le_bytes(head[4..8].try_into().expect("4 bytes"));
                let mut body = &pending[12..pending.len().min(size + 4)];
                while let [rest @ .., 0] = body {
                    body = rest;
                }
                Some(Partial {
                    packet: Packet::new(id, kind, body),
                    declared: size,
                    received: pending.len().min(size + 4) - 4,
                })
            }
            _ => None,
        };
        self.clear();
        result
    }
}

/// A packet cut short: what [`Decoder::take_partial`] returns.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Partial {
    /// The id, type and the body bytes that arrived (trailing NULs removed).
    pub packet: Packet,
    /// What the size field claimed, in bytes after the size field.
    pub declared: usize,
    /// How many of those bytes arrived.
    pub received: usize,
}

/// Reads and validates the size field at the start of `pending`, if it is all there.
fn header_size(pending: &[u8], max_size: usize) -> Result<Option<usize>, DecodeError> {
    let Some(head) = pending.get(..4) else {
        return Ok(None);
    };
    let size = i32::from_le_bytes(head.try_into().expect("4 bytes"));
    if size < MIN_SIZE {
        return Err(DecodeError::SizeTooSmall { size });
    }
    let size_usize = size as usize;
    if size_usize > max_size {
        return Err(DecodeError::SizeTooLarge {
            size: i64::from(size),
            max: max_size,
        });
    }
    Ok(Some(size_usize))
}

/// The body without its terminator: two NULs by the specification; one NUL is tolerated, since
/// some reimplementations count only one.
fn strip_terminator(rest: &[u8]) -> Option<&[u8]> {
    match rest {
        [body @ .., 0, 0] => Some(body),
        [body @ .., 0] => Some(body),
        _ => None,
    }
}

/// Joins output fragments and decodes them as UTF-8, replacing invalid sequences, with `\r\n`
/// normalised to `\n` (docs/protocol.md section 2).
pub fn decode_output(bytes: &[u8]) -> String {
    let text = String::from_utf8_lossy(bytes);
    if text.contains("\r\n") {
        text.replace("\r\n", "\n")
    } else {
        text.into_owned()
    }
}

/// Like [`decode_output`], taking the bytes: valid UTF-8 without `\r\n` (the usual case) becomes
/// the text without a copy, which matters for very long output.
pub fn decode_output_owned(bytes: Vec<u8>) -> String {
    let text = match String::from_utf8(bytes) {
        Ok(text) => text,
        Err(e) => String::from_utf8_lossy(e.as_bytes()).into_owned(),
    };
    if text.contains("\r\n") {
        text.replace("\r\n", "\n")
    } else {
        text
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn stream() -> Vec<u8> {
        let mut s = Vec::new();
        s.extend(encode(1, TYPE_LOGIN_REPLY, b""));
        s.extend(encode(7, TYPE_OUTPUT, "héllo wörld €".as_bytes()));
        s.extend(encode(-2, TYPE_OUTPUT, b"Unknown request 0"));
        s.extend(encode(9, TYPE_OUTPUT, &vec![b'x'; 12_288]));
        s
    }

    fn expected() -> Vec<Packet> {
        vec![
            Packet::new(1, 2, b"".to_vec()),
            Packet::new(7, 0, "héllo wörld €".as_bytes().to_vec()),
            Packet::new(-2, 0, b"Unknown request 0".to_vec()),
            Packet::new(9, 0, vec![b'x'; 12_288]),
        ]
    }

    fn drain(d: &mut Decoder, out: &mut Vec<Packet>) {
        while let Some(p) = d.next_packet().unwrap() {
            out.push(p);
        }
    }

    /// Everything `data` decodes to when fed `chunk` bytes at a time, and the error that ended it.
    fn decode_in_chunks(data: &[u8], chunk: usize) -> (Vec<Packet>, Option<DecodeError>) {
        let mut d = Decoder::new(4096);
        let mut got = Vec::new();
        for piece in data.chunks(chunk) {
            d.feed(piece);
            loop {
                match d.next_packet() {
                    Ok(Some(p)) => got.push(p),
                    Ok(None) => break,
                    Err(e) => return (got, Some(e)),
                }
            }
        }
        (got, None)
    }

    #[test]
    fn encode_layout() {
        let bytes = encode(0x0102_0304, 2, b"list");
        assert_eq!(
            bytes,
            [
                14, 0, 0, 0, 4, 3, 2, 1, 2, 0, 0, 0, b'l', b'i', b's', b't', 0, 0
            ]
        );
    }

    #[test]
    fn every_prefix_needs_more_or_yields_whole_packets() {
        let s = stream();
        let all = expected();
        for cut in 0..=s.len() {
            let mut d = Decoder::default();
            d.feed(&s[..cut]);
            let mut got = Vec::new();
            drain(&mut d, &mut got);
            // Exactly the packets wholly inside the prefix come out, no more.
            let mut whole = 0;
            let mut offset = 0;
            for p in &all {
                offset += p.wire_len();
                if offset <= cut {
                    whole += 1;
                }
            }
            assert_eq!(got, all[..whole], "prefix of {cut} bytes");
        }
    }

    #[test]
    fn every_two_way_split_decodes_the_same() {
        let s = stream();
        for cut in 0..=s.len() {
            let mut d = Decoder::default();
            let mut got = Vec::new();
            d.feed(&s[..cut]);
            drain(&mut d, &mut got);
            d.feed(&s[cut..]);
            drain(&mut d, &mut got);
            assert_eq!(got, expected(), "split at {cut}");
            assert_eq!(d.buffered(), 0);
        }
    }

    #[test]
    fn byte_at_a_time() {
        let mut d = Decoder::default();
        let mut got = Vec::new();
        for b in stream() {
            d.feed(&[b]);
            drain(&mut d, &mut got);
        }
        assert_eq!(got, expected());
    }

    #[test]
    fn accepts_large_vanilla_fragments() {
        let body = "€".repeat(4096); // 12288 bytes: the largest vanilla fragment
        let mut d = Decoder::default();
        d.feed(&encode(3, 0, body.as_bytes()));
        let p = d.next_packet().unwrap().unwrap();
        assert_eq!(p.body.len(), 12_288);
        assert_eq!(p.wire_len(), 12_302);
    }

    #[test]
    fn refuses_bad_sizes_before_buffering() {
        for size in [-1i32, 0, 9, i32::MIN] {
            let mut d = Decoder::default();
            d.feed(&size.to_le_bytes());
            assert_eq!(d.next_packet(), Err(DecodeError::SizeTooSmall { size }));
        }
        let mut d = Decoder::new(1000);
        d.feed(&i32::MAX.to_le_bytes());
        assert!(matches!(
            d.next_packet(),
            Err(DecodeError::SizeTooLarge { max: 1000, .. })
        ));
    }

    #[test]
    fn terminators() {
        let mut one_nul = 11i32.to_le_bytes().to_vec();
        one_nul.extend(5i32.to_le_bytes());
        one_nul.extend(0i32.to_le_bytes());
        one_nul.extend(b"ab\0");
        // size 11 covers id, type, "ab" and one NUL: tolerated.
        let mut d = Decoder::default();
        d.feed(&one_nul);
        assert_eq!(
            d.next_packet().unwrap(),
            Some(Packet::new(5, 0, b"ab".to_vec()))
        );

        let mut none = 10i32.to_le_bytes().to_vec();
        none.extend(5i32.to_le_bytes());
        none.extend(0i32.to_le_bytes());
        none.extend(b"ab");
        let mut d = Decoder::default();
        d.feed(&none);
        assert_eq!(
            d.next_packet(),
            Err(DecodeError::MissingTerminator { id: 5 })
        );
    }

    #[test]
    fn partial_packet_yields_what_arrived() {
        // The size field claims 64 bytes more than are sent, as reported for Palworld.
        let body = "héllo".as_bytes();
        let mut wire = ((body.len() + OVERHEAD + 64) as i32).to_le_bytes().to_vec();
        wire.extend(0i32.to_le_bytes());
        wire.extend(TYPE_OUTPUT.to_le_bytes());
        wire.extend(body);
        wire.extend([0, 0]);
        let mut d = Decoder::default();
        d.feed(&wire);
        assert_eq!(d.next_packet(), Ok(None));
        let partial = d.take_partial().expect("partial");
        assert_eq!(partial.packet, Packet::new(0, TYPE_OUTPUT, body.to_vec()));
        assert_eq!(partial.declared, body.len() + OVERHEAD + 64);
        assert_eq!(partial.received, body.len() + OVERHEAD);
        assert_eq!(d.buffered(), 0, "the buffer starts clean afterwards");
        // Fewer than 12 bytes: nothing to show, but the buffer is still cleared.
        d.feed(&wire[..11]);
        assert_eq!(d.take_partial(), None);
        assert_eq!(d.buffered(), 0);
        // The strict path is untouched: the same bytes simply wait for more.
        let mut strict = Decoder::default();
        strict.feed(&wire);
        assert_eq!(strict.next_packet(), Ok(None));
        assert_eq!(strict.buffered(), wire.len());
    }

    #[test]
    fn output_decoding_is_lossy_and_normalises_crlf() {
        let euro = "€".as_bytes();
        // A character cut across two fragments is whole once the fragments are joined.
        let joined = [&euro[..1], &euro[1..]].concat();
        assert_eq!(decode_output(&joined), "€");
        assert_eq!(decode_output(b"a\r\nb\xff"), "a\nb\u{fffd}");
        for bytes in [
            &b"a\r\nb\xff"[..],
            b"plain",
            b"",
            "€\r\n".as_bytes(),
            b"\xe2\x82",
        ] {
            assert_eq!(decode_output_owned(bytes.to_vec()), decode_output(bytes));
        }
    }

    proptest::proptest! {
        #![proptest_config(proptest::test_runner::Config::with_cases(2000))]
        /// No byte sequence, in any chunking, makes the decoder panic or buffer without bound.
        #[test]
        fn never_panics(data in proptest::collection::vec(proptest::num::u8::ANY, 0..2048),
                        chunk in 1usize..64) {
            let mut d = Decoder::new(4096);
            'outer: for piece in data.chunks(chunk) {
                d.feed(piece);
                loop {
                    match d.next_packet() {
                        Ok(Some(p)) => proptest::prop_assert!(p.body.len() <= 4096),
                        Ok(None) => break,
                        Err(_) => break 'outer,
                    }
                }
            }
        }

        /// The fuzz target's property (fuzz/fuzz_targets/rcon_decoder.rs) on the stable
        /// toolchain: valid packets followed by arbitrary bytes decode to the same packets, and
        /// the same error, however the stream is chunked.
        #[test]
        fn chunking_never_changes_the_result(
                packets in proptest::collection::vec(
                    (proptest::num::i32::ANY, proptest::collection::vec(proptest::num::u8::ANY, 0..64)), 0..4),
                tail in proptest::collection::vec(proptest::num::u8::ANY, 0..64),
                chunk in 1usize..32) {
            let mut wire = Vec::new();
            for (id, body) in &packets {
                wire.extend(encode(*id, TYPE_OUTPUT, body));
            }
            wire.extend(&tail);
            proptest::prop_assert_eq!(decode_in_chunks(&wire, wire.len().max(1)), decode_in_chunks(&wire, chunk));
        }

        /// Any sequence of valid packets, cut anywhere, decodes to itself.
        #[test]
        fn roundtrip(packets in proptest::collection::vec(
                        (proptest::num::i32::ANY, proptest::num::i32::ANY,
                         proptest::collection::vec(1u8..=255, 0..300)), 0..8),
                     cuts in proptest::collection::vec(1usize..500, 0..20)) {
            let mut wire = Vec::new();
            for (id, kind, body) in &packets {
                wire.extend(encode(*id, *kind, body));
            }
            let mut d = Decoder::default();
            let mut got = Vec::new();
            let mut rest = &wire[..];
            for c in cuts {
                let n = c.min(rest.len());
                d.feed(&rest[..n]);
                rest = &rest[n..];
                while let Some(p) = d.next_packet().unwrap() { got.push(p); }
            }
            d.feed(rest);
            while let Some(p) = d.next_packet().unwrap() { got.push(p); }
            let want: Vec<Packet> = packets.into_iter().map(|(i, k, b)| Packet::new(i, k, b)).collect();
            proptest::prop_assert_eq!(got, want);
        }
    }
}
