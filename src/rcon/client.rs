//! The RCON session: the [`Remote`] for RCON dialects, the [`Exchange`] run by the engine's one
//! blocking [`Driver`] over a [`StreamLink`] (TCP or a tunnel), one command at a time; and the
//! defaults of the one options type ([`ClientOptions`]), which are RCON's.
//!
//! It holds no protocol decisions and no wait of its own: the exchange decides, the driver
//! writes what it asks for and reads until its next deadline, and hands its events on (output
//! to the caller, warnings, traces and what was learned to the [`Observer`]).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::engine::driver::{Driver, Goal};
use crate::engine::{Ending, Learned, Machine, Remote};
use crate::error::Result;
use crate::rcon::exchange::Exchange;
use crate::rcon::packet::{DEFAULT_MAX_INCOMING, MAX_COMMAND_BYTES};
use crate::transport::Connector;
use crate::transport::link::{Link, StreamLink};

pub use crate::engine::{Direction, EndDetection, Observer, Password, Silent};
/// The settings of a [`Client`]: the one [`crate::engine::Options`] every engine takes.
pub type ClientOptions = crate::engine::Options;

pub use crate::rcon::exchange::{SMALL_MTU_COMMAND_BYTES, check_command};

/// RCON's defaults, for every engine: a 10 s timeout, the end of output learned or probed,
/// vanilla's command limit ([`MAX_COMMAND_BYTES`]) and 16 MiB for an incoming packet.
impl Default for ClientOptions {
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(10),
            end: EndDetection::Detect,
            idle_gap: None,
            probe_timeout: Duration::from_millis(750),
            max_command_bytes: MAX_COMMAND_BYTES,
            max_incoming: DEFAULT_MAX_INCOMING,
            any_reply_id: false,
            partial_on_idle: false,
            learned: None,
            observer: Arc::new(Silent),
            cancel: None,
        }
    }
}

/// A logged-in RCON session that reconnects when it has to.
pub struct Client {
    connector: Arc<dyn Connector>,
    driver: Driver<Exchange>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.connector.describe())
            .field("connected", &self.driver.is_connected())
            .field("method", &self.driver.machine.method())
            .finish_non_exhaustive()
    }
}

impl Client {
    /// Connects, logs in and settles the end-of-output method.
    pub fn connect(
        connector: Box<dyn Connector>,
        password: Password,
        opts: ClientOptions,
    ) -> Result<Self> {
        let connector: Arc<dyn Connector> = Arc::from(connector);
        let timeout = opts.timeout;
        let opener = {
            let connector = Arc::clone(&connector);
            Box::new(move || {
                let link: Box<dyn Link> = Box::new(StreamLink::new(connector.connect(timeout)?));
                Ok(link)
            })
        };
        let driver = Driver::new(Exchange::new(opts.clone(), password), &opts)
            .with_label(connector.describe())
            .with_opener(opener);
        let mut client = Self { connector, driver };
        client.reconnect()?;
        Ok(client)
    }

    /// Where this client is connected to, e.g. `localhost:25575`.
    pub fn server(&self) -> String {
        self.connector.describe()
    }

    /// Whether a connection is open (it may still have been closed by the peer unseen).
    pub fn is_connected(&self) -> bool {
        self.driver.is_connected()
    }

    /// The limits on commands this client sends.
    pub fn max_command_bytes(&self) -> usize {
        self.driver.machine.config().max_command_bytes
    }

    /// What is known about the server now, to remember for the next session (`None` when the
    /// method was forced or is not settled).
    pub fn learned(&self) -> Option<Learned> {
        self.driver.machine.learned()
    }

    /// Sets (or clears) the flag that abandons a wait (see [`ClientOptions::cancel`]).
    pub fn set_cancel(&mut self, cancel: Option<Arc<AtomicBool>>) {
        self.driver.cancel = cancel;
    }

    /// The quiet gap in force for this server.
    pub fn quiet_gap(&self) -> Duration {
        self.driver.machine.quiet_gap()
    }

    /// Closes the connection (the next command reconnects).
    pub fn close(&mut self) {
        self.driver.close();
    }

    /// Checks, waiting at most a millisecond, whether the server closed the connection since the
    /// last exchange (for example it stopped while an interactive session sat idle). A closed
    /// connection is dropped, so the next command reconnects instead of being sent into a dead
    /// socket; bytes that did arrive go to the exchange, which drops them as stale.
    pub fn check_open(&mut self) -> bool {
        self.driver.check_open()
    }

    /// Drops any connection and opens a new, logged-in one (probing if needed).
    pub fn reconnect(&mut self) -> Result<()> {
        self.close();
        self.driver.open()?;
        self.driver.drive(Goal::Ready, None)
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
    /// [`Exchange::start_last_command`](crate::rcon::exchange::Exchange::start_last_command)),
    /// which is closed afterwards in any case.
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
        self.driver.machine.check_command(command)?;
        if !self.driver.is_connected() || !self.driver.machine.is_ready() {
            self.reconnect()?;
        }
        self.driver
            .machine
            .command_with(command, ending, Instant::now());
        let goal = Goal::Answer {
            stops_server: ending == Ending::StopsServer,
        };
        let result = self.driver.drive(goal, Some(out));
        if ending != Ending::Normal {
            self.close();
        }
        result
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
    //! The RCON exchange under the engine's driver, on an in-memory link: what goes over the
    //! wire, one write at a time.

    use super::*;
    use crate::engine::Options;
    use crate::error::Error;
    use crate::rcon::packet::{Decoder, encode};
    use crate::transport::link::memory::{FakeClock, MemoryLink, Read, Record};

    /// A logged-in driver of an RCON machine that uses vanilla's split rule (no probe), on a
    /// link that reads the login reply (id 1) and then `script`.
    fn vanilla(script: Vec<Read>) -> (Driver<Exchange>, Record, FakeClock) {
        let clock = FakeClock::new();
        let mut reads = vec![Read::Data(1, encode(1, 2, b""))];
        reads.extend(script);
        let (link, record) = MemoryLink::new(reads, &clock);
        let opts = Options {
            end: EndDetection::Auto,
            ..Options::default()
        };
        let machine = Exchange::new(opts.clone(), Password::new("pw"));
        let mut driver = Driver::new(machine, &opts).with_clock(clock.source());
        driver.attach(Box::new(link));
        driver.drive(Goal::Ready, None).expect("logged in");
        (driver, record, clock)
    }

    /// Every write, as the (id, type, body) of the one whole packet it must hold.
    fn packets(record: &Record) -> Vec<(i32, i32, Vec<u8>)> {
        record
            .writes
            .lock()
            .unwrap()
            .iter()
            .map(|w| {
                let mut d = Decoder::default();
                d.feed(w);
                let p = d.next_packet().unwrap().expect("a whole packet per write");
                assert_eq!(d.buffered(), 0, "two packets in one write: {w:?}");
                (p.id, p.kind, p.body)
            })
            .collect()
    }

    /// Starts `command` and drives the link until its answer ends: what it printed, or the error.
    fn answer(
        d: &mut Driver<Exchange>,
        clock: &FakeClock,
        command: &str,
        ending: Ending,
    ) -> Result<Vec<u8>> {
        d.machine.command_with(command, ending, clock.now());
        let mut out = Vec::new();
        let stops_server = ending == Ending::StopsServer;
        d.drive(Goal::Answer { stops_server }, Some(&mut out))?;
        Ok(out)
    }

    #[test]
    fn a_short_answer_is_one_round_trip_one_packet_per_write() {
        let (mut d, record, clock) = vanilla(vec![Read::Data(2, encode(2, 0, b"There are 0"))]);
        let out = answer(&mut d, &clock, "list", Ending::Normal).unwrap();
        assert_eq!(out, b"There are 0");
        assert_eq!(
            packets(&record),
            [(1, 3, b"pw".to_vec()), (2, 2, b"list".to_vec())]
        );
        assert!(d.is_connected());
    }

    #[test]
    fn the_sentinel_after_a_full_fragment_goes_in_a_write_of_its_own() {
        let full = vec![b'a'; 4096];
        let (mut d, record, clock) = vanilla(vec![
            Read::Data(2, encode(2, 0, &full)),
            Read::Data(1, encode(2, 0, b"rest")),
            Read::Data(1, encode(-2, 0, b"Unknown request 0")),
        ]);
        let out = answer(&mut d, &clock, "chars 4100", Ending::Normal).unwrap();
        assert_eq!(out.len(), 4100);
        let sent = packets(&record);
        assert_eq!(sent.len(), 3, "{sent:?}");
        assert_eq!((sent[2].0, sent[2].1), (-2, 0), "the sentinel, alone");
    }

    #[test]
    fn a_command_that_stops_the_server_ends_at_its_first_packet_and_drops_the_link() {
        let (mut d, record, clock) = vanilla(vec![Read::Data(3, encode(2, 0, b"Stopping"))]);
        let out = answer(&mut d, &clock, "stop", Ending::StopsServer).unwrap();
        assert_eq!(out, b"Stopping");
        assert!(!d.is_connected());
        assert!(*record.closed.lock().unwrap());
    }

    #[test]
    fn a_close_before_the_answer_is_the_exchanges_error_not_the_drivers() {
        let (mut d, _record, clock) = vanilla(vec![Read::Close]);
        let err = answer(&mut d, &clock, "list", Ending::Normal).unwrap_err();
        assert!(
            matches!(
                err,
                Error::Closed {
                    phase: crate::error::Phase::Answer,
                    partial: false,
                    when: "before answering; the command may or may not have run"
                }
            ),
            "{err}"
        );
        assert!(!d.is_connected());
    }

    #[test]
    fn a_refused_command_fails_through_poll() {
        let (mut d, _record, clock) = vanilla(vec![]);
        d.machine.command(&"x".repeat(5000), clock.now());
        let err = d.drive(
            Goal::Answer {
                stops_server: false,
            },
            None,
        );
        assert!(matches!(err, Err(Error::CommandTooLong { .. })), "{err:?}");
    }
}
