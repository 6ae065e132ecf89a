#!/usr/bin/env bash
# Start-up cost of the sandbox per server: the median wall time of N exports (initialize +
# tools/list + shutdown) of each server with `--sandbox on` and with `--sandbox off`, as a
# Markdown table for docs/security.md.
#
#   scripts/bench-sandbox.sh [N]        (default N=5)
#
# Uses the servers tests/setup/real-servers.sh installs (tests/.cache) and the Python example;
# needs bwrap (tests/setup/bubblewrap.sh). GATE=path/to/tdqs-gate picks the binary (default:
# target/release/tdqs-gate, else target/debug/tdqs-gate).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
root="$(pwd)"
n="${1:-5}"
gate="${GATE:-}"
if [ -z "${gate}" ]; then
    if [ -x target/release/tdqs-gate ]; then gate="${root}/target/release/tdqs-gate"; else gate="${root}/target/debug/tdqs-gate"; fi
fi
cache="${root}/tests/.cache"
work="$(mktemp -d)"
trap 'rm -rf "${work}"' EXIT

# A repository holding the Python example, so every export runs as the gate runs a side.
repo="${work}/repo"
mkdir -p "${repo}"
cp examples/issue-tracker/server.py "${repo}/"
cp examples/issue-tracker/careful.json "${repo}/tools.json"
printf '[server]\ncommand = "python3 {root}/server.py"\n' > "${repo}/tdqs-gate.toml"
git -C "${repo}" init -q
git -C "${repo}" add -A
git -C "${repo}" -c user.name=bench -c user.email=bench@invalid commit -qm bench

declare -a names commands
names+=("issue-tracker (Python example)"); commands+=("")
[ -x "${cache}/npm/node_modules/.bin/mcp-server-everything" ] && { names+=("server-everything (Node)"); commands+=("${cache}/npm/node_modules/.bin/mcp-server-everything"); }
[ -x "${cache}/venv/bin/mcp-server-time" ] && { names+=("mcp-server-time (Python)"); commands+=("${cache}/venv/bin/mcp-server-time --local-timezone UTC"); }
[ -x "${cache}/venv/bin/mcp-server-git" ] && { names+=("mcp-server-git (Python)"); commands+=("${cache}/venv/bin/mcp-server-git"); }
[ -x "${cache}/venv/bin/python" ] && { names+=("FastMCP server (Python)"); commands+=("${cache}/venv/bin/python ${root}/tests/servers/fastmcp_server.py"); }

median_ms() { # mode command
    local mode="$1" command="$2" times=() i start end
    for ((i = 0; i < n; i++)); do
        start=$(date +%s%N)
        if [ -n "${command}" ]; then
            (cd "${repo}" && env -u CI "${gate}" export --sandbox "${mode}" --command "${command}" -o "${work}/out.json" >/dev/null 2>&1)
        else
            (cd "${repo}" && env -u CI "${gate}" export --sandbox "${mode}" -o "${work}/out.json" >/dev/null 2>&1)
        fi
        end=$(date +%s%N)
        times+=($(((end - start) / 1000000)))
    done
    printf '%s\n' "${times[@]}" | sort -n | sed -n "$(((n + 1) / 2))p"
}

echo "| server | unsandboxed (ms) | sandboxed (ms) | cost (ms) |"
echo "|---|---:|---:|---:|"
for i in "${!names[@]}"; do
    off=$(median_ms off "${commands[$i]}")
    on=$(median_ms on "${commands[$i]}")
    echo "| ${names[$i]} | ${off} | ${on} | $((on - off)) |"
done
echo
echo "($(bwrap --version), ${n} runs each, median; $(nproc) cores; $(uname -sr))"
