//! `rcon --mgmt`: the Minecraft Server Management Protocol from the command line. Resolves the
//! URL, secret, certificate trust and Origin (flags, environment, profile), connects, reads
//! `rpc.discover`, maps COMMAND words onto a method, and prints results as text or `--json`
//! through one [`MgmtPrinter`]; with no COMMAND, a console with tab completion of method names
//! ([`MgmtSession`], [`interactive`]), or method lines from stdin. The calls given (`-c` and
//! the words) and stdin's lines run on the event loop, one server as several do
//! (`crate::app::mode::mgmt_fleet::single`, under the one policy of its handler: `--delay`,
//! `--echo`, `--keep-going`, Ctrl-C, `--retry` for the connect).
//! `--follow` takes the server's notifications on the event loop
//! ([`crate::app::mode::mgmt_fleet::follow`], as several servers' calls run), and so do
//! `--countdown`/`--every`/`--if`, on RCON's schedule ([`crate::app::mode::mgmt_fleet::timed`]).
//! On a server whose `rpc.discover` offers a command method (issue 42), words that name no
//! method are console commands: one server's commands, files, stdin and console run on RCON's
//! session path ([`run_commands`]), several servers' through the same [`MgmtPrinter`], which
//! prints their feedback as RCON's records.

use std::path::PathBuf;
use std::time::Duration;

use rconsole::Password;
use rconsole::mgmt::command::{self, CommandMethod, MgmtRemote, Reconnect};
use rconsole::mgmt::{self, ConnectOptions, Endpoint, MgmtClient, Schema, Trust};
use rconsole::transport::Connector;
use serde_json::{Value, json};

use crate::app::exit::{Exit, fail};
use crate::app::print::output::{Printer, Style};
use crate::app::print::stderr;
use crate::app::resolve::plan::{MgmtPlan, PracticePlan, SessionPlan};
use crate::app::resolve::secrets::{self, Secret};
use crate::app::resolve::settings::{self, Settings};
use crate::app::runner::commands::{Failure, Ran};
use crate::app::runner::session::PARSE_ERROR;

/// Where and how to connect, resolved but not connected.
pub struct MgmtTarget {
    /// The server's URL.
    pub endpoint: Endpoint,
    /// TCP, or the profile's tunnel.
    pub connector: std::sync::Arc<dyn Connector>,
    /// Secret, trust, Origin, timeout.
    pub opts: ConnectOptions,
    /// A name for messages and prefixes: the profile, else the URL.
    pub name: String,
}

/// The exit status for a management error.
pub fn exit_of(e: &mgmt::MgmtError) -> Exit {
    use mgmt::MgmtError as E;
    match e {
        E::Url { .. } | E::UnknownMethod { .. } | E::BadArgument { .. } => Exit::Usage,
        E::Trust(_) => Exit::Config,
        E::Connect(c) => Exit::from_error(c),
        E::Tls { .. } => Exit::Connect,
        E::Unauthorized { .. } => Exit::Login,
        E::Timeout { .. } => Exit::Timeout,
        E::Cancelled => Exit::Interrupted,
        E::Rpc { .. } => Exit::CommandFailed,
        _ => Exit::Connection,
    }
}

/// What helps when the server refuses the secret.
pub const UNAUTHORIZED_HINT: &str = "; check the secret (RCON_MGMT_SECRET, --mgmt-secret-file, the profile's mgmt_secret_file or mgmt_secret_command) against the server's management-server-secret";

/// What helps when the server's certificate is not trusted.
pub const UNTRUSTED_HINT: &str =
    "; to trust a self-signed certificate, give --mgmt-cert FILE or --mgmt-fingerprint SHA256";

/// Whether a failure of the event loop's [`rconsole::mgmt::machine::MgmtMachine`] is TLS
/// refusing the server's certificate (the machine's TLS failures are rustls's verdict on what
/// the server sent, but for a close during the handshake), which [`UNTRUSTED_HINT`] helps.
pub fn untrusted(e: &rconsole::Error) -> bool {
    let text = e.to_string();
    matches!(e, rconsole::Error::Management { .. })
        && text.starts_with("TLS with ")
        && !text.contains("closed the connection during the handshake")
}

/// A management error as an application error with its exit status, and the flag that helps.
pub fn error(e: mgmt::MgmtError) -> anyhow::Error {
    let hint = match &e {
        mgmt::MgmtError::Tls { source, .. } if source.kind() == std::io::ErrorKind::InvalidData => {
            UNTRUSTED_HINT
        }
        mgmt::MgmtError::Unauthorized { .. } => UNAUTHORIZED_HINT,
        _ => "",
    };
    fail(exit_of(&e), format!("{e}{hint}"))
}

/// The profile this run uses, if any.
fn profile(
    settings: &Settings,
) -> Option<(&crate::app::resolve::config::Profile, Option<PathBuf>)> {
    let name = settings.profile.as_ref()?;
    let config = settings.config.config()?;
    let p = config.servers.get(&name.value)?;
    Some((p.get_ref(), config.path.parent().map(|p| p.to_path_buf())))
}

/// Resolves URL, secret, trust and Origin: flags and environment first, then the profile.
pub fn resolve(plan: &MgmtPlan, settings: &Settings) -> anyhow::Result<MgmtTarget> {
    let url = plan.url.as_deref();
    let prof = profile(settings);
    let p = prof.as_ref().map(|(p, _)| *p);
    let base = prof.as_ref().and_then(|(_, b)| b.clone());
    let key = |f: fn(&crate::app::resolve::config::Profile) -> &Option<toml::Spanned<String>>| {
        p.and_then(|p| f(p).as_ref()).map(|s| s.get_ref().clone())
    };
    let url = match url {
        Some(u) => u.to_string(),
        _ => key(|p| &p.mgmt_url)
            .or_else(|| key(|p| &p.mgmt))
            .ok_or_else(|| {
                fail(
                    Exit::Usage,
                    "--mgmt needs a URL: --mgmt wss://HOST:PORT, or a profile's mgmt_url",
                )
            })?,
    };
    let endpoint = Endpoint::parse(&url).map_err(error)?;
    let trust = if let Some(path) = &plan.cert {
        read_cert(path)?
    } else if let Some(fp) = &plan.fingerprint {
        Trust::from_fingerprint(fp).map_err(error)?
    } else if let Some(path) = key(|p| &p.mgmt_cert) {
        read_cert(&secrets::resolve_path(&path, base.as_deref()))?
    } else if let Some(fp) = key(|p| &p.mgmt_fingerprint) {
        Trust::from_fingerprint(&fp).map_err(error)?
    } else {
        Trust::PublicRoots
    };
    let origin = plan.origin.clone().or_else(|| key(|p| &p.mgmt_origin));
    let secret = if let Some(s) = std::env::var("RCON_MGMT_SECRET")
        .ok()
        .filter(|s| !s.is_empty())
    {
        Password::new(s)
    } else if let Some(f) = plan
        .secret_file
        .as_ref()
        .filter(|f| !f.as_os_str().is_empty())
    {
        secrets::obtain(&Secret::File(f.clone()), "--mgmt-secret-file", &url)?
    } else if let Some(f) = key(|p| &p.mgmt_secret_file) {
        let path = secrets::resolve_path(&f, base.as_deref());
        secrets::obtain(&Secret::File(path), "profile mgmt_secret_file", &url)?
    } else if let Some(c) = key(|p| &p.mgmt_secret_command) {
        secrets::obtain(&Secret::Command(c), "profile mgmt_secret_command", &url)?
    } else if settings.password.is_none() && !secrets::can_prompt() {
        return Err(fail(
            Exit::Usage,
            "no management secret given and no terminal to ask for one: use RCON_MGMT_SECRET, \
--mgmt-secret-file FILE, a profile's mgmt_secret_file or mgmt_secret_command, or a password \
source (--password-file, RCON_PASSWORD, a profile's password keys)",
        ));
    } else {
        settings.password()?
    };
    // Over loopback, a Unix socket or an SSH tunnel the secret crosses no network in clear
    // text.
    let loopback = endpoint.host == "localhost"
        || endpoint
            .host
            .parse::<std::net::IpAddr>()
            .is_ok_and(|ip| ip.is_loopback());
    if !(endpoint.tls || loopback || settings.ssh.is_some()) {
        crate::app::print::output::warning(&format!(
            "{url} is not TLS: the secret crosses the network in clear text (use wss://, or a tunnel)"
        ));
    }
    let connector = connector(&endpoint, settings)?;
    let name = match &settings.profile {
        Some(p) if p.source != settings::Source::Default => p.value.clone(),
        _ => endpoint.url(),
    };
    Ok(MgmtTarget {
        endpoint,
        connector,
        opts: ConnectOptions {
            secret,
            origin,
            trust,
            timeout: settings.timeout.value,
            trace: plan.trace.then_some(trace_message as fn(&str, &str)),
            cancel: None,
        },
        name,
    })
}

/// How the server is reached: its Unix socket for a `unix:` URL (no tunnel carries one), else
/// TCP or the settings' tunnel.
fn connector(
    endpoint: &Endpoint,
    settings: &Settings,
) -> anyhow::Result<std::sync::Arc<dyn Connector>> {
    #[cfg(unix)]
    if let Some(path) = &endpoint.unix {
        if settings.ssh.is_some() || settings.proxy_command.is_some() {
            return Err(fail(
                Exit::Usage,
                "a unix: management URL is a socket on this machine: --ssh and --proxy-command cannot carry it",
            ));
        }
        return Ok(std::sync::Arc::new(
            rconsole::transport::unix::UnixConnector::new(path),
        ));
    }
    Ok(std::sync::Arc::from(settings::connector(
        settings.ssh.as_ref().map(|s| s.value.as_str()),
        &settings.ssh_argv_options(),
        settings.proxy_command.as_ref().map(|s| s.value.as_str()),
        &endpoint.host,
        endpoint.port,
    )?))
}

/// `--trace` with `--mgmt`: every JSON-RPC message on stderr (the secret travels only in the
/// upgrade request's header, which is shown masked).
fn trace_message(direction: &str, text: &str) {
    stderr!("rcon: trace {direction} {text}");
}

fn read_cert(path: &std::path::Path) -> anyhow::Result<Trust> {
    let pem = std::fs::read(path).map_err(|e| {
        fail(
            Exit::Config,
            format!("cannot read certificate {}: {e}", path.display()),
        )
    })?;
    Trust::from_pem(&pem, &path.display().to_string()).map_err(error)
}

impl MgmtTarget {
    /// Connects and reads the schema.
    pub fn connect(&self) -> anyhow::Result<(MgmtClient, Schema)> {
        self.open().map_err(error)
    }

    /// [`MgmtTarget::connect`], tried again up to `retries` times (`--retry`) when the server
    /// could not be reached ([`crate::app::runner::wait::worth_a_retry`]), under the run's one
    /// retry schedule ([`crate::app::runner::policy::Retries::connect`]), as an RCON session's
    /// first connection is.
    pub fn connect_retrying(&self, retries: u32) -> anyhow::Result<(MgmtClient, Schema)> {
        use mgmt::MgmtError as E;
        crate::app::runner::policy::Retries::new(retries)
            .connect(
                || self.open(),
                (
                    |e: &E| matches!(e, E::Connect(c) if crate::app::runner::wait::worth_a_retry(c)),
                    |e: &E| match e {
                        E::Connect(c) => crate::app::exit::chain(c),
                        other => other.to_string(),
                    },
                ),
                crate::app::interrupt::interrupted,
                || E::Cancelled,
            )
            .map_err(error)
    }

    /// Opens a connection and reads the schema, without retries.
    pub fn open(&self) -> Result<(MgmtClient, Schema), mgmt::MgmtError> {
        let transport = self
            .connector
            .connect(self.opts.timeout)
            .map_err(mgmt::MgmtError::Connect)?;
        let mut client = MgmtClient::connect(transport, &self.endpoint, &self.opts)?;
        let doc = client.call("rpc.discover", &[])?;
        let schema = Schema::from_discover(&doc)?;
        Ok((client, schema))
    }
}

/// A result as text: a list one item per line (players by name), an object as `key: value`
/// lines, scalars as they are; an empty list is `(none)`.
pub fn render(v: &Value) -> String {
    match v {
        Value::Array(items) if items.is_empty() => "(none)".into(),
        Value::Array(items) => items.iter().map(inline).collect::<Vec<_>>().join("\n"),
        Value::Object(o)
            if !is_player(v) && !o.contains_key("player") && !o.contains_key("key") =>
        {
            o.iter()
                .map(|(k, v)| format!("{k}: {}", inline(v)))
                .collect::<Vec<_>>()
                .join("\n")
        }
        other => inline(other),
    }
}

fn is_player(v: &Value) -> bool {
    v.as_object()
        .is_some_and(|o| o.contains_key("name") && o.keys().all(|k| k == "name" || k == "id"))
}

/// One value on one line: a player is its name; an object with a player is the name and the
/// other fields in parentheses.
fn inline(v: &Value) -> String {
    match v {
        Value::String(s) => s.clone(),
        Value::Null => String::new(),
        _ if is_player(v) => v["name"].as_str().unwrap_or("").to_string(),
        Value::Object(o) => {
            let head = o
                .get("player")
                .filter(|p| is_player(p))
                .map(inline)
                .or_else(|| {
                    o.get("key").and_then(Value::as_str).map(|k| {
                        format!("{k} = {}", inline(o.get("value").unwrap_or(&Value::Null)))
                    })
                });
            // A game rule is `KEY = VALUE`; its `type` shows in the value itself.
            let rest: Vec<String> = o
                .iter()
                .filter(|(k, _)| {
                    head.is_none() || !matches!(k.as_str(), "player" | "key" | "value" | "type")
                })
                .map(|(k, v)| format!("{k}: {}", inline(v)))
                .collect();
            match (head, rest.is_empty()) {
                (Some(h), true) => h,
                (Some(h), false) => format!("{h} ({})", rest.join(", ")),
                (None, _) => rest.join(", "),
            }
        }
        Value::Array(items) => items.iter().map(inline).collect::<Vec<_>>().join(", "),
        other => other.to_string(),
    }
}

/// The words of one command: trailing COMMAND words as the shell split them; a `-c` string or
/// a console line split at whitespace, except inside a JSON value (`{...}`, `[...]`).
pub fn split_words(line: &str) -> Vec<String> {
    let mut words = Vec::new();
    let mut cur = String::new();
    let mut depth = 0i32;
    let mut in_str = false;
    let mut escaped = false;
    for c in line.chars() {
        if depth > 0 {
            cur.push(c);
            if in_str {
                match (escaped, c) {
                    (true, _) => escaped = false,
                    (false, '\\') => escaped = true,
                    (false, '"') => in_str = false,
                    _ => {}
                }
            } else {
                match c {
                    '"' => in_str = true,
                    '{' | '[' => depth += 1,
                    '}' | ']' => depth -= 1,
                    _ => {}
                }
            }
            continue;
        }
        if c.is_whitespace() {
            if !cur.is_empty() {
                words.push(std::mem::take(&mut cur));
            }
            continue;
        }
        if cur.is_empty() && (c == '{' || c == '[') {
            depth = 1;
        }
        cur.push(c);
    }
    if !cur.is_empty() {
        words.push(cur);
    }
    words
}

/// One management server's connection and the printer of its results, for the console.
pub struct MgmtSession {
    target: MgmtTarget,
    /// `None` after the connection was lost: the next call connects again.
    client: Option<MgmtClient>,
    schema: Schema,
    out: MgmtPrinter,
}

/// How one management server's calls are printed and named, wherever they run (the console's
/// [`MgmtSession`], or the event loop: `crate::app::mode::mgmt_fleet`).
pub struct MgmtPrinter {
    printer: Printer,
    /// The name its records and labels carry.
    name: String,
    /// Its text lines are `[server] ...` (one of several).
    prefixed: bool,
}

impl MgmtSession {
    /// Connects to `target` (tried again `retries` times, `--retry`); `json`: results are the
    /// one JSON record.
    pub fn connect(target: MgmtTarget, retries: u32, json: bool) -> anyhow::Result<MgmtSession> {
        let (client, schema) = target.connect_retrying(retries)?;
        Ok(MgmtSession {
            out: MgmtPrinter::new(&target.name, json, false),
            target,
            client: Some(client),
            schema,
        })
    }

    /// The connection, connecting again first if it was lost (with the cancel flag, if any).
    fn client(&mut self) -> anyhow::Result<&mut MgmtClient> {
        if self.client.is_none() {
            let (client, schema) = self.target.connect()?;
            self.client = Some(client);
            self.schema = schema;
        }
        Ok(self.client.as_mut().expect("connected above"))
    }

    /// The name its records and labels carry: the profile, else the URL.
    pub fn name(&self) -> &str {
        &self.target.name
    }

    /// Closes the connection.
    pub fn close(self) {
        if let Some(client) = self.client {
            client.close();
        }
    }

    /// Resolves `words` ([`resolve_words`]) and calls the method (connecting again first if
    /// the connection was lost). Words that match nothing are the `Err`.
    fn call(&mut self, words: &[String]) -> anyhow::Result<Called> {
        let (method, params, command) = resolve_words(&self.schema, words).map_err(error)?;
        let client = self.client()?;
        let started = std::time::Instant::now();
        let result = client.call(&method, &params);
        let elapsed = started.elapsed();
        // Lost (or abandoned at Ctrl-C), not refused: the next call connects again
        // (--keep-going, the console).
        if result
            .as_ref()
            .is_err_and(|e| !matches!(e, mgmt::MgmtError::Rpc { .. }))
            && let Some(client) = self.client.take()
        {
            client.close();
        }
        Ok(Called {
            method,
            params,
            result,
            elapsed,
            command,
        })
    }

    /// Runs one command's words: `methods` and `api` are answered from the schema; anything
    /// else is a call. Prints the result through the printer; an error comes back for the
    /// caller to report.
    pub fn run_words(&mut self, words: &[String]) -> anyhow::Result<()> {
        if let Some(done) = self.out.local(&self.schema, words) {
            return done;
        }
        let called = self.call(words)?;
        self.out.called(words, called)
    }
}

impl MgmtPrinter {
    /// The printer of the server named `name`: `json`, results are the one JSON record;
    /// `prefixed`, text lines are labelled with the name.
    pub fn new(name: &str, json: bool, prefixed: bool) -> MgmtPrinter {
        let style = match json {
            true => Style::Json,
            false => Style::Text { color: false },
        };
        MgmtPrinter {
            printer: Printer::new(style, false),
            name: name.to_string(),
            prefixed,
        }
    }

    /// `methods` and `api`, answered from `schema` and printed; `None` for other words.
    pub fn local(&mut self, schema: &Schema, words: &[String]) -> Option<anyhow::Result<()>> {
        let label = self.prefixed.then_some(self.name.as_str());
        let json_out = self.printer.style() == Style::Json;
        if words.len() == 1 && words[0] == "methods" {
            let mut text = String::new();
            for m in schema.methods.iter().filter(|m| !m.is_notification()) {
                let params: Vec<String> =
                    m.params.iter().map(|p| format!("<{}>", p.name)).collect();
                let mut line = m.words();
                if !params.is_empty() {
                    line = format!("{line} {}", params.join(" "));
                }
                if json_out {
                    text.push_str(
                        &json!({"method": m.name, "words": m.words(), "params": m.params.iter().map(|p| &p.name).collect::<Vec<_>>(), "description": m.description}).to_string(),
                    );
                } else {
                    text.push_str(&format!("{line:<48} {}", m.description));
                }
                text.push('\n');
            }
            let printed = self.printer.formatted(&prefix(label, &text));
            return Some(printed.map_err(Into::into));
        }
        if words.len() == 1 && words[0] == "api" {
            let rows = api(schema);
            let text = if json_out {
                let o: serde_json::Map<String, Value> = rows
                    .iter()
                    .map(|(k, v)| (k.to_string(), json!(v)))
                    .collect();
                format!("{}\n", Value::Object(o))
            } else {
                let keys = rows.iter().map(|r| r.0.len()).max().unwrap_or(0);
                let width = rows.iter().map(|r| r.1.chars().count()).max().unwrap_or(0);
                rows.iter()
                    .map(|(k, v)| format!("{k:<keys$} {v:<width$}  rpc.discover\n"))
                    .collect()
            };
            let printed = self.printer.formatted(&prefix(label, &text));
            return Some(printed.map_err(Into::into));
        }
        None
    }

    /// What became of a call's words (`console`: they were a console command) for the runner
    /// policy, from what printing its `result` came to.
    pub fn ran(
        &self,
        command: &str,
        words: &[String],
        console: bool,
        result: anyhow::Result<()>,
    ) -> std::io::Result<Ran> {
        let Err(e) = result else {
            return Ok(Ran {
                sent: true,
                answered: true,
                failure: None,
            });
        };
        if crate::app::print::output::is_broken_pipe(&e) {
            return Err(std::io::Error::from(std::io::ErrorKind::BrokenPipe));
        }
        let exit = crate::app::exit::exit_for(&e);
        let server = match self.prefixed {
            true => format!("[{}] ", self.name),
            false => String::new(),
        };
        // A console command fails as over RCON: named as RCON names it, and the run stops
        // there unless --keep-going.
        if console {
            let short = crate::app::words::short(command);
            return Ok(Ran {
                sent: true,
                answered: exit == Exit::CommandFailed,
                failure: Some(Failure {
                    exit,
                    message: format!("{server}command '{short}': {e:#}"),
                    goes_on: false,
                }),
            });
        }
        // A refused call is the server's answer to it: reported, and the next one runs.
        let refused = exit == Exit::CommandFailed;
        let message = if refused {
            format!("{}{e:#}", self.label(words))
        } else {
            // The call that was under way is named, whether or not it is one of several.
            format!("{server}'{}': {e:#}", words.join(" "))
        };
        Ok(Ran {
            sent: true,
            answered: refused,
            failure: Some(Failure {
                exit,
                message,
                goes_on: refused,
            }),
        })
    }

    /// Prints `command` before its output (`--echo`), labelled when one of several.
    pub fn echo(&mut self, command: &str) -> std::io::Result<()> {
        if self.prefixed && self.printer.style() != Style::Json {
            let line = crate::app::print::output::prefixed(&self.name, &format!("> {command}"));
            return self.printer.formatted(&line);
        }
        self.printer.echo(command)
    }

    /// How a refused call is named with several servers: `[server] 'words': `.
    pub fn label(&self, words: &[String]) -> String {
        if self.prefixed {
            format!("[{}] '{}': ", self.name, words.join(" "))
        } else {
            String::new()
        }
    }

    /// Prints a call's result (a console command's feedback as RCON's record); a refused or
    /// failed call is the `Err`, for the caller to report.
    pub fn called(&mut self, words: &[String], called: Called) -> anyhow::Result<()> {
        let label = self.prefixed.then_some(self.name.as_str());
        let json_out = self.printer.style() == Style::Json;
        if called.command.is_some() {
            return self.print_command(words, called);
        }
        let Called {
            method,
            params,
            result: called,
            elapsed,
            ..
        } = called;
        if json_out {
            // The one record every mode prints, with the call's method, params and result added.
            let command = words.join(" ");
            let params = Value::Array(params);
            let failure = called.as_ref().err().map(|e| (e.to_string(), exit_of(e)));
            let text = called.as_ref().map(render).unwrap_or_default();
            let call = crate::app::print::output::Record {
                command: &command,
                raw: text.as_bytes(),
                ok: failure.is_none(),
                error: failure.as_ref().map(|f| f.0.as_str()),
                reason: failure.as_ref().and_then(|f| f.1.reason()),
                elapsed,
                origin: None,
            };
            let mut record =
                crate::app::print::output::json_record(Some(&self.name), &call, text.trim_end());
            record.method = Some(&method);
            record.params = Some(&params);
            record.result = called.as_ref().ok();
            self.printer.formatted(&format!("{}\n", record.to_line()))?;
        } else if let Ok(result) = &called {
            let text = prefix(label, &render(result));
            let text = if text.ends_with('\n') {
                text
            } else {
                text + "\n"
            };
            self.printer.formatted(&text)?;
        }
        called.map(|_| ()).map_err(error)
    }

    /// Prints a console command's feedback as RCON's fan-out prints a command's record (its
    /// `§` codes rendered by the printer, lines labelled `[server]` when one of several); a
    /// vanilla parse error (`<--[HERE]`) fails it as over RCON.
    fn print_command(&mut self, words: &[String], called: Called) -> anyhow::Result<()> {
        let command = called.command.as_ref().expect("a console command");
        let text = called.result.and_then(|r| command.text(&r));
        let parse_error = text
            .as_ref()
            .is_ok_and(|t| crate::app::shared::is_parse_error(t.as_bytes()));
        let failure = match &text {
            Err(e) => Some((e.to_string(), exit_of(e))),
            Ok(_) if parse_error => Some((PARSE_ERROR.to_string(), Exit::CommandFailed)),
            Ok(_) => None,
        };
        let raw = text.as_deref().unwrap_or_default();
        let line = words.join(" ");
        let mut buf = Vec::new();
        self.printer.format_from(
            &crate::app::print::output::Record {
                command: &line,
                raw: raw.as_bytes(),
                ok: failure.is_none(),
                error: failure.as_ref().map(|f| f.0.as_str()),
                reason: failure.as_ref().and_then(|f| f.1.reason()),
                elapsed: called.elapsed,
                origin: None,
            },
            Some(&self.name),
            &mut buf,
        );
        let printed = String::from_utf8_lossy(&buf);
        let label = self.prefixed && self.printer.style() != Style::Json && !printed.is_empty();
        let printed = match label {
            true => crate::app::print::output::prefixed(&self.name, &printed),
            false => printed.into_owned(),
        };
        self.printer.formatted(&printed)?;
        match (text, failure) {
            (Err(e), _) => Err(error(e)),
            (_, Some((why, exit))) => Err(fail(exit, why)),
            _ => Ok(()),
        }
    }
}

/// What `words` run on a server with `schema`: the method they name and its params; else, on
/// a server that runs console commands (issue 42), the words as one command through its
/// command method, which is then given too. Words that name no method on a server without one
/// are the `Err`.
pub fn resolve_words(schema: &Schema, words: &[String]) -> Result<Resolved, mgmt::MgmtError> {
    match schema.resolve(words) {
        Err(e @ mgmt::MgmtError::UnknownMethod { .. }) => match CommandMethod::discover(schema) {
            Some(c) => Ok((c.name.clone(), c.params(&words.join(" ")), Some(c))),
            None => Err(e),
        },
        other => other.map(|(method, params)| (method, params, None)),
    }
}

/// Checks every call against `schema` before the first is sent, so a mistyped method or
/// argument sends nothing: the first that fails is the `Err`, named by `out`.
pub fn check_calls(
    schema: &Schema,
    out: &MgmtPrinter,
    calls: &[Vec<String>],
) -> anyhow::Result<()> {
    for words in calls {
        if is_reserved(words) {
            continue;
        }
        if let Err(e) = resolve_words(schema, words) {
            let none = match calls.len() {
                1 => String::new(),
                n => format!("; none of the {n} calls was sent"),
            };
            let exit = exit_of(&e);
            // Words that name no method might have been a console command (issue 42).
            let lacks = match &e {
                mgmt::MgmtError::UnknownMethod { .. } => {
                    format!("; as a console command: {}", command::missing())
                }
                _ => String::new(),
            };
            return Err(fail(
                exit,
                format!("{}{}{lacks}{none}", out.label(words), error(e)),
            ));
        }
    }
    Ok(())
}

/// What the server's `rpc.discover` says about itself, as `--print-config` rows (`rcon --mgmt
/// URL api`): its API version, how many methods and notifications it lists (a mod's by
/// name), and which of them this client uses for console commands, completion and the log.
fn api(schema: &Schema) -> Vec<(&'static str, String)> {
    let (notes, calls): (Vec<_>, Vec<_>) = schema.methods.iter().partition(|m| m.is_notification());
    let count = |list: &[&mgmt::schema::Method]| {
        let modded: Vec<&str> = list
            .iter()
            .filter(|m| !m.name.starts_with(mgmt::schema::PREFIX))
            .map(|m| m.name.as_str())
            .collect();
        match modded.is_empty() {
            true => list.len().to_string(),
            false => format!("{} ({})", list.len(), modded.join(", ")),
        }
    };
    let listed = |name: &str| match schema.method(name) {
        Some(_) => name.to_string(),
        None => "(none)".to_string(),
    };
    vec![
        (
            "api_version",
            schema
                .version
                .clone()
                .unwrap_or_else(|| "(not given)".into()),
        ),
        ("methods", count(&calls)),
        ("notifications", count(&notes)),
        (
            "commands",
            CommandMethod::discover(schema)
                .map(|c| c.name)
                .unwrap_or_else(|| "(none: words name methods only)".into()),
        ),
        ("completion", listed(command::SUGGEST_METHOD)),
        ("console_log", listed(command::LOG_EVENT)),
    ]
}

/// A resolved call: the method, its params, and the server's command method when the words
/// are a console command ([`resolve_words`]).
pub type Resolved = (String, Vec<Value>, Option<CommandMethod>);

/// A call made ([`MgmtSession::call`], or on the event loop).
pub struct Called {
    /// The method called.
    pub method: String,
    /// Its params.
    pub params: Vec<Value>,
    /// The result, or the server's error.
    pub result: Result<Value, mgmt::MgmtError>,
    /// How long it took.
    pub elapsed: Duration,
    /// The command method, when the words were a console command.
    pub command: Option<CommandMethod>,
}

/// The message of a failure that stops a server's calls, `later` of them not sent.
pub fn stopped_here(failure: &Failure, later: usize) -> String {
    match later {
        0 => failure.message.clone(),
        n => format!("{}; {n} later not sent", failure.message),
    }
}

fn prefix(label: Option<&str>, text: &str) -> String {
    match label {
        Some(l) => crate::app::print::output::prefixed(l, text),
        None => text.to_string(),
    }
}

/// The method calls, as words: each `-c` one, then the trailing words (a quoted
/// 'allowlist add Alex' is three words too; JSON values stay whole).
pub fn calls(plan: &MgmtPlan) -> Vec<Vec<String>> {
    let mut calls: Vec<Vec<String>> = plan.lines.iter().map(|c| split_words(c)).collect();
    let trailing: Vec<String> = plan.words.iter().flat_map(|w| split_words(w)).collect();
    if !trailing.is_empty() {
        calls.push(trailing);
    }
    calls
}

/// One server's console (a terminal or `-i`) or `-f` files: on a server that runs console
/// commands (issue 42), RCON's session of commands ([`run_commands`]); else the console of
/// method calls, and files are a usage error naming what the server lacks.
pub fn interactive(target: MgmtTarget, plan: &MgmtPlan, rcon: SessionPlan) -> anyhow::Result<Exit> {
    // Ctrl-C or SIGTERM while the first connection is tried again (--retry) ends rcon, as in
    // RCON's console: there is no console yet to go back to.
    let url = target.endpoint.url().to_string();
    let stop = crate::app::interrupt::Stop::catch();
    let session = MgmtSession::connect(target, plan.policy.retry, plan.json);
    if let (Err(_), Some(signal)) = (&session, stop.as_ref().and_then(|s| s.received())) {
        return Err(fail(
            signal.exit(),
            format!("interrupted by {} while connecting to {url}", signal.name()),
        ));
    }
    drop(stop);
    let mut session = session?;
    let offered = CommandMethod::discover(&session.schema).is_some();
    if !rcon.files.is_empty() && !offered {
        return Err(fail(
            Exit::Usage,
            format!("-f with --mgmt: {}", command::missing()),
        ));
    }
    if offered {
        let MgmtSession {
            target,
            client,
            schema,
            ..
        } = session;
        return run_commands(target, client.map(|c| (c, schema)), rcon);
    }
    let result = console(&mut session);
    session.close();
    result
}

/// Whether one server's calls (with `stdin`, its lines) are console commands: the server
/// offers a command method ([`CommandMethod::discover`]), and there are lines from stdin or a
/// call that names no method.
pub fn runs_commands(schema: &Schema, calls: &[Vec<String>], stdin: bool) -> bool {
    let not_methods = calls
        .iter()
        .any(|w| !is_reserved(w) && schema.resolve(w).is_err());
    CommandMethod::discover(schema).is_some() && (stdin || not_methods)
}

/// The words `methods` and `api`, which show what the server's `rpc.discover` lists.
pub fn is_reserved(words: &[String]) -> bool {
    matches!(words, [w] if w == "methods" || w == "api")
}

/// The session of RCON commands (`-c`, words, `-f` files and stdin with mcfunction rules, the
/// console) over `connected` (else a new connection) and, when it is lost, new ones: one
/// connection that runs console commands through the server's command method is a
/// [`rconsole::engine::Remote`] like any other, so output, `--json` records and exit codes are
/// RCON's.
pub fn run_commands(
    target: MgmtTarget,
    connected: Option<(MgmtClient, Schema)>,
    rcon: SessionPlan,
) -> anyhow::Result<Exit> {
    use rconsole::engine::Remote;
    let (client, schema) = match connected {
        Some(c) => c,
        None => target.connect()?,
    };
    let target = std::sync::Arc::new(target);
    let reconnect: Reconnect = {
        let target = std::sync::Arc::clone(&target);
        std::sync::Arc::new(move || target.open())
    };
    let first =
        MgmtRemote::new(client, schema, std::sync::Arc::clone(&reconnect)).map_err(error)?;
    let first = std::sync::Mutex::new(Some(first));
    let opener: crate::app::remote::session::RemoteOpener = std::sync::Arc::new(move || {
        let first = first.lock().ok().and_then(|mut f| f.take());
        let remote = match first {
            Some(r) => r,
            None => MgmtRemote::open(std::sync::Arc::clone(&reconnect))?,
        };
        Ok(Box::new(remote) as Box<dyn Remote>)
    });
    let via = crate::app::runner::single::Via {
        connector: Box::new(std::sync::Arc::clone(&target.connector)),
        password: target.opts.secret.clone(),
        name: target.name.clone(),
        opener,
    };
    crate::app::runner::single::run_via(rcon, Some(via))
}

mod completion {
    use rustyline::completion::{Completer, Pair};
    use rustyline::highlight::Highlighter;
    use rustyline::hint::Hinter;
    use rustyline::validate::Validator;
    use rustyline::{Context, Helper};

    /// Completes method names (as words) from `rpc.discover`.
    pub struct Methods(pub Vec<String>);

    /// Candidates for the word before `pos`: the start of the word and the completions.
    pub fn candidates(methods: &[String], line: &str, pos: usize) -> (usize, Vec<String>) {
        let before = &line[..pos];
        let start = before.rfind(' ').map(|i| i + 1).unwrap_or(0);
        let typed_words: Vec<&str> = before[..start].split_whitespace().collect();
        let partial = &before[start..];
        let mut out: Vec<String> = methods
            .iter()
            .filter_map(|m| {
                let words: Vec<&str> = m.split(' ').collect();
                if words.len() <= typed_words.len() || words[..typed_words.len()] != typed_words[..]
                {
                    return None;
                }
                let next = words[typed_words.len()];
                next.starts_with(partial).then(|| {
                    let more = words.len() > typed_words.len() + 1;
                    format!("{next}{}", if more { "" } else { " " })
                })
            })
            .collect();
        out.sort();
        out.dedup();
        // A word that is a method and the start of longer ones: offer it once, with a space.
        (start, out)
    }

    impl Completer for Methods {
        type Candidate = Pair;
        fn complete(
            &self,
            line: &str,
            pos: usize,
            _ctx: &Context<'_>,
        ) -> rustyline::Result<(usize, Vec<Pair>)> {
            let (start, c) = candidates(&self.0, line, pos);
            Ok((
                start,
                c.into_iter()
                    .map(|s| Pair {
                        display: s.trim_end().to_string(),
                        replacement: s,
                    })
                    .collect(),
            ))
        }
    }
    impl Hinter for Methods {
        type Hint = String;
    }
    impl Highlighter for Methods {}
    impl Validator for Methods {}
    impl Helper for Methods {}

    #[cfg(test)]
    mod tests {
        use super::*;

        #[test]
        fn completes_method_words() {
            let m: Vec<String> = [
                "allowlist",
                "allowlist add",
                "allowlist clear",
                "players",
                "server save",
                "server status",
            ]
            .map(String::from)
            .to_vec();
            assert_eq!(
                candidates(&m, "al", 2),
                (0, vec!["allowlist".into(), "allowlist ".into()])
            );
            assert_eq!(candidates(&m, "allowlist a", 11), (10, vec!["add ".into()]));
            assert_eq!(
                candidates(&m, "server s", 8),
                (7, vec!["save ".into(), "status ".into()])
            );
            assert_eq!(candidates(&m, "pl", 2), (0, vec!["players ".into()]));
            assert_eq!(candidates(&m, "zz", 2), (0, Vec::<String>::new()));
        }
    }
}

/// The management console: one method per line, Tab completes method names.
fn console(session: &mut MgmtSession) -> anyhow::Result<Exit> {
    use rustyline::error::ReadlineError;
    use rustyline::history::DefaultHistory;
    use rustyline::{CompletionType, Config, Editor};
    stderr!(
        "rcon: connected to {} (management protocol), API {}; `methods` lists methods, `api` what the server offers, Tab completes, Ctrl-D leaves",
        session.target.endpoint.url(),
        session
            .schema
            .version
            .as_deref()
            .unwrap_or("version not given")
    );
    let config = Config::builder()
        .auto_add_history(true)
        .completion_type(CompletionType::List)
        .build();
    let mut editor: Editor<completion::Methods, DefaultHistory> = Editor::with_config(config)?;
    let mut words = session.schema.callable_words();
    words.extend(["methods".into(), "api".into()]);
    editor.set_helper(Some(completion::Methods(words)));
    let prompt = format!("{} mgmt> ", session.name());
    loop {
        let line = match editor.readline(&prompt) {
            Ok(l) => l,
            Err(ReadlineError::Interrupted) => continue,
            Err(ReadlineError::Eof) => return Ok(Exit::Success),
            Err(e) => return Err(e.into()),
        };
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        if matches!(t, ":quit" | ":q" | "exit" | "quit") {
            return Ok(Exit::Success);
        }
        if let Err(e) = session.run_words(&split_words(t)) {
            stderr!("rcon: error: {e:#}");
            if !matches!(
                crate::app::exit::exit_for(&e),
                Exit::CommandFailed | Exit::Usage
            ) {
                return Err(e);
            }
        }
    }
}

/// `--practice-mgmt ADDR`: the practice management server in the foreground until `server stop`
/// or Ctrl-C.
pub fn serve_practice(plan: &PracticePlan) -> anyhow::Result<Exit> {
    let addr = plan.addr.as_str();
    use rconsole::mgmt::practice::{MgmtPracticeConfig, MgmtPracticeServer};
    let bind = plan.bind;
    let read = |p: &std::path::Path| {
        std::fs::read(p)
            .map_err(|e| fail(Exit::Config, format!("cannot read {}: {e}", p.display())))
    };
    let tls = match &plan.tls {
        Some((c, k)) => Some((read(c)?, read(k)?)),
        None => None,
    };
    let mods = plan
        .mods
        .iter()
        .map(|name| {
            rconsole::mgmt::practice::MgmtMod::from_name(name).ok_or_else(|| {
                fail(
                    Exit::Usage,
                    format!("unknown --practice-mods '{name}' (one of: enhanced, console)"),
                )
            })
        })
        .collect::<anyhow::Result<Vec<_>>>()?;
    if plan.unix_socket.is_some() && !cfg!(unix) {
        return Err(fail(
            Exit::Usage,
            "--practice-mgmt unix:PATH: Unix domain sockets are a Unix feature",
        ));
    }
    let server = MgmtPracticeServer::start(MgmtPracticeConfig {
        bind,
        secret: plan.password.clone(),
        tls,
        mods,
        unix_socket: plan.unix_socket.clone(),
        ..MgmtPracticeConfig::default()
    })
    .map_err(|e| crate::app::shared::cannot_listen("--practice-mgmt", addr, &e))?;
    let url = server.url();
    crate::app::print::output::print_text(&format!("{url}\n"))?;
    // The default secret is public (it is in --help); one set with --practice-password is
    // never shown.
    let secret = if plan.password == super::practice::DEFAULT_PRACTICE_PASSWORD {
        format!("the secret is {}", plan.password)
    } else {
        "the secret is --practice-password's".to_string()
    };
    stderr!(
        "rcon: practice management server listening on {url}; {secret}; type `join NAME` or `leave NAME` here to make a player join or leave; stop it with `server stop` or Ctrl-C"
    );
    players_from_stdin(&server);
    server.wait();
    Ok(Exit::Success)
}

/// Reads `join NAME` and `leave NAME` lines from stdin while the practice management server
/// runs, until it stops or stdin ends: each makes a player join or leave, which sends
/// `players/joined` or `players/left`. A line that is neither gets one line on stderr.
fn players_from_stdin(server: &rconsole::mgmt::practice::MgmtPracticeServer) {
    use std::io::BufRead;
    use std::sync::mpsc::{RecvTimeoutError, channel};
    let (tx, rx) = channel();
    std::thread::spawn(move || {
        for line in std::io::stdin().lock().lines() {
            let Ok(line) = line else { break };
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // Looked at every tenth of a second: `server stop` from a client ends the wait.
    while !server.stopped() {
        let line = match rx.recv_timeout(std::time::Duration::from_millis(100)) {
            Ok(line) => line,
            Err(RecvTimeoutError::Timeout) => continue,
            Err(RecvTimeoutError::Disconnected) => return,
        };
        match line.split_whitespace().collect::<Vec<_>>().as_slice() {
            ["join", name] => server.join(name),
            ["leave", name] => server.leave(name),
            [] => {}
            _ => stderr!(
                "rcon: practice management server: {:?} is not `join NAME` or `leave NAME`",
                line.trim()
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn renders_results() {
        let p = |n: &str| json!({"id": "x", "name": n});
        assert_eq!(render(&json!([p("Steve"), p("Alex")])), "Steve\nAlex");
        assert_eq!(render(&json!([])), "(none)");
        assert_eq!(render(&json!(true)), "true");
        assert_eq!(render(&json!("hard")), "hard");
        assert_eq!(
            render(&json!([{"player": p("G"), "reason": "grief"}])),
            "G (reason: grief)"
        );
        assert_eq!(
            render(&json!([{"key": "keepInventory", "value": false}])),
            "keepInventory = false"
        );
        assert_eq!(
            render(&json!({"key": "minecraft:keep_inventory", "value": true, "type": "boolean"})),
            "minecraft:keep_inventory = true"
        );
        assert_eq!(
            render(&json!({"key": "keepInventory", "value": "true", "type": "boolean"})),
            "keepInventory = true"
        );
        assert_eq!(
            render(&json!({"started": true, "players": [p("A")]})),
            "players: A\nstarted: true"
        );
    }

    #[test]
    fn splits_words_but_not_json() {
        assert_eq!(
            split_words("allowlist add  Steve"),
            ["allowlist", "add", "Steve"]
        );
        assert_eq!(
            split_words(r#"allowlist set [{"name": "A B"}] x"#),
            ["allowlist", "set", r#"[{"name": "A B"}]"#, "x"]
        );
        assert_eq!(split_words(r#"x {"a": "}"}"#), ["x", r#"{"a": "}"}"#]);
    }
}
