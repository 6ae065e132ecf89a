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
    let place = match &at.url {
        Some(href) => Inline::Link {
            text: vec![code(at.label())],
            href: href.clone(),
        },
        None => code(at.label()),
    };
    let mut out = vec![words(" · defined at "), place];
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
    if calls.cached_answers > 0 {
        work += &format!(", {} from the answer cache", calls.cached_answers);
    }
    work.push(')');
    let tokens = &calls.tokens;
    if tokens.input_tokens + tokens.output_tokens > 0 {
        work += &format!(
            ", tokens: {} in / {} out",
            tokens.input_tokens, tokens.output_tokens
        );
        if tokens.cache_read_input_tokens > 0 {
            work += &format!(
                ", {} read from the prompt cache",
                tokens.cache_read_input_tokens
            );
        }
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

/// A score with its tier, or a dash.
fn scored(score: Option<Tenths>, tier: Option<crate::arith::Tier>) -> String {
    match (score, tier) {
        (Some(s), Some(t)) => format!("{s} ({t})"),
        (Some(s), None) => s.to_string(),
        _ => "–".to_string(),
    }
}

/// A signed change of two optional scores, or a dash.
fn change(base: Option<Tenths>, head: Option<Tenths>) -> String {
    match (base, head) {
        (Some(b), Some(h)) if h.0 >= b.0 => format!("+{}", Tenths(h.0 - b.0)),
        (Some(b), Some(h)) => Tenths(h.0 - b.0).to_string(),
        _ => "–".to_string(),
    }
}

/// The registry forecast: the head's server score, tier and lowest tools as a registry's
/// published aggregation gives them, against the base's.
pub(crate) fn forecast(report: &Report) -> Vec<Block> {
    let Some(f) = &report.forecast else {
        return Vec::new();
    };
    let (b, h) = (&f.before, &f.after_merge);
    let mut table = Table::new(vec![
        column("Registry figure", Align::Left),
        column("Base", Align::Right),
        column("After merge", Align::Right),
        column("Change", Align::Right),
    ])
    .with_attrs(Attrs::class("forecast"));
    let line = |label: &'static str, bs: String, hs: String, ch: String| {
        doc::row([
            vec![words(label)],
            vec![text(bs)],
            vec![text(hs)],
            vec![text(ch)],
        ])
    };
    table.rows = vec![
        line(
            "Server score",
            scored(b.overall_score, b.overall_tier),
            scored(h.overall_score, h.overall_tier),
            change(b.overall_score, h.overall_score),
        ),
        line(
            "Tool definition quality",
            scored(b.description_quality_score, b.description_quality_tier),
            scored(h.description_quality_score, h.description_quality_tier),
            change(b.description_quality_score, h.description_quality_score),
        ),
        line(
            "Server coherence",
            scored(Some(b.coherence_score), Some(b.coherence_tier)),
            scored(Some(h.coherence_score), Some(h.coherence_tier)),
            change(Some(b.coherence_score), Some(h.coherence_score)),
        ),
        line(
            "Mean TDQS",
            opt(b.mean_tdqs),
            opt(h.mean_tdqs),
            change(b.mean_tdqs, h.mean_tdqs),
        ),
        line(
            "Lowest TDQS",
            opt(b.min_tdqs),
            opt(h.min_tdqs),
            change(b.min_tdqs, h.min_tdqs),
        ),
    ];
    let intro = fill(
        "{}: what a TDQS registry would show for {} after the merge, from this run's first pair \
         aggregated with the specification's rollups (server score = 70 % tool definition \
         quality + 30 % coherence; quality = 60 % mean + 40 % lowest tool). The registry's own \
         judge gives its own numbers.",
        [strong(vec![words("Forecast")]), code(&f.server_name)],
    );
    let lowest = joined(
        f.lowest_tools.iter().map(|t| {
            let mut item = vec![code(&t.tool), text(format!(" {} ({})", t.tdqs, t.tier))];
            match t.base_tdqs {
                Some(base) if base != t.tdqs => item.push(text(format!(", base {base}"))),
                Some(_) => {}
                None => item.push(words(", new")),
            }
            item
        }),
        "; ",
    );
    let mut out = vec![
        doc::heading(3, vec![words("Registry forecast")]),
        paragraph(intro),
        Block::Table(table),
    ];
    if !f.lowest_tools.is_empty() {
        let mut line = vec![words("Lowest tools after the merge: ")];
        line.extend(lowest);
        line.push(words("."));
        out.push(paragraph(line));
    }
    out
}

/// A float as a report shows it: no trailing `.0` noise beyond what was rounded.
fn figure(value: Option<f64>) -> String {
    value.map_or_else(|| "–".to_string(), |v| v.to_string())
}

/// Most per-tool rows the cost section lists (the tools whose definitions' tokens changed most).
const COST_ROWS: usize = 20;

/// What the definitions cost: tokens and bytes of the listing, TDQS per 1,000 tokens, the tools
/// whose definitions changed size, and the growth rule when it was set.
pub(crate) fn cost(report: &Report) -> Vec<Block> {
    let Some(c) = &report.cost else {
        return Vec::new();
    };
    let (b, h) = (&c.base, &c.head);
    let mut table = Table::new(vec![
        column("Measure", Align::Left),
        column("Base", Align::Right),
        column("Head", Align::Right),
        column("Change", Align::Right),
    ])
    .with_attrs(Attrs::class("cost"));
    let growth = c
        .listing_growth_percent
        .map(|p| format!(" ({p:+}%)"))
        .unwrap_or_default();
    table.rows = vec![
        doc::row([
            vec![words("Listing tokens")],
            vec![num(b.listing.tokens)],
            vec![num(h.listing.tokens)],
            vec![text(format!("{:+}{growth}", c.listing_tokens_change))],
        ]),
        doc::row([
            vec![words("Listing bytes")],
            vec![num(b.listing.bytes)],
            vec![num(h.listing.bytes)],
            vec![text(format!("{:+}", c.listing_bytes_change))],
        ]),
        doc::row([
            vec![words("TDQS per 1k tokens")],
            vec![text(figure(b.tdqs_per_1k_tokens))],
            vec![text(figure(h.tdqs_per_1k_tokens))],
            vec![words("")],
        ]),
    ];
    let intro = fill(
        "Tokens by the {} tokenizer, each definition and the whole {} array as compact JSON. \
         Claude's tokenizer is not public: for a Claude model these counts are an approximation.",
        [code(&c.tokenizer), code("tools")],
    );
    let mut out = vec![
        doc::heading(3, vec![words("What the definitions cost")]),
        paragraph(intro),
        Block::Table(table),
    ];
    let mut moved: Vec<(&String, Option<u64>, Option<u64>)> = b
        .tools
        .keys()
        .chain(h.tools.keys())
        .collect::<std::collections::BTreeSet<_>>()
        .into_iter()
        .map(|n| {
            (
                n,
                b.tools.get(n).map(|t| t.tokens),
                h.tools.get(n).map(|t| t.tokens),
            )
        })
        .filter(|(_, bt, ht)| bt != ht)
        .collect();
    let delta = |bt: Option<u64>, ht: Option<u64>| ht.unwrap_or(0) as i64 - bt.unwrap_or(0) as i64;
    moved.sort_by(|x, y| {
        delta(y.1, y.2)
            .abs()
            .cmp(&delta(x.1, x.2).abs())
            .then_with(|| x.0.cmp(y.0))
    });
    if !moved.is_empty() {
        let mut tools = Table::new(vec![
            column("Tool", Align::Left),
            column("Base tokens", Align::Right),
            column("Head tokens", Align::Right),
            column("Change", Align::Right),
            column("Head TDQS per 1k tokens", Align::Right),
        ])
        .with_attrs(Attrs::class("cost-tools"));
        let count = |t: Option<u64>| t.map_or_else(|| "–".to_string(), |t| t.to_string());
        tools.rows = moved
            .iter()
            .take(COST_ROWS)
            .map(|(name, bt, ht)| {
                doc::row([
                    vec![code(name.as_str())],
                    vec![text(count(*bt))],
                    vec![text(count(*ht))],
                    vec![text(format!("{:+}", delta(*bt, *ht)))],
                    vec![text(figure(
                        h.tools.get(*name).and_then(|t| t.tdqs_per_1k_tokens),
                    ))],
                ])
            })
            .collect();
        out.push(Block::Table(tools));
        if moved.len() > COST_ROWS {
            out.push(paragraph(vec![text(format!(
                "{} more tools changed size; the JSON report lists every one.",
                moved.len() - COST_ROWS
            ))]));
        }
    }
    if let Some(rule) = &report.growth_rule {
        let state = if !rule.applied {
            "not applied (nothing was scored, or the base lists nothing)".to_string()
        } else if rule.blocks {
            "BLOCK: the listing grew by more than that with no TDQS gain".to_string()
        } else if rule.over {
            "the listing grew by more than that, with a TDQS gain: allowed".to_string()
        } else {
            "within the limit".to_string()
        };
        out.push(paragraph(vec![text(format!(
            "Growth rule: at most {}% more listing tokens without a TDQS gain; {state}.",
            rule.max_growth_percent
        ))]));
    }
    out
}
