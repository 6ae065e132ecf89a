//! The `synthetic` selector: a deterministic lexical ranking of the whole tool set, no model.
//!
//! Every tool is indexed by [`super::lexical::ToolIndex`] (BM25F over its name, description,
//! parameter names and parameter descriptions, with a light stemmer, action classes, the
//! evidence of identifiers and values the request carries, and the agreement of the request's
//! lead verb or question form with the action a tool's name says — [`super::intent`]). A request goes to the best-scoring tool unless
//! one of two calibrated rules answers `NO_TOOL`:
//!
//! - **Floor.** The best tool's fit — how much of the request it explains, without weighing words
//!   by rarity — is under [`FLOOR`]: no tool explains the request well enough (one weak word in a
//!   long description does not make a tool the answer).
//! - **Margin.** The runner-up is within [`MARGIN`] of the best (`best − second ≤ MARGIN ×
//!   best`, so an exact tie always): the definitions do not set the two apart for this request.
//!   The answer is `NO_TOOL` with confidence 0 and names both, so an ambiguous pair counts as a
//!   miss, never as a lucky pick.
//!
//! The two constants, and the evidence weights of [`super::lexical::Weights::SHIPPED`], were
//! chosen on the calibration sets of the labelled set in `tests/fixtures/selection/`; its other
//! sets are held out (docs/eval.md gives the figures, and which sets the choice saw). What the selector estimates is *ambiguity*:
//! how far the definitions' own words set each tool apart for a request phrased in ordinary
//! words. It is not the accuracy of any model, and it rewards what a rewrite adds (more
//! distinctive words), so a synthetic before/after is circular (docs/eval.md).

use serde_json::{Map, Value};

use super::answer::SelectionAnswer;
use super::case::Choice;
use super::lexical::{Scored, ToolIndex, Weights};

/// Under this fit of the best tool ([`Scored::fit`]): `NO_TOOL`.
pub const FLOOR: f64 = 0.2;

/// Runner-up within this share of the best score (`best − second ≤ MARGIN × best`): unresolved,
/// `NO_TOOL` with confidence 0. At 0, only an exact tie is unresolved — the calibration sets
/// found any wider margin turned more right answers into misses than wrong ones.
pub const MARGIN: f64 = 0.0;

/// The model name the synthetic mode records (the selector's version: a change of its rules or
/// constants is a new name, so runs of two versions are never paired).
pub const SYNTHETIC_MODEL: &str = "synthetic-bm25f-v4";

/// The selector for one tool set.
#[derive(Debug, Clone)]
pub struct SyntheticSelector {
    index: ToolIndex,
    floor: f64,
    margin: f64,
    weights: Weights,
}

fn shown(s: &Scored) -> String {
    let mut terms: Vec<&str> = s
        .matched
        .iter()
        .map(String::as_str)
        .filter(|t| !t.starts_with('~'))
        .collect();
    terms.truncate(6);
    let mut out = format!("{} {:.2}", s.name, s.score);
    if !terms.is_empty() {
        out.push_str(&format!(" [{}]", terms.join(" ")));
    }
    for id in &s.identifiers {
        out.push_str(&format!(" +{id}…"));
    }
    out
}

impl SyntheticSelector {
    pub fn new(tools: &[Value]) -> Self {
        Self::with_thresholds(tools, FLOOR, MARGIN)
    }

    /// A selector with other thresholds: for calibrating them, never for a reported run (the
    /// recorded model name stands for [`FLOOR`] and [`MARGIN`]).
    pub fn with_thresholds(tools: &[Value], floor: f64, margin: f64) -> Self {
        Self::with_weights(tools, floor, margin, Weights::SHIPPED)
    }

    /// A selector with other thresholds and evidence weights: for calibrating them, never for a
    /// reported run.
    pub fn with_weights(tools: &[Value], floor: f64, margin: f64, weights: Weights) -> Self {
        SyntheticSelector {
            index: ToolIndex::new(tools),
            floor,
            margin,
            weights,
        }
    }

    /// Every tool's score for a request, best first.
    pub fn rank(&self, request: &str) -> Vec<Scored> {
        self.index.rank_with(request, &self.weights)
    }

    /// Selects for one request. Arguments are never generated (empty): argument validity is a
    /// live-model figure.
    pub fn select(&self, request: &str) -> SelectionAnswer {
        let ranked = self.rank(request);
        let Some(best) = ranked.first() else {
            return SelectionAnswer {
                tool: Choice::NoTool,
                arguments: Map::new(),
                confidence: 1.0,
                reason: "the server lists no tool".to_string(),
            };
        };
        let second = ranked.get(1).map_or(0.0, |s| s.score);
        if best.fit < self.floor || best.score <= 0.0 {
            return SelectionAnswer {
                tool: Choice::NoTool,
                arguments: Map::new(),
                confidence: round2(1.0 - best.fit / self.floor),
                reason: format!(
                    "no tool reaches the floor {:.2}: best {} (fit {:.2})",
                    self.floor,
                    shown(best),
                    best.fit
                ),
            };
        }
        let margin = (best.score - second) / best.score;
        if best.score - second <= self.margin * best.score {
            return SelectionAnswer {
                tool: Choice::NoTool,
                arguments: Map::new(),
                confidence: 0.0,
                reason: format!(
                    "ambiguous: {} and {} are not set apart (margin {:.0} %)",
                    shown(best),
                    shown(&ranked[1]),
                    self.margin * 100.0
                ),
            };
        }
        let reason = match ranked.get(1).filter(|s| s.score > 0.0) {
            Some(next) => format!("{}; next {}", shown(best), shown(next)),
            None => format!("{}; no other tool matches", shown(best)),
        };
        SelectionAnswer {
            tool: Choice::Tool(best.name.clone()),
            arguments: Map::new(),
            confidence: round2(margin),
            reason,
        }
    }
}

fn round2(x: f64) -> f64 {
    (x.clamp(0.0, 1.0) * 100.0).round() / 100.0
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> Vec<Value> {
        vec![
            json!({"name": "search_users", "description": "Find people in the directory by name or email address."}),
            json!({"name": "search_orgs", "description": "Find organizations in the directory by name or domain."}),
            json!({"name": "create_ticket", "description": "Open a support ticket for a customer problem."}),
        ]
    }

    #[test]
    fn synthetic_picks_the_best_ranked_tool() {
        let s = SyntheticSelector::new(&tools());
        let a = s.select("Find the person whose email address is ann@example.com");
        assert_eq!(a.tool, Choice::Tool("search_users".into()));
        assert!(a.confidence > 0.0 && a.confidence <= 1.0);
        let b = s.select("Open a ticket: the customer cannot log in");
        assert_eq!(b.tool, Choice::Tool("create_ticket".into()));
        // One word of a name is enough (the old rule wanted two shared words).
        let c = s.select("Any orgs called Acme?");
        assert_eq!(c.tool, Choice::Tool("search_orgs".into()), "{}", c.reason);
    }

    #[test]
    fn synthetic_abstains_under_the_floor() {
        let s = SyntheticSelector::new(&tools());
        let a = s.select("Send an SMS reminder tomorrow morning");
        assert_eq!(a.tool, Choice::NoTool);
        assert!(a.reason.contains("floor"), "{}", a.reason);
        assert_eq!(
            SyntheticSelector::new(&[]).select("anything").tool,
            Choice::NoTool
        );
    }

    #[test]
    fn synthetic_unresolved_tie_is_a_miss_naming_both() {
        let twins = vec![
            json!({"name": "lookup_alpha", "description": "Gets data from the directory."}),
            json!({"name": "lookup_beta", "description": "Gets data from the directory."}),
        ];
        let s = SyntheticSelector::new(&twins);
        let a = s.select("Get data about Ann from the directory");
        assert_eq!(a.tool, Choice::NoTool);
        assert_eq!(a.confidence, 0.0);
        assert!(
            a.reason.contains("lookup_alpha") && a.reason.contains("lookup_beta"),
            "{}",
            a.reason
        );
        // The name breaks the tie when the request uses it.
        let b = s.select("Use the beta lookup for Ann's directory data");
        assert_eq!(b.tool, Choice::Tool("lookup_beta".into()));
    }

    #[test]
    fn synthetic_is_deterministic() {
        let s = SyntheticSelector::new(&tools());
        let r = "Find organizations by domain";
        assert_eq!(s.select(r), s.select(r));
    }
}
