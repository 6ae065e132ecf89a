//! The judge is checked before any setup or export: a Claude Code CLI that is not logged in
//! fails the run at once, naming `--judge static` as the offline path, and no side is exported.

use serde_json::{json, Value};

use crate::gate::harness::*;

/// A base configuration whose setup command leaves a mark in the test's folder when it runs.
fn with_marking_setup(setup: &Setup) -> std::path::PathBuf {
    let mark = setup.work().join("setup-ran");
    setup.repo.write(
        "tdqs-gate.toml",
        &format!(
            "[server]\ncommand = \"python3 {{root}}/server.py\"\nsetup = [[\"touch\", \"{}\"]]\n[sandbox]\nmode = \"off\"\n",
            mark.display()
        ),
    );
    setup.repo.commit_all("a setup command that marks");
    mark
}

#[test]
fn a_judge_that_is_not_logged_in_fails_before_any_setup_or_export() {
    let setup = Setup::new(&base_tools());
    let mark = with_marking_setup(&setup);
    setup.fake.control(json!({"logged_in": false}));
    let run = setup.gate(&[]);
    run.assert_code(2);
    assert!(!mark.exists(), "a setup command ran: {}", run.describe());
    let report = run.report();
    assert_eq!(report["decision"], "invalid");
    assert_eq!(report["error"]["stage"], "judge");
    assert!(
        report["base"].is_null() && report["head"].is_null(),
        "{report:#}"
    );
    let cause = report["error"]["cause"].as_str().unwrap();
    assert!(cause.contains("before exporting"), "{cause}");
    assert!(cause.contains("not logged in"), "{cause}");
    let advice = report["error"]["advice"].as_str().unwrap();
    assert!(advice.contains("`--judge static`"), "{advice}");
    assert!(run.stderr.contains("--judge static"), "{}", run.describe());
    // The preflight ran the CLI twice (version, login) and asked it nothing.
    let kinds: Vec<Value> = setup.fake.log().iter().map(|r| r["kind"].clone()).collect();
    assert_eq!(kinds, vec![json!("version"), json!("auth")]);
}

#[test]
fn the_static_judge_gates_the_same_repository_offline() {
    let setup = Setup::new(&base_tools());
    let mark = with_marking_setup(&setup);
    setup.fake.control(json!({"logged_in": false}));
    let run = setup.run(&["--base", "main", "--judge", "static"]);
    run.assert_code(0);
    assert!(mark.exists(), "the setup did not run: {}", run.describe());
    assert!(!setup.fake.ever_started());
}
