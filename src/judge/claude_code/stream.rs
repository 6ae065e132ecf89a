//! Reading a `claude -p --output-format stream-json` run: its events, the error results, and the
//! check that the pinned model answered.

use super::*;

/// The lines of a stream-json run that matter to the model check.
#[derive(Debug, Default)]
pub(super) struct StreamEvents {
    pub(super) results: Vec<Map<String, Value>>,
    /// `message.model` of every top-level assistant message, with its text for messages.
    pub(super) assistant: Vec<(String, String)>,
    pub(super) refusal_fallback: bool,
}

pub(super) fn parse_stream(stdout: &str) -> Result<StreamEvents, String> {
    let mut events = StreamEvents::default();
    let mut lines = 0usize;
    for (index, line) in stdout.lines().enumerate() {
        let line = line.trim();
        if line.is_empty() {
            continue;
        }
        lines += 1;
        let Ok(Value::Object(event)) = serde_json::from_str::<Value>(line) else {
            return Err(format!(
                "line {} is not a JSON object: {}",
                index + 1,
                quote(line)
            ));
        };
        match event.get("type").and_then(Value::as_str) {
            Some("result") => events.results.push(event),
            Some("assistant") => {
                // Messages of sub-agents carry their parent's tool id; the judge has no tools, so
                // any such message is already suspicious, but only the top level is the answer.
                let top_level = event.get("parent_tool_use_id").is_none_or(Value::is_null);
                if top_level {
                    let message = event.get("message");
                    let model = message
                        .and_then(|m| m.get("model"))
                        .and_then(Value::as_str)
                        .unwrap_or("")
                        .to_string();
                    let text = message
                        .and_then(|m| m.get("content"))
                        .and_then(Value::as_array)
                        .map(|blocks| {
                            blocks
                                .iter()
                                .filter_map(|b| b.get("text").and_then(Value::as_str))
                                .collect::<Vec<_>>()
                                .join("")
                        })
                        .unwrap_or_default();
                    events.assistant.push((model, text));
                }
            }
            Some("system") => {
                if event.get("subtype").and_then(Value::as_str) == Some("model_refusal_fallback") {
                    events.refusal_fallback = true;
                }
            }
            Some(_) => {}
            None => return Err(format!("line {} has no `type`: {}", index + 1, quote(line))),
        }
    }
    if lines == 0 {
        return Err("it is empty".to_string());
    }
    Ok(events)
}

pub(super) fn describe_error_result(result: &Map<String, Value>, finished: &Finished) -> String {
    let status = match result.get("api_error_status") {
        Some(Value::Number(n)) => format!(", HTTP status {n}"),
        _ => String::new(),
    };
    let subtype = result
        .get("subtype")
        .and_then(Value::as_str)
        .unwrap_or("unknown");
    let mut text = result
        .get("result")
        .and_then(Value::as_str)
        .unwrap_or("")
        .to_string();
    if let Some(errors) = result.get("errors").and_then(Value::as_array) {
        let joined: Vec<&str> = errors.iter().filter_map(Value::as_str).collect();
        if !joined.is_empty() {
            if !text.is_empty() {
                text.push_str("; ");
            }
            text.push_str(&joined.join("; "));
        }
    }
    if text.is_empty() {
        text = "(no message)".to_string();
    }
    format!(
        "Claude Code reported an error (result {subtype}{status}, {}): {}",
        finished.outcome(),
        shorten(&text)
    )
}

pub(super) fn check_events(events: &StreamEvents, pinned: &str) -> Result<Reply, CallFailure> {
    let result = match events.results.as_slice() {
        [one] => one,
        [] => {
            return Err(CallFailure::retryable(
                "Claude Code's stream has no result line",
            ))
        }
        many => {
            return Err(CallFailure::retryable(format!(
                "Claude Code's stream has {} result lines; exactly one is expected",
                many.len()
            )))
        }
    };
    let subtype = result.get("subtype").and_then(Value::as_str).unwrap_or("");
    if subtype != "success" {
        return Err(CallFailure::retryable(format!(
            "Claude Code's result has subtype `{subtype}`, not `success`"
        )));
    }
    if events.refusal_fallback {
        return Err(CallFailure::retryable(
            "Claude Code fell back to another model after a refusal (model_refusal_fallback)",
        ));
    }
    if events.assistant.is_empty() {
        return Err(CallFailure::retryable(
            "Claude Code's stream has no assistant message, so the answering model is unknown",
        ));
    }
    for (model, text) in &events.assistant {
        if model == "<synthetic>" {
            return Err(CallFailure::retryable(format!(
                "the answer was made up by Claude Code itself (model `<synthetic>`), not by `{pinned}`: {}",
                shorten(text)
            )));
        }
        if model != pinned {
            let shown = if model.is_empty() { "(none)" } else { model };
            return Err(CallFailure::retryable(format!(
                "the answer came from model `{shown}`, not the pinned `{pinned}`; answers from any other model are refused"
            )));
        }
    }
    let usage_keys: BTreeSet<&str> = match result.get("modelUsage") {
        Some(Value::Object(map)) => map.keys().map(String::as_str).collect(),
        _ => BTreeSet::new(),
    };
    if usage_keys != BTreeSet::from([pinned]) {
        let keys: Vec<&str> = usage_keys.into_iter().collect();
        return Err(CallFailure::retryable(format!(
            "Claude Code's modelUsage names [{}], not exactly the pinned `{pinned}`",
            keys.join(", ")
        )));
    }
    let usage = result.get("usage");
    if let Some(iterations) = usage
        .and_then(|u| u.get("iterations"))
        .and_then(Value::as_array)
    {
        if iterations
            .iter()
            .any(|i| i.get("type").and_then(Value::as_str) == Some("fallback_message"))
        {
            return Err(CallFailure::retryable(
                "Claude Code's usage shows a fallback message from another model",
            ));
        }
    }
    let Some(text) = result.get("result").and_then(Value::as_str) else {
        return Err(CallFailure::retryable(
            "Claude Code's result line has no `result` text",
        ));
    };
    let count = |key: &str| {
        usage
            .and_then(|u| u.get(key))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    Ok(Reply {
        text: text.to_string(),
        model: Some(pinned.to_string()),
        usage: TokenUsage {
            input_tokens: count("input_tokens"),
            output_tokens: count("output_tokens"),
            cache_read_input_tokens: count("cache_read_input_tokens"),
            cache_creation_input_tokens: count("cache_creation_input_tokens"),
        },
    })
}
