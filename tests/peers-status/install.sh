#!/usr/bin/env bash
# Installs the third-party peers the status ping tests run against (exact versions from
# package-lock.json; nothing is downloaded at test time). Called by .ci/run.
set -euo pipefail
cd "$(dirname "$0")"
npm ci --no-audit --no-fund
