//! A fallen tool points at the line of the head's tree that defines it: the report's
//! `causes.tools[].location` (checked against `schemas/report.schema.json`), the comment and
//! HTML page name the file and line, and the Action's warning lands on that line of the diff.

use serde_json::json;
use tdqs_gate::ci::annotations::{fallen_tool_annotations, for_report, ChangedLines};

use crate::gate::harness::{
    assert_schema_valid, base_tools, script, tool_rule, with_description, Setup,
};

const WORSE: &str = "Closes an issue.";

/// The harness's repository with close_issue's description cut in the working tree, and a
/// judge that scores the cut description 2 on every dimension; the head's tools too.
fn close_issue_falls() -> (Setup, serde_json::Value) {
    let setup = Setup::new(&base_tools());
    let head = with_description(&base_tools(), "close_issue", WORSE);
    setup.set_head(&head);
    setup
        .fake
        .control(script(vec![tool_rule("close_issue", Some(WORSE), None, 2)]));
    (setup, head)
}

#[test]
fn a_fallen_tool_carries_its_file_and_line_in_the_report_comment_and_page() {
    let (setup, head) = close_issue_falls();
    let run = setup.gate(&[]);
    run.assert_code(1);
    let report = run.report();
    assert_schema_valid(&report);
    let fallen = &report["causes"]["tools"][0];
    assert_eq!(fallen["tool"], "close_issue");
    // The head's tools.json is pretty JSON written by the harness: find the description's line.
    let text = serde_json::to_string_pretty(&head).unwrap();
    let needle = format!("\"description\": \"{WORSE}\"");
    let line = text
        .lines()
        .position(|l| l.contains(&needle))
        .map(|i| i + 1)
        .unwrap();
    assert_eq!(fallen["location"]["path"], "tools.json");
    assert_eq!(fallen["location"]["line"], json!(line));
    assert_eq!(fallen["location"]["confidence"], "high");
    assert!(fallen["location"]["column"].as_u64().unwrap() > 1);
    let label = format!("tools.json:{line}");
    let markdown = run.markdown();
    assert!(
        markdown.contains(&format!("defined at `{label}`")),
        "{markdown}"
    );
    let html = run.html();
    assert!(html.contains(&format!("<code>{label}</code>")), "{html}");

    // A tool the schema does not allow an extra key on: the location's shape is checked too.
    let mut edited = report.clone();
    edited["causes"]["tools"][0]["location"]["line"] = json!(0);
    let errors = std::panic::catch_unwind(|| assert_schema_valid(&edited));
    assert!(errors.is_err(), "line 0 passed the schema");

    // The Action's annotation: the description line changed against the base commit, so the
    // warning is rendered on it; with no changed line it is not.
    let typed: tdqs_core::report::model::Report = serde_json::from_value(report.clone()).unwrap();
    let causes = typed.causes.as_ref().unwrap();
    let base_commit = typed.base_commit.as_deref().unwrap();
    let changed = ChangedLines::since(&setup.repo.path, base_commit).unwrap();
    assert!(changed.contains("tools.json", line as u32));
    let warnings = fallen_tool_annotations(causes, &changed);
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    let column = fallen["location"]["column"].as_u64().unwrap();
    assert!(
        warnings[0].starts_with(&format!(
            "::warning file=tools.json,line={line},col={column},title=tdqs-gate%3A close_issue fell::TDQS of close_issue fell 4.0 → "
        )),
        "{}",
        warnings[0]
    );
    assert_eq!(for_report(&typed, &setup.repo.path, &[]), warnings);
    assert!(fallen_tool_annotations(causes, &ChangedLines::default()).is_empty());
    // Committed, the head is no longer the checkout the report scored: no line is claimed.
    setup.repo.commit_all("head");
    assert!(for_report(&typed, &setup.repo.path, &[]).is_empty());
}

#[test]
fn in_github_actions_the_fallen_tools_line_is_a_link_to_the_head_commit() {
    let (setup, _) = close_issue_falls();
    let run = setup.gate_with(&[], |command| {
        command
            .env("GITHUB_SERVER_URL", "https://github.com")
            .env("GITHUB_REPOSITORY", "octo/issue-tracker");
    });
    run.assert_code(1);
    let report = run.report();
    assert_schema_valid(&report);
    let location = &report["causes"]["tools"][0]["location"];
    let line = location["line"].as_u64().unwrap();
    let commit = setup.repo.rev_parse("HEAD");
    let url = format!("https://github.com/octo/issue-tracker/blob/{commit}/tools.json#L{line}");
    assert_eq!(location["url"], json!(url));
    let markdown = run.markdown();
    assert!(
        markdown.contains(&format!("defined at [`tools.json:{line}`]({url})")),
        "{markdown}"
    );
    let html = run.html();
    assert!(html.contains(&format!("href=\"{url}\"")), "{html}");

    // A host that is not https, or a repository that is not owner/name, gives no link.
    for (server, repository) in [
        ("http://github.com", "octo/issue-tracker"),
        ("https://github.com", "octo/issue tracker"),
        ("https://github.com", "octo"),
    ] {
        let run = setup.gate_with(&[], |command| {
            command
                .env("GITHUB_SERVER_URL", server)
                .env("GITHUB_REPOSITORY", repository);
        });
        run.assert_code(1);
        let location = &run.report()["causes"]["tools"][0]["location"];
        assert!(location.get("url").is_none(), "{server} {repository}");
        assert_eq!(location["path"], "tools.json");
    }
}
