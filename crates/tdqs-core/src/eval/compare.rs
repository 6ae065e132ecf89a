//! The gate's selection check: the same suite run on the base and the head with the same
//! selector, paired per case, and an exact McNemar test on the cases whose outcome changed.
//!
//! The check blocks only on a *significant* fall ([`super::stats::ALPHA`]): more cases went
//! from right to wrong than from wrong to right, beyond what chance explains. It names the cases
//! that fell and the tool that now captures each.

use serde::{Deserialize, Serialize};

use super::case::{CaseKind, Choice};
use super::metrics::Ratio;
use super::result::EvalRun;
use super::stats::{mcnemar_exact, McNemar, ALPHA};
use super::Mode;
use crate::judge::TokenUsage;

/// One scored case on both sides.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PairedCase {
    pub id: String,
    pub kind: CaseKind,
    pub expected: Choice,
    pub base_selected: Choice,
    pub head_selected: Choice,
}

impl PairedCase {
    pub fn base_correct(&self) -> bool {
        self.base_selected == self.expected
    }
    pub fn head_correct(&self) -> bool {
        self.head_selected == self.expected
    }
    /// Right on the base, wrong on the head.
    pub fn fell(&self) -> bool {
        self.base_correct() && !self.head_correct()
    }
    pub fn rose(&self) -> bool {
        !self.base_correct() && self.head_correct()
    }
}

/// The selection check of one gate run, as the report records it.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SelectionCheck {
    pub mode: Mode,
    pub mode_label: String,
    pub selector: String,
    pub model: String,
    pub suite_digest: String,
    /// Selection accuracy (positives and siblings) of each side.
    pub base_selection: Ratio,
    pub head_selection: Ratio,
    /// Every scored case (abstentions included), the population of the paired test.
    pub base_all: Ratio,
    pub head_all: Ratio,
    pub base_argument_validity: Ratio,
    pub head_argument_validity: Ratio,
    pub cases: Vec<PairedCase>,
    pub test: McNemar,
    pub alpha: f64,
    /// True when the fall is significant: the gate BLOCKs.
    pub blocks: bool,
    /// Set by the gate: the head's mean TDQS rose while selection fell significantly.
    #[serde(default)]
    pub tdqs_rose_while_selection_fell: bool,
    pub calls: usize,
    pub cached: usize,
    pub usage: TokenUsage,
    pub latency_ms: u64,
}

/// Why two runs cannot be paired.
pub fn incomparable(base: &EvalRun, head: &EvalRun) -> Option<String> {
    if base.mode != head.mode || base.selector != head.selector || base.model != head.model {
        return Some(format!(
            "the base was run with {} {} ({}) and the head with {} {} ({})",
            base.selector,
            base.model,
            base.mode.as_str(),
            head.selector,
            head.model,
            head.mode.as_str()
        ));
    }
    if base.suite_digest != head.suite_digest {
        return Some("the base and the head were run on different case suites".to_string());
    }
    let ids = |r: &EvalRun| -> Vec<String> { r.cases.iter().map(|c| c.id.clone()).collect() };
    if ids(base) != ids(head) {
        return Some("the base and the head hold different cases".to_string());
    }
    None
}

/// The McNemar test over paired cases, and whether it blocks.
pub fn judge_pairs(cases: &[PairedCase]) -> (McNemar, bool) {
    let worse = cases.iter().filter(|c| c.fell()).count();
    let better = cases.iter().filter(|c| c.rose()).count();
    let test = mcnemar_exact(worse, better);
    let blocks = test.significant_fall();
    (test, blocks)
}

/// Pairs two runs of the same suite. `Err` names why they are not comparable.
pub fn compare(base: &EvalRun, head: &EvalRun) -> Result<SelectionCheck, String> {
    if let Some(why) = incomparable(base, head) {
        return Err(why);
    }
    let cases: Vec<PairedCase> = base
        .cases
        .iter()
        .zip(&head.cases)
        .filter(|(b, h)| !b.exploratory && !h.exploratory)
        .map(|(b, h)| PairedCase {
            id: b.id.clone(),
            kind: b.kind,
            expected: b.expected.clone(),
            base_selected: b.selected.clone(),
            head_selected: h.selected.clone(),
        })
        .collect();
    let (test, blocks) = judge_pairs(&cases);
    let mut usage = base.usage;
    usage.add(&head.usage);
    Ok(SelectionCheck {
        mode: base.mode,
        mode_label: base.mode_label.clone(),
        selector: base.selector.clone(),
        model: base.model.clone(),
        suite_digest: base.suite_digest.clone(),
        base_selection: base.metrics.selection,
        head_selection: head.metrics.selection,
        base_all: base.metrics.all_cases,
        head_all: head.metrics.all_cases,
        base_argument_validity: base.metrics.argument_validity,
        head_argument_validity: head.metrics.argument_validity,
        cases,
        test,
        alpha: ALPHA,
        blocks,
        tdqs_rose_while_selection_fell: false,
        calls: base.calls + head.calls,
        cached: base.cached + head.cached,
        usage,
        latency_ms: base.latency_ms + head.latency_ms,
    })
}

impl SelectionCheck {
    /// The cases that fell, each with what now takes it: "`p-close` (expected `close_issue`) now
    /// goes to `delete_issue`".
    pub fn fallen_lines(&self) -> Vec<String> {
        self.cases
            .iter()
            .filter(|c| c.fell())
            .map(|c| {
                let now = match &c.head_selected {
                    Choice::NoTool => "no tool (NO_TOOL)".to_string(),
                    Choice::Tool(t) => format!("`{t}`"),
                };
                format!(
                    "`{}` (expected `{}`) now goes to {now}",
                    c.id,
                    c.expected.as_str()
                )
            })
            .collect()
    }

    /// One sentence for the verdict's reason.
    pub fn summary(&self) -> String {
        let verdict = if self.blocks {
            "fell significantly"
        } else if self.test.significant_rise() {
            "rose significantly"
        } else {
            "did not change significantly"
        };
        format!(
            "Selection ({}, {}): {} of {} cases fell and {} rose (exact McNemar p = {:.4}, α = {}); selection {verdict}{}.",
            self.mode.as_str(),
            self.model,
            self.test.worse,
            self.cases.len(),
            self.test.better,
            self.test.p_value,
            self.alpha,
            if self.blocks {
                format!(": {}", self.fallen_lines().join("; "))
            } else {
                String::new()
            }
        )
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::case::Provenance;
    use crate::eval::metrics::{compute, CaseResult};
    use crate::eval::scores::{composite, health};

    fn run(selected: &[&str], model: &str) -> EvalRun {
        let expected = ["a", "a", "b", "b", "a", "b", "a", "NO_TOOL"];
        let cases: Vec<CaseResult> = expected
            .iter()
            .zip(selected)
            .enumerate()
            .map(|(i, (e, s))| CaseResult {
                id: format!("c{i}"),
                kind: if *e == "NO_TOOL" {
                    CaseKind::Abstain
                } else {
                    CaseKind::Positive
                },
                provenance: Provenance::HumanFixture,
                expected: Choice::parse(e),
                exploratory: false,
                selected: Choice::parse(s),
                correct: e == s,
                arguments_valid: None,
                argument_errors: vec![],
                confidence: 1.0,
                reason: String::new(),
            })
            .collect();
        let metrics = compute(&cases, &["a".into(), "b".into()]);
        EvalRun {
            mode: Mode::LiveModel,
            mode_label: Mode::LiveModel.label().into(),
            selector: "openai".into(),
            model: model.into(),
            server_name: None,
            server_version: None,
            tool_count: 2,
            tool_set_digest: "d".into(),
            suite_digest: "s".into(),
            health: health(0, 0, metrics.selection.hit, metrics.selection.of),
            composite: composite([None; 6]),
            metrics,
            cases,
            calls: 8,
            cached: 0,
            usage: TokenUsage::default(),
            latency_ms: 10,
        }
    }

    #[test]
    fn significant_fall_blocks_and_names_the_captor() {
        let base = run(&["a", "a", "b", "b", "a", "b", "a", "NO_TOOL"], "m");
        let head = run(&["b", "b", "a", "a", "b", "a", "a", "NO_TOOL"], "m");
        let check = compare(&base, &head).unwrap();
        assert_eq!((check.test.worse, check.test.better), (6, 0));
        assert!(check.blocks);
        let lines = check.fallen_lines();
        assert_eq!(lines.len(), 6);
        assert_eq!(lines[0], "`c0` (expected `a`) now goes to `b`");
        assert!(check.summary().contains("fell significantly"));
        // Five falls are not significant (p = 0.0625): no block.
        let head5 = run(&["b", "b", "a", "a", "b", "b", "a", "NO_TOOL"], "m");
        let check5 = compare(&base, &head5).unwrap();
        assert_eq!(check5.test.worse, 5);
        assert!(!check5.blocks);
    }

    #[test]
    fn incomparable_runs_are_refused() {
        let base = run(&["a"; 8], "m");
        let head = run(&["a"; 8], "other");
        assert!(compare(&base, &head).unwrap_err().contains("other"));
        let mut head = run(&["a"; 8], "m");
        head.suite_digest = "t".into();
        assert!(compare(&base, &head)
            .unwrap_err()
            .contains("different case suites"));
    }
}
