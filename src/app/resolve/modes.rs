//! The types the runners receive, defined with the plan ([`super::plan`]) that fills them: a
//! runner imports these from here, and nothing in `resolve` imports a runner.

use std::collections::HashMap;
use std::time::Duration;

use crate::app::exit::{Exit, fail};
use crate::app::print::output::Style;
use crate::app::resolve::settings::DEFAULT_TIMEOUT;
use crate::app::resolve::values::parse_host_port;

/// How often `--follow` asks RCON servers when `--poll` is not given.
pub const DEFAULT_POLL: Duration = Duration::from_secs(5);

/// How batch input runs.
#[derive(Debug, Clone, Default)]
pub struct BatchPolicy {
    /// Continue after a failed line.
    pub keep_going: bool,
    /// Pause between commands.
    pub delay: Option<Duration>,
    /// Print each command before its output.
    pub echo: bool,
    /// Values for `$(name)` in macro lines.
    pub macros: HashMap<String, String>,
    /// `--resume`: go on after the journal's last answered line.
    pub resume: bool,
    /// `--resend-in-doubt`: send the journal's line in doubt again.
    pub resend_in_doubt: bool,
    /// `--skip-in-doubt`: take the journal's line in doubt as run.
    pub skip_in_doubt: bool,
    /// `--retry N`: reconnect a lost batch up to N times.
    pub retry: u32,
}

/// The timed operations, resolved.
#[derive(Debug, Clone, Default)]
pub struct Timing {
    /// `--countdown`: how long before the final commands.
    pub countdown: Option<Duration>,
    /// `--announce TEMPLATE` (`{left}` is the time left).
    pub announce: Option<String>,
    /// `--at`: announcement times instead of the default schedule.
    pub at: Vec<Duration>,
    /// `--then`: the final commands (before the command line's).
    pub then: Vec<String>,
    /// `--cancel-announce TEMPLATE`: said when Ctrl-C cancels the countdown.
    pub cancel_announce: Option<String>,
    /// `--every`: repeat the whole plan.
    pub every: Option<Duration>,
    /// `--if CONDITION`, parsed.
    pub condition: Option<Condition>,
    /// `--json`.
    pub json: bool,
}

/// `--follow`, resolved.
#[derive(Debug, Clone, Default)]
pub struct FollowOptions {
    /// NDJSON instead of text lines.
    pub json: bool,
    /// `--exec CMD`: run per event.
    pub exec: Option<String>,
    /// `--poll`: how often RCON servers are asked (default [`DEFAULT_POLL`]).
    pub poll: Option<Duration>,
    /// `--log-level`: console log lines (management protocol) below it are not shown.
    #[cfg_attr(not(feature = "mgmt"), allow(dead_code))]
    pub log_level: Option<crate::app::resolve::args::LogLevel>,
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

/// The run policy, as for one server, plus the fleet's limits.
#[derive(Debug, Clone, Copy)]
pub struct FanoutPolicy {
    /// Go on after a failed command.
    pub keep_going: bool,
    /// Pause between commands.
    pub delay: Option<Duration>,
    /// Print each command (`> COMMAND`) before its output.
    pub echo: bool,
    /// At most this many connections at once (`--parallel`).
    pub parallel: usize,
    /// Whether `--parallel` was given (a cap the descriptor limit forces lower is then said).
    pub parallel_given: bool,
    /// Connect retries (`--retry`).
    pub retries: u32,
    /// Draw a progress line on stderr (it is a terminal).
    pub progress: bool,
    /// `--messages`: show what BattlEye, WebRCON and telnet servers send on their own, labelled
    /// by server (`Some(true)`: as JSON records).
    pub messages: Option<bool>,
}

impl Default for FanoutPolicy {
    fn default() -> Self {
        Self {
            keep_going: false,
            delay: None,
            echo: false,
            parallel: rconsole::fleet::DEFAULT_PARALLEL,
            parallel_given: false,
            retries: 0,
            progress: false,
            messages: None,
        }
    }
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

/// What `--ping` and `--query` fall back on: the host (without its RCON port) and the time
/// limit, from the flags, or from the profile `-s` names.
#[derive(Debug, Clone)]
pub struct ProbeDefaults {
    /// The host to ask when the flag names none.
    pub host: String,
    /// The time limit.
    pub timeout: Duration,
}

impl ProbeDefaults {
    /// From the flags alone (no config file): `--host` or localhost, `--timeout` or 10s.
    pub fn from_flags(
        host: Option<&str>,
        timeout: Option<Duration>,
    ) -> anyhow::Result<ProbeDefaults> {
        let host = match host {
            Some(h) => {
                parse_host_port(h)
                    .map_err(|why| fail(Exit::Usage, format!("--host: {why}")))?
                    .0
            }
            None => "localhost".into(),
        };
        Ok(ProbeDefaults {
            host,
            timeout: timeout.unwrap_or(DEFAULT_TIMEOUT),
        })
    }
}

/// `--ping` or `--query`, resolved.
#[derive(Debug, Clone)]
pub struct Probe {
    /// Which, and its own options.
    pub kind: ProbeKind,
    /// The host and time limit when the flag names no host.
    pub defaults: ProbeDefaults,
    /// `--json`.
    pub json: bool,
    /// Colour in the text output.
    pub colour: bool,
    /// `--trace`: the bytes on stderr.
    pub trace: bool,
}

/// A status ping or a query, with the `HOST[:PORT]` given to the flag.
#[derive(Debug, Clone)]
pub enum ProbeKind {
    /// `--ping [HOST[:PORT]]`, `--legacy`.
    Ping { given: Option<String>, legacy: bool },
    /// `--query [HOST[:PORT]]`, `--full`.
    Query { given: Option<String>, full: bool },
}

/// `players < 5` and the like.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Condition {
    op: &'static str,
    n: usize,
}

impl Condition {
    /// Parses `players OP N`, OP one of `< <= > >= == !=` (`=` counts as `==`).
    pub fn parse(text: &str) -> anyhow::Result<Condition> {
        let bad = || {
            fail(
                Exit::Usage,
                format!("--if '{text}': expected 'players OP N' with OP one of < <= > >= == !="),
            )
        };
        let t = text.trim();
        let rest = t.strip_prefix("players").ok_or_else(bad)?.trim_start();
        let (op, num) = ["<=", ">=", "==", "!=", "<", ">", "="]
            .iter()
            .find_map(|op| rest.strip_prefix(op).map(|n| (*op, n)))
            .ok_or_else(bad)?;
        let op = if op == "=" { "==" } else { op };
        let n = num.trim().parse().map_err(|_| bad())?;
        Ok(Condition { op, n })
    }

    /// Whether it holds for `players` online.
    pub fn holds(&self, players: usize) -> bool {
        match self.op {
            "<" => players < self.n,
            "<=" => players <= self.n,
            ">" => players > self.n,
            ">=" => players >= self.n,
            "==" => players == self.n,
            _ => players != self.n,
        }
    }
}

impl std::fmt::Display for Condition {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "players {} {}", self.op, self.n)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn conditions() {
        let c = Condition::parse("players < 5").unwrap();
        assert!(c.holds(4) && !c.holds(5));
        assert_eq!(c.to_string(), "players < 5");
        assert!(Condition::parse("players>=2").unwrap().holds(2));
        assert!(Condition::parse("players = 0").unwrap().holds(0));
        assert!(Condition::parse("players != 0").unwrap().holds(1));
        for bad in ["", "players", "players < x", "tps < 5", "players ~ 3"] {
            assert!(Condition::parse(bad).is_err(), "{bad}");
        }
    }
}
