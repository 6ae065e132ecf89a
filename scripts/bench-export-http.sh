#!/usr/bin/env bash
# Export time of the same real server over stdio, Streamable HTTP and legacy HTTP+SSE, and
# whether the set hashes agree. Issue 15.
# Usage: scripts/bench-export-http.sh [TDQS_GATE_BINARY] [RUNS]
# Needs tests/setup/real-servers.sh to have run (server-everything and the FastMCP fixture).
set -euo pipefail
gate="$(realpath "${1:-target/debug/tdqs-gate}")"
runs="${2:-5}"
root="$(cd "$(dirname "$0")/.." && pwd)"
everything="$root/tests/.cache/npm/node_modules/.bin/mcp-server-everything"
python="$root/tests/.cache/venv/bin/python"
fastmcp="$root/tests/servers/fastmcp_server.py"
work="$(mktemp -d)"
trap 'rm -rf "$work"' EXIT
cd "$work"

# Runs one export "$runs" times; prints the median wall time and the set hash.
bench() {
    local label="$1"; shift
    local times=()
    for _ in $(seq "$runs"); do
        local start end
        start=$(date +%s.%N)
        "$gate" export "$@" -o "$work/$label.json" >/dev/null 2>"$work/err" || {
            cat "$work/err"; exit 2; }
        end=$(date +%s.%N)
        times+=("$(echo "$end - $start" | bc)")
    done
    local median
    median=$(printf '%s\n' "${times[@]}" | sort -n | sed -n "$(( (runs + 1) / 2 ))p")
    local hash
    hash=$(python3 -c "import json,sys; print(json.load(open(sys.argv[1]))['setHash'][:16])" "$work/$label.json")
    printf '%-22s median %6.2f s over %s runs  set hash %s\n' "$label" "$median" "$runs" "$hash"
}

if [ -x "$everything" ]; then
    bench everything-stdio --command "$everything"
    bench everything-http --command "env PORT={port} $everything streamableHttp" \
        --url "http://127.0.0.1:{port}/mcp"
    bench everything-sse --command "env PORT={port} $everything sse" \
        --url "http://127.0.0.1:{port}/sse"
fi
if [ -x "$python" ]; then
    bench fastmcp-stdio --command "$python $fastmcp"
    bench fastmcp-http --command "env PORT={port} $python $fastmcp http" \
        --url "http://127.0.0.1:{port}/mcp"
fi
