//! The batch journal (docs/remote.md): for one `-f` file run against one server, the last line
//! sent and the last line the server answered, so that when a run stops halfway the error can
//! name what ran and what is in doubt, and `--resume` can go on after the last answered line.
//!
//! One small file per (input content, server) in `journal/` under the data directory, named by
//! the SHA-256 of both: editing the file or aiming at another server starts a new journal. The
//! record has a fixed width and is rewritten in place with one write per update (no fsync: it
//! has to survive the process, a dropped tunnel or a killed ssh, not a power cut). It holds no
//! password, only the input's name, the server's address and three line numbers. A run that reads
//! its input to the end removes it.
//!
//! With `--remote` the remote side also keeps each answer, appended to a second file beside the
//! record, until the client acknowledges it: `--resume` and `--retry` print the answers that
//! never reached the client before they go on. One run at a time keeps a journal: the process
//! holds an advisory lock on its file while it keeps it (released when the process ends,
//! however it ends), and a run that finds it held waits, then refuses.

use std::fs::{self, File, OpenOptions};
use std::io::{self, BufRead, Write};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde::{Deserialize, Serialize};

use crate::app::print::stderr;

/// The journal format's version, first in every record.
pub const VERSION: u32 = 1;

/// What a journal says about a stopped run. Lines are the input's physical line numbers
/// (a continued command counts at its first line); 0 means none.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct State {
    /// The last line written to the server (it may or may not have run).
    pub sent: u64,
    /// The last line whose whole answer came back (it ran).
    pub answered: u64,
    /// `--remote`: the last line whose answer the client acknowledged (printed); the answers
    /// after it, through `answered`, are kept.
    #[serde(default)]
    pub acked: u64,
}

impl State {
    /// The line sent but not answered, if any: it may or may not have run.
    pub fn in_doubt(&self) -> Option<u64> {
        (self.sent > self.answered).then_some(self.sent)
    }
}

#[derive(Serialize, Deserialize)]
struct Record {
    version: u32,
    /// stdin's: the [`Chain`] through the last answered line (its content is not known ahead,
    /// so `--resume` checks the same lines came again); empty for files.
    #[serde(default)]
    prefix: String,
    /// The process keeping it (a remote side whose client is gone may finish one command).
    #[serde(default)]
    pid: u32,
    input: String,
    server: String,
    #[serde(flatten)]
    state: State,
}

/// The SHA-256 of `data` as hex (ring's, as the TLS stack uses).
pub fn sha256_hex(data: &[u8]) -> String {
    hex(ring::digest::digest(&ring::digest::SHA256, data).as_ref())
}

/// The SHA-256 of everything `reader` yields, as hex.
pub fn sha256_hex_of(mut reader: impl io::Read) -> io::Result<String> {
    let mut context = ring::digest::Context::new(&ring::digest::SHA256);
    let mut buf = vec![0u8; 64 * 1024];
    loop {
        match reader.read(&mut buf) {
            Ok(0) => return Ok(hex(context.finish().as_ref())),
            Ok(n) => context.update(&buf[..n]),
            Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
            Err(e) => return Err(e),
        }
    }
}

/// Lower-case hex, two digits a byte. (A `format!` per byte was over half of a streamed
/// stdin's instructions: the journal's chain is written out for every line.)
fn hex(bytes: &[u8]) -> String {
    const DIGITS: &[u8; 16] = b"0123456789abcdef";
    let mut s = String::with_capacity(bytes.len() * 2);
    for &b in bytes {
        s.push(char::from(DIGITS[usize::from(b >> 4)]));
        s.push(char::from(DIGITS[usize::from(b & 0x0f)]));
    }
    s
}

/// Where the journal for `content` (the input's SHA-256) run against `server` lives, under
/// the data directory; `None` without one.
pub fn path_for(content: &str, server: &str) -> Option<PathBuf> {
    let dir = crate::app::learned::data_dir()?;
    let key = sha256_hex(format!("{content}\n{server}").as_bytes());
    Some(dir.join("journal").join(format!("{}.json", &key[..32])))
}

/// The SHA-256 of a file's content.
pub fn content_key(path: &Path) -> io::Result<String> {
    sha256_hex_of(File::open(path)?)
}

/// The key standing for stdin's content, whose journal is one per server: `--resume` with
/// stdin checks the [`Chain`] of what it reads again against the journal's.
pub const STDIN: &str = "<stdin>";

/// A hash chain over the items of an input (each command's line and text, a refused line's
/// line), for stdin's journal: `prefix` after item k is SHA-256(prefix after k-1, line, text),
/// so it can be carried on from its hex digest (the remote side only stores it).
#[derive(Clone, Default)]
pub struct Chain([u8; 32]);

impl Chain {
    /// Adds the item at `line`.
    pub fn push(&mut self, line: u64, text: &str) {
        let mut context = ring::digest::Context::new(&ring::digest::SHA256);
        context.update(&self.0);
        context.update(&line.to_be_bytes());
        context.update(text.as_bytes());
        self.0.copy_from_slice(context.finish().as_ref());
    }

    /// The chain so far, as hex.
    pub fn hex(&self) -> String {
        hex(&self.0)
    }

    /// `--resume` with stdin, for a run here and over `--remote` alike: the item at `line`
    /// added, and the chain through it (what the journal records), once the lines before it
    /// were found to be the ones the journal `expect`s (its lines through `.0`, whose chain
    /// is `.1`): `Err(through)` when they were not.
    pub fn checked_push(
        &mut self,
        expect: &mut Option<(u64, String)>,
        line: u64,
        text: &str,
    ) -> Result<String, u64> {
        if let Some((through, _)) = expect.as_ref()
            && line > *through
        {
            self.checked_end(expect)?;
        }
        self.push(line, text);
        Ok(self.hex())
    }

    /// stdin ended: `Err(through)` when the journal still `expect`s lines through `through`
    /// that were not these.
    pub fn checked_end(&self, expect: &mut Option<(u64, String)>) -> Result<(), u64> {
        match expect.take() {
            Some((through, want)) if want != self.hex() => Err(through),
            _ => Ok(()),
        }
    }
}

/// What a journal holds: its state, stdin's chain through the answered line (empty for a
/// file), and the answers kept after the acknowledged line (`--remote`), in line order.
#[derive(Clone, Default)]
pub struct Found {
    pub state: State,
    pub prefix: String,
    pub answers: Vec<(u64, String)>,
}

/// Reads the journal at `path` through `file`, its record (on Windows a locked file reads only
/// through the handle that holds the lock); `None` when there is none (the run finished or
/// never started) or it is not one this version reads.
fn read_from(file: &mut File, path: &Path) -> Option<Found> {
    use std::io::{Read, Seek};
    let mut text = String::new();
    file.seek(io::SeekFrom::Start(0)).ok()?;
    file.read_to_string(&mut text).ok()?;
    let record: Record = serde_json::from_str(text.trim_end()).ok()?;
    if record.version != VERSION {
        return None;
    }
    let mut state = record.state;
    let mut answers = Vec::new();
    if let Ok(file) = File::open(answers_path(path)) {
        for line in io::BufReader::new(file).split(b'\n').map_while(Result::ok) {
            // A line cut short by a kill is the last one and is ignored.
            let Ok(kept) = serde_json::from_slice::<Kept>(&line) else {
                continue;
            };
            // Kept, but the process ended before the record said answered: it was.
            if kept.line > state.acked && kept.line <= state.sent.max(state.answered) {
                state.answered = state.answered.max(kept.line);
                answers.retain(|(l, _)| *l < kept.line);
                answers.push((kept.line, kept.answer.to_string()));
            }
        }
    }
    answers.retain(|(l, _)| *l <= state.answered);
    Some(Found {
        state,
        prefix: record.prefix.trim().to_string(),
        answers,
    })
}

/// One kept answer: its line and the answer as the remote side sent it (opaque JSON).
#[derive(Deserialize)]
struct Kept {
    line: u64,
    answer: serde_json::Value,
}

/// One kept answer as its file holds it.
fn kept_line(line: u64, answer: &str) -> String {
    format!("{{\"line\":{line},\"answer\":{answer}}}\n")
}

/// Where the kept answers of the journal at `path` live.
fn answers_path(path: &Path) -> PathBuf {
    path.with_extension("answers")
}

/// How long a run waits for another process to give up a journal before it refuses: a remote
/// side whose client is gone stops at its next command, after the command it runs (at most
/// `--timeout`, 10 s by default) and a silent client's last heartbeat (5 s).
pub const LOCK_WAIT: Duration = Duration::from_secs(20);

/// A journal file this process alone keeps (it holds the file's lock).
pub struct Locked {
    file: File,
    path: PathBuf,
}

/// What [`Locked::acquire`] found.
pub enum Acquired {
    Locked(Locked),
    /// Another process kept it for the whole wait: its pid as recorded (0: unknown).
    Busy(u32),
    /// No journal (`create` false).
    Missing,
}

impl Locked {
    /// Opens the journal at `path` (creating it when `create`) and takes its lock. While
    /// another process holds it, calls `waiting` once with its recorded pid and waits up to
    /// `limit` for it to end or let go.
    pub fn acquire(
        path: &Path,
        create: bool,
        limit: Duration,
        waiting: &mut dyn FnMut(u32),
    ) -> io::Result<Acquired> {
        let until = Instant::now() + limit;
        let mut told = false;
        loop {
            if create && let Some(dir) = path.parent() {
                fs::create_dir_all(dir)?;
            }
            let options = OpenOptions::new()
                .create(create)
                .read(true)
                .write(true)
                .clone();
            let file = match options.open(path) {
                Ok(file) => file,
                Err(e) if !create && e.kind() == io::ErrorKind::NotFound => {
                    return Ok(Acquired::Missing);
                }
                Err(e) => return Err(e),
            };
            match file.try_lock() {
                // A file system without locks: one run at a time is not enforced there.
                Ok(()) | Err(fs::TryLockError::Error(_)) => {
                    // The keeper may have finished and removed it while this one waited.
                    if same_file(&file, path) {
                        return Ok(Acquired::Locked(Locked {
                            file,
                            path: path.to_path_buf(),
                        }));
                    }
                }
                Err(fs::TryLockError::WouldBlock) => {
                    let pid = fs::read_to_string(path)
                        .ok()
                        .and_then(|t| serde_json::from_str::<Record>(t.trim_end()).ok())
                        .map_or(0, |r| r.pid);
                    if !told {
                        told = true;
                        waiting(pid);
                    }
                    if Instant::now() >= until {
                        return Ok(Acquired::Busy(pid));
                    }
                    std::thread::sleep(Duration::from_millis(50));
                }
            }
        }
    }

    /// What the journal holds (read under the lock: no other process writes it).
    pub fn read(&mut self) -> Option<Found> {
        read_from(&mut self.file, &self.path)
    }
}

/// Whether `file` is still the file at `path`.
#[cfg(unix)]
fn same_file(file: &File, path: &Path) -> bool {
    use std::os::unix::fs::MetadataExt;
    match (file.metadata(), fs::metadata(path)) {
        (Ok(a), Ok(b)) => a.dev() == b.dev() && a.ino() == b.ino(),
        _ => false,
    }
}

#[cfg(not(unix))]
fn same_file(_file: &File, path: &Path) -> bool {
    path.exists()
}

/// Past this size the kept answers are rewritten without the acknowledged ones.
const COMPACT_BYTES: u64 = 1 << 20;

/// An open journal, updated as lines are sent and answered.
pub struct Journal {
    file: File,
    path: PathBuf,
    /// The input's name and the server, as JSON strings (written with every update).
    input: String,
    server: String,
    state: State,
    /// The chain through the answered line (stdin); empty for a file.
    prefix: String,
    /// The first write error, reported once; after it the journal is not kept.
    broken: bool,
    /// This process's id, asked for once (it is a system call on Linux).
    pid: u32,
    /// `--remote`'s kept answers (opened with the first), and the file's length.
    answers: Option<(File, u64)>,
}

impl Journal {
    /// Starts (or, resuming, continues from `state`, with the answers `kept` after its
    /// acknowledged line) the journal this process has `locked`.
    pub fn start(
        locked: Locked,
        input: &str,
        server: &str,
        state: State,
        kept: &[(u64, String)],
    ) -> io::Result<Journal> {
        let Locked { file, path } = locked;
        file.set_len(0)?;
        let mut journal = Journal {
            file,
            input: serde_json::to_string(input).unwrap_or_default(),
            server: serde_json::to_string(server).unwrap_or_default(),
            state,
            prefix: String::new(),
            broken: false,
            pid: std::process::id(),
            answers: None,
            path,
        };
        journal.write()?;
        let _ = fs::remove_file(answers_path(&journal.path));
        for (line, answer) in kept {
            journal.append(*line, answer)?;
        }
        Ok(journal)
    }

    /// `line` is about to be written to the server.
    pub fn sent(&mut self, line: u64) {
        self.state.sent = line;
        self.keep();
    }

    /// The chain (stdin) through the line answered next, or kept from the journal resumed.
    pub fn set_prefix(&mut self, prefix: String) {
        self.prefix = prefix;
    }

    /// `line` was answered in full (it ran, successfully or not).
    pub fn answered(&mut self, line: u64) {
        self.state.sent = line;
        self.state.answered = line;
        self.keep();
    }

    /// `line` was answered with `answer` (JSON), kept until [`Journal::acked`] passes it.
    fn answered_keeping(&mut self, line: u64, answer: &str) {
        if !self.broken
            && let Err(e) = self.append(line, answer)
        {
            self.failed(&e);
        }
        self.answered(line);
    }

    /// What became of line `line` once its answer came (or it failed): the one rule of what
    /// a journal records, for batch input here and on `--remote-serve`'s side. Never `sent`,
    /// it is not in doubt any more; `answered` (in full, without a lost connection), it ran,
    /// with stdin's chain through it (`prefix`) and, for `--remote`, its answer `kept` until
    /// acknowledged; sent without its answer, it stays in doubt.
    pub fn outcome(
        &mut self,
        line: u64,
        (sent, answered): (bool, bool),
        prefix: Option<String>,
        kept: Option<&str>,
    ) {
        if !sent {
            return self.not_sent();
        }
        if !answered {
            return;
        }
        if let Some(prefix) = prefix {
            self.set_prefix(prefix);
        }
        match kept {
            Some(answer) => self.answered_keeping(line, answer),
            None => self.answered(line),
        }
    }

    /// `line` was in doubt and is taken as run (`--skip-in-doubt`), with stdin's chain through
    /// it.
    pub fn taken_as_run(&mut self, line: u64, prefix: Option<String>) {
        if let Some(prefix) = prefix {
            self.prefix = prefix;
        }
        self.answered(line);
    }

    /// The client printed the answers through `line`: they need not be kept any more.
    pub fn acked(&mut self, line: u64) {
        self.state.acked = line.min(self.state.answered).max(self.state.acked);
        self.keep();
        if self
            .answers
            .as_ref()
            .is_some_and(|(_, len)| *len > COMPACT_BYTES)
            && let Err(e) = self.compact()
        {
            self.failed(&e);
        }
    }

    /// The line marked sent never went out after all (no connection).
    fn not_sent(&mut self) {
        self.state.sent = self.state.answered;
        self.keep();
    }

    /// The input was read to its end: the journal is removed.
    pub fn finish(self) {
        let _ = fs::remove_file(answers_path(&self.path));
        let _ = fs::remove_file(&self.path);
    }

    /// Writes the record now (failures are reported once, as for every update).
    pub fn keep(&mut self) {
        if self.broken {
            return;
        }
        if let Err(e) = self.write() {
            self.failed(&e);
        }
    }

    fn failed(&mut self, e: &io::Error) {
        self.broken = true;
        stderr!(
            "rcon: warning: cannot keep the journal {}: {e}; --resume will not know where this run stopped",
            self.path.display()
        );
    }

    /// Appends one kept answer (one write, so a kill leaves whole lines and at most a cut
    /// last one).
    fn append(&mut self, line: u64, answer: &str) -> io::Result<()> {
        if self.answers.is_none() {
            let file = OpenOptions::new()
                .create(true)
                .append(true)
                .open(answers_path(&self.path))?;
            let len = file.metadata()?.len();
            self.answers = Some((file, len));
        }
        let (file, len) = self.answers.as_mut().expect("opened");
        let text = kept_line(line, answer);
        file.write_all(text.as_bytes())?;
        *len += text.len() as u64;
        Ok(())
    }

    /// Rewrites the kept answers without the acknowledged ones (into a new file renamed over
    /// the old: a kill leaves one or the other, each holding every answer not acknowledged).
    fn compact(&mut self) -> io::Result<()> {
        let kept = read_from(&mut self.file, &self.path)
            .map(|f| f.answers)
            .unwrap_or_default();
        let path = answers_path(&self.path);
        let fresh = path.with_extension("answers.new");
        let text: String = kept.iter().map(|(l, a)| kept_line(*l, a)).collect();
        fs::write(&fresh, &text)?;
        // Closed first: Windows refuses to replace a file that is open (Access denied).
        self.answers = None;
        fs::rename(&fresh, &path)?;
        Ok(())
    }

    /// Rewrites the record in place: numbers are padded so it keeps its length.
    fn write(&mut self) -> io::Result<()> {
        let text = format!(
            "{{\"version\":{VERSION},\"pid\":{:>10},\"input\":{},\"server\":{},\"sent\":{:>20},\"answered\":{:>20},\"acked\":{:>20},\"prefix\":\"{:<64}\"}}\n",
            self.pid,
            self.input,
            self.server,
            self.state.sent,
            self.state.answered,
            self.state.acked,
            self.prefix,
        );
        write_at_start(&self.file, text.as_bytes())
    }
}

/// Writes `bytes` at offset 0 in one positioned write (no seek: two journal updates a command
/// were four system calls with the seek and the process id, now two).
#[cfg(unix)]
fn write_at_start(file: &File, bytes: &[u8]) -> io::Result<()> {
    std::os::unix::fs::FileExt::write_all_at(file, bytes, 0)
}

#[cfg(windows)]
fn write_at_start(file: &File, mut bytes: &[u8]) -> io::Result<()> {
    let mut offset = 0;
    while !bytes.is_empty() {
        match std::os::windows::fs::FileExt::seek_write(file, bytes, offset)? {
            0 => return Err(io::ErrorKind::WriteZero.into()),
            n => {
                bytes = &bytes[n..];
                offset += n as u64;
            }
        }
    }
    Ok(())
}

/// Where `--resume` goes on in input `name` whose journal (`whose`: "the journal's", "the
/// remote journal's") says `state`: after its last answered line, or, with a line in doubt,
/// after it (`--skip-in-doubt`: taken as run) or before it (`--resend-in-doubt`: sent again);
/// with neither flag the line in doubt is an error naming both, before anything is sent. Says
/// on stderr where it resumes, with `detail` (what else the caller found) inside its brackets.
pub fn resume_after(
    name: &str,
    state: State,
    policy: &crate::app::resolve::modes::BatchPolicy,
    whose: &str,
    detail: &str,
) -> anyhow::Result<u64> {
    use crate::app::exit::{Exit, fail};
    let answered = state.answered;
    let skip = match state.in_doubt() {
        Some(doubt) if policy.skip_in_doubt => {
            stderr!(
                "rcon: resuming {name} after line {doubt} ({name}:{doubt} was in doubt and is taken as run: --skip-in-doubt{detail})"
            );
            return Ok(doubt);
        }
        Some(_) if policy.resend_in_doubt => answered,
        Some(doubt) => {
            return Err(fail(
                Exit::Refused,
                format!(
                    "{name}:{doubt} was sent but never answered, so it may or may not have run; lines through {name}:{answered} ran; nothing was sent: check the server, then --resend-in-doubt sends {name}:{doubt} again, or --skip-in-doubt takes it as run and goes on after it"
                ),
            ));
        }
        None => answered,
    };
    if skip > 0 {
        stderr!("rcon: resuming {name} after line {skip} ({whose} last answered line{detail})");
    }
    Ok(skip)
}

/// Where a resumed input is checked (stdin, [`Chain`]) and goes on (docs/remote.md).
#[derive(Debug, Default)]
pub struct Resumed {
    /// Lines through this one already ran (0: none, or not resuming).
    pub skip: u64,
    /// stdin: the chain its lines through `.0` must have.
    pub expect: Option<(u64, String)>,
}

/// The journal of a local-mode batch input (no `--remote`) named `name` against `server`, and
/// where it resumes (`--resume`). `None` without a data directory. With `resume`, no journal,
/// or a line in doubt that `policy` neither resends nor skips, is an error before anything is
/// sent. A line in doubt skipped is recorded as run when it is read again
/// ([`Journal::taken_as_run`] at line `skip`).
pub fn for_input(
    name: &str,
    server: &str,
    policy: &crate::app::resolve::modes::BatchPolicy,
) -> anyhow::Result<Option<(Journal, Resumed)>> {
    use crate::app::exit::{Exit, fail};
    let stdin = name == STDIN;
    let content = if stdin {
        STDIN.to_string()
    } else {
        content_key(Path::new(name))
            .map_err(|e| fail(Exit::Usage, format!("cannot read {name}: {e}")))?
    };
    let Some(path) = path_for(&content, server) else {
        return Ok(None);
    };
    let waiting = &mut |pid| {
        stderr!("rcon: {}", waiting(name, pid, "another rcon"));
    };
    let mut locked = match Locked::acquire(&path, !policy.resume, LOCK_WAIT, waiting) {
        Ok(Acquired::Locked(locked)) => Some(locked),
        Ok(Acquired::Missing) => None,
        Ok(Acquired::Busy(pid)) => {
            return Err(fail(Exit::Refused, busy(name, pid, "another rcon")));
        }
        Err(e) => {
            stderr!(
                "rcon: warning: cannot keep the journal {}: {e}; --resume will not know where this run stopped",
                path.display()
            );
            return Ok(None);
        }
    };
    let found = locked.as_mut().and_then(Locked::read);
    let (state, prefix, skip) = if policy.resume {
        let Some(Found { state, prefix, .. }) = found else {
            let why = if stdin {
                "the last run from stdin finished"
            } else {
                "the last run finished it, or the file changed since"
            };
            return Err(fail(
                Exit::Usage,
                format!(
                    "--resume: no journal for {name} and {server}: {why}; nothing was sent (run it without --resume)"
                ),
            ));
        };
        let skip = resume_after(name, state, policy, "the journal's", "")?;
        (state, prefix, skip)
    } else {
        (State::default(), String::new(), 0)
    };
    let expect = (stdin && state.answered > 0).then(|| (state.answered, prefix.clone()));
    let locked = locked.expect("a journal found or created");
    match Journal::start(locked, name, server, state, &[]) {
        Ok(mut j) => {
            if !prefix.is_empty() {
                j.set_prefix(prefix);
                j.keep();
            }
            Ok(Some((j, Resumed { skip, expect })))
        }
        Err(e) => {
            stderr!(
                "rcon: warning: cannot keep the journal {}: {e}; --resume will not know where this run stopped",
                path.display()
            );
            Ok(None)
        }
    }
}

/// The line said while another process keeps the journal of `name` (`who`: which).
pub fn waiting(name: &str, pid: u32, who: &str) -> String {
    format!(
        "{} still keeps the journal of {name}: waiting up to {} for it to end (one run at a time per journal)",
        keeper(who, pid),
        rconsole::format_duration(LOCK_WAIT)
    )
}

/// The refusal (exit 8) when another process kept the journal of `name` for the whole wait.
pub fn busy(name: &str, pid: u32, who: &str) -> String {
    format!(
        "{} still keeps the journal of {name} after {}; nothing was sent: one run at a time per journal, run again once it has ended",
        keeper(who, pid),
        rconsole::format_duration(LOCK_WAIT)
    )
}

/// `WHO (pid N)`; without the pid when it could not be read (Windows: the file is locked).
fn keeper(who: &str, pid: u32) -> String {
    match pid {
        0 => who.to_string(),
        pid => format!("{who} (pid {pid})"),
    }
}

/// `--resume` with stdin read a different input than the run that stopped: nothing was sent.
pub fn stdin_differs(server: &str, answered: u64) -> anyhow::Error {
    crate::app::exit::fail(
        crate::app::exit::Exit::Usage,
        format!(
            "--resume: <stdin> is not the input of the run that stopped against {server}: its lines through <stdin>:{answered} differ (or it ends before); nothing was sent (pipe the same input again, or run without --resume)"
        ),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stdin_is_checked_against_the_journal_where_the_resume_starts() {
        let mut first = Chain::default();
        first.push(1, "a");
        first.push(2, "b");
        let expect = || Some((2, first.hex()));
        // The same two lines, then more: checked at line 3, and the chain goes on.
        let (mut chain, mut want) = (Chain::default(), expect());
        assert!(chain.checked_push(&mut want, 1, "a").is_ok());
        assert!(chain.checked_push(&mut want, 2, "b").is_ok());
        assert!(want.is_some());
        assert!(chain.checked_push(&mut want, 3, "c").is_ok());
        assert!(want.is_none());
        // Another second line: refused where the resume starts, or at the end.
        let (mut chain, mut want) = (Chain::default(), expect());
        chain.checked_push(&mut want, 1, "a").unwrap();
        chain.checked_push(&mut want, 2, "x").unwrap();
        assert_eq!(
            chain.clone().checked_push(&mut want.clone(), 3, "c"),
            Err(2)
        );
        assert_eq!(chain.checked_end(&mut want), Err(2));
        // Fewer lines: refused at the end; none expected: nothing to check.
        let (mut chain, mut want) = (Chain::default(), expect());
        chain.checked_push(&mut want, 1, "a").unwrap();
        assert_eq!(chain.checked_end(&mut want), Err(2));
        assert_eq!(chain.checked_end(&mut None), Ok(()));
    }

    #[test]
    fn sha256_matches_the_standard_vectors() {
        assert_eq!(
            sha256_hex(b"abc"),
            "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"
        );
        let long = vec![b'a'; 1_000_000];
        assert_eq!(
            sha256_hex_of(&long[..]).unwrap(),
            "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0"
        );
    }

    fn read(path: &Path) -> Option<Found> {
        read_from(&mut File::open(path).ok()?, path)
    }

    fn locked(path: &Path) -> Locked {
        match Locked::acquire(path, true, Duration::ZERO, &mut |_| panic!("free")).unwrap() {
            Acquired::Locked(l) => l,
            _ => panic!("not locked"),
        }
    }

    #[test]
    fn kept_answers_read_back_until_acknowledged_and_survive_a_cut_line() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("k.json");
        let mut j = Journal::start(locked(&path), "f", "h:1", State::default(), &[]).unwrap();
        for line in 1..=4 {
            j.sent(line);
            j.answered_keeping(line, &format!("{{\"output\":\"{line}\"}}"));
        }
        j.acked(2);
        let found = read(&path).unwrap();
        assert_eq!(found.state.acked, 2);
        let lines: Vec<u64> = found.answers.iter().map(|a| a.0).collect();
        assert_eq!(lines, [3, 4]);
        assert_eq!(found.answers[0].1, "{\"output\":\"3\"}");
        // Killed after keeping line 5's answer, before the record said so; then a cut line.
        j.sent(5);
        j.append(5, "{}").unwrap();
        j.answers
            .as_mut()
            .unwrap()
            .0
            .write_all(b"{\"line\":6,\"ans")
            .unwrap();
        let found = read(&path).unwrap();
        assert_eq!((found.state.answered, found.state.in_doubt()), (5, None));
        assert_eq!(found.answers.len(), 3);
        // Compacting keeps exactly what is not acknowledged.
        j.answered(5);
        j.acked(4);
        j.compact().unwrap();
        let found = read(&path).unwrap();
        assert_eq!(found.answers, [(5, "{}".to_string())]);
        // Resuming carries the kept answers into the new journal.
        drop(j);
        let again = Journal::start(locked(&path), "f", "h:1", found.state, &found.answers).unwrap();
        assert_eq!(read(&path).unwrap().answers, found.answers);
        again.finish();
        assert!(read(&path).is_none() && !answers_path(&path).exists());
    }

    #[test]
    fn one_keeper_at_a_time() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("l.json");
        let j = Journal::start(locked(&path), "f", "h:1", State::default(), &[]).unwrap();
        let mut told = Vec::new();
        let busy = Locked::acquire(&path, true, Duration::ZERO, &mut |pid| told.push(pid));
        assert!(matches!(busy, Ok(Acquired::Busy(pid)) if pid == std::process::id()));
        assert_eq!(told, [std::process::id()]);
        j.finish();
        let gone = Locked::acquire(&path, false, Duration::ZERO, &mut |_| panic!("free"));
        assert!(matches!(gone, Ok(Acquired::Missing)));
    }

    #[test]
    fn records_survive_and_read_back() {
        let read = |p: &Path| read(p).map(|f| f.state);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j").join("x.json");
        let mut j = Journal::start(
            locked(&path),
            "a \"b\".mcfunction",
            "h:1",
            State::default(),
            &[],
        )
        .unwrap();
        assert_eq!(read(&path), Some(State::default()));
        j.sent(3);
        assert_eq!(read(&path).unwrap().in_doubt(), Some(3));
        j.answered(3);
        j.sent(12345678901);
        j.answered(12345678901);
        j.sent(12345678905);
        let state = read(&path).unwrap();
        assert_eq!(state.answered, 12345678901);
        assert_eq!(state.in_doubt(), Some(12345678905));
        j.not_sent();
        assert_eq!(read(&path).unwrap().in_doubt(), None);
        let mut chain = Chain::default();
        chain.push(1, "say hi");
        j.set_prefix(chain.hex());
        j.answered(12345678906);
        assert_eq!(self::read(&path).unwrap().prefix, chain.hex());
        // The one rule after a line's answer: failed in flight, it stays in doubt; never
        // sent, it is not; answered, it ran, with its chain.
        let (seven, eight) = (12345678907, 12345678908);
        j.sent(seven);
        j.outcome(seven, (true, false), Some("x".into()), None);
        assert_eq!(read(&path).unwrap().in_doubt(), Some(seven));
        j.outcome(seven, (false, false), None, None);
        assert_eq!(read(&path).unwrap().in_doubt(), None);
        j.sent(eight);
        j.outcome(eight, (true, true), Some(chain.hex()), None);
        let state = read(&path).unwrap();
        assert_eq!((state.sent, state.answered), (eight, eight));
        j.finish();
        assert_eq!(read(&path), None);
    }
}
