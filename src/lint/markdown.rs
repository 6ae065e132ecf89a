//! Lint findings as GitHub Markdown, for a pull-request comment or a job summary: a heading
//! with the summary line, one row per tool (score and counts), then the errors and warnings in
//! a table and the info findings folded away. The page is built as a [`doc`] page and printed by
//! its Markdown backend, like every other page, so every text from the server (names, messages
//! that quote descriptions) is escaped there and cannot become a link, a mention, HTML or a new
//! column.

use tdqs_core::report::doc::{self, code, column, fill, row, strong, text, words};
use tdqs_core::report::doc::{Align, Block, Inline, Row, Table};

use super::catalogue::{Finding, Severity};
use super::render::summary_line;
use super::LintReport;

/// The most finding rows written: a review reads the first screens. The rest is counted, and
/// `--json` has every one.
const MAX_FINDING_ROWS: usize = 150;

/// Finding rows stop once the page reaches this many bytes: a GitHub comment holds at most
/// 65,536 characters, and the closing lines need room.
const MAX_COMMENT_BYTES: usize = 60_000;

/// GitHub Markdown for a pull-request comment (trailing newline; same bytes for the same
/// report).
pub fn render_markdown(report: &LintReport) -> String {
    let (serious, info): (Vec<&Finding>, Vec<&Finding>) = report
        .findings
        .iter()
        .partition(|f| f.severity > Severity::Info);
    let mut serious = serious;
    // Errors first; within a severity, the report's order (server-wide, then by tool).
    serious.sort_by_key(|f| std::cmp::Reverse(f.severity));
    let findings = Findings {
        serious: &serious,
        info: &info,
    };

    // As many rows as fit, the errors and warnings first; the notes of what was left out are
    // added once the rows are fixed (the byte limit leaves them room).
    let fits = |shown: Shown| {
        doc::markdown::render(&page(report, &findings, shown, false)).len() <= MAX_COMMENT_BYTES
    };
    let serious_shown = most_that_fit(serious.len(), |n| {
        fits(Shown {
            serious: n,
            info: 0,
        })
    });
    let info_shown = most_that_fit(info.len(), |n| {
        fits(Shown {
            serious: serious_shown,
            info: n,
        })
    });
    let shown = Shown {
        serious: serious_shown,
        info: info_shown,
    };
    doc::markdown::render(&page(report, &findings, shown, true))
}

/// The findings of the two tables, in the order they are shown.
struct Findings<'a> {
    serious: &'a [&'a Finding],
    info: &'a [&'a Finding],
}

/// How many rows of each table are written.
#[derive(Clone, Copy)]
struct Shown {
    serious: usize,
    info: usize,
}

/// The largest `n` up to `available` (and [`MAX_FINDING_ROWS`]) for which `fits(n)`; `fits`
/// holds up to some count and not after it, as a page only grows with its rows.
fn most_that_fit(available: usize, fits: impl Fn(usize) -> bool) -> usize {
    let counts: Vec<usize> = (1..=available.min(MAX_FINDING_ROWS)).collect();
    counts.partition_point(|&n| fits(n))
}

/// The page with `shown` rows of each table; `notes` adds the lines counting the rows left out.
fn page(report: &LintReport, findings: &Findings, shown: Shown, notes: bool) -> Vec<Block> {
    let mut out = vec![
        doc::heading(3, vec![words("tdqs-gate lint")]),
        doc::paragraph(vec![strong(vec![text(summary_line(report))])]),
        doc::paragraph(server_line(report)),
    ];
    if !report.hidden.is_inactive() {
        out.push(doc::paragraph(vec![text(report.hidden.summary())]));
    }
    out.push(Block::Table(tool_table(report)));

    if findings.serious.is_empty() {
        out.push(doc::paragraph(vec![words("No errors or warnings.")]));
    } else {
        out.push(doc::heading(4, vec![words("Errors and warnings")]));
        out.extend(findings_table(findings.serious, shown.serious, notes));
    }
    if !findings.info.is_empty() {
        out.push(Block::Details {
            attrs: doc::Attrs::none(),
            summary: vec![words(format!("{} info", findings.info.len()))],
            blocks: findings_table(findings.info, shown.info, notes),
        });
    }
    out
}

/// "Server `name version` · rules `…` · static rules, no model".
fn server_line(report: &LintReport) -> Vec<Inline> {
    let server = match (&report.server_name, &report.server_version) {
        (Some(n), Some(v)) => code(format!("{n} {v}")),
        (Some(n), None) => code(n.as_str()),
        _ => words("(unnamed server)"),
    };
    fill(
        "Server {} · rules {} · static rules, no model",
        [server, code(report.rules_version.as_str())],
    )
}

/// One row per tool: its score and how many findings of each severity it has.
fn tool_table(report: &LintReport) -> Table {
    let mut table = Table::new(vec![
        column("Tool", Align::Left),
        column("Score", Align::Right),
        column("Errors", Align::Right),
        column("Warnings", Align::Right),
        column("Info", Align::Right),
    ]);
    for card in &report.scorecards {
        let count = |s: Severity| {
            let n = report
                .findings
                .iter()
                .filter(|f| f.severity == s && f.tool.as_deref() == Some(card.tool.as_str()))
                .count();
            vec![words(n.to_string())]
        };
        table.rows.push(row([
            vec![code(card.tool.as_str())],
            vec![words(format!("{}/100", card.total))],
            count(Severity::Error),
            count(Severity::Warning),
            count(Severity::Info),
        ]));
    }
    table
}

/// The first `shown` of `findings` as a table; with `notes`, a line counting the rest.
fn findings_table(findings: &[&Finding], shown: usize, notes: bool) -> Vec<Block> {
    let mut table = Table::new(vec![
        column("Severity", Align::Left),
        column("Code", Align::Left),
        column("Tool", Align::Left),
        column("Parameter", Align::Left),
        column("Finding", Align::Left),
        column("Fix", Align::Left),
    ]);
    table
        .rows
        .extend(findings.iter().take(shown).map(|f| finding_row(f)));
    let mut out = vec![Block::Table(table)];
    if notes && findings.len() > shown {
        out.push(doc::paragraph(vec![words(format!(
            "… and {} more (`tdqs-gate lint --json` lists every one).",
            findings.len() - shown
        ))]));
    }
    out
}

fn finding_row(f: &Finding) -> Row {
    row([
        vec![words(f.severity.as_str())],
        vec![code(f.code.as_str())],
        vec![f.tool.as_deref().map_or_else(|| words("(server)"), code)],
        f.parameter.as_deref().map(code).into_iter().collect(),
        vec![text(f.message.as_str())],
        vec![text(f.suggestion.as_str())],
    ])
}
