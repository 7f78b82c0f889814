//! `--remote` as one more machine on the fleet's event loop ([`rconsole::fleet`]): the remote
//! protocol (docs/remote.md) over the pipes of `ssh HOST rcon --remote-serve`, a
//! [`Tunnel::command`] the loop starts and polls like any tunnel, so several servers, `--follow`
//! and the timed runs take `--remote` servers with every other target, with no thread per
//! server. The handshake (`hello`, `settings`, `ready`) is its login; then one command at a
//! time (the remote side keeps going after a failed one: the local policy decides), a
//! `heartbeat` whenever it has sent nothing for [`HEARTBEAT`], and the remote side's failures
//! as the library's errors of the same exit status.

use std::collections::VecDeque;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use rconsole::Error;
use rconsole::engine::{Action, Ending, Machine};
use rconsole::fleet::{FarEnd, Tunnel};

use crate::app::exit::Exit;
use crate::app::print::stderr;
use crate::app::remote::link::{HEARTBEAT, Starter, exit_from_code, other_version, start_failure};
use crate::app::remote::proto::{self, Frame, PROTOCOL};
use crate::app::resolve::settings::Settings;

/// Where the conversation is; each state keeps its own deadline.
enum State {
    /// No connection (before [`Machine::start`], after a failure or a close).
    Down,
    /// Waiting for the remote side's `hello` (a shell's start-up output before it is skipped).
    Hello { until: Instant },
    /// `hello` and `settings` sent, waiting for `ready`.
    Settings { until: Instant },
    /// Ready, no command under way; a heartbeat is due at `beat`.
    Idle { beat: Instant },
    /// The command `id` is under way.
    Command { id: u64, beat: Instant },
}

/// The remote protocol's client side, sans I/O.
pub struct RemoteMachine {
    state: State,
    /// The `settings` frame (it holds the password: it goes only into the channel).
    settings: Frame,
    program: String,
    via: String,
    /// How long the start and the handshake may take.
    limit: Duration,
    /// The server's `--timeout` (for the errors that name it).
    timeout: Duration,
    max: usize,
    next_id: u64,
    /// A line not ended yet.
    inbox: Vec<u8>,
    actions: VecDeque<Action>,
    /// The remote side said `hello` on this connection: an exit after it is no missing program.
    greeted: Arc<AtomicBool>,
}

/// `--remote` for `settings` on the event loop: the ssh child to start and the machine to
/// speak over its pipes.
pub fn looped(settings: &Settings, password: &str) -> anyhow::Result<(Tunnel, RemoteMachine)> {
    // The local side applies --delay and --keep-going; the remote side runs what it gets.
    let starter = Starter::new(settings, password, true, None, true)?;
    if settings.remote_install {
        starter.install_first()?;
    }
    let (argv, program) = starter.command_line();
    let greeted = Arc::new(AtomicBool::new(false));
    let via = starter.via().to_string();
    let far_end = RemoteEnd {
        greeted: Arc::clone(&greeted),
        via: via.clone(),
        program: program.clone(),
    };
    let tunnel = Tunnel::command(argv, &settings.target(), &via, Arc::new(far_end));
    let machine = RemoteMachine {
        state: State::Down,
        settings: starter.settings_frame().clone(),
        program,
        via,
        limit: starter.limit(),
        timeout: settings.timeout.value,
        max: settings.dialect.value.dialect().max_command_bytes,
        next_id: 1,
        inbox: Vec::new(),
        actions: VecDeque::new(),
        greeted,
    };
    Ok((tunnel, machine))
}

/// The ssh child and the remote side behind it, as the loop's tunnel reads them.
struct RemoteEnd {
    greeted: Arc<AtomicBool>,
    via: String,
    program: String,
}

impl FarEnd for RemoteEnd {
    /// Before its `hello`: ssh failed (exit 9), or the program there cannot serve (exit 10,
    /// saying what to install); after it, the tunnel's usual wording.
    fn failure(&self, code: Option<i32>, last: Option<&str>) -> Option<Error> {
        if self.greeted.load(Ordering::SeqCst) {
            return None;
        }
        Some(match start_failure(&self.via, &self.program, code, last) {
            Ok((_, message)) => Error::Remote(message),
            Err(message) => Error::Transport(message),
        })
    }

    /// The remote side's warnings (a slow server, a learned method) are the user's.
    fn said(&self, line: &str) {
        if line.starts_with("rcon: warning:") {
            stderr!("{line}");
        }
    }
}

impl RemoteMachine {
    fn send(&mut self, frame: &Frame, now: Instant) {
        let mut bytes = Vec::new();
        // A frame always serializes (no maps with non-string keys).
        let _ = proto::write(&mut bytes, frame);
        self.actions.push_back(Action::Send(bytes));
        if let State::Idle { beat } | State::Command { beat, .. } = &mut self.state {
            *beat = now + HEARTBEAT;
        }
    }

    fn fail(&mut self, error: Error) {
        self.state = State::Down;
        self.actions.push_back(Action::Fail(error));
    }

    /// The remote side's failure `message` with exit status `exit` (its code).
    fn failed(&mut self, exit: Option<u8>, message: String) {
        let error = error_from(exit.map(exit_from_code), message, self.timeout);
        self.fail(error);
    }

    /// One line from the remote side.
    fn line(&mut self, line: &[u8], now: Instant) {
        let frame = proto::parse(line);
        match (&self.state, frame) {
            // A shell start-up file may print before the program starts, or between.
            (State::Hello { .. } | State::Settings { .. }, Err(_)) => {}
            (State::Hello { until }, Ok(Frame::Hello { protocol, .. })) if protocol == PROTOCOL => {
                let until = *until;
                self.greeted.store(true, Ordering::SeqCst);
                self.send(&Frame::hello(), now);
                let settings = self.settings.clone();
                self.send(&settings, now);
                self.state = State::Settings { until };
            }
            (State::Hello { .. }, Ok(Frame::Hello { protocol, version })) => {
                let (_, message) = other_version(&self.via, &self.program, protocol, &version);
                self.fail(Error::Remote(message));
            }
            (State::Hello { .. }, Ok(_)) => self.fail(Error::Remote(format!(
                "the remote rcon ({}) did not start with a hello frame",
                self.program
            ))),
            (State::Settings { .. }, Ok(Frame::Ready)) => {
                self.state = State::Idle {
                    beat: now + HEARTBEAT,
                };
                self.actions.push_back(Action::LoggedIn);
            }
            (State::Settings { .. }, Ok(Frame::Error { exit, message })) => {
                let message = format!("the remote rcon on {}: {message}", self.via);
                self.failed(Some(exit), message);
            }
            (State::Settings { .. }, Ok(_)) => self.fail(Error::Remote(
                "the remote rcon answered the settings with something else".into(),
            )),
            (_, Err(e)) => self.fail(Error::Transport(format!("the remote rcon: {e}"))),
            (
                State::Command { id, beat },
                Ok(Frame::Answer {
                    id: answered,
                    output,
                    parse_error,
                    error,
                    exit,
                    ..
                }),
            ) if answered == *id => {
                let beat = *beat;
                if !output.is_empty() {
                    self.actions.push_back(Action::Output(output.into_bytes()));
                }
                match error {
                    // The local policy decides about parse errors, from the output.
                    Some(message) if !parse_error => self.failed(exit, message),
                    _ => {
                        self.state = State::Idle { beat };
                        self.actions.push_back(Action::Done { close: false });
                    }
                }
            }
            (State::Command { id, .. }, Ok(Frame::Skipped { id: skipped })) if skipped == *id => {
                self.fail(Error::Transport(
                    "the remote rcon skipped the command".into(),
                ));
            }
            (_, Ok(Frame::Error { exit, message })) => self.failed(Some(exit), message),
            _ => {}
        }
    }
}

impl Machine for RemoteMachine {
    fn start(&mut self, now: Instant) {
        self.inbox.clear();
        self.actions.clear();
        self.greeted.store(false, Ordering::SeqCst);
        self.state = State::Hello {
            until: now + self.limit,
        };
    }

    fn command(&mut self, command: &str, now: Instant) {
        self.command_with(command, Ending::Normal, now);
    }

    fn command_with(&mut self, command: &str, ending: Ending, now: Instant) {
        let State::Idle { beat } = self.state else {
            return self.fail(Error::Closed {
                phase: rconsole::Phase::Send,
                partial: false,
                when: "before the command could be sent",
            });
        };
        let id = self.next_id;
        self.next_id += 1;
        self.state = State::Command { id, beat };
        let frame = Frame::Command {
            id,
            text: command.to_string(),
            line: None,
            last: ending == Ending::Last,
            prefix: None,
        };
        self.send(&frame, now);
    }

    fn receive(&mut self, data: &[u8], now: Instant) {
        self.inbox.extend_from_slice(data);
        let mut start = 0;
        while let Some(end) = self.inbox[start..].iter().position(|&b| b == b'\n') {
            let line = self.inbox[start..start + end].trim_ascii().to_vec();
            start += end + 1;
            if !line.is_empty() {
                self.line(&line, now);
            }
            if matches!(self.state, State::Down) {
                self.inbox.clear();
                return;
            }
        }
        self.inbox.drain(..start);
        if self.inbox.len() > proto::MAX_FRAME_BYTES {
            self.inbox.clear();
            self.fail(Error::Transport(
                "the remote rcon: a frame is over the size limit".into(),
            ));
        }
    }

    fn tick(&mut self, now: Instant) {
        match self.state {
            State::Hello { until } | State::Settings { until } if now >= until => {
                self.fail(Error::Timeout {
                    phase: rconsole::Phase::Login,
                    what: "waiting for the remote rcon to start",
                    after: self.limit,
                })
            }
            State::Idle { beat } | State::Command { beat, .. } if now >= beat => {
                self.send(&Frame::Heartbeat, now)
            }
            _ => {}
        }
    }

    fn poll(&mut self) -> Option<Action> {
        self.actions.pop_front()
    }

    fn wake(&self) -> Option<Instant> {
        match self.state {
            State::Down => None,
            State::Hello { until } | State::Settings { until } => Some(until),
            State::Idle { beat } | State::Command { beat, .. } => Some(beat),
        }
    }

    fn disconnect(&mut self) {
        self.state = State::Down;
        self.inbox.clear();
    }

    fn check_command(&self, command: &str) -> rconsole::Result<()> {
        rconsole::rcon::client::check_command(command, self.max)
    }
}

/// The remote side's error message and exit status as the library's error of the same class,
/// displayed as the remote side displayed it where the class allows.
pub(crate) fn error_from(exit: Option<Exit>, message: String, timeout: Duration) -> Error {
    let leak = |s: &str| -> &'static str { Box::leak(s.to_string().into_boxed_str()) };
    match exit {
        Some(Exit::Connect) => match message
            .strip_prefix("cannot connect to ")
            .and_then(|m| m.split_once(": "))
        {
            Some((addr, why)) => Error::Connect {
                addr: addr.to_string(),
                source: std::io::Error::other(why.to_string()),
            },
            None => Error::Transport(message),
        },
        Some(Exit::Login) if message == Error::LoginRefused.to_string() => Error::LoginRefused,
        Some(Exit::Login) => Error::LoginClosed,
        // Rare (once per failure), and the library's variants name what was waited for with a
        // static string: the few bytes are leaked rather than the words changed.
        Some(Exit::Timeout) => Error::Timeout {
            phase: rconsole::Phase::Answer,
            what: leak(message.split_once(" while ").map_or("waiting", |(_, w)| w)),
            after: timeout,
        },
        Some(Exit::Connection) => {
            if let Some(when) = message.strip_prefix("server closed the connection ") {
                // The words came over the remote protocol; the phase and whether output was
                // partial are read back from them (docs/remote.md).
                Error::Closed {
                    phase: if when == "during login" {
                        rconsole::Phase::Login
                    } else {
                        rconsole::Phase::Answer
                    },
                    partial: when.contains("output is incomplete"),
                    when: leak(when),
                }
            } else if let Some((when, why)) = message
                .strip_prefix("connection lost ")
                .and_then(|m| m.split_once(": "))
            {
                Error::Io {
                    when: leak(when),
                    source: std::io::Error::other(why.to_string()),
                }
            } else if let Some(what) = message.strip_prefix("protocol error: ") {
                Error::Protocol(what.to_string())
            } else {
                Error::Protocol(message)
            }
        }
        Some(Exit::Interrupted) => Error::Cancelled,
        Some(Exit::Remote) => Error::Remote(message),
        _ => Error::Transport(message),
    }
}
