#!/usr/bin/env bash
# Cross-platform CI for rconsole (issue 12), called by .ci/run after the Linux checks:
#   - Windows (x86_64-pc-windows-gnu): clippy -D warnings, then the library and binary unit tests
#     and the whole integration suite run under Wine; practice servers run inside the test
#     processes, third-party peers are Linux programs and are skipped there (see WINE_SKIP).
#   - macOS (x86_64 and aarch64): clippy -D warnings for aarch64-apple-darwin, and both release
#     binaries linked through cargo-zigbuild (zig from PyPI `ziglang`); nothing here runs them.
#   - Linux static musl (x86_64), `.ci/cross.sh musl` only, not yet part of `all`: release
#     binary built with Debian's musl-tools, then the integration suite run against it
#     (RCONSOLE_TEST_BIN). Today it links dynamically against ld-musl and the check fails.
# Everything comes from Debian (rustc-web, cargo-web, rust-web-src, rust-web-clippy, mingw-w64,
# wine, musl-tools; see .ci/apt-packages.txt) and registries (crates.io, PyPI). Debian's
# toolchain ships the standard library's sources, so `-Zbuild-std` (RUSTC_BOOTSTRAP=1) builds
# std for each target: no rustup targets to download.
#
# Usage: .ci/cross.sh [windows|macos|musl|all]   (default all)
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
deb_cargo() {
  env PATH="/usr/bin:$PATH" RUSTC=/usr/bin/rustc RUSTDOC=/usr/bin/rustdoc \
    CLIPPY_DRIVER=/usr/bin/clippy-driver RUSTC_BOOTSTRAP=1 /usr/bin/cargo "$@"
}
build_std=(-Zbuild-std=std,panic_abort)

step() { echo "== $*"; }
timed() {
  local start=$SECONDS
  "$@"
  echo "   ($(( SECONDS - start )) s)"
}

# --- Windows --------------------------------------------------------------------------------

# The one place that names what Wine cannot do. Each entry: a test name for libtest's --skip,
# and why. Tests compiled out with cfg(unix) are listed with their reasons in docs/platforms.md.
WINE_SKIP=(
  # tests/console.rs drives rcon through ConPTY (portable-pty) on Windows. Wine 8's pseudo
  # console starts the child but passes none of its output back: the screen stays blank. The
  # hosted Windows runners (ci.yml) run these; Wine cannot.
  runs_commands_and_shows_long_output_in_full
  tab_completes_command_names
  history_persists_in_the_data_dir_without_the_password
  ctrl_c_clears_the_line
  reconnects_after_the_server_restarts
  interactive_flag_opens_the_console_after_commands
  progress_bar_for_files_on_a_terminal_only
  ctrl_c_abandons_the_running_command_and_returns_to_the_prompt
)

windows() {
  local target=x86_64-pc-windows-gnu
  export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_LINKER=x86_64-w64-mingw32-gcc
  export CARGO_TARGET_X86_64_PC_WINDOWS_GNU_RUNNER=wine
  export WINEPREFIX="$base/wineprefix" WINEDEBUG=-all WINEDLLOVERRIDES="mscoree,mshtml="
  local tdir="$base/windows"

  step "windows: clippy -D warnings ($target)"
  timed deb_cargo clippy --all-targets --locked "${build_std[@]}" --target "$target" \
    --target-dir "$tdir" -- -D warnings

  step "windows: Wine prefix with the bcryptprimitives.dll stand-in (built from .ci/wine/)"
  # Wine 8 lacks bcryptprimitives.dll, which Rust's std imports since 1.78: every .exe would
  # die at load (exit 53). Windows 10+ has the real one; the .exe is the same.
  x86_64-w64-mingw32-gcc -O2 -Wall -Werror -shared -o "$base/bcryptprimitives.dll" \
    .ci/wine/bcryptprimitives.c -ladvapi32
  if [ ! -f "$WINEPREFIX/system.reg" ]; then
    timed wineboot -i >/dev/null 2>&1 || true
    wineserver -w
  fi
  cp "$base/bcryptprimitives.dll" "$WINEPREFIX/drive_c/windows/system32/"
  wine cmd /c ver </dev/null

  step "windows: unit and integration tests under Wine"
  local skips=()
  for entry in "${WINE_SKIP[@]}"; do skips+=(--skip "$entry"); done
  (
    unset RCONSOLE_STRICT CI
    timed deb_cargo test --locked --no-fail-fast "${build_std[@]}" --target "$target" \
      --target-dir "$tdir" -- "${skips[@]}"
  )
  wineserver -k || true
}

# --- macOS ----------------------------------------------------------------------------------

zig_tools() {
  local venv="$base/tools/venv"
  if [ ! -f "$venv/.rconsole-zig-ok" ]; then
    python3 -m venv "$venv"
    "$venv/bin/pip" install -q --only-binary :all: ziglang
    touch "$venv/.rconsole-zig-ok"
  fi
  if [ ! -x "$base/tools/bin/cargo-zigbuild" ]; then
    timed cargo install --locked cargo-zigbuild --root "$base/tools"
  fi
  # cargo-zigbuild runs zig as `python3 -m ziglang`, with the venv's python named outright
  # (deb_cargo puts /usr/bin first on PATH).
  export CARGO_ZIGBUILD_PYTHON_PATH="$venv/bin/python3"
  export PATH="$base/tools/bin:$PATH"
}

macos() {
  local tdir="$base/macos"
  step "macos: clippy -D warnings (aarch64-apple-darwin)"
  timed deb_cargo clippy --all-targets --locked "${build_std[@]}" \
    --target aarch64-apple-darwin --target-dir "$tdir" -- -D warnings

  step "macos: link rcon for x86_64 and aarch64 (cargo-zigbuild)"
  zig_tools
  export MACOSX_DEPLOYMENT_TARGET=11.0
  # rustc strips Mach-O with its sysroot's rust-objcopy, which Debian's rustc does not ship:
  # link unstripped here (the release workflow builds on macOS, stripped).
  export CARGO_PROFILE_RELEASE_STRIP=false
  # This proves the binaries link; the shipped ones come from the release workflow. Without
  # fat LTO and one codegen unit the two links take minutes less on 2 cores.
  export CARGO_PROFILE_RELEASE_LTO=false CARGO_PROFILE_RELEASE_CODEGEN_UNITS=16
  timed deb_cargo zigbuild --release --locked "${build_std[@]}" --bin rcon \
    --target x86_64-apple-darwin --target aarch64-apple-darwin --target-dir "$tdir"
  for arch in x86_64 aarch64; do
    local bin="$tdir/$arch-apple-darwin/release/rcon"
    file "$bin"
    file "$bin" | grep -q "Mach-O 64-bit.*executable" || {
      echo "cross.sh: $bin is not a Mach-O executable" >&2
      exit 1
    }
  done
}

# --- Linux static musl ----------------------------------------------------------------------

musl() {
  local target=x86_64-unknown-linux-musl tdir="$base/musl"
  step "musl: static release binary ($target, Debian musl-tools)"
  export CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_LINKER=musl-gcc
  # Rust's musl target links its own crt objects and LLVM libunwind from the rustup sysroot
  # ("self-contained"), which build-std does not build: use musl-tools' crt objects instead,
  # and Debian's LLVM libunwind.a (libunwind-14-dev) as the static libunwind std asks for.
  # (gcc's libgcc_eh.a does not do: it needs glibc's _dl_find_object.)
  mkdir -p "$base/musl-lib"
  ln -sf /usr/lib/llvm-14/lib/libunwind.a "$base/musl-lib/libunwind.a"
  # Without the self-contained objects rustc no longer asks for a static PIE: say it.
  export CARGO_TARGET_X86_64_UNKNOWN_LINUX_MUSL_RUSTFLAGS="-C link-self-contained=no -L native=$base/musl-lib -C link-arg=-static-pie"
  timed deb_cargo build --release --locked "${build_std[@]}" --bin rcon \
    --target "$target" --target-dir "$tdir"
  local bin="$tdir/$target/release/rcon"
  file "$bin"
  file "$bin" | grep -Eq "static(ally|-pie) linked" || {
    echo "cross.sh: $bin is not statically linked" >&2
    exit 1
  }
  "$bin" --version

  step "musl: the integration suite against the static binary"
  RCONSOLE_TEST_BIN="$bin" RCONSOLE_STRICT="$strict" timed cargo test --locked --tests \
    --target-dir "$base/musl-tests" -- --skip generated
}

case "$what" in
  windows) windows ;;
  macos) macos ;;
  musl) musl ;;
  all)
    # musl is left out until its binary comes out static (see docs/platforms.md): it links, but
    # against ld-musl dynamically, and the check above refuses that.
    windows
    macos
    ;;
  *)
    echo "usage: $0 [windows|macos|musl|all]" >&2
    exit 2
    ;;
esac
