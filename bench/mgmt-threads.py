#!/usr/bin/env python3
"""The most threads a running `rcon --mgmt` has on N practice management servers (ws://, one
`rcon --practice-mgmt` process each), sampled from /proc/PID/status every 50 ms (Linux): a
batch held open by --delay, a follow, a countdown. Each line: (threads, exit status); a run
still going at its end is stopped with SIGINT (130; -2 for the follow).

    python3 bench/mgmt-threads.py target/debug/rcon 300
"""
import os, subprocess, sys, time, signal, tempfile
N = int(sys.argv[2]) if len(sys.argv) > 2 else 300
RCON = sys.argv[1]
NEW = RCON  # the practice servers
d = tempfile.mkdtemp()
servers = []
for i in range(N):
    p = subprocess.Popen([NEW, "--practice-mgmt", "127.0.0.1:0", "--practice-password", "s3cret"],
                         stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    servers.append(p)
urls = [p.stdout.readline().split()[-1] for p in servers]
cfg = os.path.join(d, "config.toml")
with open(cfg, "w") as f:
    for i, u in enumerate(urls):
        f.write(f'[servers.s{i}]\nhost = "127.0.0.1"\nmgmt_url = "{u}"\n\n')
env = dict(os.environ, RCON_CONFIG=cfg, RCON_MGMT_SECRET="s3cret", HOME=d, RCON_CLOCK_SPEED="30")
names = ",".join(f"s{i}" for i in range(N))
def threads(pid):
    try:
        for l in open(f"/proc/{pid}/status"):
            if l.startswith("Threads:"):
                return int(l.split()[1])
    except OSError:
        return 0
    return 0
def sample(args, seconds, stop=None):
    p = subprocess.Popen([RCON, "--mgmt", "-s", names] + args, env=env,
                         stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    most = 0
    end = time.time() + seconds
    while time.time() < end and p.poll() is None:
        most = max(most, threads(p.pid))
        time.sleep(0.05)
    if p.poll() is None:
        p.send_signal(signal.SIGINT)
    p.wait()
    return most, p.returncode
print("batch    ", sample(["--delay", "5s", "-c", "players", "-c", "players"], 8))
print("follow   ", sample(["--follow"], 6))
print("countdown", sample(["--countdown", "1m", "--at", "30s", "--announce", "server system_message hi {left}"], 8))
for p in servers:
    p.kill()
