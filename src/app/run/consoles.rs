//! The application side of the other consoles (BattlEye, WebRCON, telnet): their practice
//! servers for `--demo` and `--practice-server`, and where server messages go (`--messages`
//! in one-shot and batch; live above the prompt in the console).

use std::io::Write;
use std::sync::{Arc, Mutex};

use anyhow::Context;

use rconsole::consoles::practice::{self, ConsoleServer, Kind};
use rconsole::consoles::{MessageSink, Protocol};

use crate::app::exit::{Exit, fail};
use crate::app::resolve::plan::PracticePlan;

/// The practice server `--demo` starts for a console dialect (`None` for RCON).
pub fn demo_server(protocol: Protocol, password: &str) -> anyhow::Result<Option<ConsoleServer>> {
    let kind = match protocol {
        Protocol::Rcon => return Ok(None),
        Protocol::BattlEye => Kind::BattlEye,
        Protocol::WebRcon => Kind::WebRcon,
        Protocol::Telnet => Kind::Telnet,
    };
    let server = ConsoleServer::start(practice::ConsoleServerConfig {
        password: password.to_string(),
        kind,
        ..practice::ConsoleServerConfig::default()
    })
    .context("cannot start the practice server")?;
    Ok(Some(server))
}

/// `--practice-server` with a console `--practice-mode`; `None` when the mode is an RCON one.
pub fn serve_practice(plan: &PracticePlan) -> Option<anyhow::Result<Exit>> {
    let kind = Kind::from_name(&plan.mode)?;
    let addr = plan.addr.as_str();
    Some((|| {
        let bind = addr.parse().map_err(|_| {
            fail(
                Exit::Usage,
                format!("--practice-server: '{addr}' is not IP:PORT"),
            )
        })?;
        let server = ConsoleServer::start(practice::ConsoleServerConfig {
            bind,
            password: plan.password.clone(),
            kind,
            ..practice::ConsoleServerConfig::default()
        })
        .map_err(|e| crate::app::shared::cannot_listen("--practice-server", addr, &e))?;
        let transport = match kind {
            Kind::WebRcon | Kind::Telnet => "TCP",
            _ => "UDP",
        };
        println!("{}", server.addr());
        eprintln!(
            "rcon: practice server ({}) listening on {} ({transport}); built-in commands: {}; stop it with the `stop` command or Ctrl-C",
            kind.name(),
            server.addr(),
            practice::BUILTINS
        );
        std::io::stdout().flush()?;
        server.wait();
        Ok(Exit::Success)
    })())
}

/// Where `--messages` sends server messages in one-shot and batch mode: stderr as
/// `[server] TEXT` (`[NAME] [server] TEXT` with `label`, in a fan-out over several servers), or
/// with `--json` an `"event":"message"` record (the one schema, [`crate::app::print::json`])
/// per message on stdout.
pub fn message_sink(json: bool, server: &str, label: bool) -> MessageSink {
    let server = server.to_string();
    Arc::new(move |text: &str| {
        if json {
            let now = std::time::SystemTime::now();
            let time = crate::app::print::json::utc_millis(now);
            let mut line = Vec::new();
            crate::app::print::json::JsonRecord::event(time, &server, "message", text)
                .write(&mut line);
            let mut out = std::io::stdout().lock();
            let _ = out.write_all(&line).and_then(|()| out.flush());
        } else {
            for line in text.lines() {
                if label {
                    eprintln!("[{server}] [server] {line}");
                } else {
                    eprintln!("[server] {line}");
                }
            }
        }
    })
}

/// Server messages in the console: printed above the prompt through the line editor, so the
/// line being typed is redrawn below them, marked `[server]`.
pub fn live_sink(printer: impl rustyline::ExternalPrinter + Send + 'static) -> MessageSink {
    let printer = Mutex::new(printer);
    Arc::new(move |text: &str| {
        let mut p = printer.lock().unwrap_or_else(|e| e.into_inner());
        for line in text.lines() {
            let _ = p.print(format!("[server] {line}\n"));
        }
    })
}
