//! `tdqs-gate lint` fitted to a maintainer's review, from the command line: the plain tool
//! lists other tools write, rule selection, Markdown for a pull-request comment, and a baseline
//! with suppressions that need a reason.

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

use serde_json::{json, Value};

const GATE: &str = env!("CARGO_BIN_EXE_tdqs-gate-dup");

fn careless() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/issue-tracker/careless.json")
}

fn careless_tools() -> Vec<Value> {
    let text = std::fs::read_to_string(careless()).unwrap();
    serde_json::from_str(&text).unwrap()
}

/// Runs `tdqs-gate lint` in an empty folder (no tdqs-gate.toml applies).
fn lint(dir: &Path, args: &[&str]) -> Output {
    Command::new(GATE)
        .current_dir(dir)
        .arg("lint")
        .args(args)
        .output()
        .unwrap()
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn json_of(out: &Output) -> Value {
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}); stderr: {}", stderr(out)))
}

fn write(dir: &Path, name: &str, value: &Value) -> String {
    let path = dir.join(name);
    std::fs::write(&path, serde_json::to_vec_pretty(value).unwrap()).unwrap();
    path.display().to_string()
}

fn finding_codes(report: &Value) -> Vec<String> {
    report["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn lint_reads_a_tools_object_a_bare_array_and_a_json_rpc_response_alike() {
    let dir = tempfile::tempdir().unwrap();
    let tools = careless_tools();
    let forms = [
        write(dir.path(), "bare.json", &json!(tools)),
        write(
            dir.path(),
            "object.json",
            &json!({"tools": tools, "serverInfo": {"name": "tracker", "version": "2.0"}}),
        ),
        write(
            dir.path(),
            "response.json",
            &json!({"jsonrpc": "2.0", "id": 2, "result": {"tools": tools}}),
        ),
    ];
    let reports: Vec<Value> = forms
        .iter()
        .map(|file| {
            let out = lint(
                dir.path(),
                &["--json", "--fail-on", "never", "--export", file],
            );
            assert_eq!(out.status.code(), Some(0), "{file}: {}", stderr(&out));
            json_of(&out)
        })
        .collect();
    assert_eq!(reports[0]["toolCount"], json!(tools.len()));
    assert!(!finding_codes(&reports[0]).is_empty());
    for r in &reports[1..] {
        assert_eq!(r["findings"], reports[0]["findings"]);
        assert_eq!(r["scorecards"], reports[0]["scorecards"]);
    }
    // The server's name and version come along when the dump gives them.
    assert_eq!(
        reports[1]["server"],
        json!({"name": "tracker", "version": "2.0"})
    );
}

#[test]
fn lint_refuses_a_file_that_is_no_tool_list_and_says_which_forms_it_reads() {
    let dir = tempfile::tempdir().unwrap();
    let cases = [
        (json!({"servers": {}}), "without `tools` or `schemaVersion`"),
        (json!({"tools": "none"}), "its `tools` is a string"),
        (json!([{"name": "a"}, 3]), "tool 2 of its list is a number"),
        (json!([{"name": "a"}, {"name": "a"}]), "tool list"),
    ];
    for (i, (value, cause)) in cases.iter().enumerate() {
        let file = write(dir.path(), &format!("bad{i}.json"), value);
        let out = lint(dir.path(), &["--export", &file]);
        assert_eq!(out.status.code(), Some(2), "{value}");
        let err = stderr(&out);
        assert!(err.contains(cause), "{value}: {err}");
        if i < 3 {
            assert!(err.contains("{\"tools\": [...]}"), "{err}");
        }
    }
}

#[test]
fn select_and_ignore_narrow_the_rules_by_code_and_prefix() {
    let dir = tempfile::tempdir().unwrap();
    let file = careless().display().to_string();
    let base = ["--json", "--fail-on", "never", "--export", &file];
    let all = finding_codes(&json_of(&lint(dir.path(), &base)));
    assert!(all.iter().any(|c| c.starts_with("TDQS-D")));
    assert!(all.iter().any(|c| !c.starts_with("TDQS-D")));

    let selected = json_of(&lint(dir.path(), &[&base[..], &["--select", "d"]].concat()));
    let only_d: Vec<&String> = all.iter().filter(|c| c.starts_with("TDQS-D")).collect();
    assert_eq!(
        finding_codes(&selected).iter().collect::<Vec<_>>(),
        only_d,
        "--select D keeps the description family, in the same order"
    );
    let first = only_d[0].clone();
    let narrowed = json_of(&lint(
        dir.path(),
        &[&base[..], &["--select", "D", "--ignore", &first]].concat(),
    ));
    assert!(!finding_codes(&narrowed).contains(&first));
    assert!(finding_codes(&narrowed)
        .iter()
        .all(|c| c.starts_with("TDQS-D")));
    // A comma-separated list is the same as the flag repeated.
    let listed = lint(dir.path(), &[&base[..], &["--select", "N,P"]].concat());
    let repeated = lint(
        dir.path(),
        &[&base[..], &["--select", "N", "--select", "P"]].concat(),
    );
    assert_eq!(listed.stdout, repeated.stdout);
    assert!(finding_codes(&json_of(&listed))
        .iter()
        .all(|c| c.starts_with("TDQS-N") || c.starts_with("TDQS-P")));

    // A selection that names no rule is INVALID with the forms it takes.
    let out = lint(
        dir.path(),
        &[&base[..], &["--ignore", "TDQS-D1O1"]].concat(),
    );
    assert_eq!(out.status.code(), Some(2));
    let err = stderr(&out);
    assert!(
        err.contains("--ignore `TDQS-D1O1` names no lint rule"),
        "{err}"
    );
    assert!(
        err.contains("D007") && err.contains("docs/lint.md"),
        "{err}"
    );
}
