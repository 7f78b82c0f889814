//! Minecraft Server List Ping (status), sans-IO: the frames a client sends, parsers for the
//! server's replies (modern JSON status, pong, and the pre-1.7 legacy `FE 01` reply), and the
//! chat-component to `§`-code conversion of the MOTD (docs/protocol.md sections 5 and 7).
//!
//! Every parser takes a byte buffer and returns `Ok(None)` when it needs more bytes; every length
//! is checked against a limit before anything is allocated for it.

use serde_json::{Value, json};

use crate::minecraft::varint::{VarIntError, decode_varint, encode_varint};

/// The default game port (`server-port` in server.properties).
pub const DEFAULT_PORT: u16 = 25565;
/// The protocol version this client announces in the handshake (1.20.4). Servers answer a status
/// request whatever version is announced.
pub const HANDSHAKE_PROTOCOL: i32 = 765;
/// Handshake "next state" value asking for status.
pub const NEXT_STATE_STATUS: i32 = 1;
/// Largest status frame accepted: vanilla caps the JSON at 32767 chars, but modded servers and
/// proxies send more (mod lists, big favicons).
pub const MAX_FRAME: usize = 2 * 1024 * 1024;
/// The legacy (pre-1.7) server list ping.
pub const LEGACY_REQUEST: [u8; 2] = [0xfe, 0x01];

/// A status reply that cannot be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum StatusError {
    /// A length or id field is a malformed VarInt.
    #[error(transparent)]
    VarInt(#[from] VarIntError),
    /// A frame claims more bytes than allowed; nothing was buffered for it.
    #[error("malformed reply: frame of {len} bytes exceeds the limit of {max}")]
    FrameTooLarge {
        /// The length field as sent.
        len: i64,
        /// The limit in force.
        max: usize,
    },
    /// A frame's length is zero or negative.
    #[error("malformed reply: frame length {len}")]
    BadFrameLength {
        /// The length field as sent.
        len: i32,
    },
    /// A frame with another packet id than the exchange allows.
    #[error("malformed reply: packet id {got}, expected {expected}")]
    UnexpectedPacket {
        /// The id received.
        got: i32,
        /// The id expected.
        expected: i32,
    },
    /// A string's length field runs past the end of its frame, or is negative.
    #[error("malformed reply: string of {len} bytes does not fit in its frame")]
    BadString {
        /// The length field as sent.
        len: i32,
    },
    /// Text that is not UTF-8.
    #[error("malformed reply: status text is not UTF-8")]
    NotUtf8,
    /// The status text is not the JSON object a server sends.
    #[error("malformed reply: status is not valid JSON: {0}")]
    Json(String),
    /// The pong frame is not 8 bytes long.
    #[error("malformed reply: pong of {len} bytes, expected 8")]
    BadPong {
        /// Its length.
        len: usize,
    },
    /// The reply to the legacy ping does not start with `FF` or is not in a known layout.
    #[error("malformed reply: {0}")]
    Legacy(&'static str),
}

impl From<StatusError> for crate::error::Error {
    fn from(e: StatusError) -> Self {
        crate::error::Error::Reply(Box::new(e))
    }
}

/// One frame of the game protocol: packet id and data.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StatusFrame<'a> {
    /// Packet id.
    pub id: i32,
    /// The bytes after the id.
    pub data: &'a [u8],
}

/// Frames `data` as packet `id`: `VarInt length | VarInt id | data`.
pub fn encode_frame(id: i32, data: &[u8]) -> Vec<u8> {
    let mut body = Vec::with_capacity(data.len() + 5);
    encode_varint(id, &mut body);
    body.extend_from_slice(data);
    let mut out = Vec::with_capacity(body.len() + 5);
    encode_varint(body.len() as i32, &mut out);
    out.extend_from_slice(&body);
    out
}

/// Appends a protocol String: VarInt byte length + UTF-8.
fn put_string(s: &str, out: &mut Vec<u8>) {
    encode_varint(s.len() as i32, out);
    out.extend_from_slice(s.as_bytes());
}

/// The handshake frame (id 0): protocol version, the host and port the client was told to use,
/// and the next state (1 = status, 2 = login).
pub fn handshake(protocol: i32, host: &str, port: u16, next_state: i32) -> Vec<u8> {
    let mut data = Vec::with_capacity(host.len() + 12);
    encode_varint(protocol, &mut data);
    put_string(host, &mut data);
    data.extend_from_slice(&port.to_be_bytes());
    encode_varint(next_state, &mut data);
    encode_frame(0, &data)
}

/// The status request frame: `01 00`.
pub fn status_request() -> Vec<u8> {
    encode_frame(0, &[])
}

/// The ping frame: id 1 and a big-endian i64 the server echoes.
pub fn ping_request(payload: i64) -> Vec<u8> {
    encode_frame(1, &payload.to_be_bytes())
}

/// What a status ping opens with: handshake and status request, in one buffer (unlike RCON,
/// both may go in one write: docs/protocol.md section 5).
pub fn status_opening(host: &str, port: u16) -> Vec<u8> {
    let mut out = handshake(HANDSHAKE_PROTOCOL, host, port, NEXT_STATE_STATUS);
    out.extend_from_slice(&status_request());
    out
}

/// Decodes the frame at the start of `buf`: the frame and the bytes it used, or `Ok(None)` when
/// more are needed. Lengths over `max` fail before anything is buffered for them.
pub fn decode_frame(
    buf: &[u8],
    max: usize,
) -> Result<Option<(StatusFrame<'_>, usize)>, StatusError> {
    let Some((len, head)) = decode_varint(buf)? else {
        return Ok(None);
    };
    if len <= 0 {
        return Err(StatusError::BadFrameLength { len });
    }
    let len = len as usize;
    if len > max {
        return Err(StatusError::FrameTooLarge {
            len: len as i64,
            max,
        });
    }
    let Some(body) = buf.get(head..head + len) else {
        return Ok(None);
    };
    let Some((id, id_len)) = decode_varint(body)? else {
        // The length said the id is inside the frame, but it is cut short.
        return Err(StatusError::BadFrameLength { len: len as i32 });
    };
    Ok(Some((
        StatusFrame {
            id,
            data: &body[id_len..],
        },
        head + len,
    )))
}

/// The JSON text of a status response frame (id 0).
pub fn parse_status_response(frame: &StatusFrame<'_>) -> Result<String, StatusError> {
    if frame.id != 0 {
        return Err(StatusError::UnexpectedPacket {
            got: frame.id,
            expected: 0,
        });
    }
    let (len, n) = decode_varint(frame.data)?.ok_or(StatusError::BadString { len: -1 })?;
    let text = usize::try_from(len)
        .ok()
        .and_then(|l| frame.data.get(n..n + l))
        .ok_or(StatusError::BadString { len })?;
    String::from_utf8(text.to_vec()).map_err(|_| StatusError::NotUtf8)
}

/// The payload of a pong frame (id 1).
pub fn parse_pong(frame: &StatusFrame<'_>) -> Result<i64, StatusError> {
    if frame.id != 1 {
        return Err(StatusError::UnexpectedPacket {
            got: frame.id,
            expected: 1,
        });
    }
    let bytes: [u8; 8] = frame.data.try_into().map_err(|_| StatusError::BadPong {
        len: frame.data.len(),
    })?;
    Ok(i64::from_be_bytes(bytes))
}

/// A server's status, from either kind of ping.
#[derive(Debug, Clone, PartialEq)]
pub struct Status {
    /// `version.name`, e.g. `1.20.4` or `Paper 1.20.4`.
    pub version: String,
    /// `version.protocol`.
    pub protocol: Option<i64>,
    /// `players.online`.
    pub online: Option<i64>,
    /// `players.max`.
    pub max: Option<i64>,
    /// `players.sample[].name`: some of the players online (servers may also put text here).
    pub sample: Vec<String>,
    /// The MOTD with `§` formatting codes.
    pub motd: String,
    /// Whether the server answered only the legacy ping.
    pub legacy: bool,
    /// The server's JSON as sent (for a legacy reply, the same shape built from its fields).
    pub json: Value,
}

/// Parses the JSON of a modern status response.
pub fn parse_status_json(text: &str) -> Result<Status, StatusError> {
    let json: Value = serde_json::from_str(text).map_err(|e| StatusError::Json(e.to_string()))?;
    if !json.is_object() {
        return Err(StatusError::Json("not an object".into()));
    }
    let version = match &json["version"]["name"] {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        other => other.to_string(),
    };
    let sample = json["players"]["sample"]
        .as_array()
        .map(|a| {
            a.iter()
                .filter_map(|p| p["name"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default();
    Ok(Status {
        version,
        protocol: json["version"]["protocol"].as_i64(),
        online: json["players"]["online"].as_i64(),
        max: json["players"]["max"].as_i64(),
        sample,
        motd: motd_to_legacy(&json["description"]),
        legacy: false,
        json,
    })
}

/// Decodes the reply to the legacy `FE 01` ping: `FF`, a u16 big-endian length in UTF-16 units,
/// then UTF-16BE text, either `§1\0protocol\0version\0motd\0online\0max` (1.4 to 1.6) or
/// `motd§online§max` (older). `Ok(None)` when more bytes are needed.
pub fn decode_legacy(buf: &[u8]) -> Result<Option<(Status, usize)>, StatusError> {
    let Some(&first) = buf.first() else {
        return Ok(None);
    };
    if first != 0xff {
        return Err(StatusError::Legacy(
            "the reply to the legacy ping does not start with FF",
        ));
    }
    let Some(len) = buf.get(1..3) else {
        return Ok(None);
    };
    let units = usize::from(u16::from_be_bytes([len[0], len[1]]));
    let total = 3 + units * 2;
    let Some(text) = buf.get(3..total) else {
        return Ok(None);
    };
    let utf16: Vec<u16> = text
        .chunks_exact(2)
        .map(|c| u16::from_be_bytes([c[0], c[1]]))
        .collect();
    let text = String::from_utf16_lossy(&utf16);
    Ok(Some((parse_legacy_text(&text)?, total)))
}

/// Parses the text of a legacy reply (see [`decode_legacy`]).
pub fn parse_legacy_text(text: &str) -> Result<Status, StatusError> {
    let number = |s: &str| s.trim().parse::<i64>().ok();
    let (protocol, version, motd, online, max) = if let Some(rest) = text.strip_prefix("§1\0") {
        let f: Vec<&str> = rest.split('\0').collect();
        let [protocol, version, motd, online, max] = f[..] else {
            return Err(StatusError::Legacy(
                "legacy reply does not have the 5 fields of §1",
            ));
        };
        (number(protocol), version.to_string(), motd, online, max)
    } else {
        // motd§online§max: the MOTD itself may hold § codes, so split from the right.
        let mut f = text.rsplitn(3, '§');
        let (Some(max), Some(online), Some(motd)) = (f.next(), f.next(), f.next()) else {
            return Err(StatusError::Legacy(
                "legacy reply is neither §1 nor motd§online§max",
            ));
        };
        (None, String::new(), motd, online, max)
    };
    let (online, max) = (number(online), number(max));
    if online.is_none() || max.is_none() {
        return Err(StatusError::Legacy(
            "legacy reply has no numeric player counts",
        ));
    }
    let json = json!({
        "version": { "name": version, "protocol": protocol },
        "players": { "online": online, "max": max },
        "description": motd,
    });
    Ok(Status {
        version,
        protocol,
        online,
        max,
        sample: Vec::new(),
        motd: motd.to_string(),
        legacy: true,
        json,
    })
}

/// The `§` code of a named chat colour.
fn colour_code(name: &str) -> Option<char> {
    Some(match name {
        "black" => '0',
        "dark_blue" => '1',
        "dark_green" => '2',
        "dark_aqua" => '3',
        "dark_red" => '4',
        "dark_purple" => '5',
        "gold" => '6',
        "gray" => '7',
        "dark_gray" => '8',
        "blue" => '9',
        "green" => 'a',
        "aqua" => 'b',
        "red" => 'c',
        "light_purple" => 'd',
        "yellow" => 'e',
        "white" => 'f',
        _ => return None,
    })
}

/// The style a chat component's text is drawn in.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
struct Format {
    /// `§` codes for the colour: one code, or `x` + 6 hex digits for `#RRGGBB`.
    colour: Option<String>,
    obfuscated: bool,
    bold: bool,
    strikethrough: bool,
    underlined: bool,
    italic: bool,
}

impl Format {
    /// This style with a component's own fields applied (children inherit from parents).
    fn with(&self, c: &serde_json::Map<String, Value>) -> Format {
        let mut s = self.clone();
        if let Some(colour) = c.get("color").and_then(Value::as_str) {
            s.colour = if let Some(code) = colour_code(colour) {
                Some(format!("§{code}"))
            } else if let Some(hex) = colour
                .strip_prefix('#')
                .filter(|h| h.len() == 6 && h.chars().all(|c| c.is_ascii_hexdigit()))
            {
                let mut codes = String::from("§x");
                for c in hex.chars() {
                    codes.push('§');
                    codes.push(c.to_ascii_lowercase());
                }
                Some(codes)
            } else {
                // "reset" and unknown names: back to the default colour.
                None
            };
        }
        let flag = |key: &str, old: bool| c.get(key).and_then(Value::as_bool).unwrap_or(old);
        s.obfuscated = flag("obfuscated", s.obfuscated);
        s.bold = flag("bold", s.bold);
        s.strikethrough = flag("strikethrough", s.strikethrough);
        s.underlined = flag("underlined", s.underlined);
        s.italic = flag("italic", s.italic);
        s
    }

    /// The codes that switch to this style from any other: a colour code (which also resets
    /// formats) or `§r`, then the formats.
    fn codes(&self) -> String {
        let mut out = self.colour.clone().unwrap_or_else(|| "§r".into());
        for (on, code) in [
            (self.obfuscated, 'k'),
            (self.bold, 'l'),
            (self.strikethrough, 'm'),
            (self.underlined, 'n'),
            (self.italic, 'o'),
        ] {
            if on {
                out.push('§');
                out.push(code);
            }
        }
        out
    }
}

/// Converts a status `description` to a string with `§` codes: a plain string is returned as
/// is; a chat component (`text`, `color`, `bold`, `italic`, `underlined`, `strikethrough`,
/// `obfuscated`, `extra[]`, or an array of components) becomes its text with codes wherever the
/// style changes.
pub fn motd_to_legacy(description: &Value) -> String {
    let mut out = String::new();
    let mut current = Format::default();
    walk(description, &Format::default(), &mut current, &mut out, 0);
    out
}

/// Deeper nesting than this is ignored (a hostile server could send very deep JSON; serde_json
/// already limits parsing depth to 128).
const MAX_DEPTH: usize = 64;

fn walk(v: &Value, parent: &Format, current: &mut Format, out: &mut String, depth: usize) {
    if depth > MAX_DEPTH {
        return;
    }
    match v {
        Value::String(s) => emit(s, parent, current, out),
        Value::Number(_) | Value::Bool(_) => emit(&v.to_string(), parent, current, out),
        Value::Array(items) => {
            // The first element is the parent of the rest.
            let Some((first, rest)) = items.split_first() else {
                return;
            };
            let style = match first {
                Value::Object(m) => parent.with(m),
                _ => parent.clone(),
            };
            walk(first, parent, current, out, depth + 1);
            for item in rest {
                walk(item, &style, current, out, depth + 1);
            }
        }
        Value::Object(m) => {
            let style = parent.with(m);
            let text = match m.get("text") {
                Some(Value::String(s)) => s.clone(),
                Some(v @ (Value::Number(_) | Value::Bool(_))) => v.to_string(),
                // A translation this client has no table for: the server's `fallback` text
                // (MSMP Enhanced adds the server's own), else the key, with `%s` and `%N$s`
                // filled from `with`.
                _ => match m
                    .get("fallback")
                    .or_else(|| m.get("translate"))
                    .and_then(Value::as_str)
                {
                    Some(pattern) => fill_translation(pattern, m.get("with"), depth),
                    None => String::new(),
                },
            };
            emit(&text, &style, current, out);
            if let Some(Value::Array(extra)) = m.get("extra") {
                for item in extra {
                    walk(item, &style, current, out, depth + 1);
                }
            }
        }
        Value::Null => {}
    }
}

/// A translation pattern with its `%s` (in turn) and `%N$s` (by number) arguments as plain
/// text; `%%` is `%`.
fn fill_translation(pattern: &str, with: Option<&Value>, depth: usize) -> String {
    let args: Vec<String> = with
        .and_then(Value::as_array)
        .map(|a| {
            a.iter()
                .map(|v| {
                    let mut text = String::new();
                    let mut current = Format::default();
                    walk(v, &Format::default(), &mut current, &mut text, depth + 1);
                    crate::text::render::strip(&text)
                })
                .collect()
        })
        .unwrap_or_default();
    let mut out = String::new();
    let mut next = 0;
    let mut rest = pattern;
    while let Some(i) = rest.find('%') {
        out.push_str(&rest[..i]);
        let after = &rest[i + 1..];
        if let Some(r) = after.strip_prefix('%') {
            out.push('%');
            rest = r;
        } else if let Some(r) = after.strip_prefix('s') {
            out.push_str(args.get(next).map_or("", String::as_str));
            next += 1;
            rest = r;
        } else if let Some((n, r)) = after
            .split_once("$s")
            .filter(|(n, _)| !n.is_empty() && n.len() <= 2 && n.chars().all(|c| c.is_ascii_digit()))
        {
            let n: usize = n.parse().unwrap_or(0);
            out.push_str(args.get(n.wrapping_sub(1)).map_or("", String::as_str));
            rest = r;
        } else {
            out.push('%');
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

fn emit(text: &str, style: &Format, current: &mut Format, out: &mut String) {
    if text.is_empty() {
        return;
    }
    if style != current {
        out.push_str(&style.codes());
        *current = style.clone();
    }
    out.push_str(text);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn handshake_matches_protocol_example() {
        // docs/protocol.md section 5: a 1.20.4 login handshake to localhost:25565.
        let login = handshake(765, "localhost", 25565, 2);
        assert_eq!(
            login,
            [
                0x10, 0x00, 0xfd, 0x05, 0x09, 0x6c, 0x6f, 0x63, 0x61, 0x6c, 0x68, 0x6f, 0x73, 0x74,
                0x63, 0xdd, 0x02
            ]
        );
        let status = handshake(765, "localhost", 25565, 1);
        assert_eq!(status.last(), Some(&0x01));
        assert_eq!(status_request(), [0x01, 0x00]);
        assert_eq!(
            ping_request(0x0102030405060708),
            [0x09, 0x01, 1, 2, 3, 4, 5, 6, 7, 8]
        );
        let opening = status_opening("localhost", 25565);
        assert_eq!(&opening[..status.len()], &status[..]);
        assert_eq!(&opening[status.len()..], [0x01, 0x00]);
    }

    fn response_frame(json: &str) -> Vec<u8> {
        let mut data = Vec::new();
        put_string(json, &mut data);
        encode_frame(0, &data)
    }

    #[test]
    fn status_response_every_prefix() {
        let json = r#"{"version":{"name":"1.20.4","protocol":765},"players":{"max":20,"online":1,"sample":[{"name":"Alex","id":"0"}]},"description":{"text":"Hi"}}"#;
        let bytes = response_frame(json);
        for cut in 0..bytes.len() {
            assert_eq!(
                decode_frame(&bytes[..cut], MAX_FRAME),
                Ok(None),
                "cut at {cut}"
            );
        }
        let mut with_more = bytes.clone();
        with_more.extend_from_slice(&ping_request(7));
        let (frame, used) = decode_frame(&with_more, MAX_FRAME).unwrap().unwrap();
        assert_eq!(used, bytes.len());
        let text = parse_status_response(&frame).unwrap();
        let status = parse_status_json(&text).unwrap();
        assert_eq!(status.version, "1.20.4");
        assert_eq!(status.protocol, Some(765));
        assert_eq!((status.online, status.max), (Some(1), Some(20)));
        assert_eq!(status.sample, ["Alex"]);
        assert_eq!(status.motd, "Hi");
        assert!(!status.legacy);
        let (pong, _) = decode_frame(&with_more[used..], MAX_FRAME)
            .unwrap()
            .unwrap();
        assert_eq!(parse_pong(&pong), Ok(7));
    }

    #[test]
    fn frame_limits_checked_before_buffering() {
        // Claims 3 MiB with only the length field present.
        let mut claim = Vec::new();
        encode_varint(3 * 1024 * 1024, &mut claim);
        assert!(matches!(
            decode_frame(&claim, MAX_FRAME),
            Err(StatusError::FrameTooLarge { .. })
        ));
        assert_eq!(
            decode_frame(&[0x00], MAX_FRAME),
            Err(StatusError::BadFrameLength { len: 0 })
        );
        assert_eq!(
            decode_frame(&[0xff, 0xff, 0xff, 0xff, 0x0f], MAX_FRAME),
            Err(StatusError::BadFrameLength { len: -1 })
        );
        assert!(matches!(
            decode_frame(&[0x80, 0x80, 0x80, 0x80, 0x80, 0x01], MAX_FRAME),
            Err(StatusError::VarInt(_))
        ));
        // A frame of one byte whose id VarInt is cut short.
        assert_eq!(
            decode_frame(&[0x01, 0x80], MAX_FRAME),
            Err(StatusError::BadFrameLength { len: 1 })
        );
    }

    #[test]
    fn bad_status_payloads() {
        // String length past the frame.
        let frame = StatusFrame {
            id: 0,
            data: &[0x05, b'{', b'}'],
        };
        assert_eq!(
            parse_status_response(&frame),
            Err(StatusError::BadString { len: 5 })
        );
        let frame = StatusFrame {
            id: 0,
            data: &[0x02, 0xff, 0xfe],
        };
        assert_eq!(parse_status_response(&frame), Err(StatusError::NotUtf8));
        let frame = StatusFrame { id: 3, data: &[] };
        assert!(matches!(
            parse_status_response(&frame),
            Err(StatusError::UnexpectedPacket { got: 3, .. })
        ));
        assert!(matches!(
            parse_status_json("not json"),
            Err(StatusError::Json(_))
        ));
        assert!(matches!(
            parse_status_json("[1]"),
            Err(StatusError::Json(_))
        ));
        assert_eq!(
            parse_pong(&StatusFrame { id: 1, data: &[1] }),
            Err(StatusError::BadPong { len: 1 })
        );
        // Minimal JSON: everything optional.
        let s = parse_status_json("{}").unwrap();
        assert_eq!((s.online, s.max, s.motd.as_str()), (None, None, ""));
    }

    fn legacy_bytes(text: &str) -> Vec<u8> {
        let units: Vec<u16> = text.encode_utf16().collect();
        let mut out = vec![0xff];
        out.extend_from_slice(&(units.len() as u16).to_be_bytes());
        for u in units {
            out.extend_from_slice(&u.to_be_bytes());
        }
        out
    }

    #[test]
    fn legacy_v1_reply_every_prefix() {
        let bytes = legacy_bytes("§1\u{0}127\u{0}1.6.4\u{0}A §aMinecraft§r Server\u{0}3\u{0}20");
        for cut in 0..bytes.len() {
            assert_eq!(decode_legacy(&bytes[..cut]), Ok(None), "cut at {cut}");
        }
        let (s, used) = decode_legacy(&bytes).unwrap().unwrap();
        assert_eq!(used, bytes.len());
        assert_eq!(s.version, "1.6.4");
        assert_eq!(s.protocol, Some(127));
        assert_eq!((s.online, s.max), (Some(3), Some(20)));
        assert_eq!(s.motd, "A §aMinecraft§r Server");
        assert!(s.legacy);
        assert_eq!(s.json["players"]["max"], 20);
        assert_eq!(s.json["description"], "A §aMinecraft§r Server");
    }

    #[test]
    fn legacy_oldest_reply() {
        let (s, _) = decode_legacy(&legacy_bytes("A §cred§r motd§0§8"))
            .unwrap()
            .unwrap();
        assert_eq!(s.motd, "A §cred§r motd");
        assert_eq!((s.online, s.max), (Some(0), Some(8)));
        assert_eq!(s.protocol, None);
    }

    #[test]
    fn legacy_garbage() {
        assert!(decode_legacy(&[0x00, 0x01]).is_err());
        assert!(decode_legacy(&legacy_bytes("no fields here")).is_err());
        assert!(decode_legacy(&legacy_bytes("§1\u{0}1\u{0}2")).is_err());
        assert!(decode_legacy(&legacy_bytes("motd§x§y")).is_err());
    }

    #[test]
    fn translations_use_the_fallback_and_their_arguments() {
        let c = json!({"translate": "chat.type.announcement", "fallback": "[%s] %s",
            "with": ["Server", {"text": "hi", "color": "red"}]});
        assert_eq!(motd_to_legacy(&c), "[Server] hi");
        let c = json!({"translate": "k", "fallback": "%2$s then %1$s, 100%%", "with": ["a", "b"]});
        assert_eq!(motd_to_legacy(&c), "b then a, 100%");
        assert_eq!(motd_to_legacy(&json!({"translate": "a.key"})), "a.key");
        assert_eq!(motd_to_legacy(&json!({"translate": "%s %9$s %"})), "  %");
    }

    #[test]
    fn motd_plain_and_components() {
        assert_eq!(motd_to_legacy(&json!("§aHello")), "§aHello");
        assert_eq!(motd_to_legacy(&json!({"text": "Hi"})), "Hi");
        assert_eq!(
            motd_to_legacy(&json!({
                "text": "A ",
                "color": "gold",
                "extra": [
                    {"text": "bold", "bold": true},
                    " back",
                    {"text": "!", "color": "#FF00aa", "italic": true},
                ]
            })),
            "§6A §6§lbold§6 back§x§f§f§0§0§a§a§o!"
        );
        // No colour after formatted text: reset, then the remaining formats.
        assert_eq!(
            motd_to_legacy(&json!({"text": "", "extra": [
                {"text": "u", "underlined": true, "strikethrough": true, "obfuscated": true},
                {"text": "n"},
            ]})),
            "§r§k§m§nu§rn"
        );
        // An array: the first element styles the rest.
        assert_eq!(
            motd_to_legacy(
                &json!([{"text": "a", "color": "red"}, "b", {"text": "c", "color": "reset"}])
            ),
            "§cab§rc"
        );
        assert_eq!(motd_to_legacy(&json!({"translate": "key.x"})), "key.x");
        assert_eq!(motd_to_legacy(&Value::Null), "");
    }

    #[test]
    fn motd_depth_is_bounded() {
        let mut v = json!({"text": "deep"});
        for _ in 0..200 {
            v = json!({"text": "", "extra": [v]});
        }
        // Does not overflow the stack; text beyond the limit is dropped.
        assert_eq!(motd_to_legacy(&v), "");
    }
}
