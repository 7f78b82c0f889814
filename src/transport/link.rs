//! Links: what the blocking [`Driver`](crate::engine::driver::Driver) moves a protocol
//! machine's bytes over. A link sends one datagram, frame or packet per call and waits for the
//! next one only in its read, until a deadline. A byte stream ([`StreamLink`]: TCP, or a tunnel's
//! pipes) and a UDP socket ([`UdpLink`]) are here (WebRCON's machine does its WebSocket over a
//! stream); `memory` is the in-memory link the driver's tests use.

use std::io;
use std::net::UdpSocket;
use std::time::Instant;

use super::{Transport, Waker};

/// What a wait on a link gave.
#[derive(Debug, PartialEq, Eq)]
pub enum Recv<'a> {
    /// A datagram, a frame, or a chunk of a stream.
    Data(&'a [u8]),
    /// The deadline passed with nothing to read.
    Timeout,
    /// The wait ended early with nothing to read (a signal, a wake-up): look at the clock and
    /// the cancel flag, then wait again.
    Woken,
    /// The peer closed the connection in an orderly way.
    Closed,
}

/// A connection a protocol machine runs over.
pub trait Link: Send {
    /// Sends one datagram, frame or packet, with one write where the link allows it (a vanilla
    /// RCON server handles one packet per read: never two packets in one write).
    fn send(&mut self, bytes: &[u8], deadline: Instant) -> io::Result<()>;
    /// Waits until `deadline` for the next datagram, frame or chunk.
    fn recv(&mut self, deadline: Instant) -> io::Result<Recv<'_>>;
    /// Something another thread calls to end a [`Link::recv`] under way (or the next one)
    /// early with [`Recv::Woken`]; `None` when the link cannot be woken.
    fn waker(&mut self) -> Option<Waker> {
        None
    }
    /// Closes the link.
    fn close(&mut self) {}
}

/// The read buffer's first size: a whole vanilla fragment (4096 bytes and the header) fits.
const READ_BUF_START: usize = 8 * 1024;
/// The read buffer's largest size: long answers come in with few system calls.
const READ_BUF_MAX: usize = 64 * 1024;

/// Doubles `buf` (up to [`READ_BUF_MAX`]) after a read of `n` bytes filled it, so a one-shot
/// with a short answer does not clear (and fault in) 64 KiB it never uses.
fn grow_if_filled(buf: &mut Vec<u8>, n: usize) {
    if n == buf.len() && buf.len() < READ_BUF_MAX {
        buf.resize((buf.len() * 2).min(READ_BUF_MAX), 0);
    }
}

/// A byte stream ([`Transport`]: TCP, or a tunnel's pipes): RCON and telnet.
pub struct StreamLink {
    transport: Box<dyn Transport>,
    buf: Vec<u8>,
}

impl StreamLink {
    /// The link over `transport`.
    pub fn new(transport: Box<dyn Transport>) -> Self {
        StreamLink {
            transport,
            buf: vec![0; READ_BUF_START],
        }
    }
}

impl Link for StreamLink {
    fn send(&mut self, bytes: &[u8], deadline: Instant) -> io::Result<()> {
        self.transport.write_packet(bytes, deadline)
    }

    fn recv(&mut self, deadline: Instant) -> io::Result<Recv<'_>> {
        match self.transport.read_before(&mut self.buf, deadline) {
            Ok(0) => Ok(Recv::Closed),
            Ok(n) => {
                grow_if_filled(&mut self.buf, n);
                Ok(Recv::Data(&self.buf[..n]))
            }
            Err(e) if e.kind() == io::ErrorKind::TimedOut => Ok(Recv::Timeout),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => Ok(Recv::Woken),
            Err(e) => Err(e),
        }
    }

    fn waker(&mut self) -> Option<Waker> {
        self.transport.waker()
    }

    fn close(&mut self) {
        self.transport.close();
    }
}

/// One connected UDP socket (BattlEye), non-blocking, waited on with the system's readiness
/// poll (`mio`), which a [`Link::waker`] can end early.
pub struct UdpLink {
    socket: mio::net::UdpSocket,
    poll: mio::Poll,
    events: mio::Events,
    waker: Option<std::sync::Arc<mio::Waker>>,
    /// A wake-up was seen by a poll and not yet reported.
    woken: bool,
    buf: Vec<u8>,
}

const SOCKET: mio::Token = mio::Token(0);
const WAKE: mio::Token = mio::Token(1);

impl UdpLink {
    /// The link over a connected `socket`; datagrams up to `max_datagram` bytes.
    pub fn new(socket: UdpSocket, max_datagram: usize) -> io::Result<Self> {
        socket.set_nonblocking(true)?;
        let mut socket = mio::net::UdpSocket::from_std(socket);
        let poll = mio::Poll::new()?;
        poll.registry()
            .register(&mut socket, SOCKET, mio::Interest::READABLE)?;
        Ok(UdpLink {
            socket,
            poll,
            events: mio::Events::with_capacity(4),
            waker: None,
            woken: false,
            buf: vec![0; max_datagram],
        })
    }
}

/// An ICMP "port unreachable" from an earlier datagram (Linux reports it as refused, Windows as
/// reset): nobody listens yet, and the server may come back; the machine's timeout decides.
fn unreachable(e: &io::Error) -> bool {
    matches!(
        e.kind(),
        io::ErrorKind::ConnectionRefused | io::ErrorKind::ConnectionReset
    )
}

impl Link for UdpLink {
    fn send(&mut self, bytes: &[u8], _deadline: Instant) -> io::Result<()> {
        match self.socket.send(bytes) {
            // A full send buffer drops the datagram, as the network may: the machine sends it
            // again.
            Err(e) if unreachable(&e) || e.kind() == io::ErrorKind::WouldBlock => Ok(()),
            other => other.map(|_| ()),
        }
    }

    fn recv(&mut self, deadline: Instant) -> io::Result<Recv<'_>> {
        loop {
            match self.socket.recv(&mut self.buf) {
                Ok(n) => return Ok(Recv::Data(&self.buf[..n])),
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {}
                // A signal (Ctrl-C) interrupts the wait: the driver looks at its cancel flag.
                Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(Recv::Woken),
                // The socket reports each ICMP error once: read again, then wait.
                Err(e) if unreachable(&e) => continue,
                Err(e) => return Err(e),
            }
            if std::mem::take(&mut self.woken) {
                return Ok(Recv::Woken);
            }
            let left = deadline.saturating_duration_since(Instant::now());
            if left.is_zero() {
                return Ok(Recv::Timeout);
            }
            match self.poll.poll(&mut self.events, Some(left)) {
                Ok(()) => self.woken = self.events.iter().any(|e| e.token() == WAKE),
                Err(e) if e.kind() == io::ErrorKind::Interrupted => return Ok(Recv::Woken),
                Err(e) => return Err(e),
            }
        }
    }

    fn waker(&mut self) -> Option<Waker> {
        super::poll_waker(&self.poll, &mut self.waker, WAKE)
    }
}

/// An in-memory link for tests of the driver (after ureq's `transport/test.rs`): reads come
/// from a script, writes are recorded one per call, and a scripted silence moves a fake clock to
/// the read's deadline instead of sleeping.
#[cfg(test)]
pub mod memory {
    use std::collections::VecDeque;
    use std::io;
    use std::sync::{Arc, Mutex};
    use std::time::{Duration, Instant};

    use super::{Link, Recv};

    /// A clock the test moves: every reading is the same until a silence or
    /// [`FakeClock::advance`] moves it on.
    #[derive(Clone)]
    pub struct FakeClock(Arc<Mutex<Instant>>);

    impl Default for FakeClock {
        fn default() -> Self {
            Self::new()
        }
    }

    impl FakeClock {
        /// A clock that reads the real time now, and stays there.
        pub fn new() -> Self {
            FakeClock(Arc::new(Mutex::new(Instant::now())))
        }
        /// The time on the clock.
        pub fn now(&self) -> Instant {
            *self.0.lock().unwrap()
        }
        /// Moves the clock on.
        pub fn advance(&self, by: Duration) {
            *self.0.lock().unwrap() += by;
        }
        fn at_least(&self, t: Instant) {
            let mut now = self.0.lock().unwrap();
            *now = (*now).max(t);
        }
        /// The clock as the driver takes it.
        pub fn source(&self) -> Arc<dyn Fn() -> Instant + Send + Sync> {
            let clock = self.clone();
            Arc::new(move || clock.now())
        }
    }

    /// One scripted read.
    #[derive(Debug, Clone)]
    pub enum Read {
        /// These bytes arrive (after the clock moved on by the milliseconds given).
        Data(u64, Vec<u8>),
        /// Nothing arrives before the read's deadline: the clock moves to it.
        Silence,
        /// A wait ended early with nothing to read.
        Woken,
        /// The peer closes the connection.
        Close,
        /// The read fails with this kind of error.
        Fail(io::ErrorKind),
    }

    /// What the test sees of the link after the driver used it.
    #[derive(Clone, Default)]
    pub struct Record {
        /// Each send call's bytes, in order, and the read the script was at.
        pub writes: Arc<Mutex<Vec<Vec<u8>>>>,
        /// The deadlines of the reads, in order.
        pub waits: Arc<Mutex<Vec<Instant>>>,
        /// Whether the driver closed the link.
        pub closed: Arc<Mutex<bool>>,
    }

    /// The link: scripted reads, recorded writes.
    pub struct MemoryLink {
        script: VecDeque<Read>,
        clock: FakeClock,
        record: Record,
        buf: Vec<u8>,
    }

    impl MemoryLink {
        /// A link that reads `script` in order (and sees a close once it runs out).
        pub fn new(script: Vec<Read>, clock: &FakeClock) -> (Self, Record) {
            let record = Record::default();
            let link = MemoryLink {
                script: script.into(),
                clock: clock.clone(),
                record: record.clone(),
                buf: Vec::new(),
            };
            (link, record)
        }
    }

    impl Link for MemoryLink {
        fn send(&mut self, bytes: &[u8], _deadline: Instant) -> io::Result<()> {
            self.record.writes.lock().unwrap().push(bytes.to_vec());
            Ok(())
        }

        fn recv(&mut self, deadline: Instant) -> io::Result<Recv<'_>> {
            self.record.waits.lock().unwrap().push(deadline);
            match self.script.pop_front().unwrap_or(Read::Close) {
                Read::Data(ms, bytes) => {
                    self.clock.advance(Duration::from_millis(ms));
                    self.buf = bytes;
                    Ok(Recv::Data(&self.buf))
                }
                Read::Silence => {
                    self.clock.at_least(deadline);
                    Ok(Recv::Timeout)
                }
                Read::Woken => Ok(Recv::Woken),
                Read::Close => Ok(Recv::Closed),
                Read::Fail(kind) => Err(io::Error::new(kind, "scripted failure")),
            }
        }

        fn close(&mut self) {
            *self.record.closed.lock().unwrap() = true;
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_read_buffer_doubles_when_a_read_fills_it_up_to_its_limit() {
        let mut buf = vec![0; READ_BUF_START];
        grow_if_filled(&mut buf, READ_BUF_START - 1);
        assert_eq!(buf.len(), READ_BUF_START);
        grow_if_filled(&mut buf, READ_BUF_START);
        assert_eq!(buf.len(), 2 * READ_BUF_START);
        for _ in 0..10 {
            let n = buf.len();
            grow_if_filled(&mut buf, n);
        }
        assert_eq!(buf.len(), READ_BUF_MAX);
    }

    /// A UDP read waits in the socket until its deadline, and an ICMP error from an earlier
    /// datagram (nobody listening) does not end the wait early.
    #[test]
    fn a_udp_read_waits_until_its_deadline_through_unreachable_errors() {
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        // A port nobody listens on: bind one, note it, drop it.
        let gone = UdpSocket::bind("127.0.0.1:0")
            .unwrap()
            .local_addr()
            .unwrap();
        socket.connect(gone).unwrap();
        let mut link = UdpLink::new(socket, 64).unwrap();
        link.send(b"hello", Instant::now()).unwrap();
        let deadline = Instant::now() + std::time::Duration::from_millis(30);
        assert_eq!(link.recv(deadline).unwrap(), Recv::Timeout);
        assert!(Instant::now() >= deadline);
    }

    /// A wait in a UDP link ends when another thread wakes it, and a wake-up given before the
    /// wait is kept for it (a command may wake the reader just before it starts waiting).
    #[test]
    fn a_udp_read_ends_when_woken_even_by_a_wake_up_given_before_it() {
        let server = UdpSocket::bind("127.0.0.1:0").unwrap();
        let socket = UdpSocket::bind("127.0.0.1:0").unwrap();
        socket.connect(server.local_addr().unwrap()).unwrap();
        let mut link = UdpLink::new(socket, 64).unwrap();
        let wake = link.waker().unwrap();
        let far = Instant::now() + std::time::Duration::from_secs(60);
        wake();
        assert_eq!(link.recv(far).unwrap(), Recv::Woken);
        let waker = std::thread::spawn(move || wake());
        assert_eq!(link.recv(far).unwrap(), Recv::Woken);
        waker.join().unwrap();
        // Data still comes through after wake-ups.
        server
            .send_to(b"hi", link.socket.local_addr().unwrap())
            .unwrap();
        assert_eq!(link.recv(far).unwrap(), Recv::Data(b"hi"));
    }
}
