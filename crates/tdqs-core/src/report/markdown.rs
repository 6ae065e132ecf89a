//! The Markdown summary: rendered from the report alone, computing nothing new.
//!
//! Verdict first, then what fell and why, then both sides' scores. It is the job summary in CI and
//! the body of the sticky pull-request comment.

use std::fmt::Write as _;

use crate::arith::Tenths;
use crate::exit::Verdict;

use super::model::*;

use super::md_escape::{code, text as cell, text_with_code_spans as reason_text};

/// A score, or a dash where a side has none (the HTML page shows the same).
pub(crate) fn opt(t: Option<Tenths>) -> String {
    t.map(|t| t.to_string()).unwrap_or_else(|| "–".to_string())
}

fn side_label(revision: &Option<String>, commit: &Option<String>) -> String {
    describe_side(revision, commit, code, str::to_string)
}

/// What one side was, in words: the working tree (and the commit it stands on), a revision and
/// its commit, or an export file. `name` formats a revision's name and `hex` a commit (cut to
/// 12 characters), so the Markdown and the HTML page say the same in their own markup.
pub(crate) fn describe_side(
    revision: &Option<String>,
    commit: &Option<String>,
    name: impl Fn(&str) -> String,
    hex: impl Fn(&str) -> String,
) -> String {
    let short = || {
        let cut: String = commit.as_deref().unwrap_or("").chars().take(12).collect();
        hex(&cut)
    };
    match (revision.as_deref(), commit) {
        // The working tree may hold uncommitted changes: its commit is only what it started from.
        (Some(crate::export::WORKING_TREE_LABEL), Some(_)) => {
            format!("the working tree (on {})", short())
        }
        (Some(r), Some(_)) => format!("{} ({})", name(r), short()),
        (Some(r), None) => name(r),
        (None, Some(_)) => short(),
        (None, None) => "an export file".to_string(),
    }
}

/// Which rule decided, and how sure it is.
fn render_rule(out: &mut String, report: &Report) {
    let Some(rule) = &report.decision_rule else {
        return;
    };
    match (&report.assessment, rule.tool_drop) {
        (Some(a), Some(guard)) => {
            let _ = writeln!(
                out,
                "Decided by the **{}** rule (per-tool guard {guard}): mean TDQS change {:+.3} \
                 against a noise tolerance of {:.3}; over {} pair(s) the base's exact mean \
                 ranged {:.3}–{:.3} and the head's {:.3}–{:.3}.",
                rule.name.as_str(),
                a.mean_delta,
                a.mean_tolerance,
                report.pairs.len(),
                a.base_spread[0],
                a.base_spread[1],
                a.head_spread[0],
                a.head_spread[1]
            );
        }
        _ => {
            let _ = writeln!(out, "Decided by the **{}** rule.", rule.name.as_str());
        }
    }
}

/// Renders the Markdown summary of a report.
pub fn render(report: &Report) -> String {
    let mut out = String::new();
    let mark = match report.decision {
        Verdict::Pass => "✅",
        Verdict::Block => "❌",
        Verdict::Invalid => "⚠️",
    };
    let _ = writeln!(
        out,
        "## {mark} Tool definition score: {}\n",
        report.decision
    );
    let _ = writeln!(out, "**{}**\n", reason_text(&report.reason));
    if let Some(error) = &report.error {
        if let Some(advice) = &error.advice {
            let _ = writeln!(out, "> {}\n", cell(advice));
        }
    }
    let _ = writeln!(
        out,
        "Base {} → head {}.",
        side_label(&report.base_revision, &report.base_commit),
        side_label(&report.head_revision, &report.head_commit)
    );
    out.push_str(&crate::sandbox::report_line(report));
    if let Some(scoring) = &report.scoring {
        let judge = &scoring.judge;
        if judge.model_judged {
            let _ = writeln!(
                out,
                "Scored by {} through {} (TDQS v1.3).",
                code(&judge.model),
                cell(&judge.mode)
            );
        } else {
            let _ = writeln!(
                out,
                "Scored by the **{}** judge ({}): deterministic rules, **not a model's score**.",
                cell(&judge.mode),
                code(&judge.model)
            );
        }
    } else if !report.scored {
        let _ = writeln!(out, "No model was called.");
    }
    render_rule(&mut out, report);
    out.push('\n');

    if let Some(causes) = &report.causes {
        render_causes(&mut out, causes);
    }
    if !report.pairs.is_empty() {
        render_scores(&mut out, report);
        render_omitted(&mut out, report);
        render_tools(&mut out, report);
    } else if let Some(changes) = &report.changes {
        if !changes.added.is_empty() || !changes.removed.is_empty() || !changes.changed.is_empty() {
            let _ = writeln!(out, "### Changed tools\n");
            for (what, names) in [
                ("added", &changes.added),
                ("removed", &changes.removed),
                ("changed", &changes.changed),
            ] {
                if !names.is_empty() {
                    let list: Vec<String> = names.iter().map(|n| code(n)).collect();
                    let _ = writeln!(out, "- {what}: {}", list.join(", "));
                }
            }
            out.push('\n');
        }
    }
    if report.pairs.is_empty() {
        render_omitted(&mut out, report);
    }
    if let Some(check) = &report.eval {
        render_eval(&mut out, check);
    }
    if let Some(size) = &report.size {
        let _ = writeln!(out, "### Size (information, never decisive)\n");
        let _ = writeln!(
            out,
            "| Measure | Base | Head | Change |\n|---|---:|---:|---:|"
        );
        let _ = writeln!(
            out,
            "| Description characters | {} | {} | {:+} |",
            size.base.description_characters,
            size.head.description_characters,
            size.delta.description_characters
        );
        let _ = writeln!(
            out,
            "| `tools/list` bytes | {} | {} | {:+} |\n",
            size.base.tools_list_bytes, size.head.tools_list_bytes, size.delta.tools_list_bytes
        );
    }
    let mut footer = calls_summary(report);
    let digest: String = report.version_digest.chars().take(12).collect();
    let _ = write!(
        footer,
        " · pins `{digest}` · {} {}",
        report.generator.name, report.generator.version
    );
    if !report.warnings.is_empty() {
        let _ = writeln!(out, "### Warnings\n");
        for w in &report.warnings {
            let _ = writeln!(out, "- {}", cell(w));
        }
        out.push('\n');
    }
    let _ = writeln!(out, "<sub>{footer}</sub>");
    out
}

/// The selection check: mode, both sides' figures, the exact test and the cases that fell.
fn render_eval(out: &mut String, check: &crate::eval::compare::SelectionCheck) {
    let _ = writeln!(out, "### Selection check ({})\n", check.mode.as_str());
    let _ = writeln!(out, "_{}_\n", cell(&check.mode_label));
    let _ = writeln!(
        out,
        "Selector {} ({}), the same cases and settings on both sides.\n",
        code(&check.model),
        cell(&check.selector)
    );
    let _ = writeln!(out, "| Measure | Base | Head |\n|---|---:|---:|");
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
        let _ = writeln!(
            out,
            "| {label} | {} | {} |",
            b.render().trim(),
            h.render().trim()
        );
    }
    let _ = writeln!(
        out,
        "\nPaired over {} cases: {} fell, {} rose; exact McNemar p = {:.4} (blocks below α = {} when more fell than rose).\n",
        check.cases.len(),
        check.test.worse,
        check.test.better,
        check.test.p_value,
        check.alpha
    );
    if check.tdqs_rose_while_selection_fell {
        let _ = writeln!(
            out,
            "**The mean TDQS rose while selection fell significantly**: the new definitions read better to the judge and route worse.\n"
        );
    }
    let fallen: Vec<_> = check.cases.iter().filter(|c| c.fell()).collect();
    if !fallen.is_empty() {
        let _ = writeln!(
            out,
            "Cases that fell (right on the base, wrong on the head):\n"
        );
        for c in fallen {
            let now = match &c.head_selected {
                crate::eval::case::Choice::NoTool => "no tool".to_string(),
                crate::eval::case::Choice::Tool(t) => code(t),
            };
            let _ = writeln!(
                out,
                "- {} (expected {}) now goes to {now}",
                code(&c.id),
                code(c.expected.as_str())
            );
        }
        out.push('\n');
    }
}

/// What changed in a fallen tool's definition.
fn render_change(out: &mut String, change: &super::changed::ToolChange) {
    for line in &change.description_diff {
        let (what, text) = match line.split_at(2) {
            ("- ", rest) => ("removed from the description", rest),
            (_, rest) => ("added to the description", rest),
        };
        let _ = writeln!(out, "  - {what}: “{}”", cell(text));
    }
    if change.description_diff.is_empty() && change.description_before != change.description_after {
        let _ = writeln!(
            out,
            "  - description: “{}” → “{}”",
            cell(change.description_before.as_deref().unwrap_or("")),
            cell(change.description_after.as_deref().unwrap_or(""))
        );
    }
    for (what, list) in [
        ("fields added", &change.fields_added),
        ("fields removed", &change.fields_removed),
    ] {
        if !list.is_empty() {
            let names: Vec<String> = list.iter().map(|f| format!("`{}`", cell(f))).collect();
            let _ = writeln!(out, "  - {what}: {}", names.join(", "));
        }
    }
}

fn render_causes(out: &mut String, causes: &Causes) {
    let _ = writeln!(out, "### What fell on the first pair\n");
    if causes.tools.is_empty() && causes.added.is_empty() && causes.removed.is_empty() {
        let _ = writeln!(
            out,
            "No single tool's TDQS fell; the mean moved through rounding of several tools.\n"
        );
    }
    if !causes.tools.is_empty() {
        let _ = writeln!(
            out,
            "| Tool | Base | Head | Cost to the mean |\n|---|---:|---:|---:|"
        );
        for t in &causes.tools {
            let _ = writeln!(
                out,
                "| {} | {} | {} | {:.3} |",
                code(&t.tool),
                t.base,
                t.head,
                t.effect
            );
        }
        out.push('\n');
        for t in &causes.tools {
            let _ = writeln!(out, "- **{}** {} → {}", code(&t.tool), t.base, t.head);
            // Dimensions the judge explained with the same words (a hard gate) share one line.
            for group in t
                .dimensions
                .chunk_by(|a, b| a.justification == b.justification)
            {
                let fell: Vec<String> = group
                    .iter()
                    .map(|d| format!("{} {} → {}", d.dimension.label(), d.base, d.head))
                    .collect();
                let _ = writeln!(
                    out,
                    "  - {}: {}",
                    fell.join(", "),
                    cell(&group[0].justification)
                );
            }
            if let Some(change) = &t.change {
                render_change(out, change);
            }
            for d in &t.dimensions {
                if !d.fix.is_empty() {
                    let _ = writeln!(out, "  - Fix {}: {}", d.dimension.label(), cell(&d.fix));
                }
            }
        }
        out.push('\n');
    }
    for (what, list) in [("Added", &causes.added), ("Removed", &causes.removed)] {
        if !list.is_empty() {
            let items: Vec<String> = list
                .iter()
                .map(|t| format!("{} ({})", code(&t.tool), t.tdqs))
                .collect();
            let _ = writeln!(out, "{what} tools: {}.\n", items.join(", "));
        }
    }
    if causes.minimum_term.fell {
        let _ = writeln!(
            out,
            "Information: the lowest tool fell from {} ({}) to {} ({}).\n",
            opt(causes.minimum_term.base.tdqs),
            code(causes.minimum_term.base.tool.as_deref().unwrap_or("–")),
            opt(causes.minimum_term.head.tdqs),
            code(causes.minimum_term.head.tool.as_deref().unwrap_or("–")),
        );
    }
    if !causes.coherence.is_empty() {
        let _ = writeln!(out, "Information: coherence dimensions that fell:\n");
        for c in &causes.coherence {
            let _ = writeln!(
                out,
                "- {} {} → {}: {}",
                c.dimension.label(),
                c.base,
                c.head,
                cell(&c.justification)
            );
        }
        out.push('\n');
    }
}

fn render_scores(out: &mut String, report: &Report) {
    let _ = writeln!(out, "### Scores\n");
    let mut header = "| Measure |".to_string();
    let mut rule = "|---|".to_string();
    for (i, _) in report.pairs.iter().enumerate() {
        let _ = write!(header, " Base #{} | Head #{} |", i + 1, i + 1);
        rule.push_str("---:|---:|");
    }
    if report.median.is_some() {
        header.push_str(" Base median | Head median |");
        rule.push_str("---:|---:|");
    }
    let _ = writeln!(out, "{header}\n{rule}");
    type Pick = fn(&crate::score::Rollups) -> Option<Tenths>;
    let rows: [(&str, Pick); 5] = [
        ("**Mean TDQS** (decides)", |r| r.mean_tdqs),
        ("Lowest TDQS", |r| r.min_tdqs),
        ("Description quality", |r| r.description_quality_score),
        ("Coherence", |r| Some(r.coherence_score)),
        ("Overall", |r| r.overall_score),
    ];
    for (i, (label, pick)) in rows.iter().enumerate() {
        let mut line = format!("| {label} |");
        for pair in &report.pairs {
            let _ = write!(
                line,
                " {} | {} |",
                opt(pick(&pair.base.rollups)),
                opt(pick(&pair.head.rollups))
            );
        }
        if let Some(m) = &report.median {
            if i == 0 {
                let _ = write!(line, " {} | {} |", m.base, m.head);
            } else {
                line.push_str(" | |");
            }
        }
        let _ = writeln!(out, "{line}");
    }
    out.push('\n');
}

/// The unchanged tools a summarised report counts without listing.
fn render_omitted(out: &mut String, report: &Report) {
    let Some(omitted) = &report.omitted else {
        return;
    };
    let _ = write!(
        out,
        "**{} unchanged tools are summarised, not listed**: the same definition on both sides",
        omitted.count
    );
    match report.pairs.first().and_then(|p| p.head.omitted.as_ref()) {
        Some(o) => {
            let _ = write!(
                out,
                " and the same scores in every pair; their mean TDQS is {:.3} (lowest {} {}), \
                 and they count in every mean above.",
                o.tdqs_tenths_sum as f64 / (10.0 * o.count as f64),
                code(&o.min_tool),
                o.min_tdqs
            );
        }
        None => out.push('.'),
    }
    let _ = writeln!(
        out,
        " Servers of up to {} tools are listed in full; `--full-report` lists every tool.\n",
        omitted.list_every_tool_up_to
    );
}

fn render_tools(out: &mut String, report: &Report) {
    let first = &report.pairs[0];
    let title = if report.omitted.is_some() {
        "Every listed tool (first pair; unchanged tools summarised above)"
    } else {
        "Every tool (first pair)"
    };
    let _ = writeln!(
        out,
        "<details><summary>{title}</summary>\n\n| Tool | Base | Head | Smells (head) |\n|---|---:|---:|---|"
    );
    let mut names: Vec<&String> = first
        .base
        .tools
        .keys()
        .chain(first.head.tools.keys())
        .collect();
    names.sort();
    names.dedup();
    for name in names {
        let b = first.base.tools.get(name);
        let h = first.head.tools.get(name);
        let fmt = |t: Option<&crate::score::ToolResult>| {
            t.map(|t| format!("{} ({})", t.tdqs, t.tier))
                .unwrap_or_else(|| "–".to_string())
        };
        let smells = h
            .map(|h| {
                h.smells
                    .iter()
                    .map(|d| d.label())
                    .collect::<Vec<_>>()
                    .join(", ")
            })
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "| {} | {} | {} | {} |",
            code(name),
            fmt(b),
            fmt(h),
            smells
        );
    }
    let _ = writeln!(out, "\n</details>\n");
}

/// The footer's account of the judge's work: questions, attempts, shared and reused answers,
/// tokens. Plain text of numbers and fixed words (the HTML page shows the same line).
pub(crate) fn calls_summary(report: &Report) -> String {
    let calls = &report.calls;
    let what = match &report.scoring {
        Some(s) if !s.judge.model_judged => "Rule-judge answers",
        _ => "Model calls",
    };
    let mut footer = format!(
        "{what}: {} ({} attempts, {} shared answers",
        calls.questions, calls.attempts, calls.shared_answers
    );
    if calls.reused_answers > 0 {
        let _ = write!(
            footer,
            ", {} reused from earlier pairs",
            calls.reused_answers
        );
    }
    footer.push(')');
    if calls.tokens.input_tokens + calls.tokens.output_tokens > 0 {
        let _ = write!(
            footer,
            ", tokens: {} in / {} out",
            calls.tokens.input_tokens, calls.tokens.output_tokens
        );
    }
    footer
}
