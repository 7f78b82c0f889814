//! The one shape of a protocol machine, for every console (RCON, BattlEye, telnet, WebRCON), in
//! the spirit of quinn-proto's `Connection`: bytes (a chunk of a stream, a datagram, a WebSocket
//! frame) and clock readings go in; [`Action`]s (what to send, answers, server messages, traces,
//! notices, failures) and the next deadline ([`Machine::wake`]) come out. A machine never
//! touches a socket or sleeps: the blocking [`super::driver::Driver`] (and an event loop) move
//! its bytes.
//!
//! The console exchanges need only the first seven methods; what the RCON exchange needs beyond
//! them (command variants, closes it reads meaning into, learned facts, buffer reuse) are
//! methods with default bodies and [`Action`] variants the consoles never give.

use std::time::Instant;

use crate::error::{Error, Result};
use crate::rcon::exchange::{Learned, Traced};

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
    /// Send these bytes: one datagram (BattlEye), one text frame (WebRCON), one RCON packet or a
    /// chunk of a telnet stream; each with one write (a vanilla RCON server handles one packet
    /// per read).
    Send(Vec<u8>),
    /// The login succeeded (and, for RCON, the end-of-output probe is settled); commands may be
    /// given.
    LoggedIn,
    /// The pending command's answer, complete.
    Answer(String),
    /// A message the server sent on its own (chat, log line, event); never part of an answer.
    Message(String),
    /// What went over the wire, for `--trace`: the bytes are already masked (a password is
    /// never in them).
    Trace {
        /// Sent (true) or received.
        sent: bool,
        /// The bytes to show.
        bytes: Vec<u8>,
        /// What they are.
        what: String,
    },
    /// A one-line warning for the user.
    Warning(Notice),
    /// The exchange failed; the connection is no longer usable.
    Fail(Error),
    /// RCON: output bytes of the command under way (an answer may come in several packets);
    /// [`Action::Done`] ends it.
    Output(Vec<u8>),
    /// RCON: the command under way is complete. With `close`, the conversation on this
    /// connection is over (the server closed it, or will): drop it.
    Done {
        /// The connection is finished.
        close: bool,
    },
    /// RCON: what was learned about the server, worth saying once.
    Note(Notice),
    /// RCON: the end-of-output method for this server was settled or changed (`Some`: remember
    /// it) or turned out unusable (`None`: forget it).
    Learned(Option<Learned>),
    /// RCON: a packet went over the wire (only when the observer
    /// [wants packets](super::Observer::wants_packets)).
    Packet(Traced),
    /// RCON: close the connection, open a new one and call [`Machine::start`] (the probe needs a
    /// fresh connection after the server rejected a sentinel).
    Reconnect,
}

/// What a machine tells the user that is not an error, typed; its
/// [`Display`](std::fmt::Display) is the wording `rcon` prints.
#[derive(Debug, Clone, PartialEq, Eq)]
#[non_exhaustive]
pub enum Notice {
    /// BattlEye: the server answered a command with server messages (0x02) instead of a command
    /// answer, a known Arma Reforger behaviour; they are taken as the answer.
    AnswerAsMessages,
    /// WebRCON: a frame that is not WebRCON's JSON was ignored.
    NotWebRconJson {
        /// Why it could not be read.
        reason: String,
    },
    /// What the RCON exchange says (its own typed notices).
    Rcon(crate::rcon::notice::Notice),
}

impl std::fmt::Display for Notice {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Notice::AnswerAsMessages => f.write_str(
                "the server answered with server messages (0x02) instead of a command answer (a \
                 known Arma Reforger behaviour); taking them as the answer",
            ),
            Notice::NotWebRconJson { reason } => {
                write!(f, "ignored a WebRCON frame that is not its JSON: {reason}")
            }
            Notice::Rcon(n) => n.fmt(f),
        }
    }
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
