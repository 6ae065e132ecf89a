//! The calibration record (`calibration.json`) and how it is built from the runs.
//!
//! Everything the Markdown page shows is in here; the page only formats it. Scores stay as the
//! judge gave them and as the registry published them: the record sets them side by side and
//! measures the difference, it never moves one towards the other.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::capture::{lowest_tools, CheckedCapture, RegistryServer, ToolScores};
use super::stats::{self, Exact};
use tdqs_core::arith::{Frac, Tenths, Tier, Weights};
use tdqs_core::report::{Generator, Scoring};
use tdqs_core::rubric::{CoherenceDimension, ToolDimension};
use tdqs_core::score::CallStats;
use tdqs_core::score::{Rollups, SideScore};

/// Version of the record's format.
pub const CALIBRATION_SCHEMA_VERSION: u32 = 1;
/// File names written into the report folder.
pub const CALIBRATION_JSON: &str = "calibration.json";
pub const CALIBRATION_MARKDOWN: &str = "calibration.md";
/// How many of the largest per-tool differences the record lists.
pub const LARGEST_DIFFERENCES: usize = 10;

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CalibrationRecord {
    pub schema_version: u32,
    pub generator: Generator,
    /// What judge made the runs, in words: a model or rules, the calibrated pins or others.
    pub note: String,
    /// The version digest of the pins the runs were made with; a change of the pins makes the
    /// record stale.
    pub version_digest: String,
    /// The digest of the pins and the judge's settings.
    pub scoring_digest: String,
    pub scoring: Scoring,
    pub capture: CaptureInfo,
    pub registry: RegistryRecord,
    /// The set hash of the definitions that were scored (equal to the capture's `setHash`).
    pub scored_set_hash: String,
    pub runs: Vec<RunRecord>,
    pub summary: Summary,
    /// Calls over all runs.
    pub calls: CallStats,
    pub warnings: Vec<String>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaptureInfo {
    /// SHA-256 of the capture file's bytes.
    pub sha256: String,
    /// The capture maker's remarks, as written in the capture.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

/// The registry's numbers, tiers and scoring time; none of its justification texts.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RegistryRecord {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    pub release: String,
    pub set_hash: String,
    pub server: RegistryServer,
    pub tools: BTreeMap<String, ToolScores>,
}

/// One scoring run of the capture's definitions.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunRecord {
    pub tools: BTreeMap<String, ToolScores>,
    pub coherence: RunCoherence,
    pub rollups: Rollups,
    pub calls: CallStats,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct RunCoherence {
    pub scores: BTreeMap<CoherenceDimension, u8>,
    pub coherence_score: Tenths,
    pub coherence_tier: Tier,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Summary {
    pub whole_set: WholeSet,
    /// The four coherence dimensions: the registry's, each run's and their median.
    pub coherence_dimensions: BTreeMap<CoherenceDimension, CoherenceComparison>,
    /// TDQS first, then the six dimensions in the specification's order.
    pub per_dimension: Vec<DimensionAgreement>,
    /// Tool name → the median of the runs against the registry.
    pub tools: BTreeMap<String, ToolComparison>,
    /// The tools whose median TDQS differs most from the registry's (largest first).
    pub largest_differences: Vec<LargestDifference>,
    pub spread: Spread,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WholeSet {
    pub overall: SetMeasure,
    pub description_quality: SetMeasure,
    pub coherence: SetMeasure,
    pub mean_tdqs: SetMeasure,
    pub min_tdqs: SetMeasure,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CoherenceComparison {
    pub registry: u8,
    pub runs: Vec<u8>,
    pub median: u8,
    /// Median minus registry.
    pub difference: i8,
}

/// One whole-set measure: the registry's value, each run's, and the median of the runs.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SetMeasure {
    pub registry: Measured,
    pub runs: Vec<Measured>,
    pub median: Measured,
    /// Median minus registry.
    pub difference: Tenths,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Measured {
    pub value: Tenths,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tier: Option<Tier>,
    /// The exact unrounded value (mean TDQS only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub exact: Option<Exact>,
    /// The tools at this value (lowest TDQS only), sorted.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub tools: Vec<String>,
}

/// Agreement on one measure over every tool: gate median against registry.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DimensionAgreement {
    /// `tdqs` or a dimension key (`purpose_clarity`).
    pub measure: String,
    pub mean_absolute_difference: Exact,
    pub mean_signed_difference: Exact,
    pub gate_higher: usize,
    pub gate_lower: usize,
    pub equal: usize,
    /// Pearson's r of the per-tool values; null when either side does not vary.
    pub correlation: Option<f64>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolComparison {
    pub registry: ToolScores,
    /// Per dimension the median of the runs; TDQS is the median of the runs' TDQS (which can
    /// differ from the TDQS of the median dimensions), its tier from that.
    pub median: ToolScores,
    pub difference: ToolDifference,
    /// Each run's TDQS, in run order.
    pub runs: Vec<Tenths>,
    /// Highest minus lowest of the runs' TDQS.
    pub range: Tenths,
}

/// Median minus registry.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolDifference {
    pub tdqs: Tenths,
    pub scores: BTreeMap<ToolDimension, i8>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LargestDifference {
    pub tool: String,
    pub registry: Tenths,
    pub gate: Tenths,
    pub difference: Tenths,
    /// The dimensions whose median differs, in the specification's order.
    pub dimensions: Vec<DimensionDifference>,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct DimensionDifference {
    pub dimension: ToolDimension,
    pub difference: i8,
}

/// How much the runs differ from each other.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Spread {
    pub runs: usize,
    /// Every run gave every tool and the coherence the same scores.
    pub identical_runs: bool,
    /// Tools whose TDQS was not the same in every run.
    pub tools_that_moved: usize,
    /// The mean over the tools of each tool's range (highest minus lowest run TDQS).
    pub mean_tool_range: Exact,
    pub largest_tool_range: Tenths,
    /// The tools with the largest range (empty when no tool moved).
    pub largest_range_tools: Vec<String>,
    pub mean_tdqs: Range,
    pub exact_mean_tdqs: ExactRange,
    pub min_tdqs: Range,
    pub description_quality: Range,
    pub coherence: Range,
    pub overall: Range,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
pub struct Range {
    pub lowest: Tenths,
    pub highest: Tenths,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
pub struct ExactRange {
    pub lowest: Exact,
    pub highest: Exact,
}

/// What the record is built from.
pub struct Inputs<'a> {
    pub capture: &'a CheckedCapture,
    pub runs: &'a [(SideScore, CallStats)],
    pub scoring: Scoring,
    pub weights: &'a Weights,
    pub note: String,
    pub warnings: Vec<String>,
}

fn tool_scores_of(side: &SideScore) -> BTreeMap<String, ToolScores> {
    side.tools
        .iter()
        .map(|(name, t)| {
            (
                name.clone(),
                ToolScores {
                    scores: t.scores.clone(),
                    tdqs: t.tdqs,
                    tier: t.tier,
                },
            )
        })
        .collect()
}

fn range_of(values: impl IntoIterator<Item = Tenths>) -> Range {
    let values: Vec<Tenths> = values.into_iter().collect();
    Range {
        lowest: values.iter().copied().min().unwrap_or(Tenths(0)),
        highest: values.iter().copied().max().unwrap_or(Tenths(0)),
    }
}

fn parse_fraction(text: &str) -> Option<Frac> {
    let (p, q) = text.split_once('/')?;
    let p: i64 = p.parse().ok()?;
    let q: i64 = q.parse().ok()?;
    (q > 0).then(|| Frac::new(p, q))
}

/// Builds the record. `inputs.runs` must hold at least one run and an odd number of them; every
/// run scored exactly the capture's tools.
pub fn build(inputs: Inputs<'_>) -> CalibrationRecord {
    let capture = inputs.capture;
    let weights = inputs.weights;
    let runs = run_records(inputs.runs);
    let mut calls = CallStats::default();
    for run in &runs {
        calls.add(&run.calls);
    }
    let tools = tool_comparisons(capture, &runs, weights);
    let per_dimension = per_dimension_agreement(&tools);
    let largest_differences = largest_differences(&tools);
    let coherence_dimensions = coherence_dimensions(capture, &runs);
    let whole_set = whole_set(capture, &runs, weights);
    let spread = spread(&runs, &tools);
    let registry = RegistryRecord {
        source: capture.source.clone(),
        release: capture.release.clone(),
        set_hash: capture.export.set_hash.clone(),
        server: capture.server.clone(),
        tools: capture.tools.clone(),
    };
    CalibrationRecord {
        schema_version: CALIBRATION_SCHEMA_VERSION,
        generator: Generator::default(),
        note: inputs.note,
        version_digest: inputs.scoring.version_digest.clone(),
        scoring_digest: inputs.scoring.scoring_digest.clone(),
        scoring: inputs.scoring,
        capture: CaptureInfo {
            sha256: capture.sha256.clone(),
            note: capture.note.clone(),
        },
        registry,
        scored_set_hash: inputs
            .runs
            .first()
            .map(|(s, _)| s.set_hash.clone())
            .unwrap_or_default(),
        runs,
        summary: Summary {
            whole_set,
            coherence_dimensions,
            per_dimension,
            tools,
            largest_differences,
            spread,
        },
        calls,
        warnings: inputs.warnings,
    }
}

/// Each run as the record keeps it: the per-tool numbers, the coherence, the rollups and the
/// calls it made.
fn run_records(runs: &[(SideScore, CallStats)]) -> Vec<RunRecord> {
    runs.iter()
        .map(|(side, calls)| RunRecord {
            tools: tool_scores_of(side),
            coherence: RunCoherence {
                scores: side.coherence.scores.clone(),
                coherence_score: side.coherence.coherence_score,
                coherence_tier: side.coherence.coherence_tier,
            },
            rollups: side.rollups.clone(),
            calls: calls.clone(),
        })
        .collect()
}

/// Per tool: the median of the runs (each dimension and the TDQS) against the registry, and how
/// far the runs ranged.
fn tool_comparisons(
    capture: &CheckedCapture,
    runs: &[RunRecord],
    weights: &Weights,
) -> BTreeMap<String, ToolComparison> {
    let tier = |t: Tenths| weights.tiers.tier(t);
    let median_of = |values: Vec<Tenths>| stats::median(&values).unwrap_or(Tenths(0));
    let mut tools = BTreeMap::new();
    for (name, registry) in &capture.tools {
        let run_tdqs: Vec<Tenths> = runs.iter().map(|r| r.tools[name].tdqs).collect();
        let scores: BTreeMap<ToolDimension, u8> = ToolDimension::ALL
            .into_iter()
            .map(|d| {
                let values: Vec<u8> = runs.iter().map(|r| r.tools[name].scores[&d]).collect();
                (d, stats::median(&values).unwrap_or(0))
            })
            .collect();
        let tdqs = median_of(run_tdqs.clone());
        let difference = ToolDifference {
            tdqs: Tenths(tdqs.0 - registry.tdqs.0),
            scores: ToolDimension::ALL
                .into_iter()
                .map(|d| (d, scores[&d] as i8 - registry.scores[&d] as i8))
                .collect(),
        };
        let range = range_of(run_tdqs.iter().copied());
        tools.insert(
            name.clone(),
            ToolComparison {
                registry: registry.clone(),
                median: ToolScores {
                    scores,
                    tdqs,
                    tier: tier(tdqs),
                },
                difference,
                runs: run_tdqs,
                range: Tenths(range.highest.0 - range.lowest.0),
            },
        );
    }
    tools
}

/// Per measure over every tool: the TDQS (in tenths) first, then each dimension.
fn per_dimension_agreement(tools: &BTreeMap<String, ToolComparison>) -> Vec<DimensionAgreement> {
    let mut per_dimension = Vec::new();
    let tdqs_pairs: Vec<(i64, i64)> = tools
        .values()
        .map(|t| (t.median.tdqs.0, t.registry.tdqs.0))
        .collect();
    per_dimension.push(agreement("tdqs", &tdqs_pairs, 10));
    for d in ToolDimension::ALL {
        let pairs: Vec<(i64, i64)> = tools
            .values()
            .map(|t| {
                (
                    i64::from(t.median.scores[&d]),
                    i64::from(t.registry.scores[&d]),
                )
            })
            .collect();
        per_dimension.push(agreement(d.key(), &pairs, 1));
    }
    per_dimension
}

/// The [`LARGEST_DIFFERENCES`] tools whose TDQS differs most from the registry's (ties by name),
/// with the dimensions that differ.
fn largest_differences(tools: &BTreeMap<String, ToolComparison>) -> Vec<LargestDifference> {
    let mut ranked: Vec<(&String, &ToolComparison)> = tools.iter().collect();
    ranked.sort_by(|a, b| {
        b.1.difference
            .tdqs
            .0
            .abs()
            .cmp(&a.1.difference.tdqs.0.abs())
            .then_with(|| a.0.cmp(b.0))
    });
    ranked
        .iter()
        .take(LARGEST_DIFFERENCES)
        .map(|(name, t)| LargestDifference {
            tool: (*name).clone(),
            registry: t.registry.tdqs,
            gate: t.median.tdqs,
            difference: t.difference.tdqs,
            dimensions: ToolDimension::ALL
                .into_iter()
                .filter(|d| t.difference.scores[d] != 0)
                .map(|d| DimensionDifference {
                    dimension: d,
                    difference: t.difference.scores[&d],
                })
                .collect(),
        })
        .collect()
}

/// Each coherence dimension: the registry's score against the runs' and their median.
fn coherence_dimensions(
    capture: &CheckedCapture,
    runs: &[RunRecord],
) -> BTreeMap<CoherenceDimension, CoherenceComparison> {
    let registry_coherence = capture.server.coherence();
    CoherenceDimension::ALL
        .into_iter()
        .map(|d| {
            let values: Vec<u8> = runs
                .iter()
                .map(|r| r.coherence.scores.get(&d).copied().unwrap_or(0))
                .collect();
            let median = stats::median(&values).unwrap_or(0);
            let registry = registry_coherence[&d];
            (
                d,
                CoherenceComparison {
                    registry,
                    runs: values,
                    median,
                    difference: median as i8 - registry as i8,
                },
            )
        })
        .collect()
}

/// `pairs` are (gate median, registry) in units of `1/scale`.
fn agreement(measure: &str, pairs: &[(i64, i64)], scale: i64) -> DimensionAgreement {
    let diffs: Vec<i64> = pairs.iter().map(|(g, r)| g - r).collect();
    let d = stats::differences(&diffs, scale).unwrap_or(stats::Differences {
        mean_absolute: Frac::from_integer(0),
        mean_signed: Frac::from_integer(0),
        higher: 0,
        lower: 0,
        equal: 0,
    });
    let gate: Vec<i64> = pairs.iter().map(|p| p.0).collect();
    let registry: Vec<i64> = pairs.iter().map(|p| p.1).collect();
    DimensionAgreement {
        measure: measure.to_string(),
        mean_absolute_difference: Exact::of(d.mean_absolute),
        mean_signed_difference: Exact::of(d.mean_signed),
        gate_higher: d.higher,
        gate_lower: d.lower,
        equal: d.equal,
        correlation: stats::pearson(&gate, &registry),
    }
}

fn whole_set(capture: &CheckedCapture, runs: &[RunRecord], weights: &Weights) -> WholeSet {
    let tier = |t: Tenths| weights.tiers.tier(t);
    let server = &capture.server;
    let registry_sum: i64 = capture.tools.values().map(|t| t.tdqs.0).sum();
    let registry_exact = Frac::new(registry_sum, 10 * capture.tools.len().max(1) as i64);

    // A measure with tiers (overall, description quality, coherence).
    let tiered = |published: Tenths, published_tier: Tier, per_run: Vec<Tenths>| {
        let median = stats::median(&per_run).unwrap_or(Tenths(0));
        SetMeasure {
            registry: Measured {
                value: published,
                tier: Some(published_tier),
                exact: None,
                tools: Vec::new(),
            },
            runs: per_run
                .iter()
                .map(|v| Measured {
                    value: *v,
                    tier: Some(tier(*v)),
                    exact: None,
                    tools: Vec::new(),
                })
                .collect(),
            median: Measured {
                value: median,
                tier: Some(tier(median)),
                exact: None,
                tools: Vec::new(),
            },
            difference: Tenths(median.0 - published.0),
        }
    };
    let value = |t: Option<Tenths>| t.unwrap_or(Tenths(0));
    let overall = tiered(
        server.overall_score,
        server.overall_tier,
        runs.iter()
            .map(|r| value(r.rollups.overall_score))
            .collect(),
    );
    let description_quality = tiered(
        server.description_quality_score,
        server.description_quality_tier,
        runs.iter()
            .map(|r| value(r.rollups.description_quality_score))
            .collect(),
    );
    let coherence = tiered(
        server.coherence_score,
        server.coherence_tier,
        runs.iter().map(|r| r.rollups.coherence_score).collect(),
    );

    let mean_runs: Vec<Tenths> = runs.iter().map(|r| value(r.rollups.mean_tdqs)).collect();
    let mean_median = stats::median(&mean_runs).unwrap_or(Tenths(0));
    let mean_tdqs = SetMeasure {
        registry: Measured {
            value: server.mean_tdqs,
            tier: None,
            exact: Some(Exact::of(registry_exact)),
            tools: Vec::new(),
        },
        runs: runs
            .iter()
            .map(|r| Measured {
                value: value(r.rollups.mean_tdqs),
                tier: None,
                exact: r
                    .rollups
                    .exact_mean_tdqs
                    .as_deref()
                    .and_then(parse_fraction)
                    .map(Exact::of),
                tools: Vec::new(),
            })
            .collect(),
        median: Measured {
            value: mean_median,
            tier: None,
            exact: None,
            tools: Vec::new(),
        },
        difference: Tenths(mean_median.0 - server.mean_tdqs.0),
    };

    let min_runs: Vec<Tenths> = runs.iter().map(|r| value(r.rollups.min_tdqs)).collect();
    let min_median = stats::median(&min_runs).unwrap_or(Tenths(0));
    let min_tdqs = SetMeasure {
        registry: Measured {
            value: server.min_tdqs,
            tier: None,
            exact: None,
            tools: lowest_tools(&capture.tools),
        },
        runs: runs
            .iter()
            .map(|r| Measured {
                value: value(r.rollups.min_tdqs),
                tier: None,
                exact: None,
                tools: lowest_tools(&r.tools),
            })
            .collect(),
        median: Measured {
            value: min_median,
            tier: None,
            exact: None,
            tools: Vec::new(),
        },
        difference: Tenths(min_median.0 - server.min_tdqs.0),
    };
    WholeSet {
        overall,
        description_quality,
        coherence,
        mean_tdqs,
        min_tdqs,
    }
}

fn spread(runs: &[RunRecord], tools: &BTreeMap<String, ToolComparison>) -> Spread {
    let identical_runs = runs
        .windows(2)
        .all(|w| w[0].tools == w[1].tools && w[0].coherence == w[1].coherence);
    let ranges: Vec<i64> = tools.values().map(|t| t.range.0).collect();
    let largest = ranges.iter().copied().max().unwrap_or(0);
    let largest_range_tools = if largest > 0 {
        tools
            .iter()
            .filter(|(_, t)| t.range.0 == largest)
            .map(|(n, _)| n.clone())
            .collect()
    } else {
        Vec::new()
    };
    let exact_means: Vec<Frac> = runs
        .iter()
        .filter_map(|r| {
            r.rollups
                .exact_mean_tdqs
                .as_deref()
                .and_then(parse_fraction)
        })
        .collect();
    let zero = Frac::from_integer(0);
    let value = |t: Option<Tenths>| t.unwrap_or(Tenths(0));
    Spread {
        runs: runs.len(),
        identical_runs,
        tools_that_moved: ranges.iter().filter(|r| **r > 0).count(),
        mean_tool_range: Exact::of(Frac::new(
            ranges.iter().sum(),
            10 * ranges.len().max(1) as i64,
        )),
        largest_tool_range: Tenths(largest),
        largest_range_tools,
        mean_tdqs: range_of(runs.iter().map(|r| value(r.rollups.mean_tdqs))),
        exact_mean_tdqs: ExactRange {
            lowest: Exact::of(exact_means.iter().copied().min().unwrap_or(zero)),
            highest: Exact::of(exact_means.iter().copied().max().unwrap_or(zero)),
        },
        min_tdqs: range_of(runs.iter().map(|r| value(r.rollups.min_tdqs))),
        description_quality: range_of(
            runs.iter()
                .map(|r| value(r.rollups.description_quality_score)),
        ),
        coherence: range_of(runs.iter().map(|r| r.rollups.coherence_score)),
        overall: range_of(runs.iter().map(|r| value(r.rollups.overall_score))),
    }
}
