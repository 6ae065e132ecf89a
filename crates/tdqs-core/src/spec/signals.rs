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
mod tests;
