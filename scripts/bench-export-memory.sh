#!/usr/bin/env bash
# Peak memory of the gate process alone (VmHWM, polled from /proc) while it exports a fake MCP
# server that lists big tools: one huge description, and many big tools over several pages.
# Usage: scripts/bench-export-memory.sh [TDQS_GATE_BINARY] [FAKE_MCP_SERVER_BINARY]
# Linux only. Builds nothing: pass binaries (default: target/debug). Issue 12 item 16.
set -euo pipefail
gate="${1:-target/debug/tdqs-gate}"
fake="${2:-target/debug/fake-mcp-server}"
gate="$(realpath "$gate")"
fake="$(realpath "$fake")"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT

python3 - "$work" <<'PY'
import json, sys
d = sys.argv[1]
json.dump([{"name": f"t{i}", "description": "x" * 200_000,
            "inputSchema": {"type": "object"}} for i in range(1000)],
          open(f"{d}/tools-200mb.json", "w"))
json.dump([{"name": f"t{i}", "description": "x" * 100_000,
            "inputSchema": {"type": "object"}} for i in range(100)],
          open(f"{d}/tools-10mb.json", "w"))
PY

# Runs the gate with "$@" and prints its exit code and peak resident memory.
peak() {
    local label="$1"; shift
    mkdir -p "$work/cwd"
    (cd "$work/cwd" && exec "$gate" "$@" >"$work/out" 2>"$work/err") &
    local pid=$! hwm=0 line
    while kill -0 "$pid" 2>/dev/null; do
        line="$(grep VmHWM "/proc/$pid/status" 2>/dev/null || true)"
        [[ -n "$line" ]] && hwm="$(awk '{print $2}' <<<"$line")"
        sleep 0.05
    done
    local code=0
    wait "$pid" || code=$?
    printf '%-48s exit %s  peak %6d MiB\n' "$label" "$code" "$((hwm / 1024))"
}

peak "one 12 MB description" export \
    --command "$fake --mode huge-output --huge-bytes 12000000" -o "$work/a.json"
peak "one 30 MB description" export \
    --command "$fake --mode huge-output --huge-bytes 30000000" -o "$work/b.json"
peak "10 MB: 100 tools of 100 kB, 10 pages" export \
    --command "$fake --mode paginated --page-size 10 --tools $work/tools-10mb.json" -o "$work/c.json"
peak "200 MB: 1000 tools of 200 kB, 20 pages" export \
    --command "$fake --mode paginated --page-size 50 --tools $work/tools-200mb.json" -o "$work/d.json"
