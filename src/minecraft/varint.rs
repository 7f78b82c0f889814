//! VarInt and VarLong, the variable-length integers of the Minecraft game protocol (docs/protocol.md
//! section 5): 7 bits per byte, low group first, `0x80` = more follows. Sans-IO.

/// Longest VarInt on the wire.
pub const MAX_VARINT_LEN: usize = 5;
/// Longest VarLong on the wire.
pub const MAX_VARLONG_LEN: usize = 10;

/// A VarInt or VarLong that cannot be decoded.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum VarIntError {
    /// The continuation bit was still set on the last byte allowed.
    #[error("malformed reply: variable-length integer longer than {max} bytes")]
    TooLong {
        /// The limit: 5 for a VarInt, 10 for a VarLong.
        max: usize,
    },
}

/// Appends `value` as a VarInt. Negative numbers are their two's-complement bit pattern, so
/// they always take 5 bytes.
pub fn encode_varint(value: i32, out: &mut Vec<u8>) {
    encode_unsigned(u64::from(value as u32), out);
}

/// Appends `value` as a VarLong (10 bytes for negative numbers).
pub fn encode_varlong(value: i64, out: &mut Vec<u8>) {
    encode_unsigned(value as u64, out);
}

fn encode_unsigned(mut v: u64, out: &mut Vec<u8>) {
    loop {
        let byte = (v & 0x7f) as u8;
        v >>= 7;
        if v == 0 {
            out.push(byte);
            return;
        }
        out.push(byte | 0x80);
    }
}

/// How many bytes `value` takes as a VarInt.
pub fn varint_len(value: i32) -> usize {
    let bits = 32 - (value as u32).leading_zeros() as usize;
    bits.div_ceil(7).max(1)
}

/// Decodes a VarInt at the start of `buf`: `Ok(Some((value, bytes used)))`, `Ok(None)` when
/// `buf` ends before the last byte, an error when a 6th byte would be needed.
///
/// Like the vanilla server, bits of the 5th byte that do not fit in 32 bits are dropped.
pub fn decode_varint(buf: &[u8]) -> Result<Option<(i32, usize)>, VarIntError> {
    Ok(decode_unsigned(buf, MAX_VARINT_LEN)?.map(|(v, n)| (v as u32 as i32, n)))
}

/// Decodes a VarLong at the start of `buf`, like [`decode_varint`] with a 10-byte limit.
pub fn decode_varlong(buf: &[u8]) -> Result<Option<(i64, usize)>, VarIntError> {
    Ok(decode_unsigned(buf, MAX_VARLONG_LEN)?.map(|(v, n)| (v as i64, n)))
}

fn decode_unsigned(buf: &[u8], max: usize) -> Result<Option<(u64, usize)>, VarIntError> {
    let mut value = 0u64;
    for (i, &byte) in buf.iter().take(max).enumerate() {
        // The 10th byte of a VarLong can only contribute one bit; shifting past 64 would panic.
        value |= u64::from(byte & 0x7f)
            .checked_shl(7 * i as u32)
            .unwrap_or(0);
        if byte & 0x80 == 0 {
            return Ok(Some((value, i + 1)));
        }
    }
    if buf.len() >= max {
        Err(VarIntError::TooLong { max })
    } else {
        Ok(None)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    fn enc(v: i32) -> Vec<u8> {
        let mut out = Vec::new();
        encode_varint(v, &mut out);
        out
    }

    fn enc_long(v: i64) -> Vec<u8> {
        let mut out = Vec::new();
        encode_varlong(v, &mut out);
        out
    }

    /// docs/protocol.md section 5, byte for byte.
    const EXAMPLES: &[(i32, &[u8])] = &[
        (0, &[0x00]),
        (1, &[0x01]),
        (127, &[0x7f]),
        (128, &[0x80, 0x01]),
        (255, &[0xff, 0x01]),
        (300, &[0xac, 0x02]),
        (765, &[0xfd, 0x05]),
        (25565, &[0xdd, 0xc7, 0x01]),
        (2097151, &[0xff, 0xff, 0x7f]),
        (2147483647, &[0xff, 0xff, 0xff, 0xff, 0x07]),
        (-1, &[0xff, 0xff, 0xff, 0xff, 0x0f]),
        (-2147483648, &[0x80, 0x80, 0x80, 0x80, 0x08]),
    ];

    #[test]
    fn protocol_examples_encode_and_decode() {
        for &(value, bytes) in EXAMPLES {
            assert_eq!(enc(value), bytes, "encoding {value}");
            assert_eq!(varint_len(value), bytes.len(), "length of {value}");
            assert_eq!(
                decode_varint(bytes),
                Ok(Some((value, bytes.len()))),
                "decoding {value}"
            );
        }
    }

    #[test]
    fn every_strict_prefix_needs_more() {
        for &(value, bytes) in EXAMPLES {
            for cut in 0..bytes.len() {
                assert_eq!(
                    decode_varint(&bytes[..cut]),
                    Ok(None),
                    "{value} cut at {cut}"
                );
            }
        }
        let long = enc_long(i64::MIN);
        for cut in 0..long.len() {
            assert_eq!(decode_varlong(&long[..cut]), Ok(None));
        }
    }

    #[test]
    fn trailing_bytes_are_left_alone() {
        assert_eq!(decode_varint(&[0xac, 0x02, 0xff, 0xff]), Ok(Some((300, 2))));
    }

    #[test]
    fn sixth_byte_fails() {
        assert_eq!(
            decode_varint(&[0x80, 0x80, 0x80, 0x80, 0x80]),
            Err(VarIntError::TooLong { max: 5 })
        );
        assert_eq!(
            decode_varint(&[0xff, 0xff, 0xff, 0xff, 0xff, 0x01]),
            Err(VarIntError::TooLong { max: 5 })
        );
        assert_eq!(
            decode_varlong(&[0x80; 10]),
            Err(VarIntError::TooLong { max: 10 })
        );
        // Nine continuation bytes are still a legal prefix of a VarLong.
        assert_eq!(decode_varlong(&[0x80; 9]), Ok(None));
    }

    #[test]
    fn overlong_but_legal_encodings_decode() {
        // Zero padded to 5 bytes is valid (vanilla accepts it).
        assert_eq!(
            decode_varint(&[0x80, 0x80, 0x80, 0x80, 0x00]),
            Ok(Some((0, 5)))
        );
        // Excess high bits of the 5th byte are dropped, as vanilla does.
        assert_eq!(
            decode_varint(&[0xff, 0xff, 0xff, 0xff, 0x7f]),
            Ok(Some((-1, 5)))
        );
    }

    #[test]
    fn varlong_edges() {
        assert_eq!(enc_long(0), [0x00]);
        assert_eq!(enc_long(2147483647), [0xff, 0xff, 0xff, 0xff, 0x07]);
        assert_eq!(
            enc_long(9223372036854775807),
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x7f]
        );
        assert_eq!(
            enc_long(-1),
            [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0x01]
        );
        assert_eq!(
            enc_long(i64::MIN),
            [0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x01]
        );
        for v in [0, 1, -1, i64::MAX, i64::MIN, 1 << 35] {
            let b = enc_long(v);
            assert_eq!(decode_varlong(&b), Ok(Some((v, b.len()))));
        }
    }

    proptest! {
        #[test]
        fn varint_round_trips(v in any::<i32>()) {
            let b = enc(v);
            prop_assert!(b.len() <= MAX_VARINT_LEN);
            prop_assert_eq!(b.len(), varint_len(v));
            prop_assert_eq!(decode_varint(&b), Ok(Some((v, b.len()))));
            if v < 0 {
                prop_assert_eq!(b.len(), 5);
            }
            for cut in 0..b.len() {
                prop_assert_eq!(decode_varint(&b[..cut]), Ok(None));
            }
        }

        #[test]
        fn varlong_round_trips(v in any::<i64>()) {
            let b = enc_long(v);
            prop_assert!(b.len() <= MAX_VARLONG_LEN);
            prop_assert_eq!(decode_varlong(&b), Ok(Some((v, b.len()))));
            if v < 0 {
                prop_assert_eq!(b.len(), 10);
            }
        }

        #[test]
        fn decoder_never_panics(bytes in proptest::collection::vec(any::<u8>(), 0..12)) {
            let _ = decode_varint(&bytes);
            let _ = decode_varlong(&bytes);
        }
    }
}
