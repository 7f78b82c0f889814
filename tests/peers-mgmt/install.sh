#!/usr/bin/env bash
# Installs the third-party client the management-protocol tests cross-check the practice
# management server with, LOCALLY in tests/peers-mgmt/.venv (idempotent; safe to re-run).
# Pins: requirements.txt. Called by .ci/run like every tests/peers*/install.sh.
# Needs python3 with venv; runs as root on Debian and installs python3-venv with apt if needed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

want="$(sha256sum requirements.txt | cut -d' ' -f1)"
if [[ ! -x .venv/bin/python || "$(cat .venv/.rconsole-stamp 2>/dev/null)" != "$want" ]]; then
  if [[ ! -x .venv/bin/python ]]; then
    rm -rf .venv
    if ! python3 -m venv .venv; then
      rm -rf .venv
      echo "peers-mgmt: python3 -m venv failed; installing python3-venv with apt" >&2
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      apt-get install -y -qq python3-venv
      python3 -m venv .venv
    fi
  fi
  .venv/bin/python -m pip install --disable-pip-version-check --no-input -q -r requirements.txt
  echo "$want" > .venv/.rconsole-stamp
  echo "peers-mgmt: installed in $here/.venv"
else
  echo "peers-mgmt: up to date"
fi
