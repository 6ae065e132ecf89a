//! `--check REPORT`: re-validates a saved report against the current exports, with no model call.
//!
//! Checked: the pins digest; every export's internal hashes and the current exports' hashes;
//! every TDQS, tier, smell and rollup recomputed from the recorded dimension scores; the number of
//! pairs against the confirmation rule; what fell on the first pair (`causes`, which the summary
//! shows) against that pair; the decision and medians against the recorded means. The
//! verdict of a report that passes every check is its own (PASS 0, BLOCK 1); any difference is
//! INVALID and names what differs.

use std::path::Path;
use std::sync::Arc;

use super::decision::{step, Step};
use crate::judge::static_judge::StaticJudge;
use crate::judge::Judge;
use crate::progress::{Progress, ProgressEvent};
use crate::score::{questions, session};
use tdqs_core::arith::Weights;
use tdqs_core::decide::{DecisionRule, RuleInUse};
use tdqs_core::error::{Error, Stage};
use tdqs_core::exit::Verdict;
use tdqs_core::report::monorepo::{self, AnyReport, MonorepoReport};
use tdqs_core::report::Report;
use tdqs_core::score::SideScore;
use tdqs_core::spec::pins::Pins;

use super::{GateOptions, JudgeOptions, Outcome, ServerOptions, SideSource};

mod growth;
mod several_servers;
use several_servers::check_monorepo;

/// What `check` exports the current sides with.
#[derive(Debug, Clone)]
pub struct CheckOptions {
    pub repo: Option<std::path::PathBuf>,
    /// The base to export now; `None`: the one the report records.
    pub base: Option<SideSource>,
    /// The head to export now; `None`: the one the report records.
    pub head: Option<SideSource>,
    pub server: ServerOptions,
    /// The pins the report is checked against and the credential names kept from the servers;
    /// no judge is asked.
    pub judge: JudgeOptions,
    /// The rule flags the run that wrote the report was given: with the pins and the base's
    /// `[decision]`, they fix the rule the report must have been decided by.
    pub decision_rule: Option<tdqs_core::decide::DecisionRule>,
    pub tool_drop: Option<tdqs_core::arith::Tenths>,
    pub max_listing_growth: Option<u32>,
    /// The revision holding the settings when the report's base is an export file.
    pub settings_rev: Option<String>,
}

impl CheckOptions {
    /// The options of exporting `base` and `head` as the gate does. `check` writes no report
    /// and decides nothing anew, so the gate's report and decision settings stay at their
    /// defaults.
    fn exporting(&self, base: SideSource, head: SideSource) -> GateOptions {
        GateOptions {
            repo: self.repo.clone(),
            base,
            head,
            server: self.server.clone(),
            judge: self.judge.clone(),
            report_dir: std::path::PathBuf::new(),
            share_identical: true,
            decision_rule: self.decision_rule,
            tool_drop: self.tool_drop,
            max_listing_growth: self.max_listing_growth,
            full_report: false,
            eval: None,
            suggest: None,
            settings_rev: self.settings_rev.clone(),
            settings_file: None,
            // Checking recomputes from the saved report; nothing is asked.
            answer_cache: crate::score::answer_cache::AnswerCacheChoice::Off,
        }
    }
}

fn differs(what: impl Into<String>) -> Error {
    Error::new(Stage::Check, what.into()).with_advice(
        "the saved report no longer matches; run the gate again to produce a fresh report",
    )
}

fn check_side(label: &str, side: &SideScore, weights: &Weights) -> Result<(), Error> {
    for (name, tool) in &side.tools {
        if &tool.name != name {
            return Err(differs(format!(
                "{label}: tool entry `{name}` is named `{}`",
                tool.name
            )));
        }
        let tdqs = weights.tdqs(&tool.scores);
        if tdqs != tool.tdqs {
            return Err(differs(format!(
                "{label}: tool `{name}` records TDQS {} but its scores give {tdqs}",
                tool.tdqs
            )));
        }
        let tier = weights.tiers.tier(tdqs);
        if tier != tool.tier {
            return Err(differs(format!(
                "{label}: tool `{name}` records tier {} but TDQS {tdqs} is tier {tier}",
                tool.tier
            )));
        }
        let smells = crate::score::side::smells(&tool.scores);
        if smells != tool.smells {
            return Err(differs(format!(
                "{label}: tool `{name}` records other smells than its scores give"
            )));
        }
        if tool.scores.len() != 6 || tool.scores.values().any(|s| !(1..=5).contains(s)) {
            return Err(differs(format!(
                "{label}: tool `{name}` does not have six scores from 1 to 5"
            )));
        }
    }
    let coherence_sum: i64 = side.coherence.scores.values().map(|s| i64::from(*s)).sum();
    let coherence = tdqs_core::arith::round1(coherence_sum, 4);
    if coherence != side.coherence.coherence_score || side.coherence.scores.len() != 4 {
        return Err(differs(format!(
            "{label}: the coherence score {} does not follow from its four dimensions",
            side.coherence.coherence_score
        )));
    }
    if let Some(o) = &side.omitted {
        if o.count == 0
            || side.tools.contains_key(&o.min_tool)
            || !(10..=50).contains(&o.min_tdqs.0)
            || o.tdqs_tenths_sum < o.min_tdqs.0 * o.count as i64
            || o.tdqs_tenths_sum > 50 * o.count as i64
            || o.judged > o.count
        {
            return Err(differs(format!(
                "{label}: the summary of its left-out tools is not a possible one"
            )));
        }
    }
    let rollups = crate::score::side::rollups_with(
        &side.tools,
        side.omitted.as_ref(),
        &side.coherence,
        weights,
    );
    if rollups != side.rollups {
        return Err(differs(format!(
            "{label}: the rollups do not recompute from the tool scores (recorded mean {}, \
             recomputed {})",
            side.rollups
                .mean_tdqs
                .map(|t| t.to_string())
                .unwrap_or_default(),
            rollups.mean_tdqs.map(|t| t.to_string()).unwrap_or_default()
        )));
    }
    Ok(())
}

fn same_reason(report: &Report, reason: &str) -> Result<(), Error> {
    if report.reason != reason {
        return Err(differs(format!(
            "the recorded reason does not follow from the report; it should read: {reason}"
        )));
    }
    Ok(())
}

/// A report is checked only by the tdqs-gate that wrote it: its schema version and generator.
fn same_writer(schema_version: u32, generator: &tdqs_core::report::Generator) -> Result<(), Error> {
    if schema_version != tdqs_core::report::REPORT_SCHEMA_VERSION {
        return Err(differs(format!(
            "the report has schema version {schema_version} but this tdqs-gate writes {}",
            tdqs_core::report::REPORT_SCHEMA_VERSION
        )));
    }
    let this = tdqs_core::report::Generator::default();
    if *generator != this {
        return Err(differs(format!(
            "the report says it was written by {} {} but this is {} {}",
            generator.name, generator.version, this.name, this.version
        ))
        .with_advice(format!(
            "check a report with the tdqs-gate version that wrote it, or run {} {} again",
            this.name, this.version
        )));
    }
    Ok(())
}

/// The labels a report carries about what made it: this binary, the pins, the judge.
fn check_labels(report: &Report, pins: &Pins) -> Result<(), Error> {
    same_writer(report.schema_version, &report.generator)?;
    if &report.versions != pins.raw() {
        return Err(differs(
            "the report's `versions` are not the pins it names by digest",
        ));
    }
    let confirmation = pins
        .raw()
        .get("confirmation")
        .cloned()
        .unwrap_or(serde_json::Value::Null);
    if report.confirmation != confirmation {
        return Err(differs(
            "the report's `confirmation` is not the confirmation rule of its pins",
        ));
    }
    let scored = !report.pairs.is_empty() || report.calls.attempts > 0;
    if report.scored != scored {
        return Err(differs(format!(
            "the report says scored = {} but it has {} pairs and {} judge attempts",
            report.scored,
            report.pairs.len(),
            report.calls.attempts
        )));
    }
    let Some(scoring) = &report.scoring else {
        return Ok(());
    };
    if scoring.version_digest != pins.digest() || scoring.pins_embedded != pins.is_embedded() {
        return Err(differs(
            "the report's `scoring` names other pins than the report's",
        ));
    }
    let judge = &scoring.judge;
    if scoring.scoring_digest != crate::judge::build::scoring_digest(pins, judge) {
        return Err(differs(
            "the report's scoring digest does not follow from its pins and judge labels",
        ));
    }
    let fixed_model = |mode: &str| -> Result<(), Error> {
        if judge.model != pins.model() || !judge.model_judged {
            return Err(differs(format!(
                "the report says the {mode} judge answered as model `{}` (model-judged: {}), \
                 but that judge always asks the pinned model `{}`",
                judge.model,
                judge.model_judged,
                pins.model()
            )));
        }
        Ok(())
    };
    match judge.mode.as_str() {
        "static" => {
            if judge != &StaticJudge::new().info() {
                return Err(differs(
                    "the report's static-judge labels are not those of this tdqs-gate's rules",
                ));
            }
        }
        "claude-code" | "anthropic" => fixed_model(&judge.mode)?,
        "openai" => {
            if !judge.model_judged {
                return Err(differs(
                    "the report says an OpenAI-compatible judge answered without a model",
                ));
            }
        }
        other => {
            return Err(differs(format!(
                "the report names a judge `{other}` that this tdqs-gate does not have"
            )))
        }
    }
    Ok(())
}

/// A report scored by the rule judge is scored again here (it costs nothing and the rules are
/// deterministic): every pair must come out exactly as recorded, scores, justifications and
/// counters included.
pub(crate) async fn rescore_static(report: &Report, pins: &Pins) -> Result<(), Error> {
    let (Some(base), Some(head)) = (&report.base, &report.head) else {
        return Err(differs("the report has no base or head export"));
    };
    rescore_static_on(report, pins, base, head, None).await
}

/// [`rescore_static`] on given exports; with `omitted`, the fresh answers are summarised the way
/// a summarised report leaves those tools out before they are compared.
async fn rescore_static_on(
    report: &Report,
    pins: &Pins,
    base: &tdqs_core::export::Export,
    head: &tdqs_core::export::Export,
    omitted: Option<&std::collections::BTreeSet<String>>,
) -> Result<(), Error> {
    let Some(scoring) = &report.scoring else {
        return Ok(());
    };
    if scoring.judge.mode != "static" || report.pairs.is_empty() {
        return Ok(());
    }
    let base = questions::prepare_side(base, None)?;
    let head = questions::prepare_side(head, None)?;
    let scorer = session::static_scorer(pins, scoring.share_identical_questions);
    for (i, recorded) in report.pairs.iter().enumerate() {
        let (mut b, mut h, calls) = scorer.score_pair(&base, &head).await?;
        if let Some(names) = omitted {
            b.omitted = tdqs_core::report::summary::summarise_side(&mut b, names);
            h.omitted = tdqs_core::report::summary::summarise_side(&mut h, names);
        }
        for (label, side, again) in [("base", &recorded.base, &b), ("head", &recorded.head, &h)] {
            if side != again {
                let tool = again
                    .tools
                    .iter()
                    .find(|(name, t)| side.tools.get(*name) != Some(*t))
                    .map(|(name, _)| format!(": tool `{name}` differs"))
                    .unwrap_or_else(|| ": the coherence result or rollups differ".to_string());
                return Err(differs(format!(
                    "pair {} {label} is not what the static judge answers for this export{tool}",
                    i + 1
                ))
                .with_advice(
                    "the static judge is deterministic, so its answers are recomputed; this \
                     report was edited, or written by other rules; run the gate again",
                ));
            }
        }
        if recorded.calls != calls {
            return Err(differs(format!(
                "pair {} records other call counters than the static judge makes",
                i + 1
            )));
        }
    }
    Ok(())
}

/// Checks everything that needs only the report and the pins.
///
/// The checks run in a fixed order (recorded fields, exports, pairs, the account of what fell,
/// then the decision), so the first mismatch named is always the same one.
pub(crate) fn check_report_contents(report: &Report, pins: &Pins) -> Result<(), Error> {
    check_recorded_outcome(report, pins)?;
    let (base, head) = verified_exports(report)?;
    let omitted = report.omitted.as_ref().map_or(0, |o| o.count as usize);
    check_pairs_against_exports(report, pins, base, head, omitted)?;
    // The account of what fell is rendered into the summary: it must follow from the first pair.
    // Source lines come from the head's tree, which the report does not carry: not compared.
    if tdqs_core::report::causes::of_first_pair_with_changes(
        &report.pairs,
        report.base.as_ref(),
        report.head.as_ref(),
    ) != report.causes.as_ref().map(|c| c.without_locations())
    {
        return Err(differs(
            "the report's account of what fell (`causes`) does not follow from its first pair",
        ));
    }
    // The decision against the rule.
    if base.set_hash == head.set_hash {
        let (verdict, reason) = growth::with_growth_rule(
            report,
            None,
            Verdict::Pass,
            super::unchanged_reason(&base.set_hash),
        )?;
        if !report.pairs.is_empty() || report.decision != verdict {
            return Err(differs(format!(
                "the definitions are unchanged, so the report must {verdict} with no pair scored"
            )));
        }
        return same_reason(report, &reason);
    }
    if base.tools.is_empty() && omitted == 0 {
        if !report.pairs.is_empty() || report.decision != Verdict::Pass {
            return Err(differs("an empty base must PASS with no pair scored"));
        }
        return same_reason(report, super::BASE_EMPTY_REASON);
    }
    check_scored_decision(report, pins)
}

/// The fields that say what the run was and how it ended: the pins it was scored under, the
/// labels, an INVALID run (which decided nothing) and the exit code of the decision.
fn check_recorded_outcome(report: &Report, pins: &Pins) -> Result<(), Error> {
    if report.version_digest != pins.digest() {
        return Err(differs(format!(
            "the report was scored under pins {} but the current pins are {}",
            report.version_digest,
            pins.digest()
        ))
        .with_advice(
            "check with the same --pins the report was made with, or run the gate again",
        ));
    }
    check_labels(report, pins)?;
    if report.decision == Verdict::Invalid {
        return Err(Error::new(
            Stage::Check,
            format!("the saved report is itself INVALID: {}", report.reason),
        )
        .with_advice("an INVALID run decided nothing; run the gate again"));
    }
    if report.exit_code != report.decision.code() {
        return Err(differs(format!(
            "the report records exit code {} for decision {}",
            report.exit_code, report.decision
        )));
    }
    Ok(())
}

/// The report's two exports, each matching its own tools (only the listed ones when the report
/// is summarised and leaves tools out).
fn verified_exports(
    report: &Report,
) -> Result<(&tdqs_core::export::Export, &tdqs_core::export::Export), Error> {
    let (Some(base), Some(head)) = (&report.base, &report.head) else {
        return Err(differs("the report has no base or head export"));
    };
    if report.omitted.is_some() {
        tdqs_core::report::summary::verify_listed(base, "base")?;
        tdqs_core::report::summary::verify_listed(head, "head")?;
    } else {
        tdqs_core::digest::verify_export(base)
            .map_err(|e| e.context("the report's base export"))?;
        tdqs_core::digest::verify_export(head)
            .map_err(|e| e.context("the report's head export"))?;
    }
    Ok((base, head))
}

/// Every pair: each side recomputes from its tool scores, the left-out tools are summarised
/// alike on both sides, and each side was scored on its export's definitions.
fn check_pairs_against_exports(
    report: &Report,
    pins: &Pins,
    base: &tdqs_core::export::Export,
    head: &tdqs_core::export::Export,
    omitted: usize,
) -> Result<(), Error> {
    let weights = pins.weights();
    for (i, pair) in report.pairs.iter().enumerate() {
        check_side(&format!("pair {} base", i + 1), &pair.base, &weights)?;
        check_side(&format!("pair {} head", i + 1), &pair.head, &weights)?;
        // Left-out tools stand the same on both sides: one summary, seen from each side.
        let left_out = |s: &SideScore| {
            s.omitted
                .as_ref()
                .map(|o| (o.count, o.tdqs_tenths_sum, o.min_tool.clone(), o.min_tdqs))
        };
        let counted = pair.base.omitted.as_ref().map_or(0, |o| o.count as usize);
        if left_out(&pair.base) != left_out(&pair.head) || counted != omitted {
            return Err(differs(format!(
                "pair {}: the summaries of the left-out tools differ between the sides or from \
                 the report's `omitted` count",
                i + 1
            )));
        }
        for (side, export, label) in [(&pair.base, base, "base"), (&pair.head, head, "head")] {
            check_side_scored_on_export(i, label, side, export, omitted)?;
        }
    }
    Ok(())
}

/// One side of pair `i` was scored on its export: the same set, every tool's definition, and
/// as many tools as the export lists plus those left out.
fn check_side_scored_on_export(
    i: usize,
    label: &str,
    side: &SideScore,
    export: &tdqs_core::export::Export,
    omitted: usize,
) -> Result<(), Error> {
    if side.set_hash != export.set_hash {
        return Err(differs(format!(
            "pair {} {label} was scored on set {} but the export is {}",
            i + 1,
            side.set_hash,
            export.set_hash
        )));
    }
    for (name, tool) in &side.tools {
        if export.hashes.get(name) != Some(&tool.definition_hash) {
            return Err(differs(format!(
                "pair {} {label}: tool `{name}` was scored on another definition than \
                 the export's",
                i + 1
            )));
        }
    }
    if side.tool_count() != export.hashes.len() + omitted {
        return Err(differs(format!(
            "pair {} {label} scored {} tools but the export has {}",
            i + 1,
            side.tool_count(),
            export.hashes.len() + omitted
        )));
    }
    Ok(())
}

/// A scored run: the recorded rule must decide exactly at the last pair, and its verdict,
/// medians and reason must be the recorded ones.
fn check_scored_decision(report: &Report, pins: &Pins) -> Result<(), Error> {
    if report.scoring.is_none() {
        return Err(differs(
            "the report scored pairs but does not say how (`scoring` is missing)",
        ));
    }
    if report
        .pairs
        .iter()
        .any(|p| p.base.rollups.mean_tdqs.is_none() || p.head.rollups.mean_tdqs.is_none())
    {
        return Err(differs("a pair has a side without a mean TDQS"));
    }
    let rule = tdqs_core::decide::ConfirmationRule::from_pins(pins);
    // A report without a recorded rule was decided by the reference rule.
    let rule_in_use = report.decision_rule.unwrap_or(RuleInUse {
        name: DecisionRule::Reference,
        tool_drop: None,
    });
    if report.pairs.is_empty() {
        return Err(differs(
            "the definitions changed but the report has no scored pair",
        ));
    }
    // A rule judge's answers carry no noise; the report says which judge answered.
    let noise = super::decision::JudgeNoise::of(
        report
            .scoring
            .as_ref()
            .is_some_and(|s| !s.judge.model_judged),
    );
    // The rule must decide exactly at the last recorded pair.
    for n in 1..report.pairs.len() {
        if let Step::Decided { .. } = step(&report.pairs[..n], rule_in_use, rule, noise) {
            return Err(differs(format!(
                "the report has {} pairs but the {} rule decides after {n}",
                report.pairs.len(),
                rule_in_use.name.as_str()
            )));
        }
    }
    match step(&report.pairs, rule_in_use, rule, noise) {
        Step::Decided {
            verdict,
            medians,
            reason,
            ..
        } => {
            let (verdict, reason) = with_selection_check(report, verdict, reason)?;
            let (verdict, reason) =
                growth::with_growth_rule(report, medians.as_ref(), verdict, reason)?;
            if verdict != report.decision {
                return Err(differs(format!(
                    "the recorded decision {} does not follow from the pairs, which give {}",
                    report.decision, verdict
                )));
            }
            if medians != report.median {
                return Err(differs("the recorded medians do not follow from the pairs"));
            }
            same_reason(report, &reason)?;
        }
        Step::ScoreMore => {
            return Err(differs(format!(
                "the report has {} pairs but the {} rule requires more before it decides",
                report.pairs.len(),
                rule_in_use.name.as_str()
            )))
        }
    }
    Ok(())
}

/// The selection check's part of the decision: its test recomputed from its recorded cases,
/// then its part of the verdict and the reason.
fn with_selection_check(
    report: &Report,
    mut verdict: Verdict,
    mut reason: String,
) -> Result<(Verdict, String), Error> {
    if let Some(check) = &report.eval {
        let (test, blocks) = tdqs_core::eval::compare::judge_pairs(&check.cases);
        if (test.worse, test.better) != (check.test.worse, check.test.better)
            || blocks != check.blocks
        {
            return Err(differs(
                "the selection check's test does not follow from its recorded cases",
            ));
        }
        if blocks && verdict == Verdict::Pass {
            verdict = Verdict::Block;
        }
        reason = format!("{reason} {}", check.summary());
    }
    Ok((verdict, reason))
}

/// The current exports must list what the report recorded.
fn same_exports(
    report: &Report,
    base: &tdqs_core::export::Export,
    head: &tdqs_core::export::Export,
) -> Result<(), Error> {
    for (label, recorded, now) in [
        ("base", report.base.as_ref(), base),
        ("head", report.head.as_ref(), head),
    ] {
        let Some(recorded) = recorded else {
            return Err(differs("the report has no base or head export"));
        };
        if recorded.set_hash != now.set_hash {
            let changed: Vec<String> = now
                .hashes
                .iter()
                .filter(|(n, h)| recorded.hashes.get(*n) != Some(*h))
                .map(|(n, _)| n.clone())
                .chain(
                    recorded
                        .hashes
                        .keys()
                        .filter(|n| !now.hashes.contains_key(*n))
                        .cloned(),
                )
                .collect();
            return Err(differs(format!(
                "the {label}'s tool definitions changed since the report: {}",
                if changed.is_empty() {
                    "the set hash differs".to_string()
                } else {
                    format!("`{}`", changed.join("`, `"))
                }
            )));
        }
    }
    Ok(())
}

/// The fresh exports against the report: the same definitions, and for a summarised report the
/// same left-out tools and totals.
async fn fresh_exports_match(
    report: &Report,
    pins: &Pins,
    base: &tdqs_core::export::Export,
    head: &tdqs_core::export::Export,
) -> Result<(), Error> {
    same_exports(report, base, head)?;
    if let Some(omitted) = &report.omitted {
        check_summarised(report, omitted, pins, base, head).await?;
    }
    Ok(())
}

/// A summarised report against the fresh exports (whose set hashes equal the recorded ones): the
/// left-out tools are the fresh tools it does not list, the same on both sides, with the recorded
/// digest and the recorded side totals; a static report is then scored again on the fresh
/// exports and summarised the same way.
async fn check_summarised(
    report: &Report,
    omitted: &tdqs_core::report::Omitted,
    pins: &Pins,
    base: &tdqs_core::export::Export,
    head: &tdqs_core::export::Export,
) -> Result<(), Error> {
    use tdqs_core::report::summary::verify_omitted;
    let (Some(recorded_base), Some(recorded_head)) = (&report.base, &report.head) else {
        return Err(differs("the report has no base or head export"));
    };
    let base_names = verify_omitted(omitted, recorded_base, base, "base")?;
    let head_names = verify_omitted(omitted, recorded_head, head, "head")?;
    if base_names != head_names {
        return Err(differs(
            "the report leaves out other tools on the base than on the head",
        ));
    }
    for (label, recorded, fresh) in [("base", recorded_base, base), ("head", recorded_head, head)] {
        if recorded.size.description_characters != fresh.size.description_characters
            || recorded.size.tools_list_bytes != fresh.size.tools_list_bytes
        {
            return Err(differs(format!(
                "the report's {label} size totals are not those of the {label}'s tools"
            )));
        }
    }
    rescore_static_on(report, pins, base, head, Some(&base_names)).await
}

/// What a successful check proved, said plainly: the rule judge's answers are asked again, a
/// model's cannot be.
pub fn what_check_proves(outcome: &Outcome) -> &'static str {
    let model_judged = |r: &Report| r.scoring.as_ref().is_some_and(|s| s.judge.model_judged);
    let any_model = outcome.report.as_ref().is_some_and(model_judged)
        || outcome
            .monorepo
            .as_ref()
            .is_some_and(|m| m.servers.iter().any(|s| model_judged(&s.report)));
    if any_model {
        "check: the report is consistent (every score, rollup and the decision recompute from \
         the recorded answers, under the rule the base and the pins require) and the definitions \
         are the current ones. It cannot prove that a model gave those answers: anyone who can \
         edit the file can write other scores that add up. Compare the file with the digest the \
         run published (check --expect-digest, the `report-sha256` output)."
    } else {
        "check: the report is consistent, its rule is the one the base and the pins require, the \
         definitions are the current ones; answers of the rule judge were asked again."
    }
}

/// Runs `--check`. With `expect_digest`, the report file must have that SHA-256 (the digest the
/// run that wrote it published), so an edited report is refused whatever it says.
pub async fn run(
    path: &Path,
    opts: &CheckOptions,
    progress: Arc<dyn Progress>,
    expect_digest: Option<&str>,
) -> Outcome {
    if let Some(expected) = expect_digest {
        if let Err(e) = same_digest(path, expected) {
            return Outcome::invalid(e);
        }
    }
    let report = match read_any_report(path) {
        Ok(AnyReport::Single(_))
            if matches!(opts.base, Some(SideSource::ExportDir(_)))
                || matches!(opts.head, Some(SideSource::ExportDir(_))) =>
        {
            return Outcome::invalid(
                Error::usage(
                    "--base-exports/--head-exports check a report over several servers, and \
                     this report has one",
                )
                .with_advice("pass that server's files with --base-export and --head-export"),
            )
        }
        Ok(AnyReport::Single(report)) => *report,
        Ok(AnyReport::Monorepo(report)) => {
            return match check_monorepo(&report, opts, progress).await {
                Ok(()) => Outcome {
                    verdict: report.decision,
                    report: None,
                    monorepo: Some(*report),
                    written: None,
                    error: None,
                    report_error: None,
                },
                Err(e) => Outcome::invalid(e),
            }
        }
        Err(e) => return Outcome::invalid(e),
    };
    let result = async {
        let pins = crate::spec::load_pins(opts.judge.pins.as_deref())?;
        check_report_contents(&report, &pins)?;
        // The current exports: sides named explicitly, else the revisions the report records.
        let current = opts.exporting(
            from_report(
                report.base_revision.as_deref(),
                report.base_commit.as_deref(),
                opts.base.as_ref(),
            )?,
            from_report(
                report.head_revision.as_deref(),
                report.head_commit.as_deref(),
                opts.head.as_ref(),
            )?,
        );
        let settings = super::base_settings::SettingsSource::of(&current);
        let config = settings.config(current.repo.as_deref())?;
        required_rule(&report, &pins, &current, config.as_ref(), &settings.label())?;
        growth::required_growth(
            &report,
            current
                .max_listing_growth
                .or(config.as_ref().and_then(|c| c.decision.max_listing_growth)),
            &settings.label(),
        )?;
        // A summarised report's exports lack the left-out tools: it is scored again on the
        // fresh exports, once they are known to be the recorded ones.
        if report.omitted.is_none() {
            rescore_static(&report, &pins).await?;
        }
        progress.event(ProgressEvent::Note(
            "exporting the current base and head".to_string(),
        ));
        let (base, head) = super::sides::obtain(&current, progress.as_ref()).await?;
        fresh_exports_match(&report, &pins, &base.export, &head.export).await?;
        growth::cost_matches(&report, &base.export, &head.export)?;
        Ok(report)
    }
    .await;
    match result {
        Ok(report) => Outcome {
            verdict: report.decision,
            report: Some(report),
            monorepo: None,
            written: None,
            error: None,
            report_error: None,
        },
        Err(e) => Outcome::invalid(e),
    }
}

/// Reads a saved report of either shape (one server, or several).
pub fn read_any_report(path: &Path) -> Result<AnyReport, Error> {
    let bytes = read_report_bytes(path)?;
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::new(
            Stage::Check,
            format!(
                "{} is not a tdqs-gate report: it is not UTF-8 text",
                path.display()
            ),
        )
        .with_advice("pass the path of a tool-definition-score.json written by tdqs-gate")
    })?;
    AnyReport::from_json(&text).map_err(|e| {
        Error::new(
            Stage::Check,
            format!("{} is not a tdqs-gate report: {e}", path.display()),
        )
        .with_advice("pass the path of a tool-definition-score.json written by tdqs-gate")
    })
}

/// The largest report `check` reads (1 GiB: two sides at the largest listing limit).
const MAX_REPORT_BYTES: u64 = 1 << 30;

/// A report file's bytes: a regular file only (a FIFO does not block, `/dev/zero` is not read
/// until memory runs out), at most [`MAX_REPORT_BYTES`].
fn read_report_bytes(path: &Path) -> Result<Vec<u8>, Error> {
    use crate::platform::safe_file::{read_regular, Links};
    read_regular(path, Links::Follow, MAX_REPORT_BYTES).map_err(|e| {
        Error::new(
            Stage::Check,
            format!("cannot read the report {}: {e}", path.display()),
        )
        .with_advice("pass the path of a tool-definition-score.json written by tdqs-gate")
    })
}

/// The report file's SHA-256 must be `expected` (hex, `sha256:` prefix allowed).
fn same_digest(path: &Path, expected: &str) -> Result<(), Error> {
    use sha2::{Digest, Sha256};
    let wanted = expected
        .trim()
        .trim_start_matches("sha256:")
        .to_ascii_lowercase();
    if wanted.len() != 64 || !wanted.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err(Error::usage(format!(
            "--expect-digest {expected:?} is not a SHA-256 (64 hexadecimal digits)"
        ))
        .with_advice("pass the `report-sha256` output of the run that wrote the report"));
    }
    let actual = hex(&Sha256::digest(read_report_bytes(path)?));
    if actual != wanted {
        return Err(Error::new(
            Stage::Check,
            format!(
                "the report {} has SHA-256 {actual}, not the expected {wanted}: it is not the \
                 file the gate wrote",
                path.display()
            ),
        )
        .with_advice(
            "check the report the gate's run published (its `report-sha256` step output or \
             attested artifact), or run the gate again",
        ));
    }
    Ok(())
}

fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

/// A scored report must have been decided by the rule the base's configuration, the pins and the
/// check's own flags require: a report edited to a weaker rule (`toolDrop` 4.0, or no rule at
/// all, which reads as the reference rule) would otherwise re-decide as it claims.
fn required_rule(
    report: &Report,
    pins: &Pins,
    opts: &GateOptions,
    config: Option<&crate::config::Config>,
    source: &str,
) -> Result<(), Error> {
    if report.pairs.is_empty() {
        return Ok(());
    }
    let required = RuleInUse::resolve(
        opts.decision_rule,
        pins,
        opts.tool_drop,
        config.and_then(|c| c.decision.tool_drop),
    );
    let describe = |rule: &RuleInUse| match rule.tool_drop {
        Some(drop) => format!("the {} rule with tool-drop {drop}", rule.name.as_str()),
        None => format!("the {} rule", rule.name.as_str()),
    };
    if report.decision_rule != Some(required) {
        let recorded = report
            .decision_rule
            .as_ref()
            .map(describe)
            .unwrap_or_else(|| "no recorded rule".to_string());
        return Err(differs(format!(
            "the report was decided by {recorded}, but {} is required (from the pins, {source} \
             and the command line): a report decided by another rule is not accepted",
            describe(&required)
        ))
        .with_advice(
            "run the gate again; if the rule was given on the gate's command line \
             (--decision-rule, --tool-drop), give the same flags to check",
        ));
    }
    Ok(())
}

/// The side to export now: given explicitly, else the one the report records (a recorded
/// revision at its recorded commit: a branch may have moved).
fn from_report(
    recorded: Option<&str>,
    commit: Option<&str>,
    given: Option<&SideSource>,
) -> Result<SideSource, Error> {
    if let Some(given) = given {
        return Ok(given.clone());
    }
    match recorded {
        Some(tdqs_core::export::WORKING_TREE_LABEL) => Ok(SideSource::WorkingTree),
        Some(rev) => Ok(SideSource::Revision(commit.unwrap_or(rev).to_string())),
        None => Err(Error::usage(
            "the report was made from export files; pass --base-export and \
             --head-export (or --base / --head) to check it",
        )),
    }
}
