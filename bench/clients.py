#!/usr/bin/env python3
"""rcon against other well-known RCON clients, in one run, against the same practice server
(strict vanilla mode): one-shot wall time and peak RSS, stream throughput, and completeness of a
20,000-character answer. Run by hand (not in CI); results and method go in BENCHMARKS.md.

Peers, installed from their registries on first use (pinned versions):
  - PyPI mcrcon 0.7.0      (CLI `mcrcon`, reads commands from stdin; library MCRcon)
  - PyPI rcon 2.4.9        (CLI `rconclt`; library rcon.source.Client)
  - npm  rcon-client 4.2.5 (library only; a small node driver, bench/peers.js)
into bench/.venv and bench/node/node_modules (both git-ignored).

Usage: python3 bench/clients.py [--runs 30] [--commands 10000] [--rcon target/release/rcon]
Build first: cargo build --release --locked
"""

import argparse
import os
import statistics
import subprocess
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
VENV = HERE / ".venv"
PY = VENV / "bin" / "python"
NODE_DIR = HERE / "node"
PASSWORD = "practice"
PYPI = ["mcrcon==0.7.0", "rcon==2.4.9"]
COMPLETENESS_UNITS = 20000

# How rcon streams commands: "args" passes `-c CMD` per command (the only way before batch mode);
# "stdin" pipes one command per line (batch mode), the way a real stream is sent.
RCON_STREAM = "stdin"


def sample_text(n):
    """The practice server's `chars N` answer (rconsole::practice::sample_text)."""
    pattern = "aé€ж中ßΩ!"
    return "".join(pattern[i % len(pattern)] for i in range(n))


def install():
    if not PY.exists():
        subprocess.run([sys.executable, "-m", "venv", str(VENV)], check=True)
    subprocess.run([str(PY), "-m", "pip", "install", "-q", *PYPI], check=True)
    if not (NODE_DIR / "node_modules" / "rcon-client").exists():
        subprocess.run(["npm", "install", "--silent", "--no-audit", "--no-fund"], cwd=NODE_DIR, check=True)


# A driver per Python library: `driver.py LIB HOST PORT PASSWORD MODE ARG`, MODE is `oneshot CMD`
# (print the output) or `stream N` (run `echo i` for i < N in one session, print each output).
PY_DRIVER = r'''
import sys
lib, host, port, pw, mode, arg = sys.argv[1:7]
port = int(port)
if lib == "mcrcon":
    from mcrcon import MCRcon
    c = MCRcon(host, pw, port=port); c.connect(); run = c.command; close = c.disconnect
else:
    from rcon.source import Client
    c = Client(host, port, passwd=pw); c.__enter__(); run = c.run; close = lambda: c.__exit__(None, None, None)
out = sys.stdout
if mode == "oneshot":
    out.write(run(arg) + "\n")
else:
    for i in range(int(arg)):
        out.write(run(f"echo {i}") + "\n")
close()
'''


class Client:
    """How to run one client: one-shot argv (with optional stdin), stream argv, and a
    completeness argv; `None` where it cannot do that."""

    def __init__(self, name, oneshot, stream, complete, stdin=None, stream_stdin=None):
        self.name = name
        self.oneshot = oneshot
        self.stream = stream
        self.complete = complete
        self.stdin = stdin
        self.stream_stdin = stream_stdin


def clients(rcon, host, port, n):
    addr = f"{host}:{port}"
    driver = HERE / ".venv" / "driver.py"
    driver.write_text(PY_DRIVER)
    node = ["node", str(HERE / "peers.js"), host, str(port), PASSWORD]
    base = [rcon, "-H", addr, "-p", PASSWORD]
    if RCON_STREAM == "args":
        args = []
        for i in range(n):
            args += ["-c", f"echo {i}"]
        rcon_stream, rcon_stdin = base + args, None
    else:
        rcon_stream, rcon_stdin = base, "".join(f"echo {i}\n" for i in range(n))
    py = lambda lib, *rest: [str(PY), str(driver), lib, host, str(port), PASSWORD, *rest]
    auto = ["--sentinel", "auto"]
    return [
        Client(
            "rconsole (rcon)",
            base + ["list"],
            rcon_stream,
            base + [f"chars {COMPLETENESS_UNITS}"],
            stream_stdin=rcon_stdin,
        ),
        # One round trip per short answer, like the other clients (PyPI rcon uses the same
        # 4096-byte rule); the sentinel still guards longer output.
        Client(
            "rconsole (rcon --sentinel auto)",
            base + auto + ["list"],
            rcon_stream[:5] + auto + rcon_stream[5:],
            base + auto + [f"chars {COMPLETENESS_UNITS}"],
            stream_stdin=rcon_stdin,
        ),
        Client(
            "PyPI mcrcon 0.7.0 (mcrcon CLI)",
            [str(VENV / "bin" / "mcrcon"), host, "-p", str(port), "--password", PASSWORD],
            py("mcrcon", "stream", str(n)),
            py("mcrcon", "oneshot", f"chars {COMPLETENESS_UNITS}"),
            stdin="list\nexit\n",
        ),
        Client(
            "PyPI rcon 2.4.9 (rconclt)",
            [str(VENV / "bin" / "rconclt"), f"{PASSWORD}@{addr}", "list"],
            py("rcon", "stream", str(n)),
            py("rcon", "oneshot", f"chars {COMPLETENESS_UNITS}"),
        ),
        Client(
            "npm rcon-client 4.2.5 (node driver)",
            node + ["oneshot", "list"],
            node + ["stream", str(n)],
            node + ["oneshot", f"chars {COMPLETENESS_UNITS}"],
        ),
    ]


def run(argv, stdin=None, timeout=600):
    start = time.perf_counter()
    proc = subprocess.run(
        argv,
        input=stdin.encode() if stdin is not None else None,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        capture_output=True,
        timeout=timeout,
    )
    return time.perf_counter() - start, proc


def peak_rss_kib(argv, stdin=None):
    """Peak RSS by GNU time: getrusage of the exec'd child itself (a fork from Python would
    count the Python image too)."""
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "%M"] + argv,
        input=stdin.encode() if stdin is not None else None,
        stdin=None if stdin is not None else subprocess.DEVNULL,
        stdout=subprocess.DEVNULL,
        stderr=subprocess.PIPE,
    )
    return int(proc.stderr.decode().strip().splitlines()[-1])


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=30)
    ap.add_argument("--commands", type=int, default=10000)
    ap.add_argument("--rcon", default="target/release/rcon")
    ap.add_argument("--no-install", action="store_true")
    args = ap.parse_args()
    if not args.no_install:
        install()

    server = subprocess.Popen(
        [args.rcon, "--practice-server", "127.0.0.1:0", "--practice-password", PASSWORD],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    host, port = server.stdout.readline().strip().rsplit(":", 1)
    results = []
    try:
        for c in clients(args.rcon, host, int(port), args.commands):
            r = {"name": c.name}
            # One-shot: warm up, then the median of --runs, interleaving nothing else.
            for _ in range(3):
                _, p = run(c.oneshot, c.stdin)
            ok = p.returncode == 0 and b"There are 0 of a max of 20 players online" in p.stdout
            r["oneshot_ok"] = ok
            r["oneshot_ms"] = statistics.median(run(c.oneshot, c.stdin)[0] for _ in range(args.runs)) * 1000
            r["rss_kib"] = max(peak_rss_kib(c.oneshot, c.stdin) for _ in range(5))
            # Stream: n commands in one session, all outputs present and in order.
            secs, p = run(c.stream, c.stream_stdin)
            lines = p.stdout.decode(errors="replace").splitlines()
            r["stream_ok"] = p.returncode == 0 and lines == [str(i) for i in range(args.commands)]
            r["stream_cps"] = args.commands / secs
            r["stream_err"] = "" if r["stream_ok"] else (p.stderr.decode(errors="replace").strip().splitlines() or ["?"])[-1][:120]
            # Completeness on a 20,000-unit answer (5 vanilla fragments).
            _, p = run(c.complete)
            text = p.stdout.decode(errors="replace")
            if text.endswith("\n"):
                text = text[:-1]
            want = sample_text(COMPLETENESS_UNITS)
            r["complete_units"] = len(text.encode("utf-16-le")) // 2
            r["complete_ok"] = p.returncode == 0 and text == want
            results.append(r)
            print(f"measured {c.name}", file=sys.stderr)
    finally:
        subprocess.run([args.rcon, "-H", f"{host}:{port}", "-p", PASSWORD, "stop"], capture_output=True)
        server.wait(timeout=10)

    me, me_auto = results[0], results[1]
    print(f"commands per stream: {args.commands}; one-shot runs: {args.runs}; rcon stream mode: {RCON_STREAM}")
    print()
    print("| client | one-shot `list` median | peak RSS | stream (cmd/s) | `chars 20000` received | complete |")
    print("|---|---:|---:|---:|---:|---|")
    for r in results:
        stream = f"{r['stream_cps']:,.0f}" + ("" if r["stream_ok"] else f" (FAILED: {r['stream_err']})")
        print(
            f"| {r['name']} | {r['oneshot_ms']:.1f} ms{'' if r['oneshot_ok'] else ' (FAILED)'} "
            f"| {r['rss_kib'] / 1024:.1f} MiB | {stream} "
            f"| {r['complete_units']:,} / {COMPLETENESS_UNITS:,} | {'yes' if r['complete_ok'] else 'NO'} |"
        )
    print()
    print(
        "| other client | one-shot time: rconsole / other | throughput: rconsole / other "
        "| throughput: rconsole auto / other | peak RSS: rconsole / other |"
    )
    print("|---|---:|---:|---:|---:|")
    for r in results[2:]:
        print(
            f"| {r['name']} | {me['oneshot_ms'] / r['oneshot_ms']:.3f} "
            f"| {me['stream_cps'] / r['stream_cps']:.2f} | {me_auto['stream_cps'] / r['stream_cps']:.2f} "
            f"| {me['rss_kib'] / r['rss_kib']:.3f} |"
        )


if __name__ == "__main__":
    main()
