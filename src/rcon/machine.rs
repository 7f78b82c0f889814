//! The RCON [`Exchange`] as a [`Machine`], the shape every console shares: a thin wrapper that
//! holds the password for each login and turns the exchange's transmits and events into
//! [`Action`]s (transmits first, one packet per [`Action::Send`], as the exchange queued them).
//! The blocking driver ([`crate::engine::driver`]) and the fleet's event loop
//! ([`crate::fleet`]) both drive RCON through it; nothing of the exchange's logic is here.

use std::time::Instant;

use crate::engine::{Action, Ending, Machine, Notice, Options, Password};
use crate::error::{Error, Result};
use crate::rcon::exchange::{Event, Exchange, Learned};

/// An RCON conversation over a sequence of connections to one server.
#[derive(Debug)]
pub struct RconMachine {
    exchange: Exchange,
    password: Password,
    /// A command that could not be started, reported by the next [`Machine::poll`].
    refused: Option<Error>,
}

impl RconMachine {
    /// A conversation that logs in with `password` on each connection.
    pub fn new(opts: Options, password: Password) -> Self {
        RconMachine {
            exchange: Exchange::new(opts),
            password,
            refused: None,
        }
    }

    /// The exchange itself (what it learned, its quiet gap, its settings).
    pub fn exchange(&self) -> &Exchange {
        &self.exchange
    }

    /// Starts a command, `ending` saying what follows it (see [`Exchange::start_command`] and
    /// [`Exchange::start_last_command`]); an error leaves the connection as it was.
    pub fn start_command(&mut self, command: &str, ending: Ending, now: Instant) -> Result<()> {
        match ending {
            Ending::Normal => self.exchange.start_command(command, false, now),
            Ending::StopsServer => self.exchange.start_command(command, true, now),
            Ending::Last => self.exchange.start_last_command(command, now),
        }
    }
}

impl Machine for RconMachine {
    fn start(&mut self, now: Instant) {
        self.exchange.connected(self.password.expose(), now);
    }

    fn command(&mut self, command: &str, now: Instant) {
        self.command_with(command, Ending::Normal, now);
    }

    fn command_with(&mut self, command: &str, ending: Ending, now: Instant) {
        if let Err(e) = self.start_command(command, ending, now) {
            self.refused = Some(e);
        }
    }

    fn receive(&mut self, data: &[u8], now: Instant) {
        self.exchange.handle_input(data, now);
    }

    fn tick(&mut self, now: Instant) {
        self.exchange.handle_timeout(now);
    }

    fn poll(&mut self) -> Option<Action> {
        if let Some(e) = self.refused.take() {
            return Some(Action::Fail(e));
        }
        if let Some(packet) = self.exchange.poll_transmit() {
            return Some(Action::Send(packet));
        }
        Some(match self.exchange.poll_event()? {
            Event::Ready => Action::LoggedIn,
            Event::Output(bytes) => Action::Output(bytes),
            Event::Done => Action::Done {
                close: self.exchange.is_disconnected(),
            },
            Event::Failed(e) => Action::Fail(e),
            Event::Reconnect => Action::Reconnect,
            Event::Warning(n) => Action::Warning(Notice::Rcon(n)),
            Event::Note(n) => Action::Note(Notice::Rcon(n)),
            Event::Learned(l) => Action::Learned(Some(l)),
            Event::Forget => Action::Learned(None),
            Event::Traced(t) => Action::Packet(t),
        })
    }

    fn wake(&self) -> Option<Instant> {
        self.exchange.poll_timeout()
    }

    /// RCON reads its own meaning into a close (a stop command's end, a server that closes on
    /// sentinels, an incomplete answer).
    fn peer_closed(&mut self, reset: bool, now: Instant) -> bool {
        self.exchange.handle_closed(reset, now);
        true
    }

    fn disconnect(&mut self) {
        self.exchange.disconnect();
    }

    fn check_command(&self, command: &str) -> Result<()> {
        self.exchange.check_command(command)
    }

    fn learned(&self) -> Option<Learned> {
        self.exchange.learned()
    }

    fn recycle(&mut self, buf: Vec<u8>) {
        self.exchange.recycle(buf);
    }
}

#[cfg(test)]
mod tests {
    //! The RCON machine under the engine's driver, on an in-memory link: what goes over the
    //! wire, one write at a time.

    use super::*;
    use crate::engine::driver::{Driver, Goal};
    use crate::rcon::exchange::EndDetection;
    use crate::rcon::packet::{Decoder, encode};
    use crate::transport::link::memory::{FakeClock, MemoryLink, Read, Record};

    /// A logged-in driver of an RCON machine that uses vanilla's split rule (no probe), on a
    /// link that reads the login reply (id 1) and then `script`.
    fn vanilla(script: Vec<Read>) -> (Driver<RconMachine>, Record, FakeClock) {
        let clock = FakeClock::new();
        let mut reads = vec![Read::Data(1, encode(1, 2, b""))];
        reads.extend(script);
        let (link, record) = MemoryLink::new(reads, &clock);
        let opts = Options {
            end: EndDetection::Auto,
            ..Options::default()
        };
        let machine = RconMachine::new(opts.clone(), Password::new("pw"));
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
        d: &mut Driver<RconMachine>,
        clock: &FakeClock,
        command: &str,
        ending: Ending,
    ) -> Result<Vec<u8>> {
        d.machine
            .start_command(command, ending, clock.now())
            .unwrap();
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
