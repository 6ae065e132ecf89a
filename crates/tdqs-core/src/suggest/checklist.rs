//! What a definition is missing, per dimension, found by fixed checks on the definition alone:
//! the static judge's counterpart of a rewrite. It names gaps and never writes text for them.

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::rubric::ToolDimension;

use super::proposal::parameters;

/// One missing thing.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ChecklistItem {
    pub dimension: ToolDimension,
    /// What is missing, in the gate's own words (names from the definition in backticks).
    pub missing: String,
}

/// Words that say when (or when not) to use a tool.
const USAGE_CUES: [&str; 9] = [
    "use when",
    "use this",
    "use it",
    "instead",
    "do not",
    "don't",
    "only when",
    "only for",
    "prefer",
];
/// Words that say what the tool gives back.
const RETURN_CUES: [&str; 4] = ["return", "responds with", "yields", "outputs"];
/// Words that say how the tool fails.
const FAILURE_CUES: [&str; 5] = ["error", "fail", "not found", "invalid", "raises"];
const ANNOTATION_HINTS: [&str; 4] = [
    "readOnlyHint",
    "destructiveHint",
    "idempotentHint",
    "openWorldHint",
];
/// Longer than this many words, a description is flagged for conciseness.
const LONG_DESCRIPTION_WORDS: usize = 300;
/// Shorter than this many words, a description is flagged for purpose.
const SHORT_DESCRIPTION_WORDS: usize = 5;

/// The gaps of `tool` on each dimension of `dimensions` (all six when empty), in rubric order.
pub fn checklist(tool: &Value, dimensions: &[ToolDimension]) -> Vec<ChecklistItem> {
    let wanted = |d: ToolDimension| dimensions.is_empty() || dimensions.contains(&d);
    let name = tool.get("name").and_then(Value::as_str).unwrap_or("");
    let description = tool
        .get("description")
        .and_then(Value::as_str)
        .unwrap_or("")
        .trim();
    let lower = description.to_lowercase();
    let words = description.split_whitespace().count();
    let has = |cues: &[&str]| cues.iter().any(|c| lower.contains(c));
    let mut items = Vec::new();
    let mut push = |dimension: ToolDimension, missing: String| {
        if wanted(dimension) {
            items.push(ChecklistItem { dimension, missing });
        }
    };
    use ToolDimension::*;
    if description.is_empty() {
        push(PurposeClarity, "a description (there is none)".to_string());
    } else if lower == name.to_lowercase().replace('_', " ") || lower == name.to_lowercase() {
        push(
            PurposeClarity,
            "a description that says more than the name".to_string(),
        );
    } else if words < SHORT_DESCRIPTION_WORDS {
        push(
            PurposeClarity,
            format!(
                "a sentence saying what the tool does to what (the description has {words} \
                 word(s))"
            ),
        );
    }
    if !has(&USAGE_CUES) {
        push(
            UsageGuidelines,
            "when to use the tool, and which sibling to use instead".to_string(),
        );
    }
    let annotations = tool.get("annotations").and_then(Value::as_object);
    let missing_hints: Vec<&str> = ANNOTATION_HINTS
        .into_iter()
        .filter(|h| annotations.is_none_or(|a| !a.contains_key(*h)))
        .collect();
    if !missing_hints.is_empty() {
        push(
            BehavioralTransparency,
            format!("the annotations {}", backticked(&missing_hints)),
        );
    }
    if !has(&FAILURE_CUES) {
        push(
            BehavioralTransparency,
            "how the tool fails (errors, limits)".to_string(),
        );
    }
    let params = parameters(tool);
    let undescribed: Vec<&str> = params
        .iter()
        .filter(|(_, schema)| {
            schema
                .get("description")
                .and_then(Value::as_str)
                .is_none_or(|d| d.trim().is_empty())
        })
        .map(|(name, _)| name.as_str())
        .collect();
    if !undescribed.is_empty() {
        push(
            ParameterSemantics,
            format!(
                "a description of the parameter(s) {}",
                backticked(&undescribed)
            ),
        );
    }
    if words > LONG_DESCRIPTION_WORDS {
        push(
            ConcisenessStructure,
            format!("a shorter description ({words} words; over {LONG_DESCRIPTION_WORDS})"),
        );
    }
    if !has(&RETURN_CUES) && tool.get("outputSchema").is_none() {
        push(
            ContextualCompleteness,
            "what the tool returns (in the description or an `outputSchema`)".to_string(),
        );
    }
    items
}

fn backticked(names: &[&str]) -> String {
    names
        .iter()
        .map(|n| format!("`{n}`"))
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_bare_definition_misses_something_on_each_dimension_but_conciseness() {
        let tool = json!({"name": "get_weather", "description": "Weather.",
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string"}}}});
        let items = checklist(&tool, &[]);
        let dims: Vec<ToolDimension> = items.iter().map(|i| i.dimension).collect();
        assert!(dims.contains(&ToolDimension::PurposeClarity));
        assert!(dims.contains(&ToolDimension::UsageGuidelines));
        assert!(dims.contains(&ToolDimension::BehavioralTransparency));
        assert!(dims.contains(&ToolDimension::ContextualCompleteness));
        assert!(!dims.contains(&ToolDimension::ConcisenessStructure));
        let params = items
            .iter()
            .find(|i| i.dimension == ToolDimension::ParameterSemantics)
            .unwrap();
        assert_eq!(params.missing, "a description of the parameter(s) `city`");
    }

    #[test]
    fn only_the_asked_dimensions_are_listed_and_a_complete_tool_has_none() {
        let tool = json!({"name": "get_weather",
            "description": "Current weather for one city. Use this for today; use forecast instead for later days. Returns JSON; fails with an error for an unknown city.",
            "annotations": {"readOnlyHint": true, "destructiveHint": false, "idempotentHint": true, "openWorldHint": true},
            "inputSchema": {"type": "object", "properties": {"city": {"type": "string", "description": "City name."}}}});
        assert!(checklist(&tool, &[]).is_empty());
        let bare = json!({"name": "x"});
        let items = checklist(&bare, &[ToolDimension::UsageGuidelines]);
        assert_eq!(items.len(), 1);
        assert_eq!(items[0].dimension, ToolDimension::UsageGuidelines);
    }
}
