//! What a rewrite may change, the request we send for one, and the check that a proposal kept
//! everything else.
//!
//! A proposal may change the tool's `description`, `title`, `annotations` and the `description`
//! of any schema node of `inputSchema`; the name, every other key and the shape of the schema
//! (types, property names, `required`, enums, …) must come back unchanged. The check compares
//! the two definitions with the editable texts taken out, so a model cannot slip a new
//! parameter, a renamed one or a looser type past the scoring.

use serde_json::{Map, Value};

/// Top-level keys of a tool definition a rewrite may change.
pub const EDITABLE_TOOL_KEYS: [&str; 3] = ["description", "title", "annotations"];

/// Schema keywords whose values are themselves schemas, or maps/lists of schemas: their
/// `description` is editable too.
const SCHEMA_MAPS: [&str; 5] = [
    "properties",
    "patternProperties",
    "$defs",
    "definitions",
    "dependentSchemas",
];
const SCHEMA_LISTS: [&str; 4] = ["anyOf", "oneOf", "allOf", "prefixItems"];
const SCHEMA_ONE: [&str; 6] = ["items", "additionalProperties", "not", "if", "then", "else"];

/// The definition with everything a rewrite may change removed: equal for a base and a
/// proposal exactly when the proposal kept the name and the schema's shape.
pub fn fixed_part(tool: &Value) -> Value {
    let mut out = tool.clone();
    if let Some(object) = out.as_object_mut() {
        for key in EDITABLE_TOOL_KEYS {
            object.remove(key);
        }
        if let Some(schema) = object.get_mut("inputSchema") {
            strip_schema_descriptions(schema);
        }
    }
    out
}

fn strip_schema_descriptions(schema: &mut Value) {
    let Some(object) = schema.as_object_mut() else {
        return;
    };
    object.remove("description");
    for key in SCHEMA_MAPS {
        if let Some(Value::Object(map)) = object.get_mut(key) {
            map.values_mut().for_each(strip_schema_descriptions);
        }
    }
    for key in SCHEMA_LISTS {
        if let Some(Value::Array(list)) = object.get_mut(key) {
            list.iter_mut().for_each(strip_schema_descriptions);
        }
    }
    for key in SCHEMA_ONE {
        if let Some(one) = object.get_mut(key) {
            strip_schema_descriptions(one);
        }
    }
}

/// Why a proposal cannot be offered although the model answered.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Refusal {
    /// The proposal renamed the tool.
    Renamed { from: String, to: String },
    /// Something other than the editable texts changed: the first path that differs.
    ShapeChanged { at: String },
    /// The proposal is the definition unchanged.
    Unchanged,
}

impl Refusal {
    /// One sentence for the report.
    pub fn describe(&self) -> String {
        match self {
            Refusal::Renamed { from, to } => {
                format!("the proposal renamed the tool from `{from}` to `{to}`")
            }
            Refusal::ShapeChanged { at } => format!(
                "the proposal changed more than the descriptions and annotations (at `{at}`)"
            ),
            Refusal::Unchanged => "the proposal is the definition unchanged".to_string(),
        }
    }
}

/// Checks that `proposal` differs from `base` only in what a rewrite may change.
pub fn check_proposal(base: &Value, proposal: &Value) -> Result<(), Refusal> {
    let name = |v: &Value| {
        v.get("name")
            .and_then(Value::as_str)
            .unwrap_or("")
            .to_string()
    };
    if name(base) != name(proposal) {
        return Err(Refusal::Renamed {
            from: name(base),
            to: name(proposal),
        });
    }
    if base == proposal {
        return Err(Refusal::Unchanged);
    }
    let (fixed_base, fixed_proposal) = (fixed_part(base), fixed_part(proposal));
    if fixed_base != fixed_proposal {
        return Err(Refusal::ShapeChanged {
            at: first_difference(&fixed_base, &fixed_proposal, String::new()),
        });
    }
    Ok(())
}

/// A JSON-pointer-like path of the first place two values differ.
fn first_difference(a: &Value, b: &Value, at: String) -> String {
    match (a, b) {
        (Value::Object(x), Value::Object(y)) => {
            let mut keys: Vec<&String> = x.keys().chain(y.keys()).collect();
            keys.sort();
            keys.dedup();
            for key in keys {
                let here = format!("{at}/{key}");
                match (x.get(key), y.get(key)) {
                    (Some(p), Some(q)) if p == q => continue,
                    (Some(p), Some(q)) => return first_difference(p, q, here),
                    _ => return here,
                }
            }
            at
        }
        (Value::Array(x), Value::Array(y)) if x.len() == y.len() => {
            for (i, (p, q)) in x.iter().zip(y).enumerate() {
                if p != q {
                    return first_difference(p, q, format!("{at}/{i}"));
                }
            }
            at
        }
        _ if at.is_empty() => "/".to_string(),
        _ => at,
    }
}

/// The marker our rewrite prompt opens with (a judge stand-in recognises the request by it).
pub const REWRITE_MARKER: &str = "You revise one MCP tool definition";

/// The system prompt of a rewrite request: our own words, not the TDQS prompts.
pub fn rewrite_system() -> String {
    format!(
        "{REWRITE_MARKER} so that an AI agent can choose and call the tool correctly.\n\
         You may change only: the tool's \"description\", its \"title\", its \"annotations\" \
         (readOnlyHint, destructiveHint, idempotentHint, openWorldHint) and the \"description\" \
         of parameters and other schema nodes inside \"inputSchema\".\n\
         Never change the tool's name, never add, remove or rename a parameter, and never \
         change a type, an enum, \"required\" or any other key.\n\
         State only what the definition and the notes support; do not invent behaviour. Keep \
         the description short: what the tool does, when to use it (and which sibling to use \
         instead), what it returns, its side effects and failure modes, and what each \
         parameter means and accepts.\n\
         Answer with JSON only: {{\"tool\": <the complete revised definition>}}."
    )
}

/// The user prompt of a rewrite request: the definition, its siblings' names, and what fell
/// with the judge's reasons.
pub fn rewrite_user(tool: &Value, siblings: &[String], weak_points: &[(String, String)]) -> String {
    let definition = serde_json::to_string_pretty(tool).unwrap_or_default();
    let mut text = String::from("<tool-definition>\n");
    text.push_str(&definition);
    text.push_str("\n</tool-definition>\n<sibling-tools>\n");
    for name in siblings {
        text.push_str("- ");
        text.push_str(name);
        text.push('\n');
    }
    text.push_str("</sibling-tools>\n<weak-points>\n");
    for (dimension, why) in weak_points {
        text.push_str(&format!("- {dimension}: {why}\n"));
    }
    text.push_str("</weak-points>\n");
    text
}

/// The revised definition in a rewrite answer: a JSON object (possibly in a fenced block) that
/// is `{"tool": {…}}` or the definition itself.
pub fn parse_rewrite_answer(text: &str) -> Result<Value, String> {
    let trimmed = text.trim();
    let body = match (trimmed.find('{'), trimmed.rfind('}')) {
        (Some(start), Some(end)) if start < end => &trimmed[start..=end],
        _ => return Err("the answer holds no JSON object".to_string()),
    };
    let value: Value =
        serde_json::from_str(body).map_err(|e| format!("the answer is not JSON: {e}"))?;
    let tool = match value {
        Value::Object(mut object) => match object.remove("tool") {
            Some(tool @ Value::Object(_)) => tool,
            Some(_) => return Err("`tool` is not an object".to_string()),
            None if object.contains_key("name") => Value::Object(object),
            None => return Err("the answer has no `tool` object".to_string()),
        },
        _ => return Err("the answer is not a JSON object".to_string()),
    };
    Ok(tool)
}

/// The parameters of a tool (top-level `inputSchema.properties`), in schema order.
pub fn parameters(tool: &Value) -> Map<String, Value> {
    tool.get("inputSchema")
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
        .cloned()
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn base() -> Value {
        json!({"name": "get_weather", "description": "Weather.",
            "inputSchema": {"type": "object", "required": ["city"],
                "properties": {"city": {"type": "string"},
                    "days": {"type": "array", "items": {"type": "integer", "description": "d"}}}}})
    }

    #[test]
    fn a_proposal_that_rewrites_only_texts_and_annotations_is_accepted() {
        let mut p = base();
        p["description"] = json!("Current weather for one city. Returns JSON.");
        p["annotations"] = json!({"readOnlyHint": true});
        p["inputSchema"]["properties"]["city"]["description"] = json!("City name, e.g. Paris.");
        p["inputSchema"]["properties"]["days"]["items"]["description"] = json!("a day offset");
        assert_eq!(check_proposal(&base(), &p), Ok(()));
    }

    #[test]
    fn a_renamed_tool_is_refused() {
        let mut p = base();
        p["name"] = json!("weather");
        assert!(matches!(
            check_proposal(&base(), &p),
            Err(Refusal::Renamed { .. })
        ));
    }

    #[test]
    fn a_new_parameter_or_a_changed_type_or_required_is_refused_with_its_path() {
        let mut p = base();
        p["description"] = json!("Better.");
        p["inputSchema"]["properties"]["units"] = json!({"type": "string"});
        assert_eq!(
            check_proposal(&base(), &p),
            Err(Refusal::ShapeChanged {
                at: "/inputSchema/properties/units".into()
            })
        );
        let mut p = base();
        p["inputSchema"]["properties"]["days"]["items"]["type"] = json!("string");
        assert_eq!(
            check_proposal(&base(), &p),
            Err(Refusal::ShapeChanged {
                at: "/inputSchema/properties/days/items/type".into()
            })
        );
        let mut p = base();
        p["inputSchema"]["required"] = json!([]);
        assert!(matches!(
            check_proposal(&base(), &p),
            Err(Refusal::ShapeChanged { .. })
        ));
    }

    #[test]
    fn a_property_named_description_is_shape_not_text() {
        let base = json!({"name": "t", "inputSchema": {"type": "object",
            "properties": {"description": {"type": "string"}}}});
        let mut p = base.clone();
        p["inputSchema"]["properties"]
            .as_object_mut()
            .unwrap()
            .remove("description");
        assert!(matches!(
            check_proposal(&base, &p),
            Err(Refusal::ShapeChanged { .. })
        ));
    }

    #[test]
    fn an_unchanged_proposal_is_refused() {
        assert_eq!(check_proposal(&base(), &base()), Err(Refusal::Unchanged));
    }

    #[test]
    fn rewrite_answers_are_read_wrapped_bare_or_fenced() {
        let wrapped = "```json\n{\"tool\": {\"name\": \"x\"}}\n```";
        assert_eq!(parse_rewrite_answer(wrapped).unwrap(), json!({"name": "x"}));
        assert_eq!(
            parse_rewrite_answer("{\"name\": \"x\"}").unwrap(),
            json!({"name": "x"})
        );
        assert!(parse_rewrite_answer("no").is_err());
        assert!(parse_rewrite_answer("{\"tool\": 3}").is_err());
    }
}
