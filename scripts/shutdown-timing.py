#!/usr/bin/env python3
"""Times how a stdio MCP server is stopped after its listing, seen from inside its process group.

Usage: shutdown-timing.py LOG -- SERVER ARGS...

Runs SERVER as its child and relays stdin and stdout line by line. It appends one JSON object
per event to LOG, in milliseconds since it started: `listed` (the last `tools/list` page went
out), `eof` (the client closed stdin), `term` (SIGTERM reached the group) and `exit` (the
server ended, with its return code; negative is a signal). It stays alive until the server
ends, so the client sees the group leave when the server does. A SIGKILL ends it without an
`exit` line. Used by scripts/bench-shutdown.sh.
"""
import json
import signal
import subprocess
import sys
import threading
import time

START = time.monotonic()
log_path, command = sys.argv[1], sys.argv[3:]
log_lock = threading.Lock()


def event(name, **fields):
    fields.update(event=name, ms=round((time.monotonic() - START) * 1000))
    with log_lock, open(log_path, "a", encoding="utf-8") as log:
        log.write(json.dumps(fields) + "\n")


signal.signal(signal.SIGTERM, lambda *_: event("term"))
server = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE)


def relay_stdin():
    for line in sys.stdin.buffer:
        try:
            server.stdin.write(line)
            server.stdin.flush()
        except OSError:
            break
    event("eof")
    try:
        server.stdin.close()
    except OSError:
        pass


def relay_stdout():
    for line in server.stdout:
        sys.stdout.buffer.write(line)
        sys.stdout.buffer.flush()
        try:
            result = json.loads(line).get("result") or {}
        except (ValueError, AttributeError):
            continue
        if isinstance(result, dict) and "tools" in result and not result.get("nextCursor"):
            event("listed", tools=len(result["tools"]))


threading.Thread(target=relay_stdin, daemon=True).start()
reader = threading.Thread(target=relay_stdout, daemon=True)
reader.start()
code = server.wait()
event("exit", code=code)
reader.join(1)
sys.exit(0)
