//! The real gate through the Claude Code judge path with the fake `claude`'s seeded noise mode
//! (`tests/helpers/fake_claude_noise.rs`): what must hold whatever the seed. Rates over many
//! seeds are measured by `scripts/bench-decisions-e2e.py`, not here (five gate runs in all).

use serde_json::{json, Value};

use crate::gate::harness::*;

/// `close_issue` said another way, of the same quality (the fake's truth table says so).
const REWORDED: &str = "Closes an open issue, optionally after adding a comment. Prefer this \
over deleting when the history should stay; closing a closed issue changes nothing.";

/// True scores for the four fixture tools: some dimensions sit near a rounding boundary (x.5),
/// so the noise moves answers between calls; none is further than that from another.
fn truth() -> Vec<Value> {
    let tools = [
        ("search_issues", [3.8, 3.45, 3.2, 3.6, 4.1, 3.55]),
        ("get_issue", [4.2, 2.6, 3.45, 3.3, 4.4, 3.5]),
        ("create_issue", [3.6, 2.45, 3.9, 3.4, 4.3, 3.2]),
        ("close_issue", [3.55, 3.7, 2.8, 2.45, 4.2, 3.4]),
    ];
    let dimensions = [
        "purpose_clarity",
        "usage_guidelines",
        "behavioral_transparency",
        "parameter_semantics",
        "conciseness_structure",
        "contextual_completeness",
    ];
    let mut rules: Vec<Value> = tools
        .iter()
        .map(|(name, scores)| {
            let scores: serde_json::Map<String, Value> = dimensions
                .iter()
                .zip(scores)
                .map(|(d, s)| (d.to_string(), json!(s)))
                .collect();
            json!({"kind": "tool", "contains": [format!("Tool under review: {name}\n")], "scores": scores})
        })
        .collect();
    rules.push(json!({"kind": "coherence", "all": 3.6}));
    rules
}

fn noise(seed: u64, sigma: f64, jump_probability: f64) -> Value {
    json!({"noise": {"seed": seed, "sigma": sigma, "jump_probability": jump_probability,
                     "jump": 1.0, "truth": truth()}})
}

/// Re-checks a run's report with `--check`: it must verify and re-decide the same verdict.
fn assert_checks(setup: &Setup, run: &Run) {
    let report = run.report();
    assert_schema_valid(&report);
    let checked = setup.run(&[
        "--check",
        run.report_path().to_str().unwrap(),
        "--pins",
        standin_pins().to_str().unwrap(),
        "--cache-dir",
        setup.cache_dir().to_str().unwrap(),
    ]);
    checked.assert_code(run.code);
}

/// The TDQS each call's draw gives, by exact prompt, over the fake's whole log.
fn answers_by_prompt(setup: &Setup) -> std::collections::BTreeMap<String, Vec<Value>> {
    let mut out: std::collections::BTreeMap<String, Vec<Value>> = Default::default();
    for call in setup.fake.calls() {
        if call["question"] == "tool" {
            out.entry(call["stdin"].as_str().unwrap().to_string())
                .or_default()
                .push(call["noise"]["scores"].clone());
        }
    }
    out
}

#[test]
fn noisy_judge_end_to_end_a_same_quality_reword_never_blocks() {
    let setup = Setup::new(&base_tools());
    setup.set_head(&with_description(&base_tools(), "close_issue", REWORDED));
    let mut confirmed = 0;
    for seed in [3, 17, 40] {
        setup.fake.control(noise(seed, 0.1, 0.01));
        let run = setup.gate(&[]);
        // PASS, never BLOCK (and never INVALID: every noisy answer is a valid answer).
        run.assert_code(0);
        assert_checks(&setup, &run);
        confirmed += usize::from(run.report()["pairs"].as_array().unwrap().len() == 3);
    }
    // The noise is real: some prompt was answered differently on different calls.
    let answers = answers_by_prompt(&setup);
    assert!(
        answers
            .values()
            .any(|a| a.iter().any(|scores| scores != &a[0])),
        "no repeated prompt got a different answer: {answers:?}"
    );
    // Every call carried a draw of the noise mode.
    assert!(setup
        .fake
        .calls()
        .iter()
        .all(|c| c["noise"]["seed"].is_u64()));
    // With these seeds at least one first pair dropped and was not confirmed, so the runs went
    // through the confirmation path too (deterministic for these seeds).
    assert!(confirmed >= 1, "no run asked for confirmation pairs");
}

#[test]
fn noisy_judge_end_to_end_a_deleted_description_always_blocks() {
    let setup = Setup::new(&base_tools());
    let mut head = base_tools();
    head.as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["name"] == "close_issue")
        .unwrap()
        .as_object_mut()
        .unwrap()
        .remove("description");
    setup.set_head(&head);
    // A noisier judge than the reference measured (0.2, one jump in ten answers' dimensions).
    for seed in [5, 29] {
        setup.fake.control(noise(seed, 0.2, 0.1));
        let run = setup.gate(&[]);
        run.assert_code(1);
        let report = run.report();
        assert_eq!(report["decision"], "block");
        // The reason names what fell: the mean, or the tool by the per-tool guard.
        let reason = report["reason"].as_str().unwrap();
        assert!(
            reason.contains("close_issue") || reason.contains("mean TDQS fell"),
            "{reason}"
        );
        assert_checks(&setup, &run);
    }
}
