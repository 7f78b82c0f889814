# Shared by packaging/*.sh (sourced, not run): the release's name, timestamp and file
# normalisation, so every artifact built from the same commit is byte-identical (issue 22).
# Portable to macOS (BSD date, touch, install) because archive.sh runs on macOS runners.

# The name users meet on crates.io, in archive names, the .deb, the formula and the image.
# (`rconsole` on crates.io is someone else's crate; the library inside keeps that name.)
PACKAGE=rcon-console

# The version in Cargo.toml's [package] section.
cargo_version() {
  sed -n '/^\[package\]/,/^\[/ s/^version = "\(.*\)"$/\1/p' "$1/Cargo.toml" | head -n 1
}

# The time every file in an artifact carries: SOURCE_DATE_EPOCH when set (the
# reproducible-builds.org convention), else the last commit's time; never the clock.
release_epoch() {
  local root=$1 epoch=${SOURCE_DATE_EPOCH:-}
  if [ -z "$epoch" ]; then
    epoch=$(git -C "$root" log -1 --format=%ct 2>/dev/null) || epoch=
  fi
  case "$epoch" in
    '' | *[!0-9]*)
      echo "packaging: no SOURCE_DATE_EPOCH and no git commit to take the time from" >&2
      return 1
      ;;
  esac
  echo "$epoch"
}

# Gives every file and directory under DIR the time EPOCH (symlinks themselves, not their
# targets). `touch -t` in UTC is the one form GNU and BSD touch share; only the conversion
# differs (GNU date -d @N, BSD date -r N).
set_times() {
  local dir=$1 epoch=$2 stamp
  stamp=$(date -u -d "@$epoch" +%Y%m%d%H%M.%S 2>/dev/null || date -u -r "$epoch" +%Y%m%d%H%M.%S)
  find "$dir" -exec env TZ=UTC0 touch -h -t "$stamp" {} +
}

# Directories 755 whatever the umask (install -m sets the files' modes).
fix_dir_modes() {
  find "$1" -type d -exec chmod 755 {} +
}

# Prints the first match of the extended regex PATTERN in FILE, which the background process
# PID writes, waiting up to 30 s for it (Wine starts slowly); prints nothing if PID exits or the
# time is up. For servers that print their address once they listen.
await_output() {
  local pattern=$1 file=$2 pid=$3 found= _
  for _ in $(seq 300); do
    found=$(tr -d '\r' <"$file" | grep -Eo "$pattern" | head -n 1) || true
    [ -n "$found" ] && break
    kill -0 "$pid" 2>/dev/null || break
    sleep 0.1
  done
  echo "$found"
}
