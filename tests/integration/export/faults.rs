//! Servers that misbehave: junk on stdout, hangs, crashes, signals, JSON-RPC errors, looping
//! cursors, the page, tool, response and listing limits, malformed answers, processes left
//! behind, secrets on stderr and a missing program.

use super::*;

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
