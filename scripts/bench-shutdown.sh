#!/usr/bin/env bash
# Measures how long the gate takes to stop each server once its listing is complete: for each
# server, RUNS runs of `tdqs-gate export` with the server wrapped in scripts/shutdown-timing.py,
# which logs when the last tools/list page went out, when stdin closed, when SIGTERM came and
# when the server ended. Prints, per server, the median of "listing done -> server gone" and how
# it ended (exit after stdin closed, or SIGTERM), and the median wall time of the export. In the
# sandbox (bwrap) a SIGTERM to the group ends the whole sandbox at once, so the wrapper cannot
# log it: there only the wall time is shown; run with `--sandbox off` for the breakdown. Fixture servers that ignore stdin closing (a
# Python one with a live non-daemon thread, a Node one with an open interval) always run; the
# real servers run when tests/setup/real-servers.sh has installed them into tests/.cache.
#
# Build first:  cargo build --bin tdqs-gate   (or set GATE to a tdqs-gate binary)
# Usage:        scripts/bench-shutdown.sh [RUNS] [GATE OPTIONS…]   (default 5 runs; e.g. `5 --sandbox off`)
set -euo pipefail
runs="${1:-5}"
shift || true
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_gate_only bench-shutdown
fixtures="${root}/tests/fixtures/export"
cp "${root}/scripts/shutdown-timing.py" "${fixtures}/eof_ignoring_server.py" \
   "${fixtures}/eof_ignoring_server.mjs" "${work}/"
py="$(command -v python3)"

# name|capabilities|command (run in ${work}, which the sandbox leaves visible as the tree)
servers=(
  "python, live thread|{}|${py} {root}/eof_ignoring_server.py"
  "node, open interval|{}|$(command -v node) {root}/eof_ignoring_server.mjs"
)
if [ -x "${cache}/venv/bin/mcp-server-time" ]; then
  servers+=("mcp-server-time|{}|${cache}/venv/bin/mcp-server-time")
  servers+=("mcp-server-git|{}|${cache}/venv/bin/mcp-server-git")
  servers+=("fastmcp (mcp SDK)|{}|${cache}/venv/bin/python ${root}/tests/servers/fastmcp_server.py")
fi
if [ -x "${cache}/npm/node_modules/.bin/mcp-server-everything" ]; then
  everything="${cache}/npm/node_modules/.bin/mcp-server-everything"
  servers+=("server-everything|{}|${everything}")
  servers+=("server-everything + roots|{ roots = {} }|${everything}")
fi

cd "${work}"
for entry in "${servers[@]}"; do
  IFS='|' read -r name caps command <<<"${entry}"
  printf '[server]\ncommand = "%s {root}/timing.log -- %s"\n[probe]\ncapabilities = %s\n' \
    "${py} {root}/shutdown-timing.py" "${command}" "${caps}" > tdqs-gate.toml
  : > timing.log
  wall=()
  for _ in $(seq "${runs}"); do
    echo "--- run" >> timing.log
    start=$(date +%s%N)
    "${gate}" export -q "$@" -o "${work}/out.json" 2>/dev/null \
      || { echo "${name}: export failed" >&2; "${gate}" export "$@" -o "${work}/out.json" || true; break; }
    wall+=($(( ($(date +%s%N) - start) / 1000000 )))
  done
  python3 - "${name}" timing.log "${wall[*]:-}" <<'PY'
import json, statistics, sys
name, runs, current = sys.argv[1], [], None
wall = [int(x) for x in sys.argv[3].split()]
for line in open(sys.argv[2], encoding="utf-8"):
    if line.startswith("---"):
        current = {}; runs.append(current); continue
    e = json.loads(line); current[e["event"]] = e
wall_text = f"export wall median {statistics.median(wall):5.0f} ms" if wall else "no export"
gone, how = [], []
for r in runs:
    if "listed" not in r or "exit" not in r: continue
    gone.append(r["exit"]["ms"] - r["listed"]["ms"])
    how.append("SIGTERM" if "term" in r else "exit after EOF")
if not gone:
    print(f"{name:27} {wall_text}   (stop not seen from inside: sandboxed?)"); sys.exit()
kinds = ", ".join(f"{how.count(k)}x {k}" for k in sorted(set(how)))
print(f"{name:27} {wall_text}   listing done -> server gone: median "
      f"{statistics.median(gone):5.0f} ms (min {min(gone)}, max {max(gone)})  [{kinds}]")
PY
done
