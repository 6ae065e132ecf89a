//! Raw arguments resolved into the library's options, and the one export `score`, `lint` and
//! `eval` read: shared by several commands, so that each command module imports it from here.

use std::time::Duration;

use crate::config::Config;
use crate::gate::{self, JudgeMode, JudgeOptions, ServerOptions, SideSource};
use tdqs_core::error::Error;
use tdqs_core::export::Era;

use super::args::*;

pub(crate) fn server_options(args: &ServerArgs) -> Result<ServerOptions, Error> {
    let capabilities = match &args.capabilities {
        None => None,
        Some(text) => Some(
            serde_json::from_str::<serde_json::Value>(text)
                .map_err(|e| format!("--capabilities is not valid JSON: {e}"))
                .and_then(|v| match v {
                    serde_json::Value::Object(_) => Ok(v),
                    other => Err(format!(
                        "--capabilities must be a JSON object, not {}",
                        tdqs_core::digest::json_kind(&other)
                    )),
                })
                .map_err(|cause| {
                    Error::usage(cause)
                        .with_advice("pass a JSON object, e.g. --capabilities '{\"roots\":{}}'")
                })?,
        ),
    };
    Ok(ServerOptions {
        command: args.command.clone(),
        url: args.url.clone(),
        server: match args.server.as_slice() {
            [one] => Some(one.clone()),
            _ => None,
        },
        servers: args.server.clone(),
        timeout: args.timeout.map(Duration::from_secs),
        max_message_bytes: args.max_message_bytes,
        max_listing_bytes: args.max_listing_bytes,
        protocol_version: args.protocol_version.clone(),
        era: args.era.map(|e| match e {
            EraArg::Auto => Era::Auto,
            EraArg::Legacy => Era::Legacy,
            EraArg::Modern => Era::Modern,
        }),
        capabilities,
        settings_rev: None,
        sandbox: args.sandbox.map(|mode| match mode {
            SandboxArg::Auto => crate::platform::sandbox::SandboxMode::Auto,
            SandboxArg::On => crate::platform::sandbox::SandboxMode::On,
            SandboxArg::Off => crate::platform::sandbox::SandboxMode::Off,
        }),
    })
}

pub(crate) fn judge_options(args: &JudgeArgs) -> Result<JudgeOptions, Error> {
    if args.concurrency == 0 {
        return Err(Error::usage("--concurrency must be at least 1"));
    }
    if args.batch && args.judge != JudgeKind::Anthropic {
        return Err(Error::usage("--batch works only with --judge anthropic")
            .with_advice("add --judge anthropic, or drop --batch"));
    }
    Ok(JudgeOptions {
        mode: match args.judge {
            JudgeKind::ClaudeCode => JudgeMode::ClaudeCode,
            JudgeKind::Anthropic => JudgeMode::Anthropic,
            JudgeKind::Openai => JudgeMode::Openai,
            JudgeKind::Static => JudgeMode::Static,
        },
        pins: args.pins.clone(),
        cache_dir: args.cache_dir.clone(),
        spec_url: args.spec_url.clone(),
        token_env: args.token_env.clone(),
        concurrency: args.concurrency,
        model: args.model.clone(),
        base_url: args.base_url.clone(),
        claude: args.claude.clone(),
        call_timeout: args.call_timeout.map(Duration::from_secs),
        batch: args.batch,
    })
}

/// One side's export for `score` and `lint`: the given export file, or the revision (default:
/// the working tree) exported by starting its server.
pub(crate) async fn one_export(
    side: &OneSideArgs,
    repo: &RepoArgs,
    server: &ServerArgs,
    secrets: &[String],
    progress: &dyn crate::progress::Progress,
) -> Result<tdqs_core::export::Export, Error> {
    let rev = side.rev.as_deref();
    if let Some(path) = side.export.as_deref() {
        let limit = given_file_limit(server, listing_settings(repo, rev)?.as_ref());
        return crate::export::file::read_export_within(path, limit);
    }
    let source = match rev {
        Some(rev) => SideSource::Revision(rev.to_string()),
        None => SideSource::WorkingTree,
    };
    gate::sides::export_one(
        repo.repo.as_deref(),
        &source,
        &server_options(server)?,
        secrets,
        progress,
    )
    .await
}

/// The most bytes a file given on the command line (an export, a tool list, a lint baseline) may
/// hold: three times the listing limit a server started here would get, as the gate reads a
/// given export file: `--max-listing-bytes`, else the largest `max-listing-bytes` of the
/// `[server]` tables of `settings` ([`listing_settings`]), else the default.
pub(crate) fn given_file_limit(server: &ServerArgs, settings: Option<&Config>) -> u64 {
    gate::sides::export_file_limit(server.max_listing_bytes, settings)
}

/// The tdqs-gate.toml whose `[server]` tables set the listing limit for `score`, `suggest`,
/// `eval` and `lint`: with `--rev`, that revision's committed file, the one its server is started
/// under; else the working folder's (the repository's root, else the folder itself), the one
/// the working tree's server is started under and `[lint]` is read from.
pub(crate) fn listing_settings(
    repo: &RepoArgs,
    rev: Option<&str>,
) -> Result<Option<Config>, Error> {
    if let Some(rev) = rev {
        return gate::base_settings::SettingsSource::Revision(rev.to_string())
            .config(repo.repo.as_deref());
    }
    match super::repo_root::working_folder(repo.repo.as_deref())? {
        Some(root) => Config::load(&root),
        None => Ok(None),
    }
}

/// The `[lint]` table of the working tree's tdqs-gate.toml, when there is one.
pub(crate) fn lint_config(
    repo: Option<&std::path::Path>,
) -> Result<(crate::lint::LintConfig, Option<String>), Error> {
    // Linting an export file or a plain folder needs no repository: then the folder's own
    // tdqs-gate.toml, if any, applies.
    let root = super::repo_root::working_folder(repo)?;
    let Some(root) = root else {
        return Ok((crate::lint::LintConfig::default(), None));
    };
    let config = crate::config::Config::load(&root)?;
    let lint = crate::lint::LintConfig::from_toml(config.as_ref().and_then(|c| c.lint.as_ref()))?;
    Ok((lint, config.map(|c| c.path.display().to_string())))
}
