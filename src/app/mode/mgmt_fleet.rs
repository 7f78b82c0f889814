//! `--mgmt` over several servers (`-s a,b`, a group, `--all`): the same method calls on each
//! server at once, on the event loop ([`fleet::run`]: each server's connection a
//! [`MgmtMachine`], one thread however many servers). Each answer is printed as with one server
//! ([`MgmtPrinter`]), labelled as RCON fan-out labels it (every line `[NAME] ...`; with `--json`
//! a `server` field); a failure is `rcon: error: [NAME] ...` on stderr, and the exit status the
//! worst of all. A server's method that fails is reported and the next one runs (as with one
//! server); a server that cannot be reached or refuses the secret stops there. Each server's URL,
//! trust and secret come from its own profile (the secrets are read first, one server after
//! another, so a prompt never races another). The calls run under the runner policy
//! ([`crate::app::runner::commands`]'s rules: `--keep-going`, `--delay`, `--echo`, `--retry` for
//! the connect); Ctrl-C and SIGTERM stop every server's calls, and one line says what ran on all
//! of them.

use std::time::Instant;

use rconsole::fleet::{self, FleetTarget, Next, Report};
use rconsole::mgmt::Schema;
use rconsole::mgmt::command::CommandMethod;
use rconsole::mgmt::machine::{MgmtMachine, answer, call_line};

use crate::app::exit::{Exit, fail};
use crate::app::mode::mgmt::{self, Called, MgmtPrinter, MgmtTarget};
use crate::app::print::interrupted::Interrupted;
use crate::app::print::output::error;
use crate::app::resolve::plan::{BatchPolicy, FollowOptions, MgmtPlan, Timing};
use crate::app::resolve::settings::Settings;
use crate::app::runner::batch::Tally;
use crate::app::runner::commands::{self, Halted, Rest};
use crate::app::runner::fanout::Looped;
use crate::app::runner::follow as looped;
use crate::app::runner::interrupt::Stop;
use crate::app::source::follow::events::Emitter;
use crate::app::source::schedule;

/// Runs the method calls on every server.
pub fn run(plan: &MgmtPlan, servers: Vec<(String, Settings)>) -> anyhow::Result<Exit> {
    // What several servers cannot do was refused while resolving (plan::mgmt_fanout_plan).
    let calls = mgmt::calls(plan);
    let count = servers.len();
    let mut targets = Vec::with_capacity(servers.len());
    let mut states = Vec::with_capacity(servers.len());
    let mut early = Vec::new();
    for (name, settings) in servers {
        let made = mgmt::resolve(plan, &settings).and_then(|mut t| {
            t.name = name.clone();
            on_the_loop(t, &settings)
        });
        match made {
            Ok(target) => {
                targets.push(target);
                states.push(Server::new(&name, plan.json));
            }
            Err(e) => early.push((name, e)),
        }
    }
    let mut worst = Exit::Success;
    for (name, e) in early {
        error(Some(&name), &format!("{e:#}"));
        worst = worst.max(crate::app::exit::exit_for(&e));
    }
    // Ctrl-C and SIGTERM stop every server's calls; one line then says what ran on all.
    let stop = Stop::catch();
    let cancel = stop.as_ref().map_or_else(fleet::Alarm::new, Stop::alarm);
    let lines: Vec<String> = calls.iter().map(|w| w.join(" ")).collect();
    let mut handler = Calls {
        servers: states,
        calls: &calls,
        lines: &lines,
        policy: &plan.policy,
        stop: stop.as_ref(),
        cancel: cancel.clone(),
        broken: None,
    };
    let opts = fleet::FleetOptions {
        retries: plan.policy.retry,
        backoff: crate::app::runner::wait::RETRY_BACKOFF,
        cancel: Some(cancel),
        ..fleet::FleetOptions::default()
    };
    fleet::run(targets, opts, &mut handler)?;
    if let Some(e) = handler.broken {
        return Err(e.into());
    }
    let mut stopped: Option<Interrupted> = None;
    let mut ran = 0;
    for s in handler.servers {
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
            all.servers = Some(count);
            all.in_flight.sort();
            Err(commands::error(&all))
        }
        None => Ok(worst),
    }
}

/// A resolved server as the loop's target: its host and port (or its tunnel, or its Unix
/// socket) and its machine.
fn on_the_loop(target: MgmtTarget, settings: &Settings) -> anyhow::Result<FleetTarget> {
    let endpoint = target.endpoint;
    let timeout = target.opts.timeout;
    let tunnel =
        crate::app::runner::fanout::process_connector(settings, &endpoint.host, endpoint.port)
            .map(|c| fleet::Tunnel::new(&c, timeout));
    let machine = MgmtMachine::new(endpoint.clone(), target.opts).map_err(mgmt::error)?;
    Ok(FleetTarget {
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
    })
}

/// The call sent to a server, waiting for its answer.
struct UnderWay {
    /// Its index in the calls.
    index: usize,
    method: String,
    params: Vec<serde_json::Value>,
    command: Option<rconsole::mgmt::command::CommandMethod>,
    started: Instant,
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
    under_way: Option<UnderWay>,
    /// The answer to the call under way.
    answer: Option<String>,
    tally: Tally,
    /// Connect attempts retried (`--retry`).
    retried: u32,
    exit: Exit,
    /// Done with: its failure is reported.
    over: bool,
    /// What a signal stopped here.
    stopped: Option<Interrupted>,
}

impl Server {
    fn new(name: &str, json: bool) -> Server {
        Server {
            out: MgmtPrinter::new(name, json, true),
            name: name.to_string(),
            schema: None,
            next: 0,
            waited: false,
            under_way: None,
            answer: None,
            tally: Tally::default(),
            retried: 0,
            exit: Exit::Success,
            over: false,
            stopped: None,
        }
    }
}

/// The loop's side: every server's calls in order, under the policy.
struct Calls<'a> {
    servers: Vec<Server>,
    calls: &'a [Vec<String>],
    lines: &'a [String],
    policy: &'a BatchPolicy,
    stop: Option<&'a Stop>,
    /// Set by a signal, or here when stdout is gone: ends every server.
    cancel: fleet::Alarm,
    /// stdout failed: the run ends with this.
    broken: Option<std::io::Error>,
}

impl Calls<'_> {
    /// What a finished call or a failure came to, under the policy; `false` when the server
    /// stops there (its failure reported).
    fn account(&mut self, t: usize, ran: std::io::Result<commands::Ran>) -> bool {
        let ran = match ran {
            Ok(ran) => ran,
            Err(e) => {
                self.broken.get_or_insert(e);
                self.cancel.raise();
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

    /// The call under way ended with `result` (its answer, or what ended the connection).
    fn finish(&mut self, t: usize, result: Result<String, anyhow::Error>) -> bool {
        let s = &mut self.servers[t];
        let Some(w) = s.under_way.take() else {
            return true;
        };
        let words = &self.calls[w.index];
        let console = w.command.is_some();
        let printed = match result {
            Ok(text) => {
                let called = Called {
                    result: answer(&w.method, &text),
                    method: w.method,
                    params: w.params,
                    elapsed: w.started.elapsed(),
                    command: w.command,
                };
                s.out.called(words, called)
            }
            Err(e) => Err(e),
        };
        let ran = s.out.ran(&self.lines[w.index], words, console, printed);
        self.account(t, ran)
    }

    /// The server's next call, after `--delay`; `methods` and `api` answered here.
    fn next_call(&mut self, t: usize) -> Next {
        loop {
            let s = &mut self.servers[t];
            let i = s.next;
            if i >= self.calls.len() || s.over {
                return Next::Close;
            }
            let words = &self.calls[i];
            if let Some(delay) = self.policy.delay
                && s.tally.sent > 0
                && !s.waited
            {
                s.waited = true;
                return Next::Wait {
                    until: Instant::now() + delay,
                };
            }
            s.waited = false;
            s.next += 1;
            s.tally.lines += 1;
            if self.policy.echo
                && let Err(e) = s.out.echo(&self.lines[i])
            {
                self.account(t, Err(e));
                return Next::Close;
            }
            let schema = s.schema.as_ref().expect("read first");
            if let Some(done) = s.out.local(schema, words) {
                let ran = s.out.ran(&self.lines[i], words, false, done);
                if !self.account(t, ran) {
                    return Next::Close;
                }
                continue;
            }
            // Checked against the schema before the first call.
            let Ok((method, params, command)) = mgmt::resolve_words(schema, words) else {
                return Next::Close;
            };
            let text = call_line(&method, &params);
            s.under_way = Some(UnderWay {
                index: i,
                method,
                params,
                command,
                started: Instant::now(),
            });
            return Next::Command {
                text,
                then_close: false,
                not_before: None,
            };
        }
    }

    /// The answer to `rpc.discover`: the schema, and every call checked against it.
    fn discovered(&mut self, t: usize, text: &str) -> Next {
        let s = &mut self.servers[t];
        let schema = answer("rpc.discover", text).and_then(|doc| Schema::from_discover(&doc));
        let checked = schema
            .map_err(mgmt::error)
            .and_then(|schema| mgmt::check_calls(&schema, &s.out, self.calls).map(|()| schema));
        match checked {
            Ok(schema) => {
                s.schema = Some(schema);
                self.next_call(t)
            }
            Err(e) => {
                error(None, &format!("{e:#}"));
                s.exit = s.exit.max(crate::app::exit::exit_for(&e));
                s.over = true;
                Next::Close
            }
        }
    }
}

/// A failure of the loop's as the application error it is (exit status from its class; a
/// refused secret with the hint the one-server path gives).
fn failure(e: &rconsole::Error) -> anyhow::Error {
    let exit = Exit::from_error(e);
    let hint = match exit {
        Exit::Login => mgmt::UNAUTHORIZED_HINT,
        _ => "",
    };
    fail(exit, format!("{e}{hint}"))
}

impl fleet::Handler for Calls<'_> {
    fn next(&mut self, t: usize) -> Next {
        let s = &mut self.servers[t];
        let answer = s.answer.take();
        if s.schema.is_none() {
            return match answer {
                Some(text) => self.discovered(t, &text),
                None => Next::Command {
                    text: "rpc.discover".into(),
                    then_close: false,
                    not_before: None,
                },
            };
        }
        if s.under_way.is_some()
            && !self.finish(t, answer.ok_or_else(|| anyhow::anyhow!("no answer")))
        {
            return Next::Close;
        }
        self.next_call(t)
    }

    fn report(&mut self, t: usize, report: Report) {
        let s = &mut self.servers[t];
        match report {
            Report::Output(bytes) => s.answer = Some(String::from_utf8_lossy(&bytes).into_owned()),
            Report::Retrying { error: e, delay } => {
                s.retried += 1;
                crate::app::print::output::warning(&format!(
                    "{}; retrying in {} (retry {} of {})",
                    crate::app::exit::chain(&e),
                    rconsole::format_duration(delay),
                    s.retried,
                    self.policy.retry
                ));
            }
            Report::Failed(rconsole::Error::Cancelled) => {
                if self.broken.is_some() {
                    return;
                }
                let Some(signal) = self.stop.and_then(Stop::received) else {
                    return;
                };
                // Sent and not answered: in flight; else the next was not sent.
                let in_flight = s.under_way.as_ref().map(|w| w.index);
                let halted = Halted {
                    signal,
                    in_flight,
                    next: in_flight.map_or(s.next, |i| i + 1),
                };
                s.stopped =
                    Some(halted.interrupted(self.lines, Rest::Nothing, &s.tally, Some(&s.name)));
            }
            Report::Failed(e) if s.under_way.is_some() => {
                self.finish(t, Err(failure(&e)));
            }
            Report::Failed(e) if !s.over => {
                s.over = true;
                let e = failure(&e);
                error(Some(&s.name), &format!("{e:#}"));
                s.exit = s.exit.max(crate::app::exit::exit_for(&e));
            }
            _ => {}
        }
    }

    /// With `--keep-going`, a connection lost under a call is that call's failure, and the
    /// next call connects again, as with one server.
    fn lost(&mut self, t: usize, e: &rconsole::Error) -> Option<Instant> {
        let s = &self.servers[t];
        if s.under_way.is_none()
            || matches!(e, rconsole::Error::Cancelled)
            || !self.policy.goes_on_after(Exit::from_error(e))
        {
            return None;
        }
        self.finish(t, Err(failure(e))).then(Instant::now)
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
    let (targets, kept) = looped_targets(plan, servers)?;
    let names = kept.iter().map(|k| k.name.clone()).collect();
    let emitter = Emitter::new(options, several);
    let watch = looped::Watch::Notifications(options.log_level);
    looped::run_targets(names, targets, kept, watch, &emitter)
}

/// Every server resolved as the loop's target with its machine, and what a handler keeps of
/// it; named by its profile when there are several.
fn looped_targets(
    plan: &MgmtPlan,
    servers: Vec<(String, Settings)>,
) -> anyhow::Result<crate::app::runner::timed::LoopTargets> {
    let several = servers.len() > 1;
    let mut targets = Vec::with_capacity(servers.len());
    let mut kept = Vec::with_capacity(servers.len());
    for (name, settings) in servers {
        let mut target = mgmt::resolve(plan, &settings)?;
        if several {
            target.name = name;
        }
        let describe = target.endpoint.url();
        let name = target.name.clone();
        let made = on_the_loop(target, &settings)?;
        kept.push(Looped {
            name,
            describe,
            observer: std::sync::Arc::clone(&made.config.observer),
            protocol: made.protocol,
        });
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
