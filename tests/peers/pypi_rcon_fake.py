#!/usr/bin/env python3
"""Launcher for the PyPI package `rcon-fake` (module rcon_fake, class RCON).

Usage: pypi_rcon_fake.py --password PW [--port 0]
"""
import os
import socket
import sys
import time

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

_common.use_venv()

from rcon_fake import RCON  # noqa: E402


def main():
    args = _common.parse_args(__doc__)
    srv = RCON(host=args.host, port=args.port, password=args.password)
    srv.set_handler(_common.respond)
    srv.start(threading=True)  # accept loop runs in a (non-daemon) thread
    # The library keeps its listening socket private; read it to learn the
    # ephemeral port and to wait until listen() has been called.
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
    _common.announce(sock.getsockname()[1])
    _common.exit_on_stdin_eof()
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        os._exit(0)
