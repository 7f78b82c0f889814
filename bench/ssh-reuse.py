#!/usr/bin/env python3
"""Ten one-shots through the same SSH host, with and without connection sharing (issue 39).
Not a test; prints figures.

The set-up of bench/remote.py (a private sshd on loopback behind a delay proxy that holds every
chunk DELAY_MS each way, 25 ms: 50 ms round trips; the practice server on the sshd side). Each
series starts with no shared connection (its own XDG_RUNTIME_DIR), so its first run pays the
whole SSH handshake, as a script's first one-shot does:

  - `rcon --ssh ... list`                       RUNS times (default 10), default, then --no-ssh-reuse
  - `rcon --ssh ... --remote -c list`           the same
  - `rcon --ssh ... --remote --remote-install -c list` (no rcon on the remote PATH: three ssh
                                                sessions each run without sharing)

    python3 bench/ssh-reuse.py              # builds release first
    RCON_BIN=target/release/rcon RUNS=10 DELAY_MS=25 python3 bench/ssh-reuse.py
"""

import os
import subprocess
import sys
import tempfile
import time
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent))
from remote import DELAY, rcon_binary, start  # noqa: E402

RUNS = int(os.environ.get("RUNS", "10"))


def series(label, argv, env):
    """RUNS runs of argv with a fresh runtime directory; prints the total and each run."""
    runtime = Path(tempfile.mkdtemp())
    env = dict(env, XDG_RUNTIME_DIR=str(runtime))
    took = []
    for _ in range(RUNS):
        begin = time.monotonic()
        out = subprocess.run(argv, env=env, capture_output=True, text=True, stdin=subprocess.DEVNULL)
        took.append(time.monotonic() - begin)
        if out.returncode != 0 or "players online" not in out.stdout:
            sys.exit(f"{label}: exit {out.returncode}: {out.stderr.strip()}")
    # The shared connection, if any, is closed so the next series starts without one.
    for sock in runtime.glob("rconsole-ssh/*"):
        subprocess.run(["ssh", "-o", f"ControlPath={sock}", "-O", "exit", "x"], capture_output=True)
    runs = " ".join(f"{t:.2f}" for t in took)
    print(f"{label}: {RUNS} runs in {sum(took):.2f} s (first {took[0]:.2f} s, then median "
          f"{sorted(took[1:])[len(took[1:]) // 2]:.2f} s) [{runs}]", flush=True)


def main():
    rcon = rcon_binary()
    work = Path(tempfile.mkdtemp())
    procs, base, env, _ = start(rcon, work)
    try:
        print(f"round trip {DELAY * 2000:.0f} ms (delay proxy between ssh and sshd), rcon {rcon}", flush=True)
        remote = ["--remote", "--remote-rcon", rcon]
        # --remote-install: the remote program is missing, so this rcon is copied to (and then
        # found in) the SSH host's cache (bench/remote.py sets its XDG_CACHE_HOME).
        install = ["--remote", "--remote-rcon", "rcon-not-installed", "--remote-install"]
        for label, extra in [
            ("one-shot --ssh", []),
            ("one-shot --ssh --remote", remote),
            ("one-shot --ssh --remote --remote-install", install),
        ]:
            series(f"{label} (shared)", base + extra + ["list"], env)
            series(f"{label} --no-ssh-reuse", base + extra + ["--no-ssh-reuse", "list"], env)
    finally:
        for p in procs:
            p.terminate()


if __name__ == "__main__":
    main()
