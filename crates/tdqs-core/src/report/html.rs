//! The HTML report: one self-contained page rendered from the report alone, computing nothing new.
//!
//! It opens from a CI artifact with no network: the style is inline (allowed by its hash in the
//! page's Content-Security-Policy, which forbids every load and every script), the charts are
//! inline SVG drawn with presentation attributes, and nothing refers to another file. Every text
//! that came from a server (tool names, descriptions, the judge's justifications) is escaped by
//! the HTML backend ([`doc::html`]); this module only builds the page as [`doc`] blocks.
//!
//! A page is a [`document`] around one server section ([`server_section`]) per server, so a run
//! over several servers can put each server's section in one page; [`render`] is the page of one.
//!
//! Work is linear in the number of tools: every lookup goes through the sorted maps the report
//! already holds, and the bar chart and heat map draw in full only the tools that changed (all of
//! them when the server is small), with a count of the rest; the table of every tool is folded.

use std::collections::BTreeSet;

use sha2::{Digest, Sha256};

use super::changed::ToolChange;
use super::doc::chart::{Chart, ChartKind, ChartRow};
use super::doc::{self, code, fill, marked, paragraph, paragraph_with, span, strong, text, words};
use super::doc::{column, Align, Attrs, Block, Cell, DiffLine, GroupKind, Inline, Row, Table};
use super::model::*;
use super::monorepo::MonorepoReport;
use super::sections::{self, num, opt, union_names};

pub use super::doc::html::escape;

/// The file name of the HTML report, beside [`REPORT_JSON`] and [`REPORT_MARKDOWN`].
pub const REPORT_HTML: &str = "tool-definition-score.html";

/// Up to this many tools, the chart and the heat map draw every tool.
const DRAW_ALL_UP_TO: usize = 40;
/// At most this many tools are drawn; the rest are counted (the table below lists them all).
const DRAW_AT_MOST: usize = 200;

const STYLE: &str = "\
body{font:15px/1.45 system-ui,-apple-system,'Segoe UI',Roboto,sans-serif;margin:0;color:#1f2328;background:#fff}\
main{max-width:1100px;margin:0 auto;padding:24px}\
h1{font-size:24px;margin:0 0 16px}\
h2{font-size:20px;margin:0 0 8px}\
h3{font-size:16px;margin:24px 0 8px}\
section.server{border:1px solid #d0d7de;border-radius:8px;padding:16px 20px;margin:0 0 24px}\
.verdict{display:inline-block;padding:2px 10px;border-radius:12px;font-weight:600;color:#fff}\
.verdict-pass{background:#1a7f37}.verdict-block{background:#cf222e}.verdict-invalid{background:#9a6700}\
.reason{font-weight:600}\
.note{color:#59636e}\
code{font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;background:#f6f8fa;padding:1px 4px;border-radius:4px}\
table{border-collapse:collapse;margin:8px 0}\
th,td{border:1px solid #d0d7de;padding:4px 8px;text-align:left;vertical-align:top}\
td.num,th.num{text-align:right;font-variant-numeric:tabular-nums}\
tr.decided td{font-weight:600;background:#f6f8fa}\
td.decision[data-verdict=pass]{background:#dafbe1;color:#116329;font-weight:600}\
td.decision[data-verdict=block]{background:#ffebe9;color:#82071e;font-weight:600}\
td.decision[data-verdict=invalid]{background:#fff8c5;color:#7d4e00;font-weight:600}\
svg{display:block;max-width:100%;height:auto;margin:8px 0}\
svg text{font:12px system-ui,sans-serif;fill:#1f2328}\
svg text.small{font-size:10px;fill:#59636e}\
.bar-base{fill:#8c959f}.bar-head{fill:#0969da}.bar-head.fell{fill:#cf222e}\
.axis{stroke:#d0d7de}\
.legend-base{fill:#8c959f}.legend-head{fill:#0969da}.legend-fell{fill:#cf222e}\
.s0,.s1{fill:#ff8182}.s2{fill:#ffb77c}.s3{fill:#fae17d}.s4{fill:#aceebb}.s5{fill:#4ac26b}.none{fill:#eaeef2}\
.cell-fell{stroke:#cf222e;stroke-width:2}\
.diff{font:13px ui-monospace,SFMono-Regular,Menlo,Consolas,monospace;white-space:pre-wrap;border:1px solid #d0d7de;border-radius:6px;padding:6px 8px;margin:6px 0}\
.diff .del{display:block;background:#ffebe9;color:#82071e}.diff .ins{display:block;background:#dafbe1;color:#116329}\
.tool{border-top:1px solid #d0d7de;padding-top:8px;margin-top:12px}\
.callout{border-left:4px solid #cf222e;background:#ffebe9;padding:4px 8px}\
footer{color:#59636e;font-size:13px;margin-top:16px}\
";

fn base64(bytes: &[u8]) -> String {
    const TABLE: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut out = String::with_capacity(bytes.len().div_ceil(3) * 4);
    for chunk in bytes.chunks(3) {
        let b = [
            chunk[0],
            chunk.get(1).copied().unwrap_or(0),
            chunk.get(2).copied().unwrap_or(0),
        ];
        let n = (u32::from(b[0]) << 16) | (u32::from(b[1]) << 8) | u32::from(b[2]);
        for i in 0..4 {
            if i <= chunk.len() {
                out.push(TABLE[((n >> (18 - 6 * i)) & 63) as usize] as char);
            } else {
                out.push('=');
            }
        }
    }
    out
}

/// The page's Content-Security-Policy: nothing may load and no script may run; the one inline
/// style element is allowed by its hash.
pub fn content_security_policy() -> String {
    let hash = base64(&Sha256::digest(STYLE.as_bytes()));
    format!(
        "default-src 'none'; style-src 'sha256-{hash}'; script-src 'none'; img-src 'none'; \
         font-src 'none'; connect-src 'none'; base-uri 'none'; form-action 'none'"
    )
}

/// A whole page titled `title` around `blocks` (server sections).
pub fn document(title: &str, blocks: &[Block]) -> String {
    format!(
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n<h1>{}</h1>\n{}\
         </main>\n</body>\n</html>\n",
        content_security_policy(),
        escape(title),
        escape(title),
        doc::html::render(blocks)
    )
}

/// The page of one report.
pub fn render(report: &Report) -> String {
    let title = format!("Tool definition score: {}", report.decision);
    document(&title, &[server_section(report, None)])
}

fn server_name(report: &Report) -> Option<&str> {
    report
        .pairs
        .first()
        .map(|p| p.head.server_name.as_str())
        .filter(|n| !n.is_empty())
        .or_else(|| report.head.as_ref().and_then(|e| e.server_name.as_deref()))
        .or_else(|| report.base.as_ref().and_then(|e| e.server_name.as_deref()))
}

/// The verdict as a coloured badge.
fn badge(verdict: crate::exit::Verdict) -> Inline {
    span(
        format!("verdict verdict-{}", verdict.as_str()),
        vec![words(verdict.to_string())],
    )
}

/// "Failed at the … stage: …".
fn failure(error: &ReportError) -> Block {
    let stage = strong(vec![text(error.stage.as_str())]);
    paragraph(fill(
        "Failed at the {} stage: {}",
        [stage, text(&error.cause)],
    ))
}

/// The page of a run over several servers: the overall verdict and a table of the servers,
/// then one section per server, headed by its `[[server]]` name.
pub fn render_monorepo(report: &MonorepoReport) -> String {
    let mut overview = vec![
        doc::heading(
            2,
            fill(
                "{} · {} servers",
                [badge(report.decision), num(report.servers.len())],
            ),
        ),
        paragraph_with(Attrs::class("reason"), marked(&report.reason)),
    ];
    overview.extend(report.error.as_ref().map(failure));
    if !report.servers.is_empty() {
        let mut table = Table::new(vec![
            column("server", Align::Left),
            column("verdict", Align::Left),
            column("reason", Align::Left),
        ]);
        table.grouped = false;
        for s in super::monorepo::failing_first(&report.servers) {
            let verdict = Cell {
                tone: Some(s.report.decision),
                ..Cell::new(vec![num(s.report.decision)])
            };
            table.rows.push(Row {
                attrs: Attrs::none(),
                cells: vec![
                    Cell::new(vec![code(&s.name)]),
                    verdict,
                    Cell::new(marked(&s.report.reason)),
                ],
            });
        }
        overview.push(Block::Table(table));
    }
    let mut blocks = vec![Block::Group {
        kind: GroupKind::Section,
        attrs: verdict_attrs("overall", report.decision, report.exit_code),
        blocks: overview,
    }];
    blocks.extend(
        super::monorepo::failing_first(&report.servers)
            .into_iter()
            .map(|server| server_section(&server.report, Some(&server.name))),
    );
    let title = format!("Tool definition score: {}", report.decision);
    document(&title, &blocks)
}

fn verdict_attrs(class: &'static str, verdict: crate::exit::Verdict, exit_code: u8) -> Attrs {
    Attrs::class(class)
        .data("decision", verdict.as_str())
        .data("exit-code", exit_code)
}

/// One server's section: verdict, decision with its pairs, charts, what fell. `table_name` (a
/// monorepo's `[[server]]` name) heads it when given, otherwise the name the server reported.
pub fn server_section(report: &Report, table_name: Option<&str>) -> Block {
    let mut title = vec![badge(report.decision)];
    if let Some(name) = table_name.or_else(|| server_name(report)) {
        title.extend([words(" · "), code(name)]);
    }
    let mut out = vec![
        doc::heading(2, title),
        paragraph_with(Attrs::class("reason"), marked(&report.reason)),
    ];
    if let Some(error) = &report.error {
        out.push(failure(error));
        if let Some(advice) = &error.advice {
            out.push(paragraph_with(note(), vec![text(advice)]));
        }
    }
    out.push(paragraph(sections::sides(report, code)));
    if let Some(judge) = sections::judge(report) {
        out.push(paragraph(judge));
    } else if !report.scored {
        let says = vec![words("No model was called.")];
        out.push(paragraph_with(Attrs::class("no-model"), says));
    }
    out.extend(decision(report));
    if let Some(first) = report.pairs.first() {
        let fallen: BTreeSet<&str> = report
            .causes
            .iter()
            .flat_map(|c| c.tools.iter().map(|t| t.tool.as_str()))
            .collect();
        let drawn = drawn_tools(report, first, &fallen);
        for (kind, title) in [
            (
                ChartKind::Bars,
                "TDQS per tool, base against head (first pair)",
            ),
            (
                ChartKind::HeatMap,
                "The six dimensions per tool (first pair; base→head where they differ)",
            ),
        ] {
            out.push(doc::heading(3, vec![words(title)]));
            out.push(drawn.chart(kind, first, &fallen));
            out.extend(drawn.note());
        }
    } else {
        out.extend(changes(report));
    }
    if let Some(causes) = &report.causes {
        out.extend(causes_blocks(causes));
    }
    if let Some(check) = &report.eval {
        out.push(super::html_eval::selection_check(check));
    }
    if let Some(suggestions) = &report.suggestions {
        out.extend(super::suggestions::blocks(suggestions, 3));
    }
    if let Some(first) = report.pairs.first() {
        out.push(every_tool(first, omitted_count(report)));
    }
    out.extend(sections::forecast(report));
    out.extend(sections::size(report));
    out.extend(sections::cost(report));
    out.extend(sections::warnings(report));
    out.push(sections::footer(report));
    Block::Group {
        kind: GroupKind::Section,
        attrs: verdict_attrs("server", report.decision, report.exit_code),
        blocks: out,
    }
}

/// The decision with its pairs: each pair's means, the medians, the tolerance and the verdict.
fn decision(report: &Report) -> Vec<Block> {
    let mut out = vec![doc::heading(3, vec![words("Decision")])];
    if let Some(rule) = &report.decision_rule {
        let guard = rule
            .tool_drop
            .map(|g| format!(" (per-tool guard {g})"))
            .unwrap_or_default();
        let name = strong(vec![text(rule.name.as_str())]);
        out.push(paragraph(vec![
            words("Decided by the "),
            name,
            words(format!(" rule{guard}.")),
        ]));
    }
    let verdict = Attrs::class("decision").data("verdict", report.decision.as_str());
    if report.pairs.is_empty() {
        // The reason as recorded, its marks shown.
        let says = fill(
            "{}: {}",
            [strong(vec![num(report.decision)]), text(&report.reason)],
        );
        out.push(paragraph_with(verdict, says));
        return out;
    }
    let mut table = Table::new(vec![
        column("Pair", Align::Left),
        column("Base mean TDQS", Align::Right),
        column("Head mean TDQS", Align::Right),
        column("Change", Align::Right),
        column("Noise tolerance", Align::Right),
        column("Verdict", Align::Left),
    ])
    .with_attrs(Attrs::class("pairs"));
    for (i, pair) in report.pairs.iter().enumerate() {
        let (b, h) = (pair.base.rollups.mean_tdqs, pair.head.rollups.mean_tdqs);
        let change = match (b, h) {
            (Some(b), Some(h)) => format!("{:+.1}", (h.0 - b.0) as f64 / 10.0),
            _ => "–".to_string(),
        };
        let cells = [
            format!("#{}", i + 1),
            opt(b),
            opt(h),
            change,
            String::new(),
            String::new(),
        ];
        let mut row = doc::row(cells.map(|c| vec![words(c)]));
        row.attrs = Attrs::class("pair");
        table.rows.push(row);
    }
    let (label, base, head) = match &report.median {
        Some(m) => ("Median", m.base.to_string(), m.head.to_string()),
        None => {
            let first = &report.pairs[0];
            (
                "Decided",
                opt(first.base.rollups.mean_tdqs),
                opt(first.head.rollups.mean_tdqs),
            )
        }
    };
    let (change, tolerance) = match &report.assessment {
        Some(a) => (
            format!("{:+.3}", a.mean_delta),
            format!("{:.3}", a.mean_tolerance),
        ),
        None => (String::new(), "–".to_string()),
    };
    let mut decided = Row {
        attrs: Attrs::class("decided"),
        cells: [label.to_string(), base, head, change, tolerance]
            .into_iter()
            .map(|c| Cell::new(vec![words(c)]))
            .collect(),
    };
    decided.cells.push(Cell {
        tone: Some(report.decision),
        ..Cell::new(vec![words(report.decision.to_string())])
    });
    table.rows.push(decided);
    out.push(Block::Table(table));
    if let Some(a) = &report.assessment {
        out.push(paragraph_with(
            note(),
            vec![words(format!(
                "Over {} pair(s) the base's exact mean ranged {:.3}–{:.3} and the head's \
                 {:.3}–{:.3}.",
                report.pairs.len(),
                a.base_spread[0],
                a.base_spread[1],
                a.head_spread[0],
                a.head_spread[1]
            ))],
        ));
        if !a.fallen_tools.is_empty() {
            let mut falls = Table::new(vec![
                column("Tool whose median TDQS fell", Align::Left),
                column("Base", Align::Right),
                column("Head", Align::Right),
                column("Tolerance", Align::Right),
                column("Blocks", Align::Left),
            ])
            .with_attrs(Attrs::class("tool-falls"));
            for t in &a.fallen_tools {
                let tolerance = num(format!("{:.3}", t.tolerance));
                let blocks = words(if t.blocks { "yes" } else { "no" });
                let cells = [code(&t.tool), num(t.base), num(t.head), tolerance, blocks];
                falls.rows.push(doc::row(cells.map(|c| vec![c])));
            }
            out.push(Block::Table(falls));
        }
    }
    out
}

/// The tools the charts draw, in order: fallen tools (costliest first), then tools whose score or
/// definition differs, then (on a small server) the rest, each group by name.
fn drawn_tools<'a>(report: &'a Report, first: &'a Pair, fallen: &BTreeSet<&str>) -> Drawn<'a> {
    let changed: BTreeSet<&str> = report
        .changes
        .iter()
        .flat_map(|c| c.changed.iter().chain(&c.added).chain(&c.removed))
        .map(String::as_str)
        .collect();
    let mut names: Vec<&'a str> = Vec::new();
    if let Some(causes) = &report.causes {
        names.extend(causes.tools.iter().map(|t| t.tool.as_str()));
    }
    let all = union_names(&first.base.tools, &first.head.tools);
    let total = all.len();
    let mut rest = Vec::new();
    for name in all {
        if fallen.contains(name) {
            continue;
        }
        let differs = changed.contains(name)
            || first.base.tools.get(name).map(|t| t.tdqs)
                != first.head.tools.get(name).map(|t| t.tdqs);
        if differs {
            names.push(name);
        } else {
            rest.push(name);
        }
    }
    if total <= DRAW_ALL_UP_TO {
        names.extend(rest);
        rest = Vec::new();
    }
    let mut not_drawn_changed = 0;
    if names.len() > DRAW_AT_MOST {
        not_drawn_changed = names.len() - DRAW_AT_MOST;
        names.truncate(DRAW_AT_MOST);
    }
    Drawn {
        names,
        // Tools a summarised report leaves out stand the same on both sides too.
        not_drawn_unchanged: rest.len() + omitted_count(report),
        not_drawn_changed,
    }
}

struct Drawn<'a> {
    names: Vec<&'a str>,
    /// Tools with an unchanged definition and an equal score, counted, not drawn.
    not_drawn_unchanged: usize,
    /// Changed tools past [`DRAW_AT_MOST`].
    not_drawn_changed: usize,
}

impl Drawn<'_> {
    fn chart(&self, kind: ChartKind, first: &Pair, fallen: &BTreeSet<&str>) -> Block {
        let rows = self
            .names
            .iter()
            .map(|name| ChartRow {
                name: name.to_string(),
                base: first.base.tools.get(*name).map(Into::into),
                head: first.head.tools.get(*name).map(Into::into),
                fell: fallen.contains(name),
            })
            .collect();
        Block::Chart(Chart { kind, rows })
    }

    fn note(&self) -> Option<Block> {
        let mut parts = Vec::new();
        if self.not_drawn_unchanged > 0 {
            parts.push(format!(
                "{} tool(s) with an unchanged definition and an equal score",
                self.not_drawn_unchanged
            ));
        }
        if self.not_drawn_changed > 0 {
            parts.push(format!(
                "{} more changed tool(s) past the first {DRAW_AT_MOST}",
                self.not_drawn_changed
            ));
        }
        if parts.is_empty() {
            return None;
        }
        Some(paragraph_with(
            Attrs::class("note not-drawn"),
            vec![words(format!(
                "Not drawn: {} (every tool the report lists is in the table below).",
                parts.join("; ")
            ))],
        ))
    }
}

/// Without scores: which tools differ by definition.
fn changes(report: &Report) -> Vec<Block> {
    let Some(changes) = &report.changes else {
        return Vec::new();
    };
    let items = sections::changed_tools(changes);
    if items.is_empty() {
        return vec![paragraph_with(
            note(),
            vec![words(format!(
                "Every tool definition is unchanged ({} tool(s)): nothing to chart.",
                changes.unchanged.len()
            ))],
        )];
    }
    vec![
        doc::heading(3, vec![words("Changed tools")]),
        Block::List {
            attrs: Attrs::class("changes"),
            items: items.into_iter().map(doc::ListItem::new).collect(),
        },
    ]
}

fn change_blocks(change: &ToolChange) -> Vec<Block> {
    let mut out = Vec::new();
    if !change.description_diff.is_empty() {
        out.push(Block::Diff(
            change
                .description_diff
                .iter()
                .map(|line| DiffLine {
                    removed: line.starts_with("- "),
                    line: line.clone(),
                })
                .collect(),
        ));
    } else if change.description_before != change.description_after {
        let line = |removed, mark, d: &Option<String>| DiffLine {
            removed,
            line: format!("{mark} {}", d.as_deref().unwrap_or("")),
        };
        out.push(Block::Diff(vec![
            line(true, "-", &change.description_before),
            line(false, "+", &change.description_after),
        ]));
    }
    for (what, class, fields) in [
        ("Fields added", "fields-added", &change.fields_added),
        ("Fields removed", "fields-removed", &change.fields_removed),
    ] {
        if !fields.is_empty() {
            let mut content = vec![words(format!("{what}: "))];
            content.extend(doc::joined(fields.iter().map(|f| vec![code(f)]), ", "));
            out.push(paragraph_with(Attrs::class(class), content));
        }
    }
    out
}

fn causes_blocks(causes: &Causes) -> Vec<Block> {
    let mut out = sections::causes_intro(causes);
    for t in &causes.tools {
        let cost = span(
            "note",
            vec![words(format!("(costs the mean {:.3})", t.effect))],
        );
        let fall = words(format!(" {} → {} ", t.base, t.head));
        let mut line = vec![strong(vec![code(&t.tool)]), fall, cost];
        line.extend(sections::defined_at(t));
        let mut blocks = vec![paragraph(line)];
        let deleted = t
            .change
            .as_ref()
            .is_some_and(super::changed::ToolChange::description_deleted);
        if deleted {
            // One fix first, instead of the same generic line under every dimension.
            blocks.push(paragraph_with(
                Attrs::class("fix-first"),
                vec![strong(vec![words(super::changed::DESCRIPTION_DELETED_FIX)])],
            ));
        }
        if !t.dimensions.is_empty() {
            // Dimensions the judge explained with the same words share one line.
            blocks.push(doc::list(
                t.dimensions
                    .chunk_by(|a, b| a.justification == b.justification)
                    .map(|group| {
                        let fell: Vec<String> = group
                            .iter()
                            .map(|d| format!("{} {} → {}", d.dimension.label(), d.base, d.head))
                            .collect();
                        let mut item = vec![
                            words(format!("{}: ", fell.join(", "))),
                            text(&group[0].justification),
                        ];
                        for d in group.iter().filter(|d| !deleted && !d.fix.is_empty()) {
                            item.push(words(" "));
                            let label = if group.len() > 1 {
                                format!("Fix {}: ", d.dimension.label())
                            } else {
                                "Fix: ".to_string()
                            };
                            item.push(span("note", vec![words(label), text(&d.fix)]));
                        }
                        item
                    }),
            ));
        }
        if let Some(change) = &t.change {
            blocks.extend(change_blocks(change));
        }
        out.push(Block::Group {
            kind: GroupKind::Div,
            attrs: Attrs::class("tool fallen").data("tool", &t.tool),
            blocks,
        });
    }
    out.extend(sections::besides_the_tools(causes, note()));
    out
}

/// The HTML page's note style.
fn note() -> Attrs {
    Attrs::class("note")
}

/// How many tools a summarised report leaves out (see `report::summary`).
fn omitted_count(report: &Report) -> usize {
    report.omitted.as_ref().map_or(0, |o| o.count as usize)
}

fn every_tool(first: &Pair, omitted: usize) -> Block {
    let mut table = sections::tool_table(first);
    let count = table.rows.len() + omitted;
    if omitted > 0 {
        let template = "{} tool(s) with the same definition and the same scores on both sides \
                        are summarised in the report, not listed (run with {} to list them).";
        let says = fill(template, [num(omitted), code("--full-report")]);
        let cells = vec![Cell {
            span: 4,
            ..Cell::new(says)
        }];
        table.rows.insert(
            0,
            Row {
                attrs: Attrs::class("omitted"),
                cells,
            },
        );
    }
    Block::Details {
        attrs: Attrs::class("every-tool"),
        summary: vec![words(format!("Every tool (first pair, {count})"))],
        blocks: vec![Block::Table(table)],
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn base64_matches_the_standard_alphabet_and_padding() {
        assert_eq!(base64(b""), "");
        assert_eq!(base64(b"f"), "Zg==");
        assert_eq!(base64(b"fo"), "Zm8=");
        assert_eq!(base64(b"foo"), "Zm9v");
        assert_eq!(base64(b"foobar"), "Zm9vYmFy");
    }

    #[test]
    fn the_policy_allows_exactly_the_inline_style() {
        let csp = content_security_policy();
        assert!(csp.starts_with("default-src 'none'; style-src 'sha256-"));
        assert!(csp.contains("script-src 'none'"));
        let page = document("t", &[]);
        assert!(page.contains(&format!("<style>{STYLE}</style>")));
        assert!(!page.contains("<script"));
    }
}
