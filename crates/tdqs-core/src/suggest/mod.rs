//! Rewrites for fallen tools, proven before they are offered: what a rewrite may change and the
//! check that a proposal kept the rest ([`proposal`]), when the scored pairs let a proposal be
//! offered ([`verdict`]), the static judge's checklist of gaps ([`checklist`]), where a proposal
//! is shown — a suggestion block for the source line or a diff ([`render`]) — and the report of
//! a run as data (its page is `crate::report::suggestions`). The model calls are the engine's
//! (`src/suggest/`).

pub mod checklist;
pub mod proposal;
pub mod render;
pub mod verdict;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::arith::{Tenths, Tier};
use crate::judge::TokenUsage;
use crate::rubric::ToolDimension;

pub use checklist::ChecklistItem;
pub use verdict::PairOutcome;

/// What became of one tool's rewrite.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Status {
    /// Scored at least as high as the reference on every held dimension: offered.
    Offered,
    /// Asked for, but not offered (see `reason`).
    Withheld,
    /// A rule judge: the checklist of gaps, no rewrite.
    Checklist,
}

/// Where the proposal goes in the source.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "kebab-case")]
pub enum Placement {
    /// The description literal is on `line` of `path`: replace the line with `replacement`.
    Line {
        path: String,
        line: u32,
        original: String,
        replacement: String,
    },
    /// No single line holds the description: a diff of the definition.
    Diff { lines: Vec<String> },
}

/// One tool's rewrite.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolSuggestion {
    pub tool: String,
    pub status: Status,
    /// Why it was offered or withheld, in one sentence.
    pub reason: String,
    /// The dimensions the proposal had to hold (those that fell; all six on demand).
    pub held: Vec<ToolDimension>,
    /// The revised definition (also when withheld, so a reader can see what was refused).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub proposal: Option<Value>,
    /// Every scored pair: the reference's and the proposal's scores.
    #[serde(default)]
    pub pairs: Vec<PairOutcome>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reference_tdqs: Option<Tenths>,
    /// The proposal's TDQS from the median of its scores over the pairs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_tdqs: Option<Tenths>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub predicted_tier: Option<Tier>,
    /// Canonical definition bytes of the proposal minus those of the definition.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bytes_delta: Option<i64>,
    /// Tokens of the proposal minus those of the definition, each as compact JSON, counted as
    /// the report's cost section counts them (its tokenizer is named there and in `tokenizer`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokens_delta: Option<i64>,
    /// The tokenizer of `tokens_delta`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tokenizer: Option<String>,
    /// Judge invocations this tool cost (the rewrite request and every scoring, retries
    /// included).
    pub calls: u64,
    pub tokens: TokenUsage,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub placement: Option<Placement>,
    /// With a rule judge: what is missing, per held dimension.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub checklist: Vec<ChecklistItem>,
}

impl ToolSuggestion {
    /// A tool's entry before anything is asked or scored: no proposal, no figures.
    pub fn new(tool: &str, status: Status, held: Vec<ToolDimension>) -> ToolSuggestion {
        ToolSuggestion {
            tool: tool.to_string(),
            status,
            reason: String::new(),
            held,
            proposal: None,
            pairs: Vec::new(),
            reference_tdqs: None,
            predicted_tdqs: None,
            predicted_tier: None,
            bytes_delta: None,
            tokens_delta: None,
            tokenizer: None,
            calls: 0,
            tokens: TokenUsage::default(),
            placement: None,
            checklist: Vec::new(),
        }
    }
}

/// The rewrites of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Suggestions {
    /// True when a model wrote and scored the proposals; false for the rule judge's checklists.
    pub model_judged: bool,
    /// The cost cap: the most judge invocations the rewrites of the run may make.
    pub max_calls: u64,
    /// Judge invocations made for the rewrites.
    pub calls: u64,
    pub tools: Vec<ToolSuggestion>,
}
