//! Second stage of the command line: merges flags, environment, the config profile and built-in
//! defaults (flags > environment > profile > defaults) into the [`Settings`] the program runs
//! with, remembering where each value came from for `--print-config`.

use std::collections::BTreeMap;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use clap::parser::ValueSource;
use clap::{ArgMatches, Command};
use rconsole::rcon::client::{ClientOptions, EndDetection, Observer};
use rconsole::transport::tunnel::{ProcessConnector, SshDestination, expand_proxy_command};
use rconsole::transport::{Connector, TcpConnector};
use rconsole::{Password, format_duration};

use crate::app::resolve::args::{Args, DialectArg, Personality, SentinelArg};

mod describe;
mod file;
mod password;
mod servers;
mod source;

use crate::app::exit::{Exit, fail};
use crate::app::resolve::config::{self, ParsedConfig, Profile};
use crate::app::resolve::secrets::{self, Secret};
use crate::app::resolve::values::parse_host_port;
pub use file::{ConfigFile, list_servers};
pub use servers::{HostPort, apply_row, fanout_names, targets};
use source::Layers;
pub use source::{Origins, Source, Sourced};

/// The default RCON port (`rcon.port` in server.properties).
pub const DEFAULT_PORT: u16 = 25575;
/// The default time limit.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);
/// The profile used when no `-s NAME` is given.
pub const DEFAULT_PROFILE: &str = "default";

/// Everything the program runs with, each value with its source.
#[derive(Debug, Clone)]
pub struct Settings {
    /// Run as mcrcon or rcon-cli (`--compat`, the translation's first argument).
    pub personality: Option<Personality>,
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
    /// Forget what was learned about the server first (`--forget`, profile `forget`).
    pub forget: bool,
    /// `--remote` (profile `remote`): run rcon on the SSH host, stream the commands to it.
    pub remote: bool,
    /// `--remote-rcon` (profile `remote_rcon`): the program run there.
    pub remote_rcon: Option<String>,
    /// `--remote-install` (profile `remote_install`): copy this rcon there when it has none.
    pub remote_install: bool,
    /// Share one SSH connection across runs (off: `--no-ssh-reuse`, profile `ssh_reuse =
    /// false`; fan-out turns it off for its servers).
    pub ssh_reuse: bool,
}

/// Reads one of mcrcon's environment variables, treating empty as unset. Run as a personality
/// (`--compat`) none is read here: its translation read that program's own (rcon-cli reads no
/// MCRCON_*).
fn env(args: &Args, name: &str) -> Option<Sourced<String>> {
    if args.compat.is_some() {
        return None;
    }
    std::env::var(name)
        .ok()
        .filter(|v| !v.is_empty())
        .map(|v| Sourced::new(v, Source::Env(name.into())))
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

/// The host and port: flag, environment (mcrcon's variables), profile or default; a port
/// inside the host counts at the host's level.
fn address(layers: &Layers<'_>, args: &Args) -> anyhow::Result<(Sourced<String>, Sourced<u16>)> {
    let host = layers
        .flag(&args.host, "host")
        .or_env(env(args, "MCRCON_HOST"))
        .or_key(|p| p.host.as_ref(), String::clone)
        .or_default("localhost".into());
    let mcrcon_port = match env(args, "MCRCON_PORT") {
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
    let port = layers
        .flag(&args.port, "port")
        .or_env(mcrcon_port)
        .or_key(|p| p.port.as_ref(), |p| p.0)
        .or_default(DEFAULT_PORT);
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
    Ok((host, port))
}

/// `ssh`, its options and the proxy command.
type TunnelKeys = (
    Option<Sourced<String>>,
    Vec<String>,
    Option<Sourced<String>>,
);

/// The tunnel: `ssh` with its options, or a proxy command (not both).
fn tunnel(
    layers: &Layers<'_>,
    args: &Args,
    profile: Option<&Profile>,
) -> anyhow::Result<TunnelKeys> {
    let ssh = layers
        .flag(&args.ssh, "ssh")
        .or_key(|p| p.ssh.as_ref(), String::clone)
        .found();
    let proxy_command = layers
        .flag(&args.proxy_command, "proxy_command")
        .or_key(|p| p.proxy_command.as_ref(), String::clone)
        .found();
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
    Ok((ssh, ssh_options, proxy_command))
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
        let selected = file::select_profile(args, origins, &file, forced)?;
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

        let layers = Layers {
            origins,
            profile,
            at: &at,
        };
        let (host, port) = address(&layers, args)?;

        let password = password::resolve_password(args, origins, profile, &at, config)?;

        let timeout = layers
            .flag(&args.timeout, "timeout")
            .or_key(|p| p.timeout.as_ref(), |t| t.0)
            .or_default(DEFAULT_TIMEOUT);
        let sentinel = layers
            .flag(&args.sentinel, "sentinel")
            .or_key(|p| p.sentinel.as_ref(), |s| s.0)
            .or_default(SentinelArg::Detect);
        // Zero stands for the adaptive gap (see ClientOptions::idle_gap).
        let idle_gap = layers
            .flag(&args.idle_gap, "idle_gap")
            .or_key(|p| p.idle_gap.as_ref(), |g| g.0)
            .or_default(Duration::ZERO);
        let dialect = layers
            .flag(&args.dialect, "dialect")
            .or_key(|p| p.dialect.as_ref(), |d| d.0)
            .or_default(DialectArg::Minecraft);
        // No port given anywhere: the dialect's own (BattlEye, WebRCON and telnet differ).
        let mut port = port;
        if port.source == Source::Default {
            port.value = dialect.value.dialect().default_port;
        }
        let (ssh, ssh_options, proxy_command) = tunnel(&layers, args, profile)?;

        // A switch of the profile's, where it has one.
        let key = |k: fn(&Profile) -> Option<&toml::Spanned<bool>>| {
            profile.and_then(k).map(|b| *b.get_ref())
        };
        let remote = args.remote.is_some() || key(|p| p.remote.as_ref()) == Some(true);
        let remote_rcon = args.remote_rcon.clone().or_else(|| {
            profile
                .and_then(|p| p.remote_rcon.as_ref())
                .map(|r| r.get_ref().clone())
        });
        let remote_install =
            args.remote_install.is_some() || key(|p| p.remote_install.as_ref()) == Some(true);
        let ssh_reuse =
            args.no_ssh_reuse != Some(true) && key(|p| p.ssh_reuse.as_ref()) != Some(false);
        let forget = args.forget.is_some() || key(|p| p.forget.as_ref()) == Some(true);
        if remote && ssh.is_none() {
            return Err(fail(
                Exit::Usage,
                "--remote needs --ssh (or a profile's ssh key): it runs rcon on the SSH host",
            ));
        }
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
            forget,
            remote,
            remote_rcon,
            remote_install,
            personality: args.compat,
            ssh_reuse,
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

    /// The server's name for messages and labels: the profile it came from when one was named
    /// (given, not the implicit `default`), else where it is, `host:port`.
    pub fn display_name(&self) -> String {
        match &self.profile {
            Some(p) if p.source != Source::Default => p.value.clone(),
            _ => self.target(),
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
            None => match self.personality {
                Some(p) if !secrets::can_prompt() => Err(secrets::no_password_for(p)),
                _ => secrets::obtain(&Secret::Prompt, "prompt", &self.target()),
            },
        }
    }

    /// Engine options (see [`Settings::engine_options`]) that use and update what was learned
    /// about this server.
    pub fn options(&self, observer: Arc<dyn Observer>) -> ClientOptions {
        let mut opts = self.engine_options(observer);
        if let Some(key) = self.learned_key() {
            crate::app::learned::attach(&mut opts, key, self.forget);
        }
        opts
    }

    /// The key what is learned about this server is remembered under (with the tunnel, if
    /// any); `None` when no connector can be made for it.
    pub fn learned_key(&self) -> Option<String> {
        let route = self.route().ok()?;
        Some(crate::app::learned::key(
            &route,
            self.dialect.value.dialect(),
        ))
    }

    /// Engine options: the dialect's, then `sentinel` over its end method when it was given.
    /// Nothing learned is read or kept: for a practice server (`--demo`), which is not the
    /// server a later run at the same address will meet.
    pub fn engine_options(&self, observer: Arc<dyn Observer>) -> ClientOptions {
        let mut opts = ClientOptions {
            timeout: self.timeout.value,
            // The adaptive gap unless one was given.
            idle_gap: (self.idle_gap.source != Source::Default).then_some(self.idle_gap.value),
            observer,
            ..ClientOptions::default()
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
        opts
    }

    /// The `-o` options ssh runs with: the user's (`--ssh-option`, profile `ssh_options`),
    /// then, unless `ssh_reuse` is off, connection sharing's ([`super::ssh_sharing`]).
    pub fn ssh_argv_options(&self) -> Vec<String> {
        let mut options = self.ssh_options.clone();
        if let Some(ssh) = self.ssh.as_ref().filter(|_| self.ssh_reuse) {
            options.extend(super::ssh_sharing::options(&ssh.value, &self.ssh_options));
        }
        options
    }

    /// How to reach the server: directly over TCP, through `ssh -W` (sharing its connection
    /// unless `ssh_reuse` is off), or a proxy command.
    pub fn connector(&self) -> anyhow::Result<Box<dyn Connector>> {
        self.connector_with(&self.ssh_argv_options())
    }

    /// How the server is reached, as [`Connector::describe`] names it (`HOST:PORT via ssh
    /// DEST`: what is learned about a server is kept under it), without preparing connection
    /// sharing's directory.
    pub fn route(&self) -> anyhow::Result<String> {
        Ok(self.connector_with(&self.ssh_options)?.describe())
    }

    fn connector_with(&self, ssh_options: &[String]) -> anyhow::Result<Box<dyn Connector>> {
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
            ssh_options,
            self.proxy_command.as_ref().map(|s| s.value.as_str()),
            &self.host.value,
            self.port.value,
        )
    }
}
