"""A third-party JSON-RPC 2.0 over WebSocket client (the `websockets` library, its own TLS via
Python's ssl module) for cross-checking the practice management server in tests/it/mgmt.rs.

Usage: mgmt_client.py URL CERT_PEM   (secret in MGMT_SECRET, optional MGMT_ORIGIN)
Reads one JSON call per stdin line: {"method": "...", "params": [...]}
Writes one JSON line per call: {"result": ...} or {"error": {...}}, in order; notifications
that arrive meanwhile are written as {"notification": {...}}.
A refused handshake prints {"handshake_status": N} and exits 0.
"""
import json
import os
import ssl
import sys

from websockets.exceptions import InvalidStatus
from websockets.sync.client import connect


def main():
    url, cert = sys.argv[1], sys.argv[2]
    context = None
    if url.startswith("wss://"):
        context = ssl.create_default_context(cafile=cert)
    headers = {"Authorization": "Bearer " + os.environ["MGMT_SECRET"]}
    origin = os.environ.get("MGMT_ORIGIN")
    try:
        ws = connect(url, ssl=context, additional_headers=headers, origin=origin,
                     open_timeout=10)
    except InvalidStatus as e:
        print(json.dumps({"handshake_status": e.response.status_code}), flush=True)
        return
    with ws:
        next_id = 1
        for line in sys.stdin:
            line = line.strip()
            if not line:
                continue
            call = json.loads(line)
            request = {"jsonrpc": "2.0", "id": next_id, "method": call["method"]}
            if call.get("params"):
                request["params"] = call["params"]
            ws.send(json.dumps(request))
            while True:
                message = json.loads(ws.recv(timeout=10))
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
    main()
