//! The remote protocol (docs/remote.md): newline-delimited JSON frames over `rcon
//! --remote-serve`'s stdin and stdout, one object per line with a `type`. Versioned by
//! [`PROTOCOL`], exchanged first in both directions; fields a side does not know are ignored, a
//! frame type it does not know is an error.

use std::io::{self, Write};

use serde::{Deserialize, Serialize};

/// The protocol version this rcon speaks (the `hello` frame). A `--remote` client needs the
/// remote side to speak it; the remote side also serves clients of version 1 (an editor's),
/// which send no heartbeat or acknowledgement.
pub const PROTOCOL: u32 = 2;

/// This program's version, as `hello` reports it.
pub const VERSION: &str = env!("CARGO_PKG_VERSION");

/// The longest frame read (a command is at most 64 KiB for Factorio; an answer can be long).
pub const MAX_FRAME_BYTES: usize = 64 << 20;

/// One frame. No `Debug`: `settings` carries the password.
#[derive(Serialize, Deserialize, Clone, PartialEq)]
#[serde(tag = "type", rename_all = "snake_case")]
pub enum Frame {
    /// Both ways, first: the protocol version and the program's version.
    Hello {
        /// [`PROTOCOL`].
        protocol: u32,
        /// The rcon version (for messages).
        version: String,
    },
    /// Client to server, once after `hello`: how to reach the RCON server from there.
    Settings {
        /// rcon's own flags for the server: `-H`, `-P`, `--dialect`, `--timeout`,
        /// `--sentinel`, `--idle-gap`, `--forget`.
        args: Vec<String>,
        /// The RCON password (only ever in this frame).
        password: String,
        /// `--keep-going`: without it the first failed command stops the run there.
        #[serde(default)]
        keep_going: bool,
        /// `--delay` between commands, in milliseconds.
        #[serde(default)]
        delay_ms: Option<u64>,
        /// Whether vanilla's parse error (`<--[HERE]`) fails a command.
        #[serde(default = "yes")]
        parse_errors_fail: bool,
        /// The client sends a frame at least this often (`heartbeat` when it has nothing
        /// else); nothing for [`GONE_AFTER_BEATS`] times as long means it is gone.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        heartbeat_ms: Option<u64>,
    },
    /// Server to client: the settings are taken (nothing is connected yet).
    Ready,
    /// Client to server: the commands that follow come from one journaled input.
    Batch {
        /// The SHA-256 of the input's content.
        key: String,
        /// The input's name, for the journal.
        input: String,
        /// Continue the journal (`--resume`) instead of starting a new one.
        #[serde(default)]
        resume: bool,
    },
    /// Server to client, the answer to `batch`: what the journal held (with `resume`).
    Journal {
        /// A journal was there.
        found: bool,
        /// Its last sent line (0: none).
        sent: u64,
        /// Its last answered line (0: none).
        answered: u64,
        /// stdin's: the chain of the commands through `answered`, as the client sent it
        /// (journal::Chain); the client checks the lines it reads again against it.
        #[serde(default, skip_serializing_if = "String::is_empty")]
        prefix: String,
        /// The last line whose answer the client acknowledged.
        #[serde(default)]
        acked: u64,
        /// The answers after `acked` through `answered` (`answer` frames whose `id` is the
        /// line), kept until the client acknowledges them.
        #[serde(default, skip_serializing_if = "Vec::is_empty")]
        answers: Vec<Frame>,
    },
    /// Server to client, before `journal`: another process (an earlier remote side) keeps the
    /// journal; this one waits for it (journal::LOCK_WAIT), then goes on or refuses (exit 8).
    Waiting {
        /// The keeper's process id on the SSH host.
        pid: u32,
    },
    /// Client to server: the answers of the current batch through `line` were printed.
    Ack {
        /// A line of the batch input.
        line: u64,
    },
    /// Client to server: it is still there (sent when it has sent nothing else for a while).
    Heartbeat,
    /// Client to server: run one command.
    Command {
        /// Chosen by the client, echoed in `started` and `answer`.
        id: u64,
        /// The command.
        text: String,
        /// Its line in the current `batch` input, for the journal.
        #[serde(default)]
        line: Option<u64>,
        /// The last command of the session (its answer may end the connection sooner).
        #[serde(default)]
        last: bool,
        /// stdin: the chain through this line, kept in the journal when it is answered.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        prefix: Option<String>,
    },
    /// Server to client: the command is being written to the RCON server now.
    Started {
        /// The command's id.
        id: u64,
    },
    /// Server to client: what became of a command.
    Answer {
        /// The command's id.
        id: u64,
        /// The output (partial when `error` is set).
        output: String,
        /// Whether it was written to the RCON server.
        sent: bool,
        /// Whether the output is vanilla's parse error.
        #[serde(default)]
        parse_error: bool,
        /// Why it failed, one line.
        #[serde(default)]
        error: Option<String>,
        /// The exit status its failure stands for (README "Exit status").
        #[serde(default)]
        exit: Option<u8>,
        /// Time from sending to the end of the output.
        #[serde(default)]
        elapsed_ms: f64,
    },
    /// Server to client: the command was not sent because an earlier one failed (no
    /// `keep_going`).
    Skipped {
        /// The command's id.
        id: u64,
    },
    /// Client to server: the current `batch` input ended; `complete` when it was read to its
    /// end (the journal is removed).
    EndBatch {
        /// Read to its end.
        complete: bool,
    },
    /// Client to server: no more commands; the server answers `end` and exits. End of input
    /// without it means the client is gone: nothing more is run.
    End,
    /// Server to client: a failure outside any command; the server exits.
    Error {
        /// The exit status it stands for.
        exit: u8,
        /// One line.
        message: String,
    },
}

/// How many heartbeat intervals without a frame mean the client is gone.
pub const GONE_AFTER_BEATS: u32 = 5;

fn yes() -> bool {
    true
}

impl Frame {
    /// This side's `hello`.
    pub fn hello() -> Frame {
        Frame::Hello {
            protocol: PROTOCOL,
            version: VERSION.to_string(),
        }
    }
}

/// Writes one frame as one line (not flushed).
pub fn write(out: &mut impl Write, frame: &Frame) -> io::Result<()> {
    let mut line = serde_json::to_vec(frame).map_err(io::Error::other)?;
    line.push(b'\n');
    out.write_all(&line)
}

/// Parses one line into a frame.
pub fn parse(line: &[u8]) -> Result<Frame, String> {
    serde_json::from_slice(line).map_err(|e| {
        let shown: String = String::from_utf8_lossy(line).chars().take(80).collect();
        format!("not a remote protocol frame ({e}): {shown}")
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn frames_round_trip_and_ignore_unknown_fields() {
        let f = Frame::Command {
            id: 7,
            text: "say hi".into(),
            line: Some(3),
            last: false,
            prefix: None,
        };
        let mut buf = Vec::new();
        write(&mut buf, &f).unwrap();
        assert_eq!(
            String::from_utf8(buf.clone()).unwrap(),
            "{\"type\":\"command\",\"id\":7,\"text\":\"say hi\",\"line\":3,\"last\":false}\n"
        );
        assert!(parse(buf.trim_ascii_end()).unwrap() == f);
        let later = br#"{"type":"command","id":1,"text":"x","future":true}"#;
        assert!(matches!(
            parse(later),
            Ok(Frame::Command {
                id: 1,
                line: None,
                last: false,
                ..
            })
        ));
        assert!(parse(br#"{"type":"teleport"}"#).is_err());
        // Version 2's frames: the kept answers travel inside `journal`, each under its line.
        let journal = Frame::Journal {
            found: true,
            sent: 9,
            answered: 9,
            prefix: String::new(),
            acked: 7,
            answers: vec![Frame::Answer {
                id: 8,
                output: "line 8".into(),
                sent: true,
                parse_error: false,
                error: None,
                exit: None,
                elapsed_ms: 0.5,
            }],
        };
        let mut buf = Vec::new();
        write(&mut buf, &journal).unwrap();
        assert!(parse(buf.trim_ascii_end()).unwrap() == journal);
        assert!(parse(br#"{"type":"ack","line":7}"#).unwrap() == Frame::Ack { line: 7 });
        assert!(parse(br#"{"type":"heartbeat"}"#).unwrap() == Frame::Heartbeat);
        // A version 1 journal answer still reads.
        assert!(matches!(
            parse(br#"{"type":"journal","found":false,"sent":0,"answered":0}"#),
            Ok(Frame::Journal { acked: 0, ref answers, .. }) if answers.is_empty()
        ));
        assert!(parse(b"garbage").err().unwrap().contains("garbage"));
    }
}
