//! The sides' launch plans: one server's configuration chosen (`[[server]]` tables,
//! `--server`), the plan of each side under the base's settings with the checks of
//! [`super::super::base_settings`], the probe profile and the limits the command line
//! overrides. Nothing here starts a process; [`super`] exports with these plans.

use std::path::Path;

use crate::config::Config;
use crate::export::launch::{HostEnv, LaunchOptions, LaunchPlan};
use tdqs_core::error::Error;
use tdqs_core::export::{ExportLimits, ProbeProfile};

use super::ServerOptions;

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
pub(in crate::gate) type Planned = (LaunchPlan, ProbeProfile, crate::config::DecisionConfig);

/// The launch plan and probe profile shared by both sides, read from the head's tree.
pub(super) fn plan(
    head_root: &Path,
    server: &ServerOptions,
    secrets: &[String],
) -> Result<Planned, Error> {
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
pub(in crate::gate) fn unknown_server(name: &str, config: &Config) -> Error {
    Error::usage(format!(
        "--server {name}: {} has no [[server]] table named `{name}`; its servers are {}",
        config.path.display(),
        config.server_names().join(", ")
    ))
    .with_advice("pass one of those names, or add a [[server]] table with that name")
}

/// The launch plan and probe profile from a configuration already read (one server's).
pub(in crate::gate) fn plan_with(
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
pub(in crate::gate) struct SidePlans {
    /// `None` when the base is an export file.
    pub base: Option<LaunchPlan>,
    /// `None` when the head is an export file.
    pub head: Option<LaunchPlan>,
    pub probe: ProbeProfile,
    pub decision: crate::config::DecisionConfig,
}

/// Each side's launch plan from its own configuration (`head` for the head; `settings`, the
/// base's, for the base) under the base's settings, with the checks of
/// [`super::super::base_settings`]: a head plan reads no variable the base does not give a server, and
/// no plan names a path inside the working tree (`tree_roots`) or `$PWD`. `roots` are the
/// sides' trees (`None` for an export file), where manifests are looked for.
pub(in crate::gate) fn plan_sides(
    settings: Option<&Config>,
    head: Option<&Config>,
    roots: (Option<&Path>, Option<&Path>),
    server: &ServerOptions,
    secrets: &[String],
    tree_roots: &[std::path::PathBuf],
    base_label: &str,
) -> Result<SidePlans, Error> {
    use super::super::base_settings as bs;
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
pub(super) fn plan_under_settings(
    repo: Option<&Path>,
    rev: &str,
    root: &Path,
    server: &ServerOptions,
    secrets: &[String],
) -> Result<Planned, Error> {
    use super::super::base_settings as bs;
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
    let ci = crate::platform::ci_env::in_ci(&crate::platform::ci_env::process_env);
    sandbox::decide(server.sandbox, &settings, ci, sandbox::probe)
}

/// One server's configurations in a single-server run: the base's settings (the table chosen
/// from the base's file), the head's plan for the same server, and the options to start it. With
/// an export file as the base there are no base settings: the head's file only picks the table.
pub(in crate::gate) fn one_server_configs(
    base_config: Option<&Config>,
    base_is_tree: bool,
    head_config: Option<&Config>,
    server: &ServerOptions,
) -> Result<(Option<Config>, Option<Config>, ServerOptions), Error> {
    if base_is_tree {
        let (settings, options, table) = one_server(base_config.cloned(), server)?;
        let head = super::super::base_settings::head_plan_for(head_config, table.as_deref())?;
        Ok((settings, head, options))
    } else {
        let (head, options, _) = one_server(head_config.cloned(), server)?;
        Ok((None, head, options))
    }
}

/// The gate needs each revision's own server: a URL without `{port}` reaches one server only.
pub(in crate::gate) fn fixed_url_error(url: &str, origin: &str) -> Error {
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
