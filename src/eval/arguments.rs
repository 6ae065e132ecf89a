//! Argument validity: the arguments a selecting model generates, checked against the selected
//! tool's `inputSchema` with a JSON Schema validator (required keys, `additionalProperties:
//! false`, types, enums, and everything else the schema says).
//!
//! The validator resolves no remote reference (`jsonschema` without default features): a schema
//! pointing outside itself cannot be checked and says so, rather than fetching anything.

use serde_json::{Map, Value};

/// The outcome of one check.
#[derive(Debug, Clone, PartialEq)]
pub enum ArgumentCheck {
    Valid,
    /// The validator's messages, each with the path of the offending value.
    Invalid(Vec<String>),
    /// The schema itself could not be compiled; nothing was decided.
    Unchecked(String),
}

/// At most this many messages are kept per check.
const MAX_MESSAGES: usize = 8;

/// Checks `arguments` against `tool`'s `inputSchema` (a tool without one accepts any object).
pub fn check(tool: &Value, arguments: &Map<String, Value>) -> ArgumentCheck {
    let Some(schema) = tool.get("inputSchema") else {
        return ArgumentCheck::Valid;
    };
    let validator = match jsonschema::validator_for(schema) {
        Ok(v) => v,
        Err(e) => {
            return ArgumentCheck::Unchecked(format!("the inputSchema does not compile: {e}"))
        }
    };
    let instance = Value::Object(arguments.clone());
    let messages: Vec<String> = validator
        .iter_errors(&instance)
        .take(MAX_MESSAGES)
        .map(|e| {
            let at = e.instance_path().to_string();
            if at.is_empty() {
                e.to_string()
            } else {
                format!("{at}: {e}")
            }
        })
        .collect();
    if messages.is_empty() {
        ArgumentCheck::Valid
    } else {
        ArgumentCheck::Invalid(messages)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool() -> Value {
        json!({
            "name": "create_ticket",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "title": {"type": "string"},
                    "priority": {"type": "string", "enum": ["low", "normal", "high"]},
                    "assignee_id": {"type": "integer"}
                },
                "required": ["title"],
                "additionalProperties": false
            }
        })
    }

    fn args(v: Value) -> Map<String, Value> {
        v.as_object().unwrap().clone()
    }

    #[test]
    fn arguments_checked_against_input_schema() {
        assert_eq!(
            check(
                &tool(),
                &args(json!({"title": "Login broken", "priority": "high"}))
            ),
            ArgumentCheck::Valid
        );
        let cases = [
            (json!({"priority": "high"}), "title"),
            (json!({"title": "x", "severity": 2}), "severity"),
            (json!({"title": "x", "assignee_id": "42"}), "integer"),
            (json!({"title": "x", "priority": "urgent"}), "urgent"),
        ];
        for (a, needle) in cases {
            match check(&tool(), &args(a.clone())) {
                ArgumentCheck::Invalid(m) => {
                    assert!(m.join(" ").contains(needle), "{a}: {m:?}")
                }
                other => panic!("{a}: {other:?}"),
            }
        }
        // No schema: any object.
        assert_eq!(
            check(&json!({"name": "t"}), &args(json!({"a": 1}))),
            ArgumentCheck::Valid
        );
        // A schema that cannot compile is unchecked, not invalid.
        assert!(matches!(
            check(
                &json!({"name": "t", "inputSchema": {"type": 12}}),
                &args(json!({}))
            ),
            ArgumentCheck::Unchecked(_)
        ));
    }
}
