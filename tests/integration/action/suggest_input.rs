//! The Action's `suggest` input: a bad value stops the first step; `true` passes `--suggest`,
//! and the report carries the rewrites of the tools that fell (with the static judge, the
//! checklist of what each is missing; no model is called).

use super::*;

#[test]
fn the_suggest_input_adds_the_rewrites_to_the_report() {
    let fixtures = Fixtures::new();
    let t = temp();
    let workspace = fixtures.clone("unchanged");
    let inputs = [("judge", "static"), ("suggest", "maybe")];
    let mut job = pull_request_job(&workspace, t.path(), &inputs, &refused_url(""));
    job.env.remove("TDQS_GATE_BIN");
    let run = runner::run(&job);
    let log = run.log();
    assert_eq!(run.step("prepare").outcome, Outcome::Failure, "{log}");
    assert!(
        run.errors()
            .iter()
            .any(|a| a.message.contains("suggest 'maybe' must be true or false")),
        "{log}"
    );

    let workspace = fixtures.clone("worse");
    let inputs = [("judge", "static"), ("suggest", "true")];
    let run = runner::run(&pull_request_job(
        &workspace,
        t.path(),
        &inputs,
        &refused_url(""),
    ));
    let log = run.log();
    assert_consistent(&run, "block", 1);
    assert!(log.contains("--suggest"), "{log}");
    let dir = run.artifacts.join("tool-definition-score");
    let report: Value =
        serde_json::from_str(&read(&dir.join("tool-definition-score.json"))).unwrap();
    let suggestions = &report["suggestions"];
    assert_eq!(suggestions["modelJudged"], false, "{report:#}");
    assert_eq!(suggestions["calls"], 0);
    let tools = suggestions["tools"].as_array().unwrap();
    assert!(!tools.is_empty(), "{suggestions:#}");
    assert!(
        tools.iter().all(|t| t["status"] == "checklist"),
        "{suggestions:#}"
    );
    assert!(
        run.summary.contains("Suggested rewrites"),
        "{}",
        run.summary
    );
}
