//! The one line that says what Ctrl-C or `SIGTERM` stopped, for every runner that stops in order
//! (the command line's commands, batch input here or over `--remote`, a fan-out): the runner
//! fills an [`Interrupted`], [`line()`] words it.

use crate::app::exit::Signal;
use crate::app::shared::short;

/// What a signal stopped.
#[derive(Debug, Clone, Default)]
pub struct Interrupted {
    /// Which signal (messages name it `Ctrl-C` or `SIGTERM`).
    pub signal: Signal,
    /// Commands answered.
    pub ran: u64,
    /// With a fan-out, how many servers it ran on (the in-flight commands are then a list,
    /// each named by its server).
    pub servers: Option<usize>,
    /// The commands sent but not completely answered.
    pub in_flight: Vec<InFlight>,
    /// Commands (and unsendable lines) not sent, in the inputs that could be counted.
    pub not_sent: u64,
    /// The first input whose rest could not be counted (a pipe).
    pub unread: Option<String>,
    /// What else was not run at all (`the batch input`, `the console`).
    pub not_run: Option<&'static str>,
    /// Where the commands not sent begin (`FILE:LINE`), when the line names it: where
    /// `--resume` goes on after a closed stdout.
    pub first_not_sent: Option<String>,
}

/// One command in flight.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord)]
pub struct InFlight {
    /// Its server, with a fan-out.
    pub server: Option<String>,
    /// Where it came from: `FILE:LINE`, `command 2 of 3`; with a fan-out `FILE:LINE: ` or
    /// nothing.
    pub at: String,
    /// Its text (shortened here).
    pub command: String,
}

/// How many in-flight commands of a fan-out are named.
const SHOWN: usize = 5;

/// `interrupted by Ctrl-C: 2 commands ran, x.mcfunction:3 ('sleep 60000') was in flight and may
/// or may not have run, 2 not sent`; with a fan-out `interrupted by SIGTERM: 12 commands ran
/// on 3 servers, 2 were in flight and may or may not have run ([a] 'say hi', [b]
/// x.mcfunction:3: 'give'), 7 not sent`.
pub fn line(s: &Interrupted) -> String {
    let mut text = format!(
        "interrupted by {}: {} command{} ran",
        s.signal.name(),
        s.ran,
        if s.ran == 1 { "" } else { "s" }
    );
    if let Some(servers) = s.servers {
        text.push_str(&format!(
            " on {servers} server{}",
            if servers == 1 { "" } else { "s" }
        ));
    }
    match (s.servers, s.in_flight.as_slice()) {
        (_, []) => text.push_str(", none was in flight"),
        (None, [one, ..]) => text.push_str(&format!(
            ", {} ('{}') was in flight and may or may not have run",
            one.at,
            short(&one.command)
        )),
        (Some(_), all) => {
            let mut list: Vec<String> = all
                .iter()
                .take(SHOWN)
                .map(|c| {
                    format!(
                        "[{}] {}'{}'",
                        c.server.as_deref().unwrap_or(""),
                        c.at,
                        short(&c.command)
                    )
                })
                .collect();
            if all.len() > SHOWN {
                list.push(format!("and {} more", all.len() - SHOWN));
            }
            text.push_str(&format!(
                ", {} {} in flight and may or may not have run ({})",
                all.len(),
                if all.len() == 1 { "was" } else { "were" },
                list.join(", ")
            ));
        }
    }
    match (s.not_sent, &s.unread) {
        (n, None) => {
            text.push_str(&format!(", {n} not sent"));
            if let Some(at) = s.first_not_sent.as_ref().filter(|_| n > 0) {
                text.push_str(&format!(" from {at} on"));
            }
        }
        (0, Some(name)) => text.push_str(&format!(", the rest of {name} was not read")),
        (n, Some(name)) => text.push_str(&format!(
            ", {n} not sent and the rest of {name} was not read"
        )),
    }
    if let Some(what) = s.not_run {
        text.push_str(&format!("; {what} was not run"));
    }
    text
}

#[cfg(test)]
mod tests {
    use super::*;

    fn in_flight(server: Option<&str>, at: &str, command: &str) -> InFlight {
        InFlight {
            server: server.map(str::to_string),
            at: at.into(),
            command: command.into(),
        }
    }

    #[test]
    fn one_server() {
        let s = Interrupted {
            signal: Signal::Interrupt,
            ran: 2,
            in_flight: vec![in_flight(None, "x.mcfunction:3", "sleep 60000")],
            not_sent: 2,
            ..Interrupted::default()
        };
        assert_eq!(
            line(&s),
            "interrupted by Ctrl-C: 2 commands ran, x.mcfunction:3 ('sleep 60000') was in flight and may or may not have run, 2 not sent"
        );
        let s = Interrupted {
            signal: Signal::Terminate,
            ran: 1,
            not_sent: 0,
            unread: Some("<stdin>".into()),
            ..Interrupted::default()
        };
        assert_eq!(
            line(&s),
            "interrupted by SIGTERM: 1 command ran, none was in flight, the rest of <stdin> was not read"
        );
        let s = Interrupted {
            signal: Signal::Interrupt,
            ran: 0,
            not_sent: 1,
            not_run: Some("the console"),
            ..Interrupted::default()
        };
        assert_eq!(
            line(&s),
            "interrupted by Ctrl-C: 0 commands ran, none was in flight, 1 not sent; the console was not run"
        );
        let s = Interrupted {
            signal: Signal::Pipe,
            ran: 2,
            not_sent: 1998,
            first_not_sent: Some("n.mcfunction:3".into()),
            ..Interrupted::default()
        };
        assert_eq!(
            line(&s),
            "interrupted by a closed stdout: 2 commands ran, none was in flight, 1998 not sent from n.mcfunction:3 on"
        );
    }

    #[test]
    fn fan_out() {
        let s = Interrupted {
            signal: Signal::Terminate,
            ran: 2,
            servers: Some(2),
            in_flight: vec![
                in_flight(Some("a"), "", "sleep 30000"),
                in_flight(Some("b"), "x:3: ", "give"),
            ],
            not_sent: 2,
            ..Interrupted::default()
        };
        assert_eq!(
            line(&s),
            "interrupted by SIGTERM: 2 commands ran on 2 servers, 2 were in flight and may or may not have run ([a] 'sleep 30000', [b] x:3: 'give'), 2 not sent"
        );
        let many: Vec<InFlight> = (0..7)
            .map(|i| in_flight(Some(&i.to_string()), "", "c"))
            .collect();
        let s = Interrupted {
            signal: Signal::Interrupt,
            ran: 1,
            servers: Some(1),
            in_flight: many,
            ..Interrupted::default()
        };
        assert!(line(&s).starts_with("interrupted by Ctrl-C: 1 command ran on 1 server, 7 were"));
        assert!(line(&s).ends_with("[4] 'c', and 2 more), 0 not sent"));
    }
}
