//! Whether a proposal is offered: each pair (the reference definition and the proposal, scored
//! by the same judge with the same prompts) says whether the proposal is at least as good on
//! every dimension that must hold; pairs are asked until a majority of the most pairs allowed
//! agrees, so a deterministic judge needs one pair and a model two or three.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::rubric::ToolDimension;

/// What one pair showed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PairOutcome {
    /// The reference definition's scores in this pair.
    pub reference: BTreeMap<ToolDimension, u8>,
    /// The proposal's scores in this pair.
    pub proposal: BTreeMap<ToolDimension, u8>,
}

impl PairOutcome {
    /// The dimensions of `held` on which the proposal scored lower than the reference.
    pub fn lower_on(&self, held: &[ToolDimension]) -> Vec<ToolDimension> {
        held.iter()
            .copied()
            .filter(|d| {
                self.proposal.get(d).copied().unwrap_or(0)
                    < self.reference.get(d).copied().unwrap_or(0)
            })
            .collect()
    }

    /// True when the proposal is at least as good on every dimension of `held`.
    pub fn proposal_holds(&self, held: &[ToolDimension]) -> bool {
        self.lower_on(held).is_empty()
    }
}

/// The decision over the pairs asked so far: `Some(true)` offer, `Some(false)` withhold, `None`
/// when another pair is needed. `max_pairs` is the most pairs allowed (odd, so a majority
/// exists); a deterministic judge is asked once.
pub fn decided(pairs: &[PairOutcome], held: &[ToolDimension], max_pairs: usize) -> Option<bool> {
    let needed = max_pairs / 2 + 1;
    let holds = pairs.iter().filter(|p| p.proposal_holds(held)).count();
    let fails = pairs.len() - holds;
    if holds >= needed {
        Some(true)
    } else if fails >= needed {
        Some(false)
    } else if pairs.len() >= max_pairs {
        // An even maximum can tie: a proposal is offered only on a majority.
        Some(false)
    } else {
        None
    }
}

/// The median of the proposal's (or the reference's) score on each dimension over the pairs.
pub fn median_scores(pairs: &[PairOutcome], of_proposal: bool) -> BTreeMap<ToolDimension, u8> {
    ToolDimension::ALL
        .into_iter()
        .filter_map(|d| {
            let mut values: Vec<u8> = pairs
                .iter()
                .filter_map(|p| {
                    if of_proposal {
                        &p.proposal
                    } else {
                        &p.reference
                    }
                    .get(&d)
                    .copied()
                })
                .collect();
            values.sort_unstable();
            // The lower median of an even count: a prediction should not round up.
            values.get((values.len().max(1) - 1) / 2).map(|v| (d, *v))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pair(reference: u8, proposal: u8) -> PairOutcome {
        let all = |v: u8| ToolDimension::ALL.into_iter().map(|d| (d, v)).collect();
        PairOutcome {
            reference: all(reference),
            proposal: all(proposal),
        }
    }

    const HELD: [ToolDimension; 1] = [ToolDimension::UsageGuidelines];

    #[test]
    fn one_pair_decides_for_a_deterministic_judge() {
        assert_eq!(decided(&[pair(2, 4)], &HELD, 1), Some(true));
        assert_eq!(decided(&[pair(4, 2)], &HELD, 1), Some(false));
        assert_eq!(decided(&[pair(3, 3)], &HELD, 1), Some(true));
    }

    #[test]
    fn a_model_needs_two_agreeing_pairs_of_three() {
        assert_eq!(decided(&[pair(2, 4)], &HELD, 3), None);
        assert_eq!(decided(&[pair(2, 4), pair(2, 4)], &HELD, 3), Some(true));
        assert_eq!(decided(&[pair(2, 4), pair(4, 2)], &HELD, 3), None);
        assert_eq!(
            decided(&[pair(2, 4), pair(4, 2), pair(4, 3)], &HELD, 3),
            Some(false)
        );
    }

    #[test]
    fn only_the_held_dimensions_count() {
        let mut p = pair(3, 3);
        p.proposal.insert(ToolDimension::PurposeClarity, 1);
        assert!(p.proposal_holds(&HELD));
        assert!(!p.proposal_holds(&ToolDimension::ALL));
        assert_eq!(
            p.lower_on(&ToolDimension::ALL),
            vec![ToolDimension::PurposeClarity]
        );
    }

    #[test]
    fn medians_take_the_lower_middle() {
        let m = median_scores(&[pair(1, 5), pair(2, 3)], true);
        assert_eq!(m[&ToolDimension::PurposeClarity], 3);
        let m = median_scores(&[pair(1, 5), pair(2, 3), pair(3, 4)], false);
        assert_eq!(m[&ToolDimension::PurposeClarity], 2);
    }
}
