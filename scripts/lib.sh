# shellcheck shell=bash
# What the bench scripts share (most gate a generated issue-tracker server with the fake `claude`),
# sourced (not run) by them after `set -euo pipefail`:
#   bench_init NAME          sets root, gate, fake and pins, checks the binaries are built, and
#                            makes the private work folder (removed on exit) with the stand-in
#                            specification in its cache (work/cache) and the fake as work/fake/claude
#   bench_repo TOOLS CONFIG  a git repository work/repo of the example server serving TOOLS
#                            generated tools, with CONFIG as its tdqs-gate.toml, committed
#   bench_gate_only NAME     for the benches that run tdqs-gate on real servers with no fake
#                            `claude`: sets root, gate (checked) and cache (tests/.cache), and
#                            makes the private work folder (removed on exit)
#   now_ms                   the wall clock in milliseconds
# GATE and FAKE_CLAUDE override the binaries; CARGO_TARGET_DIR is honoured.

bench_init() {
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  local target="${CARGO_TARGET_DIR:-${root}/target}"
  gate="${GATE:-${target}/debug/tdqs-gate}"
  fake="${FAKE_CLAUDE:-${target}/debug/fake-claude}"
  pins="${root}/tests/fixtures/spec/standin-pins.json"
  local bin
  for bin in "${gate}" "${fake}"; do
    [ -x "${bin}" ] || { echo "missing ${bin}; build it first" >&2; exit 2; }
  done
  work="$(mktemp -d "${TMPDIR:-/tmp}/$1-XXXXXX")"
  trap 'rm -rf "${work}"' EXIT
  local commit
  commit="$(python3 -c 'import json,sys; print(json.load(open(sys.argv[1]))["spec_commit"])' \
    "${pins}")"
  mkdir -p "${work}/cache/tdqs-gate" "${work}/fake" "${work}/repo"
  cp "${root}/tests/fixtures/spec/standin-readme.md" "${work}/cache/tdqs-gate/${commit}.md"
  cp "${fake}" "${work}/fake/claude"
}

bench_gate_only() {
  root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
  gate="${GATE:-${CARGO_TARGET_DIR:-${root}/target}/debug/tdqs-gate}"
  [ -x "${gate}" ] || { echo "no tdqs-gate at ${gate}; build it or set GATE" >&2; exit 2; }
  cache="${root}/tests/.cache"
  work="$(mktemp -d "${TMPDIR:-/tmp}/$1-XXXXXX")"
  trap 'rm -rf "${work}"' EXIT
}

bench_repo() {
  python3 - "${work}/repo/tools.json" "$1" <<'PY'
import json, sys
path, n = sys.argv[1], int(sys.argv[2])
tools = [{
    "name": f"tool_{i:02d}",
    "description": f"Returns record {i} of the catalogue with its fields. Fails with an error "
                   f"when the record does not exist.",
    "inputSchema": {"type": "object", "properties": {"id": {"type": "string",
                    "description": "The record id, e.g. r-17"}}, "required": ["id"]},
} for i in range(n)]
json.dump(tools, open(path, "w"), indent=2)
PY
  (
    cd "${work}/repo" || exit 2
    git init -q
    cp "${root}/examples/issue-tracker/server.py" server.py
    printf '%s' "$2" > tdqs-gate.toml
    git add -A
    git -c user.name=bench -c user.email=bench@invalid commit -qm base
  )
}

now_ms() { date +%s%N | cut -b1-13; }
