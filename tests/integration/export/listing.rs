//! Normal operation: tools kept exactly as sent, the probe profile's handshake, pagination, a
//! slow start, server requests answered while listing, protocol versions, and the child's
//! environment and working folder.

use super::*;

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
