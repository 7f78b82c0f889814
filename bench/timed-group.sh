#!/usr/bin/env bash
# A countdown on a large group (`--targets`, issue 20): every server holds its connection for
# the whole countdown. Starts PORTS practice servers (`rcon --practice-server`, vanilla) and
# spreads SERVERS targets over them, then runs, for each binary given, RUNS times each:
#   rcon --targets FILE --countdown 2s --at 1s --announce 'say in {left}' --then seed
# once under the soft descriptor limit of 1024 (a common default) and once under the hard
# limit, printing wall time, peak RSS (GNU time) and the exit status; then
#   rcon --targets FILE --poll 1s --follow
# for 4 s under the hard limit, printing its threads, resident memory and CPU time (Linux /proc)
# at the end. Binaries are measured round by round, so they see the same machine. Not a test;
# prints figures.
#
# Usage: bench/timed-group.sh [--servers 1500] [--ports 30] [--runs 3] BIN...
#   e.g. bench/timed-group.sh /tmp/old/rcon target/release/rcon
# The practice servers are started with the last BIN. Needs GNU time (/usr/bin/time).
set -euo pipefail
servers=1500
ports=30
runs=3
bins=()
while [ $# -gt 0 ]; do
  case "$1" in
    --servers) servers=$2; shift 2 ;;
    --ports) ports=$2; shift 2 ;;
    --runs) runs=$2; shift 2 ;;
    -h | --help) sed -n '2,12p' "$0"; exit 0 ;;
    *) bins+=("$1"); shift ;;
  esac
done
[ ${#bins[@]} -gt 0 ] || { echo "usage: $0 [--servers N] [--ports N] [--runs N] BIN..." >&2; exit 2; }

work=$(mktemp -d)
pids=()
cleanup() {
  for p in "${pids[@]}"; do kill "$p" 2>/dev/null || true; done
  rm -rf "$work"
}
trap cleanup EXIT

server_bin=${bins[${#bins[@]}-1]}
first=
for i in $(seq 0 $((ports - 1))); do
  # Port 0: the server says the port it got on stderr's first line.
  "$server_bin" --practice-server 127.0.0.1:0 2> "$work/server$i.err" > /dev/null &
  pids+=($!)
done
declare -a port_of
for i in $(seq 0 $((ports - 1))); do
  for _ in $(seq 100); do
    port=$(sed -n 's/.*listening on 127\.0\.0\.1:\([0-9]*\).*/\1/p' "$work/server$i.err")
    [ -n "$port" ] && break
    sleep 0.05
  done
  [ -n "$port" ] || { echo "practice server $i did not start" >&2; exit 1; }
  port_of[$i]=$port
done
{
  echo "name,host,port,password_env"
  for i in $(seq 0 $((servers - 1))); do
    echo "s$i,127.0.0.1,${port_of[$((i % ports))]},BENCH_PW"
  done
} > "$work/targets.csv"
export BENCH_PW=practice HOME="$work/home"
mkdir -p "$HOME"
hard=$(ulimit -Hn)
echo "# $servers servers over $ports practice servers; soft limits 1024 and $hard (hard); load $(cut -d' ' -f1-3 /proc/loadavg)"
printf '%-40s %8s %8s %10s %5s\n' binary soft wall_s peak_KiB exit
for run in $(seq "$runs"); do
  for bin in "${bins[@]}"; do
    for soft in 1024 "$hard"; do
      out=$( (ulimit -Sn "$soft"; /usr/bin/time -f '%e %M' -o "$work/time" \
        "$bin" --targets "$work/targets.csv" --countdown 2s --at 1s \
        --announce 'say in {left}' --then seed > /dev/null 2> "$work/err"; echo $?) || true)
      read -r wall rss < <(tail -1 "$work/time")
      printf '%-40s %8s %8s %10s %5s\n' "$bin" "$soft" "$wall" "$rss" "$out"
    done
  done
done
echo
echo "# --follow on the same servers, 4 s in (poll 1s)"
printf '%-40s %8s %10s %8s\n' binary threads rss_KiB cpu_ms
tick=$(getconf CLK_TCK)
for run in $(seq "$runs"); do
  for bin in "${bins[@]}"; do
    "$bin" --targets "$work/targets.csv" --poll 1s --follow > /dev/null 2> "$work/err" &
    pid=$!
    sleep 4
    threads=$(ls "/proc/$pid/task" | wc -l)
    rss=$(awk '/VmRSS/ {print $2}' "/proc/$pid/status")
    cpu=$(awk -v t="$tick" '{print ($14 + $15) * 1000 / t}' "/proc/$pid/stat")
    kill "$pid"; wait "$pid" 2>/dev/null || true
    printf '%-40s %8s %10s %8s\n' "$bin" "$threads" "$rss" "$cpu"
  done
done
