//! The decision rule: PASS, BLOCK or INVALID from the mean TDQS of each pair.
//!
//! Pure functions, no I/O. The mean TDQS is compared as its rollup (the exact mean rounded half
//! up once). One pair decides when the head holds; a drop on the first pair is confirmed by two
//! more pairs, comparing the median of the base's means with the median of the head's.

pub mod noise;

use serde::{Deserialize, Serialize};

use crate::arith::{median, Tenths};
use crate::exit::Verdict;
use crate::spec::pins::Pins;

/// The confirmation rule of the pins.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ConfirmationRule {
    pub initial_pairs: usize,
    pub confirmation_pairs_on_drop: usize,
}

impl ConfirmationRule {
    /// The rule the pins fix (`confirmation` in `tdqs/version.json`).
    pub fn from_pins(pins: &Pins) -> Self {
        let c = pins.confirmation();
        ConfirmationRule {
            initial_pairs: c.initial_pairs as usize,
            confirmation_pairs_on_drop: c.confirmation_pairs_on_drop as usize,
        }
    }
}

impl Default for ConfirmationRule {
    fn default() -> Self {
        ConfirmationRule {
            initial_pairs: 1,
            confirmation_pairs_on_drop: 2,
        }
    }
}

/// Which rule decides. Both keep the pinned shape: one pair, two confirmation pairs on a drop,
/// the median per side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum DecisionRule {
    /// The default: changed tools only carry noise, a tolerance from the run's own spread, and
    /// the per-tool guard ([`noise`]).
    #[default]
    NoiseAware,
    /// The reference rule exactly: the rounded means, every question re-asked, no guard.
    Reference,
}

impl DecisionRule {
    pub fn as_str(self) -> &'static str {
        match self {
            DecisionRule::NoiseAware => "noise-aware",
            DecisionRule::Reference => "reference",
        }
    }

    pub fn parse(text: &str) -> Option<Self> {
        match text {
            "noise-aware" => Some(DecisionRule::NoiseAware),
            "reference" => Some(DecisionRule::Reference),
            _ => None,
        }
    }

    /// The rule the pins ask for (`confirmation.rule`), the noise-aware rule by default.
    pub fn from_pins(pins: &Pins) -> Self {
        pins.confirmation()
            .rule
            .as_deref()
            .and_then(DecisionRule::parse)
            .unwrap_or_default()
    }
}

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
        let name = flag.unwrap_or_else(|| DecisionRule::from_pins(pins));
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

/// The rounded mean TDQS of each side of one pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairMeans {
    pub base: Tenths,
    pub head: Tenths,
}

/// The medians over every pair, per side.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Medians {
    pub base: Tenths,
    pub head: Tenths,
}

/// What to do after the pairs scored so far.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// Score this many more pairs, then ask again.
    ScoreMore(usize),
    Decided(Decision),
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Decision {
    pub verdict: Verdict,
    /// One sentence.
    pub reason: String,
    pub medians: Option<Medians>,
}

/// The number of pairs the rule requires given the first pair's means.
pub(crate) fn required_pairs(first: PairMeans, rule: ConfirmationRule) -> usize {
    if first.head >= first.base {
        rule.initial_pairs
    } else {
        rule.initial_pairs + rule.confirmation_pairs_on_drop
    }
}

/// Decides, or asks for more pairs. `pairs` are in scoring order.
pub fn next(pairs: &[PairMeans], rule: ConfirmationRule) -> Next {
    let Some(first) = pairs.first().copied() else {
        return Next::ScoreMore(rule.initial_pairs.max(1));
    };
    let required = required_pairs(first, rule);
    if pairs.len() < required {
        return Next::ScoreMore(required - pairs.len());
    }
    if first.head >= first.base {
        return Next::Decided(Decision {
            verdict: Verdict::Pass,
            reason: format!(
                "The head's mean TDQS {} is not below the base's {} on the first pair.",
                first.head, first.base
            ),
            medians: None,
        });
    }
    let pairs = &pairs[..required];
    let bases: Vec<Tenths> = pairs.iter().map(|p| p.base).collect();
    let heads: Vec<Tenths> = pairs.iter().map(|p| p.head).collect();
    let (Some(base), Some(head)) = (median(&bases), median(&heads)) else {
        // An even number of pairs has no single median; the pins validation refuses such rules.
        return Next::Decided(Decision {
            verdict: Verdict::Invalid,
            reason: format!("The confirmation rule needs an odd number of pairs, not {required}."),
            medians: None,
        });
    };
    let medians = Some(Medians { base, head });
    if head < base {
        Next::Decided(Decision {
            verdict: Verdict::Block,
            reason: format!(
                "The mean TDQS fell: over {required} pairs the head's median {head} is below the \
                 base's {base} (first pair {} → {}).",
                first.base, first.head
            ),
            medians,
        })
    } else {
        Next::Decided(Decision {
            verdict: Verdict::Pass,
            reason: format!(
                "The first pair dropped ({} → {}) but the confirmation did not: over {required} \
                 pairs the head's median {head} is not below the base's {base}.",
                first.base, first.head
            ),
            medians,
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_rule_the_pins_name_is_the_rule_that_decides() {
        for name in crate::spec::pins::DECISION_RULE_NAMES {
            let rule = DecisionRule::parse(name).expect("every name the pins accept parses");
            assert_eq!(rule.as_str(), name);
        }
        let embedded = Pins::embedded().unwrap();
        assert_eq!(DecisionRule::from_pins(&embedded), DecisionRule::NoiseAware);
        let mut raw = embedded.raw().clone();
        raw["confirmation"]["rule"] = serde_json::json!("reference");
        let reference = Pins::from_value(
            raw,
            crate::spec::pins::PinsOrigin::File(std::path::PathBuf::from("test-pins.json")),
        )
        .unwrap();
        assert_eq!(DecisionRule::from_pins(&reference), DecisionRule::Reference);
    }

    fn p(base: i64, head: i64) -> PairMeans {
        PairMeans {
            base: Tenths(base),
            head: Tenths(head),
        }
    }

    fn decided(pairs: &[PairMeans]) -> Decision {
        match next(pairs, ConfirmationRule::default()) {
            Next::Decided(d) => d,
            other => panic!("expected a decision, got {other:?}"),
        }
    }

    #[test]
    fn no_pairs_asks_for_the_first() {
        assert_eq!(next(&[], ConfirmationRule::default()), Next::ScoreMore(1));
    }

    #[test]
    fn head_equal_or_above_passes_after_one_pair() {
        assert_eq!(decided(&[p(32, 32)]).verdict, Verdict::Pass);
        assert_eq!(decided(&[p(32, 35)]).verdict, Verdict::Pass);
    }

    #[test]
    fn a_drop_asks_for_two_more_pairs() {
        assert_eq!(
            next(&[p(33, 32)], ConfirmationRule::default()),
            Next::ScoreMore(2)
        );
        assert_eq!(
            next(&[p(33, 32), p(33, 33)], ConfirmationRule::default()),
            Next::ScoreMore(1)
        );
    }

    #[test]
    fn confirmed_drop_blocks_on_medians_per_side() {
        let d = decided(&[p(33, 32), p(32, 31), p(34, 33)]);
        assert_eq!(d.verdict, Verdict::Block);
        assert_eq!(
            d.medians,
            Some(Medians {
                base: Tenths(33),
                head: Tenths(32)
            })
        );
    }

    #[test]
    fn unconfirmed_drop_passes() {
        // Medians per side, not per-pair differences: base 32,33,32 → 32; head 31,33,32 → 32.
        let d = decided(&[p(32, 31), p(33, 33), p(32, 32)]);
        assert_eq!(d.verdict, Verdict::Pass);
        assert_eq!(
            d.medians,
            Some(Medians {
                base: Tenths(32),
                head: Tenths(32)
            })
        );
    }

    #[test]
    fn required_pairs_follow_the_first_pair() {
        let rule = ConfirmationRule::default();
        assert_eq!(required_pairs(p(30, 30), rule), 1);
        assert_eq!(required_pairs(p(30, 29), rule), 3);
    }
}
