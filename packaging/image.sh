#!/usr/bin/env bash
# Builds the container image for linux/amd64 and linux/arm64 with buildah, as a local manifest
# list named IMAGE (the release workflow then pushes it; .ci/release-check.sh inspects and runs
# it).
#   packaging/image.sh VERSION AMD64_BINDIR ARM64_BINDIR IMAGE [REPO_URL]
# Each BINDIR holds the static musl `rcon` of that architecture. REPO_URL
# (default: Cargo.toml's repository) is the org.opencontainers.image.source label.
# The build context is made here (see the Dockerfile): the binaries, the licences, the
# builder's CA bundle (/etc/ssl/certs/ca-certificates.crt, or CA_BUNDLE=FILE) and an empty data
# directory. Timestamps are SOURCE_DATE_EPOCH (else the last commit): `buildah --timestamp`
# gives the same image for the same inputs. buildah takes its storage and isolation from the
# environment (CONTAINERS_STORAGE_CONF, BUILDAH_ISOLATION).
set -euo pipefail
[ $# -ge 4 ] || { echo "usage: $0 VERSION AMD64_BINDIR ARM64_BINDIR IMAGE [REPO_URL]" >&2; exit 2; }
version=$1 amd64=$2 arm64=$3 image=$4
root="$(cd "$(dirname "$0")/.." && pwd)"
. "$root/packaging/lib.sh"
repo=${5:-$(sed -n 's/^repository = "\(.*\)"/\1/p' "$root/Cargo.toml")}
epoch=$(release_epoch "$root")
bundle=${CA_BUNDLE:-/etc/ssl/certs/ca-certificates.crt}
[ -s "$bundle" ] || { echo "image.sh: no CA bundle at $bundle (Debian: apt install ca-certificates)" >&2; exit 1; }
revision=$(git -C "$root" rev-parse HEAD 2>/dev/null || echo unknown)

ctx=$(mktemp -d)
trap 'rm -rf "$ctx"' EXIT
umask 022
mkdir -p "$ctx/bin/amd64" "$ctx/bin/arm64" "$ctx/data"
install -m 755 "$amd64/rcon" "$ctx/bin/amd64/rcon"
install -m 755 "$arm64/rcon" "$ctx/bin/arm64/rcon"
install -m 644 "$root/LICENSE-MIT" "$root/LICENSE-APACHE" "$root/Dockerfile" "$ctx/"
install -m 644 "$bundle" "$ctx/ca-certificates.crt"

created=$(date -u -d "@$epoch" +%Y-%m-%dT%H:%M:%SZ)
# A manifest list of that name from an earlier run would gain a second pair of images.
buildah manifest rm "$image" >/dev/null 2>&1 || true
buildah build --quiet --timestamp "$epoch" --platform linux/amd64,linux/arm64 --manifest "$image" \
  --label "org.opencontainers.image.version=$version" \
  --label "org.opencontainers.image.revision=$revision" \
  --label "org.opencontainers.image.created=$created" \
  --label "org.opencontainers.image.source=$repo" \
  --label "org.opencontainers.image.url=$repo" \
  -f "$ctx/Dockerfile" "$ctx" >/dev/null
echo "$image"
