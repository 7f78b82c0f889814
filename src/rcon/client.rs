//! The RCON session: the [`Remote`] for RCON dialects, an [`RconMachine`] run by the engine's
//! one blocking [`Driver`] over a [`StreamLink`] (TCP or a tunnel), one command at a time.
//!
//! It holds no protocol decisions and no wait of its own: the exchange decides, the driver
//! writes what it asks for and reads until its next deadline, and hands its events on (output
//! to the caller, warnings, traces and what was learned to the [`Observer`]).

use std::sync::Arc;
use std::sync::atomic::AtomicBool;
use std::time::{Duration, Instant};

use crate::engine::Remote;
use crate::engine::driver::{Driver, Goal};
use crate::engine::{Ending, Machine};
use crate::error::Result;
use crate::rcon::exchange::Learned;
use crate::rcon::machine::RconMachine;
use crate::transport::Connector;
use crate::transport::link::{Link, StreamLink};

pub use crate::engine::{CANCEL_POLL, Direction, Observer, Password, Silent};
/// The settings of a [`Client`]: the one [`crate::engine::Options`] every engine takes.
pub type ClientOptions = crate::engine::Options;

pub use crate::rcon::exchange::{EndDetection, SMALL_MTU_COMMAND_BYTES, check_command};

/// A logged-in RCON session that reconnects when it has to.
pub struct Client {
    connector: Arc<dyn Connector>,
    driver: Driver<RconMachine>,
}

impl std::fmt::Debug for Client {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Client")
            .field("server", &self.connector.describe())
            .field("connected", &self.driver.is_connected())
            .field("method", &self.driver.machine.exchange().method())
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
        let driver = Driver::new(RconMachine::new(opts.clone(), password), &opts)
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
        self.driver.machine.exchange().config().max_command_bytes
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
        self.driver.machine.exchange().quiet_gap()
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
        if !self.driver.is_connected() || !self.driver.machine.exchange().is_ready() {
            self.reconnect()?;
        }
        let now = Instant::now();
        self.driver.machine.start_command(command, ending, now)?;
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
