#!/usr/bin/env python3
"""`--remote` against one round trip per line through SSH (issue 21). Not a test; prints figures.

A private OpenSSH sshd on loopback (generated keys, its own config, `SetEnv RCON_DATA_DIR` so the
remote side's journal stays in the temp dir) behind a delay proxy that holds every chunk
DELAY_MS each way (50 ms round trips by default), and the practice server (strict vanilla rules)
on the sshd side. Runs a file of `echo line N` commands:

  - `rcon --ssh ... --remote -f FILE`        (REMOTE_LINES lines, default 10,000, and 2,000)
  - `rcon --ssh ... -f FILE`                 (local mode: `ssh -W`, LOCAL_LINES, default 200)
  - PyPI mcrcon 0.7.0's CLI over `ssh -L`    (the anchor, LOCAL_LINES; bench/.venv, skipped
                                              when missing: `python3 -m venv bench/.venv &&
                                              bench/.venv/bin/pip install mcrcon==0.7.0`)

and checks every output has one line per command, identical between --remote and local.

    python3 bench/remote.py                 # builds release first
    RCON_BIN=path/to/rcon REMOTE_LINES=10000 LOCAL_LINES=200 DELAY_MS=25 python3 bench/remote.py
"""

import os
import queue
import socket
import subprocess
import sys
import tempfile
import threading
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
ROOT = HERE.parent
DELAY = int(os.environ.get("DELAY_MS", "25")) / 1000.0
REMOTE_LINES = int(os.environ.get("REMOTE_LINES", "10000"))
LOCAL_LINES = int(os.environ.get("LOCAL_LINES", "200"))
PASSWORD = "bench-secret"


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def pump(src, dst):
    """Copies src to dst, each chunk DELAY after it arrived (a link, not a rate limit)."""
    q = queue.Queue()

    def reader():
        while True:
            try:
                data = src.recv(65536)
            except OSError:
                data = b""
            q.put((time.monotonic() + DELAY, data))
            if not data:
                return

    threading.Thread(target=reader, daemon=True).start()
    while True:
        due, data = q.get()
        time.sleep(max(0.0, due - time.monotonic()))
        if not data:
            try:
                dst.shutdown(socket.SHUT_WR)
            except OSError:
                pass
            return
        try:
            dst.sendall(data)
        except OSError:
            return


def delay_proxy(target_port):
    listener = socket.socket()
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(16)

    def serve():
        while True:
            client, _ = listener.accept()
            server = socket.create_connection(("127.0.0.1", target_port))
            for s in (client, server):
                s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
            threading.Thread(target=pump, args=(client, server), daemon=True).start()
            threading.Thread(target=pump, args=(server, client), daemon=True).start()

    threading.Thread(target=serve, daemon=True).start()
    return listener.getsockname()[1]


def rcon_binary():
    """RCON_BIN, else the release build (built first)."""
    rcon = os.environ.get("RCON_BIN")
    if not rcon:
        subprocess.run(["cargo", "build", "--release", "--locked", "--quiet"], cwd=ROOT, check=True)
        rcon = str(ROOT / "target" / "release" / "rcon")
    return str(Path(rcon).resolve())


def start(rcon, work):
    """A private sshd behind the delay proxy and the practice server on its side: returns the
    processes to stop, the `rcon --ssh ...` argv up to the commands, and rcon's environment."""
    for key in ("host_key", "user_key"):
        subprocess.run(["ssh-keygen", "-q", "-t", "ed25519", "-N", "", "-f", str(work / key)], check=True)
    (work / "authorized_keys").write_text((work / "user_key.pub").read_text())
    (work / "data").mkdir()
    os.makedirs("/run/sshd", exist_ok=True)
    sshd_port = free_port()
    (work / "sshd_config").write_text(
        f"Port {sshd_port}\nListenAddress 127.0.0.1\nHostKey {work}/host_key\nPidFile {work}/sshd.pid\n"
        f"AuthorizedKeysFile {work}/authorized_keys\nStrictModes no\nUsePAM no\n"
        "PasswordAuthentication no\nKbdInteractiveAuthentication no\nPermitRootLogin yes\n"
        f"AllowTcpForwarding yes\nSetEnv RCON_DATA_DIR={work}/data XDG_CACHE_HOME={work}/cache\n"
    )
    sshd = subprocess.Popen(["/usr/sbin/sshd", "-D", "-e", "-f", str(work / "sshd_config")],
                            stderr=open(work / "sshd.log", "w"))
    practice = subprocess.Popen([rcon, "--practice-server", "127.0.0.1:0", "--practice-password", PASSWORD],
                                stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, text=True)
    rcon_port = int(practice.stdout.readline().strip().rsplit(":", 1)[1])
    for _ in range(200):
        try:
            socket.create_connection(("127.0.0.1", sshd_port)).close()
            break
        except OSError:
            time.sleep(0.02)
    proxy_port = delay_proxy(sshd_port)
    user = subprocess.run(["id", "-un"], capture_output=True, text=True).stdout.strip()
    ssh_opts = [f"IdentityFile={work}/user_key", "IdentitiesOnly=yes", "UserKnownHostsFile=/dev/null",
                "StrictHostKeyChecking=no", "LogLevel=ERROR"]
    env = dict(os.environ, RCON_PASSWORD=PASSWORD, NO_COLOR="1", RCON_DATA_DIR=str(work / "localdata"))
    base = [rcon, "--ssh", f"{user}@127.0.0.1:{proxy_port}", "-H", "127.0.0.1", "-P", str(rcon_port)]
    for o in ssh_opts:
        base += ["--ssh-option", o]
    return [practice, sshd], base, env, (user, proxy_port, rcon_port, ssh_opts)


def main():
    rcon = rcon_binary()
    work = Path(tempfile.mkdtemp())
    procs, base, env, (user, proxy_port, rcon_port, ssh_opts) = start(rcon, work)
    try:
        def file_of(n):
            path = work / f"in{n}.mcfunction"
            path.write_text("".join(f"echo line {i}\n" for i in range(1, n + 1)))
            return str(path)

        def timed(label, argv, n, stdin=None, eof_error_ok=False):
            start = time.monotonic()
            out = subprocess.run(argv, env=env, capture_output=True, text=True,
                                 stdin=open(stdin) if stdin else subprocess.DEVNULL)
            took = time.monotonic() - start
            lines = out.stdout.count("\n")
            # mcrcon 0.7.0's CLI ends every piped run with EOFError (exit 1) after the last line.
            failed = out.returncode != 0 and not (eof_error_ok and "EOFError" in out.stderr)
            if failed or lines != n:
                sys.exit(f"{label}: exit {out.returncode}, {lines} lines of {n}: {out.stderr.strip()}")
            print(f"{label}: {n} lines in {took:.2f} s = {n / took:.0f} lines/s ({took / n * 1000:.2f} ms/line)",
                  flush=True)
            return out.stdout, took

        print(f"round trip {DELAY * 2000:.0f} ms (delay proxy between ssh and sshd), rcon {rcon}", flush=True)
        # One connection first, so that ssh's first-connection costs are not in the first figure.
        timed("warm-up: --remote", base + ["--remote", "--remote-rcon", rcon, "-c", "echo line 1"], 1)
        timed("warm-up: one-shot through ssh -W", base + ["echo line 1"], 1)
        remote_out = {}
        for n in sorted({REMOTE_LINES, 2000}):
            remote_out[n], _ = timed("rcon --remote", base + ["--remote", "--remote-rcon", rcon, "-f", file_of(n)], n)
        local, took = timed("rcon local (ssh -W, one round trip per line)", base + ["-f", file_of(LOCAL_LINES)],
                            LOCAL_LINES)
        remote_small, _ = timed("rcon --remote (same file)",
                                base + ["--remote", "--remote-rcon", rcon, "-f", file_of(LOCAL_LINES)], LOCAL_LINES)
        if remote_small != local:
            sys.exit("--remote and local mode printed different output")
        print(f"  local mode extrapolated to {REMOTE_LINES} lines: {took / LOCAL_LINES * REMOTE_LINES:.0f} s", flush=True)
        mcrcon = HERE / ".venv" / "bin" / "mcrcon"
        if mcrcon.exists():
            lport = free_port()
            tunnel = subprocess.Popen(["ssh", "-N", "-p", str(proxy_port), "-o", "BatchMode=yes",
                                       *sum((["-o", o] for o in ssh_opts), []),
                                       "-L", f"{lport}:127.0.0.1:{rcon_port}", f"{user}@127.0.0.1"])
            try:
                for _ in range(500):
                    try:
                        socket.create_connection(("127.0.0.1", lport)).close()
                        break
                    except OSError:
                        time.sleep(0.02)
                timed("PyPI mcrcon 0.7.0 CLI through ssh -L", [str(mcrcon), "127.0.0.1", "-p", str(lport),
                                                              "--password", PASSWORD],
                      LOCAL_LINES, stdin=file_of(LOCAL_LINES), eof_error_ok=True)
            finally:
                tunnel.terminate()
        else:
            print("mcrcon: skipped (bench/.venv/bin/mcrcon missing)")
    finally:
        for p in procs:
            p.terminate()


if __name__ == "__main__":
    main()
