//! Helpers every part of the application shares, with no dependency on the runners: which
//! commands stop a server, what vanilla's parse error looks like, a command shortened for
//! messages, the check that refuses an unsendable command before anything is sent, and where
//! engine warnings go.

use rconsole::rcon::client::{Observer, check_command};

use crate::app::exit::{Exit, fail};
use crate::app::resolve::settings::Settings;

/// Prints engine warnings on stderr.
pub struct StderrObserver;

impl Observer for StderrObserver {
    fn warning(&self, message: &str) {
        crate::app::print::output::warning(message);
    }
}

/// Refuses, before connecting anywhere, a command that can never be sent (too long for the
/// dialect, NUL byte), so the server receives nothing.
pub fn refuse_unsendable<'a>(
    commands: &[String],
    servers: impl IntoIterator<Item = &'a Settings>,
) -> anyhow::Result<()> {
    refuse_unsendable_at(commands.iter().map(|c| (c.as_str(), None)), servers)
}

/// [`refuse_unsendable`] for commands that may come from a file: one with an origin is named
/// `file:line`, the others by their place in the list.
pub fn refuse_unsendable_at<'a, 'c>(
    commands: impl ExactSizeIterator<Item = (&'c str, Option<(&'c str, u64)>)>,
    servers: impl IntoIterator<Item = &'a Settings>,
) -> anyhow::Result<()> {
    let max = servers
        .into_iter()
        .map(|s| s.dialect.value.dialect().max_command_bytes)
        .min()
        .unwrap_or(rconsole::rcon::packet::MAX_COMMAND_BYTES);
    let count = commands.len();
    for (i, (c, origin)) in commands.enumerate() {
        let which = || match origin {
            Some((file, line)) => format!("{file}:{line}: command"),
            None if count > 1 => format!("command {} of {count}", i + 1),
            None => "the command".to_string(),
        };
        // `rcon "$CMD"` with CMD unset: no server does anything with an empty command.
        if c.trim().is_empty() {
            return Err(fail(
                Exit::Usage,
                format!("{} is empty; nothing was sent", which()),
            ));
        }
        check_command(c, max).map_err(|e| {
            let which = which();
            let why = match e {
                rconsole::Error::CommandTooLong { len, max } => {
                    format!("{which} is {len} bytes of UTF-8, over the limit of {max}")
                }
                rconsole::Error::CommandHasNul => format!("{which} contains a NUL character"),
                other => format!("{which}: {other}"),
            };
            fail(Exit::Refused, format!("{why}; nothing was sent"))
        })?;
    }
    Ok(())
}

/// Whether a command shuts the server down, after which the connection must be closed at once
/// (a connected client keeps a vanilla server from stopping cleanly).
pub fn is_stop_command(command: &str) -> bool {
    let word = command.trim_start().trim_start_matches('/');
    let word = word.split_whitespace().next().unwrap_or("");
    matches!(word, "stop" | "restart")
}

/// Whether the output (raw bytes) is vanilla's command parse error.
pub fn is_parse_error(raw: &[u8]) -> bool {
    raw.trim_ascii_end().ends_with(b"<--[HERE]")
}

/// Server names for a message: all of them, or for a large group the first three and how many
/// more (`s0, s1, s2 and 197 more servers`).
pub fn some_names(names: &[String]) -> String {
    const ALL_UP_TO: usize = 5;
    if names.len() <= ALL_UP_TO {
        return names.join(", ");
    }
    format!(
        "{} and {} more servers",
        names[..3].join(", "),
        names.len() - 3
    )
}

/// How a failed command is named in its error line ([`crate::app::print::output::error`]),
/// by every runner: `command 'TEXT': WHY` (the text shortened), after `at` (`FILE:LINE: ` for
/// batch input, or nothing).
pub fn command_failed(at: &str, command: &str, why: &str) -> String {
    format!("{at}command '{}': {why}", crate::app::words::short(command))
}

/// A practice server that cannot bind its address: one line in words (std's text ends in
/// "(os error 98)"), exit status 4 like any other failure to open a socket, the address named
/// so the user can pick another (port 0 picks a free one).
pub fn cannot_listen(flag: &str, addr: &str, e: &std::io::Error) -> anyhow::Error {
    use std::io::ErrorKind as K;
    let why = match e.kind() {
        K::AddrInUse => {
            "the address is already in use (another server holds the port; give another, or port 0 for a free one)".to_string()
        }
        K::PermissionDenied => {
            "permission denied (ports below 1024 need privileges; give a higher one)".to_string()
        }
        K::AddrNotAvailable => {
            "no network interface of this machine has that address (127.0.0.1 always works)".to_string()
        }
        kind => kind.to_string(),
    };
    fail(
        Exit::Connect,
        format!("{flag}: cannot listen on {addr}: {why}"),
    )
}

/// The players in a `list` answer: vanilla's `There are 2 of a max of 20 players online: A, B`
/// (older and modded servers put the names on the next line); `None` if it is not one.
pub fn parse_list(text: &str) -> Option<std::collections::BTreeSet<String>> {
    let plain = rconsole::text::render::strip(text);
    let (_, names) = plain.split_once("online:")?;
    Some(
        names
            .split([',', '\n'])
            .map(str::trim)
            .filter(|n| !n.is_empty())
            .map(str::to_string)
            .collect(),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn a_large_group_is_named_in_short() {
        let names = |n: usize| (0..n).map(|i| format!("s{i}")).collect::<Vec<_>>();
        assert_eq!(super::some_names(&names(1)), "s0");
        assert_eq!(super::some_names(&names(5)), "s0, s1, s2, s3, s4");
        assert_eq!(
            super::some_names(&names(200)),
            "s0, s1, s2 and 197 more servers"
        );
    }

    use super::*;

    #[test]
    fn stop_commands() {
        assert!(is_stop_command("stop"));
        assert!(is_stop_command("/stop"));
        assert!(is_stop_command("  restart now"));
        assert!(!is_stop_command("stopwatch"));
        assert!(!is_stop_command("say stop"));
    }

    #[test]
    fn parse_errors() {
        assert!(is_parse_error(
            b"Unknown or incomplete command, see below for errorfoo<--[HERE]"
        ));
        assert!(is_parse_error(b"...foo<--[HERE]\n"));
        assert!(!is_parse_error(
            b"There are 0 of a max of 20 players online: "
        ));
    }
}
