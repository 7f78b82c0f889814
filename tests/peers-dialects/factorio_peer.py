#!/usr/bin/env python3
"""Factorio-style peer: the PyPI package `rcon-fake` (module rcon_fake).

Like Factorio: no empty packet before the login reply, and every answer is one packet of any
size (UTF-8).
"""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _launch  # noqa: E402

_launch.use_venv()

from rcon_fake import RCON  # noqa: E402


def main():
    args = _launch.parse_args(__doc__)
    srv = RCON(host="127.0.0.1", port=0, password=args.password)
    srv.set_handler(_launch.respond)
    srv.start(threading=True)
    # The library keeps its socket private: read it to learn the port and wait for listen().
    deadline = time.time() + 10
    while True:
        sock = getattr(srv, "_RCON__server", None)
        try:
            if sock is not None and sock.getsockopt(socket.SOL_SOCKET, socket.SO_ACCEPTCONN):
                break
        except OSError:
            pass
        if time.time() > deadline:
            sys.exit("rcon-fake did not start listening")
        time.sleep(0.01)
    _launch.announce(sock.getsockname()[1])
    _launch.exit_on_stdin_eof()
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
