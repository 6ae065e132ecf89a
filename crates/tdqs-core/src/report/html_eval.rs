//! The HTML page's "Selection check" section: the gate's opt-in selection check (`--eval` /
//! `[eval]`) built from the recorded [`SelectionCheck`] alone, as [`doc`] blocks.
//!
//! It shows the mode and its label (a `synthetic` check is an estimate of ambiguity, not of
//! model accuracy), each side's figures with their counts, the cases that fell and rose with the
//! tool each now goes to, the exact McNemar test and whether it blocks, and the call-out when the
//! mean TDQS rose while selection fell.

use crate::eval::case::Choice;
use crate::eval::compare::{PairedCase, SelectionCheck};
use crate::eval::metrics::Ratio;
use crate::eval::Mode;

use super::doc::{self, code, paragraph, paragraph_with, strong, text, words};
use super::doc::{column, Align, Attrs, Block, GroupKind, Inline, Row, Table};

/// A ratio as `61% (11/18)`, or `– (0/0)` when nothing was counted.
fn ratio(r: &Ratio) -> String {
    match r.percent() {
        Some(p) => format!("{p}% ({}/{})", r.hit, r.of),
        None => format!("– ({}/{})", r.hit, r.of),
    }
}

fn choice(c: &Choice) -> Vec<Inline> {
    match c {
        Choice::NoTool => vec![words("no tool ("), code("NO_TOOL"), words(")")],
        Choice::Tool(t) => vec![code(t)],
    }
}

fn case_table(class: &'static str, cases: &[&PairedCase]) -> Block {
    let mut table = Table::new(vec![
        column("Case", Align::Left),
        column("Kind", Align::Left),
        column("Expected", Align::Left),
        column("Base selected", Align::Left),
        column("Head selected (now captures it)", Align::Left),
    ])
    .with_attrs(Attrs::class(class));
    table.rows = cases
        .iter()
        .map(|c| Row {
            attrs: Attrs::none().data("case", &c.id),
            ..doc::row([
                vec![code(&c.id)],
                vec![text(c.kind.as_str())],
                choice(&c.expected),
                choice(&c.base_selected),
                choice(&c.head_selected),
            ])
        })
        .collect();
    Block::Table(table)
}

/// The section, a group of its own.
pub(super) fn selection_check(check: &SelectionCheck) -> Block {
    let mode = check.mode.as_str();
    let mut out = vec![
        doc::heading(3, vec![words("Selection check ("), code(mode), words(")")]),
        paragraph_with(
            Attrs::class("mode-label"),
            vec![strong(vec![text(&check.mode_label)])],
        ),
    ];
    if check.mode == Mode::Synthetic {
        out.push(paragraph_with(
            Attrs::class("note"),
            vec![words(
                "No model selected: these figures estimate how ambiguous the definitions are \
                 to a lexical ranking; they are not any model's accuracy.",
            )],
        ));
    }
    out.push(paragraph(vec![
        words("Selector "),
        code(&check.model),
        words(" ("),
        text(&check.selector),
        words("), the same cases and settings on both sides; suite "),
        code(check.suite_digest.chars().take(12).collect::<String>()),
        words("."),
    ]));
    let validity = |r: &Ratio| {
        if check.mode == Mode::Synthetic {
            "– (synthetic mode generates no arguments)".to_string()
        } else {
            ratio(r)
        }
    };
    let mut table = Table::new(vec![
        column("Measure", Align::Left),
        column("Base", Align::Right),
        column("Head", Align::Right),
    ])
    .with_attrs(Attrs::class("selection"));
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
        table
            .rows
            .push(doc::row([vec![words(label)], vec![text(b)], vec![text(h)]]));
    }
    out.push(Block::Table(table));
    let verdict = if check.blocks {
        vec![
            strong(vec![words("blocks")]),
            words(": more cases fell than rose, beyond chance"),
        ]
    } else {
        vec![words("does not block")]
    };
    let mut mcnemar = vec![words(format!(
        "Paired over {} cases: {} fell, {} rose; exact McNemar p = {:.4} (α = {}). The \
         selection check ",
        check.cases.len(),
        check.test.worse,
        check.test.better,
        check.test.p_value,
        check.alpha
    ))];
    mcnemar.extend(verdict);
    mcnemar.push(words("."));
    out.push(paragraph_with(
        Attrs::class("mcnemar").data("p-value", format!("{:.4}", check.test.p_value)),
        mcnemar,
    ));
    if check.tdqs_rose_while_selection_fell {
        out.push(super::sections::rose_while_fell(Attrs::class(
            "callout tdqs-rose-selection-fell",
        )));
    }
    for (class, says, cases) in [
        (
            "cases-fell",
            "Cases that fell (right on the base, wrong on the head):",
            check.cases.iter().filter(|c| c.fell()).collect::<Vec<_>>(),
        ),
        (
            "cases-rose",
            "Cases that rose (wrong on the base, right on the head):",
            check.cases.iter().filter(|c| c.rose()).collect(),
        ),
    ] {
        if !cases.is_empty() {
            out.push(paragraph(vec![words(says)]));
            out.push(case_table(class, &cases));
        }
    }
    out.push(paragraph_with(
        Attrs::class("note"),
        vec![words(format!(
            "Selection: {} calls, {} answers from the cache, tokens {} in / {} out, {} ms.",
            check.calls,
            check.cached,
            check.usage.input_tokens,
            check.usage.output_tokens,
            check.latency_ms
        ))],
    ));
    Block::Group {
        kind: GroupKind::Div,
        attrs: Attrs::class("selection-check")
            .data("mode", mode)
            .data("blocks", check.blocks),
        blocks: out,
    }
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
        let out = doc::html::render(&[selection_check(&check(Mode::LiveModel, 8, true))]);
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
        let out = doc::html::render(&[selection_check(&check(Mode::Synthetic, 1, false))]);
        assert!(out.contains("data-mode=\"synthetic\" data-blocks=\"false\""));
        assert!(out.contains("an estimate of ambiguity, not of model accuracy"));
        assert!(out.contains("does not block"));
        assert!(out.contains("synthetic mode generates no arguments"));
        assert!(!out.contains("tdqs-rose-selection-fell"));
    }
}
