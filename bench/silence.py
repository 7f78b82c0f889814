#!/usr/bin/env python3
"""Answers that end by silence (issue 19): N short commands in one `-c` session against the
practice modes whose answers have no end marker (palworld, silent-empty, reject-sentinel), idle
and with every core kept busy. Prints milliseconds per command for each binary given, measured
round by round in the same run. Not a test; prints figures.

Usage: python3 bench/silence.py [--commands 200] [--rounds 3] BIN [BIN...]
"""

import argparse
import os
import re
import statistics
import subprocess
import tempfile
import time

MODES = [("palworld", ["--dialect", "palworld"]), ("silent-empty", []), ("reject-sentinel", [])]


def start(rcon, mode, home):
    env = dict(os.environ, HOME=home, XDG_DATA_HOME=home + "/data", XDG_CONFIG_HOME=home + "/cfg")
    p = subprocess.Popen([rcon, "--practice-server", "127.0.0.1:0", "--practice-mode", mode],
                         stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True, env=env)
    port = int(re.search(r":(\d+)", p.stdout.readline()).group(1))
    return p, port


def run(rcon, port, extra, n, home):
    env = dict(os.environ, HOME=home, XDG_DATA_HOME=home + "/data", XDG_CONFIG_HOME=home + "/cfg")
    args = [rcon, "-H", "127.0.0.1", "-P", str(port), "-p", "practice", "-t", "10s", *extra]
    for i in range(n):
        args += ["-c", f"echo answer {i}"]
    t = time.perf_counter()
    out = subprocess.run(args, capture_output=True, text=True, env=env)
    took = time.perf_counter() - t
    assert out.returncode == 0 and out.stdout.count("\n") == n, out.stderr
    return took * 1000 / n


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--commands", type=int, default=200)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("bins", nargs="+")
    a = ap.parse_args()
    with tempfile.TemporaryDirectory() as home:
        servers = {m: start(a.bins[0], m, home) for m, _ in MODES}
        for load in ("idle", "busy"):
            busy = []
            if load == "busy":
                busy = [subprocess.Popen(["sh", "-c", "while :; do :; done"])
                        for _ in range(2 * os.cpu_count())]
            try:
                res = {(b, m): [] for b in a.bins for m, _ in MODES}
                for _ in range(a.rounds):
                    for b in a.bins:
                        for m, extra in MODES:
                            # A first session: nothing learned, the login's round trip taken
                            # under the same load as the commands.
                            with tempfile.TemporaryDirectory() as fresh:
                                res[(b, m)].append(run(b, servers[m][1], extra, a.commands, fresh))
            finally:
                for p in busy:
                    p.kill()
            print(f"{load} ({2 * os.cpu_count() if busy else 0} busy loops), {a.commands} commands, "
                  f"median of {a.rounds}, ms per command:")
            for m, _ in MODES:
                cells = "  ".join(f"{statistics.median(res[(b, m)]):7.2f}" for b in a.bins)
                print(f"  {m:16} {cells}")
        for p, _ in servers.values():
            p.kill()
    print("binaries: " + "  ".join(a.bins))


if __name__ == "__main__":
    main()
