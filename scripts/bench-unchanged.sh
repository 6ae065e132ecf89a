#!/usr/bin/env bash
# Measures what an unchanged-definitions gate run costs over the two exports it cannot avoid:
# for each server, RUNS interleaved rounds of
#   gate:    tdqs-gate --base HEAD            (equal set hashes: PASS, no judge started)
#   exports: tdqs-gate export --rev HEAD  +  tdqs-gate export   (one after the other)
# in a throwaway git repository whose tdqs-gate.toml starts the server; prints the median and
# minimum of each and the ratio of the medians. The example server always runs; the real
# servers run when tests/setup/real-servers.sh has installed them into tests/.cache.
#
# Build first:  cargo build --bin tdqs-gate   (or set GATE to a tdqs-gate binary)
# Usage:        scripts/bench-unchanged.sh [RUNS]    (default 9)
set -euo pipefail
runs="${1:-9}"
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
gate="${GATE:-${CARGO_TARGET_DIR:-${root}/target}/debug/tdqs-gate}"
[ -x "${gate}" ] || { echo "no tdqs-gate at ${gate}; build it or set GATE" >&2; exit 2; }
cache="${root}/tests/.cache"
work="$(mktemp -d "${TMPDIR:-/tmp}/bench-unchanged-XXXXXX")"
trap 'rm -rf "${work}"' EXIT

# name|command (run from the repository; {root} is each side's tree)
servers=("issue-tracker example|python3 {root}/server.py")
if [ -x "${cache}/venv/bin/mcp-server-time" ]; then
  servers+=("mcp-server-time|${cache}/venv/bin/mcp-server-time")
  servers+=("mcp-server-git|${cache}/venv/bin/mcp-server-git")
  servers+=("fastmcp (mcp SDK)|${cache}/venv/bin/python ${root}/tests/servers/fastmcp_server.py")
fi
if [ -x "${cache}/npm/node_modules/.bin/mcp-server-everything" ]; then
  servers+=("server-everything (node)|${cache}/npm/node_modules/.bin/mcp-server-everything")
fi

now_ms() { date +%s%N | cut -b1-13; }

for entry in "${servers[@]}"; do
  name="${entry%%|*}"
  command="${entry#*|}"
  repo="${work}/repo-$(echo "${name}" | tr -c 'a-z0-9' '-')"
  mkdir -p "${repo}"
  (
    cd "${repo}"
    git init -q
    cp "${root}/examples/issue-tracker/server.py" server.py
    cp "${root}/tests/fixtures/gate/tools.json" tools.json
    printf '[server]\ncommand = "%s"\n' "${command}" > tdqs-gate.toml
    printf '.tool-definition-score/\nexports/\n' > .gitignore
    git add -A
    git -c user.name=bench -c user.email=bench@invalid commit -qm bench
  )
  gate_ms=(); export_ms=()
  for _ in $(seq "${runs}"); do
    start=$(now_ms)
    (cd "${repo}" && "${gate}" --base HEAD -q --report-dir "${work}/report" >/dev/null)
    gate_ms+=($(( $(now_ms) - start )))
    start=$(now_ms)
    (cd "${repo}" && "${gate}" export --rev HEAD -q -o "${work}/base.json" \
       && "${gate}" export -q -o "${work}/head.json")
    export_ms+=($(( $(now_ms) - start )))
  done
  python3 - "${name}" "${gate_ms[*]}" "${export_ms[*]}" <<'PY'
import statistics, sys
name, gate, exports = sys.argv[1], [int(x) for x in sys.argv[2].split()], [int(x) for x in sys.argv[3].split()]
g, e = statistics.median(gate), statistics.median(exports)
print(f"{name:26} gate median {g:6.0f} ms (min {min(gate):5d})   two exports median {e:6.0f} ms "
      f"(min {min(exports):5d})   ratio {g / e:.2f}")
PY
done
