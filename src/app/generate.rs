//! Generated files: shell completions in `completions/` and the man page `man/rcon.1`. They are
//! committed and built from the clap definition plus the texts here, with no dates or machine
//! paths. The test `generated_files_are_current` fails when they are stale;
//! `RCON_REGENERATE=1 cargo test --bin rcon generated` rewrites them.
//!
//! Only compiled for tests: the `rcon` binary itself never generates anything, so the generators
//! (`clap_complete`, `clap_mangen`) are dev-dependencies.

#![cfg(test)]

use clap::CommandFactory;
use clap_complete::{Generator, Shell};

use crate::app::exit::TABLE;
use crate::app::resolve::args::Args;

/// The shells completions are generated for.
const SHELLS: [Shell; 5] = [
    Shell::Bash,
    Shell::Zsh,
    Shell::Fish,
    Shell::PowerShell,
    Shell::Elvish,
];

fn command() -> clap::Command {
    // Never let the generating environment's RCON_* values into the output.
    // The version without the commit, so the files do not change with every commit.
    Args::command()
        .version(env!("CARGO_PKG_VERSION"))
        .mut_args(|a| {
            let a = a.hide_env_values(true);
            // --practice-mode is a string the practice runner checks (its RCON modes and its
            // consoles' are two lists); the completions and the man page offer its values.
            if a.get_id() == "practice_mode" {
                a.value_parser(clap::builder::PossibleValuesParser::new(practice_modes()))
            } else {
                a
            }
        })
}

/// Every `--practice-mode` value: the RCON practice server's modes, then the consoles'.
fn practice_modes() -> Vec<&'static str> {
    rconsole::practice::PracticeMode::ALL
        .iter()
        .map(|m| m.name())
        .chain(rconsole::consoles::practice::Kind::ALL.map(|k| k.name()))
        .collect()
}

/// Written into the bash completion ahead of clap_complete's function: profile names for
/// `-s/--server`, and after a comma the next name of a list (`-s a,<Tab>` offers `a,b`...),
/// leaving out the names already given.
const BASH_SERVERS: &str = r#"# Profile names from the config file for -s/--server (the first column of `rcon --list-servers`);
# after a comma, the next name of the list, without the names already given.
_rcon_servers() {
    local cur="$1" prefix="" name names=()
    if [[ "${cur}" == *,* ]]; then
        prefix="${cur%,*},"
        cur="${cur##*,}"
    fi
    while read -r name _; do
        if [[ -n "${name}" && ",${prefix}" != *",${name},"* ]]; then
            names+=("${name}")
        fi
    done < <(rcon --list-servers 2>/dev/null)
    COMPREPLY=($(compgen -P "${prefix}" -W "${names[*]}" -- "${cur}"))
}

"#;

/// Written into the zsh completion ahead of clap_complete's function, as `BASH_SERVERS` for bash:
/// profile names for `-s/--server`, and after a comma the next name of the list. `compset -P`
/// moves the list so far into `IPREFIX`, so the candidates keep it (`-s a,<Tab>` offers `a,b`).
const ZSH_SERVERS: &str = r#"# Profile names from the config file for -s/--server (the first column of `rcon --list-servers`);
# after a comma, the next name of the list, without the names already given.
_rcon_servers() {
    local -a names given
    given=(${(s:,:)${(M)PREFIX##*,}})
    compset -P '*,'
    names=(${${(f)"$(rcon --list-servers 2>/dev/null)"}%% *})
    names=(${${names:#}:|given})
    compadd "$@" -- $names
}

"#;

/// Written at the top of the fish completion, as `BASH_SERVERS` for bash: profile names for
/// `-s/--server`, and after a comma the list so far followed by each next name (fish matches the
/// candidates against the whole token, `--server=` and `-s` aside).
const FISH_SERVERS: &str = r#"# Profile names from the config file for -s/--server (the first column of `rcon --list-servers`);
# after a comma, the next name of the list, without the names already given.
function __rcon_servers
    set -l value (commandline -ct | string replace -r -- '^(--server=|-s)' '')
    set -l prefix (string match -r -- '^.*,' $value)
    set -l given (string split -- , "$prefix")
    for name in (rcon --list-servers 2>/dev/null | string replace -r '\s.*' '')
        if test -n "$name"; and not contains -- $name $given
            printf '%s\n' "$prefix$name"
        end
    end
end

"#;

/// Replaces `from` with `to` exactly `count` times, failing loudly when clap_complete's output
/// changed shape (so dynamic completion is never silently lost).
fn patch(text: &str, from: &str, to: &str, count: usize) -> String {
    let found = text.matches(from).count();
    assert_eq!(
        found, count,
        "completion patch no longer applies: {from:?} found {found} times"
    );
    text.replace(from, to)
}

/// One shell's completion script, with dynamic profile names for `-s/--server` in bash, zsh
/// and fish.
pub fn completion(shell: Shell) -> String {
    let mut buf = Vec::new();
    clap_complete::generate(shell, &mut command(), "rcon", &mut buf);
    let text = String::from_utf8(buf).expect("completion is UTF-8");
    match shell {
        Shell::Bash => {
            let file = "                    COMPREPLY=($(compgen -f \"${cur}\"))\n";
            let names = "                    _rcon_servers \"${cur}\"\n";
            let mut text = patch(
                &text,
                "_rcon() {\n",
                &format!("{BASH_SERVERS}_rcon() {{\n"),
                1,
            );
            for flag in ["--server", "-s"] {
                text = patch(
                    &text,
                    &format!("                {flag})\n{file}"),
                    &format!("                {flag})\n{names}"),
                    1,
                );
            }
            text
        }
        Shell::Zsh => {
            let text = patch(
                &text,
                "_rcon() {\n",
                &format!("{ZSH_SERVERS}_rcon() {{\n"),
                1,
            );
            let names = ":NAME:_rcon_servers' \\";
            // The two spec lines for -s and --server end with `:NAME:_default' \`.
            let mut out = String::new();
            let mut patched = 0;
            for line in text.split_inclusive('\n') {
                if (line.starts_with("'-s+[") || line.starts_with("'--server=["))
                    && line.ends_with(":NAME:_default' \\\n")
                {
                    out.push_str(&line.replace(":NAME:_default' \\", names));
                    patched += 1;
                } else {
                    out.push_str(line);
                }
            }
            assert_eq!(patched, 2, "zsh completion patch no longer applies");
            out
        }
        Shell::Fish => {
            let mut out = String::from(FISH_SERVERS);
            let mut patched = 0;
            for line in text.split_inclusive('\n') {
                if line.starts_with("complete -c rcon -s s -l server ") && line.ends_with(" -r\n") {
                    out.push_str(line.trim_end());
                    out.push_str(" -f -a \"(__rcon_servers)\"\n");
                    patched += 1;
                } else {
                    out.push_str(line);
                }
            }
            assert_eq!(patched, 1, "fish completion patch no longer applies");
            out
        }
        _ => text,
    }
}

/// Escapes text for roff.
fn roff(text: &str) -> String {
    let t = text.replace('\\', "\\e").replace('-', "\\-");
    if t.starts_with('.') || t.starts_with('\'') {
        format!("\\&{t}")
    } else {
        t
    }
}

/// A tagged paragraph: bold tag, plain body.
fn item(out: &mut String, tag: &str, body: &str) {
    out.push_str(&format!(".TP\n\\fB{}\\fR\n{}\n", roff(tag), roff(body)));
}

/// Environment variables, documented in one place (also in docs/config.md).
const ENVIRONMENT: &[(&str, &str)] = &[
    (
        "RCON_HOST, RCON_PORT, RCON_TIMEOUT",
        "Defaults for --host, --port and --timeout. Flags win over the environment, which wins over the config profile.",
    ),
    (
        "RCON_PASSWORD",
        "The password (safer than --password, which other users can see with ps).",
    ),
    (
        "RCON_PASSWORD_FILE",
        "A file whose first line is the password, as --password-file (Docker secrets style).",
    ),
    ("RCON_SERVER", "The config profile to use, as -s/--server."),
    (
        "RCON_CONFIG",
        "The config file to read instead of the default one, as --config. It must exist.",
    ),
    (
        "MCRCON_HOST, MCRCON_PORT, MCRCON_PASS",
        "mcrcon's variables, used when the RCON_* ones are not set. Run as mcrcon (a link, or --compat mcrcon), only these are read, under mcrcon's options; run as rcon-cli, only RCON_HOST, RCON_PORT and RCON_PASSWORD.",
    ),
    (
        "RCON_DIALECT",
        "The server family, as --dialect: minecraft, source, factorio, palworld, battleye, webrcon or telnet.",
    ),
    (
        "RCON_HISTORY",
        "The console's history file, instead of history.txt in the data directory.",
    ),
    (
        "RCON_CONFIG_DIR",
        "The directory of the default config file (config.toml there, which may be missing) instead of the platform's one.",
    ),
    (
        "RCON_DATA_DIR",
        "The data directory (history.txt, learned-servers.toml) instead of the platform's one.",
    ),
    (
        "RCON_DNS_SERVER",
        "The DNS server (IP or IP:PORT) for the SRV lookup of --ping HOST without a port, instead of the system's (the first nameserver in /etc/resolv.conf; on Windows the adapters' DNS servers).",
    ),
    (
        "NO_COLOR",
        "When set and not empty, --color auto prints no colours (https://no-color.org), even with CLICOLOR_FORCE.",
    ),
    (
        "CLICOLOR",
        "0: --color auto prints no colours (https://bixense.com/clicolors).",
    ),
    (
        "CLICOLOR_FORCE",
        "Set and not 0: --color auto prints colours even when stdout is not a terminal.",
    ),
    (
        "TERM",
        "dumb: --color auto prints no colours on that terminal.",
    ),
    (
        "XDG_CONFIG_HOME",
        "On Linux and BSD, the directory holding rconsole/config.toml (default ~/.config).",
    ),
    (
        "XDG_DATA_HOME",
        "On Linux and BSD, the directory holding rconsole/history.txt (default ~/.local/share).",
    ),
];

const FILES: &[(&str, &str)] = &[
    (
        "$XDG_CONFIG_HOME/rconsole/config.toml",
        "The config file on Linux and BSD (~/.config/rconsole/config.toml when XDG_CONFIG_HOME is unset).",
    ),
    (
        "~/Library/Application Support/rconsole/config.toml",
        "The config file on macOS.",
    ),
    (
        "%APPDATA%\\rconsole\\config\\config.toml",
        "The config file on Windows.",
    ),
    (
        "~/.rcon-cli.json, .toml, .yaml, .yml, .dotenv, .env",
        "Read only when rcon runs as rcon-cli (without its --config FILE): the first found of ~/.rcon-cli with viper's extensions (json, toml, yaml, yml, properties, props, prop, hcl, tfvars, dotenv, env, ini) gives host, port and password under the flags and the environment.",
    ),
    (
        "$XDG_DATA_HOME/rconsole/history.txt",
        "The console's history on Linux and BSD (~/.local/share/rconsole/history.txt when \
         XDG_DATA_HOME is unset; ~/Library/Application Support/rconsole/history.txt on macOS, \
         %APPDATA%\\rconsole\\data\\history.txt on Windows). Never holds the password.",
    ),
];

const EXAMPLES: &[(&str, &str)] = &[
    (
        "rcon --demo help",
        "Try rcon against the built-in practice server.",
    ),
    (
        "RCON_PASSWORD=secret rcon -H mc.example.com list",
        "Run one command on a server.",
    ),
    (
        "rcon -s survival list",
        "Run a command on the server of the config profile survival.",
    ),
    (
        "rcon --password-file /run/secrets/rcon -H mc list",
        "Read the password from a file.",
    ),
    (
        "rcon --list-servers",
        "Show the profiles in the config file.",
    ),
    (
        "rcon -s survival --print-config",
        "Show the settings a command would use and where each came from.",
    ),
    (
        "rcon -s survival",
        "Open the interactive console (:help lists its commands, Ctrl-D leaves).",
    ),
    (
        "rcon -s survival -f build.mcfunction",
        "Send a function file line by line; stop at the first failure (--keep-going goes on).",
    ),
    (
        "rcon --ssh admin@mc.example.com list",
        "Reach the RCON port through an SSH tunnel (ssh -W), so the password stays encrypted.",
    ),
    (
        "rcon -s lobby1,lobby2 'say restarting'",
        "Run a command on several servers at once; output lines are labelled [name].",
    ),
    (
        "rcon --ping mc.example.com",
        "Show a server's version, players and MOTD (Server List Ping; no password).",
    ),
    (
        "rcon -H mc --wait 5m list",
        "Wait up to five minutes for the server to accept the login, then run list.",
    ),
    (
        "rcon --install-links ~/.local/bin",
        "Create mcrcon and rcon-cli there; scripts calling them then run rcon.",
    ),
    (
        "mcrcon -H mc -p secret -w 5 \"say Restarting\" save-all stop",
        "Through such a link: mcrcon's command line, three commands five seconds apart.",
    ),
];

/// The man page's note on the option sections, which are `rcon -h`'s headings in its order.
const HEADINGS: &str = "The options below are grouped as rcon -h shows them, one line each, \
     under these headings in this order: Connection, Commands, Output, Several servers, Live and \
     timed, Management, Practice, Status; rcon --help shows the same with the long texts and the \
     exit statuses.";

/// The man page's section on the shell completions in `completions/`.
const COMPLETION: &str = "The completions directory of the source and of the release archives \
     holds completion scripts for bash (rcon.bash), zsh (_rcon), fish (rcon.fish), PowerShell \
     and elvish. In bash, zsh and fish, -s/--server completes the names of the config file's \
     profiles and groups (from rcon --list-servers), and after a comma the next name of a list, \
     the list so far kept: -s alpha,<Tab> offers alpha,beta, alpha,lobby and so on, without the \
     names already given. PowerShell and elvish complete the options only.";

/// The exit status table, parsed out of the `--help` text so both stay the same.
fn exit_statuses() -> Vec<(String, String)> {
    let mut rows: Vec<(String, String)> = Vec::new();
    for line in TABLE.lines().skip(1) {
        let t = line.trim();
        match t.split_once(char::is_whitespace) {
            Some((code, text)) if code.chars().all(|c| c.is_ascii_digit()) => {
                rows.push((code.to_string(), text.trim().to_string()));
            }
            _ => {
                if let Some(last) = rows.last_mut() {
                    last.1.push(' ');
                    last.1.push_str(t);
                }
            }
        }
    }
    rows
}

/// The man page: clap_mangen's sections, then exit status, environment, files and examples.
pub fn man_page() -> String {
    let man = clap_mangen::Man::new(command());
    let mut buf = Vec::new();
    man.render_title(&mut buf).unwrap();
    man.render_name_section(&mut buf).unwrap();
    man.render_synopsis_section(&mut buf).unwrap();
    man.render_description_section(&mut buf).unwrap();
    let mut out = String::from_utf8(buf).expect("man page is UTF-8");
    out.push_str(&format!(".PP\n{}\n", roff(HEADINGS)));
    let mut buf = Vec::new();
    man.render_options_section(&mut buf).unwrap();
    out.push_str(&String::from_utf8(buf).expect("man page is UTF-8"));
    out.push_str(".SH \"EXIT STATUS\"\n");
    for (code, text) in exit_statuses() {
        item(&mut out, &code, &text);
    }
    out.push_str(".SH ENVIRONMENT\n");
    for (name, text) in ENVIRONMENT {
        item(&mut out, name, text);
    }
    out.push_str(".SH FILES\n");
    for (name, text) in FILES {
        item(&mut out, name, text);
    }
    out.push_str(&format!(
        ".PP\n{}\n",
        roff(
            "The config file holds named server profiles as [servers.NAME] tables with the keys \
             host, port, password, password_file, password_command, timeout, sentinel, \
             idle_gap, dialect, forget, ssh, ssh_options, proxy_command, remote, remote_rcon, remote_install, ssh_reuse and servers (a list of other \
             profiles: a group, run on all at once); the profile named default applies when no \
             -s is given. Unknown keys and bad values are errors (exit status 3). See \
             rcon --print-config."
        )
    ));
    out.push_str(".SH COMPLETION\n");
    out.push_str(&format!(".PP\n{}\n", roff(COMPLETION)));
    out.push_str(".SH EXAMPLES\n");
    for (cmd, text) in EXAMPLES {
        item(&mut out, cmd, text);
    }
    let mut buf = Vec::new();
    man.render_version_section(&mut buf).unwrap();
    out.push_str(&String::from_utf8(buf).unwrap());
    out
}

/// Every generated file: path relative to the repository root, and contents.
pub fn files() -> Vec<(String, String)> {
    let mut files: Vec<(String, String)> = SHELLS
        .iter()
        .map(|&s| {
            (
                format!("completions/{}", s.file_name("rcon")),
                completion(s),
            )
        })
        .collect();
    files.push(("man/rcon.1".into(), man_page()));
    files
}

#[cfg(test)]
mod tests {
    use std::path::Path;
    use std::process::Command;

    use super::*;

    fn root() -> &'static Path {
        Path::new(env!("CARGO_MANIFEST_DIR"))
    }

    /// A tool is present, or the check is skipped with a note written past libtest's capture,
    /// so it shows; with `RCONSOLE_STRICT=1` (set by .ci/run) it must be there
    /// (`.ci/apt-packages.txt`).
    fn have(tool: &str) -> bool {
        let found = Command::new(tool)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if !found {
            assert!(
                std::env::var_os("RCONSOLE_STRICT").is_none_or(|v| v != "1"),
                "{tool} is missing and RCONSOLE_STRICT=1; add it to .ci/apt-packages.txt"
            );
            use std::io::Write;
            let _ = writeln!(
                std::io::stderr(),
                "\nSKIPPED: {tool} not installed; check skipped (RCONSOLE_STRICT=1 fails instead)"
            );
        }
        found
    }

    #[test]
    fn generated_files_are_current() {
        let regenerate = std::env::var_os("RCON_REGENERATE").is_some_and(|v| v == "1");
        let mut stale = Vec::new();
        for (path, text) in files() {
            let full = root().join(&path);
            if regenerate {
                std::fs::create_dir_all(full.parent().unwrap()).unwrap();
                std::fs::write(&full, &text).unwrap();
            } else if std::fs::read_to_string(&full).ok().as_deref() != Some(text.as_str()) {
                stale.push(path);
            }
        }
        assert!(
            stale.is_empty(),
            "stale generated files {stale:?}: run `RCON_REGENERATE=1 cargo test --bin rcon generated` and commit them"
        );
    }

    #[test]
    fn generated_output_is_deterministic() {
        assert_eq!(files(), files());
        for (path, text) in files() {
            assert!(
                !text.contains(env!("CARGO_MANIFEST_DIR")),
                "{path} names a path"
            );
        }
    }

    #[test]
    fn generated_man_page_has_the_sections() {
        let man = man_page();
        for section in [
            ".SH NAME",
            ".SH SYNOPSIS",
            ".SH \"EXIT STATUS\"",
            ".SH ENVIRONMENT",
            ".SH FILES",
            ".SH COMPLETION",
            ".SH EXAMPLES",
        ] {
            assert!(man.contains(section), "missing {section}");
        }
        // The option sections in `rcon -h`'s order (issue 20).
        let sections: Vec<&str> = man.lines().filter(|l| l.starts_with(".SH ")).collect();
        let options = sections
            .iter()
            .position(|s| *s == ".SH CONNECTION")
            .expect("CONNECTION");
        assert_eq!(
            sections[options - 1..options + 8],
            [
                ".SH DESCRIPTION",
                ".SH CONNECTION",
                ".SH COMMANDS",
                ".SH OUTPUT",
                ".SH \"SEVERAL SERVERS\"",
                ".SH \"LIVE AND TIMED\"",
                ".SH MANAGEMENT",
                ".SH PRACTICE",
                ".SH STATUS",
            ]
        );
        let codes: Vec<String> = exit_statuses().into_iter().map(|r| r.0).collect();
        assert_eq!(
            codes,
            [
                "0", "1", "2", "3", "4", "5", "6", "7", "8", "9", "10", "130", "141", "143"
            ]
        );
        assert!(man.contains("RCON_PASSWORD_FILE"));
    }

    /// The environment section's text is written by hand: it must keep up with --dialect's
    /// values (it once listed 4 of 7).
    #[test]
    fn rcon_dialect_names_every_dialect() {
        use clap::ValueEnum;
        let text = ENVIRONMENT
            .iter()
            .find(|(name, _)| *name == "RCON_DIALECT")
            .expect("RCON_DIALECT is documented")
            .1;
        for dialect in crate::app::resolve::args::DialectArg::value_variants() {
            let value = dialect
                .to_possible_value()
                .expect("every dialect is a value");
            assert!(
                text.contains(value.get_name()),
                "RCON_DIALECT's text lacks {}",
                value.get_name()
            );
        }
    }

    #[test]
    fn generated_man_page_renders() {
        if !have("man") {
            return;
        }
        let out = Command::new("man")
            .arg("-l")
            .arg(root().join("man/rcon.1"))
            .env("MANPAGER", "cat")
            .env("PAGER", "cat")
            .env("MANWIDTH", "100")
            .output()
            .expect("run man");
        let text = String::from_utf8_lossy(&out.stdout);
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        for heading in [
            "EXIT STATUS",
            "ENVIRONMENT",
            "FILES",
            "EXAMPLES",
            "--print-config",
        ] {
            assert!(
                text.contains(heading),
                "rendered page lacks {heading}:\n{text}"
            );
        }
    }

    /// `-h` is the short help: every option on one line under the README's eight headings
    /// (issue 20: it was 224 lines in one list; issue 41: a ninth `Options:` block came first
    /// and entries wrapped at 100 and 80 columns); `--help` keeps the long texts.
    #[test]
    fn short_help_is_one_line_each_under_eight_headings() {
        for width in [80, 100] {
            let short = crate::app::resolve::args::short_help(Some(width));
            let headings: Vec<&str> = short
                .lines()
                .filter(|l| !l.starts_with(' ') && l.ends_with(':'))
                .collect();
            assert_eq!(
                headings,
                crate::app::resolve::args::tests::HELP_HEADINGS,
                "at {width} columns"
            );
            // An entry starts at column 2 (`-x, --long` or `[COMMAND]`) or 6 (`--long`); a
            // wrapped text would go on under the help column.
            let args = short.split_once("\n\n").map_or("", |(_, rest)| rest);
            for line in args.lines().filter(|l| l.starts_with(' ')) {
                let indent = line.len() - line.trim_start().len();
                assert!(
                    matches!(indent, 2 | 6) && line.chars().count() <= width,
                    "not one line each at {width} columns: {line:?}\n{short}"
                );
            }
            let entries = Args::command()
                .get_arguments()
                .filter(|a| !a.is_hide_set())
                .count();
            let lines = short.lines().filter(|l| l.starts_with(' ')).count();
            assert_eq!(lines, entries, "one line per option at {width} columns");
        }
        let mut cmd = Args::command().term_width(100);
        let short = cmd.render_help().to_string();
        let long = cmd.render_long_help().to_string();
        let lines = short.lines().count();
        assert!(
            long.lines().count() > 3 * lines,
            "--help lost its long texts"
        );
        assert!(long.contains("Docker secrets style"));
        assert!(!short.contains("Docker secrets style"));
    }

    /// Doc comments are clap's help texts too: rustdoc's intra-doc links (`[`Name`]`,
    /// `[text](path)`, `[text][Name]`) would show as written in `rcon --help`, the man page and
    /// the completions (issue 41: `(see [`ColorEnv`])`).
    #[test]
    fn no_intra_doc_links_in_help_man_or_completions() {
        let mut cmd = command();
        let mut texts = vec![
            (
                "rcon -h".to_string(),
                crate::app::resolve::args::short_help(Some(80)),
            ),
            (
                "rcon --help".to_string(),
                cmd.render_long_help().to_string(),
            ),
        ];
        texts.extend(files());
        for (name, text) in texts {
            for link in ["[`", "`]", "](", "]["] {
                let at = text.find(link);
                assert!(
                    at.is_none(),
                    "{name} holds rustdoc link syntax {link}: ...{}...",
                    &text[at.unwrap().saturating_sub(40)..]
                        .chars()
                        .take(80)
                        .collect::<String>()
                );
            }
        }
    }

    #[test]
    fn generated_completions_parse() {
        for (shell, file, check) in [
            ("bash", "rcon.bash", vec!["-n"]),
            ("zsh", "_rcon", vec!["-n"]),
            ("fish", "rcon.fish", vec!["--no-execute"]),
        ] {
            if !have(shell) {
                continue;
            }
            let out = Command::new(shell)
                .args(&check)
                .arg(root().join("completions").join(file))
                .output()
                .expect("run shell");
            assert!(
                out.status.success(),
                "{shell} rejects completions/{file}: {}",
                String::from_utf8_lossy(&out.stderr)
            );
        }
    }
}
