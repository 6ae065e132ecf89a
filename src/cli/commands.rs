//! One function per subcommand: convert arguments, call the library, print the result.

use crate::score::answer_cache::AnswerCacheChoice;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use crate::gate::{self, GateOptions, SideSource};
use tdqs_core::error::Error;
use tdqs_core::exit::Verdict;
// Everything printed is for a terminal: escape sequences stripped, secrets masked, control
// characters shown as escapes.
use tdqs_core::redact::for_terminal as redact;

use super::args::*;
use super::output::{say, StderrProgress, Verbosity};
use super::print_invalid;
use super::resolve::{judge_options, lint_config, one_export, server_options};

/// `--base-exports DIR --head-exports DIR`: both folders or neither, and nothing else for the
/// sides.
fn export_dirs(args: &SideArgs) -> Result<Option<(SideSource, SideSource)>, Error> {
    match (&args.base_exports, &args.head_exports) {
        (None, None) => Ok(None),
        (Some(base), Some(head)) => {
            if args.base.is_some()
                || args.head.is_some()
                || args.base_export.is_some()
                || args.head_export.is_some()
            {
                return Err(Error::usage(
                    "--base-exports/--head-exports give both sides of every server; --base, \
                     --head, --base-export and --head-export cannot go with them",
                )
                .with_advice("give the sides either as two export folders or in one other way"));
            }
            Ok(Some((
                SideSource::ExportDir(base.clone()),
                SideSource::ExportDir(head.clone()),
            )))
        }
        _ => Err(Error::usage(
            "--base-exports and --head-exports go together (one folder of export files per side)",
        )
        .with_advice(
            "pass both folders, e.g. --base-exports exports/base --head-exports exports/head",
        )),
    }
}

/// The sides given on the command line, each `None` when not given: two export folders, or
/// for each side a revision or an export file (not both).
fn given_sides(args: &SideArgs) -> Result<(Option<SideSource>, Option<SideSource>), Error> {
    if let Some((base, head)) = export_dirs(args)? {
        return Ok((Some(base), Some(head)));
    }
    let base = match (&args.base_export, &args.base) {
        (Some(file), None) => Some(SideSource::ExportFile(file.clone())),
        (None, Some(rev)) => Some(SideSource::Revision(rev.clone())),
        (None, None) => None,
        (Some(_), Some(_)) => {
            return Err(
                Error::usage("--base and --base-export are mutually exclusive")
                    .with_advice("give the base either as a revision or as an export file"),
            )
        }
    };
    let head = match (&args.head_export, &args.head) {
        (Some(file), None) => Some(SideSource::ExportFile(file.clone())),
        (None, Some(rev)) => Some(SideSource::Revision(rev.clone())),
        (None, None) => None,
        (Some(_), Some(_)) => {
            return Err(Error::usage(
                "--head and --head-export are mutually exclusive",
            ))
        }
    };
    Ok((base, head))
}

pub(super) fn gate_options(args: &GateArgs) -> Result<GateOptions, Error> {
    let (base, head) = given_sides(&args.sides)?;
    let base = base.ok_or_else(|| {
        Error::usage("no base to compare against")
            .with_advice("pass --base REV (e.g. --base origin/master) or --base-export FILE")
    })?;
    Ok(GateOptions {
        repo: args.repo.repo.clone(),
        base,
        head: head.unwrap_or(SideSource::WorkingTree),
        server: server_options(&args.server)?,
        judge: judge_options(&args.judge)?,
        report_dir: report_dir(&args.report_dir, &args.repo),
        share_identical: !args.independent_sides,
        decision_rule: args.rule.decision_rule.map(Into::into),
        tool_drop: tool_drop(args.rule.tool_drop)?,
        max_listing_growth: max_listing_growth(args.rule.max_listing_growth)?,
        full_report: args.full_report,
        eval: None,
        suggest: gate_suggest_options(args)?,
        settings_rev: args.rule.settings_rev.clone(),
        settings_file: None,
        answer_cache: AnswerCacheChoice::from_args(
            args.answer_cache.as_deref(),
            args.no_answer_cache,
        ),
    })
}

/// `--suggest`: the rewrites' cost cap, and the working tree for suggestion blocks when it is
/// the head.
fn gate_suggest_options(args: &GateArgs) -> Result<Option<crate::suggest::SuggestOptions>, Error> {
    if !args.suggest {
        if args.suggest_max_calls.is_some() {
            return Err(Error::usage("--suggest-max-calls needs --suggest")
                .with_advice("add --suggest, or drop --suggest-max-calls"));
        }
        return Ok(None);
    }
    let max_calls = args
        .suggest_max_calls
        .unwrap_or(crate::suggest::DEFAULT_MAX_CALLS);
    if max_calls == 0 {
        return Err(
            Error::usage("--suggest-max-calls must be at least 1").with_advice(
                "give the rewrites a budget of judge calls, e.g. --suggest-max-calls 40",
            ),
        );
    }
    let head_is_working_tree = args.sides.head.is_none()
        && args.sides.head_export.is_none()
        && args.sides.head_exports.is_none();
    let source = if head_is_working_tree {
        source_tree_of(&OneSideArgs::default(), &args.repo)?
    } else {
        None
    };
    Ok(Some(crate::suggest::SuggestOptions { max_calls, source }))
}

fn tool_drop(value: Option<f64>) -> Result<Option<tdqs_core::arith::Tenths>, Error> {
    value
        .map(|v| {
            crate::config::parse_tool_drop(v).map_err(|m| {
                Error::usage(format!("--tool-drop {m}"))
                    .with_advice("pass e.g. --tool-drop 0.5, or leave it out for the default")
            })
        })
        .transpose()
}

fn max_listing_growth(value: Option<i64>) -> Result<Option<u32>, Error> {
    value
        .map(|v| {
            tdqs_core::cost::parse_growth_percent(v).map_err(|m| {
                Error::usage(format!("--max-listing-growth {m}")).with_advice(
                    "pass e.g. --max-listing-growth 10, or leave it out (the rule is off by \
                     default)",
                )
            })
        })
        .transpose()
}

pub(super) async fn gate_command(args: GateArgs, verbosity: Verbosity) -> Result<Verdict, Error> {
    let progress = Arc::new(StderrProgress::new(verbosity));
    let opts = gate_options(&args)
        .and_then(|mut opts| {
            if let Some(badge) = &args.badge {
                crate::report::badge::check_path(badge)?;
            }
            opts.eval = super::eval_cmd::gate_eval(&args, &opts)?;
            Ok(opts)
        })
        .inspect_err(|_| {
            // A refused run writes no report; an earlier one must not stand in for it.
            crate::report::write::remove_stale(&report_dir(&args.report_dir, &args.repo));
        })?;
    let outcome = gate::run(&opts, progress.clone()).await;
    progress.finish();
    if let (Some(path), Some(_)) = (&args.badge, &outcome.monorepo) {
        // One badge shows one server's mean; a run over several servers has no single mean.
        badge_written(
            path,
            Err(Error::usage(
                "--badge shows one server's mean TDQS; this run gated several servers, so no \
                 badge was written",
            )
            .with_advice("run the gate with one --server NAME to make that server's badge")),
            verbosity,
        );
    }
    if let (Some(path), Some(report)) = (&args.badge, &outcome.report) {
        if outcome.report_error.is_none() {
            if let Some(badge) = tdqs_core::report::badge::for_report(report) {
                badge_written(path, crate::report::badge::write(path, &badge), verbosity);
            }
        }
    }
    Ok(print_outcome(outcome, verbosity))
}

/// `--report-dir`, else `.tool-definition-score` at the root of the repository around `--repo`
/// (or the current folder), else in the current folder when there is no repository.
pub(super) fn report_dir(args: &ReportDirArgs, repo: &RepoArgs) -> PathBuf {
    match &args.report_dir {
        Some(dir) => dir.clone(),
        None => super::repo_root::default_report_dir(repo.repo.as_deref()),
    }
}

/// `check REPORT`: the sides given explicitly (with `--base` alone, the head is the working
/// tree), else the ones the report records.
pub(super) async fn check_command(args: CheckArgs, verbosity: Verbosity) -> Result<Verdict, Error> {
    let (base, head) = given_sides(&args.sides)?;
    let head = match (&base, head) {
        (Some(_), None) => Some(SideSource::WorkingTree),
        (_, head) => head,
    };
    let opts = gate::check::CheckOptions {
        repo: args.repo.repo.clone(),
        base,
        head,
        server: server_options(&args.server)?,
        judge: judge_options(&args.judge)?,
        decision_rule: args.rule.decision_rule.map(Into::into),
        tool_drop: tool_drop(args.rule.tool_drop)?,
        max_listing_growth: max_listing_growth(args.rule.max_listing_growth)?,
        settings_rev: args.rule.settings_rev.clone(),
    };
    let progress = Arc::new(StderrProgress::new(verbosity));
    let outcome = gate::check::run(
        &args.report,
        &opts,
        progress.clone(),
        args.expect_digest.as_deref(),
    )
    .await;
    progress.finish();
    if outcome.verdict != Verdict::Invalid {
        say(verbosity, gate::check::what_check_proves(&outcome));
    }
    Ok(print_outcome(outcome, verbosity))
}

pub(super) async fn calibrate_command(
    args: CalibrateArgs,
    verbosity: Verbosity,
) -> Result<Verdict, Error> {
    let opts = crate::calibrate::CalibrateOptions {
        capture: args.capture,
        runs: args.runs,
        judge: judge_options(&args.judge)?,
        report_dir: report_dir(&args.report_dir, &args.repo),
    };
    let progress = Arc::new(StderrProgress::new(verbosity));
    let done = crate::calibrate::run(&opts, progress.clone()).await;
    progress.finish();
    crate::calibrate::print_summary(&done?, &mut std::io::stdout())
}

pub(super) fn print_outcome(outcome: gate::Outcome, verbosity: Verbosity) -> Verdict {
    let reason = outcome
        .report
        .as_ref()
        .map(|r| r.reason.clone())
        .or_else(|| outcome.monorepo.as_ref().map(|r| r.reason.clone()))
        .or_else(|| outcome.error.as_ref().map(|e| e.summary()))
        .unwrap_or_default();
    // Several servers: each one that could not be decided says why, with its advice.
    for server in outcome.monorepo.iter().flat_map(|r| &r.servers) {
        if let Some(e) = &server.report.error {
            let mut text = format!("tdqs-gate: server `{}`: INVALID: {}", server.name, e.cause);
            if let Some(advice) = &e.advice {
                text.push_str(&format!("\n  advice: {advice}"));
            }
            let _ = writeln!(std::io::stderr(), "{}", redact(&text));
        }
    }
    // The report's warnings (a line the server printed outside the protocol, a server killed
    // after its grace, a working tree that was not gated) are said here too, not only in files.
    for warning in outcome.report.iter().flat_map(|r| &r.warnings) {
        say(verbosity, &format!("tdqs-gate: warning: {warning}"));
    }
    for server in outcome.monorepo.iter().flat_map(|r| &r.servers) {
        for warning in &server.report.warnings {
            say(
                verbosity,
                &format!("tdqs-gate: server `{}`: warning: {warning}", server.name),
            );
        }
    }
    if let Some(w) = &outcome.written {
        say(
            verbosity,
            &format!(
                "tdqs-gate: report written to {} (page to open: {})",
                w.json.display(),
                w.html.display()
            ),
        );
    }
    if let Some(e) = &outcome.report_error {
        print_invalid(e);
    }
    match outcome.verdict {
        Verdict::Invalid => {
            if let Some(e) = &outcome.error {
                print_invalid(e);
            } else if outcome.report_error.is_none() {
                let _ = writeln!(std::io::stderr(), "INVALID: {}", redact(&reason));
            }
        }
        verdict => {
            let _ = writeln!(std::io::stdout(), "{verdict}: {}", redact(&reason));
        }
    }
    outcome.verdict
}

pub(super) async fn export_command(
    args: ExportArgs,
    verbosity: Verbosity,
) -> Result<Verdict, Error> {
    let mut server = server_options(&args.server)?;
    server.settings_rev = args.settings_rev.clone();
    if args.list_servers {
        // The set of servers is a setting: the settings revision's when given.
        let names = gate::export_dirs::list_servers(
            args.repo.repo.as_deref(),
            args.settings_rev.as_deref().or(args.rev.as_deref()),
            &server,
        )?;
        let mut out = std::io::stdout();
        for name in names {
            let _ = writeln!(out, "{name}");
        }
        return Ok(Verdict::Pass);
    }
    let source = match &args.rev {
        Some(rev) => SideSource::Revision(rev.clone()),
        None => SideSource::WorkingTree,
    };
    let progress = StderrProgress::new(verbosity);
    let export =
        gate::sides::export_one(args.repo.repo.as_deref(), &source, &server, &[], &progress)
            .await?;
    match &args.output {
        Some(path) => {
            crate::export::file::write_export(path, &export)?;
            say(
                verbosity,
                &format!(
                    "tdqs-gate: exported {} tools (set hash {}) to {}",
                    export.tools.len(),
                    export.set_hash,
                    path.display()
                ),
            );
        }
        None => {
            let text = serde_json::to_string_pretty(&export)
                .map_err(|e| Error::internal(format!("cannot serialise the export: {e}")))?;
            let _ = writeln!(std::io::stdout(), "{text}");
        }
    }
    Ok(Verdict::Pass)
}

/// Says where the badge went, or why it could not be written (a warning: the verdict and the
/// report stand).
fn badge_written(path: &Path, result: Result<(), Error>, verbosity: Verbosity) {
    match result {
        Ok(()) => say(
            verbosity,
            &format!("tdqs-gate: badge written to {}", path.display()),
        ),
        Err(e) => {
            let _ = writeln!(
                std::io::stderr(),
                "tdqs-gate: warning: {}",
                redact(&e.summary())
            );
        }
    }
}

pub(super) async fn score_command(args: ScoreArgs, verbosity: Verbosity) -> Result<Verdict, Error> {
    if let Some(badge) = &args.badge {
        crate::report::badge::check_path(badge)?;
    }
    let progress = Arc::new(StderrProgress::new(verbosity));
    let judge = judge_options(&args.judge)?;
    let secrets = crate::judge::build::secret_env_names(&judge);
    let export = one_export(
        &args.side,
        &args.repo,
        &args.server,
        &secrets,
        progress.as_ref(),
    )
    .await?;
    let scored = crate::score::session::score_once(&export, &judge, progress.clone()).await;
    progress.finish();
    let scored = scored?;
    if let Some(path) = &args.badge {
        let badge = tdqs_core::report::badge::for_mean(scored.side.rollups.mean_tdqs);
        badge_written(path, crate::report::badge::write(path, &badge), verbosity);
    }
    let text = if args.json {
        serde_json::to_string_pretty(&scored)
            .map_err(|e| Error::internal(format!("cannot serialise the scores: {e}")))?
    } else {
        tdqs_core::report::text::render_side(&scored)
    };
    let _ = writeln!(std::io::stdout(), "{}", redact(&text));
    Ok(Verdict::Pass)
}

pub(super) async fn suggest_command(
    args: SuggestArgs,
    verbosity: Verbosity,
) -> Result<Verdict, Error> {
    let progress = Arc::new(StderrProgress::new(verbosity));
    let judge = judge_options(&args.judge)?;
    let secrets = crate::judge::build::secret_env_names(&judge);
    let source = match &args.source {
        Some(dir) if !dir.is_dir() => {
            return Err(
                Error::usage(format!("--source {} is not a folder", dir.display()))
                    .with_advice("pass the root of the server's source tree"),
            )
        }
        Some(dir) => Some(dir.clone()),
        None => source_tree_of(&args.side, &args.repo)?,
    };
    let export = one_export(
        &args.side,
        &args.repo,
        &args.server,
        &secrets,
        progress.as_ref(),
    )
    .await?;
    let opts = crate::suggest::SuggestOptions {
        max_calls: args.max_calls,
        source,
    };
    let suggested =
        crate::suggest::suggest_on_demand(&export, &args.tool, &judge, &opts, progress.clone())
            .await;
    progress.finish();
    let suggested = suggested?;
    let text = if args.json {
        serde_json::to_string_pretty(&suggested)
            .map_err(|e| Error::internal(format!("cannot serialise the rewrites: {e}")))?
    } else {
        tdqs_core::report::doc::markdown::render(&tdqs_core::report::suggestions::blocks(
            &suggested, 2,
        ))
    };
    let _ = writeln!(std::io::stdout(), "{}", redact(&text));
    Ok(Verdict::Pass)
}

/// The tree whose source lines match what was exported: the working tree when it is what was
/// exported (an export file or another revision may not match it).
fn source_tree_of(
    side: &OneSideArgs,
    repo: &RepoArgs,
) -> Result<Option<std::path::PathBuf>, Error> {
    if side.export.is_some() || side.rev.is_some() {
        return Ok(None);
    }
    let repo = repo.repo.as_deref();
    if crate::revision::in_repository(repo) {
        return Ok(crate::revision::Repo::open_without_pruning(repo)?
            .workdir()
            .map(std::path::Path::to_path_buf));
    }
    Ok(repo
        .map(std::path::Path::to_path_buf)
        .or_else(|| std::env::current_dir().ok()))
}

/// The tree `lint --sarif` finds source lines in: `--source`, else the working tree when that
/// is what was linted (an export file or another revision may not match it).
fn lint_source_tree(args: &LintArgs) -> Result<Option<std::path::PathBuf>, Error> {
    if let Some(dir) = &args.source {
        return Ok(Some(dir.clone()));
    }
    source_tree_of(&args.side, &args.repo)
}

pub(super) async fn lint_command(args: LintArgs, verbosity: Verbosity) -> Result<Verdict, Error> {
    use crate::lint::{self, FailOn};
    if args.source.is_some() && !args.sarif {
        // Refused rather than ignored: only SARIF carries source lines today.
        return Err(Error::usage(
            "--source anchors SARIF findings on source lines and needs --sarif",
        )
        .with_advice("add --sarif, or drop --source"));
    }
    let (mut config, config_path) = lint_config(args.repo.repo.as_deref())?;
    config.restrict(&args.select, &args.ignore)?;
    // Lint also reads the plain tool lists other tools write; the gate reads only its exports.
    // Both, and a baseline, are read within the listing limit in force: the command line's,
    // else the one tdqs-gate.toml gives the server lint would start (`--rev`'s, else the
    // working folder's).
    // Read only when a file is given: a bad `--rev` is then reported by its export.
    let file_limit = || -> Result<u64, Error> {
        let settings = super::resolve::listing_settings(&args.repo, args.side.rev.as_deref())?;
        Ok(super::resolve::given_file_limit(
            &args.server,
            settings.as_ref(),
        ))
    };
    let export = match args.side.export.as_deref() {
        Some(path) => crate::export::tool_list::read_export_or_tool_list(path, file_limit()?)?,
        None => {
            one_export(
                &args.side,
                &args.repo,
                &args.server,
                &[],
                &StderrProgress::new(verbosity),
            )
            .await?
        }
    };
    let mut report = lint::lint_export(&export, &config);
    report.artifact = args
        .side
        .export
        .as_ref()
        .map(|p| p.display().to_string())
        .or(config_path);
    let baseline = match &args.baseline {
        Some(path) => Some(super::lint_baseline::read(path, &config, file_limit()?)?),
        None => None,
    };
    lint::baseline::apply(
        &mut report,
        &config.suppressions,
        baseline.as_ref().map(|(file, name)| (file, name.clone())),
    );
    let text = if args.json {
        lint::render_json(&report)
    } else if args.markdown {
        lint::render_markdown(&report)
    } else if args.sarif {
        match lint_source_tree(&args)? {
            Some(tree) => {
                let locations = crate::locate::locate(&tree, &export)?;
                lint::render_sarif_located(&report, Some(&locations))
            }
            None => lint::render_sarif(&report),
        }
    } else {
        lint::render_text(&report)
    };
    let _ = write!(std::io::stdout(), "{}", redact(&text));
    if let Some(path) = &args.write_baseline {
        let count = super::lint_baseline::write(path, &report)?;
        say(
            verbosity,
            &format!(
                "tdqs-gate lint: wrote {count} findings to the baseline {}",
                path.display()
            ),
        );
        // Recording findings as known accepts them for this run.
        return Ok(Verdict::Pass);
    }
    let fail_on = match args.fail_on {
        Some(FailOnArg::Error) => FailOn::Error,
        Some(FailOnArg::Warning) => FailOn::Warning,
        Some(FailOnArg::Info) => FailOn::Info,
        Some(FailOnArg::Never) => FailOn::Never,
        None => config.fail_on.unwrap_or(FailOn::Error),
    };
    if let Some(n) = args.fail_under {
        if !(0.0..=100.0).contains(&n) {
            return Err(Error::usage(format!("--fail-under {n} is outside 0–100")));
        }
    }
    let fail_under = args.fail_under.or(config.fail_under);
    if lint::should_fail(&report, fail_on, fail_under) {
        // Lint's own "block": findings at or above the threshold, or a scorecard below it.
        say(verbosity, "tdqs-gate lint: failed its threshold");
        return Ok(Verdict::Block);
    }
    Ok(Verdict::Pass)
}

pub(super) fn install_hook_command(args: HookArgs) -> Result<Verdict, Error> {
    if let Some(extra) = args.args.as_deref() {
        hook_args_parse(extra)?;
    }
    let installed = crate::gate::hook::install(
        args.repo.repo.as_deref(),
        args.base.as_deref(),
        args.strict,
        args.args.as_deref(),
        args.force,
    )?;
    let chosen = installed
        .chosen
        .map(|how| format!(": {how}"))
        .unwrap_or_default();
    let _ = writeln!(
        std::io::stdout(),
        "installed the pre-push hook at {} (base {}{chosen}{})",
        installed.path.display(),
        installed.base,
        if args.strict { ", strict" } else { "" }
    );
    Ok(Verdict::Pass)
}

/// Refuses `install-hook --args` that the gate would refuse at every push: such a hook exits
/// INVALID each time, which a non-strict hook lets through.
fn hook_args_parse(extra: &str) -> Result<(), Error> {
    use clap::Parser;
    let words = shlex::split(extra).ok_or_else(|| {
        Error::usage(format!("--args {extra:?} is not valid shell quoting")).with_advice(
            "quote the gate flags as you would on a command line, e.g. --args \"--judge static\"",
        )
    })?;
    let argv = ["tdqs-gate", "--base", "HEAD", "--head", "HEAD"]
        .into_iter()
        .map(str::to_string)
        .chain(words);
    Cli::try_parse_from(argv).map(drop).map_err(|e| {
        let first = e.to_string();
        let first = first
            .lines()
            .next()
            .unwrap_or("")
            .trim_start_matches("error: ");
        Error::usage(format!(
            "the gate would refuse the hook's --args at every push: {first}"
        ))
        .with_advice("fix the flags (see tdqs-gate --help); the hook was not installed")
    })
}
