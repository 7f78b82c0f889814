#!/usr/bin/env python3
"""Probe a Minecraft game-port peer: modern Server List Ping and legacy FE / FE 01.

Usage: python3 probe_slp.py -- node tests/peers/npm_mc_status.js
       python3 probe_slp.py --port N
"""
import argparse
import json
import socket
import struct
import subprocess
import sys
import time

HOST = "127.0.0.1"


def varint(n):
    n &= 0xFFFFFFFF
    out = b""
    while True:
        b = n & 0x7F
        n >>= 7
        if n:
            out += bytes([b | 0x80])
        else:
            return out + bytes([b])


def read_varint(s):
    n = 0
    for i in range(5):
        b = s.recv(1)
        if not b:
            raise EOFError("closed while reading a VarInt")
        n |= (b[0] & 0x7F) << (7 * i)
        if not b[0] & 0x80:
            return n
    raise ValueError("VarInt too long")


def recv_exact(s, n):
    d = b""
    while len(d) < n:
        c = s.recv(n - len(d))
        if not c:
            raise EOFError("closed after %d/%d bytes" % (len(d), n))
        d += c
    return d


def frame(pid, data):
    body = varint(pid) + data
    return varint(len(body)) + body


def mcstr(s):
    b = s.encode()
    return varint(len(b)) + b


def slp(port, proto=765, one_write=True):
    s = socket.create_connection((HOST, port), timeout=3)
    hs = frame(0, varint(proto) + mcstr("localhost") + struct.pack(">H", port) + varint(1))
    req = frame(0, b"")
    if one_write:
        s.sendall(hs + req)
    else:
        s.sendall(hs)
        time.sleep(0.1)
        s.sendall(req)
    n = read_varint(s)
    data = recv_exact(s, n)
    if data[0] != 0:
        raise ValueError("status reply packet id %d" % data[0])
    i, ln, shift = 1, 0, 0
    while True:
        b = data[i]
        i += 1
        ln |= (b & 0x7F) << shift
        shift += 7
        if not b & 0x80:
            break
    status = json.loads(data[i:i + ln].decode())
    t = 0x0123456789ABCDEF
    t0 = time.time()
    s.sendall(frame(1, struct.pack(">q", t)))
    n = read_varint(s)
    pong = recv_exact(s, n)
    rtt = (time.time() - t0) * 1000
    closed = False
    try:
        s.settimeout(1)
        closed = s.recv(1) == b""
    except socket.timeout:
        pass
    s.close()
    return status, pong[0], struct.unpack(">q", pong[1:9])[0] == t, rtt, closed


def legacy(port, payload):
    s = socket.create_connection((HOST, port), timeout=3)
    s.sendall(payload)
    d = b""
    try:
        while True:
            c = s.recv(4096)
            if not c:
                break
            d += c
            if len(d) >= 3 and len(d) >= 3 + 2 * struct.unpack(">H", d[1:3])[0]:
                break
    except socket.timeout:
        pass
    s.close()
    if not d:
        return "no reply"
    if d[0] != 0xFF:
        return "unexpected first byte %02x" % d[0]
    n = struct.unpack(">H", d[1:3])[0]
    text = d[3:3 + 2 * n].decode("utf-16-be")
    return "FF, %d UTF-16 units: %r" % (n, text)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int)
    ap.add_argument("launcher", nargs="*")
    a = ap.parse_args()
    proc = None
    port = a.port
    if a.launcher:
        proc = subprocess.Popen(a.launcher + ["--port", "0"], stdin=subprocess.PIPE, stdout=subprocess.PIPE)
        line = proc.stdout.readline().decode().strip()
        if not line.startswith("PORT "):
            sys.exit("launcher did not print PORT: %r" % line)
        port = int(line.split()[1])
    elif port is None:
        ap.error("give a launcher command or --port")
    host_plugin = ("MC|PingHost".encode("utf-16-be"), "localhost".encode("utf-16-be"))
    fe01fa = (b"\xfe\x01\xfa" + struct.pack(">H", 11) + host_plugin[0]
              + struct.pack(">H", 7 + len(host_plugin[1])) + bytes([78])
              + struct.pack(">H", 9) + host_plugin[1] + struct.pack(">i", port))
    try:
        for label, kw in [("status, handshake+request in one write", {}),
                          ("status, separate writes", {"one_write": False}),
                          ("status, protocol 47 (1.8)", {"proto": 47})]:
            try:
                st, pid, same, rtt, closed = slp(port, **kw)
                print("%-40s %s | pong id %d same=%s rtt=%.1fms closed-after-pong=%s" % (
                    label, json.dumps(st, ensure_ascii=False), pid, same, rtt, closed))
            except Exception as e:
                print("%-40s ERROR %s: %s" % (label, type(e).__name__, e))
        for label, p in [("legacy FE", b"\xfe"), ("legacy FE 01", b"\xfe\x01"),
                         ("legacy FE 01 FA (1.6 style)", fe01fa)]:
            try:
                print("%-40s %s" % (label, legacy(port, p)))
            except Exception as e:
                print("%-40s ERROR %s: %s" % (label, type(e).__name__, e))
    finally:
        if proc:
            proc.stdin.close()
            try:
                proc.wait(timeout=5)
            except subprocess.TimeoutExpired:
                proc.kill()


if __name__ == "__main__":
    main()
