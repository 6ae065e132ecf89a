//! The export client against the Rust fixture server (every fault mode) and against real MCP
//! servers installed by `tests/setup/real-servers.sh`.
//!
//! Besides the result or the error, every test checks that nothing is left running: the fake
//! writes its pid (which is also its process group id) and its grandchild's pid to files, and
//! `/proc` is scanned for live members of the group afterwards.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tdqs_core::error::Error;
use tdqs_core::export::ExportLimits;
use tdqs_core::export::{Era, ProbeProfile, RawListing};
use tdqs_gate::export::client::list_tools;
use tdqs_gate::export::{LaunchSpec, SetupCommand};

const FAKE: &str = env!("CARGO_BIN_EXE_fake-mcp-server");

// ---------------------------------------------------------------------------------------------
// Harness

/// A temporary working directory for one test, with the paths the fake writes into.
struct Case {
    dir: tempfile::TempDir,
}

impl Case {
    fn new() -> Self {
        Case {
            dir: tempfile::tempdir().expect("temp dir"),
        }
    }

    fn path(&self, name: &str) -> PathBuf {
        self.dir.path().join(name)
    }

    fn arg(&self, name: &str) -> String {
        self.path(name).display().to_string()
    }

    /// A spec starting the fake with `args` plus `--pid-file` and `--record`.
    fn fake(&self, args: &[&str]) -> LaunchSpec {
        let mut all: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        all.extend([
            "--pid-file".into(),
            self.arg("server.pid"),
            "--record".into(),
            self.arg("received.jsonl"),
        ]);
        LaunchSpec {
            program: FAKE.to_string(),
            args: all,
            cwd: self.dir.path().to_path_buf(),
            env: vec![
                ("PATH".into(), "/usr/bin:/bin".into()),
                ("FAKE_MARKER".into(), "present".into()),
            ],
            setup: Vec::new(),
            origin: "the export tests".into(),
            secret_env: Vec::new(),
            limits: quick_limits(),
            temp_home: None,
            reproduce_env: Vec::new(),
            http: None,
            sandbox: None,
        }
    }

    fn server_pid(&self) -> i32 {
        read_pid(&self.path("server.pid"))
    }

    /// Every message the fake received, parsed.
    fn received(&self) -> Vec<Value> {
        std::fs::read_to_string(self.path("received.jsonl"))
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).expect("the client sent a non-JSON line"))
            .collect()
    }

    fn received_methods(&self) -> Vec<String> {
        self.received()
            .iter()
            .filter_map(|m| m.get("method").and_then(Value::as_str).map(str::to_string))
            .collect()
    }
}

fn quick_limits() -> ExportLimits {
    ExportLimits {
        startup_timeout: Duration::from_secs(10),
        request_timeout: Duration::from_secs(10),
        setup_timeout: Duration::from_secs(10),
        shutdown_grace: Duration::from_millis(300),
        ..ExportLimits::default()
    }
}

fn read_pid(path: &Path) -> i32 {
    let text = std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} was not written: {e}", path.display()));
    text.trim().parse().expect("a pid")
}

fn run(spec: &LaunchSpec) -> Result<RawListing, Error> {
    run_with(spec, &ProbeProfile::default())
}

fn run_with(spec: &LaunchSpec, profile: &ProbeProfile) -> Result<RawListing, Error> {
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime");
    runtime.block_on(list_tools(spec, profile))
}

fn profile(era: Era) -> ProbeProfile {
    ProbeProfile {
        era,
        ..ProbeProfile::default()
    }
}

/// `(pgrp, state)` of a process from `/proc/PID/stat`, or `None` if it is gone.
fn proc_stat(pid: i32) -> Option<(i32, char)> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name is in parentheses and may contain spaces: parse after the last ')'.
    let rest = &stat[stat.rfind(')')? + 2..];
    let mut fields = rest.split_whitespace();
    let state = fields.next()?.chars().next()?;
    let _ppid = fields.next()?;
    let pgrp = fields.next()?.parse().ok()?;
    Some((pgrp, state))
}

/// A process is dead when it is gone or a zombie (this sandbox's init does not reap orphans).
fn is_alive(pid: i32) -> bool {
    matches!(proc_stat(pid), Some((_, state)) if state != 'Z')
}

fn live_group_members(pgid: i32) -> Vec<i32> {
    std::fs::read_dir("/proc")
        .expect("/proc")
        .filter_map(|e| e.ok()?.file_name().to_str()?.parse::<i32>().ok())
        .filter(
            |&pid| matches!(proc_stat(pid), Some((pgrp, state)) if pgrp == pgid && state != 'Z'),
        )
        .collect()
}

/// Asserts that the group and the given extra pids are all dead. Signals are asynchronous, so
/// give the kernel a moment before declaring a leak.
fn assert_nothing_left(pgid: i32, extra: &[i32]) {
    let start = Instant::now();
    loop {
        let members = live_group_members(pgid);
        let extras: Vec<i32> = extra.iter().copied().filter(|&p| is_alive(p)).collect();
        if members.is_empty() && extras.is_empty() {
            return;
        }
        if start.elapsed() > Duration::from_secs(30) {
            panic!("processes left running: group {pgid} members {members:?}, others {extras:?}");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

fn names(listing: &RawListing) -> Vec<String> {
    listing
        .tools
        .iter()
        .map(|t| {
            t.get("name")
                .and_then(Value::as_str)
                .unwrap_or("<none>")
                .to_string()
        })
        .collect()
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/export")
        .join(name)
}

fn expect_err(result: Result<RawListing, Error>) -> Error {
    match result {
        Ok(listing) => panic!("expected an error, got a listing: {listing:?}"),
        Err(error) => error,
    }
}

/// The rendered error must name the cause and carry advice, the stderr tail and a reproduce line.
fn assert_error(error: &Error, cause_has: &[&str], advice_has: &str) {
    let rendered = error.render();
    for needle in cause_has {
        assert!(
            error.cause.contains(needle),
            "cause should mention {needle:?}:\n{rendered}"
        );
    }
    let advice = error.advice.as_deref().unwrap_or("");
    assert!(
        advice.contains(advice_has),
        "advice should mention {advice_has:?}:\n{rendered}"
    );
    assert!(
        error
            .details
            .iter()
            .any(|(label, _)| label.contains("stderr")),
        "no stderr detail:\n{rendered}"
    );
    assert!(
        error
            .reproduce
            .as_deref()
            .is_some_and(|r| r.contains("fake-mcp-server")),
        "no reproduce line:\n{rendered}"
    );
}

// ---------------------------------------------------------------------------------------------
// Normal operation

#[test]
fn normal_server_tools_are_kept_exactly_as_sent() {
    let case = Case::new();
    let tools_file = fixture("odd-tools.json");
    let spec = case.fake(&["--mode", "normal", "--tools", tools_file.to_str().unwrap()]);
    let listing = run(&spec).expect("listing");

    let expected: Value =
        serde_json::from_str(&std::fs::read_to_string(&tools_file).unwrap()).unwrap();
    // Compared as text so key order counts, not only content.
    assert_eq!(
        serde_json::to_string(&listing.tools).unwrap(),
        serde_json::to_string(&expected).unwrap()
    );
    // The nameless tool and both tools called `alpha` are kept for the digest stage to judge.
    assert_eq!(names(&listing), ["zeta", "alpha", "<none>", "alpha"]);
    assert_eq!(listing.server_name.as_deref(), Some("fake-mcp-server"));
    assert_eq!(listing.server_version.as_deref(), Some("1.2.3"));
    assert_eq!(listing.protocol_version, "2025-11-25");
    assert_eq!(listing.era, Era::Legacy);
    assert_eq!(
        listing.instructions.as_deref(),
        Some("Fake server for the tdqs-gate tests.")
    );
    assert!(listing.warnings.is_empty(), "{:?}", listing.warnings);
    assert_nothing_left(case.server_pid(), &[]);
}

#[test]
fn handshake_sends_the_probe_profile_and_never_calls_a_tool() {
    let case = Case::new();
    let profile = ProbeProfile {
        protocol_version: "2025-06-18".into(),
        era: Era::Legacy,
        capabilities: json!({"roots": {"listChanged": false}}),
        client_info: json!({"name": "probe", "version": "9"}),
    };
    let listing = run_with(&case.fake(&["--mode", "normal"]), &profile).expect("listing");
    assert_eq!(listing.protocol_version, "2025-06-18");

    let received = case.received();
    assert_eq!(
        case.received_methods(),
        ["initialize", "notifications/initialized", "tools/list"]
    );
    assert_eq!(
        received[0]["params"],
        json!({
            "protocolVersion": "2025-06-18",
            "capabilities": {"roots": {"listChanged": false}},
            "clientInfo": {"name": "probe", "version": "9"}
        })
    );
    assert!(received.iter().all(|m| m["jsonrpc"] == "2.0"));
    // The first page is requested without params, as hosts do.
    assert!(received[2].get("params").is_none());
}

#[test]
fn built_in_tools_keep_unknown_fields_nulls_and_key_order() {
    let case = Case::new();
    let listing = run(&case.fake(&["--mode", "normal"])).expect("listing");
    assert_eq!(
        names(&listing),
        ["search_issues", "close_issue", "ping_tracker"]
    );
    let search = &listing.tools[0];
    assert_eq!(search["execution"], json!({"taskSupport": "forbidden"}));
    assert_eq!(search["annotations"]["futureHint"], json!("kept"));
    let close = &listing.tools[1];
    let keys: Vec<&str> = close
        .as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect();
    assert_eq!(
        keys,
        [
            "description",
            "name",
            "inputSchema",
            "outputSchema",
            "annotations",
            "x-vendor"
        ]
    );
    assert_eq!(close["x-vendor"]["big"], json!(12345678901234567890u64));
    assert!(listing.tools[2]
        .as_object()
        .unwrap()
        .get("description")
        .is_some_and(Value::is_null));
}

#[test]
fn paginated_server_is_followed_to_the_last_page() {
    let case = Case::new();
    let tools: Vec<Value> = (1..=7)
        .map(|i| json!({"name": format!("tool_{i}"), "inputSchema": {"type": "object"}}))
        .collect();
    std::fs::write(case.path("tools.json"), Value::Array(tools).to_string()).unwrap();
    let listing = run(&case.fake(&[
        "--mode",
        "paginated",
        "--page-size",
        "2",
        "--tools",
        &case.arg("tools.json"),
    ]))
    .expect("listing");
    assert_eq!(
        names(&listing),
        ["tool_1", "tool_2", "tool_3", "tool_4", "tool_5", "tool_6", "tool_7"]
    );
    let cursors: Vec<Value> = case
        .received()
        .iter()
        .filter(|m| m["method"] == "tools/list")
        .map(|m| m.pointer("/params/cursor").cloned().unwrap_or(Value::Null))
        .collect();
    assert_eq!(
        cursors,
        [
            json!(null),
            json!("page-2"),
            json!("page-3"),
            json!("page-4")
        ]
    );
    assert_nothing_left(case.server_pid(), &[]);
}

#[test]
fn slow_starting_server_is_waited_for() {
    let case = Case::new();
    let started = Instant::now();
    let listing =
        run(&case.fake(&["--mode", "slow-start", "--delay-ms", "1200"])).expect("listing");
    assert!(started.elapsed() >= Duration::from_millis(1200));
    assert_eq!(listing.tools.len(), 3);
}

#[test]
fn server_requests_are_answered_while_listing() {
    // The fake checks the replies (`{}` for ping, -32601 for roots/list) and exits with an
    // error on a wrong one, which would fail the listing.
    let case = Case::new();
    let listing = run(&case.fake(&["--mode", "normal", "--server-requests", "--list-changed"]))
        .expect("listing");
    assert_eq!(listing.tools.len(), 3);
    assert!(
        listing.warnings.iter().any(|w| w.contains("list_changed")),
        "{:?}",
        listing.warnings
    );
}

#[test]
fn known_older_versions_are_accepted_and_unknown_ones_warned_about() {
    let case = Case::new();
    let old = ProbeProfile {
        protocol_version: "2024-11-05".into(),
        ..ProbeProfile::default()
    };
    let listing = run_with(&case.fake(&["--mode", "normal"]), &old).expect("listing");
    assert_eq!(listing.protocol_version, "2024-11-05");
    assert!(listing.warnings.is_empty(), "{:?}", listing.warnings);

    let case = Case::new();
    let listing =
        run(&case.fake(&["--mode", "normal", "--answer-version", "2099-01-01"])).expect("listing");
    assert_eq!(listing.protocol_version, "2099-01-01");
    assert!(
        listing.warnings.iter().any(|w| w.contains("2099-01-01")),
        "{:?}",
        listing.warnings
    );
}

#[test]
fn child_gets_exactly_the_spec_environment_and_cwd() {
    let case = Case::new();
    // The test process has HOME, CARGO_* and more: none of it may reach the server.
    let spec = case.fake(&["--mode", "normal", "--env-dump", &case.arg("env.json")]);
    run(&spec).expect("listing");
    let dump: Value =
        serde_json::from_str(&std::fs::read_to_string(case.path("env.json")).unwrap()).unwrap();
    assert_eq!(
        dump["env"],
        json!({"FAKE_MARKER": "present", "PATH": "/usr/bin:/bin"})
    );
    let cwd = std::fs::canonicalize(case.dir.path()).unwrap();
    assert_eq!(
        std::fs::canonicalize(dump["cwd"].as_str().unwrap()).unwrap(),
        cwd
    );
}

// ---------------------------------------------------------------------------------------------
// Non-message lines on stdout

#[test]
fn junk_on_stdout_is_skipped_counted_and_sampled() {
    let case = Case::new();
    let listing = run(&case.fake(&["--mode", "junk-stdout"])).expect("listing");
    assert_eq!(
        names(&listing),
        ["search_issues", "close_issue", "ping_tracker"]
    );
    // The banner, `42`, `{"not": "a message"}` and the log line; blank lines, `\r\n`, the BOM,
    // the notification and the stray response are not junk.
    assert!(
        listing.warnings[0].contains("wrote 4 line(s)"),
        "{:?}",
        listing.warnings
    );
    let samples: Vec<&String> = listing
        .warnings
        .iter()
        .filter(|w| w.starts_with("skipped stdout line: "))
        .collect();
    assert_eq!(samples.len(), 3, "{:?}", listing.warnings);
    assert!(samples[0].contains("Fake MCP server 1.2.3 starting"));
    assert!(samples[1].ends_with("42"));
}

#[test]
fn junk_lines_are_shown_when_the_server_then_fails() {
    let case = Case::new();
    let error = expect_err(run(&case.fake(&[
        "--mode",
        "junk-stdout",
        "--error-on",
        "tools/list",
    ])));
    let rendered = error.render();
    assert!(
        rendered.contains("non-JSON-RPC lines on stdout (4 skipped)"),
        "{rendered}"
    );
    assert!(rendered.contains("starting on stdio"), "{rendered}");
}

// ---------------------------------------------------------------------------------------------
// Faults

#[test]
fn hanging_server_times_out_with_advice_and_is_stopped() {
    let case = Case::new();
    let mut spec = case.fake(&["--mode", "hang", "--stderr", "waiting for a license key"]);
    spec.limits.startup_timeout = Duration::from_millis(800);
    let started = Instant::now();
    let error = expect_err(run(&spec));
    // A bound for a loaded machine; without the limit the run would never end.
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_error(
        &error,
        &["did not answer", "`initialize`", "startup timeout"],
        "stdio",
    );
    assert!(error.render().contains("waiting for a license key"));
    assert_nothing_left(case.server_pid(), &[]);
}

#[test]
fn server_hanging_on_tools_list_hits_the_request_timeout() {
    let case = Case::new();
    let mut spec = case.fake(&["--mode", "hang", "--hang-on", "tools/list"]);
    spec.limits.request_timeout = Duration::from_millis(600);
    let error = expect_err(run(&spec));
    assert_error(
        &error,
        &["`tools/list` (page 1)", "request timeout"],
        "request timeout",
    );
    assert_nothing_left(case.server_pid(), &[]);
}

#[test]
fn crashing_server_reports_exit_status_and_stderr() {
    let case = Case::new();
    let error = expect_err(run(&case.fake(&["--mode", "crash"])));
    assert_error(&error, &["exited with status 3", "`initialize`"], "setup");
    let rendered = error.render();
    assert!(
        rendered.contains("fatal: could not open database /nonexistent/fake.db"),
        "{rendered}"
    );
    assert_nothing_left(case.server_pid(), &[]);
}

#[test]
fn server_killed_by_a_signal_is_reported_as_such() {
    let case = Case::new();
    let error = expect_err(run(&case.fake(&[
        "--mode",
        "crash",
        "--crash-on",
        "tools/list",
        "--crash-signal",
    ])));
    assert_error(
        &error,
        &["killed by signal 11 (SIGSEGV)", "tools/list"],
        "stderr",
    );
}

#[test]
fn server_exiting_cleanly_before_answering_is_invalid() {
    let case = Case::new();
    let error = expect_err(run(&case.fake(&["--mode", "crash", "--exit-code", "0"])));
    assert_error(
        &error,
        &["exited with status 0"],
        "crashed or could not start",
    );
}

#[test]
fn jsonrpc_error_is_invalid_and_shows_code_message_and_data() {
    let case = Case::new();
    let error = expect_err(run(&case.fake(&["--mode", "jsonrpc-error"])));
    assert_error(
        &error,
        &[
            "JSON-RPC error -32603",
            "internal error: tool registry unavailable",
        ],
        "fix the server",
    );
    assert!(error.render().contains("retryAfter"));
}

#[test]
fn looping_cursor_is_caught_on_the_second_sighting() {
    let case = Case::new();
    let started = Instant::now();
    let error = expect_err(run(&case.fake(&["--mode", "looping-cursor"])));
    // A bound for a loaded machine; without the limit the run would never end.
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_error(&error, &["cursor \"same\" again on page 2"], "pagination");
    let pages = case
        .received_methods()
        .iter()
        .filter(|m| *m == "tools/list")
        .count();
    assert_eq!(pages, 2);
}

#[test]
fn page_and_tool_limits_are_enforced() {
    let case = Case::new();
    let mut spec = case.fake(&["--mode", "paginated", "--page-size", "1"]);
    spec.limits.max_pages = 2;
    let error = expect_err(run(&spec));
    assert_error(&error, &["more than 2 pages"], "page limit");

    let case = Case::new();
    let mut spec = case.fake(&["--mode", "normal"]);
    spec.limits.max_tools = 2;
    let error = expect_err(run(&spec));
    assert_error(&error, &["more than 2 tools"], "tool limit");
}

#[test]
fn duplicate_names_are_all_kept() {
    let case = Case::new();
    let listing = run(&case.fake(&["--mode", "duplicate-names"])).expect("listing");
    assert_eq!(
        names(&listing),
        [
            "search_issues",
            "close_issue",
            "ping_tracker",
            "search_issues"
        ]
    );
    assert_ne!(listing.tools[0], listing.tools[3]);
}

#[test]
fn oversize_response_fails_fast_and_a_raised_limit_accepts_it() {
    let case = Case::new();
    let mut spec = case.fake(&["--mode", "huge-output", "--huge-bytes", "1048576"]);
    spec.limits.max_message_bytes = 256 * 1024;
    let error = expect_err(run(&spec));
    assert_error(&error, &["longer than the limit of 262144 bytes"], "raise");
    assert_nothing_left(case.server_pid(), &[]);

    let case = Case::new();
    let mut spec = case.fake(&["--mode", "huge-output", "--huge-bytes", "1048576"]);
    spec.limits.max_message_bytes = 4 * 1024 * 1024;
    let listing = run(&spec).expect("listing");
    assert_eq!(
        listing.tools[3]["description"].as_str().map(str::len),
        Some(1 << 20)
    );
}

#[test]
fn endless_line_without_newline_fails_as_soon_as_the_limit_is_crossed() {
    let case = Case::new();
    let mut spec = case.fake(&["--mode", "huge-output", "--no-newline"]);
    spec.limits.max_message_bytes = 1024 * 1024;
    let started = Instant::now();
    let error = expect_err(run(&spec));
    // A bound for a loaded machine; without the limit the run would never end.
    assert!(started.elapsed() < Duration::from_secs(30));
    assert_error(&error, &["longer than the limit"], "stderr");
    assert_nothing_left(case.server_pid(), &[]);
}

#[test]
fn malformed_answers_are_invalid() {
    for (kind, cause) in [
        ("tools", "`tools` is an object, not an array"),
        ("cursor", "`nextCursor` is a number, not a string"),
        ("version", "`protocolVersion` is a number, not a string"),
        ("result", "the result is a string, not an object"),
    ] {
        let case = Case::new();
        let error = expect_err(run(&case.fake(&[
            "--mode",
            "malformed",
            "--malformed",
            kind,
        ])));
        assert_error(&error, &["malformed", cause], "MCP schema");
        assert_nothing_left(case.server_pid(), &[]);
    }
}

#[test]
fn error_without_a_request_id_is_taken_as_the_answer() {
    let case = Case::new();
    let error = expect_err(run(&case.fake(&[
        "--mode",
        "malformed",
        "--malformed",
        "null-id",
    ])));
    assert_error(
        &error,
        &["`tools/list` (page 1)", "-32700", "without a request id"],
        "fix the server",
    );
}

#[test]
fn grandchild_and_term_ignoring_server_are_killed_after_a_listing() {
    let case = Case::new();
    let spec = case.fake(&[
        "--mode",
        "grandchild-ignores-term",
        "--grandchild-pid-file",
        &case.arg("grandchild.pid"),
    ]);
    let listing = run(&spec).expect("listing");
    assert_eq!(listing.tools.len(), 3);
    assert!(
        listing.warnings.iter().any(|w| w.contains("SIGKILL")),
        "{:?}",
        listing.warnings
    );
    let grandchild = read_pid(&case.path("grandchild.pid"));
    assert_eq!(
        proc_stat(grandchild)
            .map(|(pgrp, _)| pgrp)
            .unwrap_or(case.server_pid()),
        case.server_pid()
    );
    assert_nothing_left(case.server_pid(), &[grandchild]);
}

#[test]
fn grandchild_and_term_ignoring_server_are_killed_after_a_timeout() {
    let case = Case::new();
    let mut spec = case.fake(&[
        "--mode",
        "grandchild-ignores-term",
        "--hang-on",
        "tools/list",
        "--grandchild-pid-file",
        &case.arg("grandchild.pid"),
    ]);
    spec.limits.request_timeout = Duration::from_millis(500);
    let error = expect_err(run(&spec));
    assert_error(&error, &["did not answer"], "request timeout");
    assert_nothing_left(case.server_pid(), &[read_pid(&case.path("grandchild.pid"))]);
}

#[test]
fn dropping_the_export_future_kills_the_whole_group() {
    // What happens on Ctrl-C: the runtime drops the future mid-request.
    let case = Case::new();
    let spec = case.fake(&[
        "--mode",
        "grandchild-ignores-term",
        "--hang-on",
        "tools/list",
        "--grandchild-pid-file",
        &case.arg("grandchild.pid"),
    ]);
    let runtime = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    let profile = ProbeProfile::default();
    let server_is_hanging = async {
        while !case.received_methods().iter().any(|m| m == "tools/list") {
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    };
    let finished_first = runtime.block_on(async {
        tokio::select! {
            _ = list_tools(&spec, &profile) => true,
            () = server_is_hanging => false,
        }
    });
    assert!(!finished_first, "the export should still have been waiting");
    drop(runtime);
    assert_nothing_left(case.server_pid(), &[read_pid(&case.path("grandchild.pid"))]);
}

#[test]
fn secrets_in_stderr_are_redacted() {
    let case = Case::new();
    let mut spec = case.fake(&[
        "--mode",
        "crash",
        "--stderr",
        "auth failed for token=tok-0123456789abcdef",
    ]);
    spec.env
        .push(("API_TOKEN".into(), "tok-0123456789abcdef".into()));
    spec.secret_env.push("API_TOKEN".into());
    let rendered = expect_err(run(&spec)).render();
    assert!(!rendered.contains("tok-0123456789abcdef"), "{rendered}");
    assert!(rendered.contains("token=[REDACTED]"), "{rendered}");
}

#[test]
fn missing_program_names_the_path_problem() {
    let case = Case::new();
    let mut spec = case.fake(&[]);
    spec.program = "no-such-mcp-server-xyz".into();
    let error = expect_err(run(&spec));
    assert!(
        error.cause.contains("could not start"),
        "{}",
        error.render()
    );
    assert!(error.advice.as_deref().unwrap().contains("PATH"));
}

// ---------------------------------------------------------------------------------------------
// Protocol eras

#[test]
fn modern_era_uses_discover_and_meta_on_every_request() {
    let case = Case::new();
    let listing =
        run_with(&case.fake(&["--mode", "modern"]), &profile(Era::Modern)).expect("listing");
    assert_eq!(listing.era, Era::Modern);
    assert_eq!(listing.protocol_version, "2026-07-28");
    assert_eq!(listing.server_name.as_deref(), Some("fake-modern"));
    assert_eq!(listing.server_version.as_deref(), Some("2.0.0"));
    assert_eq!(listing.instructions.as_deref(), Some("Modern fake."));
    assert_eq!(listing.tools.len(), 3);
    let received = case.received();
    assert_eq!(case.received_methods(), ["server/discover", "tools/list"]);
    for message in &received {
        let meta = &message["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientCapabilities"],
            json!({})
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"],
            json!({"name": "tdqs-gate", "version": "1"})
        );
    }
}

#[test]
fn auto_era_goes_modern_with_a_modern_server_and_legacy_otherwise() {
    let case = Case::new();
    let listing =
        run_with(&case.fake(&["--mode", "modern"]), &profile(Era::Auto)).expect("listing");
    assert_eq!(listing.era, Era::Modern);

    let case = Case::new();
    let listing =
        run_with(&case.fake(&["--mode", "normal"]), &profile(Era::Auto)).expect("listing");
    assert_eq!(listing.era, Era::Legacy);
    assert_eq!(listing.protocol_version, "2025-11-25");
    assert_eq!(
        case.received_methods(),
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list"
        ]
    );
}

#[test]
fn auto_era_falls_back_when_discover_is_never_answered() {
    let case = Case::new();
    let mut spec = case.fake(&["--mode", "normal", "--discover-silent"]);
    // The discover probe gets at most half of the startup budget.
    spec.limits.startup_timeout = Duration::from_secs(4);
    let started = Instant::now();
    let listing = run_with(&spec, &profile(Era::Auto)).expect("listing");
    assert_eq!(listing.era, Era::Legacy);
    assert!(started.elapsed() >= Duration::from_secs(2));
}

#[test]
fn legacy_era_with_a_dual_era_server_uses_initialize() {
    let case = Case::new();
    let listing =
        run_with(&case.fake(&["--mode", "modern"]), &profile(Era::Legacy)).expect("listing");
    assert_eq!(listing.era, Era::Legacy);
    assert_eq!(listing.server_name.as_deref(), Some("fake-mcp-server"));
}

#[test]
fn modern_era_against_a_legacy_server_is_invalid() {
    let case = Case::new();
    let error = expect_err(run_with(
        &case.fake(&["--mode", "normal"]),
        &profile(Era::Modern),
    ));
    assert_error(
        &error,
        &["`server/discover`", "-32601"],
        "does not implement",
    );
}

// ---------------------------------------------------------------------------------------------
// Setup commands

fn sh(script: &str) -> SetupCommand {
    SetupCommand {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), script.into()],
        origin: None,
    }
}

#[test]
fn setup_commands_run_in_the_tree_before_the_server() {
    let case = Case::new();
    let mut spec = case.fake(&["--mode", "normal"]);
    spec.setup = vec![
        sh("echo built > build.stamp"),
        sh("test -f build.stamp && echo \"$FAKE_MARKER\" > env.stamp"),
    ];
    run(&spec).expect("listing");
    assert_eq!(
        std::fs::read_to_string(case.path("env.stamp")).unwrap(),
        "present\n"
    );
}

#[test]
fn failing_setup_command_shows_its_output_and_starts_no_server() {
    let case = Case::new();
    let mut spec = case.fake(&["--mode", "normal"]);
    spec.setup = vec![sh(
        "echo compiling; echo 'error: missing header foo.h' >&2; exit 4",
    )];
    let error = expect_err(run(&spec));
    let rendered = error.render();
    assert!(error.cause.contains("exited with status 4"), "{rendered}");
    assert!(
        rendered.contains("error: missing header foo.h"),
        "{rendered}"
    );
    assert!(rendered.contains("compiling"), "{rendered}");
    assert!(error.reproduce.as_deref().unwrap().contains("exit 4"));
    assert!(
        !case.path("server.pid").exists(),
        "the server must not start"
    );
}

#[test]
fn setup_command_timeout_kills_it_and_its_children() {
    let case = Case::new();
    let mut spec = case.fake(&["--mode", "normal"]);
    spec.limits.setup_timeout = Duration::from_millis(500);
    spec.setup = vec![sh(
        "trap '' TERM; sleep 60 & echo $! > bg.pid; echo $$ > setup.pid; wait",
    )];
    let error = expect_err(run(&spec));
    assert!(
        error.cause.contains("did not finish within 500ms"),
        "{}",
        error.render()
    );
    let setup_pid = read_pid(&case.path("setup.pid"));
    assert_nothing_left(setup_pid, &[read_pid(&case.path("bg.pid"))]);
}

// ---------------------------------------------------------------------------------------------
// Real servers (installed by tests/setup/real-servers.sh)

/// The tools server-everything 2026.8.31 lists to a client that declares no capabilities.
pub(crate) const EVERYTHING_TOOLS: [&str; 13] = [
    "echo",
    "get-annotated-message",
    "get-env",
    "get-resource-links",
    "get-resource-reference",
    "get-structured-content",
    "get-sum",
    "get-tiny-image",
    "gzip-file-as-resource",
    "toggle-simulated-logging",
    "toggle-subscriber-updates",
    "trigger-long-running-operation",
    "simulate-research-query",
];

/// The tools mcp-server-git 2026.10.19 lists.
pub(crate) const GIT_TOOLS: [&str; 12] = [
    "git_status",
    "git_diff_unstaged",
    "git_diff_staged",
    "git_diff",
    "git_commit",
    "git_add",
    "git_reset",
    "git_log",
    "git_create_branch",
    "git_checkout",
    "git_show",
    "git_branch",
];

/// The installs of `tests/setup/*.sh`, with links resolved: a cache linked from elsewhere (a
/// checkout under /tmp sharing the installs of one outside it) is named where it really is, so
/// a sandboxed server can run from it. The installs cannot be copied into a fixture tree (a
/// virtual environment names its own folder), so a cache that really lies under /tmp or a home
/// folder stays hidden from sandboxed servers.
pub(crate) fn cache_dir() -> PathBuf {
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join(".cache");
    path.canonicalize().unwrap_or(path)
}

/// The installed file, or `None` (skip) when it is missing; with TDQS_GATE_REQUIRE_EXTERNAL=1 a
/// missing install fails the test instead.
pub(crate) fn installed(relative: &str) -> Option<PathBuf> {
    let path = cache_dir().join(relative);
    if path.exists() {
        return Some(path);
    }
    let message = format!(
        "{} is not installed; run `bash tests/setup/real-servers.sh`",
        path.display()
    );
    crate::support::skips::skip(&message);
    None
}

fn real_spec(case: &Case, program: &Path, args: &[&str]) -> LaunchSpec {
    let home = case.path("home");
    std::fs::create_dir_all(&home).unwrap();
    LaunchSpec {
        program: program.display().to_string(),
        args: args.iter().map(|s| s.to_string()).collect(),
        cwd: case.dir.path().to_path_buf(),
        env: vec![
            (
                "PATH".into(),
                std::env::var("PATH").unwrap_or_else(|_| "/usr/bin:/bin".into()),
            ),
            ("HOME".into(), home.display().to_string()),
        ],
        setup: Vec::new(),
        origin: "the export tests".into(),
        secret_env: Vec::new(),
        limits: ExportLimits {
            startup_timeout: Duration::from_secs(60),
            request_timeout: Duration::from_secs(60),
            ..ExportLimits::default()
        },
        temp_home: None,
        reproduce_env: Vec::new(),
        http: None,
        sandbox: None,
    }
}

/// Exports twice; the raw tools must be identical both times.
fn export_twice(spec: &LaunchSpec, profile: &ProbeProfile) -> RawListing {
    let first = run_with(spec, profile).unwrap_or_else(|e| panic!("{}", e.render()));
    let second = run_with(spec, profile).unwrap_or_else(|e| panic!("{}", e.render()));
    assert_eq!(
        serde_json::to_string(&first.tools).unwrap(),
        serde_json::to_string(&second.tools).unwrap(),
        "a second export gave different tools"
    );
    first
}

#[test]
fn real_server_everything() {
    let Some(program) = installed("npm/node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let case = Case::new();
    let listing = export_twice(&real_spec(&case, &program, &[]), &ProbeProfile::default());
    assert_eq!(
        listing.server_name.as_deref(),
        Some("mcp-servers/everything")
    );
    assert_eq!(listing.protocol_version, "2025-11-25");
    assert_eq!(names(&listing), EVERYTHING_TOOLS);
    // `execution` is a field typed SDKs drop; the export must keep it.
    assert!(listing.tools.iter().all(|t| t.get("execution").is_some()));
}

#[test]
fn real_server_everything_capabilities_change_the_listing() {
    let Some(program) = installed("npm/node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let case = Case::new();
    let with_roots = ProbeProfile {
        capabilities: json!({"roots": {}}),
        ..ProbeProfile::default()
    };
    let listing = run_with(&real_spec(&case, &program, &[]), &with_roots)
        .unwrap_or_else(|e| panic!("{}", e.render()));
    assert_eq!(listing.tools.len(), 14, "{:?}", names(&listing));
}

#[test]
fn real_server_everything_through_npx_leaves_no_process() {
    let Some(npm_dir) =
        installed("npm/node_modules/.bin/mcp-server-everything").map(|_| cache_dir().join("npm"))
    else {
        return;
    };
    // `npx` starts `sh` and `node` under itself: the whole tree must go.
    let case = Case::new();
    let script = format!(
        "echo $$ > {}; exec npx --no-install mcp-server-everything",
        case.arg("wrapper.pid")
    );
    let mut spec = real_spec(&case, Path::new("/bin/sh"), &["-c", &script]);
    spec.cwd = npm_dir;
    let listing =
        run_with(&spec, &ProbeProfile::default()).unwrap_or_else(|e| panic!("{}", e.render()));
    assert_eq!(listing.tools.len(), 13);
    assert_nothing_left(read_pid(&case.path("wrapper.pid")), &[]);
}

#[test]
fn real_server_time() {
    let Some(program) = installed("venv/bin/mcp-server-time") else {
        return;
    };
    let case = Case::new();
    let listing = export_twice(
        &real_spec(&case, &program, &["--local-timezone", "UTC"]),
        &ProbeProfile::default(),
    );
    assert_eq!(listing.server_name.as_deref(), Some("mcp-time"));
    assert_eq!(names(&listing), ["get_current_time", "convert_time"]);
}

#[test]
fn real_server_git() {
    let Some(program) = installed("venv/bin/mcp-server-git") else {
        return;
    };
    let case = Case::new();
    let listing = export_twice(&real_spec(&case, &program, &[]), &ProbeProfile::default());
    assert_eq!(listing.server_name.as_deref(), Some("mcp-git"));
    assert_eq!(names(&listing), GIT_TOOLS);
}

#[test]
fn real_fastmcp_server_keeps_output_schema_and_annotations_in_both_eras() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let script = Path::new(env!("CARGO_MANIFEST_DIR")).join("servers/fastmcp_server.py");
    let case = Case::new();
    let spec = real_spec(&case, &python, &[script.to_str().unwrap()]);
    let listing = export_twice(&spec, &ProbeProfile::default());
    assert_eq!(listing.server_name.as_deref(), Some("tdqs-fixture-library"));
    assert_eq!(names(&listing), ["find_book", "list_isbns"]);
    let find = &listing.tools[0];
    assert_eq!(find["title"], "Find a book by ISBN");
    assert_eq!(find["annotations"]["readOnlyHint"], true);
    assert_eq!(find["_meta"]["fixture/category"], "lookup");
    assert_eq!(
        find["outputSchema"]["required"],
        json!(["isbn", "title", "author", "year"])
    );
    assert!(listing
        .instructions
        .as_deref()
        .unwrap()
        .contains("catalogue"));

    // The Python SDK 2.x is dual-era: auto goes modern, and the definitions are the same.
    let modern = run_with(&spec, &profile(Era::Auto)).unwrap_or_else(|e| panic!("{}", e.render()));
    assert_eq!(modern.era, Era::Modern);
    assert_eq!(modern.protocol_version, "2026-07-28");
    assert_eq!(modern.tools, listing.tools);
}

#[test]
fn a_broken_answer_is_named_at_once_not_after_the_timeout() {
    for (raw, cause) in [
        ("nan", "JSON has no NaN"),
        ("huge-number", "such as 1e400"),
        ("invalid-utf8", "not UTF-8"),
    ] {
        let case = Case::new();
        let mut spec = case.fake(&["--mode", "raw-answer", "--raw", raw]);
        spec.limits.request_timeout = Duration::from_secs(30);
        let started = Instant::now();
        let error = expect_err(run(&spec));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{raw}: took {:?}",
            started.elapsed()
        );
        assert!(
            error.cause.contains("malformed answer to `tools/list`")
                || error.cause.contains("malformed answer to tools/list"),
            "{raw}: {}",
            error.render()
        );
        assert!(error.cause.contains(cause), "{raw}: {}", error.render());
        assert!(
            !error.cause.contains("did not answer"),
            "{}",
            error.render()
        );
    }
}

#[test]
fn a_lone_surrogate_becomes_a_replacement_character_with_a_warning() {
    let case = Case::new();
    let listing =
        run(&case.fake(&["--mode", "raw-answer", "--raw", "lone-surrogate"])).expect("listing");
    assert_eq!(listing.tools[0]["description"], "cut \u{FFFD}");
    assert!(
        listing.warnings.iter().any(|w| w.contains("U+FFFD")),
        "{:?}",
        listing.warnings
    );
}

#[test]
fn a_duplicate_answer_is_a_recorded_warning() {
    let case = Case::new();
    let listing =
        run(&case.fake(&["--mode", "raw-answer", "--raw", "duplicate"])).expect("listing");
    assert!(
        listing
            .warnings
            .iter()
            .any(|w| w.contains("answered a request more than once")
                && w.contains("request id(s) 1")),
        "{:?}",
        listing.warnings
    );
}

#[test]
fn a_listing_larger_than_its_limit_is_refused() {
    let case = Case::new();
    let mut spec = case.fake(&["--mode", "paginated", "--page-size", "1"]);
    spec.limits.max_listing_bytes = 1024;
    let error = expect_err(run(&spec));
    assert_error(
        &error,
        &["wrote more than 1024 bytes to stdout while listing its tools"],
        "--max-listing-bytes",
    );
    assert_nothing_left(case.server_pid(), &[]);
}
