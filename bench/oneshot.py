#!/usr/bin/env python3
"""One-shot and -c benchmarks for rcon against the practice server (strict vanilla, no read delay).

Prints, all measured in the same run:
  - the floor: median time to spawn and reap a trivial process (/bin/true),
  - the round trips a one-shot `list` needs (connect, login, sentinel probe, command + sentinel),
    done in-process by this script over raw sockets,
  - median wall time of `rcon ... list`, and its overhead above floor + round trips,
  - peak RSS of `rcon ... list` (getrusage of the child),
  - commands per second for N `-c echo` commands in one session.

Usage: python3 bench/oneshot.py [--runs 200] [--commands 10000] [--rcon target/release/rcon]
Build first: cargo build --release --locked
"""

import argparse
import socket
import statistics
import struct
import subprocess
import sys
import time

PASSWORD = "practice"


def packet(pid, kind, body=b""):
    return struct.pack("<iii", len(body) + 10, pid, kind) + body + b"\0\0"


def read_packet(sock):
    head = b""
    while len(head) < 4:
        chunk = sock.recv(4 - len(head))
        if not chunk:
            raise EOFError
        head += chunk
    (size,) = struct.unpack("<i", head)
    rest = b""
    while len(rest) < size:
        chunk = sock.recv(size - len(rest))
        if not chunk:
            raise EOFError
        rest += chunk
    pid, kind = struct.unpack("<ii", rest[:8])
    return pid, kind, rest[8:-2]


def raw_round_trips(host, port):
    """The same exchanges as `rcon list`, with no process start: the network floor."""
    s = socket.create_connection((host, port))
    s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
    s.sendall(packet(1, 3, PASSWORD.encode()))
    read_packet(s)
    s.sendall(packet(-2, 0))
    read_packet(s)
    s.sendall(packet(2, 2, b"list"))
    read_packet(s)
    s.sendall(packet(-2, 0))
    read_packet(s)
    s.close()


def timed_child(argv):
    """Wall time of one child process."""
    start = time.perf_counter()
    proc = subprocess.run(argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    elapsed = time.perf_counter() - start
    if proc.returncode != 0:
        sys.exit(f"{argv[0]} failed with {proc.returncode}: {proc.stderr.decode()}")
    return elapsed


def peak_rss_kib(argv):
    """Peak RSS of one child, measured by GNU time (getrusage after exec; a fork from Python
    would count the Python image too)."""
    proc = subprocess.run(
        ["/usr/bin/time", "-f", "%M"] + argv, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE, check=True
    )
    return int(proc.stderr.decode().strip().splitlines()[-1])


def median_ms(samples):
    return statistics.median(samples) * 1000


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--runs", type=int, default=200)
    ap.add_argument("--commands", type=int, default=10000)
    ap.add_argument("--rcon", default="target/release/rcon")
    args = ap.parse_args()

    server = subprocess.Popen(
        [args.rcon, "--practice-server", "127.0.0.1:0", "--practice-password", PASSWORD],
        stdout=subprocess.PIPE,
        stderr=subprocess.DEVNULL,
        text=True,
    )
    addr = server.stdout.readline().strip()
    host, port = addr.rsplit(":", 1)
    port = int(port)
    base = [args.rcon, "-H", addr, "-p", PASSWORD]
    try:
        for _ in range(10):  # warm up caches and the server
            timed_child(base + ["list"])
            raw_round_trips(host, port)
        floor = [timed_child(["/bin/true"]) for _ in range(args.runs)]
        trips = []
        for _ in range(args.runs):
            t = time.perf_counter()
            raw_round_trips(host, port)
            trips.append(time.perf_counter() - t)
        wall = [timed_child(base + ["list"]) for _ in range(args.runs)]
        rss = max(peak_rss_kib(base + ["list"]) for _ in range(20))
        rss_true = max(peak_rss_kib(["/bin/true"]) for _ in range(5))

        cmds = []
        for i in range(args.commands):
            cmds += ["-c", f"echo {i}"]
        t = time.perf_counter()
        out = subprocess.run(base + cmds, capture_output=True, check=True)
        stream = time.perf_counter() - t
        lines = out.stdout.decode().splitlines()
        assert lines == [str(i) for i in range(args.commands)], "incomplete or out of order"
    finally:
        subprocess.run(base + ["stop"], capture_output=True)
        server.wait(timeout=5)

    f, r, w = median_ms(floor), median_ms(trips), median_ms(wall)
    print(f"runs per figure:                 {args.runs}")
    print(f"process spawn floor (/bin/true): {f:.3f} ms")
    print(f"round trips of `list` (in-proc): {r:.3f} ms")
    print(f"rcon one-shot `list` wall time:  {w:.3f} ms")
    print(f"overhead above floor + trips:    {w - f - r:.3f} ms")
    print(f"rcon one-shot peak RSS:          {rss / 1024:.2f} MiB ({rss} KiB; /bin/true: {rss_true} KiB)")
    print(f"-c x{args.commands} in one session:      {stream:.3f} s = {args.commands / stream:,.0f} commands/s")


if __name__ == "__main__":
    main()
