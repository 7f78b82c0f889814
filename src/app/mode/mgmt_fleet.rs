//! `--mgmt` over several servers (`-s a,b`, a group, `--all`): the same method calls on each
//! server at once, on the event loop ([`fleet::run_machines`]: each server's connection a
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

use rconsole::engine::Machine;
use rconsole::fleet::{self, FleetTarget, Next, Report};
use rconsole::mgmt::Schema;
use rconsole::mgmt::machine::{MgmtMachine, answer, call_line};

use crate::app::exit::{Exit, fail};
use crate::app::mode::mgmt::{self, Called, MgmtPrinter, MgmtTarget};
use crate::app::print::interrupted::Interrupted;
use crate::app::print::output::error;
use crate::app::resolve::plan::{BatchPolicy, FollowOptions, MgmtPlan};
use crate::app::resolve::settings::Settings;
use crate::app::runner::batch::Tally;
use crate::app::runner::commands::{self, Halted, Rest};
use crate::app::runner::fanout::Looped;
use crate::app::runner::interrupt::Stop;
use crate::app::source::follow::events::Emitter;
use crate::app::source::follow::looped;

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
    let cancel = stop
        .as_ref()
        .map_or_else(|| std::sync::Arc::new(false.into()), Stop::flag);
    let lines: Vec<String> = calls.iter().map(|w| w.join(" ")).collect();
    let mut handler = Calls {
        servers: states,
        calls: &calls,
        lines: &lines,
        policy: &plan.policy,
        stop: stop.as_ref(),
        cancel: std::sync::Arc::clone(&cancel),
        broken: None,
    };
    let opts = fleet::FleetOptions {
        retries: plan.policy.retry,
        backoff: crate::app::runner::wait::RETRY_BACKOFF,
        cancel: Some(cancel),
        ..fleet::FleetOptions::default()
    };
    fleet::run_machines(targets, opts, &mut handler)?;
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
fn on_the_loop(
    target: MgmtTarget,
    settings: &Settings,
) -> anyhow::Result<(FleetTarget, Box<dyn Machine>)> {
    let endpoint = target.endpoint;
    let timeout = target.opts.timeout;
    let tunnel =
        crate::app::runner::fanout::process_connector(settings, &endpoint.host, endpoint.port)
            .map(|c| fleet::Tunnel::new(&c, timeout));
    let fleet_target = FleetTarget {
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
    let machine = MgmtMachine::new(endpoint, target.opts).map_err(mgmt::error)?;
    Ok((fleet_target, Box::new(machine)))
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
    cancel: std::sync::Arc<std::sync::atomic::AtomicBool>,
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
                self.cancel.store(true, std::sync::atomic::Ordering::SeqCst);
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
/// ([`looped::run_machines`], as the consoles' pushed messages), lines labelled `[NAME]` when
/// there are several. Every server is connected to first, so one that cannot be reached fails
/// the run at once; later losses are connected again, and a quiet connection is checked with a
/// small call every [`mgmt::MGMT_CHECK`].
pub fn follow(
    plan: &MgmtPlan,
    options: &FollowOptions,
    servers: Vec<(String, Settings)>,
) -> anyhow::Result<Exit> {
    crate::app::runner::fanout::hold_every_connection(&servers, false, "--follow")?;
    let several = servers.len() > 1;
    let mut names = Vec::with_capacity(servers.len());
    let mut targets = Vec::with_capacity(servers.len());
    let mut kept = Vec::with_capacity(servers.len());
    for (name, settings) in servers {
        let mut target = mgmt::resolve(plan, &settings)?;
        if several {
            target.name = name;
        }
        let describe = target.endpoint.url();
        names.push(target.name.clone());
        let made = on_the_loop(target, &settings)?;
        kept.push(Looped {
            name: names.last().cloned().unwrap_or_default(),
            describe,
            observer: std::sync::Arc::clone(&made.0.config.observer),
            protocol: made.0.protocol,
        });
        targets.push(made);
    }
    let emitter = Emitter::new(options, several);
    let watch = looped::Watch::Notifications(options.log_level);
    looped::run_machines(names, targets, kept, watch, &emitter)
}
