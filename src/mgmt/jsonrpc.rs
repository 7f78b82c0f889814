//! JSON-RPC 2.0 messages as the management protocol uses them, sans-IO: requests with numeric
//! ids, responses matched by id, notifications (no id) pushed by the server.

use serde_json::{Value, json};

use super::{MgmtError, MgmtResult};

/// Longest message accepted (a full `rpc.discover` document is well under this).
pub const MAX_MESSAGE_BYTES: usize = 16 << 20;

/// A request to send: `{"jsonrpc":"2.0","id":ID,"method":...,"params":...}`. Empty params are
/// left out (the protocol's methods without parameters take none).
pub fn request(id: u64, method: &str, params: &[Value]) -> String {
    let mut m = json!({"jsonrpc": "2.0", "id": id, "method": method});
    if !params.is_empty() {
        m["params"] = Value::Array(params.to_vec());
    }
    m.to_string()
}

/// A notification the server pushed.
#[derive(Debug, Clone, PartialEq)]
pub struct Notification {
    /// The method, e.g. `minecraft:notification/players/joined`.
    pub method: String,
    /// Its params (`null` when absent).
    pub params: Value,
}

/// A JSON-RPC error object as the server sent it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RpcError {
    /// The code (-32602 for invalid params, ...).
    pub code: i64,
    /// The message, e.g. `Invalid params`.
    pub message: String,
    /// The `data` member, which says what exactly is wrong (vanilla: `No key overlay in
    /// MapLike[...]`, `Not a boolean: "true"`); a non-string `data` is kept as its JSON text.
    pub data: Option<String>,
}

/// One message from the server.
#[derive(Debug, Clone, PartialEq)]
pub enum Incoming {
    /// The answer to request `id`: a result, or the server's error.
    Response {
        /// The request's id (`None` for an error about an unreadable request).
        id: Option<u64>,
        /// The result, or the error.
        outcome: std::result::Result<Value, RpcError>,
    },
    /// A notification.
    Notification(Notification),
}

/// Parses one text frame.
pub fn parse(text: &str) -> MgmtResult<Incoming> {
    if text.len() > MAX_MESSAGE_BYTES {
        return Err(MgmtError::Protocol(format!(
            "message of {} bytes is over the {MAX_MESSAGE_BYTES}-byte limit",
            text.len()
        )));
    }
    let v: Value = serde_json::from_str(text)
        .map_err(|e| MgmtError::Protocol(format!("message is not JSON: {e}")))?;
    let obj = v
        .as_object()
        .ok_or_else(|| MgmtError::Protocol("message is not a JSON object".into()))?;
    if obj.get("jsonrpc").and_then(Value::as_str) != Some("2.0") {
        return Err(MgmtError::Protocol(
            "message lacks \"jsonrpc\": \"2.0\"".into(),
        ));
    }
    match obj.get("id") {
        None => {
            let method = obj
                .get("method")
                .and_then(Value::as_str)
                .ok_or_else(|| MgmtError::Protocol("notification without a method".into()))?;
            Ok(Incoming::Notification(Notification {
                method: method.to_string(),
                params: obj.get("params").cloned().unwrap_or(Value::Null),
            }))
        }
        Some(id) => {
            let id = match id {
                Value::Null => None,
                other => Some(
                    other
                        .as_u64()
                        .ok_or_else(|| MgmtError::Protocol(format!("unexpected id {other}")))?,
                ),
            };
            let outcome = if let Some(err) = obj.get("error") {
                Err(RpcError {
                    code: err.get("code").and_then(Value::as_i64).unwrap_or(0),
                    message: err
                        .get("message")
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string(),
                    data: err
                        .get("data")
                        .filter(|d| !d.is_null())
                        .map(|d| d.as_str().map(str::to_string).unwrap_or(d.to_string())),
                })
            } else if let Some(result) = obj.get("result") {
                Ok(result.clone())
            } else {
                return Err(MgmtError::Protocol(
                    "response without result or error".into(),
                ));
            };
            Ok(Incoming::Response { id, outcome })
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests() {
        assert_eq!(
            request(1, "rpc.discover", &[]),
            r#"{"id":1,"jsonrpc":"2.0","method":"rpc.discover"}"#
        );
        let r: Value =
            serde_json::from_str(&request(7, "m", &[json!([{"name": "Steve"}])])).unwrap();
        assert_eq!(r["params"], json!([[{"name": "Steve"}]]));
    }

    #[test]
    fn incoming() {
        let cases: &[(&str, Incoming)] = &[
            (
                r#"{"jsonrpc":"2.0","id":3,"result":[1]}"#,
                Incoming::Response {
                    id: Some(3),
                    outcome: Ok(json!([1])),
                },
            ),
            (
                r#"{"jsonrpc":"2.0","id":4,"error":{"code":-32601,"message":"Method not found"}}"#,
                Incoming::Response {
                    id: Some(4),
                    outcome: Err(RpcError {
                        code: -32601,
                        message: "Method not found".into(),
                        data: None,
                    }),
                },
            ),
            (
                r#"{"jsonrpc":"2.0","id":null,"error":{"code":-32700,"message":"Parse error","data":"x"}}"#,
                Incoming::Response {
                    id: None,
                    outcome: Err(RpcError {
                        code: -32700,
                        message: "Parse error".into(),
                        data: Some("x".into()),
                    }),
                },
            ),
            (
                r#"{"jsonrpc":"2.0","id":5,"error":{"code":-32602,"message":"Invalid params","data":{"k":1}}}"#,
                Incoming::Response {
                    id: Some(5),
                    outcome: Err(RpcError {
                        code: -32602,
                        message: "Invalid params".into(),
                        data: Some(r#"{"k":1}"#.into()),
                    }),
                },
            ),
            (
                r#"{"jsonrpc":"2.0","method":"minecraft:notification/server/saving"}"#,
                Incoming::Notification(Notification {
                    method: "minecraft:notification/server/saving".into(),
                    params: Value::Null,
                }),
            ),
        ];
        for (text, want) in cases {
            assert_eq!(&parse(text).unwrap(), want, "{text}");
        }
        for bad in [
            "",
            "[]",
            "{}",
            r#"{"jsonrpc":"1.0","id":1,"result":1}"#,
            r#"{"jsonrpc":"2.0","id":1}"#,
            r#"{"jsonrpc":"2.0","id":"x","result":1}"#,
            r#"{"jsonrpc":"2.0"}"#,
        ] {
            assert!(parse(bad).is_err(), "{bad} accepted");
        }
    }

    proptest::proptest! {
        // Whatever a server sends, parsing answers Ok or Err, never panics.
        #[test]
        fn any_text_parses_or_fails_cleanly(text in ".{0,200}") {
            let _ = parse(&text);
        }

        #[test]
        fn any_json_value_parses_or_fails_cleanly(
            id in proptest::option::of(proptest::num::i64::ANY),
            method in proptest::option::of("[a-z:/]{0,20}"),
            result in proptest::option::of(".{0,20}"),
        ) {
            let mut m = serde_json::Map::new();
            m.insert("jsonrpc".into(), json!("2.0"));
            if let Some(id) = id { m.insert("id".into(), json!(id)); }
            if let Some(method) = method { m.insert("method".into(), json!(method)); }
            if let Some(result) = result { m.insert("result".into(), json!(result)); }
            let _ = parse(&Value::Object(m).to_string());
        }
    }
}
