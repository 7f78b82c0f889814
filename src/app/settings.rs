//! Second stage of the command line: merges flags and environment (clap has already applied the
//! environment variables it knows) into the settings the program runs with.

use std::sync::Arc;
use std::time::Duration;

use rconsole::client::{EndDetection, Observer, Options};
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

impl Target {
    /// `host:port`, bracketing IPv6.
    pub fn describe(&self) -> String {
        TcpConnector::new(&self.host, self.port).describe()
    }
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

/// Engine options from the flags.
pub fn options(args: &Args, observer: Arc<dyn Observer>) -> Options {
    let end = match args.sentinel.unwrap_or(SentinelArg::Detect) {
        SentinelArg::Detect => EndDetection::Detect,
        SentinelArg::Negative => EndDetection::Negative,
        SentinelArg::Positive => EndDetection::Positive,
        SentinelArg::Idle => EndDetection::Idle,
        SentinelArg::Auto => EndDetection::Auto,
    };
    let defaults = Options::default();
    Options {
        timeout: args.timeout.unwrap_or(DEFAULT_TIMEOUT),
        end,
        idle_gap: args.idle_gap.unwrap_or(defaults.idle_gap),
        observer,
        ..defaults
    }
}

/// The message for a missing password: every way to give one.
pub const NO_PASSWORD: &str =
    "no password given: use --password, RCON_PASSWORD, or try --demo for the practice server";
