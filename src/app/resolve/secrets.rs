//! Getting the password: from a value, a file (Docker-secrets style), a command, or a hidden
//! prompt on the terminal; and the warning for a config file that others can read. Nothing here
//! ever prints a password.

use std::io::IsTerminal;
use std::path::{Path, PathBuf};
use std::process::Stdio;

use rconsole::Password;

use crate::app::exit::{EarlyExit, Exit, fail};
use crate::app::print::stderr;
use crate::app::resolve::args::Personality;

/// Where the password will come from, decided without reading or running anything yet (so
/// `--print-config` can describe it).
#[derive(Debug, Clone)]
pub enum Secret {
    /// The password itself (flag, environment, or profile).
    Value(Password),
    /// A file whose first line (without its line ending) is the password.
    File(PathBuf),
    /// A shell command whose first line of output is the password.
    Command(String),
    /// Nothing given: ask on the terminal, if there is one.
    Prompt,
}

/// Every way to give a password, for the error when none was given and none can be asked for.
pub const NO_PASSWORD: &str = "no password given and no terminal to ask for one: use --password \
(visible in ps), RCON_PASSWORD, --password-file FILE, RCON_PASSWORD_FILE, a config profile's \
password, password_file or password_command (with -s NAME), or MCRCON_PASS; or try --demo";

/// [`NO_PASSWORD`] for rcon run as mcrcon or rcon-cli: the ways that program reads (it reads
/// no others).
pub fn no_password_for(personality: Personality) -> anyhow::Error {
    fail(
        Exit::Usage,
        format!(
            "no password given and no terminal to ask for one: {}",
            personality.password_sources()
        ),
    )
}

/// Turns the plan into the password. `what` names the source for messages (never the value);
/// `target` is the server, for the prompt.
pub fn obtain(secret: &Secret, what: &str, target: &str) -> anyhow::Result<Password> {
    match secret {
        Secret::Value(p) => Ok(p.clone()),
        Secret::File(path) => read_file(path, what).map(Password::new),
        Secret::Command(cmd) => run_command(cmd, what).map(Password::new),
        Secret::Prompt => {
            if !can_prompt() {
                return Err(fail(Exit::Usage, NO_PASSWORD));
            }
            prompt(target)
        }
    }
}

/// Reads a password file: its first line, without the line ending (Docker secrets and
/// `echo pw > file` end with one; `pass` files hold more fields on later lines).
pub fn read_file(path: &Path, what: &str) -> anyhow::Result<String> {
    let text = std::fs::read_to_string(path).map_err(|e| {
        fail(
            Exit::Config,
            format!("cannot read password file {} ({what}): {e}", path.display()),
        )
    })?;
    let password = first_line(text);
    if password.is_empty() {
        return Err(fail(
            Exit::Config,
            format!(
                "password file {} ({what}) has an empty first line",
                path.display()
            ),
        ));
    }
    Ok(password)
}

/// Runs a password command through the platform shell: the first line of stdout is the password
/// (`pass show` prints other fields after it); stderr and stdin stay attached, so tools like `pass` can ask for a passphrase.
pub fn run_command(cmd: &str, what: &str) -> anyhow::Result<String> {
    // `cmd.exe` on Windows gets the line unquoted, so `type "C:\my dir\pw.txt"` works.
    let out = rconsole::transport::tunnel::shell_command(cmd)
        .stdout(Stdio::piped())
        .stderr(Stdio::inherit())
        .output()
        .map_err(|e| {
            fail(
                Exit::Config,
                format!("cannot run password command ({what}): {e}"),
            )
        })?;
    if !out.status.success() {
        return Err(fail(
            Exit::Config,
            format!("password command ({what}) failed: {}", out.status),
        ));
    }
    let text = String::from_utf8(out.stdout).map_err(|_| {
        fail(
            Exit::Config,
            format!("password command ({what}) printed something that is not UTF-8"),
        )
    })?;
    let password = first_line(text);
    if password.is_empty() {
        return Err(fail(
            Exit::Config,
            format!("password command ({what}) printed an empty first line"),
        ));
    }
    Ok(password)
}

/// The first line of `text`, without its `\n` or `\r\n`; spaces are kept (they may be part of
/// the password).
fn first_line(mut text: String) -> String {
    if let Some(end) = text.find('\n') {
        text.truncate(end);
    }
    if text.ends_with('\r') {
        text.pop();
    }
    text
}

/// Whether a hidden prompt can be shown: stdin is a terminal, or stderr is one and the
/// controlling terminal can be opened (so `cat cmds | rcon` still asks, but a script or CI job
/// with no terminal gets an error instead of a hang).
pub fn can_prompt() -> bool {
    if std::io::stdin().is_terminal() {
        return true;
    }
    // Windows: rpassword reads the console (`CONIN$`), not stdin, so a piped stdin still gets a
    // prompt when there is a console to read and stderr shows it.
    let terminal = if cfg!(windows) { "CONIN$" } else { "/dev/tty" };
    cfg!(any(unix, windows))
        && crate::app::print::stderr_is_terminal()
        && std::fs::OpenOptions::new()
            .read(true)
            .write(true)
            .open(terminal)
            .is_ok()
}

/// Asks for the password on the terminal without echoing it.
fn prompt(target: &str) -> anyhow::Result<Password> {
    match rpassword::prompt_password(format!("Password for {target}: ")) {
        Ok(p) => Ok(Password::new(p)),
        Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {
            // Ctrl-C at the prompt (the terminal is in raw mode, so it arrives as input): end
            // as the shell reports an interrupt.
            stderr!();
            Err(EarlyExit::error(Exit::Interrupted))
        }
        // Ctrl-D at the prompt: the user chose to give none.
        Err(e) if e.kind() == std::io::ErrorKind::UnexpectedEof => {
            stderr!();
            Err(fail(
                Exit::Usage,
                "no password entered (end of input at the prompt)",
            ))
        }
        Err(e) => Err(fail(
            Exit::Usage,
            format!("cannot read the password from the terminal ({e}); {NO_PASSWORD}"),
        )),
    }
}

/// Warns (once per run: the file is read once) when a config file holding a password can be
/// read by group or others, as ssh does for keys.
pub fn warn_if_exposed(path: &Path) {
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        if let Ok(meta) = std::fs::metadata(path) {
            let mode = meta.permissions().mode();
            if mode & 0o044 != 0 {
                stderr!(
                    "rcon: warning: {} holds a password and is readable by {} (mode {:03o}); \
                     fix it with: chmod 600 {}",
                    path.display(),
                    if mode & 0o004 != 0 {
                        "others"
                    } else {
                        "its group"
                    },
                    mode & 0o777,
                    path.display()
                );
            }
        }
    }
    #[cfg(not(unix))]
    let _ = path;
}

/// Expands a leading `~/` to the home directory and makes a relative path relative to `base`.
pub fn resolve_path(raw: &str, base: Option<&Path>) -> PathBuf {
    if let Some(rest) = raw.strip_prefix("~/").or_else(|| raw.strip_prefix("~\\"))
        && let Some(home) = directories::BaseDirs::new()
    {
        return home.home_dir().join(rest);
    }
    let p = PathBuf::from(raw);
    match base {
        Some(base) if p.is_relative() => base.join(p),
        _ => p,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn first_line_only() {
        assert_eq!(first_line("pw\n".into()), "pw");
        assert_eq!(first_line("pw\r\n".into()), "pw");
        assert_eq!(first_line("p w ".into()), "p w ");
        assert_eq!(first_line("pw\nurl: x\nuser: y\n".into()), "pw");
        assert_eq!(first_line("\npw\n".into()), "");
    }

    #[test]
    fn password_file() {
        let dir = tempfile::tempdir().unwrap();
        let f = dir.path().join("secret");
        std::fs::write(&f, "s3cret\n").unwrap();
        assert_eq!(read_file(&f, "test").unwrap(), "s3cret");
        std::fs::write(&f, "\n").unwrap();
        let e = read_file(&f, "test").unwrap_err();
        assert!(format!("{e}").contains("empty first line"));
        let e = read_file(&dir.path().join("nope"), "test").unwrap_err();
        assert_eq!(crate::app::exit::exit_for(&e), Exit::Config);
    }

    #[cfg(unix)]
    #[test]
    fn password_command() {
        assert_eq!(run_command("echo s3cret", "test").unwrap(), "s3cret");
        let e = run_command("echo s3cret; exit 3", "test").unwrap_err();
        let msg = format!("{e}");
        assert!(msg.contains("failed"), "{msg}");
        assert!(!msg.contains("s3cret"), "{msg}");
        assert!(run_command("true", "test").is_err());
    }

    #[cfg(windows)]
    #[test]
    fn password_command_in_cmd() {
        // cmd's echo ends with \r\n; a quoted argument reaches cmd unchanged.
        assert_eq!(run_command("echo s3cret", "test").unwrap(), "s3cret");
        assert_eq!(run_command(r#"echo "a b""#, "test").unwrap(), r#""a b""#);
        let e = run_command("echo s3cret& exit 3", "test").unwrap_err();
        let msg = format!("{e}");
        assert!(msg.contains("failed"), "{msg}");
        assert!(!msg.contains("s3cret"), "{msg}");
        assert!(run_command("rem", "test").is_err());
    }

    #[test]
    fn relative_paths_follow_the_config_file() {
        let base = Path::new("/etc/rconsole");
        assert_eq!(
            resolve_path("pw.txt", Some(base)),
            Path::new("/etc/rconsole/pw.txt")
        );
        assert_eq!(
            resolve_path("/run/secrets/pw", Some(base)),
            Path::new("/run/secrets/pw")
        );
    }
}
