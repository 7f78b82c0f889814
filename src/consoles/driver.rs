//! The consoles' session: BattlEye RCon, WebRCON and telnet machines run by the engine's one
//! blocking [`Driver`] over a UDP socket ([`UdpLink`]) or a
//! [`Transport`](crate::transport::Transport) ([`StreamLink`]; WebRCON's machine does its own
//! WebSocket), offered as a [`Remote`]. With live messages on (the console), a background thread keeps reading while no command runs, so server messages
//! show as they arrive and BattlEye's acks and keep-alives go out on time.

use std::io;
use std::net::{ToSocketAddrs, UdpSocket};
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

use super::battleye::{self, BattlEye};
use super::telnet::Telnet;
use super::webrcon::WebRconStream;
use super::{MessageSink, Protocol, Remote};
use crate::engine::driver::{Driver, Goal};
use crate::engine::{Ending, Machine, Options as ClientOptions, Password};
use crate::error::{Error, Result};
use crate::transport::link::{Link, StreamLink, UdpLink};
use crate::transport::{Connector, Waker};

/// BattlEye's retransmit and keep-alive intervals, for every session of the process.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tuning {
    /// A command whose answer has not come for this long is sent again (default 1 s).
    pub retransmit: Duration,
    /// An empty command goes out when nothing was sent for this long (default 30 s).
    pub keepalive: Duration,
}

impl Default for Tuning {
    fn default() -> Self {
        let d = battleye::Timings::default();
        Tuning {
            retransmit: d.retransmit,
            keepalive: d.keepalive,
        }
    }
}

static TUNING: std::sync::OnceLock<Tuning> = std::sync::OnceLock::new();

/// Sets the BattlEye intervals for every later session (the `rcon` binary takes them from
/// `RCON_BATTLEYE_RETRANSMIT` / `RCON_BATTLEYE_KEEPALIVE`). Only the first call counts.
pub fn set_tuning(tuning: Tuning) {
    let _ = TUNING.set(tuning);
}

/// The BattlEye clocks: the timeout and idle gap of `opts`, the intervals of [`set_tuning`].
pub(crate) fn battleye_timings(opts: &ClientOptions) -> battleye::Timings {
    let t = TUNING.get().copied().unwrap_or_default();
    battleye::Timings {
        timeout: opts.timeout,
        idle_gap: idle_gap(opts),
        retransmit: t.retransmit,
        keepalive: t.keepalive,
    }
}

/// The silence that ends an answer where the protocol marks no end: `--idle-gap`, else 250 ms.
pub(crate) fn idle_gap(opts: &ClientOptions) -> Duration {
    opts.idle_gap
        .unwrap_or(battleye::Timings::default().idle_gap)
}

/// One connection: the machine, its link and where its actions go.
type Engine = Driver<Box<dyn Machine>>;

/// A logged-in session of BattlEye RCon, WebRCON or telnet: the [`Remote`] for those dialects.
pub struct Console {
    protocol: Protocol,
    connector: Arc<dyn Connector>,
    password: Password,
    opts: ClientOptions,
    engine: Arc<Mutex<Option<Engine>>>,
    pump_state: Arc<PumpState>,
    sink: Option<MessageSink>,
    pump: Option<JoinHandle<()>>,
    /// Ends the background reader's wait in the link, so a command gets the engine at once
    /// (only while the reader runs).
    waker: Option<Waker>,
}

/// What the background reader waits on, with no polling: the engine held by the application
/// (`busy`, a command or a setting), a change of engine (`generation`, after a hold, which may
/// have reconnected), and the end.
#[derive(Default)]
struct PumpState {
    flags: Mutex<PumpFlags>,
    wake: std::sync::Condvar,
}

#[derive(Default)]
struct PumpFlags {
    /// How many holds of the engine are under way.
    busy: u32,
    generation: u64,
    stop: bool,
    /// The engine's link can be woken: the reader waits in it until the machine's next
    /// deadline; otherwise in slices of [`UNWAKEABLE_SLICE`].
    wakeable: bool,
}

/// How long the background reader waits in a link that cannot be woken (a transport of the
/// embedding program's that has no [`Transport::waker`](crate::transport::Transport::waker))
/// before it lets a command in.
const UNWAKEABLE_SLICE: Duration = Duration::from_millis(50);

/// How long the background reader waits in a link that can be woken, at most, before it looks
/// at its flags again (a command wakes it long before).
const WAKEABLE_SLICE: Duration = Duration::from_secs(3600);

impl PumpState {
    fn update(&self, f: impl FnOnce(&mut PumpFlags)) {
        f(&mut self.flags.lock().unwrap_or_else(|p| p.into_inner()));
        self.wake.notify_all();
    }
}

/// The application's hold on the engine: the background reader is out of the way until it
/// ends.
struct Busy(Arc<PumpState>);

impl Drop for Busy {
    fn drop(&mut self) {
        self.0.update(|f| {
            f.busy -= 1;
            f.generation += 1;
        });
    }
}

impl std::fmt::Debug for Console {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Console")
            .field("protocol", &self.protocol)
            .field("server", &self.connector.describe())
            .finish_non_exhaustive()
    }
}

impl Console {
    /// Connects and logs in.
    pub fn connect(
        protocol: Protocol,
        connector: Box<dyn Connector>,
        password: Password,
        opts: ClientOptions,
    ) -> Result<Console> {
        let mut console = Console {
            protocol,
            connector: Arc::from(connector),
            password,
            opts,
            engine: Arc::new(Mutex::new(None)),
            pump_state: Arc::default(),
            sink: None,
            pump: None,
            waker: None,
        };
        console.reconnect()?;
        // BattlEye drops a client silent for 45 s: keep it logged in between commands too (a
        // batch --delay, a pause in the console), not only while one runs.
        if protocol == Protocol::BattlEye {
            console.start_pump();
        }
        Ok(console)
    }

    fn open(&self) -> Result<Engine> {
        let tracing = self.opts.observer.wants_packets();
        let timeout = self.opts.timeout;
        let (ex, link): (Box<dyn Machine>, Box<dyn Link>) = match self.protocol {
            Protocol::BattlEye => {
                let target = self.connector.describe();
                let addr = target
                    .to_socket_addrs()
                    .map_err(|source| Error::Resolve {
                        host: target.clone(),
                        source,
                    })?
                    .next()
                    .ok_or_else(|| Error::Resolve {
                        host: target.clone(),
                        source: io::Error::new(io::ErrorKind::NotFound, "no address"),
                    })?;
                let local = if addr.is_ipv4() {
                    "0.0.0.0:0"
                } else {
                    "[::]:0"
                };
                let link = UdpSocket::bind(local)
                    .and_then(|s| s.connect(addr).map(|()| s))
                    .and_then(|s| UdpLink::new(s, battleye::MAX_DATAGRAM))
                    .map_err(|source| Error::Connect {
                        addr: addr.to_string(),
                        source,
                    })?;
                (
                    Box::new(BattlEye::new(
                        self.password.expose(),
                        battleye_timings(&self.opts),
                        tracing,
                    )),
                    Box::new(link),
                )
            }
            Protocol::Telnet => {
                let transport = self.connector.connect(timeout)?;
                (
                    Box::new(Telnet::new(
                        self.password.expose(),
                        timeout,
                        idle_gap(&self.opts),
                        tracing,
                    )),
                    Box::new(StreamLink::new(transport)),
                )
            }
            Protocol::WebRcon => {
                let transport = self.connector.connect(timeout)?;
                let address = self.connector.address();
                let password = self.password.clone();
                (
                    Box::new(WebRconStream::new(&address, password, timeout, tracing)),
                    Box::new(StreamLink::new(transport)),
                )
            }
            Protocol::Rcon => {
                return Err(Error::Protocol(
                    "RCON runs on the RCON client, not a console driver".into(),
                ));
            }
        };
        let mut engine = Driver::new(ex, &self.opts);
        engine.sink = self.sink.clone();
        engine.attach(link);
        Ok(engine)
    }

    /// Runs one command; `stopping`: it stops the server, so a close ends its answer.
    fn run(&mut self, command: &str, out: &mut Vec<u8>, stopping: bool) -> Result<()> {
        crate::engine::check_command(command, self.opts.max_command_bytes)?;
        self.with_engine(|e| {
            let ending = if stopping {
                Ending::StopsServer
            } else {
                Ending::Normal
            };
            e.machine.command_with(command, ending, Instant::now());
            e.drive(
                Goal::Answer {
                    stops_server: stopping,
                },
                Some(out),
            )
        })
    }

    /// Holds the background reader off (waking it out of its wait in the link) until the
    /// returned hold ends.
    fn busy(&self) -> Busy {
        self.pump_state.update(|f| f.busy += 1);
        if let Some(wake) = &self.waker {
            wake();
        }
        Busy(Arc::clone(&self.pump_state))
    }

    /// The engine, once the background reader let go of it (hold [`Console::busy`] first).
    fn lock(&self) -> std::sync::MutexGuard<'_, Option<Engine>> {
        self.engine.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs `f` on the live engine, with the background reader held off.
    fn with_engine<T>(&mut self, f: impl FnOnce(&mut Engine) -> Result<T>) -> Result<T> {
        let _busy = self.busy();
        if self.lock().as_ref().is_none_or(|e| !e.is_connected()) {
            self.reconnect()?;
        }
        let mut guard = self.lock();
        let engine = guard.as_mut().ok_or(Error::Closed {
            phase: crate::error::Phase::Send,
            partial: false,
            when: "before the command could be sent",
        })?;
        f(engine)
    }

    fn start_pump(&mut self) {
        if self.pump.is_some() {
            return;
        }
        let waker = self.lock().as_mut().and_then(|e| e.waker());
        self.waker = waker;
        let wakeable = self.waker.is_some();
        self.pump_state.update(|f| f.wakeable = wakeable);
        let (engine, state) = (Arc::clone(&self.engine), Arc::clone(&self.pump_state));
        let handle = std::thread::spawn(move || {
            let mut seen = None;
            loop {
                {
                    // While a command runs, or after the engine died until a command brings a
                    // new one, sleep until told (no polling).
                    let flags = state.flags.lock().unwrap_or_else(|p| p.into_inner());
                    let flags = state
                        .wake
                        .wait_while(flags, |f| {
                            !f.stop && (f.busy > 0 || seen == Some(f.generation))
                        })
                        .unwrap_or_else(|p| p.into_inner());
                    if flags.stop {
                        return;
                    }
                    seen = None;
                    let (generation, wakeable) = (flags.generation, flags.wakeable);
                    drop(flags);
                    let mut guard = engine.lock().unwrap_or_else(|p| p.into_inner());
                    match guard.as_mut() {
                        Some(e) if e.is_connected() => {
                            // Reads what arrives and sends the keep-alive when it is due, in
                            // the link's wait, until a command wakes it (or, on a link that
                            // cannot be woken, for a slice a command waits at most).
                            let slice = if wakeable {
                                WAKEABLE_SLICE
                            } else {
                                UNWAKEABLE_SLICE
                            };
                            let _ = e.drive(Goal::Until(Instant::now() + slice), None);
                        }
                        _ => seen = Some(generation),
                    }
                }
            }
        });
        self.pump = Some(handle);
    }
}

impl Drop for Console {
    fn drop(&mut self) {
        if let Some(handle) = self.pump.take() {
            self.pump_state.update(|f| f.stop = true);
            if let Some(wake) = &self.waker {
                wake();
            }
            let _ = handle.join();
        }
        self.close();
    }
}

impl Remote for Console {
    fn command_into(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()> {
        self.run(command, out, false)
    }

    fn command_then_close(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()> {
        let result = self.run(command, out, true);
        self.close();
        result
    }

    fn close(&mut self) {
        let _busy = self.busy();
        if let Some(mut e) = self.lock().take() {
            e.close();
        }
    }

    fn check_open(&mut self) -> bool {
        let _busy = self.busy();
        self.lock().as_ref().is_some_and(|e| e.is_connected())
    }

    fn is_connected(&self) -> bool {
        let _busy = self.busy();
        self.lock().is_some()
    }

    fn reconnect(&mut self) -> Result<()> {
        self.close();
        let mut engine = self.open()?;
        engine.drive(Goal::Ready, None)?;
        // The reader waits in the new link: a command must be able to wake it there.
        let waker = if self.pump.is_some() {
            engine.waker()
        } else {
            None
        };
        let _busy = self.busy();
        *self.lock() = Some(engine);
        self.waker = waker;
        let wakeable = self.waker.is_some();
        self.pump_state.update(|f| f.wakeable = wakeable);
        Ok(())
    }

    fn server(&self) -> String {
        self.connector.describe()
    }

    fn max_command_bytes(&self) -> usize {
        self.opts.max_command_bytes
    }

    fn set_cancel(&mut self, cancel: Option<Arc<AtomicBool>>) {
        self.opts.cancel = cancel.clone();
        let _busy = self.busy();
        if let Some(e) = self.lock().as_mut() {
            e.cancel = cancel;
        }
    }

    fn set_messages(&mut self, sink: MessageSink, live: bool) {
        self.sink = Some(Arc::clone(&sink));
        {
            let _busy = self.busy();
            if let Some(e) = self.lock().as_mut() {
                e.sink = Some(sink);
            }
        }
        if live {
            self.start_pump();
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    use crate::transport::link::memory::{FakeClock, MemoryLink, Read};

    /// Telnet under the engine's driver on an in-memory link: the login, then an answer that
    /// ends by the idle gap on the fake clock (no real wait), with a log line that arrives
    /// meanwhile handed to the sink, not the answer.
    #[test]
    fn a_telnet_answer_ends_by_its_idle_gap_on_the_fake_clock() {
        let clock = FakeClock::new();
        let (link, record) = MemoryLink::new(
            vec![
                Read::Data(1, b"Please enter password:\r\n".to_vec()),
                Read::Data(1, b"Logon successful.\r\n".to_vec()),
                Read::Data(5, b"Game version: V 1.0\r\n".to_vec()),
                Read::Data(
                    5,
                    b"2026-12-02T01:30:00 12.345 INF Player joined\r\n".to_vec(),
                ),
                Read::Silence,
            ],
            &clock,
        );
        let gap = Duration::from_millis(250);
        let opts = ClientOptions::default();
        let machine: Box<dyn Machine> = Box::new(Telnet::new("pw", opts.timeout, gap, false));
        let messages = Arc::new(Mutex::new(Vec::new()));
        let mut engine = Driver::new(machine, &opts).with_clock(clock.source());
        engine.sink = Some({
            let messages = Arc::clone(&messages);
            Arc::new(move |m: &str| messages.lock().unwrap().push(m.to_string()))
        });
        engine.attach(Box::new(link));
        engine.drive(Goal::Ready, None).unwrap();
        let sent_at = clock.now();
        engine.machine.command("version", sent_at);
        let mut out = Vec::new();
        let goal = Goal::Answer {
            stops_server: false,
        };
        engine.drive(goal, Some(&mut out)).unwrap();
        assert_eq!(String::from_utf8(out).unwrap(), "Game version: V 1.0");
        assert_eq!(
            *messages.lock().unwrap(),
            ["2026-12-02T01:30:00 12.345 INF Player joined"]
        );
        let writes = record.writes.lock().unwrap().clone();
        assert_eq!(writes, [b"pw\r\n".to_vec(), b"version\r\n".to_vec()]);
        // The answer's last line came 5 ms after the command: the gap ran from there.
        assert_eq!(clock.now(), sent_at + Duration::from_millis(5) + gap);
    }
}
