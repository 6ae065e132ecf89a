//! `tdqs-gate lint` fitted to a maintainer's review, from the command line: the plain tool
//! lists other tools write, rule selection, Markdown for a pull-request comment, and a baseline
//! with suppressions that need a reason.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::{json, Value};

use crate::support::lint;

fn careless() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../examples/issue-tracker/careless.json")
}

fn careless_tools() -> Vec<Value> {
    let text = std::fs::read_to_string(careless()).unwrap();
    serde_json::from_str(&text).unwrap()
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

#[test]
fn markdown_output_is_a_pull_request_comment_with_escaped_server_text() {
    let dir = tempfile::tempdir().unwrap();
    let mut tools = careless_tools();
    // A hostile tool name must not become a link, a mention or a new table column.
    tools[0]["name"] = json!("x|y");
    tools[1]["description"] = json!("See https://evil.example and ping @admin <b>now</b>.");
    let file = write(dir.path(), "tools.json", &json!({"tools": tools}));
    let out = lint(
        dir.path(),
        &["--markdown", "--fail-on", "never", "--export", &file],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let md = String::from_utf8(out.stdout.clone()).unwrap();
    assert!(
        md.starts_with("### tdqs-gate lint\n\n**10 tools · "),
        "{md}"
    );
    assert!(md.contains("| Tool | Score | Errors | Warnings | Info |"));
    assert!(md.contains("| `x\\|y` | "), "{md}");
    assert!(md.contains("#### Errors and warnings"));
    assert!(md.contains("<details><summary>"));
    assert!(!md.contains("https://evil"), "a link survived");
    assert!(!md.contains("@admin"), "a mention survived");
    assert!(!md.contains("<b>"), "HTML survived");
    // Every table row has the columns of its header: nothing from the server split a cell.
    for line in md.lines().filter(|l| l.starts_with("| ")) {
        let cells = line.replace("\\|", "").matches('|').count();
        assert!(cells == 6 || cells == 7, "{line}");
    }
    // Errors come before warnings, and the same input gives the same bytes.
    let first_warning = md.find("| warning |").unwrap();
    assert!(md.rfind("| error |").unwrap() < first_warning);
    let again = lint(
        dir.path(),
        &["--markdown", "--fail-on", "never", "--export", &file],
    );
    assert_eq!(again.stdout, out.stdout);
    // One format at a time.
    let both = lint(dir.path(), &["--markdown", "--json", "--export", &file]);
    assert_eq!(both.status.code(), Some(2));
}

#[test]
fn a_baseline_shows_and_fails_on_only_the_findings_a_change_introduced() {
    let dir = tempfile::tempdir().unwrap();
    let base_tools = careless_tools();
    let base = write(dir.path(), "base.json", &json!(base_tools));
    let saved = dir.path().join("baseline.json").display().to_string();
    // Writing a baseline records every finding and passes.
    let out = lint(dir.path(), &["--export", &base, "--write-baseline", &saved]);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert!(stderr(&out).contains("findings to the baseline"));
    let baseline: Value = serde_json::from_str(&std::fs::read_to_string(&saved).unwrap()).unwrap();
    assert_eq!(baseline["baselineVersion"], json!(1));
    let recorded = baseline["findings"].as_array().unwrap().len();
    assert!(recorded > 50);

    // Unchanged definitions against their baseline: nothing new, so it passes.
    let out = lint(
        dir.path(),
        &["--json", "--export", &base, "--baseline", &saved],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let r = json_of(&out);
    assert_eq!(r["findings"], json!([]));
    assert_eq!(r["summary"]["hidden"]["known"], json!(recorded));

    // The head adds a tool with no description: only its findings show, and they fail.
    let mut head_tools = base_tools.clone();
    head_tools.push(json!({"name": "purge_project", "inputSchema": {"type": "object"}}));
    let head = write(dir.path(), "head.json", &json!({"tools": head_tools}));
    for against in [&saved, &base] {
        let out = lint(
            dir.path(),
            &["--json", "--export", &head, "--baseline", against],
        );
        assert_eq!(out.status.code(), Some(1), "{against}: {}", stderr(&out));
        let r = json_of(&out);
        let tools: Vec<&str> = r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter_map(|f| f["tool"].as_str())
            .collect();
        assert!(!tools.is_empty());
        assert!(
            tools.iter().all(|t| *t == "purge_project"),
            "against {against}: {tools:?}"
        );
        assert!(finding_codes(&r).contains(&"TDQS-D001".to_string()));
    }
    // The text and Markdown renderings say what the baseline hid.
    let out = lint(
        dir.path(),
        &["--markdown", "--export", &head, "--baseline", &saved],
    );
    let md = String::from_utf8_lossy(&out.stdout);
    assert!(
        md.contains(&format!("{recorded} known findings hidden by the baseline")),
        "{md}"
    );
    // A file that is neither a baseline nor an export is INVALID.
    let junk = write(dir.path(), "junk.json", &json!({"baselineVersion": 7}));
    let out = lint(dir.path(), &["--export", &head, "--baseline", &junk]);
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("format version 7"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_suppression_accepts_one_finding_only_with_a_reason() {
    let dir = tempfile::tempdir().unwrap();
    let file = careless().display().to_string();
    let base = ["--json", "--fail-on", "never", "--export", &file];
    let before = json_of(&lint(dir.path(), &base));
    let count = |r: &Value, code: &str, tool: &str| {
        r["findings"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|f| f["code"] == code && f["tool"] == tool)
            .count()
    };
    assert_eq!(count(&before, "TDQS-D001", "add_comment"), 1);

    std::fs::write(
        dir.path().join("tdqs-gate.toml"),
        "[[lint.suppress]]\ncode = \"TDQS-D001\"\ntool = \"add_comment\"\n",
    )
    .unwrap();
    let out = lint(dir.path(), &base);
    assert_eq!(out.status.code(), Some(2), "a suppression without a reason");
    assert!(
        stderr(&out).contains("needs a `reason`"),
        "{}",
        stderr(&out)
    );

    std::fs::write(
        dir.path().join("tdqs-gate.toml"),
        "[[lint.suppress]]\ncode = \"TDQS-D001\"\ntool = \"add_comment\"\n\
         reason = \"documented in the server's instructions\"\n\
         [[lint.suppress]]\ncode = \"TDQS-D001\"\ntool = \"no_such_tool\"\nreason = \"stale\"\n",
    )
    .unwrap();
    let out = lint(dir.path(), &base);
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let after = json_of(&out);
    assert_eq!(count(&after, "TDQS-D001", "add_comment"), 0);
    assert_eq!(
        after["findings"].as_array().unwrap().len(),
        before["findings"].as_array().unwrap().len() - 1
    );
    assert_eq!(after["summary"]["hidden"]["suppressed"], json!(1));
    assert_eq!(
        after["summary"]["hidden"]["unusedSuppressions"],
        json!(["TDQS-D001 on no_such_tool"])
    );
}

#[test]
fn markdown_of_a_large_server_fits_a_pull_request_comment() {
    let dir = tempfile::tempdir().unwrap();
    let corpus =
        PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../tests/fixtures/corpus/gitlab.json");
    let file = corpus.display().to_string();
    let out = lint(
        dir.path(),
        &["--markdown", "--fail-on", "never", "--export", &file],
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    let md = String::from_utf8(out.stdout).unwrap();
    // GitHub refuses a comment over 65,536 characters.
    assert!(
        md.chars().count() < 65_536,
        "{} characters",
        md.chars().count()
    );
    assert!(md.contains("more (`tdqs-gate lint --json` lists every one)"));
}
