#!/usr/bin/env bash
# Install the third-party interop peers LOCALLY (idempotent; safe to re-run).
#   Python peers -> tests/peers/.venv        (pins: requirements.txt)
#   npm peers    -> tests/peers/node_modules (pins: package.json + package-lock.json)
# Needs python3 (with venv/ensurepip) and node+npm; runs as root on Debian and
# installs python3-venv with apt if venv creation fails.
# Env: PEERS_SKIP_PY=1 / PEERS_SKIP_NPM=1 to skip one side.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

# shellcheck source=../peers/venv.sh
source "$here/../peers/venv.sh"

if [[ "${PEERS_SKIP_PY:-}" != 1 ]]; then
  venv_install peers
fi

if [[ "${PEERS_SKIP_NPM:-}" != 1 ]]; then
  want="$(hash_of package.json package-lock.json)"
  if [[ "$(cat node_modules/.rconsole-stamp 2>/dev/null)" != "$want" ]]; then
    npm ci --no-audit --no-fund --loglevel=error
    echo "$want" > node_modules/.rconsole-stamp
    echo "peers: npm peers installed in $here/node_modules"
  else
    echo "peers: npm peers up to date"
  fi
fi
