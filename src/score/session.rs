//! One scoring session: the judge checked, the prompts loaded and verified, the scoring record
//! written down and the scorer built — the same way for the gate, `score` and `--calibrate`.

use std::sync::Arc;

use crate::judge::Judge;
use crate::score::side::{PreparedSide, Progress, Scorer};
use tdqs_core::error::Error;
use tdqs_core::export::Export;
use tdqs_core::report::Scoring;
use tdqs_core::spec::pins::Pins;

use super::prepare::{self, PromptSet};
use super::JudgeOptions;

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
        let mut warnings = judge
            .preflight()
            .await
            .map_err(|e| match preflight_context {
                Some(context) => e.context(context),
                None => e,
            })?;
        let prompts = prepare::load_prompts(opts, pins, judge.as_ref()).await?;
        warnings.extend(prompts.warnings.iter().cloned());
        let scoring = super::scoring_record(
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
        prepare::prepare_side(export, self.prompts.prompts.as_ref())
    }
}
