#!/usr/bin/env bash
# Installs the distribution's `chromium` package for the HTML report's browser test
# (tests/integration/html_report.rs), which opens the report in headless Chromium over the
# Chrome DevTools Protocol. Browser builds from vendors' sites are not used: only the system
# package registry (Debian: apt-get). Idempotent: nothing is installed when a `chromium`,
# `chromium-browser` or `google-chrome` is already on PATH. Prints the browser's path and version.
#
# Needs root or a password-less sudo to install; without either it says what to run and fails.
set -euo pipefail

# A Chrome already installed (as on GitHub's hosted runners) speaks the same protocol.
find_browser() {
    command -v chromium 2>/dev/null || command -v chromium-browser 2>/dev/null ||
        command -v google-chrome 2>/dev/null || command -v google-chrome-stable 2>/dev/null || true
}

browser="$(find_browser)"
if [ -z "${browser}" ]; then
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "chromium is not installed and this system has no apt-get; install the distribution's" \
            "chromium package with its package manager, or set TDQS_GATE_CHROMIUM to a Chromium executable" >&2
        exit 1
    fi
    as_root=()
    if [ "$(id -u)" != "0" ]; then
        if command -v sudo >/dev/null 2>&1 && sudo -n true 2>/dev/null; then
            as_root=(sudo -n)
        else
            echo "chromium is not installed and installing it needs root: run" \
                "'sudo apt-get install -y chromium', or set TDQS_GATE_CHROMIUM to a Chromium executable" >&2
            exit 1
        fi
    fi
    export DEBIAN_FRONTEND=noninteractive
    # An up-to-date package list first: an old one may name a version the mirror no longer has.
    "${as_root[@]}" apt-get update -qq
    "${as_root[@]}" apt-get install -y -qq --no-install-recommends chromium >/dev/null
    browser="$(find_browser)"
    if [ -z "${browser}" ]; then
        echo "apt-get installed chromium but no chromium executable is on PATH" >&2
        exit 1
    fi
fi
echo "chromium: ${browser} ($("${browser}" --version 2>/dev/null || echo 'version unknown'))"
