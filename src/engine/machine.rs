//! The one shape of a protocol machine, for every console (RCON, BattlEye, telnet, WebRCON), in
//! the spirit of quinn-proto's `Connection`: bytes (a chunk of a stream, a datagram) and clock
//! readings go in; [`Action`]s (what to send, answers, server messages, traces,
//! notices, failures) and the next deadline ([`Machine::wake`]) come out. A machine never
//! touches a socket or sleeps: the blocking [`super::driver::Driver`] (and an event loop) move
//! its bytes.
//!
//! The actions are the engine's own vocabulary, the same for every protocol: an answer comes
//! out one way ([`Action::Output`] pieces, then [`Action::Done`]); what a machine learned and
//! what it tells the user are its own typed values, carried as they are ([`Learned`],
//! [`Notice`]); what went over the wire is a [`Traced`]. The methods beyond the first seven
//! (command variants, closes a machine reads meaning into, learned facts, buffer reuse) have
//! default bodies.

use std::any::Any;
use std::borrow::Cow;
use std::fmt;
use std::sync::Arc;
use std::time::Instant;

use super::{Direction, Protocol};
use crate::error::{Error, Result};

/// What comes after a command on its connection ([`Machine::command_with`]).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum Ending {
    /// More commands may follow.
    #[default]
    Normal,
    /// It stops the server: its answer ends at its first packet or the close, and the
    /// connection is closed afterwards (a connected RCON client keeps a vanilla server from
    /// shutting down cleanly).
    StopsServer,
    /// Nothing follows it on this connection, which is closed afterwards: a machine may end the
    /// answer by a step that also ends the connection.
    Last,
}

/// What a [`Machine`] asks its driver to do, in order.
#[derive(Debug)]
pub enum Action {
    /// Send these bytes: one datagram (BattlEye), one WebSocket frame (WebRCON), one RCON packet
    /// or a chunk of a telnet stream; each with one write (a vanilla RCON server handles one packet
    /// per read).
    Send(Vec<u8>),
    /// The login succeeded (and, for RCON, the end-of-output probe is settled); commands may be
    /// given.
    LoggedIn,
    /// Output bytes of the command under way (an answer may come in several pieces);
    /// [`Action::Done`] ends it. Nothing that belongs to the answer comes after that.
    Output(Vec<u8>),
    /// The command under way is complete. With `close`, the conversation on this connection
    /// is over (the server closed it, or will): drop it.
    Done {
        /// The connection is finished.
        close: bool,
    },
    /// A message the server sent on its own (chat, log line, event); never part of an answer.
    Message(String),
    /// What went over the wire, for `--trace` (only when the observer
    /// [wants packets](super::Observer::wants_packets)).
    Trace(Traced),
    /// A one-line warning for the user.
    Warning(Notice),
    /// What was learned about the server, worth saying once.
    Note(Notice),
    /// What was learned about the server was settled or changed (`Some`: remember it) or
    /// turned out unusable (`None`: forget it).
    Learned(Option<Learned>),
    /// The exchange failed; the connection is no longer usable.
    Fail(Error),
    /// Close the connection, open a new one and call [`Machine::start`] (RCON's probe needs a
    /// fresh connection after the server rejected a sentinel).
    Reconnect,
}

/// A value a machine hands on without the engine knowing its type: [`Learned`] and [`Notice`]
/// carry one, and whoever knows the type asks for it back.
pub trait Opaque: fmt::Debug + Any + Send + Sync {}
impl<T: fmt::Debug + Any + Send + Sync> Opaque for T {}

/// What a [`Notice`] carries: an [`Opaque`] value whose [`Display`](fmt::Display) is the
/// wording `rcon` prints.
pub trait Said: Opaque + fmt::Display {}
impl<T: Opaque + fmt::Display> Said for T {}

/// What a machine tells the user that is not an error: the machine's own typed value (RCON's
/// [`crate::rcon::notice::RconNotice`], a console's [`crate::consoles::ConsoleNotice`]),
/// carried as it is; its [`Display`](fmt::Display) is the wording `rcon` prints.
#[derive(Debug, Clone)]
pub struct Notice(Arc<dyn Said>);

impl Notice {
    /// Carries `said`.
    pub fn new(said: impl Said) -> Self {
        Notice(Arc::new(said))
    }

    /// The value carried, when it is a `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        let any: &dyn Any = &*self.0;
        any.downcast_ref()
    }
}

impl fmt::Display for Notice {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        self.0.fmt(f)
    }
}

/// What a machine learned about its server, to remember for the next session and give back in
/// [`super::Options::learned`]: the machine's own value (RCON's
/// [`crate::rcon::exchange::ServerFacts`]), carried as it is.
#[derive(Debug, Clone)]
pub struct Learned(Arc<dyn Opaque>);

impl Learned {
    /// Carries `value`.
    pub fn new(value: impl Opaque) -> Self {
        Learned(Arc::new(value))
    }

    /// The value carried, when it is a `T`.
    pub fn get<T: Any>(&self) -> Option<&T> {
        let any: &dyn Any = &*self.0;
        any.downcast_ref()
    }
}

/// What went over the wire, for a trace. A password is never in it.
#[derive(Debug, Clone)]
pub struct Traced {
    /// Which way it went.
    pub direction: Direction,
    /// The protocol, so that a trace can show the framing it knows (an RCON packet's header
    /// fields).
    pub protocol: Protocol,
    /// The bytes: one packet, datagram, frame or chunk of a stream (the framing alone when
    /// `hidden`).
    pub bytes: Vec<u8>,
    /// What they were, in context.
    pub what: Cow<'static, str>,
    /// A secret (the login's password) was left out of `bytes`.
    pub hidden: bool,
}

impl Traced {
    /// `bytes` that went `direction`, nothing hidden (the caller masks what it must).
    pub fn new(
        protocol: Protocol,
        direction: Direction,
        bytes: Vec<u8>,
        what: impl Into<Cow<'static, str>>,
    ) -> Self {
        Traced {
            direction,
            protocol,
            bytes,
            what: what.into(),
            hidden: false,
        }
    }
}

/// A machine's timer table, each timer due at its instant when it is set: when the machine
/// wants to be woken ([`Machine::wake`]), the earliest of them.
pub fn earliest<T>(timers: impl IntoIterator<Item = (T, Option<Instant>)>) -> Option<Instant> {
    timers.into_iter().filter_map(|(_, at)| at).min()
}

/// The timer a [`Machine::tick`] at `now` handles: the first in the table's order that is due.
pub fn first_due<T>(
    timers: impl IntoIterator<Item = (T, Option<Instant>)>,
    now: Instant,
) -> Option<T> {
    timers
        .into_iter()
        .find(|(_, at)| at.is_some_and(|at| at <= now))
        .map(|(timer, _)| timer)
}

/// A protocol's decisions, as data in and actions out: one sans-IO machine per connection (the
/// RCON one outlives its connections, to keep what it learned about the server).
pub trait Machine: Send {
    /// Begins the login on a fresh connection (queues the first packets).
    fn start(&mut self, now: Instant);
    /// Gives a command to run; only one is pending at a time.
    fn command(&mut self, command: &str, now: Instant);
    /// Bytes arrived from the server: one datagram or frame, or a chunk of a stream.
    fn receive(&mut self, data: &[u8], now: Instant);
    /// The clock moved on (the wake time passed, or nothing arrived).
    fn tick(&mut self, now: Instant);
    /// The next action, if any.
    fn poll(&mut self) -> Option<Action>;
    /// When the machine next needs a [`Machine::tick`], if ever.
    fn wake(&self) -> Option<Instant>;
    /// The server closed the connection while a command that stops it was under way: the
    /// answer so far, when the protocol has one (its answers end by a quiet gap, which a
    /// stopping server does not wait for). Asked only of machines that leave closes to the
    /// driver ([`Machine::peer_closed`] returns `false`).
    fn closed(&mut self) -> Option<String> {
        None
    }

    /// Gives a command with what follows it on the connection. The default treats every
    /// command alike (the driver closes the connection after a stopping or last command).
    fn command_with(&mut self, command: &str, ending: Ending, now: Instant) {
        let _ = ending;
        self.command(command, now);
    }
    /// The peer closed the connection (`reset`: with an error rather than an orderly close).
    /// `true` when the machine reads its own meaning into it (its actions say whether the
    /// answer ended or failed); `false` (the default) leaves it to the driver: a closed
    /// connection, or [`Machine::closed`]'s answer for a command that stops the server.
    fn peer_closed(&mut self, reset: bool, now: Instant) -> bool {
        let _ = (reset, now);
        false
    }
    /// The driver dropped the connection (a failure, a cancel, a close): the next command
    /// needs a new one.
    fn disconnect(&mut self) {}
    /// What to write, as a courtesy, before the driver closes the connection (a WebSocket's
    /// close frame), if anything.
    fn farewell(&mut self) -> Option<Vec<u8>> {
        None
    }
    /// Checks a command against the machine's limits before anything is sent.
    fn check_command(&self, command: &str) -> Result<()> {
        let _ = command;
        Ok(())
    }
    /// What was learned about the server, for next time (RCON).
    fn learned(&self) -> Option<Learned> {
        None
    }
    /// Gives a sent [`Action::Send`] buffer back for reuse (optional).
    fn recycle(&mut self, buf: Vec<u8>) {
        let _ = buf;
    }
}

impl<M: Machine + ?Sized> Machine for Box<M> {
    fn start(&mut self, now: Instant) {
        (**self).start(now)
    }
    fn command(&mut self, command: &str, now: Instant) {
        (**self).command(command, now)
    }
    fn receive(&mut self, data: &[u8], now: Instant) {
        (**self).receive(data, now)
    }
    fn tick(&mut self, now: Instant) {
        (**self).tick(now)
    }
    fn poll(&mut self) -> Option<Action> {
        (**self).poll()
    }
    fn wake(&self) -> Option<Instant> {
        (**self).wake()
    }
    fn closed(&mut self) -> Option<String> {
        (**self).closed()
    }
    fn command_with(&mut self, command: &str, ending: Ending, now: Instant) {
        (**self).command_with(command, ending, now)
    }
    fn peer_closed(&mut self, reset: bool, now: Instant) -> bool {
        (**self).peer_closed(reset, now)
    }
    fn disconnect(&mut self) {
        (**self).disconnect()
    }
    fn farewell(&mut self) -> Option<Vec<u8>> {
        (**self).farewell()
    }
    fn check_command(&self, command: &str) -> Result<()> {
        (**self).check_command(command)
    }
    fn learned(&self) -> Option<Learned> {
        (**self).learned()
    }
    fn recycle(&mut self, buf: Vec<u8>) {
        (**self).recycle(buf)
    }
}
