//! The practice server's world (lists, settings, game rules, who is online, what was said) and
//! its methods, called with the one parameter the request carried, already checked against the
//! schema. Game rules follow the version: 1.21.9 and 1.21.10 name them in camelCase
//! (`keepInventory`) and carry every value as a string (`"false"`); 1.21.11 and later name
//! them as namespaced identifiers (`minecraft:keep_inventory`) and carry booleans and integers.

use std::sync::atomic::Ordering;

use serde_json::{Value, json};

use super::{Hub, MgmtVersion};

/// A stable offline-style player object from the name (not the real UUID algorithm; stable
/// is enough).
pub(super) fn player(name: &str) -> Value {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in name.to_lowercase().bytes() {
        h = (h ^ b as u64).wrapping_mul(0x100_0000_01b3);
    }
    let id = format!(
        "{:08x}-{:04x}-3{:03x}-8{:03x}-{:012x}",
        h >> 32,
        (h >> 16) & 0xffff,
        h & 0xfff,
        (h >> 20) & 0xfff,
        h & 0xffff_ffff_ffff
    );
    json!({"id": id, "name": name})
}

/// A game rule's value.
#[derive(Debug, Clone, Copy, PartialEq)]
enum RuleValue {
    Bool(bool),
    Int(i64),
}

/// A game rule under its 1.21.9 name and its 1.21.11 identifier.
#[derive(Debug, Clone)]
struct Rule {
    camel: &'static str,
    id: &'static str,
    value: RuleValue,
}

impl Rule {
    /// As `gamerules` lists it (vanilla's `typed_game_rule`).
    fn typed(&self, version: MgmtVersion) -> Value {
        let (kind, value) = match (self.value, version) {
            (RuleValue::Bool(b), MgmtVersion::V1_21_9) => ("boolean", json!(b.to_string())),
            (RuleValue::Int(n), MgmtVersion::V1_21_9) => ("integer", json!(n.to_string())),
            (RuleValue::Bool(b), MgmtVersion::V1_21_11) => ("boolean", json!(b)),
            (RuleValue::Int(n), MgmtVersion::V1_21_11) => ("integer", json!(n)),
        };
        let key = match version {
            MgmtVersion::V1_21_9 => self.camel,
            MgmtVersion::V1_21_11 => self.id,
        };
        json!({"key": key, "value": value, "type": kind})
    }
}

/// The server's world.
#[derive(Debug)]
pub(super) struct World {
    allowlist: Vec<Value>,
    bans: Vec<Value>,
    ip_bans: Vec<Value>,
    operators: Vec<Value>,
    pub(super) online: Vec<Value>,
    difficulty: String,
    motd: String,
    autosave: bool,
    rules: Vec<Rule>,
    saves: u64,
    /// What `server/system_message` said, with its `overlay`.
    pub(super) messages: Vec<(String, bool)>,
}

impl Default for World {
    fn default() -> Self {
        let rule = |camel, id, value| Rule { camel, id, value };
        World {
            allowlist: Vec::new(),
            bans: Vec::new(),
            ip_bans: Vec::new(),
            operators: Vec::new(),
            online: Vec::new(),
            difficulty: "normal".into(),
            motd: "A Minecraft Server".into(),
            autosave: true,
            rules: vec![
                rule(
                    "doDaylightCycle",
                    "minecraft:advance_time",
                    RuleValue::Bool(true),
                ),
                rule(
                    "keepInventory",
                    "minecraft:keep_inventory",
                    RuleValue::Bool(false),
                ),
                rule(
                    "randomTickSpeed",
                    "minecraft:random_tick_speed",
                    RuleValue::Int(3),
                ),
                rule(
                    "playersSleepingPercentage",
                    "minecraft:players_sleeping_percentage",
                    RuleValue::Int(100),
                ),
            ],
            saves: 0,
            messages: Vec::new(),
        }
    }
}

fn list_of(param: &Option<Value>) -> Result<Vec<Value>, String> {
    match param {
        Some(Value::Array(a)) => Ok(a.clone()),
        Some(other) => Err(format!("Not a json array: {other}")),
        None => Err("Expected params as array or named".into()),
    }
}

fn name_of(v: &Value) -> Option<String> {
    v.get("name")
        .or_else(|| v.pointer("/player/name"))
        .and_then(Value::as_str)
        .map(str::to_string)
}

/// A player object filled in from `{"name": ...}` (the id is derived).
fn full_player(v: &Value) -> Result<Value, String> {
    name_of(v)
        .map(|n| player(&n))
        .ok_or_else(|| format!("{v} names no player"))
}

/// The text of a `message` object: its literal, else its translation key.
fn text_of(message: &Value) -> Result<String, String> {
    message
        .get("literal")
        .or_else(|| message.get("translatable"))
        .and_then(Value::as_str)
        .map(str::to_string)
        .ok_or_else(|| format!("No key literal in MapLike[{message}]"))
}

/// Runs method `m` (without `minecraft:`) with its parameter; the result, or the `data` of a
/// -32602 refusal. Notifications the call causes are sent before its answer.
pub(super) fn call(hub: &Hub, m: &str, param: Option<Value>) -> Result<Value, String> {
    let mut notes: Vec<(&'static str, Option<Value>)> = Vec::new();
    let (result, changes) = {
        let mut st = hub.state.lock().expect("state");
        let st = &mut *st;
        let before = list_of_method(st, m);
        let (family, op) = match m.split_once('/') {
            Some((family, op)) => (family, Some(op)),
            None => (m, None),
        };
        let result = match list_mut(st, family) {
            Some((list, kind)) => list_call(list, kind, op, &param),
            None => world_call(st, hub.config.version, m, param, &mut notes),
        };
        let changes = match (before, list_of_method(st, m)) {
            (Some((name, before)), Some((_, after))) => list_changes(name, &before, &after),
            _ => Vec::new(),
        };
        (result, changes)
    };
    // Set after `server/stopping` is sent, so that no session sees the stop before it has the
    // notification to send.
    let stopping = notes.iter().any(|(method, _)| *method == "server/stopping");
    for (method, params) in notes {
        hub.broadcast(method, params);
    }
    for (method, entry) in changes {
        hub.broadcast(&method, Some(entry));
    }
    if stopping {
        hub.stop.store(true, Ordering::SeqCst);
    }
    result
}

/// The player list a method `family` works on, and the kind of its entries.
fn list_mut<'w>(st: &'w mut World, family: &str) -> Option<(&'w mut Vec<Value>, &'static str)> {
    match family {
        "allowlist" => Some((&mut st.allowlist, "player")),
        "bans" => Some((&mut st.bans, "ban")),
        "ip_bans" => Some((&mut st.ip_bans, "ip")),
        "operators" => Some((&mut st.operators, "op")),
        _ => None,
    }
}

/// An entry of a list of `kind` as the server stores it, its defaults filled in.
fn normalize(kind: &str, v: &Value) -> Result<Value, String> {
    match kind {
        "player" => full_player(v),
        "ban" => Ok(json!({
            "player": full_player(v.get("player").unwrap_or(v))?,
            "reason": v.get("reason").cloned().unwrap_or(json!("Banned by an operator.")),
            "source": v.get("source").cloned().unwrap_or(json!("Server")),
        })),
        "ip" => {
            let ip = v
                .get("ip")
                .and_then(Value::as_str)
                .ok_or_else(|| format!("No key ip in MapLike[{v}]"))?;
            Ok(json!({
                "ip": ip,
                "reason": v.get("reason").cloned().unwrap_or(json!("Banned by an operator.")),
                "source": "Server",
            }))
        }
        _ => Ok(json!({
            "player": full_player(v.get("player").unwrap_or(v))?,
            "permissionLevel": v.get("permissionLevel").cloned().unwrap_or(json!(4)),
            "bypassesPlayerLimit": v.get("bypassesPlayerLimit").cloned().unwrap_or(json!(false)),
        })),
    }
}

/// What makes two entries of a list of `kind` the same: the IP, or the player's name in lower
/// case.
fn entry_key(kind: &str, v: &Value) -> Value {
    match kind {
        "ip" => v.get("ip").cloned().unwrap_or(v.clone()),
        _ => name_of(v)
            .map(|n| json!(n.to_lowercase()))
            .unwrap_or(Value::Null),
    }
}

/// A list method: `op` (none: get; `set`, `add`, `remove`, `clear`) on `list` of `kind`.
fn list_call(
    list: &mut Vec<Value>,
    kind: &str,
    op: Option<&str>,
    param: &Option<Value>,
) -> Result<Value, String> {
    match op {
        None => {}
        Some("set") => {
            *list = list_of(param)?
                .iter()
                .map(|v| normalize(kind, v))
                .collect::<Result<Vec<_>, _>>()?;
        }
        Some("add") => {
            for item in list_of(param)? {
                let item = normalize(kind, &item)?;
                if !list
                    .iter()
                    .any(|x| entry_key(kind, x) == entry_key(kind, &item))
                {
                    list.push(item);
                }
            }
        }
        Some("remove") => {
            for item in list_of(param)? {
                let k = match (&item, kind) {
                    (Value::String(ip), "ip") => json!(ip),
                    _ => entry_key(kind, &item),
                };
                list.retain(|x| entry_key(kind, x) != k);
            }
        }
        Some("clear") => list.clear(),
        Some(op) => return Err(format!("unknown operation {op}")),
    }
    Ok(json!(list))
}

/// A method on players, the server, its settings or its game rules; the notifications it
/// causes are pushed on `notes`.
fn world_call(
    st: &mut World,
    version: MgmtVersion,
    m: &str,
    param: Option<Value>,
    notes: &mut Vec<(&'static str, Option<Value>)>,
) -> Result<Value, String> {
    match m {
        "players" => Ok(json!(st.online)),
        "players/kick" => {
            let mut kicked = Vec::new();
            for k in list_of(&param)? {
                let name = name_of(&k).ok_or_else(|| format!("{k} names no player"))?;
                let before = st.online.len();
                st.online.retain(|o| o["name"] != json!(name));
                if st.online.len() != before {
                    kicked.push(player(&name));
                    notes.push(("players/left", Some(player(&name))));
                }
            }
            Ok(json!(kicked))
        }
        "server/status" => {
            let (name, protocol) = match version {
                MgmtVersion::V1_21_9 => ("1.21.10", 773),
                MgmtVersion::V1_21_11 => ("1.21.11", 774),
            };
            Ok(json!({
                "started": true,
                "players": st.online,
                "version": {"name": name, "protocol": protocol},
            }))
        }
        "server/save" => {
            st.saves += 1;
            notes.push(("server/saving", None));
            notes.push(("server/saved", None));
            Ok(json!(true))
        }
        "server/stop" => {
            notes.push(("server/stopping", None));
            Ok(json!(true))
        }
        "server/system_message" => {
            let p = param.unwrap_or(Value::Null);
            let text = text_of(&p["message"])?;
            // Checked against the schema already: a boolean, or a number read as one.
            let overlay = p["overlay"]
                .as_bool()
                .unwrap_or_else(|| p["overlay"].as_f64().is_some_and(|n| n != 0.0));
            st.messages.push((text, overlay));
            Ok(json!(true))
        }
        "serversettings/difficulty" => Ok(json!(st.difficulty)),
        "serversettings/difficulty/set" => {
            st.difficulty = param
                .and_then(|d| d.as_str().map(str::to_string))
                .unwrap_or_default();
            Ok(json!(st.difficulty))
        }
        "serversettings/motd" => Ok(json!(st.motd)),
        "serversettings/motd/set" => {
            st.motd = match param {
                Some(Value::String(s)) => s,
                Some(other) => other.to_string(),
                None => String::new(),
            };
            Ok(json!(st.motd))
        }
        "serversettings/autosave" => Ok(json!(st.autosave)),
        "serversettings/autosave/set" => {
            st.autosave = param
                .as_ref()
                .and_then(|b| b.as_bool().or_else(|| b.as_f64().map(|n| n != 0.0)))
                .unwrap_or(false);
            Ok(json!(st.autosave))
        }
        "gamerules" => Ok(Value::Array(
            st.rules.iter().map(|r| r.typed(version)).collect(),
        )),
        "gamerules/update" => {
            let p = param.unwrap_or(Value::Null);
            let rule = update_rule(&mut st.rules, version, &p["key"], &p["value"])?;
            let typed = rule.typed(version);
            notes.push(("gamerules/updated", Some(typed.clone())));
            Ok(typed)
        }
        _ => Err("not implemented by the practice server".into()),
    }
}

/// The list a method reads or changes (`allowlist`, `bans`, `ip_bans`, `operators`), with its
/// name, as it is now.
fn list_of_method(st: &World, m: &str) -> Option<(&'static str, Vec<Value>)> {
    let (name, list) = match m.split('/').next().unwrap_or("") {
        "allowlist" => ("allowlist", &st.allowlist),
        "bans" => ("bans", &st.bans),
        "ip_bans" => ("ip_bans", &st.ip_bans),
        "operators" => ("operators", &st.operators),
        _ => return None,
    };
    Some((name, list.clone()))
}

/// The notifications vanilla sends when list `name` went from `before` to `after`
/// (`rpc.discover` lists them): `NAME/removed` for each entry gone, then `NAME/added` for
/// each new one; an entry is its player's name, or its IP. A removal carries the player
/// (`allowlist`, `bans`), the operator entry (`operators`) or the IP (`ip_bans`); an addition
/// carries the entry as the list stores it.
fn list_changes(name: &str, before: &[Value], after: &[Value]) -> Vec<(String, Value)> {
    let key = |v: &Value| match v.get("ip") {
        Some(ip) => ip.clone(),
        None => json!(name_of(v).map(|n| n.to_lowercase())),
    };
    let missing = |from: &[Value], other: &[Value]| -> Vec<Value> {
        from.iter()
            .filter(|e| !other.iter().any(|o| key(o) == key(e)))
            .cloned()
            .collect()
    };
    let removed = missing(before, after).into_iter().map(|e| {
        let payload = match name {
            "bans" => e["player"].clone(),
            "ip_bans" => e["ip"].clone(),
            _ => e,
        };
        (format!("{name}/removed"), payload)
    });
    let added = missing(after, before)
        .into_iter()
        .map(|e| (format!("{name}/added"), e));
    removed.chain(added).collect()
}

/// Sets a game rule from an update's `key` and `value`, read as the version reads them.
fn update_rule<'a>(
    rules: &'a mut [Rule],
    version: MgmtVersion,
    key: &Value,
    value: &Value,
) -> Result<&'a Rule, String> {
    let key = match key {
        Value::String(s) => s.clone(),
        Value::Number(n) => n.to_string(),
        other => return Err(format!("Not a string: {other}")),
    };
    let rule = match version {
        MgmtVersion::V1_21_9 => rules
            .iter_mut()
            .find(|r| r.camel == key)
            .ok_or_else(|| format!("Unknown game rule: {key}"))?,
        MgmtVersion::V1_21_11 => {
            // An identifier: the namespace defaults to `minecraft`, and camelCase is no
            // identifier at all.
            let id = if key.contains(':') {
                key.clone()
            } else {
                format!("minecraft:{key}")
            };
            if let Some(c) = id.split_once(':').map(|(_, path)| path).and_then(|path| {
                path.chars().find(|c| {
                    !(c.is_ascii_lowercase() || c.is_ascii_digit() || "/._-".contains(*c))
                })
            }) {
                return Err(format!(
                    "Non [a-z0-9/._-] character in path of location: {id} ({c})"
                ));
            }
            rules.iter_mut().find(|r| r.id == id).ok_or_else(|| {
                format!("Unknown registry key in ResourceKey[minecraft:root / minecraft:game_rule]: {id}")
            })?
        }
    };
    rule.value = match (version, rule.value) {
        // 1.21.9 and 1.21.10: the value is a string (a number is read as its text). Where
        // vanilla would read a wrong one as false or 0, this server refuses it, so a test
        // cannot pass on a value vanilla would misread.
        (MgmtVersion::V1_21_9, current) => {
            let text = match value {
                Value::String(s) => s.clone(),
                Value::Number(n) => n.to_string(),
                other => return Err(format!("Not a string: {other}")),
            };
            match current {
                RuleValue::Bool(_) => RuleValue::Bool(match text.as_str() {
                    "true" => true,
                    "false" => false,
                    _ => return Err(format!("Invalid boolean value for {key}: {text}")),
                }),
                RuleValue::Int(_) => RuleValue::Int(
                    text.parse()
                        .map_err(|_| format!("Invalid integer value for {key}: {text}"))?,
                ),
            }
        }
        // 1.21.11 and later: the rule's own codec, a boolean or an integer (Mojang's JSON
        // reader takes a number as a boolean and a boolean as a number).
        (MgmtVersion::V1_21_11, RuleValue::Bool(_)) => RuleValue::Bool(match value {
            Value::Bool(b) => *b,
            Value::Number(n) => n.as_f64().is_some_and(|n| n != 0.0),
            other => return Err(format!("Not a boolean: {other}")),
        }),
        (MgmtVersion::V1_21_11, RuleValue::Int(_)) => RuleValue::Int(match value {
            Value::Number(n) => n.as_i64().ok_or_else(|| format!("Not an integer: {n}"))?,
            Value::Bool(b) => i64::from(*b),
            other => return Err(format!("Not a number: {other}")),
        }),
    };
    Ok(rule)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn game_rules_are_read_as_each_version_reads_them() {
        use MgmtVersion::{V1_21_9 as Old, V1_21_11 as New};
        let cases: &[(MgmtVersion, Value, Value, Result<Value, &str>)] = &[
            (
                Old,
                json!("keepInventory"),
                json!("true"),
                Ok(json!({"key": "keepInventory", "value": "true", "type": "boolean"})),
            ),
            (
                Old,
                json!("randomTickSpeed"),
                json!(7),
                Ok(json!({"key": "randomTickSpeed", "value": "7", "type": "integer"})),
            ),
            (
                Old,
                json!("keepInventory"),
                json!(true),
                Err("Not a string: true"),
            ),
            (
                Old,
                json!("keepInventory"),
                json!("yes"),
                Err("Invalid boolean value for keepInventory: yes"),
            ),
            (
                Old,
                json!("minecraft:keep_inventory"),
                json!("true"),
                Err("Unknown game rule: minecraft:keep_inventory"),
            ),
            (
                New,
                json!("minecraft:keep_inventory"),
                json!(true),
                Ok(json!({"key": "minecraft:keep_inventory", "value": true, "type": "boolean"})),
            ),
            (
                New,
                json!("random_tick_speed"),
                json!(7),
                Ok(json!({"key": "minecraft:random_tick_speed", "value": 7, "type": "integer"})),
            ),
            (
                New,
                json!("minecraft:keep_inventory"),
                json!("true"),
                Err(r#"Not a boolean: "true""#),
            ),
            (
                New,
                json!("minecraft:random_tick_speed"),
                json!("7"),
                Err(r#"Not a number: "7""#),
            ),
            (
                New,
                json!("keepInventory"),
                json!(true),
                Err("Non [a-z0-9/._-] character in path of location: minecraft:keepInventory (I)"),
            ),
            (
                New,
                json!("minecraft:nope"),
                json!(true),
                Err(
                    "Unknown registry key in ResourceKey[minecraft:root / minecraft:game_rule]: minecraft:nope",
                ),
            ),
        ];
        for (version, key, value, want) in cases {
            let mut rules = World::default().rules;
            let got = update_rule(&mut rules, *version, key, value).map(|r| r.typed(*version));
            assert_eq!(
                got.as_ref().map_err(String::as_str),
                want.as_ref().map_err(|e| *e),
                "{version:?} {key} {value}"
            );
        }
    }
}
