#!/usr/bin/env bash
# Writes src/oneshot.order: the functions of the rcon binary that a one-shot `list` runs, in
# the order callgrind first meets them. build.rs hands the file to the linker (x86_64 Linux,
# glibc, LLD) so that those functions sit together: a one-shot then maps a few hundred KiB of
# code instead of most of the 3.3 MB (issue 38: peak RSS). Run it after changes that rename
# or add functions on the one-shot path; a stale list only costs RSS (names the build no
# longer has are skipped), bench/oneshot-glibc.sh shows the figure.
#
# Usage: bench/symbol-order.sh      (builds the release binary with symbols; needs valgrind)
set -euo pipefail
cd "$(dirname "$0")/.."
CARGO_PROFILE_RELEASE_STRIP=false cargo build --release --locked --bin rcon
bin=$(mktemp); cp target/release/rcon "$bin"; chmod +x "$bin"
out=$(mktemp); home=$(mktemp -d); profile=$(mktemp)
HOME=$home "$bin" --practice-server 127.0.0.1:0 >"$out" 2>/dev/null &
server=$!
trap 'kill $server 2>/dev/null; rm -rf "$bin" "$out" "$home" "$profile"' EXIT
for _ in $(seq 50); do [ -s "$out" ] && break; sleep 0.1; done
port=$(sed 's/.*://' "$out")
# Steady state first: the learned store written, as a one-shot usually finds it.
for _ in 1 2 3; do HOME=$home RCON_PASSWORD=practice "$bin" -H 127.0.0.1 -P "$port" list >/dev/null; done
HOME=$home RCON_PASSWORD=practice valgrind -q --tool=callgrind --demangle=no \
  --callgrind-out-file="$profile" "$bin" -H 127.0.0.1 -P "$port" list >/dev/null
python3 - "$profile" "$bin" >src/oneshot.order <<'PY'
import re, sys
# callgrind names a function once, on its first fn= or cfn= line, and by its number after.
names, objects, current, seen = {}, {}, None, []
for line in open(sys.argv[1]):
    line = line.rstrip("\n")
    m = re.match(r"^(c?ob)=\((\d+)\)(?: (.*))?$", line)
    if m:
        if m.group(3) is not None:
            objects[m.group(2)] = m.group(3)
        if m.group(1) == "ob":
            current = objects.get(m.group(2))
        continue
    m = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line)
    if m:
        if m.group(3) is not None:
            names[m.group(2)] = m.group(3)
        name = names.get(m.group(2))
        if m.group(1) == "fn" and current == sys.argv[2] and name and not name.startswith("0x") and name not in seen:
            seen.append(name)
print("\n".join(seen))
PY
echo "src/oneshot.order: $(wc -l <src/oneshot.order) functions"
