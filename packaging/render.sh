#!/usr/bin/env bash
# Renders the Homebrew formula and the Scoop manifest from their templates with the release's
# version and the SHA-256 sums of its archives.
#   packaging/render.sh VERSION DIR
# DIR holds SHA256SUMS (sha256sum format, the archive names from packaging/archive.sh); writes
# DIR/rconsole.rb and DIR/rconsole.json. With VERSION 0.0.0-check and no SHA256SUMS it makes
# one from dummy sums, so .ci/package-check.sh can check the templates render completely.
set -euo pipefail
version=$1 dir=$2
root="$(cd "$(dirname "$0")/.." && pwd)"
repo=$(sed -n 's/^repository = "\(.*\)"/\1/p' "$root/Cargo.toml")
mkdir -p "$dir"
targets=(x86_64-apple-darwin aarch64-apple-darwin x86_64-unknown-linux-musl
  aarch64-unknown-linux-musl x86_64-pc-windows-gnu)
if [ "$version" = 0.0.0-check ] && [ ! -f "$dir/SHA256SUMS" ]; then
  for t in "${targets[@]}"; do
    ext=tar.gz
    [[ $t == *windows* ]] && ext=zip
    printf '%064d  rconsole-%s-%s.%s\n' 0 "$version" "$t" "$ext"
  done >"$dir/SHA256SUMS"
fi
sum() {
  local s
  s=$(awk -v f="$1" '$2 == f || $2 == "*" f { print $1 }' "$dir/SHA256SUMS")
  [ -n "$s" ] || { echo "render.sh: no sum for $1 in $dir/SHA256SUMS" >&2; exit 1; }
  echo "$s"
}
subst=(-e "s|@VERSION@|$version|g" -e "s|@REPO@|$repo|g")
for t in "${targets[@]}"; do
  ext=tar.gz
  [[ $t == *windows* ]] && ext=zip
  key=$(tr 'a-z-' 'A-Z_' <<<"$t")
  subst+=(-e "s|@SHA256_${key}@|$(sum "rconsole-$version-$t.$ext")|g")
done
sed "${subst[@]}" "$root/packaging/homebrew/rconsole.rb.in" >"$dir/rconsole.rb"
sed "${subst[@]}" "$root/packaging/scoop/rconsole.json.in" >"$dir/rconsole.json"
if grep -n '@[A-Z0-9_]*@' "$dir/rconsole.rb" "$dir/rconsole.json"; then
  echo "render.sh: placeholders left" >&2
  exit 1
fi
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$dir/rconsole.json"
echo "rendered $dir/rconsole.rb $dir/rconsole.json"
