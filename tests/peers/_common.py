"""Shared helpers for the Python peer launchers (our glue, not the peers' code).

Uniform launcher interface:
    <launcher> --password PW [--port 0]
binds 127.0.0.1:<port> (0 = ephemeral), prints exactly one line ``PORT <n>``
to stdout once listening, then serves until killed (or, when stdin is a pipe,
until stdin reaches EOF).
"""
import argparse
import os
import stat
import sys
import threading

_HERE = os.path.dirname(os.path.abspath(__file__))
_VENV = os.path.join(_HERE, ".venv")


def use_venv():
    """Re-exec under tests/peers/.venv's python if we are not already in it."""
    vpy = os.path.join(_VENV, "bin", "python")
    if os.path.realpath(sys.prefix) != os.path.realpath(_VENV) and os.path.exists(vpy):
        os.execv(vpy, [vpy] + sys.argv)

LONG_PATTERN = "é€😀a"
LIST_REPLY = "There are 0 of a max of 20 players online: "

# The real stdout is reserved for the single "PORT <n>" line; anything a library
# prints goes to stderr instead.
_REAL_STDOUT = sys.stdout
sys.stdout = sys.stderr


def parse_args(description):
    p = argparse.ArgumentParser(description=description)
    p.add_argument("--password", required=True)
    p.add_argument("--port", type=int, default=0)
    p.add_argument("--host", default="127.0.0.1",
                   help="only 127.0.0.1 or ::1 are allowed")
    a = p.parse_args()
    if a.host not in ("127.0.0.1", "::1", "localhost"):
        p.error("refusing to bind anything but loopback")
    return a


def long_text(n):
    """n Unicode scalar values repeating LONG_PATTERN."""
    reps = n // len(LONG_PATTERN) + 1
    return (LONG_PATTERN * reps)[:n]


def respond(cmd):
    """The command table shared by all peers (where a handler can be supplied).

    echo <text>  -> <text>
    long <N>     -> N scalar values of "é€😀a" repeated
    along <N>    -> N ASCII chars (for peers that can only send ASCII)
    list         -> vanilla-like empty player list
    empty        -> "" (empty output)
    else         -> "Unknown command: <cmd>"
    """
    if cmd == "echo":
        return ""
    if cmd.startswith("echo "):
        return cmd[5:]
    if cmd.startswith("long ") or cmd.startswith("along "):
        word, _, arg = cmd.partition(" ")
        try:
            n = int(arg.strip())
        except ValueError:
            return "Unknown command: " + cmd
        if word == "long":
            return long_text(n)
        return ("abcdefghijklmnopqrstuvwxyz" * (n // 26 + 1))[:n]
    if cmd == "list":
        return LIST_REPLY
    if cmd == "empty":
        return ""
    return "Unknown command: " + cmd


def announce(port):
    _REAL_STDOUT.write("PORT %d\n" % port)
    _REAL_STDOUT.flush()


def exit_on_stdin_eof():
    """If stdin is a pipe/socket, exit the process when it is closed.

    /dev/null or a terminal is ignored, so `launcher &` in a shell keeps serving.
    """
    try:
        mode = os.fstat(0).st_mode
    except OSError:
        return
    if not (stat.S_ISFIFO(mode) or stat.S_ISSOCK(mode)):
        return

    def watch():
        try:
            while os.read(0, 4096):
                pass
        except OSError:
            pass
        os._exit(0)

    threading.Thread(target=watch, daemon=True).start()
