//! The built-in practice servers: `--practice-server` in the foreground (RCON, or a console's
//! for a console `--practice-mode`). The one `--demo` starts is the session's
//! (`runner/single.rs`).

use rconsole::consoles::practice::{ConsoleServer, Kind};
use rconsole::practice::{self, PracticeServer};

use crate::app::exit::Exit;
use crate::app::print::stderr;
use crate::app::resolve::plan::{PracticeKind, PracticePlan};

/// The practice server's password when `--practice-password` is not given.
pub(super) const DEFAULT_PRACTICE_PASSWORD: &str = "practice";

/// `--practice-server`: a console practice server for a console `--practice-mode`, else the RCON
/// one, in the foreground until `stop` or Ctrl-C.
pub fn serve(plan: &PracticePlan) -> anyhow::Result<Exit> {
    let mode = match plan.mode {
        PracticeKind::Console(kind) => return serve_console(plan, kind),
        PracticeKind::Rcon(mode) => mode,
    };
    let (addr, bind) = (plan.addr.as_str(), plan.bind);
    let server = PracticeServer::start(practice::PracticeConfig {
        bind,
        password: plan.password.clone(),
        mode,
        read_delay: plan.read_delay.unwrap_or_default(),
    })
    .map_err(|e| crate::app::shared::cannot_listen("--practice-server", addr, &e))?;
    crate::app::print::output::print_text(&format!("{}\n", server.addr()))?;
    // The default password is public (it is in --help); one set with --practice-password is
    // never shown.
    let password = if plan.password == DEFAULT_PRACTICE_PASSWORD {
        format!("password {DEFAULT_PRACTICE_PASSWORD}")
    } else {
        "password from --practice-password".to_string()
    };
    stderr!(
        "rcon: practice server ({}) listening on {} ({password}); built-in commands: {}; stop it with the `stop` command or Ctrl-C",
        mode.name(),
        server.addr(),
        practice::BUILTINS
    );
    server.wait();
    Ok(Exit::Success)
}

/// `--practice-server` with a console `--practice-mode`.
fn serve_console(plan: &PracticePlan, kind: Kind) -> anyhow::Result<Exit> {
    let (addr, bind) = (plan.addr.as_str(), plan.bind);
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
    crate::app::print::output::print_text(&format!("{}\n", server.addr()))?;
    stderr!(
        "rcon: practice server ({}) listening on {} ({transport}); built-in commands: {}; stop it with the `stop` command or Ctrl-C",
        kind.name(),
        server.addr(),
        rconsole::consoles::practice::BUILTINS
    );
    server.wait();
    Ok(Exit::Success)
}
