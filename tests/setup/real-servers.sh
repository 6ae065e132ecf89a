#!/usr/bin/env bash
# Installs the real MCP servers the export tests run against, pinned, into tests/.cache/:
#   tests/.cache/npm/   @modelcontextprotocol/server-everything (npm)
#   tests/.cache/venv/  mcp-server-time, mcp-server-git and the Python `mcp` SDK that
#                       tests/servers/fastmcp_server.py is written against (PyPI)
# Idempotent: a stamp file records the pinned set; nothing is reinstalled while it matches.
# Needs node/npm and python3 (with venv). Prints the two folders it installed into.
set -euo pipefail

EVERYTHING_VERSION="2026.8.31"
TIME_VERSION="2026.10.19"
GIT_VERSION="2026.10.19"
MCP_VERSION="2.3.0"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${here}/.cache"
mkdir -p "${cache}"
# Keep the cache out of git without touching a tracked .gitignore.
[ -f "${cache}/.gitignore" ] || printf '*\n' > "${cache}/.gitignore"

npm_dir="${cache}/npm"
npm_stamp="${npm_dir}/.installed"
npm_want="@modelcontextprotocol/server-everything@${EVERYTHING_VERSION}"
if [ "$(cat "${npm_stamp}" 2>/dev/null || true)" != "${npm_want}" ]; then
    mkdir -p "${npm_dir}"
    npm install --prefix "${npm_dir}" --no-audit --no-fund --loglevel=error "${npm_want}"
    printf '%s' "${npm_want}" > "${npm_stamp}"
fi

venv_dir="${cache}/venv"
venv_stamp="${venv_dir}/.installed"
py_want="mcp-server-time==${TIME_VERSION} mcp-server-git==${GIT_VERSION} mcp==${MCP_VERSION}"
if [ "$(cat "${venv_stamp}" 2>/dev/null || true)" != "${py_want}" ]; then
    python3 -m venv "${venv_dir}"
    # shellcheck disable=SC2086 # the pinned list is meant to split into arguments
    "${venv_dir}/bin/pip" install --quiet --disable-pip-version-check ${py_want}
    printf '%s' "${py_want}" > "${venv_stamp}"
fi

echo "npm servers: ${npm_dir}/node_modules/.bin"
echo "python servers: ${venv_dir}/bin"
