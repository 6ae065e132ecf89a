//! What the definitions cost (tokens by a real tokenizer, bytes, TDQS per 1k tokens), the opt-in
//! growth rule and the registry forecast, end to end: with the fake `claude` on a git fixture,
//! and with the static judge on the example server's and a corpus server's definitions.

use std::path::Path;
use std::process::Command;

use serde_json::Value;

use crate::gate::harness::{
    assert_schema_valid, base_tools, manifest_dir, pretty, script, standin_pins, tool_rule,
    with_description, Run, Setup,
};

/// `close_issue` with the same meaning said at much greater length: the scripted judge gives it
/// the default 4 everywhere, as it gives the base's.
fn padded() -> String {
    "Closes an open issue, optionally after adding a comment. ".repeat(30)
}

/// `close_issue` said better and longer, scored 5 everywhere.
const BETTER: &str = "Closes an open issue with an optional comment. Use this instead of delete \
when the history should stay. Closing a closed issue changes nothing. Returns the issue's number \
and new state; fails with an error when the number does not exist.";

fn check(setup: &Setup, report: &Path, extra: &[&str]) -> Run {
    let pins = standin_pins().display().to_string();
    let report = report.display().to_string();
    let mut args = vec!["check", report.as_str(), "--pins", pins.as_str()];
    args.extend(extra);
    setup.run(&args)
}

#[test]
fn growth_rule_is_off_by_default_and_blocks_a_longer_listing_with_no_tdqs_gain() {
    let base = base_tools();
    let setup = Setup::new(&base);
    setup.set_head(&with_description(&base, "close_issue", &padded()));
    setup.fake.control(script(vec![]));

    let plain = setup.gate(&[]);
    plain.assert_code(0);
    let report = plain.report();
    assert_schema_valid(&report);
    let cost = &report["cost"];
    assert!(
        cost["tokenizer"]
            .as_str()
            .unwrap()
            .starts_with("cl100k_base (tiktoken-rs "),
        "{cost}"
    );
    let (b, h) = (
        cost["base"]["listing"]["tokens"].as_u64().unwrap(),
        cost["head"]["listing"]["tokens"].as_u64().unwrap(),
    );
    assert!(
        h > b * 3 / 2,
        "the padding adds half the listing again: {b} → {h}"
    );
    assert_eq!(cost["listingTokensChange"], h as i64 - b as i64);
    // Every tool scored 4.0 on both sides: TDQS per 1k tokens falls with the longer text.
    let per_1k = |side: &str| cost[side]["tdqsPer1kTokens"].as_f64().unwrap();
    assert!(per_1k("head") < per_1k("base"), "{cost}");
    assert!(
        report.get("growthRule").is_none(),
        "off by default: {report}"
    );

    let blocked = setup.gate(&["--max-listing-growth", "10"]);
    blocked.assert_code(1);
    let report = blocked.report();
    assert_schema_valid(&report);
    let rule = &report["growthRule"];
    assert_eq!(rule["maxGrowthPercent"], 10);
    assert_eq!(rule["blocks"], true, "{rule}");
    assert_eq!(rule["tdqsGain"], false, "{rule}");
    let reason = report["reason"].as_str().unwrap();
    assert!(
        reason.contains(&format!("grows from {b} to {h} tokens"))
            && reason.contains("10% allowed without a TDQS gain"),
        "{reason}"
    );
    let markdown = blocked.markdown();
    assert!(
        markdown.contains("### What the definitions cost")
            && markdown.contains("Growth rule: at most 10% more listing tokens")
            && markdown.contains(&format!("| Listing tokens | {b} | {h} |")),
        "{markdown}"
    );
    let html = blocked.html();
    assert!(
        html.contains("What the definitions cost") && html.contains("cl100k_base"),
        "{html}"
    );

    // check re-decides the rule with the limit it was decided by, and no other.
    check(
        &setup,
        &blocked.report_path(),
        &["--max-listing-growth", "10"],
    )
    .assert_code(1);
    let without = check(&setup, &blocked.report_path(), &[]);
    without.assert_code(2);
    assert!(
        without.stderr.contains("a growth rule of 10%")
            && without.stderr.contains("no growth rule"),
        "{}",
        without.describe()
    );
    // Token counts edited down to slip under the limit are recounted and refused.
    let mut edited = blocked.report();
    edited["cost"]["head"]["listing"]["tokens"] = Value::from(b);
    edited["growthRule"]["over"] = Value::Bool(false);
    edited["growthRule"]["blocks"] = Value::Bool(false);
    let path = blocked.report_dir.join("edited.json");
    std::fs::write(&path, pretty(&edited)).unwrap();
    check(&setup, &path, &["--max-listing-growth", "10"]).assert_code(2);
}

#[test]
fn growth_rule_lets_the_listing_grow_when_the_mean_tdqs_rises() {
    let base = base_tools();
    let setup = Setup::new(&base);
    setup.set_head(&with_description(&base, "close_issue", BETTER));
    setup.fake.control(script(vec![tool_rule(
        "close_issue",
        Some(BETTER),
        None,
        5,
    )]));
    let run = setup.gate(&["--max-listing-growth", "0"]);
    run.assert_code(0);
    let report = run.report();
    assert_schema_valid(&report);
    let rule = &report["growthRule"];
    assert_eq!(
        (
            rule["over"].clone(),
            rule["tdqsGain"].clone(),
            rule["blocks"].clone()
        ),
        (Value::Bool(true), Value::Bool(true), Value::Bool(false)),
        "{rule}"
    );
    assert!(run.markdown().contains("with a TDQS gain: allowed"));
}

#[test]
fn the_growth_limit_is_the_base_revisions_setting() {
    let base = base_tools();
    let setup = Setup::new(&base);
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"python3 {root}/server.py\"\n\n[decision]\nmax-listing-growth = 10\n",
    );
    setup.repo.commit_all("growth limit");
    // The pull request lifts the limit and pads a definition: the base's limit still applies.
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"python3 {root}/server.py\"\n\n[decision]\nmax-listing-growth = 1000\n",
    );
    setup.set_head(&with_description(&base, "close_issue", &padded()));
    setup.fake.control(script(vec![]));
    let run = setup.gate(&[]);
    run.assert_code(1);
    let report = run.report();
    assert_eq!(report["growthRule"]["maxGrowthPercent"], 10);
    assert!(
        report["warnings"][0]
            .as_str()
            .unwrap()
            .contains("max-listing-growth"),
        "{}",
        report["warnings"]
    );
    // A report made with the lifted limit is refused by check under the base's setting.
    let lifted = setup.gate(&["--max-listing-growth", "1000"]);
    lifted.assert_code(0);
    let refused = check(&setup, &lifted.report_path(), &[]);
    refused.assert_code(2);
    assert!(
        refused.stderr.contains("a growth rule of 1000%")
            && refused.stderr.contains("a growth rule of 10%"),
        "{}",
        refused.describe()
    );
}

#[test]
fn unchanged_definitions_grown_through_meta_block_and_check_holds_it() {
    let base = base_tools();
    let setup = Setup::new(&base);
    let mut head = base.clone();
    for tool in head.as_array_mut().unwrap() {
        tool["_meta"] = serde_json::json!({"notes": "Routing notes for the gateway. ".repeat(20)});
    }
    setup.set_head(&head);
    setup.fake.control(script(vec![]));
    let run = setup.gate(&["--max-listing-growth", "10"]);
    run.assert_code(1);
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["scored"], false);
    // The judge is checked before the exports; it is asked nothing.
    assert!(
        setup.fake.calls().is_empty(),
        "no model call for unchanged definitions: {:?}",
        setup.fake.log()
    );
    let reason = report["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("The tool definitions are unchanged") && reason.contains("grows from"),
        "{reason}"
    );
    check(&setup, &run.report_path(), &["--max-listing-growth", "10"]).assert_code(1);
    // The same report turned into a PASS (rule and reason removed) is refused.
    let mut edited = report.clone();
    edited.as_object_mut().unwrap().remove("growthRule");
    edited["decision"] = Value::from("pass");
    edited["exitCode"] = Value::from(0);
    edited["reason"] = Value::from(reason.split(" The head's").next().unwrap());
    let path = run.report_dir.join("edited.json");
    std::fs::write(&path, pretty(&edited)).unwrap();
    check(&setup, &path, &["--max-listing-growth", "10"]).assert_code(2);
}

#[test]
fn a_bad_growth_limit_is_a_usage_error_naming_the_fix() {
    let setup = Setup::new(&base_tools());
    let run = setup.gate(&["--max-listing-growth", "-5"]);
    run.assert_code(2);
    assert!(
        run.stderr
            .contains("--max-listing-growth -5 is not a growth limit")
            && run.stderr.contains("whole number of percent"),
        "{}",
        run.describe()
    );
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"python3 {root}/server.py\"\n\n[decision]\nmax-listing-growth = 5000\n",
    );
    setup.repo.commit_all("bad limit");
    let run = setup.gate(&[]);
    run.assert_code(2);
    assert!(
        run.stderr
            .contains("max-listing-growth: 5000 is not a growth limit"),
        "{}",
        run.describe()
    );
}

#[test]
fn forecast_states_the_registry_rollups_after_the_merge() {
    let base = base_tools();
    let setup = Setup::new(&base);
    setup.set_head(&with_description(&base, "close_issue", "Closes an issue."));
    setup.fake.control(script(vec![tool_rule(
        "close_issue",
        Some("Closes an issue."),
        None,
        1,
    )]));
    let run = setup.gate(&[]);
    run.assert_code(1);
    let report = run.report();
    assert_schema_valid(&report);
    let f = &report["forecast"];
    assert_eq!(f["kind"], "forecast");
    // Base: four tools at 4.0, coherence 4.0 → quality 4.0, server 4.0 (A).
    assert_eq!(f["before"]["overallScore"], 4.0);
    assert_eq!(f["before"]["overallTier"], "A");
    // Head: TDQS 4, 4, 4, 1 → mean 3.25, quality round1(0.6·3.25 + 0.4·1.0) = 2.4 (half up
    // from 2.35), server round1(0.7·2.4 + 0.3·4.0) = 2.9 (C).
    assert_eq!(f["afterMerge"]["descriptionQualityScore"], 2.4);
    assert_eq!(f["afterMerge"]["overallScore"], 2.9);
    assert_eq!(f["afterMerge"]["overallTier"], "C");
    assert_eq!(f["overallChange"], -1.1);
    assert_eq!(f["tierChanged"], true);
    let lowest = &f["lowestTools"][0];
    assert_eq!(
        (
            lowest["tool"].as_str(),
            lowest["tdqs"].as_f64(),
            lowest["baseTdqs"].as_f64()
        ),
        (Some("close_issue"), Some(1.0), Some(4.0))
    );
    let markdown = run.markdown();
    assert!(
        markdown.contains("### Registry forecast")
            && markdown.contains("| Server score | 4.0 (A) | 2.9 (C) | -1.1 |")
            && markdown.contains("`close_issue` 1.0 (D), base 4.0"),
        "{markdown}"
    );
    assert!(run.html().contains("Registry forecast"));
}

fn tools_of(relative: &str) -> Vec<Value> {
    let text = std::fs::read_to_string(manifest_dir().join(relative)).unwrap();
    let value: Value = serde_json::from_str(&text).unwrap();
    match value.get("tools") {
        Some(tools) => tools.as_array().unwrap().clone(),
        None => value.as_array().unwrap().clone(),
    }
}

/// The gate with the static judge on two tool lists; the exit code and the report.
fn static_gate(name: &str, base: Vec<Value>, head: Vec<Value>, extra: &[&str]) -> (i32, Value) {
    let dir = tempfile::tempdir().unwrap();
    let base = crate::support::write_export(dir.path(), "base.json", name, base);
    let head = crate::support::write_export(dir.path(), "head.json", name, head);
    let out = Command::new(env!("CARGO_BIN_EXE_tdqs-gate-dup"))
        .arg("--base-export")
        .arg(&base)
        .arg("--head-export")
        .arg(&head)
        .args(["--judge", "static", "--report-dir", "out"])
        .args(extra)
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .expect("run tdqs-gate");
    let text = std::fs::read_to_string(dir.path().join("out/tool-definition-score.json"))
        .unwrap_or_else(|e| panic!("no report ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    let report: Value = serde_json::from_str(&text).unwrap();
    assert_schema_valid(&report);
    (out.status.code().unwrap(), report)
}

#[test]
fn static_judge_costs_and_forecasts_the_example_servers_careless_rewrite() {
    let careful = tools_of("../examples/issue-tracker/careful.json");
    let careless = tools_of("../examples/issue-tracker/careless.json");
    let (code, report) = static_gate("issue-tracker-example", careful, careless, &[]);
    assert_eq!(code, 1);
    let cost = &report["cost"];
    // cl100k_base counts of the two compact listings (measured once, fixed here: a change of
    // tokenizer or of what is counted shows up).
    assert_eq!(cost["base"]["listing"]["tokens"], 3783);
    assert_eq!(cost["head"]["listing"]["tokens"], 1952);
    assert_eq!(cost["base"]["listing"]["bytes"], 16237);
    assert_eq!(cost["head"]["listing"]["bytes"], 8939);
    assert_eq!(cost["listingGrowthPercent"], -48.4);
    assert_eq!(cost["base"]["tools"]["close_issue"]["tokens"], 380);
    let f = &report["forecast"];
    assert_eq!(
        (
            f["before"]["overallScore"].as_f64(),
            f["afterMerge"]["overallScore"].as_f64(),
            f["afterMerge"]["overallTier"].as_str()
        ),
        (Some(4.7), Some(2.5), Some("C"))
    );
    assert_eq!(f["lowestTools"][0]["tool"], "add_comment");
}

/// `tools` with each tool changed by `change`.
fn each(tools: &[Value], change: impl Fn(&mut Value)) -> Vec<Value> {
    tools
        .iter()
        .map(|t| {
            let mut t = t.clone();
            change(&mut t);
            t
        })
        .collect()
}

#[test]
fn static_judge_on_a_grown_corpus_server_blocks_only_growth_without_a_gain() {
    let github = tools_of("fixtures/corpus/github.json");
    // Every description said twice: the static rules credit the longer text (the score rewards
    // bigger payloads), so the listing may grow.
    let doubled = each(&github, |t| {
        let d = t["description"].as_str().unwrap_or_default().to_string();
        t["description"] = Value::String(format!("{d} {d}"));
    });
    let (code, report) = static_gate(
        "github",
        github.clone(),
        doubled,
        &["--max-listing-growth", "5"],
    );
    assert_eq!(code, 0, "{}", report["reason"]);
    assert!(report["cost"]["listingGrowthPercent"].as_f64().unwrap() > 5.0);
    let rule = &report["growthRule"];
    assert_eq!(
        (rule["over"].as_bool(), rule["tdqsGain"].as_bool()),
        (Some(true), Some(true)),
        "{rule}"
    );
    // Metadata the definition hash leaves out: the definitions are unchanged (nothing is
    // scored, so nothing can gain), the listing grows.
    let metadata = each(&github, |t| {
        t["_meta"] =
            serde_json::json!({"notes": "Internal routing notes for the gateway. ".repeat(12)});
    });
    let (code, report) = static_gate("github", github.clone(), metadata.clone(), &[]);
    assert_eq!(code, 0, "{}", report["reason"]);
    assert!(report.get("forecast").is_none(), "nothing was scored");
    let (code, report) = static_gate("github", github, metadata, &["--max-listing-growth", "5"]);
    assert_eq!(code, 1, "{}", report["reason"]);
    let reason = report["reason"].as_str().unwrap();
    assert!(
        reason.starts_with("The tool definitions are unchanged") && reason.contains("grows from"),
        "{reason}"
    );
    assert_eq!(report["growthRule"]["blocks"], true);
}
