//! Lint on the committed exports of real servers (tests/fixtures/corpus): no error-level finding
//! fires unless the reviewed list (tests/fixtures/corpus/reviewed-errors.json) says it is a true
//! defect, with its reason; and the false findings once seen there stay gone.

use std::collections::BTreeSet;
use std::path::PathBuf;

use serde_json::Value;
use tdqs_gate::lint::catalogue::Code;
use tdqs_gate::lint::{self, LintConfig, LintReport, Severity};

fn corpus_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fixtures/corpus")
}

/// Every export of the corpus, by file stem, in name order.
fn corpus() -> Vec<(String, Vec<Value>)> {
    let mut files: Vec<PathBuf> = std::fs::read_dir(corpus_dir())
        .expect("corpus folder")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| {
            p.extension().is_some_and(|x| x == "json")
                && p.file_name().is_some_and(|n| n != "reviewed-errors.json")
        })
        .collect();
    files.sort();
    files
        .into_iter()
        .map(|path| {
            let text = std::fs::read_to_string(&path).expect("read export");
            let export: Value = serde_json::from_str(&text).expect("export is JSON");
            let tools = export["tools"].as_array().cloned().expect("tools");
            let stem = path
                .file_stem()
                .and_then(|s| s.to_str())
                .unwrap_or_default()
                .to_string();
            (stem, tools)
        })
        .collect()
}

fn lint_of(tools: &[Value]) -> LintReport {
    lint::lint_tools(None, None, tools, &LintConfig::default())
}

fn server_tools(name: &str) -> Vec<Value> {
    corpus()
        .into_iter()
        .find(|(stem, _)| stem == name)
        .map(|(_, tools)| tools)
        .unwrap_or_else(|| panic!("{name} is not in the corpus"))
}

/// One reviewed error: (server, tool, code).
type Reviewed = (String, String, String);

fn reviewed() -> Vec<(Reviewed, String)> {
    let text = std::fs::read_to_string(corpus_dir().join("reviewed-errors.json"))
        .expect("reviewed-errors.json");
    let list: Value = serde_json::from_str(&text).expect("reviewed list is JSON");
    list["reviewed"]
        .as_array()
        .expect("a `reviewed` array")
        .iter()
        .map(|e| {
            let field = |k: &str| e[k].as_str().unwrap_or_default().to_string();
            (
                (field("server"), field("tool"), field("code")),
                field("reason"),
            )
        })
        .collect()
}

#[test]
fn no_error_fires_on_real_servers_unless_reviewed_as_a_true_defect() {
    let servers = corpus();
    assert!(
        servers.len() >= 20,
        "the corpus holds {} servers",
        servers.len()
    );
    let reviewed = reviewed();
    for (entry, reason) in &reviewed {
        assert!(
            reason.split_whitespace().count() >= 8,
            "{entry:?} needs a reason a reviewer can check"
        );
    }
    let allowed: BTreeSet<&Reviewed> = reviewed.iter().map(|(e, _)| e).collect();
    let mut fired: BTreeSet<Reviewed> = BTreeSet::new();
    let mut unexpected = Vec::new();
    for (server, tools) in &servers {
        for f in lint_of(tools)
            .findings
            .iter()
            .filter(|f| f.severity == Severity::Error)
        {
            let key = (
                server.clone(),
                f.tool.clone().unwrap_or_default(),
                f.code.as_str().to_string(),
            );
            if !allowed.contains(&key) {
                unexpected.push(format!("{server}: {} {}", f.code, f.message));
            }
            fired.insert(key);
        }
    }
    assert!(unexpected.is_empty(), "{unexpected:#?}");
    // A reviewed entry that no longer fires is stale and must go.
    let stale: Vec<&Reviewed> = allowed
        .iter()
        .filter(|e| !fired.contains(**e))
        .copied()
        .collect();
    assert!(stale.is_empty(), "stale reviewed entries: {stale:#?}");
}

fn codes_on(report: &LintReport, code: Code) -> Vec<String> {
    report
        .findings
        .iter()
        .filter(|f| f.code == code)
        .map(|f| format!("{}: {}", f.tool.as_deref().unwrap_or("-"), f.message))
        .collect()
}

#[test]
fn argument_advice_and_ordinary_prose_are_not_text_aimed_at_the_model() {
    for (server, tools) in corpus() {
        let report = lint_of(&tools);
        // Nothing in these servers addresses a grader.
        assert!(
            codes_on(&report, Code::M005).is_empty(),
            "{server}: {:#?}",
            codes_on(&report, Code::M005)
        );
        for finding in codes_on(&report, Code::M003) {
            let lower = finding.to_lowercase();
            assert!(
                !lower.contains("absolute path") && !lower.contains("exact id"),
                "{server}: argument advice taken for a tool directive: {finding}"
            );
        }
    }
}

#[test]
fn the_fetch_servers_rewrite_of_the_models_instructions_is_flagged() {
    let report = lint_of(&server_tools("fetch"));
    let found = codes_on(&report, Code::M007);
    assert_eq!(found.len(), 1, "{found:#?}");
    assert!(
        found[0].contains("originally you did not have internet access"),
        "{found:?}"
    );
}

#[test]
fn the_git_server_gets_its_branch_type_choice_and_no_namespace_overlap() {
    let report = lint_of(&server_tools("git"));
    assert!(report
        .findings
        .iter()
        .any(|f| f.code == Code::P003 && f.parameter.as_deref() == Some("branch_type")));
    // The read-only message cites the verb that reads, not the namespace.
    assert!(report
        .findings
        .iter()
        .filter(|f| f.code == Code::A002)
        .all(|f| !f.message.contains("(\"git\")")));
}

#[test]
fn read_tools_marked_destructive_are_named() {
    for (server, tool) in [
        ("circleci", "find_flaky_tests"),
        ("notion", "API-post-search"),
    ] {
        let report = lint_of(&server_tools(server));
        assert!(
            report
                .findings
                .iter()
                .any(|f| f.code == Code::A005 && f.tool.as_deref() == Some(tool)),
            "{server} {tool}: {:#?}",
            codes_on(&report, Code::A005)
        );
    }
}
