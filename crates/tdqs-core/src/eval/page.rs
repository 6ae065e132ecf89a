//! The text page of one eval run (`tdqs-gate eval`), built as a [`doc`] page and printed by the
//! plain-text backend: mode first, then the figures, the per-tool table, the capture lines, the
//! cases worth a look and the two roll-ups with their parts.

use super::metrics::{CaseResult, Ratio};
use super::result::EvalRun;
use super::Mode;
use crate::report::doc::{self, column, text, words, Align, Block, Inline, Table};

impl EvalRun {
    /// The text report: mode first, then the figures, the per-tool table, the capture lines and
    /// the two roll-ups with their parts.
    pub fn render_text(&self) -> String {
        text::render(&page(self))
    }
}

/// Lines with a break between each two.
fn lines(parts: impl IntoIterator<Item = Vec<Inline>>) -> Block {
    let mut content = Vec::new();
    for (i, part) in parts.into_iter().enumerate() {
        if i > 0 {
            content.push(Inline::Break);
        }
        content.extend(part);
    }
    doc::paragraph(content)
}

/// A titled list of cases: the title, then one indented line a case.
fn cases(
    title: &'static str,
    cases: &[&CaseResult],
    line: fn(&CaseResult) -> Vec<Inline>,
) -> Option<Block> {
    if cases.is_empty() {
        return None;
    }
    let mut parts = vec![vec![words(title)]];
    parts.extend(cases.iter().map(|c| {
        let mut l = vec![words("  ")];
        l.extend(line(c));
        l
    }));
    Some(lines(parts))
}

pub(super) fn page(run: &EvalRun) -> Vec<Block> {
    let server = match (&run.server_name, &run.server_version) {
        (Some(n), Some(v)) => format!("{n} {v}"),
        (Some(n), None) => n.clone(),
        _ => "(unnamed server)".to_string(),
    };
    let per_call = if run.calls > 0 {
        format!(" ({} ms per call)", run.latency_ms / run.calls as u64)
    } else {
        String::new()
    };
    let mut out = vec![lines([
        vec![words("mode: "), text(&run.mode_label)],
        vec![
            text(server),
            words(format!(
                "   {} tools   tool set {}",
                run.tool_count,
                &run.tool_set_digest[..run.tool_set_digest.len().min(12)]
            )),
        ],
        vec![
            words("selector "),
            text(&run.model),
            words(" ("),
            text(&run.selector),
            words(format!(
                ")   {} cases ({} exploratory, not scored)   {} calls, {} from cache",
                run.cases.len(),
                run.metrics.exploratory,
                run.calls,
                run.cached
            )),
        ],
        vec![words(format!(
            "tokens {} in, {} out   latency {} ms{per_call}",
            run.usage.input_tokens, run.usage.output_tokens, run.latency_ms
        ))],
    ])];
    let m = &run.metrics;
    let mut figures = Table::new(vec![
        column("", Align::Left).width(20),
        column("", Align::Left),
    ]);
    figures.head = false;
    let mut figure = |label: &'static str, value: String| {
        figures
            .rows
            .push(doc::row([vec![words(label)], vec![words(value)]]));
    };
    figure("Selection accuracy", m.selection.render());
    figure("  positives", m.positives.render());
    figure("  siblings", m.siblings.render());
    figure("Abstention", m.abstention.render());
    if run.mode == Mode::Synthetic {
        figure(
            "Argument validity",
            "  –   (synthetic mode generates no arguments)".to_string(),
        );
    } else {
        figure("Argument validity", m.argument_validity.render());
    }
    out.push(Block::Table(figures));
    if !m.per_tool.is_empty() {
        let mut table = Table::new(vec![
            column("tool", Align::Left),
            column("hit", Align::Left).width(12),
            column("went instead to", Align::Left),
        ]);
        for t in &m.per_tool {
            let instead: Vec<String> = t
                .went_instead
                .iter()
                .map(|(to, n)| {
                    let shown = if to == super::case::NO_TOOL {
                        "(nothing)"
                    } else {
                        to.as_str()
                    };
                    let pct = Ratio {
                        hit: *n,
                        of: t.hit.of,
                    }
                    .percent()
                    .unwrap_or(0);
                    format!("{shown} {pct}%")
                })
                .collect();
            table.rows.push(doc::row([
                vec![text(&t.tool)],
                vec![words(t.hit.render().trim_start().to_string())],
                vec![text(instead.join(", "))],
            ]));
        }
        out.push(Block::Table(table));
    }
    if !m.captures.is_empty() {
        out.push(lines(m.captures.iter().map(|c| vec![text(c.line())])));
    }
    let exploratory: Vec<&CaseResult> = run.cases.iter().filter(|c| c.exploratory).collect();
    out.extend(cases(
        "exploratory (shown, not scored):",
        &exploratory,
        |c| {
            vec![text(format!(
                "{}: expected {}, selected {}",
                c.id,
                c.expected.as_str(),
                c.selected.as_str()
            ))]
        },
    ));
    let wrong: Vec<&CaseResult> = run
        .cases
        .iter()
        .filter(|c| !c.exploratory && !c.correct)
        .collect();
    out.extend(cases("missed cases:", &wrong, |c| {
        vec![text(format!(
            "{} ({}): expected {}, selected {} — {}",
            c.id,
            c.kind.as_str(),
            c.expected.as_str(),
            c.selected.as_str(),
            c.reason
        ))]
    }));
    let invalid: Vec<&CaseResult> = run
        .cases
        .iter()
        .filter(|c| c.arguments_valid == Some(false))
        .collect();
    out.extend(cases("invalid arguments:", &invalid, |c| {
        vec![text(format!("{}: {}", c.id, c.argument_errors.join("; ")))]
    }));
    for rollup in [run.health.render(), run.composite.render()] {
        out.push(Block::CodeBlock(rollup.trim_end_matches('\n').to_string()));
    }
    out.push(doc::paragraph(vec![words(format!(
        "mode: {}",
        run.mode.as_str()
    ))]));
    out
}
