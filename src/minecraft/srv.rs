//! DNS SRV records for `rcon --ping HOST` without a port: the `_minecraft._tcp.HOST` query and
//! its answer, sans-IO (docs/protocol.md section 5 asks for the lookup "if it can be done without a
//! heavy dependency": one question, one UDP datagram, a bounded parser).

/// Why a DNS message could not be built or read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[non_exhaustive]
pub enum SrvError {
    /// The name cannot be put in a query (an empty label, a label over 63 bytes, over 253 in all).
    #[error("'{0}' is not a valid DNS name")]
    BadName(String),
    /// The answer is shorter than its own fields say, or a name is malformed.
    #[error("malformed DNS answer")]
    Malformed,
    /// The answer is for another query.
    #[error("DNS answer for another query")]
    OtherId,
    /// The server answered with an error code (other than "no such name").
    #[error("DNS server answered with error code {0}")]
    Rcode(u8),
}

/// One SRV record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SrvRecord {
    /// Lower is tried first.
    pub priority: u16,
    /// Among equal priorities, higher is preferred.
    pub weight: u16,
    /// The port to connect to.
    pub port: u16,
    /// The host to connect to, without the trailing dot.
    pub target: String,
}

const TYPE_SRV: u16 = 33;
const CLASS_IN: u16 = 1;

/// The SRV name a Minecraft client looks up for `host`.
pub fn minecraft_name(host: &str) -> String {
    format!("_minecraft._tcp.{}", host.trim_end_matches('.'))
}

/// A recursive query for the SRV records of `name`, with message id `id`.
pub fn query(id: u16, name: &str) -> Result<Vec<u8>, SrvError> {
    let mut out = Vec::with_capacity(name.len() + 18);
    out.extend_from_slice(&id.to_be_bytes());
    out.extend_from_slice(&0x0100u16.to_be_bytes()); // recursion desired
    out.extend_from_slice(&[0, 1, 0, 0, 0, 0, 0, 0]); // one question
    let trimmed = name.trim_end_matches('.');
    if trimmed.is_empty() || trimmed.len() > 253 {
        return Err(SrvError::BadName(name.into()));
    }
    for label in trimmed.split('.') {
        if label.is_empty() || label.len() > 63 {
            return Err(SrvError::BadName(name.into()));
        }
        out.push(label.len() as u8);
        out.extend_from_slice(label.as_bytes());
    }
    out.push(0);
    out.extend_from_slice(&TYPE_SRV.to_be_bytes());
    out.extend_from_slice(&CLASS_IN.to_be_bytes());
    Ok(out)
}

fn u16_at(buf: &[u8], at: usize) -> Result<u16, SrvError> {
    buf.get(at..at + 2)
        .map(|b| u16::from_be_bytes([b[0], b[1]]))
        .ok_or(SrvError::Malformed)
}

/// Reads the (possibly compressed) name at `at`; returns it and the offset just after it in the
/// record (not after any pointer target). Pointer chains are bounded, so a loop cannot hang.
fn read_name(buf: &[u8], mut at: usize) -> Result<(String, usize), SrvError> {
    let mut name = String::new();
    let mut end = None;
    for _ in 0..64 {
        let len = *buf.get(at).ok_or(SrvError::Malformed)? as usize;
        match len {
            0 => return Ok((name, end.unwrap_or(at + 1))),
            l if l & 0xC0 == 0xC0 => {
                let pointer = (u16_at(buf, at)? & 0x3FFF) as usize;
                end.get_or_insert(at + 2);
                at = pointer;
            }
            l if l <= 63 => {
                let label = buf.get(at + 1..at + 1 + l).ok_or(SrvError::Malformed)?;
                if !name.is_empty() {
                    name.push('.');
                }
                name.push_str(&String::from_utf8_lossy(label));
                if name.len() > 253 {
                    return Err(SrvError::Malformed);
                }
                at += 1 + l;
            }
            _ => return Err(SrvError::Malformed),
        }
    }
    Err(SrvError::Malformed)
}

/// The SRV records in an answer to the query with id `id` (none for "no such name").
pub fn parse_response(buf: &[u8], id: u16) -> Result<Vec<SrvRecord>, SrvError> {
    if u16_at(buf, 0)? != id {
        return Err(SrvError::OtherId);
    }
    let flags = u16_at(buf, 2)?;
    if flags & 0x8000 == 0 {
        return Err(SrvError::Malformed); // not a response
    }
    match (flags & 0x000F) as u8 {
        0 => {}
        3 => return Ok(Vec::new()),
        code => return Err(SrvError::Rcode(code)),
    }
    let questions = u16_at(buf, 4)?;
    let answers = u16_at(buf, 6)?;
    let mut at = 12;
    for _ in 0..questions {
        at = read_name(buf, at)?.1 + 4;
    }
    let mut records = Vec::new();
    for _ in 0..answers {
        let (_, after) = read_name(buf, at)?;
        let kind = u16_at(buf, after)?;
        let class = u16_at(buf, after + 2)?;
        let len = u16_at(buf, after + 8)? as usize;
        let data = after + 10;
        if buf.len() < data + len {
            return Err(SrvError::Malformed);
        }
        if kind == TYPE_SRV && class == CLASS_IN {
            if len < 7 {
                return Err(SrvError::Malformed);
            }
            let (target, _) = read_name(buf, data + 6)?;
            records.push(SrvRecord {
                priority: u16_at(buf, data)?,
                weight: u16_at(buf, data + 2)?,
                port: u16_at(buf, data + 4)?,
                target,
            });
        }
        at = data + len;
    }
    Ok(records)
}

/// The record to use: the lowest priority, and among those the highest weight (a fixed choice
/// rather than RFC 2782's weighted random one, so the same server is asked every time). A target
/// of "." means "no such service".
pub fn choose(records: &[SrvRecord]) -> Option<&SrvRecord> {
    records
        .iter()
        .filter(|r| !r.target.is_empty())
        .min_by(|a, b| a.priority.cmp(&b.priority).then(b.weight.cmp(&a.weight)))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// An answer to `query(id, name)` with the given records (targets written uncompressed,
    /// names in answers as a pointer to the question).
    fn answer(id: u16, name: &str, records: &[(u16, u16, u16, &str)]) -> Vec<u8> {
        let mut out = query(id, name).unwrap();
        out[2] = 0x81;
        out[3] = 0x80;
        out[7] = records.len() as u8;
        for (priority, weight, port, target) in records {
            out.extend_from_slice(&[0xC0, 12]);
            out.extend_from_slice(&TYPE_SRV.to_be_bytes());
            out.extend_from_slice(&CLASS_IN.to_be_bytes());
            out.extend_from_slice(&300u32.to_be_bytes());
            let mut rdata = Vec::new();
            rdata.extend_from_slice(&priority.to_be_bytes());
            rdata.extend_from_slice(&weight.to_be_bytes());
            rdata.extend_from_slice(&port.to_be_bytes());
            for label in target.split('.').filter(|l| !l.is_empty()) {
                rdata.push(label.len() as u8);
                rdata.extend_from_slice(label.as_bytes());
            }
            rdata.push(0);
            out.extend_from_slice(&(rdata.len() as u16).to_be_bytes());
            out.extend_from_slice(&rdata);
        }
        out
    }

    #[test]
    fn query_layout() {
        let q = query(0x1234, "_minecraft._tcp.mc.example").unwrap();
        assert_eq!(&q[..12], &[0x12, 0x34, 1, 0, 0, 1, 0, 0, 0, 0, 0, 0]);
        assert_eq!(&q[12..23], b"\x0a_minecraft");
        assert_eq!(&q[q.len() - 4..], &[0, 33, 0, 1]);
        assert!(query(1, "a..b").is_err());
        assert!(query(1, &"x".repeat(64)).is_err());
        assert!(query(1, "").is_err());
    }

    #[test]
    fn parses_and_chooses() {
        let a = answer(
            7,
            "_minecraft._tcp.mc.example",
            &[
                (10, 5, 25566, "b.example."),
                (5, 1, 25567, "a.example"),
                (5, 9, 25568, "c.example"),
            ],
        );
        let records = parse_response(&a, 7).unwrap();
        assert_eq!(records.len(), 3);
        assert_eq!(records[0].target, "b.example");
        let best = choose(&records).unwrap();
        assert_eq!((best.port, best.target.as_str()), (25568, "c.example"));
        assert_eq!(parse_response(&a, 8), Err(SrvError::OtherId));
    }

    #[test]
    fn no_such_name_is_no_records() {
        let mut a = answer(3, "_minecraft._tcp.nope", &[]);
        a[3] = 0x83;
        assert_eq!(parse_response(&a, 3), Ok(Vec::new()));
        a[3] = 0x82;
        assert_eq!(parse_response(&a, 3), Err(SrvError::Rcode(2)));
    }

    #[test]
    fn every_truncation_is_an_error_not_a_panic() {
        let a = answer(9, "_minecraft._tcp.mc", &[(1, 1, 1, "t.example")]);
        for cut in 0..a.len() {
            assert!(parse_response(&a[..cut], 9).is_err(), "cut at {cut}");
        }
    }

    #[test]
    fn pointer_loops_end() {
        let mut a = answer(9, "_minecraft._tcp.mc", &[]);
        a[7] = 1;
        // An answer whose name points at itself.
        let at = a.len() as u8;
        a.extend_from_slice(&[0xC0, at]);
        assert_eq!(parse_response(&a, 9), Err(SrvError::Malformed));
    }

    proptest::proptest! {
        #[test]
        fn never_panics(data in proptest::collection::vec(proptest::num::u8::ANY, 0..600)) {
            let _ = parse_response(&data, u16::from_be_bytes([
                *data.first().unwrap_or(&0), *data.get(1).unwrap_or(&0)]));
        }
    }
}
