//! Obtaining both sides' exports: export files as given, or revisions checked out into temporary
//! worktrees and their servers started as a host would.
//!
//! One configuration drives both sides: the head's `tdqs-gate.toml` (or manifest, or
//! `--command`), with `{root}` standing for each side's tree. The two servers run at the same
//! time; each worktree is removed as soon as its export is done.

use std::path::Path;

use crate::config::Config;
use crate::export::client::list_tools_observed;
use crate::export::launch::{HostEnv, LaunchOptions, LaunchPlan};
use crate::export::ExportLimits;
use crate::revision::{self, Side};
use crate::score::side::{Progress, ProgressEvent};
use tdqs_core::error::Error;
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
}

fn read_file_side(path: &Path) -> Result<SideExport, Error> {
    let export = crate::export::file::read_export(path)?;
    tdqs_core::digest::verify_export(&export)
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

/// The launch plan and probe profile shared by both sides, read from the head's tree.
fn plan(
    head_root: &Path,
    server: &ServerOptions,
    secrets: &[String],
) -> Result<(LaunchPlan, ProbeProfile, crate::config::DecisionConfig), Error> {
    let config = Config::load(head_root)?;
    let mut base_limits = ExportLimits::default();
    if let Some(server_config) = config.as_ref().and_then(|c| c.server.as_ref()) {
        base_limits = server_config.apply_limits(base_limits);
    }
    // The command line wins over the configuration.
    let base_limits = command_line_limits(server, base_limits);
    let options = LaunchOptions {
        command: server.command.as_deref(),
        url: server.url.as_deref(),
        server: server.server.as_deref(),
        config: config.as_ref(),
        manifest_root: head_root,
        exclude_env: secrets,
        limits: base_limits,
    };
    let mut plan = LaunchPlan::resolve(&options, &HostEnv::current())?;
    // Credentials typed into the command are masked in every text the gate writes.
    for value in crate::export::command_secrets::credential_values(&plan.command_template()) {
        tdqs_core::redact::register_secret(&value);
    }
    plan.override_limits(|limits| command_line_limits(server, limits));
    let decision = config.as_ref().map(|c| c.decision).unwrap_or_default();
    Ok((plan, probe_profile(config.as_ref(), server), decision))
}

/// Starts one side's server and exports its tools; the worktree is removed afterwards.
async fn export_side(
    side: Side,
    plan: &LaunchPlan,
    probe: &ProbeProfile,
    progress: &dyn Progress,
    side_name: &str,
) -> Result<SideExport, Error> {
    let label = side.revision_label.clone();
    let commit = side.commit.clone();
    let temporary_root = side.is_temporary().then(|| side.root.clone());
    // Setup commands of the pull request must not change the user's working tree: they run in
    // a scratch copy of it (see crate::revision::scratch) unless setup-in-place says otherwise.
    let scratch = if !side.is_temporary()
        && plan.has_setup()
        && !plan.setup_in_place()
        && git2::Repository::open(&side.root).is_ok()
    {
        match crate::revision::scratch::copy_working_tree(&side.root) {
            Ok(copy) => Some(copy),
            Err(e) => {
                let _ = side.close();
                return Err(e.context(format!("copying {label}")));
            }
        }
    } else {
        None
    };
    let run_root = scratch
        .as_ref()
        .map_or_else(|| side.root.clone(), |copy| copy.root().to_path_buf());
    let result = async {
        let spec = plan.for_side(&run_root)?;
        let observe = |event| {
            progress.event(ProgressEvent::Setup {
                side: side_name.to_string(),
                event,
            })
        };
        let listing = list_tools_observed(&spec, probe, &observe)
            .await
            .map_err(|e| e.context(format!("exporting {label}")))?;
        let mut warnings: Vec<String> = plan.warnings().to_vec();
        warnings.extend(listing.warnings.iter().cloned());
        let source = ExportSource {
            revision: Some(label.clone()),
            commit: commit.clone(),
            command: crate::export::command_secrets::mask_command(&plan.command_template()),
            env_names: spec.env_names(),
            origin: Some(plan.origin().to_string()),
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
    // The copy is gone once we return: a reproduction runs in the working tree it copied.
    let result = match &scratch {
        Some(copy) => result.map_err(|mut e| {
            let copied = copy.root().display().to_string();
            let original = side.root.display().to_string();
            let original = original.trim_end_matches('/');
            e.reproduce = e.reproduce.map(|cmd| cmd.replace(&copied, original));
            e
        }),
        None => result,
    };
    let scratch_closed = scratch.map_or(Ok(()), |copy| copy.close());
    // Remove the worktree now, and report a failure to remove it: leaving one behind is a defect.
    let closed = side.close();
    let export = result.map_err(|mut e| {
        // The temporary worktree is gone once we return: the reproduction must recreate it.
        if let (Some(root), Some(commit), Some(cmd)) = (&temporary_root, &commit, &e.reproduce) {
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
    })?;
    closed?;
    scratch_closed?;
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
pub(crate) async fn obtain(
    opts: &GateOptions,
    progress: &dyn Progress,
) -> Result<(SideExport, SideExport), Error> {
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
            if let (Some(url), false, false) = (
                plan.fixed_url(),
                matches!(base, SideSource::ExportFile(_)),
                matches!(head, SideSource::ExportFile(_)),
            ) {
                return Err(fixed_url_error(url, plan.origin()));
            }
            let blind = head_side
                .as_ref()
                .and_then(|side| plan.blind_to_tree(&side.root));
            let base_fut = async {
                match (base, base_side) {
                    (SideSource::ExportFile(path), _) => read_file_side(path),
                    (_, Some(side)) => export_side(side, &plan, &probe, progress, "base").await,
                    _ => Err(Error::internal("no base side")),
                }
            };
            let head_fut = async {
                match (head, head_side) {
                    (SideSource::ExportFile(path), _) => read_file_side(path),
                    (_, Some(side)) => export_side(side, &plan, &probe, progress, "head").await,
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

/// The gate needs each revision's own server: a URL without `{port}` reaches one server only.
fn fixed_url_error(url: &str, origin: &str) -> Error {
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
        return Ok(read_file_side(path)?.export);
    }
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
    Ok(export_side(side, &plan, &probe, progress, "export")
        .await?
        .export)
}
