#!/usr/bin/env bash
# Builds the Debian package of the static musl binaries with dpkg-deb.
#   packaging/deb.sh VERSION TARGET BINDIR OUTDIR [REPO_URL]
# TARGET is x86_64-unknown-linux-musl (amd64) or aarch64-unknown-linux-musl (arm64); BINDIR
# holds its static `rcon`. REPO_URL (default: Cargo.toml's repository) is the
# Homepage and the copyright file's Source: the release workflow passes the repository it runs
# in. -> OUTDIR/rcon-console_VERSION-1_ARCH.deb; prints its path.
#
# dpkg-deb rather than cargo-deb: the binaries come from the release build (cross.sh's here,
# the build job's in release.yml), nothing is rebuilt or stripped again, and every control file
# is written here, where lintian's rules can be followed and the bytes kept reproducible:
# file times are SOURCE_DATE_EPOCH (else the last commit), owners root, gzip -n, single-threaded
# xz, sorted md5sums. .ci/release-check.sh runs lintian on it and builds it twice.
#
# Contents: /usr/bin/rcon (the management protocol built in), the man page, the bash, zsh
# and fish completions, the README, a DEP-5 copyright file, a changelog and lintian overrides.
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 VERSION TARGET BINDIR OUTDIR [REPO_URL]" >&2; exit 2; }
version=$1 target=$2 bindir=$3 out=$4
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/packaging/lib.sh"
repo=${5:-$(sed -n 's/^repository = "\(.*\)"/\1/p' "$root/Cargo.toml")}
case "$target" in
  x86_64-unknown-linux-musl) arch=amd64 ;;
  aarch64-unknown-linux-musl) arch=arm64 ;;
  *) echo "deb.sh: no Debian architecture for $target (static musl targets only)" >&2; exit 2 ;;
esac
epoch=$(release_epoch "$root")
export SOURCE_DATE_EPOCH=$epoch
debversion="$version-1"
maintainer="rconsole developers <rconsole@users.noreply.github.com>"
doc="usr/share/doc/$PACKAGE"

stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
pkg="$stage/pkg"
umask 022
mkdir -p "$pkg/DEBIAN" "$pkg/usr/bin" "$pkg/usr/share/man/man1" "$pkg/$doc" \
  "$pkg/usr/share/bash-completion/completions" "$pkg/usr/share/zsh/vendor-completions" \
  "$pkg/usr/share/fish/vendor_completions.d" "$pkg/usr/share/lintian/overrides"
[ -f "$bindir/rcon" ] || { echo "deb.sh: $bindir/rcon is missing" >&2; exit 1; }
install -m 755 "$bindir/rcon" "$pkg/usr/bin/rcon"
gzip -n -9 -c "$root/man/rcon.1" >"$pkg/usr/share/man/man1/rcon.1.gz"
install -m 644 "$root/completions/rcon.bash" "$pkg/usr/share/bash-completion/completions/rcon"
install -m 644 "$root/completions/_rcon" "$pkg/usr/share/zsh/vendor-completions/_rcon"
install -m 644 "$root/completions/rcon.fish" "$pkg/usr/share/fish/vendor_completions.d/rcon.fish"
# Each override says why (lintian's misreading of static-pie, no ITP bug to close).
install -m 644 "$root/packaging/deb/lintian-overrides" "$pkg/usr/share/lintian/overrides/$PACKAGE"
# Policy 12.3: documentation over 4 kB is compressed.
gzip -n -9 -c "$root/README.md" >"$pkg/$doc/README.md.gz"

# DEP-5 copyright. The MIT text is short and goes in whole; Apache-2.0 is in every Debian
# system's common-licenses, which Policy 12.5 asks to point at instead of copying it.
{
  echo "Format: https://www.debian.org/doc/packaging-manuals/copyright-format/1.0/"
  echo "Upstream-Name: $PACKAGE"
  echo "Source: $repo"
  echo
  echo "Files: *"
  sed -n 's/^Copyright (c) /Copyright: /p' "$root/LICENSE-MIT"
  echo "License: MIT or Apache-2.0"
  echo
  echo "License: MIT"
  # The text after the copyright line, indented, blank lines as " .".
  sed '1,/^Copyright/d' "$root/LICENSE-MIT" | sed '/./,$!d' | sed 's/^$/./; s/^/ /'
  echo
  echo "License: Apache-2.0"
  echo " Licensed under the Apache License, Version 2.0 (the \"License\"); you may not"
  echo " use this software except in compliance with the License."
  echo " ."
  echo " Unless required by applicable law or agreed to in writing, software distributed"
  echo " under the License is distributed on an \"AS IS\" BASIS, WITHOUT WARRANTIES OR"
  echo " CONDITIONS OF ANY KIND, either express or implied. See the License for the"
  echo " specific language governing permissions and limitations under the License."
  echo " ."
  echo " On Debian systems, the full text of the Apache License, Version 2.0 can be found"
  echo " in /usr/share/common-licenses/Apache-2.0."
} >"$pkg/$doc/copyright"
chmod 644 "$pkg/$doc/copyright"

# One entry per release, written from the version: the release notes live with the release.
{
  echo "$PACKAGE ($debversion) unstable; urgency=medium"
  echo
  echo "  * Upstream release $version."
  echo "    Release notes: $repo/releases/tag/v$version"
  echo
  echo " -- $maintainer  $(LC_ALL=C date -u -R -d "@$epoch")"
} | gzip -n -9 >"$pkg/$doc/changelog.Debian.gz"
chmod 644 "$pkg/$doc/changelog.Debian.gz" "$pkg/usr/share/man/man1/rcon.1.gz" "$pkg/$doc/README.md.gz"

(cd "$pkg" && find usr -type f -print | LC_ALL=C sort | xargs md5sum) >"$pkg/DEBIAN/md5sums"
# Installed-Size as dpkg-gencontrol counts it: KiB per file rounded up, 1 per other entry.
installed=$(cd "$pkg" && find usr \( -type f -printf '%s\n' \) -o \( ! -type f -printf '1024\n' \) |
  awk '{ kib += int(($1 + 1023) / 1024) } END { print kib }')
cat >"$pkg/DEBIAN/control" <<EOF
Package: $PACKAGE
Version: $debversion
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed
Section: net
Priority: optional
Homepage: $repo
Description: fast, correct RCON client for Minecraft and other game servers
 rcon talks RCON to Minecraft, Source-engine games, Factorio and Palworld, and
 also BattlEye RCon, Rust's WebRCON and the 7 Days to Die telnet console:
 one-off commands, an interactive console and batch input, directly, through
 SSH, or to many servers at once. rcon --mgmt speaks the Minecraft Server
 Management Protocol. The program is statically linked.
EOF
chmod 644 "$pkg/DEBIAN/control" "$pkg/DEBIAN/md5sums"
fix_dir_modes "$pkg"
set_times "$pkg" "$epoch"

mkdir -p "$out"
out=$(cd "$out" && pwd)
file="$out/${PACKAGE}_${debversion}_$arch.deb"
dpkg-deb --root-owner-group -Zxz --threads-max=1 --build "$pkg" "$file.tmp" >/dev/null
mv "$file.tmp" "$file"
echo "$file"
