//! Context signals of a tool (TDQS stage 1), invocation cost (v1.1) and the shadow-candidate
//! prefilter. Deterministic functions of the definitions.

use serde::{Deserialize, Serialize};

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
