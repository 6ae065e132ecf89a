//! The export client against the Rust fixture server (every fault mode) and against real MCP
//! servers installed by `tests/setup/real-servers.sh`.
//!
//! Besides the result or the error, every test checks that nothing is left running: the fake
//! writes its pid (which is also its process group id) and its grandchild's pid to files, and
//! `/proc` is scanned for live members of the group afterwards.
//!
//! The harness is in this file with the real servers' tool lists and installs (also used by
//! `http_export`, `real_servers`, `sandbox` and `source_locations`); the tests sit in one
//! submodule per feature they check.

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use serde_json::{json, Value};
use tdqs_core::error::Error;
use tdqs_core::export::ExportLimits;
use tdqs_core::export::{Era, ProbeProfile, RawListing};
use tdqs_gate::export::client::list_tools;
use tdqs_gate::export::{LaunchSpec, SetupCommand};

mod eras;
mod faults;
mod listing;
mod raw_answers;
mod real_servers;
mod setup_commands;

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
