//! `--calibrate`: a capture of our own making (tests/fixtures/calibrate/capture.json, written by
//! make_capture.py) scored by a scripted judge whose answers are in scripted-runs.json. Every
//! number asserted below was computed by tests/fixtures/calibrate/expected.py with Python's
//! Fraction, not by the code under test. The tests also cover refusals of tampered or
//! inconsistent captures, determinism with the static judge, and the committed
//! `tdqs/calibration.json` against the embedded pins.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use async_trait::async_trait;
use serde_json::{json, Value};
use tdqs_core::arith::{Tenths, Tier};
use tdqs_core::error::{Error, Stage};
use tdqs_core::rubric::{CoherenceDimension, ToolDimension};
use tdqs_core::spec::pins::Pins;
use tdqs_gate::calibrate::{self, record::CalibrationRecord, CalibrateOptions};
use tdqs_gate::gate::{JudgeMode, JudgeOptions};
use tdqs_gate::judge::{CallFailure, Judge, JudgeInfo, Question, Reply, Subject};
use tdqs_gate::progress::NoProgress;

fn fixtures() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/calibrate")
}

fn repo_root() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .parent()
        .expect("tests/ sits in the repository")
        .to_path_buf()
}

fn capture_value() -> Value {
    let text = std::fs::read_to_string(fixtures().join("capture.json")).expect("capture.json");
    serde_json::from_str(&text).expect("capture.json is JSON")
}

fn options(capture: PathBuf, report_dir: PathBuf, mode: JudgeMode) -> CalibrateOptions {
    CalibrateOptions {
        capture,
        runs: 3,
        judge: JudgeOptions {
            mode,
            ..JudgeOptions::default()
        },
        report_dir,
    }
}

/// Answers each tool with the next of its scripted runs, and the coherence likewise.
struct ScriptedJudge {
    tools: HashMap<String, Vec<Vec<u8>>>,
    coherence: Vec<Vec<u8>>,
    asked: Mutex<HashMap<String, usize>>,
}

impl ScriptedJudge {
    fn from_fixture() -> ScriptedJudge {
        let text = std::fs::read_to_string(fixtures().join("scripted-runs.json")).expect("script");
        let script: Value = serde_json::from_str(&text).expect("script is JSON");
        let runs = |v: &Value| -> Vec<Vec<u8>> {
            v.as_array()
                .expect("runs")
                .iter()
                .map(|run| {
                    run.as_array()
                        .expect("scores")
                        .iter()
                        .map(|s| s.as_u64().expect("score") as u8)
                        .collect()
                })
                .collect()
        };
        ScriptedJudge {
            tools: script["tools"]
                .as_object()
                .expect("tools")
                .iter()
                .map(|(name, v)| (name.clone(), runs(v)))
                .collect(),
            coherence: runs(&script["coherence"]),
            asked: Mutex::new(HashMap::new()),
        }
    }

    fn next(&self, key: &str) -> usize {
        let mut asked = self.asked.lock().unwrap();
        let n = asked.entry(key.to_string()).or_default();
        *n += 1;
        *n - 1
    }
}

#[async_trait]
impl Judge for ScriptedJudge {
    fn info(&self) -> JudgeInfo {
        JudgeInfo {
            mode: "scripted".to_string(),
            model: "scripted-runs".to_string(),
            model_judged: false,
            settings: json!({}),
        }
    }

    fn needs_prompts(&self) -> bool {
        false
    }

    async fn ask(&self, question: &Question) -> Result<Reply, CallFailure> {
        let text = match &question.subject {
            Subject::Tool { tool, .. } => {
                let name = tool["name"].as_str().unwrap_or_default().to_string();
                let run = self.next(&name);
                let scores = self
                    .tools
                    .get(&name)
                    .and_then(|runs| runs.get(run))
                    .ok_or_else(|| {
                        CallFailure::fatal(format!("no scripted run {run} for {name}"))
                    })?;
                let mut map = serde_json::Map::new();
                for (d, s) in ToolDimension::ALL.iter().zip(scores) {
                    map.insert(
                        d.key().to_string(),
                        json!({"score": s, "justification": "scripted"}),
                    );
                }
                json!({"scores": map, "annotation_contradiction": false, "summary": "scripted"})
            }
            Subject::Coherence { .. } => {
                let run = self.next("\0coherence");
                let scores = self
                    .coherence
                    .get(run)
                    .ok_or_else(|| CallFailure::fatal("no scripted coherence run"))?;
                let mut map = serde_json::Map::new();
                for (d, s) in CoherenceDimension::ALL.iter().zip(scores) {
                    map.insert(
                        d.key().to_string(),
                        json!({"score": s, "justification": "scripted"}),
                    );
                }
                json!({"scores": map, "shadowing_risks": [], "summary": "scripted"})
            }
            Subject::Selection { .. } => {
                return Err(CallFailure::fatal("the scripted runs answer no selection"))
            }
        };
        Ok(Reply {
            text: text.to_string(),
            model: Some("scripted-runs".to_string()),
            usage: Default::default(),
        })
    }
}

fn runtime() -> tokio::runtime::Runtime {
    tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
        .expect("runtime")
}

fn scripted(capture: PathBuf, dir: &Path) -> Result<calibrate::Calibrated, Error> {
    let opts = options(capture, dir.to_path_buf(), JudgeMode::Static);
    runtime().block_on(calibrate::run_with_judge(
        &opts,
        Arc::new(ScriptedJudge::from_fixture()),
        Arc::new(NoProgress),
    ))
}

fn static_run(capture: PathBuf, dir: &Path) -> Result<calibrate::Calibrated, Error> {
    let opts = options(capture, dir.to_path_buf(), JudgeMode::Static);
    runtime().block_on(calibrate::run(&opts, Arc::new(NoProgress)))
}

/// Writes `capture` as a file in `dir` and returns its path.
fn write_capture(dir: &Path, capture: &Value) -> PathBuf {
    let path = dir.join("capture.json");
    std::fs::write(&path, serde_json::to_vec_pretty(capture).unwrap()).unwrap();
    path
}

fn t(tenths: i64) -> Tenths {
    Tenths(tenths)
}

#[test]
fn the_record_holds_the_hand_computed_numbers() {
    let dir = tempfile::tempdir().unwrap();
    let done = scripted(fixtures().join("capture.json"), dir.path()).expect("calibrates");
    let r = &done.record;

    // The capture's own numbers (make_capture.py).
    assert_eq!(
        r.registry.set_hash,
        "6a1e205d9deca399174506bd2ba1503f51e4b2264d7e859126ef28fe648719e5"
    );
    assert_eq!(r.scored_set_hash, r.registry.set_hash);
    assert_eq!(r.registry.release, "0.3.0");
    assert_eq!(r.registry.server.scored_at, "2026-10-01T12:00:00Z");
    assert_eq!(r.registry.tools["search_issues"].tdqs, t(39));
    assert_eq!(r.registry.tools["ping_tracker"].tier, Tier::D);
    assert_eq!(r.version_digest, Pins::embedded().unwrap().digest());
    assert_eq!(r.scoring.judge.mode, "scripted");
    assert!(r.note.contains("calls no language model"), "{}", r.note);

    // Each run (expected.py, "run 1..3").
    let run_tdqs: Vec<Vec<i64>> = r
        .runs
        .iter()
        .map(|run| run.tools.values().map(|t| t.tdqs.0).collect())
        .collect();
    // Sorted by name: add_comment, close_issue, get_issue, list_labels, ping_tracker, search_issues.
    assert_eq!(
        run_tdqs,
        vec![
            vec![33, 33, 32, 39, 10, 36],
            vec![33, 33, 30, 39, 10, 34],
            vec![30, 35, 34, 38, 10, 39],
        ]
    );
    let exact: Vec<&str> = r
        .runs
        .iter()
        .map(|run| run.rollups.exact_mean_tdqs.as_deref().unwrap())
        .collect();
    assert_eq!(exact, ["61/20", "179/60", "31/10"]);
    let rollups: Vec<(i64, i64, i64, i64, i64)> = r
        .runs
        .iter()
        .map(|run| {
            let ro = &run.rollups;
            (
                ro.mean_tdqs.unwrap().0,
                ro.min_tdqs.unwrap().0,
                ro.description_quality_score.unwrap().0,
                ro.coherence_score.0,
                ro.overall_score.unwrap().0,
            )
        })
        .collect();
    assert_eq!(
        rollups,
        vec![
            (31, 10, 22, 35, 26),
            (30, 10, 22, 38, 27),
            (31, 10, 23, 33, 26)
        ]
    );

    // The whole set: registry 2.7 (C) / 2.2 (C) / 4.0 (A) / 3.0 / 1.0; medians 2.6 / 2.2 / 3.5 /
    // 3.1 / 1.0.
    let w = &r.summary.whole_set;
    assert_eq!(
        (w.overall.registry.value, w.overall.registry.tier),
        (t(27), Some(Tier::C))
    );
    assert_eq!(
        (w.overall.median.value, w.overall.median.tier),
        (t(26), Some(Tier::C))
    );
    assert_eq!(w.overall.difference, t(-1));
    assert_eq!(w.description_quality.registry.value, t(22));
    assert_eq!(w.description_quality.median.value, t(22));
    assert_eq!(
        w.description_quality
            .runs
            .iter()
            .map(|m| m.value.0)
            .collect::<Vec<_>>(),
        [22, 22, 23]
    );
    assert_eq!(
        (w.coherence.registry.value, w.coherence.registry.tier),
        (t(40), Some(Tier::A))
    );
    assert_eq!(
        (w.coherence.median.value, w.coherence.median.tier),
        (t(35), Some(Tier::A))
    );
    assert_eq!(w.mean_tdqs.registry.value, t(30));
    assert_eq!(
        w.mean_tdqs.registry.exact.as_ref().unwrap().fraction,
        "91/30"
    );
    assert_eq!(w.mean_tdqs.median.value, t(31));
    assert_eq!(w.min_tdqs.registry.value, t(10));
    assert_eq!(w.min_tdqs.registry.tools, ["ping_tracker"]);
    assert_eq!(w.min_tdqs.median.value, t(10));

    // Coherence dimensions: registry 4, 5, 4, 3; runs (4,4,3), (4,5,4), (3,3,3), (3,3,3).
    let coherence: Vec<(u8, Vec<u8>, u8, i8)> = r
        .summary
        .coherence_dimensions
        .values()
        .map(|c| (c.registry, c.runs.clone(), c.median, c.difference))
        .collect();
    assert_eq!(
        coherence,
        vec![
            (4, vec![4, 4, 3], 4, 0),
            (5, vec![4, 5, 4], 4, -1),
            (4, vec![3, 3, 3], 3, -1),
            (3, vec![3, 3, 3], 3, 0),
        ]
    );

    // Per tool: median TDQS, difference, per-dimension differences, range.
    let tool = |name: &str| &r.summary.tools[name];
    let dims = |name: &str| -> Vec<i8> { tool(name).difference.scores.values().copied().collect() };
    assert_eq!(tool("add_comment").median.tdqs, t(33));
    assert_eq!(tool("add_comment").median.tier, Tier::B);
    assert_eq!(tool("add_comment").difference.tdqs, t(-2));
    assert_eq!(dims("add_comment"), [-1, 0, -1, 0, 0, 0]);
    assert_eq!(tool("add_comment").range, t(3));
    assert_eq!(tool("close_issue").difference.tdqs, t(0));
    assert_eq!(dims("close_issue"), [0; 6]);
    assert_eq!(tool("get_issue").median.tdqs, t(32));
    assert_eq!(dims("get_issue"), [-1, 0, 0, 0, 0, 0]);
    assert_eq!(tool("list_labels").difference.tdqs, t(8));
    assert_eq!(tool("list_labels").median.tier, Tier::A);
    assert_eq!(dims("list_labels"), [1, 1, 1, 0, 0, 1]);
    assert_eq!(tool("ping_tracker").runs, [t(10), t(10), t(10)]);
    assert_eq!(tool("search_issues").median.tdqs, t(36));
    assert_eq!(tool("search_issues").difference.tdqs, t(-3));
    assert_eq!(dims("search_issues"), [-1, 0, 0, 0, 0, -1]);
    assert_eq!(tool("search_issues").range, t(5));

    // Per dimension (expected.py): mean absolute and signed difference as exact fractions,
    // higher / lower / equal, and Pearson's r.
    // (measure, mean absolute, mean signed, higher, lower, equal, r)
    type Row<'a> = (&'a str, &'a str, &'a str, usize, usize, usize, Option<f64>);
    let expected: [Row; 7] = [
        ("tdqs", "1/4", "1/60", 1, 3, 2, Some(0.9243877540254652)),
        (
            "purpose_clarity",
            "2/3",
            "-1/3",
            1,
            3,
            2,
            Some(0.8378688987532451),
        ),
        (
            "usage_guidelines",
            "1/6",
            "1/6",
            1,
            0,
            5,
            Some(0.9231861823449955),
        ),
        ("behavioral_transparency", "1/3", "0/1", 1, 1, 4, Some(0.7)),
        ("parameter_semantics", "0/1", "0/1", 0, 0, 6, Some(1.0)),
        ("conciseness_structure", "0/1", "0/1", 0, 0, 6, Some(1.0)),
        (
            "contextual_completeness",
            "1/3",
            "0/1",
            1,
            1,
            4,
            Some(0.7905694150420948),
        ),
    ];
    assert_eq!(r.summary.per_dimension.len(), expected.len());
    for (got, want) in r.summary.per_dimension.iter().zip(expected) {
        assert_eq!(got.measure, want.0);
        assert_eq!(got.mean_absolute_difference.fraction, want.1, "{}", want.0);
        assert_eq!(got.mean_signed_difference.fraction, want.2, "{}", want.0);
        assert_eq!(
            (got.gate_higher, got.gate_lower, got.equal),
            (want.3, want.4, want.5),
            "{}",
            want.0
        );
        let (g, w) = (got.correlation.unwrap(), want.6.unwrap());
        assert!((g - w).abs() < 1e-9, "{}: r {g} against {w}", want.0);
    }

    // The largest differences, largest first, ties by name, with the dimensions that differ.
    let order: Vec<&str> = r
        .summary
        .largest_differences
        .iter()
        .map(|l| l.tool.as_str())
        .collect();
    assert_eq!(
        order,
        [
            "list_labels",
            "search_issues",
            "add_comment",
            "get_issue",
            "close_issue",
            "ping_tracker"
        ]
    );
    let search = &r.summary.largest_differences[1];
    assert_eq!(
        (search.registry, search.gate, search.difference),
        (t(39), t(36), t(-3))
    );
    let differing: Vec<(ToolDimension, i8)> = search
        .dimensions
        .iter()
        .map(|d| (d.dimension, d.difference))
        .collect();
    assert_eq!(
        differing,
        [
            (ToolDimension::PurposeClarity, -1),
            (ToolDimension::ContextualCompleteness, -1)
        ]
    );

    // Run to run.
    let s = &r.summary.spread;
    assert!(!s.identical_runs);
    assert_eq!(s.tools_that_moved, 5);
    assert_eq!(s.mean_tool_range.fraction, "1/4");
    assert_eq!(s.largest_tool_range, t(5));
    assert_eq!(s.largest_range_tools, ["search_issues"]);
    assert_eq!((s.mean_tdqs.lowest, s.mean_tdqs.highest), (t(30), t(31)));
    assert_eq!(s.exact_mean_tdqs.lowest.fraction, "179/60");
    assert_eq!(s.exact_mean_tdqs.highest.fraction, "31/10");
    assert_eq!((s.coherence.lowest, s.coherence.highest), (t(33), t(38)));
    assert_eq!((s.overall.lowest, s.overall.highest), (t(26), t(27)));

    // 5 judged tools and one coherence question per run; ping_tracker is hard-gated.
    assert_eq!(r.calls.questions, 18);
    assert_eq!(r.calls.hard_gated, 3);
}

#[test]
fn the_record_keeps_no_registry_text_and_the_page_comes_from_the_record() {
    let dir = tempfile::tempdir().unwrap();
    let done = scripted(fixtures().join("capture.json"), dir.path()).expect("calibrates");
    let json = std::fs::read_to_string(&done.json).unwrap();
    let markdown = std::fs::read_to_string(&done.markdown).unwrap();
    for text in [&json, &markdown] {
        assert!(!text.contains("REGISTRY-JUSTIFICATION-TEXT"));
        assert!(!text.contains("REGISTRY-COHERENCE-SUMMARY"));
    }
    // The page is a function of the record alone: rendering the record read back from disk
    // gives the same bytes.
    let back: CalibrationRecord = calibrate::read_record(&done.json).unwrap();
    assert_eq!(back, done.record);
    assert_eq!(calibrate::markdown::render(&back), markdown);
    for heading in [
        "## The whole set",
        "## Per dimension",
        "## The largest differences",
        "## Every tool",
    ] {
        assert!(markdown.contains(heading), "missing {heading}");
    }
    assert!(markdown.contains("| Overall | 2.7 (C) | 2.6, 2.7, 2.6 | 2.6 (C) |"));
    assert!(markdown.contains("| `search_issues` | 3.9 | 3.6 | -0.3 | 3.6, 3.4, 3.9 |"));
    assert!(markdown.contains("| TDQS | 0.25 | +0.02 | 1 | 3 | 2 | 0.92 |"));
}

fn refusal(capture: &Value) -> (Error, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let path = write_capture(dir.path(), capture);
    let report = dir.path().join("out");
    let err = match scripted(path, &report) {
        Ok(_) => panic!("the capture was accepted"),
        Err(e) => e,
    };
    assert_eq!(err.stage, Stage::Calibrate, "{}", err.render());
    assert!(err.advice.is_some(), "a refusal names the fix");
    assert!(!report.exists(), "nothing is written for a refused capture");
    (err, dir)
}

#[test]
fn a_capture_with_an_edited_definition_is_refused() {
    let mut capture = capture_value();
    capture["tools"][1]["definition"]["description"] =
        json!("Fetch one issue by number with its comments, labels and reactions.");
    let (err, _dir) = refusal(&capture);
    assert!(
        err.cause.contains(
            "sealed with setHash 6a1e205d9deca399174506bd2ba1503f51e4b2264d7e859126ef28fe648719e5"
        ),
        "{}",
        err.cause
    );
    assert!(err.cause.contains("a definition changed"), "{}", err.cause);
}

#[test]
fn a_capture_with_an_inconsistent_tdqs_is_refused() {
    let mut capture = capture_value();
    // add_comment is 4,3,3,4,4,3 = 350 hundredths: 3.5, not 3.6.
    let entry = capture["tools"]
        .as_array_mut()
        .unwrap()
        .iter_mut()
        .find(|t| t["name"] == "add_comment")
        .unwrap();
    entry["qualityScore"]["tdqs"] = json!(3.6);
    let (err, _dir) = refusal(&capture);
    assert!(
        err.cause.contains("for 1 of 6 tools")
            && err
                .cause
                .contains("`add_comment`: TDQS 3.6, but its scores 4, 3, 3, 4, 4, 3 give 3.5"),
        "{}",
        err.cause
    );
}

#[test]
fn a_capture_whose_server_numbers_do_not_follow_is_refused() {
    let mut capture = capture_value();
    capture["server"]["meanTdqs"] = json!(3.1);
    capture["server"]["coherenceTier"] = json!("B");
    let (err, _dir) = refusal(&capture);
    assert!(
        err.cause.contains("meanTdqs is 3.1, the tools give 3.0")
            && err.cause.contains("coherenceTier is B, the tools give A"),
        "{}",
        err.cause
    );
}

#[test]
fn a_definition_filed_under_another_name_is_refused() {
    let mut capture = capture_value();
    capture["tools"][0]["name"] = json!("find_issues");
    let (err, _dir) = refusal(&capture);
    assert!(
        err.cause
            .contains("named `find_issues` but its definition is named `search_issues`"),
        "{}",
        err.cause
    );
}

#[test]
fn an_unsealed_capture_is_refused_with_the_hash_to_seal_it_with() {
    let mut capture = capture_value();
    capture.as_object_mut().unwrap().remove("setHash");
    let (err, _dir) = refusal(&capture);
    assert!(err.advice.unwrap().contains(
        "\"setHash\": \"6a1e205d9deca399174506bd2ba1503f51e4b2264d7e859126ef28fe648719e5\""
    ));
}

#[test]
fn an_even_number_of_runs_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(
        fixtures().join("capture.json"),
        dir.path().join("out"),
        JudgeMode::Static,
    );
    opts.runs = 2;
    let err = runtime()
        .block_on(calibrate::run(&opts, Arc::new(NoProgress)))
        .unwrap_err();
    assert_eq!(err.stage, Stage::Usage);
    assert!(err.cause.contains("odd number of runs"), "{}", err.cause);
}

#[test]
fn the_static_judge_gives_identical_bytes_twice() {
    let dir = tempfile::tempdir().unwrap();
    let first = static_run(fixtures().join("capture.json"), &dir.path().join("a")).unwrap();
    let second = static_run(fixtures().join("capture.json"), &dir.path().join("b")).unwrap();
    assert_eq!(
        std::fs::read(&first.json).unwrap(),
        std::fs::read(&second.json).unwrap()
    );
    assert_eq!(
        std::fs::read(&first.markdown).unwrap(),
        std::fs::read(&second.markdown).unwrap()
    );
    let record = &first.record;
    assert_eq!(record.scoring.judge.mode, "static");
    assert!(!record.scoring.judge.model_judged);
    assert!(record.summary.spread.identical_runs);
    assert!(record.note.contains("not the pinned model claude-opus-5-5"));
}

fn committed_record() -> (PathBuf, CalibrationRecord) {
    let path = repo_root().join("tdqs/calibration.json");
    let record = calibrate::read_record(&path).unwrap_or_else(|e| panic!("{}", e.render()));
    (path, record)
}

#[test]
fn the_committed_calibration_was_made_with_the_embedded_pins() {
    let (_, record) = committed_record();
    let pins = Pins::embedded().unwrap();
    assert_eq!(
        record.version_digest,
        pins.digest(),
        "tdqs/version.json changed since tdqs/calibration.json was made; make the calibration \
         again (docs/calibration.md, \"Making the calibration again\")"
    );
    assert_eq!(record.scoring.version_digest, record.version_digest);
    assert!(record.scoring.pins_embedded);
}

#[test]
fn the_committed_calibration_is_reproduced_by_its_judge() {
    let (path, committed) = committed_record();
    // Until a live run is possible the committed record is the static judge's, on the fixture
    // capture; rerunning it must give the same bytes, or the record is stale.
    assert_eq!(committed.scoring.judge.mode, "static");
    let capture = fixtures().join("capture.json");
    assert_eq!(
        committed.capture.sha256,
        tdqs_core::digest::sha256_hex(&std::fs::read(&capture).unwrap()),
        "the committed calibration was made from another capture than {}",
        capture.display()
    );
    let dir = tempfile::tempdir().unwrap();
    let mut opts = options(capture, dir.path().to_path_buf(), JudgeMode::Static);
    opts.runs = committed.runs.len();
    opts.judge.concurrency = committed.scoring.concurrency;
    let again = runtime()
        .block_on(calibrate::run(&opts, Arc::new(NoProgress)))
        .unwrap();
    // The generator's version is the one field a release may change without changing a score.
    let without_generator = |path: &Path| -> Value {
        let mut value: Value =
            serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
        value.as_object_mut().unwrap().remove("generator");
        value
    };
    assert!(
        without_generator(&again.json) == without_generator(&path),
        "tdqs/calibration.json is stale (the static judge or the record changed): make the \
         calibration again with `tdqs-gate --calibrate tests/fixtures/calibrate/capture.json \
         --judge static --runs 3 --report-dir calibration-run` and copy calibration-run/calibration.json \
         to tdqs/calibration.json"
    );
}

/// The one public capture with definitions in this repository (gathered for the static judge):
/// Glama's scores for portkey-admin-mcp release 1.0.0. Half of them were published as 2.9 where
/// the six scores give exactly 2.95, which TDQS v1.2's round1 makes 3.0 — the float rounding the
/// spec replaced. Such a capture cannot calibrate the pinned specification and is refused.
#[test]
fn a_capture_scored_before_round1_is_refused() {
    let dir = repo_root().join("calibration/glama-portkey-admin-mcp");
    let read = |name: &str| -> Value {
        serde_json::from_str(&std::fs::read_to_string(dir.join(name)).unwrap()).unwrap()
    };
    let definitions = read("definitions.json");
    let scores = read("scores.json");
    let by_name: HashMap<&str, &Value> = scores["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| (t["name"].as_str().unwrap(), t))
        .collect();
    let tools: Vec<Value> = definitions
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            let published = by_name[d["name"].as_str().unwrap()];
            let mut quality = serde_json::Map::new();
            for dim in ToolDimension::ALL {
                quality.insert(
                    dim.camel_key().to_string(),
                    published["scores"][dim.key()].clone(),
                );
            }
            quality.insert("tdqs".into(), published["tdqs"].clone());
            quality.insert("tier".into(), published["tier"].clone());
            json!({"name": d["name"], "definition": d, "qualityScore": quality})
        })
        .collect();
    let (err, _dir) = refusal(&json!({"release": "1.0.0", "server": {}, "tools": tools}));
    assert!(
        err.cause
            .contains("does not follow from its own six scores")
            && err
                .cause
                .contains("but its scores 4, 2, 2, 3, 5, 2 give 3.0"),
        "{}",
        err.cause
    );
}

/// The whole path of a model judge: prompts from the (stand-in) specification in the cache,
/// rendered for every tool and the set, asked of the Claude Code CLI (the fake stands in for
/// it), validated, scored three times and recorded.
#[test]
fn calibrates_through_the_claude_code_cli() {
    use tdqs_core::spec::extract::{extract_prompts, PromptKey};

    let dir = tempfile::tempdir().unwrap();
    let program = dir.path().join("claude");
    std::fs::copy(env!("CARGO_BIN_EXE_fake-claude"), &program).unwrap();

    // The fake answers the set question only when its prompt names `shadowing_risks`, so the
    // stand-in set prompt gets that word; the pins carry the hashes of this README.
    let spec_fixtures = Path::new(env!("CARGO_MANIFEST_DIR")).join("fixtures/spec");
    let line = "Rate disambiguation, naming_consistency, tool_count_appropriateness and completeness from 1 to 5.";
    let readme = std::fs::read_to_string(spec_fixtures.join("standin-readme.md"))
        .unwrap()
        .replace(
            line,
            &format!("{line}\nList the confirmed shadowing_risks."),
        );
    let prompts = extract_prompts(&readme).unwrap();
    let mut pins: Value = serde_json::from_str(
        &std::fs::read_to_string(spec_fixtures.join("standin-pins.json")).unwrap(),
    )
    .unwrap();
    for key in PromptKey::ALL {
        pins["prompt_sha256"][key.name()] = json!(prompts.sha256(key));
    }
    let pins_path = dir.path().join("pins.json");
    std::fs::write(&pins_path, serde_json::to_vec_pretty(&pins).unwrap()).unwrap();
    let commit = pins["spec_commit"].as_str().unwrap();
    let cache = dir.path().join("cache");
    std::fs::create_dir_all(cache.join("tdqs-gate")).unwrap();
    std::fs::write(
        cache.join("tdqs-gate").join(format!("{commit}.md")),
        &readme,
    )
    .unwrap();

    let mut opts = options(
        fixtures().join("capture.json"),
        dir.path().join("out"),
        JudgeMode::ClaudeCode,
    );
    opts.judge.pins = Some(pins_path);
    opts.judge.cache_dir = Some(cache);
    opts.judge.claude = Some(program);
    opts.judge.concurrency = 3;
    let done = runtime()
        .block_on(calibrate::run(&opts, Arc::new(NoProgress)))
        .unwrap_or_else(|e| panic!("{}", e.render()));
    let record = &done.record;
    assert_eq!(record.scoring.judge.mode, "claude-code");
    assert_eq!(record.scoring.judge.model, "claude-test-model");
    assert!(record.scoring.judge.model_judged);
    assert!(!record.scoring.pins_embedded);
    assert_eq!(record.scoring.prompts.as_ref().unwrap().source, "cache");
    assert!(
        record.note.contains("language model claude-test-model"),
        "{}",
        record.note
    );
    assert!(
        record.note.contains("pins other than the embedded"),
        "{}",
        record.note
    );
    assert!(record.warnings.iter().any(|w| w.contains("pins replaced")));
    assert_eq!(record.runs.len(), 3);
    // Five asked tools and the set, per run; ping_tracker is decided without a call.
    assert_eq!(record.calls.questions, 18);
    assert_eq!(record.calls.attempts, 18);
    assert_eq!(record.summary.tools.len(), 6);
    assert!(done.markdown.exists());
}
