//! `--wait DURATION`: a session's first connection tried again until the server accepts the
//! login, for scripts around game containers that start before the server does (issue 23).
//! [`Session::connect`](super::session::Session::connect) calls [`until_up`]; nothing else
//! connects differently.

use std::time::{Duration, Instant};

use rconsole::Error;

use crate::app::print::progress::ProgressLine;

/// The first pause between attempts; it doubles up to [`MAX_PAUSE`], short enough that a
/// server is found within half a second of coming up.
const FIRST_PAUSE: Duration = Duration::from_millis(100);
/// The longest pause between attempts.
const MAX_PAUSE: Duration = Duration::from_millis(500);

/// Whether a failed connect or login may work later: nothing listens yet (refused, the name
/// does not resolve yet), the connection closed before RCON was up (a container's port
/// forwarder accepts before the server listens, then closes), no answer came in time, or the
/// tunnel could not reach the port yet. A refused password (RCON is up and said no), a port
/// that is not RCON and a broken answer are final.
pub fn retryable(e: &Error) -> bool {
    matches!(
        e,
        Error::Resolve { .. }
            | Error::Connect { .. }
            | Error::LoginClosed
            | Error::Timeout { .. }
            | Error::NoLoginReply { .. }
            | Error::Closed { .. }
            | Error::Io { .. }
            | Error::Transport(_)
    )
}

// The retry schedule lives with the rest of the run's policy; `mode/mgmt*.rs` and the
// schedule still name it here.

/// Whether a failed connect is worth trying again (`--retry`): the server could not be reached
/// or the tunnel did not open; a refused login or a protocol error is not retried.
pub fn worth_a_retry(e: &rconsole::Error) -> bool {
    matches!(
        e,
        rconsole::Error::Connect { .. }
            | rconsole::Error::Timeout {
                phase: rconsole::Phase::Connect,
                ..
            }
            | rconsole::Error::Transport(_)
    )
}

/// Calls `open` until it succeeds, fails for good ([`retryable`]), or `limit` has passed since
/// the first attempt (then [`Error::NotUp`]: how long rcon waited, the last attempt's error
/// its cause, so the one error line says both). An attempt under way runs to its own end (at most
/// `--timeout`); a pause between attempts that `stopped` cuts short (a signal wakes it) ends
/// the wait with [`Error::Cancelled`]. On a terminal, one progress line on stderr says what is
/// awaited.
pub fn until_up<T>(
    limit: Duration,
    server: &str,
    mut open: impl FnMut() -> rconsole::Result<T>,
    mut stopped: impl FnMut() -> bool,
) -> rconsole::Result<T> {
    let start = Instant::now();
    let mut progress = ProgressLine::on_terminal();
    let mut pause = FIRST_PAUSE;
    let mut attempts = 0u32;
    loop {
        attempts += 1;
        let err = match open() {
            Ok(opened) => {
                progress.clear();
                return Ok(opened);
            }
            Err(e) => e,
        };
        let waited = start.elapsed();
        if !retryable(&err) {
            progress.clear();
            return Err(err);
        }
        if waited >= limit {
            progress.clear();
            return Err(Error::NotUp {
                server: server.to_string(),
                waited: limit,
                attempts,
                last: Box::new(err),
            });
        }
        progress.show(&format!(
            "rcon: waiting for {server} ({}; {}s of {})",
            reason(&err),
            waited.as_secs(),
            rconsole::format_duration(limit)
        ));
        if crate::app::interrupt::pause_until(pause.min(limit - waited), &mut stopped) {
            progress.clear();
            return Err(Error::Cancelled);
        }
        pause = (pause * 2).min(MAX_PAUSE);
    }
}

/// Why an attempt failed, in a word or two for the progress line (the full error is shown
/// when rcon gives up).
fn reason(e: &Error) -> &'static str {
    match e {
        Error::Resolve { .. } => "name not found",
        Error::Connect { source, .. } if source.kind() == std::io::ErrorKind::ConnectionRefused => {
            "refused"
        }
        Error::Connect { .. } => "unreachable",
        Error::Timeout { .. } | Error::NoLoginReply { .. } => "no answer",
        Error::Transport(_) => "tunnel failed",
        _ => "closed",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn refused() -> Error {
        Error::Connect {
            addr: "127.0.0.1:1".into(),
            source: std::io::ErrorKind::ConnectionRefused.into(),
        }
    }

    #[test]
    fn what_is_tried_again() {
        assert!(retryable(&refused()));
        assert!(retryable(&Error::LoginClosed));
        assert!(retryable(&Error::NoLoginReply {
            after: Duration::from_secs(1)
        }));
        assert!(!retryable(&Error::LoginRefused));
        assert!(!retryable(&Error::NotRcon {
            looks: "an HTTP server",
            first: "HTTP".into()
        }));
        assert!(!retryable(&Error::CommandHasNul));
    }

    #[test]
    fn tries_until_it_opens() {
        let mut calls = 0;
        let got = until_up(
            Duration::from_secs(30),
            "s",
            || {
                calls += 1;
                if calls < 3 { Err(refused()) } else { Ok(calls) }
            },
            || false,
        );
        assert_eq!(got.unwrap(), 3);
    }

    #[test]
    fn a_refused_password_is_final_at_once() {
        let mut calls = 0;
        let got: rconsole::Result<()> = until_up(
            Duration::from_secs(30),
            "s",
            || {
                calls += 1;
                Err(Error::LoginRefused)
            },
            || false,
        );
        assert!(matches!(got, Err(Error::LoginRefused)));
        assert_eq!(calls, 1);
    }

    #[test]
    fn gives_the_last_error_past_the_limit() {
        let mut calls = 0;
        let got: rconsole::Result<()> = until_up(
            Duration::from_millis(250),
            "s",
            || {
                calls += 1;
                Err(refused())
            },
            || false,
        );
        let Err(Error::NotUp { last, attempts, .. }) = got else {
            panic!("{got:?}");
        };
        assert!(matches!(*last, Error::Connect { .. }));
        assert_eq!(attempts, calls);
        assert!(calls >= 2, "tried again before giving up: {calls}");
    }
}
