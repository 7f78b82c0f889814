//! Batch input run on one session: the commands of files or stdin ([`crate::app::source::files`]),
//! each sent and printed before the next line is read, so memory stays
//! flat for any input size and a program talking through pipes gets each answer at once. Ctrl-C
//! or `SIGTERM` stops the run between or during commands, with one line saying what ran, what
//! was in flight and what was not sent.

use std::time::{Duration, Instant};

use crate::app::exit::{Exit, fail};
use crate::app::interrupt::{Signal, Stop};
use crate::app::print::interrupted::{self, Interrupted, Lost};
use crate::app::print::output::Record;
use crate::app::print::progress::ProgressLine;
use crate::app::print::stderr;
use crate::app::remote::journal::{Chain, Resumed, STDIN, for_input, stdin_differs};
use crate::app::resolve::plan::BatchPolicy;
use crate::app::runner::policy::{Caught, Policy, Tally};
use crate::app::runner::session::{CommandOutcome, PARSE_ERROR, Run, Session};
use rconsole::text::mcfunction::{Item, Joiner};

use crate::app::source::files::{Input, next_item, unsendable, warn_leading_slashes};

// The accounting lives with the rest of the run's policy; `mode/mgmt*.rs` and the `--remote`
// client still name it here.

/// A file's progress, on the one progress line: lines done / total and rate.
struct Progress {
    name: String,
    total: u64,
    start: Instant,
    last: Option<Instant>,
    line: ProgressLine,
}

impl Progress {
    /// The progress line of an input whose size is known (a file), drawn on a terminal.
    fn of(input: &Input) -> Option<Progress> {
        input.total.map(|total| Progress {
            name: input.name.clone(),
            total,
            start: Instant::now(),
            last: None,
            line: ProgressLine::on_terminal(),
        })
    }

    fn draw(&mut self, done: u64, force: bool) {
        let now = Instant::now();
        if !force
            && self
                .last
                .is_some_and(|t| now - t < Duration::from_millis(100))
        {
            return;
        }
        self.last = Some(now);
        let secs = (now - self.start).as_secs_f64().max(1e-3);
        let pct = (done * 100).checked_div(self.total).unwrap_or(100);
        self.line.show(&format!(
            "{}: {done}/{} lines ({pct}%), {:.0} lines/s",
            self.name,
            self.total,
            done as f64 / secs
        ));
    }

    fn clear(&mut self) {
        self.line.clear();
    }
}

/// Whether a progress bar may be drawn for a file input.
pub fn progress_wanted(path: &str) -> bool {
    path != "-" && crate::app::print::stderr_is_terminal()
}

/// Runs every input in order through the session. Returns an error (with the exit status) at
/// the first failed line unless `keep_going`; with it, failures are reported as they happen and
/// counted in `tally`. Ctrl-C or `SIGTERM` stops the run: every answer already received is on
/// stdout (each is written as soon as it is complete), and the error says how many commands
/// ran, which one was in flight and how many were not sent.
pub fn run_inputs(
    session: &mut Session,
    inputs: Vec<Input>,
    opts: &BatchPolicy,
    tally: &mut Tally,
) -> anyhow::Result<()> {
    if inputs.is_empty() {
        return Ok(());
    }
    let stop = Stop::catch();
    if let Some(stop) = &stop {
        session.set_cancel(stop.flag());
    }
    let policy = Policy::from(opts);
    let mut inputs = inputs.into_iter();
    while let Some(input) = inputs.next() {
        let run = (opts, &policy);
        let Some(mut halt) = run_input(session, input, run, tally, stop.as_ref())? else {
            continue;
        };
        for mut later in inputs {
            let mut joiner = Joiner::new(opts.macros.clone());
            let rest = later.count_rest(&mut joiner, &mut Vec::new());
            halt.rest(&later.name, rest);
        }
        return Err(halt.ran(tally.sent, &tally.ran_at).error());
    }
    Ok(())
}

/// Runs one input through the session; `Some` when a signal stopped it.
fn run_input(
    session: &mut Session,
    mut input: Input,
    (opts, policy): (&BatchPolicy, &Policy),
    tally: &mut Tally,
    stop: Option<&Stop>,
) -> anyhow::Result<Option<Interrupted>> {
    let mut joiner = Joiner::new(opts.macros.clone());
    let mut progress = Progress::of(&input);
    let name = input.name.clone();
    let mut slashes: u64 = 0;
    let mut first_slash: Option<u64> = None;
    let mut buf = Vec::with_capacity(4096);
    let max = session.max_command_bytes();
    let (mut journal, Resumed { skip, mut expect }) = for_input(&name, session.server(), opts)?
        .map_or((None, Resumed::default()), |(j, r)| (Some(j), r));
    // stdin's journal keeps a chain over the items, checked again when resuming.
    let mut chain = (name == STDIN && journal.is_some()).then(Chain::default);
    let stopped = || stop.and_then(Stop::received);
    let result = (|| -> anyhow::Result<Option<Interrupted>> {
        loop {
            let next = next_item(&mut input, &mut joiner, &mut buf);
            if let Some(signal) = stopped() {
                // A line read just now was not sent either.
                let halt = Interrupted::by(signal);
                return Ok(Some(match &next {
                    Ok(Some((item, _))) => halt.unsent(&name, item.line()),
                    _ => halt,
                }));
            }
            let Some((item, last)) = next? else {
                break;
            };
            let done = joiner.line();
            let at = item.line();
            let pushed = chain
                .as_mut()
                .map(|c| c.checked_push(&mut expect, at, item.text()));
            let prefix = pushed
                .transpose()
                .map_err(|through| differs(session, through))?;
            // The line `--skip-in-doubt` takes as run is recorded as run, once stdin's lines
            // were found the same (a plain resume writes what the journal said).
            if at == skip
                && expect.is_none()
                && let Some(j) = journal.as_mut()
            {
                j.taken_as_run(skip, prefix.clone());
            }
            let mut step = Step {
                session: &mut *session,
                name: &name,
                policy,
                tally: &mut *tally,
                max,
                progress: &mut progress,
                stop,
                journal: &mut journal,
                skip,
                prefix,
            };
            let outcome = step.handle(item, &mut slashes, &mut first_slash);
            if let Some(p) = progress.as_mut() {
                p.draw(done, false);
            }
            // A signal stopped the run at this item; the halt says whether it was in flight.
            if let Some(halt) = outcome? {
                return Ok(Some(halt));
            }
            if last {
                break;
            }
        }
        // Read to its end without passing the journal's line: the same lines, or fewer.
        if let Some(Err(through)) = chain.as_ref().map(|c| c.checked_end(&mut expect)) {
            return Err(differs(session, through));
        }
        Ok(None)
    })();
    if let Some(p) = progress.as_mut() {
        p.clear();
    }
    if let Some(first) = first_slash {
        warn_leading_slashes(&name, first, slashes);
    }
    let halt = result?;
    // Read to its end: nothing to resume (a failure or a signal returned before here).
    if halt.is_none()
        && let Some(j) = journal.take()
    {
        j.finish();
    }
    Ok(halt.map(|mut halt| {
        halt.rest(&name, input.count_rest(&mut joiner, &mut buf));
        halt
    }))
}

/// `--resume`: stdin's lines through `through` were not those of the run that stopped.
fn differs(session: &Session, through: u64) -> anyhow::Error {
    stdin_differs(session.server(), through)
}

/// Stdout was closed at line `line` of `input`: `sent`, that command ran (its answer could not
/// be printed); else it was not sent either. Nothing more is sent, as after a signal: a batch
/// whose answers nobody reads is not a batch that ran.
fn stdout_closed(sent: bool, input: &str, line: u64) -> Interrupted {
    let halt = Interrupted::by(Signal::Pipe);
    if sent { halt } else { halt.unsent(input, line) }
}

/// What one item of an input is run with.
struct Step<'a> {
    session: &'a mut Session,
    name: &'a str,
    policy: &'a Policy,
    tally: &'a mut Tally,
    max: usize,
    progress: &'a mut Option<Progress>,
    stop: Option<&'a Stop>,
    /// This input's journal (a file; docs/remote.md).
    journal: &'a mut Option<crate::app::remote::journal::Journal>,
    /// `--resume`: lines through this one already ran.
    skip: u64,
    /// stdin: the journal's chain through this item.
    prefix: Option<String>,
}

impl Step<'_> {
    /// Sends (or refuses) one item and applies the failure policy; `Some` when a signal
    /// stopped the run before or while the item ran.
    fn handle(
        &mut self,
        item: Item,
        slashes: &mut u64,
        first_slash: &mut Option<u64>,
    ) -> anyhow::Result<Option<Interrupted>> {
        let at = item.line();
        if at <= self.skip {
            return Ok(None);
        }
        if let Item::Command(c) = &item
            && c.slash_stripped
        {
            *slashes += 1;
            first_slash.get_or_insert(c.line);
        }
        if let Some((line, why)) = unsendable(&item, self.max) {
            self.tally.lines += 1;
            return self.refuse(line, item.text(), &why).map(|()| None);
        }
        // Every line the rules refuse was refused just above.
        let Item::Command(command) = item else {
            return Ok(None);
        };
        let (line, text) = (command.line, command.text);
        self.policy.pause_before(self.tally.sent > 0, self.stop);
        if let Some(signal) = self.stop.and_then(Stop::received) {
            return Ok(Some(Interrupted::by(signal).unsent(self.name, line)));
        }
        self.tally.lines += 1;
        let printer = &mut self.session.printer;
        if let Err(e) = self.policy.echo(&text, |c| printer.echo(c)) {
            return self.closed(e, false, line);
        }
        let outcome = loop {
            if let Some(j) = self.journal.as_mut() {
                j.sent(line);
            }
            let origin = Some((self.name, line));
            let how = Run {
                origin,
                ..Run::unprinted()
            };
            let outcome: CommandOutcome = self.session.run_with(&text, how)?;
            if let Some(j) = self.journal.as_mut() {
                let how = (outcome.sent, outcome.error.is_none());
                j.outcome(line, how, self.prefix.clone(), None);
            }
            match self.retry_after(&outcome, line)? {
                Some(wait) => {
                    crate::app::interrupt::pause(wait, self.stop);
                }
                None => {
                    if let Err(e) = self.session.print(&text, origin, &outcome) {
                        return self.closed(e, outcome.sent, line);
                    }
                    break outcome;
                }
            }
            if let Some(signal) = self.stop.and_then(Stop::received) {
                return Ok(Some(Interrupted::by(signal).unsent(self.name, line)));
            }
        };
        if outcome.error.is_none() {
            interrupted::extend(&mut self.tally.ran_at, self.name, line);
        }
        if let Some(signal) = self.stop.and_then(Stop::received) {
            return Ok(Some(self.signalled(signal, &outcome, line, &text)));
        }
        if let Some(halt) = self.in_doubt(&outcome, line, &text) {
            return Ok(Some(halt));
        }
        self.tally.sent += 1;
        if outcome.ok() {
            return Ok(None);
        }
        let (exit, err) = match outcome.error {
            Some(e) => (Exit::from_error(&e), anyhow::Error::new(e)),
            None => (Exit::CommandFailed, fail(Exit::CommandFailed, PARSE_ERROR)),
        };
        let err = err.context(format!(
            "{}:{line}: command '{}'",
            self.name,
            crate::app::words::short(&text)
        ));
        failed(exit, err, self.policy, self.tally).map(|()| None)
    }

    /// Where a signal that came while line `line` ran stops the run: answered in full before
    /// the signal, it ran; otherwise it was in flight, or (no connection yet) never went out.
    fn signalled(
        &mut self,
        signal: Signal,
        outcome: &CommandOutcome,
        line: u64,
        text: &str,
    ) -> Interrupted {
        match self.tally.caught(outcome.error.is_none(), outcome.sent) {
            Caught::Ran => Interrupted::by(signal),
            Caught::NotSent => Interrupted::by(signal).unsent(self.name, line),
            Caught::InFlight => {
                Interrupted::by(signal).in_flight(format!("{}:{line}", self.name), text.to_string())
            }
        }
    }

    /// A line that went out and whose answer never came back whole (the connection or the
    /// tunnel was lost, or it timed out) is in doubt: without `--keep-going` the run stops with
    /// the account of what ran, what is in doubt and what was not sent, as after Ctrl-C.
    fn in_doubt(&self, outcome: &CommandOutcome, line: u64, text: &str) -> Option<Interrupted> {
        let e = outcome.error.as_ref().filter(|_| outcome.sent)?;
        let exit = Exit::from_error(e);
        if matches!(e, rconsole::Error::Cancelled) || self.policy.goes_on_after(exit) {
            return None;
        }
        let at = format!("{}:{line}", self.name);
        // The account says once that the line may or may not have run; the library's own
        // message (made for a one-shot) says it too.
        let chain = crate::app::exit::chain(e);
        let why = chain.trim_end_matches("; the command may or may not have run");
        let retry = if self.policy.retries().allowed() > 0 && !self.policy.resends_in_doubt() {
            "; --retry does not send a line in doubt again without --resend-in-doubt"
        } else {
            ""
        };
        let resume = if self.journal.is_some() {
            format!(
                "; `--resume` goes on after it once you checked the server: with --resend-in-doubt {at} is sent again, with --skip-in-doubt it is taken as run"
            )
        } else {
            String::new()
        };
        let lost = Lost {
            exit,
            why: format!("{at}: {why}"),
            then: format!("{retry}{resume}"),
        };
        Some(
            Interrupted {
                lost: Some(lost),
                ..Interrupted::default()
            }
            .in_flight(at, text.to_string()),
        )
    }

    /// `--retry N` (local mode, as with `--remote`): after a lost connection or a server that
    /// is not up, how long to wait before the line is run again on a new connection; `None`
    /// when the outcome stands. A line that went out without its answer is in doubt: sent
    /// again only with `--resend-in-doubt`, else the run stops here ([`Step::in_doubt`]).
    fn retry_after(
        &mut self,
        outcome: &CommandOutcome,
        line: u64,
    ) -> anyhow::Result<Option<Duration>> {
        let Some(e) = &outcome.error else {
            return Ok(None);
        };
        let lost = matches!(
            Exit::from_error(e),
            Exit::Connect | Exit::Connection | Exit::Transport
        ) && !matches!(e, rconsole::Error::Cancelled);
        if !lost || !self.policy.may_retry(&self.tally.retries) {
            return Ok(None);
        }
        let name = self.name;
        if outcome.sent && !self.policy.resends_in_doubt() {
            return Ok(None);
        }
        let Some(wait) = self.tally.retries.next() else {
            return Ok(None);
        };
        let why = format!("{name}:{line}: {}", crate::app::exit::chain(e));
        crate::app::print::output::warning(&self.tally.retries.reconnecting(&why, wait));
        Ok(Some(wait))
    }

    /// A write to stdout failed at `line`: a closed stdout stops the run (`sent`: the line ran
    /// first); any other failure is the error.
    fn closed(
        &mut self,
        e: std::io::Error,
        sent: bool,
        line: u64,
    ) -> anyhow::Result<Option<Interrupted>> {
        if !crate::app::print::output::is_closed_pipe(&e) {
            return Err(e.into());
        }
        if sent {
            self.tally.sent += 1;
            interrupted::extend(&mut self.tally.ran_at, self.name, line);
        }
        Ok(Some(stdout_closed(sent, self.name, line)))
    }

    /// A line that is not sent: reported as `file:line` (and as a JSON record, so a program
    /// that waits for one answer per line is never left waiting).
    fn refuse(&mut self, line: u64, text: &str, message: &str) -> anyhow::Result<()> {
        let exit = Exit::Refused;
        if let Some(p) = self.progress.as_mut() {
            p.clear();
        }
        if self.session.printer.style() == crate::app::print::output::Style::Json {
            self.session.printer.record(&Record {
                command: text,
                raw: b"",
                ok: false,
                error: Some(message),
                reason: exit.reason(),
                elapsed: Duration::ZERO,
                origin: Some((self.name, line)),
            })?;
        }
        failed(
            exit,
            fail(exit, format!("{}:{line}: {message}", self.name)),
            self.policy,
            self.tally,
        )
    }
}

/// A failed line, counted: reported with `--keep-going` (not a refused login), else the error
/// that stops the run.
fn failed(
    exit: Exit,
    err: anyhow::Error,
    policy: &Policy,
    tally: &mut Tally,
) -> anyhow::Result<()> {
    tally.count_failure(exit);
    if policy.goes_on_after(exit) {
        stderr!("rcon: error: {err:#}");
        return Ok(());
    }
    Err(fail(exit, stopped_at_line(&format!("{err:#}"), exit)))
}

/// The message of a failed line that stops the run (locally and with `--remote`): the hint
/// about `--keep-going` only where it would go on ([`Exit::passable`]).
pub fn stopped_at_line(message: &str, exit: Exit) -> String {
    let hint = Policy::hint(exit.passable());
    format!("{message}; stopped here, later lines were not sent{hint}")
}
