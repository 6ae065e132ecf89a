//! The Anthropic and OpenAI-compatible judges against loopback servers that speak each API.
//! Nothing here reaches the internet.
//!
//! The request builders and stand-in answers are in this file; the tests sit in one submodule per
//! API they check.

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

mod anthropic;
mod batches;
mod openai;
mod retry_after;

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
