//! Running the same commands on several servers at once (`--target NAME=HOST`): a bounded pool
//! of threads, one session per server, output labelled `[NAME] ` per line (or grouped per
//! server, or JSON), the worst exit status, and a summary of the failed servers on stderr.
//!
//! Each server's output is printed as soon as each of its commands completes, so a slow or dead
//! server holds back nobody's output but its own, and only for its own timeout.

use std::collections::VecDeque;
use std::io::{self, Write};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::thread;

use rconsole::Password;
use rconsole::client::{Observer, Options};
use rconsole::consoles::Protocol;
use rconsole::transport::Connector;

use super::args::Args;
use super::exit::Exit;
use super::settings::Settings;
use super::{is_parse_error, run_one, short};

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

/// Engine warnings on stderr, labelled with the server's name.
struct Labelled(String);

impl Observer for Labelled {
    fn warning(&self, message: &str) {
        eprintln!("rcon: warning: [{}] {message}", self.0);
    }
}

/// Runs `commands` on every resolved server (profiles of `-s a,b,c`, `--all`, a group, or
/// `--target`s), laid out as the flags say.
pub fn run_settings(
    args: &Args,
    servers: Vec<(String, Settings)>,
    commands: &[String],
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
    let layout = if args.json {
        Layout::Json
    } else if args.group {
        Layout::Group
    } else {
        Layout::Prefix
    };
    Ok(run(ready, commands, layout, &mut io::stdout())?)
}

/// What a worker reports to the printing thread.
enum Event {
    /// One command's complete output.
    Output {
        server: usize,
        command: usize,
        text: String,
    },
    /// The server's session ended with an error (after `done` commands had completed).
    Failed {
        server: usize,
        command: Option<usize>,
        partial: String,
        error: String,
        exit: Exit,
        unsent: usize,
    },
    /// The server ran every command.
    Finished { server: usize },
}

/// Runs `commands` on every server, at most [`MAX_PARALLEL`] at once, printing to `out` as
/// results arrive. Returns the worst exit status.
pub fn run(
    servers: Vec<Server>,
    commands: &[String],
    layout: Layout,
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
                    serve(index, server, commands, &tx);
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
        for event in rx {
            match event {
                Event::Output {
                    server,
                    command,
                    text,
                } => {
                    if is_parse_error(&text) {
                        exits[server] = exits[server].max(Exit::CommandFailed);
                    }
                    let name = &names[server];
                    match layout {
                        Layout::Prefix => emit(out, &prefixed(name, &text)),
                        Layout::Group => {
                            blocks[server].push_str(&text);
                            blocks[server].push('\n');
                        }
                        Layout::Json => emit(
                            out,
                            &json_output(name, &commands[command], &text, !is_parse_error(&text)),
                        ),
                    }
                }
                Event::Failed {
                    server,
                    command,
                    partial,
                    error,
                    exit,
                    unsent,
                } => {
                    let name = &names[server];
                    exits[server] = exits[server].max(exit);
                    if !partial.is_empty() {
                        match layout {
                            Layout::Prefix => emit(out, &prefixed(name, &partial)),
                            Layout::Group => {
                                blocks[server].push_str(&partial);
                                blocks[server].push('\n');
                            }
                            Layout::Json => {}
                        }
                    }
                    let mut message = match command {
                        Some(c) => format!("command '{}': {error}", short(&commands[c])),
                        None => error,
                    };
                    if unsent > 0 {
                        message.push_str(&format!(
                            "; {unsent} later command{} not sent",
                            if unsent == 1 { "" } else { "s" }
                        ));
                    }
                    if layout == Layout::Json {
                        emit(
                            out,
                            &json_failure(
                                name,
                                command.map(|c| commands[c].as_str()),
                                &partial,
                                &message,
                                exit,
                            ),
                        );
                    }
                    eprintln!("rcon: error: [{name}] {message}");
                    if layout == Layout::Group {
                        emit(out, &group_block(name, &blocks[server]));
                    }
                    failures.push((server, exit));
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

/// One server's session: connect, run every command, report each result.
fn serve(index: usize, server: Server, commands: &[String], tx: &mpsc::Sender<Event>) {
    let failed =
        |command: Option<usize>, partial: String, err: rconsole::Error, unsent| Event::Failed {
            server: index,
            command,
            partial,
            exit: Exit::from_error(&err),
            error: super::exit::chain(&err),
            unsent,
        };
    let opened = rconsole::consoles::open(
        server.protocol,
        server.connector,
        server.password,
        server.options,
    );
    let mut client = match opened {
        Ok(client) => client,
        Err(err) => {
            let _ = tx.send(failed(None, String::new(), err, commands.len()));
            return;
        }
    };
    for (i, command) in commands.iter().enumerate() {
        match run_one(client.as_mut(), command) {
            Ok(text) => {
                let _ = tx.send(Event::Output {
                    server: index,
                    command: i,
                    text,
                });
            }
            Err((partial, err)) => {
                let _ = tx.send(failed(Some(i), partial, err, commands.len() - i - 1));
                return;
            }
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

/// One command's output as a JSON line.
pub fn json_output(name: &str, command: &str, output: &str, ok: bool) -> String {
    let value = serde_json::json!({
        "server": name,
        "command": command,
        "output": output,
        "ok": ok,
    });
    format!("{value}\n")
}

/// A server's failure as a JSON line.
pub fn json_failure(
    name: &str,
    command: Option<&str>,
    partial: &str,
    error: &str,
    exit: Exit,
) -> String {
    let value = serde_json::json!({
        "server": name,
        "command": command,
        "output": partial,
        "ok": false,
        "error": error,
        "exit": exit as u8,
    });
    format!("{value}\n")
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

    #[test]
    fn json_lines_name_the_server() {
        let line = json_output("lobby", "list", "x\"y", true);
        let v: serde_json::Value = serde_json::from_str(&line).unwrap();
        assert_eq!(v["server"], "lobby");
        assert_eq!(v["output"], "x\"y");
        assert_eq!(v["ok"], true);
        assert!(line.ends_with('\n') && line.matches('\n').count() == 1);
        let v: serde_json::Value = serde_json::from_str(&json_failure(
            "dead",
            None,
            "",
            "cannot connect",
            Exit::Connect,
        ))
        .unwrap();
        assert_eq!(v["exit"], 4);
        assert_eq!(v["command"], serde_json::Value::Null);
    }
}
