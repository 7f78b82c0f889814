#!/usr/bin/env bash
# Packs one release archive: the binaries, man page, completions, README and licences.
#   packaging/archive.sh VERSION TARGET BINARY OUTDIR
# BINARY is `rcon` (`rcon.exe`); its sibling `rcon-mgmt` (`rcon-mgmt.exe`), which `rcon --mgmt`
# runs from rcon's own directory, must sit next to it and goes into the archive next to it.
# -> OUTDIR/rconsole-VERSION-TARGET.tar.gz (.zip for Windows targets), one top-level directory.
# Used by .github/workflows/release.yml and checked by .ci/cross.sh on the static musl build.
set -euo pipefail
version=$1 target=$2 binary=$3 out=$4
root="$(cd "$(dirname "$0")/.." && pwd)"
name="rconsole-$version-$target"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name/completions" "$out"
mgmt="$(dirname "$binary")/rcon-mgmt"
case "$target" in *windows*) mgmt=$mgmt.exe ;; esac
[ -f "$mgmt" ] || { echo "archive.sh: $mgmt is missing (rcon --mgmt runs it)" >&2; exit 1; }
cp "$binary" "$mgmt" "$stage/$name/"
cp "$root/man/rcon.1" "$root/README.md" "$root/LICENSE-MIT" "$root/LICENSE-APACHE" "$stage/$name/"
cp "$root"/completions/* "$stage/$name/completions/"
out=$(cd "$out" && pwd)
case "$target" in
  *windows*)
    (cd "$stage" && python3 -c 'import shutil,sys; shutil.make_archive(sys.argv[1], "zip", ".", sys.argv[2])' \
      "$out/$name" "$name")
    echo "$out/$name.zip"
    ;;
  *)
    tar -C "$stage" --owner=0 --group=0 --numeric-owner -czf "$out/$name.tar.gz" "$name"
    echo "$out/$name.tar.gz"
    ;;
esac
