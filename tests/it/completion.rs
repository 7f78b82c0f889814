//! The generated completions loaded into the real shells and asked as each asks on Tab, with
//! the real `rcon` first on PATH for its profile names: bash (completions/rcon.bash) through
//! COMP_WORDS, COMP_CWORD and the function; zsh (completions/_rcon) in an interactive `zsh -f`
//! on a zsh/zpty terminal, typing the line and Tab, with compinit and a `compadd` that also
//! prints what it adds; fish (completions/rcon.fish) through `complete -C`.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::common::{home, skip, wait_with_timeout};

#[derive(Debug, Clone, Copy)]
enum Shell {
    Bash,
    Zsh,
    Fish,
}

const SHELLS: [Shell; 3] = [Shell::Bash, Shell::Zsh, Shell::Fish];

impl Shell {
    fn program(self) -> &'static str {
        match self {
            Shell::Bash => "bash",
            Shell::Zsh => "zsh",
            Shell::Fish => "fish",
        }
    }

    /// Whether the shell is installed; if not, the check is skipped, visibly.
    fn present(self) -> bool {
        let found = Command::new(self.program())
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            skip(&format!("{} is not installed", self.program()));
        }
        found
    }
}

fn completions() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("completions")
}

/// Sources completions/rcon.bash and calls `_rcon` as bash does on Tab.
const BASH: &str = r#"source "$1"/rcon.bash
shift
COMP_WORDS=("$@")
COMP_CWORD=$(( ${#COMP_WORDS[@]} - 1 ))
COMP_LINE="${COMP_WORDS[*]}"
COMP_POINT=${#COMP_LINE}
_rcon rcon "${COMP_WORDS[COMP_CWORD]}" "${COMP_WORDS[COMP_CWORD-1]}"
printf '%s\n' "${COMPREPLY[@]}"
"#;

/// Read by the interactive zsh: compinit with completions/ first on fpath, Tab bound to
/// complete-word, every match added also printed (with `IPREFIX`, the part of the word a
/// completion function set aside and keeps), and the shell left once the completion is done.
const ZSH_INIT: &str = r#"PROMPT='' RPROMPT=''
fpath=("$RCON_TEST_COMPLETIONS" $fpath)
autoload -Uz compinit && compinit -u -D
bindkey '^I' complete-word
compadd() {
    if [[ ${@[1,(i)(-|--)]} == *-(O|A|D)\ * ]]; then
        builtin compadd "$@"
        return
    fi
    local -a __hits
    builtin compadd -A __hits "$@"
    local __hit
    for __hit in $__hits; do print -r -- "CANDIDATE:$IPREFIX$__hit"; done
    builtin compadd "$@"
}
_rcon_test_done() { print -r -- "COMPLETION-""DONE"; exit }
comppostfuncs=(_rcon_test_done)
print -r -- "INIT-""DONE"
"#;

/// Starts an interactive zsh on a pseudo-terminal, has it read `ZSH_INIT` ($1), types the line
/// ($2) and Tab, and prints the candidates.
const ZSH_DRIVE: &str = r#"zmodload zsh/zpty || exit 3
zpty z zsh -f -i
zpty -w z "source ${(q)1}"
local line
while zpty -r z line; do [[ $line == *INIT-DONE* ]] && break; done
zpty -w -n z "$2"$'\t'
while zpty -r z line; do
    [[ $line == *COMPLETION-DONE* ]] && break
    [[ $line == *CANDIDATE:* ]] && print -r -- "${line##*CANDIDATE:}"
done
zpty -d z
"#;

/// Sources completions/rcon.fish and asks fish what it completes for the line.
const FISH: &str = r#"source $argv[1]/rcon.fish; complete -C $argv[2]"#;

/// The candidates `shell`'s completion of `rcon` offers for the end of `line` (after a space:
/// a new, empty word), with `config` as the config file; sorted.
fn candidates(shell: Shell, home: &Path, config: &str, line: &str) -> Vec<String> {
    let bin = home.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    let link = bin.join("rcon");
    if !link.exists() {
        std::os::unix::fs::symlink(crate::common::rcon_bin(), &link).unwrap();
    }
    let file = home.join("config.toml");
    std::fs::write(&file, config).unwrap();
    let mut cmd = Command::new(shell.program());
    match shell {
        Shell::Bash => {
            // The words as COMP_WORDS holds them (a trailing space starts an empty word).
            cmd.args(["--norc", "--noprofile", "-c", BASH, "bash"])
                .arg(completions())
                .args(line.split(' '));
        }
        Shell::Zsh => {
            let init = home.join("init.zsh");
            std::fs::write(&init, ZSH_INIT).unwrap();
            cmd.args(["-f", "-c", ZSH_DRIVE, "zsh"])
                .arg(&init)
                .arg(line)
                .env("RCON_TEST_COMPLETIONS", completions());
        }
        Shell::Fish => {
            cmd.args(["--no-config", "-c", FISH])
                .arg(completions())
                .arg(line);
        }
    }
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let child = cmd
        .env("PATH", path)
        .env_remove("RCON_SERVER")
        .env("RCON_CONFIG", &file)
        .env("RCON_CONFIG_DIR", home.join("config"))
        .env("RCON_DATA_DIR", home.join("data"))
        .env("HOME", home)
        .env("XDG_CONFIG_HOME", home.join("xdg-config"))
        .env("XDG_DATA_HOME", home.join("xdg-data"))
        .env("XDG_CACHE_HOME", home.join("xdg-cache"))
        .current_dir(home)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap_or_else(|e| panic!("run {}: {e}", shell.program()));
    let out = wait_with_timeout(child, Duration::from_secs(60));
    assert!(
        out.status.success(),
        "{shell:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut got: Vec<String> = String::from_utf8_lossy(&out.stdout)
        .lines()
        // fish: CANDIDATE<TAB>description; zsh: the terminal's \r.
        .map(|l| l.split('\t').next().unwrap_or_default().trim().to_string())
        .filter(|l| !l.is_empty())
        .collect();
    got.sort();
    got
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
    for shell in SHELLS {
        if !shell.present() {
            continue;
        }
        let home = home();
        let home = home.path();
        let ask = |line: &str| candidates(shell, home, PROFILES, line);
        assert_eq!(ask("rcon -s "), ["alpha", "beta", "lobby"], "{shell:?}");
        assert_eq!(ask("rcon -s b"), ["beta"], "{shell:?}");
        // The next name of a list, keeping the list so far, without the names already given.
        assert_eq!(
            ask("rcon -s alpha,"),
            ["alpha,beta", "alpha,lobby"],
            "{shell:?}"
        );
        assert_eq!(
            ask("rcon --server beta,alpha,l"),
            ["beta,alpha,lobby"],
            "{shell:?}"
        );
        if !matches!(shell, Shell::Bash) {
            // bash splits `--server=...` at the `=` (COMP_WORDBREAKS) before rcon's function sees it.
            assert_eq!(
                ask("rcon --server=alpha,"),
                ["--server=alpha,beta", "--server=alpha,lobby"],
                "{shell:?}"
            );
        }
    }
}

#[test]
fn practice_mode_completes_its_values_not_file_names() {
    for shell in SHELLS {
        if !shell.present() {
            continue;
        }
        let home = home();
        let home = home.path();
        assert_eq!(
            candidates(shell, home, PROFILES, "rcon --practice-mode batt"),
            ["battleye", "battleye-lossy", "battleye-reforger"],
            "{shell:?}"
        );
        let all = candidates(shell, home, PROFILES, "rcon --practice-mode ");
        assert!(all.contains(&"vanilla".to_string()), "{shell:?}: {all:?}");
        assert!(all.contains(&"telnet".to_string()), "{shell:?}: {all:?}");
        assert!(
            !all.iter().any(|c| c == "config.toml" || c == "bin"),
            "{shell:?}: {all:?}"
        );
    }
}
