//! The rewrites of a run as page blocks: one section per tool with its verdict, the figures
//! (predicted TDQS and tier, bytes, calls), and the proposal as a suggestion block for its
//! source line or as a diff. Shared by `tdqs-gate suggest` and the gate's summary.

use super::doc::{
    code, fill, heading, list, marked, paragraph, words, Attrs, Block, DiffLine, Inline,
};

use crate::suggest::{Placement, Status, Suggestions, ToolSuggestion};

/// The section of a page that shows `suggestions`, from heading level `level`.
pub fn blocks(suggestions: &Suggestions, level: u8) -> Vec<Block> {
    let mut out = vec![heading(level, vec![words("Suggested rewrites")])];
    let count = |status: Status| {
        suggestions
            .tools
            .iter()
            .filter(|t| t.status == status)
            .count()
    };
    if suggestions.model_judged {
        out.push(paragraph(vec![words(format!(
            "{} offered, {} withheld; {} of at most {} judge calls. A proposal is offered only \
             when the same judge, with the same prompts, scored it at least as high as the \
             reference on every dimension it had to hold.",
            count(Status::Offered),
            count(Status::Withheld),
            suggestions.calls,
            suggestions.max_calls
        ))]));
    } else {
        out.push(paragraph(vec![words(
            "The rule judge writes no text: what each tool is missing, per dimension, found by \
             fixed checks on its definition.",
        )]));
    }
    for tool in &suggestions.tools {
        out.extend(tool_blocks(tool, level + 1));
    }
    out
}

fn tool_blocks(tool: &ToolSuggestion, level: u8) -> Vec<Block> {
    let verdict = match tool.status {
        Status::Offered => "offered",
        Status::Withheld => "withheld",
        Status::Checklist => "checklist",
    };
    let mut out = vec![heading(
        level,
        fill("{} — {}", [code(tool.tool.clone()), words(verdict)]),
    )];
    out.push(paragraph(marked(&tool.reason)));
    if tool.status != Status::Checklist {
        let mut figures: Vec<String> = Vec::new();
        if let (Some(predicted), Some(tier)) = (tool.predicted_tdqs, tool.predicted_tier) {
            let from = tool
                .reference_tdqs
                .map(|r| format!(" (reference {r})"))
                .unwrap_or_default();
            figures.push(format!("predicted TDQS {predicted}, tier {tier}{from}"));
        }
        if let Some(delta) = tool.bytes_delta {
            figures.push(format!("{delta:+} bytes"));
        }
        if let Some(delta) = tool.tokens_delta {
            figures.push(format!("{delta:+} tokens"));
        }
        figures.push(format!(
            "{} judge call(s), {} input and {} output tokens",
            tool.calls, tool.tokens.input_tokens, tool.tokens.output_tokens
        ));
        out.push(paragraph(vec![words(figures.join("; ") + ".")]));
    }
    match (&tool.placement, tool.status) {
        (Some(Placement::Line { path, line, .. }), Status::Offered) => {
            out.push(paragraph(fill(
                "Replace line {} of {}:",
                [words(line.to_string()), code(path.clone())],
            )));
            if let Some(Placement::Line { replacement, .. }) = &tool.placement {
                out.push(Block::Suggestion(replacement.clone()));
            }
        }
        (Some(placement), status) => {
            let lines = match placement {
                Placement::Diff { lines } => lines.clone(),
                Placement::Line {
                    original,
                    replacement,
                    ..
                } => vec![format!("- {original}"), format!("+ {replacement}")],
            };
            let diff = Block::Diff(
                lines
                    .into_iter()
                    .map(|line| DiffLine {
                        removed: line.starts_with('-'),
                        line,
                    })
                    .collect(),
            );
            if status == Status::Withheld {
                out.push(Block::Details {
                    attrs: Attrs::none(),
                    summary: vec![words("The withheld proposal")],
                    blocks: vec![diff],
                });
            } else {
                out.push(diff);
            }
        }
        (None, _) => {}
    }
    if !tool.checklist.is_empty() {
        out.push(list(tool.checklist.iter().map(|item| {
            let mut content: Vec<Inline> = vec![words(item.dimension.label()), words(": ")];
            content.extend(marked(&item.missing));
            content
        })));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::arith::{Tenths, Tier};
    use crate::judge::TokenUsage;
    use crate::report::doc::markdown;
    use crate::rubric::ToolDimension;
    use crate::suggest::ChecklistItem;

    fn offered() -> ToolSuggestion {
        ToolSuggestion {
            tool: "get_weather".into(),
            status: Status::Offered,
            reason: "scored at least as high on `usage_guidelines` in 2 of 2 pairs".into(),
            held: vec![ToolDimension::UsageGuidelines],
            proposal: None,
            pairs: Vec::new(),
            reference_tdqs: Some(Tenths(28)),
            predicted_tdqs: Some(Tenths(41)),
            predicted_tier: Some(Tier::A),
            bytes_delta: Some(120),
            tokens_delta: Some(25),
            tokenizer: Some("cl100k_base (tiktoken-rs 0.12.1)".to_string()),
            calls: 5,
            tokens: TokenUsage {
                input_tokens: 6000,
                output_tokens: 900,
                ..Default::default()
            },
            placement: Some(Placement::Line {
                path: "src/server.ts".into(),
                line: 12,
                original: "  description: \"Weather.\",".into(),
                replacement: "  description: \"Weather for one city.\",".into(),
            }),
            checklist: Vec::new(),
        }
    }

    #[test]
    fn an_offered_proposal_on_a_line_is_a_suggestion_block() {
        let page = markdown::render(&blocks(
            &Suggestions {
                model_judged: true,
                max_calls: 40,
                calls: 5,
                tools: vec![offered()],
            },
            2,
        ));
        assert!(page.contains("1 offered, 0 withheld; 5 of at most 40 judge calls"));
        assert!(page.contains("predicted TDQS 4.1, tier A (reference 2.8); +120 bytes; +25 tokens"));
        assert!(page.contains("Replace line 12 of `src/server.ts`:"));
        assert!(page.contains("```suggestion\n  description: \"Weather for one city.\",\n```"));
    }

    #[test]
    fn a_withheld_proposal_is_folded_and_a_checklist_is_listed() {
        let mut withheld = offered();
        withheld.status = Status::Withheld;
        let mut checklist = offered();
        checklist.status = Status::Checklist;
        checklist.placement = None;
        checklist.checklist = vec![ChecklistItem {
            dimension: ToolDimension::ParameterSemantics,
            missing: "a description of the parameter(s) `city`".into(),
        }];
        let page = markdown::render(&blocks(
            &Suggestions {
                model_judged: true,
                max_calls: 40,
                calls: 5,
                tools: vec![withheld, checklist],
            },
            2,
        ));
        assert!(page.contains("withheld proposal"));
        assert!(!page.contains("```suggestion"));
        assert!(page.contains("a description of the parameter(s) `city`"));
    }
}
