//! Lint findings as GitHub Markdown, for a pull-request comment or a job summary: a heading
//! with the summary line, one row per tool (score and counts), then the errors and warnings in
//! a table and the info findings folded away. Every text from the server (names, messages that
//! quote descriptions) is escaped so it cannot become a link, a mention, HTML or a new column.

use tdqs_core::report::md_escape;

use super::catalogue::{Finding, Severity};
use super::render::summary_line;
use super::LintReport;

/// The most finding rows written: a review reads the first screens. The rest is counted, and
/// `--json` has every one.
const MAX_FINDING_ROWS: usize = 150;

/// Finding rows stop once the text reaches this many bytes: a GitHub comment holds at most
/// 65,536 characters, and the closing lines need room.
const MAX_COMMENT_BYTES: usize = 60_000;

fn finding_row(f: &Finding) -> String {
    format!(
        "| {} | `{}` | {} | {} | {} | {} |\n",
        f.severity.as_str(),
        f.code,
        f.tool
            .as_deref()
            .map_or_else(|| "(server)".to_string(), md_escape::code),
        f.parameter
            .as_deref()
            .map_or_else(String::new, md_escape::code),
        md_escape::text(&f.message),
        md_escape::text(&f.suggestion),
    )
}

fn findings_table(out: &mut String, findings: &[&Finding]) {
    out.push_str("| Severity | Code | Tool | Parameter | Finding | Fix |\n");
    out.push_str("|---|---|---|---|---|---|\n");
    let mut written = 0;
    for f in findings.iter().take(MAX_FINDING_ROWS) {
        let row = finding_row(f);
        if out.len() + row.len() > MAX_COMMENT_BYTES {
            break;
        }
        out.push_str(&row);
        written += 1;
    }
    if findings.len() > written {
        out.push_str(&format!(
            "\n… and {} more (`tdqs-gate lint --json` lists every one).\n",
            findings.len() - written
        ));
    }
}

/// GitHub Markdown for a pull-request comment (trailing newline; same bytes for the same
/// report).
pub fn render_markdown(report: &LintReport) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "### tdqs-gate lint\n\n**{}**\n\n",
        md_escape::text(&summary_line(report))
    ));
    let server = match (&report.server_name, &report.server_version) {
        (Some(n), Some(v)) => md_escape::code(&format!("{n} {v}")),
        (Some(n), None) => md_escape::code(n),
        _ => "(unnamed server)".to_string(),
    };
    out.push_str(&format!(
        "Server {server} · rules `{}` · static rules, no model\n",
        report.rules_version
    ));
    if !report.hidden.is_inactive() {
        out.push_str(&format!(
            "\n{}\n",
            md_escape::text(&report.hidden.summary())
        ));
    }

    out.push_str("\n| Tool | Score | Errors | Warnings | Info |\n|---|---:|---:|---:|---:|\n");
    for card in &report.scorecards {
        let count = |s: Severity| {
            report
                .findings
                .iter()
                .filter(|f| f.severity == s && f.tool.as_deref() == Some(card.tool.as_str()))
                .count()
        };
        out.push_str(&format!(
            "| {} | {}/100 | {} | {} | {} |\n",
            md_escape::code(&card.tool),
            card.total,
            count(Severity::Error),
            count(Severity::Warning),
            count(Severity::Info),
        ));
    }

    let (serious, info): (Vec<&Finding>, Vec<&Finding>) = report
        .findings
        .iter()
        .partition(|f| f.severity > Severity::Info);
    if serious.is_empty() {
        out.push_str("\nNo errors or warnings.\n");
    } else {
        out.push_str("\n#### Errors and warnings\n\n");
        let mut ordered = serious;
        // Errors first; within a severity, the report's order (server-wide, then by tool).
        ordered.sort_by_key(|f| std::cmp::Reverse(f.severity));
        findings_table(&mut out, &ordered);
    }
    if !info.is_empty() {
        out.push_str(&format!(
            "\n<details><summary>{} info</summary>\n\n",
            info.len()
        ));
        findings_table(&mut out, &info);
        out.push_str("\n</details>\n");
    }
    out
}
