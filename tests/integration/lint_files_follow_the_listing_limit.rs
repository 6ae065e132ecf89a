//! The files `lint` reads (`--export` as a plain tool list or an export, `--baseline` as a saved
//! baseline or the base's tool list) may hold three times the listing limit in force, as a given
//! export file for the gate: `--max-listing-bytes`, else the default (32 MiB, so 96 MiB). A
//! fixed 96 MiB read far more than a lowered limit allows.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::json;

use crate::support::lint;

/// A plain tool list of about 10 KiB: over the 3 KiB a file may hold under a 1 KiB limit.
fn large_tool_list() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/issue-tracker/careless.json")
}

fn assert_passes(out: &Output) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
}

/// `lint ARGS` passes, and is refused with `--max-listing-bytes 1024` because of the file of
/// `file` (its path in the error), with advice that names the limit's flag.
fn passes_until_the_limit_is_lowered(dir: &Path, args: &[&str], file: &str) {
    assert_passes(&lint(dir, args));
    let out = lint(dir, &[args, &["--max-listing-bytes", "1024"]].concat());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("larger than 3072 bytes"), "{stderr}");
    assert!(stderr.contains(file), "the error names the file: {stderr}");
    assert!(
        stderr.contains("--max-listing-bytes"),
        "the advice names the limit's flag: {stderr}"
    );
}

#[test]
fn a_plain_tool_list_follows_the_listing_limit() {
    let dir = tempfile::tempdir().unwrap();
    let list = large_tool_list().display().to_string();
    let args = ["--json", "--fail-on", "never", "--export", &list];
    passes_until_the_limit_is_lowered(dir.path(), &args, &list);
}

#[test]
fn a_baseline_follows_the_listing_limit() {
    let dir = tempfile::tempdir().unwrap();
    let list = large_tool_list().display().to_string();
    // The linted list is small; only the baseline is over the limit.
    let small = dir.path().join("small.json");
    let tool = json!({"name": "get_issue", "description": "Reads one issue.", "inputSchema": {"type": "object"}});
    std::fs::write(&small, json!([tool]).to_string()).unwrap();
    let small = small.display().to_string();
    let saved = dir.path().join("baseline.json").display().to_string();
    assert_passes(&lint(
        dir.path(),
        &["--export", &list, "--write-baseline", &saved],
    ));
    assert!(std::fs::metadata(&saved).unwrap().len() > 3072);

    // A saved baseline, and the base's plain tool list.
    for baseline in [&saved, &list] {
        let args = [
            "--json",
            "--fail-on",
            "never",
            "--export",
            &small,
            "--baseline",
            baseline,
        ];
        passes_until_the_limit_is_lowered(dir.path(), &args, baseline);
    }
}
