//! Retry-After headers of any shape (huge, negative, not a number, a date far away) neither panic
//! nor stall the transport.

use super::*;

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
