#!/usr/bin/env python3
"""A remembered method that is no longer true (issue 40): a practice server learns the store,
another mode takes its port, and a 2,000-line file runs with that stale store and, for
comparison, with an empty one (the same second server, rounds alternated). Prints the wall
time of each and their ratio, and checks every answer. Not a test; prints figures.

Usage: python3 bench/relearn.py [--lines 2000] [--rounds 3] [--read-delay 2ms] [--only FROM:TO] BIN

Through `--remote`: give an sshd whose sessions get `SetEnv RCON_DATA_DIR=DIR` (the store of
the remote side, which the script fills before each run) and that runs BIN there:

    bench/relearn.py --ssh USER@127.0.0.1:PORT --ssh-option IdentityFile=KEY ... --remote-data DIR BIN
"""

import argparse
import json
import os
import re
import shutil
import statistics
import subprocess
import tempfile
import time

# (first server, second server): silent-empty -> strict vanilla, vanilla -> the C++-style server
# (its own type-2 end marker), back, and vanilla -> a server whose answers end by silence
# because it ignores sentinels (the factorio mode, under the minecraft dialect's probe).
# With --ssh: ssh, options and data (see the usage).
REMOTE = {}

SWAPS = [("silent-empty", "vanilla"), ("vanilla", "end-marker"), ("end-marker", "vanilla"),
         ("vanilla", "factorio")]


def lines(n):
    """The file: short answers, empty ones, and a long one (vanilla: two fragments) every 100."""
    out = []
    for i in range(n):
        out.append("help" if i % 100 == 99 else ["echo line %d" % i, "say %d" % i, "list", "seed"][i % 4])
    return out


def env_for(home):
    env = {k: v for k, v in os.environ.items() if not k.startswith(("RCON_", "XDG_"))}
    env.update(HOME=home, NO_COLOR="1", RCON_DATA_DIR=home + "/data", RCON_CONFIG_DIR=home + "/cfg")
    return env


def serve(rcon, mode, port, delay, home):
    args = [rcon, "--practice-server", f"127.0.0.1:{port}", "--practice-mode", mode,
            "--practice-password", "pw"]
    if mode == "vanilla":
        args += ["--practice-read-delay", delay]
    p = subprocess.Popen(args, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True,
                         env=env_for(home))
    return p, int(re.search(r":(\d+)", p.stdout.readline()).group(1))


def run(rcon, port, home, path, extra=()):
    args = [rcon, "-H", "127.0.0.1", "-P", str(port), "-p", "pw", "-t", "10s", *extra]
    if REMOTE:
        # The store is the remote side's: the one in `home` goes there.
        shutil.rmtree(REMOTE["data"], ignore_errors=True)
        shutil.copytree(home + "/data", REMOTE["data"]) if os.path.isdir(home + "/data") \
            else os.makedirs(REMOTE["data"])
        args += ["--ssh", REMOTE["ssh"], "--remote", "--remote-rcon", rcon]
        for o in REMOTE["options"]:
            args += ["--ssh-option", o]
    t = time.perf_counter()
    out = subprocess.run(args + ["--json", "-f", path], capture_output=True, text=True,
                         env=env_for(home))
    return time.perf_counter() - t, out


def method(data):
    try:
        text = open(data + "/learned-servers.toml").read()
    except OSError:
        return "-"
    m = re.search(r'method = "([^"]+)"', text)
    return m.group(1) if m else "-"


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--lines", type=int, default=2000)
    ap.add_argument("--rounds", type=int, default=3)
    ap.add_argument("--read-delay", default="2ms")
    ap.add_argument("--only", help="one swap, as FROM:TO")
    ap.add_argument("--ssh", help="run through --remote on this SSH destination")
    ap.add_argument("--ssh-option", action="append", default=[])
    ap.add_argument("--remote-data", help="the remote side's RCON_DATA_DIR")
    ap.add_argument("bin")
    a = ap.parse_args()
    if a.ssh:
        REMOTE.update(ssh=a.ssh, options=a.ssh_option, data=a.remote_data)
    with tempfile.TemporaryDirectory() as tmp:
        path = tmp + "/n.mcfunction"
        commands = lines(a.lines)
        open(path, "w").write("\n".join(commands) + "\n")
        print(f"{a.lines} lines, median of {a.rounds} rounds, wall seconds; "
              f"vanilla reads after {a.read_delay}")
        print(f"  {'swap':28} {'stale store':>11} {'empty store':>11} {'ratio':>6}  stderr lines  entry")
        swaps = [tuple(a.only.split(":"))] if a.only else SWAPS
        for first, second in swaps:
            learned = tmp + "/learned"
            shutil.rmtree(learned, ignore_errors=True)
            os.makedirs(learned)
            server, port = serve(a.bin, first, 0, a.read_delay, tmp)
            REMOTE_ = dict(REMOTE)
            REMOTE.clear()
            subprocess.run([a.bin, "-H", "127.0.0.1", "-P", str(port), "-p", "pw", "list"],
                           capture_output=True, env=env_for(learned), check=True)
            REMOTE.update(REMOTE_)
            server.kill()
            server.wait()
            server, _ = serve(a.bin, second, port, a.read_delay, tmp)
            stale, empty, notes, entry = [], [], set(), set()
            for _ in range(a.rounds):
                for store in ("stale", "empty"):
                    home = tempfile.mkdtemp(dir=tmp)
                    if store == "stale":
                        shutil.copytree(learned + "/data", home + "/data")
                    took, out = run(a.bin, port, home, path)
                    got = [json.loads(l)["command"] for l in out.stdout.splitlines()]
                    assert out.returncode == 0 and got == commands, (first, second, store, out.stderr)
                    if store == "stale":
                        stale.append(took)
                        notes.add(len(out.stderr.splitlines()))
                        entry.add(method(REMOTE["data"] if REMOTE else home + "/data"))
                    else:
                        empty.append(took)
            server.kill()
            server.wait()
            s, e = statistics.median(stale), statistics.median(empty)
            print(f"  {first + ' -> ' + second:28} {s:11.3f} {e:11.3f} {s / e:6.2f}  "
                  f"{','.join(map(str, sorted(notes))):>12}  {method(learned + '/data')} -> {','.join(sorted(entry))}")
    print("binary: " + a.bin + (f", through --remote on {a.ssh}" if a.ssh else ""))


if __name__ == "__main__":
    main()
