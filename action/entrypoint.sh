#!/usr/bin/env bash
# The steps of the tdqs-gate Action (action.yml), one command a step: prepare, install, fetch-base
# (mode single), sandbox (installs bubblewrap), export, score, lint, comment, finish. The logic is
# in the binary (`tdqs-gate ci export|score|comment`). Inputs arrive only as environment variables.
# Overrides for self-hosted runners and tests: TDQS_GATE_BIN, TDQS_GATE_CLAUDE_DIR,
# TDQS_GATE_ACTION_CACHE, TDQS_GATE_RELEASE_URL, TDQS_GATE_GH.
set -euo pipefail
fail() { local m="${1//%/%25}" && m="${m//$'\r'/%0D}" && printf '::error title=tdqs-gate::%s\n' "${m//$'\n'/%0A}" >&2 && exit 2; }
out() { [[ -z "${GITHUB_OUTPUT:-}" ]] || printf '%s=%s\n' "$1" "$2" >>"${GITHUB_OUTPUT}"; }
root() { printf '%s\n' "${GITHUB_ACTION_PATH:-$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)}"; }
sha256() { if command -v sha256sum >/dev/null; then sha256sum | cut -d' ' -f1; else shasum -a 256 | cut -d' ' -f1; fi; }
cache_root() { printf '%s\n' "${TDQS_GATE_ACTION_CACHE:-${HOME}/.cache/tdqs-gate-action}"; }
exports() { printf '%s\n' "${INPUT_EXPORTS_DIR:-${RUNNER_TEMP:-/tmp}/tdqs-gate-exports}"; }
# Outside the workspace, so neither side's tree can hold it (the gate refuses one inside a repository).
answers_dir() { printf '%s\n' "${RUNNER_TEMP:-/tmp}/tdqs-gate-answers"; }
workdir() { [[ -d "${INPUT_WORKING_DIRECTORY:-.}" ]] || fail "working-directory '${INPUT_WORKING_DIRECTORY}' does not exist; check out the repository with actions/checkout first, or fix the input"; (cd "${INPUT_WORKING_DIRECTORY:-.}" && pwd -P); }
# Everything the binary is built from, and the compiler: a cached build is reused only for both.
source_digest() { (cd "$(root)" && { rustc -V 2>/dev/null || echo no-rustc; find Cargo.toml Cargo.lock src crates schemas tdqs/version.json -type f 2>/dev/null | LC_ALL=C sort |
    while IFS= read -r f; do printf '%s %s\n' "${f}" "$(sha256 <"${f}")"; done; }) | sha256; }
cmd_prepare() {
    case "${INPUT_MODE:-single}" in single | export-base | export-head | score | lint) ;; *) fail "mode '${INPUT_MODE}' is not one of single, export-base, export-head, score, lint" ;; esac
    case "${INPUT_JUDGE:-claude-code}" in claude-code | anthropic | openai | static) ;; *) fail "judge '${INPUT_JUDGE}' is not one of claude-code, anthropic, openai, static" ;; esac
    [[ -z "${INPUT_CONCURRENCY:-}" || "${INPUT_CONCURRENCY}" =~ ^[1-9][0-9]*$ ]] || fail "concurrency '${INPUT_CONCURRENCY}' is not a positive whole number"
    [[ "${INPUT_EVAL:-}" =~ ^(synthetic|live_model|live-model)?$ ]] || fail "eval '${INPUT_EVAL}' is not one of synthetic, live_model (or empty: no selection check)"
    [[ "${INPUT_EVAL:-}" != live* || "${INPUT_JUDGE:-}" != static ]] || fail "eval '${INPUT_EVAL}' needs a model to select, and the static judge cannot select: set judge to claude-code, anthropic or openai, or use eval: synthetic"
    [[ "${INPUT_COMMENT:-false}" =~ ^([Tt]rue|[Ff]alse)$ ]] || fail "comment '${INPUT_COMMENT}' must be true or false"
    [[ "${INPUT_SUGGEST:-false}" =~ ^([Tt]rue|[Ff]alse)$ ]] || fail "suggest '${INPUT_SUGGEST}' must be true or false"
    [[ "${INPUT_ANSWER_CACHE:-true}" =~ ^([Tt]rue|[Ff]alse)$ ]] || fail "answer-cache '${INPUT_ANSWER_CACHE}' must be true or false"
    local report="${INPUT_REPORT_DIR:-.tool-definition-score}" key
    [[ "${report}" == /* ]] || report="$(workdir)/${report}"
    out report-dir "${report}" && out exports-dir "$(exports)" && out answers-dir "$(answers_dir)"
    if [[ -n "${TDQS_GATE_BIN:-}" ]]; then
        out install given
    elif [[ "${INPUT_VERSION:-source}" == source ]]; then
        key="tdqs-gate-action-$(uname -s)-$(uname -m)-$(source_digest)"
        out install source && out cache-key "${key}" && out cache-restore-key "${key%-*}-" && out cache-path "$(cache_root)"
    elif [[ "${INPUT_VERSION}" =~ ^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]]; then
        out install release
    else
        fail "version '${INPUT_VERSION}' is neither 'source' nor a release number such as 0.1.0"
    fi
}
install_release() { # sets bin
    local v="${INPUT_VERSION#v}" t d a url
    case "$(uname -s)/$(uname -m)" in Linux/x86_64) t=x86_64-unknown-linux-gnu ;; Linux/aarch64 | Linux/arm64) t=aarch64-unknown-linux-gnu ;; Darwin/arm64) t=aarch64-apple-darwin ;;
        Darwin/x86_64) t=x86_64-apple-darwin ;; *) fail "no release build of tdqs-gate exists for $(uname -s)/$(uname -m); use version: source" ;; esac
    url="${TDQS_GATE_RELEASE_URL:-${GITHUB_SERVER_URL:-https://github.com}/${ACTION_REPOSITORY:-${GITHUB_REPOSITORY:-}}/releases/download}/v${v}"
    a="tdqs-gate-v${v}-${t}.tar.gz" && d="${RUNNER_TEMP:-/tmp}/tdqs-gate-v${v}"
    rm -rf "${d}" && mkdir -p "${d}" && echo "tdqs-gate action: downloading ${url}/${a}"
    curl -sSfL --retry 3 -o "${d}/${a}" "${url}/${a}" || fail "cannot download ${a} of release v${v} (no such release yet?); use version: source to build from the Action's source"
    curl -sSfL --retry 3 -o "${d}/${a}.sha256" "${url}/${a}.sha256" || fail "cannot download ${a}.sha256 of release v${v}; the archive is not used unchecked"
    [[ "$(awk '{print $1; exit}' "${d}/${a}.sha256")" == "$(sha256 <"${d}/${a}")" ]] || fail "the SHA-256 of ${a} does not match its .sha256 file; the download is not used"
    tar -xzf "${d}/${a}" -C "${d}" && bin="$(find "${d}" -type f -name tdqs-gate | head -n 1)"
    [[ -n "${bin}" && "$("${bin}" --version 2>/dev/null)" == "tdqs-gate ${v}" ]] || fail "${a} holds no tdqs-gate ${v} executable"
}
install_claude() {
    local d="${RUNNER_TEMP:-/tmp}/tdqs-gate-claude" pinned
    [[ -z "${TDQS_GATE_CLAUDE_DIR:-}" ]] || { [[ -x "${TDQS_GATE_CLAUDE_DIR}/claude" ]] || fail "TDQS_GATE_CLAUDE_DIR=${TDQS_GATE_CLAUDE_DIR} holds no executable claude"; out claude-dir "${TDQS_GATE_CLAUDE_DIR}" && return 0; }
    [[ "${INPUT_JUDGE:-claude-code}" == claude-code && "${SCORES:-true}" == true ]] || return 0 # and with a token only (not a fork's run):
    [[ "${HAS_TOKEN:-false}" == true ]] || { echo 'tdqs-gate action: no token, so the pinned claude is not installed' && return 0; }
    command -v npm >/dev/null || fail "npm is needed to install the pinned Claude Code CLI (judge: claude-code); add actions/setup-node before this step"
    mkdir -p "${d}" && cp "$(root)/tdqs/package.json" "$(root)/tdqs/package-lock.json" "${d}/"
    (cd "${d}" && npm ci --no-audit --no-fund --loglevel=error) || fail "npm ci of the pinned Claude Code CLI failed (see above)"
    pinned="$(sed -n 's/.*"@anthropic-ai\/claude-code": *"\([^"]*\)".*/\1/p' "$(root)/tdqs/package.json" | head -n 1)"
    [[ "$("${d}/node_modules/.bin/claude" --version 2>/dev/null | awk '{print $1}')" == "${pinned}" ]] || fail "the installed claude is not the pinned ${pinned}"
    out claude-dir "${d}/node_modules/.bin"
}
cmd_install() {
    local bin digest cache && cache="$(cache_root)"
    case "${INSTALL_MODE:-}" in
        given) bin="${TDQS_GATE_BIN}" && { [[ -x "${bin}" ]] || fail "TDQS_GATE_BIN=${bin} is not an executable file"; } ;;
        release) install_release ;;
        source)
            bin="${cache}/bin/tdqs-gate" && digest="$(source_digest)"
            if [[ -x "${bin}" && "$(cat "${cache}/bin/source-digest" 2>/dev/null)" == "${digest}" ]]; then
                echo 'tdqs-gate action: reusing the cached build of this source' && out built false
            else
                command -v cargo >/dev/null || fail "cargo is not installed, so tdqs-gate cannot be built from source (version: source). GitHub-hosted Ubuntu and macOS runners have it; elsewhere install Rust (rustup) before this step"
                echo 'tdqs-gate action: cargo build --release --locked (a few minutes without a cache)'
                CARGO_TARGET_DIR="${cache}/target" cargo build --release --locked --manifest-path "$(root)/Cargo.toml" --bin tdqs-gate || fail "building tdqs-gate from $(root) failed (see the cargo output above)"
                mkdir -p "${cache}/bin" && cp "${cache}/target/release/tdqs-gate" "${bin}.tmp" && mv "${bin}.tmp" "${bin}"
                printf '%s\n' "${digest}" >"${cache}/bin/source-digest" && out built true
            fi
            ;;
        *) fail "internal: unknown install mode '${INSTALL_MODE:-}'" ;;
    esac
    out bin "${bin}"
    install_claude
    answers_keys
}
# Mode single with a token (which signs the answers): the Actions cache keys of the answer folder,
# on the base commit, saved under a key of this run alone (cache entries are immutable).
answers_keys() {
    local base=""
    [[ "${INPUT_MODE:-single}" == single && "${INPUT_ANSWER_CACHE:-true}" == [Tt]rue && "${HAS_TOKEN:-false}" == true ]] || return 0
    [[ ! -f "${GITHUB_EVENT_PATH:-}" ]] || base="$(jq -r '.pull_request.base.sha // .merge_group.base_sha // empty' "${GITHUB_EVENT_PATH}" 2>/dev/null || true)"
    base="${base:-${GITHUB_SHA:-unknown}}"
    out answers-key "tdqs-gate-answers-${base}-${GITHUB_RUN_ID:-0}-${GITHUB_RUN_ATTEMPT:-1}" && out answers-restore-key "tdqs-gate-answers-${base}-"
}
cmd_fetch_base() {
    local base="${INPUT_BASE:-}" spec
    [[ -n "${base}" || "${GITHUB_EVENT_NAME:-}" != merge_group ]] || base="$(jq -r '.merge_group.base_sha // empty' "${GITHUB_EVENT_PATH}")"
    [[ -n "${base}" || -z "${GITHUB_BASE_REF:-}" ]] || base="origin/${GITHUB_BASE_REF}"
    [[ -n "${base}" ]] || fail "no base revision: this run is not for a pull request (GITHUB_BASE_REF is empty); set the action's base input, e.g. base: origin/main"
    [[ "${base}" != -* ]] || fail "base '${base}' starts with '-'; give a revision such as origin/main"
    cd "$(workdir)"
    if ! git rev-parse --verify --quiet --end-of-options "${base}^{commit}" >/dev/null; then
        spec="${base}" && [[ ! "${base}" =~ ^origin/(.+)$ ]] || spec="+refs/heads/${BASH_REMATCH[1]}:refs/remotes/origin/${BASH_REMATCH[1]}"
        echo "tdqs-gate action: the base ${base} is not in this checkout; git fetch --no-tags --depth=1 origin ${spec}"
        git fetch --no-tags --depth=1 origin "${spec}" || fail "cannot fetch the base ${base} from origin (check that it exists, or check out with fetch-depth: 0 so the base is already present)"
        git rev-parse --verify --quiet --end-of-options "${base}^{commit}" >/dev/null || fail "fetched ${spec} from origin, but ${base} still does not name a commit; use origin/<branch> or a full 40-character commit id"
    fi
    out base "${base}"
}
# One side, or both in mode single. A failed export is a NAME.failed note that scoring makes INVALID.
cmd_export() {
    local side sides=(base head) code
    [[ "${INPUT_MODE}" == single ]] || sides=("${INPUT_MODE#export-}")
    cd "$(workdir)"
    for side in "${sides[@]}"; do
        local rev=() && code=0 && [[ "${side}" != base || -z "${BASE:-}" ]] || rev=(-- "--base=${BASE}")
        "${GATE_BIN}" ci export --side="${side}" --output-dir="$(exports)/${side}" --github-output="${GITHUB_OUTPUT}" --args="${INPUT_ARGS:-}" "${rev[@]}" || code=$?
        [[ ${code} == 0 ]] || echo "tdqs-gate action: tdqs-gate ci export --side=${side} ended with exit code ${code}"
    done
}
cmd_score() {
    local code=0 var="" args=("--judge=${INPUT_JUDGE:-claude-code}" "--report-dir=${REPORT_DIR}")
    [[ -z "${INPUT_CONCURRENCY:-}" ]] || args+=("--concurrency=${INPUT_CONCURRENCY}")
    [[ -z "${INPUT_EVAL:-}" ]] || args+=("--eval=${INPUT_EVAL/_/-}")
    [[ "${INPUT_SUGGEST:-false}" != [Tt]rue ]] || args+=("--suggest")
    case "${INPUT_JUDGE:-claude-code}" in claude-code) var=CLAUDE_CODE_OAUTH_TOKEN ;; anthropic) var=ANTHROPIC_API_KEY ;; openai) var=OPENAI_API_KEY ;; esac
    if [[ -n "${INPUT_TOKEN:-}" && -n "${var}" ]]; then export "${var}=${INPUT_TOKEN}" && args+=("--token-env=${var}"); fi
    # The cache's entries are signed with a key derived from the token (or TDQS_GATE_ANSWER_CACHE_KEY):
    # without either, an entry in the runner's cache could be forged, so none is read or kept.
    if [[ "${ANSWER_CACHE:-true}" != [Tt]rue ]]; then
        args+=("--no-answer-cache")
    elif [[ -n "${INPUT_TOKEN:-}" && -n "${var}" || -n "${TDQS_GATE_ANSWER_CACHE_KEY:-}" ]]; then
        args+=("--answer-cache=${ANSWERS_DIR:-$(answers_dir)}")
    else
        args+=("--no-answer-cache") && echo 'tdqs-gate action: no token, so no answer cache (its entries are signed with a key derived from the token)'
    fi
    unset INPUT_TOKEN && [[ -z "${CLAUDE_DIR:-}" ]] || PATH="${CLAUDE_DIR}:${PATH}"
    cd "$(workdir)"
    args=(ci score "--base-dir=$(exports)/base" "--head-dir=$(exports)/head" ${BASE_DIGEST:+"--base-digest=${BASE_DIGEST}"} "--github-output=${GITHUB_OUTPUT}" "--args=${INPUT_ARGS:-}" -- "${args[@]}")
    printf 'tdqs-gate action: tdqs-gate' && printf ' %q' "${args[@]}" && echo
    "${GATE_BIN}" "${args[@]}" || code=$?
    ((code <= 2)) || { # a crash or a kill: the binary wrote no outputs
        out decision invalid && out exit-code "${code}" && out reason "tdqs-gate ended with exit code ${code} (a crash, or killed by a signal or the job's time limit); treated as INVALID"
        printf '## ⚠️ Tool definition score: INVALID\n\ntdqs-gate ended with exit code %s and wrote no report.\n\n' "${code}" >>"${GITHUB_STEP_SUMMARY:-/dev/null}"; }
}
# SARIF of every head export, for code scanning (findings never fail the step).
cmd_lint() {
    local f d && d="$(exports)/sarif" && mkdir -p "${d}" && out sarif-dir "${d}"
    for f in "$(exports)"/head/*.json; do
        [[ ! -f "${f}" ]] || "${GATE_BIN}" lint --export="${f}" --sarif --fail-on=never >"${d}/$(basename "${f}" .json).sarif"
    done
}
cmd_comment() {
    [[ -n "${GH_TOKEN:-}" ]] || { echo '::warning title=tdqs-gate::no GitHub token for the pull-request comment (github-token input is empty)' && return 0; }
    "${GATE_BIN}" ci comment --report-dir="${REPORT_DIR}" --name="${ARTIFACT_NAME}" --author="${COMMENT_AUTHOR}" --gh="${TDQS_GATE_GH:-gh}"
}
cmd_finish() {
    case "${EXIT_CODE:-}" in
        0) echo 'tdqs-gate: PASS' ;;
        1) echo 'tdqs-gate: BLOCK (exit 1): the tool definitions would lower the mean TDQS; see the job summary' >&2 && exit 1 ;;
        2) echo 'tdqs-gate: INVALID (exit 2): nothing was decided; see the job summary and the log of the gate step' >&2 && exit 2 ;;
        '') fail "tdqs-gate: INVALID: tdqs-gate did not run: an earlier step of the Action failed (see its log); nothing was decided" ;;
        *) echo "tdqs-gate: INVALID: tdqs-gate ended with exit code ${EXIT_CODE}, which is neither PASS (0) nor BLOCK (1)" >&2 && exit 2 ;;
    esac
}
# bubblewrap for the sandbox, and (on Ubuntu 24.04) the unprivileged user namespaces it needs.
cmd_sandbox() {
    local s=()
    [[ "$(id -u)" == 0 ]] || s=(sudo -n)
    command -v bwrap >/dev/null || { "${s[@]}" apt-get update -qq && "${s[@]}" apt-get install -y -qq bubblewrap; }
    [[ ! -e /proc/sys/kernel/apparmor_restrict_unprivileged_userns ]] || "${s[@]}" sysctl -qw kernel.apparmor_restrict_unprivileged_userns=0
    bwrap --version
}
case "${1:-}" in
    prepare) cmd_prepare ;; install) cmd_install ;; fetch-base) cmd_fetch_base ;; export) cmd_export ;;
    score) cmd_score ;; lint) cmd_lint ;; comment) cmd_comment ;; finish) cmd_finish ;; sandbox) cmd_sandbox ;;
    *) echo "usage: $0 prepare|install|fetch-base|sandbox|export|score|lint|comment|finish" >&2 && exit 2 ;;
esac
