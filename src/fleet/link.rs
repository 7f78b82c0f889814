//! The event loop's non-blocking links: a TCP stream, a UDP socket (BattlEye), on Unix a Unix
//! domain socket (`unix:` URLs), and a tunnel's pipes (`ssh -W`, a proxy command). On
//! Unix the child's stdin and stdout are registered with the poll and its stderr read as it
//! comes, kept for the message when it fails; on Windows, where a pipe cannot be polled with
//! sockets, threads move the bytes ([`crate::transport::tunnel::Readers`], a writer on stdin) and
//! ring the loop ([`Ring`]), which reads them from a channel as if from a socket.

use std::ffi::OsString;
use std::io::{self, Read, Write};
use std::process::{Child, ExitStatus};
use std::sync::Arc;
use std::time::Duration;

use mio::net::{TcpStream, UdpSocket};
use mio::{Interest, Registry, Token};

use super::wake::Ring;
use crate::error::Error;
use crate::transport::Connector;
use crate::transport::tunnel::{self, ProcessConnector};

/// The program at a command tunnel's far end ([`Tunnel::command`]), as its caller reads it.
pub trait FarEnd: Send + Sync {
    /// The child failed: its exit code (when it exited with one) and the last line it printed
    /// on stderr, as the error they stand for, or `None` for a tunnel's usual wording ("ssh
    /// host failed (exit status 255): ...").
    fn failure(&self, code: Option<i32>, last: Option<&str>) -> Option<Error>;
    /// A line the child printed on stderr (kept for [`FarEnd::failure`] as well).
    fn said(&self, line: &str);
}

/// What a tunnel starts.
#[derive(Debug, Clone)]
enum Launch {
    /// `ssh -W` or a proxy command, with ssh's own connect timeout.
    Connector(Box<ProcessConnector>, Duration),
    /// A program that speaks the target's protocol itself ([`Tunnel::command`]).
    Command(Vec<OsString>),
}

/// A tunnel to a target: the child process to start (`ssh -W`, a proxy command, or a program
/// that speaks the target's protocol itself: `rcon --remote`'s `ssh host rcon --remote-serve`)
/// and what it reaches.
#[derive(Clone)]
pub struct Tunnel {
    launch: Launch,
    address: String,
    describe: String,
    via: String,
    /// A command tunnel's far end ([`Tunnel::command`]).
    far_end: Option<Arc<dyn FarEnd>>,
}

impl std::fmt::Debug for Tunnel {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Tunnel")
            .field("launch", &self.launch)
            .field("describe", &self.describe)
            .finish_non_exhaustive()
    }
}

impl Tunnel {
    /// The tunnel `connector` opens, with `timeout` for ssh's own connect timeout.
    pub fn new(connector: &ProcessConnector, timeout: Duration) -> Tunnel {
        Tunnel {
            address: connector.address(),
            describe: connector.describe(),
            via: connector.via(),
            launch: Launch::Connector(Box::new(connector.clone()), timeout),
            far_end: None,
        }
    }

    /// A child that is the target's far end itself (`argv`, run through `via`), for `address`:
    /// its machine speaks to the program over the pipes, and `far_end` reads its stderr and
    /// words its failures. The password travels in the stream only: the child's environment
    /// has none.
    pub fn command(
        argv: Vec<OsString>,
        address: &str,
        via: &str,
        far_end: Arc<dyn FarEnd>,
    ) -> Tunnel {
        Tunnel {
            launch: Launch::Command(argv),
            address: address.to_string(),
            describe: format!("{address} via {via}"),
            via: via.to_string(),
            far_end: Some(far_end),
        }
    }

    /// Starts the child, its stdio piped.
    fn start(&self) -> Result<Child, Error> {
        let argv = match &self.launch {
            Launch::Connector(connector, timeout) => return connector.spawn(*timeout),
            Launch::Command(argv) => argv,
        };
        use std::process::{Command, Stdio};
        Command::new(&argv[0])
            .args(&argv[1..])
            .stdin(Stdio::piped())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .env_remove("RCON_PASSWORD")
            .env_remove("MCRCON_PASS")
            .spawn()
            .map_err(|e| {
                let program = argv[0].to_string_lossy();
                let hint = if e.kind() == io::ErrorKind::NotFound {
                    " (is the OpenSSH client installed and on PATH?)"
                } else {
                    ""
                };
                Error::Transport(format!("cannot start {}: {program}: {e}{hint}", self.via))
            })
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
    pub(super) fn spawn(&self, _ring: Ring) -> Result<(Pipe, TunnelChild), Error> {
        use mio::unix::pipe::{Receiver, Sender};
        let mut child = self.start()?;
        let stdin = Sender::from(child.stdin.take().expect("stdin is piped"));
        let stdout = Receiver::from(child.stdout.take().expect("stdout is piped"));
        let stderr = Receiver::from(child.stderr.take().expect("stderr is piped"));
        let child = TunnelChild {
            child,
            stderr: Some(stderr),
            exited: None,
            tail: Default::default(),
            line: Vec::new(),
            via: self.via.clone(),
            far_end: self.far_end.clone(),
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

    /// Starts the child with its stdio piped, and the threads that move its bytes and ring
    /// the loop (`ring`): the pipes to speak over, and the child to end and to ask why it
    /// failed.
    #[cfg(windows)]
    pub(super) fn spawn(&self, ring: Ring) -> Result<(Pipe, TunnelChild), Error> {
        let child = self.start()?;
        // From here on the child is ended as it drops, should a thread not start.
        let mut child = TunnelChild {
            child,
            tail: Default::default(),
            stderr_done: None,
            ring: ring.clone(),
            watching: false,
            via: self.via.clone(),
            far_end: self.far_end.clone(),
        };
        let mut stdin = child.child.stdin.take().expect("stdin is piped");
        let readers = tunnel::Readers::start(&mut child.child, move || ring.ring())?;
        child.tail = readers.tail;
        child.stderr_done = Some(readers.stderr_done);
        let (tx, rx) = std::sync::mpsc::channel::<Vec<u8>>();
        std::thread::Builder::new()
            .name("rcon-tunnel-in".into())
            .spawn(move || {
                // Until the loop drops the pipe (closing stdin) or the child stops reading.
                for bytes in rx {
                    if stdin.write_all(&bytes).is_err() {
                        return;
                    }
                }
            })
            .map_err(|e| Error::Transport(format!("cannot start a writer thread: {e}")))?;
        let pipe = Pipe {
            stdout: readers.rx,
            pending: Vec::new(),
            pos: 0,
            stdin: tx,
        };
        Ok((pipe, child))
    }
}

/// A running tunnel's stdin and stdout, non-blocking: the byte stream.
#[cfg(unix)]
pub(super) struct Pipe {
    stdin: Option<mio::unix::pipe::Sender>,
    stdout: mio::unix::pipe::Receiver,
}

/// A running tunnel's byte stream: stdout's chunks from its reader thread, read without
/// waiting, and stdin's writes handed to its writer thread (each taken whole at once).
#[cfg(windows)]
pub(super) struct Pipe {
    stdout: std::sync::mpsc::Receiver<tunnel::Chunk>,
    /// The chunk being read, and how far.
    pending: Vec<u8>,
    pos: usize,
    stdin: std::sync::mpsc::Sender<Vec<u8>>,
}

/// A running tunnel's process and its stderr. It outlives the stream over it, so that its exit
/// can still say why.
#[cfg(unix)]
pub(super) struct TunnelChild {
    child: Child,
    stderr: Option<mio::unix::pipe::Receiver>,
    /// Readable (at its end) once the child has exited: see [`TunnelChild::watch_exit`].
    exited: Option<mio::unix::pipe::Receiver>,
    tail: std::collections::VecDeque<String>,
    /// A stderr line not ended yet.
    line: Vec<u8>,
    via: String,
    far_end: Option<Arc<dyn FarEnd>>,
}

/// A running tunnel's process, and the last lines of its stderr, kept by a thread. It
/// outlives the stream over it, so that its exit can still say why.
#[cfg(windows)]
pub(super) struct TunnelChild {
    child: Child,
    tail: std::sync::Arc<std::sync::Mutex<std::collections::VecDeque<String>>>,
    /// Says (or closes) once stderr ended; `None` once it did.
    stderr_done: Option<std::sync::mpsc::Receiver<()>>,
    ring: Ring,
    /// A thread waits for the exit ([`TunnelChild::watch_exit`]).
    watching: bool,
    via: String,
    far_end: Option<Arc<dyn FarEnd>>,
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
impl Read for Pipe {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        self.stdout.read(buf)
    }
}

#[cfg(unix)]
impl Write for Pipe {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.stdin.as_mut() {
            Some(stdin) => stdin.write(buf),
            None => Err(io::ErrorKind::BrokenPipe.into()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
    }
}

#[cfg(windows)]
impl Pipe {
    /// Nothing to register: the threads ring the loop.
    fn register(&mut self, _: &Registry, _: Token) -> io::Result<()> {
        Ok(())
    }

    fn deregister(&mut self, _: &Registry) {}
}

#[cfg(windows)]
impl Read for Pipe {
    /// What the reader thread moved so far; `WouldBlock` when nothing yet (it rings when more
    /// comes).
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        use std::sync::mpsc::TryRecvError;
        if self.pos == self.pending.len() {
            match self.stdout.try_recv() {
                Ok(tunnel::Chunk::Data(data)) => {
                    self.pending = data;
                    self.pos = 0;
                }
                Ok(tunnel::Chunk::Eof) | Err(TryRecvError::Disconnected) => return Ok(0),
                Ok(tunnel::Chunk::Failed(e)) => return Err(e),
                Ok(tunnel::Chunk::Wake) | Err(TryRecvError::Empty) => {
                    return Err(io::ErrorKind::WouldBlock.into());
                }
            }
        }
        let n = buf.len().min(self.pending.len() - self.pos);
        buf[..n].copy_from_slice(&self.pending[self.pos..self.pos + n]);
        self.pos += n;
        Ok(n)
    }
}

#[cfg(windows)]
impl Write for Pipe {
    /// Hands the bytes to the writer thread, whole (it writes them in order).
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self.stdin.send(buf.to_vec()) {
            Ok(()) => Ok(buf.len()),
            Err(_) => Err(io::ErrorKind::BrokenPipe.into()),
        }
    }

    fn flush(&mut self) -> io::Result<()> {
        Ok(())
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
                    keep(&mut self.tail, self.far_end.as_deref(), &rest);
                    return;
                }
                Ok(n) => {
                    self.line.extend_from_slice(&buf[..n]);
                    while let Some(end) = self.line.iter().position(|&b| b == b'\n') {
                        let line: Vec<u8> = self.line.drain(..=end).collect();
                        keep(&mut self.tail, self.far_end.as_deref(), &line);
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
        tunnel::when_exited(&self.child, move || drop(sender));
        Ok(())
    }

    /// The tunnel failed with `status`: the error, with the last thing the child said (as the
    /// blocking tunnel words it).
    pub(super) fn failure(&mut self, registry: &Registry, status: ExitStatus) -> Error {
        self.drain_stderr(registry);
        far_end_failure(self.far_end.as_deref(), status, &self.tail)
            .unwrap_or_else(|| Error::Transport(tunnel::failure(&self.via, status, &self.tail)))
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

#[cfg(windows)]
impl TunnelChild {
    /// Nothing to register: a thread reads stderr.
    pub(super) fn register(&mut self, _: &Registry, _: Token) -> io::Result<()> {
        Ok(())
    }

    /// Nothing to read here: a thread reads stderr.
    pub(super) fn drain_stderr(&mut self, _: &Registry) {}

    /// The child's exit status once it has ended and its stderr too, so that everything it
    /// said is kept (the stderr thread rings when it ends). A grandchild holding stderr open
    /// keeps it from telling until the loop's grace ends.
    pub(super) fn try_wait(&mut self) -> Option<ExitStatus> {
        if let Some(done) = &self.stderr_done {
            if matches!(done.try_recv(), Err(std::sync::mpsc::TryRecvError::Empty)) {
                return None;
            }
            self.stderr_done = None;
        }
        self.child.try_wait().ok().flatten()
    }

    /// Rings the loop once the child has exited (once; later calls do nothing): a thread
    /// blocked on its exit ([`crate::transport::tunnel::when_exited`]).
    pub(super) fn watch_exit(&mut self, _: &Registry, _: Token) -> io::Result<()> {
        if std::mem::replace(&mut self.watching, true) {
            return Ok(());
        }
        let ring = self.ring.clone();
        tunnel::when_exited(&self.child, move || ring.ring());
        Ok(())
    }

    /// The tunnel failed with `status`: the error, with the last thing the child said (as the
    /// blocking tunnel words it).
    pub(super) fn failure(&mut self, _: &Registry, status: ExitStatus) -> Error {
        let tail = self.tail.lock().expect("stderr tail lock");
        far_end_failure(self.far_end.as_deref(), status, &tail)
            .unwrap_or_else(|| Error::Transport(tunnel::failure(&self.via, status, &tail)))
    }

    /// Ends the child (its stream is closed or closing too).
    pub(super) fn close(self, _: &Registry) {
        // Drop ends it.
    }
}

/// Keeps one stderr line, and hands it to a command tunnel's far end.
#[cfg(unix)]
fn keep(tail: &mut std::collections::VecDeque<String>, far_end: Option<&dyn FarEnd>, line: &[u8]) {
    tunnel::keep_line(tail, line);
    if let Some(far_end) = far_end {
        let text = String::from_utf8_lossy(line);
        if !text.trim().is_empty() {
            far_end.said(text.trim());
        }
    }
}

/// A command tunnel's failure as its far end words it (`None`: the tunnel's usual wording).
fn far_end_failure(
    far_end: Option<&dyn FarEnd>,
    status: ExitStatus,
    tail: &std::collections::VecDeque<String>,
) -> Option<Error> {
    far_end?.failure(status.code(), tail.back().map(String::as_str))
}

impl Drop for TunnelChild {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
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
            Stream::Pipe(p) => p.register(registry, token),
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
            Stream::Pipe(p) => p.deregister(registry),
        }
    }
}

impl Read for Stream {
    fn read(&mut self, buf: &mut [u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.read(buf),
            #[cfg(unix)]
            Stream::Unix(s) => s.read(buf),
            Stream::Pipe(p) => p.read(buf),
        }
    }
}

impl Write for Stream {
    fn write(&mut self, buf: &[u8]) -> io::Result<usize> {
        match self {
            Stream::Tcp(s) => s.write(buf),
            #[cfg(unix)]
            Stream::Unix(s) => s.write(buf),
            Stream::Pipe(p) => p.write(buf),
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
}

impl Link {
    pub(super) fn register(&mut self, registry: &Registry, token: Token) -> io::Result<()> {
        match self {
            Link::Udp(s) => registry.register(s, token, Interest::READABLE),
            Link::Stream(s) => s.register(registry, token),
        }
    }

    pub(super) fn deregister(&mut self, registry: &Registry) {
        match self {
            Link::Udp(s) => {
                let _ = registry.deregister(s);
            }
            Link::Stream(s) => s.deregister(registry),
        }
    }

    /// Deregisters and drops the link (which closes it).
    pub(super) fn close(mut self, registry: &Registry) {
        self.deregister(registry);
    }
}
