#!/usr/bin/env bash
# Packs one release archive: the binary, man page, completions, README and licences.
#   packaging/archive.sh VERSION TARGET BINARY OUTDIR
# -> OUTDIR/rconsole-VERSION-TARGET.tar.gz (.zip for Windows targets), one top-level directory.
# Used by .github/workflows/release.yml and checked by .ci/cross.sh on the static musl build.
set -euo pipefail
version=$1 target=$2 binary=$3 out=$4
root="$(cd "$(dirname "$0")/.." && pwd)"
name="rconsole-$version-$target"
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/$name/completions" "$out"
cp "$binary" "$stage/$name/"
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
