#!/usr/bin/env bash
# Installs the third-party dialect peers into tests/peers-dialects/.venv (idempotent).
# Needs python3 with venv; on Debian installs python3-venv with apt if creating the venv fails.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"
want="$(sha256sum requirements.txt | cut -d' ' -f1)"
if [[ -x .venv/bin/python && "$(cat .venv/.rconsole-stamp 2>/dev/null)" == "$want" ]]; then
  echo "peers-dialects: up to date"
  exit 0
fi
if [[ ! -x .venv/bin/python ]]; then
  rm -rf .venv
  if ! python3 -m venv .venv; then
    rm -rf .venv
    echo "peers-dialects: python3 -m venv failed; installing python3-venv with apt" >&2
    export DEBIAN_FRONTEND=noninteractive
    apt-get update -qq
    apt-get install -y -qq python3-venv
    python3 -m venv .venv
  fi
fi
.venv/bin/python -m pip install --disable-pip-version-check --no-input -q -r requirements.txt
echo "$want" > .venv/.rconsole-stamp
echo "peers-dialects: installed in $here/.venv"
