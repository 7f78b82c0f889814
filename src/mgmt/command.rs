//! Console commands over the management protocol (issue 42): vanilla's methods run none, but
//! server mods add one and list it in `rpc.discover` (docs/protocol.md section 9): MSMP
//! Enhanced's `msmpenhanced:command/run` and MSMP Console's `console:send`. Which one a server
//! offers is read from its schema ([`CommandMethod::discover`]), never configured. Over it a
//! management connection does RCON's job as a [`Remote`] ([`MgmtRemote`]): a command's
//! feedback comes back as text with `§` codes, so it is printed as RCON's is; MSMP Enhanced's
//! `command/suggest` completes a partial command ([`Suggest`]).

use std::sync::{Arc, Mutex};

use serde_json::{Value, json};

use super::schema::Schema;
use super::{MgmtClient, MgmtError, MgmtResult, engine_error};
use crate::engine::{Remote, Suggest};
use crate::error::Result;

/// The methods that run a console command, in the order one is chosen when a server offers
/// several: MSMP Enhanced's first (its feedback keeps its colours as text components).
pub const RUN_METHODS: [&str; 2] = ["msmpenhanced:command/run", "console:send"];

/// MSMP Console's notification of a console log line (`{timestamp, level, thread, logger,
/// message, throwable}`).
pub const LOG_EVENT: &str = "console:notification/log/event";

/// MSMP Enhanced's completion of a partial command (brigadier's own).
pub const SUGGEST_METHOD: &str = "msmpenhanced:command/suggest";

/// The method a server offers to run a console command, and how it takes the command.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct CommandMethod {
    /// Its full name.
    pub name: String,
    /// The command is the property `command` of the one object parameter (`console:send`),
    /// rather than the parameter itself (`msmpenhanced:command/run`).
    in_object: bool,
}

impl CommandMethod {
    /// The first of [`RUN_METHODS`] that `schema` lists, if any.
    pub fn discover(schema: &Schema) -> Option<CommandMethod> {
        RUN_METHODS.iter().find_map(|name| {
            let method = schema.method(name)?;
            let in_object = method
                .params
                .first()
                .is_some_and(|p| p.schema.get("type").and_then(Value::as_str) == Some("object"));
            Some(CommandMethod {
                name: method.name.clone(),
                in_object,
            })
        })
    }

    /// The params of a call that runs `command`.
    pub fn params(&self, command: &str) -> Vec<Value> {
        if self.in_object {
            vec![json!({ "command": command })]
        } else {
            vec![json!(command)]
        }
    }

    /// The command's feedback in a result, as text with `§` codes: MSMP Enhanced's text
    /// components one message a line, MSMP Console's `result` string as it is.
    pub fn text(&self, result: &Value) -> MgmtResult<String> {
        match result {
            Value::Array(messages) => Ok(messages
                .iter()
                .map(crate::minecraft::status::motd_to_legacy)
                .collect::<Vec<_>>()
                .join("\n")),
            Value::Object(o) => o
                .get("result")
                .and_then(Value::as_str)
                .map(str::to_string)
                .ok_or_else(|| {
                    MgmtError::Protocol(format!("{}: the result has no \"result\" text", self.name))
                }),
            other => Err(MgmtError::Protocol(format!(
                "{}: unexpected result {other}",
                self.name
            ))),
        }
    }
}

/// What a server that runs no command lacks, for the error that says so.
pub fn missing() -> String {
    format!(
        "the management server offers no method that runs a console command (neither {} \
         nor {} is in its rpc.discover; install MSMP Enhanced or MSMP Console on it)",
        RUN_METHODS[0], RUN_METHODS[1]
    )
}

/// A connected client, its schema and its command method.
struct Link {
    client: Option<MgmtClient>,
    schema: Schema,
    method: CommandMethod,
}

/// Opens a connection and reads the schema: how a [`MgmtRemote`] connects again.
pub type Reconnect = Arc<dyn Fn() -> MgmtResult<(MgmtClient, Schema)> + Send + Sync>;

/// A management connection that runs console commands, as a [`Remote`]: what the RCON paths
/// (one-shot commands, `-c`, files and stdin, the console) send commands through.
pub struct MgmtRemote {
    link: Arc<Mutex<Link>>,
    reconnect: Reconnect,
    server: String,
}

impl MgmtRemote {
    /// Wraps a connected client whose schema offers a command method; `Err` saying what is
    /// missing when it offers none. `reconnect` opens a new connection when this one is lost.
    pub fn new(client: MgmtClient, schema: Schema, reconnect: Reconnect) -> MgmtResult<Self> {
        let method = CommandMethod::discover(&schema).ok_or_else(|| MgmtError::BadArgument {
            method: client.peer().to_string(),
            why: missing(),
        })?;
        Ok(MgmtRemote {
            server: client.peer().to_string(),
            link: Arc::new(Mutex::new(Link {
                client: Some(client),
                schema,
                method,
            })),
            reconnect,
        })
    }

    /// Opens a new connection with `reconnect` and wraps it ([`MgmtRemote::new`]).
    pub fn open(reconnect: Reconnect) -> Result<Self> {
        let (client, schema) = reconnect().map_err(engine_error)?;
        MgmtRemote::new(client, schema, reconnect).map_err(engine_error)
    }

    /// The command method in use.
    pub fn method(&self) -> CommandMethod {
        self.lock().method.clone()
    }

    fn lock(&self) -> std::sync::MutexGuard<'_, Link> {
        self.link.lock().unwrap_or_else(|e| e.into_inner())
    }
}

impl Link {
    /// Opens a new connection with `reconnect`, and reads its schema's command method again.
    fn connect(&mut self, reconnect: &Reconnect) -> MgmtResult<()> {
        if let Some(c) = self.client.take() {
            c.close();
        }
        let (client, schema) = reconnect()?;
        self.method = CommandMethod::discover(&schema)
            .ok_or_else(|| MgmtError::Protocol(format!("after reconnecting: {}", missing())))?;
        self.schema = schema;
        self.client = Some(client);
        Ok(())
    }

    /// Runs `command`, connecting again first when the connection was lost.
    fn run(&mut self, command: &str, reconnect: &Reconnect) -> MgmtResult<String> {
        if self.client.is_none() {
            self.connect(reconnect)?;
        }
        let client = self.client.as_mut().expect("connected above");
        let params = self.method.params(command);
        match client.call(&self.method.name, &params) {
            Ok(result) => self.method.text(&result),
            Err(e) => {
                // Lost or abandoned, not refused: the next command connects again.
                if !matches!(e, MgmtError::Rpc { .. })
                    && let Some(c) = self.client.take()
                {
                    c.close();
                }
                Err(e)
            }
        }
    }

    /// MSMP Enhanced's completion of `partial`: where the replaced part starts, and the
    /// candidates; `None` when the server offers no completion or the call failed.
    fn suggest(&mut self, partial: &str) -> Option<(usize, Vec<String>)> {
        self.schema.method(SUGGEST_METHOD)?;
        let client = self.client.as_mut()?;
        let answer = client.call(SUGGEST_METHOD, &[json!(partial)]).ok()?;
        let start = answer.get("start")?.as_u64()? as usize;
        let texts = answer
            .get("suggestions")?
            .as_array()?
            .iter()
            .filter_map(|s| s.get("text")?.as_str().map(str::to_string))
            .collect();
        Some((start.min(partial.len()), texts))
    }
}

impl Remote for MgmtRemote {
    fn command_into(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()> {
        let reconnect = Arc::clone(&self.reconnect);
        let text = self.lock().run(command, &reconnect).map_err(engine_error)?;
        out.extend_from_slice(text.as_bytes());
        Ok(())
    }

    fn command_then_close(&mut self, command: &str, out: &mut Vec<u8>) -> Result<()> {
        let result = self.command_into(command, out);
        self.close();
        result
    }

    fn close(&mut self) {
        if let Some(c) = self.lock().client.take() {
            c.close();
        }
    }

    /// Reads what the server sent meanwhile (its notifications are not this connection's to
    /// show): a server that closed the connection, or went away, is noticed now, and the
    /// connection dropped, so the next command connects again rather than failing.
    fn check_open(&mut self) -> bool {
        let mut link = self.lock();
        let alive = link.client.as_mut().is_some_and(MgmtClient::alive);
        if !alive && let Some(c) = link.client.take() {
            c.close();
        }
        alive
    }

    fn is_connected(&self) -> bool {
        self.lock().client.is_some()
    }

    fn reconnect(&mut self) -> Result<()> {
        let reconnect = Arc::clone(&self.reconnect);
        self.lock().connect(&reconnect).map_err(engine_error)
    }

    fn server(&self) -> String {
        self.server.clone()
    }

    fn max_command_bytes(&self) -> usize {
        // JSON carries any length; vanilla's own limit on a command line is 32,500 characters.
        32_500
    }

    fn set_cancel(&mut self, cancel: Option<Arc<std::sync::atomic::AtomicBool>>) {
        if let Some(c) = self.lock().client.as_mut() {
            c.set_cancel(cancel);
        }
    }

    fn suggest(&self) -> Option<Suggest> {
        let link = Arc::clone(&self.link);
        self.lock().schema.method(SUGGEST_METHOD)?;
        Some(Arc::new(move |partial: &str| {
            link.lock().ok()?.suggest(partial)
        }))
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mgmt::practice::{self, MgmtMod, MgmtVersion};

    fn schema(mods: &[MgmtMod]) -> Schema {
        let mut doc = practice::discover_document(MgmtVersion::V1_21_11);
        practice::extend_document(&mut doc, mods);
        Schema::from_discover(&doc).unwrap()
    }

    #[test]
    fn the_command_method_is_discovered_from_the_schema() {
        assert_eq!(CommandMethod::discover(&schema(&[])), None);
        let enhanced = CommandMethod::discover(&schema(&[MgmtMod::Enhanced])).unwrap();
        assert_eq!(enhanced.name, "msmpenhanced:command/run");
        assert_eq!(enhanced.params("say hi"), vec![json!("say hi")]);
        let console = CommandMethod::discover(&schema(&[MgmtMod::Console])).unwrap();
        assert_eq!(console.name, "console:send");
        assert_eq!(console.params("say hi"), vec![json!({"command": "say hi"})]);
        let both = CommandMethod::discover(&schema(&MgmtMod::ALL)).unwrap();
        assert_eq!(both, enhanced);
    }

    #[test]
    fn feedback_becomes_text_with_section_codes() {
        let enhanced = CommandMethod::discover(&schema(&[MgmtMod::Enhanced])).unwrap();
        let messages = json!([
            {"text": "There are 0 of a max of 20 players online: "},
            {"text": "Unknown", "color": "red", "extra": [{"text": " command"}]},
        ]);
        assert_eq!(
            enhanced.text(&messages).unwrap(),
            "There are 0 of a max of 20 players online: \n§cUnknown command"
        );
        assert_eq!(enhanced.text(&json!([])).unwrap(), "");
        let console = CommandMethod::discover(&schema(&[MgmtMod::Console])).unwrap();
        let sent = json!({"command": "seed", "result": "Seed: [1]", "success": true});
        assert_eq!(console.text(&sent).unwrap(), "Seed: [1]");
        assert!(console.text(&json!(3)).is_err());
        assert!(console.text(&json!({"success": true})).is_err());
    }
}
