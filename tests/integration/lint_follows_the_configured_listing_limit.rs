//! `lint` follows `max-listing-bytes` of the `[server]` table of tdqs-gate.toml as export and the
//! gate do: for the server it starts, and for the files it is given (`--export`, `--baseline`),
//! which may hold three times that limit. With `--rev` the revision's own tdqs-gate.toml applies,
//! the one its server is started under; otherwise the working folder's. `--max-listing-bytes`
//! still wins. Over the limit the run is INVALID (exit 2) with the setting and the fix named.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::json;

use crate::support::gitrepo::GitRepo;
use crate::support::lint;

const FAKE: &str = env!("CARGO_BIN_EXE_fake-mcp-server");

/// The careless issue tracker's tool list: about 10 KiB, so over a 1 KiB listing and over the
/// 3 KiB a given file may hold under that limit.
fn large_tool_list() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/issue-tracker/careless.json")
}

/// One short tool: its listing fits in 1 KiB.
fn small_tool_list() -> String {
    json!([{"name": "get_issue", "description": "Reads one issue by its number.",
            "inputSchema": {"type": "object"}}])
    .to_string()
}

/// Writes the server's tool list into the tree (a sandboxed server sees only its tree) and a
/// tdqs-gate.toml starting the fake on it, with `max-listing-bytes = limit` when given.
fn write_tree(root: &Path, tools: &str, limit: Option<usize>) {
    std::fs::write(root.join("tools.json"), tools).unwrap();
    let mut config = format!("[server]\ncommand = \"{FAKE} --tools {{root}}/tools.json\"\n");
    if let Some(limit) = limit {
        config.push_str(&format!("max-listing-bytes = {limit}\n"));
    }
    std::fs::write(root.join("tdqs-gate.toml"), config).unwrap();
}

fn commit_all(repo: &GitRepo) {
    repo.git(["add", "-A"]);
    repo.git(["commit", "-q", "-m", "server and settings"]);
}

fn assert_passes(out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

/// Refused as INVALID, the error saying `what` and naming the setting and the flag that raise
/// the limit.
fn assert_refused(out: &Output, what: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains(what), "{stderr}");
    assert!(
        stderr.contains("`max-listing-bytes` in the `[server]` table"),
        "the error names the setting: {stderr}"
    );
    assert!(
        stderr.contains("--max-listing-bytes"),
        "the error names the flag: {stderr}"
    );
}

#[test]
fn the_servers_listing_follows_the_configured_limit_in_the_tree_and_at_a_revision() {
    let repo = GitRepo::init();
    let tools = std::fs::read_to_string(large_tool_list()).unwrap();
    write_tree(&repo.path, &tools, Some(1024));
    commit_all(&repo);
    let over = "wrote more than 1024 bytes to stdout while listing its tools";

    assert_refused(&lint(&repo.path, &["--fail-on", "never"]), over);
    assert_refused(
        &lint(&repo.path, &["--fail-on", "never", "--rev", "HEAD"]),
        over,
    );
    assert_passes(&lint(
        &repo.path,
        &["--fail-on", "never", "--max-listing-bytes", "1000000"],
    ));
}

#[test]
fn an_export_file_follows_the_working_folders_configured_limit() {
    let dir = tempfile::tempdir().unwrap();
    let list = large_tool_list().display().to_string();
    let args = ["--json", "--fail-on", "never", "--export", &list];

    write_tree(dir.path(), &small_tool_list(), Some(1024));
    assert_refused(&lint(dir.path(), &args), "larger than 3072 bytes");
    // The message gives the limit in bytes, not as "0 MiB".
    let out = lint(dir.path(), &args);
    assert!(
        String::from_utf8_lossy(&out.stderr).contains("(3072 bytes here)"),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // The command line wins over the file.
    assert_passes(&lint(
        dir.path(),
        &[&args[..], &["--max-listing-bytes", "1000000"]].concat(),
    ));
    // Without the setting, the default limit applies.
    write_tree(dir.path(), &small_tool_list(), None);
    assert_passes(&lint(dir.path(), &args));
}

#[test]
fn with_rev_the_revisions_configured_limit_applies_to_the_baseline() {
    let repo = GitRepo::init();
    write_tree(&repo.path, &small_tool_list(), Some(1024));
    commit_all(&repo);
    // The working tree lifts the limit; the committed revision keeps it.
    write_tree(&repo.path, &small_tool_list(), None);
    let baseline = large_tool_list().display().to_string();
    let args = ["--json", "--fail-on", "never", "--baseline", &baseline];

    assert_refused(
        &lint(&repo.path, &[&args[..], &["--rev", "HEAD"]].concat()),
        "larger than 3072 bytes",
    );
    assert_passes(&lint(&repo.path, &args));
}
