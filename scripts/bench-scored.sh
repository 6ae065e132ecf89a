#!/usr/bin/env bash
# Measures the scheduling of judge calls: a scored gate run with the fake `claude` answering
# after a fixed LATENCY_MS, against the ideal ⌈calls / concurrency⌉ · latency per pair (the
# pairs run one after the other). The server is the issue-tracker example serving TOOLS
# generated tools; the head rewords one description, so with shared answers a pair asks
# (TOOLS − 1) + 2 + 2 questions, and with --independent-sides 2·TOOLS + 2. The scenarios:
#   shared       one pair, the head holds (PASS)
#   independent  the same with --independent-sides
#   confirmed    the reworded tool drops on every pair: three pairs (BLOCK)
# The stand-in specification is put in a private cache, so nothing is fetched; the persistent
# answer cache is off, or a second run would ask the fake nothing.
#
# Build first:  cargo build --bin tdqs-gate && cargo build -p tdqs-gate-tests --bin fake-claude
# Usage:        scripts/bench-scored.sh [RUNS] [LATENCY_MS] [CONCURRENCY] [TOOLS]
#               (defaults 3, 500, 6, 20; GATE and FAKE_CLAUDE override the binaries)
set -euo pipefail
runs="${1:-3}"; latency="${2:-500}"; concurrency="${3:-6}"; tools="${4:-20}"
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init bench-scored
bench_repo "${tools}" $'[server]\ncommand = "python3 {root}/server.py"\n'
(
  cd "${work}/repo"
  python3 - <<'PY'
import json
tools = json.load(open("tools.json"))
tools[0]["description"] = "Looks up record 0 of the catalogue and returns its fields; an unknown id is an error."
json.dump(tools, open("tools.json", "w"), indent=2)
PY
)

control() {  # $1: score of the reworded tool
  python3 - "${work}/fake/fake-claude.json" "${latency}" "$1" <<'PY'
import json, sys
path, latency, score = sys.argv[1], int(sys.argv[2]), int(sys.argv[3])
json.dump({"latency_ms": latency, "script": [
    {"kind": "tool", "contains": ["Tool under review: tool_00\n", "Looks up record 0"], "all": score},
    {"kind": "tool", "all": 4},
    {"kind": "coherence", "all": 4},
]}, open(path, "w"))
PY
}

scenario() {  # $1 name, $2 score of the reworded tool, $3.. extra gate arguments
  local name="$1" score="$2"; shift 2
  control "${score}"
  local walls=() report=""
  for i in $(seq "${runs}"); do
    rm -rf "${work}/fake/fake-claude.calls" "${work}/fake/fake-claude.seen" "${work}/fake/fake-claude.log"
    report="${work}/report-${name}-${i}"
    local start; start=$(now_ms)
    (cd "${work}/repo" && "${gate}" --base HEAD -q --claude "${work}/fake/claude" \
       --pins "${pins}" --cache-dir "${work}/cache" \
       --concurrency "${concurrency}" --no-answer-cache --report-dir "${report}" "$@" \
       >/dev/null) || true
    walls+=($(( $(now_ms) - start )))
  done
  python3 - "${name}" "${report}/tool-definition-score.json" "${latency}" "${concurrency}" "${walls[*]}" <<'PY'
import json, math, statistics, sys
name, path, latency, c, walls = sys.argv[1], sys.argv[2], int(sys.argv[3]), int(sys.argv[4]), [int(x) for x in sys.argv[5].split()]
report = json.load(open(path))
per_pair = [p["calls"]["attempts"] for p in report["pairs"]]
ideal = sum(math.ceil(n / c) for n in per_pair) * latency
wall = statistics.median(walls)
print(f"{name:12} {report['decision'].upper():5} pairs {len(per_pair)} calls {'+'.join(map(str, per_pair)):9} "
      f"wall median {wall:6.0f} ms (min {min(walls):5d})   ideal {ideal:5d} ms   "
      f"ratio {wall / ideal:.2f}   overhead {wall - ideal:5.0f} ms")
PY
}

echo "latency ${latency} ms, concurrency ${concurrency}, ${tools} tools, ${runs} runs each"
scenario shared 4
scenario independent 4 --independent-sides
scenario confirmed 2
