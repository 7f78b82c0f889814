# Sourced by every tests/peers*/install.sh: the one way a peer's Python venv is made.
# venv_install LABEL: creates (or updates) .venv in the current directory from requirements.txt,
# idempotent: stamped with the requirements' hash, so a re-run with the same pins does nothing.
# As root on Debian, installs python3-venv with apt when venv creation fails.

hash_of() { sha256sum "$@" | sha256sum | cut -d' ' -f1; }

venv_install() {
  local label=$1 want
  want="$(hash_of requirements.txt)"
  if [[ -x .venv/bin/python && "$(cat .venv/.rconsole-stamp 2>/dev/null)" == "$want" ]]; then
    echo "$label: python peers up to date"
    return
  fi
  if [[ ! -x .venv/bin/python ]]; then
    rm -rf .venv
    if ! python3 -m venv .venv; then
      rm -rf .venv
      echo "$label: python3 -m venv failed; installing python3-venv with apt" >&2
      export DEBIAN_FRONTEND=noninteractive
      apt-get update -qq
      apt-get install -y -qq python3-venv
      python3 -m venv .venv
    fi
  fi
  .venv/bin/python -m pip install --disable-pip-version-check --no-input -q -r requirements.txt
  echo "$want" > .venv/.rconsole-stamp
  echo "$label: python peers installed in $PWD/.venv"
}
