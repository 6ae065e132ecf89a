//! What changed in a fallen tool's definition, and one fix line per fallen dimension: the text a
//! reviewer needs next to a score that fell.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::export::Export;
use crate::rubric::ToolDimension;

/// The before and after of one tool's definition, as far as TDQS reads it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolChange {
    pub description_before: Option<String>,
    pub description_after: Option<String>,
    /// Sentences only the base has (`- …`) and only the head has (`+ …`), in order.
    pub description_diff: Vec<String>,
    /// Schema and annotation fields the head added or removed (`inputSchema.properties.limit`,
    /// `inputSchema.properties.limit.description`, `outputSchema`, `annotations.readOnlyHint`).
    pub fields_added: Vec<String>,
    pub fields_removed: Vec<String>,
}

/// The one fix of a tool whose description the head deleted: every dimension fell with it, and
/// one generic line per dimension would say the same thing six times.
pub const DESCRIPTION_DELETED_FIX: &str = "Restore or write the description: the head lists none for this tool, so every dimension fell with it. Say what the tool does and to what, when to use it rather than a sibling, and what it returns.";

impl ToolChange {
    /// True when the base had a description and the head has none (absent or blank).
    pub fn description_deleted(&self) -> bool {
        let present = |d: &Option<String>| d.as_deref().is_some_and(|t| !t.trim().is_empty());
        present(&self.description_before) && !present(&self.description_after)
    }
}

/// The fix lines of a fallen tool as a page shows them: [`DESCRIPTION_DELETED_FIX`] alone when
/// the head deleted its description, else each fallen dimension's own line (label, fix).
pub fn fix_lines(tool: &super::model::FallenTool) -> Vec<(Option<&'static str>, String)> {
    if tool
        .change
        .as_ref()
        .is_some_and(ToolChange::description_deleted)
    {
        return vec![(None, DESCRIPTION_DELETED_FIX.to_string())];
    }
    tool.dimensions
        .iter()
        .filter(|d| !d.fix.is_empty())
        .map(|d| (Some(d.dimension.label()), d.fix.clone()))
        .collect()
}

/// One line on how to win a dimension back.
pub fn fix_line(dimension: ToolDimension) -> &'static str {
    match dimension {
        ToolDimension::PurposeClarity => {
            "Say in the first sentence what the tool does and to what (a verb and its resource), so it cannot be mistaken for a sibling."
        }
        ToolDimension::UsageGuidelines => {
            "Say when to use this tool, and when a sibling is the better choice."
        }
        ToolDimension::BehavioralTransparency => {
            "State side effects, permissions, limits and what the tool returns or fails with; annotations alone do not count."
        }
        ToolDimension::ParameterSemantics => {
            "Give every parameter its meaning, format and constraints, in the schema's descriptions or the text."
        }
        ToolDimension::ConcisenessStructure => {
            "Put the key facts first and drop sentences that repeat the schema or each other."
        }
        ToolDimension::ContextualCompleteness => {
            "Cover what a caller needs to use the result: prerequisites, the shape of the return, paging, errors."
        }
    }
}

fn tool<'a>(export: &'a Export, name: &str) -> Option<&'a Value> {
    export
        .tools
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
}

fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = text.chars().collect();
    for (i, c) in chars.iter().enumerate() {
        current.push(*c);
        let end = matches!(c, '.' | '!' | '?' | '\n')
            && chars.get(i + 1).is_none_or(|n| n.is_whitespace());
        if end {
            let s = current.trim().to_string();
            if !s.is_empty() {
                out.push(s);
            }
            current.clear();
        }
    }
    let s = current.trim().to_string();
    if !s.is_empty() {
        out.push(s);
    }
    out
}

/// Field paths TDQS reads: the title, each input property and its description, the output
/// schema's presence and properties, and each annotation.
fn fields(tool: &Value) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if tool.get("title").is_some_and(|v| !v.is_null()) {
        out.insert("title".to_string());
    }
    for schema in ["inputSchema", "outputSchema"] {
        let Some(s) = tool.get(schema).filter(|v| !v.is_null()) else {
            continue;
        };
        if schema == "outputSchema" {
            out.insert(schema.to_string());
        }
        if let Some(props) = s.get("properties").and_then(Value::as_object) {
            for (name, prop) in props {
                out.insert(format!("{schema}.properties.{name}"));
                if prop.get("description").is_some_and(|d| !d.is_null()) {
                    out.insert(format!("{schema}.properties.{name}.description"));
                }
            }
        }
    }
    if let Some(annotations) = tool.get("annotations").and_then(Value::as_object) {
        for name in annotations.keys() {
            out.insert(format!("annotations.{name}"));
        }
    }
    out
}

/// The change of one tool between two exports.
pub fn tool_change(base: &Export, head: &Export, name: &str) -> Option<ToolChange> {
    let (b, h) = (tool(base, name)?, tool(head, name)?);
    let description = |t: &Value| {
        t.get("description")
            .and_then(Value::as_str)
            .map(String::from)
    };
    let (before, after) = (description(b), description(h));
    let (bs, hs) = (
        sentences(before.as_deref().unwrap_or("")),
        sentences(after.as_deref().unwrap_or("")),
    );
    let mut diff: Vec<String> = bs
        .iter()
        .filter(|s| !hs.contains(s))
        .map(|s| format!("- {s}"))
        .collect();
    diff.extend(
        hs.iter()
            .filter(|s| !bs.contains(s))
            .map(|s| format!("+ {s}")),
    );
    let (bf, hf) = (fields(b), fields(h));
    Some(ToolChange {
        description_before: before,
        description_after: after,
        description_diff: diff,
        fields_added: hf.difference(&bf).cloned().collect(),
        fields_removed: bf.difference(&hf).cloned().collect(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sentences_split_on_ends_followed_by_space() {
        assert_eq!(
            sentences("Closes an issue. Use v1.2 rules! Done"),
            vec!["Closes an issue.", "Use v1.2 rules!", "Done"]
        );
    }

    #[test]
    fn fields_name_properties_descriptions_and_annotations() {
        let t = serde_json::json!({"name": "a", "inputSchema": {"properties": {"n": {"type": "integer", "description": "x"}}},
            "annotations": {"readOnlyHint": true}});
        let f: Vec<String> = fields(&t).into_iter().collect();
        assert_eq!(
            f,
            vec![
                "annotations.readOnlyHint",
                "inputSchema.properties.n",
                "inputSchema.properties.n.description"
            ]
        );
    }
}
