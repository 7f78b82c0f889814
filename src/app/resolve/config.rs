//! The configuration file: where it lives, its TOML model (named server profiles under
//! `[servers.NAME]`), and load errors that name the file, line and key (exit status 3).
//!
//! Adding a profile key: add an `Option<Spanned<T>>` field to [`Profile`] (serde rejects unknown
//! keys, so nothing else is needed for parsing), then pick it up in `settings::resolve`.

use std::collections::BTreeMap;
use std::ops::Range;
use std::path::{Path, PathBuf};
use std::time::Duration;

use clap::ValueEnum;
use serde::{Deserialize, Deserializer};
use toml::Spanned;

use crate::app::exit::{Exit, fail};
use crate::app::resolve::args::{DialectArg, SentinelArg};

/// The file name inside the configuration directory.
pub const FILE_NAME: &str = "config.toml";

/// The variable that overrides the directory of the default configuration file. Unlike
/// `RCON_CONFIG` the file there may be missing, so it moves the default path itself: Windows
/// ignores `APPDATA` when it looks up known folders, and this is how tests (and portable
/// installs) keep the default config private on every platform (issue 12).
pub const CONFIG_DIR_ENV: &str = "RCON_CONFIG_DIR";

/// The default configuration file: `config.toml` in `RCON_CONFIG_DIR` when set and not empty,
/// else in the platform's configuration directory for `rconsole` (`$XDG_CONFIG_HOME/rconsole`
/// or `~/.config/rconsole` on Linux and BSD, `~/Library/Application Support/rconsole` on macOS,
/// `%APPDATA%\rconsole\config` on Windows). `None` when the platform has no home directory.
pub fn default_path() -> Option<PathBuf> {
    if let Some(dir) = std::env::var_os(CONFIG_DIR_ENV).filter(|p| !p.is_empty()) {
        return Some(PathBuf::from(dir).join(FILE_NAME));
    }
    directories::ProjectDirs::from("", "", "rconsole").map(|d| d.config_dir().join(FILE_NAME))
}

/// The whole file.
#[derive(Debug, Default, Deserialize)]
#[serde(deny_unknown_fields)]
struct ConfigToml {
    /// Named server profiles.
    #[serde(default)]
    servers: BTreeMap<String, Spanned<Profile>>,
}

/// One `[servers.NAME]` table. Every key is optional; each keeps its position in the file so
/// `--print-config` and errors can point at it.
#[derive(Debug, Clone, Default, Deserialize)]
#[serde(deny_unknown_fields)]
// The mgmt_* keys are read only with the `mgmt` feature (and still accepted without it).
#[cfg_attr(not(feature = "mgmt"), allow(dead_code))]
pub struct Profile {
    /// Host name or address; `HOST:PORT` is accepted.
    pub host: Option<Spanned<String>>,
    /// RCON port.
    pub port: Option<Spanned<PortValue>>,
    /// The password itself (the file should then be readable only by its owner).
    pub password: Option<Spanned<SecretText>>,
    /// A file holding the password (trailing newline stripped); relative to the config file's
    /// directory, `~/` expands to the home directory.
    pub password_file: Option<Spanned<String>>,
    /// A shell command printing the password (`sh -c` on Unix, `cmd /C` on Windows).
    pub password_command: Option<Spanned<String>>,
    /// Time limit, as `"5s"`, `"500ms"` or a number of seconds.
    pub timeout: Option<Spanned<DurationValue>>,
    /// End-of-output detection: detect, negative, positive, idle, auto.
    pub sentinel: Option<Spanned<Choice<SentinelArg>>>,
    /// The silence that ends an output without a sentinel.
    pub idle_gap: Option<Spanned<DurationValue>>,
    /// The server family: minecraft, source, factorio, palworld.
    pub dialect: Option<Spanned<Choice<DialectArg>>>,
    /// `true`: as `--forget` on every run, what was learned about the server is not used.
    pub forget: Option<Spanned<bool>>,
    /// Reach the server through `ssh -W`: `[USER@]HOST[:PORT]`.
    pub ssh: Option<Spanned<String>>,
    /// ssh_config options for `ssh`, e.g. `["IdentityFile=~/.ssh/mc"]`.
    pub ssh_options: Option<Spanned<Vec<String>>>,
    /// A command connecting stdin/stdout to the server (`%h`, `%p`, `%%`).
    pub proxy_command: Option<Spanned<String>>,
    /// With `ssh`: run rcon on the SSH host and stream the commands to it (`--remote`).
    pub remote: Option<Spanned<bool>>,
    /// The program `remote` runs on the SSH host (`--remote-rcon`).
    pub remote_rcon: Option<Spanned<String>>,
    /// With `remote`: copy this rcon to the SSH host when it has none (`--remote-install`).
    pub remote_install: Option<Spanned<bool>>,
    /// `false`: as `--no-ssh-reuse`, one SSH connection per run.
    pub ssh_reuse: Option<Spanned<bool>>,
    /// Makes this profile a group: the names of other profiles, all run at once.
    pub servers: Option<Spanned<Vec<String>>>,
    /// The management protocol's URL for `--mgmt` (`wss://HOST:PORT`).
    pub mgmt_url: Option<Spanned<String>>,
    /// The management protocol's URL, and that this server is reached over it without
    /// `--mgmt`: commands are typed as usual and run through a server mod's command method
    /// (issue 42).
    pub mgmt: Option<Spanned<String>>,
    /// A PEM certificate to trust for `--mgmt` (relative to the config file's directory).
    pub mgmt_cert: Option<Spanned<String>>,
    /// The SHA-256 fingerprint of the management server's certificate, to pin it.
    pub mgmt_fingerprint: Option<Spanned<String>>,
    /// The `Origin` header to send to the management server.
    pub mgmt_origin: Option<Spanned<String>>,
    /// A file holding the management secret (else the password sources apply).
    pub mgmt_secret_file: Option<Spanned<String>>,
    /// A shell command printing the management secret.
    pub mgmt_secret_command: Option<Spanned<String>>,
}

impl Profile {
    /// Whether the profile holds a password in the file itself.
    pub fn has_password(&self) -> bool {
        self.password.is_some()
    }
}

/// A password from the file. Its `Debug` never shows it, and a value of the wrong type is
/// reported without echoing it.
#[derive(Clone)]
pub struct SecretText(pub String);

impl std::fmt::Debug for SecretText {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("SecretText(****)")
    }
}

impl<'de> Deserialize<'de> for SecretText {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        match toml::Value::deserialize(d) {
            Ok(toml::Value::String(s)) => Ok(SecretText(s)),
            // Never put the value in the message: it is (a mistyped) password.
            Ok(other) => Err(serde::de::Error::custom(format!(
                "expected a quoted string, found {}",
                a_kind(&other)
            ))),
            Err(_) => Err(serde::de::Error::custom("expected a quoted string")),
        }
    }
}

/// A duration: `"5s"`, `"500ms"`, `"1.5s"`, `"2m"`, or a number of seconds.
#[derive(Debug, Clone, Copy)]
pub struct DurationValue(pub Duration);

impl<'de> Deserialize<'de> for DurationValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = match toml::Value::deserialize(d)? {
            toml::Value::String(s) => s,
            toml::Value::Integer(i) => i.to_string(),
            toml::Value::Float(f) => f.to_string(),
            other => {
                return Err(serde::de::Error::custom(format!(
                    "expected a duration such as \"5s\" or \"500ms\", found {}",
                    a_kind(&other)
                )));
            }
        };
        crate::app::resolve::values::parse_duration(&text)
            .map(DurationValue)
            .map_err(serde::de::Error::custom)
    }
}

/// A port, 1 to 65535, as a number or a quoted number; anything else is reported in words
/// (serde's own message names the Rust type: "expected u16").
#[derive(Debug, Clone, Copy)]
pub struct PortValue(pub u16);

impl<'de> Deserialize<'de> for PortValue {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let value = toml::Value::deserialize(d)?;
        let port = match &value {
            toml::Value::Integer(i) => u16::try_from(*i).ok().filter(|p| *p > 0),
            toml::Value::String(s) => s.trim().parse::<u16>().ok().filter(|p| *p > 0),
            _ => None,
        };
        port.map(PortValue).ok_or_else(|| {
            let found = match &value {
                toml::Value::Integer(i) => i.to_string(),
                toml::Value::String(s) => format!("\"{s}\""),
                other => a_kind(other).to_string(),
            };
            serde::de::Error::custom(format!(
                "expected a port number from 1 to 65535, found {found}"
            ))
        })
    }
}

/// A TOML value's kind with its article, for messages: "an integer", "a table".
fn a_kind(value: &toml::Value) -> &'static str {
    match value {
        toml::Value::String(_) => "a string",
        toml::Value::Integer(_) => "an integer",
        toml::Value::Float(_) => "a decimal number",
        toml::Value::Boolean(_) => "a boolean (true or false)",
        toml::Value::Datetime(_) => "a date",
        toml::Value::Array(_) => "an array",
        toml::Value::Table(_) => "a table",
    }
}

/// A value out of a closed set (`sentinel`, `dialect`), checked against the names the matching
/// flag accepts.
#[derive(Debug, Clone, Copy)]
pub struct Choice<T>(pub T);

impl<'de, T: ValueEnum> Deserialize<'de> for Choice<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        T::from_str(&text, false).map(Choice).map_err(|_| {
            let names: Vec<String> = T::value_variants()
                .iter()
                .filter_map(|v| v.to_possible_value().map(|p| p.get_name().to_string()))
                .collect();
            serde::de::Error::custom(format!(
                "unknown value '{text}' (one of: {})",
                names.join(", ")
            ))
        })
    }
}

/// A loaded configuration file.
#[derive(Debug, Clone)]
pub struct ParsedConfig {
    /// Where it was read from.
    pub path: PathBuf,
    /// Start offset of each line, to turn spans into line numbers.
    line_starts: Vec<usize>,
    /// The profiles by name.
    pub servers: BTreeMap<String, Spanned<Profile>>,
}

impl ParsedConfig {
    /// Reads and checks the file. Every problem is a configuration error (exit status 3) naming
    /// the file and, for content errors, the line and key.
    pub fn load(path: &Path) -> anyhow::Result<ParsedConfig> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            fail(
                Exit::Config,
                format!("cannot read config file {}: {e}", path.display()),
            )
        })?;
        Self::parse(path, &text)
    }

    /// Parses `text` as if read from `path`.
    pub fn parse(path: &Path, text: &str) -> anyhow::Result<ParsedConfig> {
        let model: ConfigToml =
            toml::from_str(text).map_err(|e| fail(Exit::Config, describe_error(path, text, &e)))?;
        let config = ParsedConfig {
            path: path.to_path_buf(),
            line_starts: line_starts(text),
            servers: model.servers,
        };
        for (name, profile) in &config.servers {
            let p = profile.get_ref();
            let given: Vec<(&str, Range<usize>)> = [
                ("password", p.password.as_ref().map(|s| s.span())),
                ("password_file", p.password_file.as_ref().map(|s| s.span())),
                (
                    "password_command",
                    p.password_command.as_ref().map(|s| s.span()),
                ),
            ]
            .into_iter()
            .filter_map(|(k, s)| s.map(|s| (k, s)))
            .collect();
            if given.len() > 1 {
                let (key, span) = &given[1];
                return Err(fail(
                    Exit::Config,
                    format!(
                        "{}: key '{key}' in [servers.{name}]: give only one of password, password_file, password_command",
                        config.at(span.clone())
                    ),
                ));
            }
        }
        Ok(config)
    }

    /// The 1-based line of a byte offset.
    pub fn line(&self, offset: usize) -> usize {
        self.line_starts.partition_point(|&s| s <= offset)
    }

    /// `path:line` for a span.
    pub fn at(&self, span: Range<usize>) -> String {
        format!("{}:{}", self.path.display(), self.line(span.start))
    }

    /// Whether any profile holds a password in the file itself.
    pub fn holds_password(&self) -> bool {
        self.servers.values().any(|p| p.get_ref().has_password())
    }

    /// The profile names, sorted.
    pub fn names(&self) -> Vec<&str> {
        self.servers.keys().map(String::as_str).collect()
    }
}

fn line_starts(text: &str) -> Vec<usize> {
    std::iter::once(0)
        .chain(text.match_indices('\n').map(|(i, _)| i + 1))
        .collect()
}

/// One line for a TOML error: `path:line: key 'k' in [table]: message`.
fn describe_error(path: &Path, text: &str, err: &toml::de::Error) -> String {
    let message = err
        .message()
        .lines()
        .next()
        .unwrap_or("invalid TOML")
        .trim();
    let Some(span) = err.span() else {
        return format!("{}: {message}", path.display());
    };
    let starts = line_starts(text);
    let line_no = starts.partition_point(|&s| s <= span.start);
    let line_text = text[starts[line_no - 1]..]
        .lines()
        .next()
        .unwrap_or("")
        .trim();
    let table = text[..starts[line_no - 1]]
        .lines()
        .rev()
        .map(str::trim)
        .find(|l| l.starts_with('['))
        .map(|l| l.split('#').next().unwrap_or(l).trim());
    let in_table = table.map(|t| format!(" in {t}")).unwrap_or_default();
    let at = format!("{}:{line_no}", path.display());
    if let Some(rest) = message.strip_prefix("unknown field `")
        && line_text.starts_with('[')
    {
        // A table header at the top level (`[server.b]`): not a key of the table above it.
        let key = rest.split_once('`').map_or(rest, |(k, _)| k);
        return format!(
            "{at}: unknown table {line_text} (top-level key '{key}'); profiles are [servers.NAME]"
        );
    }
    if let Some(rest) = message.strip_prefix("unknown field `") {
        // serde: "unknown field `hots`, expected one of `host`, `port`, ..."
        let (key, expected) = rest.split_once('`').unwrap_or((rest, ""));
        let expected = expected.trim_start_matches(',').trim();
        return format!("{at}: unknown key '{key}'{in_table}; {expected}");
    }
    if line_text.starts_with('[') {
        return format!("{at}: {line_text}: {message}");
    }
    match line_text.split_once('=') {
        Some((key, _)) => {
            let key = key.trim();
            format!("{at}: key '{key}'{in_table}: {message}")
        }
        None => format!("{at}: {message}"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parse(text: &str) -> anyhow::Result<ParsedConfig> {
        ParsedConfig::parse(Path::new("/cfg/config.toml"), text)
    }

    fn error(text: &str) -> String {
        let err = parse(text).unwrap_err();
        assert_eq!(crate::app::exit::exit_for(&err), Exit::Config);
        format!("{err:#}")
    }

    #[test]
    fn profiles_with_lines() {
        let c = parse(
            "# servers\n[servers.survival]\nhost = \"mc.example.com\"\nport = 25576\n\n[servers.default]\ntimeout = \"5s\"\nsentinel = \"idle\"\nidle_gap = 0.5\n",
        )
        .unwrap();
        assert_eq!(c.names(), ["default", "survival"]);
        let s = c.servers["survival"].get_ref();
        assert_eq!(s.host.as_ref().unwrap().get_ref(), "mc.example.com");
        assert_eq!(c.at(s.port.as_ref().unwrap().span()), "/cfg/config.toml:4");
        let d = c.servers["default"].get_ref();
        assert_eq!(
            d.timeout.as_ref().unwrap().get_ref().0,
            Duration::from_secs(5)
        );
        assert_eq!(d.sentinel.as_ref().unwrap().get_ref().0, SentinelArg::Idle);
        assert_eq!(
            d.idle_gap.as_ref().unwrap().get_ref().0,
            Duration::from_millis(500)
        );
        assert!(!c.holds_password());
    }

    #[test]
    fn empty_file_is_fine() {
        assert!(parse("").unwrap().servers.is_empty());
    }

    #[test]
    fn unknown_key_names_file_line_key_and_table() {
        let e = error("[servers.a]\nhost = \"x\"\n\n[servers.survival]\nhots = \"y\"\n");
        assert!(
            e.starts_with("/cfg/config.toml:5: unknown key 'hots' in [servers.survival]"),
            "{e}"
        );
        assert!(e.contains("`host`"), "{e}");
    }

    #[test]
    fn unknown_top_level_table() {
        let e = error("[server.a]\nhost = \"x\"\n");
        assert!(
            e.starts_with("/cfg/config.toml:1: unknown table [server.a] (top-level key 'server')"),
            "{e}"
        );
    }

    #[test]
    fn bad_values_name_the_key() {
        let e = error("[servers.a]\nport = 70000\n");
        assert!(
            e.starts_with("/cfg/config.toml:2: key 'port' in [servers.a]:"),
            "{e}"
        );
        let e = error("[servers.a]\ntimeout = \"soon\"\n");
        assert!(e.starts_with("/cfg/config.toml:2: key 'timeout'"), "{e}");
        let e = error("[servers.a]\nsentinel = \"sometimes\"\n");
        assert!(e.contains("one of: detect, negative"), "{e}");
    }

    #[test]
    fn bad_password_value_is_not_echoed() {
        let e = error("[servers.a]\npassword = 987654321\n");
        assert!(e.starts_with("/cfg/config.toml:2: key 'password'"), "{e}");
        assert!(!e.contains("987654321"), "{e}");
    }

    #[test]
    fn syntax_error_has_a_line() {
        let e = error("[servers.a]\nhost = \n");
        assert!(e.starts_with("/cfg/config.toml:2:"), "{e}");
        assert!(!e.contains('\n'), "one line: {e}");
    }

    #[test]
    fn one_password_source_per_profile() {
        let e = error("[servers.a]\npassword = \"x\"\npassword_file = \"/p\"\n");
        assert!(
            e.starts_with("/cfg/config.toml:3: key 'password_file'"),
            "{e}"
        );
        assert!(!e.contains("\"x\""));
    }

    #[test]
    fn password_debug_is_masked() {
        let c = parse("[servers.a]\npassword = \"s3cret\"\n").unwrap();
        assert!(c.holds_password());
        assert!(!format!("{c:?}").contains("s3cret"));
    }
}
