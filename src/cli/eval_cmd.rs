//! `tdqs-gate eval`: read the cases, export the side, run the suite, print, apply
//! `--min-accuracy` (exit 1 below it, as `lint` exits 1 on its thresholds).

use std::io::Write;
use std::path::PathBuf;
use std::time::Duration;

use tdqs_core::error::Error;
use tdqs_core::eval::Mode;
use tdqs_core::exit::Verdict;
// Everything printed is for a terminal: escape sequences stripped, secrets masked, control
// characters shown as escapes.
use tdqs_core::redact::for_terminal as redact;

use super::args::{EvalArgs, EvalModeArg};
use super::output::{say, StderrProgress, Verbosity};
use super::resolve::{judge_options, lint_config, one_export};
use crate::eval::{self, cache, suite, EvalOptions};

/// The folder the case file and the cache are found in: the repository's working tree, else
/// `--repo`, else the current directory.
fn root(repo: Option<&std::path::Path>) -> Result<PathBuf, Error> {
    super::repo_root::working_folder(repo)?.ok_or_else(|| {
        Error::usage("cannot tell the current directory").with_advice("pass --repo DIR")
    })
}

pub(super) async fn eval_command(args: EvalArgs, verbosity: Verbosity) -> Result<Verdict, Error> {
    if let Some(n) = args.min_accuracy {
        if !(0.0..=100.0).contains(&n) {
            return Err(Error::usage(format!("--min-accuracy {n} is outside 0–100")));
        }
    }
    let root = root(args.repo.repo.as_deref())?;
    let cases_path = args
        .cases
        .clone()
        .unwrap_or_else(|| root.join(suite::SUITE_FILE));
    if args.init {
        return init_command(&args, &cases_path, verbosity).await;
    }
    let mode = match args.mode {
        Some(EvalModeArg::LiveModel) => Mode::LiveModel,
        Some(EvalModeArg::Synthetic) | None => Mode::Synthetic,
    };
    let suite = suite::load(&cases_path, args.cases.is_none().then_some(root.as_path()))?;
    let judge = match mode {
        Mode::LiveModel => {
            let judge = judge_options(&args.judge)?;
            // A misconfigured live run stops here, before any server is started.
            eval::live_identity(&judge)?;
            Some(judge)
        }
        Mode::Synthetic => None,
    };
    let secrets = judge
        .as_ref()
        .map(crate::judge::build::secret_env_names)
        .unwrap_or_default();
    let progress = StderrProgress::new(verbosity);
    let (export, lint) = linted_export(&args, &secrets, &progress).await?;
    let opts = EvalOptions {
        mode,
        judge,
        cache_dir: args
            .eval_cache
            .clone()
            .unwrap_or_else(|| root.join(cache::DEFAULT_DIR)),
        cache_tree: args.eval_cache.is_none().then(|| root.clone()),
        trusted_answers: None,
        offline: args.offline,
        max_cost_tokens: args.max_cost,
        pace: args.pace.map(Duration::from_secs_f64),
        allow_unknown_tools: false,
    };
    let run = eval::run(&export, &suite, &opts, &lint).await;
    progress.finish();
    let run = run?;
    let text = if args.json {
        serde_json::to_string_pretty(&run.document())
            .map_err(|e| Error::internal(format!("cannot serialise the eval run: {e}")))?
            + "\n"
    } else {
        run.render_text()
    };
    let _ = write!(std::io::stdout(), "{}", redact(&text));
    if let Some(min) = args.min_accuracy {
        let share = run.metrics.selection.share();
        if share.is_none_or(|s| s * 100.0 < min) {
            say(
                verbosity,
                &format!(
                    "tdqs-gate eval: selection accuracy {} is below --min-accuracy {min} ({})",
                    run.metrics.selection.render().trim(),
                    mode.as_str()
                ),
            );
            return Ok(Verdict::Block);
        }
    }
    Ok(Verdict::Pass)
}

/// The server's tools as `--export`, `--rev` or the working tree give them, with their lint
/// findings (which aim sibling cases at confusable pairs).
async fn linted_export(
    args: &EvalArgs,
    secrets: &[String],
    progress: &StderrProgress,
) -> Result<(tdqs_core::export::Export, crate::lint::LintReport), Error> {
    let (config, _) = lint_config(args.repo.repo.as_deref())?;
    let export = one_export(&args.side, &args.repo, &args.server, secrets, progress).await?;
    let lint = crate::lint::lint_export(&export, &config);
    Ok((export, lint))
}

/// `eval --init`: refuses to overwrite without `--force` (checked before anything runs), drafts,
/// validates, writes the file atomically, and prints what it wrote.
async fn init_command(
    args: &EvalArgs,
    path: &std::path::Path,
    verbosity: Verbosity,
) -> Result<Verdict, Error> {
    if path.exists() && !args.force {
        return Err(Error::new(
            tdqs_core::error::Stage::Eval,
            format!(
                "{} already exists; --init does not overwrite it",
                path.display()
            ),
        )
        .with_advice("pass --force to replace it, or --cases FILE to write another file"));
    }
    let judge = judge_options(&args.judge)?;
    eval::live_identity(&judge)?;
    let secrets = crate::judge::build::secret_env_names(&judge);
    let progress = StderrProgress::new(verbosity);
    let (export, lint) = linted_export(args, &secrets, &progress).await?;
    let drafted = eval::init::draft(&export, &judge, &lint).await;
    progress.finish();
    let drafted = drafted?;
    let body = suite::render(&drafted.suite)?;
    let text = format!(
        "# Drafted by `tdqs-gate eval --init` with {} and validated case by case.\n\
         # Provenance ai_generated: directional, not independent ground truth. Review every case,\n\
         # change `provenance` to \"user_defined\" for the ones you vouch for, and commit the file.\n\
         # Cases with exploratory = true were defended with confidence < 0.7: shown, not scored.\n\n{body}",
        drafted.model
    );
    crate::platform::atomic::write_atomically(path, text.as_bytes(), None).map_err(|e| {
        Error::new(
            tdqs_core::error::Stage::Eval,
            format!("cannot write {}: {e}", path.display()),
        )
    })?;
    let exploratory = drafted.suite.cases.iter().filter(|c| c.exploratory).count();
    let mut out = format!(
        "wrote {} cases to {} ({} exploratory, not scored; {} model calls, {} tokens in, {} out)\n",
        drafted.suite.cases.len(),
        path.display(),
        exploratory,
        drafted.calls,
        drafted.usage.input_tokens,
        drafted.usage.output_tokens
    );
    for d in &drafted.dropped {
        out.push_str(&format!("dropped: {d}\n"));
    }
    let _ = write!(std::io::stdout(), "{}", redact(&out));
    Ok(Verdict::Pass)
}

/// The gate's selection check from `--eval MODE`, `--eval-cases` and the `[eval]` table of the
/// working tree's tdqs-gate.toml; `None` when neither asks for it.
pub(super) fn gate_eval(
    args: &super::args::GateArgs,
    opts: &crate::gate::GateOptions,
) -> Result<Option<crate::gate::GateEval>, Error> {
    let root = root(opts.repo.as_deref())?;
    // The base revision's [eval] and case file, never the pull request's.
    let settings = crate::gate::base_settings::SettingsSource::of(opts);
    let config = match settings.config(opts.repo.as_deref()) {
        Ok(config) => config,
        // A base revision that cannot be read is the gate's to report (INVALID, with a report);
        // without `--eval` there is no selection check to set up.
        Err(_)
            if args.eval.is_none() && matches!(opts.base, crate::gate::SideSource::Revision(_)) =>
        {
            None
        }
        Err(e) => return Err(e),
    };
    let table = eval::config::EvalConfig::from_toml(config.as_ref().and_then(|c| c.eval.as_ref()))?;
    let mode = match (args.eval, table.as_ref().and_then(|t| t.mode.as_deref())) {
        (Some(EvalModeArg::LiveModel), _) => Mode::LiveModel,
        (Some(EvalModeArg::Synthetic), _) => Mode::Synthetic,
        (None, Some(text)) => eval::config::parse_mode(text).unwrap_or(Mode::Synthetic),
        (None, None) => {
            if table.is_some() {
                return Err(Error::new(
                    tdqs_core::error::Stage::Config,
                    "the [eval] table has no mode, so the selection check cannot run",
                )
                .with_advice("write mode = \"live_model\" or mode = \"synthetic\" in [eval], or pass --eval MODE"));
            }
            if args.eval_cases.is_some() {
                return Err(Error::usage("--eval-cases goes with --eval MODE")
                    .with_advice("pass --eval live-model or --eval synthetic"));
            }
            return Ok(None);
        }
    };
    let table = table.unwrap_or_default();
    let cases_path = args
        .eval_cases
        .clone()
        .or_else(|| table.cases.as_ref().map(|p| root.join(p)))
        .unwrap_or_else(|| root.join(suite::SUITE_FILE));
    let suite = match (&args.eval_cases, &settings) {
        (None, crate::gate::base_settings::SettingsSource::Revision(_)) => {
            crate::gate::base_settings::committed_suite(
                &settings,
                opts.repo.as_deref(),
                &root,
                &cases_path,
            )?
        }
        _ => suite::load(
            &cases_path,
            args.eval_cases.is_none().then_some(root.as_path()),
        )?,
    };
    let judge = match mode {
        Mode::LiveModel => {
            eval::live_identity(&opts.judge)?;
            Some(opts.judge.clone())
        }
        Mode::Synthetic => None,
    };
    let cache_rel = table
        .cache
        .clone()
        .unwrap_or_else(|| PathBuf::from(cache::DEFAULT_DIR));
    Ok(Some(crate::gate::GateEval {
        suite,
        cases_path,
        options: EvalOptions {
            mode,
            judge,
            cache_dir: root.join(&cache_rel),
            cache_tree: Some(root.clone()),
            // The gate fills this from the base revision's committed cache.
            trusted_answers: None,
            offline: table.offline,
            max_cost_tokens: table.max_cost,
            pace: table.pace.map(Duration::from_secs_f64),
            allow_unknown_tools: true,
        },
    }))
}
