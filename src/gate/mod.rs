//! The gate: ties revisions, exports, digests, the judge and the decision together.
//!
//! Order matters for cost: the judge is built (credentials read, CLI found) and its preflight
//! run (the CLI's version and login) before any setup command, so a judge that cannot run fails
//! in seconds rather than after minutes of setup. Without setup commands the preflight runs
//! while the servers start (it would otherwise add its second to every run) and a failure
//! cancels the exports. In CI that failure is held until the definitions are known to differ (a
//! fork's pull request has no secrets). Equal set hashes PASS with no model call and no prompt
//! fetch.

pub mod base_settings;
pub mod check;
pub mod decision;
pub mod export_dirs;
pub mod hook;
mod judge_first;
pub mod monorepo;
pub mod options;
pub mod sides;

use std::sync::Arc;

use serde_json::Value;

use crate::progress::{Progress, ProgressEvent};
use crate::report::write;
use crate::score::answer_cache;
use crate::score::session::{JudgeSlot, Sharing};
pub(crate) use judge_first::check_judge_first;
use judge_first::{check_judge_before_export, exports_and_judge_check};
use tdqs_core::decide::{self, ConfirmationRule};
use tdqs_core::error::{Error, Stage};
use tdqs_core::exit::Verdict;
use tdqs_core::export::Export;
use tdqs_core::report::{
    self, Changes, Generator, Pair, Report, ReportError, Scoring, SizeComparison,
};
use tdqs_core::score::CallStats;
use tdqs_core::spec::pins::Pins;

pub use options::*;

/// The result of a run: the verdict, and the report when one was written.
pub struct Outcome {
    pub verdict: Verdict,
    pub report: Option<Report>,
    /// The report of a run over several servers (then `report` is `None`).
    pub monorepo: Option<tdqs_core::report::monorepo::MonorepoReport>,
    pub written: Option<write::Written>,
    /// The error behind an INVALID verdict.
    pub error: Option<Error>,
    /// Errors writing the report (the verdict becomes INVALID).
    pub report_error: Option<Error>,
}

impl Outcome {
    /// INVALID with no report: the run stopped before one could be made.
    pub(crate) fn invalid(e: Error) -> Outcome {
        Outcome {
            verdict: Verdict::Invalid,
            report: None,
            monorepo: None,
            written: None,
            error: Some(e),
            report_error: None,
        }
    }
}

/// What the run knows so far; turned into a report at the end, whatever happened.
struct Draft {
    pins: Pins,
    base: Option<sides::SideExport>,
    head: Option<sides::SideExport>,
    scoring: Option<Scoring>,
    pairs: Vec<Pair>,
    calls: CallStats,
    warnings: Vec<String>,
    rule: Option<tdqs_core::decide::RuleInUse>,
    assessment: Option<decide::noise::Assessment>,
    eval: Option<tdqs_core::eval::compare::SelectionCheck>,
    suggestions: Option<tdqs_core::suggest::Suggestions>,
    /// What the definitions cost (both sides exported).
    cost: Option<tdqs_core::cost::CostComparison>,
    /// The opt-in growth rule as applied (when a limit was set).
    growth_rule: Option<tdqs_core::cost::GrowthRule>,
    /// The settings the pull request's configuration changes (ignored): the report's first
    /// warning, whatever else is said.
    settings_changed: Option<String>,
}

impl Draft {
    fn new(pins: Pins) -> Draft {
        let mut draft = Draft {
            pins,
            base: None,
            head: None,
            scoring: None,
            pairs: Vec::new(),
            calls: CallStats::default(),
            warnings: Vec::new(),
            rule: None,
            assessment: None,
            eval: None,
            suggestions: None,
            cost: None,
            growth_rule: None,
            settings_changed: None,
        };
        if !draft.pins.is_embedded() {
            draft.warnings.push(
                "scored with pins other than the embedded tdqs/version.json: not the calibrated \
                 configuration"
                    .to_string(),
            );
        }
        draft
    }

    fn report(
        mut self,
        verdict: Verdict,
        reason: String,
        medians: Option<decide::Medians>,
        error: Option<&Error>,
    ) -> Report {
        if let Some(changed) = self.settings_changed.take() {
            self.warnings.insert(0, changed);
        }
        let label = |s: Option<&sides::SideExport>| {
            s.map(|s| (s.revision.clone(), s.commit.clone()))
                .unwrap_or_default()
        };
        let ((base_revision, base_commit), (head_revision, head_commit)) =
            (label(self.base.as_ref()), label(self.head.as_ref()));
        // Moved, not copied: a 10,000-tool export is large.
        let base_export = self.base.map(|s| s.export);
        let (head_export, head_locations) = match self.head {
            Some(s) => (Some(s.export), s.locations),
            None => (None, None),
        };
        let size = match (&base_export, &head_export) {
            (Some(b), Some(h)) => Some(SizeComparison::new(&b.size, &h.size)),
            _ => None,
        };
        let changes = match (&base_export, &head_export) {
            (Some(b), Some(h)) => Some(Changes::between(b, h)),
            _ => None,
        };
        let forecast = self
            .pairs
            .first()
            .map(|p| report::forecast::of_first_pair(&p.base, &p.head));
        let mut causes = report::causes::of_first_pair_with_changes(
            &self.pairs,
            base_export.as_ref(),
            head_export.as_ref(),
        );
        if let (Some(causes), Some(locations)) = (causes.as_mut(), head_locations.as_ref()) {
            causes.locate_in(locations);
            let env = |name: &str| std::env::var(name).ok();
            if let Some(base) = blob_base(&env, head_commit.as_deref()) {
                causes.link_locations(&base);
            }
        }
        Report {
            schema_version: report::REPORT_SCHEMA_VERSION,
            generator: Generator::default(),
            decision: verdict,
            exit_code: verdict.code(),
            reason,
            scored: !self.pairs.is_empty() || self.calls.attempts > 0,
            base_revision,
            head_revision,
            base_commit,
            head_commit,
            versions: self.pins.raw().clone(),
            version_digest: self.pins.digest().to_string(),
            scoring: self.scoring,
            base: base_export,
            head: head_export,
            size,
            changes,
            pairs: self.pairs,
            median: medians,
            causes,
            confirmation: self
                .pins
                .raw()
                .get("confirmation")
                .cloned()
                .unwrap_or(Value::Null),
            decision_rule: self.rule,
            assessment: self.assessment,
            calls: self.calls,
            warnings: self.warnings,
            error: error.map(|e| ReportError {
                stage: e.stage,
                cause: e.cause.clone(),
                advice: e.advice.clone(),
            }),
            omitted: None,
            eval: self.eval,
            suggestions: self.suggestions,
            cost: self.cost,
            growth_rule: self.growth_rule,
            forecast,
        }
    }
}

fn finish(
    draft: Draft,
    verdict: Verdict,
    reason: String,
    medians: Option<decide::Medians>,
    error: Option<Error>,
    opts: &GateOptions,
) -> Outcome {
    let mut report = draft.report(verdict, reason, medians, error.as_ref());
    if !opts.full_report {
        report::summary::summarise(&mut report);
    }
    let mut outcome = Outcome {
        verdict,
        report: None,
        monorepo: None,
        written: None,
        error,
        report_error: None,
    };
    // Every run writes its report, an INVALID one included (with whatever exports exist), so an
    // earlier run's report never stands in for this one.
    match write::write_report(&opts.report_dir, &report) {
        Ok(written) => {
            if let Err(e) = write::github_outputs(&report, Some(&written)) {
                outcome.report_error = Some(e);
            }
            outcome.written = Some(written);
        }
        Err(e) => {
            let _ = write::github_outputs(&report, None);
            outcome.report_error = Some(e);
        }
    }
    if outcome.report_error.is_some() && outcome.verdict != Verdict::Invalid {
        // The files just written say PASS or BLOCK, but the run ends INVALID: they go.
        write::remove_stale(&opts.report_dir);
        outcome.written = None;
        outcome.verdict = Verdict::Invalid;
    }
    outcome.report = Some(report);
    outcome
}

/// The probe profiles of two exports must be equal: capabilities alone change what some servers
/// list (server-everything: 13, 14 or 19 tools).
fn same_probe(base: &Export, head: &Export) -> Result<(), Error> {
    if base.probe != head.probe {
        return Err(Error::new(
            Stage::Export,
            "the base and head exports were made with different probe profiles (protocol version, \
             era, capabilities or client info), so their tool lists are not comparable",
        )
        .with_advice(
            "export both sides with the same options, or let the gate start both servers",
        ));
    }
    Ok(())
}

/// The tools whose definitions differ between two exports of the same side.
fn varying_tools(first: &Export, second: &Export) -> Vec<String> {
    let mut names: Vec<String> = first
        .hashes
        .iter()
        .filter(|(name, hash)| second.hashes.get(*name) != Some(hash))
        .map(|(name, _)| name.clone())
        .collect();
    names.extend(
        second
            .hashes
            .keys()
            .filter(|name| !first.hashes.contains_key(*name))
            .cloned(),
    );
    names.sort();
    names.dedup();
    names
}

/// A side must list the same definitions twice.
fn stable(label: &str, first: &Export, second: &Export) -> Result<(), Error> {
    if first.set_hash == second.set_hash {
        return Ok(());
    }
    let tools = varying_tools(first, second);
    let named = if tools.is_empty() {
        "the order or the set of its tools".to_string()
    } else {
        tools
            .iter()
            .map(|t| format!("`{t}`"))
            .collect::<Vec<_>>()
            .join(", ")
    };
    Err(Error::new(
        Stage::Export,
        format!(
            "the {label}'s server lists different tool definitions from one start to the next \
             ({named} varied between two exports), so a score difference could not be told \
             from that variation; no model was called"
        ),
    )
    .with_advice(
        "make the listing deterministic: build descriptions and schemas without set or dict \
         iteration order, timestamps or random values. PYTHONHASHSEED=0 is set by default; \
         check that `[server] env` or `pass-env` does not override it",
    ))
}

/// Runs the gate end to end. Never panics on bad input; every failure is an INVALID outcome.
pub async fn run(opts: &GateOptions, progress: Arc<dyn Progress>) -> Outcome {
    let pins = match crate::spec::load_pins(opts.judge.pins.as_deref()) {
        Ok(p) => p,
        Err(e) => {
            // No report can be made without pins; an earlier one must not stand for this run.
            write::remove_stale(&opts.report_dir);
            return Outcome::invalid(e);
        }
    };
    // Several servers from folders of export files (the GitHub Action's scoring step).
    let single_from_folders;
    let opts = match export_dirs::single_layout(opts) {
        None => opts,
        Some(Ok(single)) => {
            single_from_folders = single;
            &single_from_folders
        }
        Some(Err(e)) => {
            let reason = e.summary();
            return finish(
                Draft::new(pins),
                Verdict::Invalid,
                reason,
                None,
                Some(e),
                opts,
            );
        }
    };
    match (&opts.base, &opts.head) {
        (SideSource::ExportDir(_), SideSource::ExportDir(_)) => {
            return export_dirs::run(opts, progress, pins).await
        }
        (SideSource::ExportDir(_), _) | (_, SideSource::ExportDir(_)) => {
            return monorepo::failed(
                opts,
                Error::usage("--base-exports and --head-exports go together")
                    .with_advice("pass both folders, or neither"),
            )
        }
        _ => {}
    }
    // Several servers ([[server]] tables, or --server given more than once) are gated by
    // `monorepo`; both sides must then be trees. Trees that fail to open are left to the
    // single-server path, which reports the failure as it always has.
    let mut trees = None;
    let both_trees = !matches!(opts.base, SideSource::ExportFile(_))
        && !matches!(opts.head, SideSource::ExportFile(_));
    if both_trees {
        if let Ok(opened) = sides::open_trees(opts) {
            // The set of servers is the base revision's setting.
            match monorepo::targets(opened.base_config.as_ref(), &opts.server) {
                Ok(Some(targets)) => {
                    return monorepo::run(opts, progress, pins, opened, targets).await
                }
                Ok(None) => trees = Some(opened),
                Err(e) => {
                    drop(opened);
                    return monorepo::failed(opts, e);
                }
            }
        }
    }
    let mut draft = Draft::new(pins);
    draft.warnings.extend(uncommitted_head_note(opts));
    let decided = match run_inner(opts, Arc::clone(&progress), &mut draft, trees).await {
        Ok(decided) => after_decision(opts, progress.as_ref(), &mut draft, decided).await,
        Err(e) => Err(e),
    };
    match decided {
        Ok((verdict, reason, medians)) => finish(draft, verdict, reason, medians, None, opts),
        Err(e) => {
            let reason = e.summary();
            finish(draft, Verdict::Invalid, reason, None, Some(e), opts)
        }
    }
}

/// What follows the score rule's decision: the opt-in selection check, then the definitions'
/// cost and the opt-in growth rule.
async fn after_decision(
    opts: &GateOptions,
    progress: &dyn Progress,
    draft: &mut Draft,
    decided: Decided,
) -> Result<Decided, Error> {
    let decided = selection_check(opts, progress, draft, decided).await?;
    cost_and_growth(opts, draft, decided)
}

/// The mean TDQS of each side that decided: the medians when confirmation pairs were scored,
/// else the first pair's means. `None` when nothing was scored.
pub(crate) fn deciding_means(
    medians: Option<&decide::Medians>,
    pairs: &[Pair],
) -> Option<(tdqs_core::arith::Tenths, tdqs_core::arith::Tenths)> {
    match medians {
        Some(m) => Some((m.base, m.head)),
        None => pairs
            .first()
            .and_then(|p| Some((p.base.rollups.mean_tdqs?, p.head.rollups.mean_tdqs?))),
    }
}

/// Measures both listings' tokens and applies the growth rule when a limit is set
/// (`--max-listing-growth`, else the base's `[decision] max-listing-growth`): a run whose head
/// listing grew by more than that share with no TDQS gain BLOCKs (a scored run, or one whose
/// definitions are unchanged and whose listing grew through what the hash leaves out).
fn cost_and_growth(
    opts: &GateOptions,
    draft: &mut Draft,
    decided: Decided,
) -> Result<Decided, Error> {
    let (Some(base), Some(head)) = (&draft.base, &draft.head) else {
        return Ok(decided);
    };
    let limit = opts.max_listing_growth.or(head.decision.max_listing_growth);
    let counter = crate::cost::Cl100k::new();
    let first = draft.pairs.first().map(|p| (&p.base, &p.head));
    let cost = crate::cost::compare(&counter, &base.export, &head.export, first)?;
    let (mut verdict, mut reason, medians) = decided;
    if let Some(limit) = limit {
        let unchanged = base.export.set_hash == head.export.set_hash;
        let rule = tdqs_core::cost::growth_rule(
            limit,
            cost.base.listing.tokens,
            cost.head.listing.tokens,
            tdqs_core::cost::tdqs_gain(unchanged, deciding_means(medians.as_ref(), &draft.pairs)),
        );
        if let Some(why) = tdqs_core::cost::growth_reason(&rule, &cost) {
            reason = format!("{reason} {why}");
            if verdict == Verdict::Pass {
                verdict = Verdict::Block;
            }
        }
        draft.growth_rule = Some(rule);
    }
    draft.cost = Some(cost);
    Ok((verdict, reason, medians))
}

/// The opt-in selection check: when the definitions differ and both sides list tools, the same
/// suite runs on both with the same selector, the cases are paired, and a significant fall
/// (exact McNemar) turns the verdict into BLOCK, naming the cases and what now captures them.
/// A rise of the mean TDQS together with such a fall is called out first in the warnings.
async fn selection_check(
    opts: &GateOptions,
    progress: &dyn Progress,
    draft: &mut Draft,
    decided: Decided,
) -> Result<Decided, Error> {
    let Some(gate_eval) = &opts.eval else {
        return Ok(decided);
    };
    let (Some(base), Some(head)) = (&draft.base, &draft.head) else {
        return Ok(decided);
    };
    if base.export.set_hash == head.export.set_hash
        || base.export.tools.is_empty()
        || head.export.tools.is_empty()
    {
        return Ok(decided);
    }
    progress.event(ProgressEvent::Note(format!(
        "selection check ({}): running {} cases on the base and the head",
        gate_eval.options.mode.as_str(),
        gate_eval.suite.cases.len()
    )));
    let mut options = gate_eval.options.clone();
    // A tool the head removed is a miss to measure there, not a broken suite.
    options.allow_unknown_tools = true;
    // Cached answers come only from the base revision's committed cache, never from the working
    // tree's (the head's in a pull request, which could commit made-up answers for either side).
    options.trusted_answers = Some(std::sync::Arc::new(trusted_eval_answers(opts, &options)?));
    let lint_config = crate::lint::LintConfig::default();
    let base_lint = crate::lint::lint_export(&base.export, &lint_config);
    let head_lint = crate::lint::lint_export(&head.export, &lint_config);
    let base_run = crate::eval::run(&base.export, &gate_eval.suite, &options, &base_lint)
        .await
        .map_err(|e| e.context("the selection check on the base"))?;
    let head_run = crate::eval::run(&head.export, &gate_eval.suite, &options, &head_lint)
        .await
        .map_err(|e| e.context("the selection check on the head"))?;
    let mut check = tdqs_core::eval::compare::compare(&base_run, &head_run).map_err(|why| {
        Error::new(
            Stage::Eval,
            format!("the selection runs of the base and the head are not comparable: {why}"),
        )
        .with_advice("run both sides with the same cases, selector, model and settings")
    })?;
    let (mut verdict, mut reason, medians) = decided;
    let tdqs_rose = match &medians {
        Some(m) => m.head > m.base,
        None => draft
            .pairs
            .first()
            .is_some_and(|p| p.head.rollups.mean_tdqs > p.base.rollups.mean_tdqs),
    };
    if check.blocks && tdqs_rose {
        check.tdqs_rose_while_selection_fell = true;
        draft.warnings.insert(
            0,
            format!(
                "the head's mean TDQS rose while selection fell significantly ({} of {} cases \
                 fell, p = {:.4}): the definitions read better to the judge and route worse",
                check.test.worse,
                check.cases.len(),
                check.test.p_value
            ),
        );
    }
    reason = format!("{reason} {}", check.summary());
    if check.blocks && verdict == Verdict::Pass {
        verdict = Verdict::Block;
    }
    draft.eval = Some(check);
    Ok((verdict, reason, medians))
}

/// The persistent answer cache of this run ([`answer_cache::open_for_run`]); the working tree,
/// which a pull request writes, is where it may not live.
fn open_answer_cache(
    opts: &GateOptions,
    scoring: &tdqs_core::report::Scoring,
) -> Result<(Option<Arc<answer_cache::AnswerCache>>, Option<String>), Error> {
    // Without a repository (export files) there is no tree a pull request writes.
    let workdir = crate::revision::Repo::open_without_pruning(opts.repo.as_deref())
        .ok()
        .and_then(|repo| repo.workdir().map(std::path::Path::to_path_buf));
    let trees: Vec<&std::path::Path> = workdir.as_deref().into_iter().collect();
    answer_cache::open_for_run(
        &opts.answer_cache,
        &opts.judge,
        scoring.judge.model_judged,
        &scoring.scoring_digest,
        &trees,
    )
}

/// Most answers read from the base revision's committed eval cache.
const MAX_TRUSTED_ANSWERS: usize = 50_000;

/// The eval cache as committed at the base revision (file name → bytes): reviewed when it was
/// merged, unlike the working tree's folder, which a pull request writes. Empty when the base is
/// not a revision of this repository, in synthetic mode (which asks no model), or when the
/// cache folder is not inside the working tree.
fn trusted_eval_answers(
    opts: &GateOptions,
    eval: &crate::eval::EvalOptions,
) -> Result<std::collections::BTreeMap<String, Vec<u8>>, Error> {
    let SideSource::Revision(rev) = &opts.base else {
        return Ok(Default::default());
    };
    if eval.mode != tdqs_core::eval::Mode::LiveModel {
        return Ok(Default::default());
    }
    let repo = crate::revision::Repo::open_without_pruning(opts.repo.as_deref())?;
    let Some(relative) = repo
        .workdir()
        .and_then(|w| eval.cache_dir.strip_prefix(w).ok())
        // `./x` names the same folder as `x` (git's tree paths have no `.`).
        .map(|p| {
            p.components()
                .filter(|c| matches!(c, std::path::Component::Normal(_)))
                .collect::<std::path::PathBuf>()
        })
    else {
        return Ok(Default::default());
    };
    repo.committed_files(
        rev,
        &relative,
        MAX_TRUSTED_ANSWERS,
        crate::eval::cache::MAX_ENTRY_BYTES as usize,
    )
    .map_err(|e| e.context("reading the base revision's eval cache"))
}

/// Where the head commit's files are shown on the web, for links to a fallen tool's line:
/// `GITHUB_SERVER_URL/GITHUB_REPOSITORY/blob/COMMIT` when a GitHub Actions run names an https
/// host and an `owner/name` repository, and the head is a full commit. Anything else gives no
/// link (the place is still shown as text).
pub(crate) fn blob_base(
    env: &dyn Fn(&str) -> Option<String>,
    commit: Option<&str>,
) -> Option<String> {
    let server = env("GITHUB_SERVER_URL")?;
    let repository = env("GITHUB_REPOSITORY")?;
    let commit = commit?;
    let host_ok = server.strip_prefix("https://").is_some_and(|host| {
        !host.is_empty()
            && host
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-.:".contains(&b))
    });
    let name_ok = |part: &str| {
        !part.is_empty()
            && part
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"-._".contains(&b))
    };
    let repo_ok = repository
        .split_once('/')
        .is_some_and(|(owner, name)| name_ok(owner) && name_ok(name));
    let commit_ok = commit.len() == 40 && commit.bytes().all(|b| b.is_ascii_hexdigit());
    (host_ok && repo_ok && commit_ok).then(|| format!("{server}/{repository}/blob/{commit}"))
}

/// The reason of a PASS on unchanged definitions (`--check` recomputes it).
pub(crate) fn unchanged_reason(set_hash: &str) -> String {
    format!(
        "The tool definitions are unchanged (set hash {} on both sides); no model was called.",
        set_hash.get(..12).unwrap_or(set_hash)
    )
}

/// The reason of a PASS on an empty base (`--check` recomputes it).
pub(crate) const BASE_EMPTY_REASON: &str = "The base lists no tools, so there is no score the \
    head could fall below; nothing was scored.";

pub(crate) type Decided = (Verdict, String, Option<decide::Medians>);

async fn run_inner(
    opts: &GateOptions,
    progress: Arc<dyn Progress>,
    draft: &mut Draft,
    trees: Option<sides::Trees>,
) -> Result<Decided, Error> {
    // The judge is built now and checked before any setup command (seconds, where they take
    // minutes), or while the servers start when there is none.
    let mut judge = JudgeSlot::new(crate::judge::build::build(&opts.judge, &draft.pins));
    progress.event(ProgressEvent::Note(
        "exporting the base and the head".to_string(),
    ));
    let planned = sides::plan_checked(trees, opts)?;
    let check_alongside =
        check_judge_before_export(&planned, &mut judge, progress.as_ref()).await?;
    // A listing that changes from start to start would be scored as a change: when the
    // definitions differ, each side is exported once more before any model call, from the tree
    // its first export set up (no setup command runs twice), and a side that lists differently
    // is refused. Boxed: both exports' futures are large, and the judge check's wrapper would
    // otherwise hold them inline several times over (a debug build's stack overflowed).
    let exports = Box::pin(sides::export_planned(
        planned,
        opts,
        progress.as_ref(),
        true,
    ));
    // A judge is needed only when both sides listed and their definitions differ.
    let needs_judge = |exported: &Result<(sides::SideExport, sides::SideExport, _), Error>| matches!(exported, Ok((base, head, _)) if base.export.set_hash != head.export.set_hash);
    let (base, head, again) = exports_and_judge_check(
        exports,
        check_alongside.then_some(&mut judge),
        progress.as_ref(),
        needs_judge,
    )
    .await??;
    let unchanged = record_sides(draft, base, head)?;
    if let Some((base_again, head_again)) = &again {
        check_stable(draft, base_again, head_again)?;
    }
    decide_recorded(opts, progress, draft, unchanged, &mut judge).await
}

/// The note of a run whose `--head REV` is the commit checked out in the working tree while the
/// tree has uncommitted changes: the commit was gated, the changes were not, and a PASS on
/// unchanged definitions says nothing about them.
pub(crate) fn uncommitted_head_note(opts: &GateOptions) -> Option<String> {
    let SideSource::Revision(rev) = &opts.head else {
        return None;
    };
    let repo = crate::revision::Repo::open_without_pruning(opts.repo.as_deref()).ok()?;
    let head = repo.resolve(rev).ok()?;
    let tree = repo.describe_working_tree().ok()?;
    if tree.commit.as_deref() != Some(head.as_str()) || !tree.is_dirty() {
        return None;
    }
    let changes = match tree.changed_paths {
        1 => "1 uncommitted change".to_string(),
        n => format!("{n} uncommitted changes"),
    };
    Some(format!(
        "the working tree differs from the head and was not gated: `--head {rev}` is the commit \
         checked out here ({}), and the working tree has {changes} on top of it; omit --head to \
         gate the working tree as it is",
        head.get(..12).unwrap_or(&head)
    ))
}

/// Records both sides' exports and warnings in the draft; true when their definitions are equal.
fn record_sides(
    draft: &mut Draft,
    base: sides::SideExport,
    head: sides::SideExport,
) -> Result<bool, Error> {
    draft
        .warnings
        .extend(base.export.warnings.iter().map(|w| format!("base: {w}")));
    draft
        .warnings
        .extend(head.export.warnings.iter().map(|w| format!("head: {w}")));
    draft.settings_changed = head.settings_changed.clone();
    same_probe(&base.export, &head.export)?;
    let unchanged = base.export.set_hash == head.export.set_hash;
    draft.base = Some(base);
    draft.head = Some(head);
    Ok(unchanged)
}

/// Each side's second export must list what its first did.
fn check_stable(
    draft: &Draft,
    base_again: &sides::SideExport,
    head_again: &sides::SideExport,
) -> Result<(), Error> {
    let (Some(base), Some(head)) = (draft.base.as_ref(), draft.head.as_ref()) else {
        return Err(Error::internal("no exports to compare"));
    };
    stable("base", &base.export, &base_again.export)?;
    stable("head", &head.export, &head_again.export)
}

/// Decides from the exports recorded in the draft: the checks on what was exported, then PASS
/// on equal definitions or an empty base, else scoring pairs until the rule decides.
async fn decide_recorded(
    opts: &GateOptions,
    progress: Arc<dyn Progress>,
    draft: &mut Draft,
    unchanged: bool,
    judge: &mut JudgeSlot,
) -> Result<Decided, Error> {
    let (Some(base), Some(head)) = (draft.base.as_ref(), draft.head.as_ref()) else {
        return Err(Error::internal("no exports to decide on"));
    };
    let base_empty = base.export.tools.is_empty();
    let head_empty = head.export.tools.is_empty();
    if let Some(why) = &head.blind {
        if unchanged {
            // Equal hashes from a plan that runs the same installed code on both sides say
            // nothing about the change: a required check must not pass what it did not see.
            return Err(Error::new(
                Stage::Export,
                format!(
                    "the launch plan cannot see the side's tree, so both sides ran the same code \
                     and their equal definitions prove nothing: {why}"
                ),
            )
            .with_advice(
                "start the server from each side's tree: use {root} (e.g. [server] env = { \
                 PYTHONPATH = \"{root}/src\" } with command = \"python -m my_server\", or \
                 command = \"python {root}/server.py\"); an editable install (pip install -e .) \
                 makes every side import the working tree. See docs/troubleshooting.md",
            ));
        }
        draft.warnings.insert(
            0,
            format!(
                "the launch plan may not see the side's tree (the definitions differed, so it \
                 saw something): {why}"
            ),
        );
    }
    if !unchanged {
        // Text aimed at the judge is pasted into a model judge's prompt: name it first, so a
        // reviewer sees it whatever the verdict.
        for hit in crate::lint::judge_directed_text(&head.export.tools)
            .into_iter()
            .rev()
        {
            draft.warnings.insert(
                0,
                format!(
                    "head: tool `{}` has text aimed at the judge or imitating its prompt ({:?}, lint TDQS-M005): a model judge reads it inside its prompt, so its score may be steered; remove it",
                    hit.tool, hit.evidence
                ),
            );
        }
    }
    if unchanged {
        return Ok((Verdict::Pass, unchanged_reason(&base.export.set_hash), None));
    }
    if base_empty {
        return Ok((Verdict::Pass, BASE_EMPTY_REASON.to_string(), None));
    }
    if head_empty {
        return Err(Error::new(
            Stage::Score,
            "the head lists no tools, so it has no mean TDQS to compare with the base's",
        )
        .with_advice(
            "check that the head's server starts with its tools registered; if removing every \
             tool is intended, this gate cannot judge it",
        ));
    }

    let rule_in_use = tdqs_core::decide::RuleInUse::resolve(
        opts.decision_rule,
        &draft.pins,
        opts.tool_drop,
        head.decision.tool_drop,
    );
    draft.rule = Some(rule_in_use);
    let sharing = Sharing {
        identical_questions: opts.share_identical,
        unchanged_tools: rule_in_use.reuses_unchanged(),
    };
    let session = judge
        .session(&opts.judge, &draft.pins, sharing, &progress)
        .await?;
    // Each server of a monorepo is scored as if it were alone: no answer kept from another
    // server's pairs is reused (a fresh session starts empty anyway).
    session.scorer.memo = Default::default();
    let (answers, answers_note) = open_answer_cache(opts, &session.scoring)?;
    session.scorer.answer_cache = answers;
    draft.warnings.extend(answers_note);
    draft.warnings.extend(session.warnings.iter().cloned());
    let base_prepared = session.prepare(&base.export)?;
    let head_prepared = session.prepare(&head.export)?;
    draft.scoring = Some(session.scoring.clone());
    let scorer = &session.scorer;
    let rule: ConfirmationRule = ConfirmationRule::from_pins(&draft.pins);
    let noise = decision::JudgeNoise::of(!session.scoring.judge.model_judged);
    loop {
        match decision::step(&draft.pairs, rule_in_use, rule, noise) {
            decision::Step::Decided {
                verdict,
                reason,
                medians,
                assessment,
            } => {
                draft.assessment = assessment;
                if let Some(cache) = &scorer.answer_cache {
                    draft.warnings.extend(cache.take_warnings());
                }
                if let Some(suggest) = opts
                    .suggest
                    .as_ref()
                    .filter(|_| verdict != Verdict::Invalid)
                {
                    progress.event(ProgressEvent::Note(
                        "asking for rewrites of the tools that fell".to_string(),
                    ));
                    suggest_fallen(draft, session, suggest).await;
                }
                return Ok((verdict, reason, medians));
            }
            decision::Step::ScoreMore => {
                let n = draft.pairs.len() + 1;
                let label = if n == 1 {
                    "scoring the first pair".to_string()
                } else {
                    format!("the first pair dropped: scoring confirmation pair {n}")
                };
                progress.event(ProgressEvent::Note(label));
                // Calls made by a pair that fails still count in the report.
                let mut spent = CallStats::default();
                let scored = scorer
                    .score_pair_counted(
                        &base_prepared,
                        &head_prepared,
                        draft.pairs.is_empty(),
                        &mut spent,
                    )
                    .await;
                draft.calls.add(&spent);
                let (b, h, calls) = scored.map_err(|e| e.context(format!("pair {n}")))?;
                draft.pairs.push(Pair {
                    base: b,
                    head: h,
                    calls,
                });
            }
        }
    }
}

/// `--suggest`: a rewrite of each tool that fell on the first pair with a change, held to the
/// base's definition on the dimensions that fell. A failure is a warning: the verdict stands.
async fn suggest_fallen(
    draft: &mut Draft,
    session: &crate::score::session::ScoringSession,
    opts: &crate::suggest::SuggestOptions,
) {
    let (Some(base), Some(head)) = (draft.base.as_ref(), draft.head.as_ref()) else {
        return;
    };
    let Some(causes) = report::causes::of_first_pair_with_changes(
        &draft.pairs,
        Some(&base.export),
        Some(&head.export),
    ) else {
        return;
    };
    let targets: Vec<crate::suggest::Target> = causes
        .tools
        .iter()
        .filter(|t| !t.dimensions.is_empty())
        .map(|t| crate::suggest::Target {
            tool: t.tool.clone(),
            reference: base
                .export
                .tools
                .iter()
                .find(|d| tdqs_core::digest::tool_name(d) == t.tool)
                .cloned(),
            held: t.dimensions.iter().map(|d| d.dimension).collect(),
            weak_points: t
                .dimensions
                .iter()
                .map(|d| (d.dimension.key().to_string(), d.justification.clone()))
                .collect(),
        })
        .collect();
    if targets.is_empty() {
        return;
    }
    match crate::suggest::suggest(&head.export, &targets, session, opts).await {
        Ok(suggestions) => draft.suggestions = Some(suggestions),
        Err(e) => draft.warnings.push(format!(
            "the rewrites of --suggest failed, the verdict stands: {}",
            e.summary()
        )),
    }
}
