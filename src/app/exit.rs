//! The exit codes `rcon` documents, in one place (README, `--help`, man page).

/// Every exit status `rcon` uses.
// Some codes are documented ahead of the modes that return them (config profiles, Ctrl-C).
#[allow(dead_code)]
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum Exit {
    /// Everything worked.
    Success = 0,
    /// A command ran but the server reported an error (vanilla's `<--[HERE]` parse error), or a
    /// batch line failed.
    CommandFailed = 1,
    /// Bad arguments, or no password given.
    Usage = 2,
    /// Bad configuration file or profile.
    Config = 3,
    /// Cannot connect: refused, DNS failure, unreachable; or a practice server cannot listen
    /// on its address.
    Connect = 4,
    /// Login refused (wrong password).
    Login = 5,
    /// Timed out.
    Timeout = 6,
    /// Connection lost or protocol error; output may be incomplete.
    Connection = 7,
    /// Command refused locally (too long, NUL byte, unfilled macro); it was not sent.
    Refused = 8,
    /// The tunnel (SSH or proxy command) failed.
    Transport = 9,
    /// `--remote`: the program on the SSH host is missing, too old or of another protocol
    /// version, or `--remote-install` cannot install it.
    Remote = 10,
    /// Ctrl-C stopped a batch, or cancelled a countdown or a repeated run (`--countdown`,
    /// `--every`).
    Interrupted = 130,
    /// Stdout was closed before a batch was done (`rcon -f FILE | head -1`): the rest was not
    /// sent (128 + 13, as a shell reports a process `SIGPIPE` ended).
    StdoutClosed = 141,
    /// `SIGTERM` stopped a batch (128 + 15, as a shell reports a process the signal ended).
    Terminated = 143,
}

impl Exit {
    /// The process exit code (the glibc Linux start uses the number: see `main.rs`).
    #[cfg(any(not(all(target_os = "linux", target_env = "gnu")), test))]
    pub fn code(self) -> std::process::ExitCode {
        std::process::ExitCode::from(self as u8)
    }

    /// A one-word name for why a command or server failed (`--json`'s `reason`, the fleet
    /// summary); `None` for success.
    pub fn reason(self) -> Option<&'static str> {
        Some(match self {
            Exit::Success => return None,
            Exit::CommandFailed => "command",
            Exit::Usage => "usage",
            Exit::Config => "config",
            Exit::Connect => "connect",
            Exit::Login => "login",
            Exit::Timeout => "timeout",
            Exit::Connection => "connection",
            Exit::Refused => "refused",
            Exit::Transport => "tunnel",
            Exit::Remote => "remote",
            Exit::Interrupted => "interrupted",
            Exit::StdoutClosed => "stdout",
            Exit::Terminated => "terminated",
        })
    }

    /// Whether `--keep-going` goes on after a failure with this status: past commands that
    /// fail, never past a refused login (every later command would log in again with the same
    /// password and be refused, each attempt counted by the server's ban rules).
    pub fn passable(self) -> bool {
        self != Exit::Login
    }

    /// The exit status for a library error.
    pub fn from_error(e: &rconsole::Error) -> Exit {
        use rconsole::ErrorKind as K;
        match e.kind() {
            K::Connect => Exit::Connect,
            K::Login => Exit::Login,
            K::Timeout => Exit::Timeout,
            K::Connection => Exit::Connection,
            K::Refused => Exit::Refused,
            K::Transport => Exit::Transport,
            K::Remote => Exit::Remote,
            _ => Exit::Connection,
        }
    }
}

/// The exit status table as shown in `--help` and the man page.
pub const TABLE: &str = "\
Exit status:
  0    success
  1    a command failed on the server (vanilla parse error ending in <--[HERE]),
       or a batch line failed
  2    usage error (bad arguments, no password given)
  3    configuration error (bad config file or profile)
  4    cannot connect (refused, DNS failure, unreachable), or --practice-server
       cannot listen on its address (in use, not this machine's)
  5    login refused (wrong password)
  6    timed out (connect, login, or waiting for output)
  7    connection lost or protocol error; the output is incomplete
  8    command refused locally and not sent (too long, NUL byte, unfilled macro)
  9    tunnel failed (SSH or proxy command)
  10   --remote: the rcon on the SSH host is missing, too old or speaks another
       protocol version (the message says what to install)
  130  interrupted by Ctrl-C; commands, a batch or several servers first print
       every answer they got and say what ran, what was in flight and what was not
       sent
  141  stdout was closed before a batch (-f, stdin) was done, e.g. rcon -f FILE |
       head -1: nothing more was sent, one line says what ran and what was not
       sent from FILE:LINE on, and --resume -f FILE goes on there
  143  stopped by SIGTERM while commands ran (the same report as for Ctrl-C)";

/// An error that carries the exit status it should end the process with.
#[derive(Debug)]
pub struct Fail {
    /// The status.
    pub exit: Exit,
    /// The one-line message (without the `rcon: error:` prefix).
    pub message: String,
}

impl std::fmt::Display for Fail {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Fail {}

/// Builds a [`Fail`] as an `anyhow::Error`.
pub fn fail(exit: Exit, message: impl Into<String>) -> anyhow::Error {
    anyhow::Error::new(Fail {
        exit,
        message: message.into(),
    })
}

/// The run ended early and has said all it had to (help, version, Ctrl-C at the password
/// prompt): `main` ends the process with this status as it is, printing nothing more. Returned
/// as an error so that it travels out through `?` from wherever it happens.
#[derive(Debug)]
pub struct EarlyExit(pub Exit);

impl std::fmt::Display for EarlyExit {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "ended early with status {}", self.0 as u8)
    }
}

impl std::error::Error for EarlyExit {}

impl EarlyExit {
    /// Builds one as an `anyhow::Error`.
    pub fn error(exit: Exit) -> anyhow::Error {
        anyhow::Error::new(EarlyExit(exit))
    }

    /// The status of an early end anywhere in the chain of `err`.
    pub fn of(err: &anyhow::Error) -> Option<Exit> {
        err.chain()
            .find_map(|c| c.downcast_ref::<EarlyExit>())
            .map(|e| e.0)
    }
}

/// The exit status for any error chain: a [`Fail`] or library error anywhere in it decides.
pub fn exit_for(err: &anyhow::Error) -> Exit {
    for cause in err.chain() {
        if let Some(f) = cause.downcast_ref::<Fail>() {
            return f.exit;
        }
        if let Some(e) = cause.downcast_ref::<rconsole::Error>() {
            return Exit::from_error(e);
        }
    }
    Exit::Connection
}

/// An error and its causes on one line, `a: b: c`, as `rcon: error:` prints them.
pub fn chain(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut cause = err.source();
    while let Some(c) = cause {
        text.push_str(": ");
        text.push_str(&c.to_string());
        cause = c.source();
    }
    if let Some(hint) = err.downcast_ref::<rconsole::Error>().and_then(hint) {
        text.push_str("; ");
        text.push_str(hint);
    }
    crate::app::words::without_os_codes(&text).into_owned()
}

/// What the user can do about a library error, naming the flag that helps (the library names
/// none).
pub fn hint(err: &rconsole::Error) -> Option<&'static str> {
    match err {
        rconsole::Error::LoginReplyOtherIds { .. } => Some("try --dialect palworld"),
        _ => None,
    }
}

/// Which signal stopped a run.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub enum Signal {
    /// Ctrl-C (`SIGINT`; Ctrl-C or Ctrl-Break on Windows).
    #[default]
    Interrupt = 1,
    /// `SIGTERM` (a service manager, `kill`, a container stopping).
    Terminate = 2,
    /// Stdout's reader went away (`rcon -f FILE | head -1`). Rust ignores `SIGPIPE`, so no
    /// handler sees it: a write to stdout fails instead, and a batch stops as for a signal.
    Pipe = 3,
}

impl Signal {
    /// The exit status of a run it stopped: 130 (Ctrl-C), 143 (`SIGTERM`) or 141 (a closed stdout).
    pub fn exit(self) -> Exit {
        match self {
            Signal::Interrupt => Exit::Interrupted,
            Signal::Terminate => Exit::Terminated,
            Signal::Pipe => Exit::StdoutClosed,
        }
    }

    /// How messages name it.
    pub fn name(self) -> &'static str {
        match self {
            Signal::Interrupt => "Ctrl-C",
            Signal::Terminate => "SIGTERM",
            Signal::Pipe => "a closed stdout",
        }
    }
}
