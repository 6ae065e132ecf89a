//! The selecting model's answer: one JSON object naming a tool or `NO_TOOL`, the arguments it
//! would send, its confidence and a reason.
//!
//! The format is closed like the TDQS answers: a missing or unexpected key, a confidence outside
//! 0–1 or arguments that are not an object are refusals naming the key. A tool name the server
//! does not list is *not* a refusal: it is a (wrong) selection, and the metrics count it so.

use serde::{Deserialize, Serialize};
use serde_json::{json, Map, Value};

use super::case::Choice;
use crate::judge::answer::{describe, parse_object};

/// The keys of an answer, in the order the prompt lists them.
pub const KEYS: [&str; 4] = ["tool", "arguments", "confidence", "reason"];

/// One parsed selection.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct SelectionAnswer {
    pub tool: Choice,
    /// The arguments the model would call the tool with (empty for `NO_TOOL`).
    pub arguments: Map<String, Value>,
    /// 0–1.
    pub confidence: f64,
    pub reason: String,
}

/// Parses and validates an answer text (bare JSON or one fenced block).
pub fn parse_selection_answer(text: &str) -> Result<SelectionAnswer, String> {
    let root = parse_object(text)?;
    let extra: Vec<&str> = root
        .keys()
        .map(String::as_str)
        .filter(|k| !KEYS.contains(k))
        .collect();
    if !extra.is_empty() {
        return Err(format!(
            "the answer has unexpected keys: {}",
            extra.join(", ")
        ));
    }
    let tool = match root.get("tool") {
        Some(Value::String(s)) if !s.trim().is_empty() => Choice::parse(s.trim()),
        Some(other) => {
            return Err(format!(
                "`tool` must be a tool name or \"NO_TOOL\", got {}",
                describe(other)
            ))
        }
        None => return Err("`tool` is missing".to_string()),
    };
    let arguments = match root.get("arguments") {
        Some(Value::Object(map)) => map.clone(),
        // A model declining to call anything may send null for the arguments.
        Some(Value::Null) | None if tool == Choice::NoTool => Map::new(),
        Some(other) => {
            return Err(format!(
                "`arguments` must be an object, got {}",
                describe(other)
            ))
        }
        None => return Err("`arguments` is missing".to_string()),
    };
    let confidence = confidence_of(&root)?;
    let reason = match root.get("reason") {
        Some(Value::String(s)) => s.clone(),
        Some(other) => {
            return Err(format!(
                "`reason` must be a string, got {}",
                describe(other)
            ))
        }
        None => return Err("`reason` is missing".to_string()),
    };
    Ok(SelectionAnswer {
        tool,
        arguments,
        confidence,
        reason,
    })
}

/// The JSON schema of an answer, for structured output. `arguments` is left open (each tool has
/// its own schema), so a judge must not send it with a strict mode that demands closed objects.
pub fn selection_answer_schema() -> Value {
    json!({
        "type": "object",
        "properties": {
            "tool": {"type": "string"},
            "arguments": {"type": "object"},
            "confidence": {"type": "number"},
            "reason": {"type": "string"}
        },
        "required": KEYS,
        "additionalProperties": false
    })
}

/// An answer's `confidence`: a number from 0 to 1 (selection and validation answers alike).
pub(crate) fn confidence_of(root: &Map<String, Value>) -> Result<f64, String> {
    match root.get("confidence") {
        Some(Value::Number(n)) => match n.as_f64() {
            Some(c) if (0.0..=1.0).contains(&c) => Ok(c),
            _ => Err(format!("`confidence` must be from 0 to 1, got {n}")),
        },
        Some(other) => Err(format!(
            "`confidence` must be a number from 0 to 1, got {}",
            describe(other)
        )),
        None => Err("`confidence` is missing".to_string()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn answer_parses_tool_and_no_tool() {
        let a = parse_selection_answer(
            "```json\n{\"tool\":\"search_users\",\"arguments\":{\"email\":\"a@b.c\"},\"confidence\":0.9,\"reason\":\"email lookup\"}\n```",
        )
        .unwrap();
        assert_eq!(a.tool, Choice::Tool("search_users".into()));
        assert_eq!(a.arguments["email"], json!("a@b.c"));
        let none = parse_selection_answer(
            r#"{"tool":"NO_TOOL","arguments":null,"confidence":1,"reason":"no SMS tool"}"#,
        )
        .unwrap();
        assert_eq!(none.tool, Choice::NoTool);
        assert!(none.arguments.is_empty());
    }

    #[test]
    fn answer_refusals_name_the_key() {
        let cases = [
            (
                r#"{"tool":"a","arguments":{},"confidence":1.5,"reason":""}"#,
                "confidence",
            ),
            (
                r#"{"tool":"a","arguments":[],"confidence":1,"reason":""}"#,
                "arguments",
            ),
            (
                r#"{"tool":"a","arguments":{},"confidence":1,"reason":"","x":1}"#,
                "unexpected keys: x",
            ),
            (
                r#"{"arguments":{},"confidence":1,"reason":""}"#,
                "`tool` is missing",
            ),
            (
                r#"{"tool":"a","confidence":1,"reason":""}"#,
                "`arguments` is missing",
            ),
            (
                r#"{"tool":"","arguments":{},"confidence":1,"reason":""}"#,
                "`tool` must be",
            ),
            ("search_users", "not valid JSON"),
        ];
        for (text, needle) in cases {
            let err = parse_selection_answer(text).unwrap_err();
            assert!(err.contains(needle), "{text}: {err}");
        }
    }
}
