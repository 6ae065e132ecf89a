//! The TDQS rubric's vocabulary: the dimensions and the shape of a judge's answers.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

/// The six per-tool dimensions, in the specification's order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolDimension {
    PurposeClarity,
    UsageGuidelines,
    BehavioralTransparency,
    ParameterSemantics,
    ConcisenessStructure,
    ContextualCompleteness,
}

impl ToolDimension {
    pub const ALL: [ToolDimension; 6] = [
        ToolDimension::PurposeClarity,
        ToolDimension::UsageGuidelines,
        ToolDimension::BehavioralTransparency,
        ToolDimension::ParameterSemantics,
        ToolDimension::ConcisenessStructure,
        ToolDimension::ContextualCompleteness,
    ];

    /// The key in the model's answer and in `version.json` (`purpose_clarity`).
    pub fn key(self) -> &'static str {
        match self {
            ToolDimension::PurposeClarity => "purpose_clarity",
            ToolDimension::UsageGuidelines => "usage_guidelines",
            ToolDimension::BehavioralTransparency => "behavioral_transparency",
            ToolDimension::ParameterSemantics => "parameter_semantics",
            ToolDimension::ConcisenessStructure => "conciseness_structure",
            ToolDimension::ContextualCompleteness => "contextual_completeness",
        }
    }

    /// The key as registries publish it (`purposeClarity`).
    pub fn camel_key(self) -> &'static str {
        match self {
            ToolDimension::PurposeClarity => "purposeClarity",
            ToolDimension::UsageGuidelines => "usageGuidelines",
            ToolDimension::BehavioralTransparency => "behavioralTransparency",
            ToolDimension::ParameterSemantics => "parameterSemantics",
            ToolDimension::ConcisenessStructure => "concisenessStructure",
            ToolDimension::ContextualCompleteness => "contextualCompleteness",
        }
    }

    /// Human label (`purpose clarity`).
    pub fn label(self) -> &'static str {
        match self {
            ToolDimension::PurposeClarity => "purpose clarity",
            ToolDimension::UsageGuidelines => "usage guidelines",
            ToolDimension::BehavioralTransparency => "behavioral transparency",
            ToolDimension::ParameterSemantics => "parameter semantics",
            ToolDimension::ConcisenessStructure => "conciseness and structure",
            ToolDimension::ContextualCompleteness => "contextual completeness",
        }
    }

    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|d| d.key() == key || d.camel_key() == key)
    }
}

/// The four set-level (coherence) dimensions.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CoherenceDimension {
    Disambiguation,
    NamingConsistency,
    ToolCountAppropriateness,
    Completeness,
}

impl CoherenceDimension {
    pub const ALL: [CoherenceDimension; 4] = [
        CoherenceDimension::Disambiguation,
        CoherenceDimension::NamingConsistency,
        CoherenceDimension::ToolCountAppropriateness,
        CoherenceDimension::Completeness,
    ];

    pub fn key(self) -> &'static str {
        match self {
            CoherenceDimension::Disambiguation => "disambiguation",
            CoherenceDimension::NamingConsistency => "naming_consistency",
            CoherenceDimension::ToolCountAppropriateness => "tool_count_appropriateness",
            CoherenceDimension::Completeness => "completeness",
        }
    }

    pub fn camel_key(self) -> &'static str {
        match self {
            CoherenceDimension::Disambiguation => "disambiguation",
            CoherenceDimension::NamingConsistency => "namingConsistency",
            CoherenceDimension::ToolCountAppropriateness => "toolCountAppropriateness",
            CoherenceDimension::Completeness => "completeness",
        }
    }

    pub fn label(self) -> &'static str {
        match self {
            CoherenceDimension::Disambiguation => "disambiguation",
            CoherenceDimension::NamingConsistency => "naming consistency",
            CoherenceDimension::ToolCountAppropriateness => "tool count appropriateness",
            CoherenceDimension::Completeness => "completeness",
        }
    }

    pub fn from_key(key: &str) -> Option<Self> {
        Self::ALL
            .into_iter()
            .find(|d| d.key() == key || d.camel_key() == key)
    }
}

/// One dimension's score (an integer 1–5) with the judge's reason.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Judged {
    pub score: u8,
    pub justification: String,
}

/// A validated answer to the per-tool question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolAnswer {
    /// Exactly the six dimensions.
    pub scores: BTreeMap<ToolDimension, Judged>,
    pub annotation_contradiction: bool,
    pub summary: String,
}

/// A shadowing risk the coherence judge confirmed for a supplied candidate pair.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShadowingAnswer {
    pub tool: String,
    pub cheaper_sibling: String,
    pub justification: String,
}

/// A validated answer to the set-level (coherence) question.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CoherenceAnswer {
    /// Exactly the four dimensions.
    pub scores: BTreeMap<CoherenceDimension, Judged>,
    pub shadowing_risks: Vec<ShadowingAnswer>,
    pub summary: String,
}
