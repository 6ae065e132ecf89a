//! `tdqs-gate suggest` end to end, with the fake `claude` answering the rewrite request: an
//! offered rewrite re-scored at least as high, a lower-scoring or reshaped proposal withheld with
//! the reason, a suggestion block that applies to the fixture's source line, the cost cap, and
//! the static judge's checklist.

use serde_json::{json, Value};
use tdqs_core::locate::{locate_tools, Confidence, Matched, Place};
use tdqs_gate::locate::{read_tree, WalkLimits};

use crate::gate::harness::*;

/// Runs `suggest` in the setup's repository (the working tree's server) with the fake judge.
fn suggest(setup: &Setup, extra: &[&str]) -> Run {
    let mut args = setup.judge_args();
    args.extend(extra.iter().map(|s| s.to_string()));
    suggest_with(setup, args)
}

/// Runs `suggest` with exactly `args` after it, in a temporary folder of its own.
fn suggest_with(setup: &Setup, args: Vec<String>) -> Run {
    let mut all: Vec<String> = vec!["suggest".into()];
    all.extend(args);
    let tmp = setup
        .work()
        .join(format!("tmp-suggest-{}", all.join("-").len()));
    std::fs::create_dir_all(&tmp).unwrap();
    let output = setup.command(&all, &tmp).output().unwrap();
    Run::from_output(output, setup.work().join("unused"))
}

fn json_of(run: &Run) -> Value {
    serde_json::from_str(&run.stdout).unwrap_or_else(|e| panic!("{e}: {}", run.describe()))
}

fn calls_of_kind(setup: &Setup, kind: &str) -> usize {
    setup
        .fake
        .calls()
        .iter()
        .filter(|c| c["question"] == kind)
        .count()
}

#[test]
fn a_rewrite_that_rescored_at_least_as_high_is_offered_with_its_figures() {
    let tools = with_description(&base_tools(), "get_issue", "Get an issue.");
    let setup = Setup::new(&tools);
    let run = suggest(&setup, &["--tool", "get_issue", "--json"]);
    run.assert_code(0);
    let out = json_of(&run);
    let tool = &out["tools"][0];
    assert_eq!(tool["tool"], "get_issue");
    assert_eq!(tool["status"], "offered", "{}", run.describe());
    // A model judge needs a majority of three pairs: two agreeing pairs.
    assert_eq!(tool["pairs"].as_array().unwrap().len(), 2);
    for pair in tool["pairs"].as_array().unwrap() {
        for (dimension, reference) in pair["reference"].as_object().unwrap() {
            assert!(
                pair["proposal"][dimension].as_u64() >= reference.as_u64(),
                "{pair}"
            );
        }
    }
    assert!(
        tool["predictedTdqs"].as_f64() > tool["referenceTdqs"].as_f64(),
        "{tool}"
    );
    assert!(tool["predictedTier"].is_string());
    assert!(tool["bytesDelta"].as_i64().unwrap() > 0);
    // A longer description costs more tokens too, counted with the report's named tokenizer.
    assert!(tool["tokensDelta"].as_i64().unwrap() > 0);
    assert!(tool["tokenizer"]
        .as_str()
        .unwrap()
        .starts_with("cl100k_base"));
    // One rewrite request, then two pairs of two scorings.
    assert_eq!(tool["calls"], 5);
    assert_eq!(out["calls"], 5);
    assert_eq!(calls_of_kind(&setup, "rewrite"), 1);
    assert_eq!(setup.fake.calls().len(), 5);
    // The proposal kept the name and the schema.
    let proposal = &tool["proposal"];
    let original = tools
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["name"] == "get_issue")
        .unwrap();
    assert_eq!(proposal["name"], "get_issue");
    assert_eq!(proposal["inputSchema"], original["inputSchema"]);
    // The request is ours: it names the definition and what may change, not a TDQS prompt.
    let request = setup
        .fake
        .calls()
        .into_iter()
        .find(|c| c["question"] == "rewrite")
        .unwrap();
    assert!(request["stdin"]
        .as_str()
        .unwrap()
        .contains("<tool-definition>"));
}

/// A proposal `suggest` must withhold: what the fake answers the rewrite request with, why the
/// proposal is withheld, and how many calls that may cost.
struct WithheldCase {
    what: &'static str,
    rewrite: Value,
    reason: &'static str,
    calls: RewriteCalls,
}

/// The rewrite request, and what else is asked.
enum RewriteCalls {
    /// The rewrite request and two pairs of two scorings: a fall in the first two pairs decides,
    /// so no third pair is asked.
    AndTwoPairs,
    /// Only the rewrite request: a proposal that changes the name or the schema is not scored.
    Only,
    /// The rewrite request and its retries (the pins' attempts), no scoring.
    AndItsRetries,
}

#[test]
fn a_withheld_proposal_says_why_and_costs_only_the_calls_it_needed() {
    let cases = [
        WithheldCase {
            what: "scores lower",
            rewrite: json!({"kind": "rewrite", "rewrite": "worse"}),
            reason: "scored lower than the reference",
            calls: RewriteCalls::AndTwoPairs,
        },
        WithheldCase {
            what: "renames",
            rewrite: json!({"kind": "rewrite", "rewrite": "rename"}),
            reason: "renamed the tool",
            calls: RewriteCalls::Only,
        },
        WithheldCase {
            what: "reshapes",
            rewrite: json!({"kind": "rewrite", "rewrite": "reshape"}),
            reason: "/inputSchema/properties/verbose",
            calls: RewriteCalls::Only,
        },
        WithheldCase {
            what: "unreadable",
            rewrite: json!({"kind": "rewrite", "behaviour": "garbage"}),
            reason: "no usable rewrite",
            calls: RewriteCalls::AndItsRetries,
        },
    ];
    for case in cases {
        let what = case.what;
        let setup = Setup::new(&base_tools());
        setup.fake.control(json!({"script": [case.rewrite]}));
        let run = suggest(&setup, &["--tool", "get_issue", "--json"]);
        run.assert_code(0);
        let tool = &json_of(&run)["tools"][0];
        assert_eq!(tool["status"], "withheld", "{what}: {tool}");
        assert!(
            tool["reason"].as_str().unwrap().contains(case.reason),
            "{what}: {tool}"
        );
        let calls = setup.fake.calls().len();
        assert_eq!(tool["calls"].as_u64().unwrap() as usize, calls, "{what}");
        let scored = !tool["pairs"].as_array().unwrap().is_empty();
        match case.calls {
            RewriteCalls::AndTwoPairs => {
                assert!(scored, "{what}: {tool}");
                assert_eq!(calls, 5, "{what}");
            }
            RewriteCalls::Only => {
                assert!(!scored, "{what}: {tool}");
                assert_eq!(calls, 1, "{what}");
            }
            RewriteCalls::AndItsRetries => {
                assert!(!scored, "{what}: {tool}");
                assert!(tool.get("proposal").is_none(), "{what}: {tool}");
                assert!(calls > 1, "{what}: the unreadable answer was not retried");
                assert_eq!(calls_of_kind(&setup, "rewrite"), calls, "{what}");
            }
        }
    }

    // The page says the same: withheld, why, and no suggestion block.
    let setup = Setup::new(&base_tools());
    setup
        .fake
        .control(json!({"script": [{"kind": "rewrite", "rewrite": "worse"}]}));
    let run = suggest(&setup, &["--tool", "search_issues"]);
    run.assert_code(0);
    assert!(
        run.stdout.contains("`search_issues` — withheld"),
        "{}",
        run.describe()
    );
    assert!(
        run.stdout.contains("scored lower than the reference"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("0 offered, 1 withheld"),
        "{}",
        run.stdout
    );
    assert!(!run.stdout.contains("```suggestion"), "{}", run.stdout);
}

#[test]
fn the_cost_cap_holds_across_tools_and_inside_the_pairs() {
    let setup = Setup::new(&base_tools());
    // 5 calls for the first tool; the second gets the 2 left: too few to ask.
    let run = suggest(
        &setup,
        &[
            "--tool",
            "get_issue",
            "--tool",
            "search_issues",
            "--max-calls",
            "7",
            "--json",
        ],
    );
    run.assert_code(0);
    let out = json_of(&run);
    assert_eq!(out["maxCalls"], 7);
    assert!(out["calls"].as_u64().unwrap() <= 7);
    assert_eq!(
        setup.fake.calls().len() as u64,
        out["calls"].as_u64().unwrap()
    );
    let second = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tool"] == "get_issue")
        .unwrap();
    let first = out["tools"]
        .as_array()
        .unwrap()
        .iter()
        .find(|t| t["tool"] == "search_issues")
        .unwrap();
    // Tools are taken in listing order: search_issues first.
    assert_eq!(first["status"], "offered", "{out}");
    assert_eq!(second["status"], "withheld");
    assert!(
        second["reason"].as_str().unwrap().contains("cost cap"),
        "{second}"
    );
    assert_eq!(second["calls"], 0);

    // A cap of 4: the rewrite and one pair, then no call is left for the deciding pair.
    let setup = Setup::new(&base_tools());
    let run = suggest(
        &setup,
        &["--tool", "get_issue", "--max-calls", "4", "--json"],
    );
    run.assert_code(0);
    let tool = &json_of(&run)["tools"][0];
    assert_eq!(tool["status"], "withheld");
    assert!(
        tool["reason"]
            .as_str()
            .unwrap()
            .contains("before a decision"),
        "{tool}"
    );
    assert!(setup.fake.calls().len() <= 4);

    // A cap of 0 is a usage error.
    let run = suggest(&setup, &["--max-calls", "0"]);
    run.assert_code(2);
    assert!(run.stderr.contains("--max-calls"), "{}", run.describe());
}

#[test]
fn an_unknown_tool_is_invalid_and_names_the_listed_ones() {
    let setup = Setup::new(&base_tools());
    let run = suggest(&setup, &["--tool", "no_such_tool"]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("no tool `no_such_tool`"),
        "{}",
        run.describe()
    );
    assert!(run.stderr.contains("search_issues"), "{}", run.describe());
    assert!(setup.fake.calls().is_empty());
}

#[test]
fn the_static_judge_lists_what_is_missing_and_calls_no_model() {
    let tools = with_description(&base_tools(), "get_issue", "Get an issue.");
    let setup = Setup::new(&tools);
    let run = suggest_with(
        &setup,
        vec![
            "--judge".into(),
            "static".into(),
            "--tool".into(),
            "get_issue".into(),
            "--pins".into(),
            standin_pins().display().to_string(),
        ],
    );
    run.assert_code(0);
    assert!(
        run.stdout.contains("`get_issue` — checklist"),
        "{}",
        run.describe()
    );
    assert!(
        run.stdout.contains("when to use the tool"),
        "{}",
        run.stdout
    );
    assert!(
        run.stdout.contains("what the tool returns"),
        "{}",
        run.stdout
    );
    assert!(!setup.fake.ever_started());
}

/// The TypeScript fixture of the source-locations tests, served by the example server.
fn typescript_tools() -> Value {
    let text =
        std::fs::read_to_string(fixture("source-locations/exports/typescript.json")).unwrap();
    serde_json::from_str(&text).unwrap()
}

#[test]
fn a_suggestion_block_applies_to_the_fixture_source_line() {
    let setup = Setup::new(&typescript_tools());
    let source = fixture("source-locations/typescript");
    let run = suggest(
        &setup,
        &[
            "--tool",
            "update_event",
            "--source",
            source.to_str().unwrap(),
        ],
    );
    run.assert_code(0);
    let page = &run.stdout;
    assert!(
        page.contains("`update_event` — offered"),
        "{}",
        run.describe()
    );
    assert!(page.contains("Replace line 27 of `index.ts`:"), "{page}");
    let block = page
        .split("```suggestion\n")
        .nth(1)
        .and_then(|rest| rest.split("\n```").next())
        .unwrap_or_else(|| panic!("no suggestion block: {page}"))
        .to_string();
    // Apply the block to a copy of the fixture: the new literal is the proposal, found whole on
    // the same line, and every other tool is where it was.
    let json = suggest(
        &setup,
        &[
            "--tool",
            "update_event",
            "--source",
            source.to_str().unwrap(),
            "--json",
        ],
    );
    let proposal = json_of(&json)["tools"][0]["proposal"].clone();
    let copy = tempfile::tempdir().unwrap();
    let original = std::fs::read_to_string(source.join("index.ts")).unwrap();
    let applied: Vec<String> = original
        .lines()
        .enumerate()
        .map(|(i, l)| {
            if i + 1 == 27 {
                block.clone()
            } else {
                l.to_string()
            }
        })
        .collect();
    std::fs::write(copy.path().join("index.ts"), applied.join("\n") + "\n").unwrap();
    let mut tools = typescript_tools();
    let slot = tools
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["name"] == "update_event")
        .unwrap();
    *slot = proposal;
    let tree = read_tree(copy.path(), WalkLimits::default()).unwrap();
    let located = locate_tools(&tree.files, tools.as_array().unwrap());
    match &located.tool("update_event").unwrap().place {
        Place::Located {
            at,
            confidence,
            matched,
        } => {
            assert_eq!((at.path.as_str(), at.line), ("index.ts", 27));
            assert_eq!(*confidence, Confidence::High);
            assert_eq!(*matched, Matched::Description);
        }
        other => panic!("the applied block does not hold the proposal: {other:?}"),
    }
    assert!(located.tool("create_event").unwrap().place.span().is_some());
}

#[test]
fn a_description_split_over_lines_gets_a_diff_instead() {
    let setup = Setup::new(&typescript_tools());
    let source = fixture("source-locations/typescript");
    let run = suggest(
        &setup,
        &[
            "--tool",
            "create_event",
            "--source",
            source.to_str().unwrap(),
        ],
    );
    run.assert_code(0);
    assert!(
        run.stdout.contains("`create_event` — offered"),
        "{}",
        run.describe()
    );
    assert!(!run.stdout.contains("```suggestion"), "{}", run.stdout);
    assert!(run.stdout.contains("```diff\n- "), "{}", run.stdout);
}

#[test]
fn the_gate_offers_a_rewrite_for_a_fallen_tool_only_when_asked() {
    let setup = Setup::new(&base_tools());
    setup.set_head(&with_description(
        &base_tools(),
        "get_issue",
        "Get an issue.",
    ));

    let plain = setup.gate(&[]);
    assert_ne!(plain.code, 2, "{}", plain.describe());
    assert!(plain.report().get("suggestions").is_none());
    assert_eq!(calls_of_kind(&setup, "rewrite"), 0);

    let run = setup.gate(&["--suggest", "--suggest-max-calls", "12"]);
    assert_eq!(
        run.code,
        plain.code,
        "the verdict stands: {}",
        run.describe()
    );
    let report = run.report();
    let suggestions = &report["suggestions"];
    assert_eq!(suggestions["modelJudged"], true, "{report}");
    assert_eq!(suggestions["maxCalls"], 12);
    let tool = &suggestions["tools"][0];
    assert_eq!(tool["tool"], "get_issue");
    assert_eq!(tool["status"], "offered", "{tool}");
    // Held to the base's definition on the dimensions that fell, each at least as high.
    let held: Vec<&str> = tool["held"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| d.as_str().unwrap())
        .collect();
    assert!(!held.is_empty());
    for pair in tool["pairs"].as_array().unwrap() {
        for d in &held {
            assert!(
                pair["proposal"][d].as_u64() >= pair["reference"][d].as_u64(),
                "{pair}"
            );
        }
    }
    assert_eq!(calls_of_kind(&setup, "rewrite"), 1);
    let page = run.markdown();
    assert!(page.contains("Suggested rewrites"), "{page}");
    assert!(page.contains("`get_issue` — offered"), "{page}");
    let html = run.html();
    assert!(
        html.contains("Suggested rewrites"),
        "the HTML page lacks the rewrites"
    );
    assert!(html.contains("<code>get_issue</code> — offered"), "{html}");
    // The head is the working tree, whose tools.json holds the description on one line: the
    // proposal is a suggestion block for that line, and applying it gives the proposal's text.
    let placement = &tool["placement"];
    assert_eq!(placement["kind"], "line", "{tool}");
    assert_eq!(placement["path"], "tools.json");
    let line = placement["line"].as_u64().unwrap() as usize;
    let source = std::fs::read_to_string(setup.repo.path.join("tools.json")).unwrap();
    assert_eq!(source.lines().nth(line - 1).unwrap(), placement["original"]);
    let replacement = placement["replacement"].as_str().unwrap();
    assert!(
        page.contains(&format!("```suggestion\n{replacement}\n```")),
        "{page}"
    );
    let applied: Value =
        serde_json::from_str(&format!("{{{}}}", replacement.trim().trim_end_matches(','))).unwrap();
    assert_eq!(applied["description"], tool["proposal"]["description"]);

    // --suggest-max-calls without --suggest is refused.
    let run = setup.gate(&["--suggest-max-calls", "3"]);
    run.assert_code(2);
    assert!(run.stderr.contains("--suggest"), "{}", run.describe());
}
