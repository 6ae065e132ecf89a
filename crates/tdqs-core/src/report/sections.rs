//! The parts the Markdown summary and the HTML page share, built once as document blocks and
//! inline runs: what the sides were, who scored, what fell besides the tools, the size, the
//! warnings and the footer. Each page ([`super::markdown`], [`super::html`]) places them in its
//! own order around its own sections.

use std::collections::BTreeMap;

use crate::arith::Tenths;
use crate::score::ToolResult;

use super::doc::{self, code, fill, joined, list, paragraph, paragraph_with, strong, text, words};
use super::doc::{column, Align, Attrs, Block, Inline, Table};
use super::model::*;

/// A score, or a dash where a side has none.
pub(crate) fn opt(t: Option<Tenths>) -> String {
    t.map(|t| t.to_string()).unwrap_or_else(|| "–".to_string())
}

/// "Base … → head …": the working tree (and the commit it stands on), a revision and its
/// commit, or an export file. A revision's name is code; `hex` shows a commit (cut to 12
/// characters) as each page does.
pub(crate) fn sides(report: &Report, hex: fn(String) -> Inline) -> Vec<Inline> {
    let side = |revision: Option<&str>, commit: Option<&String>| {
        let short = || hex(commit.map_or("", |c| c.as_str()).chars().take(12).collect());
        match (revision, commit) {
            // The working tree may hold uncommitted changes: its commit is only where it began.
            (Some(crate::export::WORKING_TREE_LABEL), Some(_)) => {
                fill("the working tree (on {})", [short()])
            }
            (Some(r), Some(_)) => fill("{} ({})", [code(r), short()]),
            (Some(r), None) => vec![code(r)],
            (None, Some(_)) => vec![short()],
            (None, None) => vec![words("an export file")],
        }
    };
    let mut out = vec![words("Base ")];
    out.extend(side(
        report.base_revision.as_deref(),
        report.base_commit.as_ref(),
    ));
    out.push(words(" → head "));
    out.extend(side(
        report.head_revision.as_deref(),
        report.head_commit.as_ref(),
    ));
    out.push(words("."));
    out
}

/// Who scored: a model and its mode, or a rule judge that is no model's score.
pub(crate) fn judge(report: &Report) -> Option<Vec<Inline>> {
    let judge = &report.scoring.as_ref()?.judge;
    let (model, mode) = (code(&judge.model), text(&judge.mode));
    Some(if judge.model_judged {
        fill("Scored by {} through {} (TDQS v1.3).", [model, mode])
    } else {
        let not_a_model = strong(vec![words("not a model's score")]);
        let template = "Scored by the {} judge ({}): deterministic rules, {}.";
        fill(template, [strong(vec![mode]), model, not_a_model])
    })
}

/// The heading of what fell, and a note when no single tool did.
pub(crate) fn causes_intro(causes: &Causes) -> Vec<Block> {
    let mut out = vec![doc::heading(3, vec![words("What fell on the first pair")])];
    if causes.tools.is_empty() && causes.added.is_empty() && causes.removed.is_empty() {
        out.push(paragraph(vec![words(
            "No single tool's TDQS fell; the mean moved through rounding of several tools.",
        )]));
    }
    out
}

/// " · defined at `server.py:42`" for a fallen tool the head's tree was found to define, with
/// "(medium confidence)" when only its name or first sentence matched; nothing otherwise.
pub(crate) fn defined_at(tool: &FallenTool) -> Vec<Inline> {
    let Some(at) = &tool.location else {
        return Vec::new();
    };
    let mut out = vec![words(" · defined at "), code(at.label())];
    if at.confidence == crate::locate::Confidence::Medium {
        out.push(words(" (medium confidence)"));
    }
    out
}

/// The selection check's call-out when the mean TDQS rose while selection fell.
pub(crate) fn rose_while_fell(attrs: Attrs) -> Block {
    let what = strong(vec![words(
        "The mean TDQS rose while selection fell significantly",
    )]);
    let template = "{}: the new definitions read better to the judge and route worse.";
    paragraph_with(attrs, fill(template, [what]))
}

/// "Added tools: `a` (3.0), …." and the same for removed tools; then the information lines:
/// the lowest tool's fall and the coherence dimensions that fell (`note` styles those).
pub(crate) fn besides_the_tools(causes: &Causes, note: Attrs) -> Vec<Block> {
    let mut out = Vec::new();
    for (what, tools) in [("Added", &causes.added), ("Removed", &causes.removed)] {
        if !tools.is_empty() {
            let each = tools
                .iter()
                .map(|t| fill("{} ({})", [code(&t.tool), num(t.tdqs)]));
            let mut content = vec![words(what), words(" tools: ")];
            content.extend(joined(each, ", "));
            content.push(words("."));
            out.push(paragraph(content));
        }
    }
    let m = &causes.minimum_term;
    if m.fell {
        let tool = |t: &Option<String>| code(t.as_deref().unwrap_or("–"));
        let (bt, ht) = (words(opt(m.base.tdqs)), words(opt(m.head.tdqs)));
        let template = "Information: the lowest tool fell from {} ({}) to {} ({}).";
        let content = fill(template, [bt, tool(&m.base.tool), ht, tool(&m.head.tool)]);
        out.push(paragraph_with(note.clone(), content));
    }
    if !causes.coherence.is_empty() {
        let says = vec![words("Information: coherence dimensions that fell:")];
        out.push(paragraph_with(note, says));
        out.push(list(causes.coherence.iter().map(|c| {
            let label = format!("{} {} → {}: ", c.dimension.label(), c.base, c.head);
            vec![words(label), text(&c.justification)]
        })));
    }
    out
}

/// A number or other figure of the gate's own.
pub(crate) fn num(n: impl ToString) -> Inline {
    words(n.to_string())
}

/// "added: `a`, `b`" per kind of change, for the kinds that have any.
pub(crate) fn changed_tools(changes: &Changes) -> Vec<Vec<Inline>> {
    let kinds = [
        ("added: ", &changes.added),
        ("removed: ", &changes.removed),
        ("changed: ", &changes.changed),
    ];
    kinds
        .into_iter()
        .filter(|(_, names)| !names.is_empty())
        .map(|(what, names)| {
            let mut item = vec![words(what)];
            item.extend(joined(names.iter().map(|n| vec![code(n)]), ", "));
            item
        })
        .collect()
}

/// The table of every tool of the first pair: name, both sides' TDQS and tier, the head's
/// smells.
pub(crate) fn tool_table(first: &Pair) -> Table {
    let mut table = Table::new(vec![
        column("Tool", Align::Left),
        column("Base", Align::Right),
        column("Head", Align::Right),
        column("Smells (head)", Align::Left),
    ]);
    let score = |t: Option<&ToolResult>| {
        words(t.map_or_else(|| "–".to_string(), |t| format!("{} ({})", t.tdqs, t.tier)))
    };
    for name in union_names(&first.base.tools, &first.head.tools) {
        let head = first.head.tools.get(name);
        let smells: Vec<&str> = head
            .iter()
            .flat_map(|h| h.smells.iter().map(|d| d.label()))
            .collect();
        let cells = [
            code(name),
            score(first.base.tools.get(name)),
            score(head),
            words(smells.join(", ")),
        ];
        table.rows.push(doc::row(cells.map(|c| vec![c])));
    }
    table
}

/// The names on either side, sorted, each once (both maps are sorted: a linear merge).
pub(crate) fn union_names<'a, V>(
    base: &'a BTreeMap<String, V>,
    head: &'a BTreeMap<String, V>,
) -> Vec<&'a str> {
    let mut out = Vec::with_capacity(base.len().max(head.len()));
    let (mut b, mut h) = (base.keys().peekable(), head.keys().peekable());
    loop {
        let next = match (b.peek(), h.peek()) {
            (Some(x), Some(y)) if x == y => {
                h.next();
                b.next()
            }
            (Some(x), Some(y)) if x < y => b.next(),
            (Some(_), None) => b.next(),
            (_, Some(_)) => h.next(),
            (None, None) => break,
        };
        out.extend(next.map(String::as_str));
    }
    out
}

/// The size section (information, never decisive).
pub(crate) fn size(report: &Report) -> Vec<Block> {
    let Some(size) = &report.size else {
        return Vec::new();
    };
    let mut table = Table::new(vec![
        column("Measure", Align::Left),
        column("Base", Align::Right),
        column("Head", Align::Right),
        column("Change", Align::Right),
    ])
    .with_attrs(Attrs::class("size"));
    let (b, h, d) = (&size.base, &size.head, &size.delta);
    table.rows = vec![
        doc::row([
            vec![words("Description characters")],
            vec![num(b.description_characters)],
            vec![num(h.description_characters)],
            vec![words(format!("{:+}", d.description_characters))],
        ]),
        doc::row([
            vec![code("tools/list"), words(" bytes")],
            vec![num(b.tools_list_bytes)],
            vec![num(h.tools_list_bytes)],
            vec![words(format!("{:+}", d.tools_list_bytes))],
        ]),
    ];
    vec![
        doc::heading(3, vec![words("Size (information, never decisive)")]),
        Block::Table(table),
    ]
}

/// The warnings, as a list.
pub(crate) fn warnings(report: &Report) -> Vec<Block> {
    if report.warnings.is_empty() {
        return Vec::new();
    }
    vec![
        doc::heading(3, vec![words("Warnings")]),
        list(report.warnings.iter().map(|w| vec![text(w)])),
    ]
}

/// The closing line: the judge's work (questions, attempts, shared and reused answers,
/// tokens), the pins and the generator.
pub(crate) fn footer(report: &Report) -> Block {
    let calls = &report.calls;
    let what = match &report.scoring {
        Some(s) if !s.judge.model_judged => "Rule-judge answers",
        _ => "Model calls",
    };
    let mut work = format!(
        "{what}: {} ({} attempts, {} shared answers",
        calls.questions, calls.attempts, calls.shared_answers
    );
    if calls.reused_answers > 0 {
        work += &format!(", {} reused from earlier pairs", calls.reused_answers);
    }
    work.push(')');
    let tokens = &calls.tokens;
    if tokens.input_tokens + tokens.output_tokens > 0 {
        work += &format!(
            ", tokens: {} in / {} out",
            tokens.input_tokens, tokens.output_tokens
        );
    }
    let digest: String = report.version_digest.chars().take(12).collect();
    let generator = text(format!(
        "{} {}",
        report.generator.name, report.generator.version
    ));
    Block::Footer(fill(
        "{} · pins {} · {}",
        [words(work), code(digest), generator],
    ))
}
