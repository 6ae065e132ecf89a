#!/usr/bin/env bash
# The bundled example, offline: one MCP server (examples/issue-tracker) in a throwaway git
# repository, with a careful revision committed and a careless rewrite of its tool descriptions
# in the working tree. The gate exports both sides by starting the server, scores them with the
# deterministic static judge (no model, no token, no network) and BLOCKs.
#
# Usage: bash examples/demo.sh [extra gate flags]     (exit code: the gate's, 1 = BLOCK)
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "${here}/.." && pwd)"

# Not --quiet: the first run compiles tdqs-gate and its dependencies, which takes several minutes
# on a small machine; later runs start at once. The release profile, as `cargo install --path .`
# builds it: that install then reuses this build instead of compiling everything again.
echo "== building tdqs-gate (the first build takes several minutes; cargo shows its progress)" >&2
cargo build --manifest-path "${root}/Cargo.toml" --release --locked --bin tdqs-gate
echo "== running the gate on the example (python3 starts the example server)" >&2
target="${CARGO_TARGET_DIR:-${root}/target}"
gate="${target}/release/tdqs-gate"
# The report outlives the throwaway repository, so the page it names can still be opened.
report="${TDQS_GATE_DEMO_REPORT:-${target}/demo-report}"
rm -rf "${report}"

demo="$(mktemp -d "${TMPDIR:-/tmp}/tdqs-gate-demo.XXXXXX")"
trap 'rm -rf "${demo}"' EXIT
cd "${demo}"
git init --quiet
cp "${here}/issue-tracker/server.py" "${here}/issue-tracker/tdqs-gate.toml" .
cp "${here}/issue-tracker/careful.json" tools.json
git add .
git -c user.name=demo -c user.email=demo@example.invalid commit --quiet -m "careful tool definitions"
# The "pull request": the same tools, described carelessly.
cp "${here}/issue-tracker/careless.json" tools.json

set +e
"${gate}" --base HEAD --judge static --report-dir "${report}" "$@"
code=$?
set -e
echo
echo "----- ${report}/tool-definition-score.md -----"
cat "${report}/tool-definition-score.md"
echo "----- exit code ${code} (0 PASS, 1 BLOCK, 2 INVALID); the page: ${report}/tool-definition-score.html -----"
exit "${code}"
