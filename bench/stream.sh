#!/usr/bin/env bash
# Commands per second: 10,000 lines streamed through one `rcon` process on stdin, next to
# one-shot invocations (one process, one connection per command), against the practice server
# (strict vanilla rules, no read delay) on loopback. Not a test; prints figures.
#
#   bash bench/stream.sh            # builds release first
#   RCON_BIN=path/to/rcon bash bench/stream.sh
set -euo pipefail
cd "$(dirname "$0")/.."
LINES=${LINES:-10000}
ONESHOT=${ONESHOT:-300}
if [[ -z "${RCON_BIN:-}" ]]; then
  cargo build --release --quiet
  RCON_BIN="${CARGO_TARGET_DIR:-target}/release/rcon"
fi
work=$(mktemp -d)
"$RCON_BIN" --practice-server 127.0.0.1:0 --practice-password bench >"$work/addr" 2>/dev/null &
server=$!
trap 'kill "$server" 2>/dev/null || true; rm -rf "$work"' EXIT
for _ in $(seq 100); do [[ -s "$work/addr" ]] && break; sleep 0.05; done
port=$(head -1 "$work/addr"); port=${port##*:}
export RCON_PASSWORD=bench NO_COLOR=1
for i in $(seq "$LINES"); do echo "echo line $i"; done >"$work/in.mcfunction"

now() { date +%s.%N; }
start=$(now)
"$RCON_BIN" -H 127.0.0.1 -P "$port" <"$work/in.mcfunction" >"$work/out"
end=$(now)
got=$(wc -l <"$work/out")
[[ "$got" -eq "$LINES" ]] || { echo "expected $LINES output lines, got $got" >&2; exit 1; }
awk -v n="$LINES" -v s="$start" -v e="$end" \
  'BEGIN { printf "stream (stdin, one process): %d commands in %.3f s = %.0f commands/s\n", n, e-s, n/(e-s) }'

start=$(now)
for i in $(seq "$ONESHOT"); do "$RCON_BIN" -H 127.0.0.1 -P "$port" echo "$i" >/dev/null; done
end=$(now)
awk -v n="$ONESHOT" -v s="$start" -v e="$end" \
  'BEGIN { printf "one-shot (process per command): %d commands in %.3f s = %.0f commands/s\n", n, e-s, n/(e-s) }'
