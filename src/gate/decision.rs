//! Which decision rule applies to a run, and the pairs in the form each rule reads.

use tdqs_core::arith::Tenths;
use tdqs_core::decide::noise::{self, Assessment, NoiseNext, PairTools, ToolScore, Unlisted};
use tdqs_core::decide::{
    self, ConfirmationRule, DecisionRule, Medians, Next, PairMeans, RuleInUse,
};
use tdqs_core::exit::Verdict;
use tdqs_core::report::Pair;
use tdqs_core::score::{AnswerSource, SideScore};

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

/// Whether the judge's answers carry noise: a model's do; a deterministic judge (the static
/// rules) answers the same question the same way, so its values are exact and the rule must
/// not lend them the model's noise floor.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum JudgeNoise {
    Model,
    None,
}

impl JudgeNoise {
    /// The noise of a judge that is (or is not) deterministic.
    pub fn of(deterministic: bool) -> JudgeNoise {
        if deterministic {
            JudgeNoise::None
        } else {
            JudgeNoise::Model
        }
    }
}

fn side_tools(
    side: &SideScore,
    noise: JudgeNoise,
) -> std::collections::BTreeMap<String, ToolScore> {
    side.tools
        .iter()
        .map(|(name, t)| {
            (
                name.clone(),
                ToolScore {
                    tdqs: t.tdqs,
                    noisy: noise == JudgeNoise::Model && t.answer == AnswerSource::Judged,
                },
            )
        })
        .collect()
}

/// A scored pair as the noise-aware rule reads it.
pub(crate) fn pair_tools(pair: &Pair, noise: JudgeNoise) -> PairTools {
    PairTools {
        base: side_tools(&pair.base, noise),
        head: side_tools(&pair.head, noise),
        base_unlisted: unlisted(&pair.base, noise),
        head_unlisted: unlisted(&pair.head, noise),
    }
}

/// The tools a summarised report left out of a side, as the noise-aware rule counts them.
fn unlisted(side: &SideScore, noise: JudgeNoise) -> Unlisted {
    side.omitted
        .as_ref()
        .map(|o| Unlisted {
            count: o.count,
            tenths_sum: o.tdqs_tenths_sum,
            noisy: if noise == JudgeNoise::Model {
                o.judged
            } else {
                0
            },
        })
        .unwrap_or_default()
}

/// Decides from the pairs scored so far, or asks for one more.
pub fn step(
    pairs: &[Pair],
    rule: RuleInUse,
    confirmation: ConfirmationRule,
    noise: JudgeNoise,
) -> Step {
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
            let tools: Vec<PairTools> = pairs.iter().map(|p| pair_tools(p, noise)).collect();
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
