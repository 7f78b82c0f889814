//! The batch journal (docs/remote.md): for one `-f` file run against one server, the last line
//! sent and the last line the server answered, so that when a run stops halfway the error can
//! name what ran and what is in doubt, and `--resume` can go on after the last answered line.
//!
//! One small file per (input content, server) in `journal/` under the data directory, named by
//! the SHA-256 of both: editing the file or aiming at another server starts a new journal. The
//! record has a fixed width and is rewritten in place with one write per update (no fsync: it
//! has to survive the process, a dropped tunnel or a killed ssh, not a power cut). It holds no
//! password, only the input's name, the server's address and two line numbers. A run that reads
//! its input to the end removes it.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::path::{Path, PathBuf};

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
    let dir = crate::app::resolve::config::data_dir()?;
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
}

/// Reads a journal with its prefix chain (stdin's; empty for a file); `None` when there is none
/// (the run finished or never started) or it is not one this version reads.
pub fn read_with_prefix(path: &Path) -> Option<(State, String)> {
    let text = fs::read_to_string(path).ok()?;
    let record: Record = serde_json::from_str(text.trim_end()).ok()?;
    (record.version == VERSION).then(|| (record.state, record.prefix.trim().to_string()))
}

/// Waits (up to `limit`) while another process still keeps the journal at `path`: a remote
/// side whose ssh died finishes the command it runs before it notices, and a `--resume` that
/// read the journal before that would take its line for one in doubt.
pub fn wait_for_keeper(path: &Path, limit: std::time::Duration) {
    let until = std::time::Instant::now() + limit;
    while std::time::Instant::now() < until {
        let keeper = fs::read_to_string(path)
            .ok()
            .and_then(|t| serde_json::from_str::<Record>(t.trim_end()).ok())
            .map(|r| r.pid);
        match keeper {
            Some(pid) if pid != 0 && pid != std::process::id() && alive(pid) => {
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
            _ => return,
        }
    }
}

#[cfg(unix)]
fn alive(pid: u32) -> bool {
    // SAFETY: signal 0 only checks that the process exists.
    let Ok(pid) = libc::pid_t::try_from(pid) else {
        return false;
    };
    unsafe { libc::kill(pid, 0) == 0 }
}

#[cfg(not(unix))]
fn alive(_pid: u32) -> bool {
    false
}

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
}

impl Journal {
    /// Starts (or, resuming, continues from `state`) the journal at `path`.
    pub fn start(path: &Path, input: &str, server: &str, state: State) -> io::Result<Journal> {
        if let Some(dir) = path.parent() {
            fs::create_dir_all(dir)?;
        }
        let file = OpenOptions::new()
            .create(true)
            .write(true)
            .truncate(true)
            .open(path)?;
        let mut journal = Journal {
            file,
            path: path.to_path_buf(),
            input: serde_json::to_string(input).unwrap_or_default(),
            server: serde_json::to_string(server).unwrap_or_default(),
            state,
            prefix: String::new(),
            broken: false,
            pid: std::process::id(),
        };
        journal.write()?;
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

    /// The line marked sent never went out after all (no connection).
    pub fn not_sent(&mut self) {
        self.state.sent = self.state.answered;
        self.keep();
    }

    /// The input was read to its end: the journal is removed.
    pub fn finish(self) {
        let _ = fs::remove_file(&self.path);
    }

    /// Writes the record now (failures are reported once, as for every update).
    pub fn keep(&mut self) {
        if self.broken {
            return;
        }
        if let Err(e) = self.write() {
            self.broken = true;
            stderr!(
                "rcon: warning: cannot keep the journal {}: {e}; --resume will not know where this run stopped",
                self.path.display()
            );
        }
    }

    /// Rewrites the record in place: numbers are padded so it keeps its length.
    fn write(&mut self) -> io::Result<()> {
        let text = format!(
            "{{\"version\":{VERSION},\"pid\":{:>10},\"input\":{},\"server\":{},\"sent\":{:>20},\"answered\":{:>20},\"prefix\":\"{:<64}\"}}\n",
            self.pid, self.input, self.server, self.state.sent, self.state.answered, self.prefix,
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

/// The journal of a local-mode batch input (no `--remote`) named `name` against `server`, the
/// line through which it already ran (`--resume`; else 0), and for stdin the [`Chain`] its
/// lines through that one must have. `None` without a data directory. With `resume`, no
/// journal, or a line in doubt without `resend_in_doubt`, is an error before anything is sent.
pub fn for_input(
    name: &str,
    server: &str,
    resume: bool,
    resend_in_doubt: bool,
) -> anyhow::Result<Option<(Journal, u64, Option<String>)>> {
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
    let (state, prefix) = if resume {
        let Some((state, prefix)) = read_with_prefix(&path) else {
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
        if let Some(doubt) = state.in_doubt()
            && !resend_in_doubt
        {
            return Err(fail(
                Exit::Refused,
                format!(
                    "{name}:{doubt} was sent but never answered, so it may or may not have run; lines through {name}:{} ran; nothing was sent: check the server, then --resend-in-doubt sends {name}:{doubt} again",
                    state.answered
                ),
            ));
        }
        if state.answered > 0 {
            stderr!(
                "rcon: resuming {name} after line {} (the journal's last answered line)",
                state.answered
            );
        }
        (state, prefix)
    } else {
        (State::default(), String::new())
    };
    let expect = (stdin && state.answered > 0).then(|| prefix.clone());
    match Journal::start(&path, name, server, state) {
        Ok(mut j) => {
            if !prefix.is_empty() {
                j.set_prefix(prefix);
                j.keep();
            }
            Ok(Some((j, state.answered, expect)))
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

    #[test]
    fn records_survive_and_read_back() {
        let read = |p: &Path| read_with_prefix(p).map(|(state, _)| state);
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("j").join("x.json");
        let mut j = Journal::start(&path, "a \"b\".mcfunction", "h:1", State::default()).unwrap();
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
        assert_eq!(read_with_prefix(&path).unwrap().1, chain.hex());
        j.finish();
        assert_eq!(read(&path), None);
    }
}
