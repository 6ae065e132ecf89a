//! `tdqs-gate ci export|score|comment`: convert the arguments, call [`crate::ci`], print.

use std::io::Write;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use clap::Parser;

use crate::ci::export_side::{self, ExportSide, Side};
use crate::ci::step_outputs::{self, StepOutcome};
use crate::ci::sticky_comment;
use crate::gate::{self, JudgeMode};
use tdqs_core::error::{Error, Stage};
use tdqs_core::exit::Verdict;
use tdqs_core::redact::redact;

use super::args::*;
use super::commands::{gate_options, print_outcome};
use super::output::{say, StderrProgress, Verbosity};
use super::resolve::server_options;

pub(super) async fn ci_command(args: CiArgs, verbosity: Verbosity) -> Result<Verdict, Error> {
    match args.command {
        CiCommand::Export(args) => export(args, verbosity).await,
        CiCommand::Score(args) => score(args, verbosity).await,
        CiCommand::Comment(args) => comment(args, verbosity),
    }
}

/// The gate's arguments from `--args` and after `--`, parsed as the gate parses them.
fn gate_args(input: &GateArgsInput) -> Result<GateArgs, Error> {
    let mut words = match &input.args {
        None => Vec::new(),
        Some(text) => shlex::split(text).ok_or_else(|| {
            Error::usage("the gate's arguments (--args) have unbalanced quotes")
                .with_advice("close every quote of the Action's args input")
        })?,
    };
    words.extend(input.gate_args.iter().cloned());
    GateArgsParsed::try_parse_from(&words)
        .map(|parsed| parsed.gate)
        .map_err(|e| {
            let text = e.to_string();
            let first = text
                .lines()
                .find(|l| !l.trim().is_empty())
                .unwrap_or("not understood")
                .trim_start_matches("error: ")
                .to_string();
            Error::usage(format!("the gate's arguments: {first}")).with_advice(
                "pass flags of `tdqs-gate --help` (see docs/reference.md), each once; the \
                 Action sets --judge, --report-dir, --concurrency, --eval and --token-env itself",
            )
        })
}

/// Side flags that make no sense here: the folders are the sides.
fn refuse_other_sides(gate: &GateArgs, command: &str) -> Result<(), Error> {
    let sides = &gate.sides;
    let given = [
        ("--base-export", sides.base_export.is_some()),
        ("--head-export", sides.head_export.is_some()),
        ("--base-exports", sides.base_exports.is_some()),
        ("--head-exports", sides.head_exports.is_some()),
    ];
    match given.iter().find(|(_, set)| *set) {
        Some((flag, _)) => Err(Error::usage(format!(
            "`tdqs-gate ci {command}` cannot take {flag}: the export folders are the sides"
        ))
        .with_advice(format!(
            "drop {flag} from the gate's arguments, or run `tdqs-gate {flag} …` yourself"
        ))),
        None => Ok(()),
    }
}

/// `::stop-commands::` for as long as it lives: text from the pull request (a server's
/// stderr, tool names in messages) printed meanwhile is never read as a workflow command.
struct StopCommands(String);

impl StopCommands {
    fn start() -> StopCommands {
        let token = format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
        let mut out = std::io::stdout().lock();
        let _ = writeln!(out, "::stop-commands::{token}");
        let _ = out.flush();
        StopCommands(token)
    }
}

impl Drop for StopCommands {
    fn drop(&mut self) {
        let _ = std::io::stderr().flush();
        let _ = writeln!(std::io::stdout(), "::{}::", self.0);
    }
}

async fn export(args: CiExportArgs, verbosity: Verbosity) -> Result<Verdict, Error> {
    let gate = gate_args(&args.input)?;
    refuse_other_sides(&gate, "export")?;
    let server = server_options(&gate.server)?;
    let (side, revision) = match args.side {
        CiSide::Base => (Side::Base, gate.sides.base.as_deref()),
        CiSide::Head => (Side::Head, gate.sides.head.as_deref()),
    };
    let done = {
        let _stop = StopCommands::start();
        let progress = StderrProgress::new(verbosity);
        let done = export_side::run(
            &ExportSide {
                repo: gate.repo.repo.as_deref(),
                revision,
                server: &server,
                output_dir: &args.output_dir,
                side,
            },
            &progress,
        )
        .await;
        progress.finish();
        for one in done.iter().flatten() {
            let file = export_side::file_of(&args.output_dir, one);
            let text = match &one.failure {
                None => format!("tdqs-gate: exported {} ({})", one.name, file.display()),
                Some(cause) => format!(
                    "tdqs-gate: the {} export of {} failed; {} holds the cause: {cause}",
                    side.label(),
                    one.name,
                    file.display()
                ),
            };
            if let Some(details) = &one.details {
                let _ = writeln!(std::io::stderr(), "{details}");
            }
            say(verbosity, &text);
        }
        done?
    };
    if let Some(output) = &args.github_output {
        let digest = export_side::folder_digest(&args.output_dir)?;
        step_outputs::append(
            output,
            &step_outputs::render_outputs(&[("digest".to_string(), digest)]),
        )?;
    }
    let failed = done.iter().filter(|d| d.failure.is_some()).count();
    say(
        verbosity,
        &format!(
            "tdqs-gate ci export: {} of the {} side's exports written, {failed} failed (the \
             scoring job makes a failed one INVALID)",
            done.len() - failed,
            side.label()
        ),
    );
    Ok(Verdict::Pass)
}

/// The gate's options on the two folders; the `--base`/`--head` among the arguments served
/// the export jobs and are left out here.
fn score_options(args: &CiScoreArgs) -> Result<(GateArgs, gate::GateOptions), Error> {
    let gate = gate_args(&args.input)?;
    refuse_other_sides(&gate, "score")?;
    if let Some(expected) = &args.base_digest {
        let found = export_side::folder_digest(&args.base_dir)?;
        if !found.eq_ignore_ascii_case(expected.trim()) {
            return Err(Error::new(
                Stage::Export,
                format!(
                    "the base export folder {} is not the one the base job wrote (digest {found}, \
                     the base job gave {})",
                    args.base_dir.display(),
                    expected.trim()
                ),
            )
            .with_advice(
                "something between the jobs replaced the base's export; re-run the workflow, \
                 and check which jobs upload artifacts of that name",
            ));
        }
    }
    let mut folders = gate.clone();
    folders.sides = SideArgs {
        base_exports: Some(args.base_dir.clone()),
        head_exports: Some(args.head_dir.clone()),
        ..SideArgs::default()
    };
    let mut opts = gate_options(&folders)?;
    let settings = args.base_dir.join(crate::gate::export_dirs::SETTINGS_FILE);
    if std::fs::symlink_metadata(&settings).is_ok() {
        opts.settings_file = Some(settings);
    }
    opts.eval = super::eval_cmd::gate_eval(&gate, &opts)?;
    Ok((gate, opts))
}

async fn score(args: CiScoreArgs, verbosity: Verbosity) -> Result<Verdict, Error> {
    // The outputs below are this command's; the gate must not add its own.
    crate::report::write::leave_github_outputs_to_caller();
    let progress = Arc::new(StderrProgress::new(verbosity));
    let mut repo_dir = None;
    let mut outputs = vec![args.base_dir.clone(), args.head_dir.clone()];
    if let Ok(gate) = gate_args(&args.input) {
        outputs.push(super::commands::report_dir(&gate.report_dir, &gate.repo));
    }
    let (outcome, no_token) = {
        let _stop = StopCommands::start();
        let (outcome, no_token) = match score_options(&args) {
            Ok((_, opts)) => {
                let no_token = opts.judge.mode == JudgeMode::ClaudeCode && !token_given(&opts);
                repo_dir = Some(opts.repo.clone().unwrap_or_else(|| PathBuf::from(".")));
                (gate::run(&opts, progress.clone()).await, no_token)
            }
            Err(e) => {
                // A refused run writes no report; an earlier one must not stand in for it.
                if let Ok(gate) = gate_args(&args.input) {
                    crate::report::write::remove_stale(&super::commands::report_dir(
                        &gate.report_dir,
                        &gate.repo,
                    ));
                }
                (gate::Outcome::invalid(e), false)
            }
        };
        progress.finish();
        (outcome, no_token)
    };
    let step = StepOutcome::of(&outcome, no_token);
    // Warnings on the diff for fallen tools the pull request's checkout defines on changed lines.
    let line_warnings = match (&outcome.report, &repo_dir) {
        (Some(report), Some(dir)) => crate::ci::annotations::for_report(report, dir, &outputs),
        _ => Vec::new(),
    };
    // The gate's messages and verdict line, shielded as well.
    let verdict = {
        let _stop = StopCommands::start();
        print_outcome(outcome, verbosity)
    };
    if let Some(path) = &args.github_output {
        step_outputs::append(path, &step_outputs::render_outputs(&step.outputs()))?;
    }
    if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|v| !v.is_empty()) {
        let mut text = String::new();
        if step.report.is_none() {
            text.push_str(&step.fallback_summary());
        }
        if let Some(hint) = step.hint_summary() {
            text.push_str(&hint);
        }
        if !text.is_empty() {
            step_outputs::append(Path::new(&summary), &text)?;
        }
    }
    for line in &line_warnings {
        let _ = writeln!(std::io::stdout(), "{}", redact(line));
    }
    let _ = writeln!(std::io::stdout(), "{}", step.annotation());
    Ok(verdict)
}

/// Whether a credential reached the Claude Code judge's variable.
fn token_given(opts: &gate::GateOptions) -> bool {
    let name = opts
        .judge
        .token_env
        .clone()
        .unwrap_or_else(|| "CLAUDE_CODE_OAUTH_TOKEN".to_string());
    std::env::var_os(name).is_some_and(|v| !v.is_empty())
}

fn comment(args: CiCommentArgs, verbosity: Verbosity) -> Result<Verdict, Error> {
    let marker = sticky_comment::marker(&args.name)
        .map_err(|m| Error::usage(m).with_advice("pass another --name"))?;
    let pull_request = args.pull_request.or_else(|| {
        args.event
            .as_deref()
            .and_then(sticky_comment::pull_request_number)
    });
    let Some(pull_request) = pull_request else {
        say(
            verbosity,
            "tdqs-gate ci comment: not a pull-request event; no comment",
        );
        return Ok(Verdict::Pass);
    };
    let Some(repository) = args.repository.clone().filter(|r| r.contains('/')) else {
        return Err(Error::usage("no repository to comment in")
            .with_advice("pass --repository OWNER/NAME (GITHUB_REPOSITORY in a workflow)"));
    };
    let markdown = read_summary(&args.report_dir);
    let run_url = match (
        std::env::var("GITHUB_SERVER_URL"),
        std::env::var("GITHUB_RUN_ID"),
    ) {
        (Ok(server), Ok(run)) if !run.is_empty() => {
            Some(format!("{server}/{repository}/actions/runs/{run}"))
        }
        _ => None,
    };
    let body = sticky_comment::body(&marker, &markdown, run_url.as_deref());
    let target = sticky_comment::Target {
        repository,
        pull_request,
        marker,
        author: args.author.clone(),
    };
    let gh = sticky_comment::GhCli {
        program: args.gh.clone(),
    };
    match sticky_comment::post_or_update(&gh, &target, &body) {
        Ok(sticky_comment::Posted::Updated(id)) => {
            say(verbosity, &format!("tdqs-gate: updated comment {id}"))
        }
        Ok(sticky_comment::Posted::Created(id)) => {
            say(verbosity, &format!("tdqs-gate: posted comment {id}"))
        }
        Err(cause) => {
            // A comment that cannot be posted never changes the decision.
            let message = format!(
                "cannot post the pull-request comment: {cause}. The job needs permissions: \
                 pull-requests: write, and a pull request from a fork only gets a read-only \
                 token; the summary is in the job summary"
            );
            let _ = writeln!(
                std::io::stdout(),
                "::warning title=tdqs-gate::{}",
                step_outputs::escape_data(&redact(&message))
            );
        }
    }
    Ok(Verdict::Pass)
}

/// The report's Markdown, read bounded from a regular file; a short INVALID text without one.
fn read_summary(dir: &Path) -> String {
    use crate::platform::safe_file::{read_regular, Links};
    read_regular(
        &dir.join("tool-definition-score.md"),
        Links::Refuse,
        16 * 1024 * 1024,
    )
    .ok()
    .and_then(|bytes| String::from_utf8(bytes).ok())
    .unwrap_or_else(|| {
        "## ⚠️ Tool definition score: INVALID\n\ntdqs-gate wrote no report; see the workflow log.\n"
            .to_string()
    })
}
