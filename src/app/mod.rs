//! The `rcon` application: everything between argv and the library. `run` picks the mode
//! (practice server, demo, one-shot commands, batch input, console) and drives the session.

pub mod args;
pub mod batch;
pub mod config;
pub mod console;
pub mod consoles;
pub mod countdown;
pub mod dispatch;
pub mod exit;
pub mod fanout;
pub mod follow;
pub mod follow_consoles;
#[cfg(test)]
mod generate;
pub mod inventory;
pub mod learned;
// Used only by the rcon-mgmt binary, which shares this module tree (see `MgmtRun`).
#[cfg(feature = "mgmt")]
#[allow(dead_code)]
pub mod mgmt;
pub mod mgmt_describe;
#[cfg(feature = "mgmt")]
#[allow(dead_code)]
pub mod mgmt_fanout;
pub mod output;
pub mod reach;
pub mod secrets;
pub mod session;
pub mod settings;
pub mod trace;
pub mod values;

use std::io::IsTerminal;
use std::sync::Arc;

use anyhow::Context;
use clap::{CommandFactory, FromArgMatches};

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
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    let mut matches = command.try_get_matches_from_mut(&argv).unwrap_or_else(|e| {
        let blamed = from_environment(&command, &e, &argv);
        usage_exit(e, blamed)
    });
    let origins = Origins::from_matches(&command, &matches);
    // The `_mut` form takes the values instead of cloning every match first.
    let args = Args::from_arg_matches_mut(&mut matches).unwrap_or_else(|e| usage_exit(e, None));
    (args, origins)
}

/// When a bad value came from an environment variable, not argv: the clap name of the
/// argument (`--port <PORT>`) and the variable, so the message names what the user set.
fn from_environment(
    command: &clap::Command,
    e: &clap::Error,
    argv: &[std::ffi::OsString],
) -> Option<(String, String)> {
    use clap::error::{ContextKind, ContextValue};
    let Some(ContextValue::String(shown)) = e.get(ContextKind::InvalidArg) else {
        return None;
    };
    let long = shown.split_whitespace().next()?.strip_prefix("--")?;
    let arg = command
        .get_arguments()
        .find(|a| a.get_long() == Some(long))?;
    let var = arg.get_env()?.to_string_lossy().into_owned();
    std::env::var_os(&var)?;
    let short = arg.get_short().map(|c| format!("-{c}"));
    let on_argv = argv.iter().skip(1).any(|w| {
        let w = w.to_string_lossy();
        w == format!("--{long}")
            || w.starts_with(&format!("--{long}="))
            || short.as_ref().is_some_and(|s| w.starts_with(s.as_str()))
    });
    (!on_argv).then(|| (shown.clone(), var))
}

/// Ends the process for a command-line error: `--help` and `--version` print as clap does;
/// anything else is one line on stderr and exit status 2. `blamed`: the argument's clap name
/// and the environment variable its bad value came from.
fn usage_exit(e: clap::Error, blamed: Option<(String, String)>) -> ! {
    use clap::error::ErrorKind;
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        e.exit();
    }
    let mut line = one_line(&e.to_string());
    if let Some((shown, var)) = blamed {
        line = line.replace(
            &format!("'{shown}'"),
            &format!("environment variable {var}"),
        );
    }
    eprintln!("rcon: error: {line}");
    std::process::exit(Exit::Usage as i32);
}

/// clap's error text (message, tip, usage) as one line: the message and the tip.
fn one_line(text: &str) -> String {
    let mut parts: Vec<String> = Vec::new();
    for line in text.lines().map(str::trim) {
        if line.starts_with("Usage:") || line.starts_with("For more information") {
            break;
        }
        if line.is_empty() {
            continue;
        }
        let line = line.strip_prefix("error: ").unwrap_or(line);
        // "were not provided:" and its list belong together: "...provided: --ping".
        match parts.last_mut() {
            Some(last) if last.ends_with(':') => {
                last.push(' ');
                last.push_str(line);
            }
            _ => parts.push(line.to_string()),
        }
    }
    format!("{} (rcon --help lists the options)", parts.join("; "))
}

/// Runs the program; the returned status is the process's exit code.
pub fn run(args: Args, origins: Origins, mgmt: Option<MgmtRun>) -> anyhow::Result<Exit> {
    if (args.mgmt.is_some() || args.practice_mgmt.is_some()) && mgmt.is_none() {
        return hand_to_mgmt_binary();
    }
    consoles::tune_from_env()?;
    if let Some(addr) = &args.practice_server {
        if let Some(result) = consoles::serve_practice(&args, addr) {
            return result;
        }
        return serve_practice(&args, addr);
    }
    if args.list_servers {
        let (text, note) = settings::list_servers(&ConfigFile::load(&args, &origins)?);
        if let Some(note) = note {
            eprintln!("rcon: {note}");
        }
        output::print_text(&text)?;
        return Ok(Exit::Success);
    }
    // Status ping and query need no password and no RCON session, and read the config file
    // only when -s names a profile (for its host and time limit).
    if args.ping.is_some() || args.query.is_some() {
        let names_profile =
            args.server.is_some() && origins.get("server") != Some(&settings::Source::Default);
        let defaults = if names_profile {
            let s = Settings::resolve(&args, &origins, ConfigFile::load(&args, &origins)?)?;
            reach::Defaults {
                host: s.host.value,
                timeout: s.timeout.value,
            }
        } else {
            reach::Defaults::from_args(&args)?
        };
        if let Some(target) = &args.ping {
            return reach::ping(&args, target.as_deref(), &defaults);
        }
        if let Some(target) = &args.query {
            return reach::query(&args, target.as_deref(), &defaults);
        }
    }
    if args.demo {
        // --demo runs against its own server: a server or password given on the command line
        // would be silently ignored (the environment's RCON_* values are, as the config is).
        for (id, flag) in [
            ("host", "--host"),
            ("port", "--port"),
            ("server", "--server"),
            ("password", "--password"),
            ("password_file", "--password-file"),
        ] {
            if matches!(origins.get(id), Some(settings::Source::Flag(_))) {
                return Err(fail(
                    Exit::Usage,
                    format!("--demo runs against its own practice server; drop {flag}"),
                ));
            }
        }
    }
    let file = if args.demo {
        ConfigFile::Ignored("--demo")
    } else {
        ConfigFile::load(&args, &origins)?
    };
    let commands = commands(&args);
    // An inventory: every row on the settings of the selected profile (-s NAME or `default`),
    // with the row's own address, password source, dialect and ssh.
    if let Some(path) = &args.targets {
        let mut servers = Vec::new();
        for row in inventory::load(path, &args.where_)? {
            let mut s = Settings::resolve(&args, &origins, file.clone())?;
            let name = settings::apply_row(&mut s, &args, row);
            servers.push((name, s));
        }
        if args.print_config {
            for (name, s) in &servers {
                output::print_text(&format!(
                    "[{name}]\n{}",
                    s.describe_with(mgmt_describe::rows(&args, s))
                ))?;
            }
            return Ok(Exit::Success);
        }
        return run_fanout(&args, servers, commands);
    }
    if let Some(names) = settings::fanout_names(&args, &origins, &file)? {
        let mut servers = Vec::new();
        for name in names {
            let s = Settings::resolve_profile(&args, &origins, file.clone(), Some(&name))?;
            servers.push((name.value, s));
        }
        if args.print_config {
            for (name, s) in &servers {
                output::print_text(&format!(
                    "[{name}]\n{}",
                    s.describe_with(mgmt_describe::rows(&args, s))
                ))?;
            }
            return Ok(Exit::Success);
        }
        if args.mgmt.is_some() {
            return match dispatch::MGMT_FANOUT.get() {
                Some(fanout) => fanout(&args, servers),
                None => Err(fail(Exit::Usage, "--mgmt works with one server")),
            };
        }
        if let Some(exit) = run_special(&args, &servers, &commands)? {
            return Ok(exit);
        }
        return run_fanout(&args, servers, commands);
    }
    let settings = Settings::resolve(&args, &origins, file.clone())?;
    if args.print_config {
        output::print_text(&settings.describe_with(mgmt_describe::rows(&args, &settings)))?;
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
            // A target names its own address, so the route to the default profile's server
            // (its ssh or proxy_command) does not apply; --ssh and --proxy-command still do.
            s.drop_profile_route();
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
    // Every input is opened (and a directory refused) before anything is sent, so a typo in
    // the last -f sends nothing.
    let inputs = args
        .files
        .iter()
        .map(|path| batch::Input::open(path, batch::progress_wanted(path)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let observer: Arc<dyn Observer> = if args.trace {
        Arc::new(trace::Trace::new())
    } else {
        Arc::new(StderrObserver)
    };
    let opts = settings.options(observer);

    // Keeps the demo server alive for the whole session.
    let _demo_server;
    let mut _demo_console = None;
    let protocol = settings.dialect.value.dialect().protocol;
    let (connector, password, name): (Box<dyn Connector>, Password, String) = if args.demo {
        let password = format!("demo-{}", std::process::id());
        // A console dialect gets its own practice server; RCON the strict vanilla one.
        let port = if let Some(server) = consoles::demo_server(protocol, &password)? {
            let port = server.port();
            _demo_console = Some(server);
            port
        } else {
            let server = PracticeServer::start(practice::Config {
                password: password.clone(),
                ..practice::Config::default()
            })
            .context("cannot start the practice server")?;
            let port = server.port();
            _demo_server = server;
            port
        };
        let connector = TcpConnector::new("127.0.0.1", port);
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

    let printer = Printer::new(output_style(&args), fix_newlines(&args));
    let mut session = Session::new(connector, password, opts, printer);
    session.set_protocol(protocol);
    if args.messages && !plan.console {
        let sink = consoles::message_sink(args.json, &console_settings.name, false);
        session.set_messages(sink, false);
    }

    let batch_opts = batch::Options {
        keep_going: args.keep_going,
        delay: args.delay,
        echo: args.echo,
        macros: args.macros.iter().cloned().collect(),
    };
    let mut tally = batch::Tally::default();
    let more_inputs = plan.stdin_batch || !inputs.is_empty();
    session.keeps_open = plan.console;
    run_commands(
        &mut session,
        &commands,
        more_inputs,
        &batch_opts,
        &mut tally,
    )?;
    if plan.stdin_batch {
        batch::run_input(&mut session, batch::Input::stdin(), &batch_opts, &mut tally)?;
    }
    for input in inputs {
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
    Ok(Exit::Success)
}

/// Whether to restore the line breaks vanilla drops (MC-7569): `--fix-newlines` or
/// `--no-fix-newlines` when given (the last wins), else only when stdout is a terminal, where a
/// person reads it; output to a pipe or file stays exactly as the server sent it.
fn fix_newlines(args: &Args) -> bool {
    if args.fix_newlines || args.no_fix_newlines {
        return args.fix_newlines;
    }
    !args.raw && !args.json && std::io::stdout().is_terminal()
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
/// lines of the files (read whole first, with the mcfunction rules), or with neither and stdin
/// not a terminal, the lines of stdin, as for one server: every server gets the same list.
fn run_fanout(
    args: &Args,
    servers: Vec<(String, Settings)>,
    commands: Vec<String>,
) -> anyhow::Result<Exit> {
    if args.interactive {
        return Err(fail(
            Exit::Usage,
            "--interactive opens a console on one server given with -H or -s NAME; --target, \
             --all and server groups run commands and files only",
        ));
    }
    // Output flags with no meaning for several servers are refused, not ignored.
    if args.trace {
        return Err(fail(
            Exit::Usage,
            "--trace shows one connection's packets; with several servers, trace one at a time",
        ));
    }
    let style = output_style(args);
    let Some(layout) = fanout::layout(style, args.group) else {
        return Err(fail(
            Exit::Usage,
            "--raw prints bytes as received, which cannot be labelled by server; use --json \
             (or one server) instead",
        ));
    };
    let mut planned: Vec<fanout::Planned> = commands
        .into_iter()
        .map(|text| fanout::Planned { text, origin: None })
        .collect();
    let macros = args.macros.iter().cloned().collect();
    let mut paths: Vec<&str> = args.files.iter().map(String::as_str).collect();
    let stdin_taken = args.targets.as_deref() == Some("-");
    if planned.is_empty() && paths.is_empty() && !stdin_taken && !std::io::stdin().is_terminal() {
        paths.push("-");
    }
    for path in paths {
        let input = batch::read_commands(path, &macros)?;
        planned.extend(input.lines.into_iter().map(|(text, line)| fanout::Planned {
            text,
            origin: Some((input.name.clone(), line)),
        }));
    }
    if planned.is_empty() {
        return Err(fail(
            Exit::Usage,
            "no command given for several servers (use COMMAND, -c, -f or stdin)",
        ));
    }
    let texts: Vec<String> = planned.iter().map(|p| p.text.clone()).collect();
    refuse_unsendable(&texts, servers.iter().map(|(_, s)| s))?;
    let printer = Printer::new(style, fix_newlines(args));
    let policy = fanout::Policy {
        keep_going: args.keep_going,
        delay: args.delay,
        echo: args.echo,
        parallel: args
            .parallel
            .map_or(rconsole::fleet::DEFAULT_PARALLEL, |n| n as usize),
        parallel_given: args.parallel.is_some(),
        retries: args.retry,
        progress: fanout::stderr_is_terminal(),
        messages: args.messages.then_some(args.json),
    };
    fanout::run_settings(servers, &planned, layout, &printer, policy)
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

/// Runs the command-line commands in order, with the batch policy: `--delay` between
/// commands, and the first failure stops the run (nothing later is sent, `more_inputs` says
/// whether files or stdin were still to come) unless `--keep-going`, which reports each failure
/// and counts it in `tally`.
fn run_commands(
    session: &mut Session,
    commands: &[String],
    more_inputs: bool,
    opts: &batch::Options,
    tally: &mut batch::Tally,
) -> anyhow::Result<()> {
    for (i, command) in commands.iter().enumerate() {
        tally.lines += 1;
        if tally.sent > 0
            && let Some(d) = opts.delay
        {
            std::thread::sleep(d);
        }
        if opts.echo {
            session.printer.echo(command)?;
        }
        // Nothing follows the last command on this connection: its answer may be ended by a
        // step that also ends the connection (one round trip instead of a quiet gap).
        let outcome = if i + 1 == commands.len() && !more_inputs && !session.keeps_open {
            session.run_last(command)?
        } else {
            session.run(command, None)?
        };
        if outcome.sent {
            tally.sent += 1;
        }
        if outcome.ok() {
            continue;
        }
        tally.failed += 1;
        let (exit, why) = match &outcome.error {
            Some(err) => (Exit::from_error(err), exit::chain(err)),
            None => (Exit::CommandFailed, session::PARSE_ERROR.to_string()),
        };
        tally.worst = Some(tally.worst.map_or(exit, |w| w.max(exit)));
        let message = if outcome.sent {
            format!("command '{}': {why}", short(command))
        } else {
            why
        };
        if opts.keep_going {
            eprintln!("rcon: error: {message}");
            continue;
        }
        // Say what was not sent: this command too when it never went out (no connection,
        // refused login), and every later one.
        let after = commands.len() - i - 1;
        let later = after + usize::from(!outcome.sent);
        let mut message = message;
        let rest = if more_inputs {
            " and the batch input"
        } else {
            ""
        };
        if later > 0 {
            let which = if outcome.sent { " later" } else { "" };
            message.push_str(&format!(
                "; {later}{which} {}{rest} not sent",
                plural(later)
            ));
        } else if more_inputs {
            message.push_str("; the batch input was not sent");
        }
        // Only something after the failed command could have gone on.
        if after > 0 || more_inputs {
            message.push_str(" (--keep-going continues past failures)");
        }
        return Err(fail(exit, message));
    }
    Ok(())
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
                "the command".to_string()
            };
            let why = match e {
                rconsole::Error::CommandTooLong { len, max } => {
                    format!("{which} is {len} bytes of UTF-8, over the limit of {max}")
                }
                rconsole::Error::CommandHasNul => format!("{which} contains a NUL character"),
                other => format!("{which}: {other}"),
            };
            fail(Exit::Refused, format!("{why}; nothing was sent"))
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

/// Whether the output (raw bytes) is vanilla's command parse error.
pub fn is_parse_error(raw: &[u8]) -> bool {
    raw.trim_ascii_end().ends_with(b"<--[HERE]")
}

/// A command shortened for messages.
pub(crate) fn short(command: &str) -> String {
    let mut s: String = command.chars().take(60).collect();
    if s.len() < command.len() {
        s.push('…');
    }
    s
}

/// The practice server's password when `--practice-password` is not given.
const DEFAULT_PRACTICE_PASSWORD: &str = "practice";

fn serve_practice(args: &Args, addr: &str) -> anyhow::Result<Exit> {
    let mode = practice::Mode::from_name(&args.practice_mode).ok_or_else(|| {
        let mut names: Vec<&str> = practice::Mode::ALL.iter().map(|m| m.name()).collect();
        names.extend(rconsole::consoles::practice::Kind::ALL.map(|k| k.name()));
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
    // The default password is public (it is in --help); one set with --practice-password is
    // never shown.
    let password = if args.practice_password == DEFAULT_PRACTICE_PASSWORD {
        format!("password {DEFAULT_PRACTICE_PASSWORD}")
    } else {
        "password from --practice-password".to_string()
    };
    eprintln!(
        "rcon: practice server ({}) listening on {} ({password}); built-in commands: {}; stop it with the `stop` command or Ctrl-C",
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
            b"Unknown or incomplete command, see below for errorfoo<--[HERE]"
        ));
        assert!(is_parse_error(b"...foo<--[HERE]\n"));
        assert!(!is_parse_error(
            b"There are 0 of a max of 20 players online: "
        ));
    }
}
