//! Second stage of the command line: merges flags, environment, the config profile and built-in
//! defaults (flags > environment > profile > defaults) into the [`Settings`] the program runs
//! with, remembering where each value came from for `--print-config`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::parser::ValueSource;
use clap::{ArgMatches, Command};
use rconsole::client::{EndDetection, Observer, Options};
use rconsole::process::{ProcessConnector, SshDestination, expand_proxy_command};
use rconsole::transport::{Connector, TcpConnector};
use rconsole::{Password, format_duration};

use super::args::{Args, DialectArg, SentinelArg};
use super::config::{self, Config, Profile};
use super::exit::{Exit, fail};
use super::secrets::{self, Secret};
use super::values::parse_host_port;

/// The default RCON port (`rcon.port` in server.properties).
pub const DEFAULT_PORT: u16 = 25575;
/// The default time limit.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The profile used when no `-s NAME` is given.
pub const DEFAULT_PROFILE: &str = "default";

/// Where a setting came from.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Source {
    /// A command-line flag, e.g. `--host`.
    Flag(String),
    /// An environment variable, e.g. `RCON_HOST` (or mcrcon's `MCRCON_HOST`).
    Env(String),
    /// A config profile key: the profile's name and `path:line`.
    Profile { name: String, at: String },
    /// The built-in default.
    Default,
}

impl Source {
    /// Precedence: lower wins.
    fn rank(&self) -> u8 {
        match self {
            Source::Flag(_) => 0,
            Source::Env(_) => 1,
            Source::Profile { .. } => 2,
            Source::Default => 3,
        }
    }
}

impl std::fmt::Display for Source {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Source::Flag(flag) => write!(f, "flag {flag}"),
            Source::Env(var) => write!(f, "env {var}"),
            Source::Profile { name, at } => write!(f, "profile {name} ({at})"),
            Source::Default => f.write_str("default"),
        }
    }
}

/// A value and where it came from.
#[derive(Debug, Clone)]
pub struct Sourced<T> {
    /// The value.
    pub value: T,
    /// Its origin.
    pub source: Source,
}

impl<T> Sourced<T> {
    fn new(value: T, source: Source) -> Self {
        Self { value, source }
    }
}

/// For each argument clap filled, whether it came from the command line or its environment
/// variable (clap applies the `RCON_*` variables named in `args.rs` itself).
#[derive(Debug, Clone, Default)]
pub struct Origins(BTreeMap<String, Source>);

impl Origins {
    /// Reads the value sources out of clap's matches.
    pub fn from_matches(cmd: &Command, matches: &ArgMatches) -> Self {
        let mut map = BTreeMap::new();
        for arg in cmd.get_arguments() {
            let id = arg.get_id().as_str();
            let source = match matches.value_source(id) {
                Some(ValueSource::CommandLine) => Source::Flag(match arg.get_long() {
                    Some(long) => format!("--{long}"),
                    None => id.to_string(),
                }),
                Some(ValueSource::EnvVariable) => {
                    let name = arg.get_env().map(|e| e.to_string_lossy().into_owned());
                    // An empty variable (`RCON_HOST=`) counts as unset.
                    if name
                        .as_ref()
                        .and_then(std::env::var_os)
                        .is_some_and(|v| v.is_empty())
                    {
                        map.insert(id.to_string(), Source::Default);
                        continue;
                    }
                    Source::Env(name.unwrap_or_else(|| id.to_string()))
                }
                _ => continue,
            };
            map.insert(id.to_string(), source);
        }
        Origins(map)
    }

    /// Where the argument `id` came from (`None`: not given; `Default`: an empty variable).
    pub fn get(&self, id: &str) -> Option<&Source> {
        self.0.get(id)
    }

    fn is_flag(&self, id: &str) -> bool {
        matches!(self.get(id), Some(Source::Flag(_)))
    }

    /// A value clap filled, with its source (`None` for an empty environment variable).
    fn sourced<T: Clone>(&self, value: &Option<T>, id: &str) -> Option<Sourced<T>> {
        if self.get(id) == Some(&Source::Default) {
            return None;
        }
        let source = self
            .get(id)
            .cloned()
            .unwrap_or_else(|| Source::Flag(format!("--{}", id.replace('_', "-"))));
        value.clone().map(|v| Sourced::new(v, source))
    }
}

/// The config file's state for this run.
#[derive(Debug, Clone)]
pub enum ConfigFile {
    /// Not read: `--no-config` (or `--demo`).
    Ignored(&'static str),
    /// The default path, which does not exist.
    Missing(PathBuf),
    /// No default path on this platform (no home directory).
    NoPath,
    /// Read, from the default path (`None`) or as named by a flag or variable.
    Loaded(Config, Option<Source>),
}

impl ConfigFile {
    /// Finds and reads the config file: `--no-config` skips it; `--config`/`RCON_CONFIG` must
    /// exist; the default path may be missing. Warns once if a file holding a password is
    /// readable by others.
    pub fn load(args: &Args, origins: &Origins) -> anyhow::Result<ConfigFile> {
        if args.no_config {
            return Ok(ConfigFile::Ignored("--no-config"));
        }
        let state = match origins.sourced(&args.config, "config") {
            Some(path) => ConfigFile::Loaded(Config::load(&path.value)?, Some(path.source)),
            None => match config::default_path() {
                None => ConfigFile::NoPath,
                Some(path) => match std::fs::metadata(&path) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => ConfigFile::Missing(path),
                    _ => ConfigFile::Loaded(Config::load(&path)?, None),
                },
            },
        };
        if let ConfigFile::Loaded(config, _) = &state
            && config.holds_password()
        {
            secrets::warn_if_exposed(&config.path);
        }
        Ok(state)
    }

    /// The loaded file, if any.
    pub fn config(&self) -> Option<&Config> {
        match self {
            ConfigFile::Loaded(c, _) => Some(c),
            _ => None,
        }
    }

    /// One line for `--print-config` and errors.
    pub fn describe(&self) -> String {
        match self {
            ConfigFile::Ignored(why) => format!("(none: {why})"),
            ConfigFile::Missing(path) => format!("{} (default path; not found)", path.display()),
            ConfigFile::NoPath => "(none: no home directory)".into(),
            ConfigFile::Loaded(c, None) => format!("{} (default path)", c.path.display()),
            ConfigFile::Loaded(c, Some(src)) => format!("{} ({src})", c.path.display()),
        }
    }
}

/// Everything the program runs with, each value with its source.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The config file.
    pub config: ConfigFile,
    /// The selected profile and why (`None`: no profile applies).
    pub profile: Option<Sourced<String>>,
    /// Host name or address, without brackets or port.
    pub host: Sourced<String>,
    /// TCP port.
    pub port: Sourced<u16>,
    /// Where the password comes from (`None`: nowhere yet; ask on the terminal).
    pub password: Option<Sourced<Secret>>,
    /// The time limit.
    pub timeout: Sourced<Duration>,
    /// End-of-output detection.
    pub sentinel: Sourced<SentinelArg>,
    /// The silence that ends an output without a sentinel.
    pub idle_gap: Sourced<Duration>,
    /// The server family.
    pub dialect: Sourced<DialectArg>,
    /// SSH destination for `ssh -W`, if the server is reached through SSH.
    pub ssh: Option<Sourced<String>>,
    /// Options passed to ssh as `-o OPTION`.
    pub ssh_options: Vec<String>,
    /// A proxy command template (`%h`, `%p`), if the server is reached through one.
    pub proxy_command: Option<Sourced<String>>,
    /// Forget what was learned about the server first (`--forget`).
    pub forget: bool,
}

/// Reads one environment variable, treating empty as unset.
fn env(name: &str) -> Option<Sourced<String>> {
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .map(|v| Sourced::new(v, Source::Env(name.into())))
}

/// The profile `-s NAME` (or `RCON_SERVER`) names, else `default` if the file has one.
fn select_profile<'c>(
    args: &Args,
    origins: &Origins,
    file: &'c ConfigFile,
    forced: Option<&Sourced<String>>,
) -> anyhow::Result<Option<(Sourced<String>, &'c Profile, &'c Config)>> {
    let named = match forced {
        Some(name) => Some(name.clone()),
        None => origins.sourced(&args.server, "server"),
    };
    let Some(wanted) = named else {
        return Ok(file.config().and_then(|c| {
            c.servers.get(DEFAULT_PROFILE).map(|p| {
                (
                    Sourced::new(DEFAULT_PROFILE.to_string(), Source::Default),
                    p.get_ref(),
                    c,
                )
            })
        }));
    };
    let name = &wanted.value;
    let config = match file {
        ConfigFile::Loaded(c, _) => c,
        ConfigFile::Ignored(why) => {
            return Err(fail(
                Exit::Usage,
                format!(
                    "server profile '{name}' ({}) needs the config file, but {why} was given",
                    wanted.source
                ),
            ));
        }
        other => {
            return Err(fail(
                Exit::Config,
                format!(
                    "unknown server profile '{name}' ({}): no config file; looked for {}",
                    wanted.source,
                    other.describe()
                ),
            ));
        }
    };
    match config.servers.get(name) {
        Some(p) => Ok(Some((wanted, p.get_ref(), config))),
        None => {
            let names = config.names();
            let known = if names.is_empty() {
                "it defines no [servers.NAME] profiles".to_string()
            } else {
                format!("known: {}", names.join(", "))
            };
            Err(fail(
                Exit::Config,
                format!(
                    "unknown server profile '{name}' ({}) in {}; {known}",
                    wanted.source,
                    config.path.display()
                ),
            ))
        }
    }
}

/// The profiles to run on at once, if this is a fan-out: `--all`, `-s a,b,c`, or a selected
/// profile that is a group (`servers = [...]`). Groups named in a list are expanded; each name
/// appears once, in order, with where it was named (the flag, or the group's `servers` key).
pub fn fanout_names(
    args: &Args,
    origins: &Origins,
    file: &ConfigFile,
) -> anyhow::Result<Option<Vec<Sourced<String>>>> {
    let config = file.config();
    let is_group = |name: &str| {
        config
            .and_then(|c| c.servers.get(name))
            .is_some_and(|p| p.get_ref().servers.is_some())
    };
    let flag = origins
        .sourced(&args.server, "server")
        .map(|s| s.source)
        .unwrap_or_else(|| Source::Flag("--all".into()));
    let wanted: Vec<String> = if args.all {
        let Some(c) = config else {
            return Err(fail(
                Exit::Config,
                format!(
                    "--all needs server profiles; config file: {}",
                    file.describe()
                ),
            ));
        };
        c.names()
            .into_iter()
            .filter(|n| !is_group(n))
            .map(String::from)
            .collect()
    } else {
        match origins.sourced(&args.server, "server") {
            Some(s) if s.value.contains(',') || is_group(&s.value) => s
                .value
                .split(',')
                .map(|n| n.trim().to_string())
                .filter(|n| !n.is_empty())
                .collect(),
            _ => return Ok(None),
        }
    };
    let mut names: Vec<Sourced<String>> = Vec::new();
    for name in wanted {
        let group = config.and_then(|c| {
            let members = c.servers.get(&name)?.get_ref().servers.as_ref()?;
            Some((members.get_ref().clone(), c.at(members.span())))
        });
        let members = match group {
            Some((members, at)) => {
                let source = Source::Profile {
                    name: name.clone(),
                    at,
                };
                members
                    .into_iter()
                    .map(|m| Sourced::new(m, source.clone()))
                    .collect()
            }
            None => vec![Sourced::new(name.clone(), flag.clone())],
        };
        for n in members {
            if is_group(&n.value) {
                return Err(fail(
                    Exit::Config,
                    format!(
                        "profile group '{name}' lists another group '{}'; groups do not nest",
                        n.value
                    ),
                ));
            }
            if !names.iter().any(|m| m.value == n.value) {
                names.push(n);
            }
        }
    }
    if names.is_empty() {
        return Err(fail(Exit::Config, "no server profiles to run on"));
    }
    Ok(Some(names))
}

/// How to reach `host`:`port`: directly over TCP, through `ssh -W`, or through a proxy command.
pub fn connector(
    ssh: Option<&str>,
    ssh_options: &[String],
    proxy_command: Option<&str>,
    host: &str,
    port: u16,
) -> anyhow::Result<Box<dyn Connector>> {
    if let Some(dest) = ssh {
        let dest =
            SshDestination::parse(dest).map_err(|e| fail(Exit::Usage, format!("--ssh: {e}")))?;
        return Ok(Box::new(ProcessConnector::ssh(
            dest,
            ssh_options.to_vec(),
            host,
            port,
        )));
    }
    if let Some(template) = proxy_command {
        let command = expand_proxy_command(template, host, port)
            .map_err(|e| fail(Exit::Usage, format!("--proxy-command: {e}")))?;
        return Ok(Box::new(ProcessConnector::shell(command, host, port)));
    }
    Ok(Box::new(TcpConnector::new(host, port)))
}

/// Where one `--target` (or `--ping`, `--query`) points.
#[derive(Debug, Clone)]
pub struct Target {
    /// Host name or address, without brackets.
    pub host: String,
    /// TCP port.
    pub port: u16,
}

impl Target {
    /// `host:port`, bracketing IPv6.
    pub fn describe(&self) -> String {
        TcpConnector::new(&self.host, self.port).describe()
    }
}

/// The servers of `--target NAME=HOST:PORT`, in order; a target without a port gets --port
/// or the default.
pub fn targets(args: &Args) -> anyhow::Result<Vec<(String, Target)>> {
    let mut out: Vec<(String, Target)> = Vec::new();
    for raw in &args.target {
        let usage = |why: &str| {
            fail(
                Exit::Usage,
                format!("--target '{raw}': {why} (expected NAME=HOST[:PORT])"),
            )
        };
        let (name, address) = raw.split_once('=').ok_or_else(|| usage("no '='"))?;
        let name = name.trim();
        if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
            return Err(usage("the name must be non-empty, without spaces"));
        }
        if out.iter().any(|(n, _)| n == name) {
            return Err(usage("the name is used twice"));
        }
        let (host, port) = parse_host_port(address.trim()).map_err(|why| usage(&why))?;
        if host.is_empty() {
            return Err(usage("no host"));
        }
        let port = port.or(args.port).unwrap_or(
            args.dialect
                .map_or(DEFAULT_PORT, |d| d.dialect().default_port),
        );
        out.push((name.to_string(), Target { host, port }));
    }
    Ok(out)
}

/// Points resolved settings at one `--targets` row: its address (the default profile's tunnel
/// does not apply, as for `--target`), and its dialect, password source and ssh where the row
/// gives them. Returns the row's name.
pub fn apply_row(s: &mut Settings, args: &Args, row: super::inventory::Row) -> String {
    let at = row.at;
    let source = |what: &str| Source::Flag(format!("--targets ({at}, {what})"));
    s.host = Sourced::new(row.host, source("host"));
    s.drop_profile_route();
    if let Some(d) = row.dialect {
        s.dialect = Sourced::new(d, source("dialect"));
    }
    // A row without a port gets --port, else its dialect's default port.
    s.port = Sourced::new(
        row.port
            .or(args.port)
            .unwrap_or_else(|| s.dialect.value.dialect().default_port),
        source("port"),
    );
    if let (Some(p), Some(from)) = (row.password, row.password_from) {
        s.password = Some(Sourced::new(p, source(from)));
    }
    if let Some(dest) = row.ssh {
        s.ssh = Some(Sourced::new(dest, source("ssh")));
    }
    row.name
}

impl Settings {
    /// Resolves every setting. Reads no password file and runs no password command (see
    /// [`Settings::password`]), so it is safe for `--print-config`.
    pub fn resolve(args: &Args, origins: &Origins, file: ConfigFile) -> anyhow::Result<Settings> {
        Self::resolve_profile(args, origins, file, None)
    }

    /// Like [`Settings::resolve`], for the profile `forced` instead of `-s` (one server of a
    /// fan-out).
    pub fn resolve_profile(
        args: &Args,
        origins: &Origins,
        file: ConfigFile,
        forced: Option<&Sourced<String>>,
    ) -> anyhow::Result<Settings> {
        let selected = select_profile(args, origins, &file, forced)?;
        let (profile_name, profile, config) = match &selected {
            Some((name, p, c)) => (Some(name.clone()), Some(*p), Some(*c)),
            None => (None, None, None),
        };
        // A profile key's source: the profile and `path:line`.
        let at = |span: std::ops::Range<usize>| -> Source {
            Source::Profile {
                name: profile_name
                    .as_ref()
                    .map(|n| n.value.clone())
                    .unwrap_or_default(),
                at: config.map(|c| c.at(span)).unwrap_or_default(),
            }
        };

        // Host, then port; a port inside the host counts at the host's level.
        let host = origins
            .sourced(&args.host, "host")
            .or_else(|| env("MCRCON_HOST"))
            .or_else(|| {
                profile
                    .and_then(|p| p.host.as_ref())
                    .map(|s| Sourced::new(s.get_ref().clone(), at(s.span())))
            })
            .unwrap_or_else(|| Sourced::new("localhost".into(), Source::Default));
        let mcrcon_port = match env("MCRCON_PORT") {
            Some(s) => Some(Sourced::new(
                s.value.parse::<u16>().map_err(|_| {
                    fail(
                        Exit::Usage,
                        format!("MCRCON_PORT: '{}' is not a port number", s.value),
                    )
                })?,
                s.source,
            )),
            None => None,
        };
        let port = origins
            .sourced(&args.port, "port")
            .or(mcrcon_port)
            .or_else(|| {
                profile
                    .and_then(|p| p.port.as_ref())
                    .map(|s| Sourced::new(*s.get_ref(), at(s.span())))
            })
            .unwrap_or_else(|| Sourced::new(DEFAULT_PORT, Source::Default));
        let (bare_host, host_port) = parse_host_port(&host.value).map_err(|why| {
            let exit = match host.source {
                Source::Profile { .. } => Exit::Config,
                _ => Exit::Usage,
            };
            fail(exit, format!("the host ({}): {why}", host.source))
        })?;
        if bare_host.is_empty() {
            return Err(fail(
                Exit::Usage,
                format!("the host ({}) is empty", host.source),
            ));
        }
        let port = match host_port {
            Some(hp) if host.source.rank() < port.source.rank() => {
                Sourced::new(hp, host.source.clone())
            }
            Some(hp) if host.source.rank() == port.source.rank() => {
                if matches!(host.source, Source::Flag(_)) && hp != port.value {
                    return Err(fail(
                        Exit::Usage,
                        format!(
                            "--host {} names port {hp} but --port says {}; give one",
                            host.value, port.value
                        ),
                    ));
                }
                Sourced::new(hp, host.source.clone())
            }
            _ => port,
        };
        let host = Sourced::new(bare_host, host.source);

        let password = resolve_password(args, origins, profile, &at, config)?;

        let timeout = origins
            .sourced(&args.timeout, "timeout")
            .or_else(|| {
                profile
                    .and_then(|p| p.timeout.as_ref())
                    .map(|s| Sourced::new(s.get_ref().0, at(s.span())))
            })
            .unwrap_or_else(|| Sourced::new(DEFAULT_TIMEOUT, Source::Default));
        let sentinel = origins
            .sourced(&args.sentinel, "sentinel")
            .or_else(|| {
                profile
                    .and_then(|p| p.sentinel.as_ref())
                    .map(|s| Sourced::new(s.get_ref().0, at(s.span())))
            })
            .unwrap_or_else(|| Sourced::new(SentinelArg::Detect, Source::Default));
        let idle_gap = origins
            .sourced(&args.idle_gap, "idle_gap")
            .or_else(|| {
                profile
                    .and_then(|p| p.idle_gap.as_ref())
                    .map(|s| Sourced::new(s.get_ref().0, at(s.span())))
            })
            // Zero stands for the adaptive gap (see Options::idle_gap).
            .unwrap_or_else(|| Sourced::new(Duration::ZERO, Source::Default));

        let dialect = origins
            .sourced(&args.dialect, "dialect")
            .or_else(|| {
                profile
                    .and_then(|p| p.dialect.as_ref())
                    .map(|s| Sourced::new(s.get_ref().0, at(s.span())))
            })
            .unwrap_or_else(|| Sourced::new(DialectArg::Minecraft, Source::Default));
        // No port given anywhere: the dialect's own (BattlEye, WebRCON and telnet differ).
        let mut port = port;
        if port.source == Source::Default {
            port.value = dialect.value.dialect().default_port;
        }
        let profile_text = |key: Option<&toml::Spanned<String>>| {
            key.map(|s| Sourced::new(s.get_ref().clone(), at(s.span())))
        };
        let ssh = origins
            .sourced(&args.ssh, "ssh")
            .or_else(|| profile_text(profile.and_then(|p| p.ssh.as_ref())));
        let proxy_command = origins
            .sourced(&args.proxy_command, "proxy_command")
            .or_else(|| profile_text(profile.and_then(|p| p.proxy_command.as_ref())));
        if ssh.is_some() && proxy_command.is_some() {
            return Err(fail(
                Exit::Config,
                "both ssh and proxy_command are set; give one",
            ));
        }
        if !args.ssh_option.is_empty() && ssh.is_none() {
            return Err(fail(
                Exit::Usage,
                "--ssh-option needs --ssh (or a profile's ssh key)",
            ));
        }
        let ssh_options = if args.ssh_option.is_empty() {
            profile
                .and_then(|p| p.ssh_options.as_ref())
                .map(|s| s.get_ref().clone())
                .unwrap_or_default()
        } else {
            args.ssh_option.clone()
        };

        Ok(Settings {
            dialect,
            ssh,
            ssh_options,
            proxy_command,
            profile: profile_name,
            host,
            port,
            password,
            timeout,
            sentinel,
            idle_gap,
            config: file,
            forget: args.forget,
        })
    }

    /// Forgets a tunnel that came from the profile (for `--target`, which names its own
    /// address): `ssh`, `ssh_options` and `proxy_command` from flags stay.
    pub fn drop_profile_route(&mut self) {
        let from_profile = |s: &Option<Sourced<String>>| {
            s.as_ref()
                .is_some_and(|s| matches!(s.source, Source::Profile { .. }))
        };
        if from_profile(&self.ssh) {
            self.ssh = None;
            self.ssh_options.clear();
        }
        if from_profile(&self.proxy_command) {
            self.proxy_command = None;
        }
    }

    /// Where to connect, as `host:port` (IPv6 bracketed).
    pub fn target(&self) -> String {
        TcpConnector::new(&self.host.value, self.port.value).describe()
    }

    /// The password: reads the file, runs the command, or asks on the terminal now.
    pub fn password(&self) -> anyhow::Result<Password> {
        match &self.password {
            Some(p) => secrets::obtain(&p.value, &p.source.to_string(), &self.target()),
            None => secrets::obtain(&Secret::Prompt, "prompt", &self.target()),
        }
    }

    /// Engine options: the dialect's, then `sentinel` over its end method when it was given.
    pub fn options(&self, observer: Arc<dyn Observer>) -> Options {
        let mut opts = Options {
            timeout: self.timeout.value,
            // The adaptive gap unless one was given.
            idle_gap: (self.idle_gap.source != Source::Default).then_some(self.idle_gap.value),
            observer,
            ..Options::default()
        };
        let dialect = self.dialect.value.dialect();
        dialect.apply(&mut opts);
        if self.sentinel.source != Source::Default {
            opts.end = match self.sentinel.value {
                SentinelArg::Detect => EndDetection::Detect,
                SentinelArg::Negative => EndDetection::Negative,
                SentinelArg::Positive => EndDetection::Positive,
                SentinelArg::Idle => EndDetection::Idle,
                SentinelArg::Auto => EndDetection::Auto,
            };
        }
        if let Ok(connector) = self.connector() {
            let key = super::learned::key(&connector.describe(), dialect);
            super::learned::attach(&mut opts, key, self.forget);
        }
        opts
    }

    /// How to reach the server: directly over TCP, through `ssh -W`, or a proxy command.
    pub fn connector(&self) -> anyhow::Result<Box<dyn Connector>> {
        if self.dialect.value.dialect().protocol == rconsole::consoles::Protocol::BattlEye
            && (self.ssh.is_some() || self.proxy_command.is_some())
        {
            return Err(fail(
                Exit::Usage,
                "BattlEye RCon runs over UDP, which --ssh and proxy_command cannot carry",
            ));
        }
        connector(
            self.ssh.as_ref().map(|s| s.value.as_str()),
            &self.ssh_options,
            self.proxy_command.as_ref().map(|s| s.value.as_str()),
            &self.host.value,
            self.port.value,
        )
    }

    /// The `--print-config` text: one line per setting with its source; the password masked;
    /// `extra` rows (key, value, source) at the end in the same columns (the management
    /// settings).
    pub fn describe_with(&self, extra: Vec<(&str, String, String)>) -> String {
        let mut rows: Vec<(&str, String, String)> = Vec::new();
        rows.push(("config", self.config.describe(), String::new()));
        match &self.profile {
            Some(p) => rows.push(("server", p.value.clone(), source_text(&p.source))),
            None => rows.push(("server", "(no profile)".into(), String::new())),
        }
        rows.push((
            "host",
            self.host.value.clone(),
            self.host.source.to_string(),
        ));
        rows.push((
            "port",
            self.port.value.to_string(),
            self.port.source.to_string(),
        ));
        let (pw, pw_src) = match &self.password {
            None if secrets::can_prompt() => (
                "(not set: will ask on the terminal)".to_string(),
                String::new(),
            ),
            None => (
                "(not set, and no terminal to ask on: a session would fail)".to_string(),
                String::new(),
            ),
            Some(p) => {
                let what = match &p.value {
                    Secret::Value(_) => "********".to_string(),
                    Secret::File(path) => format!("******** (from file {})", path.display()),
                    Secret::Command(_) => "******** (from password_command)".to_string(),
                    Secret::Prompt => "(will ask on the terminal)".to_string(),
                };
                (what, p.source.to_string())
            }
        };
        rows.push(("password", pw, pw_src));
        rows.push((
            "timeout",
            format_duration(self.timeout.value),
            self.timeout.source.to_string(),
        ));
        rows.push((
            "sentinel",
            sentinel_name(self.sentinel.value),
            self.sentinel.source.to_string(),
        ));
        rows.push((
            "idle_gap",
            if self.idle_gap.source == Source::Default {
                "adaptive (from round trips and answer times)".to_string()
            } else {
                format_duration(self.idle_gap.value)
            },
            self.idle_gap.source.to_string(),
        ));
        if let Ok(connector) = self.connector() {
            let key = super::learned::key(&connector.describe(), self.dialect.value.dialect());
            rows.push(("learned", super::learned::describe(&key), String::new()));
        }
        rows.push((
            "dialect",
            self.dialect.value.dialect().to_string(),
            self.dialect.source.to_string(),
        ));
        if let Some(ssh) = &self.ssh {
            rows.push(("ssh", ssh.value.clone(), ssh.source.to_string()));
        }
        if let Some(proxy) = &self.proxy_command {
            rows.push(("proxy", proxy.value.clone(), proxy.source.to_string()));
        }
        rows.extend(extra);
        let keys = rows.iter().map(|r| r.0.len()).max().unwrap_or(0).max(9);
        let width = rows
            .iter()
            .filter(|r| !r.2.is_empty())
            .map(|r| r.1.chars().count())
            .max()
            .unwrap_or(0);
        let mut out = String::new();
        for (key, value, source) in rows {
            if source.is_empty() {
                out.push_str(&format!("{key:<keys$} {value}\n"));
            } else {
                out.push_str(&format!("{key:<keys$} {value:<width$}  {source}\n"));
            }
        }
        out
    }
}

fn source_text(source: &Source) -> String {
    match source {
        Source::Default => format!("default (the '{DEFAULT_PROFILE}' profile applies without -s)"),
        other => other.to_string(),
    }
}

fn sentinel_name(s: SentinelArg) -> String {
    use clap::ValueEnum;
    s.to_possible_value()
        .map(|v| v.get_name().to_string())
        .unwrap_or_default()
}

/// Password sources, first found wins: `--password`, `--password-file`, `RCON_PASSWORD`,
/// `RCON_PASSWORD_FILE`, `MCRCON_PASS`, the profile's password / password_file /
/// password_command; else `None` (prompt).
fn resolve_password(
    args: &Args,
    origins: &Origins,
    profile: Option<&Profile>,
    at: &dyn Fn(std::ops::Range<usize>) -> Source,
    config: Option<&Config>,
) -> anyhow::Result<Option<Sourced<Secret>>> {
    if origins.is_flag("password") && origins.is_flag("password_file") {
        return Err(fail(
            Exit::Usage,
            "give --password or --password-file, not both",
        ));
    }
    let value = |s: Sourced<String>| Sourced::new(Secret::Value(Password::new(s.value)), s.source);
    let file = |s: Sourced<PathBuf>| Sourced::new(Secret::File(s.value), s.source);
    let flag_or_env = |id: &str, flag: bool| {
        let is_flag = origins.is_flag(id);
        if is_flag != flag {
            return None;
        }
        match id {
            "password" => origins.sourced(&args.password, id).map(value),
            _ => origins.sourced(&args.password_file, id).map(file),
        }
    };
    let found = flag_or_env("password", true)
        .or_else(|| flag_or_env("password_file", true))
        .or_else(|| flag_or_env("password", false))
        .or_else(|| flag_or_env("password_file", false))
        .or_else(|| env("MCRCON_PASS").map(value));
    if found.is_some() {
        return Ok(found);
    }
    let Some(p) = profile else { return Ok(None) };
    let base = config.and_then(|c| c.path.parent());
    if let Some(s) = &p.password {
        return Ok(Some(Sourced::new(
            Secret::Value(Password::new(s.get_ref().0.clone())),
            at(s.span()),
        )));
    }
    if let Some(s) = &p.password_file {
        return Ok(Some(Sourced::new(
            Secret::File(secrets::resolve_path(s.get_ref(), base)),
            at(s.span()),
        )));
    }
    if let Some(s) = &p.password_command {
        return Ok(Some(Sourced::new(
            Secret::Command(s.get_ref().clone()),
            at(s.span()),
        )));
    }
    Ok(None)
}

/// The `--list-servers` text: profile names and addresses (no secrets).
pub fn list_servers(file: &ConfigFile) -> (String, Option<String>) {
    let Some(config) = file.config() else {
        return (
            String::new(),
            Some(format!("no config file: {}", file.describe())),
        );
    };
    if config.servers.is_empty() {
        return (
            String::new(),
            Some(format!(
                "no [servers.NAME] profiles in {}",
                config.path.display()
            )),
        );
    }
    let width = config
        .names()
        .iter()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(0);
    let mut out = String::new();
    for (name, profile) in &config.servers {
        let p = profile.get_ref();
        if let Some(members) = &p.servers {
            out.push_str(&format!(
                "{name:<width$}  group: {}\n",
                members.get_ref().join(", ")
            ));
            continue;
        }
        let raw = p
            .host
            .as_ref()
            .map(|h| h.get_ref().clone())
            .unwrap_or_else(|| "localhost".into());
        let (host, host_port) = parse_host_port(&raw).unwrap_or((raw.clone(), None));
        let port = host_port
            .or(p.port.as_ref().map(|s| *s.get_ref()))
            .unwrap_or(DEFAULT_PORT);
        let addr = TcpConnector::new(&host, port).describe();
        out.push_str(&format!("{name:<width$}  {addr}\n"));
    }
    (out, None)
}
