#!/usr/bin/env bash
# Cross-platform CI for rconsole (issue 12), called by .ci/run after the Linux checks:
#   - Windows (x86_64-pc-windows-gnu): clippy -D warnings and the test build in one compile
#     (clippy-driver as the workspace's rustc), then the library and binary unit tests, the
#     doctests and the whole integration suite run under Wine; practice servers run inside the
#     test processes, third-party peers are Linux programs and skip there (see WINE_SKIP).
#   - macOS (x86_64 and aarch64): for aarch64-apple-darwin clippy -D warnings and every target
#     (the binary and all test executables) compiled and linked in one build; for
#     x86_64-apple-darwin the binary linked. Through cargo-zigbuild (zig from PyPI
#     `ziglang`); nothing here runs Mach-O.
#   - Linux static musl (x86_64): release `rcon` built static-pie with Debian's
#     musl-tools (linker .ci/musl/cc), then the integration suite and the million-command
#     load test run against it (RCONSOLE_TEST_BIN), strict as the Linux run.
# Everything comes from Debian (rustc-web, cargo-web, rust-web-src, rust-web-clippy, mingw-w64,
# wine, musl-tools; see .ci/apt-cross.txt) and registries (crates.io, PyPI). Debian's
# toolchain ships the standard library's sources, so `-Zbuild-std` (RUSTC_BOOTSTRAP=1) builds
# std for each target: no rustup targets to download.
#
#   - Linux static musl (aarch64): `rcon` linked static through cargo-zigbuild,
#     and `rcon` run under qemu-user against the practice server (a smoke run).
#
# The binaries built here are what .ci/release-check.sh packs into every release artifact:
# keep their paths (it names them) in step with it.
#
# Usage: .ci/cross.sh [windows|macos|musl|musl-aarch64|all]   (default all)
# Work files (target dirs, Wine prefix, tools) go under $CARGO_TARGET_DIR/xplat (default
# target/xplat), so a second run is warm.
set -euo pipefail
cd "$(dirname "$0")/.."
export CARGO_TERM_COLOR=never

what=${1:-all}
base=$(realpath -m "${CARGO_TARGET_DIR:-target}")/xplat
mkdir -p "$base"
# Strictness for the suites run here: a peer that cannot run (Linux programs under Wine) must
# skip, not fail, so the Windows run is not strict; the musl run is.
strict=${RCONSOLE_STRICT:-}

# Debian's toolchain first on PATH and named explicitly, or build-std looks for the sources in
# the rustup toolchain. The version is Debian's (1.96), not rust-toolchain's.
deb_env() {
  env PATH="/usr/bin:$PATH" CARGO=/usr/bin/cargo RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc \
    CLIPPY_DRIVER=/usr/bin/clippy-driver RUSTC_BOOTSTRAP=1 "$@"
}
deb_cargo() { deb_env /usr/bin/cargo "$@"; }
build_std=(-Zbuild-std=std,panic_abort)
# The release profile is optimised for size (Cargo.toml says why); std built here stays at
# opt-level 3, as the prebuilt std the release workflow links is. Not in Cargo.toml: a build
# without -Zbuild-std warns that these packages match nothing. bench/oneshot-cost.sh passes
# the same.
release_std=(--config profile.release.package.std.opt-level=3
  --config profile.release.package.core.opt-level=3
  --config profile.release.package.alloc.opt-level=3)
# Clippy in the same compile as the build: `cargo clippy` is cargo with clippy-driver as the
# workspace's rustc and the lint flags in CLIPPY_ARGS; clippy-driver also generates code, so
# the test build (or the link) and the lint share one compile of std and every dependency
# instead of a `cargo check` of them first. Lints fail the build as `clippy -- -D warnings`.
linted() {
  (
    export RUSTC_WORKSPACE_WRAPPER=/usr/bin/clippy-driver
    export CLIPPY_ARGS="-D__CLIPPY_HACKERY__warnings__CLIPPY_HACKERY__"
    "$@"
  )
}
# Cross builds in the dev profile without debug info: nothing here is debugged, and debug info
# is a large share of a debug build's compile and link time.
export CARGO_PROFILE_DEV_DEBUG=0

step() { echo "== $*"; }
timed() {
  local start=$SECONDS
  "$@"
  echo "   ($(( SECONDS - start )) s)"
}
# Prints what `file` says of each binary and fails unless it matches PATTERN (extended regex):
#   expect_file PATTERN WHAT BINARY...
expect_file() {
  local pattern=$1 what=$2 bin desc
  shift 2
  for bin in "$@"; do
    desc=$(file "$bin")
    echo "$desc"
    grep -Eq "$pattern" <<<"$desc" || {
      echo "cross.sh: $bin is not $what" >&2
      exit 1
    }
  done
}
# Seconds per part, printed at the end (docs/platforms.md records them with the load average).
summary=()
part() {
  local start=$SECONDS
  "$@"
  summary+=("$1: $(( SECONDS - start )) s")
}

# --- Windows --------------------------------------------------------------------------------

# The one place that names what Wine cannot do. Each entry is a filter for libtest's --skip
# (a test's path, or a module's with `::`, matched as a substring), with the reason.
# Tests compiled out with cfg(unix) are listed with their reasons in docs/platforms.md.
WINE_SKIP=(
  # Every test that runs rcon in a pseudo-terminal (tests/it/common/term.rs): on Windows that is
  # ConPTY (portable-pty), and Wine 8's pseudo console starts the child but passes none of its
  # output back, so the screen stays blank and each test times out. They compile for Windows
  # (clippy checks them here) and the hosted Windows runners (ci.yml) run them.
  console::
  consoles_console::
  terminal::help_on_a_terminal_is_one_command_per_line
  terminal::a_failed_reconnect_does_not_speak_of_a_command
  fleet::a_terminal_gets_a_progress_line_that_is_cleared_and_a_summary
  follow::pty::
  follow_consoles::telnet_messages_in_a_terminal_across_a_restart
  mgmt::console_tab_completes_method_names
  mgmt_commands::the_console_completes_from_the_server_when_it_offers_completion
  mgmt_commands::the_console_notices_a_restarted_server_and_connects_again_before_the_next_command
  output::a_terminal_gets_colour_unless_term_is_dumb_or_clicolor_is_0
  wait::a_terminal_shows_one_progress_line_while_waiting
)

windows() {
  local target=x86_64-pc-windows-gnu
  export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
  # Wine 8 maps the shared user data page at its fixed Windows address as a process starts;
  # with address-space randomisation something else is now and then there already, and the
  # new process dies before it runs ("failed to map the shared user data: c0000018" with
  # WINEDEBUG=err+all): CreateProcess fails with error 1359 "Internal error". Measured here with
  # a C program that spawns `rcon.exe --version` from 8 threads under load: 3 failures in
  # 8,000 spawns with randomisation, none in 8,000 without. The suite starts rcon over a
  # thousand times (1,191 in the Linux suite), so one test in a few runs failed to start its
  # rcon. setarch -R turns randomisation off for the test binaries and every process they
  # start (it is inherited).
  local runner=wine
  if setarch "$(uname -m)" -R true 2>/dev/null; then
    runner="setarch $(uname -m) -R wine"
  else
    echo "cross.sh: setarch -R is not permitted here (seccomp?): under Wine, about one spawn in" \
      "3,000 may fail with error 1359" >&2
  fi
  export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=$runner
  export WINEPREFIX="$base/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
  local tdir="$base/windows"

  # A fresh Wine prefix boots while the build below compiles (wineboot mostly waits).
  local boot=
  if [ ! -f "$WINEPREFIX/system.reg" ]; then
    (
      start=$SECONDS
      wineboot -i >/dev/null 2>&1 || true
      wineserver -w
      echo "   (fresh Wine prefix, booted beside the build: $(( SECONDS - start )) s)"
    ) &
    boot=$!
  fi

  step "windows: clippy -D warnings and the test build, one compile ($target)"
  timed linted deb_cargo test --no-run --all-targets --locked "${build_std[@]}" \
    --target "$target" --target-dir "$tdir"

  step "windows: Wine prefix with the bcryptprimitives.dll stand-in (built from .ci/wine/)"
  # Wine 8 lacks bcryptprimitives.dll, which Rust's std imports since 1.78: every .exe would
  # die at load (exit 53). Windows 10+ has the real one; the .exe is the same.
  x86_64-w64-mingw32-gcc -O2 -Wall -Werror -shared -o "$base/bcryptprimitives.dll" \
    .ci/wine/bcryptprimitives.c -ladvapi32
  [ -z "$boot" ] || wait "$boot"
  cp "$base/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/"
  wine cmd /c ver </dev/null

  step "windows: unit tests, doctests and the integration suite under Wine"
  # An entry that no longer names a test would skip nothing and hide that it is stale.
  local listing skips=()
  listing=$(linted deb_cargo test --locked "${build_std[@]}" --target "$target" \
    --target-dir "$tdir" --test it -q -- --list --format terse 2>/dev/null)
  for entry in "${WINE_SKIP[@]}"; do
    grep -qF -- "$entry" <<<"$listing" || {
      echo "cross.sh: WINE_SKIP entry '$entry' matches no test" >&2
      exit 1
    }
    skips+=(--skip "$entry")
  done
  (
    unset RCONSOLE_STRICT CI
    # The same environment as the build above, so nothing is rebuilt. The skips apply to the
    # integration suite only (a substring such as `console::` would also skip unit tests);
    # every part runs even when one fails.
    run_tests() {
      linted deb_cargo test --locked --no-fail-fast "${build_std[@]}" --target "$target" \
        --target-dir "$tdir" "$@"
    }
    failed=()
    run_tests --lib --bin rcon || failed+=("unit tests")
    run_tests --doc || failed+=(doctests)
    run_tests --test it -- "${skips[@]}" || failed+=("integration suite")
    if [ ${#failed[@]} -gt 0 ]; then
      echo "cross.sh: under Wine, these failed: ${failed[*]}" >&2
      exit 1
    fi
  )
  wineserver -k || true
}

# --- macOS ----------------------------------------------------------------------------------

# The versions last seen to work here; a newer zig or cargo-zigbuild is taken on purpose.
ZIGLANG_VERSION=0.17.1
ZIGBUILD_VERSION=0.24.1
zig_tools() {
  local venv="$base/tools/venv"
  # Each install is stamped with its version, so changing a pin above reinstalls it.
  if [ "$(cat "$venv/.rconsole-zig" 2>/dev/null)" != "$ZIGLANG_VERSION" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --only-binary :all: "ziglang==$ZIGLANG_VERSION"
    echo "$ZIGLANG_VERSION" >"$venv/.rconsole-zig"
  fi
  if [ "$("$base/tools/bin/cargo-zigbuild" --version 2>/dev/null)" != "cargo-zigbuild $ZIGBUILD_VERSION" ]; then
    timed cargo install --locked cargo-zigbuild --version "$ZIGBUILD_VERSION" --root "$base/tools"
  fi
  # cargo-zigbuild runs zig as `python3 -m ziglang`, with the venv's python named outright
  # (deb_cargo puts /usr/bin first on PATH).
  export CARGO_ZIGBUILD_PYTHON_PATH="$venv/bin/python3"
  export PATH="$base/tools/bin:$PATH"
}

macos() {
  local tdir="$base/macos"
  zig_tools
  export MACOSX_DEPLOYMENT_TARGET=11.0
  # Without debug info cargo asks rustc to strip it, which on Mach-O runs the sysroot's
  # rust-objcopy; Debian's rustc ships none. Nothing to strip anyway.
  export CARGO_PROFILE_DEV_STRIP=false
  # Through zig: ring (feature `mgmt`) compiles C for the target in its build script, and the
  # host's gcc knows no Mach-O. rustc warns that `xcrun` (the SDK's locator) is missing; zig
  # brings the stubs of the system libraries a Rust program links (libSystem, libiconv), which
  # is all rcon needs: it links no framework (no ctrlc, no keychain: src/app/interrupt.rs,
  # src/mgmt/tls.rs).
  step "macos: clippy -D warnings and every target built and linked (aarch64-apple-darwin)"
  timed linted deb_env cargo-zigbuild build --all-targets --locked "${build_std[@]}" \
    --target aarch64-apple-darwin --target-dir "$tdir"

  step "macos: rcon linked for x86_64-apple-darwin"
  # The dev profile proves the link; the shipped binaries come from the release workflow (built
  # on macOS, release profile).
  timed deb_env cargo-zigbuild build --bins --locked "${build_std[@]}" \
    --target x86_64-apple-darwin --target-dir "$tdir"

  local arch
  for arch in x86_64 aarch64; do
    expect_file "Mach-O 64-bit.*executable" "a Mach-O executable" \
      "$tdir/$arch-apple-darwin/debug/rcon"
  done
  # Every test executable of the aarch64 build links too.
  local tests
  tests=$(find "$tdir/aarch64-apple-darwin/debug/deps" -maxdepth 1 -type f -perm -u+x \
    ! -name '*.*' -exec file {} + | grep -c "Mach-O 64-bit arm64 executable" || true)
  echo "   $tests Mach-O test executables (aarch64)"
  [ "$tests" -ge 4 ] || {
    echo "cross.sh: expected the library's, the binary's and the integration tests linked" >&2
    exit 1
  }
}

# --- Linux static musl ----------------------------------------------------------------------

musl() {
  local target=x86_64-unknown-linux-musl tdir="$base/musl"
  step "musl: the static release binary ($target, Debian musl-tools)"
  # musl-gcc's specs file replaces gcc's link spec with one that always names
  # /lib/ld-musl-x86_64.so.1 as the interpreter and drops -static-pie, so what rustc asks for
  # came out dynamically linked. .ci/musl/cc is gcc with musl's headers and libraries and a
  # specs file that keeps -static-pie's meaning (rcrt1.o, -static -pie --no-dynamic-linker).
  export CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_LINKER="$PWD/.ci/musl/cc"
  # Rust's musl target links its own crt objects and LLVM libunwind from the rustup sysroot
  # ("self-contained"), which build-std does not build: use musl-tools' crt objects instead,
  # and Debian's LLVM libunwind.a (libunwind-14-dev) as the static libunwind std asks for.
  # (gcc's libgcc_eh.a does not do: it needs glibc's _dl_find_object.)
  mkdir -p "$base/musl-lib"
  ln -sf /usr/lib/llvm-14/lib/libunwind.a "$base/musl-lib/libunwind.a"
  export CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C link-self-contained=no -L native=$base/musl-lib"
  timed deb_cargo build --release --locked "${build_std[@]}" "${release_std[@]}" --bin rcon \
    --target "$target" --target-dir "$tdir"
  local bin=$tdir/$target/release/rcon
  expect_file "static(ally|-pie) linked" "statically linked" "$bin"
  if ldd "$bin" 2>&1 | grep -q '=>'; then
    echo "cross.sh: $bin loads shared libraries" >&2
    exit 1
  fi
  "$tdir/$target/release/rcon" --version
  # The release archives, .deb and image are packed from these binaries and checked by
  # .ci/release-check.sh, which .ci/run runs next.

  step "musl: the integration suite against the static binary"
  # Built in the normal target dir with the normal profile: the same test binary .ci/run's last
  # step (`cargo test --locked`) uses, so it is not built twice.
  RCONSOLE_TEST_BIN="$tdir/$target/release/rcon" RCONSOLE_STRICT="$strict" timed \
    cargo test --locked --test it

  step "musl: the million-command load test against the static binary"
  # The binary that ships, in release: .ci/run builds no other release rcon for it. The test
  # binary (and the practice server in it) is the suite's, above.
  RCONSOLE_TEST_BIN="$tdir/$target/release/rcon" RCONSOLE_STRICT="$strict" timed \
    cargo test --locked --test it -- --ignored load::
}

# --- Linux static musl, aarch64 -------------------------------------------------------------

musl_aarch64() {
  local target=aarch64-unknown-linux-musl tdir="$base/musl-aarch64"
  zig_tools
  step "musl-aarch64: rcon linked static (cargo-zigbuild, dev profile)"
  # The release workflow builds this target with cargo-zigbuild too. zig brings musl's crt
  # objects and libunwind for the target; rustc's own "self-contained" ones come with a rustup
  # target, which build-std does not build.
  CARGO_TARGET_AARCH64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C link-self-contained=no" \
    timed deb_env cargo-zigbuild build --bins --locked "${build_std[@]}" --target "$target" \
    --target-dir "$tdir"
  expect_file "ARM aarch64.*statically linked" "a static aarch64 executable" \
    "$tdir/$target/debug/rcon"

  step "musl-aarch64: rcon run under qemu-user against the practice server"
  # A smoke run, not the suite: qemu's own memory mappings fail the fault tests' limits.
  local rcon="$tdir/$target/debug/rcon" out
  qemu-aarch64 "$rcon" --version
  out=$(qemu-aarch64 "$rcon" --demo -c 'echo hello from aarch64' -c list)
  grep -qx "hello from aarch64" <<<"$out" && grep -q "players online" <<<"$out" || {
    echo "cross.sh: unexpected output under qemu-aarch64: $out" >&2
    exit 1
  }
  # The practice server's help is split into 4096-character fragments: all of it arrives.
  out=$(qemu-aarch64 "$rcon" --demo help | wc -c)
  [ "$out" -gt 4096 ] || {
    echo "cross.sh: help under qemu-aarch64 was $out bytes" >&2
    exit 1
  }
  echo "   --demo help: $out bytes"
}

case "$what" in
  windows) part windows ;;
  macos) part macos ;;
  musl) part musl ;;
  musl-aarch64) part musl_aarch64 ;;
  all)
    part windows
    part macos
    part musl
    part musl_aarch64
    ;;
  *)
    echo "usage: $0 [windows|macos|musl|musl-aarch64|all]" >&2
    exit 2
    ;;
esac
echo "== cross.sh: seconds per part (load average now: $(cut -d' ' -f1-3 /proc/loadavg))"
printf '   %s\n' "${summary[@]}"
