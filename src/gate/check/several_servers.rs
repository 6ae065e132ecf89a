//! `--check` of a report over several servers: from one pair of trees, or from folders of
//! export files, each server's report checked as a single one.

use super::*;

/// `--check` of a report over several servers: the whole (labels, names, the overall verdict
/// and reason from the servers'), each server's report as a single one is checked, then each
/// server's current exports from one pair of trees.
pub(super) async fn check_monorepo(
    report: &MonorepoReport,
    opts: &CheckOptions,
    progress: Arc<dyn Progress>,
) -> Result<(), Error> {
    let pins = crate::spec::load_pins(opts.judge.pins.as_deref())?;
    same_writer(report.schema_version, &report.generator)?;
    if report.decision == Verdict::Invalid || report.error.is_some() {
        return Err(Error::new(
            Stage::Check,
            format!("the saved report is itself INVALID: {}", report.reason),
        )
        .with_advice("an INVALID run decided nothing; run the gate again"));
    }
    if report.servers.is_empty() {
        return Err(differs("the report names no server"));
    }
    let mut names: Vec<&str> = Vec::new();
    for server in &report.servers {
        if !crate::config::is_valid_server_name(&server.name)
            || names.contains(&server.name.as_str())
        {
            return Err(differs(format!(
                "the server name {:?} is not valid or not unique",
                server.name
            )));
        }
        names.push(&server.name);
        let context = format!("server `{}`", server.name);
        check_report_contents(&server.report, &pins).map_err(|e| e.context(&context))?;
        // A summarised report is scored again once its fresh exports are known (below).
        if server.report.omitted.is_none() {
            rescore_static(&server.report, &pins)
                .await
                .map_err(|e| e.context(&context))?;
        }
    }
    let decision = monorepo::overall(report.servers.iter().map(|s| s.report.decision));
    if report.decision != decision || report.exit_code != decision.code() {
        return Err(differs(format!(
            "the recorded overall decision {} (exit code {}) does not follow from the servers', which give {decision}",
            report.decision, report.exit_code
        )));
    }
    let reason = monorepo::overall_reason(&report.servers);
    if report.reason != reason {
        return Err(differs(format!(
            "the recorded overall reason does not follow from the servers'; it should read: {reason}"
        )));
    }
    if report.scored != report.servers.iter().any(|s| s.report.scored) {
        return Err(differs(
            "the report's overall `scored` does not follow from the servers'",
        ));
    }

    // The current exports: both sides checked out once, each server exported from them.
    let first = &report.servers[0].report;
    let mut current = opts.exporting(
        from_report(
            first.base_revision.as_deref(),
            first.base_commit.as_deref(),
            opts.base.as_ref(),
        )?,
        from_report(
            first.head_revision.as_deref(),
            first.head_commit.as_deref(),
            opts.head.as_ref(),
        )?,
    );
    let settings = crate::gate::base_settings::SettingsSource::of(&current);
    let config = settings.config(current.repo.as_deref())?;
    for server in &report.servers {
        required_rule(
            &server.report,
            &pins,
            &current,
            config.as_ref(),
            &settings.label(),
        )
        .map_err(|e| e.context(format!("server `{}`", server.name)))?;
        super::growth::required_growth(
            &server.report,
            current
                .max_listing_growth
                .or(config.as_ref().and_then(|c| c.decision.max_listing_growth)),
            &settings.label(),
        )
        .map_err(|e| e.context(format!("server `{}`", server.name)))?;
    }
    every_configured_server(report, config.as_ref(), &opts.server, &settings.label())?;
    if let (SideSource::ExportDir(_), SideSource::ExportDir(_)) = (&current.base, &current.head) {
        return check_from_folders(report, &pins, &current).await;
    }
    if matches!(current.base, SideSource::ExportFile(_))
        || matches!(current.head, SideSource::ExportFile(_))
    {
        return Err(Error::usage(
            "a report over several servers is checked against revisions, not export files",
        )
        .with_advice("pass --base and --head, or let the report's revisions be used"));
    }
    current.server.servers = names.iter().map(|n| n.to_string()).collect();
    current.server.server = match names.as_slice() {
        [one] => Some(one.to_string()),
        _ => None,
    };
    progress.event(ProgressEvent::Note(
        "exporting the current base and head of each server".to_string(),
    ));
    let trees = crate::gate::sides::open_trees(&current)?;
    let targets = crate::gate::monorepo::targets(trees.base_config.as_ref(), &current.server)?
        .ok_or_else(|| {
            differs("the configuration no longer names several servers ([[server]] tables)")
        })?;
    let run = crate::gate::monorepo::RunConfigs {
        head: trees.config.as_ref(),
        base_label: &trees.base_label,
        tree_roots: &trees.tree_roots,
        settings_changed: None,
    };
    let secrets = crate::judge::build::secret_env_names(&opts.judge);
    let (Some(base), Some(head)) = (trees.base.as_ref(), trees.head.as_ref()) else {
        return Err(Error::internal("no trees to export from"));
    };
    for (target, server) in targets.iter().zip(&report.servers) {
        let context = format!("server `{}`", server.name);
        let prepared = crate::gate::monorepo::prepare(target, &run, (base, head), &secrets)
            .map_err(|e| e.context(&context))?;
        let (b, h) = crate::gate::monorepo::export_pair(&prepared, (base, head), progress.as_ref())
            .await
            .map_err(|e| e.context(&context))?;
        fresh_exports_match(&server.report, &pins, &b.export, &h.export)
            .await
            .map_err(|e| e.context(&context))?;
        super::growth::cost_matches(&server.report, &b.export, &h.export)
            .map_err(|e| e.context(&context))?;
    }
    Ok(())
}

/// A report over several servers must hold every server the base configures (its
/// `[[server]]` tables, or those the check's `--server` flags name): deleting a server that
/// BLOCKs from the report must not leave the rest to PASS.
fn every_configured_server(
    report: &MonorepoReport,
    config: Option<&crate::config::Config>,
    server: &super::ServerOptions,
    source: &str,
) -> Result<(), Error> {
    let required: Vec<String> = if !server.servers.is_empty() {
        server.servers.clone()
    } else {
        match config {
            Some(c) if !c.servers.is_empty() => c.server_names(),
            _ => return Ok(()),
        }
    };
    let recorded: Vec<&str> = report.servers.iter().map(|s| s.name.as_str()).collect();
    if let Some(missing) = required.iter().find(|n| !recorded.contains(&n.as_str())) {
        return Err(differs(format!(
            "the report has no server `{missing}`, which {source} configures: every configured \
             server is re-checked, and a report without one is not accepted"
        )));
    }
    if let Some(extra) = recorded.iter().find(|n| !required.iter().any(|r| r == *n)) {
        return Err(differs(format!(
            "the report has a server `{extra}` that {source} does not configure"
        )));
    }
    Ok(())
}

/// `--check` of a report over several servers against folders of export files
/// (`--base-exports`/`--head-exports`): the folders must hold exactly the report's servers, and
/// each server's exports must be the recorded ones.
async fn check_from_folders(
    report: &MonorepoReport,
    pins: &Pins,
    current: &GateOptions,
) -> Result<(), Error> {
    let mut given = current.clone();
    given.server.servers.clear();
    let folders = crate::gate::export_dirs::open(&given)?;
    let recorded: Vec<String> = report.servers.iter().map(|s| s.name.clone()).collect();
    let mut sorted = recorded.clone();
    sorted.sort();
    if folders.names != sorted {
        return Err(differs(format!(
            "the export folders hold the servers {} but the report has {}",
            folders.names.join(", "),
            recorded.join(", ")
        )));
    }
    for server in &report.servers {
        let context = format!("server `{}`", server.name);
        let (b, h, _) = crate::gate::export_dirs::sides_of(
            &server.name,
            folders.base.get(&server.name),
            folders.head.get(&server.name),
            folders.file_limit,
        )
        .map_err(|e| e.context(&context))?;
        fresh_exports_match(&server.report, pins, &b.export, &h.export)
            .await
            .map_err(|e| e.context(&context))?;
        super::growth::cost_matches(&server.report, &b.export, &h.export)
            .map_err(|e| e.context(&context))?;
    }
    Ok(())
}
