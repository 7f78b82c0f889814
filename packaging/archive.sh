#!/usr/bin/env bash
# Packs one release archive: the binary, man page, completions, README and licences.
#   packaging/archive.sh VERSION TARGET BINARY OUTDIR
# BINARY is `rcon` (`rcon.exe`), the one program (the management protocol is built in).
# -> OUTDIR/rcon-console-VERSION-TARGET.tar.gz (.zip for Windows targets), one top-level
# directory; prints the archive's path.
#
# Reproducible: two runs on one commit give the same bytes whatever the clock, umask or input
# files' times. Every entry has the time of SOURCE_DATE_EPOCH (else the last commit), owner
# 0:0 with no names, fixed modes (755 programs and directories, 644 the rest), and the entries
# go in in sorted order; gzip -n leaves out the name and time it would store.
# Works with GNU tar (Linux runners) and BSD tar (libarchive's bsdtar, `tar` on macOS runners),
# whose spellings of "owner 0" differ; .ci/release-check.sh runs it with bsdtar as `tar` for
# the macOS archives. Used by .github/workflows/release.yml and .ci/release-check.sh.
set -euo pipefail
[ $# -eq 4 ] || { echo "usage: $0 VERSION TARGET BINARY OUTDIR" >&2; exit 2; }
version=$1 target=$2 binary=$3 out=$4
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/packaging/lib.sh"
epoch=$(release_epoch "$root")
name="$PACKAGE-$version-$target"
exe=
case "$target" in *windows*) exe=.exe ;; esac
[ -f "$binary" ] || { echo "archive.sh: $binary is missing" >&2; exit 1; }

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name/completions" "$out"
install -m 755 "$binary" "$stage/$name/rcon$exe"
install -m 644 "$root/man/rcon.1" "$root/README.md" "$root/LICENSE-MIT" "$root/LICENSE-APACHE" \
  "$stage/$name/"
install -m 644 "$root"/completions/* "$stage/$name/completions/"
fix_dir_modes "$stage"
set_times "$stage/$name" "$epoch"
out=$(cd "$out" && pwd)

case "$target" in
  *windows*)
    # Python's zipfile with every field fixed: sorted entries, the epoch's date (zip cannot
    # go before 1980), Unix modes, deflate level 9.
    python3 - "$stage" "$name" "$out/$name.zip" "$epoch" <<'EOF'
import os, sys, time, zipfile
stage, name, out, epoch = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4])
when = time.gmtime(max(epoch, 315532800))[:6]
paths = []
for top, dirs, files in os.walk(os.path.join(stage, name)):
    rel = os.path.relpath(top, stage).replace(os.sep, "/")
    paths.append(rel + "/")
    paths += [rel + "/" + f for f in files]
with zipfile.ZipFile(out + ".tmp", "w") as z:
    for path in sorted(paths):
        info = zipfile.ZipInfo(path, when)
        info.create_system = 3
        full = os.path.join(stage, path)
        mode = os.stat(full).st_mode & 0o777
        if path.endswith("/"):
            info.external_attr = (0o40000 | mode) << 16 | 0x10
            z.writestr(info, b"")
        else:
            info.external_attr = (0o100000 | mode) << 16
            info.compress_type = zipfile.ZIP_DEFLATED
            with open(full, "rb") as f:
                z.writestr(info, f.read(), compresslevel=9)
os.replace(out + ".tmp", out)
EOF
    echo "$out/$name.zip"
    ;;
  *)
    if tar --version 2>/dev/null | grep -q bsdtar; then
      # --numeric-owner on create is --uname "" --gname "" here.
      owner=(--uid 0 --gid 0 --numeric-owner --no-xattrs --no-acls --no-fflags)
    else
      owner=(--owner=0 --group=0 --numeric-owner --no-xattrs --no-acls --no-selinux)
    fi
    # COPYFILE_DISABLE: macOS's bsdtar would add ._ files for extended attributes.
    (cd "$stage" && find "$name" -print | LC_ALL=C sort |
      COPYFILE_DISABLE=1 tar --format=ustar "${owner[@]}" --no-recursion -T - -cf -) |
      gzip -n -9 >"$out/$name.tar.gz.tmp"
    mv "$out/$name.tar.gz.tmp" "$out/$name.tar.gz"
    echo "$out/$name.tar.gz"
    ;;
esac
