//! Several servers of one repository gated in one run: the `[[server]]` tables of
//! `tdqs-gate.toml` (all of them, or those named by `--server NAME`), or several `--server NAME`
//! entries of a host manifest.
//!
//! The base is checked out once and the head's tree read once for all servers. Each server is
//! then exported, hashed, scored and decided exactly as a single server is, one server after the
//! other (both sides of one server at the same time, as for a single server). The judge is
//! built and checked (its preflight) once before any export, and opened (prompt fetch) only when
//! the first changed server needs it; later servers share that session, so an unchanged server is PASS with no model call whatever
//! the others did. A server that fails is INVALID in its own report and the next server is still
//! gated; one report holds them all (see [`tdqs_core::report::monorepo`]).

use std::sync::Arc;

use super::sides::{self, Trees};
use super::{Draft, GateOptions, Outcome, ServerOptions};
use crate::config::{is_valid_server_name, Config};
use crate::progress::{Progress, ProgressEvent};
use crate::report::write;
use crate::revision::Side;
use crate::score::session::JudgeSlot;
use tdqs_core::error::Error;
use tdqs_core::exit::Verdict;
use tdqs_core::report::monorepo::{MonorepoReport, ServerReport};
use tdqs_core::report::{Report, ReportError};
use tdqs_core::spec::pins::Pins;

/// One server to gate: its name, the configuration it is started from (its `[[server]]` table
/// as the `[server]` table) and the command-line options for it.
#[derive(Debug, Clone)]
pub struct Target {
    pub name: String,
    /// The base's configuration of this server: its settings.
    config: Option<Config>,
    server: ServerOptions,
    /// `name` names a `[[server]]` table (not a host manifest entry).
    table: bool,
}

/// The servers to gate when the run covers several, `None` for a single-server run: the
/// configuration has `[[server]]` tables, or `--server` is given more than once.
pub fn targets(
    config: Option<&Config>,
    server: &ServerOptions,
) -> Result<Option<Vec<Target>>, Error> {
    let mut given: Vec<String> = Vec::new();
    for name in &server.servers {
        if given.contains(name) {
            return Err(Error::usage(format!("--server {name} is given twice"))
                .with_advice("name each server once"));
        }
        given.push(name.clone());
    }
    match config.filter(|c| !c.servers.is_empty()) {
        Some(config) => {
            if server.command.is_some() || server.url.is_some() {
                return Err(Error::usage(format!(
                    "--command and --url start one server, but {} has [[server]] tables ({})",
                    config.path.display(),
                    config.server_names().join(", ")
                ))
                .with_advice(
                    "drop --command/--url and let each [[server]] table say how its server \
                     starts; --server NAME gates only the tables named",
                ));
            }
            let names = if given.is_empty() {
                config.server_names()
            } else {
                given
            };
            let mut targets = Vec::with_capacity(names.len());
            for name in names {
                let one = config
                    .for_server(&name)
                    .ok_or_else(|| sides::unknown_server(&name, config))?;
                let mut options = server.clone();
                options.server = None;
                options.servers.clear();
                targets.push(Target {
                    name,
                    config: Some(one),
                    server: options,
                    table: true,
                });
            }
            Ok(Some(targets))
        }
        None if given.len() > 1 => {
            let mut targets = Vec::with_capacity(given.len());
            for name in given {
                if !is_valid_server_name(&name) {
                    return Err(Error::usage(format!(
                        "--server {name:?}: to gate several manifest entries in one run, each \
                         name must be 1 to 64 letters, digits, `-`, `_` or `.` (it names the \
                         server in the report and in the GitHub outputs)"
                    ))
                    .with_advice(
                        "rename the entry, or write [[server]] tables in tdqs-gate.toml with \
                         names of your choice",
                    ));
                }
                let mut options = server.clone();
                options.server = Some(name.clone());
                options.servers.clear();
                targets.push(Target {
                    name,
                    config: config.cloned(),
                    server: options,
                    table: false,
                });
            }
            Ok(Some(targets))
        }
        None => Ok(None),
    }
}

/// Runs the gate over several servers and writes one report.
pub(super) async fn run(
    opts: &GateOptions,
    progress: Arc<dyn Progress>,
    pins: Pins,
    trees: Trees,
    targets: Vec<Target>,
) -> Outcome {
    // One case suite names one server's tools: a selection check over several servers would
    // judge every server by another's cases.
    if opts.eval.is_some() && targets.len() > 1 {
        drop(trees);
        return failed(
            opts,
            eval_over_several("this run gates several ([[server]] tables or several --server)"),
        );
    }
    let mut judge = JudgeSlot::new(crate::judge::build::build(&opts.judge, &pins));
    if let Err(e) = super::check_judge_first(&mut judge, progress.as_ref()).await {
        drop(trees);
        return failed(opts, e);
    }
    let secrets = crate::judge::build::secret_env_names(&opts.judge);
    let Trees {
        base,
        head,
        config: head_config,
        base_config,
        base_label,
        tree_roots,
        ..
    } = trees;
    let (Some(base), Some(head)) = (base, head) else {
        return failed(
            opts,
            Error::internal("a monorepo run needs both sides' trees"),
        );
    };
    let run = RunConfigs {
        head: head_config.as_ref(),
        base_label: &base_label,
        tree_roots: &tree_roots,
        settings_changed: super::base_settings::changed_settings_warning(
            &super::base_settings::changed_settings(base_config.as_ref(), head_config.as_ref()),
            &base_label,
        ),
    };
    let head_note = super::uncommitted_head_note(opts);
    let mut servers = Vec::with_capacity(targets.len());
    for target in &targets {
        progress.event(ProgressEvent::Note(format!(
            "server `{}`: exporting the base and the head",
            target.name
        )));
        let mut draft = Draft::new(pins.clone());
        draft.warnings.extend(head_note.clone());
        draft.settings_changed = run.settings_changed.clone();
        let decided = one_server(
            opts,
            &progress,
            &mut draft,
            (&base, &head),
            &run,
            target,
            &secrets,
            &mut judge,
        )
        .await;
        let report = server_report(draft, decided, opts);
        progress.event(ProgressEvent::Note(format!(
            "server `{}`: {}",
            target.name, report.decision
        )));
        servers.push(ServerReport {
            name: target.name.clone(),
            report,
        });
    }
    // The worktree is removed now; failing to remove it is a defect the run reports.
    let closed = base.close().and(head.close());
    let mut report = MonorepoReport::new(servers);
    if let Err(e) = closed {
        report.decision = Verdict::Invalid;
        report.exit_code = Verdict::Invalid.code();
        report.reason = e.summary();
        report.error = Some(report_error(&e));
    }
    finish(opts, report)
}

/// The selection check refused over several servers: one case suite names one server's tools,
/// so every server would be judged by another's cases. `what` says where the servers came from.
pub(super) fn eval_over_several(what: &str) -> Error {
    Error::usage(format!(
        "the selection check (--eval or [eval]) covers one server, and {what}"
    ))
    .with_advice(
        "gate the server the cases are written for on its own, with --server NAME and --eval, \
         and the others without --eval",
    )
}

/// One server's report from its decision or its failure, a large server's unchanged tools
/// summarised as in a single-server report.
pub(super) fn server_report(
    draft: Draft,
    decided: Result<super::Decided, Error>,
    opts: &GateOptions,
) -> Report {
    let mut report = match decided {
        Ok((verdict, reason, medians)) => draft.report(verdict, reason, medians, None),
        Err(e) => draft.report(Verdict::Invalid, e.summary(), None, Some(&e)),
    };
    if !opts.full_report {
        tdqs_core::report::summary::summarise(&mut report);
    }
    report
}

fn report_error(e: &Error) -> ReportError {
    ReportError {
        stage: e.stage,
        cause: e.cause.clone(),
        advice: e.advice.clone(),
    }
}

/// An INVALID run over several servers that gated none of them (an unknown `--server NAME`).
pub(super) fn failed(opts: &GateOptions, e: Error) -> Outcome {
    let report = MonorepoReport::failed(report_error(&e), e.summary());
    let mut outcome = finish(opts, report);
    outcome.error = Some(e);
    outcome
}

/// What every server of a run shares: the head's configuration (its launch plans), where the
/// settings came from, the working tree no plan may name, and the ignored settings' warning.
pub(crate) struct RunConfigs<'a> {
    pub head: Option<&'a Config>,
    pub base_label: &'a str,
    pub tree_roots: &'a [std::path::PathBuf],
    pub settings_changed: Option<String>,
}

/// Exports, checks and decides one server in the shared trees.
#[expect(clippy::too_many_arguments)]
async fn one_server(
    opts: &GateOptions,
    progress: &Arc<dyn Progress>,
    draft: &mut Draft,
    (base, head): (&Side, &Side),
    run: &RunConfigs<'_>,
    target: &Target,
    secrets: &[String],
    judge: &mut JudgeSlot,
) -> Result<super::Decided, Error> {
    let prepared = prepare(target, run, (base, head), secrets)?;
    let (b, h) = export_pair(&prepared, (base, head), progress.as_ref()).await?;
    let unchanged = super::record_sides(draft, b, h)?;
    if !unchanged {
        progress.event(ProgressEvent::Note(format!(
            "server `{}`: the definitions differ: exporting each side again to check its \
             listing is stable",
            target.name
        )));
        let (b, h) = export_pair(&prepared, (base, head), progress.as_ref()).await?;
        super::check_stable(draft, &b, &h)?;
    }
    let decided =
        super::decide_recorded(opts, Arc::clone(progress), draft, unchanged, judge).await?;
    // Only ever one server here (several are refused with a selection check, above).
    super::after_decision(opts, progress.as_ref(), draft, decided).await
}

/// How one server of the run is started.
pub(super) struct Prepared {
    /// The server's name, before `base`/`head` in progress lines.
    name: String,
    base_plan: crate::export::launch::LaunchPlan,
    head_plan: crate::export::launch::LaunchPlan,
    probe: tdqs_core::export::ProbeProfile,
    decision: crate::config::DecisionConfig,
    blind: Option<String>,
    settings_changed: Option<String>,
}

/// The launch plans of one server: the base's from its own table, the head's from the head's
/// table of that name, both under the base's settings and the command line.
pub(super) fn prepare(
    target: &Target,
    run: &RunConfigs<'_>,
    (base, head): (&Side, &Side),
    secrets: &[String],
) -> Result<Prepared, Error> {
    let head_config = if target.table {
        super::base_settings::head_plan_for(run.head, Some(&target.name))?
    } else {
        super::base_settings::head_plan_for(run.head, None)?
    };
    let plans = sides::plan_sides(
        target.config.as_ref(),
        head_config.as_ref(),
        (Some(&base.root), Some(&head.root)),
        &target.server,
        secrets,
        run.tree_roots,
        run.base_label,
    )?;
    let (Some(base_plan), Some(head_plan)) = (plans.base, plans.head) else {
        return Err(Error::internal("a monorepo server needs both sides' plans"));
    };
    for plan in [&base_plan, &head_plan] {
        if let Some(url) = plan.fixed_url() {
            return Err(sides::fixed_url_error(url, plan.origin()));
        }
    }
    let blind = head_plan.blind_to_tree(&head.root);
    Ok(Prepared {
        name: target.name.clone(),
        base_plan,
        head_plan,
        probe: plans.probe,
        decision: plans.decision,
        blind,
        settings_changed: run.settings_changed.clone(),
    })
}

/// Both sides' exports of one server, from the shared trees (which stay).
pub(super) async fn export_pair(
    prepared: &Prepared,
    (base, head): (&Side, &Side),
    progress: &dyn Progress,
) -> Result<(sides::SideExport, sides::SideExport), Error> {
    let probe = &prepared.probe;
    let name = Some(prepared.name.as_str());
    let (b, h) = tokio::join!(
        sides::export_in(
            base,
            &prepared.base_plan,
            probe,
            progress,
            sides::SideRole::Base,
            name
        ),
        sides::export_in(
            head,
            &prepared.head_plan,
            probe,
            progress,
            sides::SideRole::Head,
            name
        ),
    );
    // Both servers are stopped: nothing they left running may outlive their export.
    crate::platform::harden::end_detached();
    let temporary = |side: &Side| side.is_temporary().then(|| side.root.clone());
    let b = b
        .map_err(|e| sides::reproducible(e, temporary(base).as_deref(), base.commit.as_deref()))
        .map_err(|e| e.context("base"))?;
    let mut h = h
        .map_err(|e| sides::reproducible(e, temporary(head).as_deref(), head.commit.as_deref()))
        .map_err(|e| e.context("head"))?;
    h.decision = prepared.decision;
    h.blind = prepared.blind.clone();
    h.settings_changed = prepared.settings_changed.clone();
    Ok((b, h))
}

/// Writes the report (every run writes one, an INVALID one included) and the GitHub outputs.
pub(super) fn finish(opts: &GateOptions, report: MonorepoReport) -> Outcome {
    let mut outcome = Outcome {
        verdict: report.decision,
        report: None,
        monorepo: None,
        written: None,
        error: None,
        report_error: None,
    };
    match write::write_monorepo_report(&opts.report_dir, &report) {
        Ok(written) => {
            if let Err(e) = write::github_monorepo_outputs(&report, Some(&written)) {
                outcome.report_error = Some(e);
            }
            outcome.written = Some(written);
        }
        Err(e) => {
            let _ = write::github_monorepo_outputs(&report, None);
            outcome.report_error = Some(e);
        }
    }
    if outcome.report_error.is_some() && outcome.verdict != Verdict::Invalid {
        // The files just written say PASS or BLOCK, but the run ends INVALID: they go.
        write::remove_stale(&opts.report_dir);
        outcome.written = None;
        outcome.verdict = Verdict::Invalid;
    }
    outcome.monorepo = Some(report);
    outcome
}
