//! `eval --init`: draft a case suite with the judge model, then validate each case in a separate
//! question; cases defended with a confidence below 0.7 are kept as exploratory.

use std::sync::Arc;

use serde_json::Value;

use crate::judge::build::JudgeOptions;
use crate::judge::{Judge, Question, QuestionKind, Subject};
use crate::lint::LintReport;
use tdqs_core::error::{Error, Stage};
use tdqs_core::eval::case::{Suite, SUITE_VERSION};
use tdqs_core::eval::draft::{
    apply_validation, draft_system, draft_user, parse_draft_answer, parse_validation_answer,
    validation_system, validation_user,
};
use tdqs_core::export::Export;
use tdqs_core::judge::TokenUsage;

const ATTEMPTS: usize = 3;

/// What `--init` produced.
#[derive(Debug, Clone)]
pub struct Drafted {
    pub suite: Suite,
    /// Drafted cases left out, and why.
    pub dropped: Vec<String>,
    pub calls: usize,
    pub usage: TokenUsage,
    pub model: String,
}

/// The confusable pairs lint reports (near-duplicate names, near-identical or overlapping
/// descriptions): the targets of sibling cases.
pub fn confusable_pairs(lint: &LintReport) -> Vec<(String, String)> {
    use crate::lint::catalogue::Code;
    let mut pairs = Vec::new();
    for f in &lint.findings {
        if !matches!(f.code, Code::N001 | Code::D005 | Code::D006) {
            continue;
        }
        let Some(tool) = &f.tool else { continue };
        for other in &f.related {
            let pair = (tool.clone(), other.clone());
            if !pairs.contains(&pair) {
                pairs.push(pair);
            }
        }
    }
    pairs
}

async fn ask_parsed<T>(
    judge: &Arc<dyn Judge>,
    question: &Question,
    what: &str,
    calls: &mut usize,
    usage: &mut TokenUsage,
    parse: impl Fn(&str) -> Result<T, String>,
) -> Result<T, Error> {
    let mut last = String::new();
    for _ in 0..ATTEMPTS {
        *calls += 1;
        match judge.ask(question).await {
            Ok(reply) => {
                usage.add(&reply.usage);
                match parse(&reply.text) {
                    Ok(v) => return Ok(v),
                    Err(why) => last = format!("the answer is not the required JSON: {why}"),
                }
            }
            Err(f) if f.retryable => last = f.message,
            Err(f) => {
                return Err(Error::new(
                    Stage::Judge,
                    format!("{what} failed: {}", f.message),
                ))
            }
        }
    }
    Err(Error::new(
        Stage::Judge,
        format!("{what}: no valid answer after {ATTEMPTS} attempts: {last}"),
    )
    .with_advice("check the judge's model and settings; nothing was written"))
}

/// Drafts and validates a suite for `export`'s tools.
pub async fn draft(
    export: &Export,
    judge_opts: &JudgeOptions,
    lint: &LintReport,
) -> Result<Drafted, Error> {
    let identity = super::live_identity(judge_opts)?;
    let judge = super::live_judge(judge_opts).await?;
    let tools = &export.tools;
    let names: Vec<String> = tools
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .map(str::to_string)
        .collect();
    let (mut calls, mut usage) = (0usize, TokenUsage::default());
    let question = Question {
        kind: QuestionKind::EvalDraft,
        system: draft_system(),
        user: draft_user(tools, &confusable_pairs(lint)),
        subject: Subject::Selection {
            request: String::new(),
            tools: tools.clone(),
        },
        user_template: None,
    };
    let (mut cases, dropped) = ask_parsed(
        &judge,
        &question,
        "drafting the cases",
        &mut calls,
        &mut usage,
        |t| parse_draft_answer(t, &names),
    )
    .await?;
    if cases.is_empty() {
        return Err(Error::new(
            Stage::Eval,
            format!(
                "the model drafted no usable case ({} dropped: {})",
                dropped.len(),
                dropped.join("; ")
            ),
        )
        .with_advice("write the cases by hand (docs/eval.md, \"The case file\")"));
    }
    for case in &mut cases {
        let question = Question {
            kind: QuestionKind::EvalValidate,
            system: validation_system(),
            user: validation_user(tools, case),
            subject: Subject::Selection {
                request: case.request.clone(),
                tools: tools.clone(),
            },
            user_template: None,
        };
        let (confidence, _) = ask_parsed(
            &judge,
            &question,
            &format!("validating case `{}`", case.id),
            &mut calls,
            &mut usage,
            parse_validation_answer,
        )
        .await?;
        apply_validation(case, confidence);
    }
    let suite = Suite {
        version: SUITE_VERSION,
        cases,
    };
    suite.check().map_err(|p| {
        Error::internal(format!(
            "a drafted suite does not pass its own check: {}",
            p.join("; ")
        ))
    })?;
    Ok(Drafted {
        suite,
        dropped,
        calls,
        usage,
        model: format!("{} {}", identity.selector, identity.model),
    })
}
