//! `rcon --remote-serve`: the remote side of `--remote` (docs/remote.md). Speaks the protocol of
//! [`proto`] on stdin and stdout and runs each command, one at a time, through the same
//! [`Session`] as a local run (one command in flight to the server: docs/protocol.md), with
//! the journal kept in this machine's data directory.

use std::io::{self, BufReader, BufWriter, Read, Write};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use clap::{CommandFactory, FromArgMatches};
use rconsole::Password;

use crate::app::exit::{self, Exit};
use crate::app::print::output::{Printer, Style};
use crate::app::print::stderr;
use crate::app::remote::journal::{self, Journal};
use crate::app::remote::proto::{self, Frame, PROTOCOL, VERSION};
use crate::app::resolve::args::Args;
use crate::app::resolve::settings::{ConfigFile, Origins, Settings};
use crate::app::runner::session::{PARSE_ERROR, Run, Session};

/// The flags a `settings` frame may carry (each followed by its value).
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

/// Reads frames from `input` on a thread. `gone` turns true at once when input ends before an
/// `end` frame: the client is gone, and nothing queued may run any more.
fn spawn_reader(input: impl Read + Send + 'static, gone: Arc<AtomicBool>) -> Receiver<Msg> {
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
                        gone.store(true, Ordering::SeqCst);
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
    let gone = Arc::new(AtomicBool::new(false));
    let rx = spawn_reader(io::stdin(), Arc::clone(&gone));
    let mut out = BufWriter::new(crate::app::print::output::frame_channel());
    let mut server = Server {
        out: &mut out,
        gone,
    };
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
    gone: Arc<AtomicBool>,
}

type Failed = (Exit, String);

impl<W: Write> Server<'_, W> {
    fn send(&mut self, frame: &Frame) -> io::Result<()> {
        proto::write(self.out, frame)?;
        self.out.flush()
    }

    fn run(&mut self, rx: &Receiver<Msg>) -> Result<Exit, Failed> {
        let next = || match rx.recv() {
            Ok(Msg::Frame(f)) => Ok(Some(*f)),
            Ok(Msg::Bad(e)) => Err((Exit::Usage, e)),
            Ok(Msg::Eof) | Err(_) => Ok(None),
        };
        match next()? {
            Some(Frame::Hello { protocol, .. }) if protocol == PROTOCOL => {}
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
        let (mut session, policy) = match next()? {
            Some(Frame::Settings {
                args,
                password,
                keep_going,
                delay_ms,
                parse_errors_fail,
            }) => {
                let session = open_session(&args, password, parse_errors_fail)?;
                (session, (keep_going, delay_ms.map(Duration::from_millis)))
            }
            Some(_) => return Err((Exit::Usage, "expected a settings frame".into())),
            None => return Ok(Exit::Success),
        };
        let (keep_going, delay) = policy;
        let io_err = |e: io::Error| (Exit::Connection, format!("cannot write to stdout: {e}"));
        self.send(&Frame::Ready).map_err(io_err)?;
        let mut journal: Option<Journal> = None;
        let mut halted = false;
        let mut ran_any = false;
        while let Some(frame) = next()? {
            match frame {
                Frame::Batch { key, input, resume } => {
                    journal = None;
                    let server = session.server().to_string();
                    let path = journal::path_for(&key, &server);
                    let found = match (&path, resume) {
                        (Some(p), true) => {
                            journal::wait_for_keeper(p, Duration::from_secs(10));
                            journal::read_with_prefix(p)
                        }
                        _ => None,
                    };
                    let (state, prefix) = found.clone().unwrap_or_default();
                    self.send(&Frame::Journal {
                        found: found.is_some(),
                        sent: state.sent,
                        answered: state.answered,
                        prefix: prefix.clone(),
                    })
                    .map_err(io_err)?;
                    // Resuming with nothing to resume from: the client refuses; start nothing.
                    if resume && found.is_none() {
                        continue;
                    }
                    journal = match path.map(|p| Journal::start(&p, &input, &server, state)) {
                        Some(Ok(mut j)) => {
                            if !prefix.is_empty() {
                                j.set_prefix(prefix);
                                j.keep();
                            }
                            Some(j)
                        }
                        Some(Err(e)) => {
                            stderr!(
                                "rcon: warning: cannot keep the journal on this host: {e}; --resume will not know where this run stopped"
                            );
                            None
                        }
                        None => None,
                    };
                }
                Frame::EndBatch { complete } => {
                    if let Some(j) = journal.take()
                        && complete
                        && !halted
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
                    // The client is gone (its ssh died, Ctrl-C): nothing more runs.
                    if self.gone.load(Ordering::SeqCst) {
                        return Ok(Exit::Success);
                    }
                    if halted {
                        self.send(&Frame::Skipped { id }).map_err(io_err)?;
                        continue;
                    }
                    if ran_any && let Some(d) = delay {
                        std::thread::sleep(d);
                    }
                    // `started` first: when the client is gone this write fails and the line is
                    // neither sent nor journaled as sent.
                    self.send(&Frame::Started { id }).map_err(io_err)?;
                    let line = line.filter(|_| journal.is_some());
                    if let (Some(j), Some(l)) = (journal.as_mut(), line) {
                        j.sent(l);
                    }
                    let outcome = if last {
                        session.run_with(&text, Run::printed().last())
                    } else {
                        session.run_with(&text, Run::printed())
                    }
                    .map_err(io_err)?;
                    ran_any = true;
                    if let (Some(j), Some(l)) = (journal.as_mut(), line) {
                        if !outcome.sent {
                            j.not_sent();
                        } else if outcome.error.is_none() {
                            if let Some(prefix) = prefix {
                                j.set_prefix(prefix);
                            }
                            j.answered(l);
                        }
                    }
                    let ok = outcome.ok();
                    let (error, exit) = match &outcome.error {
                        Some(e) => (Some(exit::chain(e)), Some(Exit::from_error(e) as u8)),
                        None if outcome.parse_error => (
                            Some(PARSE_ERROR.to_string()),
                            Some(Exit::CommandFailed as u8),
                        ),
                        None => (None, None),
                    };
                    self.send(&Frame::Answer {
                        id,
                        output: String::from_utf8_lossy(&outcome.raw).into_owned(),
                        sent: outcome.sent,
                        parse_error: outcome.parse_error,
                        error,
                        exit,
                        elapsed_ms: outcome.elapsed.as_secs_f64() * 1000.0,
                    })
                    .map_err(io_err)?;
                    if !ok && !keep_going {
                        halted = true;
                    }
                }
                Frame::End => {
                    drop(journal.take());
                    self.send(&Frame::End).map_err(io_err)?;
                    return Ok(Exit::Success);
                }
                _ => return Err((Exit::Usage, "unexpected frame from the client".into())),
            }
        }
        Ok(Exit::Success)
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
        let gone = Arc::new(AtomicBool::new(false));
        let rx = spawn_reader(
            io::Cursor::new(input.as_bytes().to_vec()),
            Arc::clone(&gone),
        );
        let mut out = Vec::new();
        let mut server = Server {
            out: &mut out,
            gone,
        };
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
