//! `--check` of a report: a fresh one is accepted with its own verdict and no model call; an
//! edited, forged or outdated one is refused.

use super::*;

/// A BLOCK run and its report, for the `--check` tests.
fn blocked() -> (Setup, Run) {
    let setup = drop_setup(&[1, 2, 3]);
    let run = setup.gate(&[]);
    run.assert_code(1);
    (setup, run)
}

fn edited_report(setup: &Setup, run: &Run, edit: impl FnOnce(&mut Value)) -> std::path::PathBuf {
    let mut report = run.report();
    edit(&mut report);
    let path = setup.work().join("edited.json");
    std::fs::write(&path, pretty(&report)).unwrap();
    path
}

#[test]
fn check_accepts_a_fresh_report_with_its_own_verdict_and_no_model_call() {
    let (setup, run) = blocked();
    let calls = setup.fake.log().len();
    let requests = setup.spec.request_count();
    let checked = check(&setup, &run.report_path());
    checked.assert_code(1);
    assert!(
        checked.stdout.starts_with("BLOCK: "),
        "{}",
        checked.describe()
    );
    assert_eq!(setup.fake.log().len(), calls, "--check started the judge");
    assert_eq!(setup.spec.request_count(), requests);

    let passed = Setup::new(&base_tools());
    passed.set_head(&head_with(REWORDED));
    passed.fake.control(script(vec![]));
    let run = passed.gate(&[]);
    run.assert_code(0);
    check(&passed, &run.report_path()).assert_code(0);

    let unchanged = Setup::new(&base_tools());
    let run = unchanged.gate(&[]);
    check(&unchanged, &run.report_path()).assert_code(0);
}

/// Each edit of a saved report is refused, naming what no longer follows (one BLOCK run, one
/// edited copy of its report a row).
#[test]
fn check_rejects_each_edit_of_a_report() {
    type Edit = fn(&mut Value);
    let edits: [(&str, Edit, &str); 4] = [
        (
            "a score",
            |r| {
                r["pairs"][1]["head"]["tools"]["close_issue"]["scores"]["purpose_clarity"] =
                    json!(5)
            },
            "pair 2 head: tool `close_issue` records TDQS 1.8 but its scores give 2.6",
        ),
        (
            "the export",
            |r| r["head"]["tools"][0]["description"] = json!("Edited after the run."),
            "the report's head export",
        ),
        (
            "the account of what fell",
            |r| {
                r["causes"]["tools"][0]["dimensions"][0]["justification"] = json!("Edited by hand.")
            },
            "(`causes`) does not follow from its first pair",
        ),
        (
            "the pair count",
            |r| {
                r["pairs"].as_array_mut().unwrap().pop();
            },
            "the report has 2 pairs but the noise-aware rule requires more",
        ),
    ];
    let (setup, run) = blocked();
    for (what, edit, refusal) in edits {
        let path = edited_report(&setup, &run, edit);
        let checked = check(&setup, &path);
        checked.assert_code(2);
        assert!(
            checked.stderr.contains(refusal),
            "an edit of {what}: {}",
            checked.describe()
        );
    }
}

#[test]
fn check_rejects_a_head_changed_since_the_report() {
    let (setup, run) = blocked();
    setup.set_head(&with_description(
        &head_with(WORSE),
        "get_issue",
        "Returns one issue.",
    ));
    let checked = check(&setup, &run.report_path());
    checked.assert_code(2);
    assert!(
        checked
            .stderr
            .contains("the head's tool definitions changed since the report: `get_issue`"),
        "{}",
        checked.describe()
    );
}

/// A `--judge static` run of `drop_setup`'s head, which BLOCKs, with its report.
fn blocked_static() -> (Setup, Run) {
    let setup = Setup::new(&base_tools());
    setup.set_head(&head_with(WORSE));
    let run = setup.run(&[
        "--base",
        "main",
        "--judge",
        "static",
        "--pins",
        harness::standin_pins().to_str().unwrap(),
    ]);
    run.assert_code(1);
    (setup, run)
}

/// Rewrites a report the way a forger with the library would: every head tool scored 5 on every
/// dimension, then every derived field (TDQS, tier, smells, rollups, pair count, decision,
/// medians, reason, causes) recomputed so the report is self-consistent.
fn forge_pass(report: &Value) -> Value {
    use tdqs_core::report::Report;
    use tdqs_gate::gate::decision::{step, JudgeNoise, Step};
    let pins = tdqs_gate::spec::load_pins(Some(&harness::standin_pins())).unwrap();
    let weights = pins.weights();
    let mut r: Report = serde_json::from_value(report.clone()).unwrap();
    for pair in &mut r.pairs {
        for tool in pair.head.tools.values_mut() {
            for s in tool.scores.values_mut() {
                *s = 5;
            }
            tool.tdqs = weights.tdqs(&tool.scores);
            tool.tier = weights.tiers.tier(tool.tdqs);
            tool.smells = tdqs_gate::score::side::smells(&tool.scores);
        }
        pair.head.rollups =
            tdqs_gate::score::side::rollups(&pair.head.tools, &pair.head.coherence, &weights);
    }
    // Decided again by the rule the report names, as --check does.
    let rule_in_use = r.decision_rule.expect("the report names its rule");
    let confirmation = tdqs_core::decide::ConfirmationRule::from_pins(&pins);
    let first_pair_only = step(&r.pairs[..1], rule_in_use, confirmation, JudgeNoise::Model);
    if first_pair_only != Step::ScoreMore {
        r.pairs.truncate(1);
    }
    let Step::Decided {
        verdict,
        reason,
        medians,
        assessment,
    } = step(&r.pairs, rule_in_use, confirmation, JudgeNoise::Model)
    else {
        panic!("the forged pairs do not decide")
    };
    r.decision = verdict;
    r.exit_code = verdict.code();
    r.reason = reason;
    r.median = medians;
    r.assessment = assessment;
    r.causes = tdqs_core::report::causes::of_first_pair_with_changes(
        &r.pairs,
        r.base.as_ref(),
        r.head.as_ref(),
    );
    serde_json::to_value(&r).unwrap()
}

fn write_forged(setup: &Setup, report: &Value) -> std::path::PathBuf {
    let path = setup.work().join("forged.json");
    std::fs::write(&path, pretty(report)).unwrap();
    path
}

#[test]
fn forged_pass_is_refused() {
    // Rule judge: the answers are recomputed, so a BLOCK turned into a self-consistent PASS fails.
    let (setup, run) = blocked_static();
    check(&setup, &run.report_path()).assert_code(1);
    let forged = forge_pass(&run.report());
    assert_eq!(forged["decision"], "pass");
    let checked = check(&setup, &write_forged(&setup, &forged));
    checked.assert_code(2);
    assert!(
        checked
            .stderr
            .contains("pair 1 head is not what the static judge answers for this export: tool `close_issue` differs"),
        "{}",
        checked.describe()
    );

    // Model judge: the answers cannot be recomputed, but every label around them can.
    let (setup, run) = blocked();
    let report = run.report();
    type Edit = fn(&mut Value);
    let edits: [(Edit, &str); 6] = [
        (
            |r| r["reason"] = json!("The head is as good as the base."),
            "the recorded reason does not follow from the report",
        ),
        (
            |r| r["versions"]["model"] = json!("another-model"),
            "the report's `versions` are not the pins it names by digest",
        ),
        (
            |r| r["scoring"]["judge"]["model"] = json!("another-model"),
            "the report's scoring digest does not follow",
        ),
        (
            |r| r["scoring"]["judge"]["mode"] = json!("static"),
            "the report's scoring digest does not follow",
        ),
        (
            |r| r["generator"]["version"] = json!("0.0.1-forged"),
            "the report says it was written by tdqs-gate 0.0.1-forged",
        ),
        (
            |r| r["scored"] = json!(false),
            "the report says scored = false",
        ),
    ];
    for (edit, expected) in edits {
        let mut forged = report.clone();
        edit(&mut forged);
        let checked = check(&setup, &write_forged(&setup, &forged));
        checked.assert_code(2);
        assert!(
            checked.stderr.contains(expected),
            "{expected}: {}",
            checked.describe()
        );
    }
}
