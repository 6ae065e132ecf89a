#!/usr/bin/env bash
# What a run pays with the persistent answer cache (issue 27). The server is the issue-tracker
# example serving TOOLS generated tools, with one setup command; the judge is the fake `claude`,
# scripted so that a cut-down description scores 2 on every draw (a confirmed BLOCK) and
# everything else 4. Prints:
#   cold       pull request A (tool_00 cut down) with an empty answer cache: model calls
#   rerun      pull request A again: the first pair comes from the cache
#   second PR  pull request B (tool_01 cut down) against the same base: the base's answers
#              come from the cache
#   no cache   pull request A with --no-answer-cache
#   setup      how many times each side's setup command ran in one changed run (-v log)
#   unchanged  the gate on an unchanged tree against one bare export of the same revision,
#              median wall time of RUNS runs each, and their ratio
# Targets (issue 27): cold ≤ 60 calls and warm ≤ 10 for 44 tools; setup once per side;
# unchanged ≤ 1.05× one bare export.
#
# Build first:  cargo build --bin tdqs-gate && cargo build -p tdqs-gate-tests --bin fake-claude
# Usage:        scripts/bench-answer-cache.sh [TOOLS] [RUNS]   (defaults 44, 5; GATE and
#               FAKE_CLAUDE override the binaries)
set -euo pipefail
tools="${1:-44}"; runs="${2:-5}"
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_init bench-answer-cache
# Nothing of the caller's environment chooses the cache: each scenario names its own.
unset TDQS_GATE_ANSWER_CACHE
CUT="Returns a record."
python3 - "${work}/fake/fake-claude.json" "${CUT}" <<'PY'
import json, sys
path, cut = sys.argv[1], sys.argv[2]
json.dump({"script": [
    {"kind": "tool", "contains": [cut], "all": 2},
    {"kind": "tool", "all": 4},
    {"kind": "coherence", "all": 4},
]}, open(path, "w"))
PY

bench_repo "${tools}" $'[server]\ncommand = "python3 {root}/server.py"\nsetup = ["sh -c true"]\n'

cut_down() {  # $1: index of the tool whose description the working tree cuts down
  (cd "${work}/repo" && git checkout -q -- tools.json && python3 - "$1" "${CUT}" <<'PY'
import json, sys
i, cut = int(sys.argv[1]), sys.argv[2]
tools = json.load(open("tools.json"))
tools[i]["description"] = cut
json.dump(tools, open("tools.json", "w"), indent=2)
PY
  )
}

calls_logged() {
  python3 -c 'import json,sys
try: lines = open(sys.argv[1]).read().splitlines()
except FileNotFoundError: lines = []
print(sum(1 for l in lines if json.loads(l).get("kind") == "call"))' "${work}/fake/fake-claude.log"
}

gate_run() {  # $1 label, $2.. extra arguments; prints calls, verdict, cached answers
  local label="$1"; shift
  local before; before=$(calls_logged)
  local report="${work}/report-${label// /-}"
  (cd "${work}/repo" && "${gate}" --base HEAD -q --claude "${work}/fake/claude" \
     --pins "${pins}" --cache-dir "${work}/cache" \
     --report-dir "${report}" "$@" >/dev/null 2>"${work}/stderr") || true
  local after; after=$(calls_logged)
  python3 - "${label}" "${report}/tool-definition-score.json" "$((after - before))" <<'PY'
import json, sys
label, path, calls = sys.argv[1], sys.argv[2], int(sys.argv[3])
r = json.load(open(path))
pairs = "+".join(str(p["calls"]["questions"]) for p in r["pairs"])
print(f"{label:10} {r['decision'].upper():5} model calls {calls:3} (per pair {pairs}), "
      f"from the answer cache {r['calls'].get('cachedAnswers', 0)}")
PY
}

answers="${work}/answers"
echo "${tools} tools, one cut down; fake judge scores it 2 on every draw"
cut_down 0
gate_run cold --answer-cache "${answers}"
gate_run rerun --answer-cache "${answers}"
cut_down 1
gate_run "second PR" --answer-cache "${answers}"
cut_down 0
gate_run "no cache" --answer-cache "${answers}" --no-answer-cache

# Setup commands per side in one changed run.
(cd "${work}/repo" && "${gate}" --base HEAD -v --claude "${work}/fake/claude" \
   --pins "${pins}" --cache-dir "${work}/cache" \
   --no-answer-cache --report-dir "${work}/report-setup" >/dev/null 2>"${work}/setup.log") || true
for side in base head; do
  n=$(grep -c "^tdqs-gate: ${side} setup 1/1: \`sh -c true\`$" "${work}/setup.log" || true)
  echo "setup      ${side}: ran ${n} time(s)"
done

# Unchanged: the gate against one bare export, interleaved, medians.
(cd "${work}/repo" && git checkout -q -- tools.json)
gate_walls=(); export_walls=()
for _ in $(seq "${runs}"); do
  start=$(now_ms)
  # The judge is checked before anything is exported, so the run needs a `claude`, as in CI.
  (cd "${work}/repo" && "${gate}" --base HEAD -q --claude "${work}/fake/claude" --pins "${pins}" \
     --cache-dir "${work}/cache" --report-dir "${work}/report-unchanged" >/dev/null)
  gate_walls+=($(( $(now_ms) - start )))
  start=$(now_ms)
  (cd "${work}/repo" && "${gate}" export --rev HEAD -o "${work}/bare.json" >/dev/null 2>&1)
  export_walls+=($(( $(now_ms) - start )))
done
python3 - "${gate_walls[*]}" "${export_walls[*]}" <<'PY'
import statistics, sys
g = [int(x) for x in sys.argv[1].split()]
e = [int(x) for x in sys.argv[2].split()]
mg, me = statistics.median(g), statistics.median(e)
print(f"unchanged  gate median {mg:.0f} ms, one bare export median {me:.0f} ms, "
      f"ratio {mg / me:.2f} ({len(g)} runs each)")
PY
