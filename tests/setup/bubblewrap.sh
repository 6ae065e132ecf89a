#!/usr/bin/env bash
# Installs bubblewrap (`bwrap`), the sandbox the gate runs pull-request code in
# (src/platform/sandbox.rs), and checks that it can create its namespaces here.
# Idempotent: nothing is installed when `bwrap` is already on PATH.
set -euo pipefail

if ! command -v bwrap >/dev/null 2>&1; then
    if [ "$(id -u)" = "0" ]; then sudo=""; else sudo="sudo"; fi
    ${sudo} apt-get update -qq
    ${sudo} apt-get install -y -qq bubblewrap
fi

if ! bwrap --unshare-all --share-net --die-with-parent --ro-bind / / --proc /proc --dev /dev true 2>/tmp/bwrap-check.$$; then
    echo "bubblewrap is installed but cannot create its namespaces here: $(cat /tmp/bwrap-check.$$)" >&2
    rm -f /tmp/bwrap-check.$$
    # Ubuntu 23.10 and later (GitHub's ubuntu-24.04 runners) refuse unprivileged user
    # namespaces through AppArmor; allow them when we may.
    if [ -e /proc/sys/kernel/apparmor_restrict_unprivileged_userns ]; then
        if [ "$(id -u)" = "0" ]; then sudo=""; else sudo="sudo"; fi
        ${sudo} sysctl -w kernel.apparmor_restrict_unprivileged_userns=0
        bwrap --unshare-all --share-net --die-with-parent --ro-bind / / --proc /proc --dev /dev true
    else
        exit 1
    fi
fi
rm -f /tmp/bwrap-check.$$
echo "bubblewrap: $(bwrap --version)"
