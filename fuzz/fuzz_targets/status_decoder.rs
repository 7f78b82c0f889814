//! Fuzz target: the Minecraft game-protocol decoders used by `rcon --ping` and `--query`
//! (VarInt/VarLong, status frames, status JSON, the legacy `FE 01` reply, query datagrams, DNS
//! SRV answers) must
//! never panic on any bytes, and a VarInt that decodes must re-encode to the same bytes' value.
#![no_main]

use libfuzzer_sys::fuzz_target;
use rconsole::minecraft::{query, srv, status, varint};

fuzz_target!(|data: &[u8]| {
    if let Ok(Some((value, used))) = varint::decode_varint(data) {
        assert!((1..=5).contains(&used));
        let mut again = Vec::new();
        varint::encode_varint(value, &mut again);
        assert_eq!(
            varint::decode_varint(&again),
            Ok(Some((value, again.len())))
        );
    }
    if let Ok(Some((_, used))) = varint::decode_varlong(data) {
        assert!((1..=10).contains(&used));
    }
    let mut rest = data;
    while let Ok(Some((frame, used))) = status::decode_frame(rest, 1 << 16) {
        assert!(used > 0 && used <= rest.len());
        let _ = status::parse_status_response(&frame);
        let _ = status::parse_pong(&frame);
        rest = &rest[used..];
    }
    if let Ok(text) = std::str::from_utf8(data) {
        if let Ok(s) = status::parse_status_json(text) {
            let _ = s;
        }
        let _ = status::parse_legacy_text(text);
        if let Ok(value) = serde_json::from_str::<serde_json::Value>(text) {
            let _ = status::motd_to_legacy(&value);
        }
    }
    let _ = status::decode_legacy(data);
    let _ = query::parse_handshake(data, 1);
    let _ = query::parse_basic(data, 1);
    if let Ok(full) = query::parse_full(data, 1) {
        let _ = full.plugins();
    }
    let id = u16::from_be_bytes([*data.first().unwrap_or(&0), *data.get(1).unwrap_or(&0)]);
    if let Ok(records) = srv::parse_response(data, id) {
        for r in &records {
            assert!(r.target.len() <= 253, "SRV target longer than a DNS name");
        }
        let _ = srv::choose(&records);
    }
});
