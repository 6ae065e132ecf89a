//! `tdqs-gate eval`: the careful and the careless issue-tracker servers (one API
//! written twice, examples/issue-tracker/) ranked in `synthetic` mode, `live_model` through a
//! loopback OpenAI-compatible stand-in that selects by a scripted rule, replay from the cache
//! with no network, argument validation, thresholds and budgets, and misconfigured live runs
//! failing loudly. No test reaches the network.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::loopback::{refused_url, Loopback, Response};

pub(crate) const GATE: &str = env!("CARGO_BIN_EXE_tdqs-gate-dup");
const FAKE: &str = env!("CARGO_BIN_EXE_fake-mcp-server");
const MODEL: &str = "stand-in-selector-1";

fn repo_file(path: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("..").join(path)
}

/// The fake server serving the example's `which` tool set, whose file is copied into `dir`, the
/// tree the command runs in: a sandboxed server sees only its tree, and a file of the checkout
/// would be hidden from it when the checkout is under /tmp or a home folder.
pub(crate) fn server_command(dir: &Path, which: &str) -> String {
    let name = format!("{which}-tools.json");
    std::fs::copy(
        repo_file(&format!("examples/issue-tracker/{which}.json")),
        dir.join(&name),
    )
    .expect("copy the tool set into the tree");
    format!("{FAKE} --tools {{root}}/{name}")
}

pub(crate) fn cases(which: &str) -> PathBuf {
    repo_file(&format!("examples/issue-tracker/eval-{which}.toml"))
}

/// Runs `tdqs-gate eval` in `dir` (not a git repository: the case file and cache are given).
fn eval(dir: &Path, which: &str, extra: &[&str]) -> Output {
    let mut cmd = std::process::Command::new(GATE);
    cmd.current_dir(dir)
        .arg("eval")
        .arg("--repo")
        .arg(dir)
        .arg("--cases")
        .arg(cases(which))
        .arg("--command")
        .arg(server_command(dir, which))
        .args(extra)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY");
    cmd.output().unwrap()
}

pub(crate) fn json_of(out: &Output) -> Value {
    assert_eq!(
        out.status.code(),
        Some(0),
        "stderr: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout)
        .unwrap_or_else(|e| panic!("not JSON ({e}): {}", String::from_utf8_lossy(&out.stdout)))
}

pub(crate) fn ratio(run: &Value, key: &str) -> (u64, u64) {
    let r = &run["metrics"][key];
    (r["hit"].as_u64().unwrap(), r["of"].as_u64().unwrap())
}

// ---------------------------------------------------------------------------------------------
// Synthetic mode.

#[test]
fn careful_server_ranks_above_careless_in_synthetic_mode() {
    let dir = tempfile::tempdir().unwrap();
    let careful = json_of(&eval(
        dir.path(),
        "careful",
        &["--mode", "synthetic", "--json"],
    ));
    let careless = json_of(&eval(
        dir.path(),
        "careless",
        &["--mode", "synthetic", "--json"],
    ));
    for run in [&careful, &careless] {
        assert_eq!(run["mode"], "synthetic");
        assert!(run["modeLabel"]
            .as_str()
            .unwrap()
            .contains("not of model accuracy"));
        assert_eq!(run["calls"], 0);
        assert_eq!(run["cases"].as_array().unwrap().len(), 22);
    }
    let (c_hit, c_of) = ratio(&careful, "selection");
    let (l_hit, l_of) = ratio(&careless, "selection");
    assert_eq!((c_of, l_of), (18, 18));
    assert!(
        c_hit > l_hit,
        "careful {c_hit}/{c_of} must rank above careless {l_hit}/{l_of}"
    );
    // The figures, pinned so a change to the heuristic is seen (docs/eval.md quotes them).
    assert_eq!((c_hit, l_hit), (17, 7));
    assert!(
        careful["health"]["health"].as_u64() > careless["health"]["health"].as_u64(),
        "health: {} vs {}",
        careful["health"],
        careless["health"]
    );
    assert!(careful["composite"]["total"].as_u64() > careless["composite"]["total"].as_u64());
    // Distinguishability no longer rewards requests that reach no tool: the careless server,
    // whose tools the requests miss, is below the careful one on that part too.
    let distinct = |run: &Value| run["composite"]["parts"][1].as_f64().unwrap();
    assert!(
        distinct(&careful) > distinct(&careless),
        "distinguishability: careful {} vs careless {}",
        distinct(&careful),
        distinct(&careless)
    );
    // Synthetic generates no arguments: nothing is counted as valid or invalid.
    assert_eq!(ratio(&careful, "argumentValidity"), (0, 0));
    // Deterministic: the same run twice gives the same bytes.
    let again = eval(dir.path(), "careful", &["--mode", "synthetic", "--json"]);
    assert_eq!(
        serde_json::to_string(&careful).unwrap(),
        serde_json::to_string(&json_of(&again)).unwrap()
    );
}

#[test]
fn text_output_shows_mode_figures_and_capture_lines() {
    let dir = tempfile::tempdir().unwrap();
    let out = eval(dir.path(), "careless", &["--mode", "synthetic"]);
    assert_eq!(out.status.code(), Some(0));
    let text = String::from_utf8_lossy(&out.stdout);
    assert!(text.starts_with("mode: synthetic: "), "{text}");
    assert!(text.trim_end().ends_with("mode: synthetic"), "{text}");
    for needle in [
        "Selection accuracy     39%  7/18",
        "  positives",
        "  siblings",
        "Abstention",
        "Argument validity",
        "exportIssues captures 100 % of the requests meant for close_issue (2/2).",
        "Health (toolgauge-style)",
        "  lint ",
        "  selection ",
        "Composite (ToolChoice-style weights)",
        "distinguishability               20%",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
}

#[test]
fn min_accuracy_fails_like_a_lint_threshold() {
    let dir = tempfile::tempdir().unwrap();
    let low = eval(
        dir.path(),
        "careless",
        &["--mode", "synthetic", "--min-accuracy", "60"],
    );
    assert_eq!(low.status.code(), Some(1), "below the threshold: exit 1");
    assert!(String::from_utf8_lossy(&low.stderr).contains("below --min-accuracy 60"));
    let ok = eval(
        dir.path(),
        "careful",
        &["--mode", "synthetic", "--min-accuracy", "60"],
    );
    assert_eq!(ok.status.code(), Some(0));
    let bad = eval(
        dir.path(),
        "careful",
        &["--mode", "synthetic", "--min-accuracy", "150"],
    );
    assert_eq!(bad.status.code(), Some(2));
}

#[test]
fn a_broken_case_file_is_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("cases.toml");
    std::fs::write(
        &file,
        "version = 1\n[[case]]\nid = \"x\"\nrequest = \"Close issue 4\"\nexpect = \"close_ticket\"\nkind = \"positive\"\nprovenance = \"user_defined\"\n",
    )
    .unwrap();
    let out = std::process::Command::new(GATE)
        .current_dir(dir.path())
        .args(["eval", "--mode", "synthetic", "--repo"])
        .arg(dir.path())
        .arg("--cases")
        .arg(&file)
        .arg("--command")
        .arg(server_command(dir.path(), "careful"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("case `x` names `close_ticket`"), "{err}");
    assert!(out.stdout.is_empty());
    // No case file at all: named, with the way to write one.
    let none = std::process::Command::new(GATE)
        .current_dir(dir.path())
        .args(["eval", "--mode", "synthetic", "--repo"])
        .arg(dir.path())
        .output()
        .unwrap();
    assert_eq!(none.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&none.stderr).contains("tdqs-eval.toml"));
}

// ---------------------------------------------------------------------------------------------
// live_model through a loopback OpenAI-compatible stand-in.

/// Valid arguments for each careful tool.
fn valid_arguments(tool: &str) -> Value {
    match tool {
        "search_issues" => json!({"project": "atlas", "query": "login timeout"}),
        "list_issues" => json!({"project": "atlas"}),
        "create_issue" => json!({"project": "atlas", "title": "Signup crash"}),
        "export_issues" => json!({"project": "atlas", "from": "2026-03-01", "to": "2026-03-31"}),
        "close_issue" => json!({"project": "atlas", "number": 5, "reason": "completed"}),
        "delete_issue" => json!({"project": "atlas", "number": 66, "confirm_title": "Spam"}),
        "add_comment" => json!({"project": "atlas", "number": 14, "body": "Workaround exists."}),
        _ => json!({"project": "atlas", "number": 7}),
    }
}

/// The scripted rule: every request gets the expected tool of the careful suite with valid
/// arguments, except three scripted mistakes: the triage sibling goes to `update_issue`, the
/// create request omits the required title, and the export request adds a key the schema
/// forbids.
pub(crate) fn scripted_answer(request: &str, expected: &BTreeMap<String, String>) -> Value {
    let tool = expected
        .get(request)
        .cloned()
        .unwrap_or_else(|| "NO_TOOL".to_string());
    let (tool, arguments) = if request.starts_with("Suggest, without changing anything") {
        (
            "update_issue".to_string(),
            json!({"project": "atlas", "number": 20}),
        )
    } else if tool == "create_issue" && request.starts_with("File a new issue") {
        (tool, json!({"project": "atlas"}))
    } else if tool == "export_issues" {
        (
            tool,
            json!({"project": "atlas", "from": "2026-03-01", "to": "2026-03-31", "format": "csv"}),
        )
    } else if tool == "NO_TOOL" {
        (tool, json!({}))
    } else {
        let a = valid_arguments(&tool);
        (tool, a)
    };
    json!({"tool": tool, "arguments": arguments, "confidence": 0.9, "reason": "scripted"})
}

struct StandIn {
    server: Loopback,
    /// Every chat request body received.
    bodies: Arc<Mutex<Vec<Value>>>,
}

fn stand_in() -> StandIn {
    let suite =
        tdqs_gate::eval::suite::parse(&std::fs::read_to_string(cases("careful")).unwrap()).unwrap();
    let expected: BTreeMap<String, String> = suite
        .cases
        .iter()
        .map(|c| (c.request.clone(), c.expect.as_str().to_string()))
        .collect();
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let seen = bodies.clone();
    let server = Loopback::start(move |req| match (req.method.as_str(), req.path.as_str()) {
        ("POST", "/v1/chat/completions") => {
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            seen.lock().unwrap().push(body.clone());
            let user = body["messages"][1]["content"].as_str().unwrap_or("");
            let request = user
                .split("User request:\n")
                .nth(1)
                .unwrap_or("")
                .trim_end()
                .to_string();
            let answer = scripted_answer(&request, &expected);
            Response::ok(
                json!({"id": "c1", "object": "chat.completion", "model": body["model"],
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": answer.to_string()}}],
                       "usage": {"prompt_tokens": 1000, "completion_tokens": 40}})
                .to_string(),
            )
            .with_header("content-type", "application/json")
        }
        ("GET", p) if p.starts_with("/v1/models") => {
            Response::ok(json!({"data": [{"id": MODEL, "object": "model"}]}).to_string())
                .with_header("content-type", "application/json")
        }
        _ => Response::status(404, "not found"),
    });
    StandIn { server, bodies }
}

fn live_args<'a>(base_url: &'a str, cache: &'a str) -> Vec<&'a str> {
    vec![
        "--mode",
        "live-model",
        "--judge",
        "openai",
        "--model",
        MODEL,
        "--base-url",
        base_url,
        "--eval-cache",
        cache,
        "--json",
    ]
}

#[test]
fn live_model_through_a_loopback_stand_in_then_offline_replay() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("eval-cache");
    let cache_s = cache.to_str().unwrap().to_string();
    let standin = stand_in();
    let url = standin.server.url("");
    let run = json_of(&eval(dir.path(), "careful", &live_args(&url, &cache_s)));
    assert_eq!(run["mode"], "live_model");
    assert_eq!(run["selector"], "openai");
    assert_eq!(run["model"], MODEL);
    assert_eq!(ratio(&run, "selection"), (17, 18));
    assert_eq!(ratio(&run, "positives"), (10, 10));
    assert_eq!(ratio(&run, "siblings"), (7, 8));
    assert_eq!(ratio(&run, "abstention"), (4, 4));
    // Argument validity: 18 selections of a listed tool, two scripted invalid ones.
    assert_eq!(ratio(&run, "argumentValidity"), (16, 18));
    let by_id = |id: &str| {
        run["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap()
            .clone()
    };
    let create = by_id("p-create");
    assert_eq!(create["argumentsValid"], false);
    assert!(
        create["argumentErrors"].to_string().contains("title"),
        "{create}"
    );
    let export = by_id("p-export");
    assert!(
        export["argumentErrors"].to_string().contains("format"),
        "{export}"
    );
    assert_eq!(by_id("p-get")["argumentsValid"], true);
    assert_eq!(by_id("s-triage-not-update")["selected"], "update_issue");
    let captures = run["metrics"]["captures"].as_array().unwrap();
    assert_eq!(captures.len(), 1);
    assert_eq!(captures[0]["captor"], "update_issue");
    assert_eq!(captures[0]["meantFor"], "triage_issue");
    // Tokens and calls of the run.
    assert_eq!(run["calls"], 22);
    assert_eq!(run["cached"], 0);
    assert_eq!(run["usage"]["inputTokens"], 22_000);
    assert_eq!(run["usage"]["outputTokens"], 880);
    // What the model was shown: temperature 0, the definitions exactly as exported.
    let bodies = standin.bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 22);
    let tools: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(repo_file("examples/issue-tracker/careful.json")).unwrap(),
    )
    .unwrap();
    let shown = serde_json::to_string_pretty(&Value::Array(tools)).unwrap();
    for body in &bodies {
        assert_eq!(body["temperature"].as_f64(), Some(0.0));
        assert!(body["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains(&shown));
    }
    // Every answer cached, one file each.
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 22);

    // Replay: no server, no key, no network; the same figures.
    standin.server.stop();
    let dead = refused_url("");
    let replay = json_of(&eval(
        dir.path(),
        "careful",
        &[&live_args(&dead, &cache_s)[..], &["--offline"]].concat(),
    ));
    assert_eq!(replay["calls"], 0);
    assert_eq!(replay["cached"], 22);
    assert_eq!(replay["metrics"], run["metrics"]);
    assert_eq!(replay["cases"], run["cases"]);

    // A case the cache has never seen: --offline fails, naming it, and prints no figures.
    let file = dir.path().join("more.toml");
    let mut text = std::fs::read_to_string(cases("careful")).unwrap();
    text.push_str("\n[[case]]\nid = \"new-one\"\nrequest = \"Close atlas issue 3\"\nexpect = \"close_issue\"\nkind = \"positive\"\nprovenance = \"user_defined\"\n");
    std::fs::write(&file, text).unwrap();
    let miss = std::process::Command::new(GATE)
        .current_dir(dir.path())
        .args(["eval", "--repo"])
        .arg(dir.path())
        .arg("--cases")
        .arg(&file)
        .arg("--command")
        .arg(server_command(dir.path(), "careful"))
        .args(live_args(&dead, &cache_s))
        .arg("--offline")
        .output()
        .unwrap();
    assert_eq!(miss.status.code(), Some(2));
    assert!(miss.stdout.is_empty());
    let err = String::from_utf8_lossy(&miss.stderr);
    assert!(err.contains("no cached answer for case `new-one`"), "{err}");
}

#[test]
fn max_cost_stops_the_run_and_keeps_the_answers() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("eval-cache");
    let cache_s = cache.to_str().unwrap().to_string();
    let standin = stand_in();
    let url = standin.server.url("");
    let out = eval(
        dir.path(),
        "careful",
        &[&live_args(&url, &cache_s)[..], &["--max-cost", "2500"]].concat(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--max-cost 2500"), "{err}");
    // 1040 tokens a call: the third call passes the budget, so three answers are kept.
    assert_eq!(standin.bodies.lock().unwrap().len(), 3);
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 3);
}

#[test]
fn misconfigured_live_runs_fail_loudly_never_falling_back() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("c");
    let cache_s = cache.to_str().unwrap().to_string();
    let cases_ = [
        // No address for the OpenAI-compatible judge.
        (
            vec![
                "--mode",
                "live-model",
                "--judge",
                "openai",
                "--model",
                MODEL,
            ],
            "base-url",
        ),
        // The static judge cannot select.
        (
            vec!["--mode", "live-model", "--judge", "static"],
            "cannot select",
        ),
        // A missing key variable.
        (
            vec![
                "--mode",
                "live-model",
                "--judge",
                "anthropic",
                "--token-env",
                "TDQS_EVAL_NO_SUCH_KEY",
            ],
            "TDQS_EVAL_NO_SUCH_KEY",
        ),
    ];
    for (args, needle) in cases_ {
        let out = eval(
            dir.path(),
            "careful",
            &[&args[..], &["--eval-cache", &cache_s]].concat(),
        );
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: figures printed");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(err.contains("INVALID"), "{err}");
    }
    // An unreachable endpoint stops the run at the preflight.
    let dead = refused_url("");
    let out = eval(dir.path(), "careful", &live_args(&dead, &cache_s));
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(!cache.exists(), "nothing cached from a failed run");
}

// ---------------------------------------------------------------------------------------------
// The gate's opt-in selection check.

pub(crate) mod gate_check {
    use super::*;
    use tdqs_core::exit::Verdict;
    use tdqs_core::export::{ExportSource, ProbeProfile, RawListing};
    use tdqs_gate::eval::EvalOptions;
    use tdqs_gate::gate::{self, GateEval, GateOptions, JudgeMode, JudgeOptions, SideSource};
    use tdqs_gate::progress::NoProgress;

    const CATCH_ALL: &str = "handle_request";

    fn spec_fixture(name: &str) -> PathBuf {
        Path::new(env!("CARGO_MANIFEST_DIR"))
            .join("fixtures/spec")
            .join(name)
    }

    pub(super) fn careful_tools() -> Vec<Value> {
        serde_json::from_str(
            &std::fs::read_to_string(repo_file("examples/issue-tracker/careful.json")).unwrap(),
        )
        .unwrap()
    }

    /// The head: the careful tools plus a catch-all tool whose description the scripted TDQS
    /// judge likes better than any other.
    fn head_tools() -> Vec<Value> {
        let mut tools = careful_tools();
        tools.push(json!({
            "name": CATCH_ALL,
            "description": "Handle any request about a project's issues in one call, from finding to exporting.",
            "inputSchema": {"type": "object",
                            "properties": {"project": {"type": "string"}, "request": {"type": "string"}},
                            "required": ["project", "request"], "additionalProperties": false}
        }));
        tools
    }

    pub(super) fn export_file(dir: &Path, name: &str, tools: Vec<Value>) -> PathBuf {
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

    /// TDQS answers: 4 on every dimension, 5 for the catch-all (so the head's mean TDQS rises);
    /// selection answers by the scripted rule: with the catch-all listed, every request the
    /// careful suite expects at a tool goes to it, else to the expected tool.
    fn standin_answer(system: &str, user: &str, expected: &BTreeMap<String, String>) -> String {
        if system.contains("tool-selection step") {
            let request = user
                .split("User request:\n")
                .nth(1)
                .unwrap_or("")
                .trim_end();
            let tool = expected
                .get(request)
                .cloned()
                .unwrap_or_else(|| "NO_TOOL".into());
            let tool = if user.contains(&format!("\"name\": \"{CATCH_ALL}\"")) && tool != "NO_TOOL"
            {
                CATCH_ALL.to_string()
            } else {
                tool
            };
            return json!({"tool": tool, "arguments": {}, "confidence": 0.8, "reason": "scripted"})
                .to_string();
        }
        if system.contains("tool-set reviewer") {
            let dim = |s: u8| json!({"score": s, "justification": "stand-in"});
            return json!({
                "scores": {"disambiguation": dim(4), "naming_consistency": dim(4),
                           "tool_count_appropriateness": dim(4), "completeness": dim(4)},
                "shadowing_risks": [], "summary": "stand-in coherence"
            })
            .to_string();
        }
        let score = if user.contains("Handle any request") {
            5
        } else {
            4
        };
        let dim = json!({"score": score, "justification": "stand-in"});
        json!({
            "scores": {"purpose_clarity": dim, "usage_guidelines": dim, "behavioral_transparency": dim,
                       "parameter_semantics": dim, "conciseness_structure": dim,
                       "contextual_completeness": dim},
            "annotation_contradiction": false, "summary": "stand-in"
        })
        .to_string()
    }

    fn api(model: String) -> Loopback {
        let readme = std::fs::read_to_string(spec_fixture("standin-readme.md")).unwrap();
        let suite =
            tdqs_gate::eval::suite::parse(&std::fs::read_to_string(cases("careful")).unwrap())
                .unwrap();
        let expected: BTreeMap<String, String> = suite
            .cases
            .iter()
            .map(|c| (c.request.clone(), c.expect.as_str().to_string()))
            .collect();
        Loopback::start(move |req| {
            let path = req.path.split('?').next().unwrap_or("");
            if path.ends_with("/README.md") {
                return Response::ok(readme.clone());
            }
            match (req.method.as_str(), path) {
                ("POST", "/v1/chat/completions") => {
                    let body: Value = serde_json::from_slice(&req.body).unwrap();
                    let system = body["messages"][0]["content"].as_str().unwrap_or("");
                    let user = body["messages"][1]["content"].as_str().unwrap_or("");
                    let text = standin_answer(system, user, &expected);
                    Response::ok(
                        json!({"id": "c1", "object": "chat.completion", "model": body["model"],
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": text}}],
                               "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
                        .to_string(),
                    )
                    .with_header("content-type", "application/json")
                }
                ("GET", p) if p.starts_with("/v1/models") => {
                    Response::ok(json!({"data": [{"id": model, "object": "model"}]}).to_string())
                        .with_header("content-type", "application/json")
                }
                _ => Response::status(404, "not found"),
            }
        })
    }

    fn options(dir: &Path, server: &Loopback, with_eval: bool) -> GateOptions {
        let record: Value = serde_json::from_str(
            &std::fs::read_to_string(spec_fixture("standin-pins.json")).unwrap(),
        )
        .unwrap();
        let model = record["model"].as_str().unwrap().to_string();
        let pins = dir.join("pins.json");
        std::fs::write(&pins, record.to_string()).unwrap();
        let judge = JudgeOptions {
            mode: JudgeMode::Openai,
            pins: Some(pins),
            cache_dir: Some(dir.join("spec-cache")),
            spec_url: Some(server.url("/{commit}/README.md")),
            base_url: Some(server.url("")),
            model: Some(model),
            ..JudgeOptions::default()
        };
        let suite =
            tdqs_gate::eval::suite::parse(&std::fs::read_to_string(cases("careful")).unwrap())
                .unwrap();
        GateOptions {
            repo: None,
            base: SideSource::ExportFile(export_file(dir, "base", careful_tools())),
            head: SideSource::ExportFile(export_file(dir, "head", head_tools())),
            server: Default::default(),
            judge: judge.clone(),
            report_dir: dir.join("report"),
            share_identical: true,
            decision_rule: None,
            tool_drop: None,
            max_listing_growth: None,
            full_report: false,
            settings_rev: None,
            settings_file: None,
            suggest: None,
            answer_cache: tdqs_gate::score::answer_cache::AnswerCacheChoice::Off,
            eval: with_eval.then(|| GateEval {
                suite,
                cases_path: cases("careful"),
                options: EvalOptions {
                    mode: tdqs_core::eval::Mode::LiveModel,
                    judge: Some(judge),
                    cache_dir: dir.join("eval-cache"),
                    cache_tree: None,
                    trusted_answers: None,
                    offline: false,
                    max_cost_tokens: None,
                    pace: None,
                    allow_unknown_tools: true,
                },
            }),
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn gate_blocks_on_a_scripted_selection_regression() {
        let dir = tempfile::tempdir().unwrap();
        let server = api("claude-test-model".into());

        // Without the check, the TDQS rise passes.
        let plain = gate::run(&options(dir.path(), &server, false), Arc::new(NoProgress)).await;
        assert_eq!(plain.verdict, Verdict::Pass, "{:?}", plain.error);
        assert!(plain.report.as_ref().unwrap().eval.is_none());

        // With it: 18 cases fell, none rose, p far below 0.05: BLOCK, naming the captor.
        let outcome = gate::run(&options(dir.path(), &server, true), Arc::new(NoProgress)).await;
        assert_eq!(outcome.verdict, Verdict::Block, "{:?}", outcome.error);
        let report = outcome.report.unwrap();
        let check = report
            .eval
            .as_ref()
            .expect("the selection check is reported");
        assert!(check.blocks);
        assert_eq!((check.test.worse, check.test.better), (18, 0));
        assert!(check.test.p_value < 1e-4);
        assert!(check.tdqs_rose_while_selection_fell);
        assert_eq!(check.selector, "openai");
        assert!(
            report.reason.contains("selection fell significantly"),
            "{}",
            report.reason
        );
        assert!(
            report.reason.contains(
                "`s-close-not-delete` (expected `close_issue`) now goes to `handle_request`"
            ),
            "{}",
            report.reason
        );
        // The whole sentence: one space between its words, wherever it is shown.
        assert_eq!(
            report.warnings[0],
            "the head's mean TDQS rose while selection fell significantly (18 of 22 cases fell, \
             p = 0.0000): the definitions read better to the judge and route worse"
        );
        // The JSON report keeps its schema, and the Markdown summary shows the check.
        let written = outcome.written.expect("report written");
        let json: Value =
            serde_json::from_str(&std::fs::read_to_string(&written.json).unwrap()).unwrap();
        crate::gate::harness::assert_schema_valid(&json);
        assert_eq!(json["exitCode"], 1);
        let md = std::fs::read_to_string(&written.markdown).unwrap();
        assert!(md.contains("### Selection check (live_model)"), "{md}");
        assert!(md.contains("now goes to `handle_request`"), "{md}");
        assert!(md.contains("The mean TDQS rose while selection fell significantly"));
        // The HTML page has the section too: mode, both sides' figures with their parts, the
        // cases that fell with their captor, the test and the call-out.
        let html = std::fs::read_to_string(&written.html).unwrap();
        let section = &html[html
            .find("<div class=\"selection-check\"")
            .unwrap_or_else(|| panic!("no selection section: {html}"))..];
        assert!(section.starts_with(
            "<div class=\"selection-check\" data-mode=\"live_model\" data-blocks=\"true\">"
        ));
        assert!(section.contains(tdqs_core::eval::Mode::LiveModel.label()));
        assert!(section.contains("100% (18/18)"), "{section}");
        assert!(section.contains("0% (0/18)"), "{section}");
        assert!(section.contains("18 fell, 0 rose"), "{section}");
        assert!(section.contains("The selection check <b>blocks</b>"));
        assert_eq!(
            section
                .matches("<td><code>handle_request</code></td></tr>")
                .count(),
            18
        );
        assert!(section.contains("<tr data-case=\"s-close-not-delete\">"));
        assert!(section.contains("tdqs-rose-selection-fell"));

        // --check re-validates the saved report, the selection part included.
        let gate_opts = options(dir.path(), &server, false);
        let check_opts = gate::check::CheckOptions {
            repo: gate_opts.repo,
            base: Some(gate_opts.base),
            head: Some(gate_opts.head),
            server: gate_opts.server,
            judge: gate_opts.judge,
            decision_rule: gate_opts.decision_rule,
            tool_drop: gate_opts.tool_drop,
            max_listing_growth: None,
            settings_rev: gate_opts.settings_rev,
        };
        let rechecked =
            gate::check::run(&written.json, &check_opts, Arc::new(NoProgress), None).await;
        assert_eq!(rechecked.verdict, Verdict::Block, "{:?}", rechecked.error);
    }

    /// A pull request commits made-up answers into the working tree's eval cache (the keys are
    /// computable from public inputs): the gate must not read them. Before the fix the second
    /// run replayed the forged answers and PASSed a head whose selection fell in 18 cases.
    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn gate_ignores_a_poisoned_eval_cache_in_the_working_tree() {
        let dir = tempfile::tempdir().unwrap();
        let server = api("claude-test-model".into());
        let first = gate::run(&options(dir.path(), &server, true), Arc::new(NoProgress)).await;
        assert_eq!(first.verdict, Verdict::Block, "{:?}", first.error);
        // The forgery: every cached answer now names the case's expected tool.
        let suite =
            tdqs_gate::eval::suite::parse(&std::fs::read_to_string(cases("careful")).unwrap())
                .unwrap();
        let expected: BTreeMap<String, String> = suite
            .cases
            .iter()
            .map(|c| (c.id.clone(), c.expect.as_str().to_string()))
            .collect();
        let cache = dir.path().join("eval-cache");
        let mut forged = 0;
        for file in std::fs::read_dir(&cache).unwrap() {
            let path = file.unwrap().path();
            let mut entry: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            let tool = &expected[entry["caseId"].as_str().unwrap()];
            entry["text"] = json!(json!({"tool": tool, "arguments": {}, "confidence": 0.9,
                                         "reason": "forged"})
            .to_string());
            std::fs::write(&path, entry.to_string()).unwrap();
            forged += 1;
        }
        assert!(forged >= 22, "{forged}");
        let again = gate::run(&options(dir.path(), &server, true), Arc::new(NoProgress)).await;
        assert_eq!(again.verdict, Verdict::Block, "{:?}", again.error);
        let check = again.report.unwrap().eval.unwrap();
        assert_eq!((check.test.worse, check.test.better), (18, 0));
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn a_misconfigured_selection_check_is_invalid() {
        let dir = tempfile::tempdir().unwrap();
        let server = api("claude-test-model".into());
        let mut opts = options(dir.path(), &server, true);
        // The static judge cannot select: INVALID, not a silent synthetic run.
        if let Some(e) = opts.eval.as_mut() {
            e.options.judge.as_mut().unwrap().mode = JudgeMode::Static;
        }
        let outcome = gate::run(&opts, Arc::new(NoProgress)).await;
        assert_eq!(outcome.verdict, Verdict::Invalid);
        let error = outcome.error.unwrap();
        assert!(error.cause.contains("cannot select"), "{}", error.cause);
    }
}

// ---------------------------------------------------------------------------------------------
// eval --init.

fn init_stand_in() -> Loopback {
    Loopback::start(move |req| match (req.method.as_str(), req.path.as_str()) {
        ("POST", "/v1/chat/completions") => {
            let body: Value = serde_json::from_slice(&req.body).unwrap();
            let system = body["messages"][0]["content"].as_str().unwrap_or("");
            let user = body["messages"][1]["content"].as_str().unwrap_or("");
            let text = if system.contains("You write test cases") {
                // The linter's confusable pairs reach the drafting prompt.
                assert!(user.contains("Confusable pairs:"), "{user}");
                json!({"cases": [
                    {"id": "find-timeout", "request": "Which atlas issues talk about timeouts?", "expect": "search_issues", "kind": "positive", "sibling": ""},
                    {"id": "close-not-delete", "request": "We shipped the fix for atlas 5, wrap it up", "expect": "close_issue", "kind": "sibling", "sibling": "delete_issue"},
                    {"id": "maybe-triage", "request": "Maybe look at atlas 9?", "expect": "triage_issue", "kind": "positive", "sibling": ""},
                    {"id": "sms", "request": "Text Maria about the outage", "expect": "NO_TOOL", "kind": "abstain", "sibling": ""},
                    {"id": "invented", "request": "Merge atlas PR 3", "expect": "merge_pull_request", "kind": "positive", "sibling": ""}
                ]})
                .to_string()
            } else if system.contains("You review one test case") {
                let confidence = if user.contains("Maybe look") {
                    0.5
                } else {
                    0.9
                };
                json!({"confidence": confidence, "reason": "scripted"}).to_string()
            } else {
                panic!("unexpected question: {system}")
            };
            Response::ok(
                json!({"id": "c1", "object": "chat.completion", "model": body["model"],
                       "choices": [{"index": 0, "finish_reason": "stop",
                                    "message": {"role": "assistant", "content": text}}],
                       "usage": {"prompt_tokens": 100, "completion_tokens": 10}})
                .to_string(),
            )
            .with_header("content-type", "application/json")
        }
        ("GET", p) if p.starts_with("/v1/models") => {
            Response::ok(json!({"data": [{"id": MODEL, "object": "model"}]}).to_string())
                .with_header("content-type", "application/json")
        }
        _ => Response::status(404, "not found"),
    })
}

fn init(dir: &Path, url: &str, extra: &[&str]) -> Output {
    std::process::Command::new(GATE)
        .current_dir(dir)
        .args(["eval", "--init", "--repo"])
        .arg(dir)
        .arg("--command")
        .arg(server_command(dir, "careful"))
        .args(["--judge", "openai", "--model", MODEL, "--base-url", url])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn init_drafts_validates_and_refuses_to_overwrite() {
    let dir = tempfile::tempdir().unwrap();
    let server = init_stand_in();
    let url = server.url("");
    let out = init(dir.path(), &url, &[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(stdout.contains("wrote 4 cases"), "{stdout}");
    assert!(stdout.contains("1 exploratory"), "{stdout}");
    assert!(
        stdout.contains("`merge_pull_request` is not a tool"),
        "{stdout}"
    );
    let path = dir.path().join("tdqs-eval.toml");
    let text = std::fs::read_to_string(&path).unwrap();
    assert!(
        text.starts_with("# Drafted by `tdqs-gate eval --init`"),
        "{text}"
    );
    let suite = tdqs_gate::eval::suite::parse(&text).unwrap();
    assert_eq!(suite.cases.len(), 4);
    for c in &suite.cases {
        assert_eq!(c.provenance.as_str(), "ai_generated");
        assert_eq!(c.exploratory, c.id == "maybe-triage", "{}", c.id);
        assert!(c.confidence.is_some());
    }
    assert_eq!(suite.cases[1].sibling.as_deref(), Some("delete_issue"));
    // One draft question, then one validation question per kept case.
    assert_eq!(
        server
            .requests()
            .iter()
            .filter(|r| r.path == "/v1/chat/completions")
            .count(),
        5
    );
    // The drafted file runs; the exploratory case is shown, not scored.
    let run = json_of(
        &std::process::Command::new(GATE)
            .current_dir(dir.path())
            .args(["eval", "--mode", "synthetic", "--json", "--repo"])
            .arg(dir.path())
            .arg("--command")
            .arg(server_command(dir.path(), "careful"))
            .output()
            .unwrap(),
    );
    assert_eq!(run["metrics"]["exploratory"], 1);
    assert_eq!(run["metrics"]["allCases"]["of"], 3);

    // A second --init refuses, leaving the file as it was; --force replaces it.
    std::fs::write(&path, "# mine\n").unwrap();
    let again = init(dir.path(), &url, &[]);
    assert_eq!(again.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&again.stderr).contains("--force"));
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "# mine\n");
    let forced = init(dir.path(), &url, &["--force"]);
    assert_eq!(forced.status.code(), Some(0));
    assert!(std::fs::read_to_string(&path).unwrap().contains("[[case]]"));
}

/// A folder holding the careful suite as `tdqs-eval.toml` and two exports of the careful server
/// (the head's first description one sentence longer), and the gate over them with the static
/// judge, its report in `report/`.
pub(crate) fn eval_gate_dir(dir: &Path) -> impl Fn(&[&str]) -> Output + '_ {
    let base = gate_check::export_file(dir, "base", gate_check::careful_tools());
    let mut tools = gate_check::careful_tools();
    tools[0]["description"] = json!(format!(
        "{} Results come back newest first.",
        tools[0]["description"].as_str().unwrap()
    ));
    let head = gate_check::export_file(dir, "head", tools);
    std::fs::copy(cases("careful"), dir.join("tdqs-eval.toml")).unwrap();
    move |extra: &[&str]| {
        std::process::Command::new(GATE)
            .current_dir(dir)
            .arg("--repo")
            .arg(dir)
            .arg("--base-export")
            .arg(&base)
            .arg("--head-export")
            .arg(&head)
            .args(["--judge", "static", "--report-dir", "report", "-q"])
            .args(extra)
            .output()
            .unwrap()
    }
}

#[test]
fn eval_table_and_flag_turn_the_check_on_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let gate = eval_gate_dir(dir.path());
    let report = || -> Value {
        serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("report/tool-definition-score.json")).unwrap(),
        )
        .unwrap()
    };
    // Off by default.
    let out = gate(&[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report().get("eval").is_none());
    // --eval synthetic: the check runs and is reported, with its mode.
    let out = gate(&["--eval", "synthetic"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = report();
    assert_eq!(r["eval"]["mode"], "synthetic");
    assert_eq!(r["eval"]["blocks"], false);
    assert_eq!(r["eval"]["cases"].as_array().unwrap().len(), 22);
    crate::gate::harness::assert_schema_valid(&r);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Selection (synthetic"));
    // The [eval] table is a setting of the base revision: with export files and no
    // --settings-rev, a working tree's table (the pull request's, in CI) is not read.
    std::fs::write(
        dir.path().join("tdqs-gate.toml"),
        "[eval]\nmode = \"synthetic\"\n",
    )
    .unwrap();
    assert_eq!(gate(&[]).status.code(), Some(0));
    assert!(report().get("eval").is_none());
    // From a revision named by --settings-rev: on, and a table without a mode or a path
    // leaving the repository is INVALID before anything runs.
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(dir.path())
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q"]);
    git(&["add", "tdqs-gate.toml", "tdqs-eval.toml"]);
    git(&["commit", "-q", "-m", "settings"]);
    assert_eq!(gate(&["--settings-rev", "HEAD"]).status.code(), Some(0));
    assert_eq!(report()["eval"]["mode"], "synthetic");
    for table in [
        "[eval]\ncases = \"tdqs-eval.toml\"\n",
        "[eval]\nmode = \"synthetic\"\ncases = \"../x.toml\"\n",
    ] {
        std::fs::write(dir.path().join("tdqs-gate.toml"), table).unwrap();
        git(&["commit", "-q", "-a", "-m", "table"]);
        let out = gate(&["--settings-rev", "HEAD"]);
        assert_eq!(out.status.code(), Some(2), "{table}");
    }
}

// ---------------------------------------------------------------------------------------------
// Paths the head's tree shapes: a link there is not followed.

/// The head's case file is a link to a file outside the repository (here a one-line
/// credentials file): the gate must not read it, since a TOML error quotes the offending line.
/// The same through a linked folder named by `[eval] cases`.
#[test]
fn eval_case_file_behind_a_link_is_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    const SECRET: &str = "sk-r2-case-file-0123456789abcdef";
    std::fs::write(
        outside.path().join("credentials"),
        format!("{{\"accessToken\":\"{SECRET}\"}}\n"),
    )
    .unwrap();
    std::fs::create_dir(outside.path().join("sub")).unwrap();
    std::fs::write(
        outside.path().join("sub/cases.toml"),
        format!("token = {SECRET}\n"),
    )
    .unwrap();
    let base = gate_check::export_file(dir.path(), "base", gate_check::careful_tools());
    let mut tools = gate_check::careful_tools();
    tools[0]["description"] = json!("Changed.");
    let head = gate_check::export_file(dir.path(), "head", tools);
    let gate = || {
        std::process::Command::new(GATE)
            .current_dir(dir.path())
            .arg("--repo")
            .arg(dir.path())
            .arg("--base-export")
            .arg(&base)
            .arg("--head-export")
            .arg(&head)
            .args(["--judge", "static", "--report-dir", "report"])
            .args(["--eval", "synthetic"])
            .output()
            .unwrap()
    };
    std::os::unix::fs::symlink(
        outside.path().join("credentials"),
        dir.path().join("tdqs-eval.toml"),
    )
    .unwrap();
    std::os::unix::fs::symlink(outside.path().join("sub"), dir.path().join("sub")).unwrap();
    for table in ["", "[eval]\ncases = \"sub/cases.toml\"\n"] {
        std::fs::write(dir.path().join("tdqs-gate.toml"), table).unwrap();
        let out = gate();
        let all = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        assert_eq!(out.status.code(), Some(2), "{table}: {all}");
        assert!(!all.contains(SECRET), "{table}: {all}");
        assert!(all.contains("symbolic link"), "{table}: {all}");
        if let Ok(entries) = std::fs::read_dir(dir.path().join("report")) {
            for e in entries {
                let text = std::fs::read_to_string(e.unwrap().path()).unwrap_or_default();
                assert!(!text.contains(SECRET));
            }
        }
    }
    // A case file given on the command line is trusted: a link there is followed.
    std::fs::remove_file(dir.path().join("tdqs-gate.toml")).unwrap();
    std::fs::remove_file(dir.path().join("tdqs-eval.toml")).unwrap();
    let real = dir.path().join("real-cases.toml");
    std::fs::copy(cases("careful"), &real).unwrap();
    std::os::unix::fs::symlink(&real, dir.path().join("tdqs-eval.toml")).unwrap();
    let out = std::process::Command::new(GATE)
        .current_dir(dir.path())
        .arg("--repo")
        .arg(dir.path())
        .arg("--base-export")
        .arg(&base)
        .arg("--head-export")
        .arg(&head)
        .args(["--judge", "static", "--report-dir", "report", "-q"])
        .args(["--eval", "synthetic", "--eval-cases"])
        .arg(dir.path().join("tdqs-eval.toml"))
        .output()
        .unwrap();
    assert_ne!(
        out.status.code(),
        Some(2),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// The repository's `.tdqs` folder is a link to a folder of the user: a live eval must not
/// write its cached answers there (nor read them from there).
#[test]
fn eval_cache_behind_a_link_is_not_written_through() {
    let dir = tempfile::tempdir().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("notes.txt"), "mine").unwrap();
    std::os::unix::fs::symlink(outside.path(), dir.path().join(".tdqs")).unwrap();
    let standin = stand_in();
    let url = standin.server.url("");
    let args = [
        "--mode",
        "live-model",
        "--judge",
        "openai",
        "--model",
        MODEL,
        "--base-url",
        &url,
        "--json",
    ];
    let out = eval(dir.path(), "careful", &args);
    let err = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{err}");
    assert!(err.contains("symbolic link"), "{err}");
    let names: Vec<_> = std::fs::read_dir(outside.path())
        .unwrap()
        .map(|e| e.unwrap().file_name())
        .collect();
    assert_eq!(names, ["notes.txt"]);
    // The same folder given with --eval-cache is the user's choice: it is written.
    let cache = outside.path().join("chosen");
    let out = eval(
        dir.path(),
        "careful",
        &[&args[..], &["--eval-cache", cache.to_str().unwrap()]].concat(),
    );
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 22);
}
