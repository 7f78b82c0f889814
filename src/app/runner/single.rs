//! One server's session: the command line's commands, then batch input (files, or stdin when it
//! is not a terminal), then the console, all on one connection with one failure policy.

use std::sync::Arc;

use anyhow::Context;

use rconsole::Password;
use rconsole::practice::{self, PracticeServer};
use rconsole::rcon::client::Observer;
use rconsole::transport::{Connector, TcpConnector};

use crate::app::exit::{self, Exit, fail};
use crate::app::print::interrupted::{self, InFlight, Interrupted};
use crate::app::print::messages;
use crate::app::print::trace;
use crate::app::resolve::plan::SessionPlan;
use crate::app::runner::batch;
use crate::app::runner::interrupt::{self, Signal, Stop};
use crate::app::runner::session::{self, Session};
use crate::app::shared::StderrObserver;
use crate::app::shared::refuse_unsendable;
use crate::app::shared::short;
use crate::app::source::console;
use crate::app::source::files;

/// Runs the session the plan describes.
pub fn run(plan: SessionPlan) -> anyhow::Result<Exit> {
    let settings = &plan.settings;
    let inputs_plan = plan.inputs;
    refuse_unsendable(&plan.commands, [settings])?;
    if plan.batch.resume && plan.files.len() + usize::from(inputs_plan.stdin_batch) != 1 {
        return Err(fail(
            Exit::Usage,
            "--resume needs exactly one input, one -f FILE or stdin (the journal is kept per input and server)",
        ));
    }
    // Every input is opened (and a directory refused) before anything is sent, so a typo in
    // the last -f sends nothing.
    let inputs = plan
        .files
        .iter()
        .map(|path| files::Input::open(path, batch::progress_wanted(path)))
        .collect::<anyhow::Result<Vec<_>>>()?;
    let observer: Arc<dyn Observer> = if plan.trace {
        Arc::new(trace::Trace::new())
    } else {
        Arc::new(StderrObserver)
    };
    let opts = if plan.demo {
        settings.engine_options(observer)
    } else {
        settings.options(observer)
    };

    // Keeps the demo server alive for the whole session.
    let _demo_server;
    let mut _demo_console = None;
    let protocol = settings.dialect.value.dialect().protocol;
    let (connector, password, name): (Box<dyn Connector>, Password, String) = if plan.demo {
        let password = format!("demo-{}", std::process::id());
        // A console dialect gets its own practice server; RCON the strict vanilla one.
        let port =
            if let Some(server) = crate::app::mode::practice::demo_server(protocol, &password)? {
                let port = server.port();
                _demo_console = Some(server);
                port
            } else {
                let server = PracticeServer::start(practice::PracticeConfig {
                    password: password.clone(),
                    ..practice::PracticeConfig::default()
                })
                .context("cannot start the practice server")?;
                let port = server.port();
                _demo_server = server;
                port
            };
        let connector = TcpConnector::new("127.0.0.1", port);
        (Box::new(connector), Password::new(password), "demo".into())
    } else {
        (
            settings.connector()?,
            settings.password()?,
            settings.display_name(),
        )
    };
    // JSON records name the server as the console's prompt does (`demo` for --demo).
    let printer = plan.printing.printer().server(name.clone());
    let console_settings = console::ConsoleContext {
        name,
        password: password.expose().to_string(),
    };

    let mut session = Session::new(connector, password, opts, printer);
    session.set_protocol(protocol);
    session.wait = plan.wait;
    session.retries = plan.batch.retry;
    session.parse_errors_fail = plan.parse_errors_fail;
    if settings.remote && !plan.demo {
        let open = crate::app::remote::session::session_opener(&plan, &console_settings.password)?;
        session.opener = Some(open);
    }
    if plan.messages && !inputs_plan.console {
        let sink = messages::message_sink(plan.json, &console_settings.name, false);
        session.set_messages(sink, false);
    }

    let batch_opts = plan.batch;
    let mut tally = batch::Tally {
        retries: crate::app::runner::wait::Retries::new(batch_opts.retry),
        ..batch::Tally::default()
    };
    let more_inputs = inputs_plan.stdin_batch || !inputs.is_empty();
    session.keeps_open = inputs_plan.console;
    run_commands(
        &mut session,
        &plan.commands,
        more_inputs,
        &batch_opts,
        &mut tally,
    )?;
    let inputs = inputs_plan
        .stdin_batch
        .then(files::Input::stdin)
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

/// Runs the command-line commands in order, with the batch policy: `--delay` between
/// commands, and the first failure stops the run (nothing later is sent, `more_inputs` says
/// whether files or stdin were still to come) unless `--keep-going`, which reports each failure
/// and counts it in `tally`.
///
/// Ctrl-C or `SIGTERM` stops them as it stops batch input: what was answered is on stdout, and
/// the error (exit 130 or 143) says how many ran, which was in flight and how many were not
/// sent; nothing after them (batch input, the console) runs.
fn run_commands(
    session: &mut Session,
    commands: &[String],
    more_inputs: bool,
    opts: &crate::app::resolve::plan::BatchPolicy,
    tally: &mut batch::Tally,
) -> anyhow::Result<()> {
    if commands.is_empty() {
        return Ok(());
    }
    let stop = Stop::catch();
    if let Some(stop) = &stop {
        session.set_cancel(stop.flag());
    }
    let stopped = || stop.as_ref().and_then(Stop::received);
    // Where the signal stopped the commands: the command in flight (its index), and the index
    // of the first one not sent.
    // What was still to run after the commands.
    let also = if more_inputs {
        Some("the batch input")
    } else if session.keeps_open {
        Some("the console")
    } else {
        None
    };
    let halt = |signal: Signal, in_flight: Option<usize>, next: usize, tally: &batch::Tally| {
        let text = interrupted::line(&Interrupted {
            signal: signal.name(),
            ran: tally.sent,
            in_flight: in_flight
                .map(|i| InFlight {
                    server: None,
                    at: command_label(i, commands.len()),
                    command: commands[i].clone(),
                })
                .into_iter()
                .collect(),
            not_sent: (commands.len() - next) as u64,
            not_run: also,
            ..Interrupted::default()
        });
        let exit = match signal {
            Signal::Interrupt => Exit::Interrupted,
            Signal::Terminate => Exit::Terminated,
        };
        fail(exit, text)
    };
    for (i, command) in commands.iter().enumerate() {
        if tally.sent > 0
            && let Some(d) = opts.delay
        {
            interrupt::pause(d, stop.as_ref());
        }
        if let Some(signal) = stopped() {
            return Err(halt(signal, None, i, tally));
        }
        tally.lines += 1;
        if opts.echo {
            session.printer.echo(command)?;
        }
        // Nothing follows the last command on this connection: its answer may be ended by a
        // step that also ends the connection (one round trip instead of a quiet gap).
        let outcome = if i + 1 == commands.len() && !more_inputs && !session.keeps_open {
            session.run_last(command)?
        } else {
            session.run(command, None)?
        };
        if let Some(signal) = stopped() {
            // Answered in full before the signal: it ran. Otherwise it was in flight, or (no
            // connection yet) never went out.
            if outcome.error.is_none() {
                tally.sent += 1;
                return Err(halt(signal, None, i + 1, tally));
            }
            let (in_flight, next) = if outcome.sent {
                (Some(i), i + 1)
            } else {
                (None, i)
            };
            return Err(halt(signal, in_flight, next, tally));
        }
        if outcome.sent {
            tally.sent += 1;
        }
        if outcome.ok() {
            continue;
        }
        tally.failed += 1;
        let (exit, why) = match &outcome.error {
            Some(err) => (Exit::from_error(err), exit::chain(err)),
            None => (Exit::CommandFailed, session::PARSE_ERROR.to_string()),
        };
        tally.worst = Some(tally.worst.map_or(exit, |w| w.max(exit)));
        let message = if outcome.sent {
            format!("command '{}': {why}", short(command))
        } else {
            why
        };
        if opts.keep_going {
            eprintln!("rcon: error: {message}");
            continue;
        }
        // Say what was not sent: this command too when it never went out (no connection,
        // refused login), and every later one.
        let after = commands.len() - i - 1;
        let later = after + usize::from(!outcome.sent);
        let mut message = message;
        let rest = if more_inputs {
            " and the batch input"
        } else {
            ""
        };
        if later > 0 {
            let which = if outcome.sent { " later" } else { "" };
            message.push_str(&format!(
                "; {later}{which} {}{rest} not sent",
                plural(later)
            ));
        } else if more_inputs {
            message.push_str("; the batch input was not sent");
        }
        // Only something after the failed command could have gone on.
        if after > 0 || more_inputs {
            message.push_str(" (--keep-going continues past failures)");
        }
        return Err(fail(exit, message));
    }
    Ok(())
}

/// How the report names a command of the command line: `-c` commands and the trailing words
/// alike, by position when there are several.
fn command_label(i: usize, count: usize) -> String {
    if count == 1 {
        "the command".to_string()
    } else {
        format!("command {} of {count}", i + 1)
    }
}

fn plural(n: usize) -> &'static str {
    if n == 1 { "command" } else { "commands" }
}
