//! The file-descriptor limit a fleet run needs: one descriptor per open connection.

/// Raises the soft limit on open files (`RLIMIT_NOFILE`) towards `want`, as far as the hard
/// limit allows, and returns the soft limit now in force. Unix only; on Windows, which has no
/// such per-process limit for sockets, it returns `want` unchanged.
#[cfg(unix)]
// `rlim_t` is u64 on Linux and macOS but not on every Unix: the casts are needed there.
#[allow(clippy::unnecessary_cast)]
pub fn raise_fd_limit(want: u64) -> u64 {
    // SAFETY: getrlimit/setrlimit only read and write the struct passed by pointer.
    unsafe {
        let mut lim = libc::rlimit {
            rlim_cur: 0,
            rlim_max: 0,
        };
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut lim) != 0 {
            return want;
        }
        let current = lim.rlim_cur as u64;
        if current >= want {
            return current;
        }
        let target = want.min(lim.rlim_max as u64);
        // macOS refuses soft limits above OPEN_MAX even when the hard limit is unlimited.
        // OPEN_MAX is 10240 in macOS's <sys/syslimits.h>; the libc crate does not export it.
        #[cfg(target_os = "macos")]
        let target = target.min(10240);
        let raised = libc::rlimit {
            rlim_cur: target as libc::rlim_t,
            rlim_max: lim.rlim_max,
        };
        if libc::setrlimit(libc::RLIMIT_NOFILE, &raised) == 0 {
            target
        } else {
            current
        }
    }
}

/// Windows: sockets are not limited per process the way Unix file descriptors are.
#[cfg(not(unix))]
pub fn raise_fd_limit(want: u64) -> u64 {
    want
}

#[cfg(all(test, unix))]
mod tests {
    use super::*;

    #[test]
    fn never_lowers_the_limit() {
        let now = raise_fd_limit(0);
        assert!(now > 0);
        assert!(raise_fd_limit(1) >= now.min(1));
        assert_eq!(raise_fd_limit(0), now);
    }
}
