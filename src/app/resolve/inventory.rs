//! `--targets FILE`: the servers of a fleet read from the inventory people already keep, as
//! NDJSON (what `kubectl ... -o json | jq -c` or `ansible-inventory --list | jq -c` print), a
//! JSON array of the same objects, or CSV with a header row (a spreadsheet export); and
//! `--where KEY=VALUE` filters.
//!
//! Every row is checked before anything is sent: a bad row is an error naming its line. Rows
//! never carry a password, only where to get it (`password_env`, `password_file`,
//! `password_command`); a `password` column is refused. A row without one uses the password
//! the command line, environment or profile gives.

use std::collections::BTreeMap;
use std::io::Read;

use crate::app::exit::{Exit, fail};
use crate::app::resolve::args::DialectArg;
use crate::app::resolve::secrets::Secret;
use crate::app::resolve::values::parse_host_port;

/// The columns a row may have.
pub const COLUMNS: [&str; 9] = [
    "name",
    "host",
    "port",
    "dialect",
    "password_env",
    "password_file",
    "password_command",
    "ssh",
    "tags",
];

/// One server of the inventory.
#[derive(Debug, Clone)]
pub struct Row {
    /// Where it was read: `FILE:LINE` (or `FILE: entry N` in a JSON array).
    pub at: String,
    /// The label (defaults to the host, with the port when one is given).
    pub name: String,
    /// Host name or address, without brackets.
    pub host: String,
    /// The port, if the row gives one.
    pub port: Option<u16>,
    /// The server family, if the row gives one.
    pub dialect: Option<DialectArg>,
    /// Where the password comes from, if the row says.
    pub password: Option<Secret>,
    /// The row's column naming the password source, for messages.
    pub password_from: Option<&'static str>,
    /// An SSH destination to tunnel through.
    pub ssh: Option<String>,
    /// Tags for `--where tag=...`.
    pub tags: Vec<String>,
}

/// Reads the inventory at `path` (`-`: stdin) and keeps the rows matching every `--where`.
pub fn load(path: &str, filters: &[String]) -> anyhow::Result<Vec<Row>> {
    let filters = filters
        .iter()
        .map(|f| Filter::parse(f))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let (name, text) = if path == "-" {
        let mut text = String::new();
        std::io::stdin()
            .read_to_string(&mut text)
            .map_err(|e| fail(Exit::Config, format!("--targets -: cannot read stdin: {e}")))?;
        ("stdin".to_string(), text)
    } else {
        let text = std::fs::read_to_string(path)
            .map_err(|e| fail(Exit::Config, format!("--targets {path}: {e}")))?;
        (path.to_string(), text)
    };
    let rows = parse(&name, &text, &|var| std::env::var(var).ok())?;
    let all = rows.len();
    let kept: Vec<Row> = rows
        .into_iter()
        .filter(|r| filters.iter().all(|f| f.matches(r)))
        .collect();
    if kept.is_empty() {
        let why = if all == 0 {
            format!("{name} lists no servers")
        } else {
            format!("none of the {all} servers in {name} matches the --where filters")
        };
        return Err(fail(Exit::Config, format!("--targets: {why}")));
    }
    Ok(kept)
}

/// Parses an inventory's text; `env` looks up `password_env` variables (each must be set).
pub fn parse(
    name: &str,
    text: &str,
    env: &dyn Fn(&str) -> Option<String>,
) -> anyhow::Result<Vec<Row>> {
    let text = text.strip_prefix('\u{feff}').unwrap_or(text);
    let first = text.trim_start().chars().next();
    let raw: Vec<(String, Fields)> = match first {
        None => Vec::new(),
        Some('[') => json_array(name, text)?,
        Some('{') => ndjson(name, text)?,
        Some(_) => csv(name, text)?,
    };
    let mut rows: Vec<Row> = Vec::with_capacity(raw.len());
    let mut seen: BTreeMap<String, String> = BTreeMap::new();
    for (at, fields) in raw {
        let row =
            row(&at, fields, env).map_err(|why| fail(Exit::Config, format!("{at}: {why}")))?;
        if let Some(first) = seen.insert(row.name.clone(), at.clone()) {
            return Err(fail(
                Exit::Config,
                format!(
                    "{at}: the name '{}' is used twice (first at {first})",
                    row.name
                ),
            ));
        }
        rows.push(row);
    }
    Ok(rows)
}

/// A row's values by column, as text (a JSON list of tags joined by commas).
type Fields = BTreeMap<String, String>;

fn json_fields(value: serde_json::Value) -> Result<Fields, String> {
    let serde_json::Value::Object(map) = value else {
        return Err("expected a JSON object with host, name, port...".into());
    };
    let mut fields = Fields::new();
    for (key, v) in map {
        let text = match v {
            serde_json::Value::Null => continue,
            serde_json::Value::String(s) => s,
            serde_json::Value::Number(n) => n.to_string(),
            serde_json::Value::Array(items) if key == "tags" => {
                let mut tags = Vec::new();
                for item in items {
                    match item {
                        serde_json::Value::String(s) => tags.push(s),
                        other => return Err(format!("tags: '{other}' is not a string")),
                    }
                }
                tags.join(",")
            }
            other => return Err(format!("{key}: expected a string, got {other}")),
        };
        fields.insert(key, text);
    }
    Ok(fields)
}

fn ndjson(name: &str, text: &str) -> anyhow::Result<Vec<(String, Fields)>> {
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = format!("{name}:{}", i + 1);
        let line = line.trim();
        if line.is_empty() || line.starts_with('#') {
            continue;
        }
        let value: serde_json::Value = serde_json::from_str(line)
            .map_err(|e| fail(Exit::Config, format!("{at}: not a JSON object: {e}")))?;
        let fields =
            json_fields(value).map_err(|why| fail(Exit::Config, format!("{at}: {why}")))?;
        out.push((at, fields));
    }
    Ok(out)
}

fn json_array(name: &str, text: &str) -> anyhow::Result<Vec<(String, Fields)>> {
    let value: serde_json::Value = serde_json::from_str(text).map_err(|e| {
        fail(
            Exit::Config,
            format!("{name}:{}: not a JSON array of objects: {e}", e.line()),
        )
    })?;
    let serde_json::Value::Array(items) = value else {
        return Err(fail(Exit::Config, format!("{name}: not a JSON array")));
    };
    let mut out = Vec::new();
    for (i, item) in items.into_iter().enumerate() {
        let at = format!("{name}: entry {}", i + 1);
        let fields = json_fields(item).map_err(|why| fail(Exit::Config, format!("{at}: {why}")))?;
        out.push((at, fields));
    }
    Ok(out)
}

/// CSV (RFC 4180 quoting, one row per line): a header row naming the columns, then one row
/// per server. Blank lines and lines starting with `#` are skipped.
fn csv(name: &str, text: &str) -> anyhow::Result<Vec<(String, Fields)>> {
    let mut header: Option<Vec<String>> = None;
    let mut out = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let at = format!("{name}:{}", i + 1);
        if line.trim().is_empty() || line.trim_start().starts_with('#') {
            continue;
        }
        let cells = csv_cells(line).map_err(|why| fail(Exit::Config, format!("{at}: {why}")))?;
        let Some(columns) = &header else {
            let columns: Vec<String> = cells.iter().map(|c| c.trim().to_lowercase()).collect();
            if !columns.iter().any(|c| c == "host") {
                return Err(fail(
                    Exit::Config,
                    format!(
                        "{at}: the first row must name the columns (a 'host' column at least; \
                         known: {})",
                        COLUMNS.join(", ")
                    ),
                ));
            }
            header = Some(columns);
            continue;
        };
        if cells.len() > columns.len() {
            return Err(fail(
                Exit::Config,
                format!(
                    "{at}: {} cells, but the header names {} columns",
                    cells.len(),
                    columns.len()
                ),
            ));
        }
        let mut fields = Fields::new();
        for (column, cell) in columns.iter().zip(cells) {
            let cell = cell.trim().to_string();
            if !cell.is_empty() {
                fields.insert(column.clone(), cell);
            }
        }
        out.push((at, fields));
    }
    Ok(out)
}

fn csv_cells(line: &str) -> Result<Vec<String>, String> {
    let mut cells = Vec::new();
    let mut cell = String::new();
    let mut chars = line.chars().peekable();
    let mut quoted = false;
    let mut was_quoted = false;
    while let Some(c) = chars.next() {
        if quoted {
            match c {
                '"' if chars.peek() == Some(&'"') => {
                    chars.next();
                    cell.push('"');
                }
                '"' => quoted = false,
                _ => cell.push(c),
            }
            continue;
        }
        match c {
            '"' if cell.trim().is_empty() && !was_quoted => {
                cell.clear();
                quoted = true;
                was_quoted = true;
            }
            ',' => {
                cells.push(std::mem::take(&mut cell));
                was_quoted = false;
            }
            _ if was_quoted && !c.is_whitespace() => {
                return Err("text after a closing quote".into());
            }
            _ => cell.push(c),
        }
    }
    if quoted {
        return Err("a quoted cell is not closed on this line".into());
    }
    cells.push(cell);
    Ok(cells)
}

fn row(at: &str, mut f: Fields, env: &dyn Fn(&str) -> Option<String>) -> Result<Row, String> {
    if f.contains_key("password") || f.contains_key("rcon_password") {
        return Err(
            "passwords are never inline in an inventory: give password_env (a variable's name), \
             password_file or password_command instead"
                .into(),
        );
    }
    if let Some(unknown) = f.keys().find(|k| !COLUMNS.contains(&k.as_str())) {
        return Err(format!(
            "unknown column '{unknown}' (known: {})",
            COLUMNS.join(", ")
        ));
    }
    let host_text = f.remove("host").ok_or("no host")?;
    let (host, host_port) = parse_host_port(host_text.trim())?;
    if host.is_empty() {
        return Err("no host".into());
    }
    let port = match f.remove("port") {
        Some(p) => match p.trim().parse::<u32>() {
            Ok(n) if (1..=65535).contains(&n) => Some(n as u16),
            _ => return Err(format!("port '{p}' is not a number from 1 to 65535")),
        },
        None => host_port,
    };
    let name = match f.remove("name") {
        Some(n) => n,
        None => match port {
            Some(p) => format!("{host}:{p}"),
            None => host.clone(),
        },
    };
    if name.is_empty() || name.chars().any(|c| c.is_whitespace() || c.is_control()) {
        return Err(format!(
            "the name '{name}' must be non-empty, without spaces"
        ));
    }
    let dialect = match f.remove("dialect") {
        Some(d) => Some(
            <DialectArg as clap::ValueEnum>::from_str(d.trim(), true).map_err(|_| {
                format!("unknown dialect '{d}' (known: minecraft, source, factorio, palworld)")
            })?,
        ),
        None => None,
    };
    let sources: Vec<&'static str> = ["password_env", "password_file", "password_command"]
        .into_iter()
        .filter(|k| f.contains_key(*k))
        .collect();
    if sources.len() > 1 {
        return Err(format!("give one of {}, not both", sources.join(" and ")));
    }
    let password_from = sources.first().copied();
    let password = match password_from {
        Some("password_env") => {
            let var = f.remove("password_env").expect("present");
            match env(&var) {
                Some(v) if !v.is_empty() => Some(Secret::Value(rconsole::Password::new(v))),
                _ => return Err(format!("password_env: the variable {var} is not set")),
            }
        }
        Some("password_file") => Some(Secret::File(crate::app::resolve::secrets::resolve_path(
            &f.remove("password_file").expect("present"),
            None,
        ))),
        Some(_) => Some(Secret::Command(
            f.remove("password_command").expect("present"),
        )),
        None => None,
    };
    let ssh = match f.remove("ssh") {
        Some(dest) => {
            rconsole::transport::tunnel::SshDestination::parse(&dest)
                .map_err(|e| format!("ssh: {e}"))?;
            Some(dest)
        }
        None => None,
    };
    let tags = f
        .remove("tags")
        .map(|t| {
            t.split(|c: char| c == ',' || c == ';' || c == '|' || c.is_whitespace())
                .filter(|t| !t.is_empty())
                .map(String::from)
                .collect()
        })
        .unwrap_or_default();
    Ok(Row {
        at: at.to_string(),
        name,
        host,
        port,
        dialect,
        password,
        password_from,
        ssh,
        tags,
    })
}

/// One `--where KEY=VALUE[,VALUE...]`.
#[derive(Debug)]
struct Filter {
    key: String,
    values: Vec<String>,
}

impl Filter {
    const KEYS: [&'static str; 5] = ["tag", "name", "host", "dialect", "ssh"];

    fn parse(text: &str) -> anyhow::Result<Self> {
        let usage = |why: &str| {
            fail(
                Exit::Usage,
                format!(
                    "--where '{text}': {why} (expected KEY=VALUE with KEY one of {})",
                    Self::KEYS.join(", ")
                ),
            )
        };
        let (key, value) = text.split_once('=').ok_or_else(|| usage("no '='"))?;
        let key = key.trim().to_lowercase();
        let key = if key == "tags" {
            "tag".to_string()
        } else {
            key
        };
        if !Self::KEYS.contains(&key.as_str()) {
            return Err(usage(&format!("unknown key '{key}'")));
        }
        let values: Vec<String> = value
            .split(',')
            .map(|v| v.trim().to_string())
            .filter(|v| !v.is_empty())
            .collect();
        if values.is_empty() {
            return Err(usage("no value"));
        }
        Ok(Self { key, values })
    }

    fn matches(&self, row: &Row) -> bool {
        let any = |text: &str| self.values.iter().any(|v| glob(v, text));
        match self.key.as_str() {
            "tag" => row.tags.iter().any(|t| any(t)),
            "name" => any(&row.name),
            "host" => any(&row.host),
            "dialect" => {
                let d = row.dialect.unwrap_or(DialectArg::Minecraft).dialect().name;
                any(d)
            }
            "ssh" => row.ssh.as_deref().is_some_and(any),
            _ => false,
        }
    }
}

/// Whether `text` matches `pattern`, where `*` stands for any run of characters.
fn glob(pattern: &str, text: &str) -> bool {
    let parts: Vec<&str> = pattern.split('*').collect();
    if parts.len() == 1 {
        return pattern == text;
    }
    let (first, last) = (parts[0], parts[parts.len() - 1]);
    if !text.starts_with(first) || text.len() < first.len() + last.len() || !text.ends_with(last) {
        return false;
    }
    let mut rest = &text[first.len()..text.len() - last.len()];
    for part in &parts[1..parts.len() - 1] {
        match rest.find(part) {
            Some(at) => rest = &rest[at + part.len()..],
            None => return false,
        }
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env(var: &str) -> Option<String> {
        (var == "LOBBY_PW").then(|| "s3cret".to_string())
    }

    fn rows(text: &str) -> Vec<Row> {
        parse("inv", text, &env).unwrap()
    }

    fn error(text: &str) -> String {
        format!("{:#}", parse("inv", text, &env).unwrap_err())
    }

    #[test]
    fn csv_rows_with_quotes_tags_and_defaults() {
        let r = rows(
            "# exported\nname,host,port,dialect,tags,password_env\n\
             lobby,10.0.0.1,25575,minecraft,\"lobby;eu\",LOBBY_PW\n\n\
             \"sur,vival\",mc.example:25580,,,survival,\n\
             ,127.0.0.1\n",
        );
        assert_eq!(r.len(), 3);
        assert_eq!(r[0].name, "lobby");
        assert_eq!(r[0].at, "inv:3");
        assert_eq!(r[0].tags, ["lobby", "eu"]);
        assert!(matches!(&r[0].password, Some(Secret::Value(p)) if p.expose() == "s3cret"));
        assert_eq!(r[1].name, "sur,vival");
        assert_eq!((r[1].host.as_str(), r[1].port), ("mc.example", Some(25580)));
        assert_eq!(r[2].name, "127.0.0.1");
        assert!(r[2].password.is_none() && r[2].tags.is_empty() && r[2].dialect.is_none());
    }

    #[test]
    fn ndjson_and_json_array_rows() {
        let nd = rows(
            "{\"name\":\"a\",\"host\":\"::1\",\"port\":25575,\"tags\":[\"lobby\"],\"dialect\":\"source\"}\n\
             \n{\"host\":\"h\",\"password_file\":\"/run/secrets/pw\",\"ssh\":\"admin@bastion\"}\n",
        );
        assert_eq!(nd.len(), 2);
        assert_eq!((nd[0].host.as_str(), nd[0].port), ("::1", Some(25575)));
        assert_eq!(nd[0].dialect, Some(DialectArg::Source));
        assert_eq!(nd[1].at, "inv:3");
        assert_eq!(nd[1].ssh.as_deref(), Some("admin@bastion"));
        assert!(matches!(&nd[1].password, Some(Secret::File(_))));
        let arr = rows(
            "[{\"host\":\"a\",\"port\":\"1\"},{\"host\":\"b\",\"password_command\":\"pass mc\"}]",
        );
        assert_eq!(arr.len(), 2);
        assert_eq!(arr[1].at, "inv: entry 2");
        assert!(matches!(&arr[1].password, Some(Secret::Command(c)) if c == "pass mc"));
    }

    #[test]
    fn bad_rows_name_their_line() {
        let cases = [
            ("host\n\n10.0.0.1:0\n", "inv:3: ", "port"),
            ("name,host\nx,\n", "inv:2: ", "no host"),
            (
                "name,host,password\nx,h,hunter2\n",
                "inv:2: ",
                "never inline",
            ),
            (
                "{\"host\":\"h\"}\n{\"host\":\"h\",\"pasword_env\":\"X\"}\n",
                "inv:2: ",
                "unknown column 'pasword_env'",
            ),
            (
                "{\"host\":\"h\"}\n{not json\n",
                "inv:2: ",
                "not a JSON object",
            ),
            (
                "{\"host\":\"h\",\"dialect\":\"quake\"}\n",
                "inv:1: ",
                "unknown dialect",
            ),
            (
                "{\"host\":\"h\",\"password_env\":\"NOPE\"}\n",
                "inv:1: ",
                "NOPE is not set",
            ),
            (
                "host,password_env,password_file\nh,LOBBY_PW,/f\n",
                "inv:2: ",
                "not both",
            ),
            (
                "name,host\na,h1\na,h2\n",
                "inv:3: ",
                "used twice (first at inv:2)",
            ),
            ("name,host\na b,h1\n", "inv:2: ", "without spaces"),
            ("name,host\na,\"h1\n", "inv:2: ", "not closed"),
            ("name,host\na,h,extra\n", "inv:2: ", "3 cells"),
            ("name,address\na,h\n", "inv:1: ", "name the columns"),
            ("{\"host\":\"h\",\"ssh\":\"a@b:x\"}\n", "inv:1: ", "ssh"),
            (
                "[{\"host\":\"h\"},{\"host\":true}]",
                "inv: entry 2: ",
                "expected a string",
            ),
            ("{\"host\":\"http://h\"}\n", "inv:1: ", "URL"),
        ];
        for (text, at, why) in cases {
            let e = error(text);
            assert!(e.starts_with(at) && e.contains(why), "{text:?}: {e}");
            assert!(!e.contains("hunter2") && !e.contains("s3cret"), "{e}");
        }
    }

    #[test]
    fn filters_by_tag_name_host_and_dialect() {
        let r = rows(
            "name,host,tags,dialect\nlobby-1,h1,lobby eu,\nlobby-2,h2,lobby,source\nsurvival,h3,survival eu,\n",
        );
        let keep = |filters: &[&str]| -> Vec<String> {
            let f: Vec<Filter> = filters.iter().map(|f| Filter::parse(f).unwrap()).collect();
            r.iter()
                .filter(|row| f.iter().all(|f| f.matches(row)))
                .map(|row| row.name.clone())
                .collect()
        };
        assert_eq!(keep(&["tag=lobby"]), ["lobby-1", "lobby-2"]);
        assert_eq!(keep(&["tag=lobby", "tag=eu"]), ["lobby-1"]);
        assert_eq!(keep(&["tag=eu,nothing"]), ["lobby-1", "survival"]);
        assert_eq!(keep(&["name=lobby-*"]), ["lobby-1", "lobby-2"]);
        assert_eq!(keep(&["host=h3"]), ["survival"]);
        assert_eq!(keep(&["dialect=minecraft"]), ["lobby-1", "survival"]);
        assert_eq!(keep(&["tag=none"]), Vec::<String>::new());
        for bad in ["tag", "colour=red", "tag="] {
            assert!(Filter::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn globs() {
        assert!(glob("a*", "abc") && glob("*c", "abc") && glob("a*c", "abc") && glob("*", ""));
        assert!(glob("a*b*c", "aXbYc") && !glob("a*b*c", "aXc") && !glob("ab", "abc"));
        assert!(!glob("aa*aa", "aaa"));
    }
}
