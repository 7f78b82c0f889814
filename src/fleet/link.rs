//! The event loop's non-blocking links: a TCP stream, a UDP socket (BattlEye), a WebSocket
//! over either kind of stream (WebRCON), and on Unix a Unix domain socket and a tunnel's pipes (`ssh -W`, a proxy
//! command: the child's stdin and stdout registered with the poll, its stderr kept for the
//! message when it fails).

#[cfg(unix)]
use std::collections::VecDeque;
use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::process::ExitStatus;
use std::time::Duration;

use mio::net::{TcpStream, UdpSocket};
use mio::{Interest, Registry, Token};
use tungstenite::WebSocket;
use tungstenite::handshake::MidHandshake;
use tungstenite::handshake::client::ClientHandshake;

use crate::error::Error;
use crate::transport::Connector;
use crate::transport::tunnel::ProcessConnector;

/// How many lines of a tunnel's stderr are kept for its error message (as the blocking
/// tunnel keeps them).
#[cfg(unix)]
const STDERR_LINES: usize = 20;
/// How long each kept stderr line may be.
#[cfg(unix)]
const STDERR_LINE_CHARS: usize = 400;

/// A tunnel to a target: the child process to start (`ssh -W`, a proxy command) and what it
/// reaches. The event loop drives it on Unix; elsewhere the `rcon` binary runs tunnels on
/// helper threads with the blocking client.
#[derive(Debug, Clone)]
pub struct Tunnel {
    /// The command line; read only where the loop starts it (Unix).
    #[cfg_attr(not(unix), allow(dead_code))]
    argv: Vec<OsString>,
    address: String,
    describe: String,
    via: String,
}

impl Tunnel {
    /// The tunnel `connector` opens, with `timeout` for ssh's own connect timeout.
    pub fn new(connector: &ProcessConnector, timeout: Duration) -> Tunnel {
        let address = connector.address();
        let describe = connector.describe();
        let via = describe
            .strip_prefix(&format!("{address} via "))
            .unwrap_or("tunnel")
            .to_string();
        Tunnel {
            argv: connector.argv(timeout),
            address,
            describe,
            via,
        }
    }

    /// `host:port via ssh host`, for messages.
    pub fn describe(&self) -> &str {
        &self.describe
    }

    /// The `host:port` the tunnel reaches (a WebSocket's URL names it).
    pub fn address(&self) -> &str {
        &self.address
    }

    /// Starts the child with its stdio piped and non-blocking: the pipes to speak over, and
    /// the child (with its stderr) to end and to ask why it failed.
    #[cfg(unix)]
    pub(super) fn spawn(&self) -> Result<(Pipe, TunnelChild), Error> {
        use std::process::{Command, Stdio};
        let mut command = Command::new(&self.argv[0]);
        command
            .args(&self.argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped());
        let mut child = command.spawn().map_err(|e| {
            let program = self.argv[0].to_string_lossy();
            let hint = if e.kind() == io::ErrorKind::NotFound {
                if self.via.starts_with("ssh ") {
                    " (is the OpenSSH client installed and on PATH?)"
                } else {
                    " (no shell to run the proxy command)"
                }
            } else {
                ""
            };
            Error::Transport(format!("cannot start {}: {program}: {e}{hint}", self.via))
        })?;
        let stdin = mio::unix::pipe::Sender::from(child.stdin.take().expect("stdin is piped"));
        let stdout = mio::unix::pipe::Receiver::from(child.stdout.take().expect("stdout is piped"));
        let stderr = mio::unix::pipe::Receiver::from(child.stderr.take().expect("stderr is piped"));
        let child = TunnelChild {
            child,
            stderr: Some(stderr),
            exited: None,
            tail: VecDeque::new(),
            line: Vec::new(),
            via: self.via.clone(),
        };
        let nonblocking = stdin
            .set_nonblocking(true)
            .and_then(|()| stdout.set_nonblocking(true))
            .and_then(|()| match &child.stderr {
                Some(e) => e.set_nonblocking(true),
                None => Ok(()),
            });
        // On failure the child is ended as it drops.
        nonblocking.map_err(|e| Error::Transport(format!("cannot set up {}: {e}", self.via)))?;
        Ok((
            Pipe {
                stdin: Some(stdin),
                stdout,
            },
            child,
        ))
    }

    #[cfg(not(unix))]
    pub(super) fn spawn(&self) -> Result<(Pipe, TunnelChild), Error> {
        Err(Error::Transport(format!(
            "cannot start {}: the event loop runs tunnels on Unix only",
            self.via
        )))
    }
}

/// A running tunnel's stdin and stdout, non-blocking: the byte stream.
#[cfg(unix)]
pub(super) struct Pipe {
    stdin: Option<mio::unix::pipe::Sender>,
    stdout: mio::unix::pipe::Receiver,
}

/// A running tunnel's process and its stderr. It outlives the stream over it (a WebSocket
/// upgrade that fails drops the stream), so that its exit can still say why.
#[cfg(unix)]
pub(super) struct TunnelChild {
    child: std::process::Child,
    stderr: Option<mio::unix::pipe::Receiver>,
    /// Readable (at its end) once the child has exited: see [`TunnelChild::watch_exit`].
    exited: Option<mio::unix::pipe::Receiver>,
    tail: VecDeque<String>,
    /// A stderr line not ended yet.
    line: Vec<u8>,
    via: String,
}

/// No tunnels in the event loop here.
#[cfg(not(unix))]
pub(super) enum Pipe {}

/// No tunnels in the event loop here.
#[cfg(not(unix))]
pub(super) enum TunnelChild {}

#[cfg(not(unix))]
impl TunnelChild {
    pub(super) fn register(&mut self, _: &Registry, _: Token) -> io::Result<()> {
        match *self {}
    }

    pub(super) fn drain_stderr(&mut self, _: &Registry) {
        match *self {}
    }

    pub(super) fn try_wait(&mut self) -> Option<ExitStatus> {
        match *self {}
    }

    pub(super) fn watch_exit(&mut self, _: &Registry, _: Token) -> io::Result<()> {
        match *self {}
    }

    pub(super) fn failure(&mut self, _: &Registry, _: ExitStatus) -> Error {
        match *self {}
    }

    pub(super) fn close(self, _: &Registry) {
        match self {}
    }
}

#[cfg(unix)]
impl Pipe {
    fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        registry.register(&mut self.stdout, token, Interest::READABLE)?;
        if let Some(stdin) = self.stdin.as_mut() {
            registry.register(stdin, token, Interest::WRITABLE)?;
        }
        Ok(())
    }

    fn deregister(&mut self, registry: &Registry) {
        let _ = registry.deregister(&mut self.stdout);
        if let Some(stdin) = self.stdin.as_mut() {
            let _ = registry.deregister(stdin);
        }
    }
}

#[cfg(unix)]
impl TunnelChild {
    /// Registers the child's stderr, read as it comes.
    pub(super) fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        match self.stderr.as_mut() {
            Some(stderr) => registry.register(stderr, token, Interest::READABLE),
            None => Ok(()),
        }
    }

    /// Reads what the child printed on stderr so far, keeping the last lines.
    pub(super) fn drain_stderr(&mut self, registry: &Registry) {
        let Some(stderr) = self.stderr.as_mut() else {
            return;
        };
        let mut buf = [0u8; 4096];
        loop {
            match stderr.read(&mut buf) {
                Ok(0) => {
                    let _ = registry.deregister(stderr);
                    self.stderr = None;
                    let rest = std::mem::take(&mut self.line);
                    keep_line(&mut self.tail, &rest);
                    return;
                }
                Ok(n) => {
                    self.line.extend_from_slice(&buf[..n]);
                    while let Some(end) = self.line.iter().position(|&b| b == b'\n') {
                        let line: Vec<u8> = self.line.drain(..=end).collect();
                        keep_line(&mut self.tail, &line);
                    }
                }
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(_) => return,
            }
        }
    }

    /// The child's exit status, if it has ended.
    pub(super) fn try_wait(&mut self) -> Option<ExitStatus> {
        self.child.try_wait().ok().flatten()
    }

    /// Makes `token` ready once the child has exited (once; later calls do nothing): a pipe
    /// whose sending end a thread blocked on the child's exit drops
    /// ([`crate::transport::tunnel::when_exited`]), so the loop sleeps until then, with no
    /// timer asking the child again and again.
    pub(super) fn watch_exit(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        if self.exited.is_some() {
            return Ok(());
        }
        let (sender, mut receiver) = mio::unix::pipe::new()?;
        registry.register(&mut receiver, token, Interest::READABLE)?;
        self.exited = Some(receiver);
        crate::transport::tunnel::when_exited(&self.child, move || drop(sender));
        Ok(())
    }

    /// The tunnel failed with `status`: the error, with the last thing the child said (as the
    /// blocking tunnel words it).
    pub(super) fn failure(&mut self, registry: &Registry, status: ExitStatus) -> Error {
        self.drain_stderr(registry);
        let how = describe_status(status);
        let last = self.tail.back().cloned();
        let said = match (self.tail.len().checked_sub(2).map(|i| &self.tail[i]), last) {
            (Some(before), Some(last)) if last.starts_with("stdio forwarding failed") => {
                Some(format!("{before}; {last}"))
            }
            (_, last) => last,
        };
        Error::Transport(match said {
            Some(line) => format!("{} failed ({how}): {line}", self.via),
            None => format!("{} failed ({how}) without a message", self.via),
        })
    }

    /// Ends the child (its stream is closed or closing too).
    pub(super) fn close(mut self, registry: &Registry) {
        if let Some(stderr) = self.stderr.as_mut() {
            let _ = registry.deregister(stderr);
        }
        if let Some(exited) = self.exited.as_mut() {
            let _ = registry.deregister(exited);
        }
        // Drop ends it.
    }
}

#[cfg(unix)]
impl Drop for TunnelChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// Keeps one stderr line (trimmed, shortened; blank ones skipped), the last few only.
#[cfg(unix)]
fn keep_line(tail: &mut VecDeque<String>, line: &[u8]) {
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

#[cfg(unix)]
fn describe_status(status: ExitStatus) -> String {
    use std::os::unix::process::ExitStatusExt;
    if let Some(code) = status.code() {
        return format!("exit status {code}");
    }
    if let Some(signal) = status.signal() {
        return format!("killed by signal {signal}");
    }
    "ended abnormally".into()
}

/// A byte stream: a TCP connection, a tunnel's pipes or (Unix) a Unix domain socket.
pub(super) enum Stream {
    Tcp(TcpStream),
    Pipe(Box<Pipe>),
    #[cfg(unix)]
    Unix(mio::net::UnixStream),
}

/// A connection to the Unix domain socket at `path`.
#[cfg(unix)]
pub(super) fn unix(path: &std::path::Path) -> Result<Stream, Error> {
    mio::net::UnixStream::connect(path)
        .map(Stream::Unix)
        .map_err(|source| Error::Connect {
            addr: format!("unix:{}", path.display()),
            source,
        })
}

/// No Unix domain sockets here (a `unix:` URL is refused before).
#[cfg(not(unix))]
pub(super) fn unix(path: &std::path::Path) -> Result<Stream, Error> {
    Err(Error::Connect {
        addr: format!("unix:{}", path.display()),
        source: io::ErrorKind::Unsupported.into(),
    })
}

impl Stream {
    fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        match self {
            Stream::Tcp(s) => registry.register(s, token, Interest::READABLE | Interest::WRITABLE),
            #[cfg(unix)]
            Stream::Unix(s) => registry.register(s, token, Interest::READABLE | Interest::WRITABLE),
            #[cfg(unix)]
            Stream::Pipe(p) => p.register(registry, token),
            #[cfg(not(unix))]
            Stream::Pipe(p) => match **p {},
        }
    }

    fn deregister(&mut self, registry: &Registry) {
        match self {
            Stream::Tcp(s) => {
                let _ = registry.deregister(s);
            }
            #[cfg(unix)]
            Stream::Unix(s) => {
                let _ = registry.deregister(s);
            }
            #[cfg(unix)]
            Stream::Pipe(p) => p.deregister(registry),
            #[cfg(not(unix))]
            Stream::Pipe(p) => match **p {},
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            #[cfg(unix)]
            Stream::Unix(s) => s.read(buf),
            #[cfg(unix)]
            Stream::Pipe(p) => p.stdout.read(buf),
            #[cfg(not(unix))]
            Stream::Pipe(p) => match **p {},
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            #[cfg(unix)]
            Stream::Unix(s) => s.write(buf),
            #[cfg(unix)]
            Stream::Pipe(p) => match p.stdin.as_mut() {
                Some(stdin) => stdin.write(buf),
                None => Err(io::ErrorKind::BrokenPipe.into()),
            },
            #[cfg(not(unix))]
            Stream::Pipe(p) => match **p {},
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

/// One target's connection.
pub(super) enum Link {
    /// RCON or telnet bytes.
    Stream(Stream),
    /// BattlEye datagrams on a connected socket.
    Udp(UdpSocket),
    /// A WebSocket upgrade under way (WebRCON).
    Handshake(Box<MidHandshake<ClientHandshake<Stream>>>),
    /// WebRCON's WebSocket.
    Ws(Box<WebSocket<Stream>>),
}

impl Link {
    pub(super) fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        match self {
            Link::Udp(s) => registry.register(s, token, Interest::READABLE),
            other => other.stream().expect("a stream").register(registry, token),
        }
    }

    pub(super) fn deregister(&mut self, registry: &Registry) {
        match self {
            Link::Udp(s) => {
                let _ = registry.deregister(s);
            }
            other => {
                if let Some(s) = other.stream() {
                    s.deregister(registry);
                }
            }
        }
    }

    /// The byte stream under the link (not for UDP).
    pub(super) fn stream(&mut self) -> Option<&mut Stream> {
        match self {
            Link::Stream(s) => Some(s),
            Link::Udp(_) => None,
            Link::Handshake(mid) => Some(mid.get_mut().get_mut()),
            Link::Ws(ws) => Some(ws.get_mut()),
        }
    }

    /// Closes politely where the protocol has a close (a WebSocket's close frame, sent if the
    /// socket takes it now), then drops.
    pub(super) fn close(mut self, registry: &Registry) {
        if let Link::Ws(ws) = &mut self {
            let _ = ws.close(None);
            let _ = ws.flush();
        }
        self.deregister(registry);
    }
}

/// Maps a WebSocket error to the I/O error it is.
pub(super) fn ws_io(e: tungstenite::Error) -> io::Error {
    match e {
        tungstenite::Error::Io(e) => e,
        tungstenite::Error::ConnectionClosed | tungstenite::Error::AlreadyClosed => {
            io::Error::new(io::ErrorKind::UnexpectedEof, "closed by the server")
        }
        other => io::Error::other(other),
    }
}
