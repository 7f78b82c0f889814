//! Several servers: the profiles of a fan-out, `--target` addresses, `--targets` rows.

use super::*;

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
    let wanted: Vec<String> = if args.all.is_some() {
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

/// Where one `--target` (or `--ping`, `--query`) points.
#[derive(Debug, Clone)]
pub struct HostPort {
    /// Host name or address, without brackets.
    pub host: String,
    /// TCP port.
    pub port: u16,
}

impl HostPort {
    /// `host:port`, bracketing IPv6.
    pub fn describe(&self) -> String {
        TcpConnector::new(&self.host, self.port).describe()
    }
}

/// The servers of `--target NAME=HOST:PORT`, in order, each with whether it named its port;
/// a target without a port gets --port or the default.
pub fn targets(args: &Args) -> anyhow::Result<Vec<(String, HostPort, bool)>> {
    let mut out: Vec<(String, HostPort, bool)> = Vec::new();
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
        if out.iter().any(|(n, _, _)| n == name) {
            return Err(usage("the name is used twice"));
        }
        let (host, port) = parse_host_port(address.trim()).map_err(|why| usage(&why))?;
        if host.is_empty() {
            return Err(usage("no host"));
        }
        let named = port.is_some();
        let port = port.or(args.port).unwrap_or(
            args.dialect
                .map_or(DEFAULT_PORT, |d| d.dialect().default_port),
        );
        out.push((name.to_string(), HostPort { host, port }, named));
    }
    Ok(out)
}

/// Points resolved settings at one `--targets` row: its address (the default profile's tunnel
/// does not apply, as for `--target`), and its dialect, password source and ssh where the row
/// gives them. Returns the row's name.
pub fn apply_row(
    s: &mut Settings,
    args: &Args,
    row: crate::app::resolve::inventory::Row,
) -> String {
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
