"""telnetlib3 (PyPI) logs in to a 7 Days to Die telnet console and runs commands.

Usage: telnetlib3_client.py --port N --password PW COMMAND...
Prints every line the server sends after the login as `LINE <json string>`, waiting a second
after each command, then `DONE`. A refused password prints `LOGIN REFUSED` and exits 3.
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

import telnetlib3  # noqa: E402


async def read_until(reader, needle, limit=10.0):
    buf = ""
    loop = asyncio.get_running_loop()
    end = loop.time() + limit
    while needle not in buf:
        left = end - loop.time()
        if left <= 0:
            raise TimeoutError(f"no {needle!r} in {buf!r}")
        chunk = await asyncio.wait_for(reader.read(4096), left)
        if not chunk:
            raise EOFError(buf)
        buf += chunk
    return buf


async def drain(reader, quiet=1.0):
    buf = ""
    while True:
        try:
            chunk = await asyncio.wait_for(reader.read(4096), quiet)
        except asyncio.TimeoutError:
            return buf
        if not chunk:
            return buf
        buf += chunk


async def main(args):
    reader, writer = await telnetlib3.open_connection(
        "127.0.0.1", args.port, connect_minwait=0.05, connect_maxwait=0.5
    )
    await read_until(reader, "password:")
    writer.write(args.password + "\r\n")
    reply = await read_until(reader, "\n")
    if "incorrect" in reply.lower():
        print("LOGIN REFUSED", flush=True)
        return 3
    text = reply + await drain(reader, 0.5)
    for command in args.commands:
        writer.write(command + "\r\n")
        text += await drain(reader)
    writer.close()
    for line in text.replace("\r", "").split("\n"):
        print("LINE " + json.dumps(line), flush=True)
    print("DONE", flush=True)
    return 0


if __name__ == "__main__":
    p = argparse.ArgumentParser()
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--password", required=True)
    p.add_argument("commands", nargs="*")
    sys.exit(asyncio.run(main(p.parse_args())))
