//! The registry forecast: what a TDQS registry would show for the server after the merge.
//!
//! A registry scores a server once and publishes the specification's rollups: the overall score
//! and tier (70 % description quality, 30 % coherence), description quality (60 % mean TDQS,
//! 40 % the lowest tool), the coherence score, and the lowest tools. The gate already computes
//! those rollups exactly for each side of each pair ([`crate::arith::Weights::rollups_with`]);
//! the forecast restates the first pair's, the one scoring that corresponds to the registry's
//! single run, as the head would stand and how that differs from the base. It is a forecast:
//! the registry's own judge, its model and its sampling give its own numbers.

use serde::{Deserialize, Serialize};

use crate::arith::{Tenths, Tier};
use crate::score::{Rollups, SideScore};

/// How many of the lowest tools a forecast names.
pub const LOWEST_TOOLS: usize = 3;

/// What a registry would show for one side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegistryView {
    pub overall_score: Option<Tenths>,
    pub overall_tier: Option<Tier>,
    pub description_quality_score: Option<Tenths>,
    pub description_quality_tier: Option<Tier>,
    pub coherence_score: Tenths,
    pub coherence_tier: Tier,
    pub mean_tdqs: Option<Tenths>,
    pub min_tdqs: Option<Tenths>,
    pub tool_count: u64,
}

impl RegistryView {
    fn of(r: &Rollups) -> RegistryView {
        RegistryView {
            overall_score: r.overall_score,
            overall_tier: r.overall_tier,
            description_quality_score: r.description_quality_score,
            description_quality_tier: r.description_quality_tier,
            coherence_score: r.coherence_score,
            coherence_tier: r.coherence_tier,
            mean_tdqs: r.mean_tdqs,
            min_tdqs: r.min_tdqs,
            tool_count: r.tool_count,
        }
    }
}

/// One of the head's lowest tools, with its base score when the base lists it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LowTool {
    pub tool: String,
    pub tdqs: Tenths,
    pub tier: Tier,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub base_tdqs: Option<Tenths>,
}

/// The forecast of one server.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Forecast {
    /// Always `forecast`: these are the gate's scores aggregated as a registry does, not the
    /// registry's.
    pub kind: String,
    pub server_name: String,
    /// The head, as the registry would show it after the merge.
    pub after_merge: RegistryView,
    /// The base, as the same judge scored it in the same pair.
    pub before: RegistryView,
    /// Head overall score minus base overall score (absent when either has none).
    pub overall_change: Option<Tenths>,
    pub tier_changed: bool,
    /// The head's lowest tools, lowest first (ties by name).
    pub lowest_tools: Vec<LowTool>,
}

/// The forecast from the first scored pair (a run that scored nothing has none). Call it before a
/// report is summarised, so that the lowest tools are chosen from every tool.
pub fn of_first_pair(base: &SideScore, head: &SideScore) -> Forecast {
    let after_merge = RegistryView::of(&head.rollups);
    let before = RegistryView::of(&base.rollups);
    let mut tools: Vec<(&String, Tenths, Tier)> = head
        .tools
        .iter()
        .map(|(name, t)| (name, t.tdqs, t.tier))
        .collect();
    tools.sort_by(|a, b| a.1.cmp(&b.1).then_with(|| a.0.cmp(b.0)));
    let lowest_tools = tools
        .into_iter()
        .take(LOWEST_TOOLS)
        .map(|(name, tdqs, tier)| LowTool {
            tool: name.clone(),
            tdqs,
            tier,
            base_tdqs: base.tools.get(name).map(|t| t.tdqs),
        })
        .collect();
    let overall_change = match (after_merge.overall_score, before.overall_score) {
        (Some(h), Some(b)) => Some(Tenths(h.0 - b.0)),
        _ => None,
    };
    Forecast {
        kind: "forecast".to_string(),
        server_name: head.server_name.clone(),
        tier_changed: after_merge.overall_tier != before.overall_tier,
        after_merge,
        before,
        overall_change,
        lowest_tools,
    }
}
