//! Fuzz target: the RCON packet decoder (`rconsole::rcon::packet::Decoder`) fed arbitrary bytes in
//! arbitrary chunks must never panic, never return a body above its limit, and must decode the
//! same packets however the stream is cut.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rconsole::rcon::packet::{DecodeError, Decoder, Packet};

/// A small limit, so size fields near it are reached often.
const MAX: usize = 4096;

fn decode(data: &[u8], chunk: usize) -> (Vec<Packet>, Option<DecodeError>) {
    let mut d = Decoder::new(MAX);
    let mut got = Vec::new();
    for piece in data.chunks(chunk.max(1)) {
        d.feed(piece);
        loop {
            match d.next_packet() {
                Ok(Some(p)) => {
                    assert!(p.body.len() + 10 <= MAX, "body over the limit");
                    got.push(p);
                }
                Ok(None) => break,
                Err(e) => return (got, Some(e)),
            }
        }
        assert!(d.buffered() <= data.len());
    }
    (got, None)
}

fuzz_target!(|input: &[u8]| {
    let Some((&first, data)) = input.split_first() else {
        return;
    };
    let chunk = usize::from(first % 64) + 1;
    let whole = decode(data, data.len());
    let cut = decode(data, chunk);
    // Packets are the same whatever the chunking; an error is reported at the same place.
    assert_eq!(whole, cut);
    // Every decoded packet re-encodes to the bytes it came from (modulo a one-NUL terminator).
    for p in &whole.0 {
        let (again, err) = decode(&p.encode(), usize::MAX);
        assert_eq!(err, None);
        assert_eq!(again.as_slice(), std::slice::from_ref(p));
    }
});
