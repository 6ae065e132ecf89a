#!/usr/bin/env bash
# The steps of the tdqs-gate GitHub Action (action.yml), one subcommand per step:
#
#   prepare     check the inputs; work out the install mode, the build cache key and the report path
#   install     build tdqs-gate from the Action's source, or download a release; install the
#               pinned `claude` when the Claude Code judge has a token to use
#   fetch-base  make sure the base commit is present, also in a shallow checkout
#   export      start each side's server and export its tools to a file (with [[server]]
#               tables, one file per server and side, in a folder per side), WITHOUT the token:
#               the pull request's code runs only here
#   gate        score the export files (no server starts, the token is here); record decision,
#               scored, report and exit-code as step outputs (and decision-NAME per server,
#               decisions as one JSON object)
#   comment     create or update the one sticky pull-request comment holding the summary
#   finish      exit with the gate's code: 0 PASS, 1 BLOCK, anything else INVALID
#
# Inputs arrive only through environment variables (INPUT_*), never pasted into script text by
# the workflow engine, so a branch name or an `args` value cannot become shell code. The tests
# (tests/integration/action.rs) run these steps as action.yml wires them, with GITHUB_OUTPUT,
# GITHUB_STEP_SUMMARY and the event variables pointing at temporary files.
#
# Overrides for self-hosted runners and tests:
#   TDQS_GATE_BIN          an existing tdqs-gate executable: no build, no download
#   TDQS_GATE_CLAUDE_DIR   a folder holding the `claude` to use: no npm install
#   TDQS_GATE_ACTION_CACHE where builds are kept between runs (default ~/.cache/tdqs-gate-action)
#   TDQS_GATE_RELEASE_URL  where release archives are downloaded from
#                          (default $GITHUB_SERVER_URL/<action repository>/releases/download)
set -euo pipefail

readonly MARKER_PREFIX='<!-- tdqs-gate:tool-definition-score'
# GitHub refuses comment bodies over 65,536 characters; keep room for the marker and the note.
readonly COMMENT_LIMIT=60000

action_root() {
    if [[ -n "${GITHUB_ACTION_PATH:-}" ]]; then
        printf '%s\n' "${GITHUB_ACTION_PATH}"
    else
        (cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
    fi
}

# Workflow commands (::error:: and friends) need %, CR and LF escaped in their message.
escape_data() {
    local text="$1"
    text="${text//'%'/'%25'}"
    text="${text//$'\r'/'%0D'}"
    text="${text//$'\n'/'%0A'}"
    printf '%s' "${text}"
}

# Property values (title=…) also need ':' and ',' escaped.
escape_property() {
    local text
    text="$(escape_data "$1")"
    text="${text//:/%3A}"
    text="${text//,/%2C}"
    printf '%s' "${text}"
}

annotate() { # level title message
    printf '::%s title=%s::%s\n' "$1" "$(escape_property "$2")" "$(escape_data "$3")"
}

# Fails the step. It writes to stderr (the runner reads workflow commands there too), so a
# failure inside a command substitution still reaches the log.
fail() {
    annotate error "tdqs-gate" "$1" >&2
    exit 2
}

set_output() { # name value (single line)
    if [[ -n "${GITHUB_OUTPUT:-}" ]]; then
        printf '%s=%s\n' "$1" "$2" >>"${GITHUB_OUTPUT}"
    fi
}

sha256_stdin() {
    if command -v sha256sum >/dev/null 2>&1; then
        sha256sum | cut -d' ' -f1
    else
        shasum -a 256 | cut -d' ' -f1
    fi
}

is_true() {
    case "${1,,}" in
        true | yes | 1 | on) return 0 ;;
        *) return 1 ;;
    esac
}

working_directory() {
    local dir="${INPUT_WORKING_DIRECTORY:-.}"
    [[ -n "${dir}" ]] || dir=.
    if [[ ! -d "${dir}" ]]; then
        fail "working-directory '${dir}' does not exist; check out the repository with actions/checkout first, or fix the input"
    fi
    (cd "${dir}" && pwd -P)
}

# The file name of release archives, by runner; empty where no build is published.
release_target() {
    local os arch
    os="$(uname -s)"
    arch="$(uname -m)"
    case "${os}/${arch}" in
        Linux/x86_64) echo x86_64-unknown-linux-gnu ;;
        Linux/aarch64 | Linux/arm64) echo aarch64-unknown-linux-gnu ;;
        Darwin/arm64 | Darwin/aarch64) echo aarch64-apple-darwin ;;
        Darwin/x86_64) echo x86_64-apple-darwin ;;
        *) echo "" ;;
    esac
}

cache_root() {
    printf '%s\n' "${TDQS_GATE_ACTION_CACHE:-${HOME}/.cache/tdqs-gate-action}"
}

# A digest of everything the binary is built from, so a cached build is reused only for the
# same source and the same compiler.
source_digest() {
    local root rustc
    root="$(action_root)"
    rustc="$(rustc -V 2>/dev/null || echo no-rustc)"
    (
        cd "${root}"
        printf '%s\n' "${rustc}"
        find Cargo.toml Cargo.lock src schemas tdqs/version.json -type f 2>/dev/null |
            LC_ALL=C sort |
            while IFS= read -r file; do
                printf '%s %s\n' "${file}" "$(sha256_stdin <"${file}")"
            done
    ) | sha256_stdin
}

cmd_prepare() {
    local version="${INPUT_VERSION:-source}" judge="${INPUT_JUDGE:-claude-code}" workdir report_dir
    [[ -n "${version}" ]] || version=source
    case "${judge}" in
        claude-code | anthropic | openai | static) ;;
        *) fail "judge '${judge}' is not one of claude-code, anthropic, openai, static" ;;
    esac
    if [[ -n "${INPUT_CONCURRENCY:-}" && ! "${INPUT_CONCURRENCY}" =~ ^[1-9][0-9]*$ ]]; then
        fail "concurrency '${INPUT_CONCURRENCY}' is not a positive whole number"
    fi
    case "${INPUT_EVAL:-}" in
        '' | synthetic) ;;
        live_model | live-model)
            if [[ "${judge}" == static ]]; then
                fail "eval '${INPUT_EVAL}' needs a model to select, and the static judge cannot select: set judge to claude-code, anthropic or openai, or use eval: synthetic"
            fi
            ;;
        *) fail "eval '${INPUT_EVAL}' is not one of synthetic, live_model (or empty: no selection check)" ;;
    esac
    if [[ -n "${INPUT_COMMENT:-}" ]] && ! [[ "${INPUT_COMMENT,,}" =~ ^(true|false)$ ]]; then
        fail "comment '${INPUT_COMMENT}' must be true or false"
    fi
    workdir="$(working_directory)"
    report_dir="${INPUT_REPORT_DIR:-.tool-definition-score}"
    [[ -n "${report_dir}" ]] || report_dir=.tool-definition-score
    [[ "${report_dir}" == /* ]] || report_dir="${workdir}/${report_dir}"
    set_output report-dir "${report_dir}"
    set_output working-directory "${workdir}"

    if [[ -n "${TDQS_GATE_BIN:-}" ]]; then
        set_output install given
        return
    fi
    if [[ "${version}" == source ]]; then
        local root digest os arch
        root="$(action_root)"
        digest="$(source_digest)"
        os="$(uname -s)"
        arch="$(uname -m)"
        set_output install source
        set_output cache-key "tdqs-gate-action-${os}-${arch}-${digest}"
        set_output cache-restore-key "tdqs-gate-action-${os}-${arch}-"
        set_output cache-path "$(cache_root)"
        printf 'tdqs-gate action: tdqs-gate comes from the source in %s (digest %s), built or cached\n' "${root}" "${digest:0:12}"
    elif [[ "${version}" =~ ^v?[0-9]+\.[0-9]+\.[0-9]+([-+][0-9A-Za-z.-]+)?$ ]]; then
        set_output install release
    else
        fail "version '${version}' is neither 'source' nor a release number such as 0.1.0"
    fi
}

install_from_source() {
    local root cache digest bin
    root="$(action_root)"
    cache="$(cache_root)"
    digest="$(source_digest)"
    bin="${cache}/bin/tdqs-gate"
    if [[ -x "${bin}" && -f "${cache}/bin/source-digest" && "$(cat "${cache}/bin/source-digest")" == "${digest}" ]]; then
        printf 'tdqs-gate action: reusing the cached build of this source\n'
        set_output built false
    else
        command -v cargo >/dev/null 2>&1 ||
            fail "cargo is not installed, so tdqs-gate cannot be built from source (version: source). GitHub-hosted Ubuntu and macOS runners have it; elsewhere install Rust (rustup) before this step"
        printf 'tdqs-gate action: cargo build --release --locked (this takes a few minutes without a cache)\n'
        CARGO_TARGET_DIR="${cache}/target" cargo build --release --locked \
            --manifest-path "${root}/Cargo.toml" --bin tdqs-gate ||
            fail "building tdqs-gate from ${root} failed (see the cargo output above)"
        mkdir -p "${cache}/bin"
        cp "${cache}/target/release/tdqs-gate" "${bin}.tmp"
        mv "${bin}.tmp" "${bin}"
        printf '%s\n' "${digest}" >"${cache}/bin/source-digest"
        set_output built true
    fi
    set_output bin "${bin}"
}

install_release() {
    local version="${INPUT_VERSION#v}" target base_url repo archive dir expected actual bin reported
    target="$(release_target)"
    [[ -n "${target}" ]] ||
        fail "no release build of tdqs-gate exists for $(uname -s)/$(uname -m); use version: source"
    repo="${ACTION_REPOSITORY:-}"
    [[ -n "${repo}" ]] || repo="${GITHUB_REPOSITORY:-}"
    base_url="${TDQS_GATE_RELEASE_URL:-${GITHUB_SERVER_URL:-https://github.com}/${repo}/releases/download}"
    archive="tdqs-gate-v${version}-${target}.tar.gz"
    dir="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/tdqs-gate-v${version}"
    rm -rf "${dir}"
    mkdir -p "${dir}"
    printf 'tdqs-gate action: downloading %s/v%s/%s\n' "${base_url}" "${version}" "${archive}"
    curl -sSfL --retry 3 -o "${dir}/${archive}" "${base_url}/v${version}/${archive}" ||
        fail "cannot download ${archive} of release v${version} from ${base_url} (no such release yet?); use version: source to build from the Action's source"
    curl -sSfL --retry 3 -o "${dir}/${archive}.sha256" "${base_url}/v${version}/${archive}.sha256" ||
        fail "cannot download ${archive}.sha256 of release v${version}; the archive is not used unchecked"
    expected="$(awk '{print $1; exit}' "${dir}/${archive}.sha256")"
    actual="$(sha256_stdin <"${dir}/${archive}")"
    [[ "${expected}" == "${actual}" ]] ||
        fail "the SHA-256 of ${archive} is ${actual}, but its .sha256 file says ${expected}; the download is not used"
    tar -xzf "${dir}/${archive}" -C "${dir}"
    bin="$(find "${dir}" -type f -name tdqs-gate | head -n 1)"
    [[ -n "${bin}" ]] || fail "${archive} holds no tdqs-gate executable"
    chmod +x "${bin}"
    reported="$("${bin}" --version 2>/dev/null || true)"
    [[ "${reported}" == "tdqs-gate ${version}" ]] ||
        fail "the downloaded tdqs-gate reports '${reported}', expected 'tdqs-gate ${version}'"
    set_output bin "${bin}"
    set_output built false
}

install_claude() {
    local root dir pinned reported
    if [[ -n "${TDQS_GATE_CLAUDE_DIR:-}" ]]; then
        [[ -x "${TDQS_GATE_CLAUDE_DIR}/claude" ]] ||
            fail "TDQS_GATE_CLAUDE_DIR=${TDQS_GATE_CLAUDE_DIR} holds no executable claude"
        set_output claude-dir "${TDQS_GATE_CLAUDE_DIR}"
        return
    fi
    if [[ "${INPUT_JUDGE:-claude-code}" != claude-code ]]; then
        return
    fi
    if [[ "${HAS_TOKEN:-false}" != true ]]; then
        # Without a token the pinned CLI could not log in anyway (a fork's pull request gets no
        # secrets): skip the 250 MB download. A `claude` already logged in on a self-hosted
        # runner's PATH is still used.
        printf 'tdqs-gate action: no token, so the pinned claude is not installed\n'
        return
    fi
    command -v npm >/dev/null 2>&1 ||
        fail "npm is needed to install the pinned Claude Code CLI (judge: claude-code); add actions/setup-node before this step"
    root="$(action_root)"
    dir="${RUNNER_TEMP:-${TMPDIR:-/tmp}}/tdqs-gate-claude"
    mkdir -p "${dir}"
    cp "${root}/tdqs/package.json" "${root}/tdqs/package-lock.json" "${dir}/"
    printf 'tdqs-gate action: npm ci (the pinned Claude Code CLI)\n'
    (cd "${dir}" && npm ci --no-audit --no-fund --loglevel=error) ||
        fail "npm ci of the pinned Claude Code CLI failed (see above)"
    pinned="$(sed -n 's/.*"@anthropic-ai\/claude-code": *"\([^"]*\)".*/\1/p' "${root}/tdqs/package.json" | head -n 1)"
    reported="$("${dir}/node_modules/.bin/claude" --version 2>/dev/null | awk '{print $1}' || true)"
    if [[ "${reported}" != "${pinned}" ]]; then
        fail "the installed claude reports version '${reported}', expected the pinned ${pinned}"
    fi
    set_output claude-dir "${dir}/node_modules/.bin"
}

cmd_install() {
    case "${INSTALL_MODE:-}" in
        given)
            [[ -x "${TDQS_GATE_BIN}" ]] || fail "TDQS_GATE_BIN=${TDQS_GATE_BIN} is not an executable file"
            set_output bin "${TDQS_GATE_BIN}"
            set_output built false
            ;;
        source) install_from_source ;;
        release) install_release ;;
        *) fail "internal: unknown install mode '${INSTALL_MODE:-}'" ;;
    esac
    install_claude
}

# The base the gate compares against: the input, else the pull request's (or merge queue's) base.
resolve_base() {
    local base="${INPUT_BASE:-}"
    if [[ -z "${base}" && "${GITHUB_EVENT_NAME:-}" == merge_group && -f "${GITHUB_EVENT_PATH:-}" ]] &&
        command -v jq >/dev/null 2>&1; then
        base="$(jq -r '.merge_group.base_sha // empty' "${GITHUB_EVENT_PATH}")"
    fi
    if [[ -z "${base}" && -n "${GITHUB_BASE_REF:-}" ]]; then
        base="origin/${GITHUB_BASE_REF}"
    fi
    [[ -n "${base}" ]] ||
        fail "no base revision: this run is not for a pull request (GITHUB_BASE_REF is empty); set the action's base input, e.g. base: origin/main"
    [[ "${base}" != -* ]] || fail "base '${base}' starts with '-'; give a revision such as origin/main"
    printf '%s\n' "${base}"
}

has_commit() {
    git rev-parse --verify --quiet --end-of-options "$1^{commit}" >/dev/null 2>&1
}

cmd_fetch_base() {
    local workdir base refspec err
    workdir="$(working_directory)"
    base="$(resolve_base)"
    cd "${workdir}"
    git rev-parse --git-dir >/dev/null 2>&1 ||
        fail "${workdir} is not a git repository; check out the repository with actions/checkout before this step"
    if has_commit "${base}"; then
        printf 'tdqs-gate action: base %s is present (%s)\n' "${base}" "$(git rev-parse --short "${base}^{commit}")"
    else
        if [[ "${base}" =~ ^origin/(.+)$ ]]; then
            refspec="+refs/heads/${BASH_REMATCH[1]}:refs/remotes/origin/${BASH_REMATCH[1]}"
        elif [[ "${base}" =~ ^[0-9a-f]{40}$ ]]; then
            refspec="${base}"
        elif [[ "${base}" == refs/* ]]; then
            refspec="+${base}:${base}"
        else
            refspec="${base}"
        fi
        printf 'tdqs-gate action: the base %s is not in this checkout; git fetch --no-tags --depth=1 origin %s\n' "${base}" "${refspec}"
        err="$(git fetch --no-tags --depth=1 origin "${refspec}" 2>&1)" ||
            fail "cannot fetch the base ${base} from origin: ${err##*$'\n'} (check that it exists, or check out with fetch-depth: 0 in actions/checkout so the base is already present)"
        has_commit "${base}" ||
            fail "fetched ${refspec} from origin, but ${base} still does not name a commit; use origin/<branch> or a full 40-character commit id"
        printf 'tdqs-gate action: fetched the base %s (%s)\n' "${base}" "$(git rev-parse --short "${base}^{commit}")"
    fi
    set_output base "${base}"
}

# Splits the `args` input into words like a shell would (quotes and backslashes), without
# evaluating anything: xargs does exactly that.
split_args() {
    local text="$1" word
    EXTRA_ARGS=()
    [[ -n "${text//[[:space:]]/}" ]] || return 0
    # A failure inside the process substitution below would go unseen: check the quoting first.
    printf '%s' "${text}" | xargs printf '' 2>/dev/null ||
        fail "the args input cannot be split into words (unbalanced quotes?): ${text}"
    while IFS= read -r -d '' word; do
        EXTRA_ARGS+=("${word}")
    done < <(printf '%s' "${text}" | xargs printf '%s\0')
}

token_variable() {
    case "$1" in
        claude-code) echo CLAUDE_CODE_OAUTH_TOKEN ;;
        anthropic) echo ANTHROPIC_API_KEY ;;
        openai) echo OPENAI_API_KEY ;;
        *) echo "" ;;
    esac
}

# A string field of the report: with jq when it is installed, else from the report's layout (one
# field per line, two spaces deep at the top level); JSON escapes are then left as they are.
report_field() { # file jq-path top-level-name
    if command -v jq >/dev/null 2>&1; then
        jq -r "$2 // empty" "$1" 2>/dev/null || true
    else
        sed -n "s/^  \"$3\": \"\(.*\)\",\{0,1\}\$/\1/p" "$1" | head -n 1
    fi
}

value_of() { # name file: the value of `name=value` written by the binary to its GITHUB_OUTPUT
    sed -n "s/^$1=//p" "$2" | tail -n 1
}

# Flags that say how a server starts: they go to `tdqs-gate export`, not to the scoring run.
# A flag given as `--flag value` takes the next word along.
is_server_flag() {
    case "$1" in
        --command | --server | --timeout | --protocol-version | --era | --capabilities | --repo) return 0 ;;
        *) return 1 ;;
    esac
}

# Splits EXTRA_ARGS into SERVER_ARGS (for both exports), SCORE_ARGS (for the scoring run) and
# HEAD_REV (a `--head REV` given in args: the head export's revision).
split_server_args() {
    SERVER_ARGS=()
    SCORE_ARGS=()
    HEAD_REV=""
    local i=0 word name
    while ((i < ${#EXTRA_ARGS[@]})); do
        word="${EXTRA_ARGS[i]}"
        name="${word%%=*}"
        if [[ "${name}" == --head ]]; then
            if [[ "${word}" == *=* ]]; then
                HEAD_REV="${word#*=}"
            else
                i=$((i + 1))
                HEAD_REV="${EXTRA_ARGS[i]:-}"
            fi
        elif is_server_flag "${name}"; then
            SERVER_ARGS+=("${word}")
            if [[ "${word}" != *=* ]]; then
                i=$((i + 1))
                [[ ${i} -ge ${#EXTRA_ARGS[@]} ]] || SERVER_ARGS+=("${EXTRA_ARGS[i]}")
            fi
        else
            case "${word}" in
                -v | -vv | -vvv | --verbose | -q | --quiet) SERVER_ARGS+=("${word}") ;;
            esac
            SCORE_ARGS+=("${word}")
        fi
        i=$((i + 1))
    done
}

# Runs one export with the pull request's code; the log is shielded from workflow commands.
# EXPORT_ARGS are the server flags of args (without --server when each server is named).
run_export() { # label output-file [--rev=REV] [--server=NAME]
    local label="$1" output="$2" stop_token code
    shift 2
    printf 'tdqs-gate action: tdqs-gate export (%s)' "${label}"
    printf ' %q' "--output=${output}" "$@" "${EXPORT_ARGS[@]}"
    printf '\n'
    stop_token="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    printf '::stop-commands::%s\n' "${stop_token}"
    set +e
    "${EXPORT_BIN}" export "--output=${output}" "$@" "${EXPORT_ARGS[@]}" 2>&1 | tee -a "${EXPORT_LOG}"
    code="${PIPESTATUS[0]}"
    set -e
    printf '::%s::\n' "${stop_token}"
    return "${code}"
}

# `tdqs-gate export --list-servers`: the names of the servers a run covers, one a line, into
# the file given; nothing for a single server. Its messages go to the export log, shielded.
list_servers() { # output-file [--rev=REV] [flags...]
    local output="$1" stop_token code
    shift
    stop_token="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    printf '::stop-commands::%s\n' "${stop_token}"
    set +e
    "${EXPORT_BIN}" export --list-servers "$@" 2>"${output}.err" >"${output}"
    code=$?
    set -e
    cat "${output}.err" >&2
    cat "${output}.err" >>"${EXPORT_LOG}"
    rm -f "${output}.err"
    printf '::%s::\n' "${stop_token}"
    return "${code}"
}

# A server name as the configuration allows it: it becomes a file name and an output name.
valid_server_name() {
    [[ "$1" =~ ^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$ ]]
}

# The last INVALID line the log got after line `from`.
invalid_since() { # from
    tail -n "+$(($1 + 1))" "${EXPORT_LOG}" | grep '^INVALID: ' | tail -n 1 | sed 's/^INVALID: //' || true
}

# The reason a `.failed` note holds: the export's last INVALID line, else its exit code.
failure_note() { # from exit-code
    local reason
    reason="$(invalid_since "$1")"
    printf '%s\n' "${reason:-tdqs-gate export ended with exit code $2; see the log of the step \"Export both sides\"}"
}

# Several servers ([[server]] tables, or several --server): each server of each side is exported
# into its own file, DIR/base/NAME.json and DIR/head/NAME.json. A server whose export fails on a
# side gets DIR/SIDE/NAME.failed with the reason instead, so the scoring step makes that server
# INVALID and still gates the others. A server that the base's own tdqs-gate.toml does not have
# (a server the pull request adds) gets no base file: the scoring step gates it against an empty
# base. Returns non-zero only when the folders could not be made at all.
export_servers() { # dir base names-file
    local dir="$1" base="$2" names_file="$3" name start code base_names=""
    mkdir -p "${dir}/base" "${dir}/head"
    EXPORT_ARGS=()
    local i=0 word
    while ((i < ${#SERVER_ARGS[@]})); do
        word="${SERVER_ARGS[i]}"
        if [[ "${word}" == --server ]]; then
            i=$((i + 1))
        elif [[ "${word}" != --server=* ]]; then
            EXPORT_ARGS+=("${word}")
        fi
        i=$((i + 1))
    done
    # The base revision's own tables: a name missing there is a server new on the head. When
    # the base has no [[server]] tables (or they cannot be read), every server is exported on
    # the base as well, and one that fails there is INVALID.
    if list_servers "${dir}/base-servers" "--rev=${base}"; then
        base_names="$(cat "${dir}/base-servers")"
    fi
    rm -f "${dir}/base-servers"
    local head_rev=()
    [[ -z "${HEAD_REV}" ]] || head_rev=("--rev=${HEAD_REV}")
    while IFS= read -r name; do
        [[ -n "${name}" ]] || continue
        if ! valid_server_name "${name}"; then
            printf 'INVALID: tdqs-gate export --list-servers gave %q, which is not a server name\n' "${name}" >>"${EXPORT_LOG}"
            return 2
        fi
        if [[ -n "${base_names}" ]] && ! grep -qxF -- "${name}" <<<"${base_names}"; then
            printf 'tdqs-gate action: server %s is not in the base revision'"'"'s tdqs-gate.toml: it is gated against an empty base\n' "${name}"
        else
            start="$(wc -l <"${EXPORT_LOG}")"
            code=0
            run_export "base, server ${name}" "${dir}/base/${name}.json" "--rev=${base}" "--server=${name}" || code=$?
            if [[ ${code} != 0 ]]; then
                rm -f "${dir}/base/${name}.json"
                failure_note "${start}" "${code}" >"${dir}/base/${name}.failed"
            fi
        fi
        start="$(wc -l <"${EXPORT_LOG}")"
        code=0
        run_export "head, server ${name}" "${dir}/head/${name}.json" "${head_rev[@]}" "--server=${name}" || code=$?
        if [[ ${code} != 0 ]]; then
            rm -f "${dir}/head/${name}.json"
            failure_note "${start}" "${code}" >"${dir}/head/${name}.failed"
        fi
    done <"${names_file}"
    # A server the base's tables have and the head's lack: the pull request dropped it from
    # tdqs-gate.toml, and it is not left out of the gate silently (the scoring step makes it
    # INVALID), unless the workflow names the servers to gate with --server.
    if [[ -n "${base_names}" && ${#EXPORT_ARGS[@]} == "${#SERVER_ARGS[@]}" ]]; then
        while IFS= read -r name; do
            if [[ -z "${name}" ]] || ! valid_server_name "${name}" || grep -qxF -- "${name}" "${names_file}"; then
                continue
            fi
            printf '%s\n' "server \`${name}\` is in the base revision's tdqs-gate.toml but not in the head's: a server the change removes is not left out of the gate silently; if the removal is intended, name the servers to gate with --server in the workflow's args for this change" >"${dir}/head/${name}.failed"
        done <<<"${base_names}"
    fi
}

# The step that runs pull-request code. It holds no judge token: its environment has none (see
# action.yml), and the gate binary makes itself unreadable to the servers it starts. It never
# fails the job itself; the scoring step turns a failed export into INVALID.
cmd_export() {
    local workdir base dir
    workdir="$(working_directory)"
    base="${BASE:-}"
    [[ -n "${base}" ]] || base="$(resolve_base)"
    EXPORT_BIN="${GATE_BIN:-${TDQS_GATE_BIN:-}}"
    [[ -n "${EXPORT_BIN}" ]] || fail "internal: the install step gave no tdqs-gate executable"
    if ! printf '%s' "${INPUT_ARGS:-}" | xargs printf '' 2>/dev/null; then
        # The scoring step reports the bad args input; nothing runs.
        set_output status bad-args
        return 0
    fi
    split_args "${INPUT_ARGS:-}"
    local word
    for word in "${EXTRA_ARGS[@]}"; do
        case "${word%%=*}" in
            --base-export | --head-export | --base-exports | --head-exports | --check | --calibrate)
                printf 'tdqs-gate action: args has %s: the scoring step reads the given files itself\n' "${word%%=*}"
                set_output status skipped
                return 0
                ;;
        esac
    done
    split_server_args
    dir="$(mktemp -d "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/tdqs-gate-exports.XXXXXX")"
    EXPORT_LOG="${dir}/export.log"
    : >"${EXPORT_LOG}"
    cd "${workdir}"
    local head_rev=()
    [[ -z "${HEAD_REV}" ]] || head_rev=("--rev=${HEAD_REV}")
    set_output dir "${dir}"
    local code=0
    # Several servers? The working tree's tdqs-gate.toml (or several --server) says.
    list_servers "${dir}/servers" "${SERVER_ARGS[@]}" || code=$?
    if [[ ${code} != 0 ]]; then
        set_output status failed
        set_output exit-code "${code}"
        local reason
        reason="$(grep '^INVALID: ' "${EXPORT_LOG}" | tail -n 1 | sed 's/^INVALID: //' || true)"
        set_output reason "${reason:-tdqs-gate export --list-servers failed; see the log of the step \"Export both sides\"}"
        return 0
    fi
    if [[ -s "${dir}/servers" ]]; then
        export_servers "${dir}/exports" "${base}" "${dir}/servers" || code=$?
        if [[ ${code} == 0 ]]; then
            set_output status ok
            set_output base-exports "${dir}/exports/base"
            set_output head-exports "${dir}/exports/head"
        else
            set_output status failed
            set_output exit-code "${code}"
            local reason
            reason="$(grep '^INVALID: ' "${EXPORT_LOG}" | tail -n 1 | sed 's/^INVALID: //' || true)"
            set_output reason "${reason:-tdqs-gate export failed; see the log of the step \"Export both sides\"}"
        fi
        return 0
    fi
    EXPORT_ARGS=("${SERVER_ARGS[@]}")
    run_export base "${dir}/base.json" "--rev=${base}" || code=$?
    if [[ ${code} == 0 ]]; then
        run_export head "${dir}/head.json" "${head_rev[@]}" || code=$?
    fi
    if [[ ${code} == 0 ]]; then
        set_output status ok
        set_output base-export "${dir}/base.json"
        set_output head-export "${dir}/head.json"
    else
        set_output status failed
        set_output exit-code "${code}"
        local reason
        reason="$(grep '^INVALID: ' "${EXPORT_LOG}" | tail -n 1 | sed 's/^INVALID: //' || true)"
        set_output reason "${reason:-tdqs-gate export failed; see the log of the step \"Export both sides\"}"
    fi
}

cmd_gate() {
    local workdir judge base token token_var bin report_dir out_file err_file summary_before=0
    local code decision scored report reason stop_token
    workdir="$(working_directory)"
    judge="${INPUT_JUDGE:-claude-code}"
    base="${BASE:-}"
    [[ -n "${base}" ]] || base="$(resolve_base)"
    bin="${GATE_BIN:-${TDQS_GATE_BIN:-}}"
    [[ -n "${bin}" ]] || fail "internal: the install step gave no tdqs-gate executable"
    report_dir="${INPUT_REPORT_DIR:-.tool-definition-score}"
    [[ -n "${report_dir}" ]] || report_dir=.tool-definition-score
    token="${INPUT_TOKEN:-}"
    # The token stays in this process only as the judge's variable; nothing else inherits it.
    unset INPUT_TOKEN

    split_args "${INPUT_ARGS:-}"
    local argv
    case "${EXPORT_STATUS:-}" in
        ok)
            # Both sides were exported in the step before, without the token: this step starts
            # no server, so no pull-request code ever runs next to the token.
            split_server_args
            if [[ -n "${BASE_EXPORT_DIR:-}" && -n "${HEAD_EXPORT_DIR:-}" ]]; then
                # Several servers: one export file per server and side, one report for all.
                argv=("--base-exports=${BASE_EXPORT_DIR}" "--head-exports=${HEAD_EXPORT_DIR}")
            else
                argv=("--base-export=${BASE_EXPORT}" "--head-export=${HEAD_EXPORT}")
            fi
            EXTRA_ARGS=("${SCORE_ARGS[@]}")
            ;;
        failed)
            argv=()
            ;;
        *)
            argv=("--base=${base}")
            ;;
    esac
    argv+=("--judge=${judge}")
    # `--check REPORT` in args re-checks a report and writes none: `check` refuses --report-dir.
    local arg checking=false
    for arg in "${EXTRA_ARGS[@]}"; do
        [[ "${arg%%=*}" != --check ]] || checking=true
    done
    [[ ${checking} == true ]] || argv+=("--report-dir=${report_dir}")
    [[ -z "${INPUT_CONCURRENCY:-}" ]] || argv+=("--concurrency=${INPUT_CONCURRENCY}")
    case "${INPUT_EVAL:-}" in
        synthetic) argv+=("--eval=synthetic") ;;
        live_model | live-model) argv+=("--eval=live-model") ;;
    esac
    token_var="$(token_variable "${judge}")"
    if [[ -n "${token}" ]]; then
        if [[ -z "${token_var}" ]]; then
            printf 'tdqs-gate action: the %s judge needs no token; the token input is ignored\n' "${judge}"
        else
            export "${token_var}=${token}"
            argv+=("--token-env=${token_var}")
        fi
    fi
    argv+=("${EXTRA_ARGS[@]}")
    if [[ -n "${CLAUDE_DIR:-}" ]]; then
        PATH="${CLAUDE_DIR}:${PATH}"
    fi

    out_file="$(mktemp "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/tdqs-gate-output.XXXXXX")"
    err_file="$(mktemp "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/tdqs-gate-stderr.XXXXXX")"
    if [[ -n "${GITHUB_STEP_SUMMARY:-}" && -f "${GITHUB_STEP_SUMMARY}" ]]; then
        summary_before="$(wc -c <"${GITHUB_STEP_SUMMARY}")"
    fi

    cd "${workdir}"
    printf 'tdqs-gate action: tdqs-gate'
    printf ' %q' "${argv[@]}"
    printf '\n'
    # The log shows text from the pull request (a server's stderr, tool descriptions): stop the
    # runner from reading any of it as a workflow command.
    stop_token="$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')"
    printf '::stop-commands::%s\n' "${stop_token}"
    exec 3>&1
    set +e
    if [[ "${EXPORT_STATUS:-}" == failed ]]; then
        # The export step already said why, in its log; nothing is scored.
        printf 'INVALID: %s\n' "${EXPORT_REASON:-tdqs-gate export failed}" | tee "${err_file}" >&2
        code="${EXPORT_CODE:-2}"
    else
        GITHUB_OUTPUT="${out_file}" "${bin}" "${argv[@]}" 2>&1 1>&3 3>&- | tee "${err_file}" >&2
        code="${PIPESTATUS[0]}"
    fi
    set -e
    exec 3>&-
    printf '::%s::\n' "${stop_token}"

    case "${code}" in
        0) decision=pass ;;
        1) decision=block ;;
        *) decision=invalid ;;
    esac
    scored="$(value_of scored "${out_file}")"
    [[ -n "${scored}" ]] || scored=false
    report="$(value_of report "${out_file}")"
    if [[ -n "${report}" && "${report}" != /* ]]; then
        report="${workdir}/${report}"
    fi
    [[ -z "${report}" || -f "${report}" ]] || report=""
    # Each server's verdict of a run over several servers (names checked again: each becomes an
    # output name), and all of them as one JSON object.
    local decisions="" line server_name server_decision
    while IFS= read -r line; do
        server_name="${line#decision-}"
        server_name="${server_name%%=*}"
        server_decision="${line##*=}"
        valid_server_name "${server_name}" || continue
        set_output "decision-${server_name}" "${server_decision}"
        decisions+="${decisions:+,}\"${server_name}\":\"${server_decision}\""
    done < <(grep -E '^decision-[A-Za-z0-9][A-Za-z0-9._-]{0,63}=(pass|block|invalid)$' "${out_file}" || true)
    set_output decisions "{${decisions}}"
    local recorded
    recorded="$(value_of decision "${out_file}")"
    if [[ -n "${recorded}" && "${recorded}" != "${decision}" ]]; then
        printf 'tdqs-gate action: the report says %s but tdqs-gate exited %s; the exit code decides (%s)\n' \
            "${recorded}" "${code}" "${decision}"
    fi
    rm -f "${out_file}"

    # The verdict line goes to stdout; the report has the same sentence. Without a report, the
    # last INVALID line on stderr says why.
    reason=""
    if [[ -n "${report}" ]]; then
        reason="$(report_field "${report}" .reason reason)"
    fi
    if [[ -z "${reason}" ]]; then
        reason="$(grep '^INVALID: ' "${err_file}" | tail -n 1 | sed 's/^INVALID: //' || true)"
    fi

    local hint=""
    if [[ "${decision}" == invalid && "${judge}" == claude-code && -z "${token}" ]]; then
        local stage=""
        if [[ -n "${report}" ]]; then
            # Without jq the nested field is matched on its own line. Over several servers, a
            # server the judge could not score counts.
            stage="$(report_field "${report}" '.error.stage // ([.servers[]?.report.error.stage | select(. == "judge")] | first)' stage)"
            if [[ -z "${stage}" ]] && ! command -v jq >/dev/null 2>&1; then
                stage="$(sed -n 's/^    "stage": "\(.*\)",\{0,1\}$/\1/p' "${report}" | head -n 1)"
            fi
        fi
        if [[ "${stage}" == judge || (-z "${stage}" && -z "${report}") ]]; then
            hint="No Claude Code token reached this job, and the tool definitions changed, so nothing could score them. A pull request from a fork gets no repository secrets: a maintainer can re-run it from a branch of this repository, or the workflow can use judge: static for forks (offline rules, labelled as not a model's score). Otherwise pass token: \${{ secrets.CLAUDE_CODE_OAUTH_TOKEN }} (a token from claude setup-token)."
        fi
    fi
    if [[ "${code}" != 0 && "${code}" != 1 && "${code}" != 2 ]]; then
        reason="tdqs-gate ended with exit code ${code} (a crash, or killed by a signal or the job's time limit); treated as INVALID${reason:+: ${reason}}"
    fi
    [[ -n "${reason}" ]] || reason="tdqs-gate exited with code ${code}; see the log above"

    local summary_after=0
    if [[ -n "${GITHUB_STEP_SUMMARY:-}" ]]; then
        [[ ! -f "${GITHUB_STEP_SUMMARY}" ]] || summary_after="$(wc -c <"${GITHUB_STEP_SUMMARY}")"
        if [[ "${summary_after}" == "${summary_before}" ]]; then
            # tdqs-gate stopped before it could write its summary: say at least what happened.
            {
                printf '## ⚠️ Tool definition score: INVALID\n\n**%s**\n\n' "${reason}"
                if [[ "${EXPORT_STATUS:-}" == failed ]]; then
                    printf 'tdqs-gate wrote no report; the log of the step "Export both sides" has the details.\n\n'
                else
                    printf 'tdqs-gate wrote no report; the log of the step "Run tdqs-gate" has the details.\n\n'
                fi
            } >>"${GITHUB_STEP_SUMMARY}"
        fi
        if [[ -n "${hint}" ]]; then
            printf '> [!NOTE]\n> %s\n\n' "${hint}" >>"${GITHUB_STEP_SUMMARY}"
        fi
    fi

    case "${decision}" in
        pass) annotate notice "tdqs-gate: PASS" "${reason}" ;;
        block) annotate error "tdqs-gate: BLOCK" "${reason}" ;;
        invalid) annotate error "tdqs-gate: INVALID" "${reason}${hint:+ ${hint}}" ;;
    esac
    rm -f "${err_file}"

    set_output decision "${decision}"
    set_output scored "${scored}"
    set_output report "${report}"
    set_output exit-code "${code}"
}

# --- the sticky comment ------------------------------------------------------------------

api() { # method url [body-file] -> prints the HTTP status; the response body goes to API_RESPONSE
    local method="$1" url="$2" body="${3:-}"
    local args=(-sS -o "${API_RESPONSE}" -w '%{http_code}' -X "${method}"
        -H "Accept: application/vnd.github+json"
        -H "X-GitHub-Api-Version: 2022-11-28"
        -H "Content-Type: application/json"
        -K -)
    [[ -z "${body}" ]] || args+=(--data-binary "@${body}")
    # The token goes to curl on its standard input (-K -), never on its command line.
    # curl prints 000 as the status when no answer came.
    printf 'header = "Authorization: Bearer %s"\n' "${GH_TOKEN}" | curl "${args[@]}" "${url}" || true
}

comment_body() { # markdown-file marker -> JSON body on stdout
    local text
    text="$(cat "$1")"
    if ((${#text} > COMMENT_LIMIT)); then
        text="${text:0:COMMENT_LIMIT}"$'\n\n'"… (cut to fit a comment; the full summary is in the job summary and the tool-definition-score artifact)"
    fi
    local run_url=""
    if [[ -n "${GITHUB_RUN_ID:-}" && -n "${GITHUB_REPOSITORY:-}" ]]; then
        run_url="${GITHUB_SERVER_URL:-https://github.com}/${GITHUB_REPOSITORY}/actions/runs/${GITHUB_RUN_ID}"
    fi
    jq -n --arg marker "$2" --arg text "${text}" --arg run "${run_url}" \
        '{body: ($marker + "\n" + $text + (if $run == "" then "" else "\n\n[Workflow run](" + $run + ")" end))}'
}

cmd_comment() {
    local report_dir markdown pr api_url repo marker status page existing="" body_file
    command -v jq >/dev/null 2>&1 || {
        annotate warning "tdqs-gate" "jq is not installed, so the pull-request comment was not posted"
        return 0
    }
    [[ -n "${GH_TOKEN:-}" ]] || {
        annotate warning "tdqs-gate" "no GitHub token for the pull-request comment (github-token input is empty)"
        return 0
    }
    pr=""
    if [[ -f "${GITHUB_EVENT_PATH:-}" ]]; then
        pr="$(jq -r '.pull_request.number // empty' "${GITHUB_EVENT_PATH}")"
    fi
    if [[ -z "${pr}" ]]; then
        printf 'tdqs-gate action: not a pull request event; no comment\n'
        return 0
    fi
    report_dir="${REPORT_DIR:-}"
    markdown="${report_dir}/tool-definition-score.md"
    local fallback=""
    if [[ ! -f "${markdown}" ]]; then
        fallback="$(mktemp "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/tdqs-gate-comment.XXXXXX")"
        markdown="${fallback}"
        printf '## ⚠️ Tool definition score: INVALID\n\ntdqs-gate wrote no report (exit code %s); see the workflow log.\n' \
            "${EXIT_CODE:-none}" >"${markdown}"
    fi
    api_url="${GITHUB_API_URL:-https://api.github.com}"
    repo="${GITHUB_REPOSITORY:?GITHUB_REPOSITORY is not set}"
    marker="${MARKER_PREFIX}:${ARTIFACT_NAME:-tool-definition-score} -->"
    API_RESPONSE="$(mktemp "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/tdqs-gate-api.XXXXXX")"
    body_file="$(mktemp "${RUNNER_TEMP:-${TMPDIR:-/tmp}}/tdqs-gate-body.XXXXXX")"
    comment_body "${markdown}" "${marker}" >"${body_file}"
    [[ -z "${fallback}" ]] || rm -f "${fallback}"

    page=1
    while [[ -z "${existing}" ]]; do
        status="$(api GET "${api_url}/repos/${repo}/issues/${pr}/comments?per_page=100&page=${page}")"
        if [[ "${status}" != 200 ]]; then
            annotate warning "tdqs-gate" "cannot list the pull request's comments (HTTP ${status}); the summary is in the job summary"
            rm -f "${API_RESPONSE}" "${body_file}"
            return 0
        fi
        existing="$(jq -r --arg m "${marker}" 'map(select((.body // "") | startswith($m))) | .[0].id // empty' "${API_RESPONSE}")"
        [[ "$(jq 'length' "${API_RESPONSE}")" -ge 100 ]] || break
        # 5,000 comments is far beyond a real pull request; stop rather than page forever.
        ((page < 50)) || break
        page=$((page + 1))
    done

    if [[ -n "${existing}" ]]; then
        status="$(api PATCH "${api_url}/repos/${repo}/issues/comments/${existing}" "${body_file}")"
        if [[ "${status}" == 200 ]]; then
            printf 'tdqs-gate action: updated comment %s\n' "${existing}"
            rm -f "${API_RESPONSE}" "${body_file}"
            return 0
        fi
        printf 'tdqs-gate action: cannot update comment %s (HTTP %s); posting a new one\n' "${existing}" "${status}"
    fi
    status="$(api POST "${api_url}/repos/${repo}/issues/${pr}/comments" "${body_file}")"
    if [[ "${status}" == 201 ]]; then
        printf 'tdqs-gate action: posted comment %s\n' "$(jq -r '.id // empty' "${API_RESPONSE}")"
    else
        annotate warning "tdqs-gate" "cannot post the pull-request comment (HTTP ${status}). The job needs permissions: pull-requests: write, and a pull request from a fork only gets a read-only token; the summary is in the job summary"
    fi
    rm -f "${API_RESPONSE}" "${body_file}"
}

cmd_finish() {
    local code="${EXIT_CODE:-}"
    if [[ -z "${code}" ]]; then
        annotate error "tdqs-gate: INVALID" "tdqs-gate did not run: an earlier step of the Action failed (see its log); nothing was decided"
        exit 2
    fi
    case "${code}" in
        0)
            printf 'tdqs-gate: PASS\n'
            exit 0
            ;;
        1)
            printf 'tdqs-gate: BLOCK (exit 1): the tool definitions would lower the mean TDQS; see the job summary\n' >&2
            exit 1
            ;;
        2)
            printf 'tdqs-gate: INVALID (exit 2): nothing was decided; see the job summary and the log of the gate step\n' >&2
            exit 2
            ;;
        *)
            printf 'tdqs-gate: INVALID: tdqs-gate ended with exit code %s, which is neither PASS (0) nor BLOCK (1)\n' "${code}" >&2
            exit 2
            ;;
    esac
}

main() {
    local command="${1:-}"
    case "${command}" in
        prepare) cmd_prepare ;;
        install) cmd_install ;;
        fetch-base) cmd_fetch_base ;;
        export) cmd_export ;;
        gate) cmd_gate ;;
        comment) cmd_comment ;;
        finish) cmd_finish ;;
        *)
            printf 'usage: %s prepare|install|fetch-base|export|gate|comment|finish\n' "$0" >&2
            exit 2
            ;;
    esac
}

main "$@"
