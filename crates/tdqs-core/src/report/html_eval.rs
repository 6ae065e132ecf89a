//! The HTML page's "Selection check" section: the gate's opt-in selection check (`--eval` /
//! `[eval]`) rendered from the recorded [`SelectionCheck`] alone, every text escaped.
//!
//! It shows the mode and its label (a `synthetic` check is an estimate of ambiguity, not of
//! model accuracy), each side's figures with their counts, the cases that fell and rose with the
//! tool each now goes to, the exact McNemar test and whether it blocks, and the call-out when the
//! mean TDQS rose while selection fell.

use std::fmt::Write as _;

use crate::eval::case::Choice;
use crate::eval::compare::{PairedCase, SelectionCheck};
use crate::eval::metrics::Ratio;
use crate::eval::Mode;

use super::html::escape;

/// A ratio as `61% (11/18)`, or `– (0/0)` when nothing was counted.
fn ratio(r: &Ratio) -> String {
    match r.percent() {
        Some(p) => format!("{p}% ({}/{})", r.hit, r.of),
        None => format!("– ({}/{})", r.hit, r.of),
    }
}

fn choice(c: &Choice) -> String {
    match c {
        Choice::NoTool => "no tool (<code>NO_TOOL</code>)".to_string(),
        Choice::Tool(t) => format!("<code>{}</code>", escape(t)),
    }
}

fn case_rows(out: &mut String, class: &str, cases: &[&PairedCase]) {
    let _ = writeln!(
        out,
        "<table class=\"{class}\">\n<thead><tr><th>Case</th><th>Kind</th><th>Expected</th>\
         <th>Base selected</th><th>Head selected (now captures it)</th></tr></thead>\n<tbody>"
    );
    for c in cases {
        let _ = writeln!(
            out,
            "<tr data-case=\"{}\"><td><code>{}</code></td><td>{}</td><td>{}</td><td>{}</td>\
             <td>{}</td></tr>",
            escape(&c.id),
            escape(&c.id),
            escape(c.kind.as_str()),
            choice(&c.expected),
            choice(&c.base_selected),
            choice(&c.head_selected)
        );
    }
    let _ = writeln!(out, "</tbody>\n</table>");
}

/// Appends the section to `out`.
pub(super) fn render_selection_check(out: &mut String, check: &SelectionCheck) {
    let mode = check.mode.as_str();
    let _ = writeln!(
        out,
        "<div class=\"selection-check\" data-mode=\"{mode}\" data-blocks=\"{}\">",
        check.blocks
    );
    let _ = writeln!(out, "<h3>Selection check (<code>{mode}</code>)</h3>");
    let _ = writeln!(
        out,
        "<p class=\"mode-label\"><b>{}</b></p>",
        escape(&check.mode_label)
    );
    if check.mode == Mode::Synthetic {
        let _ = writeln!(
            out,
            "<p class=\"note\">No model selected: these figures estimate how ambiguous the \
             definitions are to a word-overlap reader; they are not any model's accuracy.</p>"
        );
    }
    let _ = writeln!(
        out,
        "<p>Selector <code>{}</code> ({}), the same cases and settings on both sides; suite \
         <code>{}</code>.</p>",
        escape(&check.model),
        escape(&check.selector),
        escape(&check.suite_digest.chars().take(12).collect::<String>())
    );
    let _ = writeln!(
        out,
        "<table class=\"selection\">\n<thead><tr><th>Measure</th><th class=\"num\">Base</th>\
         <th class=\"num\">Head</th></tr></thead>\n<tbody>"
    );
    let validity = |r: &Ratio| {
        if check.mode == Mode::Synthetic {
            "– (synthetic mode generates no arguments)".to_string()
        } else {
            ratio(r)
        }
    };
    for (label, b, h) in [
        (
            "Selection accuracy (positives + siblings)",
            ratio(&check.base_selection),
            ratio(&check.head_selection),
        ),
        (
            "All scored cases (abstentions included)",
            ratio(&check.base_all),
            ratio(&check.head_all),
        ),
        (
            "Argument validity",
            validity(&check.base_argument_validity),
            validity(&check.head_argument_validity),
        ),
    ] {
        let _ = writeln!(
            out,
            "<tr><td>{label}</td><td class=\"num\">{}</td><td class=\"num\">{}</td></tr>",
            escape(&b),
            escape(&h)
        );
    }
    let _ = writeln!(out, "</tbody>\n</table>");
    let verdict = if check.blocks {
        "<b>blocks</b>: more cases fell than rose, beyond chance"
    } else {
        "does not block"
    };
    let _ = writeln!(
        out,
        "<p class=\"mcnemar\" data-p-value=\"{:.4}\">Paired over {} cases: {} fell, {} rose; \
         exact McNemar p = {:.4} (α = {}). The selection check {verdict}.</p>",
        check.test.p_value,
        check.cases.len(),
        check.test.worse,
        check.test.better,
        check.test.p_value,
        check.alpha
    );
    if check.tdqs_rose_while_selection_fell {
        let _ = writeln!(
            out,
            "<p class=\"callout tdqs-rose-selection-fell\"><b>The mean TDQS rose while \
             selection fell significantly</b>: the new definitions read better to the judge and \
             route worse.</p>"
        );
    }
    let fell: Vec<&PairedCase> = check.cases.iter().filter(|c| c.fell()).collect();
    if !fell.is_empty() {
        let _ = writeln!(
            out,
            "<p>Cases that fell (right on the base, wrong on the head):</p>"
        );
        case_rows(out, "cases-fell", &fell);
    }
    let rose: Vec<&PairedCase> = check.cases.iter().filter(|c| c.rose()).collect();
    if !rose.is_empty() {
        let _ = writeln!(
            out,
            "<p>Cases that rose (wrong on the base, right on the head):</p>"
        );
        case_rows(out, "cases-rose", &rose);
    }
    let _ = writeln!(
        out,
        "<p class=\"note\">Selection: {} calls, {} answers from the cache, tokens {} in / {} out, \
         {} ms.</p>\n</div>",
        check.calls,
        check.cached,
        check.usage.input_tokens,
        check.usage.output_tokens,
        check.latency_ms
    );
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::eval::case::CaseKind;
    use crate::eval::stats::{mcnemar_exact, ALPHA};
    use crate::judge::TokenUsage;

    fn check(mode: Mode, fell: usize, rose_while_fell: bool) -> SelectionCheck {
        let mut cases = Vec::new();
        for i in 0..fell {
            cases.push(PairedCase {
                id: format!("<c{i}>"),
                kind: CaseKind::Sibling,
                expected: Choice::Tool("close_issue".into()),
                base_selected: Choice::Tool("close_issue".into()),
                head_selected: Choice::Tool("delete_<b>issue".into()),
            });
        }
        cases.push(PairedCase {
            id: "up".into(),
            kind: CaseKind::Abstain,
            expected: Choice::NoTool,
            base_selected: Choice::Tool("x".into()),
            head_selected: Choice::NoTool,
        });
        let test = mcnemar_exact(fell, 1);
        SelectionCheck {
            mode,
            mode_label: mode.label().into(),
            selector: "openai".into(),
            model: "m<odel>".into(),
            suite_digest: "abcdef0123456789".into(),
            base_selection: Ratio { hit: 9, of: 10 },
            head_selection: Ratio { hit: 2, of: 10 },
            base_all: Ratio { hit: 9, of: 11 },
            head_all: Ratio { hit: 3, of: 11 },
            base_argument_validity: Ratio { hit: 8, of: 9 },
            head_argument_validity: Ratio { hit: 1, of: 2 },
            blocks: test.significant_fall(),
            cases,
            test,
            alpha: ALPHA,
            tdqs_rose_while_selection_fell: rose_while_fell,
            calls: 4,
            cached: 18,
            usage: TokenUsage::default(),
            latency_ms: 12,
        }
    }

    #[test]
    fn selection_check_names_falls_captors_and_test_escaped() {
        let mut out = String::new();
        render_selection_check(&mut out, &check(Mode::LiveModel, 8, true));
        assert!(out.contains("data-mode=\"live_model\" data-blocks=\"true\""));
        assert!(out.contains(Mode::LiveModel.label()));
        assert!(out.contains("90% (9/10)") && out.contains("20% (2/10)"));
        assert!(
            out.contains("50% (1/2)"),
            "argument validity with its parts"
        );
        assert!(out.contains("8 fell, 1 rose"));
        assert!(out.contains("The selection check <b>blocks</b>"));
        assert!(out.contains("class=\"cases-fell\""));
        assert!(out.contains("<code>delete_&lt;b&gt;issue</code>"));
        assert!(out.contains("<code>&lt;c0&gt;</code>"));
        assert!(out.contains("class=\"cases-rose\""));
        assert!(out.contains("no tool (<code>NO_TOOL</code>)"));
        assert!(out.contains("tdqs-rose-selection-fell"));
        assert!(out.contains("<code>m&lt;odel&gt;</code>"));
        assert!(!out.contains("<b>issue") && !out.contains("<odel>"));
    }

    #[test]
    fn synthetic_check_is_labelled_an_estimate_of_ambiguity() {
        let mut out = String::new();
        render_selection_check(&mut out, &check(Mode::Synthetic, 1, false));
        assert!(out.contains("data-mode=\"synthetic\" data-blocks=\"false\""));
        assert!(out.contains("an estimate of ambiguity, not of model accuracy"));
        assert!(out.contains("does not block"));
        assert!(out.contains("synthetic mode generates no arguments"));
        assert!(!out.contains("tdqs-rose-selection-fell"));
    }
}
