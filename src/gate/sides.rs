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
//! when every server is done.

use std::path::Path;

use crate::config::Config;
use crate::export::client::list_tools_observed;
use crate::export::launch::{HostEnv, LaunchOptions, LaunchPlan};
use crate::progress::{Progress, ProgressEvent};
use crate::revision::{self, Side};
use tdqs_core::error::Error;
use tdqs_core::export::ExportLimits;
use tdqs_core::export::{Export, ExportSource, ProbeProfile};

use super::{GateOptions, ServerOptions, SideSource};

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
/// get under these settings ([`crate::export::file::export_file_limit`]): `--max-listing-bytes`,
/// else the largest `max-listing-bytes` of the settings' server tables, else the default.
pub(crate) fn export_file_limit(server: &ServerOptions, settings: Option<&Config>) -> u64 {
    let configured = settings
        .into_iter()
        .flat_map(|c| c.server.iter().chain(c.servers.iter().map(|s| &s.server)))
        .filter_map(|s| s.max_listing_bytes)
        .max();
    let listing = server
        .max_listing_bytes
        .or(configured)
        .unwrap_or(tdqs_core::export::DEFAULT_MAX_LISTING_BYTES);
    crate::export::file::export_file_limit(listing)
}

/// [`export_file_limit`] under the run's settings (the base revision's, else `--settings-rev`'s,
/// else the defaults), as the sides given as export files are read.
pub(crate) fn export_file_limit_of(opts: &GateOptions) -> Result<u64, Error> {
    let settings = super::base_settings::SettingsSource::of(opts).config(opts.repo.as_deref())?;
    Ok(export_file_limit(&opts.server, settings.as_ref()))
}

/// The probe profile: the configuration's, with command-line overrides.
fn probe_profile(config: Option<&Config>, server: &ServerOptions) -> ProbeProfile {
    let mut probe = config.map(|c| c.probe.clone()).unwrap_or_default();
    if let Some(v) = &server.protocol_version {
        probe.protocol_version = v.clone();
    }
    if let Some(era) = server.era {
        probe.era = era;
    }
    if let Some(caps) = &server.capabilities {
        probe.capabilities = caps.clone();
    }
    probe
}

/// The command line's limits over `limits` (the command line wins over tdqs-gate.toml).
fn command_line_limits(server: &ServerOptions, mut limits: ExportLimits) -> ExportLimits {
    if let Some(t) = server.timeout {
        limits.startup_timeout = t;
        limits.request_timeout = t;
    }
    if let Some(n) = server.max_message_bytes {
        limits.max_message_bytes = n;
    }
    if let Some(n) = server.max_listing_bytes {
        limits.max_listing_bytes = n;
    }
    limits
}

/// The launch plan, probe profile and `[decision]` table shared by both sides.
pub(super) type Planned = (LaunchPlan, ProbeProfile, crate::config::DecisionConfig);

/// The launch plan and probe profile shared by both sides, read from the head's tree.
fn plan(head_root: &Path, server: &ServerOptions, secrets: &[String]) -> Result<Planned, Error> {
    let config = Config::load(head_root)?;
    let (config, server, _) = one_server(config, server)?;
    plan_with(config.as_ref(), head_root, &server, secrets)
}

/// With `[[server]]` tables, the one server a single-server command starts: the table named by
/// `--server NAME`, or the only table, with its name. Without tables, the configuration as it is.
fn one_server(
    config: Option<Config>,
    server: &ServerOptions,
) -> Result<(Option<Config>, ServerOptions, Option<String>), Error> {
    if server.servers.len() > 1 {
        return Err(Error::usage(format!(
            "--server is given {} times, but this command exports one server",
            server.servers.len()
        ))
        .with_advice("give one --server NAME (several are for the gate itself)"));
    }
    let Some(config) = config else {
        return Ok((None, server.clone(), None));
    };
    if config.servers.is_empty() {
        return Ok((Some(config), server.clone(), None));
    }
    let names = config.server_names();
    let name = match (&server.server, names.as_slice()) {
        (Some(name), _) => name.clone(),
        (None, [only]) => only.clone(),
        (None, _) => {
            return Err(Error::usage(format!(
                "{} has several [[server]] tables ({}), and this command exports one",
                config.path.display(),
                names.join(", ")
            ))
            .with_advice("name the server to export with --server NAME"))
        }
    };
    let one = config
        .for_server(&name)
        .ok_or_else(|| unknown_server(&name, &config))?;
    // The name picked a table, not a host manifest entry.
    let mut server = server.clone();
    server.server = None;
    server.servers.clear();
    Ok((Some(one), server, Some(name)))
}

/// `--server NAME` that names no `[[server]]` table.
pub(super) fn unknown_server(name: &str, config: &Config) -> Error {
    Error::usage(format!(
        "--server {name}: {} has no [[server]] table named `{name}`; its servers are {}",
        config.path.display(),
        config.server_names().join(", ")
    ))
    .with_advice("pass one of those names, or add a [[server]] table with that name")
}

/// The launch plan and probe profile from a configuration already read (one server's).
pub(super) fn plan_with(
    config: Option<&Config>,
    head_root: &Path,
    server: &ServerOptions,
    secrets: &[String],
) -> Result<Planned, Error> {
    let mut base_limits = ExportLimits::default();
    if let Some(server_config) = config.and_then(|c| c.server.as_ref()) {
        base_limits = server_config.apply_limits(base_limits);
    }
    // The command line wins over the configuration.
    let base_limits = command_line_limits(server, base_limits);
    let options = LaunchOptions {
        command: server.command.as_deref(),
        url: server.url.as_deref(),
        server: server.server.as_deref(),
        config,
        manifest_root: head_root,
        exclude_env: secrets,
        limits: base_limits,
    };
    let mut plan = LaunchPlan::resolve(&options, &HostEnv::current())?;
    if plan.starts_process() {
        plan.confine(sandbox_decision(config, server)?);
    }
    // Credentials typed into the command are masked in every text the gate writes.
    for value in crate::export::command_secrets::credential_values(&plan.command_template()) {
        tdqs_core::redact::register_secret(&value);
    }
    plan.override_limits(|limits| command_line_limits(server, limits));
    let decision = config.map(|c| c.decision).unwrap_or_default();
    Ok((plan, probe_profile(config, server), decision))
}

/// Both sides' launch plans of one server, and what they share (the base's settings).
pub(super) struct SidePlans {
    /// `None` when the base is an export file.
    pub base: Option<LaunchPlan>,
    /// `None` when the head is an export file.
    pub head: Option<LaunchPlan>,
    pub probe: ProbeProfile,
    pub decision: crate::config::DecisionConfig,
}

/// Each side's launch plan from its own configuration (`head` for the head; `settings`, the
/// base's, for the base) under the base's settings, with the checks of
/// [`super::base_settings`]: a head plan reads no variable the base does not give a server, and
/// no plan names a path inside the working tree (`tree_roots`) or `$PWD`. `roots` are the
/// sides' trees (`None` for an export file), where manifests are looked for.
pub(super) fn plan_sides(
    settings: Option<&Config>,
    head: Option<&Config>,
    roots: (Option<&Path>, Option<&Path>),
    server: &ServerOptions,
    secrets: &[String],
    tree_roots: &[std::path::PathBuf],
    base_label: &str,
) -> Result<SidePlans, Error> {
    use super::base_settings as bs;
    let base = match roots.0 {
        Some(root) => Some(plan_with(settings, root, server, secrets)?),
        None => None,
    };
    let head_config = bs::merged(settings, head);
    let head = match roots.1 {
        Some(root) => {
            // The base's server chosen from a host manifest is the head's entry of that name.
            let mut head_server = server.clone();
            let head_has_command = head_config
                .as_ref()
                .and_then(|c| c.server.as_ref())
                .is_some_and(|s| s.command.is_some() || s.url.is_some());
            if let Some(name) = base.as_ref().and_then(|(p, _, _)| p.manifest_entry()) {
                if head_server.command.is_none() && head_server.url.is_none() && !head_has_command {
                    head_server.server = Some(name.to_string());
                }
            }
            Some(plan_with(
                head_config.as_ref(),
                root,
                &head_server,
                secrets,
            )?)
        }
        None => None,
    };
    for (plan, _, _) in base.iter().chain(head.iter()) {
        bs::refuse_tree_paths(plan, tree_roots)?;
    }
    if let Some((plan, _, _)) = &head {
        let allowed = bs::Allowed::of(base.as_ref().map(|(p, _, _)| p), settings);
        bs::check_head_references(plan, &allowed, base_label)?;
    }
    let (probe, decision) = match base.as_ref().or(head.as_ref()) {
        Some((_, probe, decision)) => (probe.clone(), *decision),
        None => (probe_profile(settings, server), Default::default()),
    };
    Ok(SidePlans {
        base: base.map(|(p, _, _)| p),
        head: head.map(|(p, _, _)| p),
        probe,
        decision,
    })
}

/// The launch plan of the tree at `root` under the settings of revision `rev` (`export
/// --settings-rev`): what the gate does for a head, for a step that exports one side.
fn plan_under_settings(
    repo: Option<&Path>,
    rev: &str,
    root: &Path,
    server: &ServerOptions,
    secrets: &[String],
) -> Result<Planned, Error> {
    use super::base_settings as bs;
    let source = bs::SettingsSource::Revision(rev.to_string());
    let settings = source.config(repo)?;
    let own = Config::load(root)?;
    let (settings, own, options) =
        one_server_configs(settings.as_ref(), true, own.as_ref(), server)?;
    let merged = bs::merged(settings.as_ref(), own.as_ref());
    let planned = plan_with(merged.as_ref(), root, &options, secrets)?;
    let allowed =
        bs::Allowed::of(None, settings.as_ref()).with_config_references(settings.as_ref());
    bs::check_head_references(&planned.0, &allowed, &source.label())?;
    Ok(planned)
}

/// Whether the pull request's processes run in the sandbox: `--sandbox` (the workflow's
/// choice), then `[sandbox]` of the configuration, then `auto`; required in CI.
fn sandbox_decision(
    config: Option<&Config>,
    server: &ServerOptions,
) -> Result<crate::platform::sandbox::Decision, Error> {
    use crate::platform::sandbox;
    let table = config.and_then(|c| c.sandbox.as_ref());
    let path = config.map_or_else(
        || Path::new("tdqs-gate.toml").to_path_buf(),
        |c| c.path.clone(),
    );
    let settings = sandbox::parse_config(table, &path)?;
    let ci = sandbox::in_ci(&|name| std::env::var(name).ok());
    sandbox::decide(server.sandbox, &settings, ci, sandbox::probe)
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
    let result = list_in(side, &tree, plan, probe, progress, (role, server), true).await;
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
    (role, server): (SideRole, Option<&str>),
    run_setup: bool,
) -> Result<SideExport, Error> {
    let side_name = role.label(server);
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
            role.cache_use(),
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
    let locations = (run_setup && role != SideRole::Base)
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
    let base = match &opts.base {
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

/// Both sides' exports.
pub(crate) async fn obtain(
    opts: &GateOptions,
    progress: &dyn Progress,
) -> Result<(SideExport, SideExport), Error> {
    obtain_from(None, opts, progress, None).await
}

/// Both sides' exports, from trees already checked out when given. `judge`, when given, is
/// checked once the launch plans are known to be valid and before any setup or export runs.
pub(super) async fn obtain_from(
    trees: Option<Trees>,
    opts: &GateOptions,
    progress: &dyn Progress,
    judge: Option<&mut crate::score::session::JudgeSlot>,
) -> Result<(SideExport, SideExport), Error> {
    let (base, head, _) = obtain_checked(trees, opts, progress, false, judge).await?;
    Ok((base, head))
}

/// Both sides' exports and, with `check_stability` when their definitions differ, each side's
/// second export, listed from the tree its first export prepared: the second runs the server
/// again but no setup command.
pub(super) async fn obtain_checked(
    trees: Option<Trees>,
    opts: &GateOptions,
    progress: &dyn Progress,
    check_stability: bool,
    judge: Option<&mut crate::score::session::JudgeSlot>,
) -> Result<(SideExport, SideExport, Option<(SideExport, SideExport)>), Error> {
    let secrets = crate::judge::build::secret_env_names(&opts.judge);
    match (&opts.base, &opts.head) {
        (SideSource::ExportFile(b), SideSource::ExportFile(h)) => {
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
        (base, head) => {
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
            // Setup commands can take minutes and change things: none runs before the judge is
            // known to work. A server alone starts in a moment, so it starts while the judge is
            // checked (see `exports_and_judge_check`).
            let has_setup = plans
                .base
                .iter()
                .chain(plans.head.iter())
                .any(LaunchPlan::has_setup);
            let judge = match judge {
                Some(judge) if has_setup => {
                    super::check_judge_first(judge, progress).await?;
                    None
                }
                judge => judge,
            };
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
            // A judge is needed only when both sides listed and their definitions differ.
            let needs_judge =
                |(base, head): &(Result<_, Error>, Result<_, Error>)| match (base, head) {
                    (Ok((base, _)), Ok((head, _))) => {
                        let (base, head): (&SideExport, &SideExport) = (base, head);
                        base.export.set_hash != head.export.set_hash
                    }
                    _ => false,
                };
            // Boxed: both exports' futures are large, and the wrapper would otherwise hold them
            // inline several times over (a debug build's stack overflowed).
            let exported = exports_and_judge_check(
                Box::pin(async { tokio::join!(base_fut, head_fut) }),
                judge,
                progress,
                needs_judge,
            )
            .await;
            // Both servers are stopped (or were killed with their exports cancelled): nothing of
            // the pull request's may run until the stability check starts them again.
            crate::platform::harden::end_detached();
            let (base, head) = exported?;
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

/// Runs `exports` and, when given, checks `judge` at the same time: the check (the CLI's
/// version and login, about a second) then costs no wall time on top of the exports. A judge
/// that cannot run ends the run at once: the exports are cancelled, which kills their process
/// groups and removes their trees (their drop guards); its error wins over any export's.
///
/// In CI a failed check is held until a judge is needed, so exports that finish first and need
/// none (`needs_judge` false: equal definitions, or a side that failed) do not wait for it: the
/// check is dropped (its CLI killed with its process group), and the judge is checked again
/// should a later step need it.
async fn exports_and_judge_check<T>(
    exports: impl std::future::Future<Output = T>,
    judge: Option<&mut crate::score::session::JudgeSlot>,
    progress: &dyn Progress,
    needs_judge: impl Fn(&T) -> bool,
) -> Result<T, Error> {
    let Some(judge) = judge else {
        return Ok(exports.await);
    };
    let check = super::check_judge_first(judge, progress);
    if !crate::platform::sandbox::in_ci(&|name| std::env::var(name).ok()) {
        let exports = async { Ok::<T, Error>(exports.await) };
        return tokio::try_join!(check, exports).map(|((), exported)| exported);
    }
    let mut check = std::pin::pin!(check);
    let mut exports = std::pin::pin!(exports);
    tokio::select! {
        checked = &mut check => {
            checked?;
            Ok(exports.await)
        }
        exported = &mut exports => {
            if needs_judge(&exported) {
                check.await?;
            }
            Ok(exported)
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
    let side_name = role.label(None);
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
            match list_in(&side, &tree, plan, probe, progress, (role, None), true).await {
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
                (role, None),
                false,
            )
            .await
            .map_err(|e| reproducible(e, temporary_root.as_deref(), commit.as_deref()))
        }
        // An export file lists what it listed.
        _ => Ok(first.clone()),
    }
}

/// One server's configurations in a single-server run: the base's settings (the table chosen
/// from the base's file), the head's plan for the same server, and the options to start it. With
/// an export file as the base there are no base settings: the head's file only picks the table.
pub(super) fn one_server_configs(
    base_config: Option<&Config>,
    base_is_tree: bool,
    head_config: Option<&Config>,
    server: &ServerOptions,
) -> Result<(Option<Config>, Option<Config>, ServerOptions), Error> {
    if base_is_tree {
        let (settings, options, table) = one_server(base_config.cloned(), server)?;
        let head = super::base_settings::head_plan_for(head_config, table.as_deref())?;
        Ok((settings, head, options))
    } else {
        let (head, options, _) = one_server(head_config.cloned(), server)?;
        Ok((None, head, options))
    }
}

/// The gate needs each revision's own server: a URL without `{port}` reaches one server only.
pub(super) fn fixed_url_error(url: &str, origin: &str) -> Error {
    let masked = crate::export::command_secrets::mask_command(&[url.to_string()]).join(" ");
    Error::usage(format!(
        "the server URL {masked} (from {origin}) is fixed, but the gate exports two revisions: \
         one server at one URL cannot serve both the base and the head"
    ))
    .with_advice(
        "give the command that starts the server (`--command` or `[server] command`) and put \
         `{port}` in the URL and in the command's arguments or env (e.g. `PORT = \"{port}\"`), \
         so each side's tree gets its own server; or export each revision yourself with \
         `tdqs-gate export --url …` and pass the files with --base-export/--head-export",
    )
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
        return Ok(read_file_side(path, export_file_limit(server, None))?.export);
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
