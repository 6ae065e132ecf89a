"""The smallest honest MCP export, as a baseline for timing the gate's client.

Usage: python minimal_client.py [--runs N] -- PROGRAM ARGS...
Each run: spawn the server, `initialize`, `notifications/initialized`, one `tools/list` (no
pagination, no timeouts, no stderr capture), close stdin, wait for the server to exit (SIGKILL
after 2 s). Prints `<milliseconds> ms <tool count> tools` per run, timed like export-timing:
from before the spawn to after the exit.
"""

import json
import subprocess
import sys
import time


def read_reply(stdout, wanted_id):
    for line in stdout:
        try:
            message = json.loads(line)
        except ValueError:
            continue
        if isinstance(message, dict) and message.get("id") == wanted_id:
            return message
    raise SystemExit("server closed stdout")


def export_once(command):
    started = time.monotonic()
    server = subprocess.Popen(
        command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL,
        text=True,
    )
    def send(message):
        server.stdin.write(json.dumps(message) + "\n")
        server.stdin.flush()
    send({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
        "protocolVersion": "2025-11-25", "capabilities": {},
        "clientInfo": {"name": "minimal", "version": "1"}}})
    read_reply(server.stdout, 1)
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list"})
    tools = read_reply(server.stdout, 2)["result"]["tools"]
    server.stdin.close()
    try:
        server.wait(timeout=2)
    except subprocess.TimeoutExpired:
        server.kill()
        server.wait()
    return (time.monotonic() - started) * 1000, len(tools)


def main():
    args = sys.argv[1:]
    runs = 1
    if args[:1] == ["--runs"]:
        runs = int(args[1])
        args = args[2:]
    if args[:1] == ["--"]:
        args = args[1:]
    for _ in range(runs):
        ms, count = export_once(args)
        print(f"{ms:.0f} ms {count} tools", flush=True)


if __name__ == "__main__":
    main()
