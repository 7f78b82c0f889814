#!/usr/bin/env python3
"""Launcher for the PyPI package `rcon-server` (module rcon_server, by 991jo).

Usage: pypi_rcon_server.py --password PW [--port 0]

The library only ships an abstract RCONServer whose handle_execcommand must be
implemented by a subclass; the connection/protocol handling (RCONConnection,
RCONPacket, RCONMessage) is entirely the library's. Its listen() hard-codes a
print and gives no access to the bound port, so we create the asyncio server
ourselves with the library's own connection_factory.
"""
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _common  # noqa: E402

_common.use_venv()

from rcon_server.rcon_server import RCONServer  # noqa: E402
from rcon_server.rcon_message import RCONMessage  # noqa: E402
from rcon_server.rcon_packet import RCONPacket  # noqa: E402


class Server(RCONServer):
    def handle_execcommand(self, packet, connection):
        # RCONMessage splits the body into packets of at most 4086 characters.
        # The library encodes bodies as ASCII: non-ASCII output raises inside
        # the protocol callback and asyncio then drops the connection.
        msg = RCONMessage(id=packet.id, type=RCONPacket.SERVERDATA_RESPONSE_VALUE,
                          body=_common.respond(packet.body))
        for p in msg:
            connection.send_packet(p)


async def amain(args):
    srv = Server(bind=(args.host, args.port), password=args.password)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(srv.connection_factory, args.host, args.port)
    _common.announce(server.sockets[0].getsockname()[1])
    _common.exit_on_stdin_eof()
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    try:
        asyncio.run(amain(_common.parse_args(__doc__)))
    except KeyboardInterrupt:
        pass
