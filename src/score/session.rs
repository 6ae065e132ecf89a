//! One scoring session: the judge checked, the prompts loaded and verified, the scoring record
//! written down and the scorer built — the same way for the gate, `score` and `--calibrate`.

use std::sync::Arc;

use crate::judge::build::{self, JudgeOptions};
use crate::judge::static_judge::StaticJudge;
use crate::judge::{Judge, JudgeInfo};
use crate::progress::{NoProgress, Progress};
use crate::score::side::{PreparedSide, Scorer};
use tdqs_core::error::{Error, Stage};
use tdqs_core::export::Export;
use tdqs_core::report::{ScoredOnce, Scoring};
use tdqs_core::spec::pins::Pins;

use super::prompts::{self, PromptSet};
use super::questions;

/// How the answers of one run may be shared.
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct Sharing {
    /// Ask a question that is byte-identical on both sides of a pair once.
    pub identical_questions: bool,
    /// Later pairs re-ask only the tools whose question differs (the noise-aware rule).
    pub unchanged_tools: bool,
}

/// A judge ready to answer, with everything a run records about how it scored.
pub(crate) struct ScoringSession {
    pub scorer: Scorer,
    /// What the report says about the scoring (judge, pins, prompts, digest).
    pub scoring: Scoring,
    /// The judge's preflight warnings, then the prompts'.
    pub warnings: Vec<String>,
    prompts: PromptSet,
}

impl ScoringSession {
    /// Runs the judge's preflight, loads and verifies the prompts the judge needs, and builds
    /// the scorer. `preflight_context` prefixes a preflight failure (the gate says why a judge
    /// was needed at all).
    pub async fn open(
        judge: Arc<dyn Judge>,
        opts: &JudgeOptions,
        pins: &Pins,
        sharing: Sharing,
        progress: Arc<dyn Progress>,
        preflight_context: Option<&str>,
    ) -> Result<ScoringSession, Error> {
        let warnings = judge
            .preflight()
            .await
            .map_err(|e| match preflight_context {
                Some(context) => e.context(context),
                None => e,
            })?;
        ScoringSession::open_checked(judge, warnings, opts, pins, sharing, progress).await
    }

    /// [`Self::open`] for a judge whose preflight already ran and gave `warnings`.
    async fn open_checked(
        judge: Arc<dyn Judge>,
        mut warnings: Vec<String>,
        opts: &JudgeOptions,
        pins: &Pins,
        sharing: Sharing,
        progress: Arc<dyn Progress>,
    ) -> Result<ScoringSession, Error> {
        let prompts = prompts::load_prompts(opts, pins, judge.as_ref()).await?;
        warnings.extend(prompts.warnings.iter().cloned());
        let scoring = scoring_record(
            pins,
            judge.info(),
            &prompts,
            sharing.identical_questions,
            opts.concurrency,
        );
        let scorer = Scorer {
            judge,
            weights: pins.weights(),
            retries: pins.retries(),
            concurrency: opts.effective_concurrency(),
            share_identical: sharing.identical_questions,
            progress,
            // A deterministic judge answers each question once for the whole run.
            memo: Default::default(),
            reuse_unchanged: sharing.unchanged_tools,
            // The gate attaches its persistent cache once it knows the run's trees.
            answer_cache: None,
        };
        Ok(ScoringSession {
            scorer,
            scoring,
            warnings,
            prompts,
        })
    }

    /// The questions of one side, with this session's prompts.
    pub fn prepare(&self, export: &Export) -> Result<PreparedSide, Error> {
        questions::prepare_side(export, self.prompts.prompts.as_ref())
    }
}

/// The judge of a run, built once and opened (preflight, prompts) at most once, when the first
/// server whose definitions changed needs it; every later server shares the session. Its
/// preflight may run earlier, before any export ([`Self::check_first`]).
pub(crate) struct JudgeSlot {
    judge: Option<Result<Arc<dyn Judge>, Error>>,
    /// The preflight's result when [`Self::check_first`] ran it.
    checked: Option<Result<Vec<String>, Error>>,
    session: Option<Result<ScoringSession, Error>>,
}

/// What a judge that fails before any export is told to do instead: the offline path.
pub(crate) const OFFLINE_ADVICE: &str =
    "to gate without a model (offline, deterministic rules), pass `--judge static`";

impl JudgeSlot {
    pub(crate) fn new(judge: Result<Arc<dyn Judge>, Error>) -> JudgeSlot {
        JudgeSlot {
            judge: Some(judge),
            checked: None,
            session: None,
        }
    }

    /// Checks the judge before any export (building it and its preflight: the CLI's version and
    /// login, or the API's reachability — seconds, where setup and export take minutes).
    /// Returns the failure, with the offline path added to its advice; the slot keeps it too,
    /// so a caller that holds it (CI, where a pull request from a fork has no secrets and
    /// unchanged definitions still pass) meets it again only if a judge is needed.
    pub(crate) async fn check_first(&mut self) -> Result<(), Error> {
        let failure = match &self.judge {
            Some(Err(e)) => Some(e.clone()),
            Some(Ok(judge)) => {
                let checked = judge.preflight().await;
                let failure = checked.as_ref().err().cloned();
                self.checked = Some(checked);
                failure
            }
            None => None,
        };
        match failure {
            None => Ok(()),
            Some(e) => Err(with_offline_advice(
                e.context("the judge was checked before exporting and cannot run"),
            )),
        }
    }

    pub(crate) async fn session(
        &mut self,
        opts: &JudgeOptions,
        pins: &Pins,
        sharing: Sharing,
        progress: &Arc<dyn Progress>,
    ) -> Result<&mut ScoringSession, Error> {
        let cannot_run = "the definitions changed and need a judge, but the judge cannot run";
        if self.session.is_none() {
            let opened = match (self.judge.take(), self.checked.take()) {
                (Some(Ok(_)), Some(Err(e))) => Err(e.context(cannot_run)),
                (Some(Ok(judge)), Some(Ok(warnings))) => {
                    ScoringSession::open_checked(
                        judge,
                        warnings,
                        opts,
                        pins,
                        sharing,
                        Arc::clone(progress),
                    )
                    .await
                }
                (Some(Ok(judge)), None) => {
                    ScoringSession::open(
                        judge,
                        opts,
                        pins,
                        sharing,
                        Arc::clone(progress),
                        Some(cannot_run),
                    )
                    .await
                }
                (Some(Err(e)), _) => Err(e.context(cannot_run)),
                (None, _) => Err(Error::internal("the judge was taken twice")),
            };
            self.session = Some(opened);
        }
        match self.session.as_mut() {
            Some(Ok(session)) => Ok(session),
            Some(Err(e)) => Err(e.clone()),
            None => Err(Error::internal("no scoring session")),
        }
    }
}

/// `e` with [`OFFLINE_ADVICE`] after its own advice.
fn with_offline_advice(mut e: Error) -> Error {
    e.advice = Some(match e.advice.take() {
        Some(advice) => format!("{advice}; {OFFLINE_ADVICE}"),
        None => OFFLINE_ADVICE.to_string(),
    });
    e
}

/// What the report says about how a run scored.
fn scoring_record(
    pins: &Pins,
    info: JudgeInfo,
    prompts: &PromptSet,
    share_identical_questions: bool,
    concurrency: usize,
) -> Scoring {
    Scoring {
        scoring_digest: build::scoring_digest(pins, &info),
        judge: info,
        version_digest: pins.digest().to_string(),
        pins_embedded: pins.is_embedded(),
        prompts: Some(prompts.origin.clone()),
        share_identical_questions,
        concurrency,
    }
}

/// Scores one export once with the configured judge.
pub async fn score_once(
    export: &Export,
    opts: &JudgeOptions,
    progress: Arc<dyn Progress>,
) -> Result<ScoredOnce, Error> {
    let pins = crate::spec::load_pins(opts.pins.as_deref())?;
    let judge = build::build(opts, &pins)?;
    let mut warnings = Vec::new();
    if !pins.is_embedded() {
        warnings.push("scored with custom pins: not the calibrated configuration".to_string());
    }
    if export.tools.is_empty() {
        return Err(Error::new(
            Stage::Score,
            "the export lists no tools; there is nothing to score",
        )
        .with_advice("check that the server registers its tools before answering tools/list"));
    }
    let session =
        ScoringSession::open(judge, opts, &pins, Sharing::default(), progress, None).await?;
    warnings.extend(session.warnings.iter().cloned());
    let prepared = session.prepare(export)?;
    let (scoring, scorer) = (session.scoring, session.scorer);
    let (side, calls) = scorer.score_side(&prepared).await?;
    Ok(ScoredOnce {
        scoring,
        side,
        calls,
        warnings,
    })
}

/// The scorer `--check` recomputes a static judge's answers with: the static rules, one question
/// at a time, no progress shown.
pub(crate) fn static_scorer(pins: &Pins, share_identical: bool) -> Scorer {
    Scorer {
        judge: Arc::new(StaticJudge::new()),
        weights: pins.weights(),
        retries: pins.retries(),
        concurrency: 1,
        share_identical,
        progress: Arc::new(NoProgress),
        memo: Default::default(),
        // A rule judge answers the same question the same way; nothing to reuse by rule.
        reuse_unchanged: false,
        answer_cache: None,
    }
}
