//! The server's `rpc.discover` answer (an OpenRPC document), and command words mapped onto a
//! method and its parameters with it, sans-IO. Because the mapping reads the schema, methods a
//! newer server adds work without a new release of this client.
//!
//! Words to a method: `allowlist add Steve` tries `minecraft:allowlist/add/Steve`, then
//! `minecraft:allowlist/add` (found), so `Steve` is the argument; `-` in a word counts as `_`
//! (`ip-bans`). A full name (`minecraft:server/status`, `rpc.discover`) is taken as it is.
//!
//! Words to parameters, in the order the method lists them, with the types the server's
//! schema gives (docs/protocol.md section 9), not a table of this client's:
//! - a string parameter takes one word, or the rest of the line when it is the last one;
//!   integers, numbers and booleans (`true/false/on/off/yes/no`) are parsed; a value that may
//!   be of several types (`"type": ["boolean", "integer"]`, a game rule's value on 1.21.11)
//!   is the first of them the word can be, so `true` is a boolean and `7` an integer there
//!   while a string-typed value (1.21.9) stays `"true"`;
//! - an array takes every word left, each converted to its item type;
//! - an object takes its name-like property from the words: `name` (a player), `literal` (a
//!   text message), a required string property, a nested player's name, else its first
//!   string property; an object with `key` and `value` properties takes `KEY VALUE` (a game
//!   rule). Every boolean property the words do not give is `false` (a system message's
//!   `overlay`, which vanilla requires though its schema does not say so);
//! - a required boolean parameter left out is `false` (`server save` sends `flush: false`),
//!   and the parameter's own name as a word is `true` (`server save flush`); the value of a
//!   `.../set` method must be given;
//! - a word that starts with `{` or `[` is JSON, used as it is.

use serde_json::{Map, Value, json};

use super::{MgmtError, MgmtResult};

/// The prefix of every vanilla method.
pub const PREFIX: &str = "minecraft:";

/// The method that returns the schema.
pub const DISCOVER: &str = "rpc.discover";

/// One parameter of a method.
#[derive(Debug, Clone, PartialEq)]
pub struct Param {
    /// Its name.
    pub name: String,
    /// Its JSON schema (references not resolved).
    pub schema: Value,
    /// Whether it must be given.
    pub required: bool,
}

/// One method (or notification) from the schema.
#[derive(Debug, Clone, PartialEq)]
pub struct Method {
    /// The full name, e.g. `minecraft:allowlist/add`.
    pub name: String,
    /// Its description, if any.
    pub description: String,
    /// Its parameters in order.
    pub params: Vec<Param>,
}

impl Method {
    /// Whether this is a notification the server sends rather than a method to call.
    pub fn is_notification(&self) -> bool {
        self.name.contains(":notification/")
    }

    /// The name as typed in words: `minecraft:allowlist/add` -> `allowlist add`; a method of
    /// another namespace (a server mod's) by its full name, `console:send`, as it is called.
    pub fn words(&self) -> String {
        match self.name.strip_prefix(PREFIX) {
            Some(path) => path.replace('/', " "),
            None => self.name.clone(),
        }
    }
}

/// The `rpc.discover` document.
#[derive(Debug, Clone, Default)]
pub struct Schema {
    /// The API version, `info.version` (1.0.0 on 1.21.9, 2.0.0 on 1.21.11, ...), when given:
    /// the methods and their types are read from the document whatever it is.
    pub version: Option<String>,
    /// Every method and notification listed.
    pub methods: Vec<Method>,
    /// `components.schemas`, for `$ref`s.
    components: Map<String, Value>,
}

impl Schema {
    /// Reads an `rpc.discover` result.
    pub fn from_discover(doc: &Value) -> MgmtResult<Schema> {
        let list = doc
            .get("methods")
            .and_then(Value::as_array)
            .ok_or_else(|| MgmtError::Protocol("rpc.discover answer has no methods list".into()))?;
        let mut methods = Vec::new();
        for m in list {
            let Some(name) = m.get("name").and_then(Value::as_str) else {
                continue;
            };
            let params = m
                .get("params")
                .and_then(Value::as_array)
                .map(|ps| {
                    ps.iter()
                        .filter_map(|p| {
                            Some(Param {
                                name: p.get("name")?.as_str()?.to_string(),
                                schema: p.get("schema").cloned().unwrap_or(Value::Null),
                                required: p
                                    .get("required")
                                    .and_then(Value::as_bool)
                                    .unwrap_or(false),
                            })
                        })
                        .collect()
                })
                .unwrap_or_default();
            methods.push(Method {
                name: name.to_string(),
                description: m
                    .get("description")
                    .or_else(|| m.get("summary"))
                    .and_then(Value::as_str)
                    .unwrap_or("")
                    .to_string(),
                params,
            });
        }
        let components = doc
            .pointer("/components/schemas")
            .and_then(Value::as_object)
            .cloned()
            .unwrap_or_default();
        Ok(Schema {
            version: doc
                .pointer("/info/version")
                .and_then(Value::as_str)
                .map(str::to_string),
            methods,
            components,
        })
    }

    /// The method with this full name.
    pub fn method(&self, name: &str) -> Option<&Method> {
        self.methods.iter().find(|m| m.name == name)
    }

    /// Callable methods as typed in words (`allowlist add`), for completion and listings.
    pub fn callable_words(&self) -> Vec<String> {
        let mut w: Vec<String> = self
            .methods
            .iter()
            .filter(|m| !m.is_notification())
            .map(Method::words)
            .collect();
        w.sort();
        w
    }

    /// Maps words onto a method and its positional params (see the module comment).
    pub fn resolve(&self, words: &[String]) -> MgmtResult<(String, Vec<Value>)> {
        let joined = words.join(" ");
        let Some(first) = words.first() else {
            return Err(MgmtError::UnknownMethod {
                words: joined,
                hint: String::new(),
            });
        };
        if first.contains(':') || first.starts_with("rpc.") {
            // Vanilla does not list `rpc.discover` in its own answer; it takes no params.
            if first == DISCOVER && self.method(first).is_none() {
                if words.len() > 1 {
                    return Err(MgmtError::BadArgument {
                        method: DISCOVER.into(),
                        why: format!("unexpected arguments {}", words[1..].join(" ")),
                    });
                }
                return Ok((DISCOVER.into(), Vec::new()));
            }
            let method = self.method(first).ok_or_else(|| self.unknown(&joined))?;
            return Ok((method.name.clone(), self.params(method, &words[1..])?));
        }
        for k in (1..=words.len()).rev() {
            let path: Vec<String> = words[..k].iter().map(|w| w.replace('-', "_")).collect();
            let name = format!("{PREFIX}{}", path.join("/"));
            if let Some(method) = self.method(&name).filter(|m| !m.is_notification()) {
                // `allowlist frobnicate`: a method without parameters, and words that name no
                // sub-method: say which sub-methods there are.
                let prefix = format!("{name}/");
                if k < words.len()
                    && method.params.is_empty()
                    && self.methods.iter().any(|m| m.name.starts_with(&prefix))
                {
                    return Err(self.unknown(&joined));
                }
                return Ok((method.name.clone(), self.params(method, &words[k..])?));
            }
        }
        Err(self.unknown(&joined))
    }

    /// The error for words that name no method, with the methods they may have meant: those of
    /// the same first word, else (a typo in it: `allowlst add`) those whose first word is one
    /// or two edits away, narrowed to the ones whose second word is the one given.
    fn unknown(&self, words: &str) -> MgmtError {
        let given: Vec<&str> = words.split_whitespace().collect();
        let first = given.first().copied().unwrap_or("");
        let callable = self.callable_words();
        let head = |w: &String| w.split(' ').next().unwrap_or("").to_string();
        let mut near: Vec<String> = callable
            .iter()
            .filter(|w| head(w) == first)
            .cloned()
            .collect();
        if near.is_empty() {
            near = callable
                .into_iter()
                .filter(|w| is_typo_of(first, &head(w)))
                .collect();
            let second = |w: &String| w.split(' ').nth(1).map(str::to_string);
            let same: Vec<String> = near
                .iter()
                .filter(|w| second(w).as_deref() == given.get(1).copied())
                .cloned()
                .collect();
            if !same.is_empty() {
                near = same;
            }
        }
        let hint = if near.is_empty() {
            " (`rcon --mgmt methods` lists them)".to_string()
        } else {
            format!(" (did you mean: {}?)", near.join(", "))
        };
        MgmtError::UnknownMethod {
            words: words.to_string(),
            hint,
        }
    }

    /// Resolves `{"$ref": "#/components/schemas/NAME"}` (one level at a time).
    fn deref<'a>(&'a self, schema: &'a Value) -> &'a Value {
        let mut s = schema;
        for _ in 0..8 {
            match s
                .get("$ref")
                .and_then(Value::as_str)
                .and_then(|r| r.strip_prefix("#/components/schemas/"))
                .and_then(|n| self.components.get(n))
            {
                Some(next) => s = next,
                None => break,
            }
        }
        s
    }

    fn params(&self, method: &Method, words: &[String]) -> MgmtResult<Vec<Value>> {
        let bad = |why: String| MgmtError::BadArgument {
            method: method.name.clone(),
            why,
        };
        let mut out = Vec::new();
        let mut rest = words;
        for (i, p) in method.params.iter().enumerate() {
            let schema = self.deref(&p.schema);
            let boolean = types(schema) == ["boolean"];
            if rest.is_empty() {
                // A required boolean left out is false (`server save` is a save without
                // `flush`), except the value a `.../set` method exists to set.
                if p.required && boolean && !method.name.ends_with("/set") {
                    out.push(Value::Bool(false));
                    continue;
                }
                if p.required {
                    return Err(bad(format!("missing argument <{}>", p.name)));
                }
                // Params go by position: once one is left out, the later ones are too.
                break;
            }
            // A boolean named by its own name is true: `server save flush`.
            if boolean && rest[0] == p.name {
                out.push(Value::Bool(true));
                rest = &rest[1..];
                continue;
            }
            let last = i + 1 == method.params.len();
            let (value, used) = self
                .take(schema, rest, last)
                .map_err(|why| bad(format!("argument <{}>: {why}", p.name)))?;
            out.push(value);
            rest = &rest[used..];
        }
        if !rest.is_empty() {
            return Err(bad(format!(
                "unexpected argument{} {}",
                if rest.len() == 1 { "" } else { "s" },
                rest.join(" ")
            )));
        }
        Ok(out)
    }

    /// Converts words at the front of `words` to a value of `schema`; returns how many it used.
    fn take(
        &self,
        schema: &Value,
        words: &[String],
        last: bool,
    ) -> std::result::Result<(Value, usize), String> {
        let word = &words[0];
        if word.starts_with('{') || word.starts_with('[') {
            let v = serde_json::from_str(word).map_err(|e| format!("'{word}' is not JSON: {e}"))?;
            return Ok((v, 1));
        }
        match types(schema).as_slice() {
            ["array"] => {
                let item = self.deref(schema.get("items").unwrap_or(&Value::Null));
                let items = words
                    .iter()
                    .map(|w| self.value(item, w))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                Ok((Value::Array(items), words.len()))
            }
            ["object"] if last && words.len() > 1 => {
                // `gamerules update KEY VALUE`, else all the words as the name-like property
                // (`server system_message Hello there`).
                let v = match self.key_value(schema, words)? {
                    Some(v) => v,
                    None => self.object(schema, &words.join(" "))?,
                };
                Ok((v, words.len()))
            }
            ["string"] if last && words.len() > 1 => {
                Ok((self.value(schema, &words.join(" "))?, words.len()))
            }
            _ => Ok((self.value(schema, word)?, 1)),
        }
    }

    /// One word as a value of `schema`: the first of the schema's types that the word can be
    /// (a `"type": ["boolean", "integer"]` value is `true` or `7` as typed), or an object
    /// from its name-like property.
    fn value(&self, schema: &Value, word: &str) -> std::result::Result<Value, String> {
        if let Some(options) = schema.get("enum").and_then(Value::as_array)
            && !options.iter().any(|o| o.as_str() == Some(word))
        {
            let names: Vec<String> = options.iter().map(|o| o.to_string()).collect();
            return Err(format!("'{word}' is not one of {}", names.join(", ")));
        }
        let types = types(schema);
        for t in &types {
            match *t {
                "integer" => {
                    if let Ok(n) = word.parse::<i64>() {
                        return Ok(Value::from(n));
                    }
                }
                "number" => {
                    if let Some(n) = word
                        .parse::<f64>()
                        .ok()
                        .and_then(serde_json::Number::from_f64)
                    {
                        return Ok(Value::Number(n));
                    }
                }
                "boolean" => match word {
                    "true" | "on" | "yes" => return Ok(Value::Bool(true)),
                    "false" | "off" | "no" => return Ok(Value::Bool(false)),
                    _ => {}
                },
                "object" => return self.object(schema, word),
                _ => return Ok(Value::String(word.to_string())),
            }
        }
        if types.is_empty() {
            return Ok(Value::String(word.to_string()));
        }
        let wanted: Vec<&str> = types
            .iter()
            .map(|t| match *t {
                "integer" => "an integer",
                "number" => "a number",
                "boolean" => "true or false",
                other => other,
            })
            .collect();
        Err(format!("'{word}' is not {}", wanted.join(", nor ")))
    }

    /// `{"key": KEY, "value": VALUE}` for an object with those two properties (a game rule);
    /// `None` for other objects. The value is typed by its own schema: a string on 1.21.9 and
    /// 1.21.10, a boolean or an integer on 1.21.11 and later.
    fn key_value(
        &self,
        schema: &Value,
        words: &[String],
    ) -> std::result::Result<Option<Value>, String> {
        let props = schema.get("properties").and_then(Value::as_object);
        let (Some(key), Some(value)) = (
            props.and_then(|p| p.get("key")),
            props.and_then(|p| p.get("value")),
        ) else {
            return Ok(None);
        };
        let (k, v) = (self.deref(key), self.deref(value));
        let text = words[1..].join(" ");
        let mut obj = Map::new();
        obj.insert("key".into(), self.value(k, &words[0])?);
        obj.insert("value".into(), self.value(v, &text)?);
        Ok(Some(self.with_booleans(schema, Value::Object(obj))))
    }

    /// An object of `schema` made from one text: its name-like property, and its booleans.
    fn object(&self, schema: &Value, text: &str) -> std::result::Result<Value, String> {
        let v = self
            .name_like(schema, text, 0)
            .ok_or_else(|| format!("cannot make an object from '{text}'; give JSON"))?;
        Ok(self.with_booleans(schema, v))
    }

    /// Every boolean property the words did not give, as `false`: vanilla requires some
    /// (a system message's `overlay`) though its schema marks no property as required, and
    /// for the others `false` is what leaving them out means.
    fn with_booleans(&self, schema: &Value, mut v: Value) -> Value {
        let (Some(obj), Some(props)) = (
            v.as_object_mut(),
            schema.get("properties").and_then(Value::as_object),
        ) else {
            return v;
        };
        for (k, s) in props {
            if types(self.deref(s)) == ["boolean"] && !obj.contains_key(k) {
                obj.insert(k.clone(), Value::Bool(false));
            }
        }
        v
    }

    /// `{"name": word}` (a player), `{"literal": word}` (a text message), `{"ip": word}` for an
    /// IP address, else `{REQUIRED_STRING_PROPERTY: word}`, else `{"player": {"name": word}}`
    /// (a nested object's), else `{FIRST_STRING_PROPERTY: word}`.
    fn name_like(&self, schema: &Value, word: &str, depth: usize) -> Option<Value> {
        let props = schema.get("properties")?.as_object()?;
        for key in ["name", "literal"] {
            if props.contains_key(key) {
                return Some(json!({ key: word }));
            }
        }
        // An IP address is an IP ban's `ip`, not the name of its optional player.
        if props.contains_key("ip") && word.parse::<std::net::IpAddr>().is_ok() {
            return Some(json!({ "ip": word }));
        }
        let is_string = |s: &Value| types(self.deref(s)) == ["string"];
        // A required string property first (an IP ban's `ip`), else the first string property.
        let required = schema
            .get("required")
            .and_then(Value::as_array)
            .into_iter()
            .flatten()
            .filter_map(Value::as_str)
            .find(|k| props.get(*k).is_some_and(is_string));
        if let Some(k) = required {
            return Some(json!({ k: word }));
        }
        let objects = || {
            props
                .iter()
                .map(|(k, s)| (k, self.deref(s)))
                .filter(|(_, s)| types(s) == ["object"])
        };
        // A nested player (`{"name": ...}`) wins over other nested objects (a kick's message).
        let has_name = |s: &Value| s.pointer("/properties/name").is_some();
        if let Some((key, _)) = objects().find(|(_, s)| has_name(s)) {
            return Some(json!({ key.clone(): { "name": word } }));
        }
        if depth < 3 {
            for (key, s) in props {
                let s = self.deref(s);
                if types(s) == ["object"]
                    && let Some(inner) = self.name_like(s, word, depth + 1)
                {
                    return Some(json!({ key.clone(): inner }));
                }
            }
        }
        let key = props.iter().find(|(_, s)| is_string(s))?.0.clone();
        Some(json!({ key: word }))
    }
}

/// The JSON types a schema allows, in its order: `"type": "string"`, or a list such as vanilla
/// 1.21.11's game rule value, `"type": ["boolean", "integer"]`.
fn types(schema: &Value) -> Vec<&str> {
    match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    }
}

/// Whether `typed` is `word` with one or two letters wrong, missing, extra or swapped (at most
/// a third of the word, so short words need a close match).
fn is_typo_of(typed: &str, word: &str) -> bool {
    let (a, b): (Vec<char>, Vec<char>) = (typed.chars().collect(), word.chars().collect());
    // Optimal string alignment distance: three rows of the edit table.
    let mut rows = [
        vec![0; b.len() + 1],
        (0..=b.len()).collect::<Vec<usize>>(),
        Vec::new(),
    ];
    for i in 1..=a.len() {
        rows[2] = vec![i; b.len() + 1];
        for j in 1..=b.len() {
            let cost = usize::from(a[i - 1] != b[j - 1]);
            let mut d = (rows[1][j] + 1)
                .min(rows[2][j - 1] + 1)
                .min(rows[1][j - 1] + cost);
            if i > 1 && j > 1 && a[i - 1] == b[j - 2] && a[i - 2] == b[j - 1] {
                d = d.min(rows[0][j - 2] + 1);
            }
            rows[2][j] = d;
        }
        rows.rotate_left(1);
    }
    let distance = rows[1][b.len()];
    distance > 0 && distance <= 2 && distance * 3 <= b.len()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mgmt::practice::{self, MgmtVersion};

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn schema() -> Schema {
        schema_of(MgmtVersion::V1_21_11)
    }

    fn schema_of(version: MgmtVersion) -> Schema {
        Schema::from_discover(&practice::discover_document(version)).unwrap()
    }

    fn check(s: &Schema, cases: &[(&str, &str, Value)]) {
        for (w, method, params) in cases {
            let (m, p) = s.resolve(&words(w)).unwrap_or_else(|e| panic!("{w}: {e}"));
            assert_eq!(&m, method, "{w}");
            assert_eq!(&Value::Array(p), params, "{w}");
        }
    }

    #[test]
    fn words_to_methods_and_params() {
        check(
            &schema(),
            &[
                ("players", "minecraft:players", json!([])),
                ("server save", "minecraft:server/save", json!([false])),
                ("server save flush", "minecraft:server/save", json!([true])),
                ("server save true", "minecraft:server/save", json!([true])),
                ("server status", "minecraft:server/status", json!([])),
                (
                    "allowlist add Steve Alex",
                    "minecraft:allowlist/add",
                    json!([[{"name": "Steve"}, {"name": "Alex"}]]),
                ),
                (
                    "bans add Griefer",
                    "minecraft:bans/add",
                    json!([[{"player": {"name": "Griefer"}}]]),
                ),
                (
                    "ip-bans add 10.0.0.1",
                    "minecraft:ip_bans/add",
                    json!([[{"ip": "10.0.0.1"}]]),
                ),
                (
                    "ip-bans remove 10.0.0.1",
                    "minecraft:ip_bans/remove",
                    json!([["10.0.0.1"]]),
                ),
                (
                    "operators add Alex",
                    "minecraft:operators/add",
                    json!([[{"player": {"name": "Alex"}, "bypassesPlayerLimit": false}]]),
                ),
                (
                    "serversettings difficulty set hard",
                    "minecraft:serversettings/difficulty/set",
                    json!(["hard"]),
                ),
                (
                    "serversettings autosave set false",
                    "minecraft:serversettings/autosave/set",
                    json!([false]),
                ),
                (
                    "gamerules update minecraft:keep_inventory true",
                    "minecraft:gamerules/update",
                    json!([{"key": "minecraft:keep_inventory", "value": true}]),
                ),
                (
                    "gamerules update minecraft:random_tick_speed 7",
                    "minecraft:gamerules/update",
                    json!([{"key": "minecraft:random_tick_speed", "value": 7}]),
                ),
                (
                    r#"allowlist set [{"name":"A"}]"#,
                    "minecraft:allowlist/set",
                    json!([[{"name": "A"}]]),
                ),
                (
                    "minecraft:server/status",
                    "minecraft:server/status",
                    json!([]),
                ),
                ("rpc.discover", "rpc.discover", json!([])),
                (
                    "server system_message Hello there",
                    "minecraft:server/system_message",
                    json!([{"message": {"literal": "Hello there"}, "overlay": false}]),
                ),
                (
                    "server system_message Hi",
                    "minecraft:server/system_message",
                    json!([{"message": {"literal": "Hi"}, "overlay": false}]),
                ),
                (
                    r#"server system_message {"message":{"literal":"Hi"},"overlay":true}"#,
                    "minecraft:server/system_message",
                    json!([{"message": {"literal": "Hi"}, "overlay": true}]),
                ),
                (
                    "serversettings motd set Hello there",
                    "minecraft:serversettings/motd/set",
                    json!(["Hello there"]),
                ),
                (
                    "players kick Steve",
                    "minecraft:players/kick",
                    json!([[{"player": {"name": "Steve"}}]]),
                ),
            ],
        );
    }

    #[test]
    fn game_rule_values_take_the_type_each_version_gives() {
        check(
            &schema_of(MgmtVersion::V1_21_9),
            &[
                (
                    "gamerules update keepInventory true",
                    "minecraft:gamerules/update",
                    json!([{"key": "keepInventory", "value": "true"}]),
                ),
                (
                    "gamerules update randomTickSpeed 7",
                    "minecraft:gamerules/update",
                    json!([{"key": "randomTickSpeed", "value": "7"}]),
                ),
            ],
        );
        let e = schema()
            .resolve(&words("gamerules update minecraft:keep_inventory maybe"))
            .unwrap_err()
            .to_string();
        assert!(
            e.contains("'maybe' is not true or false, nor an integer"),
            "{e}"
        );
    }

    #[test]
    fn bad_words() {
        let s = schema();
        for (w, want) in [
            ("allowlist frobnicate", "did you mean: allowlist"),
            ("allowlst add Bob", "(did you mean: allowlist add?)"),
            ("alowlist", "(did you mean: allowlist?)"),
            ("playrs kick Bob", "(did you mean: players kick?)"),
            ("sever system_message hi", "did you mean: server "),
            ("teleport Steve", "rcon --mgmt methods"),
            ("players extra", "did you mean: players, players kick"),
            ("server status now", "unexpected argument now"),
            ("serversettings motd set", "missing argument <message>"),
            ("serversettings difficulty set extreme", "is not one of"),
            ("serversettings autosave set maybe", "not true or false"),
            ("serversettings autosave set", "missing argument <enable>"),
            ("server save flush now", "unexpected argument now"),
            ("rpc.discover now", "unexpected arguments now"),
            ("allowlist add", "missing argument <add>"),
            ("notification players joined", "no management method"),
        ] {
            let e = s.resolve(&words(w)).unwrap_err().to_string();
            assert!(e.contains(want), "{w}: {e}");
        }
        assert!(s.resolve(&[]).is_err());
    }

    #[test]
    fn the_api_version_and_a_mods_methods_by_their_full_names() {
        assert_eq!(schema().version.as_deref(), Some("2.0.0"));
        assert_eq!(
            schema_of(MgmtVersion::V1_21_9).version.as_deref(),
            Some("1.0.0")
        );
        let mut doc = practice::discover_document(MgmtVersion::V1_21_11);
        practice::extend_document(&mut doc, &practice::MgmtMod::ALL);
        let s = Schema::from_discover(&doc).unwrap();
        let w = s.callable_words();
        assert!(w.contains(&"msmpenhanced:command/run".to_string()), "{w:?}");
        assert!(w.contains(&"console:send".to_string()), "{w:?}");
        check(
            &s,
            &[
                (
                    "msmpenhanced:command/suggest ti",
                    "msmpenhanced:command/suggest",
                    json!(["ti"]),
                ),
                (
                    "console:send say hi",
                    "console:send",
                    json!([{"command": "say hi"}]),
                ),
            ],
        );
        assert_eq!(
            Schema::from_discover(&json!({"methods": []}))
                .unwrap()
                .version,
            None
        );
    }

    #[test]
    fn completion_words() {
        let w = schema().callable_words();
        assert!(w.contains(&"allowlist add".to_string()));
        assert!(w.contains(&"server save".to_string()));
        assert!(!w.iter().any(|x| x.contains("notification")));
    }

    proptest::proptest! {
        // Any words a user types map onto a method or give an error, never a panic.
        #[test]
        fn any_words_resolve_or_fail_cleanly(words in proptest::collection::vec("[a-z_\\-{}\\[\\]\":0-9]{0,12}", 0..6)) {
            let _ = schema().resolve(&words);
        }
    }
}
