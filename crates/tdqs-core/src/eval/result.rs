//! One eval run as reported: the mode and who selected, the cases, the figures, the cost, and
//! the two roll-ups with their parts. Rendered as text by `eval::page`; the engine writes it as
//! JSON.

use serde::{Deserialize, Serialize};

use super::metrics::{CaseResult, Metrics};
use super::scores::{Composite, Health};
use super::Mode;
use crate::judge::TokenUsage;

/// The result of running one suite against one side's tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvalRun {
    pub mode: Mode,
    /// The sentence saying what the mode measures.
    pub mode_label: String,
    /// `synthetic`, `claude-code`, `anthropic` or `openai`.
    pub selector: String,
    /// The model asked (the heuristic's name in synthetic mode).
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    pub tool_count: usize,
    /// SHA-256 of the tool list the selector saw.
    pub tool_set_digest: String,
    /// SHA-256 of the case file's cases (two runs are paired only over the same suite).
    pub suite_digest: String,
    pub cases: Vec<CaseResult>,
    pub metrics: Metrics,
    /// Calls made to the model in this run (not from the cache).
    pub calls: usize,
    /// Answers replayed from the cache.
    pub cached: usize,
    /// Tokens of the calls made in this run.
    pub usage: TokenUsage,
    /// Wall time of the calls made in this run, summed, in milliseconds.
    pub latency_ms: u64,
    pub health: Health,
    pub composite: Composite,
}

/// The version of the `eval --json` document ([`EvalDocument`]), documented in docs/eval.md.
/// Raised when a key is removed or renamed or its meaning changes; adding a key keeps it.
/// 2: the composite's distinguishability counts requests that reached no tool against it, and
/// the health score's percentages round as mcp-toolgauge rounds them (half to even).
pub const EVAL_SCHEMA_VERSION: u32 = 2;

/// What `tdqs-gate eval --json` prints: the run's keys after `schemaVersion`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvalDocument<'a> {
    pub schema_version: u32,
    #[serde(flatten)]
    pub run: &'a EvalRun,
}

impl EvalRun {
    /// The versioned JSON document of this run.
    pub fn document(&self) -> EvalDocument<'_> {
        EvalDocument {
            schema_version: EVAL_SCHEMA_VERSION,
            run: self,
        }
    }
}
