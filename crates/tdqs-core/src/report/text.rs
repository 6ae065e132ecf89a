//! Plain-text rendering of one scored side (`tdqs-gate score`), built as a [`doc`] page and
//! printed by the plain-text backend.

use crate::arith::{Tenths, Tier};
use crate::report::ScoredOnce;
use crate::rubric::ToolDimension;

use super::doc::{self, column, text, words, Align, Block, Inline, Table};

fn opt(t: Option<Tenths>) -> String {
    t.map(|t| t.to_string()).unwrap_or_else(|| "-".to_string())
}

/// Each tool's TDQS, tier and weakest dimensions, then the rollups and the call count.
pub fn render_side(scored: &ScoredOnce) -> String {
    doc::text::render(&page(scored))
}

fn page(scored: &ScoredOnce) -> Vec<Block> {
    let side = &scored.side;
    let judge = &scored.scoring.judge;
    let kind = if judge.model_judged {
        vec![
            words("model "),
            text(&judge.model),
            words(" via "),
            text(&judge.mode),
        ]
    } else {
        vec![
            text(&judge.mode),
            words(" judge ("),
            text(&judge.model),
            words("), not a model score"),
        ]
    };
    let mut title = vec![
        text(&side.server_name),
        words(format!(" — {} tools — ", side.tools.len())),
    ];
    title.extend(kind);
    let mut tools = Table::new(vec![
        column("tool", Align::Left),
        column("TDQS", Align::Right).width(4),
        column("tier", Align::Center).width(4),
        column("weakest dimensions", Align::Left),
    ]);
    for (name, t) in &side.tools {
        let lowest = t.scores.values().min().copied().unwrap_or(0);
        let weakest: Vec<String> = ToolDimension::ALL
            .into_iter()
            .filter(|d| t.scores.get(d) == Some(&lowest))
            .map(|d| format!("{} {}", d.label(), lowest))
            .collect();
        let mut last = vec![words(weakest.join(", "))];
        if !t.flags.is_empty() {
            last.extend([words("  ["), text(t.flags.join(", ")), words("]")]);
        }
        tools.rows.push(doc::row([
            vec![text(name)],
            vec![words(t.tdqs.to_string())],
            vec![words(t.tier.to_string())],
            last,
        ]));
    }
    let r = &side.rollups;
    let tier = |t: Option<Tier>| t.map(|t| format!(" ({t})")).unwrap_or_default();
    let mut rollups = Table::new(vec![
        column("", Align::Left).width(19),
        column("", Align::Left),
    ]);
    rollups.head = false;
    rollups.rows = vec![
        doc::row([vec![words("mean TDQS")], vec![words(opt(r.mean_tdqs))]]),
        doc::row([
            vec![words("lowest TDQS")],
            vec![
                words(format!("{} (", opt(r.min_tdqs))),
                text(r.min_tool.as_deref().unwrap_or("-")),
                words(")"),
            ],
        ]),
        doc::row([
            vec![words("description quality")],
            vec![words(format!(
                "{}{}",
                opt(r.description_quality_score),
                tier(r.description_quality_tier)
            ))],
        ]),
        doc::row([
            vec![words("coherence")],
            vec![words(format!(
                "{} ({})",
                r.coherence_score, r.coherence_tier
            ))],
        ]),
        doc::row([
            vec![words("overall")],
            vec![words(format!(
                "{}{}",
                opt(r.overall_score),
                tier(r.overall_tier)
            ))],
        ]),
    ];
    let c = &scored.calls;
    let mut calls = if judge.model_judged {
        vec![words(format!(
            "model calls: {} ({} attempts; {} tools decided without a call)",
            c.questions, c.attempts, c.hard_gated
        ))]
    } else {
        // A rule judge answers in-process: nothing was sent to a model.
        vec![
            words(format!(
                "model calls: none ({} questions answered by the ",
                c.questions
            )),
            text(&judge.mode),
            words(format!(
                " judge; {} tools decided without a question)",
                c.hard_gated
            )),
        ]
    };
    if c.tokens.input_tokens + c.tokens.output_tokens > 0 {
        calls.extend([
            Inline::Break,
            words(format!(
                "tokens: {} in, {} out",
                c.tokens.input_tokens, c.tokens.output_tokens
            )),
        ]);
    }
    for w in &scored.warnings {
        calls.extend([Inline::Break, words("warning: "), text(w)]);
    }
    vec![
        doc::paragraph(title),
        Block::Table(tools),
        Block::Table(rollups),
        doc::paragraph(calls),
    ]
}
