//! The Anthropic Message Batches judge: a batch created, polled and read back by custom id,
//! concurrent questions collected into one batch, and batches that never end or are refused.

use super::*;

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
