//! The `rcon` application: everything between argv and the library. `run` picks the mode
//! (practice server, demo, one-shot commands, batch input, console) and drives the session.

pub mod args;
pub mod batch;
pub mod config;
pub mod console;
pub mod countdown;
pub mod dispatch;
pub mod exit;
pub mod fanout;
pub mod follow;
#[cfg(test)]
mod generate;
pub mod learned;
// Used only by the rcon-mgmt binary, which shares this module tree (see `MgmtRun`).
#[cfg(feature = "mgmt")]
#[allow(dead_code)]
pub mod mgmt;
pub mod output;
pub mod reach;
pub mod secrets;
pub mod session;
pub mod settings;
pub mod trace;

use std::io::IsTerminal;
use std::sync::Arc;

use anyhow::Context;
use clap::{CommandFactory, FromArgMatches};

use rconsole::Client;
use rconsole::Password;
use rconsole::client::{Observer, check_command};
use rconsole::practice::{self, PracticeServer};
use rconsole::transport::{Connector, TcpConnector};
use settings::{ConfigFile, Origins, Settings};

pub use dispatch::MgmtRun;
// For rcon-mgmt's main; rcon itself never names it.
#[cfg(feature = "mgmt")]
#[allow(unused_imports)]
pub use dispatch::run_mgmt;
use dispatch::{hand_to_mgmt_binary, run_special};

use args::Args;
use exit::{Exit, fail};
use output::{Printer, Style};
use session::Session;

/// Prints engine warnings on stderr.
struct StderrObserver;

impl Observer for StderrObserver {
    fn warning(&self, message: &str) {
        eprintln!("rcon: warning: {message}");
    }
}

/// Parses argv, also reporting where each value came from (flag or environment variable).
pub fn parse() -> (Args, Origins) {
    let mut command = Args::command();
    let mut matches = command
        .try_get_matches_from_mut(std::env::args_os())
        .unwrap_or_else(|e| usage_exit(e));
    let origins = Origins::from_matches(&command, &matches);
    // The `_mut` form takes the values instead of cloning every match first.
    let args = Args::from_arg_matches_mut(&mut matches).unwrap_or_else(|e| usage_exit(e));
    (args, origins)
}

/// Ends the process for a command-line error: `--help` and `--version` print as clap does;
/// anything else is one line on stderr and exit status 2.
fn usage_exit(e: clap::Error) -> ! {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    eprintln!("rcon: error: {}", one_line(&e.to_string()));
    std::process::exit(Exit::Usage as i32);
}

/// clap's error text (message, tip, usage) as one line: the message and the tip.
fn one_line(text: &str) -> String {
    let mut parts: Vec<&str> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if !line.is_empty() {
            parts.push(line.strip_prefix("error: ").unwrap_or(line));
        }
    }
    format!("{} (rcon --help lists the options)", parts.join("; "))
}

/// Runs the program; the returned status is the process's exit code.
pub fn run(args: Args, origins: Origins, mgmt: Option<MgmtRun>) -> anyhow::Result<Exit> {
    if (args.mgmt.is_some() || args.practice_mgmt.is_some()) && mgmt.is_none() {
        return hand_to_mgmt_binary();
    }
    if let Some(addr) = &args.practice_server {
        return serve_practice(&args, addr);
    }
    #[cfg(feature = "mgmt")]
    if let Some(addr) = &args.practice_mgmt {
        return mgmt::serve_practice(&args, addr);
    }
    if args.list_servers {
        let (text, note) = settings::list_servers(&ConfigFile::load(&args, &origins)?);
        if let Some(note) = note {
            eprintln!("rcon: {note}");
        }
        output::print_text(&text)?;
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
                output::print_text(&format!("[{name}]\n{}", s.describe()))?;
            }
            return Ok(Exit::Success);
        }
        if args.mgmt.is_some() {
            return Err(fail(Exit::Usage, "--mgmt works with one server"));
        }
        if let Some(exit) = run_special(&args, &servers, &commands)? {
            return Ok(exit);
        }
        return run_fanout(&args, servers, commands);
    }
    let settings = Settings::resolve(&args, &origins, file.clone())?;
    if args.print_config {
        output::print_text(&settings.describe())?;
        return Ok(Exit::Success);
    }
    if let (Some(_), Some(run_mgmt)) = (&args.mgmt, mgmt) {
        return run_mgmt(&args, &settings);
    }
    if !args.target.is_empty() {
        let mut servers = Vec::new();
        for (name, target) in settings::targets(&args)? {
            let mut s = Settings::resolve(&args, &origins, file.clone())?;
            s.host.value = target.host;
            s.port.value = target.port;
            servers.push((name, s));
        }
        if let Some(exit) = run_special(&args, &servers, &commands)? {
            return Ok(exit);
        }
        return run_fanout(&args, servers, commands);
    }
    if !args.demo {
        let name = match &settings.profile {
            Some(p) if p.source != settings::Source::Default => p.value.clone(),
            _ => settings.target(),
        };
        if let Some(exit) = run_special(&args, &[(name, settings.clone())], &commands)? {
            return Ok(exit);
        }
    }
    let plan = Plan::new(
        !commands.is_empty(),
        !args.files.is_empty(),
        args.interactive,
        std::io::stdin().is_terminal(),
    );
    refuse_unsendable(&commands, [&settings])?;
    let observer: Arc<dyn Observer> = if args.trace {
        Arc::new(trace::Trace::new())
    } else {
        Arc::new(StderrObserver)
    };
    let opts = settings.options(observer);

    // Keeps the demo server alive for the whole session.
    let _demo_server;
    let (connector, password, name): (Box<dyn Connector>, Password, String) = if args.demo {
        let password = format!("demo-{}", std::process::id());
        let server = PracticeServer::start(practice::Config {
            password: password.clone(),
            ..practice::Config::default()
        })
        .context("cannot start the practice server")?;
        let connector = TcpConnector::new("127.0.0.1", server.port());
        _demo_server = server;
        (Box::new(connector), Password::new(password), "demo".into())
    } else {
        let name = match &settings.profile {
            Some(p) if p.source != settings::Source::Default => p.value.clone(),
            _ => settings.target(),
        };
        (settings.connector()?, settings.password()?, name)
    };
    let console_settings = console::Settings {
        name,
        password: password.expose().to_string(),
    };

    let printer = Printer::new(output_style(&args), args.fix_newlines);
    let mut session = Session::new(connector, password, opts, printer);

    let worst = run_commands(&mut session, &commands, args.echo)?;

    let batch_opts = batch::Options {
        keep_going: args.keep_going,
        delay: args.delay,
        echo: args.echo,
        macros: args.macros.iter().cloned().collect(),
    };
    let mut tally = batch::Tally::default();
    if plan.stdin_batch {
        batch::run_input(&mut session, batch::Input::stdin(), &batch_opts, &mut tally)?;
    }
    for path in &args.files {
        let input = batch::Input::open(path, batch::progress_wanted(path))?;
        batch::run_input(&mut session, input, &batch_opts, &mut tally)?;
    }
    if plan.console {
        session.refuse_after_stop = false;
        return console::run(&mut session, &console_settings);
    }
    if tally.worst.is_some() {
        return tally.finish();
    }
    if tally.lines == 0 && commands.is_empty() && plan.stdin_batch {
        eprintln!("rcon: warning: no commands on stdin; nothing was sent");
    }
    Ok(worst)
}

/// How command output is printed: `--json`, `--raw`, or text with colour as `--color` says.
fn output_style(args: &Args) -> Style {
    if args.json {
        Style::Json
    } else if args.raw {
        Style::Raw
    } else {
        let no_color = std::env::var("NO_COLOR").ok();
        Style::Text {
            color: output::color_enabled(
                args.color,
                std::io::stdout().is_terminal(),
                no_color.as_deref(),
            ),
        }
    }
}

/// Runs on several servers at once. The commands are the command line's plus, with `-f`, the
/// lines of the files (read whole first, with the mcfunction rules), since every server gets
/// the same list.
fn run_fanout(
    args: &Args,
    servers: Vec<(String, Settings)>,
    mut commands: Vec<String>,
) -> anyhow::Result<Exit> {
    if args.interactive {
        return Err(fail(
            Exit::Usage,
            "--interactive works with one server; several servers take commands and files",
        ));
    }
    let macros = args.macros.iter().cloned().collect();
    for path in &args.files {
        commands.extend(batch::read_commands(path, &macros)?);
    }
    if commands.is_empty() {
        return Err(fail(
            Exit::Usage,
            "no command given for several servers (use COMMAND, -c or -f)",
        ));
    }
    refuse_unsendable(&commands, servers.iter().map(|(_, s)| s))?;
    fanout::run_settings(args, servers, &commands)
}

/// What runs, from what was given and whether stdin is a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
struct Plan {
    /// Read commands from stdin.
    stdin_batch: bool,
    /// Open the console at the end.
    console: bool,
}

impl Plan {
    fn new(commands: bool, files: bool, interactive: bool, stdin_tty: bool) -> Plan {
        let nothing = !commands && !files;
        Plan {
            stdin_batch: nothing && !stdin_tty && !interactive,
            console: interactive || (nothing && stdin_tty),
        }
    }
}

/// Runs the command-line commands in order: a parse error is reported through the exit status
/// and the rest still run; a failed connection stops the run.
fn run_commands(session: &mut Session, commands: &[String], echo: bool) -> anyhow::Result<Exit> {
    let mut worst = Exit::Success;
    for (i, command) in commands.iter().enumerate() {
        if echo {
            session.printer.echo(command)?;
        }
        let outcome = session.run(command, None)?;
        if outcome.parse_error {
            worst = worst.max(Exit::CommandFailed);
        }
        if let Some(err) = outcome.error {
            // Say what was not sent: this command too when it never went out (no connection,
            // refused login), and every later one.
            let exit = Exit::from_error(&err);
            let later = commands.len() - i - 1;
            let message = if outcome.sent {
                let mut m = format!("command '{}': {}", short(command), exit::chain(&err));
                if later > 0 {
                    m.push_str(&format!("; {later} later {} not sent", plural(later)));
                }
                m
            } else {
                let unsent = later + 1;
                format!(
                    "{}; {unsent} {} not sent",
                    exit::chain(&err),
                    plural(unsent)
                )
            };
            return Err(fail(exit, message));
        }
    }
    Ok(worst)
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "command" } else { "commands" }
}

/// Refuses, before connecting anywhere, a command that can never be sent (too long for the
/// dialect, NUL byte), so the server receives nothing.
fn refuse_unsendable<'a>(
    commands: &[String],
    servers: impl IntoIterator<Item = &'a Settings>,
) -> anyhow::Result<()> {
    let max = servers
        .into_iter()
        .map(|s| s.dialect.value.dialect().max_command_bytes)
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

/// Runs one command and decodes its output; on error, the output that arrived comes with it.
pub(crate) fn run_one(
    client: &mut Client,
    command: &str,
) -> Result<String, (String, rconsole::Error)> {
    let mut out = Vec::new();
    let result = session::execute(client, command, &mut out);
    let text = rconsole::packet::decode_output_owned(out);
    match result {
        Ok(()) => Ok(text),
        Err(e) => Err((text, e)),
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
    fn usage_errors_are_one_line() {
        let err = Args::command()
            .try_get_matches_from(["rcon", "--bogus"])
            .unwrap_err();
        let line = one_line(&err.to_string());
        assert!(!line.contains('\n'), "{line}");
        assert!(
            line.starts_with("unexpected argument '--bogus' found"),
            "{line}"
        );
        assert!(line.contains("tip:"), "{line}");
    }

    #[test]
    fn stop_commands() {
        assert!(is_stop_command("stop"));
        assert!(is_stop_command("/stop"));
        assert!(is_stop_command("  restart now"));
        assert!(!is_stop_command("stopwatch"));
        assert!(!is_stop_command("say stop"));
    }

    #[test]
    fn mode_selection() {
        let p = Plan::new;
        // Nothing given: console on a terminal, stdin batch otherwise.
        assert_eq!(
            p(false, false, false, true),
            Plan {
                stdin_batch: false,
                console: true
            }
        );
        assert_eq!(
            p(false, false, false, false),
            Plan {
                stdin_batch: true,
                console: false
            }
        );
        // Commands or files given: neither, unless -i.
        assert_eq!(
            p(true, false, false, true),
            Plan {
                stdin_batch: false,
                console: false
            }
        );
        assert_eq!(
            p(false, true, false, false),
            Plan {
                stdin_batch: false,
                console: false
            }
        );
        assert_eq!(
            p(true, true, true, false),
            Plan {
                stdin_batch: false,
                console: true
            }
        );
        assert_eq!(
            p(false, false, true, false),
            Plan {
                stdin_batch: false,
                console: true
            }
        );
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
