//! Which decision rule applies to a run, and the pairs in the form each rule reads.

use serde::{Deserialize, Serialize};

use crate::decide::noise::{self, Assessment, NoiseNext, PairTools, ToolScore};
use crate::decide::{self, ConfirmationRule, DecisionRule, Medians, Next, PairMeans};
use crate::exit::Verdict;
use crate::report::Pair;
use crate::score::arith::Tenths;
use crate::score::results::{AnswerSource, SideScore};
use crate::spec::pins::Pins;

/// The rule that decided a run, as the report records it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RuleInUse {
    pub name: DecisionRule,
    /// The per-tool guard (noise-aware rule only).
    #[serde(skip_serializing_if = "Option::is_none", default)]
    pub tool_drop: Option<Tenths>,
}

impl RuleInUse {
    /// Flag over pins for the rule; flag over configuration over 0.5 for the guard.
    pub fn resolve(
        flag: Option<DecisionRule>,
        pins: &Pins,
        tool_drop_flag: Option<Tenths>,
        tool_drop_config: Option<Tenths>,
    ) -> RuleInUse {
        let name = flag.unwrap_or_else(|| pins.decision_rule());
        let tool_drop = match name {
            DecisionRule::Reference => None,
            DecisionRule::NoiseAware => Some(
                tool_drop_flag
                    .or(tool_drop_config)
                    .unwrap_or(noise::DEFAULT_GUARD),
            ),
        };
        RuleInUse { name, tool_drop }
    }

    /// Later pairs re-ask only the tools whose question differs between the sides.
    pub fn reuses_unchanged(&self) -> bool {
        self.name == DecisionRule::NoiseAware
    }
}

/// One step of the decision.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    ScoreMore,
    Decided {
        verdict: Verdict,
        reason: String,
        medians: Option<Medians>,
        assessment: Option<Assessment>,
    },
}

fn side_tools(side: &SideScore) -> std::collections::BTreeMap<String, ToolScore> {
    side.tools
        .iter()
        .map(|(name, t)| {
            (
                name.clone(),
                ToolScore {
                    tdqs: t.tdqs,
                    noisy: t.answer == AnswerSource::Judged,
                },
            )
        })
        .collect()
}

/// A scored pair as the noise-aware rule reads it.
pub fn pair_tools(pair: &Pair) -> PairTools {
    PairTools {
        base: side_tools(&pair.base),
        head: side_tools(&pair.head),
    }
}

/// Decides from the pairs scored so far, or asks for one more.
pub fn step(pairs: &[Pair], rule: RuleInUse, confirmation: ConfirmationRule) -> Step {
    match rule.name {
        DecisionRule::Reference => {
            let means: Vec<PairMeans> = pairs
                .iter()
                .map(|p| PairMeans {
                    base: p.base.rollups.mean_tdqs.unwrap_or(Tenths(0)),
                    head: p.head.rollups.mean_tdqs.unwrap_or(Tenths(0)),
                })
                .collect();
            match decide::next(&means, confirmation) {
                Next::ScoreMore(_) => Step::ScoreMore,
                Next::Decided(d) => Step::Decided {
                    verdict: d.verdict,
                    reason: d.reason,
                    medians: d.medians,
                    assessment: None,
                },
            }
        }
        DecisionRule::NoiseAware => {
            let tools: Vec<PairTools> = pairs.iter().map(pair_tools).collect();
            match noise::next(
                &tools,
                rule.tool_drop.unwrap_or(noise::DEFAULT_GUARD),
                confirmation.confirmation_pairs_on_drop,
            ) {
                NoiseNext::ScoreMore(_) => Step::ScoreMore,
                NoiseNext::Decided {
                    verdict,
                    reason,
                    medians,
                    assessment,
                } => Step::Decided {
                    verdict,
                    reason,
                    medians,
                    assessment: Some(assessment),
                },
            }
        }
    }
}
