//! What wakes the event loop besides its own links, so that it never polls a flag on a timer:
//! [`Alarm`]s raised by other threads or a signal handler (the run's cancel and waker), and on
//! Windows the threads that move a tunnel's bytes (a pipe there cannot be polled with sockets).
//! On Unix an alarm is a self-pipe the loop polls (a write is all a signal handler may do); on
//! Windows every wake-up goes through the loop's one `mio::Waker`.

use std::io;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use mio::{Poll, Token};

/// The token of every wake-up that is not a target's own link.
const WAKE: Token = Token(usize::MAX);

/// A flag that wakes the fleet's event loop when raised ([`crate::fleet::FleetOptions::cancel`],
/// [`crate::fleet::FleetOptions::wake`]), from any thread, and on Unix from a signal handler.
/// Clones are the same alarm.
#[derive(Clone, Default)]
pub struct Alarm(Arc<Inner>);

#[derive(Default)]
struct Inner {
    raised: Arc<AtomicBool>,
    /// The self-pipe, made when a loop first watches the alarm (a one-shot never pays for it).
    #[cfg(unix)]
    pipe: std::sync::OnceLock<(mio::unix::pipe::Sender, mio::unix::pipe::Receiver)>,
    /// The wakers of the loops that watch it.
    #[cfg(windows)]
    wakers: std::sync::Mutex<Vec<Arc<mio::Waker>>>,
    /// What a blocking [`Alarm::sleep_unless`] waits on: on Unix a second self-pipe (made by
    /// the first sleep), kept apart from the loops' so that a sleeper emptying it never takes
    /// a loop's wake-up; on Windows, where the console's handler runs on a thread of its own,
    /// a count of raises and a condition variable.
    #[cfg(unix)]
    bell: std::sync::OnceLock<Option<(mio::unix::pipe::Sender, mio::unix::pipe::Receiver)>>,
    #[cfg(windows)]
    bell: (std::sync::Mutex<u64>, std::sync::Condvar),
}

impl std::fmt::Debug for Alarm {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_tuple("Alarm").field(&self.is_raised()).finish()
    }
}

impl Alarm {
    /// A new alarm, not raised.
    pub fn new() -> Alarm {
        Alarm::default()
    }

    /// The flag itself, for a blocking session that looks at it while it waits
    /// ([`crate::engine::Options::cancel`]); setting it does not wake a loop, [`Alarm::raise`]
    /// does.
    pub fn flag(&self) -> Arc<AtomicBool> {
        Arc::clone(&self.0.raised)
    }

    /// Raises the flag and wakes every loop that watches it. On Unix it only stores to an
    /// atomic and writes a byte to a pipe, both async-signal-safe: a signal handler may call it.
    pub fn raise(&self) {
        self.0.raised.store(true, Ordering::SeqCst);
        #[cfg(unix)]
        if let Some((sender, _)) = self.0.pipe.get() {
            use std::os::fd::AsRawFd;
            // SAFETY: a one-byte write from a static buffer to a pipe the alarm owns; a full
            // pipe (EAGAIN) already wakes the loop.
            unsafe { libc::write(sender.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
        }
        #[cfg(unix)]
        if let Some(Some((sender, _))) = self.0.bell.get() {
            use std::os::fd::AsRawFd;
            // SAFETY: as above.
            unsafe { libc::write(sender.as_raw_fd(), [1u8].as_ptr().cast(), 1) };
        }
        #[cfg(windows)]
        if let Ok(wakers) = self.0.wakers.lock() {
            for waker in wakers.iter() {
                let _ = waker.wake();
            }
        }
        #[cfg(windows)]
        if let Ok(mut raises) = self.0.bell.0.lock() {
            *raises += 1;
            self.0.bell.1.notify_all();
        }
    }

    /// Sleeps for `timeout` on this thread, woken by every raise to ask `woken` again: returns
    /// true as soon as `woken` does (asked first, and after each raise), false when the time
    /// is up. No polling interval: a raise from a signal handler ends the sleep at once.
    pub fn sleep_unless(&self, timeout: Duration, mut woken: impl FnMut() -> bool) -> bool {
        let end = Instant::now() + timeout;
        // The bell is ready before `woken` is first asked, so a raise after that rings it.
        #[cfg(unix)]
        let bell = self.0.bell.get_or_init(|| mio::unix::pipe::new().ok());
        loop {
            #[cfg(windows)]
            let seen = *self.0.bell.0.lock().unwrap_or_else(|e| e.into_inner());
            if woken() {
                return true;
            }
            let now = Instant::now();
            if now >= end {
                return false;
            }
            #[cfg(unix)]
            match bell {
                Some((_, receiver)) => ring_or_time(receiver, end - now),
                // No pipe could be made (no descriptor left): the raise is seen by `woken`
                // when the sleep ends.
                None => std::thread::sleep(end - now),
            }
            #[cfg(windows)]
            {
                let raises = self.0.bell.0.lock().unwrap_or_else(|e| e.into_inner());
                let (_bell, condvar) = &self.0.bell;
                let waited = condvar.wait_timeout_while(raises, end - now, |r| *r == seen);
                drop(waited);
            }
        }
    }

    /// Whether it is raised.
    pub fn is_raised(&self) -> bool {
        self.0.raised.load(Ordering::SeqCst)
    }

    /// Lowers it, saying whether it was raised.
    pub fn take(&self) -> bool {
        self.0.raised.swap(false, Ordering::SeqCst)
    }
}

/// Waits until `receiver` is readable or `wait` has passed (a signal ends it too), then
/// empties it: what rang is asked again by the sleeper, which lowers nothing.
#[cfg(unix)]
fn ring_or_time(receiver: &mio::unix::pipe::Receiver, wait: Duration) {
    use std::io::Read;
    use std::os::fd::AsRawFd;
    let mut fd = libc::pollfd {
        fd: receiver.as_raw_fd(),
        events: libc::POLLIN,
        revents: 0,
    };
    // Rounded up, so the last part of a pause is not a busy loop.
    let ms = wait
        .as_micros()
        .div_ceil(1000)
        .min(libc::c_int::MAX as u128) as libc::c_int;
    // SAFETY: polls one descriptor the alarm owns, through a pollfd on this stack.
    if unsafe { libc::poll(&mut fd, 1, ms) } > 0 {
        let mut buf = [0u8; 64];
        while matches!((&*receiver).read(&mut buf), Ok(n) if n > 0) {}
    }
}

/// The loop's side: the alarms it watches, and on Windows the waker its tunnels' threads ring.
pub(super) struct Wakes {
    alarms: Vec<Alarm>,
    #[cfg(windows)]
    bell: Arc<Bell>,
}

/// On Windows, the targets whose tunnel has news, and the waker that says so.
#[cfg(windows)]
struct Bell {
    waker: Arc<mio::Waker>,
    ready: std::sync::Mutex<Vec<usize>>,
}

/// What a tunnel's threads call when they have news for the loop (bytes, an end, the child's
/// exit): the loop then looks at the target as if its link were ready. Nothing on Unix, where
/// the loop polls the pipes themselves.
#[derive(Clone)]
pub(super) struct Ring {
    #[cfg(windows)]
    bell: Arc<Bell>,
    #[cfg(windows)]
    target: usize,
}

impl Ring {
    /// Tells the loop.
    #[cfg(windows)]
    pub(super) fn ring(&self) {
        self.bell.ready.lock().expect("bell lock").push(self.target);
        let _ = self.bell.waker.wake();
    }
}

impl Wakes {
    /// Watches `alarms` from `poll`. The loop looks at the alarms after this and before each
    /// wait, so a raise that came before is not missed.
    pub(super) fn new(poll: &Poll, mut alarms: Vec<Alarm>) -> io::Result<Wakes> {
        // The same alarm twice (as the cancel and the waker) is watched once.
        alarms.dedup_by(|a, b| Arc::ptr_eq(&a.0, &b.0));
        #[cfg(unix)]
        for alarm in &alarms {
            use std::os::fd::AsRawFd;
            if alarm.0.pipe.get().is_none() {
                // Two loops making it at once: one pipe is kept, the other dropped.
                let _ = alarm.0.pipe.set(mio::unix::pipe::new()?);
            }
            let (_, receiver) = alarm.0.pipe.get().expect("made above");
            // Dropping the poll ends the watch; the pipe stays with the alarm.
            poll.registry().register(
                &mut mio::unix::SourceFd(&receiver.as_raw_fd()),
                WAKE,
                mio::Interest::READABLE,
            )?;
        }
        #[cfg(windows)]
        let bell = {
            let waker = Arc::new(mio::Waker::new(poll.registry(), WAKE)?);
            for alarm in &alarms {
                let mut wakers = alarm.0.wakers.lock().expect("alarm lock");
                wakers.push(Arc::clone(&waker));
            }
            Arc::new(Bell {
                waker,
                ready: std::sync::Mutex::new(Vec::new()),
            })
        };
        Ok(Wakes {
            alarms,
            #[cfg(windows)]
            bell,
        })
    }

    /// Whether `token` is a wake-up's rather than a target's.
    pub(super) fn is_wake(token: Token) -> bool {
        token == WAKE
    }

    /// A wake-up came: empties the alarms' pipes (Unix) and returns the targets whose tunnel
    /// rang (Windows), in order.
    pub(super) fn woken(&self) -> Vec<usize> {
        #[cfg(unix)]
        for alarm in &self.alarms {
            use std::io::Read;
            if let Some((_, receiver)) = alarm.0.pipe.get() {
                let mut buf = [0u8; 64];
                while matches!((&*receiver).read(&mut buf), Ok(n) if n > 0) {}
            }
        }
        #[cfg(unix)]
        return Vec::new();
        #[cfg(windows)]
        return std::mem::take(&mut *self.bell.ready.lock().expect("bell lock"));
    }

    /// What target `target`'s tunnel threads call.
    pub(super) fn ring(&self, target: usize) -> Ring {
        #[cfg(unix)]
        let _ = target;
        Ring {
            #[cfg(windows)]
            bell: Arc::clone(&self.bell),
            #[cfg(windows)]
            target,
        }
    }
}

#[cfg(windows)]
impl Drop for Wakes {
    /// The alarms stop waking this loop.
    fn drop(&mut self) {
        for alarm in &self.alarms {
            let mut wakers = alarm.0.wakers.lock().expect("alarm lock");
            wakers.retain(|w| !Arc::ptr_eq(w, &self.bell.waker));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A raise from another thread ends a sleep that would otherwise last a minute: the
    /// sleeper is asked again before its time is up (a sleep that missed the raise would be
    /// asked only at the end, and say no).
    #[test]
    fn a_raise_ends_a_sleep() {
        let alarm = Alarm::new();
        let other = alarm.clone();
        let raiser = std::thread::spawn(move || {
            std::thread::sleep(Duration::from_millis(50));
            other.raise();
        });
        let minute = Duration::from_secs(60);
        let end = Instant::now() + minute;
        assert!(alarm.sleep_unless(minute, || alarm.is_raised() && Instant::now() < end));
        raiser.join().unwrap();
    }

    /// A raise that was lowered again rings, but does not end the sleep: it lasts its time.
    #[test]
    fn a_lowered_raise_does_not_end_a_sleep() {
        let alarm = Alarm::new();
        let mut asked = 0;
        assert!(!alarm.sleep_unless(Duration::from_millis(20), || {
            asked += 1;
            // Rung while the sleeper waits, lowered before it asks.
            if asked == 1 {
                alarm.raise();
            }
            alarm.take();
            false
        }));
    }
}
