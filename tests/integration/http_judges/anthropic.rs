//! The Anthropic Messages judge: the pinned request, options, errors and retries, keys that
//! never leak, and the preflight.

use super::*;

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
