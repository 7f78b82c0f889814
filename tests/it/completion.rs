//! The bash completion (completions/rcon.bash) loaded into a real `bash` and asked as bash asks
//! it on Tab (COMP_WORDS, COMP_CWORD, then the function with the command, the word and the word
//! before), with the real `rcon` first on PATH for its profile names.

use std::path::Path;
use std::process::Command;

use crate::common::{home, skip};

/// The candidates bash's completion of `rcon` offers for the last of `words` (the word being
/// completed, possibly empty), with `config` as the config file.
fn candidates(home: &Path, config: &str, words: &[&str]) -> Vec<String> {
    let bin = home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("rcon");
    if !link.exists() {
        std::os::unix::fs::symlink(crate::common::rcon_bin(), &link).unwrap();
    }
    let file = home.join("config.toml");
    std::fs::write(&file, config).unwrap();
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("completions/rcon.bash");
    let quoted: Vec<String> = words
        .iter()
        .map(|w| format!("'{}'", w.replace('\'', r"'\''")))
        .collect();
    let program = format!(
        r#"source "$1"
COMP_WORDS=({words})
COMP_CWORD=$(( ${{#COMP_WORDS[@]}} - 1 ))
COMP_LINE="${{COMP_WORDS[*]}}"
COMP_POINT=${{#COMP_LINE}}
_rcon rcon "${{COMP_WORDS[COMP_CWORD]}}" "${{COMP_WORDS[COMP_CWORD-1]}}"
printf '%s\n' "${{COMPREPLY[@]}}"
"#,
        words = quoted.join(" ")
    );
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let out = Command::new("bash")
        .arg("--norc")
        .arg("--noprofile")
        .arg("-c")
        .arg(&program)
        .arg("bash")
        .arg(&script)
        .env("PATH", path)
        .env("RCON_CONFIG", &file)
        .env("RCON_CONFIG_DIR", home.join("config"))
        .env("RCON_DATA_DIR", home.join("data"))
        .env("HOME", home)
        .current_dir(home)
        .output()
        .expect("run bash");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut got: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        .filter(|l| !l.is_empty())
        .map(str::to_string)
        .collect();
    got.sort();
    got
}

fn have_bash() -> bool {
    let found = Command::new("bash")
        .arg("--version")
        .output()
        .is_ok_and(|o| o.status.success());
    if !found {
        skip("bash is not installed");
    }
    found
}

const PROFILES: &str = r#"
[servers.alpha]
host = "a.example"
[servers.beta]
host = "b.example"
[servers.lobby]
servers = ["alpha", "beta"]
"#;

#[test]
fn server_names_complete_after_a_comma() {
    if !have_bash() {
        return;
    }
    let home = home();
    let home = home.path();
    assert_eq!(
        candidates(home, PROFILES, &["rcon", "-s", ""]),
        ["alpha", "beta", "lobby"]
    );
    assert_eq!(candidates(home, PROFILES, &["rcon", "-s", "b"]), ["beta"]);
    // The next name of a list, without the names already given.
    assert_eq!(
        candidates(home, PROFILES, &["rcon", "-s", "alpha,"]),
        ["alpha,beta", "alpha,lobby"]
    );
    assert_eq!(
        candidates(home, PROFILES, &["rcon", "--server", "beta,alpha,l"]),
        ["beta,alpha,lobby"]
    );
}

#[test]
fn practice_mode_completes_its_values_not_file_names() {
    if !have_bash() {
        return;
    }
    let home = home();
    let home = home.path();
    assert_eq!(
        candidates(home, PROFILES, &["rcon", "--practice-mode", "batt"]),
        ["battleye", "battleye-lossy", "battleye-reforger"]
    );
    let all = candidates(home, PROFILES, &["rcon", "--practice-mode", ""]);
    assert!(all.contains(&"vanilla".to_string()), "{all:?}");
    assert!(all.contains(&"telnet".to_string()), "{all:?}");
    assert!(
        !all.iter().any(|c| c == "config.toml" || c == "bin"),
        "{all:?}"
    );
}
