//! Every target's protocol as the one machine shape, [`crate::engine::Machine`]: the RCON
//! [`Exchange`], BattlEye, telnet and WebRCON as their consoles' machines, built
//! with the same settings as the blocking driver ([`crate::engine::driver`]) builds them. The
//! event loop drives them all through the trait, as that driver does; which protocol a target
//! speaks is decided here once, when its machine is made, and nowhere in the loop.
//!
//! The one difference in lifetime is hidden here too: the RCON machine outlives its
//! connections (it keeps what it learned about the server), while a console's machine is made
//! for each connection, as the consoles' driver opens one per connection. [`PerConnection`]
//! makes a fresh one at each [`Machine::start`] and drops it at [`Machine::disconnect`].

use std::time::Instant;

use crate::consoles::Protocol;
use crate::consoles::battleye::BattlEye;
use crate::consoles::telnet::Telnet;
use crate::consoles::webrcon::WebRconStream;
use crate::engine::{Action, Ending, Machine, Options, Password};
use crate::error::{Error, Result};
use crate::rcon::exchange::Exchange;

/// The machine for a target speaking `protocol`, with `config`'s settings, that logs in with
/// `password` to `address` (`host:port`, as a WebSocket's URL names it).
pub(super) fn new(
    protocol: Protocol,
    config: Options,
    password: Password,
    address: String,
) -> Box<dyn Machine> {
    match protocol {
        Protocol::Rcon => Box::new(Exchange::new(config, password)),
        console => Box::new(PerConnection {
            protocol: console,
            tracing: config.observer.wants_packets(),
            config,
            password,
            address,
            inner: None,
            refused: None,
        }),
    }
}

/// A console's machine, made afresh for each connection.
struct PerConnection {
    protocol: Protocol,
    config: Options,
    password: Password,
    address: String,
    tracing: bool,
    /// The current connection's machine.
    inner: Option<Box<dyn Machine>>,
    /// A command given with no connection, reported by the next [`Machine::poll`].
    refused: Option<Error>,
}

impl PerConnection {
    /// The machine for a new connection, as [`crate::consoles::Console`] makes it.
    fn make(&self) -> Box<dyn Machine> {
        let timeout = self.config.timeout;
        let password = self.password.expose();
        match self.protocol {
            Protocol::BattlEye => Box::new(BattlEye::new(
                password,
                crate::consoles::driver::battleye_timings(&self.config),
                self.tracing,
            )),
            Protocol::Telnet => Box::new(Telnet::new(
                password,
                timeout,
                crate::consoles::driver::idle_gap(&self.config),
                self.tracing,
            )),
            Protocol::WebRcon => Box::new(WebRconStream::new(
                &self.address,
                self.password.clone(),
                timeout,
                self.tracing,
            )),
            Protocol::Rcon => Box::new(Exchange::new(self.config.clone(), self.password.clone())),
        }
    }
}

impl Machine for PerConnection {
    fn start(&mut self, now: Instant) {
        let mut inner = self.make();
        inner.start(now);
        self.inner = Some(inner);
    }

    fn command(&mut self, command: &str, now: Instant) {
        self.command_with(command, Ending::Normal, now);
    }

    fn command_with(&mut self, command: &str, ending: Ending, now: Instant) {
        match self.inner.as_mut() {
            Some(inner) => inner.command_with(command, ending, now),
            None => {
                self.refused = Some(Error::Closed {
                    phase: crate::error::Phase::Send,
                    partial: false,
                    when: "before the command could be sent",
                })
            }
        }
    }

    fn receive(&mut self, data: &[u8], now: Instant) {
        if let Some(inner) = self.inner.as_mut() {
            inner.receive(data, now);
        }
    }

    fn tick(&mut self, now: Instant) {
        if let Some(inner) = self.inner.as_mut() {
            inner.tick(now);
        }
    }

    fn poll(&mut self) -> Option<Action> {
        if let Some(e) = self.refused.take() {
            return Some(Action::Fail(e));
        }
        self.inner.as_mut()?.poll()
    }

    fn wake(&self) -> Option<Instant> {
        self.inner.as_ref()?.wake()
    }

    /// Ask it before [`Machine::disconnect`], which drops the connection's machine.
    fn closed(&mut self) -> Option<String> {
        self.inner.as_mut()?.closed()
    }

    fn peer_closed(&mut self, reset: bool, now: Instant) -> bool {
        self.inner
            .as_mut()
            .is_some_and(|inner| inner.peer_closed(reset, now))
    }

    fn disconnect(&mut self) {
        if let Some(mut inner) = self.inner.take() {
            inner.disconnect();
        }
    }

    fn farewell(&mut self) -> Option<Vec<u8>> {
        self.inner.as_mut()?.farewell()
    }

    /// The consoles' limits are their driver's: the command's length and no NUL byte.
    fn check_command(&self, command: &str) -> Result<()> {
        crate::engine::check_command(command, self.config.max_command_bytes)
    }

    fn recycle(&mut self, buf: Vec<u8>) {
        if let Some(inner) = self.inner.as_mut() {
            inner.recycle(buf);
        }
    }
}
