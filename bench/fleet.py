#!/usr/bin/env python3
"""Fleet benchmark (issue 11): one `rcon` process against thousands of servers on loopback.
Not a test; prints figures, and stops by itself.

TARGETS servers (default 10,000) listen on 127.0.0.1, one port each, served by a few Python
processes (selectors, non-blocking, in this file): most answer RCON like a vanilla server
(login, the probe's `Unknown request 0`, `list`); DEAD_PERCENT of them (default 5%) accept the
connection and never answer. Every run sends one `list` to every server with `-t 2s`, from a
fresh data directory (so every run probes every server once), and is measured with GNU time:

  - rcon now: `rcon --targets FILE.csv -t 2s list` (the event loop),
  - the thread pool it replaced: the same targets as --target flags to the binary of the commit
    before the event loop (built into a temporary directory unless --old-rcon is given),
  - `xargs -P 64` over one `rcon -t 2s list` per server (no labels: counted, not attributed).

For each run: wall time, peak RSS, and whether every live server's answer came back complete
and labelled with its name (and every dead one failed with a timeout).

Usage: python3 bench/fleet.py [--targets 10000] [--dead-percent 5] [--rcon target/release/rcon]
                              [--old-rcon PATH | --old-commit REV] [--skip-old] [--skip-xargs]
Build first: cargo build --release --locked
"""

import argparse
import os
import resource
import selectors
import shutil
import socket
import struct
import subprocess
import sys
import tempfile
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parent
PASSWORD = "bench-fleet"
LIST_REPLY = b"There are 0 of a max of 20 players online: "
TIMEOUT = "2s"
TIMEOUT_S = 2.0


def packet(pid, kind, body):
    return struct.pack("<iii", len(body) + 10, pid, kind) + body + b"\0\0"


def serve(ports_out, count, dead_every, first_index):
    """One server process: `count` listeners; every `dead_every`-th (by global index) is dead.
    Writes `index port` lines to ports_out, then serves until stdin closes."""
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))
    sel = selectors.DefaultSelector()
    lines = []
    for k in range(count):
        index = first_index + k
        ls = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        ls.bind(("127.0.0.1", 0))
        ls.listen(64)
        ls.setblocking(False)
        dead = dead_every > 0 and index % dead_every == dead_every - 1
        sel.register(ls, selectors.EVENT_READ, ("listen", dead))
        lines.append(f"{index} {ls.getsockname()[1]}\n")
    sel.register(sys.stdin, selectors.EVENT_READ, ("stdin", False))
    with open(ports_out, "w") as f:
        f.writelines(lines)
    os.rename(ports_out, ports_out + ".done")
    bufs = {}
    while True:
        for key, _ in sel.select():
            what, dead = key.data
            if what == "stdin":
                if os.environ.get("FLEET_BENCH_CPU"):
                    t = os.times()
                    print(f"server cpu {t.user + t.system:.2f}s", file=sys.stderr)
                return
            if what == "listen":
                while True:
                    try:
                        conn, _ = key.fileobj.accept()
                    except BlockingIOError:
                        break
                    conn.setblocking(False)
                    conn.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
                    sel.register(conn, selectors.EVENT_READ, ("conn", dead))
                    bufs[conn] = [b"", False]
                continue
            conn = key.fileobj
            try:
                data = conn.recv(65536)
            except (BlockingIOError, InterruptedError):
                continue
            except OSError:
                data = b""
            if not data:
                sel.unregister(conn)
                bufs.pop(conn, None)
                conn.close()
                continue
            if dead:
                continue
            state = bufs[conn]
            state[0] += data
            out = b""
            while len(state[0]) >= 4:
                (size,) = struct.unpack_from("<i", state[0])
                if len(state[0]) < size + 4:
                    break
                pid, kind = struct.unpack_from("<ii", state[0], 4)
                body = state[0][12:size + 2]
                state[0] = state[0][size + 4:]
                if kind == 3:
                    ok = body == PASSWORD.encode()
                    state[1] = ok
                    out += packet(pid if ok else -1, 2, b"")
                elif not state[1]:
                    out += packet(-1, 2, b"")
                elif kind == 2:
                    reply = LIST_REPLY if body == b"list" else b"Unknown command"
                    out += packet(pid, 0, reply)
                else:
                    out += packet(pid, 0, b"Unknown request %x" % kind)
            if out:
                try:
                    conn.sendall(out)
                except OSError:
                    pass


def start_servers(total, dead_every, procs, workdir):
    per = (total + procs - 1) // procs
    children = []
    for p in range(procs):
        first = p * per
        count = min(per, total - first)
        if count <= 0:
            break
        out = str(workdir / f"ports-{p}")
        child = subprocess.Popen(
            [sys.executable, __file__, "--serve", out, str(count), str(dead_every), str(first)],
            stdin=subprocess.PIPE)
        children.append((child, out))
    ports = {}
    deadline = time.time() + 120
    for child, out in children:
        while not os.path.exists(out + ".done"):
            if time.time() > deadline or child.poll() is not None:
                sys.exit("the benchmark servers did not start")
            time.sleep(0.05)
        for line in open(out + ".done"):
            i, port = line.split()
            ports[int(i)] = int(port)
    return children, [ports[i] for i in range(total)]


def timed(argv, env, stdin=None):
    """Wall time, peak RSS (KiB, from GNU time, which execs the program itself), exit status,
    stdout and stderr of one run."""
    with tempfile.NamedTemporaryFile("r") as rss:
        start = time.perf_counter()
        proc = subprocess.run(["/usr/bin/time", "-q", "-f", "%M", "-o", rss.name, *argv],
                              env=env, stdin=stdin, stdout=subprocess.PIPE,
                              stderr=subprocess.PIPE)
        took = time.perf_counter() - start
        text = rss.read().split()
        peak = int(text[-1]) if text else 0
    return took, peak, proc.returncode, proc.stdout.decode(errors="replace"), \
        proc.stderr.decode(errors="replace")


def check_labelled(stdout, names, dead):
    """Whether every live server's one line is there, complete and labelled, and nothing else."""
    want = {f"[{n}] {LIST_REPLY.decode()}".rstrip() for i, n in enumerate(names) if i not in dead}
    got = [line.rstrip() for line in stdout.splitlines()]
    missing = len(want - set(got))
    extra = len([line for line in got if line not in want])
    dupes = len(got) - len(set(got))
    return missing, extra, dupes


def env_for(home):
    env = {k: v for k, v in os.environ.items()
           if not k.startswith(("RCON_", "MCRCON_", "XDG_"))}
    env.update(RCON_PASSWORD=PASSWORD, NO_COLOR="1", HOME=str(home),
               XDG_CONFIG_HOME=str(home / "config"), XDG_DATA_HOME=str(home / "data"))
    return env


def build_old(rev, workdir):
    src = workdir / "old-src"
    src.mkdir()
    archive = subprocess.run(["git", "-C", str(REPO), "archive", rev], check=True,
                             stdout=subprocess.PIPE).stdout
    subprocess.run(["tar", "-x", "-C", str(src)], input=archive, check=True)
    target = workdir / "old-target"
    print(f"building the thread-pool rcon of {rev} in {src} ...", flush=True)
    subprocess.run(["cargo", "build", "--release", "--locked", "--bin", "rcon"], cwd=src,
                   env={**os.environ, "CARGO_TARGET_DIR": str(target)}, check=True,
                   stdout=subprocess.DEVNULL)
    return str(target / "release" / "rcon")


def report(label, took, peak, code, extra=""):
    within = "yes" if took <= TIMEOUT_S + 1.0 else "NO"
    print(f"{label:<34} wall {took:7.2f} s  (within timeout + 1 s: {within:>3})  "
          f"peak RSS {peak / 1024:7.1f} MB  exit {code}  {extra}", flush=True)


def main():
    if len(sys.argv) > 1 and sys.argv[1] == "--serve":
        out, count, dead_every, first = sys.argv[2:6]
        serve(out, int(count), int(dead_every), int(first))
        return
    ap = argparse.ArgumentParser()
    ap.add_argument("--targets", type=int, default=10_000)
    ap.add_argument("--dead-percent", type=float, default=5.0)
    ap.add_argument("--rcon", default=str(REPO / "target" / "release" / "rcon"))
    ap.add_argument("--old-rcon", help="an rcon binary with the thread pool (skips the build)")
    ap.add_argument("--old-commit", default="4adcd2d",
                    help="the commit before the event loop, built when --old-rcon is not given")
    ap.add_argument("--skip-old", action="store_true")
    ap.add_argument("--skip-xargs", action="store_true")
    ap.add_argument("--server-procs", type=int, default=2)
    args = ap.parse_args()
    rcon = os.path.abspath(args.rcon)
    if not os.path.exists(rcon):
        sys.exit(f"{rcon} not found: cargo build --release --locked")
    dead_every = round(100 / args.dead_percent) if args.dead_percent > 0 else 0
    work = Path(tempfile.mkdtemp(prefix="rcon-fleet-bench-"))
    try:
        old = None
        if not args.skip_old:
            old = args.old_rcon or build_old(args.old_commit, work)
        children, ports = start_servers(args.targets, dead_every, args.server_procs, work)
        try:
            run_all(args, rcon, old, ports, dead_every, work)
        finally:
            for child, _ in children:
                child.stdin.close()
                child.wait(timeout=30)
    finally:
        shutil.rmtree(work, ignore_errors=True)


def run_all(args, rcon, old, ports, dead_every, work):
    n = len(ports)
    names = [f"s{i}" for i in range(n)]
    dead = {i for i in range(n) if dead_every and i % dead_every == dead_every - 1}
    load = ", ".join(f"{x:.1f}" for x in os.getloadavg())
    print(f"{n} servers on 127.0.0.1 ({len(dead)} accept and never answer), -t {TIMEOUT}, "
          f"one `list` each; {os.cpu_count()} CPUs, load average {load}", flush=True)
    inventory = work / "fleet.csv"
    with open(inventory, "w") as f:
        f.write("name,host,port,tags\n")
        for i, port in enumerate(ports):
            f.write(f"{names[i]},127.0.0.1,{port},{'dead' if i in dead else 'live'}\n")

    def home(label):
        h = work / f"home-{label}"
        h.mkdir()
        return h

    took, peak, code, out, err = timed(
        [rcon, "--targets", str(inventory), "-t", TIMEOUT, "list"], env_for(home("now")))
    missing, extra, dupes = check_labelled(out, names, dead)
    timeouts = err.count("timed out")
    report("rcon --targets (event loop)", took, peak, code,
           f"missing {missing}, extra {extra}, duplicated {dupes}, timed out {timeouts}")
    summary = [line for line in err.splitlines() if line.startswith("rcon: summary")]
    if summary:
        print(f"    {summary[0][:160]}")

    if old:
        argv = [old, "-t", TIMEOUT]
        for i, port in enumerate(ports):
            argv += ["--target", f"{names[i]}=127.0.0.1:{port}"]
        argv.append("list")
        took, peak, code, out, err = timed(argv, env_for(home("old")))
        missing, extra, dupes = check_labelled(out, names, dead)
        report("thread pool (16 threads, old)", took, peak, code,
               f"missing {missing}, extra {extra}, duplicated {dupes}")

    if not args.skip_xargs:
        lines = "".join(f"127.0.0.1:{port}\n" for port in ports).encode()
        with tempfile.TemporaryFile() as f:
            f.write(lines)
            f.seek(0)
            took, peak, code, out, err = timed(
                ["xargs", "-P", "64", "-I", "{}", rcon, "-t", TIMEOUT, "-H", "{}", "list"],
                env_for(home("xargs")), stdin=f)
        got = sum(1 for line in out.splitlines() if line.rstrip() == LIST_REPLY.decode().rstrip())
        report("xargs -P 64 rcon (one per server)", took, peak, code,
               f"answers {got} of {n - len(dead)} (unlabelled; peak RSS is the largest one)")


if __name__ == "__main__":
    main()
