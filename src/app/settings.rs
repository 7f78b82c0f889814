//! Second stage of the command line: merges flags and environment (clap has already applied the
//! environment variables it knows) into the settings the program runs with.

use std::sync::Arc;
use std::time::Duration;

use rconsole::Dialect;
use rconsole::client::{EndDetection, Observer, Options};
use rconsole::process::{ProcessConnector, SshDestination, expand_proxy_command};
use rconsole::transport::{Connector, TcpConnector, split_host_port};

use super::args::{Args, SentinelArg};
use super::exit::{Exit, fail};

/// The default RCON port (`rcon.port` in server.properties).
pub const DEFAULT_PORT: u16 = 25575;
/// The default time limit.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(10);

/// Where to connect.
#[derive(Debug, Clone)]
pub struct Target {
    /// Host name or address, without brackets.
    pub host: String,
    /// TCP port.
    pub port: u16,
}

/// Resolves host and port: a port inside `--host` wins over the default and `RCON_PORT`, but
/// contradicting an explicit `--port` is an error.
pub fn target(args: &Args, port_from_flag: bool) -> anyhow::Result<Target> {
    let raw = args.host.clone().unwrap_or_else(|| "localhost".into());
    let (host, host_port) = split_host_port(&raw);
    if host.is_empty() {
        return Err(fail(Exit::Usage, "--host is empty"));
    }
    let port = match (host_port, args.port) {
        (Some(hp), Some(p)) if port_from_flag && hp != p => {
            return Err(fail(
                Exit::Usage,
                format!("--host {raw} names port {hp} but --port says {p}; give one"),
            ));
        }
        (Some(hp), _) => hp,
        (None, Some(p)) => p,
        (None, None) => DEFAULT_PORT,
    };
    Ok(Target { host, port })
}

/// Engine options from the flags: the dialect's settings, then --sentinel over its end method.
pub fn options(args: &Args, observer: Arc<dyn Observer>) -> Options {
    let defaults = Options::default();
    let mut opts = Options {
        timeout: args.timeout.unwrap_or(DEFAULT_TIMEOUT),
        idle_gap: args.idle_gap.unwrap_or(defaults.idle_gap),
        observer,
        ..defaults
    };
    dialect(args).apply(&mut opts);
    if let Some(sentinel) = args.sentinel {
        opts.end = match sentinel {
            SentinelArg::Detect => EndDetection::Detect,
            SentinelArg::Negative => EndDetection::Negative,
            SentinelArg::Positive => EndDetection::Positive,
            SentinelArg::Idle => EndDetection::Idle,
            SentinelArg::Auto => EndDetection::Auto,
        };
    }
    opts
}

/// The server dialect in force.
pub fn dialect(args: &Args) -> Dialect {
    args.dialect.map(|d| d.dialect()).unwrap_or_default()
}

/// How to reach `host`:`port`: directly over TCP, through `ssh -W`, or through a proxy command.
pub fn connector(args: &Args, host: &str, port: u16) -> anyhow::Result<Box<dyn Connector>> {
    if let Some(dest) = &args.ssh {
        let dest =
            SshDestination::parse(dest).map_err(|e| fail(Exit::Usage, format!("--ssh: {e}")))?;
        return Ok(Box::new(ProcessConnector::ssh(
            dest,
            args.ssh_option.clone(),
            host,
            port,
        )));
    }
    if let Some(template) = &args.proxy_command {
        let command = expand_proxy_command(template, host, port)
            .map_err(|e| fail(Exit::Usage, format!("--proxy-command: {e}")))?;
        return Ok(Box::new(ProcessConnector::shell(command, host, port)));
    }
    Ok(Box::new(TcpConnector::new(host, port)))
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
        let (host, port) = split_host_port(address.trim());
        if host.is_empty() {
            return Err(usage("no host"));
        }
        let port = port.or(args.port).unwrap_or(DEFAULT_PORT);
        out.push((name.to_string(), Target { host, port }));
    }
    Ok(out)
}

/// The message for a missing password: every way to give one.
pub const NO_PASSWORD: &str =
    "no password given: use --password, RCON_PASSWORD, or try --demo for the practice server";
