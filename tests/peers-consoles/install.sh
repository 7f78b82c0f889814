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

# shellcheck source=../peers/venv.sh
source "$here/../peers/venv.sh"

if [[ "${PEERS_SKIP_PY:-}" != 1 ]]; then
  venv_install peers-consoles
fi
