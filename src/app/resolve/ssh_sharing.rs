//! SSH connection sharing (docs/ssh.md, issue 39): the `-o` options that make the system
//! OpenSSH client keep one connection per destination and reuse it across runs
//! (`ControlMaster=auto`, a short `ControlPersist`, a `ControlPath` in a directory only this
//! user can enter), so a one-shot through `--ssh` or `--remote` after the first costs one
//! round trip instead of a whole SSH handshake. Unix only: Windows' OpenSSH has no
//! connection sharing.

/// The options that share the connection to `destination` (as given to `--ssh`) among runs
/// with the same user options; empty when sharing is unavailable (Windows, no private
/// directory, a path too long for a socket). A directory that is not private is said once on
/// stderr.
pub fn options(destination: &str, user_options: &[String]) -> Vec<String> {
    #[cfg(unix)]
    {
        unix::options(destination, user_options)
    }
    #[cfg(not(unix))]
    {
        let _ = (destination, user_options);
        Vec::new()
    }
}

/// Tells the master of the shared connection that `ssh_argv` (an ssh command line with its
/// `-o` options, ending `-- HOST`) goes through to exit (`ssh -O exit`, over its local control
/// socket, answered at once even when its TCP connection is dead), so the next ssh opens a new
/// connection. Nothing to do when the command line shares nothing; a master already gone is no
/// error.
pub fn stop_master(ssh_argv: &[std::ffi::OsString]) {
    use std::process::{Command, Stdio};
    use std::time::{Duration, Instant};
    let shared = ssh_argv
        .iter()
        .any(|a| a.to_str().is_some_and(|a| a.starts_with("ControlPath=")));
    let Some(at) = ssh_argv.iter().position(|a| a == "--").filter(|_| shared) else {
        return;
    };
    let mut argv = ssh_argv.to_vec();
    argv.splice(at..at, ["-O".into(), "exit".into()]);
    let Ok(mut child) = Command::new(&argv[0])
        .args(&argv[1..])
        .stdin(Stdio::null())
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
    else {
        return;
    };
    let until = Instant::now() + Duration::from_secs(5);
    while matches!(child.try_wait(), Ok(None)) && Instant::now() < until {
        std::thread::sleep(Duration::from_millis(10));
    }
    let _ = child.kill();
    let _ = child.wait();
}

#[cfg(unix)]
mod unix {
    use std::os::unix::fs::{DirBuilderExt, MetadataExt};
    use std::path::{Path, PathBuf};
    use std::sync::OnceLock;

    /// How long the shared connection stays open after the last run that used it ends.
    const PERSIST_SECS: u32 = 60;

    /// The longest socket path a `sockaddr_un` holds on every Unix (macOS: 104 with the NUL).
    const MAX_SOCKET_PATH: usize = 100;

    pub fn options(destination: &str, user_options: &[String]) -> Vec<String> {
        static DIR: OnceLock<Option<PathBuf>> = OnceLock::new();
        let dir = DIR.get_or_init(|| match control_dir() {
            Ok(dir) => Some(dir),
            Err(why) => {
                crate::app::print::output::warning(&format!(
                    "not sharing SSH connections: {why}; each run opens its own (remove it, or give --no-ssh-reuse)"
                ));
                None
            }
        });
        let Some(dir) = dir else {
            return Vec::new();
        };
        // One connection per destination and set of the user's options: another key or
        // known_hosts file is another connection, never this one reused.
        let key = format!("{destination}\n{}", user_options.join("\n"));
        let digest = ring::digest::digest(&ring::digest::SHA256, key.as_bytes());
        let name: String = digest.as_ref()[..10]
            .iter()
            .map(|b| format!("{b:02x}"))
            .collect();
        let path = dir.join(name);
        let Some(path) = path.to_str().filter(|p| {
            p.len() <= MAX_SOCKET_PATH && !p.contains(|c: char| c.is_whitespace() || c == '"')
        }) else {
            return Vec::new();
        };
        vec![
            "ControlMaster=auto".into(),
            format!("ControlPersist={PERSIST_SECS}"),
            format!("ControlPath={}", path.replace('%', "%%")),
        ]
    }

    /// `$XDG_RUNTIME_DIR/rconsole-ssh`, else `rconsole-ssh-UID` in the temporary directory,
    /// created mode 0700 and checked to be this user's alone.
    fn control_dir() -> Result<PathBuf, String> {
        // SAFETY: geteuid has no preconditions and cannot fail.
        let uid = unsafe { libc::geteuid() };
        let dir = match std::env::var_os("XDG_RUNTIME_DIR").map(PathBuf::from) {
            Some(base) if base.is_absolute() => base.join("rconsole-ssh"),
            _ => std::env::temp_dir().join(format!("rconsole-ssh-{uid}")),
        };
        match std::fs::DirBuilder::new().mode(0o700).create(&dir) {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::AlreadyExists => {}
            Err(e) => return Err(format!("cannot create {}: {e}", dir.display())),
        }
        check_private(&dir, uid)?;
        Ok(dir)
    }

    /// Whether `dir` is a directory (not a link to one) owned by `uid` that no other user can
    /// enter: a socket there cannot be reached, replaced or planted by anyone else.
    pub fn check_private(dir: &Path, uid: u32) -> Result<(), String> {
        let shown = dir.display();
        let meta =
            std::fs::symlink_metadata(dir).map_err(|e| format!("cannot read {shown}: {e}"))?;
        if !meta.is_dir() {
            return Err(format!("{shown} is not a directory"));
        }
        if meta.uid() != uid {
            return Err(format!(
                "{shown} is owned by uid {}, not by you (uid {uid})",
                meta.uid()
            ));
        }
        if meta.mode() & 0o077 != 0 {
            return Err(format!(
                "{shown} is open to other users (mode {:o}, not 700)",
                meta.mode() & 0o777
            ));
        }
        Ok(())
    }

    #[cfg(test)]
    mod tests {
        use super::*;
        use std::os::unix::fs::PermissionsExt;

        #[test]
        fn only_a_private_directory_of_this_user_is_used() {
            let tmp = tempfile::tempdir().unwrap();
            // SAFETY: geteuid has no preconditions.
            let uid = unsafe { libc::geteuid() };
            let dir = tmp.path().join("d");
            std::fs::DirBuilder::new().mode(0o700).create(&dir).unwrap();
            assert_eq!(check_private(&dir, uid), Ok(()));
            let other = check_private(&dir, uid + 1).unwrap_err();
            assert!(other.contains("is owned by uid"), "{other}");
            std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
            let open = check_private(&dir, uid).unwrap_err();
            assert!(open.contains("open to other users (mode 755"), "{open}");
            let link = tmp.path().join("link");
            std::os::unix::fs::symlink(&dir, &link).unwrap();
            let linked = check_private(&link, uid).unwrap_err();
            assert!(linked.contains("is not a directory"), "{linked}");
        }
    }
}
