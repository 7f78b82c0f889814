"""webrcon (PyPI) connects to a Rust WebRCON server and runs commands.

Usage: webrcon_client.py --port N --password PW COMMAND...
Prints `ANSWER <json string>` per command (in order) and `MESSAGE <json string>` per frame with
Identifier 0 or -1, then `DONE`. A refused connection prints `REFUSED <error>` and exits 3.
"""
import argparse
import asyncio
import json
import os
import sys

here = os.path.dirname(os.path.abspath(__file__))
venv_python = os.path.join(here, ".venv", "bin", "python")
if os.path.realpath(sys.prefix) != os.path.realpath(os.path.join(here, ".venv")) and os.path.exists(venv_python):
    os.execv(venv_python, [venv_python] + sys.argv)

import webrcon  # noqa: E402


async def main(args):
    messages = []
    conn = webrcon.RconConnector(
        "127.0.0.1",
        args.port,
        args.password,
        message_callback=lambda d: messages.append(d["Message"]),
        console_callback=lambda d: messages.append(d["Message"]),
    )
    try:
        await conn.start(asyncio.get_running_loop())
    except Exception as e:  # websockets raises InvalidStatusCode for a 401
        print("REFUSED " + type(e).__name__, flush=True)
        return 3
    for command in args.commands:
        done = asyncio.get_running_loop().create_future()
        await conn.command(command, lambda d, f=done: f.done() or f.set_result(d["Message"]))
        answer = await asyncio.wait_for(done, 20)
        print("ANSWER " + json.dumps(answer), flush=True)
    await asyncio.sleep(0.5)
    await conn.close()
    for m in messages:
        print("MESSAGE " + json.dumps(m), flush=True)
    print("DONE", flush=True)
    return 0


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--password", required=True)
    p.add_argument("commands", nargs="*")
    sys.exit(asyncio.run(main(p.parse_args())))
