//! The scored results of a side, as they appear in reports.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::arith::{Tenths, Tier};
use crate::judge::TokenUsage;
use crate::rubric::{CoherenceDimension, Judged, ToolDimension};
use crate::spec::signals::{ContextSignals, ShadowCandidate};

/// Flags of the specification's post-processing.
pub const FLAG_NO_DESCRIPTION: &str = "No Description";
pub const FLAG_TAUTOLOGICAL: &str = "Tautological Description";
pub const FLAG_ANNOTATION_CONTRADICTION: &str = "Annotation Contradiction";
pub const FLAG_SHADOWING_RISK: &str = "Shadowing Risk";

/// How a tool's answer was obtained.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum AnswerSource {
    /// Asked of the judge for this side.
    Judged,
    /// The identical question was asked once for both sides of the pair; this is that answer.
    Shared,
    /// A hard gate decided without a model call (empty description).
    HardGate,
}

/// One tool's TDQS result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolResult {
    pub name: String,
    pub definition_hash: String,
    pub context_signals: ContextSignals,
    /// The six scores after post-processing (snake_case keys).
    pub scores: BTreeMap<ToolDimension, u8>,
    pub justifications: BTreeMap<ToolDimension, Judged>,
    pub tdqs: Tenths,
    pub tier: Tier,
    pub flags: Vec<String>,
    /// Dimensions scoring below 3.
    pub smells: Vec<ToolDimension>,
    pub summary: String,
    pub server_flags: Vec<String>,
    pub annotation_contradiction: bool,
    pub answer: AnswerSource,
}

/// A confirmed shadowing risk after the referential checks.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShadowingRisk {
    pub tool: String,
    pub invocation_cost: u64,
    pub cheaper_sibling: String,
    pub cheaper_sibling_invocation_cost: u64,
    pub justification: String,
}

/// The set-level result.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CoherenceResult {
    pub scores: BTreeMap<CoherenceDimension, u8>,
    pub coherence_score: Tenths,
    pub coherence_tier: Tier,
    pub shadow_candidates: Vec<ShadowCandidate>,
    pub shadowing_risks: Vec<ShadowingRisk>,
    pub coherence_summary: String,
    pub coherence_justifications: BTreeMap<CoherenceDimension, Judged>,
    pub answer: AnswerSource,
}

/// Every rollup of a side, each rounded once from exact inputs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Rollups {
    pub tool_count: u64,
    pub scored_tool_count: u64,
    /// The exact mean as a fraction `p/q` (information; the rounded mean decides).
    pub exact_mean_tdqs: Option<String>,
    pub mean_tdqs: Option<Tenths>,
    pub min_tdqs: Option<Tenths>,
    pub min_tool: Option<String>,
    pub description_quality_score: Option<Tenths>,
    pub description_quality_tier: Option<Tier>,
    pub coherence_score: Tenths,
    pub coherence_tier: Tier,
    pub overall_score: Option<Tenths>,
    pub overall_tier: Option<Tier>,
}

/// One side of one pair, fully scored.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SideScore {
    pub server_name: String,
    pub set_hash: String,
    /// Tool name → result, sorted by name.
    pub tools: BTreeMap<String, ToolResult>,
    pub coherence: CoherenceResult,
    pub rollups: Rollups,
    /// Tools left out of `tools` by a summarised report (see [`crate::report::summary`]): they
    /// count in the rollups through this summary. Absent when every tool is listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted: Option<OmittedScores>,
}

impl SideScore {
    /// Every tool of the side: the listed ones and those a summarised report left out.
    pub fn tool_count(&self) -> usize {
        self.tools.len() + self.omitted.as_ref().map_or(0, |o| o.count as usize)
    }
}

/// The tools a summarised report leaves out of one side of one pair: unchanged definitions whose
/// scores are the same on both sides in every pair. Exact enough to recompute the rollups and the
/// decision; the digest pins down the entries themselves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OmittedScores {
    pub count: u64,
    /// The sum of their TDQS in tenths (exact: each TDQS is a whole number of tenths).
    pub tdqs_tenths_sum: i64,
    /// Their exact mean TDQS as `p/q` (information; the sum above is what recomputes).
    pub exact_mean_tdqs: String,
    /// The lowest of them (ties: the first name), as the side's `minTool` would name it.
    pub min_tool: String,
    pub min_tdqs: Tenths,
    /// How many were answered by a call of their own (`answer: judged`): the noise-aware rule
    /// counts each as carrying the noise floor.
    pub judged: u64,
    /// SHA-256 over their full entries (each tool's result as compact JSON, in name order): a
    /// report that lists every tool (`--full-report`) gives the entries this digest names.
    pub results_digest: String,
}

/// Counters of one scoring batch (a pair or a single side).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CallStats {
    /// Distinct questions answered by the judge.
    pub questions: u64,
    /// Judge invocations, retries included.
    pub attempts: u64,
    /// Answers used for both sides of a pair because the question was identical.
    pub shared_answers: u64,
    /// Tools decided by a hard gate without a call.
    pub hard_gated: u64,
    /// Answers reused from an earlier pair of the same run: every answer of a deterministic
    /// judge; with the noise-aware rule, unchanged tools and the coherence questions.
    #[serde(default)]
    pub reused_answers: u64,
    /// Answers read from the persistent answer cache, written by an earlier run with the same
    /// judge, pins and question: each counts as that question's one draw of this run.
    #[serde(default)]
    pub cached_answers: u64,
    pub tokens: TokenUsage,
}

impl CallStats {
    pub fn add(&mut self, other: &CallStats) {
        self.questions += other.questions;
        self.attempts += other.attempts;
        self.shared_answers += other.shared_answers;
        self.hard_gated += other.hard_gated;
        self.reused_answers += other.reused_answers;
        self.cached_answers += other.cached_answers;
        self.tokens.add(&other.tokens);
    }
}
