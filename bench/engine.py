#!/usr/bin/env python3
"""Engine benchmark (issue "Engine v2"): rcon against a one-round-trip C client, side by side in
one run, on loopback against the practice server. Not a test; prints figures.

  - one-shot `list`: median wall time and peak RSS, rcon (the server already learned, so no probe)
    vs bench/baseline/onertt.c (mcrcon-like: login, one packet out, one packet back, no
    reassembly, no end-of-output detection; built here with gcc, the repo's own code),
  - stream: 10,000 short commands in one session, rcon with default settings (stdin) vs onertt,
  - one-shot against the two reimplementations' modes (end-marker, silent-empty) once learned,
    next to vanilla, with the quiet gap rcon uses for silent-empty.

Usage: python3 bench/engine.py [--runs 200] [--commands 10000] [--rcon target/release/rcon]
Build first: cargo build --release --locked
"""

import argparse
import os
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
PASSWORD = "bench"


def build_baseline():
    src = HERE / "baseline" / "onertt.c"
    out = HERE / "baseline" / "onertt"
    if not out.exists() or out.stat().st_mtime < src.stat().st_mtime:
        subprocess.run(["gcc", "-O2", "-o", str(out), str(src)], check=True)
    return str(out)


def start_server(rcon, mode):
    proc = subprocess.Popen(
        [rcon, "--practice-server", "127.0.0.1:0", "--practice-mode", mode,
         "--practice-password", PASSWORD],
        stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    line = proc.stdout.readline()
    port = int(line.strip().rsplit(":", 1)[1])
    return proc, port


def timed(argv, env, stdin=None, stdout=subprocess.DEVNULL):
    """Wall time (s) of one run, and its peak RSS (KiB) from GNU time, which execs the program
    itself (the rusage of a child of this script would count its pre-exec copy of Python)."""
    with tempfile.NamedTemporaryFile("r") as rss:
        start = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-q", "-f", "%M", "-o", rss.name, *argv],
                              env=env, stdin=stdin, stdout=stdout, stderr=subprocess.PIPE)
        took = time.perf_counter() - start
        if proc.returncode != 0:
            sys.exit(f"{argv[0]} failed ({proc.returncode}): {proc.stderr.decode()}")
        return took, int(rss.read().split()[-1])


def median_ms(samples):
    return statistics.median(samples) * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--commands", type=int, default=10000)
    ap.add_argument("--rcon", default=os.environ.get("RCON_BIN", "target/release/rcon"))
    args = ap.parse_args()
    onertt = build_baseline()
    print(f"load average before: {os.getloadavg()[0]:.2f} (2 cores)")
    home = tempfile.mkdtemp()
    env = dict(os.environ, NO_COLOR="1", RCON_PASSWORD=PASSWORD, RCON_DATA_DIR=home)
    servers = {m: start_server(args.rcon, m) for m in ["vanilla", "end-marker", "silent-empty"]}
    try:
        rcon_at = {m: [args.rcon, "--no-config", "-H", "127.0.0.1", "-P", str(p)]
                   for m, (_, p) in servers.items()}
        # Learn each server once (the probe), as any first run does.
        for m in servers:
            timed(rcon_at[m] + ["list"], env)
        vport = servers["vanilla"][1]
        argvs = {
            "onertt (C, 1 RTT)": [onertt, "127.0.0.1", str(vport), PASSWORD, "oneshot", "list"],
            "rcon, vanilla": rcon_at["vanilla"] + ["list"],
            "rcon, end-marker": rcon_at["end-marker"] + ["list"],
            "rcon, silent-empty": rcon_at["silent-empty"] + ["list"],
        }
        names = list(argvs)
        results = {name: ([], []) for name in names}
        # Blocks of ten, alternating, so that drift in the machine's speed hits every client.
        for block in range(0, args.runs, 10):
            for name in names:
                for _ in range(min(10, args.runs - block)):
                    took, rss = timed(argvs[name], env)
                    results[name][0].append(took)
                    results[name][1].append(rss)
        print(f"one-shot `list`, {args.runs} runs each (median wall, peak RSS):")
        base = median_ms(results[names[0]][0])
        for name in names:
            ms = median_ms(results[name][0])
            rss = max(results[name][1]) / 1024
            print(f"  {name:<22} {ms:7.3f} ms  {ms / base:5.2f}x  {rss:6.2f} MiB")
        show = subprocess.run(rcon_at["silent-empty"] + ["--print-config"], env=env,
                              capture_output=True, text=True).stdout
        learned = [l for l in show.splitlines() if "learned" in l]
        print("  silent-empty, as learned: " + (learned[0].split(None, 1)[1] if learned else "?"))

        print(f"stream: {args.commands} short commands in one session (vanilla mode):")
        lines = "".join(f"echo line {i}\n" for i in range(args.commands)).encode()
        rates = {}
        streams = [
            ("onertt (C, 1 RTT)", [onertt, "127.0.0.1", str(vport), PASSWORD, "stream",
                                   str(args.commands)], None),
            ("rcon, defaults", rcon_at["vanilla"], lines),
        ]
        # Five rounds, alternating, best of each: the machine's speed drifts, the best is the
        # least disturbed.
        for _ in range(5):
            for name, argv, feed in streams:
                with tempfile.TemporaryFile() as inp, tempfile.TemporaryFile() as out:
                    if feed is not None:
                        inp.write(feed)
                        inp.seek(0)
                    took, _ = timed(argv, env, stdin=inp, stdout=out)
                    out.seek(0)
                    got = out.read().count(b"\n")
                    if got != args.commands:
                        sys.exit(f"{name}: {got} answers, expected {args.commands}")
                rates[name] = max(rates.get(name, 0), args.commands / took)
        base = rates["onertt (C, 1 RTT)"]
        for name, rate in rates.items():
            print(f"  {name:<22} {rate:9.0f} commands/s  {rate / base:5.2f}x")
    finally:
        for proc, _ in servers.values():
            proc.kill()


if __name__ == "__main__":
    main()
