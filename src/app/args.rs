//! The command line as clap sees it: a mirror of argv, nothing merged or resolved yet.

use std::time::Duration;

use clap::{Parser, ValueEnum};

use super::output::ColorChoice;

fn duration(text: &str) -> Result<Duration, String> {
    rconsole::parse_duration(text)
}

fn macro_arg(text: &str) -> Result<(String, String), String> {
    super::mcfunction::parse_macro(text)
}

/// How the end of a command's output is found (see the README's "Why this client").
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SentinelArg {
    /// Probe after login; use id -2, else a positive id, else an idle gap.
    Detect,
    /// Always an id -2 sentinel, no probe.
    Negative,
    /// A positive-id sentinel, for servers that close on ids <= 0.
    Positive,
    /// No sentinel: output ends after --idle-gap of silence.
    Idle,
    /// No sentinel when the first fragment is under 4096 bytes (one round trip per command).
    Auto,
}

/// A fast, correct RCON client for Minecraft and other game servers.
///
/// Runs the COMMAND given on the command line (words joined with spaces) and any -c commands,
/// then any -f files, in order, in one session. With none of them: an interactive console when
/// stdin is a terminal, otherwise the commands read from stdin.
#[derive(Debug, Parser)]
#[command(name = "rcon", version, after_long_help = crate::app::exit::TABLE)]
pub struct Args {
    /// Server host name or address; HOST:PORT and [IPv6]:PORT are accepted.
    #[arg(short = 'H', long, env = "RCON_HOST", value_name = "HOST")]
    pub host: Option<String>,

    /// RCON port [default: 25575].
    #[arg(short = 'P', long, env = "RCON_PORT", value_name = "PORT")]
    pub port: Option<u16>,

    /// RCON password. Warning: arguments are visible to other users of this machine (ps);
    /// prefer RCON_PASSWORD or a password file.
    #[arg(
        short = 'p',
        long,
        env = "RCON_PASSWORD",
        value_name = "PASSWORD",
        hide_env_values = true
    )]
    pub password: Option<String>,

    /// Time limit for connecting, logging in, and the whole wait for each command's output,
    /// e.g. 5s, 500ms [default: 10s].
    #[arg(short = 't', long, env = "RCON_TIMEOUT", value_name = "DURATION", value_parser = duration)]
    pub timeout: Option<Duration>,

    /// A command to run (repeatable; run in order, before any trailing COMMAND).
    #[arg(short = 'c', long = "command", value_name = "CMD")]
    pub commands: Vec<String>,

    /// How the end of each command's output is found [default: detect].
    #[arg(long, value_enum, value_name = "HOW")]
    pub sentinel: Option<SentinelArg>,

    /// With --sentinel idle (or when a server answers no sentinel): the silence that ends an
    /// output [default: 250ms].
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub idle_gap: Option<Duration>,

    /// Run against a built-in practice server (strict vanilla) instead of a real one: no server
    /// or password needed. Try `rcon --demo help`.
    #[arg(long)]
    pub demo: bool,

    /// Run the practice server in the foreground on ADDR (default 127.0.0.1:25575; port 0 picks a
    /// free one) and print its address; for trying other clients and for benchmarks.
    #[arg(long, value_name = "ADDR", num_args = 0..=1, default_missing_value = "127.0.0.1:25575")]
    pub practice_server: Option<String>,

    /// The practice server's dialect: vanilla, source, mirror, mirror-trailer8, reject-sentinel,
    /// close-nonpositive, factorio, palworld.
    #[arg(long, value_name = "MODE", default_value = "vanilla")]
    pub practice_mode: String,

    /// The practice server's password (--practice-server; --demo makes its own).
    #[arg(
        long,
        value_name = "PASSWORD",
        default_value = "practice",
        hide_default_value = true
    )]
    pub practice_password: String,

    /// Delay before each read of the practice server (vanilla mode), to catch clients that send
    /// two packets back to back.
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub practice_read_delay: Option<Duration>,

    /// Run the commands in PATH, one per line, mcfunction rules (repeatable, in order; `-` is
    /// stdin). Without any command or file and with stdin not a terminal, stdin is read.
    #[arg(short = 'f', long = "file", value_name = "PATH")]
    pub files: Vec<String>,

    /// Open the interactive console after the commands and files have run.
    #[arg(short = 'i', long)]
    pub interactive: bool,

    /// Batch input: keep going after a failed line and exit non-zero at the end.
    #[arg(long)]
    pub keep_going: bool,

    /// Batch input: wait this long between commands, e.g. 50ms.
    #[arg(long, value_name = "DURATION", value_parser = duration)]
    pub delay: Option<Duration>,

    /// Print each command (`> COMMAND`) before its output, for logs.
    #[arg(long)]
    pub echo: bool,

    /// Fill `$(NAME)` in mcfunction macro lines (`$...`) with VALUE (repeatable).
    #[arg(long = "macro", value_name = "NAME=VALUE", value_parser = macro_arg)]
    pub macros: Vec<(String, String)>,

    /// When to render § colour codes as ANSI colours: auto (stdout is a terminal and NO_COLOR is
    /// unset), always, never.
    #[arg(long, value_enum, value_name = "WHEN", default_value = "auto")]
    pub color: ColorChoice,

    /// Print output bytes exactly as received (no colour handling, no decoding).
    #[arg(long, conflicts_with_all = ["json", "fix_newlines"])]
    pub raw: bool,

    /// Print one JSON object per command (command, response, ok, error, elapsed_ms; file and
    /// line for batch input).
    #[arg(long)]
    pub json: bool,

    /// Restore line breaks vanilla drops (MC-7569) where the output's shape makes them certain:
    /// `help` listings and parse errors.
    #[arg(long)]
    pub fix_newlines: bool,

    /// The command to run: the words are joined with single spaces into one command. Words
    /// starting with '-' after the first word belong to the command.
    #[arg(
        value_name = "COMMAND",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub command: Vec<String>,
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::CommandFactory;

    #[test]
    fn verify_cli() {
        Args::command().debug_assert();
    }

    #[test]
    fn trailing_words_keep_hyphens() {
        let a = Args::try_parse_from(["rcon", "-p", "pw", "tp", "@p", "0", "-60", "0"]).unwrap();
        assert_eq!(a.command, ["tp", "@p", "0", "-60", "0"]);
        assert_eq!(a.password.as_deref(), Some("pw"));
    }

    #[test]
    fn repeated_commands_in_order() {
        let a = Args::try_parse_from(["rcon", "-c", "a b", "-c", "c"]).unwrap();
        assert_eq!(a.commands, ["a b", "c"]);
    }
}
