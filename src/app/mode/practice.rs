//! The built-in practice servers: `--practice-server` in the foreground (RCON, or a console's
//! for a console `--practice-mode`), and the console practice server `--demo` starts.

use std::io::Write;

use anyhow::Context;
use rconsole::consoles::Protocol;
use rconsole::consoles::practice::{ConsoleServer, Kind};
use rconsole::practice::{self, PracticeServer};

use crate::app::exit::{Exit, fail};
use crate::app::resolve::plan::PracticePlan;

/// The practice server's password when `--practice-password` is not given.
const DEFAULT_PRACTICE_PASSWORD: &str = "practice";

/// `--practice-server`: a console practice server for a console `--practice-mode`, else the RCON
/// one, in the foreground until `stop` or Ctrl-C.
pub fn serve(plan: &PracticePlan) -> anyhow::Result<Exit> {
    if let Some(result) = serve_console(plan) {
        return result;
    }
    let addr = plan.addr.as_str();
    let mode = practice::PracticeMode::from_name(&plan.mode).ok_or_else(|| {
        let mut names: Vec<&str> = practice::PracticeMode::ALL
            .iter()
            .map(|m| m.name())
            .collect();
        names.extend(rconsole::consoles::practice::Kind::ALL.map(|k| k.name()));
        fail(
            Exit::Usage,
            format!(
                "unknown --practice-mode '{}' (one of: {})",
                plan.mode,
                names.join(", ")
            ),
        )
    })?;
    let bind = addr.parse().map_err(|_| {
        fail(
            Exit::Usage,
            format!("--practice-server: '{addr}' is not IP:PORT"),
        )
    })?;
    let server = PracticeServer::start(practice::PracticeConfig {
        bind,
        password: plan.password.clone(),
        mode,
        read_delay: plan.read_delay.unwrap_or_default(),
    })
    .map_err(|e| crate::app::shared::cannot_listen("--practice-server", addr, &e))?;
    println!("{}", server.addr());
    // The default password is public (it is in --help); one set with --practice-password is
    // never shown.
    let password = if plan.password == DEFAULT_PRACTICE_PASSWORD {
        format!("password {DEFAULT_PRACTICE_PASSWORD}")
    } else {
        "password from --practice-password".to_string()
    };
    eprintln!(
        "rcon: practice server ({}) listening on {} ({password}); built-in commands: {}; stop it with the `stop` command or Ctrl-C",
        mode.name(),
        server.addr(),
        practice::BUILTINS
    );
    std::io::stdout().flush()?;
    server.wait();
    Ok(Exit::Success)
}

/// The practice server `--demo` starts for a console dialect (`None` for RCON).
pub fn demo_server(protocol: Protocol, password: &str) -> anyhow::Result<Option<ConsoleServer>> {
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

/// `--practice-server` with a console `--practice-mode`; `None` when the mode is an RCON one.
fn serve_console(plan: &PracticePlan) -> Option<anyhow::Result<Exit>> {
    let kind = Kind::from_name(&plan.mode)?;
    let addr = plan.addr.as_str();
    Some((|| {
        let bind = addr.parse().map_err(|_| {
            fail(
                Exit::Usage,
                format!("--practice-server: '{addr}' is not IP:PORT"),
            )
        })?;
        let server = ConsoleServer::start(rconsole::consoles::practice::ConsoleServerConfig {
            bind,
            password: plan.password.clone(),
            kind,
            ..rconsole::consoles::practice::ConsoleServerConfig::default()
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
            rconsole::consoles::practice::BUILTINS
        );
        std::io::stdout().flush()?;
        server.wait();
        Ok(Exit::Success)
    })())
}
