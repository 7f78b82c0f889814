//! Ctrl-C and SIGTERM as a flag: the console abandons the running command (or its reconnect
//! back-off), a countdown stops announcing, the command line's commands and batch input stop
//! and say what ran and what was not sent. Where they still end the process (a fan-out), a
//! progress line on the terminal is erased first ([`progress_line`]).
//!
//! The handler only stores to atomics and raises the one [`Alarm`] (on Unix a byte written to
//! a pipe), which is all a signal handler may safely do: a blocking session looks at the flag
//! while it waits for an answer, the event loop and every pause ([`pause_until`]) are woken
//! by the alarm. On Unix it is a `sigaction` for `SIGINT` (and, while a batch runs,
//! `SIGTERM`); on Windows a console control handler for Ctrl-C and Ctrl-Break (which, returning
//! `TRUE`, keeps the process alive, as `SIGINT`'s handler does on Unix; closing the console
//! window still ends the process, as Windows allows no more). Hand-written rather than a crate:
//! `ctrlc` links Apple's Objective-C runtime and frameworks on macOS (so `rcon` did not link
//! without the macOS SDK), and `signal-hook` goes through the C runtime's one-shot `signal()` on
//! Windows.

use std::sync::atomic::{AtomicBool, AtomicU8, Ordering};
use std::sync::{Arc, OnceLock};

use rconsole::fleet::Alarm;

/// The one alarm every handler raises; created, and the handler installed, on first use. A
/// client waiting for an answer clears its flag when it abandons the command (see
/// `ClientOptions::cancel`).
static ALARM: OnceLock<Alarm> = OnceLock::new();

/// The signal a [`Stop`] guard caught (a [`Signal`] as a number, 0 for none). Unlike [`ALARM`]
/// nobody clears it, so the batch still knows after the client took the flag.
static RECEIVED: AtomicU8 = AtomicU8::new(0);

fn alarm() -> &'static Alarm {
    ALARM.get_or_init(Alarm::new)
}

fn flag() -> Arc<AtomicBool> {
    alarm().flag()
}

/// Async-signal-safe: see [`Alarm::raise`].
fn raise() {
    if let Some(alarm) = ALARM.get() {
        alarm.raise();
    }
}

/// Catches Ctrl-C from now on and returns the flag it sets (the same flag on every call); `None`
/// when the handler could not be installed, in which case Ctrl-C keeps its default effect.
pub fn catch() -> Option<Arc<AtomicBool>> {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    INSTALLED.get_or_init(install).then(flag)
}

/// The one alarm every handler raises, without installing any: for a loop that is woken by it
/// (the fleet's waker) before the [`Stop`] guard that raises it is installed.
pub fn shared_alarm() -> Alarm {
    alarm().clone()
}

/// Whether Ctrl-C was pressed since [`catch`] (or since whoever holds the flag cleared it).
pub fn raised() -> bool {
    ALARM.get().is_some_and(Alarm::is_raised)
}

pub use crate::app::exit::Signal;

/// While alive, Ctrl-C and `SIGTERM` set the flag [`Stop::flag`] returns instead of ending the
/// process, so a batch can finish printing what was answered and say what was not sent. Dropping
/// it puts back whatever handled them before (the default, or the console's handler).
pub struct Stop {
    #[cfg(unix)]
    previous: Vec<(libc::c_int, libc::sigaction)>,
}

impl Stop {
    /// Installs the handlers; `None` (signals keep their effect) when that fails.
    pub fn catch() -> Option<Stop> {
        alarm().take();
        RECEIVED.store(0, Ordering::SeqCst);
        install_stop()
    }

    /// The flag the handlers set, for [`crate::app::runner::session::Session::set_cancel`]: a
    /// wait for an answer looks at it and abandons the command.
    pub fn flag(&self) -> Arc<AtomicBool> {
        flag()
    }

    /// The same flag as an alarm, for the event loop ([`rconsole::fleet::FleetOptions::cancel`]):
    /// a signal wakes it.
    pub fn alarm(&self) -> Alarm {
        alarm().clone()
    }

    /// The signal caught since [`Stop::catch`], if any.
    pub fn received(&self) -> Option<Signal> {
        match RECEIVED.load(Ordering::SeqCst) {
            1 => Some(Signal::Interrupt),
            2 => Some(Signal::Terminate),
            _ => None,
        }
    }
}

/// Sleeps for `delay`; cut short when `stop` says a signal came. Returns whether one did.
pub fn pause(delay: std::time::Duration, stop: Option<&Stop>) -> bool {
    pause_until(delay, || stop.and_then(Stop::received).is_some())
}

/// The one cancellable pause of every runner (`--delay`, a retry's back-off, the console's
/// reconnect): sleeps for `delay`, woken by the one [`ALARM`] that Ctrl-C and `SIGTERM` raise
/// to ask `stopped` again ([`Alarm::sleep_unless`]: no polling interval). Returns true when
/// `stopped` cut it short.
pub fn pause_until(delay: std::time::Duration, stopped: impl FnMut() -> bool) -> bool {
    alarm().sleep_unless(delay, stopped)
}

/// Whether a progress line is on the terminal (stderr) now, for the handler that erases it.
static PROGRESS_SHOWN: AtomicBool = AtomicBool::new(false);

/// Says whether a progress line is on the terminal now (true after drawing one, false after
/// erasing it). The first call makes Ctrl-C and `SIGTERM`, where they still end the process
/// (no [`Stop`] guard, no console), erase the line first, so the shell's prompt does not
/// follow `... 1 in flight^C`; the process still ends by the signal, as before. (Unix; on
/// Windows the line stays.)
pub fn progress_line(shown: bool) {
    PROGRESS_SHOWN.store(shown, Ordering::SeqCst);
    if shown {
        static INSTALLED: OnceLock<()> = OnceLock::new();
        INSTALLED.get_or_init(install_erase);
    }
}

/// For each of SIGINT and SIGTERM that still has its default action: a handler that erases the
/// progress line, puts the default back and raises the signal again.
#[cfg(unix)]
fn install_erase() {
    extern "C" fn on_signal(signal: libc::c_int) {
        const ERASE: &[u8] = b"\r\x1b[K";
        // SAFETY: write, sigaction and raise are async-signal-safe; the buffer is static and
        // the action is a zeroed (default) one.
        unsafe {
            if PROGRESS_SHOWN.load(Ordering::SeqCst) {
                libc::write(libc::STDERR_FILENO, ERASE.as_ptr().cast(), ERASE.len());
            }
            let mut default: libc::sigaction = std::mem::zeroed();
            default.sa_sigaction = libc::SIG_DFL;
            libc::sigemptyset(&mut default.sa_mask);
            libc::sigaction(signal, &default, std::ptr::null_mut());
            libc::raise(signal);
        }
    }
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: reads the installed action, and replaces it only when it is the default, with
        // a handler that does only async-signal-safe calls.
        unsafe {
            let mut current: libc::sigaction = std::mem::zeroed();
            if libc::sigaction(signal, std::ptr::null(), &mut current) != 0
                || current.sa_sigaction != libc::SIG_DFL
            {
                continue;
            }
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = libc::SA_RESTART;
            libc::sigemptyset(&mut action.sa_mask);
            libc::sigaction(signal, &action, std::ptr::null_mut());
        }
    }
}

#[cfg(windows)]
fn install_erase() {}

/// Whether a [`Stop`] guard caught a signal (for reads that cannot hold the guard).
pub fn stopping() -> bool {
    RECEIVED.load(Ordering::SeqCst) != 0
}

/// Whether Ctrl-C or `SIGTERM` came while a handler catches them (a batch's or the command
/// line's [`Stop`], or the console's flag): a first connection that waits (`--wait`,
/// `--retry`) gives up with [`rconsole::Error::Cancelled`] instead of going on.
pub fn interrupted() -> bool {
    stopping() || raised()
}

#[cfg(unix)]
fn install() -> bool {
    extern "C" fn on_signal(_: libc::c_int) {
        raise();
    }
    // SAFETY: a zeroed sigaction is valid; the handler only stores to an atomic, which is
    // async-signal-safe. SA_RESTART keeps blocking reads going, as with `ctrlc` before.
    unsafe {
        let mut action: libc::sigaction = std::mem::zeroed();
        action.sa_sigaction = on_signal as extern "C" fn(libc::c_int) as libc::sighandler_t;
        action.sa_flags = libc::SA_RESTART;
        libc::sigemptyset(&mut action.sa_mask);
        libc::sigaction(libc::SIGINT, &action, std::ptr::null_mut()) == 0
    }
}

#[cfg(unix)]
fn install_stop() -> Option<Stop> {
    extern "C" fn on_stop(signal: libc::c_int) {
        let which = if signal == libc::SIGTERM {
            Signal::Terminate
        } else {
            Signal::Interrupt
        };
        RECEIVED.store(which as u8, Ordering::SeqCst);
        raise();
    }
    let mut stop = Stop {
        previous: Vec::new(),
    };
    for signal in [libc::SIGINT, libc::SIGTERM] {
        // SAFETY: as in `install`. No SA_RESTART: a read of stdin that waits for the next line
        // returns EINTR, so the batch stops at once instead of when a line comes; every other
        // read and write in a batch run retries on EINTR (std's write_all and sleep, the
        // transports) or is a wait the client bounds by its cancel poll.
        let installed = unsafe {
            let mut action: libc::sigaction = std::mem::zeroed();
            action.sa_sigaction = on_stop as extern "C" fn(libc::c_int) as libc::sighandler_t;
            action.sa_flags = 0;
            libc::sigemptyset(&mut action.sa_mask);
            let mut previous: libc::sigaction = std::mem::zeroed();
            (libc::sigaction(signal, &action, &mut previous) == 0).then_some(previous)
        };
        // Dropping `stop` on failure puts back the one already replaced.
        stop.previous.push((signal, installed?));
    }
    Some(stop)
}

#[cfg(unix)]
impl Drop for Stop {
    fn drop(&mut self) {
        for (signal, previous) in self.previous.drain(..).rev() {
            // SAFETY: restores an action sigaction itself returned.
            unsafe {
                libc::sigaction(signal, &previous, std::ptr::null_mut());
            }
        }
    }
}

#[cfg(windows)]
fn install() -> bool {
    use windows_sys::Win32::Foundation::TRUE;
    use windows_sys::Win32::System::Console::SetConsoleCtrlHandler;
    // SAFETY: registers a handler with the signature Windows expects; it only stores to an
    // atomic and is never unregistered.
    unsafe { SetConsoleCtrlHandler(Some(on_event), TRUE) != 0 }
}

/// Ctrl-C and Ctrl-Break raise the flag (and, while a [`Stop`] lives, count as its
/// [`Signal::Interrupt`]); closing the window, logoff and shutdown get the default handler,
/// which ends the process (Windows ends it soon after any handler returns anyway).
#[cfg(windows)]
unsafe extern "system" fn on_event(event: u32) -> windows_sys::core::BOOL {
    use windows_sys::Win32::Foundation::{FALSE, TRUE};
    use windows_sys::Win32::System::Console::{CTRL_BREAK_EVENT, CTRL_C_EVENT};
    if event == CTRL_C_EVENT || event == CTRL_BREAK_EVENT {
        if STOP_ACTIVE.load(Ordering::SeqCst) {
            RECEIVED.store(Signal::Interrupt as u8, Ordering::SeqCst);
        }
        raise();
        TRUE
    } else {
        FALSE
    }
}

/// Whether a [`Stop`] lives (Windows has one handler for both uses).
#[cfg(windows)]
static STOP_ACTIVE: AtomicBool = AtomicBool::new(false);

#[cfg(windows)]
fn install_stop() -> Option<Stop> {
    STOP_ACTIVE.store(true, Ordering::SeqCst);
    // The console's handler stays registered once added; the guard only says what a Ctrl-C
    // means while it lives.
    if catch().is_none() {
        STOP_ACTIVE.store(false, Ordering::SeqCst);
        return None;
    }
    Some(Stop {})
}

#[cfg(windows)]
impl Drop for Stop {
    fn drop(&mut self) {
        STOP_ACTIVE.store(false, Ordering::SeqCst);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The handlers are process-wide: tests that raise signals take turns (Unix only: on
    /// Windows no test raises one).
    #[cfg(unix)]
    static SIGNALS: std::sync::Mutex<()> = std::sync::Mutex::new(());

    #[test]
    fn every_call_returns_the_same_flag() {
        // The first call installs the SIGINT handler: not while the guard test below compares
        // the installed handlers with what it saw before.
        #[cfg(unix)]
        let _turn = SIGNALS.lock().unwrap_or_else(|e| e.into_inner());
        let a = catch().expect("handler installed");
        let b = catch().expect("handler installed");
        assert!(Arc::ptr_eq(&a, &b));
    }

    #[cfg(unix)]
    #[test]
    fn sigint_sets_the_flag_and_the_process_lives_on() {
        let _turn = SIGNALS.lock().unwrap_or_else(|e| e.into_inner());
        let flag = catch().expect("handler installed");
        flag.store(false, Ordering::SeqCst);
        // SAFETY: raising a signal this process handles.
        assert_eq!(unsafe { libc::raise(libc::SIGINT) }, 0);
        assert!(flag.load(Ordering::SeqCst));
        assert!(raised());
        flag.store(false, Ordering::SeqCst);
    }

    #[cfg(unix)]
    #[test]
    fn a_stop_guard_tells_sigterm_from_sigint_and_puts_the_old_handlers_back() {
        let _turn = SIGNALS.lock().unwrap_or_else(|e| e.into_inner());
        let current = |signal| {
            // SAFETY: only reads the installed action.
            unsafe {
                let mut action: libc::sigaction = std::mem::zeroed();
                libc::sigaction(signal, std::ptr::null(), &mut action);
                action.sa_sigaction
            }
        };
        // The process-wide Ctrl-C handler stays for good once installed: install it first, so
        // `before` does not depend on whether another test ran first.
        catch().expect("handler installed");
        let before = (current(libc::SIGINT), current(libc::SIGTERM));
        for (signal, want) in [
            (libc::SIGTERM, Signal::Terminate),
            (libc::SIGINT, Signal::Interrupt),
        ] {
            let stop = Stop::catch().expect("handlers installed");
            assert_eq!(stop.received(), None);
            // SAFETY: raising a signal the guard handles.
            assert_eq!(unsafe { libc::raise(signal) }, 0);
            assert_eq!(stop.received(), Some(want));
            assert!(stop.flag().load(Ordering::SeqCst));
            drop(stop);
            assert_eq!((current(libc::SIGINT), current(libc::SIGTERM)), before);
        }
        flag().store(false, Ordering::SeqCst);
    }

    /// SIGTERM from another thread ends a minute's `--delay` at once: the pause asks again
    /// before its time is up (one that missed the signal would ask only at the end).
    #[cfg(unix)]
    #[test]
    fn a_signal_ends_a_pause() {
        let _turn = SIGNALS.lock().unwrap_or_else(|e| e.into_inner());
        let stop = Stop::catch().expect("handlers installed");
        let raiser = std::thread::spawn(|| {
            std::thread::sleep(std::time::Duration::from_millis(50));
            // SAFETY: sends a signal this process handles to itself.
            unsafe { libc::kill(libc::getpid(), libc::SIGTERM) };
        });
        let minute = std::time::Duration::from_secs(60);
        let end = std::time::Instant::now() + minute;
        assert!(pause_until(minute, || stop.received().is_some()
            && std::time::Instant::now() < end));
        assert_eq!(stop.received(), Some(Signal::Terminate));
        raiser.join().unwrap();
        drop(stop);
        flag().store(false, Ordering::SeqCst);
    }
}
