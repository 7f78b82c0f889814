//! Batch input: commands streamed line by line from files or stdin through the mcfunction rules
//! (docs/protocol.md section 6), each sent and printed before the next line is read, so memory stays
//! flat for any input size and a program talking through pipes gets each answer at once.

use std::collections::HashMap;
use std::fs::File;
use std::io::{self, BufRead, BufReader, IsTerminal, Read, Write};
use std::time::{Duration, Instant};

use rconsole::rcon::client::check_command;

use crate::app::exit::{Exit, fail};
use crate::app::print::output::Record;
use crate::app::run::session::{CommandOutcome, PARSE_ERROR, Session};
use rconsole::text::mcfunction::{Item, Joiner};

/// The longest physical line kept in memory; longer ones are reported and skipped (no command
/// can be that long anyway).
pub const MAX_LINE_BYTES: usize = 1 << 20;

/// How batch input runs.
#[derive(Debug, Clone, Default)]
pub struct BatchPolicy {
    /// Continue after a failed line.
    pub keep_going: bool,
    /// Pause between commands.
    pub delay: Option<Duration>,
    /// Print each command before its output.
    pub echo: bool,
    /// Values for `$(name)` in macro lines.
    pub macros: HashMap<String, String>,
}

/// The running totals over every input of one invocation.
#[derive(Debug, Default)]
pub struct Tally {
    /// Commands and unsendable lines seen.
    pub lines: u64,
    /// Commands sent.
    pub sent: u64,
    /// Lines that failed (not sent, or failed on the server or the connection).
    pub failed: u64,
    /// The exit status the failures add up to.
    pub worst: Option<Exit>,
}

impl Tally {
    /// The exit status for the whole run, with a summary message when anything failed.
    pub fn finish(&self) -> anyhow::Result<Exit> {
        match self.worst {
            None => Ok(Exit::Success),
            Some(exit) => Err(fail(
                exit,
                format!(
                    "{} of {} command{} failed (see above)",
                    self.failed,
                    self.lines,
                    if self.lines == 1 { "" } else { "s" }
                ),
            )),
        }
    }
}

/// One input: a name for messages and a reader.
pub struct Input {
    /// `<stdin>` or the path as given.
    pub name: String,
    reader: BufReader<Box<dyn Read>>,
    /// Physical lines in a file, for the progress bar.
    total: Option<u64>,
}

impl Input {
    /// Opens `-` (stdin) or a file. A progress bar needs the line count of a file, so when
    /// `progress` is set the file is read once ahead to count lines (streaming, flat memory).
    pub fn open(path: &str, progress: bool) -> anyhow::Result<Input> {
        if path == "-" {
            return Ok(Input::stdin());
        }
        // Opening a directory succeeds on Unix and fails only at the first read, after earlier
        // commands went out; refuse it here, as an input error.
        if std::fs::metadata(path).is_ok_and(|m| m.is_dir()) {
            return Err(fail(
                Exit::Usage,
                format!("cannot read {path}: it is a directory, not a file of commands"),
            ));
        }
        let open =
            || File::open(path).map_err(|e| fail(Exit::Usage, format!("cannot read {path}: {e}")));
        let total = if progress {
            Some(
                count_lines(open()?)
                    .map_err(|e| fail(Exit::Usage, format!("cannot read {path}: {e}")))?,
            )
        } else {
            None
        };
        Ok(Input {
            name: path.to_string(),
            reader: BufReader::with_capacity(64 * 1024, Box::new(open()?)),
            total,
        })
    }

    /// Standard input.
    pub fn stdin() -> Input {
        Input {
            name: "<stdin>".into(),
            reader: BufReader::with_capacity(64 * 1024, Box::new(io::stdin())),
            total: None,
        }
    }
}

fn count_lines(file: File) -> io::Result<u64> {
    let mut reader = BufReader::with_capacity(64 * 1024, file);
    let mut lines = 0u64;
    let mut last = b'\n';
    loop {
        let buf = reader.fill_buf()?;
        if buf.is_empty() {
            break;
        }
        lines += buf.iter().filter(|&&b| b == b'\n').count() as u64;
        last = buf[buf.len() - 1];
        let n = buf.len();
        reader.consume(n);
    }
    Ok(lines + u64::from(last != b'\n'))
}

/// Reads one physical line into `buf` without its line ending, keeping at most `max` bytes.
/// Returns `None` at end of input, else whether the line was longer than `max`.
pub fn read_line<R: BufRead + ?Sized>(
    reader: &mut R,
    buf: &mut Vec<u8>,
    max: usize,
) -> io::Result<Option<bool>> {
    buf.clear();
    let mut any = false;
    let mut overflow = false;
    loop {
        let available = match reader.fill_buf() {
            Ok(b) => b,
            Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
            Err(e) => return Err(e),
        };
        if available.is_empty() {
            if !any {
                return Ok(None);
            }
            break;
        }
        any = true;
        let (chunk, used, done) = match available.iter().position(|&b| b == b'\n') {
            Some(i) => (&available[..i], i + 1, true),
            None => (available, available.len(), false),
        };
        if buf.len() + chunk.len() <= max {
            buf.extend_from_slice(chunk);
        } else {
            overflow = true;
        }
        reader.consume(used);
        if done {
            break;
        }
    }
    if buf.last() == Some(&b'\r') {
        buf.pop();
    }
    Ok(Some(overflow))
}

/// A progress line on stderr: lines done / total and rate.
struct Progress {
    name: String,
    total: u64,
    start: Instant,
    last: Option<Instant>,
    shown: bool,
    /// Output shares the terminal: the bar is cleared before each command's output.
    shares_terminal: bool,
}

impl Progress {
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
        let mut err = io::stderr().lock();
        let _ = write!(
            err,
            "\r\x1b[2K{}: {done}/{} lines ({pct}%), {:.0} lines/s",
            self.name,
            self.total,
            done as f64 / secs
        );
        let _ = err.flush();
        self.shown = true;
    }

    fn clear(&mut self) {
        if self.shown {
            let mut err = io::stderr().lock();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
            self.shown = false;
        }
    }
}

/// Whether a progress bar may be drawn for a file input.
pub fn progress_wanted(path: &str) -> bool {
    path != "-" && io::stderr().is_terminal()
}

/// Runs one input through the session. Returns an error (with the exit status) at the first
/// failed line unless `keep_going`; with it, failures are reported as they happen and counted in
/// `tally`.
pub fn run_input(
    session: &mut Session,
    mut input: Input,
    opts: &BatchPolicy,
    tally: &mut Tally,
) -> anyhow::Result<()> {
    let mut joiner = Joiner::new(opts.macros.clone());
    let mut progress = input.total.map(|total| Progress {
        name: input.name.clone(),
        total,
        start: Instant::now(),
        last: None,
        shown: false,
        shares_terminal: io::stdout().is_terminal(),
    });
    let name = input.name.clone();
    let mut slashes: u64 = 0;
    let mut first_slash: Option<u64> = None;
    let mut buf = Vec::with_capacity(4096);
    let max = session.max_command_bytes();
    // Answers wait in the printer while more input is already read (one write per 64 KiB of a
    // fast stream), and go out before rcon could block reading more.
    session.printer.hold(true);
    let result = (|| -> anyhow::Result<()> {
        loop {
            if input.reader.buffer().is_empty() {
                session.printer.flush()?;
            }
            let Some((item, last)) = next_item(&mut input, &mut joiner, &mut buf)? else {
                break;
            };
            let done = joiner.line();
            let step = handle(
                session,
                &name,
                item,
                opts,
                tally,
                max,
                &mut progress,
                &mut slashes,
                &mut first_slash,
            );
            if let Some(p) = progress.as_mut() {
                p.draw(done, false);
            }
            step?;
            if last {
                break;
            }
        }
        Ok(())
    })();
    let flushed = session.printer.flush();
    session.printer.hold(false);
    flushed?;
    if let Some(p) = progress.as_mut() {
        p.clear();
    }
    if let Some(first) = first_slash {
        let more = if slashes > 1 {
            format!(
                " (and on {} more line{})",
                slashes - 1,
                if slashes == 2 { "" } else { "s" }
            )
        } else {
            String::new()
        };
        eprintln!(
            "rcon: warning: {name}:{first}: leading '/' removed{more}; RCON does not need it and function files do not allow it"
        );
    }
    result
}

/// Sends (or refuses) one item and applies the failure policy.
#[allow(clippy::too_many_arguments)]
fn handle(
    session: &mut Session,
    name: &str,
    item: Item,
    opts: &BatchPolicy,
    tally: &mut Tally,
    max: usize,
    progress: &mut Option<Progress>,
    slashes: &mut u64,
    first_slash: &mut Option<u64>,
) -> anyhow::Result<()> {
    tally.lines += 1;
    let (line, text) = match item {
        Item::Command(c) => {
            if c.slash_stripped {
                *slashes += 1;
                first_slash.get_or_insert(c.line);
            }
            (c.line, c.text)
        }
        Item::Error { line, message } => {
            let message = if message.starts_with(rconsole::text::mcfunction::MACRO_NEEDS_VALUE) {
                format!("{message} (give --macro NAME=VALUE)")
            } else {
                message
            };
            return refuse(
                session,
                name,
                line,
                "",
                &message,
                Exit::Refused,
                opts,
                tally,
                progress,
            );
        }
    };
    if let Err(e) = check_command(&text, max) {
        return refuse(
            session,
            name,
            line,
            &text,
            &e.to_string(),
            Exit::Refused,
            opts,
            tally,
            progress,
        );
    }
    if tally.sent > 0
        && let Some(d) = opts.delay
    {
        std::thread::sleep(d);
    }
    if let Some(p) = progress.as_mut().filter(|p| p.shares_terminal) {
        p.clear();
    }
    if opts.echo {
        session.printer.echo(&text)?;
    }
    let outcome: CommandOutcome = session.run(&text, Some((name, line)))?;
    if outcome.ok() {
        tally.sent += 1;
        return Ok(());
    }
    session.printer.flush()?;
    tally.sent += 1;
    tally.failed += 1;
    let (exit, err) = match outcome.error {
        Some(e) => (Exit::from_error(&e), anyhow::Error::new(e)),
        None => (Exit::CommandFailed, fail(Exit::CommandFailed, PARSE_ERROR)),
    };
    let err = err.context(format!(
        "{name}:{line}: command '{}'",
        crate::app::short(&text)
    ));
    failed(exit, err, opts, tally)
}

/// A line that is not sent: reported as `file:line` (and as a JSON record, so a program that
/// waits for one answer per line is never left waiting).
#[allow(clippy::too_many_arguments)]
fn refuse(
    session: &mut Session,
    name: &str,
    line: u64,
    text: &str,
    message: &str,
    exit: Exit,
    opts: &BatchPolicy,
    tally: &mut Tally,
    progress: &mut Option<Progress>,
) -> anyhow::Result<()> {
    if let Some(p) = progress.as_mut() {
        p.clear();
    }
    session.printer.flush()?;
    tally.failed += 1;
    if session.printer.style() == crate::app::print::output::Style::Json {
        session.printer.record(&Record {
            command: text,
            raw: b"",
            ok: false,
            error: Some(message),
            reason: exit.reason(),
            elapsed: Duration::ZERO,
            origin: Some((name, line)),
        })?;
    }
    failed(
        exit,
        fail(exit, format!("{name}:{line}: {message}")),
        opts,
        tally,
    )
}

fn failed(
    exit: Exit,
    err: anyhow::Error,
    opts: &BatchPolicy,
    tally: &mut Tally,
) -> anyhow::Result<()> {
    tally.worst = Some(tally.worst.map_or(exit, |w| w.max(exit)));
    if opts.keep_going {
        eprintln!("rcon: error: {err:#}");
        Ok(())
    } else {
        Err(fail(
            exit,
            format!(
                "{err:#}; stopped here, later lines were not sent (--keep-going continues past failures)"
            ),
        ))
    }
}

/// Every command of one input, read whole, with its line numbers.
#[derive(Debug)]
pub struct Commands {
    /// `<stdin>` or the path as given.
    pub name: String,
    /// Each command and the line it starts on.
    pub lines: Vec<(String, u64)>,
}

/// Reads every command of `path` (`-` is stdin) through the mcfunction rules, for runs on
/// several servers, which all get the same list. Any line that cannot be sent is an error naming
/// `file:line`, before anything is sent anywhere.
pub fn read_commands(path: &str, macros: &HashMap<String, String>) -> anyhow::Result<Commands> {
    let mut input = Input::open(path, false)?;
    let mut joiner = Joiner::new(macros.clone());
    let mut buf = Vec::with_capacity(4096);
    let mut lines = Vec::new();
    while let Some((item, last)) = next_item(&mut input, &mut joiner, &mut buf)? {
        match item {
            Item::Command(c) => lines.push((c.text, c.line)),
            Item::Error { line, message } => {
                let hint = if message.starts_with(rconsole::text::mcfunction::MACRO_NEEDS_VALUE) {
                    " (give --macro NAME=VALUE)"
                } else {
                    ""
                };
                return Err(fail(
                    Exit::Refused,
                    format!("{}:{line}: {message}{hint}; nothing was sent", input.name),
                ));
            }
        }
        if last {
            break;
        }
    }
    Ok(Commands {
        name: input.name,
        lines,
    })
}

/// The next item of `input` through the mcfunction rules: a command, or a line that cannot be
/// sent. `None` at the end; `true` with the item the end produced (an unfinished continuation).
fn next_item(
    input: &mut Input,
    joiner: &mut Joiner,
    buf: &mut Vec<u8>,
) -> anyhow::Result<Option<(Item, bool)>> {
    loop {
        let line = read_line(&mut input.reader, buf, MAX_LINE_BYTES)
            .map_err(|e| fail(Exit::Usage, format!("cannot read {}: {e}", input.name)))?;
        let item = match line {
            None => return Ok(joiner.finish().map(|item| (item, true))),
            Some(true) => joiner.push_error(format!(
                "line is longer than {} MiB; not sent",
                MAX_LINE_BYTES >> 20
            )),
            Some(false) => match std::str::from_utf8(buf) {
                Ok(text) => match joiner.push(text) {
                    Some(item) => item,
                    None => continue,
                },
                Err(_) => joiner.push_error("line is not valid UTF-8; not sent".into()),
            },
        };
        return Ok(Some((item, false)));
    }
}

/// Reads a whole reader through [`read_line`]; for tests.
#[cfg(test)]
fn lines_of(mut r: impl std::io::Read, max: usize) -> Vec<(String, bool)> {
    let mut reader = BufReader::with_capacity(4, &mut r);
    let mut buf = Vec::new();
    let mut out = Vec::new();
    while let Some(over) = read_line(&mut reader, &mut buf, max).unwrap() {
        out.push((String::from_utf8(buf.clone()).unwrap(), over));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reads_lines_with_any_ending() {
        let got = lines_of(&b"a\r\nbb\n\nccc"[..], 100);
        let want = [("a", false), ("bb", false), ("", false), ("ccc", false)];
        assert_eq!(got, want.map(|(s, o)| (s.to_string(), o)).to_vec());
    }

    #[test]
    fn overlong_lines_are_flagged_not_kept() {
        let got = lines_of(&b"short\nthis one is too long\nok"[..], 8);
        assert_eq!(got[0], ("short".into(), false));
        assert!(got[1].1);
        assert!(got[1].0.len() <= 8);
        assert_eq!(got[2], ("ok".into(), false));
    }

    #[test]
    fn counts_lines() {
        let dir = tempfile::tempdir().unwrap();
        let p = dir.path().join("f");
        for (text, n) in [("", 0), ("a", 1), ("a\n", 1), ("a\nb", 2), ("\n\n", 2)] {
            std::fs::write(&p, text).unwrap();
            assert_eq!(count_lines(File::open(&p).unwrap()).unwrap(), n, "{text:?}");
        }
    }
}
