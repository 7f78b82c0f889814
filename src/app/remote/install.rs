//! `--remote-install` (docs/remote.md): when the SSH host has no usable rcon, copy this one to
//! a per-user cache directory there (`${XDG_CACHE_HOME:-~/.cache}/rconsole/bin`), over the same
//! system `ssh` as `--remote`, only when the host's `uname -sm` matches this binary's OS and
//! architecture; the copy is checked by SHA-256 and by running its `--version` there before it
//! is used, and a later run finds it by name and checksum and copies nothing.
//!
//! Two ssh sessions at most: a probe (`uname`, the cache path, the cached copy's checksum) and,
//! only when the cache has no identical copy, the copy itself, which streams the binary on
//! stdin into a temporary file, checks it, and renames it into place only when both checks pass.
//! No password is involved: the scripts and their environment hold only paths and checksums.

use std::ffi::OsString;
use std::io::{self, Write};
use std::path::PathBuf;
use std::process::{Command, Stdio};

use crate::app::exit::{Exit, fail};
use crate::app::print::stderr;
use crate::app::remote::journal::sha256_hex;
use crate::app::remote::proto::VERSION;

/// This binary's OS and architecture, as its file name in the cache spells them.
pub fn local_platform() -> (&'static str, &'static str) {
    (std::env::consts::OS, std::env::consts::ARCH)
}

/// `uname -s` and `uname -m` in Rust's names (`Linux` -> `linux`, `arm64` -> `aarch64`).
pub fn platform_of(uname_s: &str, uname_m: &str) -> (String, String) {
    let os = match uname_s.trim() {
        "Darwin" => "macos".to_string(),
        "DragonFly" => "dragonfly".to_string(),
        other => other.to_ascii_lowercase(),
    };
    let arch = match uname_m.trim() {
        "amd64" | "x86_64" => "x86_64".to_string(),
        "arm64" | "aarch64" | "aarch64_be" => "aarch64".to_string(),
        "i386" | "i486" | "i586" | "i686" | "i86pc" => "x86".to_string(),
        m if m.starts_with("armv") => "arm".to_string(),
        "ppc64le" => "powerpc64".to_string(),
        other => other.to_string(),
    };
    (os, arch)
}

/// The shell lines that set `f` to the cached copy's path on the remote side. Only characters
/// safe inside single quotes: the whole script travels as `sh -c '...'`.
fn preamble() -> String {
    let (os, arch) = local_platform();
    format!(
        "case \"$XDG_CACHE_HOME\" in /*) c=\"$XDG_CACHE_HOME\";; *) c=\"$HOME/.cache\";; esac; \
         d=\"$c/rconsole/bin\"; f=\"$d/rcon-{VERSION}-{os}-{arch}\"; "
    )
}

/// The checksum of `$1`-like path `var` with whichever tool the host has.
fn sha_of(var: &str) -> String {
    format!(
        "s=$( (sha256sum \"${var}\" 2>/dev/null || shasum -a 256 \"${var}\" 2>/dev/null) | cut -d \" \" -f 1); "
    )
}

/// What the probe prints, each on a line of its own prefixed so that a login script's chatter
/// is ignored.
const TAG: &str = "rcon-install:";

fn probe_script() -> String {
    format!(
        "{}echo \"{TAG} os $(uname -s)\"; echo \"{TAG} arch $(uname -m)\"; echo \"{TAG} path $f\"; \
         if [ -f \"$f\" ]; then {}echo \"{TAG} sha $s\"; fi",
        preamble(),
        sha_of("f"),
    )
}

fn copy_script(expected: &str) -> String {
    format!(
        "umask 077; {}mkdir -p \"$d\" || exit 3; t=\"$f.part.$$\"; cat > \"$t\" || {{ rm -f \"$t\"; exit 3; }}; \
         chmod 700 \"$t\"; {}echo \"{TAG} sha $s\"; \
         if [ \"$s\" != \"{expected}\" ]; then rm -f \"$t\"; exit 0; fi; \
         v=$(\"$t\" --version 2>&1 < /dev/null); r=$?; \
         echo \"{TAG} version $r $(echo \"$v\" | head -n 1)\"; \
         if [ \"$r\" = 0 ]; then mv -f \"$t\" \"$f\" && echo \"{TAG} installed $f\"; else rm -f \"$t\"; fi",
        preamble(),
        sha_of("t"),
    )
}

/// `sh -c 'SCRIPT'` for the remote login shell (the scripts hold no single quote).
fn remote_sh(script: &str) -> String {
    debug_assert!(!script.contains('\''));
    format!("sh -c '{script}'")
}

/// The tagged lines of an output: `(key, rest)`.
fn tagged(out: &[u8]) -> Vec<(String, String)> {
    String::from_utf8_lossy(out)
        .lines()
        .filter_map(|l| l.trim_end().strip_prefix(TAG))
        .map(|l| {
            let l = l.trim_start();
            match l.split_once(' ') {
                Some((k, v)) => (k.to_string(), v.to_string()),
                None => (l.to_string(), String::new()),
            }
        })
        .collect()
}

fn value<'a>(lines: &'a [(String, String)], key: &str) -> Option<&'a str> {
    lines
        .iter()
        .find(|(k, _)| k == key)
        .map(|(_, v)| v.as_str())
}

/// Runs `ssh ... COMMAND` with `input` on its stdin; its stdout, and its failure as an error.
fn ssh(
    base: &[OsString],
    command: String,
    input: Option<Vec<u8>>,
    via: &str,
) -> anyhow::Result<Vec<u8>> {
    let mut cmd = Command::new(&base[0]);
    cmd.args(&base[1..])
        .arg(command)
        .stdin(if input.is_some() {
            Stdio::piped()
        } else {
            Stdio::null()
        })
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .env_remove("RCON_PASSWORD")
        .env_remove("MCRCON_PASS");
    let mut child = cmd
        .spawn()
        .map_err(|e| fail(Exit::Transport, format!("cannot start {via}: ssh: {e}")))?;
    let writer = input.map(|data| {
        let mut stdin = child.stdin.take().expect("piped");
        std::thread::spawn(move || -> io::Result<()> {
            stdin.write_all(&data)?;
            stdin.flush()
        })
    });
    let out = child
        .wait_with_output()
        .map_err(|e| fail(Exit::Transport, format!("{via}: {e}")))?;
    if let Some(w) = writer {
        let _ = w.join();
    }
    let said = String::from_utf8_lossy(&out.stderr)
        .lines()
        .map(str::trim)
        .rfind(|l| !l.is_empty())
        .unwrap_or("")
        .to_string();
    match out.status.code() {
        Some(0) => Ok(out.stdout),
        Some(255) | None => Err(fail(
            Exit::Transport,
            format!(
                "--remote-install: {via} failed ({}): {said}",
                out.status
                    .code()
                    .map_or("killed".to_string(), |c| format!("exit status {c}"))
            ),
        )),
        Some(code) => Err(fail(
            Exit::Remote,
            format!(
                "--remote-install: copying this rcon to {} failed (exit status {code}: {said}): install rcon {VERSION} there, or name it with --remote-rcon PATH",
                via.trim_start_matches("ssh ")
            ),
        )),
    }
}

/// Makes sure the SSH host has a verified copy of this rcon in its cache and returns the
/// copy's path there. `base` is the ssh command line without the remote command; `why` says
/// why the remote's own rcon cannot be used (for messages).
pub fn ensure(base: &[OsString], via: &str, why: &str) -> anyhow::Result<String> {
    let host = via.trim_start_matches("ssh ");
    let (os, arch) = local_platform();
    let out = ssh(base, remote_sh(&probe_script()), None, via)?;
    let lines = tagged(&out);
    let (Some(uname_s), Some(uname_m), Some(path)) = (
        value(&lines, "os"),
        value(&lines, "arch"),
        value(&lines, "path"),
    ) else {
        return Err(fail(
            Exit::Remote,
            format!(
                "--remote-install: the SSH host {host} did not answer the probe (uname -sm and its cache directory) with a POSIX sh: install rcon {VERSION} there, or name it with --remote-rcon PATH"
            ),
        ));
    };
    let (remote_os, remote_arch) = platform_of(uname_s, uname_m);
    if remote_os != os || remote_arch != arch {
        return Err(fail(
            Exit::Remote,
            format!(
                "{why}, and --remote-install cannot copy this rcon there: the SSH host is {} {} ({remote_os} {remote_arch}), this rcon is built for {os} {arch}: install rcon {VERSION} for {remote_os} {remote_arch} there (a static release build), or name it with --remote-rcon PATH",
                uname_s.trim(),
                uname_m.trim()
            ),
        ));
    }
    let exe = std::env::current_exe().map_err(|e| {
        fail(
            Exit::Remote,
            format!("--remote-install: this rcon's path: {e}"),
        )
    })?;
    let binary = std::fs::read(&exe).map_err(|e| {
        fail(
            Exit::Remote,
            format!("--remote-install: cannot read {}: {e}", exe.display()),
        )
    })?;
    let expected = sha256_hex(&binary);
    if value(&lines, "sha") == Some(expected.as_str()) {
        return Ok(path.to_string());
    }
    let size = binary.len();
    let out = ssh(base, remote_sh(&copy_script(&expected)), Some(binary), via)?;
    let lines = tagged(&out);
    let got = value(&lines, "sha").unwrap_or("");
    if got != expected {
        let got = if got.is_empty() {
            "no checksum (neither sha256sum nor shasum -a 256 ran there)".to_string()
        } else {
            format!("SHA-256 {got}")
        };
        return Err(fail(
            Exit::Remote,
            format!(
                "--remote-install: the copy of this rcon ({size} bytes, SHA-256 {expected}) on {host} has {got}; it was removed: install rcon {VERSION} there, or name it with --remote-rcon PATH"
            ),
        ));
    }
    let version = value(&lines, "version").unwrap_or("");
    let (code, said) = version.split_once(' ').unwrap_or((version, ""));
    if code != "0" || value(&lines, "installed").is_none() {
        return Err(fail(
            Exit::Remote,
            format!(
                "--remote-install: this rcon, copied to {host}, does not run there (`--version`: exit status {code}: {said}); it was removed: install the static release build of rcon {VERSION} for {os} {arch} there, or name it with --remote-rcon PATH"
            ),
        ));
    }
    stderr!(
        "rcon: copied this rcon ({}) to {host}:{path} (--remote-install)",
        PathBuf::from(&exe)
            .file_name()
            .map(|n| n.to_string_lossy().into_owned())
            .unwrap_or_default()
    );
    Ok(path.to_string())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn uname_reads_as_rust_platform_names() {
        assert_eq!(
            platform_of("Linux", "x86_64"),
            ("linux".into(), "x86_64".into())
        );
        assert_eq!(
            platform_of("Darwin\n", "arm64\n"),
            ("macos".into(), "aarch64".into())
        );
        assert_eq!(
            platform_of("FreeBSD", "amd64"),
            ("freebsd".into(), "x86_64".into())
        );
        assert_eq!(platform_of("Linux", "i686"), ("linux".into(), "x86".into()));
    }

    #[test]
    fn scripts_fit_in_single_quotes_and_tags_are_read() {
        assert!(!probe_script().contains('\''));
        assert!(!copy_script("ab12").contains('\''));
        let lines = tagged(b"welcome!\nrcon-install: os Linux\nrcon-install: path /h/.cache/x\n");
        assert_eq!(value(&lines, "os"), Some("Linux"));
        assert_eq!(value(&lines, "path"), Some("/h/.cache/x"));
        assert_eq!(value(&lines, "sha"), None);
    }
}
