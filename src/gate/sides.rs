//! Obtaining both sides' exports: export files as given, or revisions checked out into temporary
//! worktrees and their servers started as a host would.
//!
//! One configuration drives both sides: the head's `tdqs-gate.toml` (or manifest, or
//! `--command`), with `{root}` standing for each side's tree. The two servers run at the same
//! time; each worktree is removed as soon as its export is done.

use std::path::Path;

use crate::config::Config;
use crate::error::Error;
use crate::export::client::list_tools;
use crate::export::launch::{HostEnv, LaunchOptions, LaunchPlan};
use crate::export::{Export, ExportLimits, ExportSource, ProbeProfile};
use crate::revision::{self, Side};

use super::{GateOptions, ServerOptions, SideSource};

/// One side's export and where it came from.
#[derive(Debug, Clone)]
pub struct SideExport {
    pub export: Export,
    /// The revision as given (`origin/master`), `working tree`, or `None` for an export file.
    pub revision: Option<String>,
    pub commit: Option<String>,
    /// The `[decision]` table of the configuration that drove the run (head side only).
    pub decision: crate::config::DecisionConfig,
    /// Why the launch plan cannot see the side's tree (head side only, when it cannot).
    pub blind: Option<String>,
}

fn read_file_side(path: &Path) -> Result<SideExport, Error> {
    let export = crate::digest::read_export(path)?;
    crate::digest::verify_export(&export)
        .map_err(|e| e.context(format!("the export file {}", path.display())))?;
    Ok(SideExport {
        revision: export.source.revision.clone(),
        commit: export.source.commit.clone(),
        export,
        decision: Default::default(),
        blind: None,
    })
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

fn limits(server: &ServerOptions) -> ExportLimits {
    let mut limits = ExportLimits::default();
    if let Some(t) = server.timeout {
        limits.startup_timeout = t;
        limits.request_timeout = t;
    }
    limits
}

/// The launch plan and probe profile shared by both sides, read from the head's tree.
fn plan(
    head_root: &Path,
    server: &ServerOptions,
    secrets: &[String],
) -> Result<(LaunchPlan, ProbeProfile, crate::config::DecisionConfig), Error> {
    let config = Config::load(head_root)?;
    let mut base_limits = limits(server);
    if let Some(server_config) = config.as_ref().and_then(|c| c.server.as_ref()) {
        base_limits = server_config.apply_limits(base_limits);
        // A command-line timeout wins over the configuration's.
        if let Some(t) = server.timeout {
            base_limits.startup_timeout = t;
            base_limits.request_timeout = t;
        }
    }
    let options = LaunchOptions {
        command: server.command.as_deref(),
        server: server.server.as_deref(),
        config: config.as_ref(),
        manifest_root: head_root,
        exclude_env: secrets,
        limits: base_limits,
    };
    let plan = LaunchPlan::resolve(&options, &HostEnv::current())?;
    let decision = config.as_ref().map(|c| c.decision).unwrap_or_default();
    Ok((plan, probe_profile(config.as_ref(), server), decision))
}

/// Starts one side's server and exports its tools; the worktree is removed afterwards.
async fn export_side(
    side: Side,
    plan: &LaunchPlan,
    probe: &ProbeProfile,
) -> Result<SideExport, Error> {
    let label = side.revision_label.clone();
    let commit = side.commit.clone();
    let temporary_root = side.is_temporary().then(|| side.root.clone());
    let result = async {
        let spec = plan.for_side(&side.root)?;
        let listing = list_tools(&spec, probe)
            .await
            .map_err(|e| e.context(format!("exporting {label}")))?;
        let mut warnings: Vec<String> = plan.warnings().to_vec();
        warnings.extend(listing.warnings.iter().cloned());
        let source = ExportSource {
            revision: Some(label.clone()),
            commit: commit.clone(),
            command: plan.command_template(),
            env_names: spec.env_names(),
            origin: Some(plan.origin().to_string()),
        };
        let mut export = crate::digest::assemble_export(listing, probe.clone(), source)
            .map_err(|e| e.context(format!("the tools of {label}")))?;
        for w in warnings {
            if !export.warnings.contains(&w) {
                export.warnings.push(w);
            }
        }
        Ok::<Export, Error>(export)
    }
    .await;
    // Remove the worktree now, and report a failure to remove it: leaving one behind is a defect.
    let closed = side.close();
    let export = result.map_err(|mut e| {
        // The temporary worktree is gone once we return: the reproduction must recreate it.
        if let (Some(root), Some(commit), Some(cmd)) = (&temporary_root, &commit, &e.reproduce) {
            let root = root.display().to_string();
            if cmd.contains(&root) {
                e.reproduce = Some(format!(
                    "git worktree add --detach {root} {commit} && {} ; git worktree remove --force {root}",
                    cmd
                ));
            }
        }
        e
    })?;
    closed?;
    Ok(SideExport {
        export,
        revision: Some(label),
        commit,
        decision: Default::default(),
        blind: None,
    })
}

fn side_of(repo: &revision::Repo, source: &SideSource) -> Result<Side, Error> {
    match source {
        SideSource::Revision(rev) => repo.checkout(rev),
        SideSource::WorkingTree => repo.working_tree(),
        SideSource::ExportFile(_) => Err(Error::internal("an export file has no tree")),
    }
}

/// Both sides' exports.
pub async fn obtain(opts: &GateOptions) -> Result<(SideExport, SideExport), Error> {
    let secrets = super::judges::secret_env_names(&opts.judge);
    match (&opts.base, &opts.head) {
        (SideSource::ExportFile(b), SideSource::ExportFile(h)) => {
            Ok((read_file_side(b)?, read_file_side(h)?))
        }
        (base, head) => {
            let repo = revision::open(opts.repo.as_deref())?;
            // Check out both sides first: a bad revision fails before any server starts.
            let head_side = match head {
                SideSource::ExportFile(_) => None,
                other => Some(side_of(&repo, other)?),
            };
            let base_side = match base {
                SideSource::ExportFile(_) => None,
                other => Some(side_of(&repo, other)?),
            };
            // The configuration is read from the head's tree; with a head export file, from the
            // working tree.
            let config_side;
            let config_root = match &head_side {
                Some(side) => side.root.clone(),
                None => {
                    config_side = repo.working_tree()?;
                    config_side.root.clone()
                }
            };
            let (plan, probe, decision) = plan(&config_root, &opts.server, &secrets)?;
            let blind = head_side
                .as_ref()
                .and_then(|side| plan.blind_to_tree(&side.root));
            let base_fut = async {
                match (base, base_side) {
                    (SideSource::ExportFile(path), _) => read_file_side(path),
                    (_, Some(side)) => export_side(side, &plan, &probe).await,
                    _ => Err(Error::internal("no base side")),
                }
            };
            let head_fut = async {
                match (head, head_side) {
                    (SideSource::ExportFile(path), _) => read_file_side(path),
                    (_, Some(side)) => export_side(side, &plan, &probe).await,
                    _ => Err(Error::internal("no head side")),
                }
            };
            let (base, head) = tokio::join!(base_fut, head_fut);
            let base = base.map_err(|e| e.context("base"))?;
            let mut head = head.map_err(|e| e.context("head"))?;
            head.decision = decision;
            head.blind = blind;
            Ok((base, head))
        }
    }
}

/// One side's export (`tdqs-gate export`, `score`, `lint`).
pub async fn export_one(
    repo: Option<&Path>,
    source: &SideSource,
    server: &ServerOptions,
    secrets: &[String],
) -> Result<Export, Error> {
    if let SideSource::ExportFile(path) = source {
        return Ok(read_file_side(path)?.export);
    }
    let (side, config_root) =
        if matches!(source, SideSource::WorkingTree) && !revision::in_repository(repo) {
            // Exporting the current folder needs no repository.
            let root = match repo {
                Some(dir) => dir.to_path_buf(),
                None => std::env::current_dir().map_err(|io| {
                    Error::io(
                        crate::error::Stage::Export,
                        "cannot read the current folder",
                        io,
                    )
                })?,
            };
            (Side::plain_folder(root.clone()), root)
        } else {
            let repo = revision::open(repo)?;
            let side = side_of(&repo, source)?;
            // As in the gate, the working tree's configuration says how any revision is started.
            let config_root = repo
                .workdir()
                .map(Path::to_path_buf)
                .unwrap_or_else(|| side.root.clone());
            (side, config_root)
        };
    let (plan, probe, _) = match plan(&config_root, server, secrets) {
        Ok(p) => p,
        Err(e) => {
            let _ = side.close();
            return Err(e);
        }
    };
    Ok(export_side(side, &plan, &probe).await?.export)
}
