#!/usr/bin/env python3
"""Launcher for the PyPI package `rconx` (rconx.RconServer, by Fallen_Breath).

Usage: pypi_rconx.py --password PW [--port 0]

Uses the library's synchronous RconServer with its default options
(max packet size 4100 bytes each way, 10 s authentication timeout).
"""
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

_common.use_venv()

import rconx  # noqa: E402


def main():
    args = _common.parse_args(__doc__)

    def handler(content, info):
        # RconContent: .content is the raw bytes; decode leniently.
        return _common.respond(content.content.decode("utf-8", "replace"))

    srv = rconx.RconServer(args.host, args.port, authentication=args.password,
                           command_handler=handler)

    def started():
        # The listening socket is private; on_started runs after listen().
        sock = srv._RconServer__raw._RawRconServer__sock
        _common.announce(sock.getsockname()[1])
        _common.exit_on_stdin_eof()

    srv.serve(on_started=started)


if __name__ == "__main__":
    try:
        main()
    except KeyboardInterrupt:
        os._exit(0)
