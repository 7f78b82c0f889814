#!/usr/bin/env bash
# The one-shot cost of glibc release builds, side by side (issue 38 item 5): for each binary
# given, a fresh HOME is learned in steady state (20 runs of `list`), then one run under
# callgrind gives the instructions and five under GNU time the median peak RSS. Against a
# practice server this script starts (strict vanilla) on loopback.
#
# Usage: bench/oneshot-glibc.sh BIN [BIN...]
#   Build a binary to compare with `CARGO_PROFILE_RELEASE_STRIP=false cargo build --release`
#   (symbols for callgrind_annotate; the code is the same), and copy it aside first.
# Needs valgrind and GNU time (/usr/bin/time).
set -euo pipefail
[ $# -gt 0 ] || { sed -n '2,10p' "$0"; exit 2; }
server_bin=$1
out=$(mktemp); home=$(mktemp -d)
HOME=$home "$server_bin" --practice-server 127.0.0.1:0 >"$out" 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$out" "$home"' EXIT
for _ in $(seq 50); do [ -s "$out" ] && break; sleep 0.1; done
port=$(sed 's/.*://' "$out")
for bin in "$@"; do
  export HOME; HOME=$(mktemp -d)
  for _ in $(seq 20); do RCON_PASSWORD=practice "$bin" -H 127.0.0.1 -P "$port" list >/dev/null; done
  ir=$(RCON_PASSWORD=practice valgrind --tool=callgrind --callgrind-out-file=/dev/null \
    "$bin" -H 127.0.0.1 -P "$port" list 2>&1 | sed -n 's/.*I *refs: *//p')
  rss=$(for _ in 1 2 3 4 5; do
    /usr/bin/time -f %M env RCON_PASSWORD=practice "$bin" -H 127.0.0.1 -P "$port" list 2>&1 >/dev/null | tail -1
  done | sort -n | sed -n 3p)
  echo "$bin: $ir instructions, median peak RSS $rss KiB"
  rm -rf "$HOME"
done
