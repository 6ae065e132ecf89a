//! `tdqs-gate ci …`: the command line of the CI building blocks (the GitHub Action and the
//! reusable workflow run these; see docs/github-action.md).

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

use super::args::{GateArgs, OutputArgs};

#[derive(Debug, Args)]
pub struct CiArgs {
    #[command(subcommand)]
    pub command: CiCommand,
}

#[derive(Debug, Subcommand)]
pub enum CiCommand {
    /// Export every server of one side into a folder (NAME.json, or NAME.failed with the cause)
    /// for a scoring job that starts no server. Takes the gate's whole argument list.
    Export(CiExportArgs),
    /// Gate two export folders: the report, the job summary, the step outputs (decision,
    /// reason, hint, per-server decisions, report, exit code) and one annotation.
    Score(CiScoreArgs),
    /// Create or update the one sticky pull-request comment with the summary, through `gh api`.
    Comment(CiCommentArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum CiSide {
    Base,
    Head,
}

/// The gate's arguments, as one string (the Action's `args` input, split like a shell would,
/// nothing expanded) and/or after `--`.
#[derive(Debug, Clone, Args, Default)]
pub struct GateArgsInput {
    /// The gate's arguments as one string, split like a shell would (quotes work; nothing is
    /// expanded), e.g. the Action's `args` input.
    #[arg(long = "args", value_name = "ARGS", allow_hyphen_values = true)]
    pub args: Option<String>,
    /// The gate's arguments, after `--`.
    #[arg(last = true, value_name = "GATE_ARGS")]
    pub gate_args: Vec<String>,
}

#[derive(Debug, Args)]
pub struct CiExportArgs {
    /// Which side the folder holds: the server set and the revision are this side's (`--base`
    /// or `--head` among the gate's arguments, else the working tree).
    #[arg(long, value_enum)]
    pub side: CiSide,
    /// The folder to write (new or empty).
    #[arg(long, value_name = "DIR")]
    pub output_dir: PathBuf,
    /// Append `digest=<sha256 of the folder>` in GitHub's output format to FILE (the scoring
    /// job checks the base folder against it with --base-digest).
    #[arg(long, value_name = "FILE")]
    pub github_output: Option<PathBuf>,
    #[command(flatten)]
    pub input: GateArgsInput,
}

#[derive(Debug, Args)]
pub struct CiScoreArgs {
    /// The base side's export folder (from `tdqs-gate ci export --side base`).
    #[arg(long, value_name = "DIR")]
    pub base_dir: PathBuf,
    /// The head side's export folder (from `tdqs-gate ci export --side head`).
    #[arg(long, value_name = "DIR")]
    pub head_dir: PathBuf,
    /// The digest the base job gave for its folder: a base folder that differs is INVALID.
    #[arg(long, value_name = "SHA256")]
    pub base_digest: Option<String>,
    /// Append the step outputs to FILE in GitHub's output format (e.g. "$GITHUB_OUTPUT").
    #[arg(long, value_name = "FILE")]
    pub github_output: Option<PathBuf>,
    #[command(flatten)]
    pub input: GateArgsInput,
}

#[derive(Debug, Args)]
pub struct CiCommentArgs {
    /// The report folder holding tool-definition-score.md.
    #[arg(long, value_name = "DIR")]
    pub report_dir: PathBuf,
    /// The comment's name, in its marker line (the report artifact's name).
    #[arg(long, value_name = "NAME", default_value = "tool-definition-score")]
    pub name: String,
    /// The login the token acts as: only a comment of this author is updated.
    #[arg(long, value_name = "LOGIN", default_value = crate::ci::sticky_comment::ACTIONS_BOT)]
    pub author: String,
    /// The repository, owner/name.
    #[arg(long, value_name = "OWNER/NAME", env = "GITHUB_REPOSITORY")]
    pub repository: Option<String>,
    /// The pull request's number (default: from the event file).
    #[arg(long, value_name = "N")]
    pub pull_request: Option<u64>,
    /// The event file of the run.
    #[arg(long, value_name = "FILE", env = "GITHUB_EVENT_PATH")]
    pub event: Option<PathBuf>,
    /// The GitHub CLI to run.
    #[arg(long, value_name = "PATH", default_value = "gh")]
    pub gh: PathBuf,
}

/// The gate's arguments parsed on their own, as `tdqs-gate` itself would parse them.
#[derive(Debug, Parser)]
#[command(name = "tdqs-gate", no_binary_name = true)]
pub struct GateArgsParsed {
    #[command(flatten)]
    pub gate: GateArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}
