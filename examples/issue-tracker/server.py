#!/usr/bin/env python3
"""A minimal MCP server over stdio (standard library only) for the tdqs-gate example.

It serves the tool definitions in tools.json next to this file, answers `initialize`,
`tools/list` and `ping`, and refuses everything else: tdqs-gate never calls a tool, and
neither does this example. Because the definitions live in a data file, two git revisions of
this folder are two revisions of "the same server" with different tool definitions.
"""
import json
import os
import sys

HERE = os.path.dirname(os.path.abspath(__file__))
KNOWN_VERSIONS = {"2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"}


def load_tools():
    with open(os.path.join(HERE, "tools.json"), encoding="utf-8") as f:
        return json.load(f)


def reply(message_id, result=None, error=None):
    message = {"jsonrpc": "2.0", "id": message_id}
    if error is not None:
        message["error"] = error
    else:
        message["result"] = result
    sys.stdout.write(json.dumps(message, ensure_ascii=False) + "\n")
    sys.stdout.flush()


def main():
    for line in sys.stdin:
        line = line.strip()
        if not line:
            continue
        try:
            message = json.loads(line)
        except ValueError:
            continue
        method = message.get("method")
        message_id = message.get("id")
        if message_id is None:
            continue  # a notification: nothing to answer
        if method == "initialize":
            asked = (message.get("params") or {}).get("protocolVersion")
            version = asked if asked in KNOWN_VERSIONS else "2025-11-25"
            reply(message_id, {
                "protocolVersion": version,
                "capabilities": {"tools": {}},
                "serverInfo": {"name": "issue-tracker-example", "version": "1.0.0"},
            })
        elif method == "tools/list":
            reply(message_id, {"tools": load_tools()})
        elif method == "ping":
            reply(message_id, {})
        else:
            reply(message_id, error={"code": -32601, "message": "method not found: %s" % method})


if __name__ == "__main__":
    main()
