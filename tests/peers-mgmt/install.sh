#!/usr/bin/env bash
# Installs the third-party client the management-protocol tests cross-check the practice
# management server with, LOCALLY in tests/peers-mgmt/.venv (idempotent; safe to re-run).
# Pins: requirements.txt. Called by .ci/run like every tests/peers*/install.sh.
# Needs python3 with venv; runs as root on Debian and installs python3-venv with apt if needed.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
cd "$here"

# shellcheck source=../peers/venv.sh
source "$here/../peers/venv.sh"
venv_install peers-mgmt
