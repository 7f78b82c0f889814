#!/usr/bin/env bash
# The one-shot cost of the static release binary (issue 20 item 4): for each revision given, the
# static musl `rcon` is built as .ci/cross.sh musl builds it (the Linux release archives' and the
# image's binary), the practice server is started, and a one-shot `list` against a server already
# learned is measured N times: instructions (callgrind's total Ir) and peak RSS
# (`/usr/bin/time -v`). Prints the median and range of each.
#
# Usage: bench/oneshot-cost.sh [--runs N] [REV...]
#   REV: a git revision (built from `git archive REV`, so uncommitted changes are left out) or
#   `.` for the working tree as it is. Default: `.`. Several revisions are measured in the same
#   run, round by round, so they see the same machine:
#       bench/oneshot-cost.sh --runs 5 main .
#   `bin:PATH` instead of a revision measures a binary already built (KEEP_BIN below).
#   RCON_BIN=path measures that binary instead (no build, REV ignored).
#   KEEP_BIN=PREFIX keeps the binaries (PREFIX.0, PREFIX.1, ...), KEEP_CALLGRIND=PREFIX the first
#   round's profiles, for `callgrind_annotate --inclusive=yes`; SYMBOLS=1 builds them unstripped
#   so that the profiles name functions.
# Needs: Debian's rustc/cargo with rust-web-src and musl-tools (see .ci/cross.sh), valgrind,
# GNU time. Builds go to $CARGO_TARGET_DIR/xplat/musl (default target/xplat/musl, shared with
# .ci/cross.sh so the dependencies are compiled once).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
runs=5
revs=()
while [ $# -gt 0 ]; do
  case "$1" in
    --runs) runs=$2; shift 2 ;;
    -h | --help) sed -n '2,16p' "$0"; exit 0 ;;
    *) revs+=("$1"); shift ;;
  esac
done
[ ${#revs[@]} -gt 0 ] || revs=(.)

target=x86_64-unknown-linux-musl
base=$(realpath -m "${CARGO_TARGET_DIR:-target}")/xplat
tdir="$base/musl"
# SYMBOLS=1: keep the symbol table (the release profile strips it) so callgrind_annotate names
# functions; the code is the same. Its own target dir, so the shipped build stays warm.
if [ -n "${SYMBOLS:-}" ]; then
  export CARGO_PROFILE_RELEASE_STRIP=false
  tdir="$base/musl-symbols"
fi
work=$(mktemp -d /tmp/oneshot-cost.XXXXXX)
server_pid=
cleanup() {
  [ -z "$server_pid" ] || kill "$server_pid" 2>/dev/null || true
  rm -rf "$work"
}
trap cleanup EXIT

# The static build, as .ci/cross.sh musl makes it (its comments say why each setting).
build() {
  local src=$1 out=$2
  mkdir -p "$base/musl-lib"
  ln -sf /usr/lib/llvm-14/lib/libunwind.a "$base/musl-lib/libunwind.a"
  (
    cd "$src"
    env PATH="/usr/bin:$PATH" CARGO=/usr/bin/cargo RUSTC=/usr/bin/rustc RUSTC_BOOTSTRAP=1 \
      CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_LINKER="$root/.ci/musl/cc" \
      CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C link-self-contained=no -L native=$base/musl-lib" \
      /usr/bin/cargo build --quiet --release --locked -Zbuild-std=std,panic_abort \
      --config profile.release.package.std.opt-level=3 \
      --config profile.release.package.core.opt-level=3 \
      --config profile.release.package.alloc.opt-level=3 --bin rcon \
      --target "$target" --target-dir "$tdir"
  )
  cp "$tdir/$target/release/rcon" "$out"
}

bins=()
names=()
if [ -n "${RCON_BIN:-}" ]; then
  bins=("$RCON_BIN")
  names=("$RCON_BIN")
else
  i=0
  for rev in "${revs[@]}"; do
    out="$work/rcon-$i"
    if [[ $rev == bin:* ]]; then
      cp "${rev#bin:}" "$out"
    elif [ "$rev" = . ]; then
      echo "== building the working tree" >&2
      build "$root" "$out"
    else
      echo "== building $rev ($(git rev-parse --short "$rev"))" >&2
      mkdir -p "$work/src-$i"
      git archive "$rev" | tar -x -C "$work/src-$i"
      build "$work/src-$i" "$out"
    fi
    bins+=("$out")
    names+=("$rev")
    i=$((i + 1))
  done
fi

# One practice server (strict vanilla), its learned-servers file in a private home.
home="$work/home"
mkdir -p "$home"
export HOME="$home" XDG_CONFIG_HOME="$home/.config" XDG_DATA_HOME="$home/.local/share" \
  XDG_STATE_HOME="$home/.local/state" XDG_CACHE_HOME="$home/.cache"
"${bins[0]}" --practice-server 127.0.0.1:0 >"$work/server.out" 2>&1 &
server_pid=$!
for _ in $(seq 100); do
  grep -Eq '127\.0\.0\.1:[0-9]+' "$work/server.out" && break
  sleep 0.05
done
port=$(grep -Eo '127\.0\.0\.1:[0-9]+' "$work/server.out" | head -1 | cut -d: -f2)
[ -n "$port" ] || { echo "oneshot-cost: the practice server did not start:" >&2; cat "$work/server.out" >&2; exit 1; }
args=(-H 127.0.0.1 -P "$port" -p practice list)

# Each binary learns the server once (the figures are for a learned server).
for bin in "${bins[@]}"; do
  "$bin" "${args[@]}" >/dev/null
done

median() { sort -n | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }
range() { sort -n | awk 'NR==1{lo=$1} {hi=$1} END {print lo "-" hi}'; }

for round in $(seq "$runs"); do
  for i in "${!bins[@]}"; do
    valgrind --tool=callgrind --callgrind-out-file="$work/cg-$i-$round.out" \
      "${bins[$i]}" "${args[@]}" >/dev/null 2>"$work/vg.err" ||
      { cat "$work/vg.err" >&2; exit 1; }
    grep -E '^(summary|totals):' "$work/cg-$i-$round.out" | head -1 | awk '{print $2}' >>"$work/ir-$i"
    /usr/bin/time -v "${bins[$i]}" "${args[@]}" 2>"$work/time.err" >/dev/null
    awk -F': ' '/Maximum resident set size/ {print $2}' "$work/time.err" >>"$work/rss-$i"
  done
done

echo "one-shot \`rcon -H 127.0.0.1 -P PORT -p practice list\`, learned vanilla practice server, $runs runs (load average $(cut -d' ' -f1-3 /proc/loadavg))"
printf '%-24s %14s %20s %12s %14s %10s\n' revision "instructions" "(range)" "peak RSS KiB" "(range)" "size"
for i in "${!bins[@]}"; do
  printf '%-24s %14s %20s %12s %14s %10s\n' "${names[$i]}" \
    "$(median <"$work/ir-$i")" "$(range <"$work/ir-$i")" \
    "$(median <"$work/rss-$i")" "$(range <"$work/rss-$i")" "$(stat -c %s "${bins[$i]}")"
done
if [ -n "${KEEP_BIN:-}" ]; then
  for i in "${!bins[@]}"; do cp "${bins[$i]}" "$KEEP_BIN.$i"; done
  echo "binaries: $KEEP_BIN.N"
fi
if [ -n "${KEEP_CALLGRIND:-}" ]; then
  for i in "${!bins[@]}"; do cp "$work/cg-$i-1.out" "$KEEP_CALLGRIND.$i"; done
  echo "callgrind profiles: $KEEP_CALLGRIND.N (callgrind_annotate --inclusive=yes FILE)"
fi
"${bins[0]}" -H 127.0.0.1 -P "$port" -p practice stop >/dev/null 2>&1 || true
