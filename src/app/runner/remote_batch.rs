//! A batch run over `--remote` (docs/remote.md): opens the link to `REMOTE_RCON --remote-serve`
//! on the SSH host ([`Starter`], `remote/link.rs`), then streams the commands of `-c`, the
//! files and stdin to it with up to [`WINDOW`] unanswered at once, and prints each answer in
//! order through the same printer as a local run, under the batch's policy and journal. The
//! remote side runs them one at a time.

use std::collections::{HashMap, VecDeque};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender, SyncSender};
use std::time::Duration;

use rconsole::rcon::client::check_command;
use rconsole::text::mcfunction::{Item, Joiner, MACRO_NEEDS_VALUE};

use crate::app::exit::{Exit, fail};
use crate::app::interrupt::{Signal, Stop};
use crate::app::print::interrupted::{self, Interrupted};
use crate::app::print::output::{Printer, Record, Style};
use crate::app::print::stderr;
use crate::app::remote::journal;
use crate::app::remote::link::{Event, Src, SshLink, StartError, Starter, exit_from_code};
use crate::app::remote::proto::Frame;
use crate::app::resolve::plan::BatchPolicy;
use crate::app::resolve::plan::SessionPlan;
use crate::app::runner::batch;
use crate::app::runner::commands::{self, Failure, Rest};
use crate::app::runner::policy::Policy;
use crate::app::runner::policy::Tally;
use crate::app::shared::command_failed;
use crate::app::source::files::{self, Input};
use crate::app::words::short;

/// How many commands may be on their way to (or waiting on) the remote side at once: enough
/// to keep a 50 ms round trip full at the rate the remote side runs them (about 4,600 a second
/// on vanilla, idle), no more. Measured (BENCHMARKS.md): 2,000 lines at 50 ms take 4.6-5.2 s
/// with 32, 2.3-2.9 s with 128, and level off from about 200. Each is at most 64 KiB and
/// usually under 100 bytes. What a smaller window would buy, fewer lines run unseen when the
/// link goes silent, the remote journal gives exactly: their answers are kept and printed on
/// `--resume`.
pub const WINDOW: usize = 256;

/// Where the run has got to, kept across reconnects (`--retry`).
#[derive(Default)]
struct Progress {
    /// `-c` commands done (answered, or failed and passed with `--keep-going`).
    commands: usize,
    /// Inputs read to their end.
    inputs: usize,
    /// Resume the input `inputs` from its journal (after a reconnect, or `--resume`).
    resume: bool,
    /// The input `inputs` has begun (its journal exists on the remote side).
    begun: bool,
    /// What ran, and the reconnects `--retry` has left, as for a batch here.
    tally: Tally,
    /// The current input's answers were printed through this line (`None`: not known: its
    /// local record is missing).
    printed: Option<u64>,
    /// This machine's record of what the current input printed (a journal keyed by the input
    /// and the remote server, whose `answered` is the last line printed), and those of the
    /// inputs read to their end, removed once the remote side has ended in order.
    marker: Option<journal::Journal>,
    finished: Vec<journal::Journal>,
    /// Lines that ran on the remote side whose answers were lost (its journal did not keep
    /// them): input, first and last line.
    lost: Vec<(usize, u64, u64)>,
}

/// One unanswered or unprinted thing, in input order.
enum Entry {
    Cmd {
        id: u64,
        text: String,
        /// Input index and line; `None` for a `-c` command.
        at: Option<(usize, u64)>,
        index: Option<usize>,
        started: bool,
        answer: Option<Box<Frame>>,
        skipped: bool,
    },
    Refused {
        input: usize,
        line: u64,
        text: String,
        message: String,
    },
    /// The end of an input.
    InputEnd {
        input: usize,
        slashes: u64,
        first_slash: Option<u64>,
    },
    /// The `journal` answer to a `batch`; a resuming one holds the input until it comes.
    Journal {
        input: usize,
        resume: bool,
        reply: Option<Box<Frame>>,
    },
}

/// How one connection's run ended.
enum Ended {
    /// Everything ran (or the run stopped at a failure, which the result says).
    Done(anyhow::Result<Exit>),
    /// The link or the server went away; reconnect when retries are left.
    Lost { message: String, exit: Exit },
}

/// Runs the plan's commands, files and stdin on the SSH host's rcon.
pub fn run(plan: SessionPlan) -> anyhow::Result<Exit> {
    let settings = &plan.settings;
    crate::app::shared::refuse_unsendable(&plan.commands, [settings])?;
    // Every file is opened, and without --keep-going read ahead and checked, before anything
    // is sent, as in local mode.
    let policy = Policy::from(&plan.batch);
    for path in &plan.files {
        let input = Input::open(path, false)?;
        if policy.checks_ahead() {
            input.check_ahead(
                &plan.batch.macros,
                settings.dialect.value.dialect().max_command_bytes,
            )?;
        }
    }
    let password = settings.password()?;
    let starter = Starter::new(
        settings,
        password.expose(),
        plan.batch.keep_going,
        plan.batch.delay,
        plan.parse_errors_fail,
    )?;
    let via = starter.via().to_string();
    let mut printer = plan.printing.printer().server(plan.settings.display_name());
    let stop = Stop::catch();
    let mut progress = Progress {
        resume: plan.batch.resume,
        tally: Tally {
            retries: policy.retries(),
            ..Tally::default()
        },
        ..Progress::default()
    };
    let stdin_batch = plan.inputs.stdin_batch;
    let inputs: Vec<String> = stdin_batch
        .then(|| "-".to_string())
        .into_iter()
        .chain(plan.files.iter().cloned())
        .collect();
    let run = Run {
        plan: &plan,
        inputs: &inputs,
        starter: &starter,
        via: &via,
        stop: stop.as_ref(),
        max: settings.dialect.value.dialect().max_command_bytes,
        policy,
    };
    loop {
        match run.connect_and_run(&mut printer, &mut progress)? {
            Ended::Done(result) => {
                let exit = result?;
                if exit != Exit::Success {
                    return Ok(exit);
                }
                if !progress.lost.is_empty() {
                    return Err(fail(Exit::Transport, lost(&progress.lost, &inputs)));
                }
                if progress.tally.worst.is_some() {
                    return progress.tally.finish();
                }
                if progress.tally.lines == 0 && plan.commands.is_empty() && stdin_batch {
                    stderr!("rcon: warning: no commands on stdin; nothing was sent");
                }
                return Ok(Exit::Success);
            }
            Ended::Lost { message, exit } => {
                starter.drop_shared_connection();
                let resumable = inputs
                    .get(progress.inputs)
                    .is_none_or(|name| name.as_str() != "-");
                let pause = if resumable {
                    progress.tally.retries.next()
                } else {
                    None
                };
                let Some(pause) = pause else {
                    return Err(fail(exit, message));
                };
                let warning = progress.tally.retries.reconnecting(&message, pause);
                crate::app::print::output::warning(&warning);
                crate::app::interrupt::pause(pause, stop.as_ref());
                if let Some(signal) = stop.as_ref().and_then(Stop::received) {
                    let stopped = Interrupted::by(signal).ran(progress.tally.sent, &[]);
                    return Err(stopped.while_reconnecting(&message));
                }
                progress.resume = progress.begun;
            }
        }
    }
}

/// The error for answers that never reached this side (exit 9): the lines ran, the remote
/// journal kept no answer for them.
fn lost(lost: &[(usize, u64, u64)], inputs: &[String]) -> String {
    format!(
        "{}: those lines ran on the remote side, but their answers never arrived here and its journal did not keep them",
        ranges("answers lost", lost, |i| display_name(&inputs[i]))
    )
}

/// An input's name in messages.
fn display_name(input: &str) -> &str {
    if input == "-" { "<stdin>" } else { input }
}

/// `NAME:FIRST-LAST`, or `NAME:LINE`.
fn range(name: &str, first: u64, last: u64) -> String {
    if first == last {
        format!("{name}:{first}")
    } else {
        format!("{name}:{first}-{last}")
    }
}

struct Run<'a> {
    plan: &'a SessionPlan,
    inputs: &'a [String],
    starter: &'a Starter,
    via: &'a str,
    stop: Option<&'a Stop>,
    max: usize,
    /// The run's decisions (`--keep-going`, `--echo`, `--retry`).
    policy: Policy,
}

impl Run<'_> {
    /// The resolved batch settings (macros, the journal's `--resume` and in-doubt choices).
    fn batch(&self) -> &BatchPolicy {
        &self.plan.batch
    }

    /// Starts ssh and the remote side, checks the versions, and runs what is left.
    fn connect_and_run(
        &self,
        printer: &mut Printer,
        progress: &mut Progress,
    ) -> anyhow::Result<Ended> {
        let (tx, rx, link) = match self.starter.open() {
            Ok(opened) => opened,
            Err(StartError::Fatal(e)) => return Err(e),
            // A remote side that went away after it was up (its server restarted it): retry.
            Err(StartError::Lost(message)) => {
                return Ok(Ended::Lost {
                    message,
                    exit: Exit::Transport,
                });
            }
        };
        let (credit_tx, credit_rx) = mpsc::sync_channel::<()>(WINDOW);
        for _ in 0..WINDOW {
            let _ = credit_tx.send(());
        }
        let commands: Vec<String> = self.plan.commands[progress.commands..].to_vec();
        let first_command = progress.commands;
        let inputs: Vec<String> = self.inputs[progress.inputs..].to_vec();
        let first_input = progress.inputs;
        let macros = self.batch().macros.clone();
        let events = tx;
        std::thread::spawn(move || {
            read_all(
                commands,
                first_command,
                inputs,
                first_input,
                macros,
                credit_rx,
                events,
            )
        });
        let mut pipe = Pipe {
            run: self,
            link,
            credit: Some(credit_tx),
            queue: VecDeque::new(),
            held: VecDeque::new(),
            paused: false,
            next_id: 1,
            skip_through: HashMap::new(),
            taken_as_run: None,
            stop_error: None,
            no_more: false,
            read_done: false,
            aborted: None,
            ended: false,
            retry: None,
            ran: Vec::new(),
            chain: journal::Chain::default(),
            expect: None,
            replay: HashMap::new(),
            printed_through: 0,
            ack: None,
            last_sent: None,
        };
        pipe.run_loop(&rx, printer, progress)
    }
}

/// Reads the `-c` commands, then each input, into `events`, one item per credit.
fn read_all(
    commands: Vec<String>,
    first_command: usize,
    inputs: Vec<String>,
    first_input: usize,
    macros: HashMap<String, String>,
    credit: Receiver<()>,
    events: Sender<Event>,
) {
    let send = |src| events.send(Event::Src(src)).is_ok();
    for (i, text) in commands.into_iter().enumerate() {
        if credit.recv().is_err()
            || !send(Src::Command {
                text,
                index: first_command + i,
            })
        {
            return;
        }
    }
    for (i, path) in inputs.iter().enumerate() {
        let input_index = first_input + i;
        let mut input = match Input::open(path, false) {
            Ok(input) => input,
            Err(e) => {
                send(Src::Failed(format!("{e:#}")));
                return;
            }
        };
        let key = if path == "-" {
            Some(journal::STDIN.to_string())
        } else {
            match journal::content_key(std::path::Path::new(path)) {
                Ok(key) => Some(key),
                Err(e) => {
                    send(Src::Failed(format!("cannot read {path}: {e}")));
                    return;
                }
            }
        };
        if !send(Src::Begin {
            input: input_index,
            key,
        }) {
            return;
        }
        let mut joiner = Joiner::new(macros.clone());
        let mut buf = Vec::with_capacity(4096);
        let mut slashes = 0;
        let mut first_slash = None;
        loop {
            if credit.recv().is_err() {
                return;
            }
            let (item, last) = match files::next_item(&mut input, &mut joiner, &mut buf) {
                Ok(Some(next)) => next,
                Ok(None) => break,
                Err(e) => {
                    send(Src::Failed(format!("{e:#}")));
                    return;
                }
            };
            if let Item::Command(c) = &item
                && c.slash_stripped
            {
                slashes += 1;
                first_slash.get_or_insert(c.line);
            }
            if !send(Src::Item {
                input: input_index,
                item,
            }) {
                return;
            }
            if last {
                break;
            }
        }
        if !send(Src::End {
            input: input_index,
            slashes,
            first_slash,
        }) {
            return;
        }
    }
    send(Src::Done);
}

/// One connection's pipeline.
struct Pipe<'a, 'r> {
    run: &'a Run<'r>,
    link: SshLink,
    credit: Option<SyncSender<()>>,
    queue: VecDeque<Entry>,
    /// Items read while waiting for a journal answer.
    held: VecDeque<Src>,
    paused: bool,
    next_id: u64,
    /// Per input: lines up to this one already ran (resume).
    skip_through: HashMap<usize, u64>,
    stop_error: Option<anyhow::Error>,
    /// Send nothing more (a failure, a refusal, a signal).
    no_more: bool,
    read_done: bool,
    /// Ctrl-C or SIGTERM: the stream was ended.
    aborted: Option<Signal>,
    /// The remote side answered `end`.
    ended: bool,
    /// A failed command that `--retry` reconnects for: its message and exit.
    retry: Option<(String, Exit)>,
    /// What ran on this connection, per input: first and last answered line.
    ran: Vec<(usize, u64, u64)>,
    /// stdin's chain over its items (journal::Chain), and the journal's to check it against
    /// where a `--resume` starts (the chain through the journal's last answered line).
    chain: journal::Chain,
    expect: Option<(u64, String)>,
    /// Resuming: the kept answers of lines that ran but whose answers were not printed, by
    /// line, and the line through which answers were printed.
    replay: HashMap<u64, Frame>,
    printed_through: u64,
    /// The last line printed, not yet acknowledged.
    ack: Option<u64>,
    /// The last line sent on this connection.
    last_sent: Option<(usize, u64)>,
    /// `--skip-in-doubt`: the line in doubt taken as run (input, line); its answer is not lost.
    taken_as_run: Option<(usize, u64)>,
}

impl Pipe<'_, '_> {
    fn name(&self, input: usize) -> &str {
        display_name(&self.run.inputs[input])
    }

    fn give_credit(&self) {
        if let Some(c) = &self.credit {
            let _ = c.try_send(());
        }
    }

    fn stop_sending(&mut self) {
        self.no_more = true;
        self.credit = None;
    }

    fn run_loop(
        &mut self,
        rx: &Receiver<Event>,
        printer: &mut Printer,
        progress: &mut Progress,
    ) -> anyhow::Result<Ended> {
        loop {
            if self.aborted.is_none()
                && let Some(signal) = self.run.stop.and_then(Stop::received)
            {
                self.aborted = Some(signal);
                self.stop_sending();
                self.link.close();
            }
            let event = match rx.recv_timeout(Duration::from_millis(100)) {
                Ok(e) => e,
                Err(RecvTimeoutError::Timeout) => continue,
                Err(RecvTimeoutError::Disconnected) => Event::Gone,
            };
            match event {
                Event::Src(src) => {
                    if self.no_more {
                        continue;
                    }
                    if self.paused {
                        self.held.push_back(src);
                    } else {
                        self.take(src, progress)?;
                    }
                }
                Event::Frame(frame) => self.frame(*frame),
                Event::Bad(e) => {
                    return Err(fail(
                        Exit::Remote,
                        format!("the remote rcon on {}: {e}", self.run.via),
                    ));
                }
                Event::Gone => {
                    self.drain(printer, progress)?;
                    return Ok(self.gone(progress));
                }
            }
            self.drain(printer, progress)?;
            if let Some(e) = self.retry_or_stop() {
                return Ok(e);
            }
            if self.queue.is_empty() && (self.read_done || self.no_more) && !self.ended {
                if self.link.send(&Frame::End).is_err() {
                    continue;
                }
                // Wait for the `end` answer; then the result.
                loop {
                    match rx.recv() {
                        Ok(Event::Frame(f)) if matches!(*f, Frame::End) => {
                            // Every `end_batch` before it arrived: the inputs' remote journals
                            // are gone, so this machine's records of them go too.
                            progress
                                .finished
                                .drain(..)
                                .for_each(journal::Journal::finish);
                            break;
                        }
                        Ok(Event::Gone) | Err(_) => break,
                        Ok(_) => {}
                    }
                }
                self.ended = true;
                let _ = self.link.ended();
                if let Some(e) = self.stop_error.take() {
                    return Ok(Ended::Done(Err(e)));
                }
                return Ok(Ended::Done(Ok(Exit::Success)));
            }
        }
    }

    /// A failed command `--retry` should reconnect for.
    fn retry_or_stop(&mut self) -> Option<Ended> {
        let (message, exit) = self.retry.take()?;
        // The remote side stopped at the failure; it ends, and a new one starts.
        let _ = self.link.send(&Frame::End);
        Some(Ended::Lost { message, exit })
    }

    /// A source item arrives: it is sent (or refused) in order.
    fn take(&mut self, src: Src, progress: &mut Progress) -> anyhow::Result<()> {
        match src {
            Src::Command { text, index } => self.send_command(text, None, Some(index), None),
            Src::Begin { input, key } => {
                progress.begun = key.is_some();
                if let Some(key) = key {
                    let resume = progress.resume && input == progress.inputs;
                    self.mark(input, &key, resume, progress);
                    if self.no_more {
                        return Ok(());
                    }
                    let frame = Frame::Batch {
                        key,
                        input: self.name(input).to_string(),
                        resume,
                    };
                    if self.link.send(&frame).is_err() {
                        self.stop_sending();
                    }
                    // The journal answer comes for every batch; a resuming run waits for it
                    // before sending a line.
                    self.queue.push_back(Entry::Journal {
                        input,
                        resume,
                        reply: None,
                    });
                    self.paused = resume;
                }
                Ok(())
            }
            Src::Item { input, item } => {
                let prefix = if self.run.inputs[input] == "-" {
                    match self.chain_item(&item) {
                        Some(prefix) => Some(prefix),
                        None => return Ok(()),
                    }
                } else {
                    None
                };
                self.item(input, item, prefix, progress)
            }
            Src::End { input, .. } if self.run.inputs[input] == "-" => {
                if let Err(through) = self.chain.checked_end(&mut self.expect) {
                    self.differs(through);
                    return Ok(());
                }
                self.take_rest(src)
            }
            other => self.take_rest(other),
        }
    }

    /// stdin: the chain through `item`, checked against the journal's where a resume starts;
    /// `None` when it differs (the run stops, nothing sent).
    fn chain_item(&mut self, item: &Item) -> Option<String> {
        let pushed = self
            .chain
            .checked_push(&mut self.expect, item.line(), item.text());
        pushed.map_err(|through| self.differs(through)).ok()
    }

    /// stdin's lines through `checked` are not the journal's.
    fn differs(&mut self, checked: u64) {
        self.stop_sending();
        let server = format!("{} on {}", self.run.plan.settings.target(), self.run.via);
        self.stop_error
            .get_or_insert_with(|| journal::stdin_differs(&server, checked));
    }

    /// Opens this machine's record of what input `input` prints (a reconnect keeps the one it
    /// has); resuming, it says what was printed. Another rcon keeping it: exit 8.
    fn mark(&mut self, input: usize, key: &str, resume: bool, progress: &mut Progress) {
        if progress.marker.is_some() {
            return;
        }
        let name = self.name(input).to_string();
        let server = format!(
            "{} via {} --remote (printed)",
            self.run.plan.settings.target(),
            self.run.via
        );
        progress.printed = (!resume).then_some(0);
        let Some(path) = journal::path_for(key, &server) else {
            return;
        };
        let waiting = &mut |pid| stderr!("rcon: {}", journal::waiting(&name, pid, "another rcon"));
        let mut locked = match journal::Locked::acquire(&path, true, journal::LOCK_WAIT, waiting) {
            Ok(journal::Acquired::Locked(locked)) => locked,
            Ok(journal::Acquired::Busy(pid)) => {
                self.stop_sending();
                self.stop_error.get_or_insert_with(|| {
                    fail(Exit::Refused, journal::busy(&name, pid, "another rcon"))
                });
                return;
            }
            Ok(journal::Acquired::Missing) => return,
            Err(e) => {
                stderr!(
                    "rcon: warning: cannot keep the record of what {name} printed in {}: {e}; a --resume may print some answers again",
                    path.display()
                );
                return;
            }
        };
        if resume {
            progress.printed = locked.read().map(|f| f.state.answered);
        }
        let state = journal::State {
            answered: progress.printed.unwrap_or(0),
            ..journal::State::default()
        };
        progress.marker = journal::Journal::start(locked, &name, &server, state, &[]).ok();
    }

    fn item(
        &mut self,
        input: usize,
        item: Item,
        prefix: Option<String>,
        progress: &mut Progress,
    ) -> anyhow::Result<()> {
        let at = match &item {
            Item::Command(c) => c.line,
            Item::Error { line, .. } => *line,
        };
        let skip = self.skip_through.get(&input).copied().unwrap_or(0);
        // Printed before (by the run that stopped, or before a reconnect).
        if at <= skip.min(self.printed_through) {
            self.give_credit();
            return Ok(());
        }
        match item {
            Item::Command(c) => {
                if let Err(e) = check_command(&c.text, self.run.max) {
                    self.refuse(input, c.line, c.text, e.to_string());
                    return Ok(());
                }
                if c.line <= skip {
                    self.replayed(input, c.line, c.text, progress);
                    return Ok(());
                }
                self.send_command(c.text, Some((input, c.line)), None, prefix)
            }
            Item::Error { line, message } => {
                let message = if message.starts_with(MACRO_NEEDS_VALUE) {
                    format!("{message} (give --macro NAME=VALUE)")
                } else {
                    message
                };
                self.refuse(input, line, String::new(), message);
                Ok(())
            }
        }
    }

    /// A line that ran on the remote side, its answer not printed: the answer the remote
    /// journal kept is printed in its place; when it kept none, the answer is lost.
    fn replayed(&mut self, input: usize, line: u64, text: String, progress: &mut Progress) {
        if self.taken_as_run == Some((input, line)) {
            // `--skip-in-doubt`: it never answered, and is not sent again.
            self.give_credit();
            return;
        }
        match self.replay.remove(&line) {
            Some(answer) => self.queue.push_back(Entry::Cmd {
                id: 0,
                text,
                at: Some((input, line)),
                index: None,
                started: true,
                answer: Some(Box::new(answer)),
                skipped: false,
            }),
            None => {
                match progress.lost.last_mut() {
                    Some(range) if range.0 == input => range.2 = line,
                    _ => progress.lost.push((input, line, line)),
                }
                self.give_credit();
            }
        }
    }

    /// The end of an input, a read failure, the end of everything.
    fn take_rest(&mut self, src: Src) -> anyhow::Result<()> {
        match src {
            Src::End {
                input,
                slashes,
                first_slash,
            } => {
                // `end_batch` goes once every answer is printed; what follows waits for it.
                self.queue.push_back(Entry::InputEnd {
                    input,
                    slashes,
                    first_slash,
                });
                self.paused = true;
                Ok(())
            }
            Src::Failed(message) => {
                self.stop_sending();
                self.stop_error
                    .get_or_insert_with(|| fail(Exit::Usage, message));
                Ok(())
            }
            Src::Done => {
                self.read_done = true;
                Ok(())
            }
            // Commands, beginnings and items: [`Pipe::take`].
            Src::Command { .. } | Src::Begin { .. } | Src::Item { .. } => Ok(()),
        }
    }

    fn refuse(&mut self, input: usize, line: u64, text: String, message: String) {
        if !self.run.policy.goes_on_after(Exit::Refused) {
            self.stop_sending();
        }
        self.queue.push_back(Entry::Refused {
            input,
            line,
            text,
            message,
        });
    }

    fn send_command(
        &mut self,
        text: String,
        at: Option<(usize, u64)>,
        index: Option<usize>,
        prefix: Option<String>,
    ) -> anyhow::Result<()> {
        let id = self.next_id;
        self.next_id += 1;
        let last = index.is_some_and(|i| i + 1 == self.run.plan.commands.len())
            && self.run.inputs.is_empty();
        let frame = Frame::Command {
            id,
            text: text.clone(),
            line: at.map(|(_, l)| l),
            last,
            prefix,
        };
        if self.link.send(&frame).is_err() {
            // The link is gone; its end event reports it.
            self.stop_sending();
            return Ok(());
        }
        if at.is_some() {
            self.last_sent = at;
        }
        self.queue.push_back(Entry::Cmd {
            id,
            text,
            at,
            index,
            started: false,
            answer: None,
            skipped: false,
        });
        Ok(())
    }

    /// A frame from the remote side lands on its entry.
    fn frame(&mut self, frame: Frame) {
        match frame {
            Frame::Started { id } | Frame::Skipped { id } | Frame::Answer { id, .. } => {
                let entry = self
                    .queue
                    .iter_mut()
                    .find(|e| matches!(e, Entry::Cmd { id: entry_id, .. } if *entry_id == id));
                if let Some(Entry::Cmd {
                    started,
                    answer,
                    skipped,
                    ..
                }) = entry
                {
                    match frame {
                        Frame::Started { .. } => *started = true,
                        Frame::Skipped { .. } => *skipped = true,
                        other => *answer = Some(Box::new(other)),
                    }
                }
            }
            Frame::Journal { .. } => {
                if let Some(Entry::Journal { reply, .. }) = self
                    .queue
                    .iter_mut()
                    .find(|e| matches!(e, Entry::Journal { reply: None, .. }))
                {
                    *reply = Some(Box::new(frame));
                }
            }
            Frame::Waiting { pid } => {
                let host = self.run.via.trim_start_matches("ssh ");
                let input = self.queue.iter().find_map(|e| match e {
                    Entry::Journal {
                        input, reply: None, ..
                    } => Some(*input),
                    _ => None,
                });
                let name = input.map_or("the input", |i| self.name(i)).to_string();
                stderr!(
                    "rcon: {}",
                    journal::waiting(
                        &name,
                        pid,
                        &format!("the remote rcon of an earlier run on {host}")
                    )
                );
            }
            Frame::Error { exit, message } => {
                self.stop_sending();
                self.stop_error.get_or_insert_with(|| {
                    fail(
                        exit_from_code(exit),
                        format!("the remote rcon on {}: {message}", self.run.via),
                    )
                });
            }
            Frame::End => self.ended = true,
            _ => {}
        }
    }

    /// Prints and accounts for every entry at the head of the queue that is complete, then
    /// acknowledges what it printed.
    fn drain(&mut self, printer: &mut Printer, progress: &mut Progress) -> anyhow::Result<()> {
        let drained = self.drain_ready(printer, progress);
        self.flush_ack();
        drained
    }

    fn drain_ready(
        &mut self,
        printer: &mut Printer,
        progress: &mut Progress,
    ) -> anyhow::Result<()> {
        while let Some(entry) = self.queue.front() {
            let ready = match entry {
                Entry::Cmd {
                    answer, skipped, ..
                } => answer.is_some() || *skipped,
                Entry::Journal { reply, .. } => reply.is_some(),
                Entry::Refused { .. } | Entry::InputEnd { .. } => true,
            };
            if !ready || self.retry.is_some() {
                return Ok(());
            }
            let entry = self.queue.pop_front().expect("front");
            match entry {
                Entry::Cmd {
                    text,
                    at,
                    index,
                    answer,
                    ..
                } => {
                    self.give_credit();
                    if let Some(answer) = answer {
                        self.answered(printer, progress, text, at, index, *answer)?;
                    }
                }
                Entry::Refused {
                    input,
                    line,
                    text,
                    message,
                } => {
                    self.give_credit();
                    let exit = Exit::Refused;
                    progress.tally.lines += 1;
                    progress.tally.count_failure(exit);
                    let name = self.name(input).to_string();
                    if printer.style() == Style::Json {
                        printer.record(&Record {
                            command: &text,
                            raw: b"",
                            ok: false,
                            error: Some(&message),
                            reason: exit.reason(),
                            elapsed: Duration::ZERO,
                            origin: Some((&name, line)),
                        })?;
                    }
                    self.printed(progress, input, line);
                    self.failure(exit, format!("{name}:{line}: {message}"));
                }
                Entry::InputEnd {
                    input,
                    slashes,
                    first_slash,
                } => {
                    // Every answer of the input is printed: only now may its remote journal
                    // go (it keeps the answers the client has not printed).
                    self.flush_ack();
                    if self.link.send(&Frame::EndBatch { complete: true }).is_err() {
                        self.stop_sending();
                    }
                    progress.inputs = input + 1;
                    progress.resume = false;
                    progress.begun = false;
                    progress.finished.extend(progress.marker.take());
                    if let Some(first) = first_slash {
                        crate::app::source::files::warn_leading_slashes(
                            self.name(input),
                            first,
                            slashes,
                        );
                    }
                    if self.paused {
                        self.paused = false;
                        self.release_held(progress)?;
                    }
                }
                Entry::Journal {
                    input,
                    resume,
                    reply,
                } => {
                    if resume {
                        self.paused = false;
                        self.resumed(input, *reply.expect("ready"), progress);
                        self.release_held(progress)?;
                    }
                }
            }
        }
        Ok(())
    }

    /// Sends what was held while paused, until the next pause.
    fn release_held(&mut self, progress: &mut Progress) -> anyhow::Result<()> {
        while let Some(src) = self.held.pop_front() {
            if self.no_more {
                break;
            }
            self.take(src, progress)?;
            if self.paused {
                break;
            }
        }
        Ok(())
    }

    /// Acknowledges the answers printed so far: the remote journal need not keep them.
    fn flush_ack(&mut self) {
        if let Some(line) = self.ack.take() {
            let _ = self.link.send(&Frame::Ack { line });
        }
    }

    /// The remote journal's answer to a resuming `batch`: refused (nothing found, a line in
    /// doubt), or what to skip and which kept answers to print first.
    fn resumed(&mut self, input: usize, reply: Frame, progress: &mut Progress) {
        let Frame::Journal {
            found,
            sent,
            answered,
            prefix,
            acked,
            answers,
        } = reply
        else {
            return;
        };
        let name = self.name(input).to_string();
        let server = &self.run.plan.settings;
        if !found {
            self.stop_sending();
            self.stop_error.get_or_insert_with(|| {
                fail(
                    Exit::Usage,
                    format!(
                        "--resume: no journal for {name} and {} on {}: the last run finished it, or the file changed since; nothing was sent (run it without --resume)",
                        server.target(),
                        self.run.via
                    ),
                )
            });
            return;
        }
        let state = journal::State {
            sent,
            answered,
            acked,
        };
        // This machine's record says what was printed; without it, what was acknowledged.
        let printed_through = progress.printed.unwrap_or(acked).min(answered);
        let replay: HashMap<u64, Frame> = answers
            .into_iter()
            .filter_map(|a| match a {
                Frame::Answer { id, .. } if id > printed_through => Some((id, a)),
                _ => None,
            })
            .collect();
        let missing = range(&name, printed_through + 1, answered);
        let kept = match replay.len() {
            _ if answered == printed_through => String::new(),
            0 => format!("; the answers of {missing} did not arrive, and it kept none"),
            kept => format!(
                "; the answers of {missing} did not arrive: the {kept} it kept are printed first"
            ),
        };
        // --skip-in-doubt is for the line checked before this run; a line left in doubt by a
        // drop that --retry crosses is not.
        let policy = BatchPolicy {
            skip_in_doubt: self.run.batch().skip_in_doubt && progress.tally.retries.used() == 0,
            ..self.run.batch().clone()
        };
        let skip = match journal::resume_after(&name, state, &policy, "the remote journal's", &kept)
        {
            Ok(skip) => skip,
            Err(refused) => {
                self.stop_sending();
                self.stop_error.get_or_insert(refused);
                return;
            }
        };
        self.skip_through.insert(input, skip);
        self.taken_as_run = (skip > answered).then_some((input, skip));
        if self.run.inputs[input] == "-" && answered > 0 {
            self.expect = Some((answered, prefix));
        }
        self.printed_through = printed_through;
        self.replay = replay;
    }

    fn answered(
        &mut self,
        printer: &mut Printer,
        progress: &mut Progress,
        text: String,
        at: Option<(usize, u64)>,
        index: Option<usize>,
        answer: Frame,
    ) -> anyhow::Result<()> {
        let Frame::Answer {
            output,
            sent,
            parse_error: _,
            error,
            exit,
            elapsed_ms,
            ..
        } = answer
        else {
            return Ok(());
        };
        let exit = exit.map(exit_from_code);
        let ok = error.is_none();
        if !ok && self.retry_instead(progress, &text, at, index, sent, exit, error.as_deref()) {
            return Ok(());
        }
        let origin_name = at.map(|(i, l)| (self.name(i).to_string(), l));
        let origin = origin_name.as_ref().map(|(n, l)| (n.as_str(), *l));
        progress.tally.lines += 1;
        if sent {
            progress.tally.sent += 1;
        }
        if let Some((input, line)) = at {
            match self.ran.iter_mut().find(|r| r.0 == input) {
                Some(r) => r.2 = line,
                None => self.ran.push((input, line, line)),
            }
        }
        self.run.policy.echo(&text, |c| printer.echo(c))?;
        printer.record(&Record {
            command: &text,
            raw: output.as_bytes(),
            ok,
            error: error.as_deref(),
            reason: exit.and_then(Exit::reason),
            elapsed: Duration::from_secs_f64(elapsed_ms.max(0.0) / 1000.0),
            origin,
        })?;
        if let Some((input, line)) = at {
            self.printed(progress, input, line);
        }
        if (ok
            || self
                .run
                .policy
                .goes_on_after(exit.unwrap_or(Exit::Connection)))
            && let Some(i) = index
        {
            progress.commands = i + 1;
        }
        if !ok {
            let exit = exit.unwrap_or(Exit::Connection);
            self.failed_answer(progress, &text, origin, index, sent, exit, error);
        }
        Ok(())
    }

    /// A lost connection or a server that is not up (yet) while `--retry` has tries left:
    /// the run reconnects and goes on from the journal, so this attempt is not printed as the
    /// line's result.
    #[allow(clippy::too_many_arguments)]
    fn retry_instead(
        &mut self,
        progress: &Progress,
        text: &str,
        at: Option<(usize, u64)>,
        index: Option<usize>,
        sent: bool,
        exit: Option<Exit>,
        error: Option<&str>,
    ) -> bool {
        let retry = self.run.policy.may_retry(&progress.tally.retries)
            && matches!(exit, Some(Exit::Connect | Exit::Connection))
            && (at.is_some_and(|(i, _)| self.run.inputs[i] != "-") || (index.is_some() && !sent));
        if !retry {
            return false;
        }
        let where_ = match at {
            Some((i, line)) => format!("{}:{line}", self.name(i)),
            None => format!("command '{}'", short(text)),
        };
        self.stop_sending();
        self.retry = Some((
            format!("{where_}: {}", error.unwrap_or_default()),
            exit.unwrap_or(Exit::Connection),
        ));
        true
    }

    /// A command that failed, printed already: counted, and the run stops after it unless the
    /// policy goes on.
    #[allow(clippy::too_many_arguments)]
    fn failed_answer(
        &mut self,
        progress: &mut Progress,
        text: &str,
        origin: Option<(&str, u64)>,
        index: Option<usize>,
        sent: bool,
        exit: Exit,
        error: Option<String>,
    ) {
        progress.tally.count_failure(exit);
        let why = error.unwrap_or_default();
        let message = match (origin, sent) {
            (Some((name, line)), _) => command_failed(&format!("{name}:{line}: "), text, &why),
            (None, true) => command_failed("", text, &why),
            (None, false) => why,
        };
        if let Some(i) = index
            && !self.run.policy.goes_on_after(exit)
        {
            // A `-c` command: the words of a local run (src/app/runner/single.rs).
            self.stop_sending();
            let later = self.run.plan.commands.len() - i - 1 + usize::from(!sent);
            let rest = if self.run.inputs.is_empty() {
                Rest::Nothing
            } else {
                Rest::BatchInput
            };
            let failure = Failure {
                exit,
                message,
                goes_on: false,
            };
            let message = commands::stopped_here(&failure, sent, later, rest);
            self.stop_error.get_or_insert_with(|| fail(exit, message));
            return;
        }
        self.failure(exit, message);
    }

    /// Line `line` of input `input` is printed: this machine's record says so, and the remote
    /// journal is told with the next acknowledgement.
    fn printed(&mut self, progress: &mut Progress, input: usize, line: u64) {
        if input != progress.inputs {
            return;
        }
        progress.printed = Some(line);
        if let Some(marker) = progress.marker.as_mut() {
            marker.answered(line);
        }
        self.ack = Some(line);
    }

    /// A failed line: reported now with `--keep-going` (not a refused login), else the run
    /// stops here.
    fn failure(&mut self, exit: Exit, message: String) {
        if self.run.policy.goes_on_after(exit) {
            stderr!("rcon: error: {message}");
            return;
        }
        self.stop_sending();
        self.stop_error
            .get_or_insert_with(|| fail(exit, batch::stopped_at_line(&message, exit)));
    }

    /// The remote side's stream ended: after Ctrl-C, an exact report; else the link was lost.
    fn gone(&mut self, progress: &mut Progress) -> Ended {
        let unanswered: Vec<&Entry> = self
            .queue
            .iter()
            .filter(|e| {
                matches!(
                    e,
                    Entry::Cmd {
                        answer: None,
                        skipped: false,
                        ..
                    }
                )
            })
            .collect();
        let ran_at: Vec<interrupted::Lines> = self
            .ran
            .iter()
            .map(|&(i, first, last)| interrupted::Lines {
                input: self.name(i).to_string(),
                first,
                last,
            })
            .collect();
        if let Some(signal) = self.aborted {
            // The stream was ended in order: what was not answered never ran.
            let mut stopped = Interrupted::by(signal).ran(progress.tally.sent, &ran_at);
            for entry in &unanswered {
                match entry {
                    Entry::Cmd {
                        at: Some((i, line)),
                        ..
                    } => stopped = stopped.unsent(self.name(*i), *line),
                    _ => stopped.not_sent += 1,
                }
            }
            if !self.read_done {
                let input = self.run.inputs.get(progress.inputs);
                stopped.rest(input.map_or("the input", |i| display_name(i)), None);
            }
            return Ended::Done(Err(stopped.error()));
        }
        if self.ended
            && let Some(e) = self.stop_error.take()
        {
            return Ended::Done(Err(e));
        }
        if let Some(e) = self.stop_error.take()
            && unanswered.is_empty()
        {
            return Ended::Done(Err(e));
        }
        let why = self.link.why();
        let mut parts = vec![
            ranges("ran (answered)", &self.ran, |i| self.name(i)),
            self.window(&unanswered),
            self.not_sent(progress),
        ];
        parts.retain(|p| !p.is_empty());
        let hint = match self.run.inputs.get(progress.inputs).map(String::as_str) {
            Some("-") => {
                "; `--resume` with the same lines on stdin asks the remote journal which lines ran, prints the answers that did not arrive, and goes on after them"
            }
            Some(_) => {
                "; `--resume` asks the remote journal which lines ran, prints the answers that did not arrive, and goes on after them"
            }
            None => "",
        };
        Ended::Lost {
            message: format!("lost the remote rcon: {why}; {}{hint}", parts.join("; ")),
            exit: Exit::Transport,
        }
    }

    /// What was streamed without an answer coming back: the remote side may have run any of
    /// it, or may be running it still, until it sees that this side is gone.
    fn window(&self, unanswered: &[&Entry]) -> String {
        let mut lines = Vec::new();
        let mut commands = Vec::new();
        for entry in unanswered {
            match entry {
                Entry::Cmd {
                    at: Some((i, line)),
                    ..
                } => match lines.last_mut() {
                    Some((input, _, last)) if input == i => *last = *line,
                    _ => lines.push((*i, *line, *line)),
                },
                Entry::Cmd { text, .. } => commands.push(format!("command '{}'", short(text))),
                _ => {}
            }
        }
        if unanswered.is_empty() {
            return "sent, no answer: none".into();
        }
        let mut what: Vec<String> = commands;
        what.extend(lines.iter().map(|&(i, a, b)| range(self.name(i), a, b)));
        format!(
            "sent, no answer (may have run, or be running still): {} ({} line{})",
            what.join(", "),
            unanswered.len(),
            if unanswered.len() == 1 { "" } else { "s" }
        )
    }

    /// What was never streamed: the rest of the input being sent, and the inputs after it.
    fn not_sent(&self, progress: &Progress) -> String {
        let (current, last) = match self.last_sent {
            Some(at) => at,
            None => (
                progress.inputs,
                self.skip_through
                    .get(&progress.inputs)
                    .copied()
                    .unwrap_or(0)
                    .max(progress.printed.unwrap_or(0)),
            ),
        };
        let mut parts = Vec::new();
        if let Some(input) = self.run.inputs.get(current) {
            let name = self.name(current);
            if input == "-" {
                parts.push(format!("{name} after line {last}"));
            } else if let Some(end) = Input::open(input, true).ok().and_then(|i| i.total)
                && end > last
            {
                parts.push(range(name, last + 1, end));
            }
        }
        let later = self.run.inputs.iter().skip(current + 1);
        parts.extend(later.map(|i| display_name(i).to_string()));
        if parts.is_empty() {
            "not sent: none".into()
        } else {
            format!("not sent: {}", parts.join(", "))
        }
    }
}

/// `LABEL: NAME:A-B, ...` for per-input line ranges; `LABEL: none`.
fn ranges<'a>(label: &str, of: &[(usize, u64, u64)], name: impl Fn(usize) -> &'a str) -> String {
    if of.is_empty() {
        return format!("{label}: none on this connection");
    }
    let all: Vec<String> = of.iter().map(|&(i, a, b)| range(name(i), a, b)).collect();
    format!("{label}: {}", all.join(", "))
}
