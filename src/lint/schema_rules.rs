//! Checks of the input schema as JSON Schema: types a validator does not know, `required` names
//! the schema never declares, a schema its own draft rejects, and limits (`pattern`, `maximum`,
//! …) that no text states. Clients validate arguments against the schema or refuse a tool whose
//! schema does not compile, so these defects break calls, not just scores.
//!
//! Every walk follows the subschema keywords (`properties`, `items`, `prefixItems`,
//! `additionalProperties`, `patternProperties`, `anyOf`/`oneOf`/`allOf`/`not`, `$defs`,
//! `definitions`) and stops at a depth of `MAX_DEPTH` (32), so a hostile schema costs its size.

use serde_json::{Map, Value};

use super::catalogue::{Code, Collector};
use super::facts::ToolFacts;

/// Nesting beyond this is not walked (no real tool schema comes near it).
const MAX_DEPTH: usize = 32;

/// The type names JSON Schema defines.
const JSON_TYPES: [&str; 7] = [
    "string", "number", "integer", "boolean", "object", "array", "null",
];

/// The schema rules of one tool: unknown types (`TDQS-P012`), undeclared required names
/// (`TDQS-P013`), a schema its draft rejects (`TDQS-P014`, only when neither of the first two
/// explains it), and unstated limits of required parameters (`TDQS-P015`).
pub(crate) fn check_schema(c: &mut Collector, f: &ToolFacts, tool: &Value) {
    let name = f.name.as_str();
    let t = Some(name);
    let Some(schema) = tool.get("inputSchema").filter(|s| s.is_object()) else {
        return;
    };
    let types = unknown_types(schema);
    for d in &types {
        c.push(
            Code::P012,
            t,
            None,
            format!(
                "`{name}`'s input schema declares type \"{}\" at `{}`, which JSON Schema does not have.",
                d.what, d.path
            ),
            "Use one of string, number, integer, boolean, object, array, null.".into(),
            vec![],
        );
    }
    let undeclared = undeclared_required(schema);
    for d in &undeclared {
        c.push(
            Code::P013,
            t,
            Some(d.what.as_str()),
            format!(
                "`{name}` requires `{}` (at `{}`), but its properties never declare it.",
                d.what, d.path
            ),
            format!(
                "Declare `{}` in properties with a type and a description, or remove it from required.",
                d.what
            ),
            vec![],
        );
    }
    if types.is_empty() && undeclared.is_empty() {
        if let Some(d) = draft_violation(schema) {
            c.push(
                Code::P014,
                t,
                None,
                format!(
                    "`{name}`'s input schema does not validate against its draft{}: {}.",
                    if d.path.is_empty() {
                        String::new()
                    } else {
                        format!(" at `{}`", d.path)
                    },
                    quote(&d.what)
                ),
                "Fix the keyword the validator names; check it with any JSON Schema validator."
                    .into(),
                vec![],
            );
        }
    }
    let properties = schema.get("properties").and_then(Value::as_object);
    for p in f.params.iter().filter(|p| p.required) {
        let Some(param) = properties.and_then(|props| props.get(&p.name)) else {
            continue;
        };
        let limits = unstated_limits(param, &[p.description.as_str(), f.clean.as_str()]);
        if limits.is_empty() {
            continue;
        }
        let listed = limits
            .iter()
            .map(|l| format!("{} {}", l.keyword, l.value))
            .collect::<Vec<_>>()
            .join(", ");
        c.push(
            Code::P015,
            t,
            Some(p.name.as_str()),
            format!("`{name}.{}` has limits no text states ({listed}).", p.name),
            "Say the limits in the parameter's description, e.g. '1–100' or 'like WEB-12'.".into(),
            vec![],
        );
    }
}

fn quote(s: &str) -> String {
    let flat = super::text::normalize_space(s);
    if flat.chars().count() <= 120 {
        flat
    } else {
        format!("{}…", flat.chars().take(120).collect::<String>())
    }
}

/// A defect found at a place in the schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct SchemaDefect {
    /// A JSON-pointer-like path inside `inputSchema` (`/properties/name/type`), empty for the
    /// root.
    pub path: String,
    /// The offending value, as written (a type name, a required name, the validator's message).
    pub what: String,
}

/// Calls `visit(path, schema)` on every subschema, root first.
fn walk<'a>(
    schema: &'a Value,
    path: String,
    depth: usize,
    visit: &mut dyn FnMut(&str, &'a Map<String, Value>),
) {
    if depth > MAX_DEPTH {
        return;
    }
    let Some(map) = schema.as_object() else {
        return;
    };
    visit(&path, map);
    for key in ["properties", "patternProperties", "$defs", "definitions"] {
        if let Some(children) = map.get(key).and_then(Value::as_object) {
            for (name, child) in children {
                walk(child, format!("{path}/{key}/{name}"), depth + 1, visit);
            }
        }
    }
    for key in [
        "items",
        "additionalProperties",
        "not",
        "additionalItems",
        "contains",
    ] {
        if let Some(child) = map.get(key) {
            if child.is_object() {
                walk(child, format!("{path}/{key}"), depth + 1, visit);
            }
        }
    }
    for key in ["anyOf", "oneOf", "allOf", "prefixItems", "items"] {
        if let Some(children) = map.get(key).and_then(Value::as_array) {
            for (i, child) in children.iter().enumerate() {
                walk(child, format!("{path}/{key}/{i}"), depth + 1, visit);
            }
        }
    }
}

/// `type` values that are not JSON Schema types (`"strin"`, `"int"`, `"float"`, `"dict"`).
pub(crate) fn unknown_types(schema: &Value) -> Vec<SchemaDefect> {
    let mut out = Vec::new();
    walk(schema, String::new(), 0, &mut |path, map| {
        let names: Vec<&Value> = match map.get("type") {
            Some(Value::Array(items)) => items.iter().collect(),
            Some(other) => vec![other],
            None => vec![],
        };
        for name in names {
            let known = name.as_str().is_some_and(|n| JSON_TYPES.contains(&n));
            if !known {
                out.push(SchemaDefect {
                    path: format!("{path}/type"),
                    what: match name {
                        Value::String(s) => s.clone(),
                        other => other.to_string(),
                    },
                });
            }
        }
    });
    out
}

/// The property names a subschema declares, its composition branches' included.
fn declared_names(map: &Map<String, Value>, into: &mut Vec<String>, depth: usize) {
    if depth > 4 {
        return;
    }
    if let Some(props) = map.get("properties").and_then(Value::as_object) {
        into.extend(props.keys().cloned());
    }
    for key in ["allOf", "anyOf", "oneOf"] {
        if let Some(branches) = map.get(key).and_then(Value::as_array) {
            for b in branches.iter().filter_map(Value::as_object) {
                declared_names(b, into, depth + 1);
            }
        }
    }
}

/// `required` names that no `properties` of the object (or of its composition branches)
/// declares. An object that leaves its shape open to patterns, a `$ref` or a parent's branches is
/// not judged: its names may be declared elsewhere.
pub(crate) fn undeclared_required(schema: &Value) -> Vec<SchemaDefect> {
    let mut out = Vec::new();
    walk(schema, String::new(), 0, &mut |path, map| {
        let Some(required) = map.get("required").and_then(Value::as_array) else {
            return;
        };
        let mut segments = path.rsplit('/');
        let last = segments.next().unwrap_or_default();
        let parent = segments.next().unwrap_or_default();
        let is_branch =
            last.parse::<usize>().is_ok() && matches!(parent, "anyOf" | "oneOf" | "allOf");
        let open_shape = map.contains_key("patternProperties")
            || map.contains_key("$ref")
            || map
                .get("additionalProperties")
                .and_then(Value::as_object)
                .is_some_and(|a| !a.is_empty());
        if is_branch || open_shape {
            return;
        }
        let mut declared = Vec::new();
        declared_names(map, &mut declared, 0);
        for name in required.iter().filter_map(Value::as_str) {
            if !declared.iter().any(|d| d == name) {
                out.push(SchemaDefect {
                    path: format!("{path}/required"),
                    what: name.to_string(),
                });
            }
        }
    });
    out
}

/// The first reason the schema's own draft (its `$schema`, else 2020-12) rejects it, if any. A
/// schema naming a draft this validator does not bundle is not judged.
pub(crate) fn draft_violation(schema: &Value) -> Option<SchemaDefect> {
    if let Some(uri) = schema.get("$schema").and_then(Value::as_str) {
        let known = [
            "json-schema.org/draft-04/",
            "json-schema.org/draft-06/",
            "json-schema.org/draft-07/",
            "json-schema.org/draft/2019-09/",
            "json-schema.org/draft/2020-12/",
        ];
        if !known.iter().any(|k| uri.contains(k)) {
            return None;
        }
    }
    match jsonschema::meta::validate(schema) {
        Ok(()) => None,
        Err(error) => Some(SchemaDefect {
            path: error.instance_path().to_string(),
            what: error.to_string(),
        }),
    }
}

/// A limit a schema sets on one parameter, and whether a text states it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct UnstatedLimit {
    pub keyword: &'static str,
    pub value: String,
}

/// The limits of a parameter's schema that neither its description nor the tool's states.
/// Trivial bounds (a minimum of 0 or 1, a minLength of 1) say nothing a model would get wrong
/// and are not reported. A pattern counts as stated when the text gives an example or names the
/// format.
pub(crate) fn unstated_limits(param: &Value, texts: &[&str]) -> Vec<UnstatedLimit> {
    let Some(map) = param.as_object() else {
        return Vec::new();
    };
    let lower: Vec<String> = texts.iter().map(|t| t.to_lowercase()).collect();
    let stated = |needle: &str| lower.iter().any(|t| t.contains(needle));
    let mut out = Vec::new();
    for keyword in [
        "maximum",
        "exclusiveMaximum",
        "minimum",
        "exclusiveMinimum",
        "maxLength",
        "minLength",
        "maxItems",
        "minItems",
    ] {
        let Some(value) = map.get(keyword).and_then(Value::as_f64) else {
            continue;
        };
        let trivial = matches!(
            keyword,
            "minimum" | "minLength" | "minItems" | "exclusiveMinimum"
        ) && (value == 0.0 || value == 1.0);
        if trivial {
            continue;
        }
        let text = if value.fract() == 0.0 && value.abs() < 1e15 {
            format!("{}", value as i64)
        } else {
            format!("{value}")
        };
        // 10000 may be written 10,000.
        let grouped = group_thousands(&text);
        if !stated(&text) && !stated(&grouped) {
            out.push(UnstatedLimit {
                keyword,
                value: text,
            });
        }
    }
    if let Some(pattern) = map.get("pattern").and_then(Value::as_str) {
        let shown = texts.iter().any(|t| {
            super::text::example_cue().is_match(t)
                || t.to_lowercase().contains("format")
                || t.to_lowercase().contains("pattern")
                || t.contains(pattern)
        });
        if !shown {
            out.push(UnstatedLimit {
                keyword: "pattern",
                value: pattern.chars().take(40).collect(),
            });
        }
    }
    out
}

fn group_thousands(digits: &str) -> String {
    if digits.len() <= 4 || !digits.chars().all(|c| c.is_ascii_digit()) {
        return digits.to_string();
    }
    let mut out = String::new();
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn a_misspelt_type_is_found_wherever_it_is() {
        let schema = json!({"type": "object", "properties": {
            "name": {"type": "strin"},
            "tags": {"type": "array", "items": {"type": ["string", "nul"]}},
            "ok": {"type": "integer"}
        }});
        let found: Vec<(String, String)> = unknown_types(&schema)
            .into_iter()
            .map(|d| (d.path, d.what))
            .collect();
        assert_eq!(
            found,
            vec![
                ("/properties/name/type".to_string(), "strin".to_string()),
                ("/properties/tags/items/type".to_string(), "nul".to_string()),
            ]
        );
        assert!(
            unknown_types(&json!({"type": "object", "properties": {"a": {"type": "number"}}}))
                .is_empty()
        );
    }

    #[test]
    fn a_required_name_must_be_declared() {
        let schema = json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a", "b"]});
        let found: Vec<String> = undeclared_required(&schema)
            .into_iter()
            .map(|d| d.what)
            .collect();
        assert_eq!(found, vec!["b"]);
        // Names declared in a composition branch, or a branch naming its parent's properties,
        // are declared.
        let composed = json!({"type": "object", "properties": {"a": {"type": "string"}, "b": {"type": "string"}},
            "anyOf": [{"required": ["a"]}, {"required": ["b"]}],
            "allOf": [{"properties": {"c": {"type": "string"}}}], "required": ["c"]});
        assert!(undeclared_required(&composed).is_empty());
    }

    #[test]
    fn a_schema_its_draft_rejects_is_found() {
        assert!(draft_violation(
            &json!({"type": "object", "properties": {"a": {"type": "string", "minLength": -1}}})
        )
        .is_some());
        assert!(draft_violation(&json!({"type": "object", "required": "a"})).is_some());
        assert!(draft_violation(
            &json!({"type": "object", "properties": {"a": {"type": "string"}}, "required": ["a"]})
        )
        .is_none());
        // A custom meta-schema is not judged.
        assert!(
            draft_violation(&json!({"$schema": "https://example.com/my-meta", "type": 5}))
                .is_none()
        );
    }

    #[test]
    fn limits_count_as_stated_when_a_text_says_them() {
        let param = json!({"type": "integer", "minimum": 1, "maximum": 100});
        assert_eq!(
            unstated_limits(&param, &["How many results to return."]),
            vec![UnstatedLimit {
                keyword: "maximum",
                value: "100".into()
            }]
        );
        assert!(unstated_limits(&param, &["How many results (1-100)."]).is_empty());
        let big = json!({"type": "integer", "maximum": 10000});
        assert!(unstated_limits(&big, &["At most 10,000 rows."]).is_empty());
        let pattern = json!({"type": "string", "pattern": "^[A-Z]+-\\d+$"});
        assert_eq!(unstated_limits(&pattern, &["The issue key."]).len(), 1);
        assert!(unstated_limits(&pattern, &["The issue key, e.g. WEB-12."]).is_empty());
    }
}
