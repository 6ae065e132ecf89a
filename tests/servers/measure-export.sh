#!/usr/bin/env bash
# Measures the gate's export client against a minimal client on the real servers installed by
# tests/setup/real-servers.sh: RUNS interleaved runs each, then the median and min per client and
# the ratio of the medians. Build the timing binary first:
#   cargo build -p tdqs-gate-tests --bin export-timing
# Usage: tests/servers/measure-export.sh [RUNS]   (EXPORT_TIMING overrides the binary path)
set -euo pipefail
runs="${1:-9}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${here}/.cache"
timing="${EXPORT_TIMING:-${CARGO_TARGET_DIR:-${here}/../target}/debug/export-timing}"
minimal=(python3 "${here}/servers/minimal_client.py")
cd "${cache}"
servers=(
  "npm/node_modules/.bin/mcp-server-everything"
  "venv/bin/mcp-server-time"
  "venv/bin/mcp-server-git"
  "venv/bin/python ${here}/servers/fastmcp_server.py"
)
for server in "${servers[@]}"; do
  gate=(); base=()
  for _ in $(seq "${runs}"); do
    # shellcheck disable=SC2086 # the server entry is a command line
    gate+=("$("${timing}" -- ${server} | cut -d' ' -f1)")
    # shellcheck disable=SC2086
    base+=("$("${minimal[@]}" -- ${server} | cut -d' ' -f1)")
  done
  python3 - "${server}" "${gate[*]}" "${base[*]}" <<'PY'
import statistics, sys
name, gate, base = sys.argv[1], [int(x) for x in sys.argv[2].split()], [int(x) for x in sys.argv[3].split()]
g, b = statistics.median(gate), statistics.median(base)
print(f"{name.split('/')[-1]:32} gate median {g:6.0f} ms (min {min(gate):5d})   "
      f"minimal median {b:6.0f} ms (min {min(base):5d})   ratio {g / b:.2f}")
PY
done
