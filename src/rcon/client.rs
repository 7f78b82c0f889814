//! The blocking driver: runs an [`Exchange`] over a [`Transport`], one command at a time.
//!
//! It holds no protocol decisions: it writes what the exchange asks for, reads until the
//! exchange's next deadline, feeds it bytes, closes and clock readings, and hands its events on
//! (output to the caller, warnings, traces and what was learned to the [`Observer`]).

use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use crate::engine::Remote;
use crate::error::{Error, Result, TransportFailure};
use crate::rcon::exchange::{Event, Exchange, Learned};
use crate::transport::{Connector, Transport};

pub use crate::engine::{CANCEL_POLL, Direction, Observer, Password, Silent};
/// The settings of a [`Client`]: the one [`crate::engine::Options`] every engine takes.
pub type ClientOptions = crate::engine::Options;

pub use crate::rcon::exchange::{EndDetection, SMALL_MTU_COMMAND_BYTES, check_command};

/// A logged-in RCON session that reconnects when it has to.
pub struct Client {
    connector: Box<dyn Connector>,
    password: Password,
    timeout: Duration,
    observer: Arc<dyn Observer>,
    cancel: Option<Arc<AtomicBool>>,
    exchange: Exchange,
    conn: Option<Box<dyn Transport>>,
    /// Grows from [`READ_BUF_START`] to [`READ_BUF_MAX`] when a read fills it, so a one-shot
    /// with a short answer does not clear (and fault in) 64 KiB it never uses.
    read_buf: Vec<u8>,
}

/// The read buffer's first size: a whole vanilla fragment (4096 bytes and the header) fits.
const READ_BUF_START: usize = 8 * 1024;
/// The read buffer's largest size: long answers come in with few system calls.
const READ_BUF_MAX: usize = 64 * 1024;

/// Doubles `buf` (up to [`READ_BUF_MAX`]) after a read of `n` bytes filled it.
fn grow_if_filled(buf: &mut Vec<u8>, n: usize) {
    if n == buf.len() && buf.len() < READ_BUF_MAX {
        buf.resize((buf.len() * 2).min(READ_BUF_MAX), 0);
    }
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.connector.describe())
            .field("connected", &self.conn.is_some())
            .field("method", &self.exchange.method())
            .finish_non_exhaustive()
    }
}

/// What comes after a command on its connection.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Ending {
    /// More commands may follow.
    Normal,
    /// It stops the server: the connection is closed as soon as its answer begins.
    StopsServer,
    /// Nothing follows: the connection is closed after it.
    Last,
}

/// What [`Client::drive`] waits for.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Goal {
    Ready,
    Done,
}

impl Client {
    /// Connects, logs in and settles the end-of-output method.
    pub fn connect(
        connector: Box<dyn Connector>,
        password: Password,
        opts: ClientOptions,
    ) -> Result<Self> {
        let mut client = Self {
            connector,
            password,
            timeout: opts.timeout,
            observer: std::sync::Arc::clone(&opts.observer),
            cancel: opts.cancel.clone(),
            exchange: Exchange::new(opts),
            conn: None,
            read_buf: vec![0; READ_BUF_START],
        };
        client.reconnect()?;
        Ok(client)
    }

    /// Where this client is connected to, e.g. `localhost:25575`.
    pub fn server(&self) -> String {
        self.connector.describe()
    }

    /// Whether a connection is open (it may still have been closed by the peer unseen).
    pub fn is_connected(&self) -> bool {
        self.conn.is_some()
    }

    /// The limits on commands this client sends.
    pub fn max_command_bytes(&self) -> usize {
        self.exchange.config().max_command_bytes
    }

    /// What is known about the server now, to remember for the next session (`None` when the
    /// method was forced or is not settled).
    pub fn learned(&self) -> Option<Learned> {
        self.exchange.learned()
    }

    /// Sets (or clears) the flag that abandons a wait (see [`ClientOptions::cancel`]).
    pub fn set_cancel(&mut self, cancel: Option<Arc<AtomicBool>>) {
        self.cancel = cancel;
    }

    /// The quiet gap in force for this server.
    pub fn quiet_gap(&self) -> Duration {
        self.exchange.quiet_gap()
    }

    /// Closes the connection (the next command reconnects).
    pub fn close(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            conn.close();
        }
        self.exchange.disconnect();
    }

    /// Checks, waiting at most a millisecond, whether the server closed the connection since the
    /// last exchange (for example it stopped while an interactive session sat idle). A closed
    /// connection is dropped, so the next command reconnects instead of being sent into a dead
    /// socket; bytes that did arrive go to the exchange, which drops them as stale.
    pub fn check_open(&mut self) -> bool {
        let Some(conn) = self.conn.as_mut() else {
            return false;
        };
        let now = Instant::now();
        match conn.read_before(&mut self.read_buf, now + Duration::from_millis(1)) {
            Ok(0) => {
                self.close();
                false
            }
            Ok(n) => {
                self.exchange
                    .handle_input(&self.read_buf[..n], Instant::now());
                let _ = self.pump(Goal::Ready);
                self.conn.is_some()
            }
            Err(e) if e.kind() == std::io::ErrorKind::TimedOut => true,
            Err(_) => {
                self.close();
                false
            }
        }
    }

    /// Drops any connection and opens a new, logged-in one (probing if needed).
    pub fn reconnect(&mut self) -> Result<()> {
        self.close();
        self.open()?;
        self.drive(Goal::Ready, None)
    }

    fn open(&mut self) -> Result<()> {
        let conn = self.connector.connect(self.timeout)?;
        self.conn = Some(conn);
        self.exchange
            .connected(self.password.expose(), Instant::now());
        Ok(())
    }

    /// Runs one command and returns its output as text.
    pub fn command(&mut self, command: &str) -> Result<String> {
        let mut out = Vec::new();
        self.command_into(command, &mut out)?;
        Ok(crate::rcon::packet::decode_output_owned(out))
    }

    /// Runs one command, appending its raw output bytes to `out`. On error, `out` holds whatever
    /// arrived before it. Reconnects first if the connection was closed.
    pub fn command_into(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()> {
        self.run(command, Ending::Normal, out)
    }

    /// Runs the last command of the session, appending its raw output to `out`: the exchange
    /// may end the answer by a step that also ends the connection (see
    /// [`Exchange::start_last_command`]), which is closed afterwards in any case.
    pub fn command_into_last(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()> {
        self.run(command, Ending::Last, out)
    }

    /// Sends a command after which the server is expected to shut down (`stop`): waits only for
    /// the first packet of its answer (or the close), then closes the connection at once, since
    /// a connected RCON client keeps a vanilla server from shutting down cleanly.
    pub fn command_then_close(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()> {
        self.run(command, Ending::StopsServer, out)
    }

    fn run(&mut self, command: &str, ending: Ending, out: &mut Vec<u8>) -> Result<()> {
        self.exchange.check_command(command)?;
        if self.conn.is_none() || !self.exchange.is_ready() {
            self.reconnect()?;
        }
        let now = Instant::now();
        match ending {
            Ending::Normal => self.exchange.start_command(command, false, now)?,
            Ending::StopsServer => self.exchange.start_command(command, true, now)?,
            Ending::Last => self.exchange.start_last_command(command, now)?,
        }
        let result = self.drive(Goal::Done, Some(out));
        if ending != Ending::Normal {
            self.close();
        }
        result
    }

    /// Hands the exchange's queued events on; `Some` when `goal` was reached or failed.
    fn pump(&mut self, goal: Goal) -> Option<Result<()>> {
        self.pump_into(goal, &mut None)
    }

    fn pump_into(&mut self, goal: Goal, out: &mut Option<&mut Vec<u8>>) -> Option<Result<()>> {
        while let Some(event) = self.exchange.poll_event() {
            match event {
                Event::Ready if goal == Goal::Ready => return Some(Ok(())),
                Event::Ready => {}
                Event::Output(bytes) => {
                    if let Some(out) = out.as_mut() {
                        // One packet is the whole answer most of the time: take it as it is.
                        if out.is_empty() {
                            **out = bytes;
                        } else {
                            out.extend_from_slice(&bytes);
                        }
                    }
                }
                Event::Done => {
                    if self.exchange.is_disconnected() {
                        self.drop_conn();
                    }
                    return Some(Ok(()));
                }
                Event::Failed(e) => {
                    self.drop_conn();
                    return Some(Err(e));
                }
                Event::Reconnect => {
                    self.drop_conn();
                    if let Err(e) = self.open() {
                        return Some(Err(e));
                    }
                }
                Event::Warning(w) => self.observer.warning(&format!("{}: {w}", self.server())),
                Event::Note(n) => self.observer.note(&format!("{}: {n}", self.server())),
                Event::Learned(l) => self.observer.learned(Some(l)),
                Event::Forget => self.observer.learned(None),
                Event::Traced(t) => self.observer.packet(&t),
            }
        }
        None
    }

    fn drop_conn(&mut self) {
        if let Some(mut conn) = self.conn.take() {
            conn.close();
        }
    }

    /// Moves bytes until `goal` is reached or fails.
    fn drive(&mut self, goal: Goal, out: Option<&mut Vec<u8>>) -> Result<()> {
        let mut out = out;
        loop {
            if let Some(conn) = self.conn.as_mut() {
                let deadline = crate::rcon::exchange::later(Instant::now(), self.timeout);
                while let Some(bytes) = self.exchange.poll_transmit() {
                    let written = conn.write_packet(&bytes, deadline);
                    self.exchange.recycle(bytes);
                    if let Err(e) = written {
                        self.drop_conn();
                        self.exchange.disconnect();
                        return Err(write_error(e, self.timeout));
                    }
                }
            }
            if let Some(result) = self.pump_into(goal, &mut out) {
                return result;
            }
            if self.exchange.has_transmit() {
                // A reconnect queued the next login.
                continue;
            }
            let Some(conn) = self.conn.as_mut() else {
                return Err(Error::Closed {
                    when: "before the request could be sent",
                });
            };
            let Some(deadline) = self.exchange.poll_timeout() else {
                return Err(Error::Protocol("nothing to wait for".into()));
            };
            let wait_until = match &self.cancel {
                Some(flag) => {
                    if flag.swap(false, Ordering::SeqCst) {
                        self.close();
                        return Err(Error::Cancelled);
                    }
                    deadline.min(Instant::now() + CANCEL_POLL)
                }
                None => deadline,
            };
            match conn.read_before(&mut self.read_buf, wait_until) {
                Ok(0) => self.exchange.handle_closed(false, Instant::now()),
                Ok(n) => {
                    self.exchange
                        .handle_input(&self.read_buf[..n], Instant::now());
                    grow_if_filled(&mut self.read_buf, n);
                }
                Err(e) if e.kind() == std::io::ErrorKind::TimedOut => {
                    // A socket timeout may end a little before the instant asked for.
                    let now = Instant::now();
                    let now = if wait_until == deadline {
                        now.max(deadline)
                    } else {
                        now
                    };
                    self.exchange.handle_timeout(now);
                }
                Err(e)
                    if matches!(
                        e.kind(),
                        std::io::ErrorKind::ConnectionReset
                            | std::io::ErrorKind::ConnectionAborted
                            | std::io::ErrorKind::BrokenPipe
                    ) =>
                {
                    self.exchange.handle_closed(true, Instant::now());
                }
                Err(source) => {
                    self.drop_conn();
                    self.exchange.disconnect();
                    return Err(Error::io("while reading", source));
                }
            }
        }
    }
}

fn write_error(source: std::io::Error, timeout: Duration) -> Error {
    if TransportFailure::find(&source).is_none() && source.kind() == std::io::ErrorKind::TimedOut {
        Error::Timeout {
            phase: crate::error::Phase::Send,
            what: "sending",
            after: timeout,
        }
    } else {
        Error::io("while sending", source)
    }
}

impl Remote for Client {
    fn command_into(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()> {
        Client::command_into(self, command, out)
    }
    fn command_then_close(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()> {
        Client::command_then_close(self, command, out)
    }
    fn command_into_last(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()> {
        Client::command_into_last(self, command, out)
    }
    fn close(&mut self) {
        Client::close(self)
    }
    fn check_open(&mut self) -> bool {
        Client::check_open(self)
    }
    fn is_connected(&self) -> bool {
        Client::is_connected(self)
    }
    fn reconnect(&mut self) -> Result<()> {
        Client::reconnect(self)
    }
    fn server(&self) -> String {
        Client::server(self)
    }
    fn max_command_bytes(&self) -> usize {
        Client::max_command_bytes(self)
    }
    fn learned(&self) -> Option<Learned> {
        Client::learned(self)
    }
    fn set_cancel(&mut self, cancel: Option<Arc<AtomicBool>>) {
        Client::set_cancel(self, cancel)
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
}
