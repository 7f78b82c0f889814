#!/usr/bin/env bash
# Smoke run of a built release: the programs in DIR (an unpacked archive, or /usr/bin of an
# installed .deb) run and do their job against the built-in practice servers.
#   packaging/smoke.sh VERSION DIR [RUNNER...]
# RUNNER runs a program of another architecture or OS: `wine`, `qemu-aarch64`, `arch -x86_64`.
# Checks, each failing the script:
#   - `rcon --version` says `rcon VERSION (commit C)`; with EXPECT_COMMIT=SHA, C is that commit
#     (12 digits) and not `-dirty`; no other program is there (one binary);
#   - `rcon --demo -c 'echo ...' -c list` answers both; `--demo help` arrives whole (more than
#     one 4096-character fragment);
#   - the management protocol: a practice management server and `server status` against it,
#     then `server stop`, through `rcon --mgmt` (built into rcon).
# Used by .ci/release-check.sh (every archive it can run) and release.yml's smoke jobs.
set -euo pipefail
. "$(dirname "$0")/lib.sh"
[ $# -ge 2 ] || { echo "usage: $0 VERSION DIR [RUNNER...]" >&2; exit 2; }
version=$1 dir=$2
shift 2
# The runner's words come first in every command. (macOS runners may run bash 3.2, where an
# empty array is unbound under set -u: hence the ${a[@]+...} forms.)
runner=("$@")
exe=
[ -f "$dir/rcon.exe" ] && exe=.exe
rcon=(${runner[@]+"${runner[@]}"} "$dir/rcon$exe")
fail() {
  echo "smoke.sh: $dir: $*" >&2
  exit 1
}
# Wine and Windows write \r\n.
run() { "$@" | tr -d '\r'; }

[ ! -e "$dir/rcon-mgmt$exe" ] || fail "rcon-mgmt$exe is there: rcon is one binary now"
for prog in rcon; do
  [ -f "$dir/$prog$exe" ] || fail "$prog$exe is missing"
  cmd=(${runner[@]+"${runner[@]}"} "$dir/$prog$exe")
  out=$(run "${cmd[@]}" --version) || fail "$prog --version failed"
  echo "   $prog --version: $out"
  pattern="^rcon ${version//./\\.} \\(commit ([0-9a-f]{12}(-dirty)?|unknown)\\)\$"
  [[ $out =~ $pattern ]] || fail "$prog --version says '$out', not version $version"
  if [ -n "${EXPECT_COMMIT:-}" ] && [ "${BASH_REMATCH[1]}" != "${EXPECT_COMMIT:0:12}" ]; then
    fail "$prog was built from ${BASH_REMATCH[1]}, not ${EXPECT_COMMIT:0:12}"
  fi
done

out=$(run "${rcon[@]}" --demo -c 'echo smoke test' -c list) || fail "rcon --demo failed"
grep -qx 'smoke test' <<<"$out" && grep -q 'players online' <<<"$out" ||
  fail "unexpected --demo output: $out"
size=$(run "${rcon[@]}" --demo help | wc -c) || fail "rcon --demo help failed"
[ "$size" -gt 4096 ] || fail "--demo help was $size bytes, not several fragments"
echo "   --demo: echo and list answered, help $size bytes"

client=("${rcon[@]}")
log=$(mktemp)
trap 'rm -f "$log"' EXIT
"${client[@]}" --practice-mgmt 127.0.0.1:0 >"$log" 2>&1 &
server=$!
url=$(await_output 'ws://127\.0\.0\.1:[0-9]+' "$log" "$server")
[ -n "$url" ] || { kill "$server" 2>/dev/null || true; fail "no practice management server: $(cat "$log")"; }
out=$(RCON_MGMT_SECRET=practice run "${client[@]}" --mgmt "$url" server status) ||
  { kill "$server" 2>/dev/null || true; fail "--mgmt server status failed: $out"; }
grep -q '^started: true' <<<"$out" || { kill "$server" 2>/dev/null || true; fail "--mgmt said: $out"; }
RCON_MGMT_SECRET=practice run "${client[@]}" --mgmt "$url" server stop >/dev/null ||
  { kill "$server" 2>/dev/null || true; fail "--mgmt server stop failed"; }
wait "$server" || fail "the practice management server exited with $?"
echo "   --mgmt: server status and server stop against the practice management server ($url)"
