//! The gate's report grows with the change, not the server. A large server's
//! unchanged tools are summarised (count, exact score sum, digests), every changed tool stays
//! listed in full, and `--check` still re-derives the decision and refuses an edited summary.

use std::path::Path;
use std::process::{Command, Output};

use serde_json::{json, Value};

use crate::gate::harness::assert_schema_valid;

const GATE: &str = env!("CARGO_BIN_EXE_tdqs-gate-dup");

/// `n` distinct tools; `changed` gets a worse description on the head.
fn tools(n: usize, changed: Option<usize>) -> Vec<Value> {
    let nouns = [
        "project", "issue", "branch", "commit", "pipeline", "label", "release",
    ];
    (0..n)
        .map(|i| {
            let a = nouns[i % nouns.len()];
            let mut description = format!(
                "Get one {a} record number {i} by its id. Use this when you need the {a}; for \
                 many use the list tool. Returns the {a} as JSON; fails when it is missing."
            );
            if Some(i) == changed {
                description = format!("Does {a} things.");
            }
            json!({
                "name": format!("get_{a}_{i}"),
                "description": description,
                "inputSchema": {
                    "type": "object",
                    "properties": {"id": {"type": "string", "description": format!("The {a} id.")}},
                    "required": ["id"]
                },
                "annotations": {"readOnlyHint": true}
            })
        })
        .collect()
}

fn gate(dir: &Path, args: &[&str]) -> Output {
    Command::new(GATE)
        .args(args)
        .current_dir(dir)
        .env("NO_COLOR", "1")
        .output()
        .expect("run tdqs-gate")
}

struct Run {
    report: Value,
    json_bytes: usize,
    markdown: String,
    code: Option<i32>,
}

fn run_gate(dir: &Path, base: &Path, head: &Path, report_dir: &str, extra: &[&str]) -> Run {
    let mut args = vec![
        "--base-export",
        base.to_str().unwrap(),
        "--head-export",
        head.to_str().unwrap(),
        "--judge",
        "static",
        "--report-dir",
        report_dir,
    ];
    args.extend(extra);
    let out = gate(dir, &args);
    let text = std::fs::read_to_string(dir.join(report_dir).join("tool-definition-score.json"))
        .unwrap_or_else(|e| panic!("no report ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    let markdown =
        std::fs::read_to_string(dir.join(report_dir).join("tool-definition-score.md")).unwrap();
    Run {
        report: serde_json::from_str(&text).unwrap(),
        json_bytes: text.len(),
        markdown,
        code: out.status.code(),
    }
}

fn check(dir: &Path, report: &Path, base: &Path, head: &Path) -> Output {
    gate(
        dir,
        &[
            "--check",
            report.to_str().unwrap(),
            "--base-export",
            base.to_str().unwrap(),
            "--head-export",
            head.to_str().unwrap(),
        ],
    )
}

/// An edit of a saved report.
type Edit = fn(&mut Value);

#[test]
fn report_summarises_unchanged_tools_and_check_verifies_it() {
    let dir = tempfile::tempdir().unwrap();
    let n = 120;
    let base = crate::support::write_export(dir.path(), "base.json", "many", tools(n, None));
    let head = crate::support::write_export(dir.path(), "head.json", "many", tools(n, Some(7)));
    let changed = "get_project_7";

    let small = run_gate(dir.path(), &base, &head, "small", &[]);
    let full = run_gate(dir.path(), &base, &head, "full", &["--full-report"]);
    assert_eq!(small.code, Some(1), "{}", small.markdown);
    assert_eq!(full.code, small.code);
    assert_schema_valid(&small.report);
    assert_schema_valid(&full.report);
    assert_eq!(small.report["schemaVersion"], 2);

    // The same decision, reason, medians, causes and rollups: the summary changes no number.
    for field in [
        "decision",
        "reason",
        "median",
        "causes",
        "assessment",
        "calls",
    ] {
        assert_eq!(small.report[field], full.report[field], "{field}");
    }
    for (i, pair) in small.report["pairs"].as_array().unwrap().iter().enumerate() {
        for side in ["base", "head"] {
            assert_eq!(
                pair[side]["rollups"], full.report["pairs"][i][side]["rollups"],
                "pair {i} {side}"
            );
            // Only the changed tool is listed; the rest is one summary.
            let listed: Vec<&String> = pair[side]["tools"].as_object().unwrap().keys().collect();
            assert_eq!(listed, vec![changed], "pair {i} {side}");
            assert_eq!(pair[side]["omitted"]["count"], n - 1);
        }
    }
    assert_eq!(small.report["omitted"]["count"], n - 1);
    assert!(full.report.get("omitted").is_none());
    for side in ["base", "head"] {
        assert_eq!(small.report[side]["tools"].as_array().unwrap().len(), 1);
        assert_eq!(
            small.report[side]["setHash"], full.report[side]["setHash"],
            "the set hash still names the whole side"
        );
    }
    assert!(small.report["changes"]["unchanged"]
        .as_array()
        .unwrap()
        .is_empty());
    assert_eq!(small.report["changes"]["changed"], json!([changed]));
    // The fallen tool is there in full, with what changed in its definition.
    assert_eq!(small.report["causes"]["tools"][0]["tool"], changed);
    assert!(small.report["causes"]["tools"][0]["change"]["descriptionAfter"].is_string());
    assert!(
        small.json_bytes * 10 < full.json_bytes,
        "summarised {} bytes, full {} bytes",
        small.json_bytes,
        full.json_bytes
    );
    assert!(small
        .markdown
        .contains("119 unchanged tools are summarised"));
    assert!(small.markdown.contains(changed));
    assert!(
        !small.markdown.contains("get_issue_1`"),
        "{}",
        small.markdown
    );

    // `--check` re-derives the verdict from the summarised report.
    let report_path = dir.path().join("small/tool-definition-score.json");
    let out = check(dir.path(), &report_path, &base, &head);
    assert_eq!(
        out.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );

    // Edits to the summary are refused (exit 2), each naming what differs.
    let edits: [(&str, Edit); 4] = [
        ("the score sum", |r| {
            let s = r["pairs"][0]["head"]["omitted"]["tdqsTenthsSum"]
                .as_i64()
                .unwrap();
            r["pairs"][0]["head"]["omitted"]["tdqsTenthsSum"] = json!(s + 10);
        }),
        ("the sum on both sides, rollups kept", |r| {
            for side in ["base", "head"] {
                let s = r["pairs"][0][side]["omitted"]["tdqsTenthsSum"]
                    .as_i64()
                    .unwrap();
                r["pairs"][0][side]["omitted"]["tdqsTenthsSum"] = json!(s - 1);
            }
        }),
        ("the definitions digest", |r| {
            r["omitted"]["definitionsDigest"] = json!("0".repeat(64));
        }),
        ("the results digest", |r| {
            for side in ["base", "head"] {
                r["pairs"][0][side]["omitted"]["resultsDigest"] = json!("1".repeat(64));
            }
        }),
    ];
    for (what, edit) in edits {
        let mut tampered = small.report.clone();
        edit(&mut tampered);
        let path = dir.path().join("tampered.json");
        std::fs::write(&path, serde_json::to_vec_pretty(&tampered).unwrap()).unwrap();
        let out = check(dir.path(), &path, &base, &head);
        assert_eq!(
            out.status.code(),
            Some(2),
            "{what}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}

#[test]
fn small_servers_and_unchanged_runs() {
    let dir = tempfile::tempdir().unwrap();
    // At most 50 tools a side: every tool listed, as before.
    let base = crate::support::write_export(dir.path(), "b.json", "many", tools(50, None));
    let head = crate::support::write_export(dir.path(), "h.json", "many", tools(50, Some(3)));
    let run = run_gate(dir.path(), &base, &head, "r50", &[]);
    assert!(run.report.get("omitted").is_none());
    assert_eq!(
        run.report["pairs"][0]["head"]["tools"]
            .as_object()
            .unwrap()
            .len(),
        50
    );
    // An unchanged large server: a PASS with nothing listed, and `--check` accepts it.
    let same = crate::support::write_export(dir.path(), "same.json", "many", tools(200, None));
    let run = run_gate(dir.path(), &same, &same, "same", &[]);
    assert_eq!(run.code, Some(0));
    assert_schema_valid(&run.report);
    assert_eq!(run.report["omitted"]["count"], 200);
    assert!(run.report["base"]["tools"].as_array().unwrap().is_empty());
    let out = check(
        dir.path(),
        &dir.path().join("same/tool-definition-score.json"),
        &same,
        &same,
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    // Checked against another export of 200 tools: refused.
    let other = crate::support::write_export(dir.path(), "other.json", "many", tools(200, Some(0)));
    let out = check(
        dir.path(),
        &dir.path().join("same/tool-definition-score.json"),
        &other,
        &other,
    );
    assert_eq!(out.status.code(), Some(2));
}
