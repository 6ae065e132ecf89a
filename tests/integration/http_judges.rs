//! The Anthropic and OpenAI-compatible judges against loopback servers that speak each API.
//! Nothing here reaches the internet.

use std::sync::{Arc, Mutex};
use std::time::Duration;

use serde_json::{json, Value};
use tdqs_core::spec::signals::ContextSignals;
use tdqs_gate::judge::anthropic::{
    AnthropicBatchJudge, AnthropicJudge, AnthropicOptions, BatchOptions, Thinking,
};
use tdqs_gate::judge::http::{answer_schema, ApiKey, HttpOptions, RetryPolicy, Sampling, Sleeper};
use tdqs_gate::judge::openai::{OpenAiJudge, OpenAiOptions, ResponseFormat};
use tdqs_gate::judge::{Judge, Question, QuestionKind, Subject};

use crate::http_stub::{refused_url, HttpStub, RecordedRequest, Script, StubResponse};

const MODEL: &str = "claude-opus-5-5";
const KEY: &str = "sk-ant-api03-loopback-test-key-0123456789";
const LOCAL_MODEL: &str = "qwen3:8b";
const LOCAL_KEY: &str = "local-server-key-abcdef";

/// Backoff delays the transport asked for, recorded instead of slept.
#[derive(Clone, Default)]
struct Waits(Arc<Mutex<Vec<Duration>>>);

impl Waits {
    fn sleeper(&self) -> Sleeper {
        let waits = Arc::clone(&self.0);
        Sleeper::new(move |d| {
            waits.lock().unwrap().push(d);
            Box::pin(async {})
        })
    }

    fn taken(&self) -> Vec<Duration> {
        self.0.lock().unwrap().clone()
    }
}

fn http_options(waits: &Waits, max_retries: u32) -> HttpOptions {
    HttpOptions {
        timeout: Duration::from_secs(10),
        connect_timeout: Duration::from_secs(5),
        retry: RetryPolicy {
            max_retries,
            ..RetryPolicy::default()
        },
        sleeper: waits.sleeper(),
    }
}

fn tool_question() -> Question {
    Question {
        user_template: None,
        kind: QuestionKind::Tool,
        system: "Stand-in judge instructions: rate the tool on six dimensions.".to_string(),
        user: "Tool: list_items\nDescription: \"Lists items.\"\nAnswer in JSON.".to_string(),
        subject: Subject::Tool {
            tool: json!({"name": "list_items", "description": "Lists items.", "inputSchema": {"type": "object"}}),
            siblings: vec!["get_item".to_string()].into(),
            signals: ContextSignals::default(),
        },
    }
}

fn coherence_question() -> Question {
    Question {
        user_template: None,
        kind: QuestionKind::Coherence,
        system: "Stand-in set instructions.".to_string(),
        user: "Server: demo\nTools: 2".to_string(),
        subject: Subject::Coherence {
            server_name: "demo".to_string(),
            tools: vec![],
            signals: vec![],
            candidates: vec![],
        },
    }
}

fn tool_answer_text() -> String {
    let judged = json!({"score": 4, "justification": "Names the action and the object."});
    json!({
        "scores": {
            "purpose_clarity": judged, "usage_guidelines": judged,
            "behavioral_transparency": judged, "parameter_semantics": judged,
            "conciseness_structure": judged, "contextual_completeness": judged
        },
        "annotation_contradiction": false,
        "summary": "Clear enough."
    })
    .to_string()
}

// ------------------------------------------------------------------------------------------
// Anthropic
// ------------------------------------------------------------------------------------------

fn message(model: &str, content: Value, stop_reason: &str) -> Value {
    json!({
        "id": "msg_01", "type": "message", "role": "assistant", "model": model,
        "content": content, "stop_reason": stop_reason, "stop_sequence": null,
        "usage": {"input_tokens": 1234, "output_tokens": 321,
                  "cache_creation_input_tokens": 2000, "cache_read_input_tokens": 150,
                  "service_tier": "standard"}
    })
}

fn answer_message(text: &str) -> Value {
    message(MODEL, json!([{"type": "text", "text": text}]), "end_turn")
}

fn anthropic_error(status: u16, kind: &str, text: &str) -> StubResponse {
    StubResponse::json(
        status,
        &json!({"type": "error", "error": {"type": kind, "message": text}, "request_id": "req_stub_1"}),
    )
}

fn anthropic_options(base_url: &str, waits: &Waits, max_retries: u32) -> AnthropicOptions {
    let mut options = AnthropicOptions::new(MODEL);
    options.base_url = base_url.to_string();
    options.effort = Some("high".to_string());
    options.http = http_options(waits, max_retries);
    options
}

fn anthropic(stub: &HttpStub, waits: &Waits, max_retries: u32) -> AnthropicJudge {
    AnthropicJudge::new(
        anthropic_options(&stub.url(), waits, max_retries),
        ApiKey::new(KEY).unwrap(),
    )
    .unwrap()
}

async fn messages_stub(responses: Vec<StubResponse>) -> HttpStub {
    HttpStub::start(Script::new().on("POST", "/v1/messages", responses)).await
}

#[tokio::test]
async fn anthropic_success_sends_the_pinned_request_and_counts_tokens() {
    let content = json!([
        {"type": "thinking", "thinking": "weighing the description", "signature": "sig"},
        {"type": "text", "text": "{\"scores\":"},
        {"type": "text", "text": "{}}"}
    ]);
    let stub = messages_stub(vec![StubResponse::json(
        200,
        &message(MODEL, content, "end_turn"),
    )
    .header("request-id", "req_ok")])
    .await;
    let waits = Waits::default();
    let judge = anthropic(&stub, &waits, 3);

    let reply = judge.ask(&tool_question()).await.unwrap();
    assert_eq!(
        reply.text, "{\"scores\":{}}",
        "text blocks joined, thinking ignored"
    );
    assert_eq!(reply.model.as_deref(), Some(MODEL));
    assert_eq!(reply.usage.input_tokens, 1234);
    assert_eq!(reply.usage.output_tokens, 321);
    assert_eq!(reply.usage.cache_creation_input_tokens, 2000);
    assert_eq!(reply.usage.cache_read_input_tokens, 150);

    let requests = stub.requests();
    assert_eq!(requests.len(), 1);
    let request = &requests[0];
    assert_eq!(request.method, "POST");
    assert_eq!(request.target, "/v1/messages");
    assert_eq!(request.header("x-api-key"), Some(KEY));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));
    assert_eq!(request.header("content-type"), Some("application/json"));
    assert_eq!(request.header("authorization"), None);
    let body = request.body_json();
    let question = tool_question();
    assert_eq!(body["model"], MODEL);
    assert_eq!(body["max_tokens"], 16000);
    assert_eq!(body["system"][0]["type"], "text");
    assert_eq!(body["system"][0]["text"], question.system.as_str());
    assert_eq!(
        body["system"][0]["cache_control"],
        json!({"type": "ephemeral"})
    );
    assert_eq!(
        body["messages"],
        json!([{"role": "user", "content": question.user}])
    );
    assert_eq!(body["output_config"]["effort"], "high");
    assert_eq!(body["output_config"]["format"]["type"], "json_schema");
    assert_eq!(
        body["output_config"]["format"]["schema"],
        answer_schema(QuestionKind::Tool)
    );
    assert_eq!(body["thinking"], json!({"type": "adaptive"}));
    assert_eq!(body["stream"], false);
    for field in ["temperature", "top_p", "top_k", "seed"] {
        assert!(
            body.get(field).is_none(),
            "{field} must not be sent: {body}"
        );
    }
    assert!(waits.taken().is_empty());
}

#[tokio::test]
async fn anthropic_coherence_question_asks_for_the_coherence_schema() {
    let stub = messages_stub(vec![StubResponse::json(200, &answer_message("{}"))]).await;
    let judge = anthropic(&stub, &Waits::default(), 0);
    judge.ask(&coherence_question()).await.unwrap();
    let body = stub.requests()[0].body_json();
    assert_eq!(
        body["output_config"]["format"]["schema"],
        answer_schema(QuestionKind::Coherence)
    );
}

#[tokio::test]
async fn anthropic_options_change_the_body_as_configured() {
    let stub = messages_stub(vec![StubResponse::json(200, &answer_message("{}"))]).await;
    let waits = Waits::default();
    let mut options = anthropic_options(&stub.url(), &waits, 0);
    options.effort = None;
    options.thinking = Thinking::Off;
    options.prompt_cache = false;
    options.structured_output = false;
    options.max_tokens = 2048;
    options.api_version = "2025-01-01".to_string();
    options.sampling = Sampling {
        temperature: Some(0.0),
        ..Sampling::none()
    };
    let judge = AnthropicJudge::new(options, ApiKey::new(KEY).unwrap()).unwrap();
    judge.ask(&tool_question()).await.unwrap();
    let request = &stub.requests()[0];
    assert_eq!(request.header("anthropic-version"), Some("2025-01-01"));
    let body = request.body_json();
    assert_eq!(body["system"], tool_question().system.as_str());
    assert_eq!(body["max_tokens"], 2048);
    assert_eq!(body["temperature"], 0.0);
    for field in ["output_config", "thinking", "top_p", "top_k"] {
        assert!(
            body.get(field).is_none(),
            "{field} must not be sent: {body}"
        );
    }
    let settings = judge.info().settings;
    assert_eq!(settings["sampling"]["temperature"], 0.0);
    assert_eq!(settings["thinking"], "off");
}

#[tokio::test]
async fn anthropic_plain_text_answer_passes_through_for_the_scorer_to_judge() {
    let stub = messages_stub(vec![StubResponse::json(
        200,
        &answer_message("I think this tool is quite good overall."),
    )])
    .await;
    let reply = anthropic(&stub, &Waits::default(), 0)
        .ask(&tool_question())
        .await
        .unwrap();
    assert_eq!(reply.text, "I think this tool is quite good overall.");
}

#[tokio::test]
async fn anthropic_hard_errors_fail_at_once_without_retry() {
    let cases = [
        (
            400,
            "invalid_request_error",
            "temperature is deprecated for this model",
        ),
        (401, "authentication_error", "invalid x-api-key"),
        (403, "permission_error", "this key may not use the model"),
        (404, "not_found_error", "model: claude-opus-5-5"),
        (413, "request_too_large", "request exceeds the maximum size"),
    ];
    for (status, kind, text) in cases {
        // x-should-retry: true must not revive a status that cannot succeed.
        let stub = messages_stub(vec![
            anthropic_error(status, kind, text).header("x-should-retry", "true"),
            StubResponse::json(200, &answer_message("{}")),
        ])
        .await;
        let waits = Waits::default();
        let failure = anthropic(&stub, &waits, 5)
            .ask(&tool_question())
            .await
            .unwrap_err();
        assert!(!failure.retryable, "{status}: {}", failure.message);
        assert!(
            failure.message.contains(&status.to_string()),
            "{}",
            failure.message
        );
        assert!(failure.message.contains(kind), "{}", failure.message);
        assert!(failure.message.contains(text), "{}", failure.message);
        assert!(
            failure.message.contains("req_stub_1"),
            "{}",
            failure.message
        );
        assert!(failure
            .detail
            .as_deref()
            .unwrap_or("")
            .starts_with("help: "));
        assert_eq!(stub.requests().len(), 1, "{status} must not be retried");
        assert!(waits.taken().is_empty());
    }
}

#[tokio::test]
async fn the_key_never_appears_in_a_failure_even_when_the_server_echoes_it() {
    let stub = messages_stub(vec![anthropic_error(
        401,
        "authentication_error",
        &format!("invalid x-api-key {KEY}"),
    )])
    .await;
    let failure = anthropic(&stub, &Waits::default(), 0)
        .ask(&tool_question())
        .await
        .unwrap_err();
    assert!(!failure.message.contains(KEY), "{}", failure.message);
    assert!(
        failure.message.contains("[REDACTED]"),
        "{}",
        failure.message
    );
    assert!(!failure.detail.unwrap_or_default().contains(KEY));
}

#[tokio::test]
async fn rate_limit_429_waits_as_the_server_says_then_succeeds() {
    let stub = messages_stub(vec![
        anthropic_error(429, "rate_limit_error", "slow down").header("retry-after", "2"),
        anthropic_error(429, "rate_limit_error", "slow down").header("retry-after-ms", "1250"),
        StubResponse::json(200, &answer_message("{}")),
    ])
    .await;
    let waits = Waits::default();
    let reply = anthropic(&stub, &waits, 5)
        .ask(&tool_question())
        .await
        .unwrap();
    assert_eq!(reply.text, "{}");
    assert_eq!(stub.requests().len(), 3);
    assert_eq!(
        waits.taken(),
        vec![Duration::from_secs(2), Duration::from_millis(1250)]
    );
}

#[tokio::test]
async fn an_exhausted_spend_limit_fails_at_once_with_the_servers_message() {
    let body = json!({
        "type": "error",
        "error": {"type": "rate_limit_error",
                  "message": "You have reached your specified workspace API usage limits.",
                  "details": {"error_code": "enforced_spend_limit_reached"}},
        "request_id": "req_spend"
    });
    let stub = messages_stub(vec![
        StubResponse::json(429, &body),
        StubResponse::json(200, &answer_message("{}")),
    ])
    .await;
    let waits = Waits::default();
    let failure = anthropic(&stub, &waits, 5)
        .ask(&tool_question())
        .await
        .unwrap_err();
    assert!(!failure.retryable);
    assert!(failure.message.contains("429"));
    assert!(
        failure.message.contains("usage limits"),
        "{}",
        failure.message
    );
    assert!(failure.detail.unwrap().contains("spend limit"));
    assert_eq!(stub.requests().len(), 1);
    assert!(waits.taken().is_empty());
}

#[tokio::test]
async fn server_errors_back_off_exponentially_with_jitter() {
    let stub = messages_stub(vec![
        anthropic_error(500, "api_error", "internal"),
        StubResponse::text(502, "bad gateway"),
        anthropic_error(529, "overloaded_error", "Overloaded"),
        StubResponse::json(200, &answer_message("{}")),
    ])
    .await;
    let waits = Waits::default();
    anthropic(&stub, &waits, 5)
        .ask(&tool_question())
        .await
        .unwrap();
    let taken = waits.taken();
    assert_eq!(taken.len(), 3);
    for (wait, full) in taken.iter().zip([0.5, 1.0, 2.0]) {
        let secs = wait.as_secs_f64();
        assert!(
            secs <= full && secs >= full * 0.75,
            "{secs} not in [{}, {full}]",
            full * 0.75
        );
    }
}

#[tokio::test]
async fn overloaded_529_is_survived() {
    let stub = messages_stub(vec![
        anthropic_error(529, "overloaded_error", "Overloaded"),
        StubResponse::json(200, &answer_message("{\"ok\":1}")),
    ])
    .await;
    let reply = anthropic(&stub, &Waits::default(), 2)
        .ask(&tool_question())
        .await
        .unwrap();
    assert_eq!(reply.text, "{\"ok\":1}");
    assert_eq!(stub.requests().len(), 2);
}

#[tokio::test]
async fn persistent_overload_gives_up_after_the_transport_retries() {
    let stub = messages_stub(vec![anthropic_error(529, "overloaded_error", "Overloaded")]).await;
    let waits = Waits::default();
    let failure = anthropic(&stub, &waits, 2)
        .ask(&tool_question())
        .await
        .unwrap_err();
    assert!(!failure.retryable, "transport retries are already spent");
    assert!(failure.message.contains("529"), "{}", failure.message);
    assert!(failure.message.contains("overloaded_error"));
    assert!(
        failure.message.contains("after 3 attempts"),
        "{}",
        failure.message
    );
    assert_eq!(stub.requests().len(), 3);
    assert_eq!(waits.taken().len(), 2);
}

#[tokio::test]
async fn x_should_retry_false_forbids_a_retry() {
    let stub = messages_stub(vec![
        anthropic_error(503, "api_error", "unavailable").header("x-should-retry", "false"),
        StubResponse::json(200, &answer_message("{}")),
    ])
    .await;
    let failure = anthropic(&stub, &Waits::default(), 5)
        .ask(&tool_question())
        .await
        .unwrap_err();
    assert!(!failure.retryable);
    assert!(failure.message.contains("503"));
    assert_eq!(stub.requests().len(), 1);
}

#[tokio::test]
async fn x_should_retry_true_retries_a_status_otherwise_final() {
    let stub = messages_stub(vec![
        anthropic_error(422, "invalid_request_error", "try again").header("x-should-retry", "true"),
        StubResponse::json(200, &answer_message("{}")),
    ])
    .await;
    anthropic(&stub, &Waits::default(), 5)
        .ask(&tool_question())
        .await
        .unwrap();
    assert_eq!(stub.requests().len(), 2);
}

#[tokio::test]
async fn another_model_is_refused_and_may_be_asked_again() {
    let stub = messages_stub(vec![StubResponse::json(
        200,
        &message(
            "claude-sonnet-4-6",
            json!([{"type": "text", "text": "{}"}]),
            "end_turn",
        ),
    )])
    .await;
    let failure = anthropic(&stub, &Waits::default(), 0)
        .ask(&tool_question())
        .await
        .unwrap_err();
    assert!(failure.retryable);
    assert!(
        failure.message.contains("claude-sonnet-4-6"),
        "{}",
        failure.message
    );
    assert!(failure.message.contains(MODEL), "{}", failure.message);
}

#[tokio::test]
async fn a_malformed_body_is_a_retryable_failure() {
    let stub = messages_stub(vec![
        StubResponse::text(200, "<html>gateway says hello</html>"),
        StubResponse::json(200, &json!({"type": "message", "model": MODEL})),
    ])
    .await;
    let judge = anthropic(&stub, &Waits::default(), 0);
    let failure = judge.ask(&tool_question()).await.unwrap_err();
    assert!(failure.retryable);
    assert!(failure.message.contains("not JSON"), "{}", failure.message);
    assert!(failure.detail.unwrap().contains("gateway says hello"));
    let failure = judge.ask(&tool_question()).await.unwrap_err();
    assert!(failure.retryable);
    assert!(failure.message.contains("content"), "{}", failure.message);
}

#[tokio::test]
async fn max_tokens_and_refusal_stops_are_retryable_failures() {
    let stub = messages_stub(vec![
        StubResponse::json(
            200,
            &message(
                MODEL,
                json!([{"type": "text", "text": "{\"scores\": {"}]),
                "max_tokens",
            ),
        ),
        StubResponse::json(
            200,
            &message(
                MODEL,
                json!([{"type": "text", "text": "I can't help."}]),
                "refusal",
            ),
        ),
        StubResponse::json(
            200,
            &message(
                MODEL,
                json!([{"type": "thinking", "thinking": "…"}]),
                "end_turn",
            ),
        ),
    ])
    .await;
    let judge = anthropic(&stub, &Waits::default(), 0);
    let cut = judge.ask(&tool_question()).await.unwrap_err();
    assert!(cut.retryable);
    assert!(
        cut.message.contains("max_tokens (16000)"),
        "{}",
        cut.message
    );
    let refused = judge.ask(&tool_question()).await.unwrap_err();
    assert!(refused.retryable);
    assert!(refused.message.contains("refused"), "{}", refused.message);
    let empty = judge.ask(&tool_question()).await.unwrap_err();
    assert!(empty.retryable);
    assert!(empty.message.contains("no text"), "{}", empty.message);
}

#[tokio::test]
async fn connection_errors_are_retried_then_reported() {
    let url = refused_url().await;
    let waits = Waits::default();
    let judge = AnthropicJudge::new(
        anthropic_options(&url, &waits, 2),
        ApiKey::new(KEY).unwrap(),
    )
    .unwrap();
    let failure = judge.ask(&tool_question()).await.unwrap_err();
    assert!(!failure.retryable);
    assert!(
        failure.message.contains("could not connect"),
        "{}",
        failure.message
    );
    assert!(
        failure.message.contains("after 3 attempts"),
        "{}",
        failure.message
    );
    assert!(!failure.message.contains(KEY));
    assert_eq!(waits.taken().len(), 2);
}

#[tokio::test]
async fn a_dropped_connection_and_a_timeout_are_retried() {
    let stub = messages_stub(vec![
        StubResponse::hang_up(),
        StubResponse::json(200, &answer_message("late")).delayed(Duration::from_secs(3)),
        StubResponse::json(200, &answer_message("{}")),
    ])
    .await;
    let waits = Waits::default();
    let mut options = anthropic_options(&stub.url(), &waits, 3);
    options.http.timeout = Duration::from_millis(500);
    let judge = AnthropicJudge::new(options, ApiKey::new(KEY).unwrap()).unwrap();
    let reply = judge.ask(&tool_question()).await.unwrap();
    assert_eq!(reply.text, "{}");
    assert_eq!(stub.requests().len(), 3);
    assert_eq!(waits.taken().len(), 2);
}

#[tokio::test]
async fn a_per_request_timeout_ends_a_hung_call() {
    let stub = messages_stub(vec![
        StubResponse::json(200, &answer_message("late")).delayed(Duration::from_secs(5))
    ])
    .await;
    let waits = Waits::default();
    let mut options = anthropic_options(&stub.url(), &waits, 0);
    options.http.timeout = Duration::from_millis(300);
    let judge = AnthropicJudge::new(options, ApiKey::new(KEY).unwrap()).unwrap();
    let started = std::time::Instant::now();
    let failure = judge.ask(&tool_question()).await.unwrap_err();
    assert!(started.elapsed() < Duration::from_secs(3));
    assert!(failure.message.contains("timed out"), "{}", failure.message);
}

#[tokio::test]
async fn a_claude_code_oauth_token_is_refused_up_front() {
    let token = "sk-ant-oat01-this-is-an-oauth-token-123456";
    let err = AnthropicJudge::new(
        anthropic_options("http://127.0.0.1:9", &Waits::default(), 0),
        ApiKey::new(token).unwrap(),
    )
    .unwrap_err();
    let rendered = err.render();
    assert!(!rendered.contains(token), "{rendered}");
    assert!(rendered.contains("OAuth"), "{rendered}");
    assert!(rendered.contains("--judge claude-code"), "{rendered}");
}

#[tokio::test]
async fn a_missing_key_variable_names_the_variable() {
    let var = "TDQS_GATE_TEST_SURELY_UNSET_ANTHROPIC_KEY";
    let err = AnthropicJudge::from_env(
        anthropic_options("http://127.0.0.1:9", &Waits::default(), 0),
        var,
    )
    .unwrap_err();
    assert!(err.cause.contains(var), "{}", err.cause);
    assert!(err.advice.unwrap().contains("--token-env"));
}

#[tokio::test]
async fn sampling_is_refused_where_the_api_version_forbids_it() {
    let mut options = anthropic_options("http://127.0.0.1:9", &Waits::default(), 0);
    options.api_version = "2026-10-21".to_string();
    options.sampling = Sampling {
        temperature: Some(1.0),
        ..Sampling::none()
    };
    let err = AnthropicJudge::new(options.clone(), ApiKey::new(KEY).unwrap()).unwrap_err();
    assert!(err.cause.contains("2026-10-21"), "{}", err.cause);
    // Without sampling the same version is fine.
    options.sampling = Sampling::none();
    AnthropicJudge::new(options.clone(), ApiKey::new(KEY).unwrap()).unwrap();
    options.api_version = "2023-06-01".to_string();
    options.sampling = Sampling::deterministic(1);
    let err = AnthropicJudge::new(options, ApiKey::new(KEY).unwrap()).unwrap_err();
    assert!(err.cause.contains("seed"), "{}", err.cause);
}

#[tokio::test]
async fn anthropic_settings_record_the_endpoint_without_credentials() {
    let waits = Waits::default();
    let options = anthropic_options(
        "http://gateway-user:gateway-secret-99@127.0.0.1:9/v1/?tenant=secret-tenant",
        &waits,
        0,
    );
    let judge = AnthropicJudge::new(options, ApiKey::new(KEY).unwrap()).unwrap();
    let info = judge.info();
    assert_eq!(info.mode, "anthropic");
    assert_eq!(info.model, MODEL);
    assert!(info.model_judged);
    let s = &info.settings;
    assert_eq!(s["judge"], "anthropic");
    assert_eq!(s["model"], MODEL);
    assert_eq!(s["endpoint"], "http://127.0.0.1:9/v1/messages");
    assert_eq!(s["apiVersion"], "2023-06-01");
    assert_eq!(s["effort"], "high");
    assert_eq!(s["maxTokens"], 16000);
    assert_eq!(s["thinking"], "adaptive");
    assert_eq!(s["structuredOutput"], true);
    assert_eq!(
        s["sampling"],
        json!({"temperature": null, "topP": null, "topK": null, "seed": null})
    );
    let text = s.to_string();
    for secret in ["gateway-secret-99", "gateway-user", "secret-tenant", KEY] {
        assert!(!text.contains(secret), "{secret} leaked into {text}");
    }
}

#[tokio::test]
async fn anthropic_preflight_checks_the_key_and_the_model() {
    let models = "/v1/models/claude-opus-5-5";
    let ok = HttpStub::start(Script::new().on(
        "GET",
        models,
        vec![StubResponse::json(
            200,
            &json!({"type": "model", "id": MODEL, "display_name": "Claude Opus 5.5"}),
        )],
    ))
    .await;
    let warnings = anthropic(&ok, &Waits::default(), 0)
        .preflight()
        .await
        .unwrap();
    assert!(warnings.is_empty(), "{warnings:?}");
    let request = &ok.requests()[0];
    assert_eq!(request.header("x-api-key"), Some(KEY));
    assert_eq!(request.header("anthropic-version"), Some("2023-06-01"));

    let bad_key = HttpStub::start(Script::new().on(
        "GET",
        models,
        vec![anthropic_error(
            401,
            "authentication_error",
            "invalid x-api-key",
        )],
    ))
    .await;
    let err = anthropic(&bad_key, &Waits::default(), 0)
        .preflight()
        .await
        .unwrap_err();
    assert!(err.cause.contains("401"), "{}", err.cause);
    assert!(err.advice.unwrap().contains("credentials"));

    // A gateway without the model lookup: a warning, not a failure.
    let gateway = HttpStub::start(Script::new()).await;
    let warnings = anthropic(&gateway, &Waits::default(), 0)
        .preflight()
        .await
        .unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("404"), "{warnings:?}");

    let spent = HttpStub::start(Script::new().on(
        "GET",
        models,
        vec![StubResponse::json(
            429,
            &json!({"type": "error", "error": {"type": "rate_limit_error", "message": "limit reached",
                    "details": {"error_code": "enforced_spend_limit_reached"}}}),
        )],
    ))
    .await;
    let err = anthropic(&spent, &Waits::default(), 3)
        .preflight()
        .await
        .unwrap_err();
    assert!(err.advice.unwrap().contains("spend limit"));
    assert_eq!(spent.requests().len(), 1);

    let unreachable = refused_url().await;
    let judge = AnthropicJudge::new(
        anthropic_options(&unreachable, &Waits::default(), 0),
        ApiKey::new(KEY).unwrap(),
    )
    .unwrap();
    assert!(judge.preflight().await.is_err());
}

// ------------------------------------------------------------------------------------------
// Anthropic Message Batches
// ------------------------------------------------------------------------------------------

fn user_question(user: &str) -> Question {
    Question {
        user_template: None,
        user: user.to_string(),
        ..tool_question()
    }
}

fn batch_options() -> BatchOptions {
    BatchOptions {
        collect_window: Duration::from_millis(150),
        poll_interval: Duration::from_secs(30),
        max_wait: Duration::from_secs(600),
    }
}

/// A Message Batches stand-in: it remembers the created requests and answers each with a result
/// chosen by `result_for(custom_id, user prompt)`, listing the results in reverse order (the API
/// promises no order). The status is `in_progress` for `polls_before_end` polls.
fn batch_server(
    polls_before_end: usize,
    result_for: impl Fn(&str, &str) -> Option<Value> + Send + Sync + 'static,
) -> crate::http_stub::Handler {
    let created: Arc<Mutex<Vec<(String, String)>>> = Arc::default();
    let polls = Arc::new(Mutex::new(0usize));
    Arc::new(move |request: &RecordedRequest| {
        let batch = json!({"id": "msgbatch_01", "type": "message_batch",
                           "processing_status": "in_progress", "results_url": null});
        match (request.method.as_str(), request.path()) {
            ("POST", "/v1/messages/batches") => {
                let body = request.body_json();
                let mut created = created.lock().unwrap();
                for r in body["requests"].as_array().unwrap() {
                    created.push((
                        r["custom_id"].as_str().unwrap().to_string(),
                        r["params"]["messages"][0]["content"]
                            .as_str()
                            .unwrap()
                            .to_string(),
                    ));
                }
                StubResponse::json(200, &batch)
            }
            ("GET", "/v1/messages/batches/msgbatch_01") => {
                let mut polls = polls.lock().unwrap();
                *polls += 1;
                let status = if *polls > polls_before_end {
                    "ended"
                } else {
                    "in_progress"
                };
                StubResponse::json(
                    200,
                    &json!({"id": "msgbatch_01", "processing_status": status,
                            "results_url": "https://elsewhere.invalid/results"}),
                )
            }
            ("GET", "/v1/messages/batches/msgbatch_01/results") => {
                let created = created.lock().unwrap();
                let lines: Vec<String> = created
                    .iter()
                    .rev()
                    .filter_map(|(id, user)| {
                        result_for(id, user)
                            .map(|result| json!({"custom_id": id, "result": result}).to_string())
                    })
                    .collect();
                StubResponse::text(200, &lines.join("\n"))
            }
            ("POST", "/v1/messages") => StubResponse::json(200, &answer_message("answered live")),
            _ => StubResponse::text(404, "no such route"),
        }
    })
}

fn succeeded(text: &str) -> Value {
    json!({"type": "succeeded", "message": answer_message(text)})
}

#[tokio::test]
async fn a_batch_is_created_polled_and_read_back_by_custom_id() {
    let handler = batch_server(1, |_, user| match user {
        "one" => Some(succeeded("answer to one")),
        "two" => Some(json!({"type": "errored", "error": {"type": "error",
                  "error": {"type": "overloaded_error", "message": "Overloaded"}}})),
        "three" => Some(json!({"type": "expired"})),
        "four" => Some(json!({"type": "succeeded", "message": message(
            "claude-haiku-4-5", json!([{"type": "text", "text": "{}"}]), "end_turn")})),
        "five" => Some(json!({"type": "errored", "error": {"type": "error",
                  "error": {"type": "invalid_request_error", "message": "bad params"}}})),
        _ => None,
    });
    let stub = HttpStub::with_handler(handler).await;
    let waits = Waits::default();
    let judge = anthropic(&stub, &waits, 0);
    let questions: Vec<Question> = ["one", "two", "three", "four", "five", "six"]
        .into_iter()
        .map(user_question)
        .collect();
    let results = judge.run_batch(&questions, &batch_options()).await.unwrap();
    assert_eq!(results.len(), 6);
    let reply = results[0].as_ref().unwrap();
    assert_eq!(reply.text, "answer to one");
    assert_eq!(reply.usage.input_tokens, 1234);
    let failure = |i: usize| results[i].as_ref().unwrap_err().clone();
    assert!(failure(1).retryable && failure(1).message.contains("overloaded_error"));
    assert!(failure(2).retryable && failure(2).message.contains("expired"));
    assert!(failure(3).retryable && failure(3).message.contains("claude-haiku-4-5"));
    assert!(!failure(4).retryable && failure(4).message.contains("bad params"));
    assert!(failure(5).retryable && failure(5).message.contains("no result"));

    let create = &stub.requests_to("/v1/messages/batches")[0];
    assert_eq!(create.header("x-api-key"), Some(KEY));
    let requests = create.body_json()["requests"].as_array().unwrap().clone();
    assert_eq!(requests.len(), 6);
    for (i, (request, question)) in requests.iter().zip(&questions).enumerate() {
        assert_eq!(request["custom_id"], format!("q{i:06}"));
        let mut expected = judge.request_body(question);
        expected.as_object_mut().unwrap().remove("stream");
        assert_eq!(request["params"], expected);
    }
    // Created in progress, polled twice (in progress, ended), each poll after the interval.
    assert_eq!(
        stub.requests_to("/v1/messages/batches/msgbatch_01").len(),
        2
    );
    assert_eq!(waits.taken(), vec![Duration::from_secs(30); 2]);
    // The results come from our endpoint, never from the results_url the server named.
    let results_requests = stub.requests_to("/v1/messages/batches/msgbatch_01/results");
    assert_eq!(results_requests.len(), 1);
    assert_eq!(results_requests[0].header("x-api-key"), Some(KEY));
}

#[tokio::test]
async fn the_batch_judge_collects_concurrent_questions_into_one_batch() {
    let handler = batch_server(0, |_, user| Some(succeeded(&format!("answer to {user}"))));
    let stub = HttpStub::with_handler(handler).await;
    let waits = Waits::default();
    let judge = AnthropicBatchJudge::new(anthropic(&stub, &waits, 0), batch_options());
    let (a, b, c) = (
        user_question("alpha"),
        user_question("beta"),
        user_question("gamma"),
    );
    let (ra, rb, rc) = tokio::join!(judge.ask(&a), judge.ask(&b), judge.ask(&c));
    assert_eq!(ra.unwrap().text, "answer to alpha");
    assert_eq!(rb.unwrap().text, "answer to beta");
    assert_eq!(rc.unwrap().text, "answer to gamma");
    assert_eq!(stub.requests_to("/v1/messages/batches").len(), 1);
    let created = stub.requests_to("/v1/messages/batches")[0].body_json();
    assert_eq!(created["requests"].as_array().unwrap().len(), 3);
    assert!(stub.requests_to("/v1/messages").is_empty());

    // Asked again (the scorer retrying an invalid answer): straight to the Messages API.
    let again = judge.ask(&a).await.unwrap();
    assert_eq!(again.text, "answered live");
    assert_eq!(stub.requests_to("/v1/messages").len(), 1);
    assert_eq!(judge.info(), judge.inner().info());
}

#[tokio::test]
async fn a_batch_that_never_ends_is_cancelled_and_a_refused_batch_fails_every_question() {
    let handler = batch_server(usize::MAX, |_, _| None);
    let stub = HttpStub::with_handler(handler).await;
    let waits = Waits::default();
    let judge = anthropic(&stub, &waits, 0);
    let options = BatchOptions {
        max_wait: Duration::from_secs(90),
        ..batch_options()
    };
    let failure = judge
        .run_batch(&[user_question("x")], &options)
        .await
        .unwrap_err();
    assert!(!failure.retryable);
    assert!(
        failure.message.contains("had not ended"),
        "{}",
        failure.message
    );
    assert_eq!(waits.taken().len(), 3);
    assert_eq!(
        stub.requests_to("/v1/messages/batches/msgbatch_01/cancel")
            .len(),
        1
    );

    let refused = HttpStub::start(Script::new().on(
        "POST",
        "/v1/messages/batches",
        vec![anthropic_error(
            401,
            "authentication_error",
            "invalid x-api-key",
        )],
    ))
    .await;
    let judge =
        AnthropicBatchJudge::new(anthropic(&refused, &Waits::default(), 0), batch_options());
    let (q1, q2) = (user_question("one"), user_question("two"));
    let (r1, r2) = tokio::join!(judge.ask(&q1), judge.ask(&q2));
    for r in [r1, r2] {
        let f = r.unwrap_err();
        assert!(!f.retryable);
        assert!(f.message.contains("401"), "{}", f.message);
    }
    assert_eq!(refused.requests().len(), 1);
}

// ------------------------------------------------------------------------------------------
// OpenAI-compatible
// ------------------------------------------------------------------------------------------

fn completion(model: &str, content: Value, finish_reason: &str) -> Value {
    json!({
        "id": "chatcmpl-1", "object": "chat.completion", "created": 1_764_000_000, "model": model,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": content},
                     "finish_reason": finish_reason}],
        "usage": {"prompt_tokens": 900, "completion_tokens": 210, "total_tokens": 1110,
                  "prompt_tokens_details": {"cached_tokens": 100}}
    })
}

fn openai_options(base_url: &str, waits: &Waits, max_retries: u32) -> OpenAiOptions {
    let mut options = OpenAiOptions::new(base_url, LOCAL_MODEL);
    options.http = http_options(waits, max_retries);
    options
}

async fn chat_stub(responses: Vec<StubResponse>) -> HttpStub {
    HttpStub::start(Script::new().on("POST", "/v1/chat/completions", responses)).await
}

#[tokio::test]
async fn openai_success_sends_greedy_sampling_a_seed_and_the_schema() {
    let stub = chat_stub(vec![StubResponse::json(
        200,
        &completion(LOCAL_MODEL, json!(tool_answer_text()), "stop"),
    )])
    .await;
    let judge = OpenAiJudge::new(
        openai_options(&format!("{}/v1", stub.url()), &Waits::default(), 0),
        Some(ApiKey::new(LOCAL_KEY).unwrap()),
    )
    .unwrap();
    let reply = judge.ask(&tool_question()).await.unwrap();
    assert_eq!(reply.text, tool_answer_text());
    assert_eq!(reply.model.as_deref(), Some(LOCAL_MODEL));
    assert_eq!(reply.usage.input_tokens, 800);
    assert_eq!(reply.usage.cache_read_input_tokens, 100);
    assert_eq!(reply.usage.output_tokens, 210);

    let request = &stub.requests()[0];
    assert_eq!(request.target, "/v1/chat/completions");
    assert_eq!(
        request.header("authorization"),
        Some(format!("Bearer {LOCAL_KEY}").as_str())
    );
    let body = request.body_json();
    let question = tool_question();
    assert_eq!(body["model"], LOCAL_MODEL);
    assert_eq!(
        body["messages"],
        json!([
            {"role": "system", "content": question.system},
            {"role": "user", "content": question.user}
        ])
    );
    assert_eq!(body["temperature"], 0.0);
    assert_eq!(body["seed"], 42);
    assert_eq!(body["max_tokens"], 8192);
    assert_eq!(body["stream"], false);
    assert_eq!(
        body["response_format"],
        json!({"type": "json_schema", "json_schema": {
            "name": "tdqs_tool_answer",
            "schema": answer_schema(QuestionKind::Tool),
            "strict": true
        }})
    );
}

#[tokio::test]
async fn openai_without_a_key_sends_no_authorization_and_other_formats_work() {
    let stub = chat_stub(vec![StubResponse::json(
        200,
        &completion(LOCAL_MODEL, json!([{"type": "text", "text": "{}"}]), "stop"),
    )])
    .await;
    let waits = Waits::default();
    let mut options = openai_options(&stub.url(), &waits, 0);
    options.response_format = ResponseFormat::JsonObject;
    options.max_tokens = None;
    let judge = OpenAiJudge::new(options, None).unwrap();
    let reply = judge.ask(&coherence_question()).await.unwrap();
    assert_eq!(reply.text, "{}", "content parts are joined");
    let request = &stub.requests()[0];
    assert_eq!(request.header("authorization"), None);
    let body = request.body_json();
    assert_eq!(body["response_format"], json!({"type": "json_object"}));
    assert!(body.get("max_tokens").is_none());
}

#[tokio::test]
async fn openai_preflight_records_the_listing_and_warns_that_the_pin_is_unprovable() {
    let listing = json!({"object": "list", "data": [
        {"id": "other:1b", "object": "model", "created": 1, "owned_by": "library"},
        {"id": LOCAL_MODEL, "object": "model", "created": 1_764_000_123, "owned_by": "library",
         "meta": {"n_params": 8_000_000_000u64}}
    ]});
    let stub = HttpStub::start(
        Script::new()
            .on("GET", "/v1/models", vec![StubResponse::json(200, &listing)])
            .on(
                "POST",
                "/v1/chat/completions",
                vec![StubResponse::json(
                    200,
                    &completion(LOCAL_MODEL, json!("{}"), "stop"),
                )],
            ),
    )
    .await;
    let judge = OpenAiJudge::new(
        openai_options(&stub.url(), &Waits::default(), 0),
        Some(ApiKey::new(LOCAL_KEY).unwrap()),
    )
    .unwrap();
    assert_eq!(judge.info().settings["servedModels"], Value::Null);
    let warnings = judge.preflight().await.unwrap();
    assert_eq!(warnings.len(), 1, "{warnings:?}");
    assert!(warnings[0].contains("cannot prove"), "{warnings:?}");
    assert_eq!(
        stub.requests_to("/v1/models")[0].header("authorization"),
        Some(format!("Bearer {LOCAL_KEY}").as_str())
    );
    let settings = judge.info().settings;
    assert_eq!(settings["judge"], "openai");
    assert_eq!(
        settings["endpoint"],
        format!("{}/v1/chat/completions", stub.url())
    );
    assert_eq!(settings["servedModels"], json!(["other:1b", LOCAL_MODEL]));
    assert_eq!(
        settings["servedModel"],
        json!({"id": LOCAL_MODEL, "object": "model", "owned_by": "library",
               "meta": {"n_params": 8_000_000_000u64}})
    );
    assert_eq!(
        settings["sampling"],
        json!({"temperature": 0.0, "topP": null, "topK": null, "seed": 42})
    );
    assert_eq!(settings["responseFormat"], "json_schema");
    assert!(!settings.to_string().contains(LOCAL_KEY));
}

#[tokio::test]
async fn openai_preflight_warns_about_an_unlisted_model_and_a_missing_listing() {
    let listing = json!({"object": "list", "data": [{"id": "llama-3-8b", "object": "model"}]});
    let stub = HttpStub::start(Script::new().on(
        "GET",
        "/v1/models",
        vec![StubResponse::json(200, &listing)],
    ))
    .await;
    let judge = OpenAiJudge::new(openai_options(&stub.url(), &Waits::default(), 0), None).unwrap();
    let warnings = judge.preflight().await.unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("does not list") && w.contains("llama-3-8b")),
        "{warnings:?}"
    );
    assert_eq!(judge.info().settings["servedModel"], Value::Null);

    let bare = HttpStub::start(Script::new()).await;
    let judge = OpenAiJudge::new(openai_options(&bare.url(), &Waits::default(), 0), None).unwrap();
    let warnings = judge.preflight().await.unwrap();
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("listing is unavailable")),
        "{warnings:?}"
    );

    let locked = HttpStub::start(Script::new().on(
        "GET",
        "/v1/models",
        vec![StubResponse::json(
            401,
            &json!({"error": {"message": "Incorrect API key provided", "type": "invalid_request_error", "code": "invalid_api_key"}}),
        )],
    ))
    .await;
    let judge = OpenAiJudge::new(
        openai_options(&locked.url(), &Waits::default(), 0),
        Some(ApiKey::new(LOCAL_KEY).unwrap()),
    )
    .unwrap();
    let err = judge.preflight().await.unwrap_err();
    assert!(err.cause.contains("Incorrect API key"), "{}", err.cause);
}

#[tokio::test]
async fn openai_wrong_model_length_stop_and_refusal_are_retryable() {
    let refusal = json!({
        "id": "x", "model": LOCAL_MODEL,
        "choices": [{"index": 0, "message": {"role": "assistant", "content": null,
                     "refusal": "I cannot rate this."}, "finish_reason": "stop"}]
    });
    let stub = chat_stub(vec![
        StubResponse::json(200, &completion("gpt-4o-2024-08-06", json!("{}"), "stop")),
        StubResponse::json(
            200,
            &completion(LOCAL_MODEL, json!("{\"scores\":"), "length"),
        ),
        StubResponse::json(200, &refusal),
        StubResponse::json(200, &json!({"model": LOCAL_MODEL, "choices": []})),
    ])
    .await;
    let judge = OpenAiJudge::new(openai_options(&stub.url(), &Waits::default(), 0), None).unwrap();
    let wrong = judge.ask(&tool_question()).await.unwrap_err();
    assert!(wrong.retryable);
    assert!(
        wrong.message.contains("gpt-4o-2024-08-06"),
        "{}",
        wrong.message
    );
    let cut = judge.ask(&tool_question()).await.unwrap_err();
    assert!(cut.retryable);
    assert!(cut.message.contains("max_tokens (8192)"), "{}", cut.message);
    let refused = judge.ask(&tool_question()).await.unwrap_err();
    assert!(refused.retryable);
    assert_eq!(refused.detail.as_deref(), Some("I cannot rate this."));
    let empty = judge.ask(&tool_question()).await.unwrap_err();
    assert!(empty.retryable);
    assert!(empty.message.contains("no choices"), "{}", empty.message);
}

#[tokio::test]
async fn openai_errors_map_like_anthropic_ones() {
    let not_found = json!({"error": {"message": "model \"qwen3:8b\" not found, try pulling it first",
                                     "type": "api_error", "param": null, "code": null}});
    let stub = chat_stub(vec![StubResponse::json(404, &not_found)]).await;
    let waits = Waits::default();
    let failure = OpenAiJudge::new(openai_options(&stub.url(), &waits, 4), None)
        .unwrap()
        .ask(&tool_question())
        .await
        .unwrap_err();
    assert!(!failure.retryable);
    assert!(
        failure.message.contains("try pulling it first"),
        "{}",
        failure.message
    );
    assert_eq!(stub.requests().len(), 1);

    let stub = chat_stub(vec![
        StubResponse::json(503, &json!({"error": "server busy"})),
        StubResponse::json(429, &json!({"error": {"message": "rate"}})).header("retry-after", "1"),
        StubResponse::json(
            200,
            &completion(LOCAL_MODEL, json!("plain words, no JSON"), "stop"),
        ),
    ])
    .await;
    let waits = Waits::default();
    let reply = OpenAiJudge::new(openai_options(&stub.url(), &waits, 4), None)
        .unwrap()
        .ask(&tool_question())
        .await
        .unwrap();
    assert_eq!(reply.text, "plain words, no JSON");
    assert_eq!(waits.taken().len(), 2);
    assert_eq!(waits.taken()[1], Duration::from_secs(1));
}

#[tokio::test]
async fn openai_malformed_body_and_secret_in_error_body() {
    let stub = chat_stub(vec![
        StubResponse::text(200, "{\"truncated\": "),
        StubResponse::text(400, &format!("bad key {LOCAL_KEY} in request")),
    ])
    .await;
    let judge = OpenAiJudge::new(
        openai_options(&stub.url(), &Waits::default(), 0),
        Some(ApiKey::new(LOCAL_KEY).unwrap()),
    )
    .unwrap();
    let malformed = judge.ask(&tool_question()).await.unwrap_err();
    assert!(malformed.retryable);
    assert!(
        malformed.message.contains("not JSON"),
        "{}",
        malformed.message
    );
    let bad = judge.ask(&tool_question()).await.unwrap_err();
    assert!(!bad.retryable);
    assert!(!bad.message.contains(LOCAL_KEY), "{}", bad.message);
    assert!(bad.message.contains("[REDACTED]"), "{}", bad.message);
}

#[tokio::test]
async fn openai_refuses_a_missing_key_variable_and_bad_settings() {
    let var = "TDQS_GATE_TEST_SURELY_UNSET_OPENAI_KEY";
    let err = OpenAiJudge::from_env(
        openai_options("http://127.0.0.1:9", &Waits::default(), 0),
        Some(var),
    )
    .unwrap_err();
    assert!(err.cause.contains(var), "{}", err.cause);
    // No variable named: no key needed.
    OpenAiJudge::from_env(
        openai_options("http://127.0.0.1:9", &Waits::default(), 0),
        None,
    )
    .unwrap();
    let mut options = openai_options("http://127.0.0.1:9", &Waits::default(), 0);
    options.sampling.temperature = Some(3.0);
    assert!(OpenAiJudge::new(options, None).is_err());
    let options = openai_options("ftp://127.0.0.1:9", &Waits::default(), 0);
    assert!(OpenAiJudge::new(options, None).is_err());
}

#[tokio::test]
async fn absurd_retry_after_headers_neither_panic_nor_stall() {
    let absurd = [
        ("retry-after-ms", "1e300"),
        ("retry-after", "1e30"),
        ("retry-after", "-7"),
        ("retry-after-ms", "NaN"),
        ("retry-after", "Sun, 06 Nov 99999999999 08:49:37 GMT"),
    ];
    let mut responses: Vec<StubResponse> = absurd
        .iter()
        .map(|(name, value)| {
            anthropic_error(429, "rate_limit_error", "slow down").header(name, value)
        })
        .collect();
    responses.push(StubResponse::json(200, &answer_message("{}")));
    let stub = messages_stub(responses).await;
    let waits = Waits::default();
    let reply = anthropic(&stub, &waits, 5)
        .ask(&tool_question())
        .await
        .unwrap();
    assert_eq!(reply.text, "{}");
    let taken = waits.taken();
    assert_eq!(taken.len(), absurd.len());
    // Each wait is the computed backoff (capped at 8 s), never the header's value.
    assert!(
        taken.iter().all(|d| *d <= Duration::from_secs(8)),
        "{taken:?}"
    );

    let mut responses: Vec<StubResponse> = absurd
        .iter()
        .map(|(name, value)| {
            StubResponse::json(429, &json!({"error": {"message": "rate"}})).header(name, value)
        })
        .collect();
    responses.push(StubResponse::json(
        200,
        &completion(LOCAL_MODEL, json!("fine"), "stop"),
    ));
    let stub = chat_stub(responses).await;
    let waits = Waits::default();
    let reply = OpenAiJudge::new(openai_options(&stub.url(), &waits, 5), None)
        .unwrap()
        .ask(&tool_question())
        .await
        .unwrap();
    assert_eq!(reply.text, "fine");
    assert!(
        waits.taken().iter().all(|d| *d <= Duration::from_secs(8)),
        "{:?}",
        waits.taken()
    );
}
