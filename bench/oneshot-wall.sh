#!/usr/bin/env bash
# One-shot `list` wall time beside the one-round-trip C client (bench/baseline/onertt.c, built
# here with gcc), against one vanilla practice server on loopback (the first BIN serves it),
# each client learned first: `perf stat -r N` per client, the clients taking turns round by
# round, so a change in the machine's load shows in every client's figure of that round.
#
# Usage: N=300 ROUNDS=4 bench/oneshot-wall.sh BIN [BIN...]
# Needs perf (Debian's linux-perf) and gcc.
set -euo pipefail
[ $# -gt 0 ] || { sed -n '2,8p' "$0"; exit 2; }
n=${N:-200}; rounds=${ROUNDS:-3}
here=$(cd "$(dirname "$0")" && pwd)
onertt=$(mktemp); out=$(mktemp); home=$(mktemp -d)
gcc -O2 -o "$onertt" "$here/baseline/onertt.c"
"$1" --practice-server 127.0.0.1:0 --practice-password bench >"$out" 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$onertt" "$out" "$home"' EXIT
for _ in $(seq 50); do [ -s "$out" ] && break; sleep 0.1; done
port=$(head -1 "$out" | sed 's/.*://')
export HOME=$home RCON_PASSWORD=bench
for bin in "$@"; do
  for _ in $(seq 25); do "$bin" -H 127.0.0.1 -P "$port" list >/dev/null; done
done
elapsed() { perf stat -r "$n" "$@" 2>&1 >/dev/null | awk '/seconds time elapsed/ {printf "%.3f", $1 * 1000}'; }
for r in $(seq "$rounds"); do
  base=$(elapsed "$onertt" 127.0.0.1 "$port" bench oneshot list)
  echo "round $r: onertt $base ms"
  for bin in "$@"; do
    t=$(elapsed "$bin" -H 127.0.0.1 -P "$port" list)
    echo "round $r: $bin $t ms ($(awk -v a="$t" -v b="$base" 'BEGIN {printf "%.2f", a / b}'))"
  done
done
