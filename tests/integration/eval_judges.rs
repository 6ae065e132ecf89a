//! `live_model` selection through the two judges the OpenAI-compatible tests do not reach — the
//! Claude Code CLI (the fake `claude`, answering selection questions by a scripted rule) and the
//! Anthropic Messages API (a loopback stand-in). Each judge has a correct run, with the same
//! figures as the OpenAI-compatible run of the same scripted rule, and a misconfigured one that
//! fails loudly: exit 2, no figures, no fallback to `synthetic`, nothing cached, no secret in the
//! output.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::process::Output;
use std::sync::{Arc, Mutex};

use serde_json::{json, Value};

use crate::eval::{cases, json_of, ratio, scripted_answer, server_command, GATE};
use crate::loopback::{Loopback, Response};

/// The pinned judge model (the built-in pins), which both judges ask.
const PINNED_MODEL: &str = "claude-opus-5-5";
const OAUTH_TOKEN: &str = "sk-ant-oat01-issue16-selection-token-0123456789";
const API_KEY: &str = "sk-ant-api03-issue16-selection-key-0123456789";

/// The careful suite's request → expected tool.
fn expected() -> BTreeMap<String, String> {
    let suite =
        tdqs_gate::eval::suite::parse(&std::fs::read_to_string(cases("careful")).unwrap()).unwrap();
    suite
        .cases
        .iter()
        .map(|c| (c.request.clone(), c.expect.as_str().to_string()))
        .collect()
}

/// `tdqs-gate eval` over the careful server in live mode, with `env` set and the usual key
/// variables removed.
fn live_eval(dir: &Path, args: &[&str], env: &[(&str, &str)]) -> Output {
    let mut cmd = std::process::Command::new(GATE);
    cmd.current_dir(dir)
        .args(["eval", "--mode", "live-model", "--repo"])
        .arg(dir)
        .arg("--cases")
        .arg(cases("careful"))
        .arg("--command")
        .arg(server_command(dir, "careful"))
        .arg("--eval-cache")
        .arg(dir.join("eval-cache"))
        .args(args)
        .env_remove("OPENAI_API_KEY")
        .env_remove("ANTHROPIC_API_KEY")
        .env_remove("CLAUDE_CODE_OAUTH_TOKEN");
    for (k, v) in env {
        cmd.env(k, v);
    }
    cmd.output().unwrap()
}

/// The scripted rule's figures (the same as through the OpenAI-compatible stand-in).
fn assert_scripted_figures(run: &Value, selector: &str) {
    assert_eq!(run["mode"], "live_model");
    assert_eq!(run["selector"], selector);
    assert_eq!(run["model"], PINNED_MODEL);
    assert_eq!(ratio(run, "selection"), (17, 18));
    assert_eq!(ratio(run, "positives"), (10, 10));
    assert_eq!(ratio(run, "siblings"), (7, 8));
    assert_eq!(ratio(run, "abstention"), (4, 4));
    assert_eq!(ratio(run, "argumentValidity"), (16, 18));
    let captures = run["metrics"]["captures"].as_array().unwrap();
    assert_eq!(captures.len(), 1, "{captures:?}");
    assert_eq!(captures[0]["captor"], "update_issue");
    assert_eq!(captures[0]["meantFor"], "triage_issue");
    assert_eq!(run["calls"], 22);
    assert_eq!(run["cached"], 0);
}

/// A failed live run: exit 2, nothing on stdout (no figures, no synthetic fallback), the error
/// on stderr naming `needle`, no secret anywhere, nothing cached.
fn assert_fails_loudly(dir: &Path, out: &Output, needle: &str, secret: &str) {
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(
        out.status.code(),
        Some(2),
        "stdout {stdout}\nstderr {stderr}"
    );
    assert!(out.stdout.is_empty(), "figures printed: {stdout}");
    assert!(stderr.contains("INVALID"), "{stderr}");
    assert!(stderr.contains(needle), "{stderr}");
    assert!(
        !stderr.contains("synthetic:"),
        "a synthetic fallback: {stderr}"
    );
    assert!(!stderr.contains(secret), "the secret leaked: {stderr}");
    let cached = std::fs::read_dir(dir.join("eval-cache"))
        .map(|d| d.count())
        .unwrap_or(0);
    assert_eq!(cached, 0, "answers cached from a failed run");
}

// ---------------------------------------------------------------------------------------------
// Claude Code (the fake `claude`).

/// A folder holding the fake CLI as `claude` and its control file.
fn fake_claude(control: Value) -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("fake-claude-")
        .tempdir()
        .unwrap();
    let program = dir.path().join("claude");
    std::fs::copy(env!("CARGO_BIN_EXE_fake-claude"), &program).unwrap();
    std::fs::write(
        dir.path().join("fake-claude.json"),
        serde_json::to_vec(&control).unwrap(),
    )
    .unwrap();
    (dir, program)
}

fn fake_log(dir: &Path) -> Vec<Value> {
    std::fs::read_to_string(dir.join("fake-claude.log"))
        .unwrap_or_default()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

/// The scripted rule as the fake's `select` list.
fn select_rules() -> Value {
    let expected = expected();
    Value::Array(
        expected
            .keys()
            .map(|request| {
                let answer = scripted_answer(request, &expected);
                json!({"request": request, "tool": answer["tool"], "arguments": answer["arguments"]})
            })
            .collect(),
    )
}

#[test]
fn live_model_selects_through_the_claude_code_judge() {
    let dir = tempfile::tempdir().unwrap();
    let (cli, program) = fake_claude(json!({"select": select_rules()}));
    let program_s = program.to_str().unwrap();
    let args = [
        "--judge",
        "claude-code",
        "--claude",
        program_s,
        "--token-env",
        "TDQS_I16_TOKEN",
        "--json",
    ];
    let out = live_eval(dir.path(), &args, &[("TDQS_I16_TOKEN", OAUTH_TOKEN)]);
    let run = json_of(&out);
    assert_scripted_figures(&run, "claude-code");
    assert!(!String::from_utf8_lossy(&out.stdout).contains(OAUTH_TOKEN));
    assert!(!String::from_utf8_lossy(&out.stderr).contains(OAUTH_TOKEN));
    // Every selection went through the CLI, as a selection question, asking the pinned model,
    // with the definitions exactly as exported in the prompt.
    let calls: Vec<Value> = fake_log(cli.path())
        .into_iter()
        .filter(|r| r["kind"] == "call")
        .collect();
    assert_eq!(calls.len(), 22);
    let tools: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(
            Path::new(env!("CARGO_MANIFEST_DIR")).join("../examples/issue-tracker/careful.json"),
        )
        .unwrap(),
    )
    .unwrap();
    let shown = serde_json::to_string_pretty(&Value::Array(tools)).unwrap();
    for call in &calls {
        assert_eq!(call["question"], "selection", "{call}");
        let argv = call["argv"].to_string();
        assert!(argv.contains(PINNED_MODEL), "{argv}");
        assert!(call["stdin"].as_str().unwrap().contains(&shown));
    }
    assert_eq!(
        std::fs::read_dir(dir.path().join("eval-cache"))
            .unwrap()
            .count(),
        22
    );
    // Replayed offline: the CLI is not run again, the figures are the same.
    let before = fake_log(cli.path()).len();
    let replay = json_of(&live_eval(
        dir.path(),
        &[
            "--judge",
            "claude-code",
            "--claude",
            "/nonexistent/claude",
            "--offline",
            "--json",
        ],
        &[],
    ));
    assert_eq!(replay["cached"], 22);
    assert_eq!(replay["metrics"], run["metrics"]);
    assert_eq!(fake_log(cli.path()).len(), before);
}

#[test]
fn misconfigured_claude_code_selection_fails_loudly() {
    // A rejected token (the fake echoes it, like a careless gateway): exit 2, token masked.
    let dir = tempfile::tempdir().unwrap();
    let (_cli, program) = fake_claude(json!({"calls": ["error:401"], "select": select_rules()}));
    let out = live_eval(
        dir.path(),
        &[
            "--judge",
            "claude-code",
            "--claude",
            program.to_str().unwrap(),
            "--token-env",
            "TDQS_I16_TOKEN",
            "--json",
        ],
        &[("TDQS_I16_TOKEN", OAUTH_TOKEN)],
    );
    assert_fails_loudly(dir.path(), &out, "401", OAUTH_TOKEN);

    // Not logged in, and no token: stopped before any question.
    let dir = tempfile::tempdir().unwrap();
    let (cli, program) = fake_claude(json!({"logged_in": false, "select": select_rules()}));
    let out = live_eval(
        dir.path(),
        &[
            "--judge",
            "claude-code",
            "--claude",
            program.to_str().unwrap(),
        ],
        &[],
    );
    assert_fails_loudly(dir.path(), &out, "log", OAUTH_TOKEN);
    assert!(
        fake_log(cli.path()).iter().all(|r| r["kind"] != "call"),
        "a question was asked"
    );

    // No CLI at the given path.
    let dir = tempfile::tempdir().unwrap();
    let out = live_eval(
        dir.path(),
        &["--judge", "claude-code", "--claude", "/nonexistent/claude"],
        &[],
    );
    assert_fails_loudly(dir.path(), &out, "/nonexistent/claude", OAUTH_TOKEN);
}

// ---------------------------------------------------------------------------------------------
// The Anthropic Messages API (a loopback stand-in).

struct MessagesStandIn {
    server: Loopback,
    bodies: Arc<Mutex<Vec<Value>>>,
}

/// Answers `GET /v1/models/{pinned}` and `POST /v1/messages` by the scripted rule; with
/// `reject`, answers 401 to both, echoing the key it was sent.
fn messages_stand_in(reject: bool) -> MessagesStandIn {
    let expected = expected();
    let bodies = Arc::new(Mutex::new(Vec::new()));
    let seen = bodies.clone();
    let server = Loopback::start(move |req| {
        let path = req.path.split('?').next().unwrap_or("");
        if reject {
            let key = req.header("x-api-key").unwrap_or("").to_string();
            return Response::status(
                401,
                json!({"type": "error", "error": {"type": "authentication_error",
                        "message": format!("invalid x-api-key {key}")}})
                .to_string(),
            )
            .with_header("content-type", "application/json");
        }
        match (req.method.as_str(), path) {
            ("GET", p) if p == format!("/v1/models/{PINNED_MODEL}") => Response::ok(
                json!({"type": "model", "id": PINNED_MODEL, "display_name": "stand-in"})
                    .to_string(),
            )
            .with_header("content-type", "application/json"),
            ("POST", "/v1/messages") => {
                let body: Value = serde_json::from_slice(&req.body).unwrap();
                seen.lock().unwrap().push(body.clone());
                let user = body["messages"][0]["content"].as_str().unwrap_or("");
                let request = user
                    .split("User request:\n")
                    .nth(1)
                    .unwrap_or("")
                    .trim_end()
                    .to_string();
                let text = scripted_answer(&request, &expected).to_string();
                Response::ok(
                    json!({"id": "msg_01", "type": "message", "role": "assistant",
                           "model": body["model"],
                           "content": [{"type": "text", "text": text}],
                           "stop_reason": "end_turn", "stop_sequence": null,
                           "usage": {"input_tokens": 900, "output_tokens": 30}})
                    .to_string(),
                )
                .with_header("content-type", "application/json")
            }
            _ => Response::status(404, "not found"),
        }
    });
    MessagesStandIn { server, bodies }
}

#[test]
fn live_model_selects_through_the_anthropic_messages_api() {
    let dir = tempfile::tempdir().unwrap();
    let standin = messages_stand_in(false);
    let url = standin.server.url("");
    let out = live_eval(
        dir.path(),
        &[
            "--judge",
            "anthropic",
            "--base-url",
            &url,
            "--token-env",
            "TDQS_I16_KEY",
            "--json",
        ],
        &[("TDQS_I16_KEY", API_KEY)],
    );
    let run = json_of(&out);
    assert_scripted_figures(&run, "anthropic");
    assert_eq!(run["usage"]["inputTokens"], 22 * 900);
    assert_eq!(run["usage"]["outputTokens"], 22 * 30);
    assert!(!String::from_utf8_lossy(&out.stdout).contains(API_KEY));
    let bodies = standin.bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 22);
    for body in &bodies {
        assert_eq!(body["model"], PINNED_MODEL);
        let system = match &body["system"] {
            Value::String(s) => s.clone(),
            other => other[0]["text"].as_str().unwrap_or("").to_string(),
        };
        assert!(system.contains("tool-selection step"), "{body}");
        // A selection's arguments are open: no structured-output schema is requested.
        assert!(body["output_config"].get("format").is_none(), "{body}");
    }
    for req in standin.server.requests() {
        if req.path.starts_with("/v1/messages") {
            assert_eq!(req.header("x-api-key"), Some(API_KEY));
        }
    }
}

#[test]
fn misconfigured_anthropic_selection_fails_loudly() {
    // A rejected key, echoed back by the endpoint: exit 2 at the preflight, the key masked.
    let dir = tempfile::tempdir().unwrap();
    let standin = messages_stand_in(true);
    let url = standin.server.url("");
    let out = live_eval(
        dir.path(),
        &[
            "--judge",
            "anthropic",
            "--base-url",
            &url,
            "--token-env",
            "TDQS_I16_KEY",
            "--json",
        ],
        &[("TDQS_I16_KEY", API_KEY)],
    );
    assert_fails_loudly(dir.path(), &out, "401", API_KEY);
    assert!(standin.bodies.lock().unwrap().is_empty());

    // --model does not apply: the Anthropic judge asks the pinned model.
    let dir = tempfile::tempdir().unwrap();
    let out = live_eval(
        dir.path(),
        &[
            "--judge",
            "anthropic",
            "--base-url",
            &url,
            "--model",
            "another-model",
            "--token-env",
            "TDQS_I16_KEY",
        ],
        &[("TDQS_I16_KEY", API_KEY)],
    );
    assert_fails_loudly(dir.path(), &out, "--model", API_KEY);
}

// ---------------------------------------------------------------------------------------------
// The `eval --json` document: versioned, its keys as docs/eval.md lists them.

fn keys(value: &Value) -> std::collections::BTreeSet<String> {
    value
        .as_object()
        .unwrap_or_else(|| panic!("not an object: {value}"))
        .keys()
        .cloned()
        .collect()
}

fn set(names: &[&str]) -> std::collections::BTreeSet<String> {
    names.iter().map(|s| s.to_string()).collect()
}

#[test]
fn eval_json_keys_are_those_of_schema_version_2() {
    let docs =
        std::fs::read_to_string(Path::new(env!("CARGO_MANIFEST_DIR")).join("../docs/eval.md"))
            .unwrap();
    let section = &docs[docs
        .find("## The JSON output (`--json`)")
        .expect("docs/eval.md documents the JSON output")..];
    let section = &section[..section[3..].find("\n## ").unwrap_or(section.len())];
    let documented = |name: &str| {
        assert!(
            section.contains(&format!("`{name}`")),
            "docs/eval.md does not document `{name}`"
        )
    };

    // A live run (arguments checked) through the Anthropic stand-in, and a synthetic one.
    let dir = tempfile::tempdir().unwrap();
    let standin = messages_stand_in(false);
    let url = standin.server.url("");
    let live = json_of(&live_eval(
        dir.path(),
        &[
            "--judge",
            "anthropic",
            "--base-url",
            &url,
            "--token-env",
            "TDQS_I16_KEY",
            "--json",
        ],
        &[("TDQS_I16_KEY", API_KEY)],
    ));
    let synthetic = {
        let out = std::process::Command::new(GATE)
            .current_dir(dir.path())
            .args(["eval", "--mode", "synthetic", "--json", "--repo"])
            .arg(dir.path())
            .arg("--cases")
            .arg(cases("careful"))
            .arg("--command")
            .arg(server_command(dir.path(), "careful"))
            .output()
            .unwrap();
        json_of(&out)
    };
    let top = set(&[
        "schemaVersion",
        "mode",
        "modeLabel",
        "selector",
        "model",
        "serverName",
        "serverVersion",
        "toolCount",
        "toolSetDigest",
        "suiteDigest",
        "cases",
        "metrics",
        "calls",
        "cached",
        "usage",
        "latencyMs",
        "health",
        "composite",
    ]);
    for (what, run) in [("live", &live), ("synthetic", &synthetic)] {
        assert_eq!(run["schemaVersion"], 2, "{what}");
        // serverName and serverVersion are optional; everything else is always there.
        let got = keys(run);
        let mut required = top.clone();
        required.remove("serverName");
        required.remove("serverVersion");
        assert!(
            got.is_subset(&top),
            "{what}: unknown keys {:?}",
            got.difference(&top)
        );
        assert!(
            required.is_subset(&got),
            "{what}: missing {:?}",
            required.difference(&got)
        );
        assert_eq!(
            keys(&run["metrics"]),
            set(&[
                "selection",
                "positives",
                "siblings",
                "abstention",
                "allCases",
                "argumentValidity",
                "perTool",
                "captures",
                "exploratory"
            ]),
            "{what}"
        );
        for ratio in ["selection", "allCases", "argumentValidity"] {
            assert_eq!(keys(&run["metrics"][ratio]), set(&["hit", "of"]));
        }
        let tool = &run["metrics"]["perTool"][0];
        assert_eq!(keys(tool), set(&["tool", "hit", "wentInstead"]), "{what}");
        assert_eq!(
            keys(&run["usage"]),
            set(&[
                "inputTokens",
                "outputTokens",
                "cacheCreationInputTokens",
                "cacheReadInputTokens"
            ])
        );
        assert_eq!(
            keys(&run["health"]),
            set(&[
                "lintErrors",
                "lintWarnings",
                "lintScore",
                "selectionScore",
                "selectionHit",
                "selectionOf",
                "health"
            ])
        );
        assert_eq!(keys(&run["composite"]), set(&["parts", "total"]));
        assert_eq!(run["composite"]["parts"].as_array().unwrap().len(), 6);
        let case_required = set(&[
            "id",
            "kind",
            "provenance",
            "expected",
            "exploratory",
            "selected",
            "correct",
            "confidence",
            "reason",
        ]);
        let case_all = {
            let mut s = case_required.clone();
            s.extend(set(&["argumentsValid", "argumentErrors"]));
            s
        };
        for case in run["cases"].as_array().unwrap() {
            let got = keys(case);
            assert!(case_required.is_subset(&got), "{what}: {case}");
            assert!(got.is_subset(&case_all), "{what}: {case}");
        }
    }
    // Argument checks appear in live mode only.
    let with_args = |run: &Value| {
        run["cases"]
            .as_array()
            .unwrap()
            .iter()
            .filter(|c| c.get("argumentsValid").is_some())
            .count()
    };
    assert_eq!(with_args(&live), 18);
    assert_eq!(with_args(&synthetic), 0);
    let capture = &live["metrics"]["captures"][0];
    assert_eq!(keys(capture), set(&["captor", "meantFor", "count", "of"]));
    // Every key checked here is in the documented table.
    let mut all = top.clone();
    for name in [
        "selection",
        "positives",
        "siblings",
        "abstention",
        "allCases",
        "argumentValidity",
        "perTool",
        "captures",
        "exploratory",
        "tool",
        "hit",
        "wentInstead",
        "captor",
        "meantFor",
        "count",
        "of",
        "inputTokens",
        "outputTokens",
        "cacheCreationInputTokens",
        "cacheReadInputTokens",
        "lintErrors",
        "lintWarnings",
        "lintScore",
        "selectionScore",
        "selectionHit",
        "selectionOf",
        "health",
        "parts",
        "total",
        "id",
        "kind",
        "provenance",
        "expected",
        "selected",
        "correct",
        "confidence",
        "reason",
        "argumentsValid",
        "argumentErrors",
    ] {
        all.insert(name.to_string());
    }
    for name in &all {
        documented(name);
    }
}
