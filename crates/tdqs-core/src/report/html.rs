//! The HTML report: one self-contained page rendered from the report alone, computing nothing new.
//!
//! It opens from a CI artifact with no network: the style is inline (allowed by its hash in the
//! page's Content-Security-Policy, which forbids every load and every script), the charts are
//! inline SVG drawn with presentation attributes, and nothing refers to another file. Every text
//! that came from a server (tool names, descriptions, the judge's justifications) is escaped.
//!
//! A page is a [`document`] around one [`render_server_section`] per server, so a run over
//! several servers can put each server's section in one page; [`render`] is the page of one.
//!
//! Work is linear in the number of tools: every lookup goes through the sorted maps the report
//! already holds, and the bar chart and heat map draw in full only the tools that changed (all of
//! them when the server is small), with a count of the rest; the table of every tool is folded.

use std::collections::{BTreeMap, BTreeSet};
use std::fmt::Write as _;

use sha2::{Digest, Sha256};

use crate::rubric::ToolDimension;
use crate::score::SideScore;

use super::changed::ToolChange;
use super::markdown::opt;
use super::model::*;
use super::monorepo::MonorepoReport;

/// The file name of the HTML report, beside [`REPORT_JSON`] and [`REPORT_MARKDOWN`].
pub const REPORT_HTML: &str = "tool-definition-score.html";

/// Up to this many tools, the chart and the heat map draw every tool.
const DRAW_ALL_UP_TO: usize = 40;
/// At most this many tools are drawn; the rest are counted (the table below lists them all).
const DRAW_AT_MOST: usize = 200;
/// Tool names longer than this are shortened in the charts (the full name is the tooltip).
const LABEL_CHARS: usize = 32;

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

/// Escapes text for HTML content and quoted attribute values.
pub fn escape(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for c in text.chars() {
        match c {
            '&' => out.push_str("&amp;"),
            '<' => out.push_str("&lt;"),
            '>' => out.push_str("&gt;"),
            '"' => out.push_str("&quot;"),
            '\'' => out.push_str("&#39;"),
            // Control characters other than tab and newline are not allowed in HTML text.
            c if c.is_control() && c != '\n' && c != '\t' => out.push('\u{fffd}'),
            c => out.push(c),
        }
    }
    out
}

/// Turns `` `name` `` spans of already escaped text into code elements (the reasons quote tool
/// names that way); an unpaired backtick stays as it is.
fn inline_code(escaped: &str) -> String {
    super::md_escape::code_spans(escaped)
        .map(|(is_code, part)| {
            if is_code {
                format!("<code>{part}</code>")
            } else {
                part.to_string()
            }
        })
        .collect()
}

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

/// A whole page around `sections` (each from [`render_server_section`]).
pub fn document(title: &str, sections: &[String]) -> String {
    let mut out = String::new();
    let _ = write!(
        out,
        "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n\
         <meta http-equiv=\"Content-Security-Policy\" content=\"{}\">\n\
         <meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n\
         <meta name=\"referrer\" content=\"no-referrer\">\n\
         <title>{}</title>\n<style>{STYLE}</style>\n</head>\n<body>\n<main>\n<h1>{}</h1>\n",
        content_security_policy(),
        escape(title),
        escape(title)
    );
    for section in sections {
        out.push_str(section);
    }
    out.push_str("</main>\n</body>\n</html>\n");
    out
}

/// The page of one report.
pub fn render(report: &Report) -> String {
    let title = format!("Tool definition score: {}", report.decision);
    document(&title, &[render_server_section(report)])
}

fn side_label(revision: &Option<String>, commit: &Option<String>) -> String {
    let code = |text: &str| format!("<code>{}</code>", escape(text));
    super::markdown::describe_side(revision, commit, code, code)
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

/// The page of a run over several servers: the overall verdict and a table of the servers,
/// then one section per server, headed by its `[[server]]` name.
pub fn render_monorepo(report: &MonorepoReport) -> String {
    let mut overview = String::new();
    let verdict = report.decision.as_str();
    let _ = writeln!(
        overview,
        "<section class=\"overall\" data-decision=\"{verdict}\" data-exit-code=\"{}\">",
        report.exit_code
    );
    let _ = writeln!(
        overview,
        "<h2><span class=\"verdict verdict-{verdict}\">{}</span> · {} servers</h2>",
        report.decision,
        report.servers.len()
    );
    let _ = writeln!(
        overview,
        "<p class=\"reason\">{}</p>",
        inline_code(&escape(&report.reason))
    );
    if let Some(error) = &report.error {
        let _ = writeln!(
            overview,
            "<p>Failed at the <b>{}</b> stage: {}</p>",
            escape(error.stage.as_str()),
            escape(&error.cause)
        );
    }
    if !report.servers.is_empty() {
        overview.push_str("<table>\n<tr><th>server</th><th>verdict</th><th>reason</th></tr>\n");
        for server in &report.servers {
            let _ = writeln!(
                overview,
                "<tr><td><code>{}</code></td><td>{}</td><td>{}</td></tr>",
                escape(&server.name),
                server.report.decision,
                inline_code(&escape(&server.report.reason))
            );
        }
        overview.push_str("</table>\n");
    }
    overview.push_str("</section>\n");
    let mut sections = vec![overview];
    sections.extend(
        report
            .servers
            .iter()
            .map(|server| section(&server.report, Some(&server.name))),
    );
    let title = format!("Tool definition score: {}", report.decision);
    document(&title, &sections)
}

/// The section of one server's report: verdict, decision with its pairs, charts, what fell.
pub fn render_server_section(report: &Report) -> String {
    section(report, None)
}

/// One server's section; `table_name` (a monorepo's `[[server]]` name) heads it when given,
/// otherwise the name the server reported.
fn section(report: &Report, table_name: Option<&str>) -> String {
    let mut out = String::new();
    let verdict = report.decision.as_str();
    let _ = writeln!(
        out,
        "<section class=\"server\" data-decision=\"{verdict}\" data-exit-code=\"{}\">",
        report.exit_code
    );
    let name = table_name
        .or_else(|| server_name(report))
        .map(|n| format!(" · <code>{}</code>", escape(n)))
        .unwrap_or_default();
    let _ = writeln!(
        out,
        "<h2><span class=\"verdict verdict-{verdict}\">{}</span>{name}</h2>",
        report.decision
    );
    let _ = writeln!(
        out,
        "<p class=\"reason\">{}</p>",
        inline_code(&escape(&report.reason))
    );
    if let Some(error) = &report.error {
        let _ = writeln!(
            out,
            "<p>Failed at the <b>{}</b> stage: {}</p>",
            escape(error.stage.as_str()),
            escape(&error.cause)
        );
        if let Some(advice) = &error.advice {
            let _ = writeln!(out, "<p class=\"note\">{}</p>", escape(advice));
        }
    }
    let _ = writeln!(
        out,
        "<p>Base {} → head {}.</p>",
        side_label(&report.base_revision, &report.base_commit),
        side_label(&report.head_revision, &report.head_commit)
    );
    if let Some(scoring) = &report.scoring {
        let judge = &scoring.judge;
        if judge.model_judged {
            let _ = writeln!(
                out,
                "<p>Scored by <code>{}</code> through {} (TDQS v1.3).</p>",
                escape(&judge.model),
                escape(&judge.mode)
            );
        } else {
            let _ = writeln!(
                out,
                "<p>Scored by the <b>{}</b> judge (<code>{}</code>): deterministic rules, \
                 <b>not a model's score</b>.</p>",
                escape(&judge.mode),
                escape(&judge.model)
            );
        }
    } else if !report.scored {
        let _ = writeln!(out, "<p class=\"no-model\">No model was called.</p>");
    }

    render_decision(&mut out, report);
    if let Some(first) = report.pairs.first() {
        let fallen: BTreeSet<&str> = report
            .causes
            .iter()
            .flat_map(|c| c.tools.iter().map(|t| t.tool.as_str()))
            .collect();
        let drawn = drawn_tools(report, first, &fallen);
        render_bars(&mut out, first, &drawn, &fallen);
        render_heat_map(&mut out, first, &drawn, &fallen);
    } else {
        render_changes(&mut out, report);
    }
    if let Some(causes) = &report.causes {
        render_causes(&mut out, causes);
    }
    if let Some(check) = &report.eval {
        super::html_eval::render_selection_check(&mut out, check);
    }
    if let Some(first) = report.pairs.first() {
        render_every_tool(&mut out, first, omitted_count(report));
    }
    render_size(&mut out, report);
    if !report.warnings.is_empty() {
        let _ = writeln!(out, "<h3>Warnings</h3>\n<ul>");
        for w in &report.warnings {
            let _ = writeln!(out, "<li>{}</li>", escape(w));
        }
        let _ = writeln!(out, "</ul>");
    }
    render_footer(&mut out, report);
    out.push_str("</section>\n");
    out
}

/// The decision with its pairs: each pair's means, the medians, the tolerance and the verdict.
fn render_decision(out: &mut String, report: &Report) {
    let _ = writeln!(out, "<h3>Decision</h3>");
    if let Some(rule) = &report.decision_rule {
        let guard = rule
            .tool_drop
            .map(|g| format!(" (per-tool guard {g})"))
            .unwrap_or_default();
        let _ = writeln!(
            out,
            "<p>Decided by the <b>{}</b> rule{guard}.</p>",
            escape(rule.name.as_str())
        );
    }
    if report.pairs.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"decision\" data-verdict=\"{}\"><b>{}</b>: {}</p>",
            report.decision.as_str(),
            report.decision,
            escape(&report.reason)
        );
        return;
    }
    let _ = writeln!(
        out,
        "<table class=\"pairs\">\n<thead><tr><th>Pair</th><th class=\"num\">Base mean TDQS</th>\
         <th class=\"num\">Head mean TDQS</th><th class=\"num\">Change</th>\
         <th class=\"num\">Noise tolerance</th><th>Verdict</th></tr></thead>\n<tbody>"
    );
    for (i, pair) in report.pairs.iter().enumerate() {
        let (b, h) = (pair.base.rollups.mean_tdqs, pair.head.rollups.mean_tdqs);
        let change = match (b, h) {
            (Some(b), Some(h)) => format!("{:+.1}", (h.0 - b.0) as f64 / 10.0),
            _ => "–".to_string(),
        };
        let _ = writeln!(
            out,
            "<tr class=\"pair\"><td>#{}</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td class=\"num\">{change}</td><td class=\"num\"></td><td></td></tr>",
            i + 1,
            opt(b),
            opt(h)
        );
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
        None => ("".to_string(), "–".to_string()),
    };
    let _ = writeln!(
        out,
        "<tr class=\"decided\"><td>{label}</td><td class=\"num\">{base}</td>\
         <td class=\"num\">{head}</td><td class=\"num\">{change}</td>\
         <td class=\"num\">{tolerance}</td>\
         <td class=\"decision\" data-verdict=\"{}\">{}</td></tr>\n</tbody>\n</table>",
        report.decision.as_str(),
        report.decision
    );
    if let Some(a) = &report.assessment {
        let _ = writeln!(
            out,
            "<p class=\"note\">Over {} pair(s) the base's exact mean ranged {:.3}–{:.3} and the \
             head's {:.3}–{:.3}.</p>",
            report.pairs.len(),
            a.base_spread[0],
            a.base_spread[1],
            a.head_spread[0],
            a.head_spread[1]
        );
        if !a.fallen_tools.is_empty() {
            let _ = writeln!(
                out,
                "<table class=\"tool-falls\">\n<thead><tr><th>Tool whose median TDQS fell</th>\
                 <th class=\"num\">Base</th><th class=\"num\">Head</th>\
                 <th class=\"num\">Tolerance</th><th>Blocks</th></tr></thead>\n<tbody>"
            );
            for t in &a.fallen_tools {
                let _ = writeln!(
                    out,
                    "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
                     <td class=\"num\">{:.3}</td><td>{}</td></tr>",
                    escape(&t.tool),
                    t.base,
                    t.head,
                    t.tolerance,
                    if t.blocks { "yes" } else { "no" }
                );
            }
            let _ = writeln!(out, "</tbody>\n</table>");
        }
    }
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
    fn note(&self) -> String {
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
            return String::new();
        }
        format!(
            "<p class=\"note not-drawn\">Not drawn: {} (every tool the report lists is in the \
             table below).</p>\n",
            parts.join("; ")
        )
    }
}

/// The names on either side, sorted, each once (both maps are sorted: a linear merge).
fn union_names<'a, V>(
    base: &'a BTreeMap<String, V>,
    head: &'a BTreeMap<String, V>,
) -> Vec<&'a str> {
    let mut out = Vec::with_capacity(base.len().max(head.len()));
    let (mut b, mut h) = (base.keys().peekable(), head.keys().peekable());
    loop {
        match (b.peek(), h.peek()) {
            (Some(x), Some(y)) => match x.cmp(y) {
                std::cmp::Ordering::Less => out.push(b.next().map(String::as_str)),
                std::cmp::Ordering::Greater => out.push(h.next().map(String::as_str)),
                std::cmp::Ordering::Equal => {
                    h.next();
                    out.push(b.next().map(String::as_str));
                }
            },
            (Some(_), None) => out.push(b.next().map(String::as_str)),
            (None, Some(_)) => out.push(h.next().map(String::as_str)),
            (None, None) => break,
        }
    }
    out.into_iter().flatten().collect()
}

fn label(name: &str) -> String {
    if name.chars().count() <= LABEL_CHARS {
        return name.to_string();
    }
    let mut s: String = name.chars().take(LABEL_CHARS - 1).collect();
    s.push('…');
    s
}

/// Base against head TDQS per tool (first pair), as horizontal bars on a 0–5 axis.
fn render_bars(out: &mut String, first: &Pair, drawn: &Drawn, fallen: &BTreeSet<&str>) {
    let _ = writeln!(
        out,
        "<h3>TDQS per tool, base against head (first pair)</h3>"
    );
    const LABEL_W: u32 = 230;
    const BAR_W: f64 = 400.0;
    const ROW_H: u32 = 34;
    const TOP: u32 = 24;
    let rows = drawn.names.len() as u32;
    let height = TOP + rows * ROW_H + 24;
    let width = LABEL_W + BAR_W as u32 + 60;
    let _ = writeln!(
        out,
        "<svg class=\"chart bars\" role=\"img\" aria-label=\"TDQS per tool, base against head\" \
         xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" data-tools=\"{rows}\">"
    );
    // Legend and axis.
    let _ = writeln!(
        out,
        "<rect class=\"legend-base\" x=\"{LABEL_W}\" y=\"4\" width=\"12\" height=\"12\"/>\
         <text x=\"{}\" y=\"14\">base</text>\
         <rect class=\"legend-head\" x=\"{}\" y=\"4\" width=\"12\" height=\"12\"/>\
         <text x=\"{}\" y=\"14\">head</text>\
         <rect class=\"legend-fell\" x=\"{}\" y=\"4\" width=\"12\" height=\"12\"/>\
         <text x=\"{}\" y=\"14\">head, fell</text>",
        LABEL_W + 16,
        LABEL_W + 60,
        LABEL_W + 76,
        LABEL_W + 120,
        LABEL_W + 136
    );
    for tick in 0..=5u32 {
        let x = LABEL_W as f64 + BAR_W * f64::from(tick) / 5.0;
        let _ = writeln!(
            out,
            "<line class=\"axis\" x1=\"{x:.1}\" y1=\"{TOP}\" x2=\"{x:.1}\" y2=\"{}\"/>\
             <text class=\"small\" x=\"{x:.1}\" y=\"{}\" text-anchor=\"middle\">{tick}</text>",
            TOP + rows * ROW_H,
            TOP + rows * ROW_H + 14
        );
    }
    for (i, name) in drawn.names.iter().enumerate() {
        let y = TOP + i as u32 * ROW_H;
        let esc = escape(name);
        let _ = writeln!(
            out,
            "<g class=\"tool-bars\" data-tool=\"{esc}\"><title>{esc}</title>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            LABEL_W - 8,
            y + ROW_H / 2 + 4,
            escape(&label(name))
        );
        let sides = [
            ("base", first.base.tools.get(*name), y + 4),
            ("head", first.head.tools.get(*name), y + 4 + 13),
        ];
        for (side, tool, bar_y) in sides {
            let Some(tool) = tool else {
                let _ = writeln!(
                    out,
                    "<text class=\"small\" x=\"{}\" y=\"{}\">no {side} tool</text>",
                    LABEL_W + 2,
                    bar_y + 10
                );
                continue;
            };
            let w = BAR_W * tool.tdqs.0.clamp(0, 50) as f64 / 50.0;
            let fell = if side == "head" && fallen.contains(name) {
                " fell"
            } else {
                ""
            };
            let _ = writeln!(
                out,
                "<rect class=\"bar bar-{side}{fell}\" x=\"{LABEL_W}\" y=\"{bar_y}\" \
                 width=\"{w:.1}\" height=\"11\"><title>{side} {}: {} ({})</title></rect>\
                 <text class=\"small\" x=\"{:.1}\" y=\"{}\">{}</text>",
                esc,
                tool.tdqs,
                tool.tier,
                LABEL_W as f64 + w + 4.0,
                bar_y + 10,
                tool.tdqs
            );
        }
        out.push_str("</g>\n");
    }
    out.push_str("</svg>\n");
    out.push_str(&drawn.note());
}

/// The six dimensions per tool: the head's score (the base's where the head lacks the tool),
/// coloured by score, with `base→head` where they differ and a red border where it fell.
fn render_heat_map(out: &mut String, first: &Pair, drawn: &Drawn, fallen: &BTreeSet<&str>) {
    let _ = writeln!(
        out,
        "<h3>The six dimensions per tool (first pair; base→head where they differ)</h3>"
    );
    const LABEL_W: u32 = 230;
    const CELL_W: u32 = 96;
    const CELL_H: u32 = 26;
    const TOP: u32 = 44;
    let rows = drawn.names.len() as u32;
    let width = LABEL_W + CELL_W * 6 + 8;
    let height = TOP + rows * CELL_H + 8;
    let _ = writeln!(
        out,
        "<svg class=\"chart heatmap\" role=\"img\" aria-label=\"The six dimensions per tool\" \
         xmlns=\"http://www.w3.org/2000/svg\" width=\"{width}\" height=\"{height}\" \
         viewBox=\"0 0 {width} {height}\" data-tools=\"{rows}\">"
    );
    for (j, d) in ToolDimension::ALL.into_iter().enumerate() {
        let x = LABEL_W + j as u32 * CELL_W + CELL_W / 2;
        let (a, b) = split_label(d.label());
        let _ = writeln!(
            out,
            "<text class=\"small\" x=\"{x}\" y=\"16\" text-anchor=\"middle\">{a}</text>\
             <text class=\"small\" x=\"{x}\" y=\"30\" text-anchor=\"middle\">{b}</text>"
        );
    }
    for (i, name) in drawn.names.iter().enumerate() {
        let y = TOP + i as u32 * CELL_H;
        let esc = escape(name);
        let (b, h) = (first.base.tools.get(*name), first.head.tools.get(*name));
        let _ = writeln!(
            out,
            "<g class=\"tool-cells\" data-tool=\"{esc}\"><title>{esc}</title>\
             <text x=\"{}\" y=\"{}\" text-anchor=\"end\">{}</text>",
            LABEL_W - 8,
            y + CELL_H / 2 + 4,
            escape(&label(name))
        );
        for (j, d) in ToolDimension::ALL.into_iter().enumerate() {
            let x = LABEL_W + j as u32 * CELL_W;
            let bs = b.and_then(|t| t.scores.get(&d).copied());
            let hs = h.and_then(|t| t.scores.get(&d).copied());
            let shown = hs.or(bs);
            let class = shown
                .map(|s| format!("s{}", s.min(5)))
                .unwrap_or_else(|| "none".to_string());
            let dropped = matches!((bs, hs), (Some(b), Some(h)) if h < b);
            let border = if dropped && fallen.contains(name) {
                " cell-fell"
            } else {
                ""
            };
            let text = match (bs, hs) {
                (Some(b), Some(h)) if b != h => format!("{b}→{h}"),
                (_, Some(h)) => h.to_string(),
                (Some(b), None) => format!("{b} (base)"),
                (None, None) => "–".to_string(),
            };
            let _ = writeln!(
                out,
                "<rect class=\"cell {class}{border}\" x=\"{}\" y=\"{}\" width=\"{}\" \
                 height=\"{}\"><title>{esc} · {}: {text}</title></rect>\
                 <text x=\"{}\" y=\"{}\" text-anchor=\"middle\">{text}</text>",
                x + 1,
                y + 1,
                CELL_W - 2,
                CELL_H - 2,
                d.label(),
                x + CELL_W / 2,
                y + CELL_H / 2 + 4
            );
        }
        out.push_str("</g>\n");
    }
    out.push_str("</svg>\n");
    out.push_str(&drawn.note());
}

/// A dimension's label on two lines (`behavioral` / `transparency`).
fn split_label(label: &str) -> (&str, &str) {
    match label.split_once(' ') {
        Some((a, b)) => (a, b),
        None => (label, ""),
    }
}

/// Without scores: which tools differ by definition.
fn render_changes(out: &mut String, report: &Report) {
    let Some(changes) = &report.changes else {
        return;
    };
    if changes.added.is_empty() && changes.removed.is_empty() && changes.changed.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"note\">Every tool definition is unchanged ({} tool(s)): nothing to \
             chart.</p>",
            changes.unchanged.len()
        );
        return;
    }
    let _ = writeln!(out, "<h3>Changed tools</h3>\n<ul class=\"changes\">");
    for (what, names) in [
        ("added", &changes.added),
        ("removed", &changes.removed),
        ("changed", &changes.changed),
    ] {
        if !names.is_empty() {
            let list: Vec<String> = names
                .iter()
                .map(|n| format!("<code>{}</code>", escape(n)))
                .collect();
            let _ = writeln!(out, "<li>{what}: {}</li>", list.join(", "));
        }
    }
    let _ = writeln!(out, "</ul>");
}

fn render_change(out: &mut String, change: &ToolChange) {
    if !change.description_diff.is_empty() {
        out.push_str("<div class=\"diff\" aria-label=\"description diff\">");
        for line in &change.description_diff {
            let class = if line.starts_with("- ") { "del" } else { "ins" };
            let _ = write!(out, "<span class=\"{class}\">{}</span>", escape(line));
        }
        out.push_str("</div>\n");
    } else if change.description_before != change.description_after {
        let _ = writeln!(
            out,
            "<div class=\"diff\" aria-label=\"description diff\"><span class=\"del\">- {}</span>\
             <span class=\"ins\">+ {}</span></div>",
            escape(change.description_before.as_deref().unwrap_or("")),
            escape(change.description_after.as_deref().unwrap_or(""))
        );
    }
    for (what, class, list) in [
        ("Fields added", "fields-added", &change.fields_added),
        ("Fields removed", "fields-removed", &change.fields_removed),
    ] {
        if !list.is_empty() {
            let names: Vec<String> = list
                .iter()
                .map(|f| format!("<code>{}</code>", escape(f)))
                .collect();
            let _ = writeln!(out, "<p class=\"{class}\">{what}: {}</p>", names.join(", "));
        }
    }
}

fn render_causes(out: &mut String, causes: &Causes) {
    let _ = writeln!(out, "<h3>What fell on the first pair</h3>");
    if causes.tools.is_empty() && causes.added.is_empty() && causes.removed.is_empty() {
        let _ = writeln!(
            out,
            "<p>No single tool's TDQS fell; the mean moved through rounding of several tools.</p>"
        );
    }
    for t in &causes.tools {
        let _ = writeln!(
            out,
            "<div class=\"tool fallen\" data-tool=\"{}\">\n<p><b><code>{}</code></b> {} → {} \
             <span class=\"note\">(costs the mean {:.3})</span></p>",
            escape(&t.tool),
            escape(&t.tool),
            t.base,
            t.head,
            t.effect
        );
        if !t.dimensions.is_empty() {
            out.push_str("<ul>\n");
            for d in &t.dimensions {
                let _ = write!(
                    out,
                    "<li>{} {} → {}: {}",
                    d.dimension.label(),
                    d.base,
                    d.head,
                    escape(&d.justification)
                );
                if !d.fix.is_empty() {
                    let _ = write!(out, " <span class=\"note\">Fix: {}</span>", escape(&d.fix));
                }
                out.push_str("</li>\n");
            }
            out.push_str("</ul>\n");
        }
        if let Some(change) = &t.change {
            render_change(out, change);
        }
        out.push_str("</div>\n");
    }
    for (what, list) in [("Added", &causes.added), ("Removed", &causes.removed)] {
        if !list.is_empty() {
            let items: Vec<String> = list
                .iter()
                .map(|t| format!("<code>{}</code> ({})", escape(&t.tool), t.tdqs))
                .collect();
            let _ = writeln!(out, "<p>{what} tools: {}.</p>", items.join(", "));
        }
    }
    if causes.minimum_term.fell {
        let _ = writeln!(
            out,
            "<p class=\"note\">Information: the lowest tool fell from {} (<code>{}</code>) to {} \
             (<code>{}</code>).</p>",
            opt(causes.minimum_term.base.tdqs),
            escape(causes.minimum_term.base.tool.as_deref().unwrap_or("–")),
            opt(causes.minimum_term.head.tdqs),
            escape(causes.minimum_term.head.tool.as_deref().unwrap_or("–")),
        );
    }
    if !causes.coherence.is_empty() {
        let _ = writeln!(
            out,
            "<p class=\"note\">Information: coherence dimensions that fell:</p>\n<ul>"
        );
        for c in &causes.coherence {
            let _ = writeln!(
                out,
                "<li>{} {} → {}: {}</li>",
                c.dimension.label(),
                c.base,
                c.head,
                escape(&c.justification)
            );
        }
        let _ = writeln!(out, "</ul>");
    }
}

/// How many tools a summarised report leaves out (see `report::summary`).
fn omitted_count(report: &Report) -> usize {
    report.omitted.as_ref().map_or(0, |o| o.count as usize)
}

fn render_every_tool(out: &mut String, first: &Pair, omitted: usize) {
    let names = union_names(&first.base.tools, &first.head.tools);
    let _ = writeln!(
        out,
        "<details class=\"every-tool\"><summary>Every tool (first pair, {})</summary>\n\
         <table>\n<thead><tr><th>Tool</th><th class=\"num\">Base</th><th class=\"num\">Head</th>\
         <th>Smells (head)</th></tr></thead>\n<tbody>",
        names.len() + omitted
    );
    if omitted > 0 {
        let _ = writeln!(
            out,
            "<tr class=\"omitted\"><td colspan=\"4\">{omitted} tool(s) with the same definition \
             and the same scores on both sides are summarised in the report, not listed \
             (run with <code>--full-report</code> to list them).</td></tr>"
        );
    }
    let cell = |side: &SideScore, name: &str| {
        side.tools
            .get(name)
            .map(|t| format!("{} ({})", t.tdqs, t.tier))
            .unwrap_or_else(|| "–".to_string())
    };
    for name in names {
        let smells = first
            .head
            .tools
            .get(name)
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
            "<tr><td><code>{}</code></td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
             <td>{smells}</td></tr>",
            escape(name),
            cell(&first.base, name),
            cell(&first.head, name)
        );
    }
    let _ = writeln!(out, "</tbody>\n</table>\n</details>");
}

fn render_size(out: &mut String, report: &Report) {
    let Some(size) = &report.size else {
        return;
    };
    let _ = writeln!(
        out,
        "<h3>Size (information, never decisive)</h3>\n<table class=\"size\">\n<thead><tr>\
         <th>Measure</th><th class=\"num\">Base</th><th class=\"num\">Head</th>\
         <th class=\"num\">Change</th></tr></thead>\n<tbody>\n\
         <tr><td>Description characters</td><td class=\"num\">{}</td><td class=\"num\">{}</td>\
         <td class=\"num\">{:+}</td></tr>\n\
         <tr><td><code>tools/list</code> bytes</td><td class=\"num\">{}</td>\
         <td class=\"num\">{}</td><td class=\"num\">{:+}</td></tr>\n</tbody>\n</table>",
        size.base.description_characters,
        size.head.description_characters,
        size.delta.description_characters,
        size.base.tools_list_bytes,
        size.head.tools_list_bytes,
        size.delta.tools_list_bytes
    );
}

fn render_footer(out: &mut String, report: &Report) {
    let footer = super::markdown::calls_summary(report);
    let digest: String = report.version_digest.chars().take(12).collect();
    let _ = writeln!(
        out,
        "<footer>{} · pins <code>{}</code> · {} {}</footer>",
        escape(&footer),
        escape(&digest),
        escape(&report.generator.name),
        escape(&report.generator.version)
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn escape_covers_markup_quotes_and_controls() {
        assert_eq!(
            escape("<script>a&b</style>\"'\u{1}"),
            "&lt;script&gt;a&amp;b&lt;/style&gt;&quot;&#39;\u{fffd}"
        );
    }

    #[test]
    fn inline_code_pairs_backticks_only() {
        assert_eq!(
            inline_code("tools `a` and `b&amp;`"),
            "tools <code>a</code> and <code>b&amp;</code>"
        );
        assert_eq!(inline_code("one ` alone"), "one ` alone");
    }

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

    #[test]
    fn union_names_merges_sorted_keys_once() {
        let map = |names: &[&str]| -> BTreeMap<String, ()> {
            names.iter().map(|n| (n.to_string(), ())).collect()
        };
        let (a, b) = (map(&["a", "c", "d"]), map(&["b", "c", "e"]));
        assert_eq!(union_names(&a, &b), vec!["a", "b", "c", "d", "e"]);
        assert_eq!(union_names(&a, &map(&[])), vec!["a", "c", "d"]);
    }
}
