//! The selection eval (`tdqs-gate eval`, and the gate's opt-in selection check): a committed
//! suite of requests, each sent with the side's tool definitions exactly as exported to a
//! selector — a model through one of the judges (`live_model`), or the deterministic lexical
//! ranking (`synthetic`) — and the figures of where the requests went.
//!
//! The pure parts (cases, answers, metrics, scores, the exact test) are `tdqs_core::eval`. This
//! module reads the case file ([`suite`]), checks generated arguments against the schemas
//! ([`arguments`]), keeps the answer cache ([`cache`]) and runs a suite ([`run`]). It sits on top
//! of the stages, like `gate`: it exports through the gate's sides and asks through the judges.

pub mod arguments;
pub mod cache;
pub mod config;
pub mod init;
pub mod suite;

use std::path::PathBuf;
use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::Value;

use crate::judge::build::{JudgeMode, JudgeOptions};
use crate::judge::{Judge, Question, QuestionKind, Subject};
use crate::lint::LintReport;
use tdqs_core::error::{Error, Stage};
use tdqs_core::eval::answer::{parse_selection_answer, SelectionAnswer};
use tdqs_core::eval::case::{Choice, Suite};
use tdqs_core::eval::metrics::{compute, CaseResult};
use tdqs_core::eval::prompt::{cache_key, selection_system, selection_user, tool_set_digest};
use tdqs_core::eval::result::EvalRun;
use tdqs_core::eval::scores::{composite, distinguishability, health};
use tdqs_core::eval::synthetic::{SyntheticSelector, SYNTHETIC_MODEL};
use tdqs_core::eval::Mode;
use tdqs_core::export::Export;
use tdqs_core::judge::TokenUsage;

use arguments::ArgumentCheck;

/// Attempts per question when the answer is not the required JSON.
const ATTEMPTS: usize = 3;

/// Everything that configures one run.
#[derive(Debug, Clone)]
pub struct EvalOptions {
    pub mode: Mode,
    /// The judge that selects in `live_model` mode (required there, ignored in `synthetic`).
    pub judge: Option<JudgeOptions>,
    /// Where answers are cached (`.tdqs/eval-cache` at the repository root by default).
    pub cache_dir: PathBuf,
    /// The repository `cache_dir` was found in (the default folder or `[eval] cache`): no
    /// symbolic link below it is followed. `None` for a folder given on the command line.
    pub cache_tree: Option<PathBuf>,
    /// The gate's cached answers: when set, answers are read only from this map (the base
    /// revision's committed cache, by file name) and never from `cache_dir`, which in a pull
    /// request is the head's — a head could commit made-up answers there. New answers are
    /// still written to `cache_dir`.
    pub trusted_answers: Option<Arc<std::collections::BTreeMap<String, Vec<u8>>>>,
    /// Replay the cache only: no key, no network; a missing answer is an error.
    pub offline: bool,
    /// Most tokens (input + output) the calls of this run may spend; once spent, the run stops.
    pub max_cost_tokens: Option<u64>,
    /// Wait this long before each model call after the first.
    pub pace: Option<Duration>,
    /// A case naming a tool the side does not list is a miss rather than an error (the gate:
    /// a tool removed on the head is a regression to measure, not a broken suite).
    pub allow_unknown_tools: bool,
}

/// Who selects in live mode, as recorded in every cache key.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct LiveIdentity {
    pub selector: String,
    pub model: String,
}

/// The judge and model a live run asks, resolved without building the judge (so `--offline`
/// needs no key). `--judge static` cannot select: that is an error, never a fallback.
pub fn live_identity(judge: &JudgeOptions) -> Result<LiveIdentity, Error> {
    if judge.mode == JudgeMode::Static {
        return Err(Error::usage(
            "--mode live-model needs a model: the static judge scores definitions and cannot select tools",
        )
        .with_advice(
            "choose --judge claude-code, anthropic or openai, or run --mode synthetic (no model, an estimate of ambiguity)",
        ));
    }
    if judge.batch {
        return Err(Error::usage("--batch does not apply to eval")
            .with_advice("drop --batch: selection questions are asked one at a time"));
    }
    let pins = crate::spec::load_pins(judge.pins.as_deref())?;
    let model = match (judge.mode, &judge.model) {
        (JudgeMode::Openai, Some(m)) => m.clone(),
        (_, None) => pins.model().to_string(),
        (_, Some(_)) => {
            return Err(Error::usage(format!(
                "--model does not apply to --judge {}: it asks the pinned model",
                judge.mode.as_str()
            ))
            .with_advice("drop --model, or use --pins with another model"))
        }
    };
    Ok(LiveIdentity {
        selector: judge.mode.as_str().to_string(),
        model,
    })
}

enum Selector {
    Synthetic(SyntheticSelector),
    Live {
        identity: LiveIdentity,
        /// `None` offline: only the cache answers.
        judge: Option<Arc<dyn Judge>>,
    },
}

/// Running totals of the model calls.
#[derive(Default)]
struct Spend {
    calls: usize,
    cached: usize,
    usage: TokenUsage,
    latency_ms: u64,
}

/// Builds the live judge and runs its preflight: a missing key, CLI or address stops here.
pub(crate) async fn live_judge(opts: &JudgeOptions) -> Result<Arc<dyn Judge>, Error> {
    let pins = crate::spec::load_pins(opts.pins.as_deref())?;
    let judge = crate::judge::build::build(opts, &pins)?;
    judge.preflight().await?;
    Ok(judge)
}

/// Asks one selection question, through the cache.
#[expect(clippy::too_many_arguments)]
async fn ask_live(
    identity: &LiveIdentity,
    judge: Option<&Arc<dyn Judge>>,
    opts: &EvalOptions,
    tools: &[Value],
    digest: &str,
    case_id: &str,
    request: &str,
    spend: &mut Spend,
) -> Result<SelectionAnswer, Error> {
    let system = selection_system();
    let user = selection_user(tools, request);
    let who = format!("{}\n{}", identity.selector, identity.model);
    let key = cache_key(&who, &system, &user, digest);
    let cached = match &opts.trusted_answers {
        Some(answers) => match answers.get(&format!("{key}.json")) {
            Some(bytes) => Some(cache::parse(
                &opts.cache_dir.join(format!("{key}.json")),
                &key,
                bytes,
            )?),
            None => None,
        },
        None => cache::get(&opts.cache_dir, opts.cache_tree.as_deref(), &key)?,
    };
    if let Some(entry) = cached {
        spend.cached += 1;
        return parse_selection_answer(&entry.text).map_err(|why| {
            Error::new(
                Stage::Eval,
                format!("the cached answer for case `{case_id}` is not a valid selection: {why}"),
            )
            .with_advice(format!(
                "delete {}/{key}.json and run again without --offline",
                opts.cache_dir.display()
            ))
        });
    }
    let Some(judge) = judge else {
        return Err(Error::new(
            Stage::Eval,
            format!(
                "--offline: no cached answer for case `{case_id}` from {} {} (key {key}) in {}{}",
                identity.selector,
                identity.model,
                opts.cache_dir.display(),
                if opts.trusted_answers.is_some() {
                    " as committed at the base revision (the gate reads no other cache)"
                } else {
                    ""
                }
            ),
        )
        .with_advice(
            "run once without --offline with the same judge, model, cases and tool definitions, \
             and commit the cache folder; any change to one of them asks again",
        ));
    };
    if let Some(budget) = opts.max_cost_tokens {
        let spent = spend.usage.input_tokens + spend.usage.output_tokens;
        if spent >= budget {
            return Err(Error::new(
                Stage::Eval,
                format!(
                    "--max-cost {budget}: {spent} tokens spent on {} calls before case `{case_id}`; the run stops here",
                    spend.calls
                ),
            )
            .with_advice(
                "the answers so far are cached: raise --max-cost, or run again to continue from the cache",
            ));
        }
    }
    if spend.calls > 0 {
        if let Some(pace) = opts.pace {
            tokio::time::sleep(pace).await;
        }
    }
    let question = Question {
        kind: QuestionKind::Selection,
        system: system.clone(),
        user: user.clone(),
        subject: Subject::Selection {
            request: request.to_string(),
            tools: tools.to_vec(),
        },
        user_template: None,
    };
    let mut last = String::new();
    for _ in 0..ATTEMPTS {
        let started = Instant::now();
        let reply = judge.ask(&question).await;
        let elapsed = started.elapsed().as_millis() as u64;
        spend.calls += 1;
        spend.latency_ms += elapsed;
        match reply {
            Ok(reply) => {
                spend.usage.add(&reply.usage);
                match parse_selection_answer(&reply.text) {
                    Ok(answer) => {
                        cache::put(
                            &opts.cache_dir,
                            opts.cache_tree.as_deref(),
                            &cache::Entry {
                                key: key.clone(),
                                selector: identity.selector.clone(),
                                model: identity.model.clone(),
                                case_id: case_id.to_string(),
                                tool_set_digest: digest.to_string(),
                                text: reply.text,
                                usage: reply.usage,
                                latency_ms: elapsed,
                            },
                        )?;
                        return Ok(answer);
                    }
                    Err(why) => last = format!("the answer is not the required JSON: {why}"),
                }
            }
            Err(failure) if failure.retryable => last = failure.message,
            Err(failure) => {
                let mut e = Error::new(
                    Stage::Judge,
                    format!(
                        "the selection question for case `{case_id}` failed: {}",
                        failure.message
                    ),
                );
                if let Some(detail) = failure.detail {
                    e = e.with_advice(detail.trim_start_matches("help: ").to_string());
                }
                return Err(e);
            }
        }
    }
    Err(Error::new(
        Stage::Judge,
        format!("no valid selection for case `{case_id}` after {ATTEMPTS} attempts: {last}"),
    )
    .with_advice("check the judge's model and settings; nothing was scored"))
}

fn tool_names(tools: &[Value]) -> Vec<String> {
    tools
        .iter()
        .filter_map(|t| t.get("name").and_then(Value::as_str))
        .map(str::to_string)
        .collect()
}

/// The ToolChoice-style composite's parts from the lint report and the figures (docs/eval.md).
fn composite_parts(lint: &LintReport, m: &tdqs_core::eval::metrics::Metrics) -> [Option<f64>; 6] {
    use crate::lint::catalogue::Code;
    let pct = |r: &tdqs_core::eval::metrics::Ratio| r.share().map(|s| s * 100.0);
    let cards = &lint.scorecards;
    let mean = |f: &dyn Fn(&crate::lint::scorecard::Scorecard) -> f64| {
        (!cards.is_empty()).then(|| cards.iter().map(f).sum::<f64>() / cards.len() as f64)
    };
    let pair_findings = lint
        .findings
        .iter()
        .filter(|f| matches!(f.code, Code::N001 | Code::D005 | Code::D006))
        .count();
    [
        pct(&m.all_cases),
        Some(distinguishability(pair_findings, &m.selection)),
        mean(&|c| {
            f64::from(c.purpose + c.when_to_use + c.return_value + c.examples) * 100.0 / 65.0
        }),
        mean(&|c| f64::from(c.arguments) * 4.0),
        pct(&m.argument_validity),
        mean(&|c| f64::from(c.constraints) * 10.0),
    ]
}

/// Runs `suite` against `export`'s tools. Every error (a misconfigured judge, an offline miss,
/// a spent budget, a case naming an unknown tool) stops the run: nothing falls back.
pub async fn run(
    export: &Export,
    suite: &Suite,
    opts: &EvalOptions,
    lint: &LintReport,
) -> Result<EvalRun, Error> {
    let tools = &export.tools;
    let names = tool_names(tools);
    let unknown = suite.unknown_tools(&names);
    if !unknown.is_empty() && !opts.allow_unknown_tools {
        return Err(Error::new(
            Stage::Eval,
            format!(
                "the cases name tools the server does not list: {}",
                unknown.join(", ")
            ),
        )
        .with_advice(format!(
            "the server lists: {}; fix the case file",
            names.join(", ")
        )));
    }
    let digest = tool_set_digest(tools);
    let selector = match opts.mode {
        Mode::Synthetic => Selector::Synthetic(SyntheticSelector::new(tools)),
        Mode::LiveModel => {
            let Some(judge_opts) = &opts.judge else {
                return Err(Error::usage("--mode live-model needs a judge")
                    .with_advice("give --judge and its settings, or run --mode synthetic"));
            };
            let identity = live_identity(judge_opts)?;
            let judge = if opts.offline {
                None
            } else {
                Some(live_judge(judge_opts).await?)
            };
            Selector::Live { identity, judge }
        }
    };
    let mut spend = Spend::default();
    let mut results = Vec::with_capacity(suite.cases.len());
    for case in &suite.cases {
        let answer = match &selector {
            Selector::Synthetic(s) => s.select(&case.request),
            Selector::Live { identity, judge } => {
                ask_live(
                    identity,
                    judge.as_ref(),
                    opts,
                    tools,
                    &digest,
                    &case.id,
                    &case.request,
                    &mut spend,
                )
                .await?
            }
        };
        let (arguments_valid, argument_errors) = match (&selector, &answer.tool) {
            (Selector::Live { .. }, Choice::Tool(name)) => {
                match tools
                    .iter()
                    .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
                {
                    Some(tool) => match arguments::check(tool, &answer.arguments) {
                        ArgumentCheck::Valid => (Some(true), Vec::new()),
                        ArgumentCheck::Invalid(m) => (Some(false), m),
                        ArgumentCheck::Unchecked(m) => (None, vec![m]),
                    },
                    None => (None, Vec::new()),
                }
            }
            _ => (None, Vec::new()),
        };
        results.push(CaseResult {
            id: case.id.clone(),
            kind: case.kind,
            provenance: case.provenance,
            expected: case.expect.clone(),
            exploratory: case.exploratory,
            correct: answer.tool == case.expect,
            selected: answer.tool,
            arguments_valid,
            argument_errors,
            confidence: answer.confidence,
            reason: answer.reason,
        });
    }
    let metrics = compute(&results, &names);
    let (errors, warnings, _) = lint.counts();
    let health = health(
        errors,
        warnings,
        metrics.selection.hit,
        metrics.selection.of,
    );
    let composite = composite(composite_parts(lint, &metrics));
    let (selector_name, model) = match &selector {
        Selector::Synthetic(_) => ("synthetic".to_string(), SYNTHETIC_MODEL.to_string()),
        Selector::Live { identity, .. } => (identity.selector.clone(), identity.model.clone()),
    };
    Ok(EvalRun {
        mode: opts.mode,
        mode_label: opts.mode.label().to_string(),
        selector: selector_name,
        model,
        server_name: export.server_name.clone(),
        server_version: export.server_version.clone(),
        tool_count: tools.len(),
        tool_set_digest: digest,
        suite_digest: suite.digest(),
        cases: results,
        metrics,
        calls: spend.calls,
        cached: spend.cached,
        usage: spend.usage,
        latency_ms: spend.latency_ms,
        health,
        composite,
    })
}
