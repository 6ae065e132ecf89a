//! `check` re-decides with the rule the base configuration and the pins require, re-checks every
//! server the base configures, and with `--expect-digest` refuses a report that is not the file
//! the gate wrote (security review, round 3).

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::gate::harness::{
    base_tools, example_server, pretty, script, standin_pins, tool_rule, twelve_tools,
    with_description, Run, Setup,
};

const WORSE: &str = "Closes an issue.";

/// close_issue falls 4.0 → 3.4 on every pair: BLOCK by the default guard (0.5) only.
fn falling_tool() -> Setup {
    let base = twelve_tools();
    let setup = Setup::new(&base);
    setup.set_head(&with_description(&base, "close_issue", WORSE));
    let mut lower = tool_rule("close_issue", Some(WORSE), None, 4);
    lower["scores"] = json!({"purpose_clarity": 2, "conciseness_structure": 3});
    setup.fake.control(script(vec![lower]));
    setup
}

/// `tdqs-gate check REPORT` with the stand-in pins and `extra`.
fn check(setup: &Setup, report: &Path, extra: &[&str]) -> Run {
    let pins = standin_pins().display().to_string();
    let report = report.display().to_string();
    let mut args = vec!["check", report.as_str(), "--pins", pins.as_str()];
    args.extend(extra);
    setup.run(&args)
}

/// A copy of a run's report beside it, edited by `edit`.
fn edited(run: &Run, edit: impl FnOnce(&mut Value)) -> PathBuf {
    let mut report = run.report();
    edit(&mut report);
    let path = run.report_dir.join("edited.json");
    std::fs::write(&path, pretty(&report)).unwrap();
    path
}

#[test]
fn check_refuses_a_report_decided_with_a_raised_tool_drop() {
    let setup = falling_tool();
    setup.gate(&[]).assert_code(1);
    // A report exactly as an editor who set toolDrop 0.5 -> 4.0 and re-derived everything
    // else would write it: the gate's own run with --tool-drop 4.0.
    let raised = setup.gate(&["--tool-drop", "4.0"]);
    raised.assert_code(0);
    assert_eq!(raised.report()["decisionRule"]["toolDrop"], 4.0);
    let run = check(&setup, &raised.report_path(), &[]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("tool-drop 4.0") && run.stderr.contains("tool-drop 0.5"),
        "{}",
        run.describe()
    );
    // Given the same flag, check accepts the run it made.
    check(&setup, &raised.report_path(), &["--tool-drop", "4.0"]).assert_code(0);
}

#[test]
fn check_refuses_a_report_without_its_rule_and_cut_to_one_pair() {
    let setup = falling_tool();
    let blocked = setup.gate(&[]);
    blocked.assert_code(1);
    check(&setup, &blocked.report_path(), &[]).assert_code(1);
    // The reference rule's one-pair PASS, its rule removed: it reads as decided by the
    // reference rule, which the pins do not ask for.
    let reference = setup.gate(&["--decision-rule", "reference"]);
    reference.assert_code(0);
    assert_eq!(reference.report()["pairs"].as_array().unwrap().len(), 1);
    let stripped = edited(&reference, |r| {
        r.as_object_mut().unwrap().remove("decisionRule");
    });
    let run = check(&setup, &stripped, &[]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("no recorded rule") && run.stderr.contains("noise-aware"),
        "{}",
        run.describe()
    );
}

#[test]
fn check_refuses_a_monorepo_report_without_a_configured_server() {
    let setup = Setup::new(&base_tools());
    for name in ["api", "search"] {
        setup
            .repo
            .write(&format!("{name}/server.py"), &example_server());
        setup
            .repo
            .write(&format!("{name}/tools.json"), &pretty(&base_tools()));
    }
    setup.repo.write(
        "tdqs-gate.toml",
        "[[server]]\nname = \"api\"\ncommand = \"python3 {root}/api/server.py\"\n\n\
         [[server]]\nname = \"search\"\ncommand = \"python3 {root}/search/server.py\"\n",
    );
    setup.repo.commit_all("two servers");
    setup.repo.write(
        "api/tools.json",
        &pretty(&with_description(&base_tools(), "close_issue", WORSE)),
    );
    setup
        .fake
        .control(script(vec![tool_rule("close_issue", Some(WORSE), None, 1)]));
    let both = setup.gate(&[]);
    both.assert_code(1);
    check(&setup, &both.report_path(), &[]).assert_code(1);
    // The report of `search` alone: what deleting the blocking server from the report leaves.
    let one = setup.gate(&["--server", "search"]);
    one.assert_code(0);
    let run = check(&setup, &one.report_path(), &[]);
    run.assert_code(2);
    assert!(run.stderr.contains("no server `api`"), "{}", run.describe());
    // Named on check's command line, the one server is what is asked for.
    check(&setup, &one.report_path(), &["--server", "search"]).assert_code(0);
}

#[test]
fn check_expect_digest_refuses_a_report_that_is_not_the_written_file() {
    let setup = falling_tool();
    let outputs = setup.work().join("github-output");
    let run = setup.gate_with(&[], |c| {
        c.env("GITHUB_OUTPUT", &outputs);
    });
    run.assert_code(1);
    let text = std::fs::read_to_string(&outputs).unwrap();
    let digest = text
        .lines()
        .find_map(|l| l.strip_prefix("report-sha256="))
        .expect("report-sha256 output")
        .to_string();
    assert_eq!(digest.len(), 64);
    check(&setup, &run.report_path(), &["--expect-digest", &digest]).assert_code(1);
    // One byte more: the same JSON, another file.
    let path = run.report_dir.join("touched.json");
    let mut bytes = std::fs::read(run.report_path()).unwrap();
    bytes.push(b'\n');
    std::fs::write(&path, bytes).unwrap();
    let refused = check(&setup, &path, &["--expect-digest", &digest]);
    refused.assert_code(2);
    assert!(
        refused.stderr.contains("not the expected"),
        "{}",
        refused.describe()
    );
    check(&setup, &path, &["--expect-digest", "abc"]).assert_code(2);
}
