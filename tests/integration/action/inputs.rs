//! Inputs checked before anything runs (a bad value stops the first step, INVALID), and the
//! `eval` input that adds the selection check.

use super::*;

#[test]
fn bad_inputs_stop_before_anything_runs() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("unchanged");
    let t = temp();
    for (inputs, message) in [
        (vec![("judge", "gpt")], "judge 'gpt' is not one of"),
        (vec![("concurrency", "0")], "not a positive whole number"),
        (vec![("comment", "yes please")], "must be true or false"),
        (
            vec![("version", "latest")],
            "neither 'source' nor a release",
        ),
        (vec![("working-directory", "no/such/dir")], "does not exist"),
    ] {
        assert_inputs_refused(&workspace, t.path(), &inputs, message);
    }
    // Unbalanced quotes in args: nothing is exported or scored, INVALID with the cause.
    let run = run_without_api(
        &workspace,
        t.path(),
        &[
            ("judge", "static"),
            ("args", "--command 'python3 server.py"),
        ],
    );
    assert_eq!(run.outputs["decision"], "invalid", "{}", run.log());
    assert!(
        run.outputs["reason"].contains("unbalanced quotes"),
        "{}",
        run.log()
    );
    assert_eq!(run.step("Decide").exit_code, Some(2));
}

#[test]
fn the_eval_input_runs_the_selection_check() {
    let fixtures = Fixtures::new();
    let t = temp();
    // Bad values stop in the first step, before anything runs.
    let workspace = fixtures.clone("unchanged");
    for (inputs, message) in [
        (
            vec![("judge", "static"), ("eval", "model")],
            "eval 'model' is not one of synthetic, live_model",
        ),
        (
            vec![("judge", "static"), ("eval", "live_model")],
            "the static judge cannot select",
        ),
    ] {
        assert_inputs_refused(&workspace, t.path(), &inputs, message);
    }

    // eval: synthetic on the careless rewrite (most tools renamed): the careful suite, in the
    // head's tree, loses cases on the head (a case naming a tool the head does not list is a
    // miss), and the report, the summary and the page show the check with its mode.
    let workspace = fixtures.clone("worse");
    std::fs::copy(
        repo_root().join("examples/issue-tracker/eval-careful.toml"),
        workspace.join("tdqs-eval.toml"),
    )
    .unwrap();
    let run = run_without_api(
        &workspace,
        t.path(),
        &[("judge", "static"), ("eval", "synthetic")],
    );
    let log = run.log();
    assert_consistent(&run, "block", 1);
    assert!(log.contains("--eval=synthetic"), "{log}");
    let dir = run.artifacts.join("tool-definition-score");
    let report = uploaded_report(&run);
    let check = &report["eval"];
    assert_eq!(check["mode"], "synthetic", "{report:#}");
    // 13 cases fell and none rose: p = 0.0002, a significant fall, so the check blocks too.
    assert_eq!(
        (
            check["test"]["worse"].as_u64(),
            check["test"]["better"].as_u64()
        ),
        (Some(13), Some(0)),
        "{check:#}"
    );
    assert_eq!(check["blocks"], true, "{check:#}");
    assert!(
        check["headSelection"]["hit"].as_u64() < check["baseSelection"]["hit"].as_u64(),
        "{check:#}"
    );
    assert!(
        run.summary.contains("### Selection check (synthetic)"),
        "{}",
        run.summary
    );
    assert!(read(&dir.join("tool-definition-score.html"))
        .contains("<div class=\"selection-check\" data-mode=\"synthetic\" data-blocks=\"true\">"));

    // Without the input, the same run has no selection check.
    let workspace = fixtures.clone("worse");
    let run = run_without_api(&workspace, t.path(), &[("judge", "static")]);
    assert_consistent(&run, "block", 1);
    assert!(!run.log().contains("--eval"), "{}", run.log());
    let report = uploaded_report(&run);
    assert!(report.get("eval").is_none());
}
