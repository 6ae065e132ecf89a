//! What fell on the first pair: the tools and dimensions a BLOCK (or a dropped first pair) names.

use crate::arith::{frac_to_f64, Frac};
use crate::rubric::{CoherenceDimension, ToolDimension};
use crate::score::SideScore;

use super::model::*;

/// What fell on the first of `pairs`, when its head mean is below its base mean or any tool's
/// TDQS fell (a PASS lists those too); `None` otherwise. The gate records this and `--check`
/// recomputes it.
pub fn of_first_pair(pairs: &[Pair]) -> Option<Causes> {
    let first = pairs.first()?;
    let a_tool_fell = first
        .head
        .tools
        .iter()
        .any(|(name, h)| first.base.tools.get(name).is_some_and(|b| h.tdqs < b.tdqs));
    match (first.base.rollups.mean_tdqs, first.head.rollups.mean_tdqs) {
        (Some(base), Some(head)) if head < base || a_tool_fell => {
            Some(explain(&first.base, &first.head))
        }
        _ => None,
    }
}

/// [`of_first_pair`] with each fallen tool's definition change attached.
pub fn of_first_pair_with_changes(
    pairs: &[Pair],
    base: Option<&crate::export::Export>,
    head: Option<&crate::export::Export>,
) -> Option<Causes> {
    let mut causes = of_first_pair(pairs)?;
    if let (Some(b), Some(h)) = (base, head) {
        attach_changes(&mut causes, b, h);
    }
    Some(causes)
}

/// Explains a first pair whose head mean is below its base mean.
pub fn explain(base: &SideScore, head: &SideScore) -> Causes {
    // Every tool of the side, a summarised report's left-out ones included.
    let n = head.tool_count().max(1) as i64;
    let mut tools = Vec::new();
    let mut added = Vec::new();
    for (name, h) in &head.tools {
        let Some(b) = base.tools.get(name) else {
            added.push(OneSidedTool {
                tool: name.clone(),
                tdqs: h.tdqs,
            });
            continue;
        };
        if h.tdqs >= b.tdqs {
            continue;
        }
        let dimensions = ToolDimension::ALL
            .into_iter()
            .filter_map(|d| {
                let (bs, hs) = (*b.scores.get(&d)?, *h.scores.get(&d)?);
                (hs < bs).then(|| FallenDimension {
                    dimension: d,
                    base: bs,
                    head: hs,
                    justification: h
                        .justifications
                        .get(&d)
                        .map(|j| j.justification.clone())
                        .unwrap_or_default(),
                    fix: super::changed::fix_line(d).to_string(),
                })
            })
            .collect();
        // Tenths → units: (head − base) / 10 / n.
        let effect = Frac::new(h.tdqs.0 - b.tdqs.0, 10 * n);
        tools.push(FallenTool {
            tool: name.clone(),
            base: b.tdqs,
            head: h.tdqs,
            effect: frac_to_f64(effect),
            effect_exact: format!("{}/{}", effect.numer(), effect.denom()),
            dimensions,
            change: None,
            location: None,
        });
    }
    // The costliest fall first; ties by name for a stable report.
    tools.sort_by(|a, b| {
        (a.head.0 - a.base.0)
            .cmp(&(b.head.0 - b.base.0))
            .then_with(|| a.tool.cmp(&b.tool))
    });
    let removed = base
        .tools
        .iter()
        .filter(|(name, _)| !head.tools.contains_key(*name))
        .map(|(name, b)| OneSidedTool {
            tool: name.clone(),
            tdqs: b.tdqs,
        })
        .collect();
    let minimum_term = MinimumTerm {
        base: MinimumSide {
            tool: base.rollups.min_tool.clone(),
            tdqs: base.rollups.min_tdqs,
        },
        head: MinimumSide {
            tool: head.rollups.min_tool.clone(),
            tdqs: head.rollups.min_tdqs,
        },
        fell: match (base.rollups.min_tdqs, head.rollups.min_tdqs) {
            (Some(b), Some(h)) => h < b,
            _ => false,
        },
    };
    let coherence = CoherenceDimension::ALL
        .into_iter()
        .filter_map(|d| {
            let (bs, hs) = (
                *base.coherence.scores.get(&d)?,
                *head.coherence.scores.get(&d)?,
            );
            (hs < bs).then(|| FallenCoherence {
                dimension: d,
                base: bs,
                head: hs,
                justification: head
                    .coherence
                    .coherence_justifications
                    .get(&d)
                    .map(|j| j.justification.clone())
                    .unwrap_or_default(),
            })
        })
        .collect();
    Causes {
        tools,
        added,
        removed,
        minimum_term,
        coherence,
    }
}

/// Attaches each fallen tool's change (needs both exports).
fn attach_changes(causes: &mut Causes, base: &crate::export::Export, head: &crate::export::Export) {
    for t in &mut causes.tools {
        t.change = super::changed::tool_change(base, head, &t.tool);
    }
}
