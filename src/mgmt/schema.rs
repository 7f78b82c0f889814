//! The server's `rpc.discover` answer (an OpenRPC document), and command words mapped onto a
//! method and its parameters with it, sans-IO. Because the mapping reads the schema, methods a
//! newer server adds work without a new release of this client.
//!
//! Words to a method: `allowlist add Steve` tries `minecraft:allowlist/add/Steve`, then
//! `minecraft:allowlist/add` (found), so `Steve` is the argument; `-` in a word counts as `_`
//! (`ip-bans`). A full name (`minecraft:server/status`, `rpc.discover`) is taken as it is.
//!
//! Words to parameters, in the order the method lists them: a string parameter takes one word;
//! integers, numbers and booleans are parsed; an array takes every word left, each converted to
//! its item type; an object takes one word as its name-like property (`name`, or a nested
//! player's name, or its first string property) or, as the last parameter with several words
//! left, one word per property in order. A word that starts with `{` or `[` is JSON, used as it
//! is.

use serde_json::{Map, Value, json};

use super::{MgmtError, MgmtResult};

/// The prefix of every vanilla method.
pub const PREFIX: &str = "minecraft:";

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

    /// The name as typed in words: `minecraft:allowlist/add` -> `allowlist add`.
    pub fn words(&self) -> String {
        self.name
            .strip_prefix(PREFIX)
            .unwrap_or(&self.name)
            .replace('/', " ")
    }
}

/// The `rpc.discover` document.
#[derive(Debug, Clone, Default)]
pub struct Schema {
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

    fn unknown(&self, words: &str) -> MgmtError {
        let first = words.split_whitespace().next().unwrap_or("");
        let near: Vec<String> = self
            .callable_words()
            .into_iter()
            .filter(|w| w.split(' ').next() == Some(first))
            .collect();
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
            if rest.is_empty() {
                if p.required {
                    return Err(bad(format!("missing argument <{}>", p.name)));
                }
                break;
            }
            let last = i + 1 == method.params.len();
            let schema = self.deref(&p.schema);
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
        match schema.get("type").and_then(Value::as_str) {
            Some("array") => {
                let item = self.deref(schema.get("items").unwrap_or(&Value::Null));
                let items = words
                    .iter()
                    .map(|w| self.scalar_or_object(item, std::slice::from_ref(w)))
                    .collect::<std::result::Result<Vec<_>, _>>()?;
                Ok((Value::Array(items), words.len()))
            }
            Some("object") if last && words.len() > 1 => {
                // One word per property (`gamerules update KEY VALUE`), else all the words as
                // the name-like property (`server system_message Hello there`).
                let v = self
                    .scalar_or_object(schema, words)
                    .or_else(|e| self.name_like(schema, &words.join(" "), 0).ok_or(e))?;
                Ok((v, words.len()))
            }
            Some("string") if last && words.len() > 1 => self
                .scalar_or_object(schema, &[words.join(" ")])
                .map(|v| (v, words.len())),
            _ => Ok((self.scalar_or_object(schema, &words[..1])?, 1)),
        }
    }

    fn scalar_or_object(
        &self,
        schema: &Value,
        words: &[String],
    ) -> std::result::Result<Value, String> {
        let word = words[0].as_str();
        if let Some(options) = schema.get("enum").and_then(Value::as_array)
            && !options.iter().any(|o| o.as_str() == Some(word))
        {
            let names: Vec<String> = options.iter().map(|o| o.to_string()).collect();
            return Err(format!("'{word}' is not one of {}", names.join(", ")));
        }
        match schema.get("type").and_then(Value::as_str) {
            Some("integer") => word
                .parse::<i64>()
                .map(Value::from)
                .map_err(|_| format!("'{word}' is not an integer")),
            Some("number") => word
                .parse::<f64>()
                .ok()
                .and_then(|n| serde_json::Number::from_f64(n).map(Value::Number))
                .ok_or_else(|| format!("'{word}' is not a number")),
            Some("boolean") => match word {
                "true" | "on" | "yes" => Ok(Value::Bool(true)),
                "false" | "off" | "no" => Ok(Value::Bool(false)),
                _ => Err(format!("'{word}' is not true or false")),
            },
            Some("object") => {
                let props = schema
                    .get("properties")
                    .and_then(Value::as_object)
                    .cloned()
                    .unwrap_or_default();
                if words.len() > 1 {
                    let mut obj = Map::new();
                    if words.len() > props.len() {
                        return Err(format!(
                            "{} words for an object of {} properties",
                            words.len(),
                            props.len()
                        ));
                    }
                    for ((name, s), w) in props.iter().zip(words) {
                        let v = self.scalar_or_object(self.deref(s), std::slice::from_ref(w))?;
                        obj.insert(name.clone(), v);
                    }
                    return Ok(Value::Object(obj));
                }
                self.name_like(schema, word, 0)
                    .ok_or_else(|| format!("cannot make an object from '{word}'; give JSON"))
            }
            _ => Ok(Value::String(word.to_string())),
        }
    }

    /// `{"name": word}`, else `{REQUIRED_STRING_PROPERTY: word}` (an IP ban's `ip`), else
    /// `{"player": {"name": word}}` (a nested object's), else `{FIRST_STRING_PROPERTY: word}`.
    fn name_like(&self, schema: &Value, word: &str, depth: usize) -> Option<Value> {
        let props = schema.get("properties")?.as_object()?;
        if props.contains_key("name") {
            return Some(json!({ "name": word }));
        }
        let is_string =
            |s: &Value| self.deref(s).get("type").and_then(Value::as_str) == Some("string");
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
                .filter(|(_, s)| s.get("type").and_then(Value::as_str) == Some("object"))
        };
        // A nested player (`{"name": ...}`) wins over other nested objects (a kick's message).
        let has_name = |s: &Value| s.pointer("/properties/name").is_some();
        if let Some((key, _)) = objects().find(|(_, s)| has_name(s)) {
            return Some(json!({ key.clone(): { "name": word } }));
        }
        if depth < 3 {
            for (key, s) in props {
                let s = self.deref(s);
                if s.get("type").and_then(Value::as_str) == Some("object")
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

#[cfg(test)]
mod tests {
    use super::*;

    fn words(s: &str) -> Vec<String> {
        s.split_whitespace().map(str::to_string).collect()
    }

    fn schema() -> Schema {
        Schema::from_discover(&super::super::practice::discover_document()).unwrap()
    }

    #[test]
    fn words_to_methods_and_params() {
        let s = schema();
        let cases: &[(&str, &str, Value)] = &[
            ("players", "minecraft:players", json!([])),
            ("server save", "minecraft:server/save", json!([])),
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
                "gamerules update doDaylightCycle false",
                "minecraft:gamerules/update",
                json!([{"key": "doDaylightCycle", "value": "false"}]),
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
                json!([{"message": "Hello there"}]),
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
        ];
        for (w, method, params) in cases {
            let (m, p) = s.resolve(&words(w)).unwrap_or_else(|e| panic!("{w}: {e}"));
            assert_eq!(&m, method, "{w}");
            assert_eq!(&Value::Array(p), params, "{w}");
        }
    }

    #[test]
    fn bad_words() {
        let s = schema();
        for (w, want) in [
            ("allowlist frobnicate", "did you mean: allowlist"),
            ("teleport Steve", "rcon --mgmt methods"),
            ("players extra", "did you mean: players, players kick"),
            ("server status now", "unexpected argument now"),
            ("serversettings motd set", "missing argument <message>"),
            ("serversettings difficulty set extreme", "is not one of"),
            ("serversettings autosave set maybe", "not true or false"),
            ("allowlist add", "missing argument <add>"),
            ("notification players joined", "no management method"),
        ] {
            let e = s.resolve(&words(w)).unwrap_err().to_string();
            assert!(e.contains(want), "{w}: {e}");
        }
        assert!(s.resolve(&[]).is_err());
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
