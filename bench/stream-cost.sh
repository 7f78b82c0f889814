#!/usr/bin/env bash
# The streaming cost of `rcon` binaries, side by side: LINES commands (`echo line N`) piped
# through one `rcon` process on stdin, against one practice server (strict vanilla, run by the
# first binary for all of them, so only the client differs). For each binary: callgrind's total
# instructions of one stream (the same to a few instructions from run to run, so a ratio that
# the machine's load does not move), then ROUNDS timed streams, the binaries taking turns, and
# the median wall and CPU time (GNU time) and commands per second. Not a test; prints figures.
#
# Usage: bench/stream-cost.sh BIN...     e.g. the binaries bench/oneshot-cost.sh kept (KEEP_BIN)
#   LINES (default 10000), ROUNDS (default 9).
# Needs valgrind and GNU time.
set -euo pipefail
[ $# -gt 0 ] || { sed -n '2,11p' "$0"; exit 2; }
lines=${LINES:-10000}
rounds=${ROUNDS:-9}
work=$(mktemp -d /tmp/stream-cost.XXXXXX)
server=
cleanup() {
  [ -z "$server" ] || kill "$server" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT
export HOME="$work" XDG_CONFIG_HOME="$work/.config" XDG_DATA_HOME="$work/.local/share" \
  XDG_STATE_HOME="$work/.local/state" XDG_CACHE_HOME="$work/.cache"
export RCON_PASSWORD=bench NO_COLOR=1

"$1" --practice-server 127.0.0.1:0 --practice-password bench >"$work/addr" 2>/dev/null &
server=$!
for _ in $(seq 100); do [ -s "$work/addr" ] && break; sleep 0.05; done
port=$(head -1 "$work/addr")
port=${port##*:}
[ -n "$port" ] || { echo "stream-cost: the practice server did not start" >&2; exit 1; }
for i in $(seq "$lines"); do echo "echo line $i"; done >"$work/in"

check() {
  local got
  got=$(wc -l <"$work/out")
  [ "$got" -eq "$lines" ] || { echo "stream-cost: $1: $got output lines, not $lines" >&2; exit 1; }
}

# Each binary learns the server once (the figures are for a learned server, as in a script).
for bin in "$@"; do
  "$bin" -H 127.0.0.1 -P "$port" echo learned >/dev/null
done
for i in $(seq $#); do
  bin=${!i}
  valgrind --tool=callgrind --callgrind-out-file="$work/cg" "$bin" -H 127.0.0.1 -P "$port" \
    <"$work/in" >"$work/out" 2>"$work/vg.err" || { cat "$work/vg.err" >&2; exit 1; }
  check "$bin"
  grep -E '^(summary|totals):' "$work/cg" | head -1 | awk '{print $2}' >"$work/ir-$i"
done
for _ in $(seq "$rounds"); do
  for i in $(seq $#); do
    bin=${!i}
    /usr/bin/time -f '%e %U %S' -o "$work/t" "$bin" -H 127.0.0.1 -P "$port" \
      <"$work/in" >"$work/out"
    check "$bin"
    cat "$work/t" >>"$work/time-$i"
  done
done

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
echo "$lines-line stdin stream, learned vanilla practice server, $rounds timed rounds (load average $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-28s %14s %10s %10s %14s\n' binary instructions "wall s" "CPU s" "commands/s"
for i in $(seq $#); do
  wall=$(awk '{print $1}' "$work/time-$i" | median)
  cpu=$(awk '{print $2 + $3}' "$work/time-$i" | median)
  printf '%-28s %14s %10s %10s %14.0f\n' "${!i}" "$(cat "$work/ir-$i")" "$wall" "$cpu" \
    "$(awk -v n="$lines" -v w="$wall" 'BEGIN {print n / w}')"
done
