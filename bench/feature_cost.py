#!/usr/bin/env python3
"""Side-by-side cost of a plain RCON one-shot for two rcon binaries (e.g. before and after a
feature such as the management protocol's TLS/WebSocket code): start-up plus `list` against one
practice server, runs interleaved A B A B ... so machine load hits both alike.

Prints per binary: file size, median and p90 wall time of `rcon -H ADDR -P PORT -p PW list`,
and peak RSS under GNU time (`/usr/bin/time -f %M`; the largest over 20 runs and the median).
Peak RSS is not taken from this script's own wait4: a child spawned from Python inherits the
Python image's high-water mark at exec, so it would measure Python.

Usage: python3 bench/feature_cost.py --runs 200 A_BINARY B_BINARY [C_BINARY ...]
e.g.   python3 bench/feature_cost.py before/rcon target/release/rcon
"""

import argparse
import os
import statistics
import subprocess
import sys
import time


ENV = {"PATH": "/usr/bin:/bin", "NO_COLOR": "1", "HOME": "/nonexistent"}


def argv(binary, port):
    return [binary, "-H", "127.0.0.1", "-P", str(port), "-p", "practice", "list"]


def one(binary, port):
    start = time.perf_counter()
    pid = os.posix_spawn(
        binary,
        argv(binary, port),
        ENV,
        file_actions=[(os.POSIX_SPAWN_OPEN, 1, "/dev/null", os.O_WRONLY, 0)],
    )
    _, status, _ = os.wait4(pid, 0)
    elapsed = time.perf_counter() - start
    if os.waitstatus_to_exitcode(status) != 0:
        sys.exit(f"{binary} failed with status {status}")
    return elapsed


def peak_rss(binary, port):
    out = subprocess.run(
        ["/usr/bin/time", "-f", "%M"] + argv(binary, port),
        env=ENV,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
        text=True,
        check=True,
    )
    return int(out.stderr.strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("binaries", nargs="+")
    args = ap.parse_args()
    server = subprocess.Popen(
        [args.binaries[0], "--practice-server", "127.0.0.1:0"],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    port = int(server.stdout.readline().strip().rsplit(":", 1)[1])
    try:
        for b in args.binaries:  # warm-up (page cache, learned-server file)
            for _ in range(5):
                one(b, port)
        times = {b: [] for b in args.binaries}
        rss = {b: [] for b in args.binaries}
        for _ in range(args.runs):
            for b in args.binaries:
                times[b].append(one(b, port))
        for _ in range(20):
            for b in args.binaries:
                rss[b].append(peak_rss(b, port))
        print(f"{'binary':<48} {'size KiB':>9} {'median ms':>10} {'p90 ms':>8} {'RSS max KiB':>12} {'RSS med KiB':>12}")
        for b in args.binaries:
            ts = sorted(times[b])
            p90 = ts[int(len(ts) * 0.9)]
            print(
                f"{b:<48} {os.path.getsize(b) // 1024:>9} {statistics.median(ts) * 1000:>10.2f} "
                f"{p90 * 1000:>8.2f} {max(rss[b]):>12} {int(statistics.median(rss[b])):>12}"
            )
    finally:
        server.kill()


if __name__ == "__main__":
    main()
