#!/usr/bin/env bash
# The declared minimum Rust version (Cargo.toml's rust-version) really builds (issue 22):
# `cargo check --locked --all-targets` with exactly that toolchain, installed by rustup
# (static.rust-lang.org is reachable from CI). Where rustup cannot install it, the machine's own
# rustc must be that version and builds it instead; anything else fails, so a rust-version
# that nothing checked can never pass. Called by .ci/run after the lint step (its dependencies'
# check builds are reused when the toolchains are the same).
set -euo pipefail
cd "$(dirname "$0")/.."
msrv=$(sed -n '/^\[package\]/,/^\[/ s/^rust-version = "\(.*\)"$/\1/p' Cargo.toml)
[[ $msrv =~ ^[0-9]+\.[0-9]+(\.[0-9]+)?$ ]] || {
  echo "msrv.sh: Cargo.toml's rust-version '$msrv' is not MAJOR.MINOR[.PATCH]" >&2
  exit 1
}
# rust-version 1.95 means 1.95.0, the oldest compiler it admits.
toolchain=$msrv
[[ $toolchain =~ ^[0-9]+\.[0-9]+$ ]] && toolchain=$toolchain.0

if command -v rustup >/dev/null 2>&1 &&
  rustup toolchain install "$toolchain" --profile minimal --no-self-update >/dev/null; then
  echo "msrv.sh: rust-version $msrv, checked with rustup's $toolchain"
  cargo "+$toolchain" --version
  cargo "+$toolchain" check --locked --all-targets
else
  have=$(rustc -V | awk '{ print $2 }')
  if [ "$have" != "$toolchain" ]; then
    echo "msrv.sh: rustup cannot install $toolchain here and rustc is $have: rust-version $msrv is unchecked" >&2
    exit 1
  fi
  echo "msrv.sh: rust-version $msrv, checked with this machine's rustc $have (rustup could not install it)"
  cargo check --locked --all-targets
fi
