//! Running the same commands on several servers at once (`--target NAME=HOST`, `--targets
//! FILE`, `-s a,b`, groups, `--all`): output labelled `[NAME] ` per line (or grouped per server,
//! or JSON), the worst exit status, one error line per failed server, and on a terminal a live
//! progress line and a summary.
//!
//! Every target runs in one event loop ([`rconsole::fleet`]), whatever its dialect (RCON,
//! BattlEye, telnet, WebRCON) and whether it is reached directly or through a tunnel (`--ssh`,
//! `--proxy-command`, an inventory row's `ssh`: the child's pipes are polled like sockets, or on
//! Windows read by threads that wake the loop), or
//! through `--remote` (the ssh child's pipes carry the remote protocol:
//! [`crate::app::remote::machine`]): every connect, login, probe and command progresses at
//! once, at most `--parallel` connections open (default
//! [`rconsole::fleet::DEFAULT_PARALLEL`]), so a fleet costs about one timeout however many of
//! its servers are dead.
//!
//! Each server's output is printed as soon as each of its commands completes, so a slow or dead
//! server holds back nobody's output but its own, and only for its own timeout. The policy is
//! the one-server policy: `--delay` between commands, the first failure stops that server
//! (saying how many commands it did not send) unless `--keep-going`, `file:line` for batch
//! lines. Every record goes through the one-server renderer ([`Printer::format_from`]), so
//! text, colour, `--fix-newlines` and the JSON schema are the same, plus `server` in JSON.
//! `--retry N` tries a failed connect again N times, after 200 ms, 400 ms, 800 ms...

use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;
use std::sync::mpsc;
use std::thread;
use std::time::{Duration, Instant};

use rconsole::Password;
use rconsole::engine::Machine;
use rconsole::fleet;
use rconsole::rcon::client::Observer;
use rconsole::transport::tunnel::{ProcessConnector, SshDestination, expand_proxy_command};

use crate::app::exit::{self, Exit, fail};
use crate::app::interrupt::{self, Signal};
use crate::app::print;
use crate::app::print::interrupted::{self, InFlight, Interrupted};
use crate::app::print::output::{Printer, Record, prefixed};
use crate::app::print::progress::ProgressLine;
use crate::app::resolve::plan::{FanoutPlan, FanoutPolicy, Layout};
use crate::app::resolve::secrets::Secret;
use crate::app::resolve::settings::Settings;
use crate::app::runner::commands::{self, Rest};
use crate::app::runner::looped::{LoopPlan, LoopTargets, Looped, Move, Runner, Under};
use crate::app::runner::policy::{Policy, Retries};
use crate::app::runner::session::PARSE_ERROR;
use crate::app::shared::is_parse_error;
use crate::app::shared::is_stop_command;

/// File descriptors kept free for stdio, the event loop and the learned-servers file.
pub const SPARE_FDS: u64 = 64;

/// One command for every server, and where it came from (`file`, `line` for batch input).
#[derive(Debug, Clone)]
pub struct Planned {
    /// The command as sent.
    pub text: String,
    /// File name and line, for batch input.
    pub origin: Option<(String, u64)>,
}

impl Planned {
    /// `file:line: ` for messages, or nothing.
    fn at(&self) -> String {
        match &self.origin {
            Some((file, line)) => format!("{file}:{line}: "),
            None => String::new(),
        }
    }
}

/// Engine warnings on stderr, labelled with the server's name.
pub struct Labelled(pub String);

impl Observer for Labelled {
    fn warning(&self, message: &str) {
        crate::app::print::output::warning(&format!("[{}] {message}", self.0));
    }
}

/// Where a server's engine warnings go: labelled with its name when it is one of several
/// (`label`), as fan-out labels every line, else as one server's.
pub fn observer(name: &str, label: bool) -> Arc<dyn Observer> {
    if label {
        Arc::new(Labelled(name.to_string()))
    } else {
        Arc::new(crate::app::shared::StderrObserver)
    }
}

/// Turns resolved settings into the event loop's targets (`--remote` ones with their remote
/// protocol machine) and what the handler keeps of each. Reads each password (a file, a
/// command) once per distinct source. `label`: the engine's warnings name their server
/// (several servers).
pub fn servers(list: Vec<(String, Settings)>, label: bool) -> anyhow::Result<LoopTargets> {
    let passwords = passwords(&list)?;
    let mut ready = (
        Vec::with_capacity(list.len()),
        Vec::with_capacity(list.len()),
    );
    for ((name, settings), password) in list.into_iter().zip(passwords) {
        // One ssh connection per server, as before connection sharing: sshd refuses more than
        // MaxSessions (10) `--remote` sessions on one connection.
        let settings = Settings {
            ssh_reuse: false,
            ..settings
        };
        let protocol = settings.dialect.value.dialect().protocol;
        let options = settings.options(observer(&name, label));
        let (tunnel, machine) = if settings.remote {
            let (tunnel, machine) =
                crate::app::remote::machine::looped(&settings, password.expose())?;
            (Some(tunnel), Some(Box::new(machine) as Box<dyn Machine>))
        } else {
            let tunnel = process_connector(&settings, &settings.host.value, settings.port.value)
                .map(|c| fleet::Tunnel::new(&c, options.timeout));
            (tunnel, None)
        };
        let describe = match &tunnel {
            Some(t) => t.describe().to_string(),
            None => settings.target(),
        };
        ready.1.push(Looped {
            name,
            describe,
            observer: Arc::clone(&options.observer),
            protocol,
        });
        ready.0.push(fleet::FleetTarget {
            host: settings.host.value.clone(),
            port: settings.port.value,
            password,
            config: options,
            protocol,
            tunnel,
            unix: None,
            machine,
        });
    }
    Ok(ready)
}

/// For runs that hold every server's connection at once (`--countdown` and `--every` on a
/// group, `--follow`; `what` names it): raises the soft descriptor limit to what they need (a
/// socket each, three pipes through a tunnel, and [`SPARE_FDS`]), or says before anything is
/// sent that the hard limit is lower.
pub fn hold_every_connection(servers: &[(String, Settings)], what: &str) -> anyhow::Result<()> {
    let want = servers
        .iter()
        .map(|(_, s)| {
            let tunnelled = s.ssh.is_some() || s.proxy_command.is_some();
            if tunnelled { 3 } else { 1 }
        })
        .sum::<u64>()
        + SPARE_FDS;
    let limit = fleet::raise_fd_limit(want);
    if limit < want {
        return Err(fail(
            Exit::Usage,
            format!(
                "{what} on {} servers holds {want} open files at once, but the limit is \
                 {limit} (ulimit -n); nothing was sent",
                servers.len()
            ),
        ));
    }
    Ok(())
}

/// The tunnel of `settings` (`--ssh`, a proxy command) to `host:port`, as
/// [`Settings::connector`] opens it.
pub fn process_connector(settings: &Settings, host: &str, port: u16) -> Option<ProcessConnector> {
    if let Some(ssh) = &settings.ssh {
        let destination = SshDestination::parse(&ssh.value).ok()?;
        return Some(ProcessConnector::ssh(
            destination,
            settings.ssh_options.clone(),
            host,
            port,
        ));
    }
    let template = settings.proxy_command.as_ref()?;
    let command = expand_proxy_command(&template.value, host, port).ok()?;
    Some(ProcessConnector::shell(command, host, port))
}

/// How many password files or commands are read or run at once.
const PASSWORD_WORKERS: usize = 16;

/// Every server's password, before anything is sent. A file or command shared by many rows is
/// read or run once, distinct ones up to [`PASSWORD_WORKERS`] at a time (an inventory of
/// `kubectl get secret` commands would otherwise take one round trip to the cluster per row,
/// in turn); the terminal prompt, when nothing gives a password, is asked once for all.
pub fn passwords(list: &[(String, Settings)]) -> anyhow::Result<Vec<Password>> {
    let key = |s: &Settings| -> Option<String> {
        match s.password.as_ref().map(|p| &p.value) {
            Some(Secret::File(path)) => Some(format!("file {}", path.display())),
            Some(Secret::Command(cmd)) => Some(format!("command {cmd}")),
            Some(Secret::Prompt) | None => Some("prompt".to_string()),
            Some(Secret::Value(_)) => None,
        }
    };
    let mut first: BTreeMap<String, usize> = BTreeMap::new();
    for (i, (_, s)) in list.iter().enumerate() {
        if let Some(k) = key(s) {
            first.entry(k).or_insert(i);
        }
    }
    let mut found: BTreeMap<String, Password> = BTreeMap::new();
    if let Some(&i) = first.get("prompt") {
        found.insert("prompt".into(), list[i].1.password()?);
    }
    let jobs: Vec<(&String, usize)> = first
        .iter()
        .filter(|(k, _)| k.as_str() != "prompt")
        .map(|(k, i)| (k, *i))
        .collect();
    if !jobs.is_empty() {
        let chunk = jobs.len().div_ceil(PASSWORD_WORKERS);
        let results = thread::scope(|scope| {
            let handles: Vec<_> = jobs
                .chunks(chunk)
                .map(|part| {
                    scope.spawn(move || {
                        part.iter()
                            .map(|(k, i)| (k.to_string(), *i, list[*i].1.password()))
                            .collect::<Vec<_>>()
                    })
                })
                .collect();
            handles
                .into_iter()
                .flat_map(|h| h.join().expect("a password worker panicked"))
                .collect::<Vec<_>>()
        });
        // The first failure in inventory order is the one reported.
        let mut results = results;
        results.sort_by_key(|(_, i, _)| *i);
        for (k, _, r) in results {
            found.insert(k, r?);
        }
    }
    list.iter()
        .map(|(_, s)| match key(s) {
            Some(k) => Ok(found[&k].clone()),
            None => s.password(),
        })
        .collect()
}

/// Runs the plan: the command line's commands plus, with `-f`, the lines of the files (read
/// whole first, with the mcfunction rules), or with neither and stdin not a terminal, the lines
/// of stdin, as for one server: every server gets the same list.
pub fn run_plan(plan: FanoutPlan) -> anyhow::Result<Exit> {
    let mut planned: Vec<Planned> = plan
        .commands
        .into_iter()
        .map(|text| Planned { text, origin: None })
        .collect();
    let macros = plan.macros.into_iter().collect();
    for path in &plan.files {
        let input = crate::app::source::files::read_commands(path, &macros)?;
        planned.extend(input.lines.into_iter().map(|(text, line)| Planned {
            text,
            origin: Some((input.name.clone(), line)),
        }));
    }
    if planned.is_empty() {
        return Err(fail(
            Exit::Usage,
            "no command given for several servers (use COMMAND, -c, -f or stdin)",
        ));
    }
    crate::app::shared::refuse_unsendable_at(
        planned.iter().map(|p| {
            let origin = p.origin.as_ref().map(|(file, line)| (file.as_str(), *line));
            (p.text.as_str(), origin)
        }),
        plan.servers.iter().map(|(_, s)| s),
    )?;
    let mut printer = plan.printing.printer();
    run_settings(
        plan.servers,
        &planned,
        plan.layout,
        &mut printer,
        plan.policy,
    )
}

/// Runs `commands` on every resolved server (profiles of `-s a,b,c`, `--all`, a group,
/// `--target`s or an inventory), laid out and printed as resolved.
pub fn run_settings(
    list: Vec<(String, Settings)>,
    commands: &[Planned],
    layout: Layout,
    printer: &mut Printer,
    policy: FanoutPolicy,
) -> anyhow::Result<Exit> {
    // What is learned about ten thousand servers is written once at the end, not once each.
    crate::app::learned::defer(true);
    let servers = servers(list, true)?;
    let result = run(servers, commands, layout, printer, policy);
    crate::app::learned::defer(false);
    Ok(result?)
}

/// What a session reports to the printing thread.
enum SessionUpdate {
    /// It started connecting.
    Started { server: usize },
    /// One command's result: complete output, or the part that came before `error`.
    Output {
        server: usize,
        command: usize,
        raw: Vec<u8>,
        elapsed: Duration,
        /// Why it failed (a parse error, or the connection) and the exit status that gives.
        error: Option<(String, Exit)>,
    },
    /// A warning for stderr (a retry), kept apart from the progress line.
    Warning(String),
    /// The server stopped early: `message` says why and what was not sent.
    Stopped {
        server: usize,
        message: String,
        exit: Exit,
    },
    /// The server ran every command.
    Finished { server: usize },
}

/// Runs `commands` on every server, printing through `printer` as results arrive. Returns the worst
/// exit status.
pub fn run(
    (targets, kept): LoopTargets,
    commands: &[Planned],
    layout: Layout,
    printer: &mut Printer,
    mut policy: FanoutPolicy,
) -> io::Result<Exit> {
    let names: Vec<String> = kept.iter().map(|s| s.name.clone()).collect();
    // One descriptor per open connection, three per tunnel (its pipes): raise the soft limit,
    // and stay within it.
    let per_target: u64 = if targets.iter().any(|t| t.tunnel.is_some()) {
        3
    } else {
        1
    };
    let want = policy.parallel.min(targets.len()) as u64 * per_target + SPARE_FDS;
    let limit = fleet::raise_fd_limit(want);
    if limit < want {
        let fit = (limit.saturating_sub(SPARE_FDS) / per_target).max(1) as usize;
        if policy.parallel_given {
            crate::app::print::output::warning(&format!(
                "--parallel {} needs {want} open files, but the limit is {limit}; \
                 running {fit} at once",
                policy.parallel
            ));
        }
        policy.parallel = fit;
    }
    // Ctrl-C and SIGTERM stop every server, keep what was answered, and say once what ran,
    // what was in flight and what was not sent (without the guard they ended the process).
    let stop = interrupt::Stop::catch();
    let alarm = stop.as_ref().map(interrupt::Stop::alarm);
    let (tx, rx) = mpsc::channel::<SessionUpdate>();
    let mut printing = PrintingThread::new(names, commands, layout, &policy, printer);

    let result = thread::scope(|scope| -> io::Result<()> {
        let loop_thread =
            thread::Builder::new()
                .name("fleet".into())
                .spawn_scoped(scope, move || {
                    let states = kept
                        .iter()
                        .map(|server| Progress {
                            sink: policy.messages.map(|json| {
                                crate::app::print::messages::message_sink(json, &server.name, true)
                            }),
                            name: server.name.clone(),
                            next: 0,
                            stop: false,
                        })
                        .collect();
                    let handler = FleetHandler {
                        states,
                        commands,
                        policy: Policy::from(&policy),
                        tx,
                    };
                    let opts = fleet::FleetOptions {
                        parallel: policy.parallel,
                        retries: policy.retries,
                        backoff: crate::app::runner::policy::RETRY_BACKOFF,
                        cancel: alarm,
                        wake: None,
                    };
                    Runner::new(handler, kept, policy.retries)
                        .run(targets, opts)
                        .map(drop)
                })?;
        printing.consume(&rx);
        match loop_thread.join() {
            Ok(r) => r,
            Err(_) => Err(io::Error::other("the fleet event loop panicked")),
        }
    });
    let stopped = printing.finish(stop.as_ref().and_then(interrupt::Stop::received));
    drop(stop);
    result?;
    if let Some(e) = printing.write_error.take() {
        return Err(e);
    }
    Ok(stopped.unwrap_or_else(|| printing.worst()))
}

/// What the printing thread keeps: the layout, per-server state, the progress line and the
/// figures for the summary.
struct PrintingThread<'a> {
    names: Vec<String>,
    commands: &'a [Planned],
    total: usize,
    layout: Layout,
    /// Whether a progress line is drawn.
    progress_wanted: bool,
    policy: Policy,
    printer: &'a mut Printer,
    exits: Vec<Exit>,
    blocks: Vec<String>,
    started: Vec<Option<Instant>>,
    took: Vec<Option<Duration>>,
    failures: Vec<(usize, Exit)>,
    done: usize,
    in_flight: usize,
    write_error: Option<io::Error>,
    progress: ProgressLine,
    last_draw: Option<Instant>,
    begun: Instant,
    /// Commands each server accounted for (answered, failed or in flight when stopped).
    accounted: Vec<usize>,
    /// What a signal stopped, counted as the run goes (the commands answered, and those a
    /// signal kept from being sent).
    stopped: Interrupted,
    /// Where a command was in flight when a signal stopped the run: server and command.
    interrupted: Vec<(usize, usize)>,
}

impl<'a> PrintingThread<'a> {
    fn new(
        names: Vec<String>,
        commands: &'a [Planned],
        layout: Layout,
        policy: &FanoutPolicy,
        printer: &'a mut Printer,
    ) -> Self {
        let total = names.len();
        Self {
            names,
            commands,
            total,
            layout,
            progress_wanted: policy.progress,
            policy: Policy::from(policy),
            printer,
            exits: vec![Exit::Success; total],
            blocks: vec![String::new(); total],
            started: vec![None; total],
            took: vec![None; total],
            failures: Vec::new(),
            done: 0,
            in_flight: 0,
            write_error: None,
            progress: ProgressLine::new(policy.progress),
            last_draw: None,
            begun: Instant::now(),
            accounted: vec![0; total],
            stopped: Interrupted {
                servers: Some(total),
                ..Interrupted::default()
            },
            interrupted: Vec::new(),
        }
    }

    fn worst(&self) -> Exit {
        self.exits.iter().copied().max().unwrap_or(Exit::Success)
    }

    /// Handles events until every sender is gone, redrawing the progress line now and then.
    fn consume(&mut self, rx: &mpsc::Receiver<SessionUpdate>) {
        let tick = Duration::from_millis(100);
        loop {
            match rx.recv_timeout(tick) {
                Ok(event) => self.handle(event),
                Err(mpsc::RecvTimeoutError::Timeout) => {}
                Err(mpsc::RecvTimeoutError::Disconnected) => return,
            }
            if self.progress_wanted && self.last_draw.is_none_or(|t| t.elapsed() >= tick) {
                self.draw();
            }
        }
    }

    fn draw(&mut self) {
        let failed = self.failures.len();
        self.progress.show(&format!(
            "rcon: {} of {} done, {failed} failed, {} in flight",
            self.done, self.total, self.in_flight
        ));
        self.last_draw = Some(Instant::now());
    }

    /// Clears the progress line before anything else is written to the terminal.
    fn clear(&mut self) {
        self.progress.clear();
    }

    fn emit(&mut self, text: &str) {
        self.clear();
        // Printing keeps going when stdout fails, so that every session can finish.
        if self.write_error.is_none()
            && let Err(e) = self.printer.formatted(text)
        {
            self.write_error = Some(e);
        }
    }

    /// A failure on `server`, its one line ([`print::output::error`]).
    fn eprint(&mut self, server: &str, message: &str) {
        self.clear();
        print::output::error(Some(server), message);
    }

    fn end(&mut self, server: usize) {
        if self.took[server].is_some() {
            return;
        }
        self.done += 1;
        self.in_flight = self.in_flight.saturating_sub(1);
        self.took[server] = Some(self.started[server].map_or(Duration::ZERO, |s| s.elapsed()));
    }

    fn handle(&mut self, event: SessionUpdate) {
        match event {
            SessionUpdate::Started { server } => {
                if self.started[server].is_none() {
                    self.started[server] = Some(Instant::now());
                    self.in_flight += 1;
                }
            }
            SessionUpdate::Warning(message) => {
                self.clear();
                crate::app::print::output::warning(&message);
            }
            SessionUpdate::Output {
                server,
                command,
                raw,
                elapsed,
                error,
            } => {
                let name = self.names[server].clone();
                self.accounted[server] += 1;
                match &error {
                    Some((_, Exit::Interrupted)) => self.interrupted.push((server, command)),
                    Some((_, exit)) => self.exits[server] = self.exits[server].max(*exit),
                    None => self.stopped.ran += 1,
                }
                let text = self.format(server, command, &raw, elapsed, &error);
                match self.layout {
                    Layout::Prefix if !text.is_empty() => {
                        let t = prefixed(&name, &text);
                        self.emit(&t);
                    }
                    Layout::Prefix => {}
                    Layout::Group => self.blocks[server].push_str(&text),
                    Layout::Json => self.emit(&text),
                }
                // With --keep-going a failed command is reported and the server goes on; only
                // a command the server failed goes on (else the server's stop says why).
                if let Some((message, exit @ Exit::CommandFailed)) = &error
                    && self.policy.goes_on_after(*exit)
                {
                    let planned = &self.commands[command];
                    let line =
                        crate::app::shared::command_failed(&planned.at(), &planned.text, message);
                    self.eprint(&name, &line);
                }
            }
            SessionUpdate::Stopped {
                server,
                exit: Exit::Interrupted,
                ..
            } => {
                // Said once for all servers at the end, not once per server.
                self.stopped.not_sent += (self.commands.len() - self.accounted[server]) as u64;
                if self.layout == Layout::Group {
                    let block = group_block(&self.names[server], &self.blocks[server]);
                    self.emit(&block);
                }
                self.end(server);
            }
            SessionUpdate::Stopped {
                server,
                message,
                exit,
            } => {
                self.exits[server] = self.exits[server].max(exit);
                let name = self.names[server].clone();
                self.eprint(&name, &message);
                if self.layout == Layout::Group {
                    let block = group_block(&name, &self.blocks[server]);
                    self.emit(&block);
                }
                self.failures.push((server, self.exits[server]));
                self.end(server);
            }
            SessionUpdate::Finished { server } => {
                if self.exits[server] != Exit::Success {
                    self.failures.push((server, self.exits[server]));
                }
                if self.layout == Layout::Group {
                    let block = group_block(&self.names[server], &self.blocks[server]);
                    self.emit(&block);
                }
                self.end(server);
            }
        }
    }

    fn format(
        &self,
        server: usize,
        command: usize,
        raw: &[u8],
        elapsed: Duration,
        error: &Option<(String, Exit)>,
    ) -> String {
        {
            let planned = &self.commands[command];
            let mut buf = Vec::with_capacity(256);
            self.printer.format_from(
                &Record {
                    command: &planned.text,
                    raw,
                    ok: error.is_none(),
                    error: error.as_ref().map(|(m, _)| m.as_str()),
                    reason: error.as_ref().and_then(|(_, e)| e.reason()),
                    elapsed,
                    origin: planned.origin.as_ref().map(|(f, l)| (f.as_str(), *l)),
                },
                Some(&self.names[server]),
                &mut buf,
            );
            let mut text = String::new();
            if self.layout != Layout::Json {
                let _ = self.policy.echo(&planned.text, |c| {
                    text.push_str(&format!("> {c}\n"));
                    Ok::<(), std::convert::Infallible>(())
                });
            }
            text.push_str(&String::from_utf8_lossy(&buf));
            text
        }
    }

    /// The end: clears the progress line, says what a `signal` stopped (once for every server:
    /// `interrupted by Ctrl-C: 12 commands ran on 3 servers, 2 were in flight and may or may
    /// not have run ([a] 'say hi', [b] x.mcfunction:3: 'give'), 7 not sent`) and, for people
    /// watching (a terminal), prints the summary. Each failed server has had its one error
    /// line already; scripts get nothing more. Returns the exit status of a stopped run.
    fn finish(&mut self, signal: Option<Signal>) -> Option<Exit> {
        self.clear();
        let stopped = signal.map(|signal| {
            let mut shown = std::mem::take(&mut self.interrupted);
            shown.sort_unstable();
            let mut stopped = Interrupted {
                signal,
                ..std::mem::take(&mut self.stopped)
            };
            stopped.in_flight = shown
                .iter()
                .map(|&(server, command)| InFlight {
                    server: Some(self.names[server].clone()),
                    at: self.commands[command].at(),
                    command: self.commands[command].text.clone(),
                })
                .collect();
            print::stderr!("rcon: error: {}", interrupted::line(&stopped));
            stopped.exit()
        });
        if self.progress_wanted && self.total > 1 {
            print::stderr!("rcon: {}", self.summary());
        }
        stopped
    }

    /// `summary: 9500 ok, 500 failed (500 timeout) in 2.1s; slowest: a 2.0s, b 2.0s, c 1.9s`.
    fn summary(&self) -> String {
        let failed = self.failures.len();
        let mut reasons: BTreeMap<&str, usize> = BTreeMap::new();
        for (_, exit) in &self.failures {
            *reasons.entry(exit.reason().unwrap_or("other")).or_default() += 1;
        }
        let mut text = format!("summary: {} ok", self.total.saturating_sub(failed));
        if failed > 0 {
            let by: Vec<String> = reasons.iter().map(|(r, n)| format!("{n} {r}")).collect();
            text.push_str(&format!(", {failed} failed ({})", by.join(", ")));
        }
        text.push_str(&format!(
            " in {}",
            rconsole::format_duration(self.begun.elapsed())
        ));
        let mut slow: Vec<(Duration, usize)> = self
            .took
            .iter()
            .enumerate()
            .filter_map(|(i, t)| t.map(|t| (t, i)))
            .collect();
        slow.sort_by(|a, b| b.0.cmp(&a.0).then(a.1.cmp(&b.1)));
        if slow.len() > 1 {
            let top: Vec<String> = slow
                .iter()
                .take(3)
                .map(|(t, i)| format!("{} {}", self.names[*i], rconsole::format_duration(*t)))
                .collect();
            text.push_str(&format!("; slowest: {}", top.join(", ")));
        }
        text
    }
}

/// The message for a server that stopped at `index` with `why`: the one wording of a stopped
/// run ([`commands::not_sent_after`]), where only a command the server failed is one
/// `--keep-going` goes past (a lost connection ends a server of the loop).
fn stopped_message(commands: &[Planned], index: usize, why: &str, exit: Exit) -> String {
    let planned = &commands[index];
    let message = crate::app::shared::command_failed(&planned.at(), &planned.text, why);
    let later = commands.len() - index - 1;
    let passable = exit == Exit::CommandFailed;
    commands::not_sent_after(&message, (true, later), Rest::Nothing, passable)
}

/// One server's progress through the commands, on the event loop's thread.
struct Progress {
    name: String,
    /// Where a console's own messages go (`--messages`).
    sink: Option<rconsole::consoles::MessageSink>,
    /// The next command to send.
    next: usize,
    /// Stop after the command under way (a failure without --keep-going).
    stop: bool,
}

/// Fan-out's plan on the event loop: every command in turn on each server under the
/// one-server policy, results to the printing thread.
struct FleetHandler<'c> {
    states: Vec<Progress>,
    commands: &'c [Planned],
    policy: Policy,
    tx: mpsc::Sender<SessionUpdate>,
}

impl FleetHandler<'_> {
    fn send(&self, update: SessionUpdate) {
        let _ = self.tx.send(update);
    }

    fn send_output(&self, t: usize, command: usize, raw: Vec<u8>, took: Duration, error: Failure) {
        self.send(SessionUpdate::Output {
            server: t,
            command,
            raw,
            elapsed: took,
            error,
        });
    }

    /// A command failed (`error`); `fatal` ends the server.
    fn command_failed(
        &mut self,
        t: usize,
        (i, took): (usize, Duration),
        raw: Vec<u8>,
        (why, exit): (String, Exit),
        fatal: bool,
    ) {
        self.send_output(t, i, raw, took, Some((why.clone(), exit)));
        if fatal {
            self.states[t].stop = true;
            self.send(SessionUpdate::Stopped {
                server: t,
                message: stopped_message(self.commands, i, &why, exit),
                exit,
            });
        }
    }
}

/// Why a command failed, and the exit status that gives.
type Failure = Option<(String, Exit)>;

impl LoopPlan for FleetHandler<'_> {
    type What = usize;

    fn next(&mut self, t: usize) -> Move<usize> {
        let s = &mut self.states[t];
        if s.stop || s.next >= self.commands.len() {
            return Move::Close;
        }
        let i = s.next;
        s.next += 1;
        let text = self.commands[i].text.clone();
        Move::Send {
            what: i,
            then_close: is_stop_command(&text),
            last: s.next == self.commands.len(),
            text,
            not_before: self.policy.not_before(i),
        }
    }

    /// Server `t`'s command is answered: its output, or a parse error's failure.
    fn answered(&mut self, t: usize, i: usize, raw: Vec<u8>, took: Duration) {
        if is_parse_error(&raw) {
            let fatal = !self.policy.goes_on_after(Exit::CommandFailed);
            let why = (PARSE_ERROR.to_string(), Exit::CommandFailed);
            self.command_failed(t, (i, took), raw, why, fatal);
        } else {
            self.send_output(t, i, raw, took, None);
        }
    }

    /// Server `t` failed: its command under way, or (before any) its connect or login.
    fn failed(&mut self, t: usize, under: Under<usize>, raw: Vec<u8>, e: rconsole::Error) {
        let exit = Exit::from_error(&e);
        let why = exit::chain(&e);
        if let Some(under) = under {
            return self.command_failed(t, under, raw, (why, exit), true);
        }
        // As with one server: the first command's record carries the error; nothing was
        // sent, so every command is counted (at least one: the loop asked for it), and
        // --keep-going goes past none of them.
        let first = self.states[t].next;
        let n = self.commands.len() - first;
        self.send_output(t, first, raw, Duration::ZERO, Some((why.clone(), exit)));
        self.send(SessionUpdate::Stopped {
            server: t,
            message: commands::not_sent_after(&why, (false, n), Rest::Nothing, false),
            exit,
        });
    }

    /// A signal: server `t`'s command under way (if any) is in doubt, the rest not sent.
    fn cancelled(&mut self, t: usize, under: Under<usize>, raw: Vec<u8>) {
        let why = "interrupted".to_string();
        if let Some((i, took)) = under {
            self.send_output(t, i, raw, took, Some((why.clone(), Exit::Interrupted)));
        }
        self.states[t].stop = true;
        self.send(SessionUpdate::Stopped {
            server: t,
            message: why,
            exit: Exit::Interrupted,
        });
    }

    fn started(&mut self, t: usize) {
        self.send(SessionUpdate::Started { server: t });
    }

    fn retrying(&mut self, t: usize, _: &Retries, error: &rconsole::Error, delay: Duration) {
        self.send(SessionUpdate::Warning(format!(
            "[{}] {}; retrying in {}",
            self.states[t].name,
            exit::chain(error),
            rconsole::format_duration(delay)
        )));
    }

    fn message(&mut self, t: usize, text: String) {
        if let Some(sink) = &self.states[t].sink {
            sink(&text);
        }
    }

    fn finished(&mut self, t: usize) {
        // A server stopped by a failure was reported as such.
        if !self.states[t].stop {
            self.send(SessionUpdate::Finished { server: t });
        }
    }
}

/// A `[name]` line followed by the server's collected output.
fn group_block(name: &str, body: &str) -> String {
    format!("[{name}]\n{body}")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn prefixes_every_line() {
        assert_eq!(prefixed("lobby", "a\nb"), "[lobby] a\n[lobby] b\n");
        assert_eq!(prefixed("lobby", "a\n"), "[lobby] a\n");
        assert_eq!(prefixed("lobby", ""), "[lobby]\n");
        assert_eq!(prefixed("s", "a\n\nb"), "[s] a\n[s]\n[s] b\n");
    }
}
