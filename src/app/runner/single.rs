//! One server's session: the command line's commands, then batch input (files, or stdin when it
//! is not a terminal), then the console, all on one connection with one failure policy.

use std::sync::Arc;

use anyhow::Context;

use rconsole::Password;
use rconsole::consoles::Protocol;
use rconsole::consoles::practice::{ConsoleServer, Kind};
use rconsole::practice::{self, PracticeServer};
use rconsole::rcon::client::Observer;
use rconsole::transport::{Connector, TcpConnector};

use crate::app::exit::{self, Exit};
use crate::app::print::messages;
use crate::app::print::trace;
use crate::app::resolve::plan::SessionPlan;
use crate::app::runner::batch;
use crate::app::runner::commands::{self, Failure, Ran, Rest, Target};
use crate::app::runner::console;
use crate::app::runner::policy::{Policy, Tally};
use crate::app::runner::session::{self, Run as How, Session};
use crate::app::shared::StderrObserver;
use crate::app::shared::refuse_unsendable;
use crate::app::source::files;

/// Another way to the server than the settings' address and password: a management server
/// that runs console commands (issue 42), whose connections `opener` opens.
pub struct Via {
    /// Where the session goes, for its messages.
    pub connector: Box<dyn Connector>,
    /// The secret in effect, which the console's history never stores.
    pub password: Password,
    /// The server's name in the prompt and in `--json` records.
    pub name: String,
    /// Opens each connection.
    pub opener: crate::app::remote::session::RemoteOpener,
}

/// Runs the session the plan describes.
pub fn run(plan: SessionPlan) -> anyhow::Result<Exit> {
    run_via(plan, None)
}

/// [`run`], through `via` when given.
pub fn run_via(plan: SessionPlan, via: Option<Via>) -> anyhow::Result<Exit> {
    let settings = &plan.settings;
    let inputs_plan = plan.inputs;
    let inputs = open_inputs(&plan)?;
    let opts = options(&plan);
    let protocol = settings.dialect.value.dialect().protocol;
    // Keeps the demo server alive for the whole session.
    let mut _demo = None;
    let (connector, password, name, opener) = match via {
        Some(via) => (via.connector, via.password, via.name, Some(via.opener)),
        None if plan.demo => {
            let (server, connector, password) = demo(protocol)?;
            _demo = Some(server);
            (connector, password, "demo".into(), None)
        }
        None => (
            settings.connector()?,
            settings.password()?,
            settings.display_name(),
            None,
        ),
    };
    // JSON records name the server as the console's prompt does (`demo` for --demo).
    let printer = plan.printing.printer().server(name.clone());
    let console_settings = console::ConsoleContext {
        name,
        password: password.expose().to_string(),
        quit_word: plan.quit_word,
    };

    let mut session = Session::new(connector, password, opts, printer);
    session.set_protocol(protocol);
    session.wait = plan.wait;
    session.retries = plan.batch.retry;
    session.parse_errors_fail = plan.parse_errors_fail;
    session.opener = match opener {
        None if settings.remote && !plan.demo => Some(crate::app::remote::session::session_opener(
            &plan,
            &console_settings.password,
        )?),
        other => other,
    };
    if plan.messages && !inputs_plan.console {
        let sink = messages::message_sink(plan.json, &console_settings.name, false);
        session.set_messages(sink, false);
    }

    // Every line of every file is checked before the first command (a -c one included) goes
    // out; stdin streams, so its lines are checked as they come.
    let policy = Policy::from(&plan.batch);
    if policy.checks_ahead() {
        for input in &inputs {
            input.check_ahead(&plan.batch.macros, session.max_command_bytes())?;
        }
    }
    let batch_opts = plan.batch;
    let mut tally = Tally {
        retries: policy.retries(),
        ..Tally::default()
    };
    let more_inputs = inputs_plan.stdin_batch || !inputs.is_empty();
    session.keeps_open = inputs_plan.console;
    // Ctrl-C or SIGTERM stops the commands as it stops batch input: what was answered is on
    // stdout, and the error (exit 130 or 143) says how many ran, which was in flight and how
    // many were not sent; nothing after them (batch input, the console) runs.
    let rest = if more_inputs {
        Rest::BatchInput
    } else if session.keeps_open {
        Rest::Console
    } else {
        Rest::Nothing
    };
    commands::run(
        &mut session,
        &plan.commands,
        rest,
        &batch_opts,
        &mut tally,
        true,
    )?;
    let inputs = inputs_plan
        .stdin_batch
        .then(|| files::Input::stdin().ending_at(plan.quit_word))
        .into_iter()
        .chain(inputs)
        .collect();
    batch::run_inputs(&mut session, inputs, &batch_opts, &mut tally)?;
    if inputs_plan.console {
        session.refuse_after_stop = false;
        return console::run(&mut session, &console_settings);
    }
    if tally.worst.is_some() {
        return tally.finish();
    }
    if tally.lines == 0 && plan.commands.is_empty() && inputs_plan.stdin_batch {
        crate::app::print::output::warning("no commands on stdin; nothing was sent");
    }
    Ok(Exit::Success)
}

/// The `-f` inputs, each opened (a directory refused) and every command checked before
/// anything is sent, so a typo in the last -f sends nothing.
fn open_inputs(plan: &SessionPlan) -> anyhow::Result<Vec<files::Input>> {
    refuse_unsendable(&plan.commands, [&plan.settings])?;
    plan.files
        .iter()
        .map(|path| files::Input::open(path, batch::progress_wanted(path)))
        .collect()
}

/// The engine's options: `--demo`'s for its practice server, else the settings'; packets
/// traced with `--trace`.
fn options(plan: &SessionPlan) -> rconsole::ClientOptions {
    let observer: Arc<dyn Observer> = if plan.trace {
        Arc::new(trace::Trace::new())
    } else {
        Arc::new(StderrObserver)
    };
    if plan.demo {
        plan.settings.engine_options(observer)
    } else {
        plan.settings.options(observer)
    }
}

/// Something kept alive for as long as the session lasts (`--demo`'s practice server).
type Guard = Box<dyn std::any::Any>;

/// `--demo`'s practice server (a console dialect's own, else strict vanilla RCON), to keep
/// alive while the session lasts, a connector to it and its password.
fn demo(
    protocol: rconsole::consoles::Protocol,
) -> anyhow::Result<(Guard, Box<dyn Connector>, Password)> {
    let password = format!("demo-{}", std::process::id());
    let (server, port): (Guard, u16) = match demo_server(protocol, &password)? {
        Some(server) => {
            let port = server.port();
            (Box::new(server), port)
        }
        None => {
            let server = PracticeServer::start(practice::PracticeConfig {
                password: password.clone(),
                ..practice::PracticeConfig::default()
            })
            .context("cannot start the practice server")?;
            let port = server.port();
            (Box::new(server), port)
        }
    };
    let connector = Box::new(TcpConnector::new("127.0.0.1", port));
    Ok((server, connector, Password::new(password)))
}

/// The practice server `--demo` starts for a console dialect (`None` for RCON).
fn demo_server(protocol: Protocol, password: &str) -> anyhow::Result<Option<ConsoleServer>> {
    let kind = match protocol {
        Protocol::Rcon => return Ok(None),
        Protocol::BattlEye => Kind::BattlEye,
        Protocol::WebRcon => Kind::WebRcon,
        Protocol::Telnet => Kind::Telnet,
    };
    let server = ConsoleServer::start(rconsole::consoles::practice::ConsoleServerConfig {
        password: password.to_string(),
        kind,
        ..rconsole::consoles::practice::ConsoleServerConfig::default()
    })
    .context("cannot start the practice server")?;
    Ok(Some(server))
}

/// One server's RCON session as a [`Target`] of the command-line commands.
impl Target for Session {
    fn run(&mut self, command: &str, last: bool) -> std::io::Result<Ran> {
        let how = if last {
            How::printed().last()
        } else {
            How::printed()
        };
        let outcome = self.run_with(command, how)?;
        let failure = (!outcome.ok()).then(|| {
            let (exit, why) = match &outcome.error {
                Some(err) => (Exit::from_error(err), exit::chain(err)),
                None => (Exit::CommandFailed, session::PARSE_ERROR.to_string()),
            };
            let message = if outcome.sent {
                crate::app::shared::command_failed("", command, &why)
            } else {
                why
            };
            Failure {
                exit,
                message,
                goes_on: false,
            }
        });
        Ok(Ran {
            sent: outcome.sent,
            answered: outcome.error.is_none(),
            failure,
        })
    }

    fn echo(&mut self, command: &str) -> std::io::Result<()> {
        self.printer.echo(command)
    }

    fn set_cancel(&mut self, flag: std::sync::Arc<std::sync::atomic::AtomicBool>) {
        Session::set_cancel(self, flag);
    }

    fn stopped_here(&self, failure: &Failure, sent: bool, later: usize, rest: Rest) -> String {
        commands::stopped_here(failure, sent, later, rest)
    }
}
