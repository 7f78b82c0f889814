//! `--targets FILE` and `--where` with the real binary: CSV, NDJSON on stdin and a JSON array,
//! a bad row that stops everything before anything is sent, passwords never inline, and the
//! recipes of docs/fleet.md (Kubernetes, Ansible, CSV) fed the JSON those tools print.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use crate::common::*;
use rconsole::practice::PracticeServer;

fn fleet(home: &Path) -> std::process::Command {
    let mut cmd = rcon_in(home);
    cmd.env("RCON_PASSWORD", PASSWORD);
    cmd
}

/// Every labelled line of `stdout`, by name, in order.
fn by_name(stdout: &str) -> HashMap<String, Vec<String>> {
    let mut out: HashMap<String, Vec<String>> = HashMap::new();
    for line in stdout.lines() {
        let rest = line.strip_prefix('[').expect("every line labelled");
        let (name, text) = rest.split_once(']').expect("a closing bracket");
        out.entry(name.to_string())
            .or_default()
            .push(text.strip_prefix(' ').unwrap_or(text).to_string());
    }
    out
}

fn write(home: &Path, name: &str, text: &str) -> String {
    let path = home.join(name);
    std::fs::write(&path, text).unwrap();
    path.to_str().unwrap().to_string()
}

fn run_with_stdin(cmd: &mut std::process::Command, input: &str) -> std::process::Output {
    use std::io::Write;
    let mut child = cmd
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("spawn rcon");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    wait_with_timeout(child, Duration::from_secs(60))
}

#[test]
fn csv_rows_run_and_where_filters_by_tag_and_name() {
    let s: Vec<PracticeServer> = (0..3).map(|_| strict_vanilla()).collect();
    let home = home();
    let inv = write(
        home.path(),
        "servers.csv",
        &format!(
            "# exported from the sheet\nname,host,port,tags\n\
             lobby-1,127.0.0.1,{},lobby eu\nlobby-2,127.0.0.1,{},\"lobby;us\"\n\
             survival,127.0.0.1,{},survival eu\n",
            s[0].port(),
            s[1].port(),
            s[2].port()
        ),
    );
    let out = run(fleet(home.path()).args(["--targets", &inv, "-c", "echo all"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let got = by_name(&stdout(&out));
    assert_eq!(got.len(), 3);
    for name in ["lobby-1", "lobby-2", "survival"] {
        assert_eq!(got[name], ["all"]);
    }
    let out = run(fleet(home.path()).args([
        "--targets",
        &inv,
        "--where",
        "tag=lobby",
        "-c",
        "echo lobby",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(by_name(&stdout(&out)).keys().count(), 2, "{}", stdout(&out));
    let out = run(fleet(home.path()).args([
        "--targets",
        &inv,
        "--where",
        "tag=eu",
        "--where",
        "name=surv*",
        "-c",
        "echo eu",
    ]));
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "[survival] eu\n");
    assert_eq!(s[0].commands(), ["echo all", "echo lobby"]);
    assert_eq!(s[1].commands(), ["echo all", "echo lobby"]);
    assert_eq!(s[2].commands(), ["echo all", "echo eu"]);
    // A filter nothing matches sends nothing, and says so.
    let out = run(fleet(home.path()).args(["--targets", &inv, "--where", "tag=nope", "list"]));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("none of the 3 servers"),
        "{}",
        stderr(&out)
    );
    // --where is for --targets only.
    let out = run(fleet(home.path()).args(["--where", "tag=lobby", "list"]));
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
}

#[test]
fn ndjson_on_stdin_and_a_json_array_with_their_own_passwords() {
    let a = PracticeServer::start(rconsole::practice::PracticeConfig {
        password: "pw-of-a".into(),
        ..rconsole::practice::PracticeConfig::default()
    })
    .unwrap();
    let b = PracticeServer::start(rconsole::practice::PracticeConfig {
        password: "pw-of-b".into(),
        ..rconsole::practice::PracticeConfig::default()
    })
    .unwrap();
    let home = home();
    // As a JSON string: a Windows path's backslashes must be escaped.
    let pw_file = serde_json::to_string(&write(home.path(), "b.pw", "pw-of-b\n")).unwrap();
    let ndjson = format!(
        "{{\"name\":\"a\",\"host\":\"127.0.0.1\",\"port\":{},\"password_env\":\"A_PW\"}}\n\n\
         {{\"name\":\"b\",\"host\":\"127.0.0.1:{}\",\"password_file\":{pw_file},\"tags\":[\"x\"]}}\n",
        a.port(),
        b.port()
    );
    let out = run_with_stdin(
        fleet(home.path())
            .env("A_PW", "pw-of-a")
            .args(["--targets", "-", "-c", "echo ok"]),
        &ndjson,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let got = by_name(&stdout(&out));
    assert_eq!(got["a"], ["ok"]);
    assert_eq!(got["b"], ["ok"]);
    // The same rows as one JSON array in a file; a password command this time.
    let array = format!(
        "[{{\"name\":\"a\",\"host\":\"127.0.0.1\",\"port\":\"{}\",\"password_command\":\"echo pw-of-a\"}},\
          {{\"name\":\"b\",\"host\":\"127.0.0.1\",\"port\":{},\"password_file\":{pw_file}}}]",
        a.port(),
        b.port()
    );
    let inv = write(home.path(), "fleet.json", &array);
    let out = run(fleet(home.path()).args(["--targets", &inv, "--json", "-c", "echo ok"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let text = stdout(&out);
    assert_eq!(text.lines().count(), 2, "{text}");
    assert!(text.contains("\"server\":\"a\""), "{text}");
    assert!(!text.contains("pw-of") && !stderr(&out).contains("pw-of"));
    // --targets - takes stdin: the commands must come from the command line.
    let out = run_with_stdin(
        fleet(home.path())
            .env("A_PW", "pw-of-a")
            .args(["--targets", "-"]),
        &ndjson,
    );
    assert_eq!(out.status.code(), Some(2), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("no command given"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_bad_row_names_its_line_and_nothing_is_sent() {
    let s = strict_vanilla();
    let home = home();
    let cases = [
        (
            format!(
                "name,host,port\ngood,127.0.0.1,{}\nbad,127.0.0.1,99999\n",
                s.port()
            ),
            ":3: port '99999'",
        ),
        (
            format!(
                "{{\"host\":\"127.0.0.1\",\"port\":{}}}\n{{\"host\":\"127.0.0.1\",\"password\":\"hunter2\"}}\n",
                s.port()
            ),
            ":2: passwords are never inline",
        ),
        (
            format!(
                "{{\"host\":\"127.0.0.1\",\"port\":{}}}\n{{\"host\":\"127.0.0.1\",\"password_env\":\"UNSET_FOR_RCON_TEST\"}}\n",
                s.port()
            ),
            ":2: password_env: the variable UNSET_FOR_RCON_TEST is not set",
        ),
        (
            format!("name,host,port\nx,127.0.0.1,{}\nx,127.0.0.1,1\n", s.port()),
            ":3: the name 'x' is used twice",
        ),
    ];
    for (text, want) in cases {
        let inv = write(home.path(), "bad.inv", &text);
        let out = run(fleet(home.path()).args(["--targets", &inv, "list"]));
        assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
        let err = stderr(&out);
        assert!(err.starts_with(&format!("rcon: error: {inv}")), "{err}");
        assert!(err.contains(want), "{want}: {err}");
        assert_eq!(err.lines().count(), 1, "{err}");
        assert!(!err.contains("hunter2"), "{err}");
        assert_eq!(stdout(&out), "");
    }
    assert_eq!(
        s.connections(),
        0,
        "a bad row stops everything before anything is sent"
    );
    let out = run(fleet(home.path()).args(["--targets", "/nonexistent/inv.csv", "list"]));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
}

fn repo_file(rel: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join(rel)
}

fn have_jq() -> bool {
    std::process::Command::new("jq")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success())
}

/// Runs a docs/fleet/*.jq recipe on `input`, as `tool ... | jq -c -f RECIPE` would.
fn jq(recipe: &str, input: &str) -> String {
    use std::io::Write;
    let mut child = std::process::Command::new("jq")
        .args(["-c", "-f"])
        .arg(repo_file(recipe))
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .expect("jq");
    child
        .stdin
        .take()
        .unwrap()
        .write_all(input.as_bytes())
        .unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "jq -f {recipe} failed");
    String::from_utf8(out.stdout).unwrap()
}

/// docs/fleet.md's Kubernetes recipe: `kubectl get services -A -o json | jq -c -f
/// docs/fleet/kubernetes.jq | rcon --targets - list`, with the JSON kubectl prints for two
/// releases of the itzg/minecraft chart (plus services that are not RCON), and a stand-in
/// kubectl that prints the chart's Secret data as `kubectl get secret -o jsonpath` does.
#[cfg(unix)]
#[test]
fn kubernetes_recipe_reads_services_and_secrets() {
    use std::os::unix::fs::PermissionsExt;
    if !have_jq() {
        return skip("jq is not installed (docs/fleet.md's recipes use it)");
    }
    let lobby = strict_vanilla();
    let survival = strict_vanilla();
    let service = |ns: &str, release: &str, port: u16| {
        format!(
            r#"{{"apiVersion":"v1","kind":"Service","metadata":{{"name":"{release}-minecraft-rcon","namespace":"{ns}",
            "labels":{{"app":"{release}-minecraft","chart":"minecraft-4.26.1","heritage":"Helm","release":"{release}"}}}},
            "spec":{{"clusterIP":"127.0.0.1","clusterIPs":["127.0.0.1"],"type":"ClusterIP",
            "ports":[{{"name":"rcon","port":{port},"protocol":"TCP","targetPort":"rcon"}}],
            "selector":{{"app":"{release}-minecraft"}}}},"status":{{"loadBalancer":{{}}}}}}"#
        )
    };
    let services = format!(
        r#"{{"apiVersion":"v1","kind":"List","metadata":{{"resourceVersion":""}},"items":[
        {{"apiVersion":"v1","kind":"Service","metadata":{{"name":"kubernetes","namespace":"default"}},
          "spec":{{"clusterIP":"10.96.0.1","type":"ClusterIP","ports":[{{"name":"https","port":443,"protocol":"TCP","targetPort":6443}}]}}}},
        {{"apiVersion":"v1","kind":"Service","metadata":{{"name":"lobby-minecraft","namespace":"games","labels":{{"app":"lobby-minecraft","release":"lobby"}}}},
          "spec":{{"clusterIP":"10.96.3.3","type":"LoadBalancer","ports":[{{"name":"minecraft","port":25565,"protocol":"TCP","targetPort":"minecraft"}}]}}}},
        {},
        {}]}}"#,
        service("games", "lobby", lobby.port()),
        service("events", "survival", survival.port())
    );
    // base64 of the password, as the Secret's data holds it.
    let b64 = {
        let out = std::process::Command::new("sh")
            .args(["-c", &format!("printf %s '{PASSWORD}' | base64")])
            .output()
            .unwrap();
        String::from_utf8(out.stdout).unwrap().trim().to_string()
    };
    let home = home();
    let secrets = write(
        home.path(),
        "secrets.json",
        &format!(
            r#"{{"kind":"List","items":[
            {{"kind":"Secret","metadata":{{"name":"lobby-minecraft-rcon","namespace":"games"}},"type":"Opaque","data":{{"rcon-password":"{b64}"}}}},
            {{"kind":"Secret","metadata":{{"name":"survival-minecraft-rcon","namespace":"events"}},"type":"Opaque","data":{{"rcon-password":"{b64}"}}}}]}}"#
        ),
    );
    let bin = home.path().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let kubectl = bin.join("kubectl");
    // kubectl get secret --namespace NS NAME -o 'jsonpath={.data.rcon-password}'
    std::fs::write(
        &kubectl,
        format!(
            "#!/bin/sh\n[ \"$1 $2 $3\" = \"get secret --namespace\" ] || exit 1\n\
             jq -j --arg ns \"$4\" --arg n \"$5\" \
             '.items[] | select(.metadata.namespace == $ns and .metadata.name == $n) | .data[\"rcon-password\"]' \
             {secrets:?}\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&kubectl, std::fs::Permissions::from_mode(0o755)).unwrap();
    let rows = jq("docs/fleet/kubernetes.jq", &services);
    assert_eq!(rows.lines().count(), 2, "{rows}");
    assert!(!rows.contains(PASSWORD) && !rows.contains(&b64), "{rows}");
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let mut cmd = rcon_in(home.path());
    cmd.env("PATH", path)
        .args(["--targets", "-", "--where", "tag=games", "-c", "echo hi"]);
    let out = run_with_stdin(&mut cmd, &rows);
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(stdout(&out), "[games/lobby] hi\n");
    let mut cmd = rcon_in(home.path());
    cmd.env(
        "PATH",
        format!(
            "{}:{}",
            bin.display(),
            std::env::var("PATH").unwrap_or_default()
        ),
    )
    .args(["--targets", "-", "-c", "echo all"]);
    let out = run_with_stdin(&mut cmd, &rows);
    assert!(out.status.success(), "{}", stderr(&out));
    let got = by_name(&stdout(&out));
    assert_eq!(got["games/lobby"], ["all"]);
    assert_eq!(got["events/survival"], ["all"]);
    assert_eq!(survival.commands(), ["echo all"]);
}

/// docs/fleet.md's Ansible recipe: `ansible-inventory --list | jq -c -f docs/fleet/ansible.jq`,
/// with the JSON ansible-inventory prints (groups, children, `_meta.hostvars`).
#[test]
fn ansible_recipe_turns_groups_into_tags() {
    if !have_jq() {
        return skip("jq is not installed (docs/fleet.md's recipes use it)");
    }
    let a = strict_vanilla();
    let b = strict_vanilla();
    let c = strict_vanilla();
    let home = home();
    let pw = write(home.path(), "rcon.pw", &format!("{PASSWORD}\n"));
    let inventory = format!(
        r#"{{
  "_meta": {{"hostvars": {{
    "mc-lobby-1": {{"ansible_host": "127.0.0.1", "rcon_port": {}, "rcon_password_file": "{pw}"}},
    "mc-lobby-2": {{"ansible_host": "127.0.0.1", "rcon_port": {}, "rcon_password_env": "LOBBY_PW"}},
    "mc-survival": {{"ansible_host": "127.0.0.1", "rcon_port": {}, "rcon_dialect": "minecraft"}}
  }}}},
  "all": {{"children": ["ungrouped", "minecraft"]}},
  "minecraft": {{"children": ["lobby", "survival"]}},
  "lobby": {{"hosts": ["mc-lobby-1", "mc-lobby-2"]}},
  "survival": {{"hosts": ["mc-survival"]}},
  "eu": {{"hosts": ["mc-lobby-1", "mc-survival"]}}
}}"#,
        a.port(),
        b.port(),
        c.port()
    );
    let rows = jq("docs/fleet/ansible.jq", &inventory);
    assert_eq!(rows.lines().count(), 3, "{rows}");
    let out = run_with_stdin(
        fleet(home.path()).env("LOBBY_PW", PASSWORD).args([
            "--targets",
            "-",
            "--where",
            "tag=lobby",
            "-c",
            "echo lobby",
        ]),
        &rows,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    let got = by_name(&stdout(&out));
    assert_eq!(got.len(), 2);
    assert_eq!(got["mc-lobby-1"], ["lobby"]);
    assert_eq!(got["mc-lobby-2"], ["lobby"]);
    let out = run_with_stdin(
        fleet(home.path()).env("LOBBY_PW", PASSWORD).args([
            "--targets",
            "-",
            "--where",
            "tag=eu",
            "-c",
            "echo eu",
        ]),
        &rows,
    );
    assert!(out.status.success(), "{}", stderr(&out));
    assert_eq!(by_name(&stdout(&out)).len(), 2);
    assert_eq!(c.commands(), ["echo eu"]);
    assert_eq!(b.commands(), ["echo lobby"]);
}

/// docs/fleet/servers.csv, the plain-CSV recipe, parses as it stands. Its addresses are not
/// reachable here, so it runs with a filter that matches nothing: every row is still read and
/// checked first.
#[test]
fn the_csv_recipe_parses() {
    let home = home();
    let inv = repo_file("docs/fleet/servers.csv");
    let out = run(fleet(home.path())
        .env("LOBBY_RCON_PASSWORD", "x")
        .env("TF2_RCON_PASSWORD", "y")
        .args([
            "--targets",
            inv.to_str().unwrap(),
            "--where",
            "tag=none",
            "list",
        ]));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("none of the 4 servers"),
        "{}",
        stderr(&out)
    );
    // Without the variables its rows name, the first such row is the error.
    let out = run(fleet(home.path()).args(["--targets", inv.to_str().unwrap(), "list"]));
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("servers.csv:4: password_env: the variable LOBBY_RCON_PASSWORD"),
        "{}",
        stderr(&out)
    );
}

/// Password commands of different rows run at the same time: here each one waits for the
/// other to have started, which one at a time would never see (each gives up after 30 s and
/// prints nothing, and the run fails).
#[cfg(unix)]
#[test]
fn password_commands_of_different_rows_run_at_once() {
    let a = strict_vanilla();
    let b = strict_vanilla();
    let home = home();
    let dir = home.path().display().to_string();
    let cmd = |me: &str, other: &str| {
        format!(
            "touch {dir}/{me}; i=0; while [ ! -e {dir}/{other} ] && [ $i -lt 3000 ]; do sleep 0.01; \
             i=$((i+1)); done; [ -e {dir}/{other} ] && echo {PASSWORD}"
        )
    };
    let rows = format!(
        "{}\n{}\n",
        serde_json::json!({"name": "a", "host": "127.0.0.1", "port": a.port(), "password_command": cmd("a", "b")}),
        serde_json::json!({"name": "b", "host": "127.0.0.1", "port": b.port(), "password_command": cmd("b", "a")}),
    );
    let inv = write(home.path(), "fleet.ndjson", &rows);
    let out = run(rcon_in(home.path()).args(["--targets", &inv, "-c", "echo hi"]));
    assert!(out.status.success(), "{}", stderr(&out));
    let got = by_name(&stdout(&out));
    assert_eq!(got["a"], ["hi"]);
    assert_eq!(got["b"], ["hi"]);
}
