//! The `rcon` application: everything between argv and the library. `run` picks the mode
//! (practice server, demo, one-shot commands) and drives the session.

pub mod args;
pub mod exit;
pub mod output;
pub mod settings;

use std::sync::Arc;

use anyhow::Context;
use clap::parser::ValueSource;
use clap::{CommandFactory, FromArgMatches};

use rconsole::client::{Observer, check_command};
use rconsole::practice::{self, PracticeServer};
use rconsole::transport::{Connector, TcpConnector};
use rconsole::{Client, Password};

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

/// Parses argv, also reporting whether `--port` came from the command line itself.
pub fn parse() -> (Args, bool) {
    let mut matches = Args::command().get_matches();
    let port_from_flag = matches.value_source("port") == Some(ValueSource::CommandLine);
    // The `_mut` form takes the values instead of cloning every match first.
    let args = Args::from_arg_matches_mut(&mut matches).unwrap_or_else(|e| e.exit());
    (args, port_from_flag)
}

/// Runs the program; the returned status is the process's exit code.
pub fn run(args: Args, port_from_flag: bool) -> anyhow::Result<Exit> {
    if let Some(addr) = &args.practice_server {
        return serve_practice(&args, addr);
    }
    let commands = commands(&args);
    if commands.is_empty() {
        return Err(fail(
            Exit::Usage,
            "no command given (example: rcon -p PASSWORD list; rcon --help for more)",
        ));
    }
    // Refuse what can never be sent before connecting, so the server receives nothing.
    for (i, c) in commands.iter().enumerate() {
        check_command(c, rconsole::packet::MAX_COMMAND_BYTES).map_err(|e| {
            let which = if commands.len() > 1 {
                format!("command {} of {}", i + 1, commands.len())
            } else {
                "command".to_string()
            };
            anyhow::Error::new(e).context(format!("{which} refused; nothing was sent"))
        })?;
    }
    let observer: Arc<dyn Observer> = Arc::new(StderrObserver);
    let opts = settings::options(&args, observer);

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
        let target = settings::target(&args, port_from_flag)?;
        let Some(password) = args.password.clone() else {
            return Err(fail(Exit::Usage, settings::NO_PASSWORD));
        };
        (
            Box::new(TcpConnector::new(&target.host, target.port)),
            Password::new(password),
        )
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
                printer.response(text)?;
            }
            Err((partial, err)) => {
                if !partial.is_empty() {
                    printer.response(partial)?;
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

fn run_one(client: &mut Client, command: &str) -> Result<String, (String, rconsole::Error)> {
    if is_stop_command(command) {
        return client
            .command_then_close(command)
            .map_err(|e| (String::new(), e));
    }
    let mut out = Vec::new();
    match client.command_into(command, &mut out) {
        Ok(()) => Ok(rconsole::packet::decode_output_owned(out)),
        Err(e) => Err((rconsole::packet::decode_output_owned(out), e)),
    }
}

/// A command shortened for messages.
fn short(command: &str) -> String {
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
