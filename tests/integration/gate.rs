//! The gate end to end: the real command line (`tdqs-gate-dup`, the same `cli::main`) on git
//! fixture repositories of a stdlib Python MCP server, judged by the scripted fake `claude` with
//! the stand-in specification served on loopback. Every run must leave the repository as it was
//! and its private temporary folder empty (checked by [`harness::Setup::run`]).
//!
//! The tests sit in one submodule per feature they check; this file holds the tool texts and
//! helpers several of them share.

pub(crate) mod harness;

use std::collections::BTreeMap;
use std::process::Stdio;
use std::time::Duration;

use serde_json::{json, Value};

use harness::*;

/// `close_issue` said another way, with the same meaning.
const REWORDED: &str = "Closes an open issue, optionally after adding a comment. Prefer this \
over deleting when the history should stay; closing a closed issue changes nothing.";
/// `close_issue` said worse.
const WORSE: &str = "Closes an issue.";
/// `close_issue` said better.
const BETTER: &str = "Closes an open issue with an optional comment. Use this instead of delete \
when the history should stay. Closing a closed issue changes nothing. Returns the issue's number \
and new state; fails with an error when the number does not exist.";

const TOOLS: usize = 4;

fn head_with(description: &str) -> Value {
    with_description(&base_tools(), "close_issue", description)
}

fn calls_of(report: &Value) -> (u64, u64, u64) {
    let c = &report["calls"];
    (
        c["questions"].as_u64().unwrap(),
        c["attempts"].as_u64().unwrap(),
        c["sharedAnswers"].as_u64().unwrap(),
    )
}

fn means(report: &Value) -> Vec<(f64, f64)> {
    report["pairs"]
        .as_array()
        .unwrap()
        .iter()
        .map(|p| {
            (
                p["base"]["rollups"]["meanTdqs"].as_f64().unwrap(),
                p["head"]["rollups"]["meanTdqs"].as_f64().unwrap(),
            )
        })
        .collect()
}

/// How many times each distinct prompt reached the fake, by tool name (`coherence` for the
/// set question) and description-bearing prompt.
fn prompts_by_tool(fake: &FakeClaude) -> BTreeMap<String, Vec<String>> {
    let mut out: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for call in fake.calls() {
        let stdin = call["stdin"].as_str().unwrap().to_string();
        let key = if call["question"] == "coherence" {
            "coherence".to_string()
        } else {
            stdin
                .lines()
                .find_map(|l| l.strip_prefix("Tool under review: "))
                .unwrap()
                .to_string()
        };
        out.entry(key).or_default().push(stdin);
    }
    out
}

/// A setup whose head rewords `close_issue` and whose fake drops it on the pairs in `low`
/// (all dimensions 2, two of them with named justifications) and scores it 4 otherwise.
fn drop_setup(low: &[u64]) -> Setup {
    let setup = Setup::new(&base_tools());
    setup.set_head(&head_with(WORSE));
    let mut dropped = tool_rule("close_issue", Some(WORSE), Some(low), 2);
    dropped["scores"] = json!({
        "purpose_clarity": {"score": 2, "justification": "Says what it closes but not which issue or how."},
        "usage_guidelines": {"score": 1, "justification": "Nothing says when to close rather than delete."},
    });
    setup.fake.control(script(vec![dropped]));
    setup
}

/// The bundled example's careful or careless tool set (`examples/issue-tracker/`).
fn static_fixture(name: &str) -> Value {
    let path = std::path::Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/issue-tracker")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

/// `--check` of the report at `report`, with the stand-in pins.
fn check(setup: &Setup, report: &std::path::Path) -> Run {
    setup.run(&[
        "--check",
        report.to_str().unwrap(),
        "--pins",
        harness::standin_pins().to_str().unwrap(),
        "--cache-dir",
        setup.cache_dir().to_str().unwrap(),
    ])
}

mod check_command;
mod ci_outputs_and_exit_codes;
mod decisions;
mod exports;
mod interrupts;
mod invalid_runs;
mod pre_push;
mod report_contents;
mod server_listing;
mod static_judge;
