"""Shared glue for the dialect peer launchers (ours, not the peers' code).

Each launcher: `<launcher> --password PW` binds 127.0.0.1 on a free port, prints exactly one
line `PORT <n>` on stdout once listening, and serves until its stdin is closed (or it is
killed). Commands every peer answers:
    echo <text>   -> <text>
    along <N>     -> N ASCII letters
    long <N>      -> N characters of "é€😀a" repeated (peers that can send UTF-8)
    list          -> a vanilla-like empty player list
    anything else -> "Unknown command: <cmd>"
"""
import argparse
import os
import sys
import threading

_HERE = os.path.dirname(os.path.abspath(__file__))
_REAL_STDOUT = sys.stdout
sys.stdout = sys.stderr  # libraries that print must not disturb the PORT line


def use_venv():
    vpy = os.path.join(_HERE, ".venv", "bin", "python")
    if os.path.realpath(sys.prefix) != os.path.realpath(os.path.join(_HERE, ".venv")) and os.path.exists(vpy):
        os.execv(vpy, [vpy] + sys.argv)


def parse_args(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--password", required=True)
    return p.parse_args()


def respond(cmd):
    word, _, arg = cmd.partition(" ")
    if word == "echo":
        return arg
    if word in ("along", "long") and arg.strip().isdigit():
        n = int(arg.strip())
        pattern = "abcdefghijklmnopqrstuvwxyz" if word == "along" else "é€😀a"
        return (pattern * (n // len(pattern) + 1))[:n]
    if cmd == "list":
        return "There are 0 of a max of 20 players online: "
    return "Unknown command: " + cmd


def announce(port):
    _REAL_STDOUT.write("PORT %d\n" % port)
    _REAL_STDOUT.flush()


def exit_on_stdin_eof():
    def watch():
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
