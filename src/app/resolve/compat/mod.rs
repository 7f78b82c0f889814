//! Drop-in personalities (issue 23): run as `mcrcon` or `rcon-cli` (by program name, as busybox
//! does, or `rcon --compat NAME ARGS...`), rcon reads that program's command line and environment
//! and translates them into its own argv, so everything after the translation (settings, the
//! session, long answers, time limits, errors) is rcon's. This stage runs first when the plan is
//! parsed (`plan::parse`); the only things a personality changes after it are in [`Tweaks`]
//! and the exit status ([`status`]). `--install-links` creates the `mcrcon` and `rcon-cli`
//! names (`mode/links.rs`).

mod mcrcon;
mod rcon_cli;

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

use crate::app::exit::Exit;
use crate::app::resolve::settings::Source;

pub use crate::app::resolve::args::Personality;

impl Personality {
    /// Every personality.
    pub const ALL: [Personality; 2] = [Personality::Mcrcon, Personality::RconCli];

    /// The program's name, as linked.
    pub fn name(self) -> &'static str {
        match self {
            Personality::Mcrcon => "mcrcon",
            Personality::RconCli => "rcon-cli",
        }
    }

    fn from_name(name: &str) -> Option<Personality> {
        Self::ALL.into_iter().find(|p| p.name() == name)
    }

    /// The personality a program name asks for: its file stem, with or without `.exe`, in any
    /// case (Windows file names are case-insensitive).
    fn from_program(argv0: &OsStr) -> Option<Personality> {
        let stem = Path::new(argv0).file_stem()?.to_str()?;
        Self::ALL
            .into_iter()
            .find(|p| p.name().eq_ignore_ascii_case(stem))
    }
}

/// The personality `argv` asks for and where its own arguments start: the program's name, or
/// `--compat NAME` (`--compat=NAME`) as the first argument. Anywhere else `--compat` is an
/// error that `resolve` reports.
pub fn invoked(argv: &[OsString]) -> Option<(Personality, usize)> {
    if let Some(p) = argv.first().and_then(|a| Personality::from_program(a)) {
        return Some((p, 1));
    }
    match argv.get(1)?.to_str()? {
        "--compat" => Some((Personality::from_name(argv.get(2)?.to_str()?)?, 3)),
        first => first
            .strip_prefix("--compat=")
            .and_then(Personality::from_name)
            .map(|p| (p, 2)),
    }
}

/// The personality of this process, if it runs as one.
pub fn active() -> Option<Personality> {
    let argv: Vec<OsString> = std::env::args_os().take(3).collect();
    invoked(&argv).map(|(p, _)| p)
}

/// The process exit status for `exit`: rcon's own, or under a personality 0 for success and 1
/// (the code of [`Exit::CommandFailed`]) for any failure, as mcrcon (`EXIT_FAILURE`) and
/// rcon-cli (`log.Fatal`) exit.
pub fn status(exit: Exit) -> Exit {
    match active() {
        Some(_) if exit != Exit::Success => Exit::CommandFailed,
        _ => exit,
    }
}

/// What a personality changes after the translation, beyond rcon's argv.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Tweaks {
    /// Print no command output (mcrcon's `-s`); errors still go to stderr.
    pub quiet: bool,
    /// Whether vanilla's parse error (`<--[HERE]`) fails the command. Neither program looks at
    /// the answer: it is printed and the next command runs, exit status 0.
    pub parse_errors_fail: bool,
    /// A line that ends the console and piped input instead of being sent (rcon-cli's `exit`).
    pub quit_word: Option<&'static str>,
}

/// A personality's command line as rcon's.
#[derive(Debug)]
pub struct Translation {
    /// rcon's argv (from the program name on).
    pub argv: Vec<OsString>,
    /// Where each value put into `argv` came from, by clap argument id (`host`, `port`,
    /// `password`), for messages that name the source.
    pub origins: Vec<(&'static str, Source)>,
    /// The rest.
    pub tweaks: Tweaks,
}

/// Why a translation ends the run before anything is sent.
#[derive(Debug, PartialEq, Eq)]
pub enum TranslationEnd {
    /// `-h`, `-v`, `--help`: print this on stdout, exit 0.
    Print(String),
    /// A bad command line or value: print `rcon: error: MESSAGE`, exit 1.
    Fail(String),
}

/// What a translation may read besides argv: environment variables and the home directory
/// (rcon-cli's `~/.rcon-cli.yaml`). A function, so unit tests pass their own.
pub struct Env<'a> {
    /// One variable; empty counts as unset.
    pub var: &'a dyn Fn(&str) -> Option<String>,
    /// The home directory.
    pub home: Option<PathBuf>,
    /// Whether stdin is a terminal (mcrcon's `-t` with commands opens the console only there).
    pub stdin_tty: bool,
}

impl Env<'_> {
    /// This process's environment: `HOME` (also on Windows when set, so tests stay hermetic),
    /// else the platform's home directory.
    pub fn process() -> Env<'static> {
        let home = std::env::var_os("HOME")
            .filter(|h| !h.is_empty())
            .map(PathBuf::from)
            .or_else(|| directories::BaseDirs::new().map(|d| d.home_dir().to_path_buf()));
        Env {
            var: &|name| std::env::var(name).ok().filter(|v| !v.is_empty()),
            home,
            stdin_tty: std::io::IsTerminal::is_terminal(&std::io::stdin()),
        }
    }
}

/// Translates the personality's arguments (after the program name or `--compat NAME`).
pub fn translate(
    p: Personality,
    args: &[OsString],
    env: &Env,
) -> Result<Translation, TranslationEnd> {
    let args = args
        .iter()
        .map(|a| {
            a.to_str().map(str::to_string).ok_or_else(|| {
                TranslationEnd::Fail(format!(
                    "{}: argument '{}' is not valid UTF-8",
                    p.name(),
                    a.to_string_lossy()
                ))
            })
        })
        .collect::<Result<Vec<_>, _>>()?;
    let mut translation = match p {
        Personality::Mcrcon => mcrcon::translate(&args, env),
        Personality::RconCli => rcon_cli::translate(&args, env),
    }?;
    // rcon's own stages learn the personality from its argv (`Args::compat`).
    let compat = format!("--compat={}", p.name());
    translation.argv.insert(1, compat.into());
    Ok(translation)
}

/// rcon's argv as a translation builds it, with the source of each value.
struct RconArgv {
    argv: Vec<OsString>,
    origins: Vec<(&'static str, Source)>,
}

impl RconArgv {
    /// rcon never reads its own config file for a personality: the other program has none (or
    /// its own, which the translation reads).
    fn new() -> Self {
        RconArgv {
            argv: vec!["rcon".into(), "--no-config".into()],
            origins: Vec::new(),
        }
    }

    fn flag(&mut self, flag: &str) {
        self.argv.push(flag.into());
    }

    /// `--LONG=VALUE` (the `=` form, so a value starting with `-` stays a value).
    fn value(&mut self, long: &str, value: &str) {
        self.argv.push(format!("--{long}={value}").into());
    }

    /// A setting with where it came from; `None` as the source for the personality's default.
    fn setting(&mut self, id: &'static str, value: &str, source: Option<Source>) {
        self.value(id, value);
        if let Some(source) = source {
            self.origins.push((id, source));
        }
    }

    /// The host and port: given ones with their sources, else the personality's defaults
    /// (localhost, `default_port`). A port inside the host (`HOST:PORT`, an rcon extension)
    /// counts when no port was given.
    fn endpoint(
        &mut self,
        host: Option<(String, Source)>,
        port: Option<(u16, Source)>,
        default_port: u16,
    ) {
        let host_has_port = host.as_ref().is_some_and(|(h, _)| {
            crate::app::resolve::values::parse_host_port(h).is_ok_and(|(_, p)| p.is_some())
        });
        match host {
            Some((h, source)) => self.setting("host", &h, Some(source)),
            None => self.setting("host", "localhost", None),
        }
        match port {
            Some((p, source)) => self.setting("port", &p.to_string(), Some(source)),
            None if host_has_port => {}
            None => self.setting("port", &default_port.to_string(), None),
        }
    }

    fn finish(self, tweaks: Tweaks) -> Translation {
        Translation {
            argv: self.argv,
            origins: self.origins,
            tweaks,
        }
    }
}

/// A port number 1-65535, or a message naming `what` gave it.
fn port_number(text: &str, what: &str) -> Result<u16, TranslationEnd> {
    match text.trim().parse::<u16>() {
        Ok(p) if p > 0 => Ok(p),
        _ => Err(TranslationEnd::Fail(format!(
            "{what}: '{text}' is not a port number (1-65535)"
        ))),
    }
}

/// A value from the environment with its source.
fn from_env(env: &Env, name: &str) -> Option<(String, Source)> {
    (env.var)(name).map(|v| (v, Source::Env(name.to_string())))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn os(args: &[&str]) -> Vec<OsString> {
        args.iter().map(OsString::from).collect()
    }

    #[test]
    fn personality_by_program_name() {
        for (argv0, want) in [
            ("mcrcon", Some(Personality::Mcrcon)),
            ("/usr/local/bin/mcrcon", Some(Personality::Mcrcon)),
            ("MCRCON.EXE", Some(Personality::Mcrcon)),
            ("rcon-cli", Some(Personality::RconCli)),
            ("rcon-cli.exe", Some(Personality::RconCli)),
            ("rcon", None),
            ("mcrcon2", None),
            ("rcon-cli-old", None),
        ] {
            assert_eq!(
                invoked(&os(&[argv0, "-H", "h"])).map(|(p, _)| p),
                want,
                "{argv0}"
            );
        }
        assert_eq!(
            invoked(&os(&["/bin/mcrcon", "list"])),
            Some((Personality::Mcrcon, 1))
        );
    }

    #[test]
    fn personality_by_compat_flag_only_first() {
        assert_eq!(
            invoked(&os(&["rcon", "--compat", "mcrcon", "list"])),
            Some((Personality::Mcrcon, 3))
        );
        assert_eq!(
            invoked(&os(&["rcon", "--compat=rcon-cli", "list"])),
            Some((Personality::RconCli, 2))
        );
        // Elsewhere, or with an unknown name, clap and resolve report it.
        assert_eq!(
            invoked(&os(&["rcon", "-H", "h", "--compat", "mcrcon"])),
            None
        );
        assert_eq!(invoked(&os(&["rcon", "--compat", "nope"])), None);
        assert_eq!(invoked(&os(&["rcon", "--compat"])), None);
    }

    #[test]
    fn ports() {
        assert_eq!(port_number("25575", "x"), Ok(25575));
        for bad in ["0", "65536", "abc", "", "-1"] {
            assert!(port_number(bad, "-P").is_err(), "{bad}");
        }
    }
}
