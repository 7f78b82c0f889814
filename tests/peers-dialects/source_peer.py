#!/usr/bin/env python3
"""Source-style peer: the PyPI package `rcon-server` (module rcon_server).

It follows Valve's Source RCON description: an empty type-0 packet before the login reply,
an empty type-0 packet is mirrored and followed by a trailer packet, output split into packets
of at most 4086 bytes. ASCII only (the library encodes bodies as ASCII).
"""
import asyncio
import os
import sys

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import _launch  # noqa: E402

_launch.use_venv()

from rcon_server.rcon_message import RCONMessage  # noqa: E402
from rcon_server.rcon_packet import RCONPacket  # noqa: E402
from rcon_server.rcon_server import RCONServer  # noqa: E402


class Server(RCONServer):
    def handle_execcommand(self, packet, connection):
        msg = RCONMessage(id=packet.id, type=RCONPacket.SERVERDATA_RESPONSE_VALUE,
                          body=_launch.respond(packet.body))
        for p in msg:
            connection.send_packet(p)


async def main(args):
    srv = Server(bind=("127.0.0.1", 0), password=args.password)
    loop = asyncio.get_running_loop()
    server = await loop.create_server(srv.connection_factory, "127.0.0.1", 0)
    _launch.announce(server.sockets[0].getsockname()[1])
    _launch.exit_on_stdin_eof()
    async with server:
        await server.serve_forever()


if __name__ == "__main__":
    asyncio.run(main(_launch.parse_args(__doc__)))
