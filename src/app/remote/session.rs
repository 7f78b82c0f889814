//! A `--remote` link as one more [`Remote`]: what the console runs commands through when the
//! RCON half runs on the SSH host (several servers, `--follow` and the timed runs take
//! `--remote` on the event loop instead: [`super::machine`]). One command at a time (the console waits for each
//! answer anyway); the remote side keeps going after a failed command, so a typo in the
//! console does not end the session. A lost link is a transport error: the console reconnects
//! (a new ssh and remote side).

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{Receiver, RecvTimeoutError, TryRecvError};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use rconsole::Error;
use rconsole::consoles::Remote;

use crate::app::exit::Exit;
use crate::app::remote::link::{Event, SshLink, StartError, Starter, exit_from_code};
use crate::app::remote::machine::error_from;
use crate::app::remote::proto::Frame;
use crate::app::resolve::plan::SessionPlan;

/// Opens a connection the way `--remote` does (rcon on the SSH host; shared by the session's
/// reconnects and by fan-out).
pub type RemoteOpener = Arc<dyn Fn() -> rconsole::Result<Box<dyn Remote>> + Send + Sync>;

/// One remote side, over one ssh.
pub struct RemoteSession {
    starter: Arc<Starter>,
    link: Option<(SshLink, Receiver<Event>)>,
    next_id: u64,
    server: String,
    max: usize,
    timeout: Duration,
    cancel: Option<Arc<AtomicBool>>,
}

impl RemoteSession {
    /// Starts ssh and the remote side. The error keeps its exit status (10 for a missing or
    /// different remote program).
    pub fn open(
        starter: Arc<Starter>,
        server: String,
        max: usize,
        timeout: Duration,
    ) -> anyhow::Result<RemoteSession> {
        let mut session = RemoteSession {
            starter,
            link: None,
            next_id: 1,
            server,
            max,
            timeout,
            cancel: None,
        };
        session.start().map_err(|e| match e {
            StartError::Fatal(e) => e,
            StartError::Lost(m) => crate::app::exit::fail(Exit::Transport, m),
        })?;
        Ok(session)
    }

    fn start(&mut self) -> Result<(), StartError> {
        self.link = None;
        let (_tx, rx, link) = self.starter.open()?;
        self.link = Some((link, rx));
        Ok(())
    }

    /// Sends one command and waits for its answer.
    fn exchange(&mut self, command: &str, out: &mut Vec<u8>, last: bool) -> rconsole::Result<()> {
        if self.link.is_none() {
            self.reconnect()?;
        }
        let id = self.next_id;
        self.next_id += 1;
        let (link, _) = self.link.as_mut().expect("linked");
        let frame = Frame::Command {
            id,
            text: command.to_string(),
            line: None,
            last,
            prefix: None,
        };
        if link.send(&frame).is_err() {
            return Err(self.lost());
        }
        loop {
            if let Some(flag) = &self.cancel
                && flag.load(Ordering::SeqCst)
            {
                // The remote side finishes the command it runs; this one is abandoned.
                self.link = None;
                return Err(Error::Cancelled);
            }
            let (_, rx) = self.link.as_mut().expect("linked");
            match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(Event::Frame(frame)) => match *frame {
                    Frame::Answer {
                        id: answer_id,
                        output,
                        parse_error,
                        error,
                        exit,
                        ..
                    } if answer_id == id => {
                        out.extend_from_slice(output.as_bytes());
                        return match error {
                            // The session decides about parse errors itself, from the output.
                            Some(_) if parse_error => Ok(()),
                            Some(message) => {
                                Err(error_from(exit.map(exit_from_code), message, self.timeout))
                            }
                            None => Ok(()),
                        };
                    }
                    Frame::Skipped { id: skipped } if skipped == id => {
                        return Err(Error::Transport(
                            "the remote rcon skipped the command".into(),
                        ));
                    }
                    Frame::Error { exit, message } => {
                        self.link = None;
                        return Err(error_from(
                            Some(exit_from_code(exit)),
                            message,
                            self.timeout,
                        ));
                    }
                    _ => {}
                },
                Ok(Event::Bad(e)) => {
                    self.link = None;
                    return Err(Error::Transport(format!("the remote rcon: {e}")));
                }
                Ok(Event::Gone) | Err(RecvTimeoutError::Disconnected) => return Err(self.lost()),
                Ok(Event::Src(_)) | Err(RecvTimeoutError::Timeout) => {}
            }
        }
    }

    /// The link ended: why, as a transport error.
    fn lost(&mut self) -> Error {
        match self.link.take() {
            Some((mut link, _)) => {
                Error::Transport(format!("lost the remote rcon: {}", link.why()))
            }
            None => Error::Transport("lost the remote rcon".into()),
        }
    }
}

impl Remote for RemoteSession {
    fn command_into(&mut self, command: &str, out: &mut Vec<u8>) -> rconsole::Result<()> {
        self.exchange(command, out, false)
    }

    fn command_then_close(&mut self, command: &str, out: &mut Vec<u8>) -> rconsole::Result<()> {
        // The remote side closes its connection to the stopping server; this ends the remote
        // side too, so a restarted server gets a fresh one (which does not refuse after a stop).
        let result = self.exchange(command, out, false);
        self.close();
        result
    }

    fn command_into_last(&mut self, command: &str, out: &mut Vec<u8>) -> rconsole::Result<()> {
        let result = self.exchange(command, out, true);
        self.close();
        result
    }

    fn close(&mut self) {
        if let Some((mut link, _)) = self.link.take() {
            let _ = link.send(&Frame::End);
        }
    }

    fn check_open(&mut self) -> bool {
        let gone = match &mut self.link {
            Some((link, rx)) => {
                !link.alive()
                    || matches!(
                        rx.try_recv(),
                        Ok(Event::Gone) | Err(TryRecvError::Disconnected)
                    )
            }
            None => return false,
        };
        if gone {
            self.link = None;
        }
        !gone
    }

    fn is_connected(&self) -> bool {
        self.link.is_some()
    }

    fn reconnect(&mut self) -> rconsole::Result<()> {
        self.close();
        self.start().map_err(|e| match e {
            StartError::Lost(m) => Error::Transport(m),
            StartError::Fatal(e) => Error::Transport(format!("{e:#}")),
        })
    }

    fn server(&self) -> String {
        self.server.clone()
    }

    fn max_command_bytes(&self) -> usize {
        self.max
    }

    fn set_cancel(&mut self, cancel: Option<Arc<AtomicBool>>) {
        self.cancel = cancel;
    }
}

/// An [`RemoteOpener`] for `starter`; `first`, when given, is handed out by the first call (a
/// session opened before, so that its failure kept its exit status).
fn opener_for(
    starter: Arc<Starter>,
    server: String,
    max: usize,
    timeout: Duration,
    first: Option<RemoteSession>,
) -> RemoteOpener {
    let first = Mutex::new(first);
    Arc::new(move || {
        if let Some(session) = first.lock().expect("first").take() {
            return Ok(Box::new(session) as Box<dyn Remote>);
        }
        RemoteSession::open(Arc::clone(&starter), server.clone(), max, timeout)
            .map(|s| Box::new(s) as Box<dyn Remote>)
            .map_err(|e| Error::Transport(format!("{e:#}")))
    })
}

/// `--remote` for the console (src/app/runner/single.rs): the session's connections are remote
/// sides over ssh, one command at a time. The first is opened now, so that a missing remote
/// program is exit 10 with what to install, before the prompt.
pub fn session_opener(plan: &SessionPlan, password: &str) -> anyhow::Result<RemoteOpener> {
    let settings = &plan.settings;
    // The local session applies --delay and --keep-going; the remote side runs what it gets.
    let starter = Arc::new(Starter::new(
        settings,
        password,
        true,
        None,
        plan.parse_errors_fail,
    )?);
    let server = format!("{} via {}", settings.target(), starter.via());
    let max = settings.dialect.value.dialect().max_command_bytes;
    let timeout = settings.timeout.value;
    let first = RemoteSession::open(Arc::clone(&starter), server.clone(), max, timeout)?;
    Ok(opener_for(starter, server, max, timeout, Some(first)))
}
