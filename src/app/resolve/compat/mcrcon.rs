//! mcrcon 0.7.2's command line (Tiiffi's C client) as rcon's: getopt-style one-letter options
//! anywhere on the line (clusters such as `-cs` and glued values such as `-w5` too, `--` ends
//! them), every other argument one command, and `MCRCON_HOST`, `MCRCON_PORT`, `MCRCON_PASS`
//! under the options.

use super::{Env, RconArgv, Source, Translation, TranslationEnd, Tweaks, from_env, port_number};

/// mcrcon's longest `-w` (seconds).
const MAX_WAIT_SECONDS: i64 = 600;

/// What `mcrcon -h` prints.
const USAGE: &str = "\
Usage: mcrcon [OPTIONS] [COMMANDS]

rcon running as mcrcon: each argument is one command, run in order on one connection.

Options:
  -H HOST     server address (default: localhost)
  -P PORT     RCON port (default: 25575)
  -p PASS     RCON password
  -t          terminal mode: the interactive console (after the commands, if any);
              piped lines are read as commands instead
  -s          silent: print no answers
  -c          no colours
  -r          raw output: answers as received, colour codes kept
  -w SECONDS  wait between commands (1-600)
  -h          this help
  -v          version

Environment: MCRCON_HOST, MCRCON_PORT, MCRCON_PASS (options win).
With no command, the console opens on a terminal; piped input is read as commands.
Any failure exits 1. rcon's own options: run it as rcon (rcon --help).

Example:
  mcrcon -H mc.example.net -p secret -w 5 \"say Restarting soon\" save-all stop
";

/// mcrcon's command line as given.
#[derive(Default)]
struct Given<'a> {
    host: Option<(String, Source)>,
    port: Option<(u16, Source)>,
    password: Option<(String, Source)>,
    no_colours: bool,
    raw: bool,
    silent: bool,
    terminal: bool,
    wait: Option<i64>,
    commands: Vec<&'a str>,
}

/// Reads mcrcon's options as its getopt does; `-h` and `-v` end it with their text.
fn read(args: &[String]) -> Result<Given<'_>, TranslationEnd> {
    let mut given = Given::default();
    let mut options_end = false;
    let mut i = 0;
    while i < args.len() {
        let arg = &args[i];
        i += 1;
        // glibc's getopt permutes: options may follow commands. `-` alone is an argument.
        if options_end || arg == "-" || !arg.starts_with('-') {
            given.commands.push(arg);
            continue;
        }
        if arg == "--" {
            options_end = true;
            continue;
        }
        if arg.starts_with("--") {
            return Err(TranslationEnd::Fail(format!(
                "mcrcon has no long options such as '{arg}' (mcrcon -h lists its options)"
            )));
        }
        let cluster = &arg[1..];
        for (at, letter) in cluster.char_indices() {
            match letter {
                'c' => given.no_colours = true,
                'r' => given.raw = true,
                's' => given.silent = true,
                't' => given.terminal = true,
                'h' => return Err(TranslationEnd::Print(USAGE.to_string())),
                'v' => return Err(TranslationEnd::Print(version())),
                'H' | 'P' | 'p' | 'w' => {
                    // The value is the rest of the cluster, else the next argument.
                    let glued = &cluster[at + 1..];
                    let value = if glued.is_empty() {
                        let next = args.get(i).ok_or_else(|| {
                            TranslationEnd::Fail(format!("mcrcon option -{letter} needs a value"))
                        })?;
                        i += 1;
                        next.clone()
                    } else {
                        glued.to_string()
                    };
                    let source = Source::Flag(format!("-{letter}"));
                    match letter {
                        'H' => given.host = Some((value, source)),
                        'P' => given.port = Some((port_number(&value, "mcrcon -P")?, source)),
                        'p' => given.password = Some((value, source)),
                        _ => given.wait = Some(wait_seconds(&value)?),
                    }
                    break;
                }
                other => {
                    return Err(TranslationEnd::Fail(format!(
                        "mcrcon has no option -{other} (mcrcon -h lists them)"
                    )));
                }
            }
        }
    }
    Ok(given)
}

/// Translates mcrcon's arguments.
pub(super) fn translate(args: &[String], env: &Env) -> Result<Translation, TranslationEnd> {
    let Given {
        host,
        port,
        password,
        no_colours,
        raw,
        silent,
        terminal,
        wait,
        commands,
    } = read(args)?;
    let host = host.or_else(|| from_env(env, "MCRCON_HOST"));
    let port = match port {
        Some(p) => Some(p),
        None => match from_env(env, "MCRCON_PORT") {
            Some((text, source)) => Some((port_number(&text, "MCRCON_PORT")?, source)),
            None => None,
        },
    };
    let password = password.or_else(|| from_env(env, "MCRCON_PASS"));

    let mut rcon = RconArgv::new();
    rcon.endpoint(host, port, rconsole::Dialect::MINECRAFT.default_port);
    if let Some((pw, source)) = password {
        rcon.setting("password", &pw, Some(source));
    }
    if no_colours {
        rcon.value("color", "never");
    }
    if raw {
        rcon.flag("--raw");
    }
    if let Some(seconds) = wait {
        rcon.value("delay", &format!("{seconds}s"));
    }
    // mcrcon's terminal mode with commands runs only the console; rcon runs the commands first
    // (a superset), then the console on a terminal, or the piped lines as commands (no console,
    // no banner: mcrcon's terminal mode reads those too). With no command rcon chooses so too.
    if terminal && !commands.is_empty() {
        if env.stdin_tty {
            rcon.flag("--interactive");
        } else {
            rcon.value("file", "-");
        }
    }
    for command in commands {
        rcon.value("command", command);
    }
    Ok(rcon.finish(Tweaks {
        quiet: silent,
        parse_errors_fail: false,
        quit_word: None,
    }))
}

/// `-w`: whole seconds from 1 to 600, read as C's `strtol` does (leading digits; `5s` is 5).
fn wait_seconds(text: &str) -> Result<i64, TranslationEnd> {
    let t = text.trim_start();
    let sign_len = usize::from(t.starts_with(['+', '-']));
    let digits = t[sign_len..]
        .find(|c: char| !c.is_ascii_digit())
        .unwrap_or(t.len() - sign_len);
    if digits == 0 {
        return Err(TranslationEnd::Fail(format!(
            "mcrcon -w: '{text}' is not a number of seconds"
        )));
    }
    let value = t[..sign_len + digits].parse::<i64>().unwrap_or(i64::MAX);
    if !(1..=MAX_WAIT_SECONDS).contains(&value) {
        return Err(TranslationEnd::Fail(format!(
            "mcrcon -w: {} is out of range (1 to {MAX_WAIT_SECONDS} seconds)",
            &t[..sign_len + digits]
        )));
    }
    Ok(value)
}

/// What `mcrcon -v` prints.
fn version() -> String {
    format!(
        "mcrcon 0.7.2 command line, run by rcon {} (rconsole)\n",
        crate::app::resolve::args::VERSION
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn env_of(vars: &'static [(&'static str, &'static str)]) -> Env<'static> {
        Env {
            var: Box::leak(Box::new(move |name: &str| {
                vars.iter()
                    .find(|(k, _)| *k == name)
                    .map(|(_, v)| v.to_string())
            })),
            home: None,
            stdin_tty: true,
        }
    }

    fn argv(args: &[&str], vars: &'static [(&'static str, &'static str)]) -> Vec<String> {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let t = translate(&args, &env_of(vars)).expect("translates");
        t.argv
            .iter()
            .map(|a| a.to_str().unwrap().to_string())
            .collect()
    }

    fn fails(args: &[&str]) -> String {
        let args: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        match translate(&args, &env_of(&[])) {
            Err(TranslationEnd::Fail(m)) => m,
            other => panic!("{args:?}: {other:?}"),
        }
    }

    #[test]
    fn every_argument_is_one_command() {
        assert_eq!(
            argv(
                &["-H", "mc", "-P", "1337", "-p", "pw", "say hi there", "list"],
                &[]
            ),
            [
                "rcon",
                "--no-config",
                "--host=mc",
                "--port=1337",
                "--password=pw",
                "--command=say hi there",
                "--command=list"
            ]
        );
    }

    #[test]
    fn clusters_glued_values_and_options_after_commands() {
        let a = argv(&["-csHmc", "-w5", "list", "-r", "-pPW", "--", "-x"], &[]);
        assert!(a.contains(&"--host=mc".to_string()), "{a:?}");
        assert!(a.contains(&"--color=never".to_string()), "{a:?}");
        assert!(a.contains(&"--delay=5s".to_string()), "{a:?}");
        assert!(a.contains(&"--raw".to_string()), "{a:?}");
        assert!(a.contains(&"--password=PW".to_string()), "{a:?}");
        // After `--` a dash word is a command.
        assert_eq!(
            a.iter()
                .filter(|w| w.starts_with("--command="))
                .collect::<Vec<_>>(),
            ["--command=list", "--command=-x"]
        );
    }

    #[test]
    fn environment_under_the_options() {
        let vars: &[(&str, &str)] = &[
            ("MCRCON_HOST", "envhost"),
            ("MCRCON_PORT", "1234"),
            ("MCRCON_PASS", "envpw"),
        ];
        let a = argv(&["list"], vars);
        assert!(a.contains(&"--host=envhost".to_string()), "{a:?}");
        assert!(a.contains(&"--port=1234".to_string()), "{a:?}");
        assert!(a.contains(&"--password=envpw".to_string()), "{a:?}");
        let a = argv(&["-H", "flag", "-p", "flagpw", "list"], vars);
        assert!(a.contains(&"--host=flag".to_string()), "{a:?}");
        assert!(a.contains(&"--password=flagpw".to_string()), "{a:?}");
        // The defaults: localhost and 25575; a port in the host is rcon's extension.
        let a = argv(&["list"], &[]);
        assert!(a.contains(&"--host=localhost".to_string()), "{a:?}");
        assert!(a.contains(&"--port=25575".to_string()), "{a:?}");
        let a = argv(&["-H", "h:9"], &[]);
        assert!(!a.iter().any(|w| w.starts_with("--port")), "{a:?}");
    }

    #[test]
    fn terminal_mode() {
        // With commands: the commands, then the console.
        assert!(argv(&["-t", "list"], &[]).contains(&"--interactive".to_string()));
        // Without: rcon picks the console on a terminal, piped lines otherwise.
        assert!(!argv(&["-t"], &[]).contains(&"--interactive".to_string()));
        // With commands and a pipe: the commands, then the piped lines; no console.
        let args: Vec<String> = ["-t", "list"].map(String::from).to_vec();
        let piped = Env {
            stdin_tty: false,
            ..env_of(&[])
        };
        let a = translate(&args, &piped).unwrap().argv;
        assert!(a.contains(&"--file=-".into()) && !a.contains(&"--interactive".into()));
    }

    #[test]
    fn silent_and_parse_errors() {
        let args = vec!["-s".to_string(), "list".to_string()];
        let t = translate(&args, &env_of(&[])).unwrap();
        assert!(t.tweaks.quiet);
        assert!(!t.tweaks.parse_errors_fail);
    }

    #[test]
    fn wait_is_whole_seconds_in_range() {
        assert_eq!(wait_seconds("5"), Ok(5));
        assert_eq!(wait_seconds("600"), Ok(600));
        assert_eq!(wait_seconds("5s"), Ok(5), "strtol reads leading digits");
        for bad in ["0", "601", "-3", "x", "", "99999999999999999999"] {
            assert!(wait_seconds(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn bad_lines() {
        assert!(fails(&["-x", "list"]).contains("no option -x"));
        assert!(fails(&["--help"]).contains("no long options such as '--help'"));
        assert!(fails(&["list", "-H"]).contains("-H needs a value"));
        assert!(fails(&["-P", "port"]).contains("not a port number"));
        assert!(fails(&["-w", "0", "a"]).contains("out of range"));
        let args = vec!["list".to_string()];
        let vars: &[(&str, &str)] = &[("MCRCON_PORT", "nope")];
        assert!(matches!(
            translate(&args, &env_of(vars)),
            Err(TranslationEnd::Fail(m)) if m.contains("MCRCON_PORT")
        ));
    }

    #[test]
    fn help_and_version_print() {
        for flag in ["-h", "-v"] {
            let args = vec![flag.to_string()];
            assert!(matches!(
                translate(&args, &env_of(&[])),
                Err(TranslationEnd::Print(t)) if t.contains("mcrcon")
            ));
        }
    }

    #[cfg(unix)]
    #[test]
    fn non_utf8_is_refused() {
        use std::os::unix::ffi::OsStringExt;
        let bad = std::ffi::OsString::from_vec(vec![0x66, 0xff]);
        assert!(matches!(
            super::super::translate(super::super::Personality::Mcrcon, &[bad], &env_of(&[])),
            Err(TranslationEnd::Fail(_))
        ));
    }
}
