//! The OpenAI-compatible judge: greedy sampling with a seed and the schema, keyless local
//! servers, the model listing preflight, retryable answers and error mapping.

use super::*;

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
