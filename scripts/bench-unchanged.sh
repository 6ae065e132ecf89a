#!/usr/bin/env bash
# Measures the issue's floor ratio for a pull request that leaves the tool definitions
# unchanged: the gate's wall time over ONE side's bare export. For each server, RUNS interleaved
# rounds of
#   gate:    tdqs-gate --base HEAD~1     (the head is the working tree; HEAD~1 differs from it
#                                         only in a README, so the set hashes are equal: PASS)
#   export:  tdqs-gate export            (the head alone, in the working tree, as a user runs it)
#   both:    tdqs-gate export --rev HEAD~1 & tdqs-gate export   (both sides' bare exports at
#                                         once: what two servers starting together cost on
#                                         this machine, the gate's floor when cores are few)
# in a throwaway git repository whose tdqs-gate.toml starts the server; prints the medians and
# the ratios gate / one export (target: at most 1.05) and gate / both exports. The two sides of the gate
# start at once, so its floor is one export plus the base's worktree. The example server
# always runs; the real servers run when tests/setup/real-servers.sh (and, for agentic-hil,
# scripts/install-bench-servers.sh) has installed them into tests/.cache.
#
# The judge: `--judge static` by default (no CLI). With BENCH_JUDGE=claude the pinned Claude
# Code CLI (tdqs/node_modules/.bin, from `npm ci` in tdqs/) is put on PATH and the gate runs
# with CI=true: its preflight (`claude --version`, `claude auth status`) runs for real and a
# failed login is held, as in CI, so an unchanged run still passes without credentials.
#
# Build first:  cargo build --bin tdqs-gate   (or set GATE to a tdqs-gate binary)
# Usage:        scripts/bench-unchanged.sh [RUNS]    (default 5)
set -euo pipefail
runs="${1:-5}"
# shellcheck source=scripts/lib.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib.sh"
bench_gate_only bench-unchanged

judge=(--judge static)
gate_env=()
if [ "${BENCH_JUDGE:-static}" = claude ]; then
  [ -x "${root}/tdqs/node_modules/.bin/claude" ] \
    || { echo "no tdqs/node_modules/.bin/claude; run npm ci in tdqs/" >&2; exit 2; }
  judge=()
  gate_env=(env "PATH=${root}/tdqs/node_modules/.bin:${PATH}" CI=true)
fi

# The interpreter itself, not a version manager's shim (pyenv's adds its own start-up).
python="$(python3 -c 'import sys; print(sys.executable)')"
# name|command (run from the repository; {root} is each side's tree)
servers=("issue-tracker example (python)|${python} {root}/server.py")
if [ -x "${cache}/venv/bin/mcp-server-time" ]; then
  servers+=("mcp-server-time|${cache}/venv/bin/mcp-server-time")
  servers+=("mcp-server-git|${cache}/venv/bin/mcp-server-git")
  servers+=("fastmcp (mcp SDK)|${cache}/venv/bin/python ${root}/tests/servers/fastmcp_server.py")
fi
# The real Python server the unchanged-run target was set on: installed by scripts/install-bench-servers.sh.
if [ -x "${cache}/bench-venv/bin/agentic-hil" ]; then
  servers+=("agentic-hil (python, 48 tools)|${cache}/bench-venv/bin/agentic-hil mcp-stdio")
fi
if [ -x "${cache}/npm/node_modules/.bin/mcp-server-everything" ]; then
  servers+=("server-everything (node)|${cache}/npm/node_modules/.bin/mcp-server-everything")
fi

now_ms() { date +%s%N | cut -b1-13; }

echo "judge: ${BENCH_JUDGE:-static}; ${runs} rounds per server"
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
    # cwd names the side's tree, so a plan that runs installed code is not refused as blind.
    printf '[server]\ncommand = "%s"\ncwd = "{root}"\n' "${command}" > tdqs-gate.toml
    printf '.tool-definition-score/\nexports/\n*.json.out\n' > .gitignore
    git add -A
    git -c user.name=bench -c user.email=bench@invalid commit -qm base
    echo "A pull request that changes no tool definition." > README.md
    git add -A
    git -c user.name=bench -c user.email=bench@invalid commit -qm readme
  )
  gate_ms=(); export_ms=(); both_ms=()
  for _ in $(seq "${runs}"); do
    start=$(now_ms)
    (cd "${repo}" && ${gate_env[@]+"${gate_env[@]}"} "${gate}" --base HEAD~1 -q \
       ${judge[@]+"${judge[@]}"} --report-dir "${work}/report" >/dev/null)
    gate_ms+=($(( $(now_ms) - start )))
    start=$(now_ms)
    (cd "${repo}" && "${gate}" export -q -o "${repo}/head.json.out")
    export_ms+=($(( $(now_ms) - start )))
    # Both sides' bare exports at once: what the machine allows two servers starting together.
    start=$(now_ms)
    (cd "${repo}" && { "${gate}" export -q --rev HEAD~1 -o "${repo}/base.json.out" &
                       "${gate}" export -q -o "${repo}/head.json.out"; wait; })
    both_ms+=($(( $(now_ms) - start )))
  done
  python3 - "${name}" "${gate_ms[*]}" "${export_ms[*]}" "${both_ms[*]}" <<'PY'
import statistics, sys
name = sys.argv[1]
gate, export, both = ([int(x) for x in arg.split()] for arg in sys.argv[2:5])
g, e, b = statistics.median(gate), statistics.median(export), statistics.median(both)
print(f"{name:30} gate {g:6.0f} ms   one export {e:6.0f} ms   ratio {g / e:.2f}   "
      f"two exports at once {b:6.0f} ms   gate / that {g / b:.2f}")
PY
done
