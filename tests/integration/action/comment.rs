//! The sticky comment's text: a summary longer than GitHub allows is cut to fit one comment.

use super::*;

#[test]
fn a_long_summary_is_cut_to_fit_one_comment() {
    let t = temp();
    let report_dir = t.path().join("report");
    std::fs::create_dir_all(&report_dir).unwrap();
    let long = format!(
        "## ❌ Tool definition score: BLOCK\n\n{}",
        "| `tool` | 4.0 | 3.0 | -0.1 |\n".repeat(4000)
    );
    std::fs::write(report_dir.join("tool-definition-score.md"), &long).unwrap();
    let event = t.path().join("event.json");
    std::fs::write(&event, json!({"pull_request": {"number": 7}}).to_string()).unwrap();
    let (api, requests) = comments_api(Vec::new(), 201);
    let output = Command::new("bash")
        .arg(repo_root().join("action/entrypoint.sh"))
        .arg("comment")
        .env("GH_TOKEN", "ghs_x")
        .env("GITHUB_EVENT_PATH", &event)
        .env("GITHUB_REPOSITORY", "octo/issue-tracker")
        .env("FAKE_GH_API", api.url(""))
        .env("TDQS_GATE_GH", fake_gh(t.path()))
        .env("GATE_BIN", GATE)
        .env("ARTIFACT_NAME", "tool-definition-score")
        .env("COMMENT_AUTHOR", "github-actions[bot]")
        .env("REPORT_DIR", &report_dir)
        .env("RUNNER_TEMP", t.path())
        .env("LANG", "C.UTF-8")
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    let requests = requests.lock().unwrap().clone();
    let post = requests
        .iter()
        .find(|r| r.method == "POST")
        .expect("posted");
    let body: Value = serde_json::from_slice(&post.body).unwrap();
    let text = body["body"].as_str().unwrap();
    assert!(long.len() > 65_536);
    assert!(text.chars().count() <= 65_536, "{}", text.chars().count());
    assert!(text.starts_with(MARKER));
    assert!(
        text.contains("cut to fit a comment"),
        "{}",
        &text[text.len() - 300..]
    );
}
