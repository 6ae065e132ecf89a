//! Rewrites for tools, proven before they are offered (`tdqs-gate suggest`, the gate's
//! `--suggest`): ask the judge's model for a revised definition with our own prompt, check it
//! kept the name and the schema's shape, score it against the reference definition with the
//! same judge and prompts pair after pair until the pairs decide, all under a cap on judge
//! calls. A rule judge gets the checklist of gaps instead. The pure parts are
//! [`tdqs_core::suggest`].

mod capped;

use std::path::Path;
use std::sync::Arc;

use serde_json::Value;

use crate::judge::{Judge, Question, QuestionKind, Subject, TokenUsage};
use crate::progress::ProgressEvent;
use crate::score::session::ScoringSession;
use crate::score::side::Scorer;
use capped::CappedJudge;
use tdqs_core::arith::Weights;
use tdqs_core::error::{Error, Stage};
use tdqs_core::export::Export;
use tdqs_core::judge::siblings::{Siblings, SideNames};
use tdqs_core::locate::{Confidence, Locations, Matched, Place};
use tdqs_core::rubric::ToolDimension;
use tdqs_core::score::CallStats;
use tdqs_core::suggest::proposal::{
    check_proposal, parse_rewrite_answer, rewrite_system, rewrite_user,
};
use tdqs_core::suggest::render::{definition_diff, replaced_line};
use tdqs_core::suggest::verdict::{decided, median_scores};
use tdqs_core::suggest::{
    checklist::checklist, PairOutcome, Placement, Status, Suggestions, ToolSuggestion,
};

/// The default cap on judge calls for the rewrites of one run.
pub const DEFAULT_MAX_CALLS: u64 = 40;
/// The most pairs a model-judged proposal is scored in (a majority of them decides).
pub const MAX_PAIRS: usize = 3;

/// How a run of rewrites is bounded and where it looks for source lines.
#[derive(Debug, Clone)]
pub struct SuggestOptions {
    /// The most judge calls (retries included) all rewrites of the run may make.
    pub max_calls: u64,
    /// The tree to find description literals in (`None`: every proposal is a diff).
    pub source: Option<std::path::PathBuf>,
}

/// One tool to rewrite.
#[derive(Debug, Clone)]
pub struct Target {
    pub tool: String,
    /// The definition the proposal must be at least as good as: the base side's in the gate;
    /// `None` for the tool itself.
    pub reference: Option<Value>,
    /// The dimensions to hold (those that fell); empty for all six.
    pub held: Vec<ToolDimension>,
    /// What the judge said about each held dimension, for the rewrite request.
    pub weak_points: Vec<(String, String)>,
}

/// Rewrites `targets` of `export` with the session's judge.
pub(crate) async fn suggest(
    export: &Export,
    targets: &[Target],
    session: &ScoringSession,
    opts: &SuggestOptions,
) -> Result<Suggestions, Error> {
    let located = match &opts.source {
        Some(tree) => Some((tree.as_path(), crate::locate::locate(tree, export)?)),
        None => None,
    };
    let model_judged = session.scoring.judge.model_judged;
    let capped = Arc::new(CappedJudge::new(
        Arc::clone(&session.scorer.judge),
        opts.max_calls,
    ));
    let scorer = Scorer {
        judge: capped.clone(),
        weights: session.scorer.weights.clone(),
        retries: session.scorer.retries,
        concurrency: 1,
        share_identical: false,
        progress: Arc::clone(&session.scorer.progress),
        memo: Default::default(),
        reuse_unchanged: false,
        // Each pair of a proposal is a fresh draw: no answer of another run stands in for it.
        answer_cache: None,
    };
    let mut tools = Vec::with_capacity(targets.len());
    for target in targets {
        let index = export
            .tools
            .iter()
            .position(|t| tdqs_core::digest::tool_name(t) == target.tool)
            .ok_or_else(|| {
                Error::usage(format!("the side lists no tool `{}`", target.tool))
                    .with_advice("name a tool the export lists (`tdqs-gate export` shows them)")
            })?;
        let held: Vec<ToolDimension> = if target.held.is_empty() {
            ToolDimension::ALL.to_vec()
        } else {
            target.held.clone()
        };
        if !model_judged {
            tools.push(ToolSuggestion {
                reason: "what the definition is missing on the dimensions to hold".to_string(),
                checklist: checklist(&export.tools[index], &held),
                ..ToolSuggestion::new(&target.tool, Status::Checklist, held)
            });
            continue;
        }
        session.scorer.progress.event(ProgressEvent::Note(format!(
            "rewriting `{}` ({} judge calls left)",
            target.tool,
            capped.remaining()
        )));
        let before = capped.used();
        let mut suggestion = rewrite_one(
            export,
            index,
            target,
            held,
            &scorer,
            &capped,
            session,
            located.as_ref().map(|(tree, l)| (*tree, l)),
        )
        .await?;
        suggestion.calls = capped.used() - before;
        tools.push(suggestion);
    }
    Ok(Suggestions {
        model_judged,
        max_calls: opts.max_calls,
        calls: capped.used(),
        tools,
    })
}

#[allow(clippy::too_many_arguments)]
async fn rewrite_one(
    export: &Export,
    index: usize,
    target: &Target,
    held: Vec<ToolDimension>,
    scorer: &Scorer,
    capped: &CappedJudge,
    session: &ScoringSession,
    located: Option<(&Path, &Locations)>,
) -> Result<ToolSuggestion, Error> {
    let current = &export.tools[index];
    let mut out = ToolSuggestion::new(&target.tool, Status::Withheld, held.clone());
    // A rewrite is worth asking for only if one pair can follow it.
    if capped.remaining() < 3 {
        out.reason = format!(
            "not asked: the cost cap ({} judge calls) leaves too few calls for a rewrite and \
             one scored pair",
            scorer_cap(capped)
        );
        return Ok(out);
    }
    let proposal = match ask_rewrite(export, index, target, scorer, capped, &mut out.tokens).await?
    {
        Ok(proposal) => proposal,
        Err(why) => {
            out.reason = why;
            return Ok(out);
        }
    };
    out.bytes_delta = Some(
        tdqs_core::digest::canonical_definition_bytes(&proposal).len() as i64
            - tdqs_core::digest::canonical_definition_bytes(current).len() as i64,
    );
    {
        use tdqs_core::cost::TokenCounter;
        let counter = crate::cost::Cl100k::new();
        let tokens = |v: &serde_json::Value| {
            counter.count(&serde_json::to_string(v).unwrap_or_default()) as i64
        };
        out.tokens_delta = Some(tokens(&proposal) - tokens(current));
        out.tokenizer = Some(counter.name());
    }
    out.placement = Some(placement(current, &proposal, &target.tool, located));
    out.proposal = Some(proposal.clone());
    if let Err(refusal) = check_proposal(current, &proposal) {
        out.reason = format!("refused: {}", refusal.describe());
        return Ok(out);
    }
    let reference = target.reference.clone().unwrap_or_else(|| current.clone());
    let reference_tool = prepared_with(export, index, &reference, session)?;
    let proposal_tool = prepared_with(export, index, &proposal, session)?;
    let max_pairs = if scorer.judge.deterministic() {
        1
    } else {
        MAX_PAIRS
    };
    let mut stats = CallStats::default();
    let mut verdict = None;
    while verdict.is_none() && out.pairs.len() < max_pairs {
        if capped.remaining() < 2 {
            break;
        }
        let scored = async {
            let r = scorer.score_tool(&reference_tool, &mut stats).await?;
            let p = scorer.score_tool(&proposal_tool, &mut stats).await?;
            Ok::<_, Error>((r, p))
        }
        .await;
        let (r, p) = match scored {
            Ok(pair) => pair,
            Err(_) if capped.refused_a_call() => break,
            Err(e) => return Err(e),
        };
        out.pairs.push(PairOutcome {
            reference: r.scores,
            proposal: p.scores,
        });
        verdict = decided(&out.pairs, &held, max_pairs);
    }
    out.tokens.add(&stats.tokens);
    let weights: &Weights = &scorer.weights;
    if !out.pairs.is_empty() {
        let predicted = weights.tdqs(&median_scores(&out.pairs, true));
        out.predicted_tdqs = Some(predicted);
        out.predicted_tier = Some(weights.tiers.tier(predicted));
        out.reference_tdqs = Some(weights.tdqs(&median_scores(&out.pairs, false)));
    }
    let n = out.pairs.len();
    let keys = |dims: &[ToolDimension]| {
        dims.iter()
            .map(|d| format!("`{}`", d.key()))
            .collect::<Vec<_>>()
            .join(", ")
    };
    match verdict {
        Some(true) => {
            out.status = Status::Offered;
            let holding = out.pairs.iter().filter(|p| p.proposal_holds(&held)).count();
            out.reason = format!(
                "scored at least as high as the reference on {} in {holding} of {n} pair(s)",
                keys(&held)
            );
        }
        Some(false) => {
            let mut lower: Vec<ToolDimension> =
                out.pairs.iter().flat_map(|p| p.lower_on(&held)).collect();
            lower.sort();
            lower.dedup();
            let failing = out
                .pairs
                .iter()
                .filter(|p| !p.proposal_holds(&held))
                .count();
            out.reason = format!(
                "withheld: the proposal scored lower than the reference on {} in {failing} of \
                 {n} pair(s)",
                keys(&lower)
            );
        }
        None => {
            out.reason = format!(
                "withheld: the cost cap ({} judge calls) stopped the scoring after {n} pair(s), \
                 before a decision",
                scorer_cap(capped)
            );
        }
    }
    Ok(out)
}

fn scorer_cap(capped: &CappedJudge) -> u64 {
    capped.used() + capped.remaining()
}

/// Asks for a revised definition: `Ok(Err(why))` when no usable answer came.
async fn ask_rewrite(
    export: &Export,
    index: usize,
    target: &Target,
    scorer: &Scorer,
    capped: &CappedJudge,
    tokens: &mut TokenUsage,
) -> Result<Result<Value, String>, Error> {
    let current = &export.tools[index];
    let names: Vec<String> = export
        .tools
        .iter()
        .map(|t| tdqs_core::digest::tool_name(t).to_string())
        .collect();
    let siblings: Vec<String> = names
        .iter()
        .enumerate()
        .filter(|(i, _)| *i != index)
        .map(|(_, n)| n.clone())
        .collect();
    let question = Question {
        kind: QuestionKind::Rewrite,
        system: rewrite_system(),
        user: rewrite_user(current, &siblings, &target.weak_points),
        subject: Subject::Tool {
            tool: current.clone(),
            siblings: Siblings::of(Arc::new(SideNames::new(names)), index),
            signals: tdqs_core::spec::signals::context_signals(current),
        },
        user_template: None,
    };
    let mut last = String::from("no attempt was made");
    for _ in 0..=scorer.retries {
        // Keep two calls for the first pair: a rewrite that cannot be scored is useless.
        if capped.remaining() < 3 {
            return Ok(Err(format!(
                "withheld: the cost cap ({} judge calls) was reached while asking for the \
                 rewrite ({last})",
                scorer_cap(capped)
            )));
        }
        match capped.ask(&question).await {
            Ok(reply) => {
                tokens.add(&reply.usage);
                match parse_rewrite_answer(&reply.text) {
                    Ok(proposal) => return Ok(Ok(proposal)),
                    Err(why) => last = why,
                }
            }
            // Redacted now: the reason is kept in the report.
            Err(failure) if failure.retryable => last = tdqs_core::redact::redact(&failure.message),
            Err(failure) => {
                return Err(Error::new(
                    Stage::Judge,
                    tdqs_core::redact::redact(&format!(
                        "asking for a rewrite of `{}` failed: {}",
                        target.tool, failure.message
                    )),
                )
                .with_advice("check the judge (credentials, model access, network)"))
            }
        }
    }
    Ok(Err(format!(
        "withheld: no usable rewrite after {} attempt(s): {last}",
        scorer.retries + 1
    )))
}

/// The prepared question of tool `index` with `definition` in its place (its siblings as
/// listed).
fn prepared_with(
    export: &Export,
    index: usize,
    definition: &Value,
    session: &ScoringSession,
) -> Result<crate::score::side::PreparedTool, Error> {
    let mut side = export.clone();
    side.tools[index] = definition.clone();
    let mut prepared = session.prepare(&side)?;
    Ok(prepared.tools.swap_remove(index))
}

/// A suggestion for the description's line when the description is the only change and its
/// literal was found whole on one line; else a diff of the definition.
fn placement(
    current: &Value,
    proposal: &Value,
    tool: &str,
    located: Option<(&Path, &Locations)>,
) -> Placement {
    let diff = || Placement::Diff {
        lines: definition_diff(current, proposal),
    };
    let only_description = {
        let (mut a, mut b) = (current.clone(), proposal.clone());
        for v in [&mut a, &mut b] {
            if let Some(o) = v.as_object_mut() {
                o.remove("description");
            }
        }
        a == b
    };
    let text = |v: &Value| {
        v.get("description")
            .and_then(Value::as_str)
            .map(String::from)
    };
    let (Some(old), Some(new)) = (text(current), text(proposal)) else {
        return diff();
    };
    let Some((root, locations)) = located else {
        return diff();
    };
    let Some(Place::Located {
        at,
        confidence: Confidence::High,
        matched: Matched::Description,
    }) = locations.tool(tool).map(|t| &t.place)
    else {
        return diff();
    };
    if !only_description {
        return diff();
    }
    let Some(original) = std::fs::read_to_string(root.join(&at.path))
        .ok()
        .and_then(|text| text.lines().nth(at.line as usize - 1).map(String::from))
    else {
        return diff();
    };
    match replaced_line(&original, &old, &new) {
        Some(replacement) => Placement::Line {
            path: at.path.clone(),
            line: at.line,
            original,
            replacement,
        },
        None => diff(),
    }
}

/// `tdqs-gate suggest`: rewrites `tools` of `export` (every tool when empty), each held to
/// the definition it replaces on all six dimensions.
pub async fn suggest_on_demand(
    export: &Export,
    tools: &[String],
    judge_opts: &crate::judge::build::JudgeOptions,
    opts: &SuggestOptions,
    progress: Arc<dyn crate::progress::Progress>,
) -> Result<Suggestions, Error> {
    if opts.max_calls == 0 {
        return Err(Error::usage("--max-calls must be at least 1")
            .with_advice("give the rewrites a budget of judge calls, e.g. --max-calls 40"));
    }
    let names: Vec<String> = export
        .tools
        .iter()
        .map(|t| tdqs_core::digest::tool_name(t).to_string())
        .collect();
    for tool in tools {
        if !names.contains(tool) {
            return Err(Error::usage(format!("the side lists no tool `{tool}`"))
                .with_advice(format!("name one of: {}", names.join(", "))));
        }
    }
    let targets: Vec<Target> = names
        .iter()
        .filter(|n| tools.is_empty() || tools.contains(n))
        .map(|n| Target {
            tool: n.clone(),
            reference: None,
            held: Vec::new(),
            weak_points: Vec::new(),
        })
        .collect();
    if targets.is_empty() {
        return Err(Error::new(
            Stage::Score,
            "the export lists no tools; there is nothing to rewrite",
        )
        .with_advice("check that the server registers its tools before answering tools/list"));
    }
    let pins = crate::spec::load_pins(judge_opts.pins.as_deref())?;
    let judge = crate::judge::build::build(judge_opts, &pins)?;
    let session = ScoringSession::open(
        judge,
        judge_opts,
        &pins,
        crate::score::session::Sharing::default(),
        progress,
        None,
    )
    .await?;
    suggest(export, &targets, &session, opts).await
}
