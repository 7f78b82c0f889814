//! Resolution: argv, the environment and the config file become one [`Mode`] holding everything
//! that mode needs, fully resolved (as ripgrep turns its low-level arguments into high-level
//! ones). This module and `settings` are the only ones that read the clap [`Args`]; after
//! [`resolve`], nothing does. The config file is read only by the modes that use it.

use std::io::IsTerminal;
use std::path::PathBuf;
use std::time::Duration;

use clap::{CommandFactory, FromArgMatches};

use crate::app::exit::{EarlyExit, Exit, fail};
use crate::app::print::output::{self, Printer, Style};
use crate::app::print::stderr;
use crate::app::resolve::args::Args;
use crate::app::resolve::compat::{self, Personality, TranslationEnd, Tweaks};
use crate::app::resolve::inventory;
pub use crate::app::resolve::modes::{
    BatchPolicy, Condition, DEFAULT_POLL, FanoutPolicy, FollowOptions, Layout, Probe,
    ProbeDefaults, ProbeKind, Timing,
};
use crate::app::resolve::settings::{self, ConfigFile, Origins, Settings, Source, Sourced};
use rconsole::consoles::Protocol;

/// What this run does, with everything it needs.
pub enum Mode {
    /// `--practice-server ADDR`: an RCON or console practice server in the foreground.
    Practice(PracticePlan),
    /// `--practice-mgmt ADDR`: the practice management server (`mgmt` feature).
    #[cfg_attr(not(feature = "mgmt"), allow(dead_code))] // refused while resolving
    PracticeMgmt(PracticePlan),
    /// `--list-servers`.
    ListServers(ConfigFile),
    /// `--learned`: what is remembered about servers, the key to forget first if any.
    Learned(Option<String>),
    /// `--install-links DIR`: the `mcrcon` and `rcon-cli` names for the personalities.
    InstallLinks(PathBuf),
    /// `--ping` or `--query`.
    Probe(Probe),
    /// `--print-config`: each server's settings as text (a name with several).
    PrintConfig(Vec<(Option<String>, String)>),
    /// `--mgmt` (`mgmt` feature): method calls, the console or stdin's lines; or, when the
    /// server offers a command method, the session of RCON commands the plan beside it
    /// describes (its settings are the server's).
    #[cfg_attr(not(feature = "mgmt"), allow(dead_code))] // refused while resolving
    Mgmt(MgmtPlan, Box<SessionPlan>),
    /// `--mgmt --follow`: one server's notifications.
    #[cfg_attr(not(feature = "mgmt"), allow(dead_code))] // refused while resolving
    MgmtFollow(MgmtPlan, FollowOptions, Box<Settings>),
    /// `--mgmt` with `--countdown`, `--every` or `--if`, on one or several servers.
    #[cfg_attr(not(feature = "mgmt"), allow(dead_code))] // refused while resolving
    MgmtTimed(MgmtPlan, Timing, Vec<(String, Settings)>),
    /// `--mgmt` on several servers: the same method calls on each.
    #[cfg_attr(not(feature = "mgmt"), allow(dead_code))] // refused while resolving
    MgmtFanout(MgmtPlan, Vec<(String, Settings)>),
    /// `--mgmt --follow` on several servers: their notifications, labelled.
    #[cfg_attr(not(feature = "mgmt"), allow(dead_code))] // refused while resolving
    MgmtFanoutFollow(MgmtPlan, FollowOptions, Vec<(String, Settings)>),
    /// `--follow` on one or several RCON servers: `list` polled.
    FollowPolled(FollowOptions, Vec<(String, Settings)>),
    /// `--follow` on one or several BattlEye, WebRCON or telnet servers: what they push.
    FollowPushed(FollowOptions, Vec<(String, Settings)>),
    /// `--countdown`, `--every`, `--if` on one or several servers.
    Timed(TimedPlan),
    /// Commands on several servers at once.
    Fanout(FanoutPlan),
    /// One server: commands, batch input, the console.
    Session(Box<SessionPlan>),
    /// One server's commands and batch input sent to `rcon` on the SSH host (`--remote`,
    /// without the console: the console over `--remote` is a [`Mode::Session`] on a remote
    /// session).
    RemoteSession(Box<SessionPlan>),
    /// `--remote-serve`: the remote side of `--remote` on stdin and stdout.
    RemoteServe,
}

/// How command output is printed.
#[derive(Debug, Clone, Copy)]
pub struct Printing {
    /// `--json`, `--raw`, or text with or without colour.
    pub style: Style,
    /// Restore vanilla's dropped line breaks.
    pub fix_newlines: bool,
    /// Print no command output at all (mcrcon's `-s`).
    pub quiet: bool,
}

impl Printing {
    /// A printer for stdout.
    pub fn printer(&self) -> Printer {
        Printer::new(self.style, self.fix_newlines).quiet(self.quiet)
    }
}

/// A practice server to run in the foreground.
#[derive(Debug, Clone)]
pub struct PracticePlan {
    /// `IP:PORT` to listen on, as given.
    pub addr: String,
    /// The same, parsed.
    pub bind: std::net::SocketAddr,
    /// `--practice-mode` (for `--practice-server`; the management server has one behaviour).
    pub mode: PracticeKind,
    /// `--practice-password`.
    pub password: String,
    /// `--practice-read-delay`.
    pub read_delay: Option<Duration>,
    /// `--practice-cert` and `--practice-key` (management server with TLS).
    #[cfg_attr(not(feature = "mgmt"), allow(dead_code))]
    pub tls: Option<(PathBuf, PathBuf)>,
    /// `--practice-mods` (management server), as given.
    #[cfg_attr(not(feature = "mgmt"), allow(dead_code))]
    pub mods: Vec<String>,
    /// `--practice-mgmt unix:PATH`: the Unix domain socket to listen on instead of `bind`.
    #[cfg_attr(not(feature = "mgmt"), allow(dead_code))]
    pub unix_socket: Option<PathBuf>,
}

/// `--mgmt`: where to and what to run; the profile's settings travel beside it.
#[derive(Debug, Clone, Default)]
#[cfg_attr(not(feature = "mgmt"), allow(dead_code))]
pub struct MgmtPlan {
    /// The URL given to `--mgmt`, if it was one (else the profile's `mgmt_url`).
    pub url: Option<String>,
    /// `-c` calls, one string each.
    pub lines: Vec<String>,
    /// The call given as trailing words (with the first word, when clap took it for the URL).
    pub words: Vec<String>,
    /// `--mgmt-cert`.
    pub cert: Option<PathBuf>,
    /// `--mgmt-fingerprint`.
    pub fingerprint: Option<String>,
    /// `--mgmt-origin`.
    pub origin: Option<String>,
    /// `--mgmt-secret-file`.
    pub secret_file: Option<PathBuf>,
    /// `--trace`: every JSON-RPC message on stderr.
    pub trace: bool,
    /// `--json`.
    pub json: bool,
    /// `--interactive`.
    pub interactive: bool,
    /// The runner policy of its calls: `--keep-going`, `--delay`, `--echo`, `--retry`.
    pub policy: BatchPolicy,
}

/// The timed operations on one or several servers.
pub struct TimedPlan {
    /// Each server by name.
    pub servers: Vec<(String, Settings)>,
    /// The command line's commands (run after `--then`'s).
    pub commands: Vec<String>,
    /// When and what.
    pub timing: Timing,
}

/// Commands on several servers.
pub struct FanoutPlan {
    /// Each server by name.
    pub servers: Vec<(String, Settings)>,
    /// The command line's commands.
    pub commands: Vec<String>,
    /// Batch files (`-` is stdin), read whole with the mcfunction rules.
    pub files: Vec<String>,
    /// `--macro` values.
    pub macros: Vec<(String, String)>,
    /// How output is labelled by server.
    pub layout: Layout,
    /// How output is printed.
    pub printing: Printing,
    /// Failures, pacing, parallelism.
    pub policy: FanoutPolicy,
}

/// One server's session.
pub struct SessionPlan {
    /// The server (for `--demo`, the settings other than the address and password).
    pub settings: Settings,
    /// `--demo`: against an in-process practice server.
    pub demo: bool,
    /// The command line's commands, in order.
    pub commands: Vec<String>,
    /// Batch files, in order.
    pub files: Vec<String>,
    /// Whether stdin is read as batch input and whether the console opens.
    pub inputs: SessionInputs,
    /// `--trace`.
    pub trace: bool,
    /// `--messages`.
    pub messages: bool,
    /// `--json` (for `--messages`).
    pub json: bool,
    /// Failures, pacing, echo, macros.
    pub batch: BatchPolicy,
    /// How output is printed.
    pub printing: Printing,
    /// `--wait`: how long the first connection may keep being tried until the server is up.
    pub wait: Option<Duration>,
    /// Whether vanilla's parse error fails a command (not for mcrcon and rcon-cli, whose
    /// scripts expect the answer printed and exit status 0).
    pub parse_errors_fail: bool,
    /// A line that ends the console and piped input instead of being sent (rcon-cli's `exit`).
    pub quit_word: Option<&'static str>,
}

/// What a session reads, from what was given and whether stdin is a terminal.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct SessionInputs {
    /// Read commands from stdin.
    pub stdin_batch: bool,
    /// Open the console at the end.
    pub console: bool,
}

impl SessionInputs {
    /// Nothing given: the console on a terminal, stdin as batch input otherwise; `-i` always
    /// opens the console.
    pub fn new(commands: bool, files: bool, interactive: bool, stdin_tty: bool) -> SessionInputs {
        let nothing = !commands && !files;
        SessionInputs {
            stdin_batch: nothing && !stdin_tty && !interactive,
            console: interactive || (nothing && stdin_tty),
        }
    }
}

/// The command line, parsed.
pub struct Parsed {
    /// rcon's arguments (a personality's translated).
    pub args: Args,
    /// Where each value came from.
    pub origins: Origins,
    /// What a personality changes beyond rcon's arguments (`None`: rcon's own command line).
    pub compat: Option<Tweaks>,
    /// The line holds `--`: the words after it were meant for the server as they are.
    pub double_dash: bool,
}

/// Parses argv, also reporting where each value came from (flag or environment variable). Run
/// as `mcrcon` or `rcon-cli` (or `rcon --compat NAME`), that program's command line is
/// translated first. Help and version are printed here and come back as an [`EarlyExit`].
pub fn parse() -> anyhow::Result<Parsed> {
    let argv: Vec<std::ffi::OsString> = std::env::args_os().collect();
    if let Some((personality, start)) = compat::invoked(&argv) {
        return parse_personality(personality, &argv[start..]);
    }
    let mut command = Args::command();
    let mut matches = command.try_get_matches_from_mut(&argv).map_err(|e| {
        let blamed = from_environment(&command, &e, &argv);
        let hint = looks_like_mcrcon(&argv).then_some(
            "these look like mcrcon's options: `rcon --compat mcrcon ...` reads them, and \
             `rcon --install-links DIR` makes an mcrcon that does",
        );
        usage_error(e, blamed, hint)
    })?;
    let origins = Origins::from_matches(&command, &matches);
    // The `_mut` form takes the values instead of cloning every match first.
    let args = Args::from_arg_matches_mut(&mut matches).map_err(|e| usage_error(e, None, None))?;
    keep_for_the_process(command);
    Ok(Parsed {
        args,
        origins,
        compat: None,
        double_dash: argv.iter().skip(1).any(|a| a == "--"),
    })
}

/// The parser is built once and needed until the arguments are read; freeing its ~80 arguments
/// one by one cost a one-shot 76,000 instructions (6.7% of it, callgrind) for memory the
/// process gives back at exit anyway. Parsing happens once per process.
fn keep_for_the_process(command: clap::Command) {
    std::mem::forget(command);
}

/// Whether a command line rcon cannot parse looks like mcrcon's: its `-w SECONDS` or `-r`, or
/// its `-t` (rcon's `-t` takes a duration).
fn looks_like_mcrcon(argv: &[std::ffi::OsString]) -> bool {
    let words: Vec<&str> = argv.iter().skip(1).filter_map(|a| a.to_str()).collect();
    words.iter().enumerate().any(|(i, w)| match *w {
        "-w" | "-r" => true,
        "-t" => words
            .get(i + 1)
            .is_none_or(|next| crate::app::resolve::values::parse_duration(next).is_err()),
        _ => false,
    })
}

/// A personality's arguments through [`compat::translate`], then clap as rcon's. Its own help
/// and version come back as an [`EarlyExit`], its errors as usage errors.
fn parse_personality(
    personality: Personality,
    rest: &[std::ffi::OsString],
) -> anyhow::Result<Parsed> {
    let translation = match compat::translate(personality, rest, &compat::Env::process()) {
        Ok(t) => t,
        Err(TranslationEnd::Print(text)) => {
            let _ = output::print_text(&text);
            return Err(EarlyExit::error(Exit::Success));
        }
        Err(TranslationEnd::Fail(message)) => return Err(fail(Exit::Usage, message)),
    };
    // Only the personality's own variables count (the translation read them): none of rcon's.
    let mut command = Args::command().mut_args(|a| a.env(None::<&'static str>));
    let mut matches = command
        .try_get_matches_from_mut(&translation.argv)
        .map_err(|e| usage_error(e, None, None))?;
    let mut origins = Origins::from_matches(&command, &matches);
    for (id, source) in translation.origins {
        origins.set(id, source);
    }
    let args = Args::from_arg_matches_mut(&mut matches).map_err(|e| usage_error(e, None, None))?;
    keep_for_the_process(command);
    Ok(Parsed {
        args,
        origins,
        compat: Some(translation.tweaks),
        double_dash: translation.argv.iter().any(|a| a == "--"),
    })
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

/// A command-line error as the run's end: `--help` and `--version` print as clap does and
/// come back as an [`EarlyExit`]; anything else is a usage error of one line (exit status 2).
/// `blamed`: the argument's clap name and the environment variable its bad value came from;
/// `hint`: a last word of advice.
fn usage_error(
    e: clap::Error,
    blamed: Option<(String, String)>,
    hint: Option<&str>,
) -> anyhow::Error {
    use clap::error::ErrorKind;
    // `-h` is the short list of its own rendering; `--help` (also with `-h`) clap's long one.
    let long = std::env::args_os()
        .take_while(|a| a != "--")
        .any(|a| a == "--help");
    if e.kind() == ErrorKind::DisplayHelp && !long {
        let _ = output::print_text(&crate::app::resolve::args::short_help(None));
        return EarlyExit::error(Exit::Success);
    }
    if matches!(
        e.kind(),
        ErrorKind::DisplayHelp
            | ErrorKind::DisplayVersion
            | ErrorKind::DisplayHelpOnMissingArgumentOrSubcommand
    ) {
        // What `clap::Error::exit` would do, but returned: stdout and status 0, or stderr and 2.
        let _ = e.print();
        let exit = if e.use_stderr() {
            Exit::Usage
        } else {
            Exit::Success
        };
        return EarlyExit::error(exit);
    }
    let mut line = one_line(&e.to_string());
    if let Some((shown, var)) = blamed {
        line = line.replace(
            &format!("'{shown}'"),
            &format!("environment variable {var}"),
        );
    }
    if let Some(hint) = hint {
        line.push_str("; ");
        line.push_str(hint);
    }
    fail(Exit::Usage, line)
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

/// The usage error of `--mgmt` and `--practice-mgmt` in a build without the `mgmt` feature.
pub fn without_mgmt() -> anyhow::Error {
    fail(
        Exit::Usage,
        "this rcon was built without the management protocol (cargo feature `mgmt`), so \
         --mgmt and --practice-mgmt are not available; build it with the default features",
    )
}

/// The resolved run: its mode, and the process-wide settings the runner applies before it
/// starts (resolution itself changes nothing outside its result).
pub struct Plan {
    /// What this run does.
    pub mode: Mode,
    /// BattlEye's retransmit and keep-alive intervals (`RCON_BATTLEYE_RETRANSMIT`,
    /// `RCON_BATTLEYE_KEEPALIVE`).
    pub tuning: rconsole::consoles::Tuning,
}

/// Resolves the run.
pub fn resolve(parsed: Parsed) -> anyhow::Result<Plan> {
    let tuning = console_tuning()?;
    let mode = resolve_checked(parsed)?;
    Ok(Plan { mode, tuning })
}

/// Takes BattlEye's retransmit and keep-alive intervals from `RCON_BATTLEYE_RETRANSMIT` and
/// `RCON_BATTLEYE_KEEPALIVE` when set (durations; the tests shorten them). A bad value is a
/// usage error.
fn console_tuning() -> anyhow::Result<rconsole::consoles::Tuning> {
    let mut tuning = rconsole::consoles::Tuning::default();
    for (name, slot) in [
        ("RCON_BATTLEYE_RETRANSMIT", &mut tuning.retransmit),
        ("RCON_BATTLEYE_KEEPALIVE", &mut tuning.keepalive),
    ] {
        let Some(text) = std::env::var_os(name) else {
            continue;
        };
        let text = text.to_string_lossy();
        if text.trim().is_empty() {
            continue;
        }
        let d = crate::app::resolve::values::parse_duration(&text)
            .map_err(|e| fail(Exit::Usage, format!("{name}: {e}")))?;
        if d.is_zero() {
            return Err(fail(Exit::Usage, format!("{name}: must be more than 0")));
        }
        *slot = d;
    }
    Ok(tuning)
}

/// [`resolve`]'s checks of the command line as a whole, then the mode.
fn resolve_checked(parsed: Parsed) -> anyhow::Result<Mode> {
    let Parsed {
        args,
        origins,
        compat,
        double_dash,
    } = parsed;
    if args.compat.is_some() && compat.is_none() {
        return Err(fail(
            Exit::Usage,
            "--compat must be the first argument: rcon --compat mcrcon|rcon-cli ARGS... (the \
             rest of the line is read as that program's)",
        ));
    }
    if let Some(dir) = &args.install_links {
        return Ok(Mode::InstallLinks(dir.clone()));
    }
    if !cfg!(feature = "mgmt") && (args.mgmt.is_some() || args.practice_mgmt.is_some()) {
        return Err(without_mgmt());
    }
    // --target names RCON addresses; the management protocol's servers are profiles with a
    // mgmt_url (-s, groups, --all). Refused before any hand-off, naming both flags.
    if args.mgmt.is_some() && !args.target.is_empty() {
        return Err(fail(
            Exit::Usage,
            "--mgmt cannot be used with --target (a target is an RCON address); name \
             management servers with -s NAME, a group or --all, each profile with its mgmt_url",
        ));
    }
    // clap's `requires = "follow"` does not fire when a flag that conflicts with --follow is
    // given (`-i --exec CMD`, `--countdown 5m --poll 1s`), so it is checked here.
    for (given, flag) in [
        (args.exec.is_some(), "--exec"),
        (args.poll.is_some(), "--poll"),
    ] {
        if given && args.follow.is_none() {
            return Err(fail(
                Exit::Usage,
                format!(
                    "{flag} goes with --follow (it shapes how events are followed); drop {flag} or add --follow"
                ),
            ));
        }
    }
    let wait = args.wait.is_some();
    if wait && args.retry > 0 {
        return Err(fail(
            Exit::Usage,
            "--retry cannot be used with --wait: --wait already tries the connection again \
             until the server is up or the time has passed",
        ));
    }
    let mode = resolve_mode(args, origins, compat, double_dash)?;
    // The one connection of a session is the one waited for; the other modes connect their
    // own ways (several servers have --retry, --follow reconnects by itself).
    if wait && !matches!(mode, Mode::Session(_)) {
        return Err(fail(
            Exit::Usage,
            "--wait applies to one server's commands, files and console, not to --follow, \
             --countdown, --every, --if, several servers (there --retry N tries a connect \
             again), --ping, --query, --mgmt or the practice servers",
        ));
    }
    Ok(mode)
}

/// The mode for the arguments, after [`resolve`]'s checks of the command line as a whole.
fn resolve_mode(
    args: Args,
    origins: Origins,
    compat: Option<Tweaks>,
    double_dash: bool,
) -> anyhow::Result<Mode> {
    if let Some(mode) = standalone_mode(&args, &origins)? {
        return Ok(mode);
    }
    if args.demo.is_some() {
        refuse_with_demo(&origins)?;
        refuse_timed_with_demo(&args)?;
    }
    let file = if args.demo.is_some() {
        ConfigFile::Ignored("--demo")
    } else {
        ConfigFile::load(&args, &origins)?
    };
    let commands = commands(&args, compat.is_none() && !double_dash);
    // An inventory: every row on the settings of the selected profile (-s NAME or `default`),
    // with the row's own address, password source, dialect and ssh.
    if let Some(path) = &args.targets {
        let mut servers = Vec::new();
        for row in inventory::load(path, &args.where_)? {
            let mut s = Settings::resolve(&args, &origins, file.clone())?;
            let name = settings::apply_row(&mut s, &args, row);
            servers.push((name, s));
        }
        return several(args, &origins, servers, commands);
    }
    if let Some(names) = settings::fanout_names(&args, &origins, &file)? {
        let mut servers = Vec::new();
        for name in names {
            let s = Settings::resolve_profile(&args, &origins, file.clone(), Some(&name))?;
            servers.push((name.value, s));
        }
        if args.mgmt.is_some() && args.print_config.is_none() {
            return match mgmt_fanout_plan(&args)? {
                (plan, Some(follow), _) => Ok(Mode::MgmtFanoutFollow(plan, follow, servers)),
                (plan, None, Some(timing)) => Ok(Mode::MgmtTimed(plan, timing, servers)),
                (plan, None, None) => Ok(Mode::MgmtFanout(plan, servers)),
            };
        }
        return several(args, &origins, servers, commands);
    }
    let settings = Settings::resolve(&args, &origins, file.clone())?;
    if args.learned.is_some() {
        return Ok(Mode::Learned(settings.learned_key()));
    }
    // --target before --print-config, so that the targets' settings are what it shows.
    if !args.target.is_empty() {
        let servers = target_servers(&args, &origins, &file)?;
        return several(args, &origins, servers, commands);
    }
    if args.print_config.is_some() {
        return Ok(Mode::PrintConfig(vec![(
            None,
            describe(&args, &origins, &settings),
        )]));
    }
    if args.mgmt.is_some() || reached_over_mgmt(&settings) {
        return mgmt_mode(&args, settings, compat);
    }
    if follow_or_timed_asked(&args) {
        let one = vec![(settings.display_name(), settings)];
        return follow_or_timed(&args, one, commands);
    }
    session_mode(&args, settings, commands, compat)
}

/// The modes that need no server's settings: `--remote-serve`, the practice servers,
/// `--list-servers`, `--learned` (without `--forget`), `--ping` and `--query`.
fn standalone_mode(args: &Args, origins: &Origins) -> anyhow::Result<Option<Mode>> {
    if args.remote_serve.is_some() {
        return Ok(Some(Mode::RemoteServe));
    }
    if let Some(addr) = &args.practice_mgmt {
        return Ok(Some(Mode::PracticeMgmt(practice_plan(
            args,
            "--practice-mgmt",
            addr,
        )?)));
    }
    if let Some(addr) = &args.practice_server {
        return Ok(Some(Mode::Practice(practice_plan(
            args,
            "--practice-server",
            addr,
        )?)));
    }
    if args.list_servers.is_some() {
        return Ok(Some(Mode::ListServers(ConfigFile::load(args, origins)?)));
    }
    if args.learned.is_some() && args.forget.is_none() {
        return Ok(Some(Mode::Learned(None)));
    }
    if let Some(probe) = probe(args, origins)? {
        return Ok(Some(Mode::Probe(probe)));
    }
    Ok(None)
}

/// `--target`'s servers, each on the selected profile's settings with the target's address.
fn target_servers(
    args: &Args,
    origins: &Origins,
    file: &ConfigFile,
) -> anyhow::Result<Vec<(String, Settings)>> {
    let mut servers = Vec::new();
    for (name, target, named_port) in settings::targets(args)? {
        let mut s = Settings::resolve(args, origins, file.clone())?;
        // --print-config says the address came from the target, not the default profile.
        let flag = Source::Flag(format!("--target {name}"));
        s.host = Sourced::new(target.host, flag.clone());
        s.port.value = target.port;
        if named_port {
            s.port.source = flag;
        }
        // A target names its own address, so the route to the default profile's server
        // (its ssh or proxy_command) does not apply; --ssh and --proxy-command still do.
        s.drop_profile_route();
        servers.push((name, s));
    }
    Ok(servers)
}

/// `--mgmt` on one server: its notifications, a timed run, or method calls (with the RCON
/// session of the same words for a server that runs console commands).
fn mgmt_mode(args: &Args, settings: Settings, compat: Option<Tweaks>) -> anyhow::Result<Mode> {
    let settings = Box::new(settings);
    Ok(match mgmt_plan(args, false)? {
        (plan, Some(follow), _) => Mode::MgmtFollow(plan, follow, settings),
        (plan, None, Some(timing)) => {
            Mode::MgmtTimed(plan, timing, vec![(settings.display_name(), *settings)])
        }
        (plan, None, None) => {
            // The RCON commands of the same words, for a server that runs console
            // commands (issue 42): the first word may be where clap put the URL.
            let mut commands = plan.lines.clone();
            if !plan.words.is_empty() {
                commands.push(plan.words.join(" "));
            }
            let session = session_plan(args, *settings, commands, compat);
            Mode::Mgmt(plan, Box::new(session))
        }
    })
}

/// One server's session, here or over `--remote`, after the checks of what `--remote` and
/// `--resume` can take.
fn session_mode(
    args: &Args,
    settings: Settings,
    commands: Vec<String>,
    compat: Option<Tweaks>,
) -> anyhow::Result<Mode> {
    let inputs = SessionInputs::new(
        !commands.is_empty(),
        !args.files.is_empty(),
        args.interactive.is_some(),
        std::io::stdin().is_terminal(),
    );
    if settings.remote && args.demo.is_none() {
        let given: Vec<&str> = [
            (args.trace.is_some(), "--trace"),
            (args.messages.is_some(), "--messages"),
            (args.wait.is_some(), "--wait"),
        ]
        .into_iter()
        .filter_map(|(on, flag)| on.then_some(flag))
        .collect();
        if !given.is_empty() {
            return Err(fail(
                Exit::Usage,
                format!(
                    "{} cannot be used with --remote yet (the remote side runs the commands; run without --remote for {})",
                    given.join(" and "),
                    if given.len() == 1 { "it" } else { "them" }
                ),
            ));
        }
    }
    if args.resume.is_some() && args.files.len() + usize::from(inputs.stdin_batch) != 1 {
        return Err(fail(
            Exit::Usage,
            "--resume needs exactly one input, one -f FILE or stdin (the journal is kept per input and server)",
        ));
    }
    let remote = settings.remote && args.demo.is_none() && !inputs.console;
    let plan = Box::new(session_plan(args, settings, commands, compat));
    Ok(if remote {
        Mode::RemoteSession(plan)
    } else {
        Mode::Session(plan)
    })
}

/// Whether the profile in use says `mgmt = URL`: its server is reached over the management
/// protocol without `--mgmt` (issue 42). `--ping`, `--query` and the practice servers never
/// get here.
fn reached_over_mgmt(settings: &Settings) -> bool {
    let Some(name) = settings.profile.as_ref() else {
        return false;
    };
    settings
        .config
        .config()
        .and_then(|c| c.servers.get(&name.value))
        .is_some_and(|p| p.get_ref().mgmt.is_some())
}

/// One server's session of `commands`, `-f` files, stdin and the console, as the flags say.
fn session_plan(
    args: &Args,
    settings: Settings,
    commands: Vec<String>,
    compat: Option<Tweaks>,
) -> SessionPlan {
    SessionPlan {
        settings,
        demo: args.demo.is_some(),
        inputs: SessionInputs::new(
            !commands.is_empty(),
            !args.files.is_empty(),
            args.interactive.is_some(),
            std::io::stdin().is_terminal(),
        ),
        commands,
        trace: args.trace.is_some(),
        messages: args.messages.is_some(),
        json: args.json.is_some(),
        batch: batch_policy(args),
        printing: Printing {
            quiet: compat.is_some_and(|t| t.quiet),
            ..printing(args)
        },
        wait: args.wait,
        parse_errors_fail: compat.is_none_or(|t| t.parse_errors_fail),
        quit_word: compat.and_then(|t| t.quit_word),
        files: args.files.clone(),
    }
}

/// Several servers: their settings, `--follow` or the timed operations, or commands on all.
fn several(
    args: Args,
    origins: &Origins,
    servers: Vec<(String, Settings)>,
    commands: Vec<String>,
) -> anyhow::Result<Mode> {
    if args.print_config.is_some() {
        let named = servers
            .iter()
            .map(|(n, s)| (Some(n.clone()), describe(&args, origins, s)))
            .collect();
        return Ok(Mode::PrintConfig(named));
    }
    if follow_or_timed_asked(&args) {
        return follow_or_timed(&args, servers, commands);
    }
    if args.interactive.is_some() {
        return Err(fail(
            Exit::Usage,
            "--interactive opens a console on one server given with -H or -s NAME; --target, \
             --all and server groups run commands and files only",
        ));
    }
    // Output flags with no meaning for several servers are refused, not ignored.
    if args.trace.is_some() {
        return Err(fail(
            Exit::Usage,
            "--trace shows one connection's packets; with several servers, trace one at a time",
        ));
    }
    let printing = printing(&args);
    let Some(layout) = crate::app::resolve::modes::layout(printing.style, args.group.is_some())
    else {
        return Err(fail(
            Exit::Usage,
            "--raw prints bytes as received, which cannot be labelled by server; use --json \
             (or one server) instead",
        ));
    };
    let mut files = args.files.clone();
    // Piped stdin is batch input, as for one server (unless the inventory came from it).
    let stdin_taken = args.targets.as_deref() == Some("-");
    if commands.is_empty() && files.is_empty() && !stdin_taken && !std::io::stdin().is_terminal() {
        files.push("-".into());
    }
    let policy = FanoutPolicy {
        keep_going: args.keep_going.is_some(),
        delay: args.delay,
        echo: args.echo.is_some(),
        parallel: args
            .parallel
            .map_or(rconsole::fleet::DEFAULT_PARALLEL, |n| n as usize),
        parallel_given: args.parallel.is_some(),
        retries: args.retry,
        progress: crate::app::print::stderr_is_terminal(),
        messages: args.messages.is_some().then_some(args.json.is_some()),
    };
    Ok(Mode::Fanout(FanoutPlan {
        servers,
        commands,
        files,
        macros: args.macros,
        layout,
        printing,
        policy,
    }))
}

/// The `--print-config` text of one server: its settings, and the management ones when
/// anything about `--mgmt` is set.
fn describe(args: &Args, origins: &Origins, settings: &Settings) -> String {
    settings.describe_with(
        super::mgmt_describe::rows(args, origins, settings),
        args.demo.is_some(),
    )
}

/// Whether `--follow` or a timed operation (`--countdown`, `--every`, `--if`) was asked for.
fn follow_or_timed_asked(args: &Args) -> bool {
    args.follow.is_some() || timing_asked(args)
}

/// `--follow`, or the timed operations, on these servers (when [`follow_or_timed_asked`]).
fn follow_or_timed(
    args: &Args,
    servers: Vec<(String, Settings)>,
    commands: Vec<String>,
) -> anyhow::Result<Mode> {
    refuse_echo_live_or_timed(args)?;
    refuse_unused_live_or_timed(args)?;
    if args.follow.is_some() {
        if !commands.is_empty() || !args.files.is_empty() {
            return Err(follow_runs_no_commands());
        }
        let rcon = |s: &Settings| s.dialect.value.dialect().protocol == Protocol::Rcon;
        let polled = servers.iter().filter(|(_, s)| rcon(s)).count();
        if polled > 0 && polled < servers.len() {
            // A group mixing RCON servers (polled) with consoles (pushed messages).
            let (name, _) = servers
                .iter()
                .find(|(_, s)| !rcon(s))
                .expect("one is not RCON");
            return Err(fail(
                Exit::Usage,
                format!(
                    "{name}: --follow takes either RCON servers (polled) or BattlEye/WebRCON/telnet ones (their pushed messages), not both at once; run one --follow for each kind"
                ),
            ));
        }
        let options = follow_options(args)?;
        if polled == 0 {
            if args.poll.is_some() {
                return Err(fail(
                    Exit::Usage,
                    "--poll is for RCON servers: BattlEye, WebRCON and telnet servers push their messages, nothing is polled",
                ));
            }
            return Ok(Mode::FollowPushed(options, servers));
        }
        return Ok(Mode::FollowPolled(options, servers));
    }
    let timing = timing(args)?.unwrap_or_default();
    refuse_nothing_to_run(&timing, !commands.is_empty())?;
    Ok(Mode::Timed(TimedPlan {
        servers,
        commands,
        timing,
    }))
}

/// A timed run with no final command and no countdown would do nothing.
fn refuse_nothing_to_run(timing: &Timing, has_commands: bool) -> anyhow::Result<()> {
    if timing.then.is_empty() && !has_commands && timing.countdown.is_none() {
        return Err(fail(
            Exit::Usage,
            "nothing to run: give COMMAND, -c or --then",
        ));
    }
    Ok(())
}

fn follow_runs_no_commands() -> anyhow::Error {
    fail(
        Exit::Usage,
        "--follow runs no commands (it prints events); run them separately",
    )
}

fn follow_options(args: &Args) -> anyhow::Result<FollowOptions> {
    if args.poll.is_some_and(|p| p.is_zero()) {
        return Err(fail(Exit::Usage, "--poll must be more than 0"));
    }
    // Only a management server sends console log lines: refused, not dropped.
    if args.log_level.is_some() && args.mgmt.is_none() {
        return Err(fail(
            Exit::Usage,
            "--log-level filters the console log lines a management server sends: use it with --mgmt",
        ));
    }
    Ok(FollowOptions {
        json: args.json.is_some(),
        exec: args.exec.clone(),
        poll: args.poll,
        log_level: args.log_level,
    })
}

fn timing_asked(args: &Args) -> bool {
    args.countdown.is_some() || args.every.is_some() || args.condition.is_some()
}

/// `--countdown`, `--every` and `--if`, checked: a flag that needs another, a zero interval and
/// a condition that does not parse are usage errors here, before any server is asked.
fn timing(args: &Args) -> anyhow::Result<Option<Timing>> {
    if !timing_asked(args) {
        return Ok(None);
    }
    if args.countdown.is_none() && args.announce.is_some() {
        return Err(fail(Exit::Usage, "--announce needs --countdown"));
    }
    if args.every.is_some_and(|e| e.is_zero()) {
        return Err(fail(Exit::Usage, "--every must be more than 0"));
    }
    // A countdown with nothing to say or run (it panicked before).
    if args.countdown.is_some()
        && args.announce.is_none()
        && args.then.is_empty()
        && args.commands.is_empty()
        && args.command.is_empty()
    {
        return Err(fail(
            Exit::Usage,
            "--countdown has nothing to send: give --announce, --then or a command",
        ));
    }
    // Each run's countdown must end before the next run begins: otherwise every later run
    // would start late and send its announcements in a burst, all overdue at once.
    if let (Some(every), Some(countdown)) = (args.every, args.countdown)
        && every <= countdown
    {
        return Err(fail(
            Exit::Usage,
            format!(
                "--every {} must be longer than --countdown {}: each run's countdown would \
                 still be going when the next run began",
                rconsole::format_duration(every),
                rconsole::format_duration(countdown)
            ),
        ));
    }
    Ok(Some(Timing {
        countdown: args.countdown,
        announce: args.announce.clone(),
        at: args.at.clone(),
        then: args.then.clone(),
        cancel_announce: args.cancel_announce.clone(),
        every: args.every,
        condition: args
            .condition
            .as_deref()
            .map(Condition::parse)
            .transpose()?,
        json: args.json.is_some(),
    }))
}

/// What `--practice-mode` names: an RCON behaviour or a console's server.
#[derive(Debug, Clone, Copy)]
pub enum PracticeKind {
    /// One of the RCON practice server's modes.
    Rcon(rconsole::practice::PracticeMode),
    /// BattlEye, WebRCON or telnet (and their variants).
    Console(rconsole::consoles::practice::Kind),
}

/// The practice server's plan; `flag` (`--practice-server` or `--practice-mgmt`) names the
/// address in a usage error, and an unknown `--practice-mode` is one too.
fn practice_plan(args: &Args, flag: &str, addr: &str) -> anyhow::Result<PracticePlan> {
    let unix_socket = addr
        .strip_prefix("unix:")
        .filter(|_| flag == "--practice-mgmt")
        .map(PathBuf::from);
    let bind = match unix_socket {
        Some(_) => std::net::SocketAddr::from(([127, 0, 0, 1], 0)),
        None => addr
            .parse()
            .map_err(|_| fail(Exit::Usage, format!("{flag}: '{addr}' is not IP:PORT")))?,
    };
    let name = args.practice_mode.as_str();
    let mode = match (
        rconsole::practice::PracticeMode::from_name(name),
        rconsole::consoles::practice::Kind::from_name(name),
    ) {
        (_, Some(kind)) => PracticeKind::Console(kind),
        (Some(mode), None) => PracticeKind::Rcon(mode),
        (None, None) => {
            let mut names: Vec<&str> = rconsole::practice::PracticeMode::ALL
                .iter()
                .map(|m| m.name())
                .collect();
            names.extend(rconsole::consoles::practice::Kind::ALL.map(|k| k.name()));
            return Err(fail(
                Exit::Usage,
                format!(
                    "unknown --practice-mode '{name}' (one of: {})",
                    names.join(", ")
                ),
            ));
        }
    };
    Ok(PracticePlan {
        addr: addr.to_string(),
        bind,
        mode,
        password: args.practice_password.clone(),
        read_delay: args.practice_read_delay,
        tls: args.practice_cert.clone().zip(args.practice_key.clone()),
        mods: args.practice_mods.clone(),
        unix_socket,
    })
}

/// `--mgmt`'s plan, with `--follow`'s options or the timed operations when asked for (at most
/// one of them: `--follow` conflicts with the timed flags).
fn mgmt_plan(
    args: &Args,
    several: bool,
) -> anyhow::Result<(MgmtPlan, Option<FollowOptions>, Option<Timing>)> {
    // `--mgmt players`: clap took the first command word for the URL; a URL has a scheme.
    let (url, first) = match args.mgmt.as_deref() {
        Some("") | None => (None, None),
        Some(u) if u.contains("://") || u.starts_with("unix:") => (Some(u.to_string()), None),
        Some(word) => (None, Some(word.to_string())),
    };
    let words: Vec<String> = first
        .into_iter()
        .chain(args.command.iter().cloned())
        .collect();
    let timing = timing(args)?;
    let has_commands = !args.commands.is_empty() || !words.is_empty();
    if let Some(timing) = &timing {
        refuse_nothing_to_run(timing, has_commands)?;
    }
    if args.follow.is_some() && has_commands {
        return Err(follow_runs_no_commands());
    }
    refuse_echo_live_or_timed(args)?;
    // Files of commands run on one server that runs console commands (issue 42), with its
    // session; the journal of --resume is RCON's alone: refused, not dropped.
    let one_session = !(args.follow.is_some() || timing.is_some() || several);
    let files_only = [
        (!args.files.is_empty() && !one_session, "-f"),
        (args.resume.is_some(), "--resume"),
        (args.resend_in_doubt.is_some(), "--resend-in-doubt"),
        (args.skip_in_doubt.is_some(), "--skip-in-doubt"),
        (!args.macros.is_empty() && !one_session, "--macro"),
    ];
    if let Some((_, flag)) = files_only.iter().find(|(given, _)| *given) {
        return Err(fail(
            Exit::Usage,
            format!(
                "{flag} cannot be used with --mgmt here: files of commands run on one server \
                 that runs console commands, without --follow or a timed operation; --mgmt \
                 takes its calls as words, -c CALL, or one per line on stdin"
            ),
        ));
    }
    let plan = MgmtPlan {
        url,
        lines: args.commands.clone(),
        words,
        cert: args.mgmt_cert.clone(),
        fingerprint: args.mgmt_fingerprint.clone(),
        origin: args.mgmt_origin.clone(),
        secret_file: args.mgmt_secret_file.clone(),
        trace: args.trace.is_some(),
        json: args.json.is_some(),
        interactive: args.interactive.is_some(),
        policy: batch_policy(args),
    };
    let follow = args
        .follow
        .is_some()
        .then(|| follow_options(args))
        .transpose()?;
    Ok((plan, follow, timing))
}

/// --echo prints each command before its output in a session, a fan-out and `--mgmt`'s calls;
/// the live and timed modes do not honour it, so it is refused rather than silently dropped.
fn refuse_echo_live_or_timed(args: &Args) -> anyhow::Result<()> {
    if args.echo.is_none() || !follow_or_timed_asked(args) {
        return Ok(());
    }
    let flag = live_or_timed_flag(args);
    Err(fail(
        Exit::Usage,
        format!(
            "--echo cannot be used with {flag}; drop --echo (with --json each record names its command)"
        ),
    ))
}

/// The name of the live or timed mode asked for, as its flag (when [`follow_or_timed_asked`]).
fn live_or_timed_flag(args: &Args) -> &'static str {
    if args.follow.is_some() {
        "--follow"
    } else if args.countdown.is_some() {
        "--countdown"
    } else if args.every.is_some() {
        "--every"
    } else {
        "--if"
    }
}

/// The flags that shape a batch, its retries or its output, which `--follow` and the timed
/// operations over RCON do not honour: refused with them, naming both flags, rather than
/// silently dropped (`rcon --countdown 5m -f restart.txt` would otherwise count down and send
/// none of the file).
fn refuse_unused_live_or_timed(args: &Args) -> anyhow::Result<()> {
    let follow = args.follow.is_some();
    let batch = if follow {
        "it prints events and sends no commands"
    } else {
        "it sends COMMAND, -c and --then on its schedule, no files or console"
    };
    let output = if follow {
        "it prints events, not answers"
    } else {
        "it prints each answer as it came, or a JSON record with --json"
    };
    let unused: [(bool, &str, &str); 16] = [
        (!args.files.is_empty(), "-f", batch),
        (args.interactive.is_some(), "--interactive", batch),
        (
            args.keep_going.is_some(),
            "--keep-going",
            if follow {
                batch
            } else {
                "a failed command is reported and the schedule goes on anyway"
            },
        ),
        (
            args.delay.is_some(),
            "--delay",
            if follow {
                batch
            } else {
                "the schedule says when each command goes out (--at, --every)"
            },
        ),
        (
            args.retry > 0,
            "--retry",
            if follow {
                "it reconnects by itself when a server goes away"
            } else {
                "every server is connected once, before anything is sent"
            },
        ),
        (args.resume.is_some(), "--resume", batch),
        (args.resend_in_doubt.is_some(), "--resend-in-doubt", batch),
        (args.skip_in_doubt.is_some(), "--skip-in-doubt", batch),
        (!args.macros.is_empty(), "--macro", batch),
        (
            args.trace.is_some(),
            "--trace",
            "it shows no packets; trace one command at a time",
        ),
        (args.messages.is_some(), "--messages", output),
        (args.raw.is_some(), "--raw", output),
        (args.fix_newlines.is_some(), "--fix-newlines", output),
        (args.no_fix_newlines.is_some(), "--no-fix-newlines", output),
        (
            args.parallel.is_some(),
            "--parallel",
            "every server is run at once, in step",
        ),
        (
            args.group.is_some(),
            "--group",
            "each line is labelled with its server as it comes",
        ),
    ];
    match unused.iter().find(|(given, _, _)| *given) {
        None => Ok(()),
        Some((_, flag, why)) => Err(fail(
            Exit::Usage,
            format!(
                "{flag} cannot be used with {}: {why}; drop {flag}",
                live_or_timed_flag(args)
            ),
        )),
    }
}

/// [`mgmt_plan`] for several servers, refusing what works on one only: a URL (it names one
/// server) and no methods at all (the console and stdin).
fn mgmt_fanout_plan(
    args: &Args,
) -> anyhow::Result<(MgmtPlan, Option<FollowOptions>, Option<Timing>)> {
    let (plan, follow, timing) = mgmt_plan(args, true)?;
    if plan.url.is_some() {
        return Err(fail(
            Exit::Usage,
            "--mgmt URL names one server; with several, each profile's mgmt_url is used (give --mgmt without a URL)",
        ));
    }
    let no_calls = plan.lines.is_empty() && plan.words.iter().all(|w| w.trim().is_empty());
    if follow.is_none() && timing.is_none() && no_calls {
        return Err(fail(
            Exit::Usage,
            "--mgmt on several servers needs the methods to call (words or -c); the console and stdin work with one server",
        ));
    }
    Ok((plan, follow, timing))
}

/// `--ping` / `--query`: they need no password and no RCON session, and read the config file
/// only when `-s` names a profile (for its host and time limit).
fn probe(args: &Args, origins: &Origins) -> anyhow::Result<Option<Probe>> {
    let kind = match (&args.ping, &args.query) {
        (Some(given), _) => ProbeKind::Ping {
            given: given.clone(),
            legacy: args.legacy.is_some(),
        },
        (None, Some(given)) => ProbeKind::Query {
            given: given.clone(),
            full: args.full.is_some(),
        },
        (None, None) => return Ok(None),
    };
    let names_profile =
        args.server.is_some() && origins.get("server") != Some(&settings::Source::Default);
    let defaults = if names_profile {
        let s = Settings::resolve(args, origins, ConfigFile::load(args, origins)?)?;
        ProbeDefaults {
            host: s.host.value,
            timeout: s.timeout.value,
        }
    } else {
        ProbeDefaults::from_flags(args.host.as_deref(), args.timeout)?
    };
    Ok(Some(Probe {
        kind,
        defaults,
        json: args.json.is_some(),
        colour: colour(args),
        trace: args.trace.is_some(),
    }))
}

/// `--demo` runs one session against its own in-process server: the live and timed modes
/// (which run on their own schedule against real servers) are refused rather than silently
/// dropped, naming both flags.
fn refuse_timed_with_demo(args: &Args) -> anyhow::Result<()> {
    let asked = [
        (args.follow.is_some(), "--follow"),
        (args.every.is_some(), "--every"),
        (args.countdown.is_some(), "--countdown"),
        (args.condition.is_some(), "--if"),
    ];
    match asked.iter().find(|(on, _)| *on) {
        Some((_, flag)) => Err(fail(
            Exit::Usage,
            format!(
                "--demo runs one session against its own practice server and cannot be used with \
                 {flag}; try {flag} against `rcon --practice-server 127.0.0.1:0` in another terminal"
            ),
        )),
        None => Ok(()),
    }
}

/// `--demo` runs against its own server: a server or password given on the command line would
/// be silently ignored (the environment's RCON_* values are, as the config is).
fn refuse_with_demo(origins: &Origins) -> anyhow::Result<()> {
    for (id, flag) in [
        ("host", "--host"),
        ("port", "--port"),
        ("server", "--server"),
        ("password", "--password"),
        ("password_file", "--password-file"),
    ] {
        if matches!(origins.get(id), Some(Source::Flag(_))) {
            return Err(fail(
                Exit::Usage,
                format!("--demo runs against its own practice server; drop {flag}"),
            ));
        }
    }
    Ok(())
}

/// The commands to run: `-c` ones first, then the trailing words joined into one. `note`: say
/// on stderr when a word after the command is one of rcon's long options (see
/// [`misplaced_options`]).
fn commands(args: &Args, note: bool) -> Vec<String> {
    let mut all = args.commands.clone();
    if !args.command.is_empty() {
        all.push(args.command.join(" "));
    }
    // With --mgmt the words are a method call, not an RCON command.
    if note && args.mgmt.is_none() {
        let misplaced = misplaced_options(&args.command);
        if !misplaced.is_empty() {
            stderr!(
                "rcon: note: {} came after the command, so the server got {} as part of it; \
                 rcon's options go before the command: rcon {} {}",
                quoted(&misplaced),
                if misplaced.len() == 1 { "it" } else { "them" },
                misplaced.join(" "),
                args.command[0]
            );
        }
    }
    all
}

/// The words after the first command word that are exactly one of rcon's long options
/// (`--json`, `--port=1`): the words still go to the server, because words with hyphens belong
/// to the command (`tp @p 0 -60 0`), but the user most likely meant the option.
fn misplaced_options(words: &[String]) -> Vec<&str> {
    let mut found = Vec::new();
    // Building clap's command costs about a quarter of a one-shot's instructions: only when a
    // word looks like a long option.
    if !words.iter().skip(1).any(|w| w.starts_with("--")) {
        return found;
    }
    let command = Args::command();
    for word in words.iter().skip(1) {
        let Some(name) = word.strip_prefix("--") else {
            continue;
        };
        let name = name.split_once('=').map_or(name, |(n, _)| n);
        let known = matches!(name, "help" | "version")
            || command.get_arguments().any(|a| a.get_long() == Some(name));
        if known {
            found.push(word.as_str());
        }
    }
    found
}

/// `'a'`, `'a' and 'b'`, `'a', 'b' and 'c'`.
fn quoted(words: &[&str]) -> String {
    let q: Vec<String> = words.iter().map(|w| format!("'{w}'")).collect();
    match q.split_last() {
        Some((last, rest)) if !rest.is_empty() => format!("{} and {last}", rest.join(", ")),
        _ => q.concat(),
    }
}

fn batch_policy(args: &Args) -> BatchPolicy {
    BatchPolicy {
        keep_going: args.keep_going.is_some(),
        delay: args.delay,
        echo: args.echo.is_some(),
        macros: args.macros.iter().cloned().collect(),
        resume: args.resume.is_some(),
        resend_in_doubt: args.resend_in_doubt.is_some(),
        skip_in_doubt: args.skip_in_doubt.is_some(),
        retry: args.retry,
    }
}

/// Colour as `--color` says (auto: stdout is a terminal, and the environment's NO_COLOR,
/// CLICOLOR, CLICOLOR_FORCE and TERM agree).
fn colour(args: &Args) -> bool {
    output::color_enabled(
        args.color,
        crate::app::print::stdout_is_terminal(),
        &output::ColorEnv::from_env(),
    )
}

/// How command output is printed: `--json`, `--raw`, or text with colour as `--color` says;
/// vanilla's dropped line breaks restored as [`fix_newlines`] decides.
fn printing(args: &Args) -> Printing {
    let style = if args.json.is_some() {
        Style::Json
    } else if args.raw.is_some() {
        Style::Raw
    } else {
        Style::Text {
            color: colour(args),
        }
    };
    Printing {
        style,
        fix_newlines: fix_newlines(args),
        quiet: false,
    }
}

/// Whether to restore the line breaks vanilla drops (MC-7569): `--fix-newlines` or
/// `--no-fix-newlines` when given (the last wins), else only when stdout is a terminal, where a
/// person reads it; output to a pipe or file stays exactly as the server sent it.
fn fix_newlines(args: &Args) -> bool {
    if args.fix_newlines.is_some() || args.no_fix_newlines.is_some() {
        return args.fix_newlines.is_some();
    }
    args.raw.is_none() && args.json.is_none() && crate::app::print::stdout_is_terminal()
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
    fn mcrcon_habits_are_recognised() {
        let argv = |words: &[&str]| -> Vec<std::ffi::OsString> {
            std::iter::once("rcon")
                .chain(words.iter().copied())
                .map(Into::into)
                .collect()
        };
        assert!(looks_like_mcrcon(&argv(&["-H", "h", "-p", "pw", "-t"])));
        assert!(looks_like_mcrcon(&argv(&["-w", "5", "a", "b"])));
        assert!(looks_like_mcrcon(&argv(&["-t", "list"])));
        assert!(!looks_like_mcrcon(&argv(&["-t", "5s", "--bogus"])));
        assert!(!looks_like_mcrcon(&argv(&["--bogus"])));
    }

    #[test]
    fn misplaced_options_are_found() {
        let words = |w: &[&str]| w.iter().map(|s| s.to_string()).collect::<Vec<_>>();
        assert_eq!(misplaced_options(&words(&["list", "--json"])), ["--json"]);
        assert_eq!(
            misplaced_options(&words(&["x", "--port=1", "--help"])),
            ["--port=1", "--help"]
        );
        assert!(misplaced_options(&words(&["tp", "@p", "0", "-60", "0"])).is_empty());
        assert!(misplaced_options(&words(&["say", "--bogus", "-j", "--"])).is_empty());
        assert_eq!(quoted(&["a", "b", "c"]), "'a', 'b' and 'c'");
    }

    #[test]
    fn session_inputs() {
        let p = SessionInputs::new;
        let s = |stdin_batch, console| SessionInputs {
            stdin_batch,
            console,
        };
        // Nothing given: console on a terminal, stdin batch otherwise.
        assert_eq!(p(false, false, false, true), s(false, true));
        assert_eq!(p(false, false, false, false), s(true, false));
        // Commands or files given: neither, unless -i.
        assert_eq!(p(true, false, false, true), s(false, false));
        assert_eq!(p(false, true, false, false), s(false, false));
        assert_eq!(p(true, true, true, false), s(false, true));
        assert_eq!(p(false, false, true, false), s(false, true));
    }
}
