//! The shields.io endpoint badge: `--badge FILE` of the gate (the head's mean and tier; "not
//! scored" for unchanged definitions; nothing for INVALID) and of `score`.

use crate::gate::harness::*;

#[test]
fn the_gate_badge_holds_the_head_mean_and_tier_and_invalid_runs_write_none() {
    let setup = Setup::new(&base_tools());
    let better = "Closes an open issue with an optional comment. Use this instead of delete when the history should stay. Closing a closed issue changes nothing. Returns the issue's number and new state; fails with an error when the number does not exist.";
    setup.set_head(&with_description(&base_tools(), "close_issue", better));
    setup.fake.control(script(vec![tool_rule(
        "close_issue",
        Some(better),
        None,
        5,
    )]));
    let badge = setup.work().join("tdqs.json");
    let badge_arg = badge.display().to_string();
    let run = setup.gate(&["--badge", &badge_arg]);
    run.assert_code(0);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&badge).unwrap()).unwrap();
    // The fake scores every other tool 4: a mean of 4.3 on the head, tier A.
    assert_eq!(
        written,
        serde_json::json!({"schemaVersion": 1, "label": "TDQS", "message": "4.3 (A)", "color": "brightgreen"}),
        "{}",
        run.describe()
    );

    // Unchanged definitions: PASS without scoring says so.
    let unchanged = Setup::new(&base_tools());
    let badge2 = unchanged.work().join("tdqs.json");
    let arg2 = badge2.display().to_string();
    unchanged.gate(&["--badge", &arg2]).assert_code(0);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&badge2).unwrap()).unwrap();
    assert_eq!(written["message"], "not scored");

    // INVALID writes no badge; a badge folder that does not exist is refused before the run.
    std::fs::remove_file(&badge2).unwrap();
    unchanged.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"no-such-program-xyz\"\n",
    );
    unchanged.gate(&["--badge", &arg2]).assert_code(2);
    assert!(!badge2.exists());
    let missing = unchanged.work().join("no/such/folder/tdqs.json");
    let run = unchanged.gate(&["--badge", &missing.display().to_string()]);
    run.assert_code(2);
    assert!(run.stderr.contains("--badge"), "{}", run.describe());
}

#[test]
fn score_writes_the_badge_of_the_scored_side() {
    let setup = Setup::new(&base_tools());
    let badge = setup.work().join("score-badge.json");
    let tmp = setup.work().join("tmp-score");
    std::fs::create_dir_all(&tmp).unwrap();
    let args: Vec<String> = vec![
        "score".into(),
        "--judge".into(),
        "static".into(),
        "--badge".into(),
        badge.display().to_string(),
    ];
    let output = setup.command(&args, &tmp).output().unwrap();
    let run = Run::from_output(output, setup.work().join("unused"));
    run.assert_code(0);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&badge).unwrap()).unwrap();
    assert_eq!(written["schemaVersion"], 1);
    assert_eq!(written["label"], "TDQS");
    let message = written["message"].as_str().unwrap();
    let tier = message
        .rsplit_once(" (")
        .map(|(_, t)| t.trim_end_matches(')'))
        .unwrap();
    let color = ["brightgreen", "green", "yellow", "orange", "red"][["A", "B", "C", "D", "F"]
        .iter()
        .position(|t| *t == tier)
        .unwrap()];
    assert_eq!(written["color"], color, "{written}");
    assert!(
        run.stderr.contains("badge written to"),
        "{}",
        run.describe()
    );
}
