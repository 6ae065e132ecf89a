#!/usr/bin/env bash
# Builds the release archive of tdqs-gate for one target, as the release workflow publishes it
# and as the Action's `version:` input downloads it:
#
#   OUT/tdqs-gate-v<VERSION>-<TARGET>.tar.gz          tdqs-gate-v<VERSION>-<TARGET>/{tdqs-gate,README.md,LICENSE-*}
#   OUT/tdqs-gate-v<VERSION>-<TARGET>.tar.gz.sha256   "<sha256>  <archive name>" (sha256sum -c reads it)
#
# Usage: scripts/release-archive.sh --target TRIPLE --out DIR [--version X.Y.Z] [--binary PATH]
#   --version  defaults to the workspace version in Cargo.toml; a leading "v" is dropped
#   --binary   package an executable already built (the tests use the debug build) instead of
#              running `cargo build --release --locked --target TRIPLE`
# The archive is refused when the executable's `--version` is not "tdqs-gate <VERSION>": the
# Action checks the same after downloading, and a mismatch there would fail every user's job.
set -euo pipefail

root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
target="" out="" version="" binary=""
while [[ $# -gt 0 ]]; do
    case "$1" in
        --target) target="$2"; shift 2 ;;
        --out) out="$2"; shift 2 ;;
        --version) version="$2"; shift 2 ;;
        --binary) binary="$2"; shift 2 ;;
        *) echo "release-archive: unknown argument '$1' (see the usage at the top of $0)" >&2; exit 2 ;;
    esac
done
[[ -n "${target}" && -n "${out}" ]] || { echo "release-archive: --target and --out are required" >&2; exit 2; }
if [[ -z "${version}" ]]; then
    version="$(sed -n '/^\[workspace.package\]/,/^\[/s/^version = "\(.*\)"/\1/p' "${root}/Cargo.toml" | head -n 1)"
fi
version="${version#v}"
[[ "${version}" =~ ^[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]] ||
    { echo "release-archive: '${version}' is not a version such as 0.1.0" >&2; exit 2; }

if [[ -z "${binary}" ]]; then
    cargo build --manifest-path "${root}/Cargo.toml" --release --locked --bin tdqs-gate --target "${target}"
    binary="${CARGO_TARGET_DIR:-${root}/target}/${target}/release/tdqs-gate"
fi
[[ -x "${binary}" ]] || { echo "release-archive: ${binary} is not an executable" >&2; exit 2; }
reported="$("${binary}" --version)"
[[ "${reported}" == "tdqs-gate ${version}" ]] ||
    { echo "release-archive: ${binary} reports '${reported}', expected 'tdqs-gate ${version}': tag the version that Cargo.toml carries" >&2; exit 1; }

name="tdqs-gate-v${version}-${target}"
mkdir -p "${out}"
out="$(cd "${out}" && pwd)"
stage="$(mktemp -d)"
trap 'rm -rf "${stage}"' EXIT
mkdir "${stage}/${name}"
install -m 0755 "${binary}" "${stage}/${name}/tdqs-gate"
cp "${root}/README.md" "${root}/LICENSE-MIT" "${root}/LICENSE-APACHE" "${stage}/${name}/"
# With GNU tar: a fixed order, owner and time, so the same executable gives the same archive
# (macOS's bsdtar has no such flags; its archive is only not byte-reproducible).
tar_flags=()
if tar --version 2>/dev/null | grep -q 'GNU tar'; then
    tar_flags=(--sort=name --owner=0 --group=0 --numeric-owner --mtime=@0)
fi
tar -C "${stage}" ${tar_flags[@]+"${tar_flags[@]}"} -cf - "${name}" | gzip -n -9 >"${out}/${name}.tar.gz.tmp"
mv "${out}/${name}.tar.gz.tmp" "${out}/${name}.tar.gz"
if command -v sha256sum >/dev/null 2>&1; then
    digest="$(sha256sum "${out}/${name}.tar.gz" | cut -d' ' -f1)"
else
    digest="$(shasum -a 256 "${out}/${name}.tar.gz" | cut -d' ' -f1)"
fi
printf '%s  %s\n' "${digest}" "${name}.tar.gz" >"${out}/${name}.tar.gz.sha256"
echo "${out}/${name}.tar.gz"
