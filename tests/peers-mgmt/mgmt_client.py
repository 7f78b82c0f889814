"""A third-party JSON-RPC 2.0 over WebSocket client (the `websockets` library, its own TLS via
Python's ssl module) for cross-checking the practice management server in tests/it/mgmt.rs.

Usage: mgmt_client.py URL CERT_PEM   (secret in MGMT_SECRET, optional MGMT_ORIGIN; with
MGMT_BROWSER=1 the secret goes as a browser sends it, in the subprotocol `minecraft-v1,SECRET`,
instead of `Authorization: Bearer`)
Reads one JSON call per stdin line: {"method": "...", "params": [...]}
Writes one JSON line per call: {"result": ...} or {"error": {...}}, in order; notifications
that arrive meanwhile are written as {"notification": {...}}.
A refused handshake prints {"handshake_status": N} and exits 0.

It uses websockets' asyncio client, not its threaded one (websockets.sync): the threaded client
reads the TLS connection in a background thread while the main thread writes the upgrade
request, so one OpenSSL object is used by two threads at once, which OpenSSL does not support.
When the server's TLS 1.3 session tickets (sent right after the handshake, as Java servers do
too) are being read at the moment the request is written, the request is lost: nothing reaches
the server and the client gives up with "timed out while waiting for handshake response"
(seen in 1 of about 200 connections on a loaded machine, traced with strace: the request's
write never happened). The asyncio client drives the TLS object from one thread.
"""
import asyncio
import json
import os
import ssl
import sys

from websockets.asyncio.client import connect
from websockets.exceptions import InvalidStatus

TIMEOUT = 10


async def main():
    url, cert = sys.argv[1], sys.argv[2]
    context = None
    if url.startswith("wss://"):
        context = ssl.create_default_context(cafile=cert)
    secret = os.environ["MGMT_SECRET"]
    headers, subprotocols = {"Authorization": "Bearer " + secret}, None
    if os.environ.get("MGMT_BROWSER") == "1":
        # Sent as `minecraft-v1, SECRET`; the server answers with `minecraft-v1`.
        headers, subprotocols = {}, ["minecraft-v1", secret]
    origin = os.environ.get("MGMT_ORIGIN")
    try:
        ws = await connect(url, ssl=context, additional_headers=headers, origin=origin,
                           subprotocols=subprotocols, open_timeout=TIMEOUT)
    except InvalidStatus as e:
        print(json.dumps({"handshake_status": e.response.status_code}), flush=True)
        return
    async with ws:
        next_id = 1
        for line in sys.stdin:
            line = line.strip()
            if not line:
                continue
            call = json.loads(line)
            request = {"jsonrpc": "2.0", "id": next_id, "method": call["method"]}
            if call.get("params"):
                request["params"] = call["params"]
            await ws.send(json.dumps(request))
            while True:
                message = json.loads(await asyncio.wait_for(ws.recv(), TIMEOUT))
                if "id" not in message:
                    print(json.dumps({"notification": message}), flush=True)
                    continue
                assert message["jsonrpc"] == "2.0", message
                assert message["id"] == next_id, message
                if "error" in message:
                    print(json.dumps({"error": message["error"]}), flush=True)
                else:
                    print(json.dumps({"result": message["result"]}), flush=True)
                break
            next_id += 1


if __name__ == "__main__":
    asyncio.run(main())
