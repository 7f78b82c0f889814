//! The command line as clap sees it: a mirror of argv, nothing merged or resolved yet.

use std::path::PathBuf;
use std::time::Duration;

use clap::{Parser, ValueEnum};

use crate::app::print::output::ColorChoice;

fn duration(text: &str) -> Result<Duration, String> {
    crate::app::resolve::values::parse_duration(text)
}

fn time_limit(text: &str) -> Result<Duration, String> {
    crate::app::resolve::values::parse_time_limit(text)
}

/// A path; unlike clap's own parser it accepts an empty value, so an empty `RCON_CONFIG=` or
/// `RCON_PASSWORD_FILE=` counts as unset (the settings stage drops it).
fn path(text: &str) -> Result<PathBuf, String> {
    Ok(PathBuf::from(text))
}

fn macro_arg(text: &str) -> Result<(String, String), String> {
    rconsole::text::mcfunction::parse_macro(text)
}

/// How the end of a command's output is found (see the README's "Why this client").
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SentinelArg {
    /// Use what was learned about the server, else probe it once after login: vanilla's split
    /// rule, id -2, a positive id, the server's own end marker, else a quiet gap.
    Detect,
    /// Always an id -2 sentinel, no probe.
    Negative,
    /// A positive-id sentinel, for servers that close on ids <= 0.
    Positive,
    /// No sentinel: an answer ends after a quiet gap from the command on (--idle-gap).
    Idle,
    /// Vanilla's split rule without a probe: no sentinel when the first fragment is under 4096
    /// bytes (one round trip per command).
    Auto,
}

/// A console log line's level, least severe first (the server's logger's levels).
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, ValueEnum)]
pub enum LogLevel {
    /// Everything.
    Trace,
    /// Debugging detail.
    Debug,
    /// The usual lines.
    Info,
    /// Warnings.
    Warn,
    /// Errors.
    Error,
    /// Fatal errors only.
    Fatal,
}

/// The server family, which decides how replies are matched and ended (see docs/ssh.md).
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum DialectArg {
    /// Vanilla Minecraft, Paper, Spigot, Forge: probed end-of-output marker, 1446-byte commands.
    Minecraft,
    /// Source engine (CS2, TF2, GMod...): mirrored end-of-output marker, 4086-byte commands.
    Source,
    /// Factorio: one packet per answer.
    Factorio,
    /// Palworld: replies matched whatever their id; output ends after --idle-gap of silence.
    Palworld,
    /// BattlEye RCon over UDP (DayZ, Arma 2/3, Arma Reforger); default port 2306.
    Battleye,
    /// Rust's WebRCON (JSON over WebSocket); default port 28016.
    Webrcon,
    /// 7 Days to Die's telnet console; answers end after --idle-gap; default port 8081.
    Telnet,
}

impl DialectArg {
    /// The library's description of this dialect.
    pub fn dialect(self) -> rconsole::Dialect {
        match self {
            DialectArg::Minecraft => rconsole::Dialect::MINECRAFT,
            DialectArg::Source => rconsole::Dialect::SOURCE,
            DialectArg::Factorio => rconsole::Dialect::FACTORIO,
            DialectArg::Palworld => rconsole::Dialect::PALWORLD,
            DialectArg::Battleye => rconsole::Dialect::BATTLEYE,
            DialectArg::Webrcon => rconsole::Dialect::WEBRCON,
            DialectArg::Telnet => rconsole::Dialect::TELNET,
        }
    }
}

/// `rcon --version`: the version and the commit it was built from (build.rs; `unknown` when
/// built from a tarball without `RCONSOLE_COMMIT`).
pub const VERSION: &str = concat!(
    env!("CARGO_PKG_VERSION"),
    " (commit ",
    env!("RCONSOLE_COMMIT"),
    ")"
);

/// A fast, correct RCON client for Minecraft and other game servers.
///
/// Runs the COMMAND given on the command line (words joined with spaces) and any -c commands,
/// then any -f files, in order, in one session. With none of them: an interactive console when
/// stdin is a terminal, otherwise the commands read from stdin.
// The on/off flags are `Option<bool>` values taking no value (`num_args = 0`, `Some(true)`
// when given) rather than clap's `SetTrue` bools: clap gives every `SetTrue` flag its default
// `false` on every run, through the whole value machinery, and for 27 flags that was 69,000
// instructions of a one-shot `list` (callgrind, `Parser::add_defaults`), a tenth of it. A flag
// with an environment variable (`--no-ssh-reuse`) is `Some(false)` when the variable says no:
// ask it `== Some(true)`.
#[derive(Debug, Parser)]
#[command(
    name = "rcon",
    version = VERSION,
    after_long_help = crate::app::exit::TABLE,
    disable_help_flag = true,
    disable_version_flag = true
)]
pub struct Args {
    /// Server host name or address; `HOST:PORT` and `[IPv6]:PORT` are accepted.
    #[arg(
        short = 'H',
        long,
        env = "RCON_HOST",
        value_name = "HOST",
        long_help,
        help = "Server host name or address (HOST:PORT too)",
        help_heading = "Connection"
    )]
    pub host: Option<String>,

    /// RCON port [default: 25575].
    #[arg(
        short = 'P',
        long,
        env = "RCON_PORT",
        value_name = "PORT",
        value_parser = crate::app::resolve::values::parse_port,
        allow_negative_numbers = true,
        long_help,
        help = "RCON port [default: 25575]",
        help_heading = "Connection"
    )]
    pub port: Option<u16>,

    /// RCON password. Warning: arguments are visible to other users of this machine (ps);
    /// prefer RCON_PASSWORD or a password file.
    #[arg(
        short = 'p',
        long,
        env = "RCON_PASSWORD",
        value_name = "PASSWORD",
        hide_env_values = true,
        long_help,
        help = "RCON password (ps shows it: prefer the env)",
        help_heading = "Connection"
    )]
    pub password: Option<String>,

    /// Read the password from the first line of FILE (Docker secrets style; later lines are
    /// ignored, as in `pass` files).
    #[arg(long, env = "RCON_PASSWORD_FILE", value_name = "FILE", value_parser = path, long_help, help = "Read the password from FILE's first line", help_heading = "Connection")]
    pub password_file: Option<PathBuf>,

    /// Use the server profile NAME from the config file (without -s, the `default` profile
    /// applies if there is one). Several names separated by commas, or a profile that lists
    /// `servers = [...]`, run the commands on all of them at once.
    #[arg(
        short = 's',
        long,
        env = "RCON_SERVER",
        value_name = "NAME",
        long_help,
        help = "Use config profile NAME (NAME,NAME: several)",
        help_heading = "Connection"
    )]
    pub server: Option<String>,

    /// Read the config file at PATH instead of the default one (see --print-config).
    #[arg(long, env = "RCON_CONFIG", value_name = "PATH", value_parser = path, long_help, help = "Read this config file instead of the default", help_heading = "Connection")]
    pub config: Option<PathBuf>,

    /// Ignore the config file (the default one and any --config or RCON_CONFIG).
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        long_help,
        help = "Ignore the config file",
        help_heading = "Connection"
    )]
    pub no_config: Option<bool>,

    /// List the server profiles in the config file (names and addresses, no secrets) and exit.
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        long_help,
        help = "List the config file's server profiles and exit",
        help_heading = "Connection"
    )]
    pub list_servers: Option<bool>,

    /// Print the resolved settings and where each value came from (password masked) and exit;
    /// with management settings, those too (URL, TLS, trust, Origin, where the secret comes from).
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        long_help,
        help = "Print the settings in effect and their sources",
        help_heading = "Connection"
    )]
    pub print_config: Option<bool>,

    /// Time limit for connecting, logging in, and the whole wait for each command's output,
    /// e.g. 5s, 500ms [default: 10s].
    #[arg(short = 't', long, env = "RCON_TIMEOUT", value_name = "DURATION", value_parser = time_limit, long_help, help = "Limit for login and each answer [default: 10s]", help_heading = "Connection")]
    pub timeout: Option<Duration>,

    /// Wait up to DURATION (e.g. 60s, 2m) for the server to come up: a refused or closed
    /// connection and a login that gets no answer are tried again, with a short back-off and a
    /// progress line on a terminal, until the login is accepted; then the commands run. A
    /// refused password is final at once (exit 5); past DURATION one error line says how long
    /// it waited and why the last attempt failed, and the exit status is that attempt's (4,
    /// 6...). One server only.
    #[arg(long, value_name = "DURATION", value_parser = time_limit, long_help, help = "Wait up to DURATION for the server to come up", help_heading = "Connection")]
    pub wait: Option<Duration>,

    /// How the end of each command's output is found [default: detect].
    #[arg(
        long,
        value_enum,
        value_name = "HOW",
        long_help,
        help = "How an answer's end is found [default: detect]",
        help_heading = "Connection"
    )]
    pub sentinel: Option<SentinelArg>,

    /// A fixed quiet gap that ends an answer when nothing marks its end (--sentinel idle, or a
    /// server that answers no sentinel) [default: adaptive: eight round trips or four times the
    /// slowest recent answer, at least 50ms (100ms until the server has answered three commands)].
    #[arg(long, value_name = "DURATION", value_parser = duration, long_help, help = "Quiet gap that ends an answer [default: adaptive]", help_heading = "Connection")]
    pub idle_gap: Option<Duration>,

    /// Forget what was learned about the server (how its answers end) and probe it again. With
    /// --learned: only forget it (the server named by -H/-P/-s and --dialect), then list.
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        long_help,
        help = "Forget what was learned about the server",
        help_heading = "Connection"
    )]
    pub forget: Option<bool>,

    /// List what is remembered about servers (learned-servers.toml in the data directory): per
    /// address and dialect, how answers end, when and how that was learned, and over how many
    /// answers; then exit. With --forget, the server addressed is forgotten first.
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        conflicts_with_all = ["commands", "command", "files", "remote", "demo"],
        long_help,
        help = "List what is remembered about servers and exit",
        help_heading = "Connection"
    )]
    pub learned: Option<bool>,

    /// The server family [default: minecraft]; it also picks the default port (25575, or 2306
    /// for battleye, 28016 for webrcon, 8081 for telnet). --sentinel, when given, overrides an
    /// RCON dialect's end-of-output method.
    #[arg(
        long,
        value_enum,
        env = "RCON_DIALECT",
        value_name = "DIALECT",
        long_help,
        help = "The server family [default: minecraft]",
        help_heading = "Connection"
    )]
    pub dialect: Option<DialectArg>,

    /// Reach the server through an SSH tunnel: runs `ssh -W HOST:PORT DEST` (the system OpenSSH
    /// client, no remote shell), so the RCON password never crosses the network in clear text.
    /// --host is then resolved on the SSH server (default localhost). DEST is SSHHOST,
    /// USER@SSHHOST or USER@SSHHOST:SSHPORT. ssh runs with BatchMode=yes: it never prompts.
    #[arg(long, value_name = "DEST", conflicts_with_all = ["proxy_command", "demo"], long_help, help = "Reach the server through ssh -W HOST:PORT DEST", help_heading = "Connection")]
    pub ssh: Option<String>,

    /// An ssh_config option for --ssh, e.g. IdentityFile=~/.ssh/mc or BatchMode=no
    /// (repeatable; passed as `ssh -o OPTION` before rcon's own defaults, so it wins).
    #[arg(
        long,
        value_name = "OPTION",
        long_help,
        help = "An ssh_config option for --ssh (repeatable)",
        help_heading = "Connection"
    )]
    pub ssh_option: Vec<String>,

    /// Do not share one SSH connection across runs to the same host (--ssh, --remote). By
    /// default ssh keeps the connection open for 60s after a run (ControlMaster=auto,
    /// ControlPersist=60) with its socket in a directory only this user can enter, so the next
    /// run skips the SSH handshake (docs/ssh.md; not on Windows). Also profile `ssh_reuse =
    /// false`.
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        env = "RCON_NO_SSH_REUSE",
        value_parser = clap::builder::BoolishValueParser::new(),
        long_help,
        help = "Do not share SSH connections across runs",
        help_heading = "Connection"
    )]
    pub no_ssh_reuse: Option<bool>,

    /// Reach the server through any command that connects its stdin/stdout to it, as OpenSSH's
    /// ProxyCommand: %h is the RCON host, %p the port, %% a percent sign. Runs under `sh -c`
    /// (`cmd /C` on Windows).
    #[arg(
        long,
        value_name = "CMD",
        conflicts_with = "demo",
        long_help,
        help = "Reach the server through a ProxyCommand",
        help_heading = "Connection"
    )]
    pub proxy_command: Option<String>,

    /// With --ssh: run `rcon` on the SSH host itself (over the same ssh, BatchMode=yes) and
    /// stream the commands to it, so a file costs one round trip per window of commands, not
    /// one per line (docs/remote.md). The password travels only inside the SSH channel.
    #[arg(num_args = 0, default_missing_value = "true", long, conflicts_with_all = ["proxy_command", "demo"], long_help, help = "With --ssh: run rcon on the SSH host", help_heading = "Connection")]
    pub remote: Option<bool>,

    /// The program --remote runs on the SSH host [default: rcon, on the remote PATH].
    #[arg(
        long,
        value_name = "PATH",
        long_help,
        help = "The program --remote runs there [default: rcon]",
        help_heading = "Connection"
    )]
    pub remote_rcon: Option<String>,

    /// With --remote: when the SSH host has no usable rcon (missing, or too old), copy this rcon
    /// there, to ~/.cache/rconsole/bin (XDG_CACHE_HOME), only when its OS and architecture
    /// match; checked by SHA-256 and by running its --version before first use. Off by default.
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        long_help,
        help = "With --remote: copy this rcon there if needed",
        help_heading = "Connection"
    )]
    pub remote_install: Option<bool>,

    /// Serve the remote protocol on stdin/stdout (what --remote runs on the SSH host; an
    /// editor can drive it too: docs/remote.md).
    #[arg(num_args = 0, default_missing_value = "true", long, hide = true)]
    pub remote_serve: Option<bool>,

    /// Try a failed first connect again up to N times (each server's, with several), waiting
    /// 200ms, then 400ms, 800ms... up to 5s (a refused login or a timeout after connecting is not
    /// retried). With -f files (locally or with --remote), also reconnect after a lost
    /// connection, tunnel or remote side, up to N times in all, and go on after the last
    /// answered line (the line in doubt needs --resend-in-doubt).
    #[arg(long, value_name = "N", default_value_t = 0, value_parser = crate::app::resolve::values::parse_count, long_help, help = "Retry a failed connect N times (files: mid-way)", help_heading = "Connection")]
    pub retry: u32,

    /// A command to run (repeatable; run in order, before any trailing COMMAND).
    #[arg(
        short = 'c',
        long = "command",
        value_name = "CMD",
        long_help,
        help = "A command to run (repeatable, before COMMAND)",
        help_heading = "Commands"
    )]
    pub commands: Vec<String>,

    /// Run the same -f file (or the same lines piped on stdin again) from after the last line
    /// the server answered, as kept in the journal of the run that stopped (docs/remote.md;
    /// other stdin lines are refused). A line sent but never answered is refused unless
    /// --resend-in-doubt or --skip-in-doubt.
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        long_help,
        help = "Rerun -f FILE or stdin from after its last answer",
        help_heading = "Commands"
    )]
    pub resume: Option<bool>,

    /// With --resume or --retry: send the line in doubt (sent, never answered) again.
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        long_help,
        help = "With --resume or --retry: resend the line in doubt",
        help_heading = "Commands"
    )]
    pub resend_in_doubt: Option<bool>,

    /// With --resume: take the line in doubt (sent, never answered) as run, after checking the
    /// server, and go on after it; the journal records it as run.
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        requires = "resume",
        conflicts_with = "resend_in_doubt",
        long_help,
        help = "With --resume: take the line in doubt as run",
        help_heading = "Commands"
    )]
    pub skip_in_doubt: Option<bool>,

    /// Run the commands in PATH, one per line, mcfunction rules (repeatable, in order; `-` is
    /// stdin). Every file is opened before anything is sent. Without any command or file and
    /// with stdin not a terminal, stdin is read.
    #[arg(
        short = 'f',
        long = "file",
        value_name = "PATH",
        long_help,
        help = "Run the commands in PATH (repeatable; - is stdin)",
        help_heading = "Commands"
    )]
    pub files: Vec<String>,

    /// Open the interactive console after the commands and files have run.
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        short = 'i',
        long,
        long_help,
        help = "Open the console after the commands and files",
        help_heading = "Commands"
    )]
    pub interactive: Option<bool>,

    /// Keep going after a failed command (-c, a file or stdin line, on each server) and exit
    /// non-zero at the end; without it the first failure stops the run and nothing later is
    /// sent. A refused login (wrong password) is not a failed command: it always stops the
    /// run after one attempt (exit 5).
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        long_help,
        help = "Go on past a failed command; fail at the end",
        help_heading = "Commands"
    )]
    pub keep_going: Option<bool>,

    /// Wait this long between commands (-c ones, files and stdin, on each server), e.g. 50ms.
    #[arg(long, value_name = "DURATION", value_parser = duration, long_help, help = "Wait this long between commands, e.g. 50ms", help_heading = "Commands")]
    pub delay: Option<Duration>,

    /// Print each command (`> COMMAND`) before its output, for logs.
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        long_help,
        help = "Print each command (> COMMAND) before its output",
        help_heading = "Commands"
    )]
    pub echo: Option<bool>,

    /// Fill `$(NAME)` in mcfunction macro lines (`$...`) with VALUE (repeatable).
    #[arg(long = "macro", value_name = "NAME=VALUE", value_parser = macro_arg, long_help, help = "Fill $(NAME) in macro lines (repeatable)", help_heading = "Commands")]
    pub macros: Vec<(String, String)>,

    /// Read the rest of the command line as that program's, as when rcon runs under its name
    /// (see --install-links): mcrcon 0.7.2 (each argument one command, -H -P -p -c -r -s -t -w,
    /// MCRCON_HOST/PORT/PASS) or itzg's rcon-cli (--host --port --password --config, the words
    /// one command, RCON_HOST/PORT/PASSWORD, ~/.rcon-cli.yaml). Any failure then exits 1, as
    /// theirs do. Must be the first argument.
    #[arg(
        long,
        value_enum,
        value_name = "PROGRAM",
        long_help,
        help = "Read the rest of the line as mcrcon's or rcon-cli's",
        help_heading = "Commands"
    )]
    pub compat: Option<Personality>,

    /// Create `mcrcon` and `rcon-cli` in DIR, which run rcon with those programs' command
    /// lines (symbolic links; on Windows hard links named mcrcon.exe and rcon-cli.exe, or copies
    /// across volumes), and exit. DIR is created when it does not exist. An existing file of
    /// that name is never replaced.
    #[arg(long, value_name = "DIR", value_parser = path, long_help, help = "Create mcrcon and rcon-cli in DIR, running rcon", help_heading = "Commands")]
    pub install_links: Option<PathBuf>,

    /// Also show the messages a BattlEye, WebRCON or telnet server sends on its own (chat, log
    /// lines) while commands run: on stderr as `[server] TEXT`, or with --json as records with
    /// "event":"message" on stdout. The console always shows them; with several servers at once
    /// they are not shown.
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        long_help,
        help = "Also show what BattlEye, WebRCON, telnet send",
        help_heading = "Output"
    )]
    pub messages: Option<bool>,

    /// Print JSON instead of text: one object per command and line, the same keys in every
    /// mode (time, server, event, command, response, ok, error, reason, elapsed_ms; file and
    /// line for batch input; player, params, raw for --follow events); --ping:
    /// the server's status JSON with address and latency; --query: the stat.
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        conflicts_with = "group",
        long_help,
        help = "Print JSON: one object per command (NDJSON)",
        help_heading = "Output"
    )]
    pub json: Option<bool>,

    /// Print every packet sent and received to stderr: a hex dump under its decoded header
    /// (size, id, type) and the time since start (--mgmt: every JSON-RPC message). The
    /// password is never shown. One server only.
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        short = 'v',
        long,
        long_help,
        help = "Print every packet sent and received to stderr",
        help_heading = "Output"
    )]
    pub trace: Option<bool>,

    /// When to render § colour codes as ANSI colours: auto (stdout is a terminal, TERM is not
    /// dumb, NO_COLOR and CLICOLOR=0 are unset; CLICOLOR_FORCE=1 colours a pipe), always, never.
    #[arg(
        long,
        value_enum,
        value_name = "WHEN",
        default_value = "auto",
        long_help,
        help = "When to render § colour codes as ANSI colours",
        help_heading = "Output"
    )]
    pub color: ColorChoice,

    /// Print output bytes exactly as received (no colour handling, no decoding); one server
    /// only.
    #[arg(num_args = 0, default_missing_value = "true", long, conflicts_with_all = ["json", "fix_newlines"], long_help, help = "Print output bytes exactly as received", help_heading = "Output")]
    pub raw: Option<bool>,

    /// Restore line breaks vanilla drops (MC-7569) where the output's shape makes them certain:
    /// `help` listings (a break before each `/` that starts a command right after other text)
    /// and parse errors. On by default when stdout is a terminal; piped output is left exactly
    /// as received unless this is given.
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        overrides_with = "no_fix_newlines",
        long_help,
        help = "Restore dropped line breaks (default on a terminal)",
        help_heading = "Output"
    )]
    pub fix_newlines: Option<bool>,

    /// Never restore line breaks, not even on a terminal.
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        overrides_with = "fix_newlines",
        long_help,
        help = "Never restore line breaks, not even on a terminal",
        help_heading = "Output"
    )]
    pub no_fix_newlines: Option<bool>,

    /// Run the commands on every server profile in the config file at once.
    #[arg(num_args = 0, default_missing_value = "true", long, conflicts_with_all = ["server", "demo", "target"], long_help, help = "Run the commands on every server profile at once", help_heading = "Several servers")]
    pub all: Option<bool>,

    /// Run the commands on several servers at once: NAME=HOST or NAME=HOST:PORT (repeatable).
    /// Output lines are prefixed with the name in brackets; the exit status is the worst of all
    /// servers. A target is reached directly unless --ssh or --proxy-command is given (the
    /// default profile's tunnel does not apply).
    #[arg(
        long,
        value_name = "NAME=HOST",
        conflicts_with = "demo",
        long_help,
        help = "Run on NAME=HOST[:PORT] too (repeatable)",
        help_heading = "Several servers"
    )]
    pub target: Vec<String>,

    /// With several servers: print each server's output as one block under a line with its
    /// name in brackets, when that server is done, instead of prefixing every line.
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        long_help,
        help = "Print each server's output as one block",
        help_heading = "Several servers"
    )]
    pub group: Option<bool>,

    /// Read the servers to run on from FILE (`-` for stdin): NDJSON (one JSON object per line,
    /// or one JSON array of them) or CSV with a header row. Columns: name, host, port, dialect,
    /// password_env, password_file, password_command, ssh, tags. Passwords are never inline.
    /// See docs/fleet.md.
    #[arg(long, value_name = "FILE", conflicts_with_all = ["demo", "all", "target"], long_help, help = "Run on the servers in FILE (NDJSON, CSV; - stdin)", help_heading = "Several servers")]
    pub targets: Option<String>,

    /// Keep only the --targets rows that match KEY=VALUE: tag, name, host, dialect or ssh;
    /// VALUE may list alternatives separated by commas. Repeatable: every one must match.
    #[arg(
        long = "where",
        value_name = "KEY=VALUE",
        requires = "targets",
        long_help,
        help = "Keep only the --targets rows that match KEY=VALUE",
        help_heading = "Several servers"
    )]
    pub where_: Vec<String>,

    /// With several servers: at most N connections open at once [default: 10000]. Each needs
    /// a file descriptor; rcon raises its soft limit as far as the hard limit allows.
    #[arg(long, value_name = "N", value_parser = crate::app::resolve::values::parse_positive_count, long_help, help = "At most N connections open at once [default: 10000]", help_heading = "Several servers")]
    pub parallel: Option<u32>,

    /// Print server events as they happen until interrupted, one line each (`--json`: NDJSON).
    /// With --mgmt: the server's notifications. With RCON: `list` polled every --poll, diffed
    /// into joined/left events. With BattlEye/WebRCON/telnet: the messages the server pushes
    /// (joins and leaves as joined/left, the rest as message events). A lost connection is
    /// retried (said on stderr) and the follow goes on.
    #[arg(num_args = 0, default_missing_value = "true", long, conflicts_with_all = ["countdown", "every", "interactive"], long_help, help = "Print server events as they happen", help_heading = "Live and timed")]
    pub follow: Option<bool>,

    /// With --follow over RCON: how often `list` is asked [default: 5s].
    #[arg(long, value_name = "DURATION", value_parser = duration, requires = "follow", long_help, help = "With --follow over RCON: `list` every DURATION", help_heading = "Live and timed")]
    pub poll: Option<Duration>,

    /// With --follow: run CMD for each event (`sh -c`, `cmd /C` on Windows) with the event in
    /// RCON_EVENT, RCON_EVENT_PLAYER, RCON_EVENT_SERVER, RCON_EVENT_TEXT, RCON_EVENT_JSON and as
    /// one JSON line on stdin; events wait for it in order.
    #[arg(
        long,
        value_name = "CMD",
        requires = "follow",
        long_help,
        help = "With --follow: run CMD for each event",
        help_heading = "Live and timed"
    )]
    pub exec: Option<String>,

    /// With --follow --mgmt: the console log lines the server sends (MSMP Console's
    /// console:notification/log/event) at LEVEL or above only; all by default (the server's
    /// own log level applies first).
    #[arg(
        long,
        value_name = "LEVEL",
        value_enum,
        requires = "follow",
        long_help,
        help = "With --follow --mgmt: log lines at LEVEL or above",
        help_heading = "Live and timed"
    )]
    pub log_level: Option<LogLevel>,

    /// Count down DURATION (e.g. 10m), saying --announce at the announcement times, then run
    /// --then (and any COMMAND/-c). Ctrl-C or SIGTERM cancels: nothing more is sent but
    /// --cancel-announce. On several servers, one that cannot be reached at the start takes no
    /// part (one error line, `[NAME] ...`) and the others count down; the exit status is then
    /// its failure's.
    #[arg(long, value_name = "DURATION", value_parser = duration, long_help, help = "Count down DURATION, then run --then", help_heading = "Live and timed")]
    pub countdown: Option<Duration>,

    /// With --countdown: the command that announces the time left; {left} becomes e.g.
    /// `5 minutes`, {seconds} the seconds.
    #[arg(
        long,
        value_name = "TEMPLATE",
        requires = "countdown",
        long_help,
        help = "With --countdown: the announcement command",
        help_heading = "Live and timed"
    )]
    pub announce: Option<String>,

    /// With --countdown: the announcement times, e.g. 5m,1m,10s [default: those of 1h, 30m,
    /// 15m, 10m, 5m, 2m, 1m, 30s, 10s, 5s, 4s, 3s, 2s, 1s within the countdown, and its start].
    #[arg(long, value_name = "LIST", requires = "countdown", value_delimiter = ',', value_parser = duration, long_help, help = "With --countdown: announce at, e.g. 5m,1m,10s", help_heading = "Live and timed")]
    pub at: Vec<Duration>,

    /// With --countdown: the command to run when it ends (repeatable, in order).
    #[arg(
        long = "then",
        value_name = "CMD",
        requires = "countdown",
        long_help,
        help = "With --countdown: run at the end (repeatable)",
        help_heading = "Live and timed"
    )]
    pub then: Vec<String>,

    /// With --countdown: the command that announces a cancellation (Ctrl-C or SIGTERM).
    #[arg(
        long,
        value_name = "CMD",
        requires = "countdown",
        long_help,
        help = "With --countdown: announce a cancellation",
        help_heading = "Live and timed"
    )]
    pub cancel_announce: Option<String>,

    /// Run the commands (or the countdown) again every DURATION until interrupted; with
    /// --countdown, DURATION must be longer than the countdown.
    #[arg(long, value_name = "DURATION", value_parser = duration, long_help, help = "Run the commands again every DURATION", help_heading = "Live and timed")]
    pub every: Option<Duration>,

    /// Run only if the condition holds, e.g. 'players < 5' (from `list`, or the management
    /// protocol's players); with --every, checked before each run. Operators: < <= > >= == !=.
    #[arg(
        long = "if",
        value_name = "CONDITION",
        long_help,
        help = "Run only if the condition holds: 'players < 5'",
        help_heading = "Live and timed"
    )]
    pub condition: Option<String>,

    /// Talk to the Minecraft Server Management Protocol (1.21.9+; JSON-RPC over WebSocket) at
    /// URL (wss://HOST:PORT, or ws:// for a server without TLS) instead of RCON; without URL, the
    /// profile's mgmt_url. COMMAND words name a method and its arguments: `players`,
    /// `allowlist add Steve`, `server save`; `methods` lists what the server offers. The secret
    /// comes from RCON_MGMT_SECRET, --mgmt-secret-file, the profile's mgmt_secret_file or
    /// mgmt_secret_command, else the password sources (never from argv).
    #[arg(long, value_name = "URL", num_args = 0..=1, default_missing_value = "", long_help, help = "Use the Management Protocol at URL", help_heading = "Management")]
    pub mgmt: Option<String>,

    /// With --mgmt: trust this PEM certificate (the server's self-signed one, or its CA) instead
    /// of the system's trust store. The host name is still checked.
    #[arg(long, env = "RCON_MGMT_CERT", value_name = "FILE", value_parser = path, conflicts_with = "mgmt_fingerprint", long_help, help = "With --mgmt: trust this PEM certificate", help_heading = "Management")]
    pub mgmt_cert: Option<PathBuf>,

    /// With --mgmt: accept only the server certificate with this SHA-256 fingerprint (64 hex
    /// digits, colons allowed), e.g. from `keytool -list` or `openssl x509 -fingerprint -sha256`.
    #[arg(
        long,
        env = "RCON_MGMT_FINGERPRINT",
        value_name = "SHA256",
        long_help,
        help = "With --mgmt: accept only this SHA-256 cert",
        help_heading = "Management"
    )]
    pub mgmt_fingerprint: Option<String>,

    /// With --mgmt: send this Origin header, for a proxy that checks it (vanilla checks the Origin
    /// of browsers only, never of a client sending its secret as a Bearer token, as rcon does).
    #[arg(
        long,
        env = "RCON_MGMT_ORIGIN",
        value_name = "ORIGIN",
        long_help,
        help = "With --mgmt: send this Origin header",
        help_heading = "Management"
    )]
    pub mgmt_origin: Option<String>,

    /// With --mgmt: read the secret from FILE (trailing newline stripped).
    #[arg(long, env = "RCON_MGMT_SECRET_FILE", value_name = "FILE", value_parser = path, long_help, help = "With --mgmt: the secret's file", help_heading = "Management")]
    pub mgmt_secret_file: Option<PathBuf>,

    /// Run against a built-in practice server (strict vanilla, or the --dialect's console)
    /// instead of a real one: no server or password needed. Try `rcon --demo help`.
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        long_help,
        help = "Use a practice server (rcon --demo help)",
        help_heading = "Practice"
    )]
    pub demo: Option<bool>,

    /// Run the practice server in the foreground on ADDR (default 127.0.0.1:25575; port 0 picks a
    /// free one) and print its address; for trying other clients and for benchmarks. Its password
    /// is `practice` unless --practice-password sets one.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:25575", long_help, help = "Serve the practice server on ADDR", help_heading = "Practice")]
    pub practice_server: Option<String>,

    /// The practice server's dialect: vanilla, source, mirror, mirror-trailer8, reject-sentinel,
    /// close-nonpositive, factorio, palworld; or another console: battleye, battleye-lossy
    /// (drops, duplicates, reorders and corrupts datagrams on a seeded pattern),
    /// battleye-reforger, webrcon, telnet.
    #[arg(
        long,
        value_name = "MODE",
        default_value = "vanilla",
        requires = "practice_server",
        long_help,
        help = "The practice server's mode (see --help)",
        help_heading = "Practice"
    )]
    pub practice_mode: String,

    /// The practice server's password (--practice-server; --demo makes its own).
    #[arg(
        long,
        value_name = "PASSWORD",
        default_value = "practice",
        requires = "practice_server",
        long_help,
        help = "The practice server's password",
        help_heading = "Practice"
    )]
    pub practice_password: String,

    /// Delay before each read of the practice server (vanilla mode), to catch clients that send
    /// two packets back to back.
    #[arg(long, value_name = "DURATION", value_parser = duration, requires = "practice_server", long_help, help = "Delay before each practice server read", help_heading = "Practice")]
    pub practice_read_delay: Option<Duration>,

    /// Run the practice management server (the documented methods and notifications on
    /// in-memory state) in the foreground on ADDR (default 127.0.0.1:25585; port 0 picks a free
    /// one), or on Unix on the Unix domain socket unix:PATH, and print its URL; the secret is
    /// --practice-password. ws:// unless --practice-cert and --practice-key give a PEM
    /// certificate and key for wss://. Lines
    /// `join NAME` and `leave NAME` on its stdin make a player join or leave.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:25585", conflicts_with = "practice_server", long_help, help = "Serve the practice management server", help_heading = "Practice")]
    pub practice_mgmt: Option<String>,

    /// With --practice-mgmt: the server mods it plays beside vanilla's methods, comma-separated:
    /// enhanced (MSMP Enhanced: msmpenhanced:command/run and command/suggest), console (MSMP
    /// Console: console:send and the console:notification/log/event log lines). Their commands
    /// are answered as --practice-server answers them.
    #[arg(
        long,
        value_name = "MODS",
        value_delimiter = ',',
        requires = "practice_mgmt",
        long_help,
        help = "Mods it plays: enhanced, console",
        help_heading = "Practice"
    )]
    pub practice_mods: Vec<String>,

    /// With --practice-mgmt: the PEM certificate (chain) to serve wss:// with.
    #[arg(long, value_name = "FILE", value_parser = path, requires_all = ["practice_mgmt", "practice_key"], long_help, help = "--practice-mgmt's wss:// certificate", help_heading = "Practice")]
    pub practice_cert: Option<PathBuf>,

    /// With --practice-mgmt: the PEM private key of --practice-cert.
    #[arg(long, value_name = "FILE", value_parser = path, requires_all = ["practice_mgmt", "practice_cert"], long_help, help = "The private key of --practice-cert", help_heading = "Practice")]
    pub practice_key: Option<PathBuf>,

    /// Show a Minecraft server's status with the Server List Ping (game port, default 25565; no
    /// password needed): version, players, MOTD, latency. HOST defaults to the host of --host,
    /// else localhost. Servers older than 1.7 are asked with the legacy FE 01 ping.
    #[arg(long, value_name = "HOST[:PORT]", num_args = 0..=1, long_help, help = "Show a Minecraft server's status (no password)", help_heading = "Status")]
    pub ping: Option<Option<String>>,

    /// With --ping: send only the legacy (pre-1.7) FE 01 ping.
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        requires = "ping",
        long_help,
        help = "With --ping: send only the legacy (pre-1.7) ping",
        help_heading = "Status"
    )]
    pub legacy: Option<bool>,

    /// Ask a server over UDP Query (needs enable-query=true; query.port, default 25565; no
    /// password needed): MOTD, map, players. HOST defaults as for --ping.
    #[arg(long, value_name = "HOST[:PORT]", num_args = 0..=1, conflicts_with = "ping", long_help, help = "Ask a server over UDP Query (no password)", help_heading = "Status")]
    pub query: Option<Option<String>>,

    /// With --query: the full stat (version, software, plugins, player names).
    #[arg(
        num_args = 0,
        default_missing_value = "true",
        long,
        requires = "query",
        long_help,
        help = "With --query: the full stat",
        help_heading = "Status"
    )]
    pub full: Option<bool>,

    /// Print help: `-h` the options one line each, `--help` also their long texts and the exit
    /// statuses.
    #[arg(
        short = 'h',
        long,
        action = clap::ArgAction::Help,
        help = "Print this list (--help: with the long texts)",
        help_heading = "Status"
    )]
    pub help: Option<bool>,

    /// Print rcon's version and the commit it was built from.
    #[arg(
        short = 'V',
        long,
        action = clap::ArgAction::Version,
        help = "Print rcon's version",
        help_heading = "Status"
    )]
    pub version: Option<bool>,

    /// The command to run: the words are joined with single spaces into one command. Words
    /// starting with '-' after the first word belong to the command; one that is an rcon long
    /// option (`list --json`) is sent too, with a note on stderr to put options first.
    #[arg(
        value_name = "COMMAND",
        trailing_var_arg = true,
        long_help,
        help = "The command to run (its words joined with spaces)",
        help_heading = "Commands"
    )]
    pub command: Vec<String>,
}

/// `rcon -h`: every option on one line under its heading (at 80 columns and wider), without
/// the `[env: ...]`, `[default: ...]` and value lists `--help` adds to its long texts. `width`:
/// the terminal's, else clap's (`COLUMNS`, the terminal, at most 100).
pub fn short_help(width: Option<usize>) -> String {
    use clap::CommandFactory;
    let cmd = Args::command().mut_args(|a| {
        // The flags are `num_args = 0` values (no default to apply: see `Args`).
        if a.get_action().takes_values() && a.get_num_args().is_none_or(|n| n.takes_values()) {
            a.hide_env(true)
                .hide_default_value(true)
                .hide_possible_values(true)
        } else {
            a.hide_env(true)
        }
    });
    match width {
        Some(w) => cmd.term_width(w),
        None => cmd,
    }
    .render_help()
    .to_string()
}

/// A program whose command line rcon can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum Personality {
    /// Tiiffi's mcrcon 0.7.2: every argument is one command, -H -P -p -c -r -s -t -w.
    Mcrcon,
    /// itzg's rcon-cli: --host --port --password --config, the words joined into one command.
    RconCli,
}

impl Personality {
    /// The ways to give the password that this program reads, for the error when none was
    /// given (rcon's own `RCON_PASSWORD`, `--password-file` and profiles are not read).
    pub fn password_sources(self) -> &'static str {
        match self {
            Personality::Mcrcon => "give mcrcon's -p PASSWORD or set MCRCON_PASS",
            Personality::RconCli => {
                "give rcon-cli's --password PASSWORD, set RCON_PASSWORD, or put `password` in its \
                 config file (--config FILE, else ~/.rcon-cli.yaml or another name it looks for)"
            }
        }
    }
}

#[cfg(test)]
pub(crate) mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        Args::command().debug_assert();
    }

    /// Issue 20: `-h` and `--help` show the headings in this order, not in the order the
    /// fields happened to be written. clap puts a heading where its first argument is
    /// declared, so the fields above are grouped by heading in this order. Issue 41: these
    /// eight only (the README's promise), no `Arguments:` or `Options:` before them.
    /// The eight headings of `-h` and `--help`, in order (README: "one line each under eight
    /// headings").
    pub(crate) const HELP_HEADINGS: [&str; 8] = [
        "Connection:",
        "Commands:",
        "Output:",
        "Several servers:",
        "Live and timed:",
        "Management:",
        "Practice:",
        "Status:",
    ];

    #[test]
    fn help_headings_in_the_issues_order() {
        const ORDER: [&str; 8] = HELP_HEADINGS;
        let mut cmd = Args::command().term_width(100);
        for (which, help) in [
            ("-h", short_help(Some(100))),
            ("--help", cmd.render_long_help().to_string()),
        ] {
            let headings: Vec<&str> = help
                .lines()
                .filter(|l| ORDER.contains(l) || ["Arguments:", "Options:"].contains(l))
                .collect();
            assert_eq!(headings, ORDER, "{which} headings out of order:\n{help}");
        }
    }

    #[test]
    fn trailing_words_keep_hyphens() {
        let a = Args::try_parse_from(["rcon", "-p", "pw", "tp", "@p", "0", "-60", "0"]).unwrap();
        assert_eq!(a.command, ["tp", "@p", "0", "-60", "0"]);
        assert_eq!(a.password.as_deref(), Some("pw"));
    }

    #[test]
    fn tunnel_and_fanout_flags() {
        let a = Args::try_parse_from([
            "rcon",
            "--dialect",
            "palworld",
            "--ssh",
            "admin@mc:2222",
            "--ssh-option",
            "IdentityFile=/k",
            "--ssh-option",
            "Port=22",
            "--target",
            "a=h1",
            "--target",
            "b=h2:1",
            "--group",
            "list",
        ])
        .unwrap();
        assert_eq!(a.dialect, Some(DialectArg::Palworld));
        assert_eq!(a.ssh_option, ["IdentityFile=/k", "Port=22"]);
        assert_eq!(a.target, ["a=h1", "b=h2:1"]);
        assert!(a.group.is_some());
        for bad in [
            &["rcon", "--ssh", "h", "--proxy-command", "nc %h %p", "x"][..],
            &["rcon", "--dialect", "quake", "x"],
        ] {
            assert!(Args::try_parse_from(bad).is_err(), "{bad:?} accepted");
        }
    }

    #[test]
    fn a_mistyped_flag_is_an_error_not_a_command() {
        for argv in [
            &["rcon", "--bogus"][..],
            &["rcon", "--pasword", "x", "list"],
            &["rcon", "-Z", "list"],
        ] {
            let err = Args::try_parse_from(argv).unwrap_err();
            assert_eq!(
                err.kind(),
                clap::error::ErrorKind::UnknownArgument,
                "{argv:?}"
            );
        }
        // After the first command word, hyphens belong to the command.
        let a = Args::try_parse_from(["rcon", "say", "--bogus", "-x"]).unwrap();
        assert_eq!(a.command, ["say", "--bogus", "-x"]);
    }

    #[test]
    fn on_off_flags_take_no_value() {
        let a = Args::try_parse_from(["rcon", "--raw", "--no-config", "--group", "true"]).unwrap();
        assert_eq!(
            (a.raw, a.no_config, a.group),
            (Some(true), Some(true), Some(true))
        );
        assert_eq!(a.command, ["true"]);
        let err = Args::try_parse_from(["rcon", "--raw=false", "x"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::TooManyValues);
        let err = Args::try_parse_from(["rcon", "-V"]).unwrap_err();
        assert_eq!(err.kind(), clap::error::ErrorKind::DisplayVersion);
    }

    #[test]
    fn repeated_commands_in_order() {
        let a = Args::try_parse_from(["rcon", "-c", "a b", "-c", "c"]).unwrap();
        assert_eq!(a.commands, ["a b", "c"]);
    }
}
