//! The practice server's `rpc.discover` answer, shaped as vanilla's for each version
//! (docs/protocol.md section 9): the methods with their one named parameter and result, the
//! notifications, and `components.schemas` referenced by `$ref`. Like vanilla's, the schemas
//! mark no object property as required; what vanilla's codecs require anyway is in
//! `required_properties`, which the server checks and the document does not show.

use serde_json::{Value, json};

use super::MgmtVersion;

fn r(name: &str) -> Value {
    json!({"$ref": format!("#/components/schemas/{name}")})
}

fn list(item: Value) -> Value {
    json!({"type": "array", "items": item})
}

fn t(name: &str) -> Value {
    json!({"type": name})
}

/// One incoming method: its name without the namespace, description, its parameter (name and
/// schema; vanilla's are all required) and its result (name and schema).
fn method(
    name: &str,
    description: &str,
    param: Option<(&str, Value)>,
    result: (&str, Value),
) -> Value {
    let params: Vec<Value> = param
        .into_iter()
        .map(|(n, schema)| json!({"name": n, "schema": schema, "required": true}))
        .collect();
    json!({
        "name": format!("minecraft:{name}"),
        "description": description,
        "params": params,
        "result": {"name": result.0, "schema": result.1},
    })
}

type Notification = (&'static str, &'static str, Option<(&'static str, Value)>);

/// The notifications the server sends, with their one parameter's name and schema.
fn notifications() -> Vec<Notification> {
    let player = || Some(("player", r("player")));
    vec![
        ("players/joined", "Player joined", player()),
        ("players/left", "Player left", player()),
        ("server/started", "Server started", None),
        ("server/stopping", "Server shutting down", None),
        ("server/saving", "Server save started", None),
        ("server/saved", "Server save completed", None),
        ("allowlist/added", "Player added to allowlist", player()),
        (
            "allowlist/removed",
            "Player removed from allowlist",
            player(),
        ),
        (
            "operators/added",
            "Player was oped",
            Some(("player", r("operator"))),
        ),
        (
            "operators/removed",
            "Player was deoped",
            Some(("player", r("operator"))),
        ),
        (
            "bans/added",
            "Player was added to ban list",
            Some(("player", r("user_ban"))),
        ),
        ("bans/removed", "Player was removed from ban list", player()),
        (
            "ip_bans/added",
            "Ip was added to ip ban list",
            Some(("player", r("ip_ban"))),
        ),
        (
            "ip_bans/removed",
            "Ip was removed from ip ban list",
            Some(("player", t("string"))),
        ),
        (
            "gamerules/updated",
            "Gamerule was changed",
            Some(("gamerule", r("typed_game_rule"))),
        ),
    ]
}

/// The `rpc.discover` answer of a server of `version`.
pub fn discover_document(version: MgmtVersion) -> Value {
    let mut methods = list_methods();
    methods.extend(server_methods());
    methods.extend(notification_methods());
    json!({
        "openrpc": "1.3.2",
        "info": {"title": "Minecraft Server JSON-RPC", "version": api_version(version)},
        "methods": methods,
        "components": {"schemas": schemas(version)},
    })
}

/// The five methods of each of the four player lists (get, set, add, remove, clear).
fn list_methods() -> Vec<Value> {
    let mut methods = Vec::new();
    // (list, item added or set, item removed, stored item, param of set, result name)
    for (name, item, removed, stored, set_param, result) in [
        (
            "allowlist",
            "player",
            r("player"),
            "player",
            "players",
            "allowlist",
        ),
        (
            "bans",
            "user_ban",
            r("player"),
            "user_ban",
            "bans",
            "banlist",
        ),
        (
            "ip_bans",
            "incoming_ip_ban",
            t("string"),
            "ip_ban",
            "banlist",
            "banlist",
        ),
        (
            "operators",
            "operator",
            r("player"),
            "operator",
            "operators",
            "operators",
        ),
    ] {
        let what = name.replace('_', " ");
        let stored = list(r(stored));
        let remove_param = if name == "ip_bans" { "ip" } else { "remove" };
        methods.extend([
            method(
                name,
                &format!("Get the {what}"),
                None,
                (result, stored.clone()),
            ),
            method(
                &format!("{name}/set"),
                &format!("Set the {what}"),
                Some((
                    set_param,
                    list(r(if name == "ip_bans" { "ip_ban" } else { item })),
                )),
                (result, stored.clone()),
            ),
            method(
                &format!("{name}/add"),
                &format!("Add to the {what}"),
                Some(("add", list(r(item)))),
                (result, stored.clone()),
            ),
            method(
                &format!("{name}/remove"),
                &format!("Remove from the {what}"),
                Some((remove_param, list(removed))),
                (result, stored.clone()),
            ),
            method(
                &format!("{name}/clear"),
                &format!("Clear the {what}"),
                None,
                (result, stored),
            ),
        ]);
    }
    methods
}

/// The methods on players, the server, its settings and its game rules.
fn server_methods() -> Vec<Value> {
    vec![
        method(
            "players",
            "Get all connected players",
            None,
            ("players", list(r("player"))),
        ),
        method(
            "players/kick",
            "Kick players",
            Some(("kick", list(r("kick_player")))),
            ("kicked", list(r("player"))),
        ),
        method(
            "server/status",
            "Get server status",
            None,
            ("status", r("server_state")),
        ),
        method(
            "server/save",
            "Save server state",
            Some(("flush", t("boolean"))),
            ("saving", t("boolean")),
        ),
        method(
            "server/stop",
            "Stop server",
            None,
            ("stopping", t("boolean")),
        ),
        method(
            "server/system_message",
            "Send a system message",
            Some(("message", r("system_message"))),
            ("sent", t("boolean")),
        ),
        method(
            "serversettings/autosave",
            "Get whether automatic world saving is enabled on the server",
            None,
            ("enabled", t("boolean")),
        ),
        method(
            "serversettings/autosave/set",
            "Enable or disable automatic world saving on the server",
            Some(("enable", t("boolean"))),
            ("enabled", t("boolean")),
        ),
        method(
            "serversettings/difficulty",
            "Get the current difficulty level of the server",
            None,
            ("difficulty", r("difficulty")),
        ),
        method(
            "serversettings/difficulty/set",
            "Set the difficulty level of the server",
            Some(("difficulty", r("difficulty"))),
            ("difficulty", r("difficulty")),
        ),
        method(
            "serversettings/motd",
            "Get the server's message of the day displayed to players",
            None,
            ("message", t("string")),
        ),
        method(
            "serversettings/motd/set",
            "Set the server's message of the day displayed to players",
            Some(("message", t("string"))),
            ("message", t("string")),
        ),
        method(
            "gamerules",
            "Get the available game rule keys and their current values",
            None,
            ("gamerules", list(r("typed_game_rule"))),
        ),
        method(
            "gamerules/update",
            "Update game rule value",
            Some(("gamerule", r("untyped_game_rule"))),
            ("gamerule", r("typed_game_rule")),
        ),
    ]
}

/// The notifications, as `rpc.discover` lists them among the methods.
fn notification_methods() -> Vec<Value> {
    let notification = |(name, description, param): Notification| {
        let params: Vec<Value> = param
            .map(|(n, schema)| json!({"name": n, "schema": schema, "required": true}))
            .into_iter()
            .collect();
        json!({
            "name": format!("minecraft:notification/{name}"),
            "description": description,
            "params": params,
        })
    };
    notifications().into_iter().map(notification).collect()
}

/// The schemas the methods refer to, as `version` defines them.
fn schemas(version: MgmtVersion) -> Value {
    // The one difference between the versions' schemas: a game rule's value is a string on
    // 1.21.9 and 1.21.10, a boolean or an integer from 1.21.11 on.
    let rule_value = match version {
        MgmtVersion::V1_21_9 => t("string"),
        MgmtVersion::V1_21_11 => json!({"type": ["boolean", "integer"]}),
    };
    let object = |props: Value| json!({"type": "object", "properties": props});
    json!({
            "difficulty": {"type": "string", "enum": ["peaceful", "easy", "normal", "hard"]},
            "player": object(json!({"id": t("string"), "name": t("string")})),
            "version": object(json!({"name": t("string"), "protocol": t("integer")})),
            "server_state": object(json!({"started": t("boolean"), "players": list(r("player")), "version": r("version")})),
            "typed_game_rule": object(json!({"key": t("string"), "value": rule_value, "type": {"type": "string", "enum": ["integer", "boolean"]}})),
            "untyped_game_rule": object(json!({"key": t("string"), "value": rule_value})),
            "message": object(json!({"literal": t("string"), "translatable": t("string"), "translatableParams": list(t("string"))})),
            "system_message": object(json!({"message": r("message"), "overlay": t("boolean"), "receivingPlayers": list(r("player"))})),
            "kick_player": object(json!({"message": r("message"), "player": r("player")})),
            "operator": object(json!({"player": r("player"), "bypassesPlayerLimit": t("boolean"), "permissionLevel": t("integer")})),
            "incoming_ip_ban": object(json!({"player": r("player"), "ip": t("string"), "reason": t("string"), "source": t("string"), "expires": t("string")})),
            "ip_ban": object(json!({"ip": t("string"), "reason": t("string"), "source": t("string"), "expires": t("string")})),
            "user_ban": object(json!({"player": r("player"), "reason": t("string"), "source": t("string"), "expires": t("string")})),
    })
}

/// The API version `rpc.discover` gives in `info.version` (docs/protocol.md section 9): 1.0.0
/// on 1.21.9 and 1.21.10, 2.0.0 (typed game rules) from 1.21.11.
fn api_version(version: MgmtVersion) -> &'static str {
    match version {
        MgmtVersion::V1_21_9 => "1.0.0",
        MgmtVersion::V1_21_11 => "2.0.0",
    }
}

/// The properties vanilla's codec for a schema component requires though the schema does not
/// say so; a request without one is refused with -32602 and `No key K in MapLike[...]`.
pub(super) fn required_properties(component: &str) -> &'static [&'static str] {
    match component {
        "system_message" => &["message", "overlay"],
        "untyped_game_rule" => &["key", "value"],
        "user_ban" | "operator" | "kick_player" => &["player"],
        _ => &[],
    }
}
