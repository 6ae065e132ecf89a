//! The noise-aware rule: the reference's shape (one pair; on a drop two confirmation pairs; the
//! median per side decides) with a tolerance the run derives from its own spread, and a
//! per-tool guard.
//!
//! Why: a judge that rounds to whole points moves one tool's TDQS by 0.1 to 0.6 between calls.
//! When few tools carry a change, a 0.1 drop of the rounded mean is that noise (the reference
//! rule blocks about one in five reworded one-tool servers). Here:
//!
//! - Only the changed tools carry noise: a question identical on both sides is asked once and
//!   its answer used by both (and by the confirmation pairs), so it cancels out of the
//!   difference. Which values are noisy is an input ([`ToolScore::noisy`]).
//! - The mean falls when the head's median exact mean is below the base's median exact mean by
//!   at least `Z` standard errors, estimated from the spread each noisy tool showed over the
//!   three pairs (never below a floor of [`NOISE_FLOOR_TENTHS`] per call), and the drop shows in
//!   the rounded medians too.
//! - The guard: a tool whose median TDQS falls by at least the guard amount (default 0.5) and by
//!   `Z` of its own standard errors BLOCKs even when the mean does not.
//!
//! All comparisons are exact (rationals); nothing here rounds except the rollups it reports.

use std::collections::{BTreeMap, BTreeSet};

use serde::{Deserialize, Serialize};

use crate::arith::{round1_frac, Frac, Tenths};
use crate::exit::Verdict;

use super::Medians;

/// Standard errors a drop must exceed (one-sided; ≈ 0.13 % under normal noise).
pub const Z: i64 = 3;

/// The rule's constants; [`next`] uses the defaults (`Z`, `NOISE_FLOOR_TENTHS`). The benchmark
/// varies them to show why they are what they are.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct NoiseParams {
    /// Z², exact.
    pub z_squared: Frac,
    /// The floor of one call's TDQS variance, in TDQS² (0.1² = 1/100).
    pub floor_variance: Frac,
}

impl Default for NoiseParams {
    fn default() -> Self {
        NoiseParams {
            z_squared: Frac::from_integer(Z * Z),
            floor_variance: Frac::new(NOISE_FLOOR_TENTHS * NOISE_FLOOR_TENTHS, 100),
        }
    }
}
/// Variance of the median of three normal draws, relative to one draw's (0.449).
pub(crate) const MEDIAN3_VARIANCE: (i64, i64) = (449, 1000);
/// The least per-call standard deviation of a noisy tool's TDQS, in tenths (0.1 TDQS). The
/// reference measured a mean run-to-run difference of 0.10 per tool; three calls that happen to
/// agree must not make a tool look noiseless.
pub const NOISE_FLOOR_TENTHS: i64 = 1;
/// The default guard: a tool whose TDQS falls by at least this much BLOCKs.
pub const DEFAULT_GUARD: Tenths = Tenths(5);

/// One tool's TDQS on one side of one pair.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolScore {
    pub tdqs: Tenths,
    /// The value came from a call of its own (not an answer both sides share, not a hard gate).
    pub noisy: bool,
}

/// Every tool of both sides of one pair.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct PairTools {
    pub base: BTreeMap<String, ToolScore>,
    pub head: BTreeMap<String, ToolScore>,
    /// Tools of each side that a summarised report lists only as a sum (see [`Unlisted`]).
    #[serde(default)]
    pub base_unlisted: Unlisted,
    #[serde(default)]
    pub head_unlisted: Unlisted,
}

/// Tools a summarised report does not list one by one: unchanged definitions with the same TDQS
/// on both sides in every pair. They move the mean (through their sum and count) and add noise
/// (the floor, for each one judged by a call of its own: its values never vary), but can never
/// fall, so the rule needs nothing else of them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Unlisted {
    pub count: u64,
    /// The sum of their TDQS, in tenths.
    pub tenths_sum: i64,
    /// How many of them carry noise ([`ToolScore::noisy`]).
    pub noisy: u64,
}

/// One side of a pair as the rule reads it: the listed tools and the unlisted rest.
type Side<'a> = (&'a BTreeMap<String, ToolScore>, Unlisted);

fn base_of(p: &PairTools) -> Side<'_> {
    (&p.base, p.base_unlisted)
}

fn head_of(p: &PairTools) -> Side<'_> {
    (&p.head, p.head_unlisted)
}

impl PairTools {
    fn exact_mean((side, rest): Side<'_>) -> Option<Frac> {
        let n = side.len() as i64 + rest.count as i64;
        if n == 0 {
            return None;
        }
        let sum: i64 = side.values().map(|t| t.tdqs.0).sum::<i64>() + rest.tenths_sum;
        Some(Frac::new(sum, 10 * n))
    }
}

/// A tool whose median TDQS fell, as the guard saw it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolFall {
    pub tool: String,
    /// Median over the pairs (the first pair's value before confirmation).
    pub base: Tenths,
    pub head: Tenths,
    /// What the fall had to reach to count: the guard or the noise tolerance, the larger.
    pub tolerance: f64,
    /// The fall reached the guard and the tolerance over the confirmation pairs.
    pub blocks: bool,
}

/// What the noise-aware rule measured (reported as information; the verdict follows from it).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Assessment {
    /// Head median exact mean minus base median exact mean, as `p/q` and as a number.
    pub mean_delta_exact: String,
    pub mean_delta: f64,
    /// How far the mean had to fall to count as a drop (Z standard errors).
    pub mean_tolerance: f64,
    /// The lowest and highest exact mean each side showed over the pairs.
    pub base_spread: [f64; 2],
    pub head_spread: [f64; 2],
    pub guard: Tenths,
    /// Tools whose median TDQS fell, whether or not they block.
    pub fallen_tools: Vec<ToolFall>,
}

/// The outcome of the rule.
#[derive(Debug, Clone, PartialEq)]
pub enum NoiseNext {
    ScoreMore(usize),
    Decided {
        verdict: Verdict,
        reason: String,
        medians: Option<Medians>,
        assessment: Assessment,
    },
}

fn f(x: Frac) -> f64 {
    *x.numer() as f64 / *x.denom() as f64
}

fn sqrt_f(x: Frac) -> f64 {
    f(x).max(0.0).sqrt()
}

/// The middle value of an odd count of exact values.
fn median_frac(values: &[Frac]) -> Frac {
    let mut v = values.to_vec();
    v.sort();
    v[v.len() / 2]
}

fn median_tenths(values: &[Tenths]) -> Tenths {
    let mut v = values.to_vec();
    v.sort();
    v[v.len() / 2]
}

/// Variance (n − 1 denominator) of tenths values, in TDQS units squared, floored at the noise
/// floor; zero for a value that carries no noise.
fn noise_variance(values: &[Tenths], noisy: bool, params: &NoiseParams) -> Frac {
    if !noisy {
        return Frac::from_integer(0);
    }
    let floor = params.floor_variance;
    let n = values.len() as i64;
    if n < 2 {
        return floor;
    }
    let mean = Frac::new(values.iter().map(|t| t.0).sum(), 10 * n);
    let ss: Frac = values
        .iter()
        .map(|t| {
            let d = t.as_frac() - mean;
            d * d
        })
        .fold(Frac::from_integer(0), |a, b| a + b);
    let var = ss / Frac::from_integer(n - 1);
    if var > floor {
        var
    } else {
        floor
    }
}

/// `drop ≥ Z · sqrt(MEDIAN3 · variance)` for a negative `delta`, exactly.
fn beyond_noise(delta: Frac, variance: Frac, params: &NoiseParams) -> bool {
    if delta >= Frac::from_integer(0) {
        return false;
    }
    let (p, q) = MEDIAN3_VARIANCE;
    delta * delta >= params.z_squared * Frac::new(p, q) * variance
}

fn tolerance(variance: Frac, params: &NoiseParams) -> f64 {
    let (p, q) = MEDIAN3_VARIANCE;
    sqrt_f(params.z_squared * Frac::new(p, q) * variance)
}

/// The first pair dropped: its exact mean fell, or one tool fell by the guard.
pub(crate) fn first_pair_dropped(first: &PairTools, guard: Tenths) -> bool {
    let (Some(b), Some(h)) = (
        PairTools::exact_mean(base_of(first)),
        PairTools::exact_mean(head_of(first)),
    ) else {
        return false;
    };
    h < b
        || first.head.iter().any(|(name, h)| {
            first
                .base
                .get(name)
                .is_some_and(|b| b.tdqs.0 - h.tdqs.0 >= guard.0)
        })
}

/// Decides, or asks for more pairs. `pairs` in scoring order; `confirmation` pairs follow a
/// first pair that dropped (two in the pinned rule).
pub fn next(pairs: &[PairTools], guard: Tenths, confirmation: usize) -> NoiseNext {
    next_with(pairs, guard, confirmation, &NoiseParams::default())
}

/// [`next`] with other constants (for the benchmark).
pub fn next_with(
    pairs: &[PairTools],
    guard: Tenths,
    confirmation: usize,
    params: &NoiseParams,
) -> NoiseNext {
    let Some(first) = pairs.first() else {
        return NoiseNext::ScoreMore(1);
    };
    let dropped = first_pair_dropped(first, guard);
    let required = if dropped { 1 + confirmation } else { 1 };
    if pairs.len() < required {
        return NoiseNext::ScoreMore(required - pairs.len());
    }
    let pairs = &pairs[..required];
    let base_means = exact_means(pairs, base_of);
    let head_means = exact_means(pairs, head_of);
    let base_median = median_frac(&base_means);
    let head_median = median_frac(&head_means);
    let delta = head_median - base_median;

    let mean_variance =
        mean_side_variance(pairs, base_of, params) + mean_side_variance(pairs, head_of, params);
    let rounded_base = round1_frac(base_median);
    let rounded_head = round1_frac(head_median);
    // With no noise in the run (a deterministic judge, or every changed tool hard-gated), the
    // exact mean decides: a fall that rounding hides is still a fall the rules measured.
    let exact = !pairs.iter().any(|p| {
        p.base.values().chain(p.head.values()).any(|t| t.noisy)
            || p.base_unlisted.noisy > 0
            || p.head_unlisted.noisy > 0
    });
    let mean_blocks = dropped
        && if exact {
            delta < Frac::from_integer(0)
        } else {
            rounded_head < rounded_base && beyond_noise(delta, mean_variance, params)
        };

    let fallen_tools = fallen_tools(first, pairs, dropped, guard, params);
    let assessment = Assessment {
        mean_delta_exact: format!("{}/{}", delta.numer(), delta.denom()),
        mean_delta: f(delta),
        mean_tolerance: tolerance(mean_variance, params),
        base_spread: spread(&base_means),
        head_spread: spread(&head_means),
        guard,
        fallen_tools,
    };
    let medians = (required > 1).then_some(Medians {
        base: rounded_base,
        head: rounded_head,
    });
    let (verdict, reason) = verdict_and_reason(
        &assessment,
        exact,
        mean_blocks,
        dropped,
        required,
        rounded_base,
        rounded_head,
    );
    NoiseNext::Decided {
        verdict,
        reason,
        medians,
        assessment,
    }
}

/// Each pair's exact mean TDQS on one side.
fn exact_means(pairs: &[PairTools], side: fn(&PairTools) -> Side<'_>) -> Vec<Frac> {
    pairs
        .iter()
        .map(|p| PairTools::exact_mean(side(p)).unwrap_or_default())
        .collect()
}

/// The lowest and highest of the pairs' exact means, as the assessment shows them.
fn spread(v: &[Frac]) -> [f64; 2] {
    let lo = v.iter().min().copied().unwrap_or_default();
    let hi = v.iter().max().copied().unwrap_or_default();
    [f(lo), f(hi)]
}

/// One side's share of the variance of the mean difference: the noisy tools' variances over n²,
/// where n counts the listed and the left-out tools.
fn mean_side_variance(
    pairs: &[PairTools],
    side: fn(&PairTools) -> Side<'_>,
    params: &NoiseParams,
) -> Frac {
    let (first, rest) = side(&pairs[0]);
    let n = (first.len() as i64 + rest.count as i64).max(1);
    // An unlisted tool has one value over every pair: a noisy one carries the floor.
    let unlisted = params.floor_variance * Frac::from_integer(rest.noisy as i64);
    let total = first
        .iter()
        .map(|(name, score)| {
            let values: Vec<Tenths> = pairs
                .iter()
                .filter_map(|p| side(p).0.get(name).map(|t| t.tdqs))
                .collect();
            noise_variance(&values, score.noisy, params)
        })
        .fold(unlisted, |a, b| a + b);
    total / Frac::from_integer(n * n)
}

/// The guard, per tool present on both sides of every pair: each tool whose median fell, and
/// whether the fall blocks (only after confirmation, by the guard or more, beyond its noise).
/// Sorted by the size of the fall, largest first.
fn fallen_tools(
    first: &PairTools,
    pairs: &[PairTools],
    dropped: bool,
    guard: Tenths,
    params: &NoiseParams,
) -> Vec<ToolFall> {
    let mut fallen_tools = Vec::new();
    for (name, first_head) in &first.head {
        let Some(first_base) = first.base.get(name) else {
            continue;
        };
        let collect = |side: fn(&PairTools) -> &BTreeMap<String, ToolScore>| -> Vec<Tenths> {
            pairs
                .iter()
                .filter_map(|p| side(p).get(name).map(|t| t.tdqs))
                .collect()
        };
        let (bv, hv) = (collect(|p| &p.base), collect(|p| &p.head));
        if bv.len() != pairs.len() || hv.len() != pairs.len() {
            continue;
        }
        let (b, h) = (median_tenths(&bv), median_tenths(&hv));
        if h >= b {
            continue;
        }
        let variance = noise_variance(&bv, first_base.noisy, params)
            + noise_variance(&hv, first_head.noisy, params);
        let tool_delta = h.as_frac() - b.as_frac();
        let blocks = dropped
            && pairs.len() > 1
            && b.0 - h.0 >= guard.0
            && beyond_noise(tool_delta, variance, params);
        fallen_tools.push(ToolFall {
            tool: name.clone(),
            base: b,
            head: h,
            tolerance: tolerance(variance, params).max(guard.as_f64()),
            blocks,
        });
    }
    fallen_tools.sort_by_key(|t| t.head.0 - t.base.0);
    fallen_tools
}

/// The verdict and the sentence that explains it: the mean fell beyond noise, or a tool did,
/// or the first pair did not drop, or it dropped within the judge's noise.
fn verdict_and_reason(
    assessment: &Assessment,
    exact: bool,
    mean_blocks: bool,
    dropped: bool,
    required: usize,
    rounded_base: Tenths,
    rounded_head: Tenths,
) -> (Verdict, String) {
    let guard = assessment.guard;
    let blocking: Vec<&ToolFall> = assessment
        .fallen_tools
        .iter()
        .filter(|t| t.blocks)
        .collect();
    let sure = format!(
        "over {required} pairs the base's exact mean ranged {:.3}–{:.3} and the head's {:.3}–{:.3}",
        assessment.base_spread[0],
        assessment.base_spread[1],
        assessment.head_spread[0],
        assessment.head_spread[1]
    );
    let named: Vec<String> = blocking
        .iter()
        .map(|t| format!("`{}` {} → {}", t.tool, t.base, t.head))
        .collect();
    if mean_blocks && exact {
        let tools = if named.is_empty() {
            String::new()
        } else {
            format!("; tools that fell by {guard} or more: {}", named.join(", "))
        };
        (
            Verdict::Block,
            format!(
                "The mean TDQS fell: no answer in this run carries judge noise (a deterministic \
                 judge, or only hard-gated changes), so the exact mean decides; it fell by {:.3} \
                 (rounded {rounded_base} → {rounded_head}){tools}.",
                -assessment.mean_delta,
            ),
        )
    } else if mean_blocks {
        let tools = if named.is_empty() {
            String::new()
        } else {
            format!("; tools that fell by {guard} or more: {}", named.join(", "))
        };
        (
            Verdict::Block,
            format!(
                "The mean TDQS fell: the head's median {rounded_head} is below the base's \
                 {rounded_base}, a drop of {:.3} against a noise tolerance of {:.3} ({sure}){tools}.",
                -assessment.mean_delta, assessment.mean_tolerance
            ),
        )
    } else if !blocking.is_empty() {
        (
            Verdict::Block,
            format!(
                "A tool's TDQS fell by at least {guard} over {required} pairs (median per side): \
                 {}; the mean TDQS went {rounded_base} → {rounded_head} ({sure}).",
                named.join(", ")
            ),
        )
    } else if !dropped {
        (
            Verdict::Pass,
            format!(
                "The head's mean TDQS {rounded_head} is not below the base's {rounded_base} on \
                 the first pair, and no tool fell by {guard} or more."
            ),
        )
    } else {
        (
            Verdict::Pass,
            format!(
                "The first pair dropped but not beyond the judge's noise: over {required} pairs \
                 the head's median mean {rounded_head} against the base's {rounded_base} \
                 (change {:+.3}, tolerance {:.3}), and no tool fell by {guard} beyond its noise.",
                assessment.mean_delta, assessment.mean_tolerance
            ),
        )
    }
}

/// The tools whose questions differ between the sides: only they are re-asked.
pub fn noisy_tools(pair: &PairTools) -> BTreeSet<String> {
    pair.base
        .iter()
        .chain(pair.head.iter())
        .filter(|(_, t)| t.noisy)
        .map(|(n, _)| n.clone())
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn side(values: &[(&str, i64, bool)]) -> BTreeMap<String, ToolScore> {
        values
            .iter()
            .map(|(n, t, noisy)| {
                (
                    n.to_string(),
                    ToolScore {
                        tdqs: Tenths(*t),
                        noisy: *noisy,
                    },
                )
            })
            .collect()
    }

    fn pair(base: &[(&str, i64, bool)], head: &[(&str, i64, bool)]) -> PairTools {
        PairTools {
            base: side(base),
            head: side(head),
            ..Default::default()
        }
    }

    fn decided(pairs: &[PairTools]) -> (Verdict, Assessment) {
        match next(pairs, DEFAULT_GUARD, 2) {
            NoiseNext::Decided {
                verdict,
                assessment,
                ..
            } => (verdict, assessment),
            other => panic!("expected a decision, got {other:?}"),
        }
    }

    #[test]
    fn no_drop_passes_on_one_pair() {
        let p = pair(&[("a", 32, true)], &[("a", 33, true)]);
        assert_eq!(decided(&[p]).0, Verdict::Pass);
    }

    #[test]
    fn an_exact_drop_hidden_by_rounding_still_asks_for_confirmation() {
        // 3.24 → 3.21 both round to 3.2, but the exact mean fell.
        let b = [("a", 32, false), ("b", 33, true), ("c", 32, false)];
        let h = [("a", 32, false), ("b", 32, true), ("c", 32, false)];
        assert_eq!(
            next(&[pair(&b, &h)], DEFAULT_GUARD, 2),
            NoiseNext::ScoreMore(2)
        );
    }

    #[test]
    fn a_one_tenth_drop_of_one_reworded_tool_is_noise() {
        // The reference rule blocks this (3.3 → 3.2 on all three pairs).
        let p = pair(&[("a", 33, true)], &[("a", 32, true)]);
        let (v, a) = decided(&[p.clone(), p.clone(), p]);
        assert_eq!(v, Verdict::Pass);
        assert!(a.mean_tolerance > 0.1, "{a:?}");
    }

    #[test]
    fn a_clear_drop_beyond_the_noise_blocks_and_says_how_sure() {
        let p1 = pair(
            &[("a", 40, true), ("b", 30, false)],
            &[("a", 25, true), ("b", 30, false)],
        );
        let p2 = pair(
            &[("a", 41, true), ("b", 30, false)],
            &[("a", 24, true), ("b", 30, false)],
        );
        let p3 = pair(
            &[("a", 39, true), ("b", 30, false)],
            &[("a", 26, true), ("b", 30, false)],
        );
        match next(&[p1, p2, p3], DEFAULT_GUARD, 2) {
            NoiseNext::Decided {
                verdict,
                reason,
                medians,
                assessment,
            } => {
                assert_eq!(verdict, Verdict::Block);
                assert!(reason.contains("ranged"), "{reason}");
                assert_eq!(
                    medians,
                    Some(Medians {
                        base: Tenths(35),
                        head: Tenths(28)
                    })
                );
                assert_eq!(assessment.base_spread, [3.45, 3.55]);
            }
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn guard_blocks_a_tool_the_mean_hides() {
        // 20 tools; one falls 4.0 → 1.0 (the mean moves 0.15, rounding may hide part of it).
        let mut b: Vec<(String, i64, bool)> =
            (0..20).map(|i| (format!("t{i:02}"), 35, false)).collect();
        b[0] = ("t00".to_string(), 40, true);
        let mut h = b.clone();
        h[0] = ("t00".to_string(), 10, true);
        fn conv(v: &[(String, i64, bool)]) -> Vec<(&str, i64, bool)> {
            v.iter().map(|(n, t, x)| (n.as_str(), *t, *x)).collect()
        }
        let p = pair(&conv(&b), &conv(&h));
        let (v, a) = decided(&[p.clone(), p.clone(), p]);
        assert_eq!(v, Verdict::Block);
        assert_eq!(a.fallen_tools[0].tool, "t00");
        assert!(a.fallen_tools[0].blocks);
    }

    #[test]
    fn guard_needs_the_fall_beyond_the_tools_noise() {
        // The fall is 0.5 on the medians, but the tool's own values swing by a point.
        let pairs = [
            pair(&[("a", 35, true)], &[("a", 30, true)]),
            pair(&[("a", 45, true)], &[("a", 40, true)]),
            pair(&[("a", 25, true)], &[("a", 20, true)]),
        ];
        let (v, a) = decided(&pairs);
        assert_eq!(v, Verdict::Pass);
        assert!(!a.fallen_tools[0].blocks);
    }

    #[test]
    fn unchanged_tools_add_no_noise() {
        let p = pair(&[("a", 30, false)], &[("a", 30, false)]);
        let (v, a) = decided(&[p]);
        assert_eq!(v, Verdict::Pass);
        assert_eq!(a.mean_tolerance, 0.0);
    }

    /// Moves the tools whose value is the same on both sides in every pair into the unlisted
    /// sums, as a summarised report does.
    fn summarised(pairs: &[PairTools]) -> Vec<PairTools> {
        let steady: Vec<String> = pairs[0]
            .base
            .iter()
            .filter(|(name, b)| {
                pairs.iter().all(|p| {
                    p.base.get(*name).map(|t| t.tdqs) == Some(b.tdqs)
                        && p.head.get(*name).map(|t| t.tdqs) == Some(b.tdqs)
                })
            })
            .map(|(name, _)| name.clone())
            .collect();
        pairs
            .iter()
            .map(|p| {
                let mut p = p.clone();
                for name in &steady {
                    for (side, rest) in [
                        (&mut p.base, &mut p.base_unlisted),
                        (&mut p.head, &mut p.head_unlisted),
                    ] {
                        let t = side.remove(name).unwrap();
                        rest.count += 1;
                        rest.tenths_sum += t.tdqs.0;
                        rest.noisy += u64::from(t.noisy);
                    }
                }
                p
            })
            .collect()
    }

    #[test]
    fn summarised_pairs_decide_exactly_as_the_full_ones() {
        // 30 steady tools (some judged by calls of their own), one that falls, one that is noisy.
        let mut base = vec![("falls", 40, true), ("noisy", 33, true)];
        let names: Vec<String> = (0..30).map(|i| format!("t{i:02}")).collect();
        for (i, n) in names.iter().enumerate() {
            base.push((n.as_str(), 30 + (i as i64 % 7), i % 3 == 0));
        }
        let head_of = |falls: i64, noisy: i64| {
            let mut h = base.clone();
            h[0].1 = falls;
            h[1].1 = noisy;
            h
        };
        let pairs = vec![
            pair(&base, &head_of(33, 31)),
            pair(&base, &head_of(34, 35)),
            pair(&base, &head_of(33, 33)),
        ];
        let short = summarised(&pairs);
        assert_eq!(short[0].base.len(), 2);
        assert_eq!(short[0].base_unlisted.count, 30);
        for n in 1..=3 {
            assert_eq!(
                next(&pairs[..n], DEFAULT_GUARD, 2),
                next(&short[..n], DEFAULT_GUARD, 2),
                "after {n} pair(s)"
            );
        }
        assert!(first_pair_dropped(&short[0], DEFAULT_GUARD));
    }

    #[test]
    fn the_noise_floor_applies_to_agreeing_calls() {
        let p = NoiseParams::default();
        assert_eq!(
            noise_variance(&[Tenths(30), Tenths(30), Tenths(30)], true, &p),
            Frac::new(1, 100)
        );
        assert_eq!(
            noise_variance(&[Tenths(30), Tenths(30), Tenths(30)], false, &p),
            Frac::from_integer(0)
        );
        // 3.0, 3.5, 4.0: variance 0.25.
        assert_eq!(
            noise_variance(&[Tenths(30), Tenths(35), Tenths(40)], true, &p),
            Frac::new(1, 4)
        );
    }
}
