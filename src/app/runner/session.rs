//! One session with a server, shared by one-shot commands, batch input and the console: connects
//! on first use, runs one command at a time, prints each result as soon as it is complete.

use std::sync::Arc;
use std::time::{Duration, Instant};

use rconsole::consoles::{MessageSink, Protocol, Remote};
use rconsole::rcon::client::check_command;
use rconsole::transport::Connector;
use rconsole::{ClientOptions, Password};

use crate::app::print::output::{Printer, Record};
use crate::app::remote::session::RemoteOpener;

/// What became of one command.
#[derive(Debug)]
pub struct CommandOutcome {
    /// Output bytes as received (partial when `error` is set).
    pub raw: Vec<u8>,
    /// Why the command failed locally or on the connection.
    pub error: Option<rconsole::Error>,
    /// Whether the command went out (false when it was refused locally or no connection could
    /// be opened and logged in).
    pub sent: bool,
    /// The output is vanilla's parse error (ends in `<--[HERE]`).
    pub parse_error: bool,
    /// The command stops the server; the connection was closed at once.
    pub stopped: bool,
    /// How long it took.
    pub elapsed: Duration,
}

impl CommandOutcome {
    /// Whether the command succeeded.
    pub fn ok(&self) -> bool {
        self.error.is_none() && !self.parse_error
    }
}

/// The text used for a parse error in records and messages.
pub const PARSE_ERROR: &str = "the server could not parse the command (<--[HERE])";

/// How [`Session::run_with`] runs one command.
#[derive(Debug, Clone, Copy, Default)]
pub struct Run<'a> {
    /// Where it came from (`FILE`, line), named in its record.
    pub origin: Option<(&'a str, u64)>,
    /// Nothing follows it on this connection: its answer may be ended by a step that also
    /// ends the connection (see `Client::command_into_last`).
    pub last: bool,
    /// Its record is printed here; else the caller prints it ([`Session::print`]) or, when
    /// `--retry` runs it again, drops it.
    pub print: bool,
}

impl Run<'_> {
    /// Printed, from the command line or the console.
    pub fn printed() -> Self {
        Run {
            print: true,
            ..Run::default()
        }
    }

    /// Not printed: the caller prints the outcome or makes text of it.
    pub fn unprinted() -> Self {
        Run::default()
    }

    /// The last command on this connection.
    pub fn last(self) -> Self {
        Run { last: true, ..self }
    }
}

/// A connection-to-be plus the printer.
pub struct Session {
    connector: Arc<dyn Connector>,
    password: Password,
    opts: ClientOptions,
    client: Option<Box<dyn Remote>>,
    server: String,
    protocol: Protocol,
    messages: Option<(MessageSink, bool)>,
    /// An earlier command stopped the server.
    stopped: bool,
    /// Whether commands after one that stopped the server are refused (not in the console,
    /// where the next command reconnects to a restarted server).
    pub refuse_after_stop: bool,
    /// Whether the connection is used after the commands (the console follows).
    pub keeps_open: bool,
    /// `--wait`: how long the first connection is tried again until the server is up.
    pub wait: Option<Duration>,
    /// `--retry N`: how many times a first connection that failed as fan-out retries
    /// ([`super::wait::worth_a_retry`]) is tried again, after fan-out's pauses.
    pub retries: u32,
    /// Whether vanilla's parse error (`<--[HERE]`) fails the command (not under the mcrcon and
    /// rcon-cli personalities).
    pub parse_errors_fail: bool,
    /// Where results go.
    pub printer: Printer,
    /// `--remote`: opens each connection instead of the connector (rcon on the SSH host).
    pub opener: Option<RemoteOpener>,
}

impl Session {
    /// A session that connects on its first command (or [`Session::connect`]).
    pub fn new(
        connector: Box<dyn Connector>,
        password: Password,
        opts: ClientOptions,
        printer: Printer,
    ) -> Self {
        Self {
            server: connector.describe(),
            connector: Arc::from(connector),
            password,
            opts,
            client: None,
            protocol: Protocol::Rcon,
            messages: None,
            stopped: false,
            refuse_after_stop: true,
            keeps_open: false,
            wait: None,
            retries: 0,
            parse_errors_fail: true,
            printer,
            opener: None,
        }
    }

    /// Speaks `protocol` instead of RCON (BattlEye, WebRCON, telnet).
    pub fn set_protocol(&mut self, protocol: Protocol) {
        self.protocol = protocol;
    }

    /// Sends the server's own messages to `sink`; `live` also while no command runs (the
    /// console). Applies to the current connection and every later one.
    pub fn set_messages(&mut self, sink: MessageSink, live: bool) {
        if let Some(c) = self.client.as_mut() {
            c.set_messages(sink.clone(), live);
        }
        self.messages = Some((sink, live));
    }

    /// Where the session goes, e.g. `localhost:25575`.
    pub fn server(&self) -> &str {
        &self.server
    }

    /// The client, connecting first if this is the first use. After a failed first connection
    /// the next call tries again. With `--wait` the first connection is tried until the server
    /// is up; later ones (the console's reconnects) are not.
    pub fn connect(&mut self) -> rconsole::Result<&mut (dyn Remote + 'static)> {
        if self.client.is_none() {
            let mut client = match self.wait.take() {
                // Ctrl-C or SIGTERM ends the wait (its progress line cleared) at once, or
                // when the attempt under way ends.
                Some(limit) => super::wait::until_up(
                    limit,
                    &self.server,
                    || {
                        if crate::app::interrupt::interrupted() {
                            return Err(rconsole::Error::Cancelled);
                        }
                        self.open()
                    },
                    crate::app::interrupt::interrupted,
                )?,
                None => {
                    let retries = std::mem::take(&mut self.retries);
                    self.open_retrying(retries)?
                }
            };
            if let Some((sink, live)) = &self.messages {
                client.set_messages(sink.clone(), *live);
            }
            self.client = Some(client);
        }
        Ok(self.client.as_deref_mut().expect("connected above"))
    }

    /// [`Session::open`], tried again up to `retries` times under the run's one retry
    /// schedule ([`super::policy::Retries::connect`]), for a connect that fan-out retries too.
    fn open_retrying(&self, retries: u32) -> rconsole::Result<Box<dyn Remote>> {
        super::policy::Retries::new(retries).connect(
            || self.open(),
            (super::wait::worth_a_retry, |e| crate::app::exit::chain(e)),
            crate::app::interrupt::interrupted,
            || rconsole::Error::Cancelled,
        )
    }

    /// A new connection, logged in.
    fn open(&self) -> rconsole::Result<Box<dyn Remote>> {
        if let Some(open) = &self.opener {
            return open();
        }
        let connector = Box::new(Arc::clone(&self.connector));
        rconsole::open(
            self.protocol,
            connector,
            self.password.clone(),
            self.opts.clone(),
        )
    }

    /// The client if connected at least once.
    pub fn client(&mut self) -> Option<&mut (dyn Remote + 'static)> {
        self.client.as_deref_mut()
    }

    /// Longest command the server can read.
    pub fn max_command_bytes(&self) -> usize {
        self.opts.max_command_bytes
    }

    /// Makes waits abandon the command under way when `flag` turns true (Ctrl-C in the
    /// console).
    pub fn set_cancel(&mut self, flag: std::sync::Arc<std::sync::atomic::AtomicBool>) {
        self.opts.cancel = Some(std::sync::Arc::clone(&flag));
        if let Some(client) = self.client.as_mut() {
            client.set_cancel(Some(flag));
        }
    }

    /// Forgets what was learned about the server: the connection is closed and the next
    /// command probes the server again.
    pub fn forget(&mut self) {
        if let Some(mut client) = self.client.take() {
            client.close();
        }
        self.opts.learned = None;
        self.opts.observer.learned(None);
    }

    /// Runs one command, connecting first if needed, and (with `how.print`) prints its record:
    /// the one path every single-server command takes (one-shot and `-c` commands, batch
    /// input, the console and `--remote-serve`). Only a failed write to stdout is an `Err`; everything about the
    /// command itself is in the [`CommandOutcome`].
    pub fn run_with(&mut self, command: &str, how: Run<'_>) -> std::io::Result<CommandOutcome> {
        let outcome = self.outcome(command, how.last);
        if how.print {
            self.print(command, how.origin, &outcome)?;
        }
        Ok(outcome)
    }

    /// Runs one command (connecting first if needed), unprinted.
    fn outcome(&mut self, command: &str, last: bool) -> CommandOutcome {
        let start = Instant::now();
        let mut raw = Vec::new();
        let stopped = crate::app::shared::is_stop_command(command);
        let mut sent = false;
        let already_stopped = self.stopped && self.refuse_after_stop;
        let result = check_command(command, self.max_command_bytes())
            .and(if already_stopped {
                Err(rconsole::Error::ServerStopped)
            } else {
                Ok(())
            })
            .and_then(|()| self.connect().map(|_| ()))
            .and_then(|()| {
                sent = true;
                let client = self.client.as_deref_mut().expect("connected");
                execute(client, command, &mut raw, last)
            });
        let error = result.err();
        self.stopped |= stopped && sent && error.is_none();
        let parse_error =
            self.parse_errors_fail && error.is_none() && crate::app::shared::is_parse_error(&raw);
        CommandOutcome {
            raw,
            error,
            sent,
            parse_error,
            stopped,
            elapsed: start.elapsed(),
        }
    }

    /// Prints the record of `outcome` (what [`Session::run_with`] prints when asked to).
    pub fn print(
        &mut self,
        command: &str,
        origin: Option<(&str, u64)>,
        outcome: &CommandOutcome,
    ) -> std::io::Result<()> {
        let message = outcome
            .error
            .as_ref()
            .map(|e| crate::app::exit::chain(e))
            .or_else(|| outcome.parse_error.then(|| PARSE_ERROR.to_string()));
        let reason = match &outcome.error {
            // Ctrl-C or SIGTERM abandoned it: not the connection's fault.
            Some(rconsole::Error::Cancelled) => crate::app::exit::Exit::Interrupted.reason(),
            Some(e) => crate::app::exit::Exit::from_error(e).reason(),
            None if outcome.parse_error => crate::app::exit::Exit::CommandFailed.reason(),
            None => None,
        };
        self.printer.record(&Record {
            command,
            raw: &outcome.raw,
            ok: outcome.ok(),
            error: message.as_deref(),
            reason,
            elapsed: outcome.elapsed,
            origin,
        })
    }
}

/// Runs one command on `client`, appending its raw output to `raw` (partial on error). A command
/// that stops the server gets no end-of-output marker, and the connection is closed as soon as
/// its first answer arrives (a connected client keeps a vanilla server from stopping cleanly).
pub fn execute(
    client: &mut dyn Remote,
    command: &str,
    raw: &mut Vec<u8>,
    last: bool,
) -> rconsole::Result<()> {
    if crate::app::shared::is_stop_command(command) {
        client.command_then_close(command, raw)
    } else if last {
        client.command_into_last(command, raw)
    } else {
        client.command_into(command, raw)
    }
}

impl Drop for Session {
    /// Hands the answer latencies gathered over the session to the observer, which remembers
    /// them for this server.
    fn drop(&mut self) {
        if let Some(learned) = self.client.as_ref().and_then(|c| c.learned()) {
            self.opts.observer.learned(Some(learned));
        }
    }
}
