//! Two roll-ups of the selection figures with the lint figures, each a peer's definition, never
//! shown without its parts.
//!
//! - The **ToolChoice-style composite** (their weights: selection accuracy 35, distinguishability
//!   20, description quality 15, parameter clarity 15, argument validity 10, safety 5). The
//!   weights are theirs; the parts are computed here from this tool's own lint scorecard and
//!   eval figures (docs/eval.md says how), so the number is comparable in shape, not in value.
//! - The **toolgauge-style health score**: `lint = clamp(100 − 10·errors − 3·warnings)`,
//!   `selection = round(100 · accuracy)` over positives and siblings, `health = round(mean)`.

use serde::{Deserialize, Serialize};

use super::metrics::{peer_percent, Ratio};

/// The composite's weights, in percent, as ToolChoice publishes them.
pub const COMPOSITE_WEIGHTS: [(&str, u32); 6] = [
    ("selection accuracy", 35),
    ("distinguishability", 20),
    ("description quality", 15),
    ("parameter clarity", 15),
    ("argument validity", 10),
    ("safety and side-effect clarity", 5),
];

/// Each part 0–100, in the order of [`COMPOSITE_WEIGHTS`]. `None`: not measured (the weight is
/// then spread over the measured parts, and the rendering says so).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Composite {
    pub parts: [Option<f64>; 6],
    /// 0–100, rounded half up.
    pub total: u32,
}

fn clamp100(x: f64) -> f64 {
    x.clamp(0.0, 100.0)
}

/// The weighted sum of the measured parts, renormalised over their weights.
pub fn composite(parts: [Option<f64>; 6]) -> Composite {
    let mut sum = 0.0;
    let mut weights = 0u32;
    for (part, (_, w)) in parts.iter().zip(COMPOSITE_WEIGHTS) {
        if let Some(p) = part {
            sum += clamp100(*p) * f64::from(w);
            weights += w;
        }
    }
    let total = if weights == 0 {
        0
    } else {
        (sum / f64::from(weights) + 0.5).floor() as u32
    };
    Composite {
        parts: parts.map(|p| p.map(clamp100)),
        total,
    }
}

impl Composite {
    /// The total with every part and its weight.
    pub fn render(&self) -> String {
        let mut out = format!(
            "Composite (ToolChoice-style weights)  {:>3} / 100\n",
            self.total
        );
        for (part, (name, w)) in self.parts.iter().zip(COMPOSITE_WEIGHTS) {
            let shown = part.map_or_else(|| "not measured".to_string(), |p| format!("{p:>5.1}"));
            out.push_str(&format!("  {name:<32} {w:>2}%  {shown}\n"));
        }
        if self.parts.iter().any(Option::is_none) {
            out.push_str("  (weights of the parts not measured are spread over the others)\n");
        }
        out
    }
}

/// The composite's distinguishability part, 0–100: the mean of a static part, `100 − 10 ×` the
/// pair findings of lint (near-duplicate names, overlapping descriptions), and a behavioural part,
/// `100 ×` the share of positive and sibling requests that reached the tool meant for them.
///
/// The behavioural part reads the confusion matrix with its "(nothing)" column: a request meant
/// for a tool that went to another tool was confused, and one that went to no tool was not told
/// apart either — a definition nothing reaches is not distinct, it is unseen. Counting only the
/// requests another tool captured rewarded a server whose tools match nothing (every request
/// `NO_TOOL`, no capture, full marks). With no positive or sibling case, the static part alone.
pub fn distinguishability(pair_findings: usize, selection: &Ratio) -> f64 {
    let static_part = (100.0 - 10.0 * pair_findings as f64).max(0.0);
    match selection.share() {
        Some(reached) => (static_part + 100.0 * reached) / 2.0,
        None => static_part,
    }
}

/// The toolgauge-style health score and its two halves.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Health {
    pub lint_errors: usize,
    pub lint_warnings: usize,
    pub lint_score: u32,
    /// `None` when no positive or sibling case was scored: then there is no health score.
    pub selection_score: Option<u32>,
    pub selection_hit: usize,
    pub selection_of: usize,
    pub health: Option<u32>,
}

/// The health score, rounded as mcp-toolgauge rounds it (`mcp_toolgauge/health.py`): the
/// selection half is [`peer_percent`], the total `round(0.5·lint + 0.5·selection)` with a half to
/// the even neighbour — so 37/40 with a clean lint is 92 and 96, as the peer shows it.
pub fn health(errors: usize, warnings: usize, selection_hit: usize, selection_of: usize) -> Health {
    let penalty = 10 * errors as i64 + 3 * warnings as i64;
    let lint_score = (100 - penalty).clamp(0, 100) as u32;
    let selection_score = peer_percent(selection_hit, selection_of).map(|p| p as u32);
    let health = selection_score
        .map(|s| (0.5 * f64::from(lint_score) + 0.5 * f64::from(s)).round_ties_even() as u32);
    Health {
        lint_errors: errors,
        lint_warnings: warnings,
        lint_score,
        selection_score,
        selection_hit,
        selection_of,
        health,
    }
}

/// The health score's lint half is named for what it counts, so it is not read as `tdqs-gate
/// lint`'s average scorecard (a different figure for the same tools).
const LINT_LINE: &str = "lint findings";
const NOT_THE_AVERAGE: &str = "not lint's average scorecard";

impl Health {
    /// The score with both halves beside it.
    pub fn render(&self) -> String {
        match (self.health, self.selection_score) {
            (Some(h), Some(s)) => format!(
                "Health (toolgauge-style)  {h:>3} / 100\n  {LINT_LINE} {:>3}   = 100 − 10 × {} errors − 3 × {} warnings ({NOT_THE_AVERAGE})\n  selection     {s:>3}%  {} of {} requests\n",
                self.lint_score, self.lint_errors, self.lint_warnings, self.selection_hit, self.selection_of
            ),
            _ => format!(
                "Health (toolgauge-style)  – (no positive or sibling case scored)\n  {LINT_LINE} {:>3}   = 100 − 10 × {} errors − 3 × {} warnings ({NOT_THE_AVERAGE})\n",
                self.lint_score, self.lint_errors, self.lint_warnings
            ),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn composite_weights_and_parts() {
        let weights: u32 = COMPOSITE_WEIGHTS.iter().map(|w| w.1).sum();
        assert_eq!(weights, 100);
        let c = composite([
            Some(100.0),
            Some(50.0),
            Some(0.0),
            Some(100.0),
            Some(100.0),
            Some(0.0),
        ]);
        // 35 + 10 + 0 + 15 + 10 + 0
        assert_eq!(c.total, 70);
        let text = c.render();
        assert!(text.contains(" 70 / 100"));
        for (name, _) in COMPOSITE_WEIGHTS {
            assert!(text.contains(name), "{text}");
        }
        // Unmeasured parts: renormalised, and said.
        let partial = composite([Some(80.0), None, None, None, None, None]);
        assert_eq!(partial.total, 80);
        assert!(partial.render().contains("not measured"));
    }

    #[test]
    fn distinguishability_gives_no_credit_to_requests_that_reach_nothing() {
        // A server whose tools match nothing: 18 requests, none reached, none captured.
        let nothing = distinguishability(0, &Ratio { hit: 0, of: 18 });
        // A server that routes most requests right, with one lint pair finding.
        let routed = distinguishability(1, &Ratio { hit: 15, of: 18 });
        assert_eq!(nothing, 50.0);
        assert!(routed > nothing, "{routed} vs {nothing}");
        assert_eq!(distinguishability(0, &Ratio { hit: 18, of: 18 }), 100.0);
        assert_eq!(distinguishability(12, &Ratio::default()), 0.0);
        assert_eq!(distinguishability(2, &Ratio::default()), 80.0);
    }

    #[test]
    fn health_is_the_mean_of_its_halves() {
        // mcp-toolgauge's README: "Health 96 / 100, lint 100, selection 92% 37 of 40".
        let h = health(0, 0, 37, 40);
        assert_eq!(h.lint_score, 100);
        assert_eq!(h.selection_score, Some(92));
        assert_eq!(h.health, Some(96));
        // A half of the total goes to the even neighbour too: round(96.5) = 96, round(97.5) = 98.
        assert_eq!(health(0, 0, 93, 100).health, Some(96));
        assert_eq!(health(0, 0, 95, 100).health, Some(98));
        let h = health(2, 5, 1, 2);
        assert_eq!(h.lint_score, 65);
        assert_eq!(h.selection_score, Some(50));
        assert_eq!(h.health, Some(58));
        assert!(h
            .render()
            .contains("lint findings  65   = 100 − 10 × 2 errors − 3 × 5 warnings"));
        assert_eq!(health(20, 0, 0, 0).lint_score, 0);
        assert_eq!(health(0, 0, 0, 0).health, None);
    }
}
