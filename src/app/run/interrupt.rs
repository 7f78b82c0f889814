//! Ctrl-C as a flag: the console abandons the running command, a countdown stops announcing.
//!
//! The handler only sets an atomic flag, which is all a signal handler may safely do; whoever
//! installed it polls the flag. On Unix it is a `sigaction` for `SIGINT`; on Windows a console
//! control handler for Ctrl-C and Ctrl-Break (which, returning `TRUE`, keeps the process alive,
//! as `SIGINT`'s handler does on Unix). Hand-written rather than a crate: `ctrlc` links Apple's
//! Objective-C runtime and frameworks on macOS (so `rcon` did not link without the macOS SDK),
//! and `signal-hook` goes through the C runtime's one-shot `signal()` on Windows.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

/// The one flag every handler sets; created, and the handler installed, on first use.
static FLAG: OnceLock<Arc<AtomicBool>> = OnceLock::new();

fn raise() {
    if let Some(flag) = FLAG.get() {
        flag.store(true, Ordering::SeqCst);
    }
}

/// Catches Ctrl-C from now on and returns the flag it sets (the same flag on every call); `None`
/// when the handler could not be installed, in which case Ctrl-C keeps its default effect.
pub fn catch() -> Option<Arc<AtomicBool>> {
    static INSTALLED: OnceLock<bool> = OnceLock::new();
    let flag = FLAG.get_or_init(|| Arc::new(AtomicBool::new(false)));
    INSTALLED.get_or_init(install).then(|| Arc::clone(flag))
}

/// Whether Ctrl-C was pressed since [`catch`] (or since whoever holds the flag cleared it).
pub fn raised() -> bool {
    FLAG.get().is_some_and(|flag| flag.load(Ordering::SeqCst))
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

#[cfg(windows)]
fn install() -> bool {
    use windows_sys::Win32::Foundation::{FALSE, TRUE};
    use windows_sys::Win32::System::Console::{
        CTRL_BREAK_EVENT, CTRL_C_EVENT, SetConsoleCtrlHandler,
    };
    use windows_sys::core::BOOL;
    unsafe extern "system" fn on_event(event: u32) -> BOOL {
        if event == CTRL_C_EVENT || event == CTRL_BREAK_EVENT {
            raise();
            TRUE
        } else {
            // Closing the window, logoff, shutdown: the default handler ends the process.
            FALSE
        }
    }
    // SAFETY: registers a handler with the signature Windows expects; it only stores to an
    // atomic and is never unregistered.
    unsafe { SetConsoleCtrlHandler(Some(on_event), TRUE) != 0 }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_call_returns_the_same_flag() {
        let a = catch().expect("handler installed");
        let b = catch().expect("handler installed");
        assert!(Arc::ptr_eq(&a, &b));
    }

    #[cfg(unix)]
    #[test]
    fn sigint_sets_the_flag_and_the_process_lives_on() {
        let flag = catch().expect("handler installed");
        flag.store(false, Ordering::SeqCst);
        // SAFETY: raising a signal this process handles.
        assert_eq!(unsafe { libc::raise(libc::SIGINT) }, 0);
        assert!(flag.load(Ordering::SeqCst));
        assert!(raised());
        flag.store(false, Ordering::SeqCst);
    }
}
