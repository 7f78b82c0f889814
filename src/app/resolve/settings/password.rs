//! Where the password comes from (read only when needed, never at resolution).

use super::*;

/// Password sources, first found wins: `--password`, `--password-file`, `RCON_PASSWORD`,
/// `RCON_PASSWORD_FILE`, `MCRCON_PASS`, the profile's password / password_file /
/// password_command; else `None` (prompt).
pub(super) fn resolve_password(
    args: &Args,
    origins: &Origins,
    profile: Option<&Profile>,
    at: &dyn Fn(std::ops::Range<usize>) -> Source,
    config: Option<&ParsedConfig>,
) -> anyhow::Result<Option<Sourced<Secret>>> {
    if origins.is_flag("password") && origins.is_flag("password_file") {
        return Err(fail(
            Exit::Usage,
            "give --password or --password-file, not both",
        ));
    }
    let value = |s: Sourced<String>| Sourced::new(Secret::Value(Password::new(s.value)), s.source);
    let file = |s: Sourced<PathBuf>| Sourced::new(Secret::File(s.value), s.source);
    let flag_or_env = |id: &str, flag: bool| {
        let is_flag = origins.is_flag(id);
        if is_flag != flag {
            return None;
        }
        match id {
            "password" => origins.sourced(&args.password, id).map(value),
            _ => origins.sourced(&args.password_file, id).map(file),
        }
    };
    let found = flag_or_env("password", true)
        .or_else(|| flag_or_env("password_file", true))
        .or_else(|| flag_or_env("password", false))
        .or_else(|| flag_or_env("password_file", false))
        .or_else(|| env(args, "MCRCON_PASS").map(value));
    if found.is_some() {
        return Ok(found);
    }
    let Some(p) = profile else { return Ok(None) };
    let base = config.and_then(|c| c.path.parent());
    if let Some(s) = &p.password {
        return Ok(Some(Sourced::new(
            Secret::Value(Password::new(s.get_ref().0.clone())),
            at(s.span()),
        )));
    }
    if let Some(s) = &p.password_file {
        return Ok(Some(Sourced::new(
            Secret::File(secrets::resolve_path(s.get_ref(), base)),
            at(s.span()),
        )));
    }
    if let Some(s) = &p.password_command {
        return Ok(Some(Sourced::new(
            Secret::Command(s.get_ref().clone()),
            at(s.span()),
        )));
    }
    Ok(None)
}
