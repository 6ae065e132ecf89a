//! Context signals of a tool (TDQS stage 1), invocation cost (v1.1) and the shadow-candidate
//! prefilter. Deterministic functions of the definitions.
//!
//! Decisions where the specification leaves room (each one is tested below):
//!
//! - `schemaDescriptionCoverage` rounds the exact ratio half-up (`floor((200·d + t) / 2t)`), as
//!   every other TDQS rounding is defined since v1.2. Measured over every pair with at most 200
//!   parameters (20,300 pairs): JavaScript's `Math.round(d / t * 100)` agrees except in 8 pairs
//!   where the float product lands just below a tie (the first is 23 of 40: 57.4999… → 57, exact
//!   58), none with fewer than 40 parameters; Python's `round` differs in 134, sending ties to
//!   even (1 of 8 described → 12 rather than 13).
//! - `paramsWithDescriptions` counts a property whose `description` is a non-empty string
//!   (whitespace counts as text); `paramsWithEnums` one with an `enum` array;
//!   `hasNestedObjects` one whose own `type` is `"object"` or a type array containing it (a
//!   `$ref` is not followed: the signal describes what the schema states on its face).
//! - `hasOutputSchema` / `hasAnnotations`: the field is an object with at least one key.
//!   `annotationValues` reads each hint only when it is a boolean.
//! - `titleIsMeaningful`: the top-level `title` (not `annotations.title`) is a string that
//!   differs from the name and has more characters (Unicode scalar values) than it.
//!
//! Invocation cost (`requiredFieldCount + 2·max(0, schemaDepth − 1) + 2·unionChoiceCount`) is
//! measured over the required subtree of `inputSchema`:
//!
//! - A schema without a non-empty `properties` object at its top scores 0, 0, 0.
//! - The top object is level 1. A required property whose value is an object with declared
//!   properties (a non-empty `properties`) is one level deeper; so is such an object schema in an
//!   array's `items`. An object that declares no properties (`{"type": "object"}`, a free map) is
//!   a leaf, as the reference implementation (`tdqs` 0.1.0, `_has_properties`) counts it. A required object counts once itself and again for each of
//!   its own required properties. Every entry of a `required` array counts, also one the object
//!   does not describe.
//! - `allOf` branches describe the same instance: their required fields add up. `oneOf` /
//!   `anyOf` count the branch with the most required fields, the deepest branch for depth, and
//!   the branch with the most choices inside it; the union itself adds one choice per branch
//!   beyond the first, not counting `{"type": "null"}` branches (so the nullable idiom adds
//!   none). `not` counts for depth only. A branch that names `required` properties without
//!   describing them uses the properties of the object it sits on. `enum` and type arrays are
//!   values, not choices.
//! - `$ref` is resolved as a JSON pointer into the input schema (`#/$defs/…`,
//!   `#/definitions/…`, `#`); sibling keywords of a `$ref` are not read. A pointer already on
//!   the path from the root is a repeat and ends that branch as a leaf (the referencing field
//!   still counts); a definition referenced from two places is counted in both. A reference that
//!   does not resolve (remote, anchors) is a leaf. Levels below 10 are not entered.
//! - Results are memoised per (pointer, level, path), so a schema that references one
//!   definition from many places costs polynomial time, not exponential.
//!
//! Shadow candidates: see [`shadow_candidates`].

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::{Map, Value};

use crate::digest;

/// Annotation hints as true, false or absent.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct AnnotationValues {
    pub read_only: Option<bool>,
    pub destructive: Option<bool>,
    pub idempotent: Option<bool>,
    pub open_world: Option<bool>,
}

/// The signals stored on every scored tool.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ContextSignals {
    pub param_count: u64,
    pub required_param_count: u64,
    pub params_with_descriptions: u64,
    pub params_with_enums: u64,
    /// round(described / total × 100); 100 when there are no parameters.
    pub schema_description_coverage: u64,
    pub has_nested_objects: bool,
    pub has_output_schema: bool,
    pub has_annotations: bool,
    pub annotation_values: AnnotationValues,
    pub title_is_meaningful: bool,
    pub definition_bytes: u64,
    pub input_hash: String,
    pub required_field_count: u64,
    pub schema_depth: u64,
    pub union_choice_count: u64,
    pub invocation_cost: u64,
}

/// A candidate pair for the shadowing check: `tool` is the dearer side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShadowCandidate {
    pub tool: String,
    pub invocation_cost: u64,
    pub cheaper_sibling: String,
    pub cheaper_sibling_invocation_cost: u64,
}

/// Levels of the required subtree that are entered; deeper objects are not looked into.
pub(crate) const MAX_SCHEMA_DEPTH: u64 = 10;

/// The invocation-cost signals of an input schema.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CostSignals {
    pub required_field_count: u64,
    pub schema_depth: u64,
    pub union_choice_count: u64,
    pub invocation_cost: u64,
}

/// Every stage-1 signal of `tool` (a raw tool object as listed).
pub fn context_signals(tool: &Value) -> ContextSignals {
    let schema = tool.get("inputSchema").filter(|schema| schema.is_object());
    let properties = schema
        .and_then(|schema| schema.get("properties"))
        .and_then(Value::as_object);
    let property_schemas: Vec<&Value> =
        properties.map(|p| p.values().collect()).unwrap_or_default();

    let param_count = property_schemas.len() as u64;
    let required_param_count = schema
        .and_then(|schema| schema.get("required"))
        .and_then(Value::as_array)
        .map_or(0, |required| required.len() as u64);
    let params_with_descriptions = property_schemas
        .iter()
        .filter(|property| {
            matches!(property.get("description"), Some(Value::String(text)) if !text.is_empty())
        })
        .count() as u64;
    let params_with_enums = property_schemas
        .iter()
        .filter(|property| property.get("enum").is_some_and(Value::is_array))
        .count() as u64;
    let has_nested_objects = property_schemas
        .iter()
        .any(|property| declares_type(property, "object"));

    let annotations = tool.get("annotations").and_then(Value::as_object);
    let hint = |key: &str| {
        annotations
            .and_then(|a| a.get(key))
            .and_then(Value::as_bool)
    };
    let annotation_values = AnnotationValues {
        read_only: hint("readOnlyHint"),
        destructive: hint("destructiveHint"),
        idempotent: hint("idempotentHint"),
        open_world: hint("openWorldHint"),
    };

    let name = crate::digest::tool_name(tool);
    let title_is_meaningful = match tool.get("title") {
        Some(Value::String(title)) => title != name && title.chars().count() > name.chars().count(),
        _ => false,
    };

    let canonical = digest::canonical_definition_bytes(tool);
    let cost = invocation_cost(tool.get("inputSchema"));
    ContextSignals {
        param_count,
        required_param_count,
        params_with_descriptions,
        params_with_enums,
        schema_description_coverage: schema_description_coverage(
            params_with_descriptions,
            param_count,
        ),
        has_nested_objects,
        has_output_schema: is_non_empty_object(tool.get("outputSchema")),
        has_annotations: is_non_empty_object(tool.get("annotations")),
        annotation_values,
        title_is_meaningful,
        definition_bytes: canonical.len() as u64,
        input_hash: digest::input_hash_of(&digest::sha256_hex(&canonical)),
        required_field_count: cost.required_field_count,
        schema_depth: cost.schema_depth,
        union_choice_count: cost.union_choice_count,
        invocation_cost: cost.invocation_cost,
    }
}

/// `round(described / total × 100)` rounded half-up on the exact ratio; 100 without parameters.
pub(crate) fn schema_description_coverage(described: u64, total: u64) -> u64 {
    if total == 0 {
        return 100;
    }
    let (described, total) = (u128::from(described), u128::from(total));
    ((200 * described + total) / (2 * total)) as u64
}

fn is_non_empty_object(value: Option<&Value>) -> bool {
    value
        .and_then(Value::as_object)
        .is_some_and(|object| !object.is_empty())
}

/// Whether `schema`'s own `type` is `wanted` or a type array containing it.
fn declares_type(schema: &Value, wanted: &str) -> bool {
    match schema.get("type") {
        Some(Value::String(kind)) => kind == wanted,
        Some(Value::Array(kinds)) => kinds.iter().any(|kind| kind.as_str() == Some(wanted)),
        _ => false,
    }
}

/// The invocation-cost signals of an input schema (`None` when the tool has none).
pub fn invocation_cost(input_schema: Option<&Value>) -> CostSignals {
    let Some(root) = input_schema else {
        return CostSignals::default();
    };
    let has_properties = root
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|properties| !properties.is_empty());
    if !has_properties {
        return CostSignals::default();
    }
    let mut walk = Walk {
        root,
        memo: HashMap::new(),
    };
    let tally = walk.node(root, 1, None, &mut Vec::new());
    CostSignals {
        required_field_count: tally.fields,
        schema_depth: tally.depth,
        union_choice_count: tally.choices,
        invocation_cost: tally.fields + 2 * tally.depth.saturating_sub(1) + 2 * tally.choices,
    }
}

/// What a part of the required subtree contributes.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
struct Tally {
    fields: u64,
    /// The deepest level reached (at least the level the part sits at).
    depth: u64,
    choices: u64,
}

impl Tally {
    fn leaf(level: u64) -> Tally {
        Tally {
            fields: 0,
            depth: level,
            choices: 0,
        }
    }
}

/// How a schema is read: as the value of a required property (its object, if any, one level
/// below the object holding the property), or as the object instance at a level itself.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
enum Role {
    Value,
    Node,
}

struct Walk<'a> {
    root: &'a Value,
    memo: HashMap<(String, Role, u64, Vec<String>), Tally>,
}

impl<'a> Walk<'a> {
    /// `schema` is the value of a required property of an object at `level`.
    fn value(&mut self, schema: &'a Value, level: u64, path: &mut Vec<String>) -> Tally {
        if !schema.is_object() {
            return Tally::leaf(level);
        }
        if let Some(pointer) = schema.get("$ref").and_then(Value::as_str) {
            return self.reference(pointer, Role::Value, level, path);
        }
        if has_properties(schema) {
            // Past the cap the property still counts (its holder counted it); its inside does not.
            if level >= MAX_SCHEMA_DEPTH {
                return Tally::leaf(level);
            }
            return self.node(schema, level + 1, None, path);
        }
        // An array of objects puts the objects one level down, which is what reading the items
        // as a value does; an array of scalars stays a leaf.
        let own = match schema.get("items").filter(|items| items.is_object()) {
            Some(items) => self.value(items, level, path),
            None => Tally::leaf(level),
        };
        self.combinators(schema, own, level, path, |walk, branch, path| {
            walk.value(branch, level, path)
        })
    }

    /// `schema` describes the object instance at `level`; `inherited` are the properties of the
    /// object a combinator branch sits on.
    fn node(
        &mut self,
        schema: &'a Value,
        level: u64,
        inherited: Option<&'a Map<String, Value>>,
        path: &mut Vec<String>,
    ) -> Tally {
        if !schema.is_object() {
            return Tally::leaf(level);
        }
        if let Some(pointer) = schema.get("$ref").and_then(Value::as_str) {
            return self.reference(pointer, Role::Node, level, path);
        }
        let own_properties = schema
            .get("properties")
            .and_then(Value::as_object)
            .filter(|properties| !properties.is_empty());
        let mut tally = Tally::leaf(level);
        if let Some(required) = schema.get("required").and_then(Value::as_array) {
            for entry in required {
                tally.fields += 1;
                let described = entry.as_str().and_then(|name| {
                    own_properties
                        .and_then(|p| p.get(name))
                        .or_else(|| inherited.and_then(|p| p.get(name)))
                });
                if let Some(property) = described {
                    let inner = self.value(property, level, path);
                    tally.fields += inner.fields;
                    tally.depth = tally.depth.max(inner.depth);
                    tally.choices += inner.choices;
                }
            }
        }
        let for_branches = own_properties.or(inherited);
        self.combinators(schema, tally, level, path, |walk, branch, path| {
            walk.node(branch, level, for_branches, path)
        })
    }

    /// Adds what `allOf`, `oneOf`, `anyOf` and `not` of `schema` contribute to `tally`, each
    /// branch read by `read`.
    fn combinators(
        &mut self,
        schema: &'a Value,
        mut tally: Tally,
        level: u64,
        path: &mut Vec<String>,
        mut read: impl FnMut(&mut Self, &'a Value, &mut Vec<String>) -> Tally,
    ) -> Tally {
        if let Some(branches) = schema.get("allOf").and_then(Value::as_array) {
            for branch in branches {
                let inner = read(self, branch, path);
                tally.fields += inner.fields;
                tally.depth = tally.depth.max(inner.depth);
                tally.choices += inner.choices;
            }
        }
        for keyword in ["oneOf", "anyOf"] {
            let Some(branches) = schema.get(keyword).and_then(Value::as_array) else {
                continue;
            };
            let mut widest = Tally::leaf(level);
            let mut constructed = 0u64;
            for branch in branches {
                if !is_null_only(branch) {
                    constructed += 1;
                }
                let inner = read(self, branch, path);
                widest.fields = widest.fields.max(inner.fields);
                widest.depth = widest.depth.max(inner.depth);
                widest.choices = widest.choices.max(inner.choices);
            }
            tally.fields += widest.fields;
            tally.depth = tally.depth.max(widest.depth);
            tally.choices += widest.choices + constructed.saturating_sub(1);
        }
        if let Some(negated) = schema.get("not") {
            tally.depth = tally.depth.max(read(self, negated, path).depth);
        }
        tally
    }

    fn reference(
        &mut self,
        pointer: &str,
        role: Role,
        level: u64,
        path: &mut Vec<String>,
    ) -> Tally {
        if path.iter().any(|seen| seen == pointer) {
            return Tally::leaf(level);
        }
        let Some(target) = resolve_pointer(self.root, pointer) else {
            return Tally::leaf(level);
        };
        let mut path_key = path.clone();
        path_key.sort_unstable();
        let key = (pointer.to_string(), role, level, path_key);
        if let Some(known) = self.memo.get(&key) {
            return *known;
        }
        path.push(pointer.to_string());
        let tally = match role {
            Role::Value => self.value(target, level, path),
            // A referenced definition stands on its own: it does not borrow the properties of
            // the object that refers to it.
            Role::Node => self.node(target, level, None, path),
        };
        path.pop();
        self.memo.insert(key, tally);
        tally
    }
}

/// Whether `schema` is an object level of its own (and so sits one level below its holder): it
/// declares at least one property. An object without properties is a value the agent fills
/// freely, not a level it constructs.
fn has_properties(schema: &Value) -> bool {
    schema
        .get("properties")
        .and_then(Value::as_object)
        .is_some_and(|properties| !properties.is_empty())
}

/// A `{"type": "null"}` branch: the nullable idiom, nothing to construct.
fn is_null_only(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(kind)) => kind == "null",
        Some(Value::Array(kinds)) => {
            !kinds.is_empty() && kinds.iter().all(|k| k.as_str() == Some("null"))
        }
        _ => false,
    }
}

/// Resolves a same-document reference (`#`, `#/$defs/Name`, percent- and `~`-escaped).
fn resolve_pointer<'v>(root: &'v Value, reference: &str) -> Option<&'v Value> {
    let fragment = reference.strip_prefix('#')?;
    let fragment = percent_decode(fragment)?;
    if fragment.is_empty() {
        return Some(root);
    }
    if !fragment.starts_with('/') {
        // A plain-name fragment (an `$anchor`) is not a pointer.
        return None;
    }
    root.pointer(&fragment)
}

fn percent_decode(text: &str) -> Option<String> {
    if !text.contains('%') {
        return Some(text.to_string());
    }
    let bytes = text.as_bytes();
    let mut decoded = Vec::with_capacity(bytes.len());
    let mut index = 0;
    while index < bytes.len() {
        if bytes[index] == b'%' {
            let hex = text.get(index + 1..index + 3)?;
            decoded.push(u8::from_str_radix(hex, 16).ok()?);
            index += 3;
        } else {
            decoded.push(bytes[index]);
            index += 1;
        }
    }
    String::from_utf8(decoded).ok()
}

/// The prefilter's pair rule: the dearer tool costs at least twice the cheaper one and at
/// least 4 more.
pub fn is_shadow_candidate(cheap: u64, expensive: u64) -> bool {
    u128::from(expensive) >= 2 * u128::from(cheap) && expensive >= cheap.saturating_add(4)
}

/// The shadow-candidate pairs of a tool set, given each tool's name and invocation cost in
/// listing order.
///
/// Each tool is considered as the dearer side. Its qualifying siblings are the other tools it
/// costs at least twice as much as and at least 4 more than ([`is_shadow_candidate`]); of
/// those it is paired with the dearest one (the specification's proxy for the nearest in
/// capability), so there is at most one candidate per tool. Among equally dear qualifying
/// siblings the one whose name sorts first (code-point order) is taken, so the result does
/// not depend on listing order; the candidates themselves come in the order of `tools`.
pub fn shadow_candidates<S: AsRef<str>>(tools: &[(S, u64)]) -> Vec<ShadowCandidate> {
    let mut candidates = Vec::new();
    for (index, (name, cost)) in tools.iter().enumerate() {
        let cheaper = tools
            .iter()
            .enumerate()
            .filter(|(other, (_, sibling_cost))| {
                *other != index && is_shadow_candidate(*sibling_cost, *cost)
            })
            .map(|(_, (sibling, sibling_cost))| (sibling.as_ref(), *sibling_cost))
            .reduce(|best, next| {
                let dearer = next.1 > best.1;
                let same_cost_first_name = next.1 == best.1 && next.0 < best.0;
                if dearer || same_cost_first_name {
                    next
                } else {
                    best
                }
            });
        if let Some((sibling, sibling_cost)) = cheaper {
            candidates.push(ShadowCandidate {
                tool: name.as_ref().to_string(),
                invocation_cost: *cost,
                cheaper_sibling: sibling.to_string(),
                cheaper_sibling_invocation_cost: sibling_cost,
            });
        }
    }
    candidates
}

/// The shadow candidates of raw tools in listing order (costs computed from their input
/// schemas; tools without a string name are skipped, as an export never holds them).
pub fn shadow_candidates_of_tools(tools: &[Value]) -> Vec<ShadowCandidate> {
    let costs: Vec<(&str, u64)> = tools
        .iter()
        .filter_map(|tool| {
            let name = tool.get("name")?.as_str()?;
            Some((
                name,
                invocation_cost(tool.get("inputSchema")).invocation_cost,
            ))
        })
        .collect();
    shadow_candidates(&costs)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    /// An object schema of string properties, all of them required.
    fn strings(names: &[&str]) -> Value {
        strings_requiring(names, names)
    }

    fn strings_requiring(names: &[&str], required: &[&str]) -> Value {
        let properties: Map<String, Value> = names
            .iter()
            .map(|name| (name.to_string(), json!({"type": "string"})))
            .collect();
        json!({"type": "object", "properties": properties, "required": required})
    }

    fn cost(schema: Value) -> (u64, u64, u64, u64) {
        let signals = context_signals(&json!({"name": "t", "inputSchema": schema}));
        assert!(
            signals.required_field_count >= signals.required_param_count,
            "requiredFieldCount is at least requiredParamCount by construction"
        );
        (
            signals.required_field_count,
            signals.schema_depth,
            signals.union_choice_count,
            signals.invocation_cost,
        )
    }

    const EIGHT: [&str; 8] = ["a", "b", "c", "d", "e", "f", "g", "h"];

    #[test]
    fn the_specifications_flat_and_wrapped_examples() {
        assert_eq!(
            cost(strings(&["year", "team", "stat", "player"])),
            (4, 1, 0, 4)
        );
        assert_eq!(cost(strings(&EIGHT)), (8, 1, 0, 8));
        let wrapped = json!({
            "type": "object",
            "properties": {"request": strings(&EIGHT)},
            "required": ["request"],
        });
        assert_eq!(cost(wrapped), (9, 2, 0, 11));
    }

    #[test]
    fn the_specifications_thirteen_example() {
        // One required object requiring three fields; one of them an object over a three-branch
        // discriminated union whose widest branch requires one field.
        let schema = json!({
            "type": "object",
            "properties": {
                "selection": {
                    "type": "object",
                    "properties": {
                        "cohort": {"type": "string"},
                        "period": {"type": "string"},
                        "metric": {
                            "type": "object",
                            "anyOf": [
                                {"type": "object", "properties": {"op": {"const": "sum"}}, "required": ["op"]},
                                {"type": "object", "properties": {"op": {"const": "avg"}, "window": {"type": "integer"}}, "required": ["op"]},
                                {"type": "object", "properties": {"op": {"const": "top"}, "n": {"type": "integer"}}, "required": ["op"]},
                            ],
                        },
                    },
                    "required": ["cohort", "period", "metric"],
                },
                "verbose": {"type": "boolean"},
            },
            "required": ["selection"],
        });
        assert_eq!(cost(schema), (5, 3, 2, 13));
    }

    #[test]
    fn only_the_widest_union_branch_counts_fields() {
        let schema = json!({
            "type": "object",
            "properties": {"target": {"type": "object", "oneOf": [
                strings(&["x"]), strings(&["x", "y", "z"]), strings(&["y"]),
            ]}},
            "required": ["target"],
        });
        assert_eq!(cost(schema), (4, 2, 2, 10));
    }

    #[test]
    fn widest_branch_for_fields_deepest_branch_for_depth() {
        let schema = json!({
            "type": "object",
            "properties": {"target": {"oneOf": [
                strings(&["x", "y", "z"]),
                {"type": "object", "properties": {"inner": strings(&["w"])}, "required": ["inner"]},
            ]}},
            "required": ["target"],
        });
        assert_eq!(cost(schema), (4, 3, 1, 10));
    }

    #[test]
    fn unions_on_the_root_and_on_scalars_are_choices() {
        let root_union = json!({
            "type": "object",
            "properties": {"device": {"type": "string"}},
            "required": ["device"],
            "oneOf": [strings(&["ascii"]), strings(&["base64"])],
        });
        assert_eq!(cost(root_union), (2, 1, 1, 4));
        let scalar_union = json!({
            "type": "object",
            "properties": {"id": {"anyOf": [{"type": "integer"}, {"type": "string"}]}},
            "required": ["id"],
        });
        assert_eq!(cost(scalar_union), (1, 1, 1, 3));
    }

    #[test]
    fn the_nullable_idiom_enums_and_type_arrays_are_not_choices() {
        let nullable = json!({
            "type": "object",
            "properties": {"label": {"anyOf": [{"type": "string"}, {"type": "null"}]}},
            "required": ["label"],
        });
        assert_eq!(cost(nullable), (1, 1, 0, 1));
        let values = json!({
            "type": "object",
            "properties": {"mode": {"enum": ["x", "y", "z"]}, "v": {"type": ["string", "number", "null"]}},
            "required": ["mode", "v"],
        });
        assert_eq!(cost(values), (2, 1, 0, 2));
        // Two constructed branches plus null: one choice, not two.
        let nullable_union = json!({
            "type": "object",
            "properties": {"v": {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "null"}]}},
            "required": ["v"],
        });
        assert_eq!(cost(nullable_union), (1, 1, 1, 3));
    }

    #[test]
    fn optional_parts_cost_nothing() {
        let schema = json!({
            "type": "object",
            "properties": {
                "id": {"type": "string"},
                "filter": {"type": "object", "properties": {"range": strings(&["from", "to"])}, "required": ["range"]},
                "pick": {"oneOf": [{"type": "string"}, {"type": "integer"}, {"type": "boolean"}]},
            },
            "required": ["id"],
        });
        assert_eq!(cost(schema), (1, 1, 0, 1));
        let only_optional =
            json!({"type": "object", "properties": {"verbose": {"type": "boolean"}}});
        assert_eq!(cost(only_optional), (0, 1, 0, 0));
    }

    #[test]
    fn an_array_of_objects_adds_a_level() {
        let schema = json!({
            "type": "object",
            "properties": {"edits": {"type": "array", "items": strings_requiring(&["path", "why"], &["path"])}},
            "required": ["edits"],
        });
        assert_eq!(cost(schema), (2, 2, 0, 4));
        let scalars = json!({
            "type": "object",
            "properties": {"tags": {"type": "array", "items": {"type": "string"}}},
            "required": ["tags"],
        });
        assert_eq!(cost(scalars), (1, 1, 0, 1));
    }

    #[test]
    fn references_resolve_into_defs_and_definitions() {
        for (keyword, pointer) in [
            ("$defs", "#/$defs/Target"),
            ("definitions", "#/definitions/Target"),
        ] {
            let schema = json!({
                "type": "object",
                "properties": {"target": {"$ref": pointer}},
                "required": ["target"],
                keyword: {"Target": strings(&["host", "port"])},
            });
            assert_eq!(cost(schema), (3, 2, 0, 5), "{keyword}");
        }
        let escaped = json!({
            "type": "object",
            "properties": {"target": {"$ref": "#/$defs/a~1b%20c"}},
            "required": ["target"],
            "$defs": {"a/b c": strings(&["x"])},
        });
        assert_eq!(cost(escaped), (2, 2, 0, 4));
        let remote = json!({
            "type": "object",
            "properties": {"target": {"$ref": "https://example.invalid/schema.json"}},
            "required": ["target"],
        });
        assert_eq!(cost(remote), (1, 1, 0, 1));
    }

    #[test]
    fn a_definition_required_twice_counts_twice() {
        let schema = json!({
            "type": "object",
            "properties": {"from": {"$ref": "#/$defs/Point"}, "to": {"$ref": "#/$defs/Point"}},
            "required": ["from", "to"],
            "$defs": {"Point": strings(&["lat", "lon"])},
        });
        assert_eq!(cost(schema), (6, 2, 0, 8));
    }

    #[test]
    fn a_recursive_reference_stops_at_the_repeat() {
        let schema = json!({
            "type": "object",
            "properties": {"head": {"$ref": "#/$defs/Cell"}},
            "required": ["head"],
            "$defs": {"Cell": {
                "type": "object",
                "properties": {"item": {"type": "string"}, "rest": {"$ref": "#/$defs/Cell"}},
                "required": ["item", "rest"],
            }},
        });
        assert_eq!(cost(schema), (3, 2, 0, 5));
        let root_recursion = json!({
            "type": "object",
            "properties": {"child": {"$ref": "#"}},
            "required": ["child"],
        });
        assert_eq!(cost(root_recursion), (2, 2, 0, 4));
    }

    #[test]
    fn all_of_branches_add_up() {
        let schema = json!({
            "type": "object",
            "properties": {"config": {"allOf": [strings(&["x", "y"]), strings(&["z"])]}},
            "required": ["config"],
        });
        assert_eq!(cost(schema), (4, 2, 0, 6));
    }

    #[test]
    fn not_counts_for_depth_only() {
        let schema = json!({
            "type": "object",
            "properties": {"spec": {
                "type": "object",
                "properties": {"kind": {"type": "string"}},
                "not": {"type": "object", "properties": {"inner": strings(&["q"])}, "required": ["inner"]},
            }},
            "required": ["spec"],
        });
        assert_eq!(cost(schema), (1, 3, 0, 5));
    }

    #[test]
    fn branches_naming_only_required_use_the_parents_properties() {
        let schema = json!({
            "type": "object",
            "properties": {"device": {"type": "string"}, "ascii": {"type": "string"}, "base64": {"type": "string"}},
            "required": ["device"],
            "oneOf": [{"required": ["ascii"]}, {"required": ["base64"]}],
        });
        assert_eq!(cost(schema), (2, 1, 1, 4));
    }

    #[test]
    fn depth_is_capped_at_ten() {
        let mut schema = strings(&["leaf"]);
        for _ in 0..14 {
            schema =
                json!({"type": "object", "properties": {"next": schema}, "required": ["next"]});
        }
        assert_eq!(cost(schema), (10, 10, 0, 10 + 2 * 9));
    }

    #[test]
    fn shared_definitions_do_not_explode() {
        // Each level refers to the next definition from eight properties: tens of millions of
        // paths, each counted, in the time of one walk per definition.
        let mut defs = Map::new();
        defs.insert("L9".into(), strings(&["v"]));
        for level in (1..9).rev() {
            let next = format!("#/$defs/L{}", level + 1);
            let properties: Map<String, Value> = EIGHT
                .iter()
                .map(|p| (p.to_string(), json!({"$ref": next})))
                .collect();
            defs.insert(
                format!("L{level}"),
                json!({"type": "object", "properties": properties, "required": EIGHT}),
            );
        }
        let schema = json!({
            "type": "object",
            "properties": {"root": {"$ref": "#/$defs/L1"}},
            "required": ["root"],
            "$defs": defs,
        });
        let started = std::time::Instant::now();
        let (fields, depth, _, _) = cost(schema);
        // `root`, then 8^k fields in the 8^(k-1) copies of L1..L8, then `v` in each of the 8^8
        // copies of L9.
        let expected: u64 = (0..=8).map(|k| 8u64.pow(k)).sum::<u64>() + 8u64.pow(8);
        assert_eq!((fields, depth), (expected, 10));
        assert!(started.elapsed() < std::time::Duration::from_secs(5));
    }

    #[test]
    fn an_object_parameter_without_properties_adds_no_level() {
        // The reference counts a property-less object as a leaf: one required field, depth 1.
        for free in [
            json!({"type": "object"}),
            json!({"type": "object", "properties": {}}),
            json!({"type": "object", "additionalProperties": {"type": "string"}}),
        ] {
            let schema =
                json!({"type": "object", "properties": {"config": free}, "required": ["config"]});
            let (fields, depth, choices, cost_value) = cost(schema);
            assert_eq!((fields, depth, choices, cost_value), (1, 1, 0, 1));
        }
        // An object with properties is still a level of its own.
        let nested = json!({"type": "object", "properties": {"config": {"type": "object",
            "properties": {"name": {"type": "string"}}, "required": ["name"]}}, "required": ["config"]});
        assert_eq!(cost(nested), (2, 2, 0, 4));
    }

    #[test]
    fn absent_empty_or_property_less_schemas_cost_nothing() {
        for schema in [
            None,
            Some(json!(null)),
            Some(json!({})),
            Some(json!({"type": "object"})),
            Some(json!({"type": "object", "properties": {}})),
            Some(json!({"type": "object", "properties": {}, "required": []})),
        ] {
            let mut tool = json!({"name": "ping", "description": "Check the server answers."});
            if let Some(schema) = schema.clone() {
                tool["inputSchema"] = schema;
            }
            let signals = context_signals(&tool);
            assert_eq!(
                (
                    signals.required_field_count,
                    signals.schema_depth,
                    signals.union_choice_count,
                    signals.invocation_cost
                ),
                (0, 0, 0, 0),
                "{schema:?}"
            );
            assert_eq!(signals.param_count, 0);
            assert_eq!(signals.schema_description_coverage, 100);
        }
    }

    #[test]
    fn the_published_per_tool_example_signals() {
        // Four parameters, one required, two described (an empty description does not count).
        let tool = json!({
            "name": "update_drive",
            "description": "Updates a drive.",
            "inputSchema": {
                "type": "object",
                "properties": {
                    "driveId": {"type": "string", "description": "The drive."},
                    "label": {"type": "string", "description": "New label."},
                    "tags": {"type": "array", "items": {"type": "string"}},
                    "memo": {"type": "string", "description": ""},
                },
                "required": ["driveId"],
            },
        });
        let signals = context_signals(&tool);
        assert_eq!(
            signals,
            ContextSignals {
                param_count: 4,
                required_param_count: 1,
                params_with_descriptions: 2,
                params_with_enums: 0,
                schema_description_coverage: 50,
                has_nested_objects: false,
                has_output_schema: false,
                has_annotations: false,
                annotation_values: AnnotationValues::default(),
                title_is_meaningful: false,
                definition_bytes: digest::canonical_definition_bytes(&tool).len() as u64,
                input_hash: digest::input_hash(&tool),
                required_field_count: 1,
                schema_depth: 1,
                union_choice_count: 0,
                invocation_cost: 1,
            }
        );
    }

    #[test]
    fn coverage_rounds_half_up_on_the_exact_ratio() {
        assert_eq!(schema_description_coverage(0, 0), 100);
        assert_eq!(schema_description_coverage(2, 3), 67);
        assert_eq!(schema_description_coverage(1, 3), 33);
        assert_eq!(schema_description_coverage(0, 2), 0);
        assert_eq!(schema_description_coverage(3, 3), 100);
        // Ties: Python's round() would give 12, 38 and 2.
        assert_eq!(schema_description_coverage(1, 8), 13);
        assert_eq!(schema_description_coverage(3, 8), 38);
        assert_eq!(schema_description_coverage(1, 40), 3);
    }

    #[test]
    fn enums_nested_objects_annotations_and_output_schema() {
        let tool = json!({
            "name": "run",
            "inputSchema": {"type": "object", "properties": {
                "mode": {"type": "string", "enum": ["fast", "slow"]},
                "level": {"enum": [1, 2]},
                "opts": {"type": ["object", "null"], "properties": {"x": {"type": "string"}}},
            }},
            "outputSchema": {"type": "object", "properties": {"ok": {"type": "boolean"}}},
            "annotations": {"title": "Run", "readOnlyHint": false, "openWorldHint": true, "idempotentHint": "yes"},
        });
        let signals = context_signals(&tool);
        assert_eq!(signals.params_with_enums, 2);
        assert!(signals.has_nested_objects);
        assert!(signals.has_output_schema);
        assert!(signals.has_annotations);
        assert_eq!(
            signals.annotation_values,
            AnnotationValues {
                read_only: Some(false),
                destructive: None,
                idempotent: None,
                open_world: Some(true),
            }
        );
        let bare = context_signals(&json!({"name": "run", "outputSchema": {}, "annotations": {}}));
        assert!(!bare.has_output_schema);
        assert!(!bare.has_annotations);
        assert!(!bare.has_nested_objects);
    }

    #[test]
    fn a_title_is_meaningful_when_it_differs_and_is_longer() {
        let title = |title: Value| {
            context_signals(&json!({"name": "run_tests", "title": title, "annotations": {"title": "Run the whole test suite"}}))
                .title_is_meaningful
        };
        assert!(!title(Value::Null));
        assert!(!title(json!("run_tests")));
        assert!(!title(json!("Run")));
        assert!(
            !title(json!("Run tésts")),
            "same length in characters, though longer in bytes"
        );
        assert!(title(json!("Run the test suite")));
    }

    #[test]
    fn the_prefilter_rule() {
        assert!(is_shadow_candidate(4, 13));
        assert!(is_shadow_candidate(0, 4));
        assert!(!is_shadow_candidate(0, 3), "the absolute gap");
        assert!(!is_shadow_candidate(10, 19), "the ratio");
        assert!(is_shadow_candidate(10, 20));
        assert!(
            !is_shadow_candidate(u64::MAX / 2 + 1, u64::MAX),
            "no overflow"
        );
    }

    #[test]
    fn each_tool_is_paired_with_its_dearest_qualifying_sibling() {
        let tools = [
            ("ping", 0),
            ("get_stat", 4),
            ("get_team", 6),
            ("query_panel", 13),
            ("export_all", 19),
        ];
        let pairs: Vec<(String, String)> = shadow_candidates(&tools)
            .into_iter()
            .map(|c| (c.tool, c.cheaper_sibling))
            .collect();
        let expected = [
            ("get_stat", "ping"),
            ("get_team", "ping"),
            ("query_panel", "get_team"),
            ("export_all", "get_team"),
        ];
        assert_eq!(
            pairs,
            expected
                .map(|(a, b)| (a.to_string(), b.to_string()))
                .to_vec()
        );
        let first = &shadow_candidates(&tools)[2];
        assert_eq!(
            (first.invocation_cost, first.cheaper_sibling_invocation_cost),
            (13, 6)
        );
    }

    #[test]
    fn ties_go_to_the_first_name_whatever_the_listing_order() {
        let tools = [("zeta", 2), ("query", 12), ("alpha", 2), ("mid", 2)];
        let candidates = shadow_candidates(&tools);
        assert_eq!(candidates.len(), 1);
        assert_eq!(candidates[0].cheaper_sibling, "alpha");
        let reordered = [("mid", 2), ("alpha", 2), ("query", 12), ("zeta", 2)];
        assert_eq!(shadow_candidates(&reordered), candidates);
        assert!(shadow_candidates(&[("only", 40)]).is_empty());
        assert!(shadow_candidates::<&str>(&[]).is_empty());
    }

    #[test]
    fn candidates_from_raw_tools() {
        let tools = [
            json!({"name": "list_all", "inputSchema": {"type": "object", "properties": {}}}),
            json!({"name": "lookup", "inputSchema": strings(&["a", "b", "c", "d"])}),
            json!({"name": "cheap", "inputSchema": strings(&["a"])}),
        ];
        let candidates = shadow_candidates_of_tools(&tools);
        assert_eq!(
            candidates,
            vec![ShadowCandidate {
                tool: "lookup".into(),
                invocation_cost: 4,
                cheaper_sibling: "list_all".into(),
                cheaper_sibling_invocation_cost: 0,
            }]
        );
    }
}
