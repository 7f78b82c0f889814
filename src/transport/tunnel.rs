//! A byte stream over a child process's stdin and stdout: how the engine reaches a server through
//! `ssh -W` (the system OpenSSH client, no shell on the far side) or any proxy command, so that
//! RCON's clear-text password never crosses the network.
//!
//! Reads go through a reader thread and a channel, so they can wait with a deadline like a
//! socket. The child's stderr is kept (the last lines only) so that when the tunnel dies, the
//! error says why: `Permission denied (publickey)`, `Host key verification failed.`, ...
//! When the stream ends, the child's exit is waited for with a deadline (to tell a failed
//! tunnel from a plain close): a thread blocked on the child's exit (`waitid(WNOWAIT)` on Unix,
//! `WaitForSingleObject` on Windows: `when_exited`) says so over a channel, and the transport
//! then reaps it (`ExitWatch`; the fleet's event loop is woken the same way). No polling. The
//! fleet's event loop shares the spawning, the stderr lines and the wording of a failure, and
//! on Windows the reader threads (`Readers`).

use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::process::{Child, ChildStdin, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver, RecvTimeoutError};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use crate::error::{Error, Result, TransportFailure};
use crate::transport::{Connector, TcpConnector, Transport, Waker, split_host_port};

/// How many lines of the child's stderr are kept for error messages.
const STDERR_LINES: usize = 20;
/// How long each kept stderr line may be.
const STDERR_LINE_CHARS: usize = 400;
/// After the child closes its stdout: how long to wait for it to exit and say why.
const EXIT_GRACE: Duration = Duration::from_secs(3);

/// A command line run by the platform shell: `sh -c COMMAND` on Unix; on Windows
/// `cmd /D /S /C "COMMAND"`, passed to `cmd.exe` as one raw argument. Rust's standard argument
/// quoting would turn each `"` into `\"`, which `cmd.exe` does not read, so every quoted path
/// (`"C:\my tools\nc.exe" %h %p`) would fail (issue 12). With `/S`, cmd strips exactly the
/// outer pair of quotes and runs the rest as typed; `/D` skips AutoRun commands from the
/// registry, which could print into the tunnel or the password.
pub fn shell_command(command: &str) -> Command {
    #[cfg(windows)]
    {
        use std::os::windows::process::CommandExt;
        let mut c = Command::new("cmd.exe");
        c.raw_arg(cmd_line(command));
        c
    }
    #[cfg(not(windows))]
    {
        let mut c = Command::new("sh");
        c.arg("-c").arg(command);
        c
    }
}

/// The raw argument `cmd.exe` gets for `command` (see [`shell_command`]).
fn cmd_line(command: &str) -> String {
    format!("/D /S /C \"{command}\"")
}

/// `[USER@]HOST[:PORT]` of an SSH server.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SshDestination {
    /// Login name, if given.
    pub user: Option<String>,
    /// Host name or address, without brackets.
    pub host: String,
    /// SSH port, if given (otherwise ssh's own default or configuration applies).
    pub port: Option<u16>,
}

impl SshDestination {
    /// Parses `[USER@]HOST[:PORT]`; IPv6 addresses take brackets when a port follows.
    pub fn parse(text: &str) -> std::result::Result<Self, String> {
        let text = text.trim();
        let (user, rest) = match text.rsplit_once('@') {
            Some((user, rest)) => (Some(user.to_string()), rest),
            None => (None, text),
        };
        if user.as_deref() == Some("") {
            return Err(format!("'{text}' has an empty user name before '@'"));
        }
        let (host, port) = split_host_port(rest);
        let one_colon = !rest.starts_with('[') && rest.matches(':').count() == 1;
        if port.is_none() && (one_colon || rest.contains("]:")) {
            return Err(format!(
                "'{text}' has an invalid port (expected [USER@]HOST[:PORT])"
            ));
        }
        if host.is_empty() {
            return Err(format!(
                "'{text}' has no host (expected [USER@]HOST[:PORT])"
            ));
        }
        if host.starts_with('-') || user.as_deref().is_some_and(|u| u.starts_with('-')) {
            return Err(format!("'{text}' may not start with '-'"));
        }
        Ok(Self { user, host, port })
    }
}

impl std::fmt::Display for SshDestination {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if let Some(user) = &self.user {
            write!(f, "{user}@")?;
        }
        match self.port {
            Some(port) => f.write_str(&TcpConnector::new(&self.host, port).describe()),
            None => f.write_str(&self.host),
        }
    }
}

/// Replaces `%h` (host), `%p` (port) and `%%` in a proxy command, as OpenSSH's ProxyCommand
/// does; any other `%` sequence is an error.
pub fn expand_proxy_command(
    template: &str,
    host: &str,
    port: u16,
) -> std::result::Result<String, String> {
    let mut out = String::with_capacity(template.len() + host.len());
    let mut chars = template.chars();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        match chars.next() {
            Some('h') => out.push_str(host),
            Some('p') => out.push_str(&port.to_string()),
            Some('%') => out.push('%'),
            Some(other) => {
                return Err(format!(
                    "unknown placeholder %{other} in the proxy command (known: %h, %p, %%)"
                ));
            }
            None => return Err("the proxy command ends in a lone %".into()),
        }
    }
    Ok(out)
}

#[derive(Debug, Clone)]
enum Launch {
    /// `ssh -W`, with the user's `-o` options first (ssh keeps the first value it sees of an
    /// option, so they win over the defaults that follow).
    Ssh {
        program: OsString,
        destination: SshDestination,
        options: Vec<String>,
    },
    /// A command line run by the platform's shell.
    Shell { command: String },
}

/// Opens connections by starting a process and speaking RCON over its stdin and stdout.
#[derive(Debug, Clone)]
pub struct ProcessConnector {
    launch: Launch,
    /// The RCON server as the far side sees it.
    target: String,
}

impl ProcessConnector {
    /// A tunnel through `ssh -W HOST:PORT` to the RCON server at `rcon_host`:`rcon_port` as seen
    /// from the SSH server. `options` are ssh_config options (`KEY=VALUE`), each passed as
    /// `-o`. `BatchMode=yes` (never prompt) and a `ConnectTimeout` from the timeout are added
    /// after them, so a user's own value for either wins.
    pub fn ssh(
        destination: SshDestination,
        options: Vec<String>,
        rcon_host: &str,
        rcon_port: u16,
    ) -> Self {
        Self::ssh_program("ssh", destination, options, rcon_host, rcon_port)
    }

    /// Like [`ProcessConnector::ssh`] with another ssh program.
    pub fn ssh_program(
        program: impl Into<OsString>,
        destination: SshDestination,
        options: Vec<String>,
        rcon_host: &str,
        rcon_port: u16,
    ) -> Self {
        Self {
            launch: Launch::Ssh {
                program: program.into(),
                destination,
                options,
            },
            target: TcpConnector::new(rcon_host, rcon_port).describe(),
        }
    }

    /// A tunnel through any command that connects its stdin and stdout to the RCON server,
    /// with `%h`, `%p` and `%%` already expanded (see [`expand_proxy_command`]). It runs under
    /// the platform shell (see [`shell_command`]).
    pub fn shell(command: impl Into<String>, rcon_host: &str, rcon_port: u16) -> Self {
        Self {
            launch: Launch::Shell {
                command: command.into(),
            },
            target: TcpConnector::new(rcon_host, rcon_port).describe(),
        }
    }

    /// The program and arguments that [`Connector::connect`] runs with this timeout.
    pub fn argv(&self, timeout: Duration) -> Vec<OsString> {
        match &self.launch {
            Launch::Ssh {
                program,
                destination,
                options,
            } => {
                let mut argv: Vec<OsString> = vec![program.clone()];
                for option in options {
                    argv.push("-o".into());
                    argv.push(option.into());
                }
                let secs = timeout.as_secs_f64().ceil().max(1.0) as u64;
                for option in [
                    "BatchMode=yes".to_string(),
                    format!("ConnectTimeout={secs}"),
                ] {
                    argv.push("-o".into());
                    argv.push(option.into());
                }
                if let Some(port) = destination.port {
                    argv.push("-p".into());
                    argv.push(port.to_string().into());
                }
                if let Some(user) = &destination.user {
                    argv.push("-l".into());
                    argv.push(user.into());
                }
                argv.push("-W".into());
                argv.push(self.target.clone().into());
                argv.push("--".into());
                argv.push(destination.host.clone().into());
                argv
            }
            Launch::Shell { command } => {
                if cfg!(windows) {
                    vec!["cmd".into(), cmd_line(command).into()]
                } else {
                    vec!["sh".into(), "-c".into(), command.into()]
                }
            }
        }
    }

    /// The child process [`Connector::connect`] starts: [`ProcessConnector::argv`] for ssh,
    /// [`shell_command`] for a proxy command.
    fn command(&self, timeout: Duration) -> Command {
        match &self.launch {
            Launch::Shell { command } => shell_command(command),
            Launch::Ssh { .. } => {
                let argv = self.argv(timeout);
                let mut command = Command::new(&argv[0]);
                command.args(&argv[1..]);
                command
            }
        }
    }

    /// `ssh user@host:22` or `proxy command`, for messages.
    pub(crate) fn via(&self) -> String {
        match &self.launch {
            Launch::Ssh { destination, .. } => format!("ssh {destination}"),
            Launch::Shell { .. } => "proxy command".into(),
        }
    }

    /// Starts the child with its stdin, stdout and stderr piped: for the blocking transport
    /// ([`Connector::connect`]) and the fleet's event loop alike. A program that cannot start is
    /// a transport error saying what to install.
    pub(crate) fn spawn(&self, timeout: Duration) -> Result<Child> {
        let mut command = self.command(timeout);
        command
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        command.spawn().map_err(|e| {
            let program = command.get_program().to_string_lossy();
            let hint = match (e.kind(), &self.launch) {
                (io::ErrorKind::NotFound, Launch::Ssh { .. }) => {
                    " (is the OpenSSH client installed and on PATH?)"
                }
                (io::ErrorKind::NotFound, Launch::Shell { .. }) => {
                    " (no shell to run the proxy command)"
                }
                _ => "",
            };
            Error::Transport(format!("cannot start {}: {program}: {e}{hint}", self.via()))
        })
    }
}

impl Connector for ProcessConnector {
    fn connect(&self, timeout: Duration) -> Result<Box<dyn Transport>> {
        let via = self.via();
        let mut child = self.spawn(timeout)?;
        let stdin = child.stdin.take();
        let readers = Readers::start(&mut child, || {})?;
        Ok(Box::new(ProcessTransport {
            child,
            stdin,
            wake: readers.wake,
            rx: readers.rx,
            pending: Vec::new(),
            pos: 0,
            eof: false,
            tail: readers.tail,
            stderr_done: readers.stderr_done,
            exit: None,
            via,
            peer: self.describe(),
        }))
    }

    fn describe(&self) -> String {
        format!("{} via {}", self.target, self.via())
    }

    fn address(&self) -> String {
        self.target.clone()
    }
}

/// What the thread reading a child's stdout hands over.
pub(crate) enum Chunk {
    Data(Vec<u8>),
    Eof,
    Failed(io::Error),
    /// From the [`Transport::waker`]: end the read under way (or the next one) early.
    Wake,
}

/// The threads that read a child's stdout and stderr, for a reader that cannot poll them (the
/// blocking transport; the fleet's event loop on Windows): stdout's bytes in chunks over a
/// channel, stderr's last lines kept.
pub(crate) struct Readers {
    /// Stdout's chunks, ending with [`Chunk::Eof`] or [`Chunk::Failed`].
    pub(crate) rx: Receiver<Chunk>,
    /// A sender on the same channel (for [`Chunk::Wake`]).
    pub(crate) wake: mpsc::Sender<Chunk>,
    /// Stderr's last lines ([`keep_line`]).
    pub(crate) tail: Arc<Mutex<VecDeque<String>>>,
    /// Says (or closes) once stderr ended: everything the child printed is in `tail`.
    pub(crate) stderr_done: Receiver<()>,
}

impl Readers {
    /// Starts the two threads on `child`'s stdout and stderr; `ring` is called after each
    /// chunk is sent and once stderr ended, to wake whoever waits on them some other way.
    pub(crate) fn start(
        child: &mut Child,
        ring: impl Fn() + Send + Sync + 'static,
    ) -> Result<Readers> {
        let ring = Arc::new(ring);
        let ring_err = Arc::clone(&ring);
        let mut stdout = child.stdout.take().expect("stdout is piped");
        let stderr = child.stderr.take().expect("stderr is piped");
        let (tx, rx) = mpsc::channel();
        let wake = tx.clone();
        let pump = move || {
            let mut buf = vec![0u8; 64 * 1024];
            loop {
                let message = match stdout.read(&mut buf) {
                    Ok(0) => Chunk::Eof,
                    Ok(n) => Chunk::Data(buf[..n].to_vec()),
                    Err(e) if e.kind() == io::ErrorKind::Interrupted => continue,
                    Err(e) => Chunk::Failed(e),
                };
                let last = !matches!(message, Chunk::Data(_));
                if tx.send(message).is_err() {
                    return;
                }
                ring();
                if last {
                    return;
                }
            }
        };
        let cannot = |e| Error::Transport(format!("cannot start a reader thread: {e}"));
        thread::Builder::new()
            .name("rcon-tunnel-out".into())
            .spawn(pump)
            .map_err(cannot)?;
        let tail = Arc::new(Mutex::new(VecDeque::new()));
        let (done_tx, stderr_done) = mpsc::channel();
        let tail_writer = Arc::clone(&tail);
        thread::Builder::new()
            .name("rcon-tunnel-err".into())
            .spawn(move || {
                keep_stderr(stderr, &tail_writer);
                let _ = done_tx.send(());
                ring_err();
            })
            .map_err(cannot)?;
        Ok(Readers {
            rx,
            wake,
            tail,
            stderr_done,
        })
    }
}

fn keep_stderr(stderr: impl Read, tail: &Mutex<VecDeque<String>>) {
    let mut reader = BufReader::new(stderr);
    let mut line = Vec::new();
    loop {
        line.clear();
        match reader.read_until(b'\n', &mut line) {
            Ok(0) | Err(_) => return,
            Ok(_) => keep_line(&mut tail.lock().expect("stderr tail lock"), &line),
        }
    }
}

/// Keeps one line the child printed on stderr (trimmed, shortened; blank ones skipped), the
/// last few only.
pub(crate) fn keep_line(tail: &mut VecDeque<String>, line: &[u8]) {
    let text = String::from_utf8_lossy(line);
    let text = text.trim();
    if text.is_empty() {
        return;
    }
    if tail.len() == STDERR_LINES {
        tail.pop_front();
    }
    tail.push_back(text.chars().take(STDERR_LINE_CHARS).collect());
}

/// What a tunnel (`via`) that exited with a failure `status` says: the most telling line it
/// printed on stderr, the last one, with the one before it when the last is ssh's generic
/// `stdio forwarding failed` (the line before says why, e.g. `channel 0: open failed: connect
/// failed: Connection refused`).
pub(crate) fn failure(via: &str, status: ExitStatus, tail: &VecDeque<String>) -> String {
    let how = describe_status(status);
    let said = match (tail.len().checked_sub(2).map(|i| &tail[i]), tail.back()) {
        (Some(before), Some(last)) if last.starts_with("stdio forwarding failed") => {
            Some(format!("{before}; {last}"))
        }
        (_, last) => last.cloned(),
    };
    match said {
        Some(line) => format!("{via} failed ({how}): {line}"),
        None => format!("{via} failed ({how}) without a message"),
    }
}

/// A running tunnel process.
pub struct ProcessTransport {
    child: Child,
    stdin: Option<ChildStdin>,
    rx: Receiver<Chunk>,
    /// The reader thread's channel, for [`Transport::waker`]. (The thread always ends with
    /// [`Chunk::Eof`] or [`Chunk::Failed`], so holding a sender loses no end of stream.)
    wake: mpsc::Sender<Chunk>,
    pending: Vec<u8>,
    pos: usize,
    eof: bool,
    tail: Arc<Mutex<VecDeque<String>>>,
    stderr_done: Receiver<()>,
    /// Started when the stream ends and the exit is waited for.
    exit: Option<ExitWatch>,
    via: String,
    peer: String,
}

/// Calls `then` on a thread of its own once `child` has exited, without reaping it (see
/// [`exit_wait`]). The [`Child`] stays with its owner, which reaps it (`try_wait`) once told,
/// and may kill it meanwhile. Used by the blocking tunnel ([`ExitWatch`]) and by the fleet's
/// event loop, which is woken this way instead of asking the child again and again.
pub(crate) fn when_exited(child: &Child, then: impl FnOnce() + Send + 'static) {
    // Without the wait or the thread `then` is dropped unrun: its owner sees what dropping it
    // means (a closed channel or pipe), so the wait ends at once.
    let Some(wait) = exit_wait(child) else {
        return;
    };
    let _ = thread::Builder::new()
        .name("rcon-tunnel-exit".into())
        .spawn(move || {
            wait();
            then();
        });
}

/// A wait for `child`'s exit that leaves it unreaped: `waitid(P_PID, pid, WEXITED | WNOWAIT)`
/// (returning too when that wait fails). An unreaped child keeps its pid, so the pid waited on
/// is never another process's. (Should the owner reap the child before the wait starts, the
/// `waitid` fails with `ECHILD` and returns; only a new child of this process given the same
/// pid in that instant would keep the wait going, on that child, harmlessly, until it exits.)
#[cfg(unix)]
fn exit_wait(child: &Child) -> Option<impl FnOnce() + Send + 'static> {
    let pid = child.id() as libc::id_t;
    Some(move || {
        loop {
            // SAFETY: a zeroed siginfo_t is a valid out-parameter; waitid only writes it.
            let mut info: libc::siginfo_t = unsafe { std::mem::zeroed() };
            // SAFETY: waits on this process's own child; WNOWAIT leaves it to be reaped.
            let got =
                unsafe { libc::waitid(libc::P_PID, pid, &mut info, libc::WEXITED | libc::WNOWAIT) };
            if got == 0 || io::Error::last_os_error().kind() != io::ErrorKind::Interrupted {
                break;
            }
        }
    })
}

/// A wait for `child`'s exit: `WaitForSingleObject` on a duplicate of its process handle, owned
/// by the wait, so the owner may close its own (drop the child) meanwhile.
#[cfg(windows)]
fn exit_wait(child: &Child) -> Option<impl FnOnce() + Send + 'static> {
    use std::os::windows::io::{AsHandle, AsRawHandle};
    use windows_sys::Win32::System::Threading::{INFINITE, WaitForSingleObject};
    let handle = child.as_handle().try_clone_to_owned().ok()?;
    Some(move || {
        // SAFETY: the handle is the wait's own, open until it drops after the call.
        unsafe { WaitForSingleObject(handle.as_raw_handle() as _, INFINITE) };
    })
}

/// Says when a child process has exited ([`when_exited`]), over a channel.
struct ExitWatch(Receiver<()>);

impl ExitWatch {
    fn start(child: &Child) -> ExitWatch {
        let (tx, rx) = mpsc::channel();
        when_exited(child, move || {
            let _ = tx.send(());
        });
        ExitWatch(rx)
    }

    /// Blocks until the child has exited (true), or `grace` passed (false).
    fn wait(&self, grace: Duration) -> bool {
        !matches!(self.0.recv_timeout(grace), Err(RecvTimeoutError::Timeout))
    }
}

impl std::fmt::Debug for ProcessTransport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("ProcessTransport")
            .field("peer", &self.peer)
            .field("pid", &self.child.id())
            .finish_non_exhaustive()
    }
}

impl ProcessTransport {
    /// The stream ended (or a write failed): if the process exited with a failure, that is the
    /// error, with the last thing it printed on stderr; otherwise `None` (a plain close).
    fn exit_failure(&mut self) -> Option<io::Error> {
        let status = self.wait_exit(EXIT_GRACE)?;
        if status.success() {
            return None;
        }
        // Let the stderr thread read what the process printed before it exited.
        let _ = self.stderr_done.recv_timeout(Duration::from_millis(500));
        let tail = self.tail.lock().expect("stderr tail lock");
        let message = failure(&self.via, status, &tail);
        Some(TransportFailure(message).into_io())
    }

    /// The child's exit status, waiting up to `grace` for it to exit; `None` when it did not
    /// (or cannot be asked).
    fn wait_exit(&mut self, grace: Duration) -> Option<ExitStatus> {
        if let Ok(Some(status)) = self.child.try_wait() {
            return Some(status);
        }
        let exit = self
            .exit
            .get_or_insert_with(|| ExitWatch::start(&self.child));
        if !exit.wait(grace) {
            return None;
        }
        self.child.try_wait().ok().flatten()
    }
}

pub(crate) fn describe_status(status: ExitStatus) -> String {
    if let Some(code) = status.code() {
        return format!("exit status {code}");
    }
    #[cfg(unix)]
    {
        use std::os::unix::process::ExitStatusExt;
        if let Some(signal) = status.signal() {
            return format!("killed by signal {signal}");
        }
    }
    "ended abnormally".into()
}

impl Transport for ProcessTransport {
    fn read_before(&mut self, buf: &mut [u8], deadline: Instant) -> io::Result<usize> {
        if self.pos == self.pending.len() && !self.eof {
            let left = deadline.saturating_duration_since(Instant::now());
            match self.rx.recv_timeout(left) {
                Ok(Chunk::Data(data)) => {
                    self.pending = data;
                    self.pos = 0;
                }
                Ok(Chunk::Eof) | Err(RecvTimeoutError::Disconnected) => self.eof = true,
                Ok(Chunk::Failed(e)) => {
                    self.eof = true;
                    return Err(self.exit_failure().unwrap_or(e));
                }
                Err(RecvTimeoutError::Timeout) => {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "read timed out"));
                }
                Ok(Chunk::Wake) => {
                    return Err(io::Error::new(io::ErrorKind::Interrupted, "woken"));
                }
            }
        }
        if self.pos < self.pending.len() {
            let n = buf.len().min(self.pending.len() - self.pos);
            buf[..n].copy_from_slice(&self.pending[self.pos..self.pos + n]);
            self.pos += n;
            return Ok(n);
        }
        match self.exit_failure() {
            Some(e) => Err(e),
            None => Ok(0),
        }
    }

    fn write_packet(&mut self, bytes: &[u8], _deadline: Instant) -> io::Result<()> {
        // A pipe write cannot take a deadline; RCON packets are far smaller than a pipe's
        // buffer, so the write returns at once unless the process stopped reading entirely.
        let result = match self.stdin.as_mut() {
            Some(stdin) => stdin.write_all(bytes).and_then(|()| stdin.flush()),
            None => Err(io::Error::new(io::ErrorKind::BrokenPipe, "tunnel closed")),
        };
        result.map_err(|e| self.exit_failure().unwrap_or(e))
    }

    fn peer(&self) -> String {
        self.peer.clone()
    }

    fn waker(&mut self) -> Option<Waker> {
        let wake = self.wake.clone();
        Some(Arc::new(move || {
            let _ = wake.send(Chunk::Wake);
        }))
    }

    fn close(&mut self) {
        self.stdin = None;
        let _ = self.child.kill();
        let _ = self.child.wait();
        self.eof = true;
    }
}

impl Drop for ProcessTransport {
    fn drop(&mut self) {
        self.close();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn destinations() {
        let d = SshDestination::parse("admin@mc.example:2222").unwrap();
        assert_eq!(
            d,
            SshDestination {
                user: Some("admin".into()),
                host: "mc.example".into(),
                port: Some(2222)
            }
        );
        assert_eq!(d.to_string(), "admin@mc.example:2222");
        let d = SshDestination::parse("mc.example").unwrap();
        assert_eq!((d.user, d.port), (None, None));
        let d = SshDestination::parse("root@[::1]:22").unwrap();
        assert_eq!((d.host.as_str(), d.port), ("::1", Some(22)));
        assert_eq!(d.to_string(), "root@[::1]:22");
        for bad in ["", "@host", "host:", "-oProxyCommand=x", "user@", "h:99999"] {
            assert!(SshDestination::parse(bad).is_err(), "{bad} accepted");
        }
    }

    #[test]
    fn ssh_argv_puts_user_options_first() {
        let c = ProcessConnector::ssh(
            SshDestination::parse("admin@mc.example:2222").unwrap(),
            vec!["BatchMode=no".into(), "IdentityFile=/k".into()],
            "localhost",
            25575,
        );
        let argv: Vec<String> = c
            .argv(Duration::from_millis(2500))
            .into_iter()
            .map(|a| a.to_string_lossy().into_owned())
            .collect();
        assert_eq!(
            argv,
            [
                "ssh",
                "-o",
                "BatchMode=no",
                "-o",
                "IdentityFile=/k",
                "-o",
                "BatchMode=yes",
                "-o",
                "ConnectTimeout=3",
                "-p",
                "2222",
                "-l",
                "admin",
                "-W",
                "localhost:25575",
                "--",
                "mc.example"
            ]
        );
        assert_eq!(
            c.describe(),
            "localhost:25575 via ssh admin@mc.example:2222"
        );
        let v6 = ProcessConnector::ssh(SshDestination::parse("h").unwrap(), vec![], "::1", 5);
        assert!(v6.argv(Duration::ZERO).contains(&OsString::from("[::1]:5")));
    }

    #[test]
    fn proxy_placeholders() {
        assert_eq!(
            expand_proxy_command("nc %h %p # 100%%", "mc", 25575).unwrap(),
            "nc mc 25575 # 100%"
        );
        assert!(expand_proxy_command("nc %r", "mc", 1).is_err());
        assert!(expand_proxy_command("nc %", "mc", 1).is_err());
    }

    #[test]
    fn failing_command_reports_its_last_stderr_line() {
        let script = if cfg!(windows) {
            "echo first line>&2& echo Permission denied (publickey).>&2& exit 255"
        } else {
            "echo 'first line' >&2; echo 'Permission denied (publickey).' >&2; exit 255"
        };
        let c = ProcessConnector::shell(script, "localhost", 1);
        let mut t = c.connect(Duration::from_secs(5)).unwrap();
        let mut buf = [0u8; 16];
        let err = t
            .read_before(&mut buf, Instant::now() + Duration::from_secs(5))
            .unwrap_err();
        let failure = TransportFailure::find(&err).expect("a transport failure");
        assert_eq!(
            failure.0,
            "proxy command failed (exit status 255): Permission denied (publickey)."
        );
    }

    /// A tunnel that closes its stream and exits only later (ssh after a dropped channel): the
    /// end of the stream waits for the exit, which says why.
    #[cfg(unix)]
    #[test]
    fn a_command_that_exits_after_closing_its_stream_still_says_why() {
        let script = "exec >&-; sleep 0.3; echo 'channel 0: open failed' >&2; exit 3";
        let c = ProcessConnector::shell(script, "localhost", 1);
        let mut t = c.connect(Duration::from_secs(5)).unwrap();
        let mut buf = [0u8; 16];
        let err = t
            .read_before(&mut buf, Instant::now() + Duration::from_secs(5))
            .unwrap_err();
        let failure = TransportFailure::find(&err).expect("a transport failure");
        assert_eq!(
            failure.0,
            "proxy command failed (exit status 3): channel 0: open failed"
        );
        // Asked again (a write after the read), the same answer, at once.
        let err = t
            .write_packet(b"x", Instant::now() + Duration::from_secs(5))
            .unwrap_err();
        assert_eq!(
            TransportFailure::find(&err).expect("a transport failure").0,
            "proxy command failed (exit status 3): channel 0: open failed"
        );
    }

    /// What the tunnel carries until it closes (a read of 0 bytes).
    fn read_to_close(t: &mut dyn Transport, deadline: Instant) -> Vec<u8> {
        let (mut got, mut buf) = (Vec::new(), [0u8; 16]);
        loop {
            match t.read_before(&mut buf, deadline).unwrap() {
                0 => return got,
                n => got.extend_from_slice(&buf[..n]),
            }
        }
    }

    #[cfg(unix)]
    #[test]
    fn echoing_command_carries_bytes_and_a_clean_exit_is_a_close() {
        let c = ProcessConnector::shell("head -c 5", "localhost", 1);
        let mut t = c.connect(Duration::from_secs(5)).unwrap();
        let deadline = Instant::now() + Duration::from_secs(5);
        t.write_packet(b"hello", deadline).unwrap();
        assert_eq!(read_to_close(t.as_mut(), deadline), b"hello");
    }

    /// A read on a tunnel ends when another thread wakes it; the stream goes on after.
    #[cfg(unix)]
    #[test]
    fn a_read_on_a_tunnel_ends_when_woken() {
        let c = ProcessConnector::shell("head -c 5", "localhost", 1);
        let mut t = c.connect(Duration::from_secs(5)).unwrap();
        let wake = t.waker().unwrap();
        let far = Instant::now() + Duration::from_secs(60);
        let mut buf = [0u8; 16];
        wake();
        let e = t.read_before(&mut buf, far).unwrap_err();
        assert_eq!(e.kind(), io::ErrorKind::Interrupted);
        t.write_packet(b"hello", far).unwrap();
        assert_eq!(read_to_close(t.as_mut(), far), b"hello");
    }

    #[cfg(unix)]
    #[test]
    fn silent_command_times_out_at_the_deadline() {
        let c = ProcessConnector::shell("sleep 30", "localhost", 1);
        let mut t = c.connect(Duration::from_secs(5)).unwrap();
        let start = Instant::now();
        let mut buf = [0u8; 16];
        let err = t
            .read_before(&mut buf, start + Duration::from_millis(200))
            .unwrap_err();
        assert_eq!(err.kind(), io::ErrorKind::TimedOut);
        assert!(start.elapsed() < Duration::from_secs(2));
        t.close();
    }

    #[test]
    fn cmd_gets_the_command_line_as_typed() {
        assert_eq!(
            cmd_line(r#""C:\my tools\nc.exe" -q "%h" 1"#),
            r#"/D /S /C ""C:\my tools\nc.exe" -q "%h" 1""#
        );
    }

    /// A quoted path with spaces reaches cmd.exe as typed (issue 12: Rust's own quoting made
    /// it `\"...\"`, which cmd cannot read), and the command's output comes through the tunnel.
    #[cfg(windows)]
    #[test]
    fn quoted_path_with_spaces_carries_bytes_and_a_clean_exit_is_a_close() {
        let dir = std::env::temp_dir().join(format!("rcon proxy {}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let file = dir.join("tunnel data.txt");
        std::fs::write(&file, b"hello").unwrap();
        let c = ProcessConnector::shell(format!("type \"{}\"", file.display()), "localhost", 1);
        let mut t = c.connect(Duration::from_secs(5)).unwrap();
        let deadline = Instant::now() + Duration::from_secs(10);
        assert_eq!(read_to_close(t.as_mut(), deadline), b"hello");
        let _ = std::fs::remove_dir_all(&dir);
    }

    // `silent_command_times_out_at_the_deadline` has no Windows twin: the deadline is the
    // reader thread's channel, the same code on every platform, and cmd has no portable
    // `sleep` (`timeout` needs a console, which a piped child does not have).

    #[test]
    fn missing_program_is_a_transport_error() {
        let c = ProcessConnector::ssh_program(
            "/nonexistent/ssh-for-rcon-tests",
            SshDestination::parse("h").unwrap(),
            vec![],
            "localhost",
            1,
        );
        let Err(err) = c.connect(Duration::from_secs(1)) else {
            panic!("a missing program started");
        };
        assert!(matches!(err, Error::Transport(_)), "{err}");
        assert!(err.to_string().contains("OpenSSH client"), "{err}");
    }
}
