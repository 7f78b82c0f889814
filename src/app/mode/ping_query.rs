//! `--ping` and `--query`: a server's status without a password, printed for people or as JSON.

use std::time::Duration;

use anyhow::Context;
use serde_json::{Map, Value, json};

use rconsole::minecraft::driver::{self, LegacyPing, PingReport, QueryReply, QueryReport};
use rconsole::minecraft::status::{self, DEFAULT_PORT};
use rconsole::rcon::client::Direction;

use crate::app::exit::{Exit, fail};
use crate::app::print::output;
use crate::app::print::trace::Trace;
use crate::app::resolve::plan::{Probe, ProbeDefaults as Defaults, ProbeKind};
use crate::app::resolve::settings::HostPort;
use crate::app::resolve::values::parse_host_port;

/// The game server to ping or query: `HOST[:PORT]` given to the flag, else the host of `--host`
/// (its port is the RCON port, so it is not used), else localhost; the port defaults to the game
/// port 25565.
/// The game host and port to ask, and whether the port was given (if not, `--ping` looks for an
/// SRV record first).
fn game_target(given: Option<&str>, defaults: &Defaults) -> anyhow::Result<(HostPort, bool)> {
    let (raw, port) = match given {
        Some(g) => parse_host_port(g).map_err(|why| fail(Exit::Usage, why))?,
        None => (defaults.host.clone(), None),
    };
    if raw.is_empty() {
        return Err(fail(
            Exit::Usage,
            format!("no host in '{}'", given.unwrap_or_default()),
        ));
    }
    Ok((
        HostPort {
            host: raw,
            port: port.unwrap_or(DEFAULT_PORT),
        },
        port.is_some(),
    ))
}

/// The DNS server for SRV lookups: `RCON_DNS_SERVER` (`IP` or `IP:PORT`; a value that is
/// neither disables the lookup), else the system's.
fn dns_server() -> Option<std::net::SocketAddr> {
    match std::env::var("RCON_DNS_SERVER") {
        Ok(value) => driver::parse_dns_server(&value),
        Err(_) => driver::system_dns_server(),
    }
}

/// Runs the ping or the query.
pub fn run(probe: &Probe) -> anyhow::Result<Exit> {
    match &probe.kind {
        ProbeKind::Ping { given, legacy } => ping(probe, given.as_deref(), *legacy),
        ProbeKind::Query { given, full } => query(probe, given.as_deref(), *full),
    }
}

/// `rcon --ping`.
fn ping(probe: &Probe, given: Option<&str>, legacy: bool) -> anyhow::Result<Exit> {
    let defaults = &probe.defaults;
    let (mut target, port_given) = game_target(given, defaults)?;
    let timeout = defaults.timeout;
    // Without a port, ask DNS for `_minecraft._tcp.HOST` first, as the game does (not for
    // addresses and single-label names such as localhost, which have no SRV records).
    let mut via_srv = None;
    if !port_given && target.host.contains('.') && target.host.parse::<std::net::IpAddr>().is_err()
    {
        let budget = (timeout / 4).min(Duration::from_secs(2));
        if let Some(dns) = dns_server()
            && let Some((host, port)) = driver::lookup_minecraft_srv(&target.host, dns, budget)
        {
            via_srv = Some(rconsole::minecraft::srv::minecraft_name(&target.host));
            target = HostPort { host, port };
        }
    }
    let legacy = if legacy {
        LegacyPing::Only
    } else {
        LegacyPing::Fallback
    };
    let trace = probe.trace.then(Trace::new);
    let mut tap = |d: Direction, bytes: &[u8]| {
        if let Some(t) = &trace {
            t.raw(d, bytes, &describe_status(d, bytes));
        }
    };
    let report = driver::ping(&target.host, target.port, timeout, legacy, &mut tap)
        .with_context(|| format!("status ping of {}", target.describe()))?;
    let text = if probe.json {
        ping_json(&target, via_srv.as_deref(), &report).to_string()
    } else {
        ping_text(&target, via_srv.as_deref(), &report, probe.colour)
    };
    output::print_text(&format!("{text}\n"))?;
    Ok(Exit::Success)
}

/// `rcon --query`.
fn query(probe: &Probe, given: Option<&str>, full: bool) -> anyhow::Result<Exit> {
    let defaults = &probe.defaults;
    let (target, _) = game_target(given, defaults)?;
    let timeout = defaults.timeout;
    let trace = probe.trace.then(Trace::new);
    let mut tap = |d: Direction, bytes: &[u8]| {
        if let Some(t) = &trace {
            t.raw(d, bytes, &describe_query(d, bytes));
        }
    };
    let report = driver::query(&target.host, target.port, full, timeout, &mut tap)
        .with_context(|| format!("query of {}", target.describe()))?;
    let text = if probe.json {
        query_json(&report).to_string()
    } else {
        query_text(&report, probe.colour)
    };
    output::print_text(&format!("{text}\n"))?;
    Ok(Exit::Success)
}

fn ms(d: Duration) -> f64 {
    (d.as_secs_f64() * 1_000_000.0).round() / 1000.0
}

/// The server's JSON as sent, with where it came from (and the SRV name that led there) and
/// the latency.
pub fn ping_json(target: &HostPort, srv: Option<&str>, report: &PingReport) -> Value {
    json!({
        "address": target.describe(),
        "srv": srv,
        "legacy": report.status.legacy,
        "latency_ms": report.latency.map(ms),
        "status": report.status.json,
    })
}

/// Labelled lines; continuation lines of a value are indented under it.
fn field(out: &mut String, label: &str, value: &str) {
    let pad = " ".repeat(11usize.saturating_sub(label.len() + 1));
    let indent = " ".repeat(11);
    for (i, line) in value.split('\n').enumerate() {
        if i == 0 {
            out.push_str(&format!("{label}:{pad}{line}\n"));
        } else {
            out.push_str(&format!("{indent}{line}\n"));
        }
    }
}

fn count(n: Option<i64>) -> String {
    n.map_or_else(|| "?".into(), |n| n.to_string())
}

/// The status for people.
pub fn ping_text(
    target: &HostPort,
    srv: Option<&str>,
    report: &PingReport,
    colour: bool,
) -> String {
    let s = &report.status;
    let mut out = String::new();
    field(&mut out, "server", &target.describe());
    if let Some(name) = srv {
        field(&mut out, "srv", name);
    }
    let version = match s.protocol {
        Some(p) => format!("{} (protocol {p})", render(&s.version, colour)),
        None => render(&s.version, colour),
    };
    field(&mut out, "version", &version);
    field(
        &mut out,
        "players",
        &format!("{}/{}", count(s.online), count(s.max)),
    );
    if !s.sample.is_empty() {
        let names: Vec<String> = s.sample.iter().map(|n| render(n, colour)).collect();
        field(&mut out, "sample", &names.join(", "));
    }
    field(&mut out, "motd", &render(&s.motd, colour));
    let latency = report
        .latency
        .map_or_else(|| "unknown (no pong)".into(), |d| format!("{} ms", ms(d)));
    field(&mut out, "latency", &latency);
    if s.legacy {
        let how = match &report.fallback_reason {
            Some(why) => format!("legacy FE 01 ping (the modern ping failed: {why})"),
            None => "legacy FE 01 ping".into(),
        };
        field(&mut out, "answered", &how);
    }
    out.pop();
    out
}

/// The query's answer as JSON.
pub fn query_json(report: &QueryReport) -> Value {
    let latency = ms(report.latency);
    match &report.reply {
        QueryReply::Basic(b) => json!({
            "motd": b.motd,
            "game_type": b.game_type,
            "map": b.map,
            "online": b.online,
            "max": b.max,
            "host_port": b.host_port,
            "host_ip": b.host_ip,
            "latency_ms": latency,
        }),
        QueryReply::Full(f) => {
            let fields: Map<String, Value> = f
                .fields
                .iter()
                .map(|(k, v)| (k.clone(), Value::String(v.clone())))
                .collect();
            let (software, plugins) = f.plugins();
            json!({
                "fields": fields,
                "software": software,
                "plugins": plugins,
                "players": f.players,
                "latency_ms": latency,
            })
        }
    }
}

/// The query's answer for people.
pub fn query_text(report: &QueryReport, colour: bool) -> String {
    let mut out = String::new();
    match &report.reply {
        QueryReply::Basic(b) => {
            field(&mut out, "motd", &render(&b.motd, colour));
            field(&mut out, "game type", &clean(&b.game_type));
            field(&mut out, "map", &clean(&b.map));
            field(&mut out, "players", &format!("{}/{}", b.online, b.max));
            field(
                &mut out,
                "host",
                &format!("{}:{}", clean(&b.host_ip), b.host_port),
            );
        }
        QueryReply::Full(f) => {
            let get = |k: &str| clean(f.get(k).unwrap_or(""));
            field(
                &mut out,
                "motd",
                &render(f.get("hostname").unwrap_or(""), colour),
            );
            field(&mut out, "version", &get("version"));
            let (software, plugins) = f.plugins();
            if !software.is_empty() {
                field(&mut out, "software", &clean(&software));
            }
            if !plugins.is_empty() {
                let plugins: Vec<String> = plugins.iter().map(|p| clean(p)).collect();
                field(&mut out, "plugins", &plugins.join(", "));
            }
            field(&mut out, "game type", &get("gametype"));
            field(&mut out, "game id", &get("game_id"));
            field(&mut out, "map", &get("map"));
            field(
                &mut out,
                "players",
                &format!("{}/{}", get("numplayers"), get("maxplayers")),
            );
            if !f.players.is_empty() {
                let names: Vec<String> = f.players.iter().map(|p| clean(p)).collect();
                field(&mut out, "online", &names.join(", "));
            }
            field(
                &mut out,
                "host",
                &format!("{}:{}", get("hostip"), get("hostport")),
            );
            const SHOWN: [&str; 10] = [
                "hostname",
                "version",
                "plugins",
                "gametype",
                "game_id",
                "map",
                "numplayers",
                "maxplayers",
                "hostip",
                "hostport",
            ];
            for (k, v) in &f.fields {
                if !SHOWN.contains(&k.as_str()) {
                    field(&mut out, &clean(k), &clean(v));
                }
            }
        }
    }
    field(&mut out, "latency", &format!("{} ms", ms(report.latency)));
    out.pop();
    out
}

/// Server text made safe for a terminal: control characters (a hostile server could send escape
/// sequences) become U+FFFD; newlines stay.
fn clean(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' {
                '\u{FFFD}'
            } else {
                c
            }
        })
        .collect()
}

/// Renders `§` codes as ANSI (`colour`) or drops them, after [`clean`] has neutralised control
/// characters from the server.
pub fn render(text: &str, colour: bool) -> String {
    let text = clean(text);
    if colour {
        rconsole::text::render::to_ansi(&text)
    } else {
        rconsole::text::render::strip(&text)
    }
}

/// What the raw bytes of a status ping are, for `--trace`.
fn describe_status(direction: Direction, bytes: &[u8]) -> String {
    if bytes == status::LEGACY_REQUEST {
        return "(legacy ping FE 01)".into();
    }
    if bytes.first() == Some(&0xff) && direction == Direction::Received {
        return "(legacy reply)".into();
    }
    let mut frames = Vec::new();
    let mut rest = bytes;
    while let Ok(Some((frame, used))) = status::decode_frame(rest, status::MAX_FRAME) {
        frames.push(format!("frame id={} len={}", frame.id, used));
        rest = &rest[used..];
    }
    if frames.is_empty() {
        "(part of a frame)".into()
    } else {
        format!("({})", frames.join(", "))
    }
}

/// What a query datagram is, for `--trace`.
fn describe_query(direction: Direction, bytes: &[u8]) -> String {
    let (kind, session) = match direction {
        Direction::Sent => (bytes.get(2), bytes.get(3..7)),
        Direction::Received => (bytes.first(), bytes.get(1..5)),
    };
    let name = match (direction, kind) {
        (_, Some(9)) => "handshake",
        (Direction::Sent, Some(0)) if bytes.len() == 15 => "full stat",
        (Direction::Sent, Some(0)) => "basic stat",
        (Direction::Received, Some(0)) => "stat",
        _ => "unknown",
    };
    match session {
        Some(s) => format!(
            "(query {name}, session {:#010x})",
            u32::from_be_bytes([s[0], s[1], s[2], s[3]])
        ),
        None => format!("(query {name})"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_codes() {
        assert_eq!(render("§aHi §lthere§r!", false), "Hi there!");
        assert_eq!(
            render("§aHi §lthere§r!", true),
            "\x1b[0;92mHi \x1b[1mthere\x1b[0m!\x1b[0m"
        );
        // Unknown code and a lone trailing § stay as text.
        assert_eq!(render("50§z off §", false), "50§z off §");
        assert_eq!(render("§x§f§f§0§0§8§0hex", false), "hex");
        assert_eq!(
            render("§x§f§f§0§0§8§0hex", true),
            "\x1b[0;38;2;255;0;128mhex\x1b[0m"
        );
        // Escape sequences from the server never reach the terminal.
        assert_eq!(render("a\x1b[2Jb", false), "a\u{FFFD}[2Jb");
        assert_eq!(render("two\nlines", false), "two\nlines");
    }

    #[test]
    fn targets() {
        let d = Defaults::from_flags(None, None).unwrap();
        let (t, given) = game_target(None, &d).unwrap();
        assert_eq!(
            (t.host.as_str(), t.port, given),
            ("localhost", 25565, false)
        );
        let d = Defaults::from_flags(Some("mc.example:25575"), None).unwrap();
        let (t, _) = game_target(None, &d).unwrap();
        assert_eq!((t.host.as_str(), t.port), ("mc.example", 25565));
        let (t, _) = game_target(Some("[::1]"), &d).unwrap();
        assert_eq!((t.host.as_str(), t.port), ("::1", 25565));
        let (t, given) = game_target(Some("mc.example:1234"), &d).unwrap();
        assert_eq!((t.port, given), (1234, true));
        assert!(game_target(Some(":25565"), &d).is_err());
        assert!(game_target(Some("mc.example:0"), &d).is_err());
    }

    #[test]
    fn motd_lines_indent() {
        let mut out = String::new();
        field(&mut out, "motd", "one\ntwo");
        assert_eq!(out, "motd:      one\n           two\n");
    }
}
