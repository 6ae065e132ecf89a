//! The answer cache against a forger (issue 27, item 1): in CI the answer folder comes back
//! from a cache store a pull request's own jobs can write, so entries are signed with a key only
//! the trusted side holds. Here a poisoned folder (well-formed answers giving the head's worse
//! tool top marks, written without the key or under another) must not turn the honest BLOCK
//! into a PASS, and in GitHub Actions no folder is read without a key.

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;

use crate::gate::harness::*;

/// `close_issue` said worse: the honest judge scores it 2, the forger's answers 5.
const WORSE: &str = "Closes an issue.";
const KEY_ENV: &str = "TDQS_GATE_ANSWER_CACHE_KEY";
/// Obviously fake secrets.
const TRUSTED_KEY: &str = "fake-trusted-answer-cache-key";
const FORGER_KEY: &str = "fake-forger-answer-cache-key";

fn scoring(close_issue: u8) -> Value {
    script(vec![tool_rule(
        "close_issue",
        Some(WORSE),
        None,
        close_issue,
    )])
}

fn setup() -> Setup {
    let setup = Setup::new(&base_tools());
    setup.set_head(&with_description(&base_tools(), "close_issue", WORSE));
    setup
}

fn answers(setup: &Setup) -> PathBuf {
    setup.work().join("answers")
}

/// The gate with the test's answer folder, `key` (if any) as the signing key, and `adjust`.
fn gate(setup: &Setup, key: Option<&str>, adjust: impl FnOnce(&mut Command)) -> (Run, usize) {
    let dir = answers(setup);
    let before = setup.fake.calls().len();
    let run = setup.gate_with(&["--answer-cache", dir.to_str().unwrap()], |c| {
        if let Some(key) = key {
            c.env(KEY_ENV, key);
        }
        adjust(c);
    });
    (run, setup.fake.calls().len() - before)
}

fn cached(run: &Run) -> u64 {
    run.report()["calls"]["cachedAnswers"].as_u64().unwrap()
}

fn warnings_about_signatures(run: &Run) -> Vec<String> {
    run.report()["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|w| w.contains("answer-cache key"))
        .map(str::to_string)
        .collect()
}

/// Fills the answer folder as a forger would: the judge is scripted to give the head's worse
/// `close_issue` a 5 on every draw, so each kept answer is a valid answer with top marks.
fn poison(setup: &Setup, key: Option<&str>) {
    setup.fake.control(scoring(5));
    let (run, _) = gate(setup, key, |_| {});
    run.assert_code(0);
    assert_eq!(run.report()["decision"], "pass");
    assert_eq!(std::fs::read_dir(answers(setup)).unwrap().count(), 7);
    // From here on the judge is honest: the worse tool scores 2 on every draw.
    setup.fake.control(scoring(2));
}

#[test]
fn a_cache_poisoned_without_the_key_or_with_another_does_not_turn_a_block_into_a_pass() {
    for forger in [None, Some(FORGER_KEY)] {
        let setup = setup();
        poison(&setup, forger);
        // The control: a run that trusts the forger's folder (no key, or the forger's own)
        // reads its first pair whole from it.
        let (trusting, _) = gate(&setup, forger, |_| {});
        assert_eq!(cached(&trusting), 7, "{forger:?}: {}", trusting.describe());
        assert_eq!(trusting.report()["decision"], "pass", "the poison works");

        let (run, calls) = gate(&setup, Some(TRUSTED_KEY), |_| {});
        run.assert_code(1);
        let report = run.report();
        assert_schema_valid(&report);
        assert_eq!(report["decision"], "block", "{forger:?}");
        assert_eq!(cached(&run), 0, "{forger:?}");
        // Every question asked afresh: three shared tools, then the changed tool and the
        // coherence question per side, and the changed tool on both sides per confirmation.
        assert_eq!(calls, 3 + 2 + 2 + 2 + 2, "{forger:?}");
        let warnings = warnings_about_signatures(&run);
        assert_eq!(warnings.len(), 1, "{forger:?}: {:#}", report["warnings"]);
        assert!(
            warnings[0].starts_with("7 cached answers were ignored and asked again"),
            "{warnings:?}"
        );
        assert!(!run.markdown().contains("from the answer cache"));
        for text in [&run.stdout, &run.stderr, &run.markdown()] {
            assert!(!text.contains(TRUSTED_KEY) && !text.contains(FORGER_KEY));
        }

        // The fresh answers replaced the forged ones, signed: the next run reads them.
        let (again, calls) = gate(&setup, Some(TRUSTED_KEY), |_| {});
        again.assert_code(1);
        assert_eq!(cached(&again), 7);
        assert_eq!(calls, 4);
        assert!(warnings_about_signatures(&again).is_empty());
        for entry in std::fs::read_dir(answers(&setup)).unwrap() {
            let text = std::fs::read_to_string(entry.unwrap().path()).unwrap();
            assert!(!text.contains(TRUSTED_KEY), "the secret is kept nowhere");
        }
    }
}

/// As a GitHub Actions runner: CI variables set, the sandbox off (the servers are this
/// test's own), the answer folder of the default choice in the test's folder.
fn in_github_actions(setup: &Setup) -> impl FnOnce(&mut Command) + '_ {
    move |c: &mut Command| {
        c.env("GITHUB_ACTIONS", "true")
            .env("CI", "true")
            .env("TDQS_GATE_SANDBOX", "off")
            .env("XDG_CACHE_HOME", setup.work().join("xdg"));
    }
}

#[test]
fn in_github_actions_no_answer_cache_is_read_without_a_key() {
    let setup = setup();
    poison(&setup, None);
    // A named folder: INVALID, with the cause and the fix.
    let (run, calls) = gate(&setup, None, in_github_actions(&setup));
    run.assert_code(2);
    assert_eq!(calls, 0);
    assert!(run.stderr.contains("signing key"), "{}", run.describe());
    assert!(run.stderr.contains(KEY_ENV), "{}", run.describe());
    assert!(
        run.stderr.contains("--no-answer-cache"),
        "{}",
        run.describe()
    );

    // The default folder: the run goes on without it, and says so.
    let default = setup.work().join("xdg/tdqs-gate/answers");
    std::fs::create_dir_all(default.parent().unwrap()).unwrap();
    copy_dir(&answers(&setup), &default);
    let before = setup.fake.calls().len();
    let run = setup.gate_with(&[], |c| {
        c.env_remove("TDQS_GATE_ANSWER_CACHE");
        in_github_actions(&setup)(c);
    });
    run.assert_code(1);
    assert_eq!(run.report()["decision"], "block");
    assert_eq!(cached(&run), 0);
    assert_eq!(setup.fake.calls().len() - before, 11);
    let notes: Vec<String> = run.report()["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(Value::as_str)
        .filter(|w| w.contains("answer cache was not used"))
        .map(str::to_string)
        .collect();
    assert_eq!(notes.len(), 1, "{:#}", run.report()["warnings"]);
    assert!(notes[0].contains(KEY_ENV), "{notes:?}");

    // With a key the named folder is read in CI too (and the forged entries are not used).
    let (run, _) = gate(&setup, Some(TRUSTED_KEY), in_github_actions(&setup));
    run.assert_code(1);
    assert_eq!(cached(&run), 0);
    assert_eq!(warnings_about_signatures(&run).len(), 1);
    let (run, _) = gate(&setup, Some(TRUSTED_KEY), in_github_actions(&setup));
    run.assert_code(1);
    assert_eq!(cached(&run), 7);
}

fn copy_dir(from: &std::path::Path, to: &std::path::Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        std::fs::copy(entry.path(), to.join(entry.file_name())).unwrap();
    }
}
