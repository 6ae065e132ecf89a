//! The Action's `suggest` input: a bad value stops the first step; `true` passes `--suggest`,
//! and the report carries the rewrites of the tools that fell (with the static judge, the
//! checklist of what each is missing; no model is called).

use super::*;

#[test]
fn the_suggest_input_adds_the_rewrites_to_the_report() {
    let fixtures = Fixtures::new();
    let t = temp();
    let workspace = fixtures.clone("unchanged");
    assert_inputs_refused(
        &workspace,
        t.path(),
        &[("judge", "static"), ("suggest", "maybe")],
        "suggest 'maybe' must be true or false",
    );

    let workspace = fixtures.clone("worse");
    let run = run_without_api(
        &workspace,
        t.path(),
        &[("judge", "static"), ("suggest", "true")],
    );
    let log = run.log();
    assert_consistent(&run, "block", 1);
    assert!(log.contains("--suggest"), "{log}");
    let report = uploaded_report(&run);
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
