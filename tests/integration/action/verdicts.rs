//! One pull-request run of the Action per verdict: PASS and BLOCK with the sticky comment posted
//! or updated, INVALID for a server that does not start, a missing token, a run outside a pull
//! request without a base, and a crash of the gate.

use super::*;

#[test]
fn unchanged_definitions_pass_without_a_token_and_post_the_sticky_comment() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("unchanged");
    assert!(!git(&workspace, &["rev-parse", "--verify", "origin/main"]).0);
    let claude = FakeClaude::new(false);
    let (api, requests) = comments_api(vec![comment(1, "LGTM")], 201);
    let t = temp();
    let mut job = pull_request_job(&workspace, t.path(), &[("comment", "true")], &api.url(""));
    let run = claude.run_action(&mut job);
    let log = run.log();
    assert_consistent(&run, "pass", 0);
    assert_eq!(run.outputs["scored"], "false");
    assert_eq!(run.outputs["exit-code"], "0");
    // The base was fetched into the shallow clone.
    assert!(
        git(&workspace, &["rev-parse", "--verify", "origin/main"]).0,
        "{log}"
    );
    assert!(
        log.contains("git fetch --no-tags --depth=1 origin"),
        "{log}"
    );
    assert_eq!(run.step("base").outputs["base"], "origin/main");
    // The report is where the output says, and was uploaded.
    let report = PathBuf::from(&run.outputs["report"]);
    assert_eq!(
        report,
        workspace.join(".tool-definition-score/tool-definition-score.json")
    );
    let json: Value = serde_json::from_str(&read(&report)).expect("report JSON");
    assert_eq!(json["decision"], "pass");
    let upload = run.step("Upload the report");
    assert!(upload
        .uses
        .as_deref()
        .is_some_and(|u| u.starts_with("actions/upload-artifact@")));
    assert_eq!(upload.with["include-hidden-files"], "true");
    let uploaded = run.artifacts.join("tool-definition-score");
    assert!(uploaded.join("tool-definition-score.json").is_file());
    assert!(uploaded.join("tool-definition-score.md").is_file());
    // The HTML page travels in the same artifact.
    assert!(uploaded.join("tool-definition-score.html").is_file());
    // No model was needed: the fake CLI was never asked a question.
    assert!(claude.runs().iter().all(|r| r["kind"] != "call"));
    // The given CLI folder is used as is (no npm install).
    assert_eq!(
        run.step("install").outputs.get("claude-dir"),
        Some(&claude.path())
    );
    // One comment posted, with the marker and the summary, authorised with the job's token.
    let requests = requests.lock().unwrap().clone();
    let posts: Vec<&Request> = requests.iter().filter(|r| r.method == "POST").collect();
    assert_eq!(posts.len(), 1, "{requests:?}");
    assert_eq!(
        posts[0].header("authorization"),
        Some("Bearer ghs_job_token_for_tests")
    );
    let body: Value = serde_json::from_slice(&posts[0].body).expect("JSON body");
    let text = body["body"].as_str().expect("body text");
    assert!(text.starts_with(MARKER), "{text}");
    assert!(text.contains("Tool definition score: PASS"), "{text}");
    assert!(
        text.contains("https://github.invalid/octo/issue-tracker/actions/runs/4242"),
        "{text}"
    );
    assert!(!requests.iter().any(|r| r.method == "PATCH"));
    assert!(run
        .annotations
        .iter()
        .any(|a| a.level == "notice" && a.title == "tdqs-gate: PASS"));
}

#[test]
fn worse_definitions_block_with_the_static_judge_and_update_the_sticky_comment() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("worse");
    // 150 comments: the Action's own sits on the second page.
    let mut existing: Vec<Value> = (1..=150).map(|i| comment(i, "a comment")).collect();
    existing[120] = json!({"id": 121, "body": format!("{MARKER}\n## old summary"), "user": {"login": "github-actions[bot]"}});
    existing[10] = comment(11, &format!("> {MARKER} quoted by someone"));
    // Spoofed: the marker line exactly, by someone else, before the Action's own comment.
    existing[20] = comment(21, &format!("{MARKER}\n## PASS, trust me"));
    let (api, requests) = comments_api(existing, 201);
    let t = temp();
    let job = pull_request_job(
        &workspace,
        t.path(),
        &[
            ("judge", "static"),
            ("comment", "true"),
            ("concurrency", "2"),
        ],
        &api.url(""),
    );
    let run = runner::run(&job);
    let log = run.log();
    assert_consistent(&run, "block", 1);
    assert_eq!(run.outputs["scored"], "true");
    assert_eq!(run.step("gate").outcome, Outcome::Success, "{log}");
    assert!(log.contains("--concurrency=2"), "{log}");
    assert!(run.summary.contains("static"), "{}", run.summary);
    let errors = run.errors();
    assert!(
        errors
            .iter()
            .any(|a| a.title == "tdqs-gate: BLOCK" && a.message.contains("mean TDQS fell")),
        "{errors:?}"
    );
    // Each fallen tool defined on a line the pull request changed is annotated on that line.
    let on_lines: Vec<&runner::Annotation> = run
        .annotations
        .iter()
        .filter(|a| a.level == "warning" && a.file.is_some())
        .collect();
    // careless.json replaces every description, so every fallen tool's line changed.
    assert!(!on_lines.is_empty(), "{:?}", run.annotations);
    for a in &on_lines {
        assert_eq!(a.file.as_deref(), Some("tools.json"), "{a:?}");
        assert!(a.line.is_some_and(|l| l > 1), "{a:?}");
        assert!(
            a.title.starts_with("tdqs-gate: ") && a.title.ends_with(" fell"),
            "{a:?}"
        );
        assert!(a.message.starts_with("TDQS of "), "{a:?}");
    }
    // The upload ran although the job fails.
    assert!(run
        .artifacts
        .join("tool-definition-score/tool-definition-score.md")
        .is_file());
    let requests = requests.lock().unwrap().clone();
    let patches: Vec<&Request> = requests.iter().filter(|r| r.method == "PATCH").collect();
    assert_eq!(patches.len(), 1, "{requests:?}");
    assert_eq!(
        patches[0].path,
        "/repos/octo/issue-tracker/issues/comments/121"
    );
    let body: Value = serde_json::from_slice(&patches[0].body).expect("JSON body");
    assert!(body["body"]
        .as_str()
        .unwrap()
        .contains("Tool definition score: BLOCK"));
    assert!(!requests.iter().any(|r| r.method == "POST"));
    assert_eq!(
        requests.iter().filter(|r| r.method == "GET").count(),
        2,
        "{requests:?}"
    );
}

#[test]
fn a_server_that_does_not_start_is_invalid_and_cannot_issue_workflow_commands() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("broken");
    // A fork's read-only token: the comment cannot be posted, which only warns.
    let (api, _requests) = comments_api(Vec::new(), 403);
    let t = temp();
    let job = pull_request_job(
        &workspace,
        t.path(),
        &[("judge", "static"), ("comment", "true")],
        &api.url(""),
    );
    let run = runner::run(&job);
    let log = run.log();
    assert_consistent(&run, "invalid", 2);
    assert_eq!(run.outputs["exit-code"], "2");
    assert!(run.summary.contains("INVALID"), "{}", run.summary);
    // The server runs in the export step (which holds no token): its stderr reaches that
    // step's log, and its workflow command stays text.
    let export = run.step("export");
    assert!(
        export.log.contains("cannot load the tool registry"),
        "{}",
        export.log
    );
    assert!(
        export.log.contains("::warning title=injected::"),
        "{}",
        export.log
    );
    // The scoring step says why it is INVALID.
    assert!(
        run.step("gate").log.contains("INVALID: "),
        "{}",
        run.step("gate").log
    );
    assert!(
        !run.annotations.iter().any(|a| a.title == "injected"),
        "{:?}",
        run.annotations
    );
    assert!(run.errors().iter().any(|a| a.title == "tdqs-gate: INVALID"));
    // No fork hint: the judge was not the reason.
    assert!(!log.contains("No Claude Code token reached"), "{log}");
    assert!(run
        .annotations
        .iter()
        .any(|a| a.level == "warning" && a.message.contains("403")));
    assert_eq!(
        run.step("Comment on the pull request").outcome,
        Outcome::Success
    );
}

#[test]
fn changed_definitions_without_a_token_are_invalid_with_the_fork_hint() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("worse");
    let claude = FakeClaude::new(false);
    let t = temp();
    let mut job = pull_request_job(&workspace, t.path(), &[], &refused_url(""));
    let run = claude.run_action(&mut job);
    let log = run.log();
    assert_consistent(&run, "invalid", 2);
    assert_eq!(run.outputs["scored"], "false");
    let invalid = run
        .errors()
        .into_iter()
        .find(|a| a.title == "tdqs-gate: INVALID")
        .cloned()
        .unwrap_or_else(|| panic!("no INVALID annotation:\n{log}"));
    assert!(
        invalid.message.contains("judge cannot run"),
        "{}",
        invalid.message
    );
    assert!(invalid.message.contains("fork"), "{}", invalid.message);
    assert!(
        invalid.message.contains("judge: static"),
        "{}",
        invalid.message
    );
    assert!(run
        .summary
        .contains("A pull request from a fork gets no repository secrets"));
    let report: Value = serde_json::from_str(&read(Path::new(&run.outputs["report"]))).unwrap();
    assert_eq!(report["error"]["stage"], "judge");
    assert!(claude.runs().iter().all(|r| r["kind"] != "call"));
}

#[test]
fn a_run_outside_a_pull_request_needs_a_base() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("unchanged");
    let t = temp();
    let mut job = pull_request_job(
        &workspace,
        t.path(),
        &[("judge", "static")],
        &refused_url(""),
    );
    job.env.remove("GITHUB_BASE_REF");
    job.env
        .insert("GITHUB_EVENT_NAME".to_string(), "push".to_string());
    let run = runner::run(&job);
    let log = run.log();
    assert!(run.failed);
    assert_eq!(run.step("base").outcome, Outcome::Failure);
    assert_eq!(run.step("gate").outcome, Outcome::Skipped);
    assert_eq!(run.outputs["decision"], "invalid");
    assert_eq!(run.step("Decide").exit_code, Some(2));
    assert!(log.contains("set the action's base input"), "{log}");
    assert!(run
        .errors()
        .iter()
        .any(|a| a.message.contains("tdqs-gate did not run")));

    // With the input, the same run passes; the working directory may be given as an input.
    let parent = workspace.parent().unwrap().to_path_buf();
    let mut job = pull_request_job(
        &parent,
        t.path(),
        &[
            ("judge", "static"),
            ("base", "origin/main"),
            ("working-directory", "unchanged"),
            ("report-dir", "out/report"),
        ],
        &refused_url(""),
    );
    job.env.remove("GITHUB_BASE_REF");
    let run = runner::run(&job);
    assert_consistent(&run, "pass", 0);
    assert_eq!(
        PathBuf::from(&run.outputs["report"]),
        workspace.join("out/report/tool-definition-score.json")
    );
}

#[test]
fn a_crash_of_the_gate_is_invalid_whatever_its_exit_code() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("unchanged");
    let t = temp();
    let crashing = t.path().join("crashing-gate");
    std::fs::write(
        &crashing,
        "#!/bin/sh\necho 'thread main panicked' >&2\nexit 137\n",
    )
    .unwrap();
    std::fs::set_permissions(
        &crashing,
        std::os::unix::fs::PermissionsExt::from_mode(0o755),
    )
    .unwrap();
    let mut job = pull_request_job(
        &workspace,
        t.path(),
        &[("judge", "static")],
        &refused_url(""),
    );
    job.env
        .insert("TDQS_GATE_BIN".to_string(), crashing.display().to_string());
    let run = runner::run(&job);
    let log = run.log();
    assert_consistent(&run, "invalid", 2);
    assert_eq!(run.outputs["exit-code"], "137");
    assert_eq!(run.outputs["report"], "");
    assert!(run.summary.contains("exit code 137"), "{}", run.summary);
    assert!(run.summary.contains("wrote no report"), "{}", run.summary);
    assert!(log.contains("neither PASS (0) nor BLOCK (1)"), "{log}");
}
