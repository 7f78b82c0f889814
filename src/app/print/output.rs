//! Writing command output to stdout: one write and one flush per command, so a program reading
//! `rcon` through a pipe sees each answer as soon as it is complete. Three shapes: text for people
//! (`§` codes as colour or stripped), raw bytes, and one JSON object per command (NDJSON).

use std::io::{self, Write};
use std::time::{Duration, SystemTime};

use rconsole::text::render;

/// `--color`: when to turn `§` codes into ANSI colours.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, clap::ValueEnum)]
pub enum ColorChoice {
    /// When stdout is a terminal that shows colour, unless NO_COLOR is set, CLICOLOR=0 or
    /// TERM=dumb (CLICOLOR_FORCE colours a pipe too).
    #[default]
    Auto,
    /// Always.
    Always,
    /// Never: codes are stripped.
    Never,
}

/// What the environment says about colour, read once: the conventions other command-line
/// tools follow, so one setting in a shell profile covers `rcon` too.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct ColorEnv {
    /// `NO_COLOR` set and not empty (no-color.org): no colour, whatever else is set.
    pub no_color: bool,
    /// `CLICOLOR_FORCE` set and not `0` (bixense.com/clicolors): colour even into a pipe.
    pub clicolor_force: bool,
    /// `CLICOLOR=0`: no colour.
    pub clicolor_off: bool,
    /// `TERM` is not `dumb` (on Unix also: `TERM` is set), so the terminal shows escapes.
    pub term_supports_color: bool,
}

impl ColorEnv {
    /// Reads the variables of this process.
    pub fn from_env() -> ColorEnv {
        ColorEnv {
            no_color: anstyle_query::no_color(),
            // The spec's "set and not 0"; anstyle-query only checks "not empty".
            clicolor_force: anstyle_query::clicolor_force()
                && std::env::var_os("CLICOLOR_FORCE").is_some_and(|v| v != "0"),
            clicolor_off: anstyle_query::clicolor() == Some(false),
            term_supports_color: anstyle_query::term_supports_color(),
        }
    }
}

/// Whether colour is on. `always` and `never` are what the user asked for on this run and win
/// over the environment; `auto` is off with `NO_COLOR` (which wins over `CLICOLOR_FORCE`, as
/// no-color.org asks), on with `CLICOLOR_FORCE` even into a pipe, off with `CLICOLOR=0`, and
/// otherwise on when stdout is a terminal whose `TERM` is not `dumb`.
pub fn color_enabled(choice: ColorChoice, stdout_is_terminal: bool, env: &ColorEnv) -> bool {
    match choice {
        ColorChoice::Always => true,
        ColorChoice::Never => false,
        ColorChoice::Auto => {
            !env.no_color
                && (env.clicolor_force
                    || (!env.clicolor_off && stdout_is_terminal && env.term_supports_color))
        }
    }
}

/// How each command's output is printed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Style {
    /// Text for people; `color` renders `§` codes as ANSI, otherwise they are stripped.
    Text {
        /// Render colours.
        color: bool,
    },
    /// The bytes exactly as received.
    Raw,
    /// One JSON object per command.
    Json,
}

/// One command's result, as handed to the printer.
#[derive(Debug)]
pub struct Record<'a> {
    /// The command as sent.
    pub command: &'a str,
    /// The output bytes as received (possibly partial when `error` is set).
    pub raw: &'a [u8],
    /// Whether the command succeeded (sent, answered, no parse error).
    pub ok: bool,
    /// Why it failed, if it did.
    pub error: Option<&'a str>,
    /// The failure's one-word reason ([`crate::app::exit::Exit::reason`]), if it failed.
    pub reason: Option<&'a str>,
    /// Time from sending to the end of the output.
    pub elapsed: Duration,
    /// File name and line, for batch input.
    pub origin: Option<(&'a str, u64)>,
}

/// Appends `r` as the one JSON record ([`super::json`]) and a newline to `buf`, `response`
/// being its text as printed. Every mode's command records go through here.
pub fn write_json(buf: &mut Vec<u8>, server: Option<&str>, r: &Record<'_>, response: &str) {
    json_record(server, r, response).write(buf);
}

/// `r` as the one JSON record ([`super::json`]), `response` being its text as printed; a mode
/// with more to say (a management call's method and result) adds its keys before writing.
pub fn json_record<'a>(
    server: Option<&'a str>,
    r: &Record<'a>,
    response: &'a str,
) -> super::json::JsonRecord<'a> {
    let mut record = super::json::JsonRecord::command(server, r.command, response);
    record.ok = r.ok;
    record.error = r.error;
    record.reason = r.reason;
    record.elapsed_ms = Some(super::json::millis(r.elapsed));
    record.file = r.origin.map(|o| o.0);
    record.line = r.origin.map(|o| o.1);
    record
}

/// One `--follow` event, as the sink prints it.
#[derive(Debug)]
pub struct EventRecord<'a> {
    /// The server (profile name or address).
    pub server: &'a str,
    /// `joined`, `left`, `message`, a notification's path...
    pub kind: &'a str,
    /// The player it is about.
    pub player: Option<&'a str>,
    /// What a pushed console message says.
    pub text: Option<&'a str>,
    /// A management notification's params.
    pub params: Option<&'a serde_json::Value>,
    /// A pushed console message exactly as the server sent it.
    pub raw: Option<&'a str>,
}

/// The event's JSON record ([`super::json`]) as one line without its newline, stamped `now`:
/// what JSON style prints and what `--exec` is handed.
pub fn event_json(e: &EventRecord<'_>, now: SystemTime) -> String {
    let time = super::json::utc_millis(now);
    let mut record = super::json::JsonRecord::event(time, e.server, e.kind, e.text.unwrap_or(""));
    record.player = e.player;
    record.params = e.params;
    record.raw = e.raw;
    record.to_line()
}

/// Where command output goes.
pub struct Printer {
    buf: Vec<u8>,
    style: Style,
    fix_newlines: bool,
    /// Print nothing (mcrcon's `-s`).
    quiet: bool,
    /// The server JSON records name when the caller names none (one server's session).
    server: Option<String>,
}

impl Printer {
    /// A printer on stdout.
    pub fn new(style: Style, fix_newlines: bool) -> Self {
        if let Style::Text { color: true } = style {
            enable_ansi();
        }
        Self {
            buf: Vec::with_capacity(8192),
            style,
            fix_newlines,
            quiet: false,
            server: None,
        }
    }

    /// JSON records name `server` (one server's session; several name each their own).
    pub fn server(mut self, server: String) -> Self {
        self.server = Some(server);
        self
    }

    /// With `on`, prints no command output (records and echoes): the exit status and stderr
    /// still tell what happened.
    pub fn quiet(mut self, on: bool) -> Self {
        self.quiet = on;
        self
    }

    /// The style in use.
    pub fn style(&self) -> Style {
        self.style
    }

    /// Formats one record into `buf` (nothing for an empty raw output).
    pub fn format(&self, r: &Record<'_>, buf: &mut Vec<u8>) {
        self.format_from(r, None, buf);
    }

    /// Like [`Printer::format`], for one of several servers: JSON records name it in
    /// `server`; text is labelled by the caller.
    pub fn format_from(&self, r: &Record<'_>, server: Option<&str>, buf: &mut Vec<u8>) {
        match self.style {
            Style::Raw => {
                buf.extend_from_slice(r.raw);
                if !r.raw.is_empty() && !r.raw.ends_with(b"\n") {
                    buf.push(b'\n');
                }
            }
            // A command that failed before any output arrived prints nothing: the error is on
            // stderr.
            Style::Text { .. } if r.raw.is_empty() && r.error.is_some() => {}
            // The usual case, valid UTF-8 with no `\r` and no `§` code (whose UTF-8 is C2 A7),
            // goes out as received, with no copy into a string and back.
            Style::Text { .. } if !self.fix_newlines && is_plain(r.raw) => {
                buf.extend_from_slice(r.raw.strip_suffix(b"\n").unwrap_or(r.raw));
                buf.push(b'\n');
            }
            Style::Text { color } => {
                let text = self.text(r);
                let text = text.strip_suffix('\n').unwrap_or(&text);
                let text = if color {
                    render::to_ansi(text)
                } else {
                    render::strip(text)
                };
                // As received, ending in exactly one newline, also after an empty output, so
                // each command's answer is one record. An answer that already ends in a newline
                // (servers that end each message with one) keeps it instead of gaining a
                // second: a blank line after every answer is noise.
                buf.extend_from_slice(text.as_bytes());
                buf.push(b'\n');
            }
            Style::Json => {
                let text = render::strip(&self.text(r));
                write_json(buf, server.or(self.server.as_deref()), r, &text);
            }
        }
    }

    fn text(&self, r: &Record<'_>) -> String {
        let text = rconsole::rcon::packet::decode_output(r.raw);
        if self.fix_newlines {
            render::fix_newlines(&text)
        } else {
            text
        }
    }

    /// Prints one command's output (in one write) and flushes.
    pub fn record(&mut self, r: &Record<'_>) -> io::Result<()> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        self.format(r, &mut buf);
        let result = self.write(&buf);
        self.buf = buf;
        result
    }

    /// Prints a result that came as text (a command of `--countdown`, `--every` or `--if` on
    /// one of its servers): in JSON its record naming `server`, the text its response; else
    /// the text as it is, every line prefixed `[server]` with `label`. A failed command or an
    /// empty text prints nothing in text (the error is on stderr).
    pub fn text_result(
        &mut self,
        server: &str,
        label: bool,
        r: &Record<'_>,
        text: &str,
    ) -> io::Result<()> {
        let mut buf = std::mem::take(&mut self.buf);
        buf.clear();
        if self.style == Style::Json {
            write_json(&mut buf, Some(server), r, if r.ok { text } else { "" });
        } else if r.ok && !text.is_empty() {
            if label {
                buf.extend_from_slice(prefixed(server, text).as_bytes());
            } else {
                buf.extend_from_slice(text.trim_end_matches('\n').as_bytes());
                buf.push(b'\n');
            }
        }
        let result = self.write(&buf);
        self.buf = buf;
        result
    }

    /// Prints one `--follow` event that happened at `now`: its JSON record in JSON style, else
    /// `TIME KIND PLAYER` (or the message's text), after `[server]` with `label`.
    pub fn event(&mut self, e: &EventRecord<'_>, now: SystemTime, label: bool) -> io::Result<()> {
        let mut line = if self.style == Style::Json {
            event_json(e, now)
        } else {
            let time = super::json::utc(super::json::unix_secs(now));
            let mut l = format!("{time} {}", e.kind);
            if let Some(p) = e.player.or(e.text) {
                l.push(' ');
                l.push_str(p);
            }
            if label {
                l = format!("[{}] {l}", e.server);
            }
            l
        };
        line.push('\n');
        self.write(line.as_bytes())
    }

    /// Prints a command before its output (`--echo`); nothing in JSON mode, whose records name
    /// their command.
    pub fn echo(&mut self, command: &str) -> io::Result<()> {
        if self.style == Style::Json {
            return Ok(());
        }
        self.write(format!("> {command}\n").as_bytes())
    }

    /// Prints output this printer already formatted ([`Printer::format_from`]), laid out by
    /// the caller (fan-out's `[server]` prefixes and grouped blocks), in one write, flushed.
    pub fn formatted(&mut self, text: &str) -> io::Result<()> {
        self.write(text.as_bytes())
    }

    /// Writes and flushes at once, batch input included: an answer held back until more input
    /// was read sat unseen for the whole run of a file (issue 20), and costs a person watching
    /// a terminal or a program reading a pipe far more than one write per command costs rcon.
    fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        if self.quiet {
            return Ok(());
        }
        if bytes.is_empty() {
            return Ok(());
        }
        write_stdout(bytes)
    }
}

/// Writes `bytes` on stdout and flushes: the one place every kind of output reaches stdout
/// through (records, `--print-config` and other text, server messages as JSON), so each is one
/// write, and on a terminal the progress line is erased around it
/// ([`crate::app::print::progress::around`]).
pub fn write_stdout(bytes: &[u8]) -> io::Result<()> {
    let write = || {
        let mut lock = io::stdout().lock();
        lock.write_all(bytes)?;
        lock.flush()
    };
    if super::stdout_is_terminal() {
        crate::app::print::progress::around(write)
    } else {
        write()
    }
}

/// Stdout as `--remote-serve`'s channel to its client: protocol frames, not text, so nothing
/// else is written there while it serves (its messages go to stderr).
pub fn frame_channel() -> io::StdoutLock<'static> {
    io::stdout().lock()
}

/// Whether output bytes print as they are: valid UTF-8, no `\r` to normalise, no `§` code.
fn is_plain(raw: &[u8]) -> bool {
    !raw.iter().any(|&b| b == b'\r' || b == 0xA7) && std::str::from_utf8(raw).is_ok()
}

/// Prints text as is (no newline added) on stdout, and flushes: for `--print-config` and the
/// like, which are not command output.
pub fn print_text(text: &str) -> io::Result<()> {
    write_stdout(text.as_bytes())
}

/// Every warning of the application's runners, on stderr: `rcon: warning: MESSAGE`.
pub fn warning(message: &str) {
    super::stderr!("rcon: warning: {message}");
}

/// The one line on stderr of a failure on a server, worded the same by every runner (fan-out,
/// a timed run, `--mgmt` on several servers, one server's commands): `rcon: error: [NAME]
/// MESSAGE` when `server` names one of several (as their output lines are labelled), else
/// `rcon: error: MESSAGE`.
pub fn error(server: Option<&str>, message: &str) {
    note("error: ", server, message);
}

/// A line on stderr about one server, `rcon: KIND[NAME] MESSAGE` (KIND `error: `, or nothing
/// for a note such as `--if` not holding), labelled as [`error`] says.
pub fn note(kind: &str, server: Option<&str>, message: &str) {
    match server {
        Some(name) => super::stderr!("rcon: {kind}[{name}] {message}"),
        None => super::stderr!("rcon: {kind}{message}"),
    }
}

/// Turns on ANSI escape processing where the console needs it (Windows); elsewhere a no-op.
fn enable_ansi() {
    #[cfg(windows)]
    {
        let _ = anstyle_query::windows::enable_ansi_colors();
    }
}

/// Whether an error is a closed stdout (`rcon ... | head`), which is not a failure.
pub fn is_broken_pipe(err: &anyhow::Error) -> bool {
    err.chain()
        .any(|c| c.downcast_ref::<io::Error>().is_some_and(is_closed_pipe))
}

/// A write to a pipe whose reader is gone: `BrokenPipe` everywhere, and on Windows also
/// `ERROR_NO_DATA` (232, "the pipe is being closed") and `ERROR_PIPE_NOT_CONNECTED` (233), which
/// std does not map to `BrokenPipe` (issue 12: `rcon.exe ... | head -c 10` exited 7).
pub fn is_closed_pipe(e: &io::Error) -> bool {
    e.kind() == io::ErrorKind::BrokenPipe
        || (cfg!(windows) && matches!(e.raw_os_error(), Some(232 | 233)))
}

/// `text` with every line prefixed by `[name] `, ending in a newline; an empty output is one
/// `[name]` line, so that every command leaves a trace.
pub fn prefixed(name: &str, text: &str) -> String {
    let body = text.strip_suffix('\n').unwrap_or(text);
    let mut out = String::with_capacity(body.len() + 16);
    for line in body.split('\n') {
        out.push('[');
        out.push_str(name);
        out.push(']');
        if !line.is_empty() {
            out.push(' ');
            out.push_str(line);
        }
        out.push('\n');
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn closed_pipes_are_recognised_per_platform() {
        assert!(is_broken_pipe(
            &io::Error::from(io::ErrorKind::BrokenPipe).into()
        ));
        for code in [232, 233] {
            let err = anyhow::Error::from(io::Error::from_raw_os_error(code));
            assert_eq!(is_broken_pipe(&err), cfg!(windows), "os error {code}");
        }
        assert!(!is_broken_pipe(
            &io::Error::from(io::ErrorKind::NotFound).into()
        ));
    }

    fn rec<'a>(command: &'a str, raw: &'a [u8]) -> Record<'a> {
        Record {
            command,
            raw,
            ok: true,
            error: None,
            reason: None,
            elapsed: Duration::from_micros(1500),
            origin: None,
        }
    }

    fn format(style: Style, fix: bool, r: &Record<'_>) -> String {
        let p = Printer::new(style, fix);
        let mut buf = Vec::new();
        p.format(r, &mut buf);
        String::from_utf8(buf).unwrap()
    }

    #[test]
    fn colour_choice() {
        let plain = ColorEnv {
            term_supports_color: true,
            ..ColorEnv::default()
        };
        let auto = |tty, env: ColorEnv| color_enabled(ColorChoice::Auto, tty, &env);
        assert!(auto(true, plain));
        assert!(!auto(false, plain));
        let no_color = ColorEnv {
            no_color: true,
            ..plain
        };
        assert!(!auto(true, no_color));
        let force = ColorEnv {
            clicolor_force: true,
            ..plain
        };
        assert!(auto(false, force), "CLICOLOR_FORCE colours a pipe");
        assert!(
            auto(
                false,
                ColorEnv {
                    clicolor_off: true,
                    ..force
                }
            ),
            "CLICOLOR_FORCE wins over CLICOLOR=0"
        );
        assert!(
            !auto(
                true,
                ColorEnv {
                    no_color: true,
                    ..force
                }
            ),
            "NO_COLOR wins over CLICOLOR_FORCE"
        );
        assert!(!auto(
            true,
            ColorEnv {
                clicolor_off: true,
                ..plain
            }
        ));
        assert!(!auto(true, ColorEnv::default()), "TERM=dumb");
        assert!(color_enabled(ColorChoice::Always, false, &no_color));
        assert!(!color_enabled(ColorChoice::Never, true, &force));
    }

    #[test]
    fn text_styles() {
        let r = rec("x", "§6gold\r\nnext".as_bytes());
        assert_eq!(
            format(Style::Text { color: false }, false, &r),
            "gold\nnext\n"
        );
        assert_eq!(
            format(Style::Text { color: true }, false, &r),
            "\x1b[0;33mgold\nnext\x1b[0m\n"
        );
        assert_eq!(format(Style::Raw, false, &r), "§6gold\r\nnext\n");
        // An empty output is still one (empty) line: one record per command.
        assert_eq!(
            format(Style::Text { color: false }, false, &rec("say", b"")),
            "\n"
        );
    }

    #[test]
    fn an_answer_ending_in_a_newline_gets_no_second_one() {
        for (raw, want) in [
            (&b"done\n"[..], "done\n"),
            (b"done\r\n", "done\n"),
            (b"a\nb\n", "a\nb\n"),
            // Only the answer's own line end is taken: a blank line the server meant stays.
            (b"a\n\n", "a\n\n"),
            (b"\n", "\n"),
            (b"", "\n"),
        ] {
            for fix in [false, true] {
                let got = format(Style::Text { color: false }, fix, &rec("x", raw));
                assert_eq!(got, want, "{raw:?} fix_newlines={fix}");
            }
        }
        assert_eq!(format(Style::Raw, false, &rec("x", b"done\n")), "done\n");
        // With colour the reset goes before the one newline, not after a second.
        let got = format(
            Style::Text { color: true },
            false,
            &rec("x", "§6gold\n".as_bytes()),
        );
        assert_eq!(got, "\x1b[0;33mgold\x1b[0m\n");
    }

    #[test]
    fn json_records() {
        let mut r = rec("list", "§aThere are 0".as_bytes());
        r.origin = Some(("f.mcfunction", 7));
        let line = format(Style::Json, false, &r);
        assert!(line.ends_with('\n') && line.matches('\n').count() == 1);
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["command"], "list");
        assert_eq!(v["response"], "There are 0");
        assert_eq!(v["ok"], true);
        assert!(v["error"].is_null());
        assert_eq!(v["elapsed_ms"], 1.5);
        assert_eq!(v["file"], "f.mcfunction");
        assert_eq!(v["line"], 7);
        let plain: serde_json::Value =
            serde_json::from_str(&format(Style::Json, false, &rec("a", b"b"))).unwrap();
        assert!(plain.get("file").is_none());
    }

    #[test]
    fn fix_newlines_applies_when_asked() {
        let r = rec("help", b"/a/b");
        assert_eq!(format(Style::Text { color: false }, true, &r), "/a\n/b\n");
        assert_eq!(format(Style::Text { color: false }, false, &r), "/a/b\n");
    }
}
