#!/usr/bin/env bash
# Installs the pinned Claude Code command line (tdqs/package-lock.json) into tdqs/node_modules,
# where the claude_code integration tests look for it. Idempotent: an install that already
# reports the pinned version is kept. Prints the path of the installed `claude`.
#
# The package ships a native binary of about 245 MB (hard-linked into place by its postinstall
# script), so the first run downloads that much from the npm registry.
set -euo pipefail

repo_root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
tdqs_dir="$repo_root/tdqs"
claude="$tdqs_dir/node_modules/.bin/claude"
pinned="$(node -p "require('$tdqs_dir/package.json').dependencies['@anthropic-ai/claude-code']")"

installed_version() {
    # Empty when the binary is missing or does not run.
    "$claude" --version 2>/dev/null | awk '{print $1}' || true
}

if [[ -x "$claude" && "$(installed_version)" == "$pinned" ]]; then
    echo "claude $pinned already installed: $claude"
    exit 0
fi

command -v npm >/dev/null || { echo "npm is required to install the Claude Code CLI" >&2; exit 1; }

cd "$tdqs_dir"
# The package declares node >= 22 but runs its own native binary; an older node only warns.
npm ci --no-audit --no-fund --loglevel=error

version="$(installed_version)"
if [[ "$version" != "$pinned" ]]; then
    echo "installed claude reports version '${version}', expected $pinned" >&2
    exit 1
fi
echo "claude $pinned installed: $claude"
