#!/usr/bin/env bash
# Release dry run (issue 22), called by .ci/run after .ci/cross.sh: builds every artifact
# .github/workflows/release.yml publishes, with the same packaging/ scripts, from the binaries
# cross.sh has just built (nothing is compiled here), and checks each one:
#   - the five archives (static musl x86_64 and aarch64, Windows zip, macOS x86_64 and aarch64,
#     the macOS ones packed with BSD tar as `tar`, as on macOS runners): exact contents, owners
#     0:0 without names, modes, every time = SOURCE_DATE_EPOCH, sorted entries, the binaries'
#     formats; each packed twice (another umask, binaries with other times) and byte-identical;
#   - every binary that can run here run from its unpacked archive (packaging/smoke.sh:
#     --version, the practice server, --mgmt against the practice management server): x86_64
#     natively, aarch64 under qemu-user, Windows under Wine. Mach-O cannot run here: the
#     workflow's smoke jobs run those on macOS;
#   - the .deb (amd64): contents, lintian with no error or warning (pedantic), built twice and
#     byte-identical, its programs run from the unpacked package;
#   - SHA256SUMS over all of them, verified; the Homebrew formula and Scoop manifest rendered
#     for a fork's address: every URL under that fork's release, every sum the archive's,
#     Ruby syntax and JSON valid;
#   - the container image for linux/amd64 and linux/arm64 built with buildah (vfs storage,
#     chroot isolation): its config (user, entrypoint, environment, OCI labels), its files (CA
#     bundle, data directory owned by the image's user); the amd64 image run with `buildah run`
#     as its user: the practice server, a learned server written to /data, a wss:// connection
#     failing on the certificate (so the trust store was read) rather than on an empty store;
#     the arm64 image's rcon run under qemu-user from its mounted root.
# Binaries' profiles: x86_64 musl is cross.sh's release build (what ships); aarch64 musl,
# Windows and macOS are its dev builds (release.yml builds those in release on their runners).
#
# Usage: .ci/release-check.sh   (after .ci/cross.sh all; work files in $CARGO_TARGET_DIR/xplat)
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
. packaging/lib.sh
base=$(realpath -m "${CARGO_TARGET_DIR:-target}")/xplat
version=$(cargo_version .)
SOURCE_DATE_EPOCH=$(release_epoch .)
export SOURCE_DATE_EPOCH
# The fork address the formula and manifest are rendered for: URLs must follow it.
fork=https://github.com/example-fork/rconsole-fork
commit=
if git diff --quiet HEAD 2>/dev/null; then
  commit=$(git rev-parse HEAD)
fi

work="$base/release"
rm -rf "$work"
mkdir -p "$work/dist" "$work/again" "$work/unpacked" "$work/shim"
dist="$work/dist"

step() { echo "== release-check: $*"; }
fail() {
  echo "release-check: $*" >&2
  exit 1
}

# Where cross.sh left each target's rcon (one binary: the management protocol is built in).
declare -A bins=(
  [x86_64-unknown-linux-musl]="$base/musl/x86_64-unknown-linux-musl/release"
  [aarch64-unknown-linux-musl]="$base/musl-aarch64/aarch64-unknown-linux-musl/debug"
  [x86_64-pc-windows-gnu]="$base/windows/x86_64-pc-windows-gnu/debug"
  [x86_64-apple-darwin]="$base/macos/x86_64-apple-darwin/debug"
  [aarch64-apple-darwin]="$base/macos/aarch64-apple-darwin/debug"
)
# What `file` must say of each target's programs.
declare -A kind=(
  [x86_64-unknown-linux-musl]="ELF 64-bit LSB .*x86-64.*static(ally|-pie) linked"
  [aarch64-unknown-linux-musl]="ELF 64-bit LSB .*ARM aarch64.*statically linked"
  [x86_64-pc-windows-gnu]="PE32\+ executable .*x86-64"
  [x86_64-apple-darwin]="Mach-O 64-bit x86_64 executable"
  [aarch64-apple-darwin]="Mach-O 64-bit arm64 executable"
)
targets=(x86_64-unknown-linux-musl aarch64-unknown-linux-musl x86_64-pc-windows-gnu
  x86_64-apple-darwin aarch64-apple-darwin)
# macOS runners' tar is libarchive's bsdtar: the macOS archives are packed with it.
ln -s "$(command -v bsdtar)" "$work/shim/tar"

# Checks an archive's entries (names, order, owners, modes, times), python's tarfile/zipfile:
#   check_entries ARCHIVE TOPDIR EXE
check_entries() {
  python3 - "$@" "$SOURCE_DATE_EPOCH" "$root" <<'EOF'
import calendar, os, sys, tarfile, zipfile
archive, top, exe, epoch, root = sys.argv[1], sys.argv[2], sys.argv[3], int(sys.argv[4]), sys.argv[5]
completions = sorted(os.listdir(os.path.join(root, "completions")))
programs = {f"{top}/rcon{exe}"}
want = sorted([f"{top}/", f"{top}/completions/"] + [f"{top}/completions/{c}" for c in completions]
              + [f"{top}/{f}" for f in ("LICENSE-APACHE", "LICENSE-MIT", "README.md", "rcon.1")]
              + sorted(programs))
problems = []
if archive.endswith(".zip"):
    with zipfile.ZipFile(archive) as z:
        infos = z.infolist()
    names = [i.filename for i in infos]
    for i in infos:
        mode = (i.external_attr >> 16) & 0o777
        when = calendar.timegm(i.date_time + (0, 0, 0))
        if abs(when - epoch) > 1:  # zip keeps even seconds
            problems.append(f"{i.filename}: time {when}, not {epoch}")
        expect = 0o755 if i.filename.endswith("/") or i.filename in programs else 0o644
        if mode != expect:
            problems.append(f"{i.filename}: mode {mode:o}, not {expect:o}")
else:
    with tarfile.open(archive, "r:gz") as t:
        members = t.getmembers()
    names = [m.name + ("/" if m.isdir() else "") for m in members]
    for m, name in zip(members, names):
        if (m.uid, m.gid, m.uname, m.gname) != (0, 0, "", ""):
            problems.append(f"{name}: owner {m.uid}:{m.gid} {m.uname!r}:{m.gname!r}")
        if m.mtime != epoch:
            problems.append(f"{name}: time {m.mtime}, not {epoch}")
        expect = 0o755 if m.isdir() or name in programs else 0o644
        if m.mode != expect:
            problems.append(f"{name}: mode {m.mode:o}, not {expect:o}")
        if not (m.isdir() or m.isfile()):
            problems.append(f"{name}: neither a file nor a directory")
if names != want:
    problems.append(f"entries {names}\n  want    {want}")
if problems:
    sys.exit(f"{archive}:\n  " + "\n  ".join(problems))
owners = "" if archive.endswith(".zip") else ", owners 0:0"
print(f"   {os.path.basename(archive)}: {len(names)} entries{owners}, modes, times, order")
EOF
}

step "archives (the macOS ones with bsdtar as tar), each packed twice"
for target in "${targets[@]}"; do
  dir=${bins[$target]}
  exe=
  [[ $target == *windows* ]] && exe=.exe
  [ -f "$dir/rcon$exe" ] ||
    fail "no $target binaries in $dir: run .ci/cross.sh first"
  path=$PATH
  [[ $target == *apple* ]] && path="$work/shim:$PATH"
  archive=$(PATH=$path bash packaging/archive.sh "$version" "$target" "$dir/rcon$exe" "$dist")
  # The second build: other input times, a umask that would drop every group and other bit.
  mkdir -p "$work/copies/$target"
  cp "$dir/rcon$exe" "$work/copies/$target/"
  touch -d '2001-02-03 04:05:06' "$work/copies/$target"/*
  again=$(umask 077 && PATH=$path bash packaging/archive.sh "$version" "$target" \
    "$work/copies/$target/rcon$exe" "$work/again")
  cmp "$archive" "$again" || fail "two builds of $(basename "$archive") differ"
  top=$PACKAGE-$version-$target
  check_entries "$archive" "$top" "$exe"
  case "$archive" in
    *.zip) python3 -m zipfile -e "$archive" "$work/unpacked/" ;;
    *) tar -C "$work/unpacked" -xzf "$archive" ;;
  esac
  desc=$(file -b "$work/unpacked/$top/rcon$exe")
  grep -Eq "${kind[$target]}" <<<"$desc" || fail "$top/rcon$exe is: $desc"
  echo "   $(basename "$archive"): byte-identical twice ($(sha256sum <"$archive" | cut -c1-16)...), $(file -b "$work/unpacked/$top/rcon$exe" | cut -d, -f1-2)"
done

step "the programs run from their archives"
unpacked() { echo "$work/unpacked/$PACKAGE-$version-$1"; }
echo "   x86_64-unknown-linux-musl, natively:"
EXPECT_COMMIT=$commit bash packaging/smoke.sh "$version" "$(unpacked x86_64-unknown-linux-musl)"
echo "   aarch64-unknown-linux-musl, under qemu-user:"
EXPECT_COMMIT=$commit bash packaging/smoke.sh "$version" "$(unpacked aarch64-unknown-linux-musl)" qemu-aarch64
# cross.sh's Wine prefix, with its bcryptprimitives.dll stand-in (docs/platforms.md).
export WINEPREFIX="$base/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
[ -f "$WINEPREFIX/drive_c/windows/system32/bcryptprimitives.dll" ] ||
  fail "no Wine prefix at $WINEPREFIX: run .ci/cross.sh windows first"
echo "   x86_64-pc-windows-gnu, under Wine:"
EXPECT_COMMIT=$commit bash packaging/smoke.sh "$version" "$(unpacked x86_64-pc-windows-gnu)" wine
wineserver -k || true
echo "   (the macOS programs are Mach-O: release.yml's smoke jobs run them on macOS)"

step ".deb: contents, lintian, built twice, its programs run"
deb=$(bash packaging/deb.sh "$version" x86_64-unknown-linux-musl "${bins[x86_64-unknown-linux-musl]}" "$dist")
(umask 077 && bash packaging/deb.sh "$version" x86_64-unknown-linux-musl \
  "$work/copies/x86_64-unknown-linux-musl" "$work/again" >/dev/null)
cmp "$deb" "$work/again/$(basename "$deb")" || fail "two builds of $(basename "$deb") differ"
[ "$(basename "$deb")" = "${PACKAGE}_$version-1_amd64.deb" ] || fail "unexpected name $deb"
listing=$(dpkg-deb --contents "$deb" | awk '{ print $2, $6 }' | LC_ALL=C sort)
want="root/root ./
root/root ./usr/
root/root ./usr/bin/
root/root ./usr/bin/rcon
root/root ./usr/share/
root/root ./usr/share/bash-completion/
root/root ./usr/share/bash-completion/completions/
root/root ./usr/share/bash-completion/completions/rcon
root/root ./usr/share/doc/
root/root ./usr/share/doc/$PACKAGE/
root/root ./usr/share/doc/$PACKAGE/README.md.gz
root/root ./usr/share/doc/$PACKAGE/changelog.Debian.gz
root/root ./usr/share/doc/$PACKAGE/copyright
root/root ./usr/share/fish/
root/root ./usr/share/fish/vendor_completions.d/
root/root ./usr/share/fish/vendor_completions.d/rcon.fish
root/root ./usr/share/lintian/
root/root ./usr/share/lintian/overrides/
root/root ./usr/share/lintian/overrides/$PACKAGE
root/root ./usr/share/man/
root/root ./usr/share/man/man1/
root/root ./usr/share/man/man1/rcon.1.gz
root/root ./usr/share/zsh/
root/root ./usr/share/zsh/vendor-completions/
root/root ./usr/share/zsh/vendor-completions/_rcon"
[ "$listing" = "$want" ] || fail "$(basename "$deb") holds:
$listing"
[ "$(dpkg-deb --field "$deb" Package Version Architecture | tr '\n' ' ')" = \
  "Package: $PACKAGE Version: $version-1 Architecture: amd64 " ] || fail "$(dpkg-deb --field "$deb")"
# lintian refuses nothing as root but says so on stderr; its findings go to stdout.
(cd "$work" && lintian --pedantic --fail-on error,warning,pedantic "$deb" 2>/dev/null) ||
  fail "lintian: $(cd "$work" && lintian --pedantic "$deb" 2>&1)"
dpkg-deb --extract "$deb" "$work/deb-root"
EXPECT_COMMIT=$commit bash packaging/smoke.sh "$version" "$work/deb-root/usr/bin"
echo "   $(basename "$deb"): $(echo "$listing" | wc -l) entries, lintian clean, byte-identical twice"

step "SHA256SUMS, the formula and the manifest (rendered for a fork: $fork)"
(cd "$dist" && sha256sum -- * >SHA256SUMS && sha256sum --quiet --check SHA256SUMS)
[ "$(wc -l <"$dist/SHA256SUMS")" -eq 6 ] || fail "SHA256SUMS lists $(wc -l <"$dist/SHA256SUMS") files, not 6"
bash packaging/render.sh "$version" "$dist" "$fork" >/dev/null
ruby -c "$dist/$PACKAGE.rb" >/dev/null || fail "$PACKAGE.rb is not valid Ruby"
python3 - "$dist" "$PACKAGE" "$version" "$fork" <<'EOF'
import json, re, sys
dist, package, version, fork = sys.argv[1:5]
sums = dict(reversed(line.split()) for line in open(f"{dist}/SHA256SUMS"))
prefix = f"{fork}/releases/download/v{version}/"
formula = open(f"{dist}/{package}.rb").read()
pairs = re.findall(r'url "([^"]+)"\s+sha256 "([0-9a-f]{64})"', formula)
manifest = json.load(open(f"{dist}/{package}.json"))
arch = manifest["architecture"]["64bit"]
pairs.append((arch["url"], arch["hash"]))
problems = []
for url, digest in pairs:
    name = url[len(prefix):] if url.startswith(prefix) else None
    if name is None:
        problems.append(f"{url} is not under {prefix}")
    elif sums.get(name) != digest:
        problems.append(f"{url}: sum {digest}, SHA256SUMS says {sums.get(name)}")
if len(pairs) != 5:
    problems.append(f"{len(pairs)} url/sum pairs, not 5")
if fork not in manifest["homepage"] or fork not in formula.split("homepage", 1)[1].split("\n")[0]:
    problems.append("the homepage is not the fork's")
if "rconsole/rconsole" in formula or "rconsole/rconsole" in json.dumps(manifest):
    problems.append("the upstream address is still in the output")
if problems:
    sys.exit("\n".join(problems))
print(f"   {package}.rb and {package}.json: 5 archives, URLs under {prefix}, sums match")
EOF

step "container image (buildah: vfs storage, chroot isolation)"
cat >"$work/storage.conf" <<EOF
[storage]
driver = "vfs"
graphroot = "$work/containers/storage"
runroot = "$work/containers/run"
EOF
export CONTAINERS_STORAGE_CONF="$work/storage.conf" BUILDAH_ISOLATION=chroot
image=localhost/$PACKAGE:check
bash packaging/image.sh "$version" "${bins[x86_64-unknown-linux-musl]}" \
  "${bins[aarch64-unknown-linux-musl]}" "$image" "$fork" >/dev/null
platforms=$(buildah manifest inspect "$image" | python3 -c '
import json, sys
print(" ".join(sorted(m["platform"]["architecture"] for m in json.load(sys.stdin)["manifests"])))')
[ "$platforms" = "amd64 arm64" ] || fail "the image's platforms are '$platforms'"
containers=()
cleanup_containers() {
  local c
  for c in "${containers[@]}"; do buildah rm "$c" >/dev/null 2>&1 || true; done
  [ -n "${server:-}" ] && kill "$server" 2>/dev/null || true
}
trap cleanup_containers EXIT
for arch in amd64 arm64; do
  ctr=$(buildah from --quiet --arch "$arch" "$image")
  containers+=("$ctr")
  buildah inspect --type container "$ctr" >"$work/inspect-$arch.json"
  python3 - "$work/inspect-$arch.json" "$arch" "$version" "$fork" "$commit" <<'EOF'
import json, sys
inspect, arch, version, fork, commit = sys.argv[1:6]
image = json.load(open(inspect))["OCIv1"]
config = image["config"]
labels = config.get("Labels", {})
problems = []
if image["architecture"] != arch:
    problems.append(f"architecture {image['architecture']}")
want = {"User": "65534:65534", "Entrypoint": ["/rcon"], "Cmd": ["--help"]}
for key, value in want.items():
    if config.get(key) != value:
        problems.append(f"{key} is {config.get(key)!r}, not {value!r}")
env = dict(e.split("=", 1) for e in config.get("Env", []))
for key, value in {"RCON_DATA_DIR": "/data", "RCON_CONFIG_DIR": "/config"}.items():
    if env.get(key) != value:
        problems.append(f"{key}={env.get(key)!r}")
for key, value in {"version": version, "source": fork, "licenses": "MIT OR Apache-2.0",
                   "title": "rcon-console"}.items():
    if labels.get("org.opencontainers.image." + key) != value:
        problems.append(f"label {key} is {labels.get('org.opencontainers.image.' + key)!r}")
if commit and labels.get("org.opencontainers.image.revision") != commit:
    problems.append(f"label revision is {labels.get('org.opencontainers.image.revision')!r}")
for key in ("created",):
    if not labels.get("org.opencontainers.image." + key):
        problems.append(f"no {key} label")
if problems:
    sys.exit(f"image {arch}: " + "; ".join(problems))
print(f"   {arch}: user 65534, entrypoint /rcon, RCON_DATA_DIR=/data, OCI labels")
EOF
  mnt=$(buildah mount "$ctr")
  files=$(cd "$mnt" && find . -mindepth 1 -printf '%p %U:%G %m\n' | LC_ALL=C sort)
  want="./data 65534:65534 755
./etc 0:0 755
./etc/ssl 0:0 755
./etc/ssl/certs 0:0 755
./etc/ssl/certs/ca-certificates.crt 0:0 644
./licenses 0:0 755
./licenses/LICENSE-APACHE 0:0 644
./licenses/LICENSE-MIT 0:0 644
./rcon 0:0 755"
  [ "$files" = "$want" ] || fail "the $arch image holds:
$files"
  certs=$(grep -c 'BEGIN CERTIFICATE' "$mnt/etc/ssl/certs/ca-certificates.crt")
  [ "$certs" -ge 100 ] || fail "the image's CA bundle has $certs certificates"
  desc=$(file -b "$mnt/rcon")
  case $arch in
    amd64) grep -Eq "${kind[x86_64-unknown-linux-musl]}" <<<"$desc" || fail "amd64 /rcon: $desc" ;;
    arm64) grep -Eq "${kind[aarch64-unknown-linux-musl]}" <<<"$desc" || fail "arm64 /rcon: $desc" ;;
  esac
  echo "   $arch: files, owners and modes; /data owned by 65534; $certs CA certificates"
done

amd64=${containers[0]} arm64=${containers[1]}
mnt=$(buildah mount "$amd64")
inside() { buildah run "$amd64" -- "$@"; }
out=$(inside /rcon --version)
[ "$out" = "$(bash -c "'$(unpacked x86_64-unknown-linux-musl)/rcon' --version")" ] || fail "image rcon --version: $out"
out=$(inside /rcon --demo -c 'echo from the image' -c list)
grep -qx 'from the image' <<<"$out" || fail "the image's rcon --demo said: $out"
# A real server outside the container: rcon learns how its answers end and keeps that in /data.
log="$work/practice.log"
"$(unpacked x86_64-unknown-linux-musl)/rcon" --practice-server 127.0.0.1:0 >"$log" 2>&1 &
server=$!
addr=$(await_output '127\.0\.0\.1:[0-9]+' "$log" "$server")
[ -n "$addr" ] || fail "the practice server did not start: $(cat "$log")"
out=$(inside /rcon -H 127.0.0.1 -P "${addr#*:}" -p practice list)
grep -q 'players online' <<<"$out" || fail "rcon in the image against $addr said: $out"
learned=$(find "$mnt/data" -type f -printf '%P %U:%G\n')
grep -q '^learned-servers.toml 65534:65534$' <<<"$learned" ||
  fail "nothing learned was kept in the image's /data: '$learned'"
"$(unpacked x86_64-unknown-linux-musl)/rcon" -H 127.0.0.1 -P "${addr#*:}" -p practice stop \
  >/dev/null || kill "$server"
wait "$server" || true
server=
# wss:// with a self-signed certificate: refused by the certificate check, which needs a trust
# store; without the bundle it would be "the system's trust store has no usable certificate".
openssl req -x509 -newkey ec -pkeyopt ec_paramgen_curve:prime256v1 -nodes -days 1 \
  -subj /CN=127.0.0.1 -addext subjectAltName=IP:127.0.0.1 -addext basicConstraints=critical,CA:FALSE \
  -keyout "$work/key.pem" -out "$work/cert.pem" 2>/dev/null
"$(unpacked x86_64-unknown-linux-musl)/rcon" --practice-mgmt 127.0.0.1:0 \
  --practice-cert "$work/cert.pem" --practice-key "$work/key.pem" >"$log" 2>&1 &
server=$!
url=$(await_output 'wss://127\.0\.0\.1:[0-9]+' "$log" "$server")
[ -n "$url" ] || fail "the practice management server did not start: $(cat "$log")"
status=0
out=$(buildah run --env RCON_MGMT_SECRET=practice "$amd64" -- /rcon --mgmt "$url" server status 2>&1) ||
  status=$?
grep -q 'invalid peer certificate' <<<"$out" && ! grep -q 'no usable certificate' <<<"$out" &&
  [ "$status" -ne 0 ] || fail "wss:// from the image: exit $status, $out"
RCON_MGMT_SECRET=practice "$(unpacked x86_64-unknown-linux-musl)/rcon" --mgmt "$url" \
  --mgmt-cert "$work/cert.pem" server stop >/dev/null || kill "$server"
wait "$server" || true
server=
echo "   amd64 run as 65534: --version, --demo, a practice server's answer with /data/learned-servers.toml kept, wss:// refused on the certificate (exit $status: the trust store was read)"
mnt=$(buildah mount "$arm64")
out=$(qemu-aarch64 "$mnt/rcon" --demo list)
grep -q 'players online' <<<"$out" || fail "the arm64 image's rcon under qemu said: $out"
echo "   arm64: /rcon --demo list under qemu-user"

step "done: $(ls "$dist" | tr '\n' ' ')"
