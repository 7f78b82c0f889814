//! `--practice-server`: the built-in practice servers in the foreground.

use rconsole::practice::{self, PracticeServer};

use crate::app::exit::{Exit, fail};
use crate::app::resolve::plan::PracticePlan;
use crate::app::run::consoles;

/// The practice server's password when `--practice-password` is not given.
const DEFAULT_PRACTICE_PASSWORD: &str = "practice";

/// `--practice-server`: a console practice server for a console `--practice-mode`, else the RCON
/// one, in the foreground until `stop` or Ctrl-C.
pub fn serve(plan: &PracticePlan) -> anyhow::Result<Exit> {
    if let Some(result) = consoles::serve_practice(plan) {
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
    use std::io::Write;
    std::io::stdout().flush()?;
    server.wait();
    Ok(Exit::Success)
}
