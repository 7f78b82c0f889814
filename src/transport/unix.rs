//! A Unix domain socket as a [`Transport`] (Unix only): what `rcon --mgmt unix:PATH` connects
//! through to a management server that listens on a socket file (MSMP Enhanced's option,
//! issue 42). The socket file's permissions decide who may connect.

use std::io::{self, Read, Write};
use std::os::unix::net::UnixStream;
use std::path::PathBuf;
use std::time::{Duration, Instant};

use super::{Connector, Transport, remaining};
use crate::error::{Error, Result};

/// Opens connections to the socket at a path.
#[derive(Debug, Clone)]
pub struct UnixConnector {
    path: PathBuf,
}

impl UnixConnector {
    /// A connector for the socket file at `path`.
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }
}

impl Connector for UnixConnector {
    fn connect(&self, _timeout: Duration) -> Result<Box<dyn Transport>> {
        // A local connect does not wait on a network: it succeeds or fails at once.
        let stream = UnixStream::connect(&self.path).map_err(|source| Error::Connect {
            addr: self.describe(),
            source,
        })?;
        Ok(Box::new(UnixTransport {
            stream,
            peer: self.describe(),
        }))
    }

    fn describe(&self) -> String {
        format!("unix:{}", self.path.display())
    }

    fn address(&self) -> String {
        // What a WebSocket names as its host over a local socket.
        "localhost".into()
    }
}

/// A connected Unix domain socket, waited on with the socket's own timeouts.
#[derive(Debug)]
pub struct UnixTransport {
    stream: UnixStream,
    peer: String,
}

impl Transport for UnixTransport {
    fn read_before(&mut self, buf: &mut [u8], deadline: Instant) -> io::Result<usize> {
        self.stream.set_read_timeout(Some(remaining(deadline)?))?;
        loop {
            match self.stream.read(buf) {
                Err(e) if e.kind() == io::ErrorKind::Interrupted => {}
                Err(e) if e.kind() == io::ErrorKind::WouldBlock => {
                    return Err(io::Error::new(io::ErrorKind::TimedOut, "read timed out"));
                }
                other => return other,
            }
        }
    }

    fn write_packet(&mut self, bytes: &[u8], deadline: Instant) -> io::Result<()> {
        self.stream.set_write_timeout(Some(remaining(deadline)?))?;
        self.stream.write_all(bytes)
    }

    fn peer(&self) -> String {
        self.peer.clone()
    }

    fn close(&mut self) {
        let _ = self.stream.shutdown(std::net::Shutdown::Both);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bytes_cross_and_a_missing_socket_is_a_connect_error() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("s.sock");
        let listener = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let echo = std::thread::spawn(move || {
            let (mut s, _) = listener.accept().unwrap();
            let mut b = [0u8; 5];
            s.read_exact(&mut b).unwrap();
            s.write_all(&b).unwrap();
        });
        let c = UnixConnector::new(&path);
        assert_eq!(c.describe(), format!("unix:{}", path.display()));
        let mut t = c.connect(Duration::from_secs(5)).unwrap();
        let soon = || Instant::now() + Duration::from_secs(5);
        t.write_packet(b"hello", soon()).unwrap();
        let mut got = Vec::new();
        while got.len() < 5 {
            let mut b = [0u8; 8];
            let n = t.read_before(&mut b, soon()).unwrap();
            got.extend_from_slice(&b[..n]);
        }
        assert_eq!(got, b"hello");
        echo.join().unwrap();
        let quiet = t.read_before(&mut [0u8; 1], Instant::now() + Duration::from_millis(20));
        assert!(matches!(quiet, Ok(0)) || quiet.is_err());
        let missing = UnixConnector::new(dir.path().join("none.sock"));
        assert!(matches!(
            missing.connect(Duration::from_secs(1)),
            Err(Error::Connect { .. })
        ));
    }
}
