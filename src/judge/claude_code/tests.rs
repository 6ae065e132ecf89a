use super::*;
use crate::judge::{QuestionKind, Subject};
use tdqs_core::spec::signals::ContextSignals;

const PINNED: &str = "claude-opus-5-5";

#[test]
fn batch_wrappers_are_recognised_by_extension() {
    for path in [
        "C:\\npm\\claude.cmd",
        "C:\\npm\\claude.CMD",
        "/x/claude.bat",
        "claude.Bat",
    ] {
        assert!(is_batch_wrapper(Path::new(path)), "{path}");
    }
    for path in [
        "C:\\npm\\claude.exe",
        "/usr/bin/claude",
        "claude.cmd.exe",
        "cmd",
        "/x/bat/claude",
    ] {
        assert!(!is_batch_wrapper(Path::new(path)), "{path}");
    }
}

#[test]
fn base_url_credentials_are_stripped_for_reports() {
    assert_eq!(
        strip_userinfo("https://user:s3cret-pass@gw.example:8443/anthropic"),
        "https://gw.example:8443/anthropic"
    );
    assert_eq!(
        strip_userinfo("http://127.0.0.1:9000"),
        "http://127.0.0.1:9000"
    );
    assert_eq!(
        strip_userinfo("http://127.0.0.1:9000/p?x=a@b"),
        "http://127.0.0.1:9000/p?x=a@b"
    );
    assert!(check_base_url("ftp://x").is_err());
    assert!(check_base_url("https://").is_err());
    assert!(check_base_url("http://127.0.0.1:1/").is_ok());
    check_base_url("https://user:pw-abcdefgh@gw.example").unwrap();
    assert_eq!(
        redact::redact("to https://user:pw-abcdefgh@gw.example"),
        "to https://[REDACTED]@gw.example"
    );
}

#[test]
fn configuration_mistakes_are_refused_before_anything_runs() {
    let mut config = ClaudeCodeConfig::new(PINNED, "2.1.288");
    config.program = Some(PathBuf::from("/nonexistent/claude"));
    config.effort = "extreme".into();
    let err = ClaudeCodeJudge::new(config.clone()).unwrap_err();
    assert!(
        err.cause.contains("`extreme` is not an effort level"),
        "{}",
        err.cause
    );
    config.effort = DEFAULT_EFFORT.into();
    config.base_url = Some("localhost:8080".into());
    let err = ClaudeCodeJudge::new(config.clone()).unwrap_err();
    assert!(
        err.cause.contains("not an http:// or https:// URL"),
        "{}",
        err.cause
    );
    config.base_url = None;
    config.model = " ".into();
    assert!(ClaudeCodeJudge::new(config)
        .unwrap_err()
        .cause
        .contains("model is empty"));
}

#[test]
fn version_mismatch_is_a_warning_naming_both_versions() {
    assert_eq!(version_warning("2.1.288", "2.1.288"), None);
    let warning = version_warning("2.1.332", "2.1.288").unwrap();
    assert!(
        warning.contains("2.1.332") && warning.contains("2.1.288"),
        "{warning}"
    );
}

fn question(system: &str, user: &str) -> Question {
    Question {
        user_template: None,
        kind: QuestionKind::Tool,
        system: system.into(),
        user: user.into(),
        subject: Subject::Tool {
            tool: json!({"name": "t"}),
            siblings: Vec::<String>::new().into(),
            signals: ContextSignals::default(),
        },
    }
}

#[test]
fn prompts_that_the_cli_would_mishandle_are_refused_without_retry() {
    assert!(check_prompts(&question("sys", "Tool: x")).is_ok());
    for (system, user, expected) in [
        ("", "Tool: x", "without a system prompt"),
        ("sys", " \n", "empty user prompt"),
        ("sys", "/context", "slash command"),
        ("sys", "\n  /compact please", "slash command"),
    ] {
        let failure = check_prompts(&question(system, user)).unwrap_err();
        assert!(!failure.retryable);
        assert!(failure.message.contains(expected), "{}", failure.message);
    }
}

fn finished(stdout: &str, code: i32) -> Finished {
    #[cfg(unix)]
    let status = {
        use std::os::unix::process::ExitStatusExt;
        ExitStatus::from_raw(code << 8)
    };
    #[cfg(windows)]
    let status = {
        use std::os::windows::process::ExitStatusExt;
        ExitStatus::from_raw(code as u32)
    };
    Finished {
        status: Some(status),
        stdout: stdout.as_bytes().to_vec(),
        stdout_overflow: false,
        stderr_tail: Vec::new(),
        timed_out: false,
    }
}

fn assistant(model: &str, text: &str, parent: Value) -> String {
    json!({"type": "assistant", "message": {"model": model, "role": "assistant",
        "content": [{"type": "text", "text": text}]}, "parent_tool_use_id": parent})
    .to_string()
}

fn result(is_error: bool, text: &str, usage_model: Option<&str>, status: Value) -> String {
    let mut model_usage = Map::new();
    if let Some(m) = usage_model {
        model_usage.insert(m.into(), json!({"inputTokens": 10}));
    }
    json!({"type": "result", "subtype": "success", "is_error": is_error, "result": text,
        "api_error_status": status, "modelUsage": model_usage,
        "usage": {"input_tokens": 120, "output_tokens": 30, "cache_read_input_tokens": 7,
                  "cache_creation_input_tokens": 2, "iterations": []}})
    .to_string()
}

fn stream(lines: &[String]) -> String {
    let mut out = String::new();
    out.push_str(r#"{"type":"system","subtype":"ui_invalidate"}"#);
    out.push('\n');
    out.push_str(r#"{"type":"system","subtype":"init","model":"claude-opus-5-5"}"#);
    out.push('\n');
    for line in lines {
        out.push_str(line);
        out.push('\n');
    }
    out
}

fn evaluate(stdout: &str, code: i32) -> Result<Reply, CallFailure> {
    evaluate_call(&finished(stdout, code), PINNED, Duration::from_secs(180))
}

#[test]
fn a_clean_stream_gives_the_result_text_and_usage() {
    let out = stream(&[
        assistant(PINNED, "{\"a\":1}", Value::Null),
        r#"{"type":"rate_limit_event","rate_limit_info":{"status":"allowed"}}"#.into(),
        result(false, "{\"a\":1}", Some(PINNED), Value::Null),
        r#"{"type":"system","subtype":"session_end"}"#.into(),
    ]);
    let reply = evaluate(&out, 0).unwrap();
    assert_eq!(reply.text, "{\"a\":1}");
    assert_eq!(reply.model.as_deref(), Some(PINNED));
    assert_eq!(
        reply.usage,
        TokenUsage {
            input_tokens: 120,
            output_tokens: 30,
            cache_read_input_tokens: 7,
            cache_creation_input_tokens: 2
        }
    );
}

#[test]
fn sub_agent_messages_do_not_count_as_the_answer_model() {
    let out = stream(&[
        assistant("claude-haiku-4-5", "x", json!("toolu_1")),
        assistant(PINNED, "ok", Value::Null),
        result(false, "ok", Some(PINNED), Value::Null),
    ]);
    assert_eq!(evaluate(&out, 0).unwrap().text, "ok");
}

#[test]
fn refusals_name_what_is_wrong() {
    let ok_result = result(false, "ok", Some(PINNED), Value::Null);
    let cases: Vec<(String, i32, &str)> = vec![
        (
            stream(&[
                assistant("claude-sonnet-4-6", "ok", Value::Null),
                ok_result.clone(),
            ]),
            0,
            "the answer came from model `claude-sonnet-4-6`, not the pinned `claude-opus-5-5`",
        ),
        (
            stream(&[assistant("<synthetic>", "No response requested.", Value::Null), ok_result.clone()]),
            0,
            "model `<synthetic>`",
        ),
        (
            stream(&[
                assistant(PINNED, "ok", Value::Null),
                assistant("claude-sonnet-4-6", "more", Value::Null),
                ok_result.clone(),
            ]),
            0,
            "not the pinned",
        ),
        (stream(std::slice::from_ref(&ok_result)), 0, "no assistant message"),
        (
            stream(&[assistant(PINNED, "ok", Value::Null)]),
            0,
            "no result line",
        ),
        (
            stream(&[
                assistant(PINNED, "ok", Value::Null),
                ok_result.clone(),
                ok_result.clone(),
            ]),
            0,
            "2 result lines",
        ),
        (
            stream(&[
                r#"{"type":"system","subtype":"model_refusal_fallback"}"#.into(),
                assistant(PINNED, "ok", Value::Null),
                ok_result.clone(),
            ]),
            0,
            "model_refusal_fallback",
        ),
        (
            stream(&[
                assistant(PINNED, "ok", Value::Null),
                result(false, "ok", Some("claude-sonnet-4-6"), Value::Null),
            ]),
            0,
            "modelUsage names [claude-sonnet-4-6]",
        ),
        (
            stream(&[
                assistant(PINNED, "ok", Value::Null),
                result(false, "ok", None, Value::Null),
            ]),
            0,
            "modelUsage names []",
        ),
        (
            stream(&[
                assistant("<synthetic>", "API Error: 529 overloaded", Value::Null),
                result(true, "API Error: 529 overloaded", None, json!(529)),
            ]),
            1,
            "Claude Code reported an error (result success, HTTP status 529, exit code 1): API Error: 529 overloaded",
        ),
        (
            stream(&[result(true, "Not logged in · Please run /login", None, Value::Null)]),
            1,
            "(result success, exit code 1): Not logged in",
        ),
        (
            "Error: When using --print, --output-format=stream-json requires --verbose\n"
                .into(),
            1,
            "Claude Code failed (exit code 1); line 1 is not a JSON object",
        ),
        (
            stream(&[assistant(PINNED, "ok", Value::Null), ok_result.clone()]),
            3,
            "Claude Code failed (exit code 3)",
        ),
        (
            "{\"score\": 4}".into(),
            0,
            "line 1 has no `type`",
        ),
        ("".into(), 0, "not its stream-json stream: it is empty"),
        (
            "plain text answer\n".into(),
            0,
            "not its stream-json stream: line 1 is not a JSON object: \"plain text answer\"",
        ),
    ];
    for (stdout, code, expected) in cases {
        let failure = evaluate(&stdout, code).expect_err(&stdout);
        assert!(failure.retryable, "{}", failure.message);
        assert!(
            failure.message.contains(expected),
            "stdout:\n{stdout}\n  got:      {}\n  expected: {expected}",
            failure.message
        );
    }
}

#[test]
fn error_subtypes_and_fallback_iterations_are_refused() {
    let mut bad_subtype: Map<String, Value> =
        serde_json::from_str(&result(false, "ok", Some(PINNED), Value::Null)).unwrap();
    bad_subtype.insert("subtype".into(), json!("error_max_turns"));
    let out = stream(&[
        assistant(PINNED, "ok", Value::Null),
        Value::Object(bad_subtype).to_string(),
    ]);
    assert!(evaluate(&out, 0)
        .unwrap_err()
        .message
        .contains("subtype `error_max_turns`"));

    let mut fallback: Map<String, Value> =
        serde_json::from_str(&result(false, "ok", Some(PINNED), Value::Null)).unwrap();
    fallback["usage"]["iterations"] = json!([{"type": "fallback_message"}]);
    let out = stream(&[
        assistant(PINNED, "ok", Value::Null),
        Value::Object(fallback).to_string(),
    ]);
    assert!(evaluate(&out, 0)
        .unwrap_err()
        .message
        .contains("fallback message"));
}

#[test]
fn timeouts_and_oversized_output_are_refused() {
    let mut f = finished("", 0);
    f.timed_out = true;
    let failure = evaluate_call(&f, PINNED, Duration::from_secs(7)).unwrap_err();
    assert!(
        failure.message.contains("within 7 s"),
        "{}",
        failure.message
    );
    let mut f = finished("", 0);
    f.stdout_overflow = true;
    assert!(evaluate_call(&f, PINNED, Duration::from_secs(7))
        .unwrap_err()
        .message
        .contains("more than 32 MiB"));
}

#[test]
fn program_resolution_searches_path_and_explains_a_miss() {
    let dir = tempfile::tempdir().unwrap();
    let err = resolve_program(None, Some(dir.path().as_os_str())).unwrap_err();
    assert!(err.cause.contains("`claude` was not found on PATH"));
    assert!(err.advice.unwrap().contains("npm ci"));
    let err = resolve_program(Some(&dir.path().join("nope")), None).unwrap_err();
    assert!(err.cause.contains("not found or is not executable"));
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        let exe = dir.path().join("claude");
        std::fs::write(&exe, "#!/bin/sh\n").unwrap();
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o644)).unwrap();
        assert!(resolve_program(None, Some(dir.path().as_os_str())).is_err());
        std::fs::set_permissions(&exe, std::fs::Permissions::from_mode(0o755)).unwrap();
        let path = std::env::join_paths([Path::new("/nonexistent"), dir.path()]).unwrap();
        assert_eq!(resolve_program(None, Some(&path)).unwrap(), exe);
        assert_eq!(resolve_program(Some(&exe), None).unwrap(), exe);
    }
}

#[test]
fn token_debug_output_hides_the_value() {
    let token = OauthToken::new("JUDGE_TOKEN", "sk-ant-oat01-debug-check-value");
    let shown = format!("{token:?}");
    assert!(!shown.contains("debug-check-value"), "{shown}");
    assert!(shown.contains("JUDGE_TOKEN"));
}
