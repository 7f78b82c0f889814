//! How the practice server reads a JSON-RPC message and answers it, as vanilla's connection
//! handler does (docs/protocol.md section 9): a batch is answered with an array, a request
//! without an id with nothing; a method name without a namespace means `minecraft:`; a method
//! without a parameter takes none or `[]`, one with a parameter takes it as the only element
//! of an array or by name; the value is checked against the schema the way vanilla's codecs
//! check it, and every refusal is -32602 `Invalid params` with a `data` string saying what is
//! wrong, in vanilla's words where they come from Mojang's codecs (`Not a boolean: "true"`,
//! `No key overlay in MapLike[...]`).

use serde_json::{Map, Value, json};

use super::Hub;
use super::document::required_properties;

/// The answer to one WebSocket text message, if it needs one.
pub(super) fn answer(hub: &Hub, text: &str) -> Option<String> {
    let message: Value = match serde_json::from_str(text) {
        Ok(m) => m,
        Err(e) => {
            return Some(
                error(&Value::Null, -32700, "Parse error", Some(&e.to_string())).to_string(),
            );
        }
    };
    let reply = match &message {
        Value::Object(_) => handle_message(hub, &message)?,
        Value::Array(batch) => Value::Array(
            batch
                .iter()
                .filter_map(|m| match m {
                    Value::Object(_) => handle_message(hub, m),
                    _ => Some(error(&Value::Null, -32600, "Invalid Request", None)),
                })
                .collect(),
        ),
        _ => error(&Value::Null, -32600, "Invalid Request", None),
    };
    Some(reply.to_string())
}

fn error(id: &Value, code: i64, message: &str, data: Option<&str>) -> Value {
    let mut e = json!({"code": code, "message": message});
    if let Some(d) = data.filter(|d| !d.trim().is_empty()) {
        e["data"] = json!(d);
    }
    json!({"jsonrpc": "2.0", "id": id, "error": e})
}

fn handle_message(hub: &Hub, m: &Value) -> Option<Value> {
    let id = m.get("id");
    let method = m.get("method").and_then(Value::as_str);
    let (result, err) = (m.get("result"), m.get("error"));
    match (method, result, err) {
        (Some(method), None, None) => {
            if let Some(id) = id
                && !(id.is_null() || id.is_number() || id.is_string())
            {
                return Some(error(
                    &Value::Null,
                    -32600,
                    "Invalid Request",
                    Some("Invalid request id - only String, Number and NULL supported"),
                ));
            }
            let answer = handle_request(hub, method, m.get("params"));
            // A request without an id is a notification: it runs, and nothing is answered.
            let id = id?;
            Some(match answer {
                Ok(result) => json!({"jsonrpc": "2.0", "id": id, "result": result}),
                Err((code, message, data)) => error(id, code, message, data.as_deref()),
            })
        }
        // Answers to requests of the server's own (it sends none) and errors: nothing.
        (None, Some(_), None) if id.is_some() => None,
        (None, None, Some(_)) => None,
        _ => Some(error(
            id.unwrap_or(&Value::Null),
            -32600,
            "Invalid Request",
            None,
        )),
    }
}

type Refusal = (i64, &'static str, Option<String>);

fn invalid(data: impl Into<String>) -> Refusal {
    (-32602, "Invalid params", Some(data.into()))
}

fn handle_request(hub: &Hub, method: &str, params: Option<&Value>) -> Result<Value, Refusal> {
    let name = full_name(method).ok_or_else(|| {
        (
            -32600,
            "Invalid Request",
            Some(format!("Failed to parse method value: {method}")),
        )
    })?;
    let doc = hub.document();
    if name == "minecraft:rpc.discover" {
        // Not listed in its own answer, as on vanilla.
        no_params(params)?;
        return Ok(doc);
    }
    let not_found = || {
        (
            -32601,
            "Method not found",
            Some(format!("Method not found: {method}")),
        )
    };
    let spec = doc["methods"]
        .as_array()
        .and_then(|ms| ms.iter().find(|m| m["name"] == name.as_str()))
        .filter(|_| !name.contains(":notification/"))
        .ok_or_else(not_found)?;
    let components = doc
        .pointer("/components/schemas")
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default();
    let param = match spec["params"].as_array().and_then(|p| p.first()) {
        None => {
            no_params(params)?;
            None
        }
        Some(p) => {
            let value = one_param(params, p["name"].as_str().unwrap_or(""))?;
            check(&components, &p["schema"], value).map_err(invalid)?;
            Some(value.clone())
        }
    };
    if let Some(answer) = super::mods::call(hub, &name, param.as_ref()) {
        return answer.map_err(invalid);
    }
    let short = name.strip_prefix("minecraft:").unwrap_or(&name);
    super::world::call(hub, short, param).map_err(invalid)
}

/// `minecraft:NAME` for `NAME`; `None` when it is no valid identifier.
fn full_name(method: &str) -> Option<String> {
    let (ns, path) = method.split_once(':').unwrap_or(("minecraft", method));
    let ok = |s: &str, extra: &str| {
        !s.is_empty()
            && s.chars().all(|c| {
                c.is_ascii_lowercase()
                    || c.is_ascii_digit()
                    || "_-.".contains(c)
                    || extra.contains(c)
            })
    };
    (ok(ns, "") && ok(path, "/")).then(|| format!("{ns}:{path}"))
}

fn no_params(params: Option<&Value>) -> Result<(), Refusal> {
    match params {
        None => Ok(()),
        Some(Value::Array(a)) if a.is_empty() => Ok(()),
        Some(_) => Err(invalid("Expected no params, or an empty array")),
    }
}

fn one_param<'a>(params: Option<&'a Value>, name: &str) -> Result<&'a Value, Refusal> {
    match params {
        Some(Value::Object(o)) => o.get(name).ok_or_else(|| {
            invalid(format!(
                "Params passed by-name, but expected param [{name}] does not exist"
            ))
        }),
        Some(Value::Array(a)) if a.len() == 1 => Ok(&a[0]),
        Some(Value::Array(_)) => Err(invalid("Expected exactly one element in the params array")),
        _ => Err(invalid("Expected params as array or named")),
    }
}

/// Checks `v` against `schema` as vanilla's codecs read it (`$ref`s resolved in
/// `components`): a boolean may also be a number, a string or an integer may also be a
/// number or a boolean where Mojang's JSON reader allows it, an object needs the properties
/// its codec requires. The error is vanilla's `data` text.
pub(super) fn check(
    components: &Map<String, Value>,
    schema: &Value,
    v: &Value,
) -> Result<(), String> {
    if let Some(name) = schema
        .get("$ref")
        .and_then(Value::as_str)
        .and_then(|r| r.strip_prefix("#/components/schemas/"))
    {
        let component = components.get(name).unwrap_or(&Value::Null);
        if let Some(obj) = v.as_object() {
            let missing: Vec<String> = required_properties(name)
                .iter()
                .filter(|k| !obj.contains_key(**k))
                .map(|k| format!("No key {k} in MapLike[{v}]"))
                .collect();
            if !missing.is_empty() {
                return Err(missing.join("; "));
            }
        }
        return check(components, component, v);
    }
    if let Some(options) = schema.get("enum").and_then(Value::as_array) {
        let Some(s) = v.as_str() else {
            return Err(format!("Not a string: {v}"));
        };
        if !options.iter().any(|o| o.as_str() == Some(s)) {
            return Err(format!("Unknown element name:{s}"));
        }
        return Ok(());
    }
    let types: Vec<&str> = match schema.get("type") {
        Some(Value::String(t)) => vec![t.as_str()],
        Some(Value::Array(ts)) => ts.iter().filter_map(Value::as_str).collect(),
        _ => Vec::new(),
    };
    match types.as_slice() {
        ["boolean"] if !(v.is_boolean() || v.is_number()) => Err(format!("Not a boolean: {v}")),
        ["integer"] | ["number"] if !(v.is_number() || v.is_boolean()) => {
            Err(format!("Not a number: {v}"))
        }
        ["string"] if !(v.is_string() || v.is_number()) => Err(format!("Not a string: {v}")),
        ["object"] => {
            let obj = v
                .as_object()
                .ok_or_else(|| format!("Not a JSON object: {v}"))?;
            let props = schema.get("properties").and_then(Value::as_object);
            for (k, value) in obj {
                if let Some(s) = props.and_then(|p| p.get(k)) {
                    check(components, s, value)?;
                }
            }
            Ok(())
        }
        ["array"] => {
            let items = v
                .as_array()
                .ok_or_else(|| format!("Not a json array: {v}"))?;
            let item = schema.get("items").unwrap_or(&Value::Null);
            items.iter().try_for_each(|i| check(components, item, i))
        }
        // Several types (a 1.21.11 game rule's value): which one depends on the rule, so the
        // method checks it.
        _ => Ok(()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::mgmt::practice::{MgmtVersion, document::discover_document};

    fn components() -> Map<String, Value> {
        discover_document(MgmtVersion::V1_21_11)["components"]["schemas"]
            .as_object()
            .unwrap()
            .clone()
    }

    #[test]
    fn values_are_checked_as_vanillas_codecs_check_them() {
        let c = components();
        let r = |name: &str| json!({"$ref": format!("#/components/schemas/{name}")});
        let cases: &[(Value, Value, Result<(), &str>)] = &[
            (
                r("system_message"),
                json!({"message": {"literal": "hi"}, "overlay": false}),
                Ok(()),
            ),
            (
                r("system_message"),
                json!({"message": {"literal": "hi"}}),
                Err(r#"No key overlay in MapLike[{"message":{"literal":"hi"}}]"#),
            ),
            (
                r("system_message"),
                json!({"message": {"literal": "hi"}, "overlay": "no"}),
                Err(r#"Not a boolean: "no""#),
            ),
            (json!({"type": "boolean"}), json!(1), Ok(())),
            (
                json!({"type": "boolean"}),
                json!("true"),
                Err(r#"Not a boolean: "true""#),
            ),
            (
                json!({"type": "string"}),
                json!(false),
                Err("Not a string: false"),
            ),
            (json!({"type": "string"}), json!(7), Ok(())),
            (
                json!({"type": "integer"}),
                json!("7"),
                Err(r#"Not a number: "7""#),
            ),
            (
                r("difficulty"),
                json!("extreme"),
                Err("Unknown element name:extreme"),
            ),
            (
                json!({"type": "array", "items": r("player")}),
                json!({}),
                Err("Not a json array: {}"),
            ),
            (
                r("player"),
                json!("Steve"),
                Err(r#"Not a JSON object: "Steve""#),
            ),
        ];
        for (schema, value, want) in cases {
            assert_eq!(
                check(&c, schema, value)
                    .as_ref()
                    .map_err(String::as_str)
                    .copied(),
                *want,
                "{schema} {value}"
            );
        }
    }

    /// Each request and the answer a vanilla server gives it (the `data` of a refusal, or the
    /// result).
    #[test]
    fn requests_are_answered_as_vanilla_answers_them() {
        let hub = Hub::for_test(MgmtVersion::V1_21_11);
        let ask = |text: &str| -> Value {
            serde_json::from_str(&answer(&hub, text).expect("an answer")).unwrap()
        };
        let data = |text: &str| {
            ask(text)["error"]["data"]
                .as_str()
                .unwrap_or("")
                .to_string()
        };
        assert_eq!(
            data(r#"{"jsonrpc":"2.0","id":1,"method":"minecraft:server/save"}"#),
            "Expected params as array or named"
        );
        assert_eq!(
            data(r#"{"jsonrpc":"2.0","id":1,"method":"server/save","params":[true,false]}"#),
            "Expected exactly one element in the params array"
        );
        assert_eq!(
            data(r#"{"jsonrpc":"2.0","id":1,"method":"server/save","params":{"flash":true}}"#),
            "Params passed by-name, but expected param [flush] does not exist"
        );
        assert_eq!(
            data(r#"{"jsonrpc":"2.0","id":1,"method":"players","params":[1]}"#),
            "Expected no params, or an empty array"
        );
        assert_eq!(
            data(
                r#"{"jsonrpc":"2.0","id":1,"method":"server/system_message","params":[{"message":{"literal":"hi"}}]}"#
            ),
            r#"No key overlay in MapLike[{"message":{"literal":"hi"}}]"#
        );
        let e = ask(r#"{"jsonrpc":"2.0","id":7,"method":"minecraft:nope"}"#);
        assert_eq!(
            (e["id"].clone(), e["error"]["code"].clone()),
            (json!(7), json!(-32601))
        );
        assert_eq!(ask("{")["error"]["code"], -32700);
        assert_eq!(ask("3")["error"]["code"], -32600);
        assert_eq!(
            ask(r#"{"jsonrpc":"2.0","id":2,"method":"server/save","params":{"flush":true}}"#)["result"],
            true
        );
        // A batch is answered with an array; a request without an id runs unanswered.
        let batch = ask(
            r#"[{"jsonrpc":"2.0","id":1,"method":"players"},{"jsonrpc":"2.0","method":"allowlist/add","params":[[{"name":"A"}]]},{"jsonrpc":"2.0","id":2,"method":"allowlist"}]"#,
        );
        assert_eq!(batch.as_array().map(Vec::len), Some(2));
        assert_eq!(batch[1]["result"][0]["name"], "A");
        assert_eq!(
            answer(&hub, r#"{"jsonrpc":"2.0","method":"players"}"#),
            None
        );
        // rpc.discover is answered but not listed in its own answer.
        let doc = ask(r#"{"jsonrpc":"2.0","id":3,"method":"rpc.discover"}"#);
        assert!(
            !doc["result"]["methods"]
                .as_array()
                .unwrap()
                .iter()
                .any(|m| m["name"] == "rpc.discover")
        );
    }

    #[test]
    fn method_names() {
        assert_eq!(full_name("players").as_deref(), Some("minecraft:players"));
        assert_eq!(
            full_name("rpc.discover").as_deref(),
            Some("minecraft:rpc.discover")
        );
        assert_eq!(
            full_name("minecraft:allowlist/add").as_deref(),
            Some("minecraft:allowlist/add")
        );
        for bad in ["", "Players", "a:b:c", "minecraft:", "x y"] {
            assert_eq!(full_name(bad), None, "{bad}");
        }
    }
}
