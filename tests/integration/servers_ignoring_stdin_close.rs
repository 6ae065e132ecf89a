//! Servers that keep running after their stdin closes (a Python one with a live non-daemon
//! thread, a Node one with an open interval handle): once the listing is complete the gate waits
//! only the short exit-after-EOF window, stops them with SIGTERM, says nothing against them in
//! the export, and leaves no process behind. How long that takes is measured by
//! `scripts/bench-shutdown.sh`, not here.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tdqs_core::export::{ExportLimits, ProbeProfile};
use tdqs_gate::export::client::list_tools;
use tdqs_gate::export::process::{ServerProcess, ShutdownStep, StdoutLine};
use tdqs_gate::export::LaunchSpec;

/// Far longer than any test may take: a run that waited it between stdin closing and SIGTERM
/// would be caught by the checks below, which bound the stop well under it.
const LONG_GRACE: Duration = Duration::from_secs(120);

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/export")
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()))
}

/// `(interpreter, script)` of each fixture server whose interpreter is installed; a missing
/// interpreter is recorded as a skip.
fn fixture_servers() -> Vec<(&'static str, &'static str)> {
    let mut servers = Vec::new();
    for (interpreter, script) in [
        ("python3", "eof_ignoring_server.py"),
        ("node", "eof_ignoring_server.mjs"),
    ] {
        if on_path(interpreter) {
            servers.push((interpreter, script));
        } else {
            crate::support::skips::skip(&format!(
                "{interpreter} is not installed (the {script} fixture needs it)"
            ));
        }
    }
    servers
}

fn spec(interpreter: &str, script: &Path, pid_file: &Path, cwd: &Path) -> LaunchSpec {
    LaunchSpec {
        program: interpreter.to_string(),
        args: vec![script.display().to_string(), pid_file.display().to_string()],
        cwd: cwd.to_path_buf(),
        env: vec![(
            "PATH".to_string(),
            std::env::var("PATH").unwrap_or_default(),
        )],
        setup: Vec::new(),
        origin: "a test".into(),
        secret_env: Vec::new(),
        limits: ExportLimits {
            startup_timeout: Duration::from_secs(30),
            request_timeout: Duration::from_secs(30),
            shutdown_grace: LONG_GRACE,
            ..ExportLimits::default()
        },
        temp_home: None,
        reproduce_env: Vec::new(),
        http: None,
        sandbox: None,
    }
}

fn read_pid(path: &Path) -> i32 {
    std::fs::read_to_string(path)
        .unwrap_or_else(|e| panic!("{} was not written: {e}", path.display()))
        .trim()
        .parse()
        .expect("a pid")
}

/// Gone or a zombie (this sandbox's init does not reap orphans).
fn is_alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|stat| {
        stat.rfind(')')
            .and_then(|end| stat[end + 2..].chars().next())
            .is_some_and(|state| state != 'Z')
    })
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .expect("runtime")
}

async fn answer(server: &mut ServerProcess, request: Value) -> Value {
    let line = serde_json::to_vec(&request).unwrap();
    server
        .send(&line, Duration::from_secs(30))
        .await
        .unwrap_or_else(|e| panic!("sending {request}: {e:?}"));
    loop {
        let next = tokio::time::timeout(Duration::from_secs(30), server.next_line())
            .await
            .expect("an answer within 30 s");
        match next {
            Ok(StdoutLine::Line(bytes)) => {
                let message: Value = serde_json::from_slice(&bytes).expect("a JSON line");
                if message.get("id") == request.get("id") {
                    return message;
                }
            }
            other => panic!("the server stopped answering: {other:?}"),
        }
    }
}

#[test]
fn a_server_still_running_after_stdin_closes_is_stopped_by_sigterm_without_a_warning() {
    for (interpreter, script) in fixture_servers() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("server.pid");
        let spec = spec(interpreter, &fixtures().join(script), &pid_file, dir.path());
        let (shutdown, stopping) = runtime().block_on(async {
            let mut server = ServerProcess::spawn(&spec).expect("spawn");
            answer(
                &mut server,
                json!({"jsonrpc": "2.0", "id": 1, "method": "initialize", "params": {
                    "protocolVersion": "2025-11-25", "capabilities": {},
                    "clientInfo": {"name": "test", "version": "1"}}}),
            )
            .await;
            let listed = answer(
                &mut server,
                json!({"jsonrpc": "2.0", "id": 2, "method": "tools/list"}),
            )
            .await;
            assert_eq!(listed["result"]["tools"][0]["name"], "lookup_order");
            let started = Instant::now();
            (server.shutdown().await, started.elapsed())
        });
        assert_eq!(shutdown.step, ShutdownStep::Terminated, "{script}");
        assert_eq!(
            std::os::unix::process::ExitStatusExt::signal(&shutdown.status.expect("reaped")),
            Some(libc::SIGTERM),
            "{script} should have ended on SIGTERM"
        );
        // Stopped long before the grace could have run out: the wait before SIGTERM is the short
        // exit-after-EOF window, not the grace.
        assert!(
            stopping < LONG_GRACE / 4,
            "{script}: stopping took {stopping:?}"
        );
        // Stopped early by the gate: nothing to hold against the server.
        assert_eq!(shutdown.forced_note(&spec.limits), None, "{script}");
        assert!(
            !is_alive(read_pid(&pid_file)),
            "{script} outlived its export"
        );
    }
}

#[test]
fn exporting_a_server_that_ignores_stdin_closing_lists_its_tools_with_no_warning_and_no_orphan() {
    for (interpreter, script) in fixture_servers() {
        let dir = tempfile::tempdir().unwrap();
        let pid_file = dir.path().join("server.pid");
        let spec = spec(interpreter, &fixtures().join(script), &pid_file, dir.path());
        let started = Instant::now();
        let listing = runtime()
            .block_on(list_tools(&spec, &ProbeProfile::default()))
            .unwrap_or_else(|e| panic!("{script}: {}", e.render()));
        assert!(started.elapsed() < LONG_GRACE / 4, "{script}");
        assert_eq!(listing.tools.len(), 1, "{script}");
        assert_eq!(listing.warnings, Vec::<String>::new(), "{script}");
        assert!(
            !is_alive(read_pid(&pid_file)),
            "{script} outlived its export"
        );
    }
}

#[test]
fn the_gate_exports_servers_that_ignore_stdin_closing_and_leaves_nothing_running() {
    // Through the command line, in the sandbox when this machine has one (a SIGTERM to the
    // sandbox's group ends everything inside it).
    for (interpreter, script) in fixture_servers() {
        let dir = tempfile::tempdir().unwrap();
        let tree = dir.path().join("tree");
        std::fs::create_dir(&tree).unwrap();
        std::fs::copy(fixtures().join(script), tree.join(script)).unwrap();
        std::fs::write(
            tree.join("tdqs-gate.toml"),
            format!(
                "[server]\ncommand = \"{interpreter} {{root}}/{script} {{root}}/server.pid\"\n"
            ),
        )
        .unwrap();
        let out = Command::new(env!("CARGO_BIN_EXE_tdqs-gate-dup"))
            .args(["export", "-q", "-o", "export.json"])
            .current_dir(&tree)
            .output()
            .unwrap();
        assert_eq!(
            out.status.code(),
            Some(0),
            "{script}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
        let export: Value =
            serde_json::from_slice(&std::fs::read(tree.join("export.json")).unwrap()).unwrap();
        assert_eq!(
            export["tools"].as_array().map(Vec::len),
            Some(1),
            "{script}"
        );
        let warnings = export["warnings"].to_string();
        assert!(
            !warnings.contains("SIGTERM") && !warnings.contains("SIGKILL"),
            "{script}: {warnings}"
        );
        assert!(tree.join("server.pid").is_file(), "{script} did not start");
        let left = crate::support::chromium::processes_mentioning(&tree.display().to_string());
        assert!(left.is_empty(), "{script} left {left:?}");
    }
}
