//! Minecraft Query (UDP, `enable-query=true`), sans-IO: the requests a client sends and parsers
//! for the handshake, basic stat and full stat replies (docs/protocol.md section 5).
//!
//! Every reply is one datagram, so parsers take a whole datagram; strings are NUL-terminated
//! Latin-1.

/// First two bytes of every request.
pub const MAGIC: [u8; 2] = [0xfe, 0xfd];
/// Packet type of the handshake (challenge token request).
pub const TYPE_HANDSHAKE: u8 = 9;
/// Packet type of a stat request.
pub const TYPE_STAT: u8 = 0;
/// Session ids are masked with this: the server only keeps the low nibble of each byte.
pub const SESSION_MASK: i32 = 0x0F0F_0F0F;
/// Largest datagram a reply can be.
pub const MAX_DATAGRAM: usize = 65_535;

/// A query reply that cannot be understood.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum QueryError {
    /// The datagram is shorter than a reply header (type + session id).
    #[error("malformed query reply: {len} bytes is too short")]
    TooShort {
        /// Its length.
        len: usize,
    },
    /// The reply is of another type than the one asked for.
    #[error("malformed query reply: type {got}, expected {expected}")]
    WrongType {
        /// The type received.
        got: u8,
        /// The type expected.
        expected: u8,
    },
    /// The reply carries another session id (a late reply to an earlier attempt, or not ours).
    #[error("query reply for session {got:#x}, expected {expected:#x}")]
    WrongSession {
        /// The id received.
        got: i32,
        /// Ours.
        expected: i32,
    },
    /// A string runs to the end of the datagram without its NUL.
    #[error("malformed query reply: unterminated {field}")]
    Unterminated {
        /// Which field.
        field: &'static str,
    },
    /// The challenge token is not a decimal number.
    #[error("malformed query reply: challenge token {0:?} is not a number")]
    BadToken(String),
    /// A field that must be a number is not.
    #[error("malformed query reply: {field} {value:?} is not a number")]
    BadNumber {
        /// Which field.
        field: &'static str,
        /// Its text.
        value: String,
    },
    /// The full stat reply lacks its fixed padding (`splitnum`, `player_`).
    #[error("malformed query reply: full stat lacks its {0} marker")]
    MissingMarker(&'static str),
}

impl From<QueryError> for crate::error::Error {
    fn from(e: QueryError) -> Self {
        crate::error::Error::Reply(Box::new(e))
    }
}

/// A session id from any 32 random bits, masked as the server expects.
pub fn session_id(random: u32) -> i32 {
    (random as i32) & SESSION_MASK
}

fn request(kind: u8, session: i32) -> Vec<u8> {
    let mut out = Vec::with_capacity(15);
    out.extend_from_slice(&MAGIC);
    out.push(kind);
    out.extend_from_slice(&session.to_be_bytes());
    out
}

/// The handshake: `FE FD 09 <session>`.
pub fn handshake_request(session: i32) -> Vec<u8> {
    request(TYPE_HANDSHAKE, session)
}

/// The basic stat request: `FE FD 00 <session> <token i32 BE>`.
pub fn basic_request(session: i32, token: i32) -> Vec<u8> {
    let mut out = request(TYPE_STAT, session);
    out.extend_from_slice(&token.to_be_bytes());
    out
}

/// The full stat request: the basic one padded with four zero bytes to exactly 15 bytes (the
/// length is how the server tells the two apart).
pub fn full_request(session: i32, token: i32) -> Vec<u8> {
    let mut out = basic_request(session, token);
    out.extend_from_slice(&[0; 4]);
    out
}

/// Checks a reply's type and session id; returns the payload after them.
fn payload(datagram: &[u8], kind: u8, session: i32) -> Result<&[u8], QueryError> {
    let Some((head, rest)) = datagram.split_first_chunk::<5>() else {
        return Err(QueryError::TooShort {
            len: datagram.len(),
        });
    };
    if head[0] != kind {
        return Err(QueryError::WrongType {
            got: head[0],
            expected: kind,
        });
    }
    let got = i32::from_be_bytes([head[1], head[2], head[3], head[4]]);
    if got != session {
        return Err(QueryError::WrongSession {
            got,
            expected: session,
        });
    }
    Ok(rest)
}

/// Splits a NUL-terminated Latin-1 string off the front of `buf`.
fn cstring(buf: &mut &[u8], field: &'static str) -> Result<String, QueryError> {
    let end = buf
        .iter()
        .position(|&b| b == 0)
        .ok_or(QueryError::Unterminated { field })?;
    let s = buf[..end].iter().map(|&b| char::from(b)).collect();
    *buf = &buf[end + 1..];
    Ok(s)
}

/// The challenge token from a handshake reply: `09 <session> <decimal token> 00`.
pub fn parse_handshake(datagram: &[u8], session: i32) -> Result<i32, QueryError> {
    let mut rest = payload(datagram, TYPE_HANDSHAKE, session)?;
    let text = cstring(&mut rest, "challenge token")?;
    // Vanilla's tokens fit in an i32; other servers print them unsigned: keep the bit pattern.
    text.trim()
        .parse::<i64>()
        .ok()
        .filter(|t| (i64::from(i32::MIN)..=i64::from(u32::MAX)).contains(t))
        .map(|t| t as i32)
        .ok_or(QueryError::BadToken(text))
}

/// The reply to a basic stat request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct BasicStat {
    /// The MOTD (may hold `§` codes).
    pub motd: String,
    /// Game type; vanilla always says `SMP`.
    pub game_type: String,
    /// World name.
    pub map: String,
    /// Players online.
    pub online: i64,
    /// Player slots.
    pub max: i64,
    /// The game port the server reports.
    pub host_port: u16,
    /// The address the server reports.
    pub host_ip: String,
}

fn number(text: &str, field: &'static str) -> Result<i64, QueryError> {
    text.trim().parse().map_err(|_| QueryError::BadNumber {
        field,
        value: text.to_string(),
    })
}

/// Parses a basic stat reply: MOTD, game type, map, online, max (NUL-terminated), host port
/// (u16 **little**-endian) and host IP.
pub fn parse_basic(datagram: &[u8], session: i32) -> Result<BasicStat, QueryError> {
    // Some servers answer a basic request with the full-stat payload (seen on a real server):
    // read it as full stat and take the basic fields from it.
    if payload(datagram, TYPE_STAT, session)?.starts_with(b"splitnum\x00") {
        let full = parse_full(datagram, session)?;
        let text = |key: &str| full.get(key).unwrap_or("").to_string();
        let count = |key: &'static str| number(full.get(key).unwrap_or("0"), key);
        return Ok(BasicStat {
            motd: text("hostname"),
            game_type: text("gametype"),
            map: text("map"),
            online: count("numplayers")?,
            max: count("maxplayers")?,
            host_port: full
                .get("hostport")
                .and_then(|p| p.trim().parse().ok())
                .unwrap_or(0),
            host_ip: text("hostip"),
        });
    }
    let mut rest = payload(datagram, TYPE_STAT, session)?;
    let motd = cstring(&mut rest, "motd")?;
    let game_type = cstring(&mut rest, "game type")?;
    let map = cstring(&mut rest, "map")?;
    let online = number(&cstring(&mut rest, "numplayers")?, "numplayers")?;
    let max = number(&cstring(&mut rest, "maxplayers")?, "maxplayers")?;
    let Some((port, mut rest)) = rest.split_first_chunk::<2>() else {
        return Err(QueryError::Unterminated { field: "hostport" });
    };
    let host_ip = cstring(&mut rest, "hostip")?;
    Ok(BasicStat {
        motd,
        game_type,
        map,
        online,
        max,
        host_port: u16::from_le_bytes(*port),
        host_ip,
    })
}

/// The reply to a full stat request.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct FullStat {
    /// The key/value section in the server's order (`hostname`, `gametype`, `game_id`,
    /// `version`, `plugins`, `map`, `numplayers`, `maxplayers`, `hostport`, `hostip`, ...).
    pub fields: Vec<(String, String)>,
    /// Names of the players online.
    pub players: Vec<String>,
}

impl FullStat {
    /// The value of a key.
    pub fn get(&self, key: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v.as_str())
    }

    /// The `plugins` field split into the server software and its plugins:
    /// `Paper on 1.20.4: WorldEdit 7.2; Essentials 2.20` -> (`Paper on 1.20.4`, [`WorldEdit
    /// 7.2`, `Essentials 2.20`]). Vanilla sends an empty string.
    pub fn plugins(&self) -> (String, Vec<String>) {
        let raw = self.get("plugins").unwrap_or("").trim();
        match raw.split_once(':') {
            Some((software, list)) => (
                software.trim().to_string(),
                list.split(';')
                    .map(str::trim)
                    .filter(|p| !p.is_empty())
                    .map(str::to_string)
                    .collect(),
            ),
            None => (raw.to_string(), Vec::new()),
        }
    }
}

/// Parses a full stat reply: `splitnum\0\x80\0`, key/value pairs ending with an empty key,
/// `\x01player_\0\0`, then player names ending with an empty name.
pub fn parse_full(datagram: &[u8], session: i32) -> Result<FullStat, QueryError> {
    const SPLITNUM: &[u8] = b"splitnum\x00\x80\x00";
    const PLAYER: &[u8] = b"\x01player_\x00\x00";
    let rest = payload(datagram, TYPE_STAT, session)?;
    let mut rest = rest
        .strip_prefix(SPLITNUM)
        .ok_or(QueryError::MissingMarker("splitnum"))?;
    let mut stat = FullStat::default();
    loop {
        let key = cstring(&mut rest, "key")?;
        if key.is_empty() {
            break;
        }
        let value = cstring(&mut rest, "value")?;
        stat.fields.push((key, value));
    }
    let mut rest = rest
        .strip_prefix(PLAYER)
        .ok_or(QueryError::MissingMarker("player_"))?;
    // Some servers end the datagram without the final empty name: stop at the end too.
    while !rest.is_empty() {
        let name = cstring(&mut rest, "player name")?;
        if name.is_empty() {
            break;
        }
        stat.players.push(name);
    }
    Ok(stat)
}

#[cfg(test)]
mod tests {
    use super::*;

    const SESSION: i32 = 0x0102_0304;

    #[test]
    fn requests() {
        assert_eq!(session_id(0xffff_ffff), 0x0f0f_0f0f);
        assert_eq!(session_id(0x1234_5678), 0x0204_0608);
        assert_eq!(handshake_request(SESSION), [0xfe, 0xfd, 0x09, 1, 2, 3, 4]);
        assert_eq!(
            basic_request(SESSION, 9_513_307),
            [0xfe, 0xfd, 0x00, 1, 2, 3, 4, 0x00, 0x91, 0x29, 0x5b]
        );
        let full = full_request(SESSION, 9_513_307);
        assert_eq!(full.len(), 15);
        assert_eq!(&full[11..], [0, 0, 0, 0]);
    }

    fn reply(kind: u8, body: &[u8]) -> Vec<u8> {
        let mut out = vec![kind];
        out.extend_from_slice(&SESSION.to_be_bytes());
        out.extend_from_slice(body);
        out
    }

    #[test]
    fn handshake_tokens() {
        assert_eq!(
            parse_handshake(&reply(9, b"9513307\0"), SESSION),
            Ok(9_513_307)
        );
        assert_eq!(parse_handshake(&reply(9, b"-5\0"), SESSION), Ok(-5));
        // An unsigned token above i32::MAX keeps its bit pattern.
        assert_eq!(parse_handshake(&reply(9, b"4294967295\0"), SESSION), Ok(-1));
        assert!(matches!(
            parse_handshake(&reply(9, b"abc\0"), SESSION),
            Err(QueryError::BadToken(_))
        ));
        assert!(matches!(
            parse_handshake(&reply(9, b"99999999999\0"), SESSION),
            Err(QueryError::BadToken(_))
        ));
        assert!(matches!(
            parse_handshake(&reply(9, b"123"), SESSION),
            Err(QueryError::Unterminated { .. })
        ));
        assert!(matches!(
            parse_handshake(&reply(0, b"1\0"), SESSION),
            Err(QueryError::WrongType { got: 0, .. })
        ));
        assert!(matches!(
            parse_handshake(&reply(9, b"1\0"), 7),
            Err(QueryError::WrongSession { .. })
        ));
        assert_eq!(
            parse_handshake(&[9, 1], SESSION),
            Err(QueryError::TooShort { len: 2 })
        );
    }

    #[test]
    fn basic_stat() {
        let mut body = b"A \xa7aMinecraft Server\0SMP\0world\x002\x0020\0".to_vec();
        body.extend_from_slice(&25565u16.to_le_bytes());
        body.extend_from_slice(b"127.0.0.1\0");
        let stat = parse_basic(&reply(0, &body), SESSION).unwrap();
        assert_eq!(stat.motd, "A §aMinecraft Server");
        assert_eq!(stat.game_type, "SMP");
        assert_eq!(stat.map, "world");
        assert_eq!((stat.online, stat.max), (2, 20));
        assert_eq!(stat.host_port, 25565);
        assert_eq!(stat.host_ip, "127.0.0.1");
        // Every truncation is an error, never a panic.
        let full = reply(0, &body);
        for cut in 0..full.len() {
            assert!(parse_basic(&full[..cut], SESSION).is_err(), "cut at {cut}");
        }
        let bad = reply(0, b"m\0SMP\0w\0two\x0020\0\xdd\x63127.0.0.1\0");
        assert!(matches!(
            parse_basic(&bad, SESSION),
            Err(QueryError::BadNumber {
                field: "numplayers",
                ..
            })
        ));
    }

    fn full_body(players: &[&str]) -> Vec<u8> {
        let mut b = b"splitnum\0\x80\0".to_vec();
        for (k, v) in [
            ("hostname", "A Minecraft Server"),
            ("gametype", "SMP"),
            ("game_id", "MINECRAFT"),
            ("version", "1.20.4"),
            (
                "plugins",
                "Paper on 1.20.4: WorldEdit 7.2.15; Essentials 2.20.1",
            ),
            ("map", "world"),
            ("numplayers", "2"),
            ("maxplayers", "20"),
            ("hostport", "25565"),
            ("hostip", "127.0.0.1"),
        ] {
            b.extend_from_slice(k.as_bytes());
            b.push(0);
            b.extend_from_slice(v.as_bytes());
            b.push(0);
        }
        b.push(0);
        b.extend_from_slice(b"\x01player_\0\0");
        for p in players {
            b.extend_from_slice(p.as_bytes());
            b.push(0);
        }
        b.push(0);
        b
    }

    #[test]
    fn full_stat() {
        let stat = parse_full(&reply(0, &full_body(&["Alex", "Steve"])), SESSION).unwrap();
        assert_eq!(stat.get("version"), Some("1.20.4"));
        assert_eq!(stat.get("hostname"), Some("A Minecraft Server"));
        assert_eq!(stat.fields.len(), 10);
        assert_eq!(stat.players, ["Alex", "Steve"]);
        let (software, plugins) = stat.plugins();
        assert_eq!(software, "Paper on 1.20.4");
        assert_eq!(plugins, ["WorldEdit 7.2.15", "Essentials 2.20.1"]);

        let empty = parse_full(&reply(0, &full_body(&[])), SESSION).unwrap();
        assert!(empty.players.is_empty());

        // Missing final empty name: still fine.
        let mut body = full_body(&["Alex"]);
        body.pop();
        assert_eq!(
            parse_full(&reply(0, &body), SESSION).unwrap().players,
            ["Alex"]
        );
    }

    #[test]
    fn basic_request_answered_with_full_stat_is_read_as_full_stat() {
        // Seen on a real server: the full-stat payload for a basic request.
        let stat = parse_basic(&reply(0, &full_body(&["Alex", "Steve"])), SESSION).unwrap();
        assert_eq!(stat.motd, "A Minecraft Server");
        assert_eq!(stat.game_type, "SMP");
        assert_eq!(stat.map, "world");
        assert_eq!((stat.online, stat.max), (2, 20));
        assert_eq!(stat.host_port, 25565);
        assert_eq!(stat.host_ip, "127.0.0.1");
    }

    #[test]
    fn full_stat_truncations_and_markers() {
        let whole = reply(0, &full_body(&["Alex"]));
        // Cuts inside the header and key/value section are errors; none panics.
        for cut in 0..whole.len() {
            let _ = parse_full(&whole[..cut], SESSION);
        }
        assert_eq!(
            parse_full(&reply(0, b"hostname\0x\0\0"), SESSION),
            Err(QueryError::MissingMarker("splitnum"))
        );
        assert_eq!(
            parse_full(&reply(0, b"splitnum\0\x80\0k\0v\0\0players\0"), SESSION),
            Err(QueryError::MissingMarker("player_"))
        );
    }

    #[test]
    fn vanilla_plugins_field() {
        let stat = FullStat {
            fields: vec![("plugins".into(), String::new())],
            players: vec![],
        };
        assert_eq!(stat.plugins(), (String::new(), vec![]));
    }
}
