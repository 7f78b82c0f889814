//! The one account of what Ctrl-C or `SIGTERM` stopped, or what a lost connection left in
//! doubt, for every runner that stops in order (the command line's commands, batch input here or
//! over `--remote`, a fan-out, a management server's calls): the runner fills an
//! [`Interrupted`] as it goes (what ran, what was in flight, what was not sent, with `file:line`
//! ranges, [`Lines`], where it knows them), [`line()`] words it and [`Interrupted::error`] gives
//! it its exit status.

use crate::app::exit::{Exit, Signal, fail};
use crate::app::words::short;

/// What a signal (or a lost connection) stopped.
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
    /// Not a signal: the connection was lost.
    pub lost: Option<Lost>,
    /// The lines that ran, by input.
    pub ran_at: Vec<Lines>,
    /// The lines not sent, by input.
    pub not_sent_at: Vec<Lines>,
}

/// A lost connection that stopped a run with a command in doubt, in place of a signal.
#[derive(Debug, Clone)]
pub struct Lost {
    /// The exit status it gives.
    pub exit: Exit,
    /// Why (`FILE:LINE: ...`), which replaces `interrupted by Ctrl-C`.
    pub why: String,
    /// What to do about it, said after the account.
    pub then: String,
}

impl Interrupted {
    /// Stopped by `signal`; the runner adds what it stopped.
    pub fn by(signal: Signal) -> Interrupted {
        Interrupted {
            signal,
            ..Interrupted::default()
        }
    }

    /// The one command of a one-server run that was in flight: `at` names it (`FILE:LINE`,
    /// `command 2 of 3`).
    pub fn in_flight(mut self, at: String, command: String) -> Interrupted {
        self.in_flight.push(InFlight {
            server: None,
            at,
            command,
        });
        self
    }

    /// Line `line` of `input` was not sent.
    pub fn unsent(mut self, input: &str, line: u64) -> Interrupted {
        self.not_sent += 1;
        extend(&mut self.not_sent_at, input, line);
        self
    }

    /// The rest of `input` was not sent: how many lines and the first and last of them, or
    /// `None` when it could not be counted (a pipe).
    pub fn rest(&mut self, input: &str, rest: Option<(u64, Option<(u64, u64)>)>) {
        match rest {
            Some((count, lines)) => {
                self.not_sent += count;
                if let Some((first, last)) = lines {
                    extend(&mut self.not_sent_at, input, first);
                    extend(&mut self.not_sent_at, input, last);
                }
            }
            None => {
                self.unread.get_or_insert_with(|| input.to_string());
            }
        }
    }

    /// What ran before it stopped: `ran` commands, at `ran_at` where known.
    pub fn ran(mut self, ran: u64, ran_at: &[Lines]) -> Interrupted {
        self.ran = ran;
        self.ran_at = ran_at.to_vec();
        self
    }

    /// The exit status: the signal's (130, 143, or a closed stdout's), or the lost
    /// connection's.
    pub fn exit(&self) -> Exit {
        self.lost.as_ref().map_or(self.signal.exit(), |l| l.exit)
    }

    /// The error when the signal came during `--retry`'s pause before a reconnect, after the
    /// connection was lost for `why`: `interrupted by Ctrl-C while waiting to reconnect (WHY);
    /// 3 commands ran`.
    pub fn while_reconnecting(&self, why: &str) -> anyhow::Error {
        let text = format!(
            "interrupted by {} while waiting to reconnect ({why}); {} command{} ran",
            self.signal.name(),
            self.ran,
            if self.ran == 1 { "" } else { "s" }
        );
        fail(self.exit(), text)
    }

    /// The error that ends the run: its [`line()`] (and what to do about a lost connection)
    /// with its [`exit`](Interrupted::exit) status.
    pub fn error(&self) -> anyhow::Error {
        let then = self.lost.as_ref().map_or("", |l| l.then.as_str());
        fail(self.exit(), format!("{}{then}", line(self)))
    }
}

/// Lines `first` to `last` of one input: `build.mcfunction:1-77`, or `:5` alone.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Lines {
    /// The input's name as messages give it.
    pub input: String,
    /// The first line.
    pub first: u64,
    /// The last line.
    pub last: u64,
}

impl std::fmt::Display for Lines {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        if self.first == self.last {
            write!(f, "{}:{}", self.input, self.first)
        } else {
            write!(f, "{}:{}-{}", self.input, self.first, self.last)
        }
    }
}

/// Several inputs' ranges: `a.mcfunction:1-77, b.mcfunction:1-3`.
pub fn ranges(list: &[Lines]) -> String {
    list.iter()
        .map(Lines::to_string)
        .collect::<Vec<_>>()
        .join(", ")
}

/// Adds `line` of `input` to `list`, the ranges of what ran: the input's range grows to it.
pub fn extend(list: &mut Vec<Lines>, input: &str, line: u64) {
    match list.iter_mut().find(|l| l.input == input) {
        Some(l) => l.last = line,
        None => list.push(Lines {
            input: input.to_string(),
            first: line,
            last: line,
        }),
    }
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
    let cause = match &s.lost {
        Some(lost) => lost.why.clone(),
        None => format!("interrupted by {}", s.signal.name()),
    };
    let mut text = format!(
        "{cause}: {} command{} ran",
        s.ran,
        if s.ran == 1 { "" } else { "s" }
    );
    if !s.ran_at.is_empty() {
        text.push_str(&format!(" ({})", ranges(&s.ran_at)));
    }
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
    let at = if s.not_sent_at.is_empty() {
        String::new()
    } else {
        format!(" ({})", ranges(&s.not_sent_at))
    };
    match (s.not_sent, &s.unread) {
        (n, None) => text.push_str(&format!(", {n} not sent{at}")),
        (0, Some(name)) => text.push_str(&format!(", the rest of {name} was not read")),
        (n, Some(name)) => text.push_str(&format!(
            ", {n} not sent{at} and the rest of {name} was not read"
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
            ran_at: vec![Lines {
                input: "n.mcfunction".into(),
                first: 1,
                last: 2,
            }],
            not_sent_at: vec![Lines {
                input: "n.mcfunction".into(),
                first: 3,
                last: 2000,
            }],
            ..Interrupted::default()
        };
        assert_eq!(
            line(&s),
            "interrupted by a closed stdout: 2 commands ran (n.mcfunction:1-2), none was in flight, 1998 not sent (n.mcfunction:3-2000)"
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

    #[test]
    fn what_was_not_sent_adds_up_by_input() {
        let mut s = Interrupted::by(Signal::Interrupt)
            .ran(2, &[])
            .unsent("a.mcfunction", 3);
        s.rest("a.mcfunction", Some((2, Some((4, 5)))));
        s.rest("b.mcfunction", Some((0, None)));
        s.rest("<stdin>", None);
        s.rest("c.mcfunction", None);
        assert_eq!(
            line(&s),
            "interrupted by Ctrl-C: 2 commands ran, none was in flight, 3 not sent (a.mcfunction:3-5) and the rest of <stdin> was not read"
        );
        assert_eq!(s.exit(), Exit::Interrupted);
        let s = Interrupted::by(Signal::Pipe).in_flight("x:1".into(), "say".into());
        assert_eq!(
            format!("{:#}", s.error()),
            "interrupted by a closed stdout: 0 commands ran, x:1 ('say') was in flight and may or may not have run, 0 not sent"
        );
    }

    #[test]
    fn ranges_of_lines_and_a_lost_connection() {
        let mut ran = Vec::new();
        for line in [1, 2, 77] {
            extend(&mut ran, "a.mcfunction", line);
        }
        extend(&mut ran, "b.mcfunction", 5);
        let s = Interrupted {
            lost: Some(Lost {
                exit: Exit::Transport,
                why: "lost the connection: ssh failed".into(),
                then: "; try again".into(),
            }),
            ran: 78,
            ran_at: ran,
            in_flight: vec![in_flight(None, "b.mcfunction:6", "echo 6")],
            not_sent: 3,
            not_sent_at: vec![Lines {
                input: "b.mcfunction".into(),
                first: 7,
                last: 10,
            }],
            ..Interrupted::default()
        };
        assert_eq!(
            line(&s),
            "lost the connection: ssh failed: 78 commands ran (a.mcfunction:1-77, b.mcfunction:5), b.mcfunction:6 ('echo 6') was in flight and may or may not have run, 3 not sent (b.mcfunction:7-10)"
        );
        assert_eq!(s.exit(), Exit::Transport);
        assert_eq!(
            format!("{:#}", s.error()),
            format!("{}; try again", line(&s))
        );
        assert_eq!(Interrupted::by(Signal::Terminate).exit(), Exit::Terminated);
        let s = Interrupted::by(Signal::Terminate).ran(1, &[]);
        assert_eq!(
            s.while_reconnecting("x:3: lost").to_string(),
            "interrupted by SIGTERM while waiting to reconnect (x:3: lost); 1 command ran"
        );
    }
}
