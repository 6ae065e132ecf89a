#!/usr/bin/env bash
# Measures what `tdqs-gate suggest` costs per proposal: judge calls, tokens and the outcome, on
# the example server's careless and careful definitions and on corpus exports, with the fake
# `claude` of the test suite as the judge (its answers follow the description's words; its token
# counts are fixed stand-ins, 1,200 in and 180 out per call, so the token figures
# measure the call count, not a real model). No live model is called.
#
# Build first:  cargo build --bin tdqs-gate && cargo build -p tdqs-gate-tests --bin fake-claude
# Usage:        scripts/bench-suggest.sh [CORPUS_FILE...]   (default: brave-search, fetch, time)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="${CARGO_TARGET_DIR:-${root}/target}/debug"
gate="${GATE:-${target}/tdqs-gate}"
fake="${FAKE_CLAUDE:-${target}/fake-claude}"
for bin in "${gate}" "${fake}"; do
  [ -x "${bin}" ] || { echo "no ${bin}; build it first (see the header)" >&2; exit 2; }
done
commit="b9881b0cfec88969e42672c92544487ca191a992"
work="$(mktemp -d "${TMPDIR:-/tmp}/bench-suggest-XXXXXX")"
server_pid=""
cleanup() { [ -z "${server_pid}" ] || kill "${server_pid}" 2>/dev/null || true; rm -rf "${work}"; }
trap cleanup EXIT

# The stand-in specification, served on loopback as the pinned commit's README.
mkdir -p "${work}/spec/${commit}"
cp "${root}/tests/fixtures/spec/standin-readme.md" "${work}/spec/${commit}/README.md"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -m http.server "${port}" --bind 127.0.0.1 --directory "${work}/spec" >/dev/null 2>&1 &
server_pid=$!
for _ in $(seq 50); do curl -sf "http://127.0.0.1:${port}/${commit}/README.md" >/dev/null && break; sleep 0.1; done

judge=(--judge claude-code --pins "${root}/tests/fixtures/spec/standin-pins.json"
  --spec-url "http://127.0.0.1:${port}/${commit}/README.md" --cache-dir "${work}/cache")

# One run: a fresh fake (its counters start at zero), every tool, a cap large enough for all.
measure() {
  local label="$1" export_file="$2" fake_dir
  fake_dir="$(mktemp -d "${work}/fake-XXXXXX")"
  cp "${fake}" "${fake_dir}/claude"
  echo '{}' >"${fake_dir}/fake-claude.json"
  local tools
  tools=$(jq '.tools | length' "${export_file}")
  "${gate}" suggest --export "${export_file}" --json --max-calls $((tools * 7 + 7)) -q \
    "${judge[@]}" --claude "${fake_dir}/claude" >"${work}/out.json"
  jq -r --arg name "${label}" '
    [.tools[] | select(.status != "checklist")] as $t
    | ($t | map(select(.status == "offered")) | length) as $offered
    | ($t | map(.tokens.inputTokens + .tokens.outputTokens) | add) as $tokens
    | "\($name)\t\($t | length)\t\($offered)\t\(($t | length) - $offered)\t\(.calls)\t\((.calls / ($t | length)) * 100 | round / 100)\t\(($tokens / ($t | length)) | round)"
  ' "${work}/out.json"
}

printf 'server\ttools\toffered\twithheld\tcalls\tcalls/proposal\ttokens/proposal\n'
# The example server: export each definition set by starting the server on it.
for set in careless careful; do
  repo="${work}/example-${set}"
  mkdir -p "${repo}"
  cp "${root}/examples/issue-tracker/server.py" "${repo}/server.py"
  cp "${root}/examples/issue-tracker/${set}.json" "${repo}/tools.json"
  printf '[server]\ncommand = "python3 {root}/server.py"\n' >"${repo}/tdqs-gate.toml"
  git -C "${repo}" init -q && git -C "${repo}" add -A && git -C "${repo}" -c user.email=b@e -c user.name=b commit -qm s
  (cd "${repo}" && "${gate}" export -q -o "${work}/example-${set}.json")
  measure "issue-tracker (${set})" "${work}/example-${set}.json"
done
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(brave-search fetch time)
for name in "${files[@]}"; do
  measure "corpus ${name}" "${root}/tests/fixtures/corpus/${name%.json}.json"
done
