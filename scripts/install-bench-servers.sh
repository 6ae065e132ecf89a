#!/usr/bin/env bash
# Installs the real MCP servers only the benches use, pinned, into tests/.cache/bench-venv/
# (kept out of tests/setup/, which CI runs in full: the test suite does not need them):
#   agentic-hil   the 48-tool Python server the unchanged-run target was set on (PyPI,
#                 Apache-2.0); `agentic-hil mcp-stdio` serves its tools over stdio and needs
#                 no hardware to list them
# Idempotent: a stamp file records the pinned set. Needs python3 (with venv).
set -euo pipefail

AGENTIC_HIL_VERSION="0.25.0"

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${root}/tests/.cache"
mkdir -p "${cache}"
[ -f "${cache}/.gitignore" ] || printf '*\n' > "${cache}/.gitignore"

venv_dir="${cache}/bench-venv"
stamp="${venv_dir}/.installed"
want="agentic-hil==${AGENTIC_HIL_VERSION}"
if [ "$(cat "${stamp}" 2>/dev/null || true)" != "${want}" ]; then
    python3 -m venv "${venv_dir}"
    "${venv_dir}/bin/pip" install --quiet --disable-pip-version-check "${want}"
    printf '%s' "${want}" > "${stamp}"
fi
echo "bench servers: ${venv_dir}/bin"
