//! Running the same commands on several servers at once (`--target NAME=HOST`, `-s a,b`,
//! groups, `--all`): a bounded pool of threads, one session per server, output labelled
//! `[NAME] ` per line (or grouped per server, or JSON), the worst exit status, and a summary of
//! the failed servers on stderr.
//!
//! Each server's output is printed as soon as each of its commands completes, so a slow or dead
//! server holds back nobody's output but its own, and only for its own timeout. The policy is
//! the one-server policy: `--delay` between commands, the first failure stops that server
//! (saying how many commands it did not send) unless `--keep-going`, `file:line` for batch
//! lines. Every record goes through the one-server renderer ([`Printer::format`]), so text,
//! colour, `--fix-newlines` and the JSON schema are the same, plus `server` in JSON.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use rconsole::Password;
use rconsole::client::{Observer, Options};
use rconsole::consoles::Protocol;
use rconsole::transport::Connector;

use super::exit::{self, Exit};
use super::output::{Printer, Record, Style};
use super::session::{self, PARSE_ERROR};
use super::settings::Settings;
use super::{is_parse_error, short};

/// At most this many servers are contacted at the same time.
pub const MAX_PARALLEL: usize = 16;

/// One server to run the commands on.
pub struct Server {
    /// The label in output and messages.
    pub name: String,
    /// How to reach it.
    pub connector: Box<dyn Connector>,
    /// Its RCON password.
    pub password: Password,
    /// Engine options (timeouts, dialect); the observer should label its warnings.
    pub options: Options,
    /// RCON, or one of the other consoles.
    pub protocol: Protocol,
}

/// One command for every server, and where it came from (`file`, `line` for batch input).
#[derive(Debug, Clone)]
pub struct Planned {
    /// The command as sent.
    pub text: String,
    /// File name and line, for batch input.
    pub origin: Option<(String, u64)>,
}

impl Planned {
    /// `file:line: ` for messages, or nothing.
    fn at(&self) -> String {
        match &self.origin {
            Some((file, line)) => format!("{file}:{line}: "),
            None => String::new(),
        }
    }
}

/// How the output of several servers is laid out on stdout.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Layout {
    /// Every line as `[NAME] line`, printed as each command completes.
    Prefix,
    /// Each server's output as one block under a `[NAME]` line, when the server is done.
    Group,
    /// One JSON object per command (or failure) per line.
    Json,
}

/// The run policy, as for one server.
#[derive(Debug, Clone, Copy, Default)]
pub struct Policy {
    /// Go on after a failed command.
    pub keep_going: bool,
    /// Pause between commands.
    pub delay: Option<Duration>,
    /// Print each command (`> COMMAND`) before its output.
    pub echo: bool,
}

/// Engine warnings on stderr, labelled with the server's name.
struct Labelled(String);

impl Observer for Labelled {
    fn warning(&self, message: &str) {
        eprintln!("rcon: warning: [{}] {message}", self.0);
    }
}

/// Runs `commands` on every resolved server (profiles of `-s a,b,c`, `--all`, a group, or
/// `--target`s), laid out and printed as resolved.
pub fn run_settings(
    servers: Vec<(String, Settings)>,
    commands: &[Planned],
    layout: Layout,
    printer: &Printer,
    policy: Policy,
) -> anyhow::Result<Exit> {
    let mut ready = Vec::new();
    for (name, settings) in servers {
        ready.push(Server {
            connector: settings.connector()?,
            password: settings.password()?,
            options: settings.options(Arc::new(Labelled(name.clone()))),
            protocol: settings.dialect.value.dialect().protocol,
            name,
        });
    }
    Ok(run(
        ready,
        commands,
        layout,
        printer,
        policy,
        &mut io::stdout(),
    )?)
}

/// What a worker reports to the printing thread.
enum Event {
    /// One command's result: complete output, or the part that came before `error`.
    Output {
        server: usize,
        command: usize,
        raw: Vec<u8>,
        elapsed: Duration,
        /// Why it failed (a parse error, or the connection) and the exit status that gives.
        error: Option<(String, Exit)>,
    },
    /// The server stopped early: `message` says why and what was not sent.
    Stopped {
        server: usize,
        message: String,
        exit: Exit,
    },
    /// The server ran every command.
    Finished { server: usize },
}

/// Runs `commands` on every server, at most [`MAX_PARALLEL`] at once, printing to `out` as
/// results arrive. Returns the worst exit status.
pub fn run(
    servers: Vec<Server>,
    commands: &[Planned],
    layout: Layout,
    printer: &Printer,
    policy: Policy,
    out: &mut dyn Write,
) -> io::Result<Exit> {
    let names: Vec<String> = servers.iter().map(|s| s.name.clone()).collect();
    let total = servers.len();
    let queue: Mutex<VecDeque<(usize, Server)>> =
        Mutex::new(servers.into_iter().enumerate().collect());
    let (tx, rx) = mpsc::channel::<Event>();
    let mut exits = vec![Exit::Success; total];
    let mut failures: Vec<(usize, Exit)> = Vec::new();
    let mut blocks: Vec<String> = vec![String::new(); total];

    thread::scope(|scope| -> io::Result<()> {
        for _ in 0..total.min(MAX_PARALLEL) {
            let tx = tx.clone();
            let queue = &queue;
            scope.spawn(move || {
                loop {
                    let next = queue.lock().expect("queue lock").pop_front();
                    let Some((index, server)) = next else { return };
                    serve(index, server, commands, policy, &tx);
                }
            });
        }
        drop(tx);
        // Printing keeps going when stdout fails, so that every worker can finish.
        let mut write_error: Option<io::Error> = None;
        let mut emit = |out: &mut dyn Write, text: &str| {
            if write_error.is_none()
                && let Err(e) = out.write_all(text.as_bytes()).and_then(|()| out.flush())
            {
                write_error = Some(e);
            }
        };
        let mut buf = Vec::with_capacity(8192);
        for event in rx {
            match event {
                Event::Output {
                    server,
                    command,
                    raw,
                    elapsed,
                    error,
                } => {
                    let name = &names[server];
                    let planned = &commands[command];
                    if let Some((_, exit)) = &error {
                        exits[server] = exits[server].max(*exit);
                    }
                    buf.clear();
                    printer.format_from(
                        &Record {
                            command: &planned.text,
                            raw: &raw,
                            ok: error.is_none(),
                            error: error.as_ref().map(|(m, _)| m.as_str()),
                            elapsed,
                            origin: planned.origin.as_ref().map(|(f, l)| (f.as_str(), *l)),
                        },
                        Some(name),
                        &mut buf,
                    );
                    let mut text = String::new();
                    if policy.echo && layout != Layout::Json {
                        text.push_str(&format!("> {}\n", planned.text));
                    }
                    text.push_str(&String::from_utf8_lossy(&buf));
                    match layout {
                        Layout::Prefix if !text.is_empty() => emit(out, &prefixed(name, &text)),
                        Layout::Prefix => {}
                        Layout::Group => blocks[server].push_str(&text),
                        Layout::Json => emit(out, &text),
                    }
                    // With --keep-going a failed command is reported and the server goes on.
                    if policy.keep_going
                        && let Some((message, _)) = &error
                    {
                        eprintln!(
                            "rcon: error: [{name}] {}command '{}': {message}",
                            planned.at(),
                            short(&planned.text)
                        );
                    }
                }
                Event::Stopped {
                    server,
                    message,
                    exit,
                } => {
                    let name = &names[server];
                    exits[server] = exits[server].max(exit);
                    eprintln!("rcon: error: [{name}] {message}");
                    if layout == Layout::Group {
                        emit(out, &group_block(name, &blocks[server]));
                    }
                    failures.push((server, exits[server]));
                }
                Event::Finished { server } => {
                    if exits[server] != Exit::Success {
                        failures.push((server, exits[server]));
                    }
                    if layout == Layout::Group {
                        emit(out, &group_block(&names[server], &blocks[server]));
                    }
                }
            }
        }
        match write_error {
            Some(e) => Err(e),
            None => Ok(()),
        }
    })?;

    if !failures.is_empty() {
        failures.sort_by_key(|(server, _)| *server);
        let list: Vec<String> = failures
            .iter()
            .map(|(server, exit)| format!("{} (exit {})", names[*server], *exit as u8))
            .collect();
        eprintln!(
            "rcon: {} of {total} server{} failed: {}",
            failures.len(),
            if total == 1 { "" } else { "s" },
            list.join(", ")
        );
    }
    Ok(exits.into_iter().max().unwrap_or(Exit::Success))
}

fn commands_word(n: usize) -> &'static str {
    if n == 1 { "command" } else { "commands" }
}

/// One server's session: connect, run the commands with the policy, report each result.
fn serve(
    index: usize,
    server: Server,
    commands: &[Planned],
    policy: Policy,
    tx: &mpsc::Sender<Event>,
) {
    let opened = rconsole::consoles::open(
        server.protocol,
        server.connector,
        server.password,
        server.options,
    );
    let mut client = match opened {
        Ok(client) => client,
        Err(err) => {
            // As with one server: the first command's record carries the error; nothing was
            // sent, so every command is counted.
            let exit = Exit::from_error(&err);
            let why = exit::chain(&err);
            let _ = tx.send(Event::Output {
                server: index,
                command: 0,
                raw: Vec::new(),
                elapsed: Duration::ZERO,
                error: Some((why.clone(), exit)),
            });
            let n = commands.len();
            let _ = tx.send(Event::Stopped {
                server: index,
                message: format!("{why}; {n} {} not sent", commands_word(n)),
                exit,
            });
            return;
        }
    };
    for (i, planned) in commands.iter().enumerate() {
        if i > 0
            && let Some(d) = policy.delay
        {
            std::thread::sleep(d);
        }
        let start = Instant::now();
        let mut raw = Vec::new();
        let result = session::execute(client.as_mut(), &planned.text, &mut raw, false);
        let elapsed = start.elapsed();
        let (error, fatal) = match result {
            Ok(()) if is_parse_error(&raw) => (
                Some((PARSE_ERROR.to_string(), Exit::CommandFailed)),
                !policy.keep_going,
            ),
            Ok(()) => (None, false),
            // The connection is gone: this server cannot go on.
            Err(e) => (Some((exit::chain(&e), Exit::from_error(&e))), true),
        };
        let _ = tx.send(Event::Output {
            server: index,
            command: i,
            raw,
            elapsed,
            error: error.clone(),
        });
        if fatal && let Some((why, exit)) = error {
            let later = commands.len() - i - 1;
            let mut message = format!("{}command '{}': {why}", planned.at(), short(&planned.text));
            if later > 0 {
                message.push_str(&format!(
                    "; {later} later {} not sent",
                    commands_word(later)
                ));
                if exit == Exit::CommandFailed {
                    message.push_str(" (--keep-going continues past failures)");
                }
            }
            let _ = tx.send(Event::Stopped {
                server: index,
                message,
                exit,
            });
            return;
        }
    }
    let _ = tx.send(Event::Finished { server: index });
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

/// A `[name]` line followed by the server's collected output.
fn group_block(name: &str, body: &str) -> String {
    format!("[{name}]\n{body}")
}

/// The layout for the style and `--group`; `--raw` has none (bytes cannot be labelled).
pub fn layout(style: Style, group: bool) -> Option<Layout> {
    match style {
        Style::Json => Some(Layout::Json),
        Style::Raw => None,
        Style::Text { .. } if group => Some(Layout::Group),
        Style::Text { .. } => Some(Layout::Prefix),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_every_line() {
        assert_eq!(prefixed("lobby", "a\nb"), "[lobby] a\n[lobby] b\n");
        assert_eq!(prefixed("lobby", "a\n"), "[lobby] a\n");
        assert_eq!(prefixed("lobby", ""), "[lobby]\n");
        assert_eq!(prefixed("s", "a\n\nb"), "[s] a\n[s]\n[s] b\n");
    }
}
