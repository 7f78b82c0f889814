//! itzg rcon-cli's command line (the Go client in the itzg/minecraft-server image) as rcon's,
//! from its current source (cobra flags, viper settings), not its README's usage text:
//! `--host` (default `localhost`), `--port` (default 25575 since its 1.6.0; the README still
//! says 27015), `--password`, `--config` (also after command words, as cobra allows, `--` ends
//! them), the other words joined into one command; `RCON_HOST`, `RCON_PORT`, `RCON_PASSWORD`
//! under the flags; its config file under those: `--config FILE`, else the first of
//! `~/.rcon-cli.EXT` in viper's order of extensions ([`HOME_FILES`]), with the keys `host`,
//! `port` and `password`. Its console's keyword `exit` ([`QUIT_WORD`]) ends the session.

use std::path::{Path, PathBuf};

use super::{Env, RconArgv, Source, Translation, TranslationEnd, Tweaks, from_env, port_number};

/// The line that ends rcon-cli's console or its piped input: it closes the session and is never
/// sent (on a Source server `exit` would stop the server).
pub(super) const QUIT_WORD: &str = "exit";

/// The config files looked for in the home directory: `.rcon-cli` with each extension viper
/// tries, in its order; the first that exists is the one read.
const HOME_FILES: [&str; 12] = [
    ".rcon-cli.json",
    ".rcon-cli.toml",
    ".rcon-cli.yaml",
    ".rcon-cli.yml",
    ".rcon-cli.properties",
    ".rcon-cli.props",
    ".rcon-cli.prop",
    ".rcon-cli.hcl",
    ".rcon-cli.tfvars",
    ".rcon-cli.dotenv",
    ".rcon-cli.env",
    ".rcon-cli.ini",
];

/// What `rcon-cli --help` prints.
const USAGE: &str = "\
rcon running as rcon-cli: the words are joined into one command and sent; with no words, the
interactive console opens on a terminal and piped lines are read as commands. The line `exit`
ends the session (it is not sent).

Usage:
  rcon-cli [flags] [RCON command ...]

Examples:
  rcon-cli --host mc1 --port 25575
  rcon-cli --port 25575 stop
  RCON_PORT=25575 rcon-cli stop

Flags:
      --config FILE       config file (default: the first of ~/.rcon-cli.json, .toml, .yaml,
                          .yml, .env...)
  -h, --help              this help
      --host HOST         RCON server's host name (default: localhost)
      --password PASS     RCON server's password
      --port PORT         RCON port (default: 25575)

Environment: RCON_HOST, RCON_PORT, RCON_PASSWORD (flags win; both win over the config file).
Any failure exits 1. rcon's own options: run it as rcon (rcon --help).
";

/// Translates rcon-cli's arguments.
pub(super) fn translate(args: &[String], env: &Env) -> Result<Translation, TranslationEnd> {
    let mut host = None;
    let mut port = None;
    let mut password = None;
    let mut config = None;
    let mut words: Vec<&str> = Vec::new();
    let mut flags_end = false;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        if flags_end || arg == "-" || !arg.starts_with('-') {
            words.push(arg);
            continue;
        }
        if arg == "--" {
            flags_end = true;
            continue;
        }
        if arg == "-h" || arg == "--help" {
            return Err(TranslationEnd::Print(USAGE.to_string()));
        }
        let (name, glued) = match arg.strip_prefix("--") {
            Some(rest) => match rest.split_once('=') {
                Some((name, value)) => (name, Some(value)),
                None => (rest, None),
            },
            None => ("", None),
        };
        if !matches!(name, "host" | "port" | "password" | "config") {
            // Before the command an unknown flag is a mistake; after its first word rcon's rule
            // applies (`tp @p 0 -60 0`), where rcon-cli itself would refuse `-60`.
            if words.is_empty() {
                return Err(TranslationEnd::Fail(format!(
                    "rcon-cli has no flag {arg} (rcon-cli --help lists them)"
                )));
            }
            words.push(arg);
            continue;
        }
        let value = match glued {
            Some(v) => v.to_string(),
            None => {
                let next = args.get(i).ok_or_else(|| {
                    TranslationEnd::Fail(format!("rcon-cli flag --{name} needs a value"))
                })?;
                i += 1;
                next.clone()
            }
        };
        let source = Source::Flag(format!("--{name}"));
        match name {
            "host" => host = Some((value, source)),
            "port" => port = Some((port_number(&value, "rcon-cli --port")?, source)),
            "password" => password = Some((value, source)),
            _ => config = Some(PathBuf::from(value)),
        }
    }

    let file = ConfigFile::find(config, env)?;
    let key = |name: &str| file.as_ref().and_then(|f| f.get(name));
    let host = host
        .or_else(|| from_env(env, "RCON_HOST"))
        .or_else(|| key("host"));
    let port = match port {
        Some(p) => Some(p),
        None => match from_env(env, "RCON_PORT").or_else(|| key("port")) {
            Some((text, source)) => {
                Some((port_number(&text, &format!("port ({source})"))?, source))
            }
            None => None,
        },
    };
    let password = password
        .or_else(|| from_env(env, "RCON_PASSWORD"))
        .or_else(|| key("password"));

    let mut rcon = RconArgv::new();
    rcon.endpoint(host, port, rconsole::Dialect::MINECRAFT.default_port);
    if let Some((pw, source)) = password {
        rcon.setting("password", &pw, Some(source));
    }
    if !words.is_empty() {
        rcon.flag("--");
        for word in words {
            rcon.flag(word);
        }
    }
    Ok(rcon.finish(Tweaks {
        quiet: false,
        parse_errors_fail: false,
        quit_word: Some(QUIT_WORD),
    }))
}

/// rcon-cli's config file: its `host`, `port` and `password` keys with their line numbers.
struct ConfigFile {
    path: PathBuf,
    keys: Vec<Pair>,
}

impl ConfigFile {
    /// The file `--config` names, else the first of [`HOME_FILES`] in the home directory.
    fn find(config: Option<PathBuf>, env: &Env) -> Result<Option<ConfigFile>, TranslationEnd> {
        match config {
            Some(path) => Ok(Some(ConfigFile::read(&path)?)),
            None => match env.home.as_deref() {
                Some(home) => HOME_FILES
                    .iter()
                    .map(|name| home.join(name))
                    .find(|p| p.is_file())
                    .map(|p| ConfigFile::read(&p))
                    .transpose(),
                None => Ok(None),
            },
        }
    }

    /// Reads and parses `path` by its extension, as viper does: YAML (also with none), JSON,
    /// TOML, or `key=value` lines for `.env` and `.dotenv`. viper's other formats (properties,
    /// HCL, INI) are refused: rcon-cli's viper no longer reads them either.
    fn read(path: &Path) -> Result<ConfigFile, TranslationEnd> {
        let shown = path.display();
        // Go's `filepath.Ext`: from the name's last dot on, so `.env` alone is a .env file.
        let name = path.file_name().and_then(|n| n.to_str()).unwrap_or("");
        let ext = name.rsplit_once('.').map(|(_, ext)| ext);
        let parse: fn(&str) -> Result<Vec<Pair>, LineError> = match ext {
            None | Some("yaml" | "yml") => yaml_pairs,
            Some("json") => json_pairs,
            Some("toml") => toml_pairs,
            Some("env" | "dotenv") => dotenv_pairs,
            Some(_) => {
                return Err(TranslationEnd::Fail(format!(
                    "rcon-cli config {shown}: only YAML, JSON, TOML and .env files are read"
                )));
            }
        };
        let text = std::fs::read_to_string(path).map_err(|e| {
            TranslationEnd::Fail(format!("cannot read rcon-cli config {shown}: {e}"))
        })?;
        let text = text.strip_prefix('\u{feff}').unwrap_or(&text);
        let keys = parse(text).map_err(|(line, why)| {
            TranslationEnd::Fail(format!("rcon-cli config {shown}:{line}: {why}"))
        })?;
        Ok(ConfigFile {
            path: path.to_path_buf(),
            keys,
        })
    }

    /// The last value of `key` (keys are case-insensitive, as viper reads them), with its
    /// source `path:line`. An empty value is unset.
    fn get(&self, key: &str) -> Option<(String, Source)> {
        let (_, value, line) = self
            .keys
            .iter()
            .rev()
            .find(|(k, _, _)| k.eq_ignore_ascii_case(key))?;
        (!value.is_empty()).then(|| {
            let at = format!("{}:{line}", self.path.display());
            let source = Source::Profile {
                name: "rcon-cli".into(),
                at,
            };
            (value.clone(), source)
        })
    }
}

/// A key, its value and its line.
type Pair = (String, String, usize);

/// The keys rcon-cli reads; JSON and TOML files may hold others of any shape.
fn wanted(key: &str) -> bool {
    ["host", "port", "password"]
        .iter()
        .any(|k| k.eq_ignore_ascii_case(key))
}

/// The line of `text` where `needle` first appears (1 when it does not).
fn line_of(text: &str, needle: &str) -> usize {
    text.find(needle)
        .map_or(1, |at| text[..at].matches('\n').count() + 1)
}

/// A JSON object's `host`, `port` and `password`: strings, numbers or booleans.
fn json_pairs(text: &str) -> Result<Vec<Pair>, LineError> {
    use serde_json::Value;
    let object: serde_json::Map<String, Value> =
        serde_json::from_str(text).map_err(|e| (e.line(), e.to_string()))?;
    let mut pairs = Vec::new();
    for (key, value) in object.into_iter().filter(|(k, _)| wanted(k)) {
        let line = line_of(text, &format!("\"{key}\""));
        let value = match value {
            Value::String(s) => s,
            Value::Null => String::new(),
            Value::Number(_) | Value::Bool(_) => value.to_string(),
            Value::Array(_) | Value::Object(_) => {
                return Err((line, format!("'{key}' is not a plain value")));
            }
        };
        pairs.push((key, value, line));
    }
    Ok(pairs)
}

/// A TOML document's top-level `host`, `port` and `password`: strings, numbers or booleans.
fn toml_pairs(text: &str) -> Result<Vec<Pair>, LineError> {
    use toml::Value;
    let table: toml::Table = text.parse().map_err(|e: toml::de::Error| {
        let line = e
            .span()
            .map_or(1, |s| text[..s.start].matches('\n').count() + 1);
        (line, e.message().to_string())
    })?;
    let mut pairs = Vec::new();
    for (key, value) in table.into_iter().filter(|(k, _)| wanted(k)) {
        let line = line_of(text, &key);
        let value = match value {
            Value::String(s) => s,
            Value::Integer(_) | Value::Float(_) | Value::Boolean(_) => value.to_string(),
            _ => return Err((line, format!("'{key}' is not a plain value"))),
        };
        pairs.push((key, value, line));
    }
    Ok(pairs)
}

/// A parse failure: the line number and why.
type LineError = (usize, String);

/// `key: value` lines of a flat YAML mapping (what rcon-cli's config holds): comments, `---`,
/// quoted and plain scalars. Anything nested, a list, a block scalar, an anchor or a flow
/// collection is refused rather than misread.
fn yaml_pairs(text: &str) -> Result<Vec<Pair>, LineError> {
    let mut pairs = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') || t == "---" || t == "..." {
            continue;
        }
        let flat = || (n, "only flat `key: value` lines are read".to_string());
        if line.starts_with([' ', '\t']) || t.starts_with('-') {
            return Err(flat());
        }
        let Some((key, rest)) = t.split_once(':') else {
            return Err(flat());
        };
        // YAML needs a space after the colon (`host:25575` would be one plain scalar).
        if !(rest.is_empty() || rest.starts_with([' ', '\t'])) {
            return Err(flat());
        }
        let value = yaml_value(rest.trim()).map_err(|why| (n, why))?;
        pairs.push((key.trim().to_string(), value, n));
    }
    Ok(pairs)
}

/// One YAML scalar: `"..."` (backslash escapes), `'...'` (`''` is a quote) or plain text up
/// to a ` #` comment; `~` and `null` are empty.
fn yaml_value(v: &str) -> Result<String, String> {
    if let Some(body) = v.strip_prefix('"') {
        let mut out = String::new();
        let mut chars = body.chars();
        while let Some(c) = chars.next() {
            match c {
                '"' => return after_quote(chars.as_str()).map(|()| out),
                '\\' => out.push(match chars.next() {
                    Some('n') => '\n',
                    Some('t') => '\t',
                    Some(c @ ('"' | '\\' | '/')) => c,
                    _ => return Err("unsupported escape in a quoted value".into()),
                }),
                c => out.push(c),
            }
        }
        return Err("unclosed \"".into());
    }
    if let Some(body) = v.strip_prefix('\'') {
        let mut out = String::new();
        let mut rest = body;
        loop {
            let Some(at) = rest.find('\'') else {
                return Err("unclosed '".into());
            };
            out.push_str(&rest[..at]);
            rest = &rest[at + 1..];
            match rest.strip_prefix('\'') {
                Some(after) => {
                    out.push('\'');
                    rest = after;
                }
                None => return after_quote(rest).map(|()| out),
            }
        }
    }
    if v.starts_with(['{', '[', '|', '>', '&', '*', '!', '@', '`']) {
        return Err(format!(
            "'{v}' is not a plain value (only flat `key: value` lines are read)"
        ));
    }
    let plain = match v.find(" #") {
        Some(at) => v[..at].trim_end(),
        None => v,
    };
    Ok(match plain {
        "~" | "null" | "Null" | "NULL" => String::new(),
        other => other.to_string(),
    })
}

/// After a closing quote only a comment may follow.
fn after_quote(rest: &str) -> Result<(), String> {
    let rest = rest.trim_start();
    if rest.is_empty() || rest.starts_with('#') {
        Ok(())
    } else {
        Err(format!("unexpected '{rest}' after the quoted value"))
    }
}

/// `key=value` lines (`export ` allowed, `#` comments, `"..."` and `'...'` values).
fn dotenv_pairs(text: &str) -> Result<Vec<Pair>, LineError> {
    let mut pairs = Vec::new();
    for (n, line) in text.lines().enumerate() {
        let n = n + 1;
        let t = line.trim();
        if t.is_empty() || t.starts_with('#') {
            continue;
        }
        let t = t.strip_prefix("export ").unwrap_or(t);
        let Some((key, value)) = t.split_once('=') else {
            return Err((n, "expected key=value".into()));
        };
        let value = value.trim();
        let value = if value.starts_with(['"', '\'']) {
            yaml_value(value).map_err(|why| (n, why))?
        } else {
            match value.find(" #") {
                Some(at) => value[..at].trim_end().to_string(),
                None => value.to_string(),
            }
        };
        pairs.push((key.trim().to_string(), value, n));
    }
    Ok(pairs)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_with(
        vars: &'static [(&'static str, &'static str)],
        home: Option<PathBuf>,
    ) -> Env<'static> {
        Env {
            var: Box::leak(Box::new(move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            })),
            home,
            stdin_tty: true,
        }
    }

    fn argv_in(args: &[&str], env: &Env) -> Vec<String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        translate(&args, env)
            .expect("translates")
            .argv
            .iter()
            .map(|a| a.to_str().unwrap().to_string())
            .collect()
    }

    fn argv(args: &[&str]) -> Vec<String> {
        argv_in(args, &env_with(&[], None))
    }

    #[test]
    fn words_are_one_command_and_flags_go_anywhere() {
        assert_eq!(
            argv(&["--host", "mc1", "--port=25575", "say", "hello", "world"]),
            [
                "rcon",
                "--no-config",
                "--host=mc1",
                "--port=25575",
                "--",
                "say",
                "hello",
                "world"
            ]
        );
        // cobra takes its flags after words too; other dash words after the first word belong
        // to the command (rcon's rule).
        let a = argv(&["tp", "@p", "0", "-60", "0", "--password", "pw"]);
        assert!(a.contains(&"--password=pw".to_string()), "{a:?}");
        assert!(a.ends_with(&["--", "tp", "@p", "0", "-60", "0"].map(String::from)));
    }

    #[test]
    fn defaults_are_rcon_clis() {
        let a = argv(&["list"]);
        assert!(a.contains(&"--host=localhost".to_string()), "{a:?}");
        // 25575 since rcon-cli 1.6.0 (its README's usage text still says 27015).
        assert!(a.contains(&"--port=25575".to_string()), "{a:?}");
        // No words: no command (the console or piped lines).
        assert!(!argv(&[]).contains(&"--".to_string()));
    }

    #[test]
    fn environment_then_config_file() {
        let home = tempfile::tempdir().unwrap();
        std::fs::write(
            home.path().join(".rcon-cli.yaml"),
            "# itzg writes this\nhost: filehost\nport: 25575\npassword: \"file pw\"\n",
        )
        .unwrap();
        let from_file = argv_in(&["list"], &env_with(&[], Some(home.path().into())));
        for want in ["--host=filehost", "--port=25575", "--password=file pw"] {
            assert!(from_file.contains(&want.to_string()), "{from_file:?}");
        }
        let vars: &[(&str, &str)] = &[("RCON_PORT", "1111"), ("RCON_PASSWORD", "envpw")];
        let a = argv_in(
            &["--password", "flagpw", "list"],
            &env_with(vars, Some(home.path().into())),
        );
        for want in ["--host=filehost", "--port=1111", "--password=flagpw"] {
            assert!(a.contains(&want.to_string()), "{a:?}");
        }
    }

    #[test]
    fn dotenv_config_and_explicit_path() {
        let dir = tempfile::tempdir().unwrap();
        let env_file = dir.path().join(".rcon-cli.env");
        std::fs::write(&env_file, "password=s3cret\nport=25575 # itzg\n").unwrap();
        // Found in the home directory...
        let a = argv_in(&["list"], &env_with(&[], Some(dir.path().into())));
        assert!(a.contains(&"--password=s3cret".to_string()), "{a:?}");
        assert!(a.contains(&"--port=25575".to_string()), "{a:?}");
        // ...or named.
        let named = env_file.to_str().unwrap();
        let a = argv(&["--config", named, "list"]);
        assert!(a.contains(&"--password=s3cret".to_string()), "{a:?}");
    }

    #[test]
    fn home_files_in_vipers_order_and_its_formats() {
        let home = tempfile::tempdir().unwrap();
        let env = env_with(&[], Some(home.path().into()));
        std::fs::write(home.path().join(".rcon-cli.env"), "port=1111\n").unwrap();
        std::fs::write(home.path().join(".rcon-cli.yml"), "port: 2222\n").unwrap();
        assert!(argv_in(&["list"], &env).contains(&"--port=2222".to_string()));
        std::fs::write(
            home.path().join(".rcon-cli.toml"),
            "Port = 3333\npassword = 'p w'\n[other]\nport = 9\n",
        )
        .unwrap();
        let a = argv_in(&["list"], &env);
        assert!(a.contains(&"--port=3333".to_string()), "{a:?}");
        assert!(a.contains(&"--password=p w".to_string()), "{a:?}");
        std::fs::write(
            home.path().join(".rcon-cli.json"),
            r#"{"port": 4444, "host": "h", "extra": {"a": [1]}}"#,
        )
        .unwrap();
        let a = argv_in(&["list"], &env);
        assert!(a.contains(&"--port=4444".to_string()), "{a:?}");
        assert!(a.contains(&"--host=h".to_string()), "{a:?}");
        // The first found is the one read, even in a format rcon does not read.
        let dir = tempfile::tempdir().unwrap();
        std::fs::write(dir.path().join(".rcon-cli.ini"), "port=1\n").unwrap();
        std::fs::write(dir.path().join(".rcon-cli.hcl"), "port = 1\n").unwrap();
        let args = vec!["list".to_string()];
        let env = env_with(&[], Some(dir.path().into()));
        assert!(
            matches!(translate(&args, &env), Err(TranslationEnd::Fail(m)) if m.contains(".rcon-cli.hcl"))
        );
    }

    #[test]
    fn json_and_toml_values() {
        assert_eq!(
            json_pairs("{\n\"host\": \"a\",\n\"port\": 1}").unwrap(),
            [
                ("host".into(), "a".into(), 2),
                ("port".into(), "1".into(), 3)
            ]
        );
        assert_eq!(json_pairs("{\"password\": [1]}").unwrap_err().0, 1);
        assert_eq!(json_pairs("{\n\"port\": }").unwrap_err().0, 2);
        assert_eq!(
            toml_pairs("host = 'a'\nPORT = 2\n").unwrap(),
            [
                ("PORT".into(), "2".into(), 2),
                ("host".into(), "a".into(), 1)
            ]
        );
        assert_eq!(toml_pairs("a = 1\nport = \n").unwrap_err().0, 2);
        assert_eq!(toml_pairs("[host]\nx = 1\n").unwrap_err().0, 1);
    }

    #[test]
    fn config_file_errors_are_reported() {
        let dir = tempfile::tempdir().unwrap();
        let bad = dir.path().join("c.yaml");
        std::fs::write(&bad, "rcon:\n  host: nested\n").unwrap();
        let args = vec!["--config".to_string(), bad.to_str().unwrap().to_string()];
        let env = env_with(&[], None);
        assert!(
            matches!(translate(&args, &env), Err(TranslationEnd::Fail(m)) if m.contains("c.yaml:2"))
        );
        let missing = vec!["--config=/no/such/file.yaml".to_string()];
        assert!(
            matches!(translate(&missing, &env), Err(TranslationEnd::Fail(m)) if m.contains("cannot read"))
        );
        let ini = vec!["--config=x.ini".to_string()];
        assert!(
            matches!(translate(&ini, &env), Err(TranslationEnd::Fail(m)) if m.contains("only YAML"))
        );
        std::fs::write(&bad, "port: abc\n").unwrap();
        assert!(
            matches!(translate(&args, &env), Err(TranslationEnd::Fail(m)) if m.contains("c.yaml:1"))
        );
    }

    #[test]
    fn yaml_values() {
        assert_eq!(yaml_value("plain # note"), Ok("plain".into()));
        assert_eq!(yaml_value("\"a \\\" b\" # c"), Ok("a \" b".into()));
        assert_eq!(yaml_value("'it''s'"), Ok("it's".into()));
        assert_eq!(yaml_value("~"), Ok(String::new()));
        assert_eq!(yaml_value("p#w"), Ok("p#w".into()));
        for bad in ["\"open", "'open", "[a]", "{a: b}", "|", "\"x\" y"] {
            assert!(yaml_value(bad).is_err(), "{bad}");
        }
        assert!(yaml_pairs("a:b\n").is_err());
        assert!(yaml_pairs("- a\n").is_err());
        assert_eq!(
            yaml_pairs("---\nHost: h\n").unwrap(),
            [("Host".into(), "h".into(), 2)]
        );
    }

    #[test]
    fn bad_lines() {
        let fail = |args: &[&str]| {
            let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
            match translate(&args, &env_with(&[], None)) {
                Err(TranslationEnd::Fail(m)) => m,
                other => panic!("{other:?}"),
            }
        };
        assert!(fail(&["--bogus", "list"]).contains("no flag --bogus"));
        assert!(fail(&["-x"]).contains("no flag -x"));
        assert!(fail(&["list", "--port"]).contains("needs a value"));
        assert!(fail(&["--port", "x"]).contains("not a port number"));
    }
}
