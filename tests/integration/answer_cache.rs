//! The persistent answer cache end to end (issue 27, item 1): the real gate with the scripted
//! fake `claude`, run more than once against one base with `--answer-cache` naming a folder of
//! the test. Judge calls are counted in the fake's call log.

use std::path::{Path, PathBuf};

use serde_json::{json, Value};

use crate::gate::harness::*;

/// `close_issue` said worse: the script scores it 2 on every draw, so a drop is confirmed.
const WORSE: &str = "Closes an issue.";
/// `close_issue` said better: the default rule scores it 4, like the base.
const BETTER: &str = "Closes an open issue with an optional comment. Use this instead of delete \
when the history should stay. Returns the issue's number and new state.";

/// The base's four tools, with a script that scores the worse `close_issue` 2 and anything
/// else 4, on every draw.
fn setup() -> Setup {
    let setup = Setup::new(&base_tools());
    setup
        .fake
        .control(script(vec![tool_rule("close_issue", Some(WORSE), None, 2)]));
    setup
}

fn head_with(description: &str) -> Value {
    with_description(&base_tools(), "close_issue", description)
}

fn cache_dir(setup: &Setup) -> PathBuf {
    setup.work().join("answers")
}

/// The gate with the answer cache in the test's folder, plus `extra`.
fn gate_cached(setup: &Setup, extra: &[&str]) -> Run {
    let dir = cache_dir(setup);
    let mut args = vec!["--answer-cache", dir.to_str().unwrap()];
    args.extend_from_slice(extra);
    setup.gate(&args)
}

/// The fake's model calls made by `run`.
fn calls_during(setup: &Setup, run: impl FnOnce() -> Run) -> (Run, usize) {
    let before = setup.fake.calls().len();
    let run = run();
    (run, setup.fake.calls().len() - before)
}

fn cached_answers(report: &Value) -> u64 {
    report["calls"]["cachedAnswers"].as_u64().unwrap()
}

fn entries(dir: &Path) -> Vec<PathBuf> {
    match std::fs::read_dir(dir) {
        Ok(read) => read.map(|e| e.unwrap().path()).collect(),
        Err(_) => Vec::new(),
    }
}

#[test]
fn a_second_pull_request_against_the_same_base_asks_only_what_it_changed() {
    let setup = setup();
    setup.set_head(&head_with(WORSE));
    let (first, calls) = calls_during(&setup, || gate_cached(&setup, &[]));
    first.assert_code(1);
    let report = first.report();
    assert_schema_valid(&report);
    // Three shared questions, the changed tool and the coherence question per side, then two
    // confirmation pairs re-asking the changed tool on both sides: nothing was cached yet.
    assert_eq!(calls, 11);
    assert_eq!(cached_answers(&report), 0);
    // Every answer of the first pair was kept; the confirmation draws were not.
    assert_eq!(entries(&cache_dir(&setup)).len(), 7);

    // Another change against the same base: the base's answers come from the cache.
    setup.set_head(&head_with(BETTER));
    let (second, calls) = calls_during(&setup, || gate_cached(&setup, &[]));
    second.assert_code(0);
    let report = second.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "pass");
    // Asked: the head's changed tool and its coherence question (its sibling list changed
    // nothing, but the coherence question holds every description). From the cache: the
    // three shared tools, the base's `close_issue` and the base's coherence question.
    assert_eq!(calls, 2);
    assert_eq!(report["calls"]["questions"], 2);
    assert_eq!(cached_answers(&report), 5);
    assert!(
        second.markdown().contains("5 from the answer cache"),
        "{}",
        second.markdown()
    );
}

#[test]
fn a_rerun_takes_its_first_draw_from_the_cache_and_confirms_afresh() {
    let setup = setup();
    setup.set_head(&head_with(WORSE));
    let (first, cold) = calls_during(&setup, || gate_cached(&setup, &[]));
    first.assert_code(1);
    let (second, warm) = calls_during(&setup, || gate_cached(&setup, &[]));
    second.assert_code(1);
    let report = second.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "block");
    assert_eq!(cold, 11);
    // A cached answer is one draw: the first pair is read whole from the cache, and the two
    // confirmation pairs still ask the changed tool on both sides afresh.
    let pairs = report["pairs"].as_array().unwrap();
    assert_eq!(pairs.len(), 3);
    assert_eq!(pairs[0]["calls"]["questions"], 0);
    assert_eq!(pairs[0]["calls"]["cachedAnswers"], 7);
    for pair in &pairs[1..] {
        assert_eq!(pair["calls"]["questions"], 2);
        assert_eq!(pair["calls"]["cachedAnswers"], 0);
    }
    assert_eq!(warm, 4);
    assert_eq!(first.report()["median"], report["median"]);
}

#[test]
fn no_answer_cache_asks_everything_and_keeps_nothing() {
    let setup = setup();
    setup.set_head(&head_with(WORSE));
    let (first, filled) = calls_during(&setup, || gate_cached(&setup, &[]));
    first.assert_code(1);
    let kept = entries(&cache_dir(&setup));
    assert_eq!(filled, 11);
    let (off, calls) = calls_during(&setup, || gate_cached(&setup, &["--no-answer-cache"]));
    off.assert_code(1);
    let report = off.report();
    assert_schema_valid(&report);
    assert_eq!(calls, 11);
    assert_eq!(cached_answers(&report), 0);
    assert!(!off.markdown().contains("from the answer cache"));
    // Nothing was written either: the folder holds what the first run left.
    let mut after = entries(&cache_dir(&setup));
    let mut kept = kept;
    after.sort();
    kept.sort();
    assert_eq!(after, kept);
}

#[test]
fn an_answer_cache_inside_the_repository_is_refused() {
    let setup = setup();
    setup.set_head(&head_with(WORSE));
    let inside = setup.repo.path.join(".tdqs").join("answers");
    let (run, calls) = calls_during(&setup, || {
        setup.gate(&["--answer-cache", inside.to_str().unwrap()])
    });
    run.assert_code(2);
    assert!(
        run.stderr.contains("inside the repository"),
        "{}",
        run.describe()
    );
    assert!(run.stderr.contains("--answer-cache"), "{}", run.describe());
    assert_eq!(calls, 0);
    assert!(!inside.exists());
}

#[test]
fn a_damaged_cached_answer_is_ignored_with_a_warning_and_asked_again() {
    let setup = setup();
    setup.set_head(&head_with(WORSE));
    gate_cached(&setup, &[]).assert_code(1);
    let files = entries(&cache_dir(&setup));
    let damaged = files.first().expect("answers were kept");
    std::fs::write(damaged, b"{\"format\": 1, \"key\": ").unwrap();

    let (run, calls) = calls_during(&setup, || gate_cached(&setup, &[]));
    run.assert_code(1);
    let report = run.report();
    assert_schema_valid(&report);
    // The damaged answer is asked again in the first pair; the confirmations as always.
    assert_eq!(calls, 1 + 4);
    assert_eq!(cached_answers(&report), 6);
    let warnings: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|w| w.contains("cached answer"))
        .collect();
    assert_eq!(warnings.len(), 1, "{:#}", report["warnings"]);
    assert!(
        warnings[0].contains("ignored and asked again"),
        "{warnings:?}"
    );
    // The fresh answer replaced the damaged entry.
    let repaired: Value = serde_json::from_slice(&std::fs::read(damaged).unwrap()).unwrap();
    assert_eq!(repaired["format"], json!(1));
}

#[test]
fn independent_sides_never_read_one_stored_answer_for_both_sides() {
    let setup = setup();
    setup.set_head(&head_with(WORSE));
    gate_cached(&setup, &[]).assert_code(1);
    assert_eq!(entries(&cache_dir(&setup)).len(), 7);
    let (run, calls) = calls_during(&setup, || gate_cached(&setup, &["--independent-sides"]));
    run.assert_code(1);
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(cached_answers(&report), 0);
    // Every question on both sides in the first pair: four tools and coherence per side.
    assert_eq!(report["pairs"][0]["calls"]["questions"], 10);
    assert!(calls >= 10, "{calls}");
}
