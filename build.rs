//! Build script: records the git commit `rcon --version` names, as `RCONSOLE_COMMIT`, and on
//! x86_64 Linux with glibc lays out the functions a one-shot runs together ([`symbol_order`]).
//!
//! Sources, first that answers: the `RCONSOLE_COMMIT` variable (for packagers building from a
//! tarball), `git` in the source tree (with `-dirty` when it has uncommitted changes), the
//! `.cargo_vcs_info.json` that `cargo package` writes into a crates.io download, else
//! `unknown`. No git, no network: a crates.io build must never fail here.

use std::path::Path;
use std::process::Command;

fn git(args: &[&str]) -> Option<String> {
    let out = Command::new("git").args(args).output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(String::from_utf8(out.stdout).ok()?.trim().to_string())
}

fn from_vcs_info() -> Option<String> {
    // {"git": {"sha1": "…", "dirty": true}, "path_in_vcs": ""}; read without a JSON crate.
    let text = std::fs::read_to_string(".cargo_vcs_info.json").ok()?;
    let at = text.find("\"sha1\"")?;
    let rest = &text[at + 6..];
    let start = rest.find('"')? + 1;
    let len = rest[start..].find('"')?;
    let sha = &rest[start..start + len];
    let short: String = sha.chars().take(12).collect();
    (short.len() == 12 && short.chars().all(|c| c.is_ascii_hexdigit())).then_some(short)
}

fn main() {
    symbol_order();
    println!("cargo:rerun-if-env-changed=RCONSOLE_COMMIT");
    let commit = std::env::var("RCONSOLE_COMMIT")
        .ok()
        .filter(|c| !c.is_empty())
        .or_else(|| {
            // Only the repository this crate is in: a crates.io source unpacked inside some
            // other git checkout must not report that checkout's commit.
            let top = git(&["rev-parse", "--show-toplevel"])?;
            let here = std::env::var("CARGO_MANIFEST_DIR").ok()?;
            if Path::new(&top).canonicalize().ok()? != Path::new(&here).canonicalize().ok()? {
                return None;
            }
            for what in ["HEAD", "index"] {
                if let Some(p) = git(&["rev-parse", "--git-path", what]) {
                    println!("cargo:rerun-if-changed={p}");
                }
            }
            if let Some(head) = git(&["symbolic-ref", "-q", "HEAD"])
                && let Some(p) = git(&["rev-parse", "--git-path", &head])
            {
                println!("cargo:rerun-if-changed={p}");
            }
            let sha = git(&["rev-parse", "--short=12", "HEAD"])?;
            let dirty = git(&["status", "--porcelain", "--untracked-files=no"])
                .is_some_and(|s| !s.is_empty());
            Some(if dirty { format!("{sha}-dirty") } else { sha })
        })
        .or_else(from_vcs_info)
        .unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=RCONSOLE_COMMIT={commit}");
}

/// x86_64 Linux with glibc, linked by rustc's default there (LLD): the functions a one-shot
/// runs are laid out together, in the order `src/oneshot.order` lists them
/// (`bench/symbol-order.sh` writes it from a callgrind run). A one-shot then touches a few
/// hundred KiB of the 3.3 MB of code instead of most of it (the kernel maps 64 KiB around each
/// page it faults in), which is most of its peak RSS. A name the build no longer has is
/// skipped; another linker (a `linker` setting) is left alone, as GNU ld lacks the option.
fn symbol_order() {
    println!("cargo:rerun-if-changed=src/oneshot.order");
    for var in [
        "RUSTFLAGS",
        "CARGO_ENCODED_RUSTFLAGS",
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER",
        "CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_RUSTFLAGS",
    ] {
        println!("cargo:rerun-if-env-changed={var}");
    }
    let var = |name: &str| std::env::var(name).unwrap_or_default();
    let flags = var("CARGO_ENCODED_RUSTFLAGS");
    if var("TARGET") != "x86_64-unknown-linux-gnu"
        || flags.contains("linker")
        || std::env::var_os("CARGO_TARGET_X86_64_UNKNOWN_LINUX_GNU_LINKER").is_some()
        // Cargo's own word for a linker set in a config file.
        || std::env::var_os("RUSTC_LINKER").is_some()
    {
        return;
    }
    let order = Path::new(&var("CARGO_MANIFEST_DIR")).join("src/oneshot.order");
    if order.is_file() {
        println!(
            "cargo:rustc-link-arg-bin=rcon=-Wl,--symbol-ordering-file={}",
            order.display()
        );
        println!("cargo:rustc-link-arg-bin=rcon=-Wl,--no-warn-symbol-ordering");
    }
}
