//! The `rcon` application: everything between argv and the library. `run` picks the mode
//! (practice server, demo, one-shot commands) and drives the session.

pub mod args;
pub mod config;
pub mod exit;
pub mod fanout;
#[cfg(test)]
mod generate;
pub mod output;
pub mod reach;
pub mod secrets;
pub mod settings;
pub mod trace;

use std::sync::Arc;

use anyhow::Context;
use clap::{CommandFactory, FromArgMatches};

use rconsole::client::{Observer, check_command};
use rconsole::practice::{self, PracticeServer};
use rconsole::transport::{Connector, TcpConnector};
use rconsole::{Client, Password};
use settings::{ConfigFile, Origins, Settings};

use args::Args;
use exit::{Exit, fail};
use output::Printer;

/// Prints engine warnings on stderr.
struct StderrObserver;

impl Observer for StderrObserver {
    fn warning(&self, message: &str) {
        eprintln!("rcon: warning: {message}");
    }
}

/// Parses argv, also reporting where each value came from (flag or environment variable).
pub fn parse() -> (Args, Origins) {
    let command = Args::command();
    let matches = command.clone().get_matches();
    let origins = Origins::from_matches(&command, &matches);
    let args = Args::from_arg_matches(&matches).unwrap_or_else(|e| e.exit());
    (args, origins)
}

/// Runs the program; the returned status is the process's exit code.
pub fn run(args: Args, origins: Origins) -> anyhow::Result<Exit> {
    if let Some(addr) = &args.practice_server {
        return serve_practice(&args, addr);
    }
    if args.list_servers {
        let (text, note) = settings::list_servers(&ConfigFile::load(&args, &origins)?);
        if let Some(note) = note {
            eprintln!("rcon: {note}");
        }
        Printer::stdout().text(&text)?;
        return Ok(Exit::Success);
    }
    let file = if args.demo {
        ConfigFile::Ignored("--demo")
    } else {
        ConfigFile::load(&args, &origins)?
    };
    // Status ping and query need no password and no RCON session.
    if let Some(target) = &args.ping {
        return reach::ping(&args, target.as_deref());
    }
    if let Some(target) = &args.query {
        return reach::query(&args, target.as_deref());
    }
    let commands = commands(&args);
    if let Some(names) = settings::fanout_names(&args, &origins, &file)? {
        let mut servers = Vec::new();
        for name in names {
            let s = Settings::resolve_profile(&args, &origins, file.clone(), Some(&name))?;
            servers.push((name, s));
        }
        if args.print_config {
            for (name, s) in &servers {
                Printer::stdout().text(&format!("[{name}]\n{}", s.describe()))?;
            }
            return Ok(Exit::Success);
        }
        refuse_unsendable(&commands, servers.iter().map(|(_, s)| s))?;
        return fanout::run_settings(&args, servers, &commands);
    }
    let settings = Settings::resolve(&args, &origins, file.clone())?;
    if args.print_config {
        Printer::stdout().text(&settings.describe())?;
        return Ok(Exit::Success);
    }
    if !args.target.is_empty() {
        let mut servers = Vec::new();
        for (name, target) in settings::targets(&args)? {
            let mut s = Settings::resolve(&args, &origins, file.clone())?;
            s.host.value = target.host;
            s.port.value = target.port;
            servers.push((name, s));
        }
        refuse_unsendable(&commands, servers.iter().map(|(_, s)| s))?;
        return fanout::run_settings(&args, servers, &commands);
    }
    refuse_unsendable(&commands, [&settings])?;
    let observer: Arc<dyn Observer> = if args.trace {
        Arc::new(trace::Trace::new())
    } else {
        Arc::new(StderrObserver)
    };
    let opts = settings.options(observer);

    // Keeps the demo server alive for the whole session.
    let _demo_server;
    let (connector, password): (Box<dyn Connector>, Password) = if args.demo {
        let password = format!("demo-{}", std::process::id());
        let server = PracticeServer::start(practice::Config {
            password: password.clone(),
            ..practice::Config::default()
        })
        .context("cannot start the practice server")?;
        let connector = TcpConnector::new("127.0.0.1", server.port());
        _demo_server = server;
        (Box::new(connector), Password::new(password))
    } else {
        let password = settings.password()?;
        (settings.connector()?, password)
    };

    let mut client = Client::connect(connector, password, opts)?;
    let mut printer = Printer::stdout();
    let mut worst = Exit::Success;
    for (i, command) in commands.iter().enumerate() {
        match run_one(&mut client, command) {
            Ok(text) => {
                if is_parse_error(&text) {
                    worst = worst.max(Exit::CommandFailed);
                }
                printer.response(&text)?;
            }
            Err((partial, err)) => {
                if !partial.is_empty() {
                    printer.response(&partial)?;
                }
                let rest = commands.len() - i - 1;
                let err = anyhow::Error::new(err).context(format!("command '{}'", short(command)));
                if rest > 0 {
                    return Err(err.context(format!(
                        "{rest} later command{} not sent",
                        if rest == 1 { "" } else { "s" }
                    )));
                }
                return Err(err);
            }
        }
    }
    Ok(worst)
}

/// Refuses, before connecting anywhere, a command that can never be sent (too long for the
/// dialect, NUL byte), so the server receives nothing; also refuses an empty command list.
fn refuse_unsendable<'a>(
    commands: &[String],
    servers: impl IntoIterator<Item = &'a Settings>,
) -> anyhow::Result<()> {
    if commands.is_empty() {
        return Err(fail(
            Exit::Usage,
            "no command given (example: rcon -p PASSWORD list; rcon --help for more)",
        ));
    }
    let max = servers
        .into_iter()
        .map(|s| s.options(Arc::new(StderrObserver)).max_command_bytes)
        .min()
        .unwrap_or(rconsole::packet::MAX_COMMAND_BYTES);
    for (i, c) in commands.iter().enumerate() {
        check_command(c, max).map_err(|e| {
            let which = if commands.len() > 1 {
                format!("command {} of {}", i + 1, commands.len())
            } else {
                "command".to_string()
            };
            anyhow::Error::new(e).context(format!("{which} refused; nothing was sent"))
        })?;
    }
    Ok(())
}

/// The commands to run: `-c` ones first, then the trailing words joined into one.
fn commands(args: &Args) -> Vec<String> {
    let mut all = args.commands.clone();
    if !args.command.is_empty() {
        all.push(args.command.join(" "));
    }
    all
}

/// Whether a command shuts the server down, after which the connection must be closed at once
/// (a connected client keeps a vanilla server from stopping cleanly).
pub fn is_stop_command(command: &str) -> bool {
    let word = command.trim_start().trim_start_matches('/');
    let word = word.split_whitespace().next().unwrap_or("");
    matches!(word, "stop" | "restart")
}

/// Whether the output is vanilla's command parse error.
pub fn is_parse_error(text: &str) -> bool {
    text.trim_end().ends_with("<--[HERE]")
}

pub(crate) fn run_one(
    client: &mut Client,
    command: &str,
) -> Result<String, (String, rconsole::Error)> {
    if is_stop_command(command) {
        return client
            .command_then_close(command)
            .map_err(|e| (String::new(), e));
    }
    let mut out = Vec::new();
    match client.command_into(command, &mut out) {
        Ok(()) => Ok(rconsole::packet::decode_output(&out)),
        Err(e) => Err((rconsole::packet::decode_output(&out), e)),
    }
}

/// A command shortened for messages.
pub(crate) fn short(command: &str) -> String {
    let mut s: String = command.chars().take(60).collect();
    if s.len() < command.len() {
        s.push('…');
    }
    s
}

fn serve_practice(args: &Args, addr: &str) -> anyhow::Result<Exit> {
    let mode = practice::Mode::from_name(&args.practice_mode).ok_or_else(|| {
        let names: Vec<&str> = practice::Mode::ALL.iter().map(|m| m.name()).collect();
        fail(
            Exit::Usage,
            format!(
                "unknown --practice-mode '{}' (one of: {})",
                args.practice_mode,
                names.join(", ")
            ),
        )
    })?;
    let bind = addr.parse().map_err(|_| {
        fail(
            Exit::Usage,
            format!("--practice-server: '{addr}' is not IP:PORT"),
        )
    })?;
    let server = PracticeServer::start(practice::Config {
        bind,
        password: args.practice_password.clone(),
        mode,
        read_delay: args.practice_read_delay.unwrap_or_default(),
    })
    .with_context(|| format!("cannot listen on {addr}"))?;
    println!("{}", server.addr());
    eprintln!(
        "rcon: practice server ({}) listening on {}; built-in commands: {}; stop it with the `stop` command or Ctrl-C",
        mode.name(),
        server.addr(),
        practice::BUILTINS
    );
    use std::io::Write;
    std::io::stdout().flush()?;
    server.wait();
    Ok(Exit::Success)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_commands() {
        assert!(is_stop_command("stop"));
        assert!(is_stop_command("/stop"));
        assert!(is_stop_command("  restart now"));
        assert!(!is_stop_command("stopwatch"));
        assert!(!is_stop_command("say stop"));
    }

    #[test]
    fn parse_errors() {
        assert!(is_parse_error(
            "Unknown or incomplete command, see below for errorfoo<--[HERE]"
        ));
        assert!(!is_parse_error(
            "There are 0 of a max of 20 players online: "
        ));
    }
}
