//! The server mods the practice management server can play beside vanilla's methods
//! (docs/protocol.md section 9, "Server mods"), each as its published source defines it:
//! - MSMP Enhanced (`msmpenhanced:`): `command/run` (param `command`, a string; result
//!   `messages`, the feedback as text components) and `command/suggest` (param
//!   `partialCommand`; result `{start, end, suggestions: [{text}]}`). Its schema lists the
//!   suggestions property as one suggestion's `$ref`, not an array, as the mod does.
//! - MSMP Console (`console:`): `send` (one parameter named `send`, the object `{command}`;
//!   result `{command, result, success}`, `result` the feedback lines joined with `\n`) and the
//!   notification `console:notification/log/event` (`{timestamp, level, thread, logger,
//!   message, throwable}`) for each console log line.
//!
//! The commands are answered from the RCON practice server's one command table
//! ([`crate::practice::PracticeGame`]), so a command gets the same answer over either protocol.

use serde_json::{Value, json};

use super::Hub;

/// A server mod the practice management server can play.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum MgmtMod {
    /// MSMP Enhanced: `msmpenhanced:command/run` and `msmpenhanced:command/suggest`.
    Enhanced,
    /// MSMP Console: `console:send` and `console:notification/log/event`.
    Console,
}

impl MgmtMod {
    /// Every mod, in the order of their names.
    pub const ALL: [MgmtMod; 2] = [MgmtMod::Console, MgmtMod::Enhanced];

    /// Its name on the command line (`--practice-mods enhanced,console`).
    pub fn name(self) -> &'static str {
        match self {
            MgmtMod::Enhanced => "enhanced",
            MgmtMod::Console => "console",
        }
    }

    /// The mod of that name.
    pub fn from_name(name: &str) -> Option<MgmtMod> {
        MgmtMod::ALL.into_iter().find(|m| m.name() == name)
    }
}

pub use crate::mgmt::command::LOG_EVENT;

/// The `timestamp` of every log line the practice server sends: fixed, so tests can compare
/// whole lines (the client shows when a line arrived, not this).
pub const LOG_TIME: &str = "2026-01-01T00:00:00.000Z";

fn string() -> Value {
    json!({"type": "string"})
}

fn object(props: &[&str]) -> Value {
    let props: serde_json::Map<String, Value> =
        props.iter().map(|p| (p.to_string(), string())).collect();
    json!({"type": "object", "properties": props})
}

/// Adds the methods, notifications and schemas of `mods` to an `rpc.discover` answer (of
/// [`super::discover_document`]).
pub fn extend_document(doc: &mut Value, mods: &[MgmtMod]) {
    let mut methods = Vec::new();
    if mods.contains(&MgmtMod::Enhanced) {
        methods.push(json!({
            "name": "msmpenhanced:command/run",
            "description": "Run a console command",
            "params": [{"name": "command", "schema": string(), "required": true}],
            "result": {"name": "messages", "schema": {"type": "array", "items": {"type": "object"}}},
        }));
        methods.push(json!({
            "name": "msmpenhanced:command/suggest",
            "description": "Suggest command completions",
            "params": [{"name": "partialCommand", "schema": string(), "required": true}],
            "result": {"name": "suggestions", "schema": {"$ref": "#/components/schemas/msmp_enhanced_command_suggestions"}},
        }));
        if let Some(schemas) = doc
            .pointer_mut("/components/schemas")
            .and_then(Value::as_object_mut)
        {
            schemas.insert(
                "msmp_enhanced_command_suggestion".into(),
                json!({"type": "object", "properties": {"text": string(), "tooltip": {"type": "object"}}}),
            );
            schemas.insert(
                "msmp_enhanced_command_suggestions".into(),
                json!({"type": "object", "properties": {
                    "start": {"type": "integer"},
                    "end": {"type": "integer"},
                    "suggestions": {"$ref": "#/components/schemas/msmp_enhanced_command_suggestion"},
                }}),
            );
        }
    }
    if mods.contains(&MgmtMod::Console) {
        let result = json!({"type": "object", "properties": {
            "command": string(), "result": string(), "success": {"type": "boolean"},
        }});
        methods.push(json!({
            "name": "console:send",
            "description": "Send a command to the server console",
            "params": [{"name": "send", "schema": object(&["command"]), "required": true}],
            "result": {"name": "send", "schema": result},
        }));
        let event = object(&[
            "timestamp",
            "level",
            "thread",
            "logger",
            "message",
            "throwable",
        ]);
        methods.push(json!({
            "name": LOG_EVENT,
            "description": "Fired for every server console log event",
            "params": [{"name": "event", "schema": event, "required": true}],
        }));
    }
    if let Some(list) = doc.get_mut("methods").and_then(Value::as_array_mut) {
        list.extend(methods);
    }
}

/// Runs a mod's method `name` (with its namespace) with its one parameter, already checked
/// against the schema; `None` when no mod played offers it.
pub(super) fn call(hub: &Hub, name: &str, param: Option<&Value>) -> Option<Result<Value, String>> {
    let mods = &hub.config.mods;
    let text = |key: Option<&str>| {
        let v = match key {
            Some(k) => param.and_then(|p| p.get(k)),
            None => param,
        };
        v.and_then(Value::as_str)
            .map(str::to_string)
            .ok_or_else(|| "Not a string".to_string())
    };
    match name {
        "msmpenhanced:command/run" if mods.contains(&MgmtMod::Enhanced) => {
            Some(text(None).map(|c| {
                let answer = run(hub, &c);
                // One text component per feedback message, as the mod collects them.
                let messages: Vec<Value> = answer
                    .split('\n')
                    .filter(|_| !answer.is_empty())
                    .map(|line| json!({"text": line}))
                    .collect();
                json!(messages)
            }))
        }
        "msmpenhanced:command/suggest" if mods.contains(&MgmtMod::Enhanced) => {
            Some(text(None).map(|partial| suggest(&partial)))
        }
        "console:send" if mods.contains(&MgmtMod::Console) => {
            Some(text(Some("command")).map(|c| {
                let result = run(hub, &c);
                let success = !result.ends_with("<--[HERE]");
                json!({"command": c, "result": result, "success": success})
            }))
        }
        _ => None,
    }
}

/// Runs a command (a leading `/` allowed, as both mods take it) with the RCON practice
/// server's answers; `say` is logged as vanilla logs it, and `stop` stops the server.
fn run(hub: &Hub, command: &str) -> String {
    hub.commands
        .lock()
        .expect("commands")
        .push(command.to_string());
    let command = command.strip_prefix('/').unwrap_or(command);
    let online: Vec<String> = hub
        .state
        .lock()
        .expect("state")
        .online
        .iter()
        .filter_map(|p| p["name"].as_str().map(str::to_string))
        .collect();
    let (answer, stops) = hub.game.answer(command, &online);
    if let Some(text) = command.strip_prefix("say ") {
        hub.log("INFO", &format!("[Server] {text}"));
    }
    if stops {
        hub.log("INFO", "Stopping the server");
        hub.broadcast("server/stopping", None);
        hub.stop.store(true, std::sync::atomic::Ordering::SeqCst);
    }
    answer
}

/// Brigadier's completion of `partial` from the practice server's command set: the command
/// name while the first word is typed, then the choices of its first argument.
fn suggest(partial: &str) -> Value {
    let (start, typed, choices) = match partial.split_once(' ') {
        None => (0, partial, crate::practice::command_names()),
        Some((name, rest)) if !rest.contains(' ') => (
            name.len() + 1,
            rest,
            crate::practice::first_argument_choices(name),
        ),
        Some(_) => (partial.len(), "", Vec::new()),
    };
    let suggestions: Vec<Value> = choices
        .into_iter()
        .filter(|c| c.starts_with(typed))
        .map(|c| json!({"text": c}))
        .collect();
    json!({"start": start, "end": partial.len(), "suggestions": suggestions})
}

impl super::MgmtPracticeServer {
    /// Sends a notification under its full name (`othermod:notification/thing`), as a mod's
    /// own would come, to every connected client.
    pub fn notify_as(&self, method: &str, params: Option<Value>) {
        self.shared.notify_as(method, params);
    }
}

impl Hub {
    /// A console log line: sent as MSMP Console's log event when that mod is played.
    pub(super) fn log(&self, level: &str, message: &str) {
        if !self.config.mods.contains(&MgmtMod::Console) {
            return;
        }
        let event = json!({
            "timestamp": LOG_TIME,
            "level": level,
            "thread": "Server thread",
            "logger": "net.minecraft.server.MinecraftServer",
            "message": message,
            "throwable": "",
        });
        let text = json!({"jsonrpc": "2.0", "method": LOG_EVENT, "params": [event]}).to_string();
        self.clients
            .lock()
            .expect("clients")
            .retain(|tx| tx.send(text.clone()).is_ok());
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mgmt::practice::{MgmtVersion, rpc};

    fn ask(hub: &Hub, method: &str, params: Value) -> Value {
        let request = json!({"jsonrpc": "2.0", "id": 1, "method": method, "params": params});
        let reply = rpc::answer(hub, &request.to_string()).expect("an answer");
        serde_json::from_str(&reply).unwrap()
    }

    #[test]
    fn each_mod_is_listed_and_answers_as_published() {
        let mut hub = Hub::for_test(MgmtVersion::V1_21_11);
        let names = |hub: &Hub| -> Vec<String> {
            hub.document()["methods"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|m| m["name"].as_str().map(str::to_string))
                .collect()
        };
        assert!(!names(&hub).iter().any(|n| !n.starts_with("minecraft:")));
        let refused = ask(&hub, "msmpenhanced:command/run", json!(["list"]));
        assert_eq!(refused["error"]["code"], -32601);

        hub.config.mods = vec![MgmtMod::Enhanced];
        assert!(names(&hub).contains(&"msmpenhanced:command/suggest".to_string()));
        assert!(!names(&hub).contains(&"console:send".to_string()));
        let run = ask(&hub, "msmpenhanced:command/run", json!(["lines 2"]));
        assert_eq!(
            run["result"],
            json!([{"text": "line 1 of 2"}, {"text": "line 2 of 2"}])
        );
        assert_eq!(
            ask(&hub, "msmpenhanced:command/run", json!(["say hi"]))["result"],
            json!([])
        );
        let wrong = ask(
            &hub,
            "msmpenhanced:command/run",
            json!([{"command": "list"}]),
        );
        assert_eq!(wrong["error"]["code"], -32602);

        hub.config.mods = vec![MgmtMod::Console];
        let sent = ask(&hub, "console:send", json!([{"command": "/seed"}]));
        assert_eq!(
            sent["result"],
            json!({"command": "/seed", "result": "Seed: [-4172144997902289642]", "success": true})
        );
        let bad = ask(&hub, "console:send", json!({"send": {"command": "nope"}}));
        assert_eq!(bad["result"]["success"], false);
    }

    #[test]
    fn log_lines_reach_clients_only_with_the_console_mod() {
        let mut hub = Hub::for_test(MgmtVersion::V1_21_11);
        let (tx, rx) = std::sync::mpsc::channel();
        hub.clients.lock().unwrap().push(tx);
        hub.log("INFO", "quiet");
        assert!(rx.try_recv().is_err());
        hub.config.mods = vec![MgmtMod::Console];
        ask(&hub, "console:send", json!([{"command": "say hello"}]));
        let note: Value = serde_json::from_str(&rx.try_recv().unwrap()).unwrap();
        assert_eq!(note["method"], LOG_EVENT);
        assert_eq!(note["params"][0]["message"], "[Server] hello");
        assert_eq!(note["params"][0]["level"], "INFO");
    }

    #[test]
    fn suggestions_follow_the_command_set() {
        let s = suggest("sa");
        assert_eq!((s["start"].clone(), s["end"].clone()), (json!(0), json!(2)));
        let texts: Vec<&str> = s["suggestions"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|x| x["text"].as_str())
            .collect();
        assert!(
            texts.contains(&"say") && texts.contains(&"save-all"),
            "{texts:?}"
        );
        let s = suggest("time s");
        assert_eq!(s["start"], 5);
        assert_eq!(s["suggestions"], json!([{"text": "set"}]));
        assert_eq!(suggest("say hello th")["suggestions"], json!([]));
    }
}
