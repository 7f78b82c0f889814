#!/usr/bin/env bash
# Renders the Homebrew formula and the Scoop manifest from their templates with the release's
# version, address and the SHA-256 sums of its archives.
#   packaging/render.sh VERSION DIR [REPO_URL]
# DIR holds SHA256SUMS (sha256sum format, the archive names from packaging/archive.sh); writes
# DIR/rcon-console.rb and DIR/rcon-console.json. REPO_URL is where the release is published
# (release.yml passes the repository it runs in, so a fork's formula points at the fork);
# default Cargo.toml's repository. With VERSION 0.0.0-check and no SHA256SUMS it makes one from
# dummy sums, so .ci/package-check.sh can check the templates render completely.
set -euo pipefail
[ $# -ge 2 ] || { echo "usage: $0 VERSION DIR [REPO_URL]" >&2; exit 2; }
version=$1 dir=$2
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/packaging/lib.sh"
repo=${3:-$(sed -n 's/^repository = "\(.*\)"/\1/p' "$root/Cargo.toml")}
case "$repo" in
  https://*) ;;
  *) echo "render.sh: the repository address '$repo' is not an https:// URL" >&2; exit 2 ;;
esac
mkdir -p "$dir"
targets=(x86_64-apple-darwin aarch64-apple-darwin x86_64-unknown-linux-musl
  aarch64-unknown-linux-musl x86_64-pc-windows-gnu)
archive() {
  local ext=tar.gz
  [[ $1 == *windows* ]] && ext=zip
  echo "$PACKAGE-$version-$1.$ext"
}
if [ "$version" = 0.0.0-check ] && [ ! -f "$dir/SHA256SUMS" ]; then
  for t in "${targets[@]}"; do
    printf '%064d  %s\n' 0 "$(archive "$t")"
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
  key=$(tr 'a-z-' 'A-Z_' <<<"$t")
  subst+=(-e "s|@SHA256_${key}@|$(sum "$(archive "$t")")|g")
done
sed "${subst[@]}" "$root/packaging/homebrew/$PACKAGE.rb.in" >"$dir/$PACKAGE.rb"
sed "${subst[@]}" "$root/packaging/scoop/$PACKAGE.json.in" >"$dir/$PACKAGE.json"
if grep -n '@[A-Z0-9_]*@' "$dir/$PACKAGE.rb" "$dir/$PACKAGE.json"; then
  echo "render.sh: placeholders left" >&2
  exit 1
fi
python3 -c 'import json,sys; json.load(open(sys.argv[1]))' "$dir/$PACKAGE.json"
echo "rendered $dir/$PACKAGE.rb $dir/$PACKAGE.json"
