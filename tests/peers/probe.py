#!/usr/bin/env python3
"""Characterise an RCON server peer with raw sockets (loopback only).

Usage:
    python3 probe.py [--json] -- <launcher command...>      # starts the launcher
    python3 probe.py --port N --password PW                 # probes a running server

Example:
    python3 tests/peers/probe.py -- python3 tests/peers/pypi_rconx.py

Each scenario uses a fresh TCP connection. A reply is printed as
(id, type, body); "EOF" means the server closed the connection, "quiet" means
nothing arrived within the wait.
"""
import argparse
import json
import socket
import struct
import subprocess
import sys
import time

HOST = "127.0.0.1"
PASSWORD = "probe-pw"
WAIT = 0.6  # seconds of silence that end a read phase


def pkt(req_id, ptype, body=b""):
    if isinstance(body, str):
        body = body.encode("utf-8")
    return struct.pack("<iii", len(body) + 10, req_id, ptype) + body + b"\x00\x00"


class Conn:
    def __init__(self, port):
        self.s = socket.create_connection((HOST, port), timeout=3)
        self.s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        self.buf = b""
        self.eof = False

    def send(self, *packets):
        """All packets in ONE write."""
        try:
            self.s.sendall(b"".join(packets))
            return True
        except OSError:
            self.eof = True
            return False

    def _fill(self, timeout):
        if self.eof:
            return False
        self.s.settimeout(timeout)
        try:
            d = self.s.recv(65536)
        except socket.timeout:
            return False
        except OSError:
            self.eof = True
            return False
        if not d:
            self.eof = True
            return False
        self.buf += d
        return True

    def _take(self):
        if len(self.buf) < 4:
            return None
        n = struct.unpack("<i", self.buf[:4])[0]
        if n < 10 or len(self.buf) < 4 + n:
            return None
        d = self.buf[4:4 + n]
        self.buf = self.buf[4 + n:]
        i, t = struct.unpack("<ii", d[:8])
        return {"id": i, "type": t, "body": d[8:-2], "size": n, "tail": d[-2:]}

    def read_one(self, timeout=2.0):
        end = time.time() + timeout
        while True:
            p = self._take()
            if p:
                return p
            left = end - time.time()
            if left <= 0 or not self._fill(left):
                if self.eof:
                    p = self._take()
                    return p
                if time.time() >= end:
                    return None

    def read_all(self, wait=WAIT, first_timeout=2.0):
        """Packets until `wait` s of silence (or EOF). Returns (packets, eof)."""
        out = []
        p = self.read_one(first_timeout)
        while p:
            out.append(p)
            p = self.read_one(wait)
        # detect a close that follows the last packet
        if not self.eof:
            self._fill(0.2)
            q = self._take()
            while q:
                out.append(q)
                q = self._take()
        return out, self.eof

    def close(self):
        try:
            self.s.close()
        except OSError:
            pass


def fmt(p):
    body = p["body"]
    try:
        text = body.decode("utf-8")
        shown = text if len(text) <= 60 else text[:40] + "...(%d chars)" % len(text)
    except UnicodeDecodeError:
        shown = "<%d bytes, not UTF-8: %s...>" % (len(body), body[:16].hex(" "))
    extra = "" if p["tail"] == b"\x00\x00" else " tail=%s" % p["tail"].hex()
    return "(id=%d, type=%d, %d B, %r%s)" % (p["id"], p["type"], len(body), shown, extra)


def fmt_all(pkts, eof):
    s = ", ".join(fmt(p) for p in pkts) if pkts else "nothing"
    return s + (" then EOF" if eof else " (stays open)")


def login(port, pw=PASSWORD, req_id=1):
    c = Conn(port)
    c.send(pkt(req_id, 3, pw))
    pk = []
    # collect until the type-2 login reply (skip Source-style precursor)
    while True:
        p = c.read_one(2.0)
        if p is None:
            break
        pk.append(p)
        if p["type"] != 0:
            break
    return c, pk


def scenario_login(port):
    r = {}
    c, pk = login(port)
    more, eof = c.read_all(wait=0.3, first_timeout=0.3)
    r["login_ok"] = fmt_all(pk + more, eof)
    r["precursor_type0_before_login_reply"] = bool(pk and pk[0]["type"] == 0)
    c.close()
    c, pk = login(port, pw="wrong-" + PASSWORD)
    more, eof = c.read_all(wait=0.5, first_timeout=0.5)
    r["login_wrong"] = fmt_all(pk + more, eof)
    if not eof:
        c.send(pkt(2, 2, "echo after-bad-login"))
        pk2, eof2 = c.read_all(first_timeout=1.0)
        r["command_after_wrong_login"] = fmt_all(pk2, eof2)
    c.close()
    c = Conn(port)
    c.send(pkt(3, 2, "echo before-login"))
    pk, eof = c.read_all(first_timeout=1.0)
    r["command_before_login"] = fmt_all(pk, eof)
    c.close()
    return r


def after_first_reply(port, cmd, second):
    """Login, send cmd (id 10), wait for its first reply, then send `second`."""
    c, _ = login(port)
    c.send(pkt(10, 2, cmd))
    first = c.read_one(2.0)
    if first is None:
        c.close()
        return "no reply to the command" + (" (EOF)" if c.eof else "")
    c.send(second)
    pk, eof = c.read_all()
    c.close()
    return fmt_all([first] + pk, eof)


def scenario_sentinels(port):
    r = {}
    r["sentinel_id-2_type0_after_first_reply"] = after_first_reply(port, "echo hi", pkt(-2, 0))
    r["sentinel_id-2_type0_after_long_first_fragment"] = after_first_reply(port, "along 9000", pkt(-2, 0))
    r["positive_sentinel_id11_type0_after_first_reply"] = after_first_reply(port, "echo hi", pkt(11, 0))
    r["type100_id12_after_first_reply"] = after_first_reply(port, "echo hi", pkt(12, 100, ""))
    r["nonempty_type0_id13_after_first_reply"] = after_first_reply(port, "echo hi", pkt(13, 0, "x"))
    for label, packet in [("command_id0", pkt(0, 2, "echo zero")),
                          ("command_id-5", pkt(-5, 2, "echo neg")),
                          ("empty_type0_id0", pkt(0, 0))]:
        c, _ = login(port)
        c.send(packet)
        pk, eof = c.read_all()
        if not eof:
            c.send(pkt(14, 2, "echo still-alive"))
            pk2, eof = c.read_all()
            pk += pk2
        r[label] = fmt_all(pk, eof)
        c.close()
    return r


def scenario_output(port):
    r = {}
    for cmd in ["echo hi", "empty", "list", "nosuch", "echo é€😀a", "long 10",
                "along 4086", "along 4087", "along 10000", "long 5000", "long 20000"]:
        c, _ = login(port)
        c.send(pkt(20, 2, cmd))
        pk, eof = c.read_all(wait=0.8)
        c.close()
        if len(pk) > 3 or sum(len(p["body"]) for p in pk) > 200:
            sizes = [len(p["body"]) for p in pk]
            body = b"".join(p["body"] for p in pk)
            try:
                txt = body.decode("utf-8")
                dec = "%d chars UTF-8 OK" % len(txt)
            except UnicodeDecodeError:
                dec = "NOT valid UTF-8 when joined"
            ids = sorted({p["id"] for p in pk})
            bad = 0
            for p in pk:
                try:
                    p["body"].decode("utf-8")
                except UnicodeDecodeError:
                    bad += 1
            r[cmd] = "%d packet(s), body bytes %s, ids %s, joined %d B (%s)%s%s" % (
                len(pk), sizes, ids, len(body), dec,
                ", %d fragment(s) not valid UTF-8 on their own" % bad if bad else "",
                " then EOF" if eof else "")
        else:
            r[cmd] = fmt_all(pk, eof)
    return r


def scenario_coalesced(port):
    r = {}
    c, _ = login(port)
    c.send(pkt(30, 2, "echo A"), pkt(31, 2, "echo B"))
    pk, eof = c.read_all(wait=0.8)
    if not eof:
        c.send(pkt(32, 2, "echo C"))
        pk2, eof = c.read_all(wait=0.8)
        r["two_commands_one_write_then_third"] = fmt_all(pk, False) + " || after 3rd: " + fmt_all(pk2, eof)
    else:
        r["two_commands_one_write_then_third"] = fmt_all(pk, eof)
    c.close()
    c, _ = login(port)
    c.send(pkt(33, 2, "echo D"), pkt(-2, 0))
    pk, eof = c.read_all(wait=0.8)
    r["command_plus_sentinel_-2_one_write"] = fmt_all(pk, eof)
    c.close()
    c = Conn(port)
    c.send(pkt(34, 3, PASSWORD), pkt(35, 2, "echo E"))
    pk, eof = c.read_all(wait=0.8)
    r["login_plus_command_one_write"] = fmt_all(pk, eof)
    c.close()
    # one packet split over two writes
    c, _ = login(port)
    whole = pkt(36, 2, "echo split")
    c.send(whole[:7])
    time.sleep(0.3)
    c.send(whole[7:])
    pk, eof = c.read_all(wait=0.8)
    r["one_packet_in_two_writes"] = fmt_all(pk, eof)
    c.close()
    return r


def probe(port):
    res = {}
    for name, fn in [("login", scenario_login), ("sentinels", scenario_sentinels),
                     ("output", scenario_output), ("coalesced", scenario_coalesced)]:
        try:
            res[name] = fn(port)
        except Exception as e:  # keep going: a peer may crash mid-scenario
            res[name] = {"error": "%s: %s" % (type(e).__name__, e)}
    return res


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--port", type=int)
    ap.add_argument("--password")
    ap.add_argument("--json", action="store_true")
    ap.add_argument("launcher", nargs="*")
    a = ap.parse_args()
    global PASSWORD
    proc = None
    if a.launcher:
        proc = subprocess.Popen(a.launcher + ["--password", PASSWORD, "--port", "0"],
                                stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        line = proc.stdout.readline().decode().strip()
        if not line.startswith("PORT "):
            sys.exit("launcher did not print PORT: %r" % line)
        port = int(line.split()[1])
    else:
        if a.port is None or a.password is None:
            ap.error("give a launcher command or --port and --password")
        port, PASSWORD = a.port, a.password
    try:
        res = probe(port)
    finally:
        if proc:
            proc.stdin.close()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()
    if a.json:
        print(json.dumps(res, indent=1, ensure_ascii=False))
    else:
        for sec, items in res.items():
            print("[%s]" % sec)
            for k, v in items.items():
                print("  %-48s %s" % (k, v))


if __name__ == "__main__":
    main()
