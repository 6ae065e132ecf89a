//! Exporting servers that speak Streamable HTTP, against the Rust fixture
//! `fake-http-mcp-server` (JSON and SSE answers, sessions, paging, both eras, every fault), and
//! the gate end to end on a repository whose server speaks only HTTP.

use std::net::TcpStream;
use std::path::Path;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tdqs_core::error::Error;
use tdqs_core::export::ExportLimits;
use tdqs_core::export::{Era, ProbeProfile, RawListing};
use tdqs_gate::config::Config;
use tdqs_gate::export::client::list_tools;
use tdqs_gate::export::launch::{HostEnv, LaunchOptions, LaunchPlan};
use tdqs_gate::export::{HttpTarget, LaunchSpec};

const FAKE_HTTP: &str = env!("CARGO_BIN_EXE_fake-http-mcp-server");

fn quick_limits() -> ExportLimits {
    ExportLimits {
        startup_timeout: Duration::from_secs(10),
        request_timeout: Duration::from_secs(10),
        shutdown_grace: Duration::from_millis(300),
        ..ExportLimits::default()
    }
}

fn free_port() -> u16 {
    std::net::TcpListener::bind("127.0.0.1:0")
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}

fn port_open(port: u16) -> bool {
    TcpStream::connect(("127.0.0.1", port)).is_ok()
}

/// A spec that starts the fake in `mode` on a fresh port, logging requests to `dir/log`.
fn started(dir: &Path, mode: &str, extra: &[&str]) -> (LaunchSpec, u16) {
    let port = free_port();
    let mut args: Vec<String> = vec![
        "--port".into(),
        port.to_string(),
        "--mode".into(),
        mode.into(),
        "--log".into(),
        dir.join("log").display().to_string(),
    ];
    args.extend(extra.iter().map(|s| s.to_string()));
    let spec = LaunchSpec {
        program: FAKE_HTTP.to_string(),
        args,
        cwd: dir.to_path_buf(),
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        setup: Vec::new(),
        origin: "the HTTP export tests".into(),
        secret_env: Vec::new(),
        limits: quick_limits(),
        temp_home: None,
        reproduce_env: Vec::new(),
        http: Some(HttpTarget {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: Vec::new(),
        }),
        sandbox: None,
    };
    (spec, port)
}

fn run_with(spec: &LaunchSpec, profile: &ProbeProfile) -> Result<RawListing, Error> {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap()
        .block_on(list_tools(spec, profile))
}

fn run(spec: &LaunchSpec) -> Result<RawListing, Error> {
    run_with(spec, &ProbeProfile::default())
}

fn log(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("log"))
        .unwrap_or_default()
        .lines()
        .map(str::to_string)
        .collect()
}

fn keys(tool: &Value) -> Vec<&str> {
    tool.as_object()
        .unwrap()
        .keys()
        .map(String::as_str)
        .collect()
}

/// The fake's default tools, in its order and with its key order.
fn assert_default_tools(listing: &RawListing) {
    let names: Vec<&str> = listing
        .tools
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, vec!["zeta", "alpha"]);
    assert_eq!(
        keys(&listing.tools[0]),
        vec!["name", "description", "inputSchema"]
    );
    assert_eq!(
        keys(&listing.tools[1]),
        vec!["name", "inputSchema", "description"]
    );
    assert_eq!(listing.server_name.as_deref(), Some("fake-http"));
}

fn error_text(err: &Error) -> String {
    format!(
        "{}\n{}\n{:?}\n{:?}",
        err.cause,
        err.advice.clone().unwrap_or_default(),
        err.details,
        err.reproduce
    )
}

#[test]
fn json_answers_keep_tools_as_received_and_end_the_server() {
    let dir = tempfile::tempdir().unwrap();
    let (spec, port) = started(dir.path(), "json", &[]);
    let listing = run(&spec).expect("export");
    assert_default_tools(&listing);
    assert_eq!(listing.era, Era::Legacy);
    assert_eq!(listing.protocol_version, "2025-11-25");
    let log = log(dir.path());
    assert!(
        log[0].starts_with(
            "POST initialize session=- version=- accept=application/json,text/event-stream"
        ),
        "{log:?}"
    );
    assert!(
        log[1].starts_with("POST notifications/initialized session=- version=2025-11-25"),
        "{log:?}"
    );
    assert!(
        log[2].starts_with("POST tools/list session=- version=2025-11-25"),
        "{log:?}"
    );
    assert!(!log.iter().any(|l| l.contains("tools/call")), "{log:?}");
    assert!(
        !port_open(port),
        "the server still listens after the export"
    );
}

#[test]
fn sse_answers_with_a_ping_and_split_data_are_read() {
    let dir = tempfile::tempdir().unwrap();
    let (spec, port) = started(dir.path(), "sse", &[]);
    let listing = run(&spec).expect("export");
    assert_default_tools(&listing);
    // The server's ping in the stream was answered with a POST of its own.
    let log = log(dir.path());
    assert!(log.iter().any(|l| l.starts_with("POST - ")), "{log:?}");
    assert!(!port_open(port));
}

#[test]
fn session_id_is_sent_back_and_the_session_deleted() {
    let dir = tempfile::tempdir().unwrap();
    let (spec, _) = started(dir.path(), "session", &[]);
    let listing = run(&spec).expect("export");
    assert_default_tools(&listing);
    let log = log(dir.path());
    assert!(log[0].starts_with("POST initialize session=- "), "{log:?}");
    assert!(
        log[1].starts_with("POST notifications/initialized session=session-7f3a"),
        "{log:?}"
    );
    assert!(
        log[2].starts_with("POST tools/list session=session-7f3a version=2025-11-25"),
        "{log:?}"
    );
    assert!(
        log.last()
            .unwrap()
            .starts_with("DELETE - session=session-7f3a"),
        "{log:?}"
    );
}

#[test]
fn every_page_is_listed_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let tools = dir.path().join("tools.json");
    let many: Vec<Value> = (0..5)
        .map(|i| json!({"name": format!("t{i}"), "inputSchema": {"type": "object"}, "x-vendor": i}))
        .collect();
    std::fs::write(&tools, serde_json::to_string(&many).unwrap()).unwrap();
    let (spec, _) = started(
        dir.path(),
        "sse",
        &["--tools", tools.to_str().unwrap(), "--page-size", "2"],
    );
    let listing = run(&spec).expect("export");
    assert_eq!(listing.tools, many);
    let pages = log(dir.path())
        .iter()
        .filter(|l| l.starts_with("POST tools/list"))
        .count();
    assert_eq!(pages, 3);
}

#[test]
fn the_modern_era_works_over_http() {
    let dir = tempfile::tempdir().unwrap();
    let (spec, _) = started(dir.path(), "modern", &[]);
    let profile = ProbeProfile {
        era: Era::Auto,
        ..ProbeProfile::default()
    };
    let listing = run_with(&spec, &profile).expect("export");
    assert_eq!(listing.era, Era::Modern);
    assert_eq!(listing.protocol_version, "2026-07-28");
    assert_default_tools(&listing);
    let log = log(dir.path());
    assert!(log[0].starts_with("POST server/discover"), "{log:?}");
    assert!(
        log[1].starts_with("POST tools/list session=- version=2026-07-28"),
        "{log:?}"
    );
}

#[test]
fn a_legacy_http_sse_server_is_reached_through_its_endpoint_event() {
    let dir = tempfile::tempdir().unwrap();
    let (spec, port) = started(dir.path(), "legacy", &[]);
    let listing = run(&spec).expect("export");
    assert_default_tools(&listing);
    assert!(
        listing
            .warnings
            .iter()
            .any(|w| w.contains("legacy HTTP+SSE")),
        "{:?}",
        listing.warnings
    );
    let log = log(dir.path());
    assert!(log[0].starts_with("POST initialize"), "{log:?}");
    assert!(log[1].starts_with("GET - "), "{log:?}");
    assert!(log[2].starts_with("POST initialize"), "{log:?}");
    assert!(
        log.iter().any(|l| l.starts_with("POST tools/list")),
        "{log:?}"
    );
    assert!(!port_open(port));
}

#[test]
fn auto_era_falls_back_to_initialize_after_an_http_400() {
    let dir = tempfile::tempdir().unwrap();
    let (spec, _) = started(dir.path(), "session", &[]);
    let profile = ProbeProfile {
        era: Era::Auto,
        ..ProbeProfile::default()
    };
    let listing = run_with(&spec, &profile).expect("export");
    assert_eq!(listing.era, Era::Legacy);
    assert_default_tools(&listing);
    let log = log(dir.path());
    assert!(log[0].starts_with("POST server/discover"), "{log:?}");
    assert!(
        log.iter().any(|l| l.starts_with("POST initialize")),
        "{log:?}"
    );
}

/// Runs a fault mode; the export must fail fast, name `needle`, and leave no server.
fn fault(mode: &str, limits: ExportLimits, needles: &[&str]) -> Error {
    let dir = tempfile::tempdir().unwrap();
    let (mut spec, port) = started(dir.path(), mode, &[]);
    spec.limits = limits.clone();
    let start = Instant::now();
    let err = run(&spec).expect_err("a fault");
    let bound = limits.startup_timeout.max(limits.request_timeout) + Duration::from_secs(5);
    assert!(start.elapsed() < bound, "took {:?}", start.elapsed());
    let text = error_text(&err);
    for needle in needles {
        assert!(text.contains(needle), "{needle:?} missing from\n{text}");
    }
    assert!(err.advice.is_some());
    assert!(!port_open(port), "the server still listens after {mode}");
    err
}

#[test]
fn http_statuses_are_invalid_with_cause_and_fix() {
    fault(
        "status-401",
        quick_limits(),
        &["HTTP 401", "headers", "Authorization"],
    );
    fault("status-403", quick_limits(), &["HTTP 403", "headers"]);
    fault("status-404", quick_limits(), &["HTTP 404", "/mcp"]);
    fault(
        "status-500",
        quick_limits(),
        &["HTTP 500", "no MCP here for you", "stderr"],
    );
}

#[test]
fn an_expired_session_is_invalid() {
    fault("expire", quick_limits(), &["session expired", "404"]);
}

#[test]
fn a_stalled_stream_times_out() {
    let limits = ExportLimits {
        request_timeout: Duration::from_secs(2),
        ..quick_limits()
    };
    fault(
        "stall",
        limits,
        &["did not answer `tools/list` (page 1) within 2s", "stalls"],
    );
}

#[test]
fn an_sse_event_that_is_not_json_is_invalid() {
    fault("bad-sse", quick_limits(), &["not JSON", "this is not json"]);
}

#[test]
fn connection_refused_is_invalid() {
    let port = free_port();
    let spec = LaunchSpec {
        program: String::new(),
        args: Vec::new(),
        cwd: std::env::temp_dir(),
        env: Vec::new(),
        setup: Vec::new(),
        origin: "--url".into(),
        secret_env: Vec::new(),
        limits: quick_limits(),
        temp_home: None,
        reproduce_env: Vec::new(),
        http: Some(HttpTarget {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: Vec::new(),
        }),
        sandbox: None,
    };
    let start = Instant::now();
    let err = run(&spec).expect_err("refused");
    assert!(start.elapsed() < Duration::from_secs(30));
    let text = error_text(&err);
    assert!(text.contains("could not connect"), "{text}");
    assert!(text.contains("tdqs-gate export --url"), "{text}");
}

#[test]
fn a_port_that_never_opens_is_invalid_and_the_command_ended() {
    let dir = tempfile::tempdir().unwrap();
    let pid_file = dir.path().join("pid");
    let port = free_port();
    let spec = LaunchSpec {
        program: "/bin/sh".into(),
        args: vec![
            "-c".into(),
            format!(
                "echo $$ > {}; echo starting up >&2; exec sleep 60",
                pid_file.display()
            ),
        ],
        cwd: dir.path().to_path_buf(),
        env: vec![("PATH".into(), "/usr/bin:/bin".into())],
        setup: Vec::new(),
        origin: "the HTTP export tests".into(),
        secret_env: Vec::new(),
        limits: ExportLimits {
            startup_timeout: Duration::from_secs(2),
            ..quick_limits()
        },
        temp_home: None,
        reproduce_env: Vec::new(),
        http: Some(HttpTarget {
            url: format!("http://127.0.0.1:{port}/mcp"),
            headers: Vec::new(),
        }),
        sandbox: None,
    };
    let start = Instant::now();
    let err = run(&spec).expect_err("no port");
    assert!(
        // Under the command's own 60 s, with room for a loaded machine.
        start.elapsed() < Duration::from_secs(30),
        "{:?}",
        start.elapsed()
    );
    let text = error_text(&err);
    assert!(text.contains("did not open its port"), "{text}");
    assert!(text.contains("{port}"), "{text}");
    assert!(
        text.contains("starting up"),
        "the stderr tail is missing: {text}"
    );
    let pid: i32 = std::fs::read_to_string(&pid_file)
        .unwrap()
        .trim()
        .parse()
        .unwrap();
    // SAFETY: kill with signal 0 only checks whether the process exists.
    let alive = unsafe { libc::kill(pid, 0) } == 0;
    assert!(!alive, "the command is still running");
}

#[test]
fn server_url_with_port_and_headers_from_the_environment() {
    let dir = tempfile::tempdir().unwrap();
    let log_path = dir.path().join("log");
    let text = format!(
        "[server]\ncommand = [\"{FAKE_HTTP}\", \"--mode\", \"status-401\", \"--log\", \"{}\"]\n\
         url = \"http://127.0.0.1:{{port}}/mcp\"\nenv = {{ PORT = \"{{port}}\" }}\n\
         headers = {{ Authorization = \"Bearer ${{HTTP_TOKEN}}\" }}\n",
        log_path.display()
    );
    let config = Config::parse(&text, &dir.path().join("tdqs-gate.toml")).expect("config");
    let host = HostEnv::from_pairs([
        ("PATH", "/usr/bin:/bin"),
        ("HTTP_TOKEN", "tok-issue15-secret-9931"),
    ]);
    let exclude: Vec<String> = Vec::new();
    let plan = LaunchPlan::resolve(
        &LaunchOptions {
            command: None,
            url: None,
            server: None,
            config: Some(&config),
            manifest_root: dir.path(),
            exclude_env: &exclude,
            limits: quick_limits(),
        },
        &host,
    )
    .expect("plan");
    assert_eq!(plan.fixed_url(), None);
    let a = plan.for_side(dir.path()).expect("spec a");
    let b = plan.for_side(dir.path()).expect("spec b");
    let (url_a, url_b) = (&a.http.as_ref().unwrap().url, &b.http.as_ref().unwrap().url);
    assert_ne!(url_a, url_b, "each side gets its own port");
    let port = url_a.rsplit(':').next().unwrap().trim_end_matches("/mcp");
    assert!(a.env.contains(&("PORT".to_string(), port.to_string())));
    // The template, not the token, is what gets recorded.
    let template = plan.command_template().join(" ");
    assert!(
        template.contains("{port}") && !template.contains("tok-issue15"),
        "{template}"
    );

    let err = run(&a).expect_err("401");
    let text = error_text(&err);
    assert!(text.contains("HTTP 401"), "{text}");
    assert!(!text.contains("tok-issue15-secret-9931"), "{text}");
    let log = log(dir.path());
    assert!(
        log[0].contains("auth=Bearer_tok-issue15-secret-9931"),
        "the header was not sent: {log:?}"
    );
}

#[test]
fn a_url_given_as_command_points_to_url() {
    let dir = tempfile::tempdir().unwrap();
    let exclude: Vec<String> = Vec::new();
    let err = LaunchPlan::resolve(
        &LaunchOptions {
            command: Some("http://127.0.0.1:8000/mcp"),
            url: None,
            server: None,
            config: None,
            manifest_root: dir.path(),
            exclude_env: &exclude,
            limits: quick_limits(),
        },
        &HostEnv::from_pairs([("PATH", "/usr/bin:/bin")]),
    )
    .expect_err("a URL is not a command");
    assert!(err.cause.contains("is a URL"), "{}", err.cause);
    assert!(err.advice.unwrap().contains("--url"));
}

// ---------------------------------------------------------------------------------------------
// The gate end to end

mod gate {
    use super::FAKE_HTTP;
    use crate::gate::harness::*;
    use serde_json::json;

    const WORSE: &str = "Closes an issue.";

    fn http_setup() -> Setup {
        let setup = Setup::new(&base_tools());
        setup.repo.write(
            "tdqs-gate.toml",
            &format!(
                "[server]\ncommand = [\"{FAKE_HTTP}\", \"--mode\", \"session\", \"--tools\", \"{{root}}/tools.json\"]\n\
                 url = \"http://127.0.0.1:{{port}}/mcp\"\nenv = {{ PORT = \"{{port}}\" }}\n"
            ),
        );
        setup.repo.git(["add", "tdqs-gate.toml"]);
        setup.repo.git(["commit", "-q", "-m", "serve over HTTP"]);
        setup
    }

    #[test]
    fn unchanged_http_server_passes_without_a_model() {
        let setup = http_setup();
        let run = setup.gate(&[]);
        run.assert_code(0);
        assert!(run.stdout.starts_with("PASS: "), "{}", run.describe());
        assert!(setup.fake.calls().is_empty(), "{:?}", setup.fake.log());
        let report = run.report();
        assert_eq!(report["base"]["setHash"], report["head"]["setHash"]);
        assert_eq!(report["scored"], false);
    }

    #[test]
    fn worse_http_server_blocks() {
        let setup = http_setup();
        setup.set_head(&with_description(&base_tools(), "close_issue", WORSE));
        let mut dropped = tool_rule("close_issue", Some(WORSE), Some(&[1, 2, 3]), 2);
        dropped["scores"] = json!({
            "purpose_clarity": {"score": 2, "justification": "Says what it closes but not which."},
        });
        setup.fake.control(script(vec![dropped]));
        let run = setup.gate(&[]);
        run.assert_code(1);
        assert!(run.stdout.starts_with("BLOCK: "), "{}", run.describe());
    }

    #[test]
    fn a_fixed_url_is_refused_for_two_revisions() {
        let setup = Setup::new(&base_tools());
        let run = setup.gate(&["--url", "http://127.0.0.1:9/mcp"]);
        run.assert_code(2);
        let text = format!("{}{}", run.stdout, run.stderr);
        assert!(text.contains("cannot serve both"), "{text}");
        assert!(text.contains("{port}"), "{text}");
    }
}

// ---------------------------------------------------------------------------------------------
// Real servers (installed by tests/setup/real-servers.sh; skipped without them unless
// TDQS_GATE_REQUIRE_EXTERNAL=1)

mod real {

    use serde_json::Value;

    use crate::export::{installed, EVERYTHING_TOOLS};
    use crate::gate::harness::{base_tools, Setup};

    /// Exports through the command line with `args` and returns the export.
    fn export(setup: &Setup, name: &str, args: &[&str]) -> Value {
        let tmp = setup.work().join("tmp");
        std::fs::create_dir_all(&tmp).unwrap();
        let path = setup.work().join(format!("{name}.json"));
        let mut all: Vec<String> = vec!["export".into()];
        all.extend(args.iter().map(|s| s.to_string()));
        all.extend(["-o".into(), path.display().to_string()]);
        let out = setup.command(&all, &tmp).output().unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{name}: {}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap()
    }

    fn names(export: &Value) -> Vec<&str> {
        export["tools"]
            .as_array()
            .unwrap()
            .iter()
            .map(|t| t["name"].as_str().unwrap())
            .collect()
    }

    #[test]
    fn server_everything_over_streamable_http_sse_and_stdio_agree() {
        let Some(program) = installed("npm/node_modules/.bin/mcp-server-everything") else {
            return;
        };
        let program = program.display().to_string();
        let setup = Setup::new(&base_tools());
        let stdio = export(&setup, "stdio", &["--command", &program]);
        let http_command = format!("env PORT={{port}} {program} streamableHttp");
        let http = export(
            &setup,
            "http",
            &[
                "--command",
                &http_command,
                "--url",
                "http://127.0.0.1:{port}/mcp",
            ],
        );
        let sse_command = format!("env PORT={{port}} {program} sse");
        let sse = export(
            &setup,
            "sse",
            &[
                "--command",
                &sse_command,
                "--url",
                "http://127.0.0.1:{port}/sse",
            ],
        );
        assert_eq!(names(&stdio), EVERYTHING_TOOLS);
        assert_eq!(http["setHash"], stdio["setHash"]);
        assert_eq!(sse["setHash"], stdio["setHash"]);
        assert_eq!(http["tools"], stdio["tools"]);
        assert!(sse["warnings"]
            .as_array()
            .unwrap()
            .iter()
            .any(|w| w.as_str().unwrap().contains("legacy HTTP+SSE")));
    }

    #[test]
    fn fastmcp_over_http_and_stdio_agree() {
        let Some(python) = installed("venv/bin/python") else {
            return;
        };
        let setup = Setup::new(&base_tools());
        let server = setup.test_server_in_tree("fastmcp_server.py");
        let stdio_command = format!("{} {server}", python.display());
        let stdio = export(&setup, "stdio", &["--command", &stdio_command]);
        let http_command = format!("env PORT={{port}} {} {server} http", python.display());
        let http = export(
            &setup,
            "http",
            &[
                "--command",
                &http_command,
                "--url",
                "http://127.0.0.1:{port}/mcp",
            ],
        );
        assert_eq!(names(&stdio), vec!["find_book", "list_isbns"]);
        assert_eq!(http["setHash"], stdio["setHash"]);
        assert_eq!(http["tools"], stdio["tools"]);
    }
}
