//! `rcon --remote-serve`: the remote side of `--remote` (docs/remote.md). Speaks the protocol of
//! [`proto`] on stdin and stdout and runs each command, one at a time, through the same
//! [`Session`] as a local run (one command in flight to the server: docs/protocol.md), with
//! the journal kept in this machine's data directory.

use std::io::{self, BufReader, BufWriter, Read, Write};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::{CommandFactory, FromArgMatches};
use rconsole::Password;

use crate::app::exit::{self, Exit};
use crate::app::print::output::{Printer, Style};
use crate::app::print::stderr;
use crate::app::remote::journal::{self, Acquired, Found, Journal, Locked};
use crate::app::remote::proto::{self, Frame, PROTOCOL, VERSION};
use crate::app::resolve::args::Args;
use crate::app::resolve::settings::{ConfigFile, Origins, Settings};
use crate::app::runner::policy::Policy;
use crate::app::runner::session::{PARSE_ERROR, Run, Session};

/// The flags a `settings` frame may carry (each followed by its value), besides `--forget`.
const ALLOWED: [&str; 6] = [
    "-H",
    "-P",
    "--dialect",
    "--timeout",
    "--sentinel",
    "--idle-gap",
];

/// What the stdin reader hands over.
enum Msg {
    Frame(Box<Frame>),
    Bad(String),
    /// End of input.
    Eof,
}

/// Whether the client is still there, as the stdin reader sees it.
struct Liveness {
    /// Input ended before an `end` frame: the client is gone, and nothing queued may run.
    gone: AtomicBool,
    /// When the last frame arrived (a silent drop leaves stdin open: only its heartbeats
    /// stop).
    heard: Mutex<Instant>,
}

impl Liveness {
    fn new() -> Arc<Liveness> {
        Arc::new(Liveness {
            gone: AtomicBool::new(false),
            heard: Mutex::new(Instant::now()),
        })
    }

    /// Gone: its input ended, or nothing came for `silence` (when it promised heartbeats).
    fn gone(&self, silence: Option<Duration>) -> bool {
        self.gone.load(Ordering::SeqCst)
            || silence.is_some_and(|s| self.heard.lock().expect("heard").elapsed() > s)
    }
}

/// Reads frames from `input` on a thread, noting in `live` when each arrives and when input
/// ends before an `end` frame.
fn spawn_reader(input: impl Read + Send + 'static, live: Arc<Liveness>) -> Receiver<Msg> {
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut reader = BufReader::with_capacity(64 * 1024, input);
        let mut line = Vec::new();
        let mut ended = false;
        loop {
            line.clear();
            match crate::app::source::files::read_line(
                &mut reader,
                &mut line,
                proto::MAX_FRAME_BYTES,
            ) {
                Ok(Some(false)) if line.is_empty() => continue,
                Ok(Some(false)) => {
                    *live.heard.lock().expect("heard") = Instant::now();
                    let msg = match proto::parse(&line) {
                        Ok(frame) => {
                            ended |= matches!(frame, Frame::End);
                            Msg::Frame(Box::new(frame))
                        }
                        Err(e) => Msg::Bad(e),
                    };
                    if tx.send(msg).is_err() {
                        return;
                    }
                }
                Ok(Some(true)) => {
                    let _ = tx.send(Msg::Bad("a frame is over the size limit".into()));
                    return;
                }
                Ok(None) | Err(_) => {
                    if !ended {
                        live.gone.store(true, Ordering::SeqCst);
                    }
                    let _ = tx.send(Msg::Eof);
                    return;
                }
            }
        }
    });
    rx
}

/// Serves one client on stdin and stdout until `end` or end of input.
pub fn serve() -> anyhow::Result<Exit> {
    let live = Liveness::new();
    let rx = spawn_reader(io::stdin(), Arc::clone(&live));
    let mut out = BufWriter::new(crate::app::print::output::frame_channel());
    let mut server = Server::new(&mut out, live);
    server.send(&Frame::hello())?;
    match server.run(&rx) {
        Ok(exit) => Ok(exit),
        Err((exit, message)) => {
            let _ = server.send(&Frame::Error {
                exit: exit as u8,
                message,
            });
            Ok(exit)
        }
    }
}

struct Server<'a, W: Write> {
    out: &'a mut W,
    live: Arc<Liveness>,
    /// How long without a frame means the client is gone (it sends heartbeats).
    silence: Option<Duration>,
    journal: Option<Journal>,
    /// A command failed without `keep_going`: the rest are skipped.
    halted: bool,
    ran_any: bool,
}

type Failed = (Exit, String);

fn io_err(e: io::Error) -> Failed {
    (Exit::Connection, format!("cannot write to stdout: {e}"))
}

/// Says on stderr that the journal cannot be kept on this host; the run goes on without it.
fn without_journal<T>(e: impl std::fmt::Display) -> Option<T> {
    stderr!(
        "rcon: warning: cannot keep the journal on this host: {e}; --resume will not know where this run stopped"
    );
    None
}

impl<'a, W: Write> Server<'a, W> {
    fn new(out: &'a mut W, live: Arc<Liveness>) -> Self {
        Server {
            out,
            live,
            silence: None,
            journal: None,
            halted: false,
            ran_any: false,
        }
    }

    fn send(&mut self, frame: &Frame) -> io::Result<()> {
        proto::write(self.out, frame)?;
        self.out.flush()
    }

    /// The next frame; `None` at the end of input or once the client is gone.
    fn next(&self, rx: &Receiver<Msg>) -> Result<Option<Frame>, Failed> {
        loop {
            let msg = match self.silence {
                Some(s) => match rx.recv_timeout(s) {
                    Err(RecvTimeoutError::Timeout) if self.live.gone(self.silence) => Msg::Eof,
                    Err(RecvTimeoutError::Timeout) => continue,
                    other => other.unwrap_or(Msg::Eof),
                },
                None => rx.recv().unwrap_or(Msg::Eof),
            };
            return match msg {
                Msg::Frame(f) => Ok(Some(*f)),
                Msg::Bad(e) => Err((Exit::Usage, e)),
                Msg::Eof => Ok(None),
            };
        }
    }

    fn run(&mut self, rx: &Receiver<Msg>) -> Result<Exit, Failed> {
        match self.next(rx)? {
            Some(Frame::Hello { protocol, .. }) if (1..=PROTOCOL).contains(&protocol) => {}
            Some(Frame::Hello { protocol, version }) => {
                return Err((
                    Exit::Remote,
                    format!(
                        "the rcon here ({VERSION}) speaks remote protocol {PROTOCOL}, the local rcon ({version}) speaks {protocol}: install the same rcon version on both sides"
                    ),
                ));
            }
            Some(_) => return Err((Exit::Usage, "expected a hello frame first".into())),
            None => return Ok(Exit::Success),
        }
        let (mut session, policy) = match self.next(rx)? {
            Some(Frame::Settings {
                args,
                password,
                keep_going,
                delay_ms,
                parse_errors_fail,
                heartbeat_ms,
            }) => {
                let session = open_session(&args, password, parse_errors_fail)?;
                self.silence = heartbeat_ms
                    .map(|ms| Duration::from_millis(ms.max(1)) * proto::GONE_AFTER_BEATS);
                let policy = Policy::remote_side(keep_going, delay_ms.map(Duration::from_millis));
                (session, policy)
            }
            Some(_) => return Err((Exit::Usage, "expected a settings frame".into())),
            None => return Ok(Exit::Success),
        };
        self.send(&Frame::Ready).map_err(io_err)?;
        while let Some(frame) = self.next(rx)? {
            match frame {
                Frame::Batch { key, input, resume } => {
                    self.batch(session.server(), &key, &input, resume)?;
                }
                Frame::EndBatch { complete } => {
                    if let Some(j) = self.journal.take()
                        && complete
                        && !self.halted
                    {
                        j.finish();
                    }
                }
                Frame::Command {
                    id,
                    text,
                    line,
                    last,
                    prefix,
                } => {
                    // The client is gone (its ssh died, Ctrl-C, a silent link): nothing more
                    // runs.
                    if self.live.gone(self.silence) {
                        return Ok(Exit::Success);
                    }
                    if self.halted {
                        self.send(&Frame::Skipped { id }).map_err(io_err)?;
                        continue;
                    }
                    policy.pause_before(self.ran_any, None);
                    let failed = self.command(&mut session, id, &text, line, last, prefix)?;
                    self.ran_any = true;
                    if failed.is_some_and(|exit| !policy.goes_on_after(exit)) {
                        self.halted = true;
                    }
                }
                Frame::Ack { line } => {
                    if let Some(j) = self.journal.as_mut() {
                        j.acked(line);
                    }
                }
                Frame::Heartbeat => {}
                Frame::End => {
                    drop(self.journal.take());
                    self.send(&Frame::End).map_err(io_err)?;
                    return Ok(Exit::Success);
                }
                _ => return Err((Exit::Usage, "unexpected frame from the client".into())),
            }
        }
        Ok(Exit::Success)
    }

    /// A `batch` frame: takes the input's journal (waiting while an earlier remote side still
    /// keeps it), answers what it holds, and starts it again (not when resuming found none).
    fn batch(&mut self, server: &str, key: &str, input: &str, resume: bool) -> Result<(), Failed> {
        self.journal = None;
        let mut locked = match journal::path_for(key, server) {
            Some(path) => {
                let mut told = Ok(());
                let waiting = &mut |pid| told = self.send(&Frame::Waiting { pid });
                let acquired = Locked::acquire(&path, !resume, journal::LOCK_WAIT, waiting);
                told.map_err(io_err)?;
                match acquired {
                    Ok(Acquired::Locked(locked)) => Some(locked),
                    Ok(Acquired::Busy(pid)) => {
                        let who = "the remote rcon of an earlier run";
                        return Err((Exit::Refused, journal::busy(input, pid, who)));
                    }
                    Ok(Acquired::Missing) => None,
                    Err(e) => without_journal(e),
                }
            }
            None => None,
        };
        let found = locked.as_mut().filter(|_| resume).and_then(Locked::read);
        let Found {
            state,
            prefix,
            answers: kept,
        } = found.clone().unwrap_or_default();
        // Handed back under their lines (their ids were the earlier client's).
        let answers = kept
            .iter()
            .filter_map(|(line, answer)| {
                let mut frame = proto::parse(answer.as_bytes()).ok()?;
                match &mut frame {
                    Frame::Answer { id, .. } => *id = *line,
                    _ => return None,
                }
                Some(frame)
            })
            .collect();
        self.send(&Frame::Journal {
            found: found.is_some(),
            sent: state.sent,
            answered: state.answered,
            prefix: prefix.clone(),
            acked: state.acked,
            answers,
        })
        .map_err(io_err)?;
        // Resuming with nothing to resume from: the client refuses; start nothing.
        let Some(locked) = locked.filter(|_| !resume || found.is_some()) else {
            return Ok(());
        };
        self.journal = match Journal::start(locked, input, server, state, &kept) {
            Ok(mut j) => {
                if !prefix.is_empty() {
                    j.set_prefix(prefix);
                    j.keep();
                }
                Some(j)
            }
            Err(e) => without_journal(e),
        };
        Ok(())
    }

    /// Runs one command and answers it, keeping the answer in the journal until the client
    /// acknowledges it; whether it worked.
    fn command(
        &mut self,
        session: &mut Session,
        id: u64,
        text: &str,
        line: Option<u64>,
        last: bool,
        prefix: Option<String>,
    ) -> Result<Option<Exit>, Failed> {
        // `started` first: when the client is gone this write fails and the line is neither
        // sent nor journaled as sent.
        self.send(&Frame::Started { id }).map_err(io_err)?;
        let line = line.filter(|_| self.journal.is_some());
        if let (Some(j), Some(l)) = (self.journal.as_mut(), line) {
            j.sent(l);
        }
        let how = if last {
            Run::printed().last()
        } else {
            Run::printed()
        };
        let outcome = session.run_with(text, how).map_err(io_err)?;
        let (error, exit) = match &outcome.error {
            Some(e) => (Some(exit::chain(e)), Some(Exit::from_error(e) as u8)),
            None if outcome.parse_error => (
                Some(PARSE_ERROR.to_string()),
                Some(Exit::CommandFailed as u8),
            ),
            None => (None, None),
        };
        let answer = Frame::Answer {
            id,
            output: String::from_utf8_lossy(&outcome.raw).into_owned(),
            sent: outcome.sent,
            parse_error: outcome.parse_error,
            error,
            exit,
            elapsed_ms: outcome.elapsed.as_secs_f64() * 1000.0,
        };
        if let (Some(j), Some(l)) = (self.journal.as_mut(), line) {
            let kept = serde_json::to_string(&answer).unwrap_or_default();
            j.outcome(
                l,
                (outcome.sent, outcome.error.is_none()),
                prefix,
                Some(&kept),
            );
        }
        self.send(&answer).map_err(io_err)?;
        // How it failed, for the policy: a refused login is not passed by --keep-going.
        Ok((!outcome.ok()).then(|| {
            outcome
                .error
                .as_ref()
                .map_or(Exit::CommandFailed, Exit::from_error)
        }))
    }
}

/// The session the `settings` frame describes: rcon's own settings stage over the allowed
/// flags, the password from the frame.
fn open_session(
    args: &[String],
    password: String,
    parse_errors_fail: bool,
) -> Result<Session, Failed> {
    let mut words = args.iter();
    while let Some(flag) = words.next() {
        if flag == "--forget" {
            continue;
        }
        if !ALLOWED.contains(&flag.as_str()) || words.next().is_none() {
            return Err((
                Exit::Usage,
                format!("the settings frame may not carry '{flag}'"),
            ));
        }
    }
    let usage = |e: clap::Error| (Exit::Usage, format!("settings: {}", e.kind()));
    let argv = std::iter::once("rcon".to_string()).chain(args.iter().cloned());
    // Only the frame counts: none of this machine's RCON_* variables.
    let mut command = Args::command().mut_args(|a| a.env(None::<&'static str>));
    let mut matches = command.try_get_matches_from_mut(argv).map_err(usage)?;
    let origins = Origins::from_matches(&command, &matches);
    let parsed = Args::from_arg_matches_mut(&mut matches).map_err(usage)?;
    let settings = Settings::resolve(&parsed, &origins, ConfigFile::Ignored("--remote-serve"))
        .map_err(|e| (exit::exit_for(&e), format!("{e:#}")))?;
    let connector = settings
        .connector()
        .map_err(|e| (exit::exit_for(&e), format!("{e:#}")))?;
    let observer: Arc<dyn rconsole::rcon::client::Observer> =
        Arc::new(crate::app::shared::StderrObserver);
    let opts = settings.options(observer);
    let printer = Printer::new(Style::Raw, false).quiet(true);
    let mut session = Session::new(connector, Password::new(password), opts, printer);
    session.set_protocol(settings.dialect.value.dialect().protocol);
    session.parse_errors_fail = parse_errors_fail;
    Ok(session)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn exchange(input: &str) -> String {
        let live = Liveness::new();
        let rx = spawn_reader(
            io::Cursor::new(input.as_bytes().to_vec()),
            Arc::clone(&live),
        );
        let mut out = Vec::new();
        let mut server = Server::new(&mut out, live);
        if let Err((exit, message)) = server.run(&rx) {
            server
                .send(&Frame::Error {
                    exit: exit as u8,
                    message,
                })
                .unwrap();
        }
        String::from_utf8(out).unwrap()
    }

    #[test]
    fn a_client_is_gone_when_its_input_ends_or_its_promised_heartbeats_stop() {
        let live = Liveness::new();
        let silence = Some(Duration::from_secs(5));
        assert!(!live.gone(silence) && !live.gone(None));
        *live.heard.lock().unwrap() = Instant::now() - Duration::from_secs(6);
        // Silent for longer than promised; a version 1 client promised nothing.
        assert!(live.gone(silence) && !live.gone(None));
        let ended = Liveness::new();
        ended.gone.store(true, Ordering::SeqCst);
        assert!(ended.gone(None));
        // The reader notes both: each frame as it arrives, and input that ends without `end`.
        let live = Liveness::new();
        *live.heard.lock().unwrap() = Instant::now() - Duration::from_secs(6);
        let rx = spawn_reader(
            io::Cursor::new(b"{\"type\":\"heartbeat\"}\n".to_vec()),
            Arc::clone(&live),
        );
        assert!(matches!(rx.recv(), Ok(Msg::Frame(f)) if *f == Frame::Heartbeat));
        assert!(matches!(rx.recv(), Ok(Msg::Eof)));
        assert!(live.gone(None), "input ended without `end`");
        assert!(live.heard.lock().unwrap().elapsed() < Duration::from_secs(5));
    }

    #[test]
    fn another_protocol_version_is_refused_naming_both_versions() {
        let out = exchange("{\"type\":\"hello\",\"protocol\":99,\"version\":\"9.9.9\"}\n");
        assert!(out.contains("\"exit\":10"), "{out}");
        assert!(out.contains("9.9.9") && out.contains(VERSION), "{out}");
    }

    #[test]
    fn only_server_flags_travel_in_settings() {
        let hello = "{\"type\":\"hello\",\"protocol\":1,\"version\":\"x\"}\n";
        let settings = "{\"type\":\"settings\",\"args\":[\"--password-command\",\"true\"],\"password\":\"p\"}\n";
        let out = exchange(&format!("{hello}{settings}"));
        assert!(out.contains("may not carry '--password-command'"), "{out}");
    }
}
