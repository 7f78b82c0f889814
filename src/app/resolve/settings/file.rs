//! The config file for this run, the profile it selects, and `--list-servers`.

use super::*;

/// The config file's state for this run.
#[derive(Debug, Clone)]
pub enum ConfigFile {
    /// Not read: `--no-config` (or `--demo`).
    Ignored(&'static str),
    /// The default path, which does not exist.
    Missing(PathBuf),
    /// No default path on this platform (no home directory).
    NoPath,
    /// Read, from the default path (`None`) or as named by a flag or variable. Shared: every
    /// server of a fan-out or inventory holds the same file.
    Loaded(std::sync::Arc<ParsedConfig>, Option<Source>),
}

impl ConfigFile {
    /// Finds and reads the config file: `--no-config` skips it; `--config`/`RCON_CONFIG` must
    /// exist; the default path may be missing. Warns once if a file holding a password is
    /// readable by others.
    pub fn load(args: &Args, origins: &Origins) -> anyhow::Result<ConfigFile> {
        if args.no_config.is_some() {
            return Ok(ConfigFile::Ignored("--no-config"));
        }
        let state = match origins.sourced(&args.config, "config") {
            Some(path) => {
                ConfigFile::Loaded(ParsedConfig::load(&path.value)?.into(), Some(path.source))
            }
            None => match config::default_path() {
                None => ConfigFile::NoPath,
                Some(path) => match std::fs::metadata(&path) {
                    Err(e) if e.kind() == std::io::ErrorKind::NotFound => ConfigFile::Missing(path),
                    _ => ConfigFile::Loaded(ParsedConfig::load(&path)?.into(), None),
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
    pub fn config(&self) -> Option<&ParsedConfig> {
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

/// The profile `-s NAME` (or `RCON_SERVER`) names, else `default` if the file has one.
pub(super) fn select_profile<'c>(
    args: &Args,
    origins: &Origins,
    file: &'c ConfigFile,
    forced: Option<&Sourced<String>>,
) -> anyhow::Result<Option<(Sourced<String>, &'c Profile, &'c ParsedConfig)>> {
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
            .or(p.port.as_ref().map(|s| s.get_ref().0))
            .unwrap_or(DEFAULT_PORT);
        let addr = TcpConnector::new(&host, port).describe();
        out.push_str(&format!("{name:<width$}  {addr}\n"));
    }
    (out, None)
}
