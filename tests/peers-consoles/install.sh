#!/usr/bin/env bash
# Install the third-party console CLIENTS LOCALLY (idempotent; safe to re-run), used by
# tests/it/consoles_peers.rs to cross-check rcon's practice servers for BattlEye RCon, Rust's
# WebRCON and 7 Days to Die telnet:
#   Python peers -> tests/peers-consoles/.venv   (pins: requirements.txt)
# Needs python3 (with venv/ensurepip); runs as root on Debian and installs python3-venv with
# apt if venv creation fails. Env: PEERS_SKIP_PY=1 skips it.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

hash_of() { sha256sum "$@" | sha256sum | cut -d' ' -f1; }

if [[ "${PEERS_SKIP_PY:-}" != 1 ]]; then
  want="$(hash_of requirements.txt)"
  if [[ ! -x .venv/bin/python || "$(cat .venv/.rconsole-stamp 2>/dev/null)" != "$want" ]]; then
    if [[ ! -x .venv/bin/python ]]; then
      rm -rf .venv
      if ! python3 -m venv .venv; then
        rm -rf .venv
        echo "peers-consoles: python3 -m venv failed; installing python3-venv with apt" >&2
        export DEBIAN_FRONTEND=noninteractive
        apt-get update -qq
        apt-get install -y -qq python3-venv
        python3 -m venv .venv
      fi
    fi
    .venv/bin/python -m pip install --disable-pip-version-check --no-input -q -r requirements.txt
    echo "$want" > .venv/.rconsole-stamp
    echo "peers-consoles: python clients installed in $here/.venv"
  else
    echo "peers-consoles: python clients up to date"
  fi
fi
