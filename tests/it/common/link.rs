//! A slow network link on loopback: a TCP proxy that holds every chunk a fixed time each way
//! (a round trip of twice that, not a rate limit), as bench/remote.py's delay proxy does, and
//! that can go silent: [`DelayLink::stop`] stops carrying bytes both ways on every connection
//! open then, ends included, and keeps their sockets open (a NAT that forgot them, not a
//! reset); later connections go through.

use std::io::{Read, Write};
use std::net::{Shutdown, TcpListener, TcpStream};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::mpsc;
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// A connection through the link: whether it went silent, and its two sockets.
type Carried = (Arc<AtomicBool>, [TcpStream; 2]);

/// The proxy: connect to 127.0.0.1:`port` to reach the target.
pub struct DelayLink {
    pub port: u16,
    connections: Arc<Mutex<Vec<Carried>>>,
}

impl DelayLink {
    /// Forwards to 127.0.0.1:`target`, each chunk `one_way` after it arrived.
    pub fn start(target: u16, one_way: Duration) -> DelayLink {
        let listener = TcpListener::bind("127.0.0.1:0").expect("bind the link");
        let port = listener.local_addr().expect("addr").port();
        let connections = Arc::new(Mutex::new(Vec::new()));
        let held = Arc::clone(&connections);
        std::thread::spawn(move || {
            for client in listener.incoming() {
                let Ok(client) = client else { return };
                let Ok(server) = TcpStream::connect(("127.0.0.1", target)) else {
                    continue;
                };
                let silent = Arc::new(AtomicBool::new(false));
                for (from, to) in [(&client, &server), (&server, &client)] {
                    let _ = from.set_nodelay(true);
                    let (from, to) = (from.try_clone(), to.try_clone());
                    if let (Ok(from), Ok(to)) = (from, to) {
                        pump(from, to, one_way, Arc::clone(&silent));
                    }
                }
                held.lock()
                    .expect("connections")
                    .push((silent, [client, server]));
            }
        });
        DelayLink { port, connections }
    }

    /// From now on nothing crosses the connections open now, not even their end; their
    /// sockets stay open.
    pub fn stop(&self) {
        for (silent, _) in self.connections.lock().expect("connections").iter() {
            silent.store(true, Ordering::SeqCst);
        }
    }
}

impl Drop for DelayLink {
    fn drop(&mut self) {
        for (_, sockets) in self.connections.lock().expect("connections").iter() {
            for s in sockets {
                let _ = s.shutdown(Shutdown::Both);
            }
        }
    }
}

/// Copies `from` to `to`, each chunk `delay` after it was read; once `silent`, drops it all.
fn pump(mut from: TcpStream, mut to: TcpStream, delay: Duration, silent: Arc<AtomicBool>) {
    let (tx, rx) = mpsc::channel::<(Instant, Vec<u8>)>();
    std::thread::spawn(move || {
        let mut buf = vec![0u8; 64 * 1024];
        loop {
            let n = from.read(&mut buf).unwrap_or(0);
            if tx
                .send((Instant::now() + delay, buf[..n].to_vec()))
                .is_err()
                || n == 0
            {
                return;
            }
        }
    });
    std::thread::spawn(move || {
        while let Ok((due, data)) = rx.recv() {
            // The link's latency, not a wait for an event.
            std::thread::sleep(due.saturating_duration_since(Instant::now()));
            if silent.load(Ordering::SeqCst) {
                continue;
            }
            if data.is_empty() {
                let _ = to.shutdown(Shutdown::Write);
                return;
            }
            if to.write_all(&data).is_err() {
                return;
            }
        }
    });
}
