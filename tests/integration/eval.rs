//! `tdqs-gate eval`: the careful and the careless issue-tracker servers (one API
//! written twice, examples/issue-tracker/) ranked in `synthetic` mode, `live_model` through a
//! loopback OpenAI-compatible stand-in that selects by a scripted rule, replay from the cache
//! with no network, argument validation, thresholds and budgets, and misconfigured live runs
//! failing loudly. No test reaches the network.
//!
//! The tests sit in one submodule per feature they check; this file holds the runner, the
//! fixtures and the scripted selection rule they share (the rule and a few helpers are also used
//! by `eval_judges` and `html_report`).

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::loopback::{refused_url, Loopback, Response};

mod gate_check;
mod init;
mod links;
mod live_model;
mod synthetic;

pub(crate) use gate_check::eval_gate_dir;

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
