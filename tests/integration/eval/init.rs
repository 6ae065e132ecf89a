//! `tdqs-gate eval --init`: drafting a case file through a stand-in model, validating it, and
//! refusing to overwrite one without `--force`.

use super::*;

fn init_stand_in() -> Loopback {
    Loopback::start(move |req| match (req.method.as_str(), req.path.as_str()) {
        ("POST", "/v1/chat/completions") => {
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            let system = body["messages"][0]["content"].as_str().unwrap_or("");
            let user = body["messages"][1]["content"].as_str().unwrap_or("");
            let text = if system.contains("You write test cases") {
                // The linter's confusable pairs reach the drafting prompt.
                assert!(user.contains("Confusable pairs:"), "{user}");
                json!({"cases": [
                    {"id": "find-timeout", "request": "Which atlas issues talk about timeouts?", "expect": "search_issues", "kind": "positive", "sibling": ""},
                    {"id": "close-not-delete", "request": "We shipped the fix for atlas 5, wrap it up", "expect": "close_issue", "kind": "sibling", "sibling": "delete_issue"},
                    {"id": "maybe-triage", "request": "Maybe look at atlas 9?", "expect": "triage_issue", "kind": "positive", "sibling": ""},
                    {"id": "sms", "request": "Text Maria about the outage", "expect": "NO_TOOL", "kind": "abstain", "sibling": ""},
                    {"id": "invented", "request": "Merge atlas PR 3", "expect": "merge_pull_request", "kind": "positive", "sibling": ""}
                ]})
                .to_string()
            } else if system.contains("You review one test case") {
                let confidence = if user.contains("Maybe look") {
                    0.5
                } else {
                    0.9
                };
                json!({"confidence": confidence, "reason": "scripted"}).to_string()
            } else {
                panic!("unexpected question: {system}")
            };
            Response::ok(
                json!({"id": "c1", "object": "chat.completion", "model": body["model"],
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 100, "completion_tokens": 10}})
                .to_string(),
            )
            .with_header("content-type", "application/json")
        }
        ("GET", p) if p.starts_with("/v1/models") => {
            Response::ok(json!({"data": [{"id": MODEL, "object": "model"}]}).to_string())
                .with_header("content-type", "application/json")
        }
        _ => Response::status(404, "not found"),
    })
}

fn init(dir: &Path, url: &str, extra: &[&str]) -> Output {
    std::process::Command::new(GATE)
        .current_dir(dir)
        .args(["eval", "--init", "--repo"])
        .arg(dir)
        .arg("--command")
        .arg(server_command(dir, "careful"))
        .args(["--judge", "openai", "--model", MODEL, "--base-url", url])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn init_drafts_validates_and_refuses_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let server = init_stand_in();
    let url = server.url("");
    let out = init(dir.path(), &url, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("wrote 4 cases"), "{stdout}");
    assert!(stdout.contains("1 exploratory"), "{stdout}");
    assert!(
        stdout.contains("`merge_pull_request` is not a tool"),
        "{stdout}"
    );
    let path = dir.path().join("tdqs-eval.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("# Drafted by `tdqs-gate eval --init`"),
        "{text}"
    );
    let suite = tdqs_gate::eval::suite::parse(&text).unwrap();
    assert_eq!(suite.cases.len(), 4);
    for c in &suite.cases {
        assert_eq!(c.provenance.as_str(), "ai_generated");
        assert_eq!(c.exploratory, c.id == "maybe-triage", "{}", c.id);
        assert!(c.confidence.is_some());
    }
    assert_eq!(suite.cases[1].sibling.as_deref(), Some("delete_issue"));
    // One draft question, then one validation question per kept case.
    assert_eq!(
        server
            .requests()
            .iter()
            .filter(|r| r.path == "/v1/chat/completions")
            .count(),
        5
    );
    // The drafted file runs; the exploratory case is shown, not scored.
    let run = json_of(
        &std::process::Command::new(GATE)
            .current_dir(dir.path())
            .args(["eval", "--mode", "synthetic", "--json", "--repo"])
            .arg(dir.path())
            .arg("--command")
            .arg(server_command(dir.path(), "careful"))
            .output()
            .unwrap(),
    );
    assert_eq!(run["metrics"]["exploratory"], 1);
    assert_eq!(run["metrics"]["allCases"]["of"], 3);

    // A second --init refuses, leaving the file as it was; --force replaces it.
    std::fs::write(&path, "# mine\n").unwrap();
    let again = init(dir.path(), &url, &[]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "# mine\n");
    let forced = init(dir.path(), &url, &["--force"]);
    assert_eq!(forced.status.code(), Some(0));
    assert!(std::fs::read_to_string(&path).unwrap().contains("[[case]]"));
}
