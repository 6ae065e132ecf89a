//! Obtaining both sides' exports: export files as given, or revisions checked out into temporary
//! worktrees and their servers started as a host would.
//!
//! One configuration drives both sides: the head's `tdqs-gate.toml` (or manifest, or
//! `--command`), with `{root}` standing for each side's tree. The two servers run at the same
//! time. When their definitions differ, each side is exported a second time to check its
//! listing is stable, from the tree (worktree, scratch copy) its first export set up: the
//! server starts again, its setup commands do not run again. Each worktree is removed as soon
//! as its side is done. Several servers of one
//! repository ([`super::monorepo`]) share one pair of trees (`Trees`, `export_in`), removed
//! when every server is done. Each side's launch plan is made and checked in `sides/plans.rs`.

use std::path::Path;

use crate::config::Config;
use crate::export::client::list_tools_observed;
use crate::export::launch::LaunchPlan;
use crate::progress::{Progress, ProgressEvent};
use crate::revision::{self, Side};
use tdqs_core::error::Error;
use tdqs_core::export::{Export, ExportSource, ProbeProfile};

use super::{GateOptions, ServerOptions, SideSource};

mod plans;
pub(super) use plans::{
    fixed_url_error, one_server_configs, plan_sides, unknown_server, SidePlans,
};
use plans::{plan, plan_under_settings};

/// One side's export and where it came from.
#[derive(Debug, Clone)]
pub(crate) struct SideExport {
    pub export: Export,
    /// The revision as given (`origin/master`), `working tree`, or `None` for an export file.
    pub revision: Option<String>,
    pub commit: Option<String>,
    /// The `[decision]` table of the configuration that drove the run (head side only).
    pub decision: crate::config::DecisionConfig,
    /// Why the launch plan cannot see the side's tree (head side only, when it cannot).
    pub blind: Option<String>,
    /// The settings the head's configuration changes and the run ignored (head side only).
    pub settings_changed: Option<String>,
    /// Where the side's tree defines its tools (head side only, read while the tree exists):
    /// the report links each fallen tool to its line.
    pub locations: Option<tdqs_core::locate::Locations>,
}

/// One side from an export file of at most `limit` bytes ([`export_file_limit`]).
pub(crate) fn read_file_side(path: &Path, limit: u64) -> Result<SideExport, Error> {
    let export = crate::export::file::read_export_within(path, limit)?;
    tdqs_core::digest::verify_export(&export)
        .map_err(|e| e.context(format!("the export file {}", path.display())))?;
    Ok(SideExport {
        revision: export.source.revision.clone(),
        commit: export.source.commit.clone(),
        export,
        decision: Default::default(),
        blind: None,
        settings_changed: None,
        locations: None,
    })
}

/// The most bytes a given export file may hold: three times the listing limit a server would
/// get under these settings ([`crate::export::file::export_file_limit`]): `max_listing_bytes`
/// (`--max-listing-bytes`), else the largest `max-listing-bytes` of the settings' server tables,
/// else the default.
pub(crate) fn export_file_limit(
    max_listing_bytes: Option<usize>,
    settings: Option<&Config>,
) -> u64 {
    let configured = settings
        .into_iter()
        .flat_map(|c| c.server.iter().chain(c.servers.iter().map(|s| &s.server)))
        .filter_map(|s| s.max_listing_bytes)
        .max();
    let listing = max_listing_bytes
        .or(configured)
        .unwrap_or(tdqs_core::export::DEFAULT_MAX_LISTING_BYTES);
    crate::export::file::export_file_limit(listing)
}

/// [`export_file_limit`] under the run's settings (the base revision's, else `--settings-rev`'s,
/// else the defaults), as the sides given as export files are read.
pub(crate) fn export_file_limit_of(opts: &GateOptions) -> Result<u64, Error> {
    let settings = super::base_settings::SettingsSource::of(opts).config(opts.repo.as_deref())?;
    Ok(export_file_limit(
        opts.server.max_listing_bytes,
        settings.as_ref(),
    ))
}

/// Which side of a run an export is for. Passed as a value (not read back out of a progress
/// label) because it decides what the side's server may write.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum SideRole {
    /// The gate's base: reviewed code.
    Base,
    /// The gate's head: the pull request.
    Head,
    /// One side exported on its own (`tdqs-gate export`, `ci export`).
    Alone,
}

impl SideRole {
    /// The side's name in progress events: `base`, `head` or `export`, after the server's name
    /// when a run covers several servers.
    pub(super) fn label(self, server: Option<&str>) -> String {
        let role = match self {
            SideRole::Base => "base",
            SideRole::Head => "head",
            SideRole::Alone => "export",
        };
        match server {
            Some(name) => format!("{name} {role}"),
            None => role.to_string(),
        }
    }

    /// The package cache the side may write: only the gate's base side (reviewed code) shares
    /// it.
    fn cache_use(self) -> crate::platform::sandbox::CacheUse {
        match self {
            SideRole::Base => crate::platform::sandbox::CacheUse::Shared,
            SideRole::Head | SideRole::Alone => crate::platform::sandbox::CacheUse::Private,
        }
    }
}

/// Which export a server's listing is: the side it is for, and the server's name when a run
/// covers several servers (`None` for one).
#[derive(Debug, Clone, Copy)]
pub(super) struct SideId<'a> {
    pub role: SideRole,
    pub server: Option<&'a str>,
}

impl SideId<'_> {
    /// The side of a run with one server.
    pub(super) fn alone(role: SideRole) -> SideId<'static> {
        SideId { role, server: None }
    }

    /// The side's name in progress events ([`SideRole::label`]).
    fn label(self) -> String {
        self.role.label(self.server)
    }
}

/// Starts one side's server and exports its tools; the worktree is removed afterwards.
async fn export_side(
    side: Side,
    plan: &LaunchPlan,
    probe: &ProbeProfile,
    progress: &dyn Progress,
    role: SideRole,
) -> Result<SideExport, Error> {
    let commit = side.commit.clone();
    let temporary_root = side.is_temporary().then(|| side.root.clone());
    let result = export_in(&side, plan, probe, progress, role, None).await;
    // Remove the worktree now, and report a failure to remove it: leaving one behind is a defect.
    let closed = side.close();
    let export =
        result.map_err(|e| reproducible(e, temporary_root.as_deref(), commit.as_deref()))?;
    closed?;
    Ok(export)
}

/// An error's reproduction, rewritten for a temporary worktree that is gone by the time the
/// user reads it: the reproduction recreates it.
pub(super) fn reproducible(
    mut e: Error,
    temporary_root: Option<&Path>,
    commit: Option<&str>,
) -> Error {
    if let (Some(root), Some(commit), Some(cmd)) = (temporary_root, commit, &e.reproduce) {
        let root_text = root.display().to_string();
        if cmd.contains(&root_text) {
            // A folder name of its own: a hand-made `tdqs-gate-*` worktree would look like
            // one of the gate's (it carries no owner marker, so it is never deleted).
            let short = &commit[..commit.len().min(12)];
            let fresh = root
                .with_file_name(format!("tdqs-reproduce-{short}"))
                .display()
                .to_string();
            e.reproduce = Some(format!(
                "git worktree add --detach {fresh} {commit} && {} ; git worktree remove --force {fresh}",
                cmd.replace(&root_text, &fresh)
            ));
        }
    }
    e
}

/// Starts one side's server in `side`'s tree and exports its tools; the tree stays (several
/// servers of a monorepo are exported from one worktree). `server` names the server in
/// progress events when the run covers several.
pub(super) async fn export_in(
    side: &Side,
    plan: &LaunchPlan,
    probe: &ProbeProfile,
    progress: &dyn Progress,
    role: SideRole,
    server: Option<&str>,
) -> Result<SideExport, Error> {
    let tree = RunTree::open(side, plan)?;
    let id = SideId { role, server };
    let result = list_in(side, &tree, plan, probe, progress, id, true).await;
    let closed = tree.close();
    let export = result?;
    closed?;
    Ok(export)
}

/// Where a side's server runs: the side's tree, or a scratch copy of the working tree when
/// setup commands would otherwise change the user's files. Kept between a side's two exports,
/// so the second runs no setup again.
pub(super) struct RunTree {
    scratch: Option<crate::revision::scratch::ScratchCopy>,
    root: std::path::PathBuf,
}

impl RunTree {
    pub(super) fn open(side: &Side, plan: &LaunchPlan) -> Result<RunTree, Error> {
        // Setup commands of the pull request must not change the user's working tree: they run
        // in a scratch copy of it (see crate::revision::scratch) unless setup-in-place says
        // otherwise.
        let scratch = if !side.is_temporary()
            && plan.has_setup()
            && !plan.setup_in_place()
            && git2::Repository::open(&side.root).is_ok()
        {
            match crate::revision::scratch::copy_working_tree(&side.root) {
                Ok(copy) => Some(copy),
                Err(e) => return Err(e.context(format!("copying {}", side.revision_label))),
            }
        } else {
            None
        };
        let root = scratch
            .as_ref()
            .map_or_else(|| side.root.clone(), |copy| copy.root().to_path_buf());
        Ok(RunTree { scratch, root })
    }

    pub(super) fn close(self) -> Result<(), Error> {
        self.scratch.map_or(Ok(()), |copy| copy.close())
    }
}

/// Exports one side from its prepared tree: with `run_setup`, the setup commands first; without,
/// the server alone (the tree was set up by the side's first export).
pub(super) async fn list_in(
    side: &Side,
    tree: &RunTree,
    plan: &LaunchPlan,
    probe: &ProbeProfile,
    progress: &dyn Progress,
    id: SideId<'_>,
    run_setup: bool,
) -> Result<SideExport, Error> {
    let side_name = id.label();
    let label = side.revision_label.clone();
    let commit = side.commit.clone();
    let run_root = tree.root.clone();
    progress.event(ProgressEvent::Note(format!(
        "{side_name}: {}",
        if run_setup && plan.has_setup() {
            "running the setup commands, then starting the server"
        } else {
            "starting the server and listing its tools"
        }
    )));
    let result = async {
        let mut spec = plan.for_side(&run_root)?;
        if !run_setup {
            spec.setup.clear();
        }
        let sandbox = crate::export::process::confine(
            &mut spec,
            &run_root,
            plan.sandbox(),
            plan.package_cache(),
            id.role.cache_use(),
        )?;
        let observe = |event| {
            progress.event(ProgressEvent::Setup {
                side: side_name.clone(),
                event,
            })
        };
        let listing = list_tools_observed(&spec, probe, &observe)
            .await
            .map_err(|e| crate::export::process::explain_hidden_paths(e, &spec))
            .map_err(|e| e.context(format!("exporting {label}")))?;
        let mut warnings: Vec<String> = plan.warnings().to_vec();
        if sandbox.is_some() {
            warnings.extend(plan.sandbox().and_then(|d| d.warning()).map(str::to_string));
        }
        warnings.extend(listing.warnings.iter().cloned());
        let source = ExportSource {
            revision: Some(label.clone()),
            commit: commit.clone(),
            command: crate::export::command_secrets::mask_command(&plan.command_template()),
            env_names: spec.env_names(),
            origin: Some(plan.origin().to_string()),
            sandbox,
        };
        let mut export = tdqs_core::digest::assemble_export(listing, probe.clone(), source)
            .map_err(|e| e.context(format!("the tools of {label}")))?;
        for w in warnings {
            if !export.warnings.contains(&w) {
                export.warnings.push(w);
            }
        }
        Ok::<Export, Error>(export)
    }
    .await;
    // A worktree removed under the server (by another program, or a gate that took it for a
    // leftover) makes a side list no tools: that must never count as an answer.
    let result = match (result, side.vanished()) {
        (Ok(_), true) => Err(Error::new(
            tdqs_core::error::Stage::Revision,
            format!(
                "the temporary worktree of {label} ({}) disappeared while its server ran, so its tool list cannot be trusted",
                side.root.display()
            ),
        )
        .with_advice("make sure nothing else removes tdqs-gate-* folders in the temporary directory or runs `git worktree prune` during the run, then run the gate again")),
        (result, _) => result,
    };
    // The copy is gone once the side is done: a reproduction runs in the working tree it copied.
    let result = match &tree.scratch {
        Some(copy) => result.map_err(|mut e| {
            let copied = copy.root().display().to_string();
            let original = side.root.display().to_string();
            let original = original.trim_end_matches('/');
            e.reproduce = e.reproduce.map(|cmd| cmd.replace(&copied, original));
            e
        }),
        None => result,
    };
    let export = result?;
    // Only the head's lines are shown (a fallen tool is fixed there), and only from the first
    // export. A tree that cannot be read costs the links, never the run.
    let locations = (run_setup && id.role != SideRole::Base)
        .then(|| crate::locate::locate(&side.root, &export).ok())
        .flatten();
    Ok(SideExport {
        export,
        revision: Some(label),
        commit,
        decision: Default::default(),
        blind: None,
        settings_changed: None,
        locations,
    })
}

pub(super) fn side_of(repo: &revision::Repo, source: &SideSource) -> Result<Side, Error> {
    match source {
        SideSource::Revision(rev) => repo.checkout(rev),
        SideSource::WorkingTree => repo.working_tree(),
        SideSource::ExportFile(_) => Err(Error::internal("an export file has no tree")),
        SideSource::ExportDir(_) => Err(Error::internal("an export folder has no tree")),
    }
}

/// Both sides checked out (a side given as an export file has none), and the configuration
/// read from the head's tree (with a head export file, from the working tree).
pub(super) struct Trees {
    pub base: Option<Side>,
    pub head: Option<Side>,
    /// The head's configuration: its launch plans.
    pub config: Option<Config>,
    /// The base revision's configuration: the gate's settings (`None` for an export file).
    pub base_config: Option<Config>,
    /// Where the settings came from, for messages.
    pub base_label: String,
    /// The repository's working tree, which no launch plan may name by an absolute path.
    pub tree_roots: Vec<std::path::PathBuf>,
    /// Keeps the working tree's side alive when it is only read for the configuration.
    _config_side: Option<Side>,
}

/// Checks out both sides (a bad revision fails before any server starts) and reads the
/// configuration.
pub(super) fn open_trees(opts: &GateOptions) -> Result<Trees, Error> {
    let repo = revision::open(opts.repo.as_deref())?;
    let head = match &opts.head {
        SideSource::ExportFile(_) => None,
        other => Some(side_of(&repo, other)?),
    };
    let (config_root, config_side) = match &head {
        Some(side) => (side.root.clone(), None),
        None => {
            let side = repo.working_tree()?;
            (side.root.clone(), Some(side))
        }
    };
    let config = Config::load(&config_root)?;
    probe_sandbox_ahead(opts, config.as_ref());
    let base = match &opts.base {
        SideSource::ExportFile(_) => None,
        other => Some(side_of(&repo, other)?),
    };
    // Read from the base's checkout before any code of either side runs.
    let settings = super::base_settings::SettingsSource::of(opts);
    let (base_config, base_label) = match &base {
        Some(side) => (
            Config::load(&side.root)?,
            format!("the base revision ({})", side.revision_label),
        ),
        _ => (settings.config(opts.repo.as_deref())?, settings.label()),
    };
    let tree_roots = super::base_settings::tree_roots(repo.workdir());
    Ok(Trees {
        base,
        head,
        config,
        base_config,
        base_label,
        tree_roots,
        _config_side: config_side,
    })
}

/// Starts the sandbox's probe while the base is checked out, unless the workflow turned the
/// sandbox off (the probe's answer is only needed when a server is confined).
fn probe_sandbox_ahead(opts: &GateOptions, head_config: Option<&Config>) {
    use crate::platform::sandbox;
    if opts.server.sandbox == Some(sandbox::SandboxMode::Off) {
        return;
    }
    let table = head_config.and_then(|c| c.sandbox.as_ref());
    let network = sandbox::parse_config(table, Path::new("tdqs-gate.toml"))
        .map(|settings| settings.server_network)
        .unwrap_or(false);
    sandbox::probe_ahead(network);
}

/// Both sides' exports.
pub(crate) async fn obtain(
    opts: &GateOptions,
    progress: &dyn Progress,
) -> Result<(SideExport, SideExport), Error> {
    let (base, head, _) = obtain_checked(None, opts, progress, false).await?;
    Ok((base, head))
}

/// Both sides' exports and, with `check_stability` when their definitions differ, each side's
/// second export ([`plan_checked`], then [`export_planned`]).
pub(super) async fn obtain_checked(
    trees: Option<Trees>,
    opts: &GateOptions,
    progress: &dyn Progress,
    check_stability: bool,
) -> Result<(SideExport, SideExport, Option<(SideExport, SideExport)>), Error> {
    let planned = plan_checked(trees, opts)?;
    export_planned(planned, opts, progress, check_stability).await
}

/// The sides with their launch plans checked, before anything of either side has run.
pub(super) enum CheckedSides {
    /// Both sides are export files: nothing runs.
    Files,
    /// At least one side is a tree, whose server the export stage starts.
    Trees(Box<CheckedTrees>),
}

impl CheckedSides {
    /// Whether a setup command of either side will run: setup can take minutes and change
    /// things, so the judge is checked before it rather than alongside the exports.
    pub(super) fn runs_setup(&self) -> bool {
        match self {
            CheckedSides::Files => false,
            CheckedSides::Trees(trees) => trees
                .plans
                .base
                .iter()
                .chain(trees.plans.head.iter())
                .any(LaunchPlan::has_setup),
        }
    }
}

/// The trees of [`CheckedSides::Trees`] and what their plans decided.
pub(super) struct CheckedTrees {
    base_side: Option<Side>,
    head_side: Option<Side>,
    plans: SidePlans,
    settings_changed: Option<String>,
    /// Keeps the working tree's side alive until the exports are done ([`Trees`]).
    _config_side: Option<Side>,
}

/// Checks out both sides (unless `trees` are given) and checks their launch plans: everything
/// that refuses a run for its configuration, before any setup command or server runs.
pub(super) fn plan_checked(
    trees: Option<Trees>,
    opts: &GateOptions,
) -> Result<CheckedSides, Error> {
    let (base, head) = (&opts.base, &opts.head);
    if let (SideSource::ExportFile(_), SideSource::ExportFile(_)) = (base, head) {
        return Ok(CheckedSides::Files);
    }
    let secrets = crate::judge::build::secret_env_names(&opts.judge);
    let trees = match trees {
        Some(trees) => trees,
        None => open_trees(opts)?,
    };
    let Trees {
        base: base_side,
        head: head_side,
        config,
        base_config,
        base_label,
        tree_roots,
        _config_side,
    } = trees;
    let (settings, head_config, server) = one_server_configs(
        base_config.as_ref(),
        base_side.is_some(),
        config.as_ref(),
        &opts.server,
    )?;
    let plans = plan_sides(
        settings.as_ref(),
        head_config.as_ref(),
        (
            base_side.as_ref().map(|s| s.root.as_path()),
            head_side.as_ref().map(|s| s.root.as_path()),
        ),
        &server,
        &secrets,
        &tree_roots,
        &base_label,
    )?;
    let settings_changed = super::base_settings::changed_settings_warning(
        &super::base_settings::changed_settings(base_config.as_ref(), config.as_ref()),
        &base_label,
    );
    for plan in plans.base.iter().chain(plans.head.iter()) {
        if let (Some(url), false, false) = (
            plan.fixed_url(),
            matches!(base, SideSource::ExportFile(_)),
            matches!(head, SideSource::ExportFile(_)),
        ) {
            return Err(fixed_url_error(url, plan.origin()));
        }
    }
    Ok(CheckedSides::Trees(Box::new(CheckedTrees {
        base_side,
        head_side,
        plans,
        settings_changed,
        _config_side,
    })))
}

/// The export stage: both sides' exports and, with `check_stability` when their definitions
/// differ, each side's second export, listed from the tree its first export prepared: the
/// second runs the server again but no setup command.
pub(super) async fn export_planned(
    planned: CheckedSides,
    opts: &GateOptions,
    progress: &dyn Progress,
    check_stability: bool,
) -> Result<(SideExport, SideExport, Option<(SideExport, SideExport)>), Error> {
    match (planned, &opts.base, &opts.head) {
        (CheckedSides::Files, SideSource::ExportFile(b), SideSource::ExportFile(h)) => {
            let limit = export_file_limit_of(opts)?;
            let base = read_file_side(b, limit)?;
            let mut head = read_file_side(h, limit)?;
            head.decision = super::base_settings::decision_of(opts)?;
            let again = if check_stability && base.export.set_hash != head.export.set_hash {
                Some((read_file_side(b, limit)?, read_file_side(h, limit)?))
            } else {
                None
            };
            Ok((base, head, again))
        }
        (CheckedSides::Files, _, _) => Err(Error::internal("export files planned for a tree")),
        (CheckedSides::Trees(planned), base, head) => {
            let CheckedTrees {
                base_side,
                head_side,
                plans,
                settings_changed,
                _config_side,
            } = *planned;
            let (probe, decision) = (plans.probe.clone(), plans.decision);
            let blind = match (&head_side, &plans.head) {
                (Some(side), Some(plan)) => plan.blind_to_tree(&side.root),
                _ => None,
            };
            let file_limit = match (base, head) {
                (SideSource::ExportFile(_), _) | (_, SideSource::ExportFile(_)) => {
                    export_file_limit_of(opts)?
                }
                _ => crate::export::file::MAX_EXPORT_FILE_BYTES,
            };
            let base_fut = first_export(
                base,
                base_side,
                plans.base.as_ref(),
                &probe,
                progress,
                SideRole::Base,
                file_limit,
            );
            let head_fut = first_export(
                head,
                head_side,
                plans.head.as_ref(),
                &probe,
                progress,
                SideRole::Head,
                file_limit,
            );
            let (base, head) = tokio::join!(base_fut, head_fut);
            // Both servers are stopped: nothing of the pull request's may run until the
            // stability check starts them again.
            crate::platform::harden::end_detached();
            let (base, base_tree) = match base {
                Ok(done) => done,
                Err(e) => {
                    if let Ok((_, Some(tree))) = head {
                        let _ = tree.close();
                    }
                    return Err(e.context("base"));
                }
            };
            let (mut head, head_tree) = match head {
                Ok(done) => done,
                Err(e) => {
                    if let Some(tree) = base_tree {
                        let _ = tree.close();
                    }
                    return Err(e.context("head"));
                }
            };
            let again = if check_stability && base.export.set_hash != head.export.set_hash {
                progress.event(ProgressEvent::Note(
                    "the definitions differ: exporting each side again to check its listing is \
                     stable"
                        .to_string(),
                ));
                let (base_again, head_again) = tokio::join!(
                    export_again(
                        &base_tree,
                        plans.base.as_ref(),
                        &probe,
                        progress,
                        SideRole::Base,
                        &base
                    ),
                    export_again(
                        &head_tree,
                        plans.head.as_ref(),
                        &probe,
                        progress,
                        SideRole::Head,
                        &head
                    ),
                );
                crate::platform::harden::end_detached();
                Some((base_again, head_again))
            } else {
                None
            };
            let base_closed = base_tree.map_or(Ok(()), PreparedSide::close);
            let head_closed = head_tree.map_or(Ok(()), PreparedSide::close);
            base_closed.map_err(|e| e.context("base"))?;
            head_closed.map_err(|e| e.context("head"))?;
            let again = match again {
                Some((b, h)) => Some((
                    b.map_err(|e| e.context("base"))?,
                    h.map_err(|e| e.context("head"))?,
                )),
                None => None,
            };
            head.decision = decision;
            head.blind = blind;
            head.settings_changed = settings_changed;
            Ok((base, head, again))
        }
    }
}

/// A side's tree with its prepared run tree, kept open between its two exports.
pub(super) struct PreparedSide {
    side: Side,
    tree: RunTree,
}

impl PreparedSide {
    /// Removes the scratch copy and the worktree; a failure to remove either is an error
    /// (leaving one behind is a defect).
    fn close(self) -> Result<(), Error> {
        let tree = self.tree.close();
        let side = self.side.close();
        tree.and(side)
    }
}

/// One side's first export: an export file read, or the side's server started (setup commands
/// first) in a tree that stays prepared for a second export.
async fn first_export(
    source: &SideSource,
    side: Option<Side>,
    plan: Option<&LaunchPlan>,
    probe: &ProbeProfile,
    progress: &dyn Progress,
    role: SideRole,
    file_limit: u64,
) -> Result<(SideExport, Option<PreparedSide>), Error> {
    let id = SideId::alone(role);
    let side_name = id.label();
    match (source, side) {
        (SideSource::ExportFile(path), _) => Ok((read_file_side(path, file_limit)?, None)),
        (_, Some(side)) => {
            let Some(plan) = plan else {
                return Err(Error::internal(format!("no {side_name} plan")));
            };
            let commit = side.commit.clone();
            let temporary_root = side.is_temporary().then(|| side.root.clone());
            let tree = match RunTree::open(&side, plan) {
                Ok(tree) => tree,
                Err(e) => {
                    let _ = side.close();
                    return Err(e);
                }
            };
            match list_in(&side, &tree, plan, probe, progress, id, true).await {
                Ok(export) => Ok((export, Some(PreparedSide { side, tree }))),
                Err(e) => {
                    // Remove the trees now, and report a failure to remove them.
                    let closed = PreparedSide { side, tree }.close();
                    let e = reproducible(e, temporary_root.as_deref(), commit.as_deref());
                    closed?;
                    Err(e)
                }
            }
        }
        _ => Err(Error::internal(format!("no {side_name} side"))),
    }
}

/// One side's second export: the file read again, or the server started again in the tree its
/// first export prepared, without its setup commands.
async fn export_again(
    prepared: &Option<PreparedSide>,
    plan: Option<&LaunchPlan>,
    probe: &ProbeProfile,
    progress: &dyn Progress,
    role: SideRole,
    first: &SideExport,
) -> Result<SideExport, Error> {
    match (prepared, plan) {
        (Some(prepared), Some(plan)) => {
            let commit = prepared.side.commit.clone();
            let temporary_root = prepared
                .side
                .is_temporary()
                .then(|| prepared.side.root.clone());
            list_in(
                &prepared.side,
                &prepared.tree,
                plan,
                probe,
                progress,
                SideId::alone(role),
                false,
            )
            .await
            .map_err(|e| reproducible(e, temporary_root.as_deref(), commit.as_deref()))
        }
        // An export file lists what it listed.
        _ => Ok(first.clone()),
    }
}

/// One side's export (`tdqs-gate export`, `score`, `lint`).
pub(crate) async fn export_one(
    repo: Option<&Path>,
    source: &SideSource,
    server: &ServerOptions,
    secrets: &[String],
    progress: &dyn Progress,
) -> Result<Export, Error> {
    if let SideSource::ExportFile(path) = source {
        // No settings revision here: the command line's listing limit, else the default.
        return Ok(read_file_side(path, export_file_limit(server.max_listing_bytes, None))?.export);
    }
    let mut tree_roots = Vec::new();
    let (side, config_root) =
        if matches!(source, SideSource::WorkingTree) && !revision::in_repository(repo) {
            // Exporting the current folder needs no repository.
            let root = match repo {
                Some(dir) => dir.to_path_buf(),
                None => std::env::current_dir().map_err(|io| {
                    Error::io(
                        tdqs_core::error::Stage::Export,
                        "cannot read the current folder",
                        io,
                    )
                })?,
            };
            (Side::plain_folder(root.clone()), root)
        } else {
            let repo = revision::open(repo)?;
            let side = side_of(&repo, source)?;
            // As in the gate, each revision is started by its own launch plan; an absolute
            // path into the working tree would export the working tree instead.
            tree_roots = super::base_settings::tree_roots(repo.workdir());
            let config_root = side.root.clone();
            (side, config_root)
        };
    let planned = match &server.settings_rev {
        None => plan(&config_root, server, secrets),
        Some(rev) => plan_under_settings(repo, rev, &config_root, server, secrets),
    }
    .and_then(|planned| {
        super::base_settings::refuse_tree_paths(&planned.0, &tree_roots)?;
        Ok(planned)
    });
    let (plan, probe, _) = match planned {
        Ok(p) => p,
        Err(e) => {
            let _ = side.close();
            return Err(e);
        }
    };
    Ok(export_side(side, &plan, &probe, progress, SideRole::Alone)
        .await?
        .export)
}

#[cfg(test)]
mod tests {
    use super::SideRole;
    use crate::platform::sandbox::CacheUse;

    #[test]
    fn only_the_base_shares_the_package_cache_whatever_the_server_is_called() {
        assert_eq!(SideRole::Base.cache_use(), CacheUse::Shared);
        assert_eq!(SideRole::Head.cache_use(), CacheUse::Private);
        assert_eq!(SideRole::Alone.cache_use(), CacheUse::Private);
        // A server called "base" labels its head "base head": the label no longer decides.
        assert_eq!(SideRole::Head.label(Some("base")), "base head");
        assert_eq!(SideRole::Base.label(Some("web")), "web base");
        assert_eq!(SideRole::Alone.label(None), "export");
    }
}
