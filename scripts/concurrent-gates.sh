#!/usr/bin/env bash
# Runs N gates at once on one repository, R rounds, and counts how many finished with their own
# verdict (exit 0: the definitions are unchanged, so no judge is needed). Issue 12 item 4.
#
# Usage: scripts/concurrent-gates.sh [N=6] [R=5] [GATE=target/debug/tdqs-gate]
#        [SERVER=target/debug/fake-mcp-server]
set -euo pipefail
n="${1:-6}"
rounds="${2:-5}"
gate="$(realpath "${3:-target/debug/tdqs-gate}")"
server="$(realpath "${4:-target/debug/fake-mcp-server}")"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT
repo="${work}/repo"
mkdir -p "${repo}"
git -C "${repo}" init -q
printf '[]\n' >"${repo}/tools.json"
printf '[server]\ncommand = "%s --tools {root}/tools.json"\n' "${server}" >"${repo}/tdqs-gate.toml"
git -C "${repo}" add -A
git -C "${repo}" -c user.name=t -c user.email=t@example.invalid commit -qm base
ok=0
total=0
for round in $(seq "${rounds}"); do
    pids=()
    for i in $(seq "${n}"); do
        (cd "${repo}" && "${gate}" --base HEAD --report-dir "${work}/report-${round}-${i}" \
            >"${work}/out-${round}-${i}" 2>&1) &
        pids+=("$!")
    done
    for pid in "${pids[@]}"; do
        total=$((total + 1))
        if wait "${pid}"; then
            ok=$((ok + 1))
        fi
    done
done
printf '%d of %d gates finished with their verdict\n' "${ok}" "${total}"
grep -h '^INVALID' "${work}"/out-* | sort | uniq -c | sort -rn | head -5 || true
[[ ${ok} == "${total}" ]]
