//! The figures of one run: selection accuracy (positives and siblings), per kind, abstention,
//! argument validity, per-tool hit rates and the confusion lines.
//!
//! Exploratory cases are shown and never counted. Every rate is kept as a count out of a count,
//! so no figure is shown without how many cases it rests on.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use super::case::{CaseKind, Choice, Provenance};

/// `hit` out of `of`.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct Ratio {
    pub hit: usize,
    pub of: usize,
}

impl Ratio {
    pub fn add(&mut self, hit: bool) {
        self.of += 1;
        if hit {
            self.hit += 1;
        }
    }

    /// The share, or `None` when nothing was counted.
    pub fn share(&self) -> Option<f64> {
        (self.of > 0).then(|| self.hit as f64 / self.of as f64)
    }

    /// Whole percent with the counts: `92% 37/40`, or `–  0/0`.
    pub fn render(&self) -> String {
        match self.percent() {
            Some(p) => format!("{p:>3}%  {}/{}", self.hit, self.of),
            None => format!("  –   {}/{}", self.hit, self.of),
        }
    }

    /// Whole percent, rounded as the peers round it ([`peer_percent`]): 37/40 is 92 %.
    pub fn percent(&self) -> Option<u64> {
        peer_percent(self.hit, self.of)
    }
}

/// Whole percent of `hit` out of `of`, rounded exactly as mcp-toolgauge rounds its rates
/// (`round(correct / total * 100)` in Python, `mcp_toolgauge/model/eval.py` and `health.py`):
/// the share in binary floating point, times 100, then a half to the even neighbour. So 37/40
/// (92.5) shows 92 % here as it does there, where rounding half up would show 93 %; and 23/40,
/// whose product is 57.49999999999999 in floating point, shows 57 in both. `None` for `0/0`.
pub fn peer_percent(hit: usize, of: usize) -> Option<u64> {
    (of > 0).then(|| (hit as f64 / of as f64 * 100.0).round_ties_even() as u64)
}

/// What happened to one case.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct CaseResult {
    pub id: String,
    pub kind: CaseKind,
    pub provenance: Provenance,
    pub expected: Choice,
    pub exploratory: bool,
    pub selected: Choice,
    pub correct: bool,
    /// Whether the generated arguments satisfy the selected tool's `inputSchema`: `None` when no
    /// listed tool was selected, or in synthetic mode (no arguments are generated).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub arguments_valid: Option<bool>,
    /// Why the arguments were refused (the validator's messages).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub argument_errors: Vec<String>,
    pub confidence: f64,
    pub reason: String,
}

/// Hits of one tool over the scored cases meant for it, and where the misses went.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ToolHits {
    pub tool: String,
    pub hit: Ratio,
    /// Where the misses went (`NO_TOOL` for nothing), most first.
    pub went_instead: Vec<(String, usize)>,
}

/// "`captor` captures N % of the requests meant for `meant_for`".
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Capture {
    pub captor: String,
    pub meant_for: String,
    pub count: usize,
    pub of: usize,
}

impl Capture {
    pub fn percent(&self) -> u64 {
        Ratio {
            hit: self.count,
            of: self.of,
        }
        .percent()
        .unwrap_or(0)
    }

    pub fn line(&self) -> String {
        format!(
            "{} captures {} % of the requests meant for {} ({}/{}).",
            self.captor,
            self.percent(),
            self.meant_for,
            self.count,
            self.of
        )
    }
}

/// Every figure of one run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metrics {
    /// Positives and siblings: the expected tool was selected.
    pub selection: Ratio,
    pub positives: Ratio,
    pub siblings: Ratio,
    /// Abstain cases answered `NO_TOOL`.
    pub abstention: Ratio,
    /// Every scored case, abstentions included (the ToolChoice-style accuracy).
    pub all_cases: Ratio,
    /// Selections of a listed tool whose arguments were checked and held.
    pub argument_validity: Ratio,
    pub per_tool: Vec<ToolHits>,
    /// Most-captured first.
    pub captures: Vec<Capture>,
    /// Cases shown but not scored.
    pub exploratory: usize,
}

/// Computes the figures; `tools` is the server's listing order (per-tool rows follow it).
pub fn compute(results: &[CaseResult], tools: &[String]) -> Metrics {
    let mut m = Metrics {
        selection: Ratio::default(),
        positives: Ratio::default(),
        siblings: Ratio::default(),
        abstention: Ratio::default(),
        all_cases: Ratio::default(),
        argument_validity: Ratio::default(),
        per_tool: Vec::new(),
        captures: Vec::new(),
        exploratory: 0,
    };
    let mut hits: BTreeMap<&str, Ratio> = BTreeMap::new();
    let mut went: BTreeMap<&str, BTreeMap<String, usize>> = BTreeMap::new();
    for r in results {
        if r.exploratory {
            m.exploratory += 1;
            continue;
        }
        m.all_cases.add(r.correct);
        match r.kind {
            CaseKind::Positive => m.positives.add(r.correct),
            CaseKind::Sibling => m.siblings.add(r.correct),
            CaseKind::Abstain => m.abstention.add(r.correct),
        }
        if r.kind != CaseKind::Abstain {
            m.selection.add(r.correct);
        }
        if let Some(valid) = r.arguments_valid {
            m.argument_validity.add(valid);
        }
        if let Choice::Tool(meant) = &r.expected {
            hits.entry(meant).or_default().add(r.correct);
            if !r.correct {
                *went
                    .entry(meant)
                    .or_default()
                    .entry(r.selected.as_str().to_string())
                    .or_default() += 1;
            }
        }
    }
    let mut order: Vec<&str> = tools.iter().map(String::as_str).collect();
    for name in hits.keys() {
        if !order.contains(name) {
            order.push(name);
        }
    }
    for name in order {
        let Some(hit) = hits.get(name) else { continue };
        let mut instead: Vec<(String, usize)> = went
            .get(name)
            .map(|w| w.iter().map(|(k, v)| (k.clone(), *v)).collect())
            .unwrap_or_default();
        instead.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.cmp(&b.0)));
        for (captor, count) in &instead {
            if captor != super::case::NO_TOOL {
                m.captures.push(Capture {
                    captor: captor.clone(),
                    meant_for: name.to_string(),
                    count: *count,
                    of: hit.of,
                });
            }
        }
        m.per_tool.push(ToolHits {
            tool: name.to_string(),
            hit: *hit,
            went_instead: instead,
        });
    }
    m.captures.sort_by(|a, b| {
        (b.count * a.of)
            .cmp(&(a.count * b.of))
            .then(b.count.cmp(&a.count))
            .then(a.meant_for.cmp(&b.meant_for))
            .then(a.captor.cmp(&b.captor))
    });
    m
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(id: &str, kind: CaseKind, expected: &str, selected: &str) -> CaseResult {
        let expected = Choice::parse(expected);
        let selected = Choice::parse(selected);
        CaseResult {
            id: id.into(),
            kind,
            provenance: Provenance::HumanFixture,
            correct: expected == selected,
            expected,
            selected,
            exploratory: false,
            arguments_valid: None,
            argument_errors: vec![],
            confidence: 1.0,
            reason: String::new(),
        }
    }

    #[test]
    fn metrics_and_capture_lines() {
        let mut results = vec![
            r("1", CaseKind::Positive, "ticket", "ticket"),
            r("2", CaseKind::Positive, "ticket", "search"),
            r("3", CaseKind::Sibling, "ticket", "search"),
            r("4", CaseKind::Sibling, "ticket", "NO_TOOL"),
            r("5", CaseKind::Positive, "search", "search"),
            r("6", CaseKind::Abstain, "NO_TOOL", "NO_TOOL"),
            r("7", CaseKind::Abstain, "NO_TOOL", "search"),
        ];
        let mut ex = r("8", CaseKind::Positive, "search", "ticket");
        ex.exploratory = true;
        results.push(ex);
        results[0].arguments_valid = Some(true);
        results[1].arguments_valid = Some(false);
        let m = compute(&results, &["search".into(), "ticket".into()]);
        assert_eq!(m.selection, Ratio { hit: 2, of: 5 });
        assert_eq!(m.positives, Ratio { hit: 2, of: 3 });
        assert_eq!(m.siblings, Ratio { hit: 0, of: 2 });
        assert_eq!(m.abstention, Ratio { hit: 1, of: 2 });
        assert_eq!(m.all_cases, Ratio { hit: 3, of: 7 });
        assert_eq!(m.argument_validity, Ratio { hit: 1, of: 2 });
        assert_eq!(m.exploratory, 1);
        assert_eq!(m.per_tool[0].tool, "search");
        assert_eq!(m.per_tool[1].hit, Ratio { hit: 1, of: 4 });
        assert_eq!(
            m.per_tool[1].went_instead,
            vec![("search".to_string(), 2), ("NO_TOOL".to_string(), 1)]
        );
        assert_eq!(m.captures.len(), 1);
        assert_eq!(
            m.captures[0].line(),
            "search captures 50 % of the requests meant for ticket (2/4)."
        );
        assert_eq!(m.selection.render(), " 40%  2/5");
        assert_eq!(Ratio::default().percent(), None);
    }

    #[test]
    fn percentages_round_as_the_peers_round() {
        // (hit, of, what Python's round(hit / of * 100) gives)
        for (hit, of, python) in [
            (37, 40, 92),   // 92.5: half to even, where half up gives 93
            (3, 8, 38),     // 37.5: half to even, up this time
            (1, 8, 12),     // 12.5
            (1, 40, 2),     // 2.5
            (23, 40, 57),   // 57.49999999999999 in floating point: down, as in Python
            (109, 200, 55), // 54.50000000000001 in floating point: up, as in Python
            (1, 3, 33),
            (2, 3, 67),
            (0, 5, 0),
            (5, 5, 100),
            (6, 18, 33),
            (11, 18, 61),
        ] {
            assert_eq!(peer_percent(hit, of), Some(python), "{hit}/{of}");
        }
        assert_eq!(peer_percent(0, 0), None);
        assert_eq!(Ratio { hit: 37, of: 40 }.render(), " 92%  37/40");
    }
}
