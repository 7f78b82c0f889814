//! Runs the status ping (TCP, through [`crate::transport::TcpConnector`]), the query and the SRV
//! lookup (UDP: the crate's only UDP sockets) over the network, driving the sans-IO codecs in
//! [`crate::minecraft::status`], [`crate::minecraft::query`] and [`crate::minecraft::srv`]. Every wait has a deadline.

use std::hash::{BuildHasher, Hasher};
use std::io;
use std::net::{SocketAddr, ToSocketAddrs, UdpSocket};
use std::time::{Duration, Instant, SystemTime, UNIX_EPOCH};

use crate::error::{Error, Result};
use crate::minecraft::query::{self, BasicStat, FullStat, QueryError};
use crate::minecraft::status::{self, Status, StatusError};
use crate::rcon::client::Direction;
use crate::transport::{Connector, TcpConnector, Transport};

/// Sees every datagram or write sent and every chunk received, for `--trace`.
pub type Tap<'a> = &'a mut dyn FnMut(Direction, &[u8]);

/// Which status pings to try.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum LegacyPing {
    /// The modern ping; if it fails after connecting (closed, malformed, or no answer within half
    /// the time limit), the legacy `FE 01` ping on a new connection.
    #[default]
    Fallback,
    /// Only the legacy `FE 01` ping.
    Only,
    /// Only the modern ping.
    Never,
}

/// What a status ping found.
#[derive(Debug, Clone)]
pub struct PingReport {
    /// The server's status.
    pub status: Status,
    /// Round trip of the ping/pong exchange (modern) or of the whole legacy exchange; `None` if
    /// the server sent no pong.
    pub latency: Option<Duration>,
    /// Why the modern ping was given up, when the legacy one answered instead.
    pub fallback_reason: Option<String>,
}

/// Pings the server list status of `host:port` within `timeout`.
pub fn ping(
    host: &str,
    port: u16,
    timeout: Duration,
    legacy: LegacyPing,
    tap: Tap<'_>,
) -> Result<PingReport> {
    let start = Instant::now();
    let connector = TcpConnector::new(host, port);
    let host = host.trim_start_matches('[').trim_end_matches(']');
    match legacy {
        LegacyPing::Only => legacy_ping(&connector, start + timeout, timeout, tap),
        LegacyPing::Never => modern_ping(&connector, host, port, start + timeout, timeout, tap),
        LegacyPing::Fallback => {
            let modern = modern_ping(&connector, host, port, start + timeout / 2, timeout, tap);
            let modern_err = match modern {
                Ok(report) => return Ok(report),
                Err(e @ (Error::Resolve { .. } | Error::Connect { .. })) => return Err(e),
                Err(e) => e,
            };
            match legacy_ping(&connector, start + timeout, timeout, tap) {
                Ok(mut report) => {
                    report.fallback_reason = Some(modern_err.to_string());
                    Ok(report)
                }
                Err(legacy_err) => Err(match (&modern_err, &legacy_err) {
                    (Error::Timeout { .. }, _) | (_, Error::Timeout { .. }) => Error::Timeout {
                        phase: crate::error::Phase::Answer,
                        what: "waiting for a status reply (modern and legacy ping)",
                        after: timeout,
                    },
                    _ => Error::Protocol(format!(
                        "status ping failed: {modern_err}; legacy ping failed too: {legacy_err}"
                    )),
                }),
            }
        }
    }
}

/// One status-ping connection: what every send and read on it needs.
struct Ping<'t> {
    conn: Box<dyn Transport>,
    /// Bytes read and not yet used by a reply.
    buf: Vec<u8>,
    deadline: Instant,
    /// The time limit a timeout error names.
    timeout: Duration,
    tap: Tap<'t>,
}

impl<'t> Ping<'t> {
    /// Connects with what is left before `deadline`.
    fn open(
        connector: &TcpConnector,
        deadline: Instant,
        timeout: Duration,
        tap: Tap<'t>,
    ) -> Result<Self> {
        let left = deadline.saturating_duration_since(Instant::now());
        let conn = connector.connect(left.max(Duration::from_millis(1)))?;
        Ok(Ping {
            conn,
            buf: Vec::new(),
            deadline,
            timeout,
            tap,
        })
    }

    /// Reads until `parse` finds a whole reply in what was read.
    fn read_until<T>(
        &mut self,
        what: &'static str,
        mut parse: impl FnMut(&[u8]) -> Result<Option<(T, usize)>>,
    ) -> Result<T> {
        let mut chunk = [0u8; 16 * 1024];
        loop {
            if let Some((value, used)) = parse(&self.buf)? {
                self.buf.drain(..used);
                return Ok(value);
            }
            match self.conn.read_before(&mut chunk, self.deadline) {
                Ok(0) => {
                    return Err(Error::Closed {
                        phase: crate::error::Phase::Answer,
                        partial: !self.buf.is_empty(),
                        when: what,
                    });
                }
                Ok(n) => {
                    (self.tap)(Direction::Received, &chunk[..n]);
                    self.buf.extend_from_slice(&chunk[..n]);
                }
                Err(e) if e.kind() == io::ErrorKind::TimedOut => {
                    return Err(Error::Timeout {
                        phase: crate::error::Phase::Answer,
                        what,
                        after: self.timeout,
                    });
                }
                Err(source) => return Err(Error::Io { when: what, source }),
            }
        }
    }

    fn send(&mut self, bytes: &[u8]) -> Result<()> {
        (self.tap)(Direction::Sent, bytes);
        self.conn
            .write_packet(bytes, self.deadline)
            .map_err(|source| {
                if source.kind() == io::ErrorKind::TimedOut {
                    Error::Timeout {
                        phase: crate::error::Phase::Send,
                        what: "sending",
                        after: self.timeout,
                    }
                } else {
                    Error::Io {
                        when: "while sending",
                        source,
                    }
                }
            })
    }
}

fn modern_ping(
    connector: &TcpConnector,
    host: &str,
    port: u16,
    deadline: Instant,
    timeout: Duration,
    tap: Tap<'_>,
) -> Result<PingReport> {
    let mut ping = Ping::open(connector, deadline, timeout, tap)?;
    ping.send(&status::status_opening(host, port))?;
    let json = ping.read_until("waiting for the status reply", |b| {
        // A pre-1.7 server kicks an unknown packet with `FF` + u16 length; a modern frame
        // never starts `FF 00` (that would be an overlong VarInt).
        if b.starts_with(&[0xff, 0x00]) {
            return Err(StatusError::Legacy("pre-1.7 server: kicked the modern ping").into());
        }
        match status::decode_frame(b, status::MAX_FRAME)? {
            Some((frame, used)) => Ok(Some((status::parse_status_response(&frame)?, used))),
            None => Ok(None),
        }
    })?;
    let status = status::parse_status_json(&json)?;

    // Latency: the ping/pong round trip, as the game client measures it.
    let payload = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| d.as_millis() as i64)
        .unwrap_or(0);
    let sent = Instant::now();
    let pong = ping.send(&status::ping_request(payload)).and_then(|()| {
        ping.read_until("waiting for the pong", |b| {
            match status::decode_frame(b, status::MAX_FRAME)? {
                Some((frame, used)) => Ok(Some((status::parse_pong(&frame)?, used))),
                None => Ok(None),
            }
        })
    });
    let latency = pong.ok().map(|_| sent.elapsed());
    ping.conn.close();
    Ok(PingReport {
        status,
        latency,
        fallback_reason: None,
    })
}

fn legacy_ping(
    connector: &TcpConnector,
    deadline: Instant,
    timeout: Duration,
    tap: Tap<'_>,
) -> Result<PingReport> {
    let mut ping = Ping::open(connector, deadline, timeout, tap)?;
    let sent = Instant::now();
    ping.send(&status::LEGACY_REQUEST)?;
    let status = ping.read_until("waiting for the legacy ping reply", |b| {
        Ok(status::decode_legacy(b)?)
    })?;
    let latency = Some(sent.elapsed());
    ping.conn.close();
    Ok(PingReport {
        status,
        latency,
        fallback_reason: None,
    })
}

/// A query reply.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum QueryReply {
    /// Basic stat.
    Basic(BasicStat),
    /// Full stat.
    Full(FullStat),
}

/// What a query found.
#[derive(Debug, Clone)]
pub struct QueryReport {
    /// The stat.
    pub reply: QueryReply,
    /// How many handshakes it took (2 when the first token got no reply).
    pub handshakes: u32,
    /// Round trip of the stat request that was answered.
    pub latency: Duration,
}

/// 32 random bits (std's hasher keys are random per process and per call).
fn random_u32() -> u32 {
    let mut h = std::collections::hash_map::RandomState::new().build_hasher();
    h.write_u128(
        SystemTime::now()
            .duration_since(UNIX_EPOCH)
            .map(|d| d.as_nanos())
            .unwrap_or(0),
    );
    h.finish() as u32
}

/// Queries `host:port` over UDP for basic or full stat.
///
/// The challenge token expires on the server (vanilla: every 30 s) and a request with an expired
/// token gets no reply, so a handshake or stat that is not answered within a third of `timeout`
/// is retried once from a new handshake (docs/protocol.md section 5).
pub fn query(
    host: &str,
    port: u16,
    full: bool,
    timeout: Duration,
    tap: Tap<'_>,
) -> Result<QueryReport> {
    let start = Instant::now();
    let deadline = start + timeout;
    let host = host.trim_start_matches('[').trim_end_matches(']');
    let addr: SocketAddr = (host, port)
        .to_socket_addrs()
        .map_err(|source| Error::Resolve {
            host: host.to_string(),
            source,
        })?
        .next()
        .ok_or_else(|| Error::Resolve {
            host: host.to_string(),
            source: io::Error::new(io::ErrorKind::NotFound, "no addresses"),
        })?;
    let local: SocketAddr = if addr.is_ipv4() {
        "0.0.0.0:0".parse().expect("address")
    } else {
        "[::]:0".parse().expect("address")
    };
    let connect_err = |source: io::Error| Error::Connect {
        addr: addr.to_string(),
        source,
    };
    let socket = UdpSocket::bind(local).map_err(connect_err)?;
    socket.connect(addr).map_err(connect_err)?;

    for attempt in 1..=2 {
        let step_deadline = if attempt == 1 {
            (start + timeout / 3).min(deadline)
        } else {
            deadline
        };
        let session = query::session_id(random_u32());
        let token = match exchange(
            &socket,
            &query::handshake_request(session),
            step_deadline,
            tap,
            |d| query::parse_handshake(d, session),
        )? {
            Some((token, _)) => token,
            None if attempt == 1 => continue,
            None => break,
        };
        let request = if full {
            query::full_request(session, token)
        } else {
            query::basic_request(session, token)
        };
        let step_deadline = if attempt == 1 {
            (Instant::now() + timeout / 3).min(deadline)
        } else {
            deadline
        };
        let reply = exchange(&socket, &request, step_deadline, tap, |d| {
            if full {
                query::parse_full(d, session).map(QueryReply::Full)
            } else {
                query::parse_basic(d, session).map(QueryReply::Basic)
            }
        })?;
        if let Some((reply, latency)) = reply {
            return Ok(QueryReport {
                reply,
                handshakes: attempt,
                latency,
            });
        }
    }
    Err(Error::Timeout {
        phase: crate::error::Phase::Answer,
        what: "waiting for a query reply (is enable-query on, and is this the query.port?)",
        after: timeout,
    })
}

/// Sends one datagram and waits for a reply that `parse` accepts; `Ok(None)` at the deadline.
/// Replies for another session (late answers to an earlier attempt) are skipped.
fn exchange<T>(
    socket: &UdpSocket,
    request: &[u8],
    deadline: Instant,
    tap: Tap<'_>,
    parse: impl Fn(&[u8]) -> std::result::Result<T, QueryError>,
) -> Result<Option<(T, Duration)>> {
    let refused = |source: io::Error| Error::Connect {
        addr: socket
            .peer_addr()
            .map(|a| a.to_string())
            .unwrap_or_else(|_| "server".into()),
        source,
    };
    tap(Direction::Sent, request);
    let sent = Instant::now();
    socket.send(request).map_err(refused)?;
    let mut buf = vec![0u8; query::MAX_DATAGRAM];
    loop {
        let left = deadline.saturating_duration_since(Instant::now());
        if left.is_zero() {
            return Ok(None);
        }
        socket.set_read_timeout(Some(left)).map_err(refused)?;
        match socket.recv(&mut buf) {
            Ok(n) => {
                tap(Direction::Received, &buf[..n]);
                match parse(&buf[..n]) {
                    Ok(v) => return Ok(Some((v, sent.elapsed()))),
                    Err(QueryError::WrongSession { .. }) => continue,
                    Err(e) => return Err(e.into()),
                }
            }
            Err(e)
                if matches!(
                    e.kind(),
                    io::ErrorKind::WouldBlock | io::ErrorKind::TimedOut
                ) =>
            {
                continue;
            }
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            // An ICMP "port unreachable" comes back as ConnectionRefused on a connected socket.
            Err(e) => return Err(refused(e)),
        }
    }
}

/// The system's DNS server: the first `nameserver` of `/etc/resolv.conf` (Unix), on port 53
/// unless it names one; on Windows the first DNS server of a network adapter that is up
/// (`GetAdaptersAddresses`). `None` where there is none: SRV records are then not looked up.
pub fn system_dns_server() -> Option<SocketAddr> {
    #[cfg(windows)]
    {
        windows_dns_server()
    }
    #[cfg(not(windows))]
    {
        let conf = std::fs::read_to_string("/etc/resolv.conf").ok()?;
        conf.lines()
            .filter_map(|l| l.trim().strip_prefix("nameserver"))
            .find_map(|rest| parse_dns_server(rest.split('%').next().unwrap_or(rest)))
    }
}

/// The first DNS server of the first network adapter that is up, from `GetAdaptersAddresses`
/// (iphlpapi), which is what Windows' own resolver uses. Read through `windows-sys` (Microsoft's
/// bindings, already in the dependency tree) rather than by parsing `ipconfig /all`, whose
/// output is translated into the system's language (issue 12).
#[cfg(windows)]
fn windows_dns_server() -> Option<SocketAddr> {
    use std::net::{IpAddr, Ipv4Addr, Ipv6Addr};
    use windows_sys::Win32::NetworkManagement::IpHelper::{
        GAA_FLAG_SKIP_ANYCAST, GAA_FLAG_SKIP_MULTICAST, GAA_FLAG_SKIP_UNICAST,
        GetAdaptersAddresses, IP_ADAPTER_ADDRESSES_LH,
    };
    use windows_sys::Win32::NetworkManagement::Ndis::IfOperStatusUp;
    use windows_sys::Win32::Networking::WinSock::{AF_INET, AF_INET6, AF_UNSPEC};
    const ERROR_BUFFER_OVERFLOW: u32 = 111;

    let flags = GAA_FLAG_SKIP_UNICAST | GAA_FLAG_SKIP_ANYCAST | GAA_FLAG_SKIP_MULTICAST;
    // u64 words keep the buffer aligned for the structures the call writes into it.
    let mut size: u32 = 16 * 1024;
    let mut buf: Vec<u64>;
    let mut tries = 0;
    loop {
        buf = vec![0u64; (size as usize).div_ceil(8)];
        // SAFETY: `buf` is writable for `size` bytes and suitably aligned; the call writes at
        // most `size` bytes or reports the size it needs.
        let rc = unsafe {
            GetAdaptersAddresses(
                u32::from(AF_UNSPEC),
                flags,
                std::ptr::null(),
                buf.as_mut_ptr().cast::<IP_ADAPTER_ADDRESSES_LH>(),
                &mut size,
            )
        };
        match rc {
            0 => break,
            ERROR_BUFFER_OVERFLOW if tries < 3 => tries += 1,
            _ => return None,
        }
    }
    let mut adapter = buf.as_ptr().cast::<IP_ADAPTER_ADDRESSES_LH>();
    while !adapter.is_null() {
        // SAFETY: a non-null pointer from the list GetAdaptersAddresses built inside `buf`,
        // which is alive; likewise the DNS server list and each socket address.
        let a = unsafe { &*adapter };
        if a.OperStatus == IfOperStatusUp {
            let mut dns = a.FirstDnsServerAddress;
            while !dns.is_null() {
                let d = unsafe { &*dns };
                let sa = d.Address.lpSockaddr.cast::<u8>();
                let len = usize::try_from(d.Address.iSockaddrLength).unwrap_or(0);
                if !sa.is_null() && len >= 8 {
                    let bytes = unsafe { std::slice::from_raw_parts(sa, len) };
                    let family = u16::from_ne_bytes([bytes[0], bytes[1]]);
                    let ip = match family {
                        f if f == AF_INET => Some(IpAddr::V4(Ipv4Addr::new(
                            bytes[4], bytes[5], bytes[6], bytes[7],
                        ))),
                        f if f == AF_INET6 && len >= 24 => {
                            let mut v6 = [0u8; 16];
                            v6.copy_from_slice(&bytes[8..24]);
                            Some(IpAddr::V6(Ipv6Addr::from(v6)))
                        }
                        _ => None,
                    };
                    // fec0:0:0:ffff::1-3 are Windows' placeholder site-local resolvers, set when
                    // an adapter has no real IPv6 DNS server.
                    if let Some(ip) = ip.filter(|ip| {
                        !matches!(ip, IpAddr::V6(v6) if v6.segments()[..4] == [0xfec0, 0, 0, 0xffff])
                    }) {
                        return Some(SocketAddr::new(ip, 53));
                    }
                }
                dns = d.Next;
            }
        }
        adapter = a.Next;
    }
    None
}

/// `IP` (port 53) or `IP:PORT`, for a DNS server.
pub fn parse_dns_server(text: &str) -> Option<SocketAddr> {
    let text = text.trim();
    text.parse::<SocketAddr>().ok().or_else(|| {
        text.parse::<std::net::IpAddr>()
            .ok()
            .map(|ip| SocketAddr::new(ip, 53))
    })
}

/// Looks up the `_minecraft._tcp.HOST` SRV record at the DNS server `server` within
/// `timeout`: the host and port a Minecraft client would connect to, or `None` when there is no
/// record or no answer in time (the caller then uses HOST:25565, as the game does).
pub fn lookup_minecraft_srv(
    host: &str,
    server: SocketAddr,
    timeout: Duration,
) -> Option<(String, u16)> {
    use crate::minecraft::srv;
    let id = random_u32() as u16;
    let question = srv::query(id, &srv::minecraft_name(host)).ok()?;
    let local: SocketAddr = if server.is_ipv6() {
        "[::]:0".parse().ok()?
    } else {
        "0.0.0.0:0".parse().ok()?
    };
    let socket = UdpSocket::bind(local).ok()?;
    socket.connect(server).ok()?;
    let deadline = Instant::now() + timeout;
    let mut buf = [0u8; 1500];
    // One retry: UDP may lose the datagram.
    for attempt in 0..2 {
        socket.send(&question).ok()?;
        let wait_until = if attempt == 0 {
            Instant::now() + timeout / 2
        } else {
            deadline
        };
        loop {
            let left = wait_until.saturating_duration_since(Instant::now());
            if left.is_zero() {
                break;
            }
            socket.set_read_timeout(Some(left)).ok()?;
            let Ok(n) = socket.recv(&mut buf) else { break };
            match srv::parse_response(&buf[..n], id) {
                Ok(records) => {
                    let best = srv::choose(&records)?;
                    return Some((best.target.clone(), best.port));
                }
                Err(srv::SrvError::OtherId) => continue,
                Err(_) => return None,
            }
        }
    }
    None
}

#[cfg(all(test, windows))]
mod windows_tests {
    /// Without `RCON_DNS_SERVER`, Windows still has a resolver for the SRV lookup of
    /// `--ping HOST` (issue 12). Needs a network adapter with a DNS server, as every networked
    /// Windows machine (and Wine, which reports the host's resolv.conf) has.
    #[test]
    fn system_dns_server_is_found() {
        let server = super::windows_dns_server().expect("a DNS server of an adapter that is up");
        assert_eq!(server.port(), 53);
        assert!(!server.ip().is_unspecified(), "{server}");
    }
}
