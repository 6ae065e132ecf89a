//! The gate and `score` end to end with the HTTP judges (issue 8), against loopback servers that
//! speak the Anthropic Messages API and the OpenAI chat-completions API, with the stand-in
//! specification served from loopback too. No test reaches the network.

use std::path::{Path, PathBuf};
use std::sync::Arc;

use serde_json::{json, Value};
use tdqs_core::exit::Verdict;
use tdqs_core::export::{ExportSource, ProbeProfile, RawListing};
use tdqs_gate::gate::{self, GateOptions, JudgeMode, JudgeOptions, SideSource};
use tdqs_gate::progress::NoProgress;

use crate::loopback::{Loopback, Request, Response};

fn repo_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

fn fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/spec")
        .join(name)
}

/// An export file of the example server's careful or careless tools.
fn export_file(dir: &Path, name: &str) -> PathBuf {
    let tools: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(repo_file(&format!("examples/issue-tracker/{name}.json")))
            .unwrap(),
    )
    .unwrap();
    let listing = RawListing {
        server_name: Some("issue-tracker-example".into()),
        server_version: Some("1.0.0".into()),
        protocol_version: "2025-11-25".into(),
        tools,
        ..RawListing::default()
    };
    let export = tdqs_core::digest::assemble_export(
        listing,
        ProbeProfile::default(),
        ExportSource::default(),
    )
    .unwrap();
    let path = dir.join(format!("{name}.export.json"));
    tdqs_gate::export::file::write_export(&path, &export).unwrap();
    path
}

/// The stand-in pins with the model the loopback APIs serve.
fn pins_file(dir: &Path) -> (PathBuf, String) {
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(fixture("standin-pins.json")).unwrap())
            .unwrap();
    let model = record["model"].as_str().unwrap().to_string();
    let path = dir.join("pins.json");
    std::fs::write(&path, serde_json::to_string_pretty(&record).unwrap()).unwrap();
    (path, model)
}

/// A TDQS answer whose scores follow the description's length, so the careless rewrite of a
/// tool scores lower than the careful one; the coherence answer is fixed.
fn answer_for(system: &str, user: &str) -> String {
    if system.contains("tool-set reviewer") {
        let dim = |s: u8| json!({"score": s, "justification": "stand-in"});
        return json!({
            "scores": {"disambiguation": dim(4), "naming_consistency": dim(4),
                       "tool_count_appropriateness": dim(5), "completeness": dim(3)},
            "shadowing_risks": [], "summary": "stand-in coherence"
        })
        .to_string();
    }
    let description = user
        .split("Stated purpose:\n\"")
        .nth(1)
        .and_then(|rest| rest.split("\"\n\n[arguments]").next())
        .unwrap_or("");
    let score = match description.chars().count() {
        0..=20 => 1,
        21..=60 => 2,
        61..=120 => 3,
        121..=200 => 4,
        _ => 5,
    };
    let dim = json!({"score": score, "justification": format!("{} characters", description.len())});
    json!({
        "scores": {"purpose_clarity": dim, "usage_guidelines": dim, "behavioral_transparency": dim,
                   "parameter_semantics": dim, "conciseness_structure": dim,
                   "contextual_completeness": dim},
        "annotation_contradiction": false, "summary": "stand-in"
    })
    .to_string()
}

fn api_server(model: String) -> Loopback {
    let readme = std::fs::read_to_string(fixture("standin-readme.md")).unwrap();
    Loopback::start(move |req: &Request| {
        let path = req.path.split('?').next().unwrap_or("");
        if path.ends_with("/README.md") {
            return Response::ok(readme.clone());
        }
        match (req.method.as_str(), path) {
            ("POST", "/v1/messages") => {
                let body: Value = serde_json::from_slice(&req.body).unwrap();
                let system = match &body["system"] {
                    Value::String(s) => s.clone(),
                    Value::Array(blocks) => blocks
                        .iter()
                        .filter_map(|b| b["text"].as_str())
                        .collect::<Vec<_>>()
                        .join("\n"),
                    _ => String::new(),
                };
                let user = body["messages"][0]["content"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                assert!(
                    body.get("temperature").is_none(),
                    "temperature sent to the pinned model"
                );
                Response::ok(
                    json!({"id": "msg_1", "type": "message", "role": "assistant", "model": model,
                           "content": [{"type": "text", "text": answer_for(&system, &user)}],
                           "stop_reason": "end_turn",
                           // The shared rubric prefix was read from the prompt cache.
                           "usage": {"input_tokens": 100, "output_tokens": 20,
                                     "cache_creation_input_tokens": 0,
                                     "cache_read_input_tokens": 80}})
                    .to_string(),
                )
                .with_header("content-type", "application/json")
            }
            ("POST", "/v1/chat/completions") => {
                let body: Value = serde_json::from_slice(&req.body).unwrap();
                let system = body["messages"][0]["content"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                let user = body["messages"][1]["content"]
                    .as_str()
                    .unwrap_or("")
                    .to_string();
                assert_eq!(
                    body["temperature"].as_f64(),
                    Some(0.0),
                    "temperature 0 must be sent"
                );
                Response::ok(
                    json!({"id": "c1", "object": "chat.completion", "model": body["model"],
                           "choices": [{"index": 0, "finish_reason": "stop",
                                        "message": {"role": "assistant",
                                                    "content": answer_for(&system, &user)}}],
                           "usage": {"prompt_tokens": 50, "completion_tokens": 10}})
                    .to_string(),
                )
                .with_header("content-type", "application/json")
            }
            ("GET", p) if p.starts_with("/v1/models") => Response::ok(
                json!({"data": [{"id": model, "object": "model"}], "id": model, "type": "model"})
                    .to_string(),
            )
            .with_header("content-type", "application/json"),
            _ => Response::status(404, "not found"),
        }
    })
}

struct Setup {
    dir: tempfile::TempDir,
    server: Loopback,
    pins: PathBuf,
    model: String,
}

impl Setup {
    fn new() -> Setup {
        let dir = tempfile::tempdir().unwrap();
        let (pins, model) = pins_file(dir.path());
        let server = api_server(model.clone());
        Setup {
            dir,
            server,
            pins,
            model,
        }
    }

    fn judge(&self, mode: JudgeMode, token_env: Option<&str>) -> JudgeOptions {
        JudgeOptions {
            mode,
            pins: Some(self.pins.clone()),
            cache_dir: Some(self.dir.path().join("cache")),
            spec_url: Some(self.server.url("/{commit}/README.md")),
            token_env: token_env.map(str::to_string),
            base_url: Some(self.server.url("")),
            model: (mode == JudgeMode::Openai).then(|| self.model.clone()),
            ..JudgeOptions::default()
        }
    }

    fn gate(&self, judge: JudgeOptions, base: &str, head: &str) -> GateOptions {
        GateOptions {
            repo: None,
            base: SideSource::ExportFile(export_file(self.dir.path(), base)),
            head: SideSource::ExportFile(export_file(self.dir.path(), head)),
            server: Default::default(),
            judge,
            report_dir: self.dir.path().join("report"),
            share_identical: true,
            decision_rule: None,
            tool_drop: None,
            max_listing_growth: None,
            full_report: false,
            settings_rev: None,
            settings_file: None,
            answer_cache: tdqs_gate::score::answer_cache::AnswerCacheChoice::Off,
            eval: None,
            suggest: None,
        }
    }
}

const KEY_VAR: &str = "TDQS_GATE_TEST_HTTP_GATE_KEY";

fn set_key() {
    // A name no other test uses; the value is long enough to be masked everywhere.
    std::env::set_var(KEY_VAR, "sk-ant-api03-loopback-test-key-000000");
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn score_runs_against_the_loopback_messages_api() {
    set_key();
    let setup = Setup::new();
    let export =
        tdqs_gate::export::file::read_export(&export_file(setup.dir.path(), "careful")).unwrap();
    let scored = tdqs_gate::score::session::score_once(
        &export,
        &setup.judge(JudgeMode::Anthropic, Some(KEY_VAR)),
        Arc::new(NoProgress),
    )
    .await
    .unwrap();
    let n = export.tools.len() as u64;
    assert_eq!(
        scored.calls.questions,
        n + 1,
        "one call per tool plus coherence"
    );
    assert_eq!(scored.calls.tokens.input_tokens, 100 * (n + 1));
    assert_eq!(scored.scoring.judge.mode, "anthropic");
    assert!(scored.scoring.judge.model_judged);
    assert!(scored.side.rollups.mean_tdqs.is_some());
    // The key went only into the auth header, never into a body.
    for req in setup.server.requests() {
        assert!(!req.body_text().contains("loopback-test-key"));
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gate_blocks_a_careless_rewrite_with_the_anthropic_judge() {
    set_key();
    let setup = Setup::new();
    let opts = setup.gate(
        setup.judge(JudgeMode::Anthropic, Some(KEY_VAR)),
        "careful",
        "careless",
    );
    let outcome = gate::run(&opts, Arc::new(NoProgress)).await;
    assert_eq!(outcome.verdict, Verdict::Block, "{:?}", outcome.error);
    let report = outcome.report.unwrap();
    assert_eq!(report.pairs.len(), 3);
    assert!(report.calls.tokens.output_tokens > 0);
    // Prompt-cache reads are counted apart from the input tokens and named in the footer.
    let asked = report.calls.tokens.input_tokens / 100;
    assert!(asked > 0);
    assert_eq!(report.calls.tokens.cache_read_input_tokens, 80 * asked);
    let summary =
        std::fs::read_to_string(setup.dir.path().join("report/tool-definition-score.md")).unwrap();
    assert!(
        summary.contains(&format!("{} read from the prompt cache", 80 * asked)),
        "{summary}"
    );
    let causes = report
        .causes
        .expect("a dropped first pair names its causes");
    assert!(!causes.tools.is_empty());
    let text = std::fs::read_to_string(setup.dir.path().join("report/tool-definition-score.json"))
        .unwrap();
    assert!(
        !text.contains("loopback-test-key"),
        "the key reached the report"
    );
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn the_gate_passes_an_improvement_with_an_openai_compatible_server() {
    let setup = Setup::new();
    let opts = setup.gate(setup.judge(JudgeMode::Openai, None), "careless", "careful");
    let outcome = gate::run(&opts, Arc::new(NoProgress)).await;
    assert_eq!(outcome.verdict, Verdict::Pass, "{:?}", outcome.error);
    let report = outcome.report.unwrap();
    assert_eq!(
        report.pairs.len(),
        1,
        "head at or above base decides after one pair"
    );
    let scoring = report.scoring.unwrap();
    assert_eq!(scoring.judge.mode, "openai");
    // An OpenAI-compatible server cannot prove its model: the report says so.
    assert!(
        report.warnings.iter().any(|w| w.contains("cannot")),
        "{:?}",
        report.warnings
    );
}
