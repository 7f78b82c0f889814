//! `--mgmt` method calls on the event loop ([`fleet::run`]: each server's connection a
//! [`MgmtMachine`], one thread however many servers): one server's calls ([`single`]: `-c` and
//! the command words, or method lines read from stdin one at a time) and several servers'
//! (`-s a,b`, a group, `--all`: [`run`], the same calls on each at once). Each answer is
//! printed through the one [`MgmtPrinter`]; with several servers labelled as RCON fan-out
//! labels it (every line `[NAME] ...`; with `--json` a `server` field), a failure is
//! `rcon: error: [NAME] ...` on stderr, and the exit status the worst of all. A server's method
//! that fails is reported and the next one runs; a server that cannot be reached or refuses
//! the secret stops there. Each server's URL, trust and secret come from its own profile (the
//! secrets are read first, one server after another, so a prompt never races another). One
//! plan of the loop's one handler ([`Calls`]) applies the runner policy
//! ([`crate::app::runner::commands`]'s rules: `--keep-going`, `--delay`, `--echo`, `--retry`
//! for the connect); Ctrl-C and SIGTERM stop every server's calls, and one line says what ran
//! on all of them.

use std::io::BufRead;
use std::time::{Duration, Instant};

use rconsole::fleet::{self, FleetTarget};
use rconsole::mgmt::Schema;
use rconsole::mgmt::command::CommandMethod;
use rconsole::mgmt::machine::{MgmtMachine, answer, call_line};

use crate::app::exit::{Exit, fail};
use crate::app::interrupt::{Signal, Stop};
use crate::app::mode::mgmt::{self, Called, MgmtPrinter, MgmtTarget};
use crate::app::print::interrupted::{InFlight, Interrupted};
use crate::app::print::output::error;
use crate::app::resolve::plan::{FollowOptions, MgmtPlan, SessionPlan, Timing};
use crate::app::resolve::settings::Settings;
use crate::app::runner::commands::{self, Halted, Rest};
use crate::app::runner::follow as looped;
use crate::app::runner::looped::{LoopPlan, LoopTargets, Looped, Move, Runner, Sent, Under};
use crate::app::runner::policy::{Policy, Tally};
use crate::app::source::follow::events::Emitter;
use crate::app::source::schedule;

/// Runs the method calls on every server.
pub fn run(plan: &MgmtPlan, servers: Vec<(String, Settings)>) -> anyhow::Result<Exit> {
    // What several servers cannot do was refused while resolving (plan::mgmt_fanout_plan).
    let count = servers.len();
    let (mut targets, mut kept) = (Vec::with_capacity(count), Vec::with_capacity(count));
    let mut states = Vec::with_capacity(count);
    let mut early = Vec::new();
    for (name, settings) in servers {
        let made = mgmt::resolve(plan, &settings).and_then(|mut t| {
            t.name = name.clone();
            on_the_loop(&t, &settings)
        });
        match made {
            Ok((target, looped)) => {
                targets.push(target);
                kept.push(looped);
                states.push(Server::new(&name, plan.json, true));
            }
            Err(e) => early.push((name, e)),
        }
    }
    let mut worst = Exit::Success;
    for (name, e) in early {
        error(Some(&name), &format!("{e:#}"));
        worst = worst.max(crate::app::exit::exit_for(&e));
    }
    match drive(
        plan,
        (targets, kept),
        states,
        mgmt::calls(plan),
        Some(count),
    )? {
        One::Ran(exit) => Ok(worst.max(exit)),
        One::Commands => unreachable!("several servers' calls are never handed on"),
    }
}

/// What [`drive`] came to.
enum One {
    /// The calls ran: the run's exit status.
    Ran(Exit),
    /// One server that runs console commands (issue 42), and these are console commands (words
    /// that name no method, or lines from stdin): RCON's session runs them
    /// ([`mgmt::run_commands`]), on a connection of its own.
    Commands,
}

/// `rcon --mgmt ...` for one server: the method calls given (`-c` and the words), else the
/// console (a terminal or `-i`) or `-f` files ([`mgmt::interactive`]), else method lines from
/// stdin, each read when the last is done. The calls and lines run here as several servers'
/// do, printed without labels; a failure that ends the run is the one `rcon: error: ...` line.
/// A line from stdin that matches no method or that the server refuses is reported as
/// `stdin:N` and the next one runs; anything else stops the run unless `--keep-going`, with
/// the rest of stdin unread.
pub fn single(plan: &MgmtPlan, rcon: SessionPlan) -> anyhow::Result<Exit> {
    use std::io::IsTerminal;
    let calls = mgmt::calls(plan);
    let target = mgmt::resolve(plan, &rcon.settings)?;
    let console = calls.is_empty() && (std::io::stdin().is_terminal() || plan.interactive);
    if console || !rcon.files.is_empty() {
        return mgmt::interactive(target, plan, rcon);
    }
    let (made, looped) = on_the_loop(&target, &rcon.settings)?;
    let server = Server::new(&target.name, plan.json, false);
    match drive(plan, (vec![made], vec![looped]), vec![server], calls, None)? {
        One::Ran(exit) => Ok(exit),
        One::Commands => mgmt::run_commands(target, None, rcon),
    }
}

/// Runs `calls` (none: stdin's lines, one server) on every target under the policy; `count`:
/// several servers, this many in all.
fn drive(
    plan: &MgmtPlan,
    (targets, kept): LoopTargets,
    servers: Vec<Server>,
    calls: Vec<Vec<String>>,
    count: Option<usize>,
) -> anyhow::Result<One> {
    // Ctrl-C and SIGTERM stop every server's calls; one line then says what ran on all.
    let stop = Stop::catch();
    let cancel = stop.as_ref().map_or_else(fleet::Alarm::new, Stop::alarm);
    let stdin = (count.is_none() && calls.is_empty()).then(|| Stdin {
        lines: std::io::stdin().lock().lines(),
        at: Vec::new(),
        read: 0,
        done: false,
    });
    let lines: Vec<String> = calls.iter().map(|w| w.join(" ")).collect();
    let handler = Calls {
        servers,
        calls,
        lines,
        stdin,
        several: count.is_some(),
        policy: Policy::from(&plan.policy),
        stop: stop.as_ref(),
        cancel: cancel.clone(),
        broken: None,
        commands: false,
    };
    let opts = fleet::FleetOptions {
        retries: plan.policy.retry,
        backoff: crate::app::runner::policy::RETRY_BACKOFF,
        cancel: Some(cancel),
        ..fleet::FleetOptions::default()
    };
    let handler = Runner::new(handler, kept, plan.policy.retry).run(targets, opts)?;
    if let Some(e) = handler.broken {
        return Err(e);
    }
    if handler.commands {
        return Ok(One::Commands);
    }
    let nothing = handler.stdin.is_some()
        && handler.calls.is_empty()
        && handler.servers.iter().all(|s| s.schema.is_some());
    let ended = handler.outcome(count);
    if nothing && ended.is_ok() {
        crate::app::print::output::warning("no methods on stdin; nothing was called");
    }
    ended.map(One::Ran)
}

/// A resolved server as the loop's target: its host and port (or its tunnel, or its Unix
/// socket) and its machine; and what the loop's handler keeps of it.
fn on_the_loop(target: &MgmtTarget, settings: &Settings) -> anyhow::Result<(FleetTarget, Looped)> {
    let endpoint = &target.endpoint;
    let timeout = target.opts.timeout;
    let tunnel =
        crate::app::runner::fanout::process_connector(settings, &endpoint.host, endpoint.port)
            .map(|c| fleet::Tunnel::new(&c, timeout));
    let machine = MgmtMachine::new(endpoint.clone(), target.opts.clone()).map_err(mgmt::error)?;
    let made = FleetTarget {
        machine: Some(Box::new(machine)),
        tunnel,
        unix: endpoint.unix.clone(),
        config: rconsole::engine::Options {
            timeout,
            ..Default::default()
        },
        ..FleetTarget::rcon(
            &endpoint.host,
            endpoint.port,
            rconsole::Password::new(String::new()),
            Default::default(),
        )
    };
    let looped = Looped {
        name: target.name.clone(),
        describe: endpoint.url(),
        observer: std::sync::Arc::clone(&made.config.observer),
        protocol: made.protocol,
    };
    Ok((made, looped))
}

/// The call sent to a server, waiting for its answer.
struct UnderWay {
    /// Its index in the calls.
    index: usize,
    method: String,
    params: Vec<serde_json::Value>,
    command: Option<rconsole::mgmt::command::CommandMethod>,
    /// It went out (else the connection it was for was gone: no record of it is printed).
    sent: bool,
}

/// One server's progress through the calls.
struct Server {
    out: MgmtPrinter,
    name: String,
    /// From `rpc.discover`, the first call on the connection.
    schema: Option<Schema>,
    /// The next call to send.
    next: usize,
    /// `--delay` waited before the next call.
    waited: bool,
    /// The answer to `rpc.discover`, until it is read.
    answer: Option<String>,
    tally: Tally,
    exit: Exit,
    /// Done with: its failure is reported.
    over: bool,
    /// What a signal stopped here.
    stopped: Option<Interrupted>,
}

impl Server {
    /// `several`: one of several servers, its lines labelled with `name`.
    fn new(name: &str, json: bool, several: bool) -> Server {
        Server {
            out: MgmtPrinter::new(name, json, several),
            name: name.to_string(),
            schema: None,
            next: 0,
            waited: false,
            answer: None,
            tally: Tally::default(),
            exit: Exit::Success,
            over: false,
            stopped: None,
        }
    }
}

/// One server's method lines from stdin, read one at a time when the last one is done.
struct Stdin {
    lines: std::io::Lines<std::io::StdinLock<'static>>,
    /// Each call's line number.
    at: Vec<usize>,
    /// Lines read (blank lines and comments too).
    read: usize,
    /// Nothing more to read.
    done: bool,
}

/// The loop's side: every server's calls in order, under the policy.
struct Calls<'a> {
    servers: Vec<Server>,
    /// The calls, as words: given, or the lines read from stdin so far.
    calls: Vec<Vec<String>>,
    /// Each call as one line, as `--echo` and the messages show it.
    lines: Vec<String>,
    /// With no calls given: one server's method lines from stdin.
    stdin: Option<Stdin>,
    /// Several servers: what is printed is labelled with each one's name.
    several: bool,
    policy: Policy,
    stop: Option<&'a Stop>,
    /// Set by a signal, or here when stdout is gone: ends every server.
    cancel: fleet::Alarm,
    /// stdout failed, or stdin could not be read: the run ends with this.
    broken: Option<anyhow::Error>,
    /// One server that runs console commands, and these are console commands: RCON's session
    /// runs them ([`One::Commands`]).
    commands: bool,
}

impl Calls<'_> {
    /// The run ends with `e` (stdout gone, stdin unreadable).
    fn end(&mut self, e: anyhow::Error) {
        self.broken.get_or_insert(e);
        self.cancel.raise();
    }

    /// Reads stdin up to the next method line and adds it to the calls; `false` at its end
    /// (and always without stdin).
    fn read_line(&mut self) -> bool {
        let Some(input) = self.stdin.as_mut() else {
            return false;
        };
        while !input.done {
            let Some(line) = input.lines.next() else {
                input.done = true;
                break;
            };
            input.read += 1;
            let line = match line {
                Ok(line) => line,
                Err(e) => {
                    input.done = true;
                    self.end(e.into());
                    return false;
                }
            };
            let t = line.trim();
            if t.is_empty() || t.starts_with('#') {
                continue;
            }
            input.at.push(input.read);
            self.calls.push(mgmt::split_words(t));
            self.lines.push(t.to_string());
            return true;
        }
        false
    }

    /// Whether `t` has a call left to run (stdin is read up to it).
    fn more(&mut self, t: usize) -> bool {
        self.servers[t].next < self.calls.len() || self.read_line()
    }

    /// What a finished call (its index `i`, `console`: a console command) came to from what
    /// printing its result gave, under the policy; `false` when the server stops there (its
    /// failure reported).
    fn done(&mut self, t: usize, i: usize, console: bool, printed: anyhow::Result<()>) -> bool {
        if self.stdin.is_some() {
            return self.line_done(t, i, printed);
        }
        let s = &self.servers[t];
        let ran = s.out.ran(&self.lines[i], &self.calls[i], console, printed);
        self.account(t, ran)
    }

    /// What a finished call or a failure came to, under the policy; `false` when the server
    /// stops there (its failure reported).
    fn account(&mut self, t: usize, ran: std::io::Result<commands::Ran>) -> bool {
        let ran = match ran {
            Ok(ran) => ran,
            Err(e) => {
                self.end(e.into());
                return false;
            }
        };
        let s = &mut self.servers[t];
        if ran.sent {
            s.tally.sent += 1;
        }
        let Some(failure) = ran.failure else {
            return true;
        };
        s.tally.failed += 1;
        s.exit = s.exit.max(failure.exit);
        if self.policy.goes_on_after(failure.exit) || failure.goes_on {
            error(None, &failure.message);
            return true;
        }
        let later = self.calls.len() - s.next + usize::from(!ran.sent);
        error(None, &mgmt::stopped_here(&failure, later));
        s.over = true;
        false
    }

    /// [`Calls::done`] for a line from stdin: a failure is `stdin:N: ...`; a line the server
    /// refused or that names no method (never sent) is reported and the next one runs;
    /// anything else stops the lines unless `--keep-going`, its error then the run's.
    fn line_done(&mut self, t: usize, i: usize, printed: anyhow::Result<()>) -> bool {
        let s = &mut self.servers[t];
        let Err(e) = printed else {
            s.tally.sent += 1;
            return true;
        };
        if crate::app::print::output::is_broken_pipe(&e) {
            self.end(e);
            return false;
        }
        let exit = crate::app::exit::exit_for(&e);
        let refused = matches!(exit, Exit::CommandFailed | Exit::Usage);
        s.tally.sent += u64::from(exit != Exit::Usage);
        s.tally.failed += 1;
        let at = self.stdin.as_ref().map_or(0, |input| input.at[i]);
        error(None, &format!("stdin:{at}: {e:#}"));
        if refused || self.policy.goes_on_after(exit) {
            s.exit = s.exit.max(if refused { Exit::CommandFailed } else { exit });
            return true;
        }
        error(None, &format!("{e:#}"));
        s.exit = exit;
        s.over = true;
        false
    }

    /// The call under way ended with `result` (its answer, or what ended the connection, whose
    /// failure it is: with `--json` its record says so too).
    fn finish(
        &mut self,
        t: usize,
        (w, took): (UnderWay, Duration),
        result: Result<String, &rconsole::Error>,
    ) -> bool {
        let s = &mut self.servers[t];
        let console = w.command.is_some();
        let (result, lost) = match result {
            Ok(text) => (answer(&w.method, &text), None),
            Err(e) => {
                // The same message and class, for the record.
                let copy = rconsole::Error::Management {
                    message: e.to_string(),
                    kind: e.kind(),
                };
                let lost = failure(e, self.several);
                (Err(rconsole::mgmt::MgmtError::Connect(copy)), Some(lost))
            }
        };
        let printed = match (w.sent, lost) {
            (false, Some(lost)) => Err(lost),
            (true, lost) => {
                let called = Called {
                    result,
                    method: w.method,
                    params: w.params,
                    elapsed: took,
                    command: w.command,
                };
                let printed = s.out.called(&self.calls[w.index], called);
                match (printed, lost) {
                    (Err(e), _) if crate::app::print::output::is_broken_pipe(&e) => Err(e),
                    (_, Some(lost)) => Err(lost),
                    (printed, None) => printed,
                }
            }
            (false, None) => Ok(()),
        };
        self.done(t, w.index, console, printed)
    }

    /// Takes the server's next call as under way without sending it: the connection it was to
    /// go out on is gone (lost between calls, or not made again), which is its failure, as a
    /// call finds it. `None` when none is left.
    fn take_next(&mut self, t: usize) -> Option<UnderWay> {
        if !self.more(t) {
            return None;
        }
        let s = &mut self.servers[t];
        let index = s.next;
        s.next += 1;
        s.tally.lines += 1;
        s.waited = false;
        if let Err(e) = self.policy.echo(&self.lines[index], |c| s.out.echo(c)) {
            self.end(e.into());
            return None;
        }
        let command = s.schema.as_ref().and_then(|schema| {
            mgmt::resolve_words(schema, &self.calls[index])
                .ok()
                .and_then(|(_, _, c)| c)
        });
        Some(UnderWay {
            index,
            method: String::new(),
            params: Vec::new(),
            command,
            sent: false,
        })
    }

    /// The server's next call, after `--delay`; `methods` and `api` answered here.
    fn next_call(&mut self, t: usize) -> Move<What> {
        loop {
            let s = &self.servers[t];
            if s.over || s.stopped.is_some() || self.broken.is_some() {
                return Move::Close;
            }
            if s.next >= self.calls.len() {
                if !self.read_line() {
                    return Move::Close;
                }
                // A signal while stdin was read: the line read was not sent.
                if let Some(signal) = self.stop.and_then(Stop::received) {
                    self.halt(t, signal, None);
                    return Move::Close;
                }
            }
            let s = &mut self.servers[t];
            let i = s.next;
            // Between the calls sent; a line from stdin waits after any line before it.
            let after = match self.stdin {
                Some(_) => i > 0,
                None => s.tally.sent > 0,
            };
            if let Some(until) = self.policy.not_before(usize::from(after))
                && !s.waited
            {
                s.waited = true;
                return Move::Wait(until);
            }
            s.waited = false;
            s.next += 1;
            s.tally.lines += 1;
            if let Err(e) = self.policy.echo(&self.lines[i], |c| s.out.echo(c)) {
                self.end(e.into());
                return Move::Close;
            }
            let words = &self.calls[i];
            let schema = s.schema.as_ref().expect("read first");
            if let Some(done) = s.out.local(schema, words) {
                if !self.done(t, i, false, done) {
                    return Move::Close;
                }
                continue;
            }
            // Given calls were checked before the first was sent; a line from stdin that
            // names no method is reported, and the next one runs.
            let (method, params, command) = match mgmt::resolve_words(schema, words) {
                Ok(resolved) => resolved,
                Err(e) => {
                    if !self.done(t, i, false, Err(mgmt::error(e))) {
                        return Move::Close;
                    }
                    continue;
                }
            };
            let text = call_line(&method, &params);
            let call = UnderWay {
                index: i,
                method,
                params,
                command,
                sent: true,
            };
            return Move::send(Some(call), text);
        }
    }

    /// The answer to `rpc.discover`: the schema, and every call given checked against it.
    /// One server that runs console commands hands them to RCON's session instead.
    fn discovered(&mut self, t: usize, text: &str) -> Move<What> {
        let schema = answer("rpc.discover", text).and_then(|doc| Schema::from_discover(&doc));
        let schema = match schema {
            Ok(schema) => schema,
            Err(e) => return self.over(t, mgmt::error(e)),
        };
        if !self.several && mgmt::runs_commands(&schema, &self.calls, self.stdin.is_some()) {
            self.commands = true;
            return Move::Close;
        }
        if let Err(e) = mgmt::check_calls(&schema, &self.servers[t].out, &self.calls) {
            return self.over(t, e);
        }
        self.servers[t].schema = Some(schema);
        self.next_call(t)
    }

    /// The server is done with, for `e`: reported, and its connection closed.
    fn over(&mut self, t: usize, e: anyhow::Error) -> Move<What> {
        let s = &mut self.servers[t];
        error(None, &format!("{e:#}"));
        s.exit = s.exit.max(crate::app::exit::exit_for(&e));
        s.over = true;
        Move::Close
    }

    /// A signal stopped the server's calls: what it stopped.
    fn halt(&mut self, t: usize, signal: Signal, in_flight: Option<usize>) {
        let s = &mut self.servers[t];
        // Sent and not answered: in flight; else the next was not sent.
        let next = in_flight.map_or(s.next, |i| i + 1);
        let stopped = match &self.stdin {
            None => {
                let server = self.several.then_some(s.name.as_str());
                let halted = Halted {
                    signal,
                    in_flight,
                    next,
                };
                halted.interrupted(&self.lines, Rest::Nothing, &s.tally, server)
            }
            Some(input) => Interrupted {
                signal,
                ran: s.tally.sent,
                in_flight: in_flight
                    .map(|i| InFlight {
                        server: None,
                        at: format!("stdin:{}", input.at[i]),
                        command: self.lines[i].clone(),
                    })
                    .into_iter()
                    .collect(),
                not_sent: (self.calls.len() - next) as u64,
                unread: Some("stdin".into()),
                ..Interrupted::default()
            },
        };
        s.stopped = Some(stopped);
    }

    /// Every server's exit status, the worst; or what a signal stopped on all of them
    /// (`count`: of several servers).
    fn outcome(self, count: Option<usize>) -> anyhow::Result<Exit> {
        let mut worst = Exit::Success;
        let mut stopped: Option<Interrupted> = None;
        let mut ran = 0;
        for s in self.servers {
            worst = worst.max(s.exit);
            ran += s.tally.sent;
            let Some(this) = s.stopped else { continue };
            match stopped.as_mut() {
                None => stopped = Some(this),
                Some(all) => {
                    all.in_flight.extend(this.in_flight);
                    all.not_sent += this.not_sent;
                }
            }
        }
        match stopped {
            Some(mut all) => {
                all.ran = ran;
                all.servers = count;
                all.in_flight.sort();
                Err(all.error())
            }
            None => Ok(worst),
        }
    }
}

/// A failure of the loop's as the application error it is (exit status from its class; a
/// refused secret, and with one server an untrusted certificate, with the hint the
/// management errors give: [`mgmt::error`]).
fn failure(e: &rconsole::Error, several: bool) -> anyhow::Error {
    let exit = Exit::from_error(e);
    let hint = match exit {
        Exit::Login => mgmt::UNAUTHORIZED_HINT,
        _ if !several && mgmt::untrusted(e) => mgmt::UNTRUSTED_HINT,
        _ => "",
    };
    fail(exit, format!("{e}{hint}"))
}

/// A call under way: `None` is `rpc.discover`, the first on the connection.
type What = Option<UnderWay>;

impl LoopPlan for Calls<'_> {
    type What = What;

    fn next(&mut self, t: usize) -> Move<What> {
        let s = &mut self.servers[t];
        if s.schema.is_none() {
            return match s.answer.take() {
                Some(text) => self.discovered(t, &text),
                None => Move::send(None, "rpc.discover".into()),
            };
        }
        self.next_call(t)
    }

    fn answered(&mut self, t: usize, what: What, raw: Vec<u8>, took: Duration) {
        let text = String::from_utf8_lossy(&raw).into_owned();
        match what {
            Some(call) => _ = self.finish(t, (call, took), Ok(text)),
            None => self.servers[t].answer = Some(text),
        }
    }

    fn cancelled(&mut self, t: usize, under: Under<What>, _: Vec<u8>) {
        if self.broken.is_some() || self.servers[t].stopped.is_some() {
            return;
        }
        if let Some(signal) = self.stop.and_then(Stop::received) {
            let in_flight = under.and_then(|(w, _)| w).map(|w| w.index);
            self.halt(t, signal, in_flight);
        }
    }

    fn failed(&mut self, t: usize, under: Under<What>, _: Vec<u8>, e: rconsole::Error) {
        if let Some((Some(call), took)) = under {
            self.finish(t, (call, took), Err(&e));
            return;
        }
        let s = &mut self.servers[t];
        if !s.over && !self.commands && self.broken.is_none() {
            s.over = true;
            let e = failure(&e, self.several);
            error(self.several.then_some(s.name.as_str()), &format!("{e:#}"));
            s.exit = s.exit.max(crate::app::exit::exit_for(&e));
        }
    }

    /// A connection lost under a call is that call's failure; lost between calls (or not made
    /// again), the next call's, as that call finds it. With `--keep-going` the call after it
    /// connects again, as over RCON.
    fn lost(&mut self, t: usize, under: &mut Sent<What>, e: &rconsole::Error) -> Option<Instant> {
        let s = &self.servers[t];
        if matches!(e, rconsole::Error::Cancelled)
            || s.schema.is_none()
            || s.over
            || s.stopped.is_some()
            || self.broken.is_some()
        {
            return None;
        }
        let call = match under.take() {
            Some((Some(call), sent)) => (call, sent.elapsed()),
            _ => (self.take_next(t)?, Duration::ZERO),
        };
        if !self.finish(t, call, Err(e)) {
            return None;
        }
        if self.more(t) {
            return Some(Instant::now());
        }
        // Its last call failed, and said so.
        self.servers[t].over = true;
        None
    }
}

/// `--follow --mgmt` on one server or several: their notifications on the event loop
/// ([`looped::run_targets`], as the consoles' pushed messages), lines labelled `[NAME]` when
/// there are several. Every server is connected to first, so one that cannot be reached fails
/// the run at once; later losses are connected again, and a quiet connection is checked with a
/// small call every [`looped::MGMT_CHECK`].
pub fn follow(
    plan: &MgmtPlan,
    options: &FollowOptions,
    servers: Vec<(String, Settings)>,
) -> anyhow::Result<Exit> {
    crate::app::runner::fanout::hold_every_connection(&servers, "--follow")?;
    let several = servers.len() > 1;
    let emitter = Emitter::new(options, several);
    let watch = looped::Watch::Notifications(options.log_level);
    looped::run_targets(looped_targets(plan, servers)?, watch, &emitter)
}

/// Every server resolved as the loop's target with its machine, and what a handler keeps of
/// it; named by its profile when there are several.
fn looped_targets(
    plan: &MgmtPlan,
    servers: Vec<(String, Settings)>,
) -> anyhow::Result<LoopTargets> {
    let several = servers.len() > 1;
    let mut targets = Vec::with_capacity(servers.len());
    let mut kept = Vec::with_capacity(servers.len());
    for (name, settings) in servers {
        let mut target = mgmt::resolve(plan, &settings)?;
        if several {
            target.name = name;
        }
        let (made, looped) = on_the_loop(&target, &settings)?;
        kept.push(looped);
        targets.push(made);
    }
    Ok((targets, kept))
}

/// `rcon --mgmt` with `--countdown`, `--every` or `--if`: RCON's timed plan on the event loop
/// ([`runner::timed`](crate::app::runner::timed)) with each server's commands as calls ([`Timed`]). Each secret is read
/// first, one server after another (a prompt never races another); then every server connects
/// and reads `rpc.discover` at once: a planned command a server's schema refuses ends the run
/// with nothing sent, and a server that cannot be reached takes no part.
pub fn timed(
    plan: &MgmtPlan,
    timing: &Timing,
    servers: Vec<(String, Settings)>,
) -> anyhow::Result<Exit> {
    let lines: Vec<String> = mgmt::calls(plan).iter().map(|w| w.join(" ")).collect();
    let (targets, kept) = looped_targets(plan, servers)?;
    let count = kept.len();
    let mut timed = Timed {
        planned: schedule::Schedule::new(timing, &lines).planned(),
        names: kept.iter().map(|k| k.name.clone()).collect(),
        schemas: (0..count).map(|_| None).collect(),
        under_way: (0..count).map(|_| None).collect(),
    };
    let retries = plan.policy.retry;
    crate::app::runner::timed::run_targets(timing, (targets, kept), &lines, &mut timed, retries)
}

/// The management protocol's side of a timed run: `rpc.discover` first (every planned
/// command checked against it), a step's words as the call they name, `--if`'s count from
/// `minecraft:players`, and an answer read as one server's call is: a bare `true` (the
/// server's "done", as to `server system_message`) prints nothing, as RCON's `say` answers
/// nothing, so a countdown's announcements print the same over both protocols.
struct Timed {
    /// Every command the plan can send.
    planned: Vec<String>,
    names: Vec<String>,
    /// Each server's, from its `rpc.discover`.
    schemas: Vec<Option<Schema>>,
    /// The method of each server's call under way, and its command method for a console
    /// command.
    under_way: Vec<Option<(String, Option<CommandMethod>)>>,
}

/// The method `--if` counts the players with.
const PLAYERS: &str = "minecraft:players";

impl crate::app::runner::timed::Speech for Timed {
    fn opening(&self) -> Option<String> {
        Some("rpc.discover".into())
    }

    fn opened(&mut self, t: usize, text: String) -> anyhow::Result<anyhow::Result<()>> {
        let schema = match answer("rpc.discover", &text).and_then(|d| Schema::from_discover(&d)) {
            Ok(schema) => schema,
            Err(e) => return Ok(Err(mgmt::error(e))),
        };
        for c in &self.planned {
            mgmt::resolve_words(&schema, &mgmt::split_words(c)).map_err(|e| {
                mgmt::error(e).context(format!("{}: '{c}': nothing was sent", self.names[t]))
            })?;
        }
        self.schemas[t] = Some(schema);
        Ok(Ok(()))
    }

    fn say(&mut self, t: usize, step: &schedule::Step) -> anyhow::Result<(String, bool)> {
        let (method, params, command) = match step.kind {
            schedule::StepKind::Count => (PLAYERS.to_string(), Vec::new(), None),
            _ => {
                let schema = self.schemas[t].as_ref().expect("discovered first");
                mgmt::resolve_words(schema, &mgmt::split_words(&step.command))
                    .map_err(mgmt::error)?
            }
        };
        let text = call_line(&method, &params);
        self.under_way[t] = Some((method, command));
        Ok((text, false))
    }

    fn heard(
        &mut self,
        t: usize,
        step: &schedule::Step,
        raw: Vec<u8>,
        took: std::time::Duration,
    ) -> schedule::Took {
        let (method, command) = self.under_way[t].take().unwrap_or_default();
        let result = answer(&method, &String::from_utf8_lossy(&raw));
        if step.kind == schedule::StepKind::Count {
            let online = result.map(|r| r.as_array().map_or(0, Vec::len));
            return schedule::Took::Players(online.map_err(mgmt::error));
        }
        let Some(c) = command else {
            let text = result.map(|r| match r {
                serde_json::Value::Bool(true) => String::new(),
                r => mgmt::render(&r),
            });
            return schedule::Took::Answer(text.map_err(mgmt::error), took);
        };
        // A console command's feedback, failed on vanilla's parse error as over RCON.
        let text = match result.and_then(|r| c.text(&r)).map_err(mgmt::error) {
            Ok(t) if crate::app::shared::is_parse_error(t.as_bytes()) => {
                Err(fail(Exit::CommandFailed, t))
            }
            other => other,
        };
        schedule::Took::Answer(text, took)
    }
}
