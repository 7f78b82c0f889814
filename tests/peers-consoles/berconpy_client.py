"""berconpy (PyPI) logs in to a BattlEye RCon server and runs commands.

Usage: berconpy_client.py --port N --password PW [--wrong] COMMAND...
Prints `ANSWER <json string>` per command and `MESSAGE <json string>` per server message, then
`DONE`. With a refused login prints `LOGIN REFUSED` and exits 3.
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

import berconpy  # noqa: E402


async def main(args):
    client = berconpy.RCONClient()
    messages = []

    client.dispatch.add_listener("on_message", messages.append)

    try:
        async with client.connect("127.0.0.1", args.port, args.password):
            for command in args.commands:
                answer = await asyncio.wait_for(client.send_command(command), 20)
                print("ANSWER " + json.dumps(answer), flush=True)
            await asyncio.sleep(0.5)
    except berconpy.LoginFailure:
        print("LOGIN REFUSED", flush=True)
        return 3
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
