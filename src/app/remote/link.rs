//! The link to the remote side of `--remote` (docs/remote.md): the system `ssh` running
//! `REMOTE_RCON --remote-serve` on the SSH host ([`SshLink`]: its frames and stderr read on
//! threads into one channel, a `heartbeat` while it lives), and what opens it ([`Starter`]: the
//! ssh command line, the version handshake, the `settings` frame that carries the password only
//! inside the channel, `--remote-install` when the host has no usable rcon). A batch run
//! (`runner/remote_batch.rs`), the console's session ([`super::session`]) and the event loop's
//! machine ([`super::machine`]) all start theirs here.

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{self, BufReader, BufWriter, Write};
use std::process::{Child, ChildStdin, Command, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError, Sender};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use clap::ValueEnum;
use rconsole::text::mcfunction::Item;
use rconsole::transport::tunnel::SshDestination;

use crate::app::exit::{Exit, fail};
use crate::app::print::stderr;
use crate::app::remote::install;
use crate::app::remote::proto::{self, Frame, PROTOCOL, VERSION};
use crate::app::resolve::settings::{Settings, Source};
use crate::app::source::files;

/// How many lines of ssh's stderr are kept for messages.
const STDERR_LINES: usize = 20;

/// How an exit code from the remote side reads here.
pub(crate) fn exit_from_code(code: u8) -> Exit {
    match code {
        0 => Exit::Success,
        1 => Exit::CommandFailed,
        2 => Exit::Usage,
        3 => Exit::Config,
        4 => Exit::Connect,
        5 => Exit::Login,
        6 => Exit::Timeout,
        8 => Exit::Refused,
        9 => Exit::Transport,
        10 => Exit::Remote,
        130 => Exit::Interrupted,
        143 => Exit::Terminated,
        _ => Exit::Connection,
    }
}

/// The remote command line: the program, shell-quoted for the remote shell, and the hidden flag.
/// Nothing secret: the password goes in the `settings` frame.
pub fn remote_command(program: &str) -> String {
    let safe = !program.is_empty()
        && program
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:=@%,~".contains(&b));
    let quoted = if safe && !program.starts_with('~') {
        program.to_string()
    } else {
        format!("'{}'", program.replace('\'', r"'\''"))
    };
    format!("{quoted} --remote-serve")
}

/// The ssh command line for `--remote` up to (without) the remote command
/// ([`remote_command`], or `--remote-install`'s scripts).
pub fn ssh_base(settings: &Settings, dest: &SshDestination) -> Vec<OsString> {
    let mut argv: Vec<OsString> = vec!["ssh".into()];
    let secs = settings.timeout.value.as_secs_f64().ceil().max(1.0) as u64;
    let defaults = [
        "BatchMode=yes".to_string(),
        format!("ConnectTimeout={secs}"),
        // A link that dies without a reset (a NAT, a suspended laptop) is noticed in 30 s
        // instead of never: there is no other deadline while answers stream back.
        "ServerAliveInterval=10".into(),
        "ServerAliveCountMax=3".into(),
    ];
    for option in settings.ssh_argv_options().iter().chain(defaults.iter()) {
        argv.push("-o".into());
        argv.push(option.into());
    }
    argv.push("-T".into());
    if let Some(port) = dest.port {
        argv.push("-p".into());
        argv.push(port.to_string().into());
    }
    if let Some(user) = &dest.user {
        argv.push("-l".into());
        argv.push(user.into());
    }
    argv.push("--".into());
    argv.push(dest.host.clone().into());
    argv
}

/// The flags the remote side resolves its session from (never the password).
fn server_args(settings: &Settings) -> Vec<String> {
    let name = |v: Option<clap::builder::PossibleValue>| {
        v.map(|p| p.get_name().to_string()).unwrap_or_default()
    };
    let mut args = vec![
        "-H".to_string(),
        settings.host.value.clone(),
        "-P".into(),
        settings.port.value.to_string(),
        "--dialect".into(),
        name(settings.dialect.value.to_possible_value()),
        "--timeout".into(),
        format!("{}ms", settings.timeout.value.as_millis().max(1)),
    ];
    if settings.sentinel.source != Source::Default {
        args.push("--sentinel".into());
        args.push(name(settings.sentinel.value.to_possible_value()));
    }
    if settings.idle_gap.source != Source::Default {
        args.push("--idle-gap".into());
        args.push(format!("{}ms", settings.idle_gap.value.as_millis()));
    }
    // The remote side keeps its own learned store (docs/protocol.md section 3).
    if settings.forget {
        args.push("--forget".into());
    }
    args
}

/// What reaches the main loop.
pub(crate) enum Event {
    /// A frame from the remote side.
    Frame(Box<Frame>),
    /// A line from the remote side that is not a frame.
    Bad(String),
    /// The remote side's stdout ended.
    Gone,
    /// From the input thread.
    Src(Src),
}

/// What the input thread reads, in order.
pub(crate) enum Src {
    /// The `index`th `-c` command.
    Command { text: String, index: usize },
    /// Input `input` starts; `key` is its content's SHA-256, or journal::STDIN for stdin.
    Begin { input: usize, key: Option<String> },
    /// One item of input `input`.
    Item { input: usize, item: Item },
    /// Input `input` was read to its end.
    End {
        input: usize,
        slashes: u64,
        first_slash: Option<u64>,
    },
    /// An input could not be read.
    Failed(String),
    /// Everything was read.
    Done,
}

/// How often the client sends a `heartbeat`: a remote side that hears nothing for
/// [`proto::GONE_AFTER_BEATS`] times as long (a link that went silent, not closed) takes the
/// client for gone and stops at its next command.
pub(crate) const HEARTBEAT: Duration = Duration::from_secs(1);

/// The writing end of ssh's stdin, shared with the heartbeat; `None` once closed.
type SshInput = Arc<Mutex<Option<BufWriter<ChildStdin>>>>;

/// The running ssh and the remote side behind it.
pub(crate) struct SshLink {
    child: Child,
    stdin: SshInput,
    tail: Arc<Mutex<VecDeque<String>>>,
    via: String,
}

impl SshLink {
    fn start(argv: &[OsString], via: String, events: Sender<Event>) -> anyhow::Result<SshLink> {
        let mut command = Command::new(&argv[0]);
        command
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            // The password reaches the remote side in the `settings` frame only: ssh never
            // holds it, so no `SendEnv` in the user's config can forward it.
            .env_remove("RCON_PASSWORD")
            .env_remove("MCRCON_PASS");
        // Ctrl-C goes to rcon alone, which then ends the stream in order, so every answer the
        // remote side sent still arrives and the report is exact.
        #[cfg(unix)]
        {
            use std::os::unix::process::CommandExt;
            command.process_group(0);
        }
        #[cfg(windows)]
        {
            use std::os::windows::process::CommandExt;
            const CREATE_NEW_PROCESS_GROUP: u32 = 0x0000_0200;
            command.creation_flags(CREATE_NEW_PROCESS_GROUP);
        }
        let mut child = command.spawn().map_err(|e| {
            let hint = if e.kind() == io::ErrorKind::NotFound {
                " (is the OpenSSH client installed and on PATH?)"
            } else {
                ""
            };
            fail(
                Exit::Transport,
                format!("cannot start {via}: ssh: {e}{hint}"),
            )
        })?;
        let stdin = Arc::new(Mutex::new(child.stdin.take().map(BufWriter::new)));
        let stdout = child.stdout.take().expect("piped");
        let stderr = child.stderr.take().expect("piped");
        std::thread::spawn(move || {
            let mut reader = BufReader::with_capacity(64 * 1024, stdout);
            let mut line = Vec::new();
            loop {
                match files::read_line(&mut reader, &mut line, proto::MAX_FRAME_BYTES) {
                    Ok(Some(false)) if line.is_empty() => continue,
                    Ok(Some(false)) => {
                        let event = match proto::parse(&line) {
                            Ok(f) => Event::Frame(Box::new(f)),
                            Err(e) => Event::Bad(e),
                        };
                        if events.send(event).is_err() {
                            return;
                        }
                    }
                    Ok(Some(true)) => {
                        let _ = events.send(Event::Bad("a frame is over the size limit".into()));
                    }
                    Ok(None) | Err(_) => {
                        let _ = events.send(Event::Gone);
                        return;
                    }
                }
            }
        });
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let keep = Arc::clone(&tail);
        std::thread::spawn(move || {
            let mut reader = BufReader::new(stderr);
            let mut line = Vec::new();
            while let Ok(Some(_)) = files::read_line(&mut reader, &mut line, 4096) {
                let text = String::from_utf8_lossy(&line).trim().to_string();
                if text.is_empty() {
                    continue;
                }
                // The remote side's warnings (a slow server, a learned method) are the user's.
                if text.starts_with("rcon: warning:") {
                    stderr!("{text}");
                }
                let mut tail = keep.lock().expect("stderr tail");
                if tail.len() == STDERR_LINES {
                    tail.pop_front();
                }
                tail.push_back(text);
            }
        });
        Ok(SshLink {
            child,
            stdin,
            tail,
            via,
        })
    }

    pub(crate) fn send(&mut self, frame: &Frame) -> io::Result<()> {
        send_on(&self.stdin, frame)
    }

    /// Sends a `heartbeat` every [`HEARTBEAT`] from now on, until the link is closed or
    /// dropped (after the handshake: the remote side expects `hello` and `settings` first).
    fn beat(&self) {
        let stdin = Arc::downgrade(&self.stdin);
        std::thread::spawn(move || {
            loop {
                std::thread::sleep(HEARTBEAT);
                let Some(stdin) = stdin.upgrade() else {
                    return;
                };
                if send_on(&stdin, &Frame::Heartbeat).is_err() {
                    return;
                }
            }
        });
    }

    /// Whether ssh still runs.
    pub(crate) fn alive(&mut self) -> bool {
        matches!(self.child.try_wait(), Ok(None))
    }

    /// Ends the stream without `end`: the remote side runs nothing more.
    pub(crate) fn close(&mut self) {
        *self.stdin.lock().expect("stdin") = None;
    }

    /// ssh's exit status (waiting up to 3 s for it) and its last stderr line.
    pub(crate) fn ended(&mut self) -> (Option<i32>, Option<String>) {
        self.close();
        let until = Instant::now() + Duration::from_secs(3);
        let status = loop {
            match self.child.try_wait() {
                Ok(Some(status)) => break Some(status),
                Ok(None) if Instant::now() < until => std::thread::sleep(Duration::from_millis(10)),
                _ => break None,
            }
        };
        // Let the stderr thread take what was printed just before the exit.
        std::thread::sleep(Duration::from_millis(50));
        let last = self.tail.lock().expect("stderr tail").back().cloned();
        (status.and_then(|s| s.code()), last)
    }

    /// Why the link ended, for messages.
    pub(crate) fn why(&mut self) -> String {
        match self.ended() {
            (Some(255), Some(line)) => format!("{} failed (exit status 255): {line}", self.via),
            (Some(code), Some(line)) => {
                format!("the remote rcon ended (exit status {code}): {line}")
            }
            (Some(code), None) => format!("the remote rcon ended (exit status {code})"),
            (None, Some(line)) => format!("{} ended: {line}", self.via),
            (None, None) => format!("{} ended", self.via),
        }
    }
}

/// Writes one frame on `stdin` and flushes it.
fn send_on(stdin: &SshInput, frame: &Frame) -> io::Result<()> {
    let mut stdin = stdin.lock().expect("stdin");
    let stdin = stdin
        .as_mut()
        .ok_or_else(|| io::Error::from(io::ErrorKind::BrokenPipe))?;
    proto::write(stdin, frame)?;
    stdin.flush()
}

impl Drop for SshLink {
    fn drop(&mut self) {
        self.close();
        if matches!(self.child.try_wait(), Ok(None)) {
            let until = Instant::now() + Duration::from_secs(2);
            while Instant::now() < until {
                if !matches!(self.child.try_wait(), Ok(None)) {
                    return;
                }
                std::thread::sleep(Duration::from_millis(10));
            }
            let _ = self.child.kill();
        }
        let _ = self.child.wait();
    }
}

/// What opens a link to the remote side: ssh, the handshake, and `--remote-install` when the
/// remote has no usable rcon. Shared by batch runs, the console's session and fan-out.
pub struct Starter {
    /// The ssh command line without the remote command.
    base: Vec<OsString>,
    via: String,
    /// The program run there (`--remote-rcon`, or the copy `--remote-install` made), and
    /// whether that copy was made (it is not tried twice).
    program: Mutex<(String, bool)>,
    remote_install: bool,
    /// The `settings` frame (it holds the password: it goes only into the channel).
    settings: Frame,
    /// How long the start and the handshake may take.
    limit: Duration,
}

/// Why a link could not be opened.
pub enum StartError {
    /// Exit with this.
    Fatal(anyhow::Error),
    /// The link went away during the handshake (a retry may help).
    Lost(String),
}

impl Starter {
    /// The starter for `settings`, sending `settings_frame`'s policy.
    pub fn new(
        settings: &Settings,
        password: &str,
        keep_going: bool,
        delay: Option<Duration>,
        parse_errors_fail: bool,
    ) -> anyhow::Result<Starter> {
        let ssh = settings
            .ssh
            .as_ref()
            .ok_or_else(|| fail(Exit::Usage, "--remote needs --ssh"))?;
        let dest = SshDestination::parse(&ssh.value)
            .map_err(|e| fail(Exit::Usage, format!("--ssh: {e}")))?;
        Ok(Starter {
            base: ssh_base(settings, &dest),
            via: format!("ssh {dest}"),
            program: Mutex::new((
                settings
                    .remote_rcon
                    .clone()
                    .unwrap_or_else(|| "rcon".into()),
                false,
            )),
            remote_install: settings.remote_install,
            settings: Frame::Settings {
                args: server_args(settings),
                password: password.to_string(),
                keep_going,
                delay_ms: delay.map(|d| d.as_millis() as u64),
                parse_errors_fail,
                heartbeat_ms: Some(HEARTBEAT.as_millis() as u64),
            },
            limit: settings.timeout.value + Duration::from_secs(10),
        })
    }

    /// `ssh DEST`, for messages.
    pub fn via(&self) -> &str {
        &self.via
    }

    /// The ssh command line that starts the remote side, and the program it runs there.
    pub(crate) fn command_line(&self) -> (Vec<OsString>, String) {
        let program = self.program.lock().expect("program").0.clone();
        let mut argv = self.base.clone();
        argv.push(remote_command(&program).into());
        (argv, program)
    }

    /// `--remote-install` before the link is opened (several servers, on the event loop, where
    /// no copy can be made halfway): makes sure of this rcon's copy on the SSH host and runs
    /// it there. A host is probed once per run however many servers it serves.
    pub(crate) fn install_first(&self) -> anyhow::Result<()> {
        static COPIES: Mutex<Vec<(Vec<OsString>, String)>> = Mutex::new(Vec::new());
        let mut copies = COPIES.lock().expect("copies");
        let path = match copies.iter().find(|(base, _)| *base == self.base) {
            Some((_, path)) => path.clone(),
            None => {
                let host = self.via.trim_start_matches("ssh ");
                let why = format!("this rcon is to run on {host}");
                let path = install::ensure(&self.base, &self.via, &why)?;
                copies.push((self.base.clone(), path.clone()));
                path
            }
        };
        *self.program.lock().expect("program") = (path, true);
        Ok(())
    }

    /// The `settings` frame (it holds the password).
    pub(crate) fn settings_frame(&self) -> &Frame {
        &self.settings
    }

    /// How long the start and the handshake may take.
    pub(crate) fn limit(&self) -> Duration {
        self.limit
    }

    /// The link was lost: a shared SSH connection (docs/ssh.md) may be the part that died (a
    /// link gone silent leaves its master waiting on a dead TCP connection), and a resume or a
    /// `--retry` through it would wait on it too: its master is told to exit.
    pub fn drop_shared_connection(&self) {
        crate::app::resolve::ssh_sharing::stop_master(&self.base);
    }

    /// Starts ssh and the remote side and checks the versions; copies this rcon there first
    /// when it has none and `--remote-install` is on.
    pub(crate) fn open(&self) -> Result<(Sender<Event>, Receiver<Event>, SshLink), StartError> {
        loop {
            let (tx, rx) = mpsc::channel();
            let (argv, program) = self.command_line();
            let mut link =
                SshLink::start(&argv, self.via.clone(), tx.clone()).map_err(StartError::Fatal)?;
            match self.handshake(&mut link, &rx, &program) {
                Ok(()) => {
                    link.beat();
                    return Ok((tx, rx, link));
                }
                Err(HandshakeError::Fatal(e)) => return Err(StartError::Fatal(e)),
                // No usable rcon there: --remote-install copies this one, once.
                Err(HandshakeError::Unusable { error, why }) => {
                    let mut program = self.program.lock().expect("program");
                    if !self.remote_install || program.1 {
                        return Err(StartError::Fatal(error));
                    }
                    drop(link);
                    let path =
                        install::ensure(&self.base, &self.via, &why).map_err(StartError::Fatal)?;
                    *program = (path, true);
                }
                Err(HandshakeError::Lost(message)) => return Err(StartError::Lost(message)),
            }
        }
    }

    fn handshake(
        &self,
        link: &mut SshLink,
        rx: &Receiver<Event>,
        program: &str,
    ) -> Result<(), HandshakeError> {
        let limit = self.limit;
        let deadline = Instant::now() + limit;
        let wait = |deadline: Instant| loop {
            match rx.recv_timeout(deadline.saturating_duration_since(Instant::now())) {
                Ok(Event::Frame(f)) => return Ok(*f),
                // A shell start-up file may print before the program starts: skip it.
                Ok(Event::Bad(_)) | Ok(Event::Src(_)) => continue,
                Ok(Event::Gone) | Err(RecvTimeoutError::Disconnected) => return Err(None),
                Err(RecvTimeoutError::Timeout) => return Err(Some(())),
            }
        };
        let fatal = |exit, message: String| HandshakeError::Fatal(fail(exit, message));
        match wait(deadline) {
            Ok(Frame::Hello { protocol, .. }) if protocol == PROTOCOL => {}
            Ok(Frame::Hello { protocol, version }) => {
                let (why, message) = other_version(&self.via, program, protocol, &version);
                return Err(HandshakeError::Unusable {
                    error: fail(Exit::Remote, message),
                    why,
                });
            }
            Ok(_) => {
                return Err(fatal(
                    Exit::Remote,
                    format!("the remote rcon ({program}) did not start with a hello frame"),
                ));
            }
            Err(Some(())) => {
                return Err(fatal(
                    Exit::Timeout,
                    format!(
                        "timed out after {} waiting for the remote rcon ({program}) on {} to start",
                        rconsole::format_duration(limit),
                        self.via
                    ),
                ));
            }
            Err(None) => return Err(self.failed_start(link, program)),
        }
        for frame in [&Frame::hello(), &self.settings] {
            if link.send(frame).is_err() {
                return Err(HandshakeError::Lost(link.why()));
            }
        }
        match wait(deadline) {
            Ok(Frame::Ready) => Ok(()),
            Ok(Frame::Error { exit, message }) => Err(fatal(
                exit_from_code(exit),
                format!("the remote rcon on {}: {message}", self.via),
            )),
            Ok(_) => Err(fatal(
                Exit::Remote,
                "the remote rcon answered the settings with something else".into(),
            )),
            Err(Some(())) => Err(fatal(
                Exit::Timeout,
                format!("timed out waiting for the remote rcon on {}", self.via),
            )),
            Err(None) => Err(HandshakeError::Lost(link.why())),
        }
    }

    /// The remote side ended before its hello: ssh failed, the program is missing, or it is an
    /// rcon without `--remote-serve`.
    fn failed_start(&self, link: &mut SshLink, program: &str) -> HandshakeError {
        let (code, last) = link.ended();
        match start_failure(&self.via, program, code, last.as_deref()) {
            Ok((why, message)) => HandshakeError::Unusable {
                error: fail(Exit::Remote, message),
                why,
            },
            Err(message) => HandshakeError::Fatal(fail(Exit::Transport, message)),
        }
    }
}

/// The remote side (`program`, through `via`) said `hello` with another protocol version:
/// in a few words (for `--remote-install`), and the message naming both versions.
pub(crate) fn other_version(
    via: &str,
    program: &str,
    protocol: u32,
    version: &str,
) -> (String, String) {
    let host = via.trim_start_matches("ssh ");
    (
        format!(
            "the remote rcon ({program} on {host}) speaks remote protocol {protocol}, not {PROTOCOL}"
        ),
        format!(
            "the remote rcon ({program} on {host}) is version {version} and speaks remote protocol {protocol}; this rcon is version {VERSION} and speaks {PROTOCOL}: install rcon {VERSION} there (or name another with --remote-rcon PATH, or give --remote-install to copy this rcon there)"
        ),
    )
}

/// What the end of the remote side before its hello means, from ssh's exit `code` and the last
/// line it printed: a program that cannot serve (`Ok`: in a few words, for `--remote-install`,
/// and the message saying what to install; exit 10), or ssh that failed (`Err`: the message;
/// exit 9).
pub(crate) fn start_failure(
    via: &str,
    program: &str,
    code: Option<i32>,
    last: Option<&str>,
) -> Result<(String, String), String> {
    let host = via.trim_start_matches("ssh ");
    let said = last.unwrap_or_default();
    let install = "or give --remote-install to copy this rcon there";
    match code {
        Some(255) | None => Err(match last {
            Some(line) => format!("{via} failed (exit status 255): {line}"),
            None => format!("{via} failed without a message"),
        }),
        Some(127) => Ok((
            format!("the remote rcon '{program}' was not found on {host}"),
            format!(
                "the remote rcon '{program}' was not found on {host} (exit status 127: {said}): install rcon {VERSION} there on the PATH (the static release build runs on any Linux of the same architecture), name it with --remote-rcon PATH, {install}"
            ),
        )),
        Some(126) => Ok((
            format!("the remote rcon '{program}' on {host} cannot be run"),
            format!(
                "the remote rcon '{program}' on {host} cannot be run (exit status 126: {said}): install rcon {VERSION} there, name another with --remote-rcon PATH, {install}"
            ),
        )),
        Some(code) => Ok((
            format!("the remote program '{program}' on {host} does not speak the remote protocol"),
            format!(
                "the remote program '{program}' on {host} does not speak the remote protocol (exit status {code}: {said}): it is not rcon, or an rcon older than --remote; install rcon {VERSION} there, name it with --remote-rcon PATH, {install}"
            ),
        )),
    }
}

enum HandshakeError {
    Fatal(anyhow::Error),
    /// The remote program is missing, cannot run, or speaks another protocol: what
    /// `--remote-install` is for. `why` says so in a few words.
    Unusable {
        error: anyhow::Error,
        why: String,
    },
    Lost(String),
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn remote_command_is_quoted_for_the_shell() {
        assert_eq!(remote_command("rcon"), "rcon --remote-serve");
        assert_eq!(
            remote_command("/opt/rcon/bin/rcon"),
            "/opt/rcon/bin/rcon --remote-serve"
        );
        assert_eq!(
            remote_command("my rcon; rm -rf /"),
            "'my rcon; rm -rf /' --remote-serve"
        );
        assert_eq!(remote_command("it's"), r"'it'\''s' --remote-serve");
    }

    #[test]
    fn exit_codes_read_back() {
        for exit in [
            Exit::CommandFailed,
            Exit::Connect,
            Exit::Login,
            Exit::Timeout,
            Exit::Connection,
            Exit::Refused,
            Exit::Transport,
            Exit::Remote,
        ] {
            assert_eq!(exit_from_code(exit as u8), exit);
        }
    }
}
