//! The files `lint` reads (`--export` as a plain tool list or an export, `--baseline` as a saved
//! baseline or the base's tool list) may hold three times the listing limit in force, as a given
//! export file for the gate: `--max-listing-bytes`, else the default (32 MiB, so 96 MiB). A
//! fixed 96 MiB read far more than a lowered limit allows.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::json;

const GATE: &str = env!("CARGO_BIN_EXE_tdqs-gate-dup");

/// A plain tool list of about 10 KiB: over the 3 KiB a file may hold under a 1 KiB limit.
fn large_tool_list() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/issue-tracker/careless.json")
}

/// Runs `tdqs-gate lint` in `dir` (an empty folder: no tdqs-gate.toml applies).
fn lint(dir: &Path, args: &[&str]) -> Output {
    Command::new(GATE)
        .current_dir(dir)
        .arg("lint")
        .args(args)
        .output()
        .unwrap()
}

fn assert_refused_as_too_large(out: &Output, flag: &str) {
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{stderr}");
    assert!(stderr.contains("larger than 3072 bytes"), "{stderr}");
    assert!(
        stderr.contains(flag),
        "the error names the file's flag: {stderr}"
    );
    assert!(
        stderr.contains("--max-listing-bytes"),
        "the advice names the limit's flag: {stderr}"
    );
}

#[test]
fn a_plain_tool_list_follows_the_listing_limit() {
    let dir = tempfile::tempdir().unwrap();
    let list = large_tool_list().display().to_string();
    let base = ["--json", "--fail-on", "never", "--export", list.as_str()];
    let out = lint(dir.path(), &base);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    let out = lint(
        dir.path(),
        &[&base[..], &["--max-listing-bytes", "1024"]].concat(),
    );
    assert_refused_as_too_large(&out, &list);
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
    let out = lint(dir.path(), &["--export", &list, "--write-baseline", &saved]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(std::fs::metadata(&saved).unwrap().len() > 3072);

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
        let out = lint(dir.path(), &args);
        assert_eq!(
            out.status.code(),
            Some(0),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
        let out = lint(
            dir.path(),
            &[&args[..], &["--max-listing-bytes", "1024"]].concat(),
        );
        assert_refused_as_too_large(&out, baseline);
    }
}
