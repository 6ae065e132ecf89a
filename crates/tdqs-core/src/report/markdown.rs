//! The Markdown summary: rendered from the report alone, computing nothing new.
//!
//! Verdict first, then what fell and why, then both sides' scores. It is the job summary in CI and
//! the body of the sticky pull-request comment. It is built as a [`doc`] page ([`page`]) and
//! printed by the Markdown backend; the HTML page shares its sections (`report::sections`).

use crate::eval::case::Choice;
use crate::eval::compare::SelectionCheck;
use crate::exit::Verdict;

use super::changed::ToolChange;
use super::doc::{self, code, fill, joined, marked, paragraph, strong, text, words};
use super::doc::{column, Align, Attrs, Block, Inline, ListItem, Table};
use super::model::*;
use super::sections::{self, num, opt};

/// The mark a verdict's heading starts with.
pub(crate) fn mark(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "✅",
        Verdict::Block => "❌",
        Verdict::Invalid => "⚠️",
    }
}

/// Renders the Markdown summary of a report.
pub fn render(report: &Report) -> String {
    doc::markdown::render(&page(report))
}

/// The level-2 title of a page.
pub(crate) fn title(verdict: Verdict) -> Block {
    let title = format!("{} Tool definition score: {verdict}", mark(verdict));
    doc::heading(2, vec![words(title)])
}

/// The summary as blocks: a level-2 title, then the body (whose headings are level 3).
pub fn page(report: &Report) -> Vec<Block> {
    let mut out = vec![title(report.decision)];
    out.extend(head(&report.reason, report.error.as_ref()));
    let mut lead = sections::sides(report, text);
    // The sandbox's description comes from the exports (a head's may come from an artifact),
    // so it is outside text.
    let sandbox = sandbox_line(report);
    let sandbox = (!sandbox.is_empty()).then(|| vec![text(sandbox.trim_end())]);
    let judge = sections::judge(report)
        .or_else(|| (!report.scored).then(|| vec![words("No model was called.")]));
    for line in [sandbox, judge, rule(report)].into_iter().flatten() {
        lead.push(Inline::Break);
        lead.extend(line);
    }
    out.push(paragraph(lead));
    if let Some(causes) = &report.causes {
        out.extend(causes_blocks(causes));
    }
    if let Some(first) = report.pairs.first() {
        out.extend(scores(report));
        out.extend(omitted(report));
        let title = match report.omitted {
            Some(_) => "Every listed tool (first pair; unchanged tools summarised above)",
            None => "Every tool (first pair)",
        };
        let table = Block::Table(sections::tool_table(first));
        let (attrs, summary) = (Attrs::none(), vec![words(title)]);
        out.push(Block::Details {
            attrs,
            summary,
            blocks: vec![table],
        });
    } else {
        let items = report
            .changes
            .as_ref()
            .map(sections::changed_tools)
            .unwrap_or_default();
        if !items.is_empty() {
            out.push(doc::heading(3, vec![words("Changed tools")]));
            out.push(doc::list(items));
        }
        out.extend(omitted(report));
    }
    if let Some(check) = &report.eval {
        out.extend(selection_check(check));
    }
    if let Some(suggestions) = &report.suggestions {
        out.extend(super::suggestions::blocks(suggestions, 3));
    }
    out.extend(sections::forecast(report));
    out.extend(sections::size(report));
    out.extend(sections::cost(report));
    out.extend(sections::warnings(report));
    out.push(sections::footer(report));
    out
}

/// The reason in bold (its names as code) and an error's advice quoted.
pub(crate) fn head(reason: &str, error: Option<&ReportError>) -> Vec<Block> {
    let mut out = vec![paragraph(vec![strong(marked(reason))])];
    if let Some(advice) = error.and_then(|e| e.advice.as_ref()) {
        out.push(Block::Quote(vec![text(advice)]));
    }
    out
}

/// Which rule decided, and how sure it is.
fn rule(report: &Report) -> Option<Vec<Inline>> {
    let rule = report.decision_rule.as_ref()?;
    let name = strong(vec![words(rule.name.as_str())]);
    let (Some(a), Some(guard)) = (&report.assessment, rule.tool_drop) else {
        return Some(fill("Decided by the {} rule.", [name]));
    };
    let how = format!(
        " rule (per-tool guard {guard}): mean TDQS change {:+.3} against a noise tolerance of \
         {:.3}; over {} pair(s) the base's exact mean ranged {:.3}–{:.3} and the head's \
         {:.3}–{:.3}.",
        a.mean_delta,
        a.mean_tolerance,
        report.pairs.len(),
        a.base_spread[0],
        a.base_spread[1],
        a.head_spread[0],
        a.head_spread[1]
    );
    Some(vec![words("Decided by the "), name, words(how)])
}

/// The selection check: mode, both sides' figures, the exact test and the cases that fell.
fn selection_check(check: &SelectionCheck) -> Vec<Block> {
    let mode = format!("Selection check ({})", check.mode.as_str());
    let selector = fill(
        "Selector {} ({}), the same cases and settings on both sides.",
        [code(&check.model), text(&check.selector)],
    );
    let mut table = Table::new(vec![
        column("Measure", Align::Left),
        column("Base", Align::Right),
        column("Head", Align::Right),
    ]);
    for (label, b, h) in [
        (
            "Selection accuracy (positives + siblings)",
            &check.base_selection,
            &check.head_selection,
        ),
        ("All scored cases", &check.base_all, &check.head_all),
        (
            "Argument validity",
            &check.base_argument_validity,
            &check.head_argument_validity,
        ),
    ] {
        let cells = [
            label.to_string(),
            b.render().trim().into(),
            h.render().trim().into(),
        ];
        table.rows.push(doc::row(cells.map(|c| vec![words(c)])));
    }
    let test = format!(
        "Paired over {} cases: {} fell, {} rose; exact McNemar p = {:.4} (blocks below α = {} \
         when more fell than rose).",
        check.cases.len(),
        check.test.worse,
        check.test.better,
        check.test.p_value,
        check.alpha
    );
    let mut out = vec![
        doc::heading(3, vec![words(mode)]),
        paragraph(vec![Inline::Emphasis(vec![text(&check.mode_label)])]),
        paragraph(selector),
        Block::Table(table),
        paragraph(vec![words(test)]),
    ];
    if check.tdqs_rose_while_selection_fell {
        out.push(sections::rose_while_fell(Attrs::none()));
    }
    let fallen: Vec<_> = check.cases.iter().filter(|c| c.fell()).collect();
    if !fallen.is_empty() {
        let says = "Cases that fell (right on the base, wrong on the head):";
        out.push(paragraph(vec![words(says)]));
        out.push(doc::list(fallen.into_iter().map(|c| {
            let now = match &c.head_selected {
                Choice::NoTool => words("no tool"),
                Choice::Tool(t) => code(t),
            };
            let template = "{} (expected {}) now goes to {}";
            fill(template, [code(&c.id), code(c.expected.as_str()), now])
        })));
    }
    out
}

/// What changed in a fallen tool's definition, as list items.
fn change_items(change: &ToolChange) -> Vec<ListItem> {
    let mut out = Vec::new();
    for line in &change.description_diff {
        let (what, rest) = match line.strip_prefix("- ") {
            Some(rest) => ("removed from the description: “{}”", rest),
            None => (
                "added to the description: “{}”",
                line.get(2..).unwrap_or(""),
            ),
        };
        out.push(fill(what, [text(rest)]));
    }
    let (before, after) = (&change.description_before, &change.description_after);
    if change.description_diff.is_empty() && before != after {
        let side = |d: &Option<String>| text(d.as_deref().unwrap_or(""));
        out.push(fill(
            "description: “{}” → “{}”",
            [side(before), side(after)],
        ));
    }
    for (what, fields) in [
        ("fields added: ", &change.fields_added),
        ("fields removed: ", &change.fields_removed),
    ] {
        if !fields.is_empty() {
            let mut item = vec![words(what)];
            item.extend(joined(fields.iter().map(|f| vec![code(f)]), ", "));
            out.push(item);
        }
    }
    out.into_iter().map(ListItem::new).collect()
}

fn causes_blocks(causes: &Causes) -> Vec<Block> {
    let mut out = sections::causes_intro(causes);
    if !causes.tools.is_empty() {
        let mut table = Table::new(vec![
            column("Tool", Align::Left),
            column("Base", Align::Right),
            column("Head", Align::Right),
            column("Cost to the mean", Align::Right),
        ]);
        for t in &causes.tools {
            let cells = [
                code(&t.tool),
                num(t.base),
                num(t.head),
                num(format!("{:.3}", t.effect)),
            ];
            table.rows.push(doc::row(cells.map(|c| vec![c])));
        }
        out.push(Block::Table(table));
        let items = causes.tools.iter().map(|t| {
            let fall = words(format!(" {} → {}", t.base, t.head));
            let mut line = vec![strong(vec![code(&t.tool)]), fall];
            line.extend(sections::defined_at(t));
            let mut item = ListItem::new(line);
            let fixes = super::changed::fix_lines(t);
            // A deleted description has one fix, and it comes first.
            let deleted = fixes.first().is_some_and(|(label, _)| label.is_none());
            if deleted {
                item.children
                    .push(ListItem::new(vec![strong(vec![text(&fixes[0].1)])]));
            }
            // Dimensions the judge explained with the same words (a hard gate) share one line.
            for group in t
                .dimensions
                .chunk_by(|a, b| a.justification == b.justification)
            {
                let fell: Vec<String> = group
                    .iter()
                    .map(|d| format!("{} {} → {}", d.dimension.label(), d.base, d.head))
                    .collect();
                let why = text(&group[0].justification);
                let line = vec![words(fell.join(", ")), words(": "), why];
                item.children.push(ListItem::new(line));
            }
            item.children.extend(t.change.iter().flat_map(change_items));
            for (label, fix) in fixes.iter().filter(|_| !deleted) {
                let fix = vec![
                    words(format!("Fix {}: ", label.unwrap_or_default())),
                    text(fix),
                ];
                item.children.push(ListItem::new(fix));
            }
            item
        });
        out.push(Block::List {
            attrs: Attrs::none(),
            items: items.collect(),
        });
    }
    out.extend(sections::besides_the_tools(causes, Attrs::none()));
    out
}

fn scores(report: &Report) -> Vec<Block> {
    let mut columns = vec![column("Measure", Align::Left)];
    let right = |head: String| doc::Column {
        head: vec![words(head)],
        align: Align::Right,
        width: 0,
    };
    for i in 1..=report.pairs.len() {
        columns.extend([right(format!("Base #{i}")), right(format!("Head #{i}"))]);
    }
    if report.median.is_some() {
        columns.extend([right("Base median".into()), right("Head median".into())]);
    }
    let mut table = Table::new(columns);
    type Pick = fn(&crate::score::Rollups) -> Option<crate::arith::Tenths>;
    let rows: [(&str, Pick); 5] = [
        ("Mean TDQS", |r| r.mean_tdqs),
        ("Lowest TDQS", |r| r.min_tdqs),
        ("Description quality", |r| r.description_quality_score),
        ("Coherence", |r| Some(r.coherence_score)),
        ("Overall", |r| r.overall_score),
    ];
    for (i, (label, pick)) in rows.into_iter().enumerate() {
        let mut cells = vec![match i {
            0 => vec![strong(vec![words(label)]), words(" (decides)")],
            _ => vec![words(label)],
        }];
        for pair in &report.pairs {
            cells.push(vec![words(opt(pick(&pair.base.rollups)))]);
            cells.push(vec![words(opt(pick(&pair.head.rollups)))]);
        }
        // The medians are the mean's alone; the other rows leave those cells out.
        if let (Some(m), 0) = (&report.median, i) {
            cells.extend([vec![num(m.base)], vec![num(m.head)]]);
        }
        table.rows.push(doc::row(cells));
    }
    vec![doc::heading(3, vec![words("Scores")]), Block::Table(table)]
}

/// The unchanged tools a summarised report counts without listing.
fn omitted(report: &Report) -> Option<Block> {
    let omitted = report.omitted.as_ref()?;
    let count = format!(
        "{} unchanged tools are summarised, not listed",
        omitted.count
    );
    let mut content = fill(
        "{}: the same definition on both sides",
        [strong(vec![words(count)])],
    );
    match report.pairs.first().and_then(|p| p.head.omitted.as_ref()) {
        Some(o) => {
            let mean = o.tdqs_tenths_sum as f64 / (10.0 * o.count as f64);
            let template = " and the same scores in every pair; their mean TDQS is {} (lowest {} \
                            {}), and they count in every mean above.";
            let args = [
                num(format!("{mean:.3}")),
                code(&o.min_tool),
                num(o.min_tdqs),
            ];
            content.extend(fill(template, args));
        }
        None => content.push(words(".")),
    }
    let up_to = num(omitted.list_every_tool_up_to);
    let template = " Servers of up to {} tools are listed in full; {} lists every tool.";
    content.extend(fill(template, [up_to, code("--full-report")]));
    Some(paragraph(content))
}

/// The line a report page gives the sandbox (`Sandbox: bubblewrap 0.8.0 (…).` and a newline),
/// or nothing when neither side's export records one (export files from older versions,
/// URL-only servers).
fn sandbox_line(report: &Report) -> String {
    let (base, head) = (
        record_of(report.base.as_ref()),
        record_of(report.head.as_ref()),
    );
    if base.is_none() && head.is_none() {
        return String::new();
    }
    format!("Sandbox: {}.\n", crate::sandbox::describe_sides(base, head))
}

fn record_of(export: Option<&crate::export::Export>) -> Option<&crate::sandbox::SandboxRecord> {
    export.and_then(|e| e.source.sandbox.as_ref())
}
