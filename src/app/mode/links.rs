//! `rcon --install-links DIR`: the names `mcrcon` and `rcon-cli` in DIR, so scripts that call
//! those programs run rcon's personalities unchanged. Symbolic links on Unix (to the `rcon` on
//! PATH when that is this program, so an upgrade that replaces it keeps them working); on
//! Windows, where symbolic links need a privilege, hard links named `mcrcon.exe` and
//! `rcon-cli.exe`, or copies when a hard link is impossible (another volume). An existing file of
//! that name is never replaced unless it already runs this rcon.

use std::path::{Path, PathBuf};

use anyhow::Context;

use crate::app::exit::{Exit, fail};
use crate::app::print::stderr;
use crate::app::resolve::compat::Personality;

/// Creates the links and prints one line for each. A directory that does not exist yet is
/// created first (`~/.local/bin` on a fresh account, the README's line), and said so; a path
/// that exists and is not a directory is a usage error.
pub fn install(dir: &Path) -> anyhow::Result<Exit> {
    if std::fs::symlink_metadata(dir).is_err() {
        std::fs::create_dir_all(dir)
            .with_context(|| format!("--install-links: cannot create {}", dir.display()))?;
        crate::app::print::output::print_text(&format!("created {}\n", dir.display()))?;
    }
    if !dir.is_dir() {
        return Err(fail(
            Exit::Usage,
            format!("--install-links: {} is not a directory", dir.display()),
        ));
    }
    let exe = std::env::current_exe().context("cannot find where rcon is installed")?;
    let target = link_target(&exe);
    for p in Personality::ALL {
        let link = dir.join(format!("{}{}", p.name(), std::env::consts::EXE_SUFFIX));
        let line = match install_one(&target, &link)? {
            Some(how) => format!("{} -> {} ({how})", link.display(), target.display()),
            None => format!("{} already runs {}", link.display(), target.display()),
        };
        crate::app::print::output::print_text(&format!("{line}\n"))?;
    }
    let on_path = std::env::var_os("PATH")
        .is_some_and(|paths| std::env::split_paths(&paths).any(|d| same_file(&d, dir)));
    if !on_path {
        stderr!(
            "rcon: warning: {} is not on PATH; scripts find mcrcon and rcon-cli only there",
            dir.display()
        );
    }
    Ok(Exit::Success)
}

/// Whether two paths name the same file or directory.
fn same_file(a: &Path, b: &Path) -> bool {
    match (std::fs::canonicalize(a), std::fs::canonicalize(b)) {
        (Ok(a), Ok(b)) => a == b,
        _ => false,
    }
}

/// What the links point to: the `rcon` on PATH when it is this program (a package manager's
/// stable name), else this program's own path.
fn link_target(exe: &Path) -> PathBuf {
    let Some(name) = exe.file_name() else {
        return exe.to_path_buf();
    };
    let on_path = std::env::var_os("PATH").and_then(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(name))
            .find(|candidate| candidate.is_absolute() && same_file(candidate, exe))
    });
    on_path.unwrap_or_else(|| exe.to_path_buf())
}

/// Creates one link; `None` when `link` already runs `target`. A different file there is an
/// error, never replaced.
fn install_one(target: &Path, link: &Path) -> anyhow::Result<Option<&'static str>> {
    if std::fs::symlink_metadata(link).is_ok() {
        if runs(target, link) {
            return Ok(None);
        }
        return Err(fail(
            Exit::Usage,
            format!(
                "--install-links: {} exists and is not this rcon (another {}?); remove it or pick another directory",
                link.display(),
                link.file_stem().unwrap_or_default().to_string_lossy()
            ),
        ));
    }
    create(target, link).map(Some).map_err(|e| {
        fail(
            Exit::Usage,
            format!("--install-links: cannot create {}: {e}", link.display()),
        )
    })
}

#[cfg(unix)]
fn create(target: &Path, link: &Path) -> std::io::Result<&'static str> {
    std::os::unix::fs::symlink(target, link).map(|()| "symbolic link")
}

#[cfg(not(unix))]
fn create(target: &Path, link: &Path) -> std::io::Result<&'static str> {
    match std::fs::hard_link(target, link) {
        Ok(()) => Ok("hard link"),
        Err(_) => std::fs::copy(target, link).map(|_| "copy"),
    }
}

/// Whether `link` already runs `target`: a link to it (or a hard link), or on Windows an
/// identical copy.
fn runs(target: &Path, link: &Path) -> bool {
    if same_file(target, link) {
        return true;
    }
    cfg!(windows)
        && matches!(
            (std::fs::read(target), std::fs::read(link)),
            (Ok(a), Ok(b)) if a == b
        )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn creates_once_and_refuses_other_files() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("rcon-binary");
        std::fs::write(&target, b"program").unwrap();
        let link = dir.path().join("mcrcon");
        assert!(install_one(&target, &link).unwrap().is_some());
        assert!(runs(&target, &link));
        // Again: already there, nothing changes.
        assert_eq!(install_one(&target, &link).unwrap(), None);
        // Another program of that name is left alone.
        let other = dir.path().join("rcon-cli");
        std::fs::write(&other, b"someone else's rcon-cli").unwrap();
        let err = install_one(&target, &other).unwrap_err();
        assert!(format!("{err:#}").contains("exists and is not this rcon"));
        assert_eq!(std::fs::read(&other).unwrap(), b"someone else's rcon-cli");
    }
}
