//! Plain-text rendering of one scored side (`tdqs-gate score`).

use std::fmt::Write as _;

use crate::arith::Tenths;
use crate::report::ScoredOnce;
use crate::rubric::ToolDimension;

fn opt(t: Option<Tenths>) -> String {
    t.map(|t| t.to_string()).unwrap_or_else(|| "-".to_string())
}

/// Each tool's TDQS, tier and weakest dimensions, then the rollups and the call count.
pub fn render_side(scored: &ScoredOnce) -> String {
    let side = &scored.side;
    let judge = &scored.scoring.judge;
    let mut out = String::new();
    let kind = if judge.model_judged {
        format!("model {} via {}", judge.model, judge.mode)
    } else {
        format!("{} judge ({}), not a model score", judge.mode, judge.model)
    };
    let _ = writeln!(
        out,
        "{} — {} tools — {kind}",
        side.server_name,
        side.tools.len()
    );
    let width = side
        .tools
        .keys()
        .map(|n| n.chars().count())
        .max()
        .unwrap_or(4)
        .max(4);
    let _ = writeln!(out, "\n{:width$}  TDQS  tier  weakest dimensions", "tool");
    for (name, t) in &side.tools {
        let lowest = t.scores.values().min().copied().unwrap_or(0);
        let weakest: Vec<String> = ToolDimension::ALL
            .into_iter()
            .filter(|d| t.scores.get(d) == Some(&lowest))
            .map(|d| format!("{} {}", d.label(), lowest))
            .collect();
        let flags = if t.flags.is_empty() {
            String::new()
        } else {
            format!("  [{}]", t.flags.join(", "))
        };
        let _ = writeln!(
            out,
            "{name:width$}  {:>4}  {:^4}  {}{flags}",
            t.tdqs.to_string(),
            t.tier.to_string(),
            weakest.join(", ")
        );
    }
    let r = &side.rollups;
    let tier = |t: Option<crate::arith::Tier>| t.map(|t| format!(" ({t})")).unwrap_or_default();
    let _ = writeln!(out, "\nmean TDQS            {}", opt(r.mean_tdqs));
    let _ = writeln!(
        out,
        "lowest TDQS          {} ({})",
        opt(r.min_tdqs),
        r.min_tool.as_deref().unwrap_or("-")
    );
    let _ = writeln!(
        out,
        "description quality  {}{}",
        opt(r.description_quality_score),
        tier(r.description_quality_tier)
    );
    let _ = writeln!(
        out,
        "coherence            {} ({})",
        r.coherence_score, r.coherence_tier
    );
    let _ = writeln!(
        out,
        "overall              {}{}",
        opt(r.overall_score),
        tier(r.overall_tier)
    );
    let c = &scored.calls;
    if judge.model_judged {
        let _ = writeln!(
            out,
            "\nmodel calls: {} ({} attempts; {} tools decided without a call)",
            c.questions, c.attempts, c.hard_gated
        );
    } else {
        // A rule judge answers in-process: nothing was sent to a model.
        let _ = writeln!(
            out,
            "\nmodel calls: none ({} questions answered by the {} judge; {} tools decided without a question)",
            c.questions, judge.mode, c.hard_gated
        );
    }
    if c.tokens.input_tokens + c.tokens.output_tokens > 0 {
        let _ = writeln!(
            out,
            "tokens: {} in, {} out",
            c.tokens.input_tokens, c.tokens.output_tokens
        );
    }
    for w in &scored.warnings {
        let _ = writeln!(out, "warning: {w}");
    }
    out
}
