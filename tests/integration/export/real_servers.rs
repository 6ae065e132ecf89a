//! Real MCP servers installed by `tests/setup/real-servers.sh` (skipped when missing unless
//! `TDQS_GATE_REQUIRE_EXTERNAL=1`): server-everything, time, git and a FastMCP server.

use super::*;

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
