#!/usr/bin/env node
// A minimal MCP server over stdio (Node's standard library only) for the tdqs-gate example.
//
// It serves the tool definitions in tools.json at the package root, answers `initialize`,
// `tools/list` and `ping`, and refuses everything else: tdqs-gate never calls a tool, and
// neither does this example. `npm run build` copies this file to dist/, which is not
// committed, so a fresh checkout has to be built first, as most Node servers do.
"use strict";

const fs = require("fs");
const path = require("path");
const readline = require("readline");

const ROOT = path.join(__dirname, "..");
const KNOWN_VERSIONS = new Set(["2024-11-05", "2025-03-26", "2025-06-18", "2025-11-25"]);

function reply(id, result, error) {
  const message = { jsonrpc: "2.0", id };
  if (error !== undefined) {
    message.error = error;
  } else {
    message.result = result;
  }
  process.stdout.write(JSON.stringify(message) + "\n");
}

const lines = readline.createInterface({ input: process.stdin });
lines.on("line", (line) => {
  if (!line.trim()) {
    return;
  }
  let message;
  try {
    message = JSON.parse(line);
  } catch {
    return;
  }
  const id = message.id;
  if (id === undefined || id === null) {
    return; // a notification: nothing to answer
  }
  switch (message.method) {
    case "initialize": {
      const asked = (message.params || {}).protocolVersion;
      reply(id, {
        protocolVersion: KNOWN_VERSIONS.has(asked) ? asked : "2025-11-25",
        capabilities: { tools: {} },
        serverInfo: { name: "issue-tracker-node-example", version: "1.0.0" },
      });
      break;
    }
    case "tools/list": {
      const tools = JSON.parse(fs.readFileSync(path.join(ROOT, "tools.json"), "utf8"));
      reply(id, { tools });
      break;
    }
    case "ping":
      reply(id, {});
      break;
    default:
      reply(id, undefined, { code: -32601, message: `method not found: ${message.method}` });
  }
});
