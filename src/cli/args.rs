//! The command line, as clap parses it. Raw user input only; the dispatch in `commands` resolves it.

use std::path::PathBuf;

use clap::{Args, Parser, Subcommand, ValueEnum};

#[derive(Debug, Parser)]
#[command(
    name = "tdqs-gate",
    version,
    about = "Stop a pull request from lowering an MCP server's Tool Definition Quality Score (TDQS v1.3)",
    long_about = "Stop a pull request from lowering an MCP server's Tool Definition Quality Score.\n\n\
        Without a subcommand, runs the gate: exports the tools/list of the base and of the head, \
        and when they differ scores both with the pinned TDQS v1.3 judge and decides.\n\n\
        Exit codes: 0 PASS, 1 BLOCK, 2 INVALID (any error).",
    args_conflicts_with_subcommands = true
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Option<Command>,
    #[command(flatten)]
    pub gate: GateArgs,
    #[command(flatten)]
    pub output: OutputArgs,
}

#[derive(Debug, Subcommand)]
pub enum Command {
    /// Compare the base and the head and decide PASS, BLOCK or INVALID (the default command).
    Gate(GateArgs),
    /// Export one side's tool definitions as a JSON file.
    Export(ExportArgs),
    /// Score one side once and print each tool's TDQS and the rollups.
    Score(ScoreArgs),
    /// Propose rewrites of tool definitions, scored before they are offered (a model judge), or
    /// list what each definition is missing (the static judge). Prints Markdown, or JSON.
    Suggest(SuggestArgs),
    /// Lint tool definitions offline: findings with stable codes and a 0–100 scorecard.
    Lint(LintArgs),
    /// Measure where requests go: run the committed selection cases (tdqs-eval.toml) against the
    /// server's tools, with a model (live-model) or the deterministic lexical ranking (synthetic).
    Eval(EvalArgs),
    /// Install a git pre-push hook that runs the gate against the upstream branch.
    InstallHook(HookArgs),
    /// Re-check a saved report against the current exports, with no model call.
    ///
    /// The current sides are the revisions the report records, at their recorded commits,
    /// unless given: --base and --head (with --base alone, the head is the working tree), export
    /// files, or export folders. Writes nothing; exits with the report's verdict, or 2 when it
    /// does not hold.
    #[command(long_flag = "check")]
    Check(CheckArgs),
    /// Score a registry capture N times and write calibration.json.
    #[command(long_flag = "calibrate")]
    Calibrate(CalibrateArgs),
    /// The CI building blocks: export a side into a folder, score two folders with step
    /// outputs, the sticky pull-request comment (see docs/github-action.md).
    Ci(CiArgs),
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum JudgeKind {
    /// The pinned model through the Claude Code command line.
    #[default]
    ClaudeCode,
    /// The Anthropic Messages API with a Console API key.
    Anthropic,
    /// An OpenAI-compatible chat completions endpoint (vLLM, llama.cpp, Ollama).
    Openai,
    /// Deterministic rules, no model, no network: labelled as such in every report.
    Static,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EraArg {
    Auto,
    Legacy,
    Modern,
}

/// Where the repository is.
#[derive(Debug, Clone, Args, Default)]
pub struct RepoArgs {
    /// The git repository (default: the one around the current directory).
    #[arg(long, value_name = "DIR")]
    pub repo: Option<PathBuf>,
}

/// How a side's MCP server is started and probed.
#[derive(Debug, Clone, Args, Default)]
#[command(next_help_heading = "Server")]
pub struct ServerArgs {
    /// The server command, split like a shell would; `{root}` is the side's tree.
    /// Overrides tdqs-gate.toml and host manifests.
    #[arg(long, value_name = "COMMAND")]
    pub command: Option<String>,
    /// The server speaks Streamable HTTP at this URL. With --command (or `[server] command`),
    /// that command is started in the side's tree and `{port}` in both is a free port the gate
    /// picks; alone, the URL is used as is (`export` only: one URL cannot serve two revisions).
    #[arg(long, value_name = "URL")]
    pub url: Option<String>,
    /// The server to use from a host manifest (.mcp.json, mcp.json, .vscode/mcp.json), or a
    /// `[[server]]` table of tdqs-gate.toml. The gate takes it several times to gate several
    /// servers in one run (default with `[[server]]` tables: all of them).
    #[arg(long, value_name = "NAME")]
    pub server: Vec<String>,
    /// Seconds to wait for the server's handshake and for each page (default 60; 1 to 14400).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT_SECS))]
    pub timeout: Option<u64>,
    /// Longest accepted server message (one stdout line), in bytes (default 16 MiB).
    #[arg(long, value_name = "BYTES", value_parser = tdqs_core::export::parse_size_limit)]
    pub max_message_bytes: Option<usize>,
    /// Most bytes a server may write to stdout while listing its tools (default 32 MiB).
    #[arg(long, value_name = "BYTES", value_parser = tdqs_core::export::parse_size_limit)]
    pub max_listing_bytes: Option<usize>,
    /// The protocol version offered in `initialize` (default 2025-11-25).
    #[arg(long, value_name = "VERSION")]
    pub protocol_version: Option<String>,
    /// Handshake: legacy `initialize`, modern `server/discover`, or auto.
    #[arg(long, value_enum)]
    pub era: Option<EraArg>,
    /// Client capabilities declared to the server, as JSON (default `{}`).
    #[arg(long, value_name = "JSON")]
    pub capabilities: Option<String>,
    /// Run setup commands and servers in the bubblewrap sandbox: `auto` (when it works here;
    /// required in CI), `on` (required) or `off` (never; in CI only this flag may say so).
    #[arg(long, value_enum, env = "TDQS_GATE_SANDBOX", value_name = "MODE")]
    pub sandbox: Option<SandboxArg>,
}

/// `--sandbox`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum SandboxArg {
    Auto,
    On,
    Off,
}

/// Which judge scores, and how it is reached.
#[derive(Debug, Clone, Args, Default)]
#[command(next_help_heading = "Judge")]
pub struct JudgeArgs {
    #[arg(long, value_enum, default_value_t = JudgeKind::ClaudeCode)]
    pub judge: JudgeKind,
    /// Pins file replacing the embedded tdqs/version.json (scores are then not the calibrated ones).
    #[arg(long, value_name = "FILE")]
    pub pins: Option<PathBuf>,
    /// Where the fetched specification is cached (default: the user cache folder).
    #[arg(long, value_name = "DIR")]
    pub cache_dir: Option<PathBuf>,
    /// URL of the specification README (default: the pinned commit on GitHub).
    #[arg(long, value_name = "URL")]
    pub spec_url: Option<String>,
    /// The environment variable holding the judge's credential (Claude Code OAuth token, API key).
    #[arg(long, value_name = "NAME")]
    pub token_env: Option<String>,
    /// Judge calls at once (1 to 256).
    #[arg(long, value_name = "N", default_value_t = 6, value_parser = parse_concurrency)]
    pub concurrency: usize,
    /// Model for `--judge openai` (default: the pinned model).
    #[arg(long, value_name = "MODEL")]
    pub model: Option<String>,
    /// Base URL of the judge's API (Anthropic, OpenAI-compatible, or a gateway for Claude Code).
    #[arg(long, value_name = "URL")]
    pub base_url: Option<String>,
    /// The `claude` executable (default: `claude` on PATH).
    #[arg(long, value_name = "PATH")]
    pub claude: Option<PathBuf>,
    /// Seconds one judge call may take (default 180; 1 to 14400).
    #[arg(long, value_name = "SECS", value_parser = clap::value_parser!(u64).range(1..=MAX_TIMEOUT_SECS))]
    pub call_timeout: Option<u64>,
    /// With `--judge anthropic`: score through the Message Batches API (half price, slower).
    #[arg(long)]
    pub batch: bool,
}

#[derive(Debug, Clone, Args, Default)]
// Without its own heading, -v/-q were listed under the previous group's heading ("Judge").
#[command(next_help_heading = "Output")]
pub struct OutputArgs {
    /// More detail on stderr.
    #[arg(short, long, global = true, action = clap::ArgAction::Count)]
    pub verbose: u8,
    /// Only errors and the verdict.
    #[arg(short, long, global = true, conflicts_with = "verbose")]
    pub quiet: bool,
}

/// The gate (the default command): the sides, how they are compared, and where the report goes.
#[derive(Debug, Clone, Args, Default)]
pub struct GateArgs {
    #[command(flatten)]
    pub sides: SideArgs,
    #[command(flatten)]
    pub report_dir: ReportDirArgs,
    #[command(flatten)]
    pub rule: RuleArgs,
    /// Also write a shields.io endpoint badge (the head's mean TDQS and tier) to FILE, for
    /// PASS and BLOCK runs (see docs/github-action.md, "A badge").
    #[arg(long, value_name = "FILE")]
    pub badge: Option<PathBuf>,
    /// Score every question on both sides, even when identical (as the reference gate does).
    #[arg(long)]
    pub independent_sides: bool,
    /// Keep model answers between runs in DIR (default: tdqs-gate/answers in the user's cache
    /// folder; `off` turns it off). Never a folder inside the repository (docs/judges.md,
    /// "The answer cache").
    #[arg(long, value_name = "DIR", env = "TDQS_GATE_ANSWER_CACHE")]
    pub answer_cache: Option<String>,
    /// Ask every question of this run afresh and keep no answer for later runs (wins over
    /// --answer-cache and TDQS_GATE_ANSWER_CACHE).
    #[arg(long)]
    pub no_answer_cache: bool,
    /// List every tool in the report. By default a server with more than 50 tools on a side
    /// has its unchanged tools (same definition and scores on both sides) summarised.
    #[arg(long)]
    pub full_report: bool,
    /// Also run the selection check: the case suite (tdqs-eval.toml) on both sides with the same
    /// selector, BLOCK on a significant selection fall (exact McNemar). MODE: live-model (the
    /// judge selects) or synthetic. Over `[eval] mode` of tdqs-gate.toml.
    #[arg(long, value_enum, value_name = "MODE")]
    pub eval: Option<EvalModeArg>,
    /// The case file of the selection check (default: `[eval] cases`, else tdqs-eval.toml at
    /// the repository root).
    #[arg(long, value_name = "FILE")]
    pub eval_cases: Option<PathBuf>,
    /// For each tool whose TDQS fell, ask the judge's model for a rewrite and offer it only when
    /// the same judge scores it at least as high on every dimension that fell (the static
    /// judge: a checklist of what is missing). Costs judge calls; see docs/suggest.md.
    #[arg(long)]
    pub suggest: bool,
    /// The most judge calls the rewrites of --suggest may make [default: 40].
    #[arg(long, value_name = "N")]
    pub suggest_max_calls: Option<u64>,
    #[command(flatten)]
    pub repo: RepoArgs,
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub judge: JudgeArgs,
}

/// How the gate decides and where its settings come from: given to the gate, and to `check`
/// the same way (a report must have been decided by the rule they require).
#[derive(Debug, Clone, Args, Default)]
pub struct RuleArgs {
    /// The decision rule: noise-aware (default; see docs/decision.md) or reference (the
    /// reference gate's rule exactly). Overrides the pins' `confirmation.rule`. `check` refuses a
    /// report decided by another rule than this, the pins and the base's `[decision]` require.
    #[arg(long, value_enum, value_name = "RULE")]
    pub decision_rule: Option<DecisionRuleArg>,
    /// Per-tool guard of the noise-aware rule: a tool whose TDQS falls by at least this much
    /// (median of three pairs, beyond its noise) BLOCKs [default: 0.5, or `[decision] tool-drop`].
    /// `check` refuses a report decided with another guard.
    #[arg(long, value_name = "TDQS")]
    pub tool_drop: Option<f64>,
    /// Opt-in growth rule: BLOCK when the head's tool listing has more than this many percent
    /// more tokens than the base's and the mean TDQS did not rise [default: off, or
    /// `[decision] max-listing-growth`]. `check` refuses a report decided with another limit.
    #[arg(long, value_name = "PERCENT", allow_negative_numbers = true)]
    pub max_listing_growth: Option<i64>,
    /// The revision whose tdqs-gate.toml holds the settings (`[decision]`, the servers, …) when
    /// the base is an export file (e.g. the pull request's base commit); without it, export-file
    /// runs use the defaults and the flags. With --base, the base revision's always apply.
    #[arg(long, value_name = "REV")]
    pub settings_rev: Option<String>,
}

/// Where each side of a comparison comes from: the gate's two sides, or the sides `check`
/// exports instead of the ones its report records.
#[derive(Debug, Clone, Args, Default)]
pub struct SideArgs {
    /// The revision to compare against, e.g. origin/master.
    // `--base` with `--base-export` (and `--head` with `--head-export`) is refused after
    // parsing, not by clap, so that the gate's refusal also removes an earlier report (which a
    // CI step could otherwise read as this run's).
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// The head revision (default: the working tree as it is, uncommitted changes included).
    #[arg(long, value_name = "REV")]
    pub head: Option<String>,
    /// Use this export file as the base instead of starting a server.
    #[arg(long, value_name = "FILE")]
    pub base_export: Option<PathBuf>,
    /// Use this export file as the head instead of starting a server.
    #[arg(long, value_name = "FILE")]
    pub head_export: Option<PathBuf>,
    /// Several servers from export files: a folder holding one `NAME.json` export (or a
    /// `NAME.failed` note) per server, for the base. Goes with --head-exports.
    #[arg(long, value_name = "DIR")]
    pub base_exports: Option<PathBuf>,
    /// The head's folder of export files, one per server (see --base-exports).
    #[arg(long, value_name = "DIR")]
    pub head_exports: Option<PathBuf>,
}

/// Where a command that writes a report puts it (the gate, `calibrate`).
#[derive(Debug, Clone, Args, Default)]
pub struct ReportDirArgs {
    /// Where the report goes (default: `.tool-definition-score` at the repository's root, or in
    /// the current folder outside a repository).
    #[arg(long, value_name = "DIR")]
    pub report_dir: Option<PathBuf>,
}

/// `tdqs-gate check REPORT`, also written `tdqs-gate --check REPORT`.
#[derive(Debug, Clone, Args)]
pub struct CheckArgs {
    /// The saved report (tool-definition-score.json) to re-check.
    #[arg(value_name = "REPORT")]
    pub report: PathBuf,
    /// The SHA-256 the report file must have (the `report-sha256` output of the run that wrote
    /// it), so a report edited since is refused.
    #[arg(long, value_name = "SHA256")]
    pub expect_digest: Option<String>,
    // The rule the report must have been decided by (the one the run that wrote it was given)
    // and where the settings come from when its base is an export file.
    #[command(flatten)]
    pub rule: RuleArgs,
    // The sides to export now (default: the revisions the report records; with --base alone,
    // the head is the working tree).
    #[command(flatten)]
    pub sides: SideArgs,
    #[command(flatten)]
    pub repo: RepoArgs,
    #[command(flatten)]
    pub server: ServerArgs,
    // The judge's pins (the report's are checked against them) and the credential names kept
    // from the servers; no judge is asked.
    #[command(flatten)]
    pub judge: JudgeArgs,
}

/// `tdqs-gate calibrate CAPTURE`, also written `tdqs-gate --calibrate CAPTURE`.
#[derive(Debug, Clone, Args)]
pub struct CalibrateArgs {
    /// The registry capture to score (see docs/calibration.md).
    #[arg(value_name = "CAPTURE")]
    pub capture: PathBuf,
    /// How many times the capture is scored (odd, so that each median is a score the judge gave).
    #[arg(long, value_name = "N", default_value_t = 3)]
    pub runs: usize,
    #[command(flatten)]
    pub report_dir: ReportDirArgs,
    #[command(flatten)]
    pub repo: RepoArgs,
    #[command(flatten)]
    pub judge: JudgeArgs,
}

/// The one side `score`, `suggest`, `lint` and `eval` read: a revision whose server is started
/// (default: the working tree), or an export file. Each command words the help for what it does
/// with the side (`mut_arg` on its struct); the texts here are the fallback.
#[derive(Debug, Clone, Args, Default)]
pub struct OneSideArgs {
    /// Read the tools of this revision (default: the working tree).
    #[arg(long, value_name = "REV", conflicts_with = "export")]
    pub rev: Option<String>,
    /// Read this export file instead of starting a server.
    #[arg(long, value_name = "FILE")]
    pub export: Option<PathBuf>,
}

#[derive(Debug, Clone, Args)]
pub struct ExportArgs {
    /// Export this revision (default: the working tree).
    #[arg(long, value_name = "REV")]
    pub rev: Option<String>,
    /// Write the export here (default: standard output).
    #[arg(short, long, value_name = "FILE")]
    pub output: Option<PathBuf>,
    /// Start no server: print the names of the servers a gate run would cover, one a line (the
    /// `[[server]]` tables of the revision's tdqs-gate.toml, or the --server names), and
    /// nothing for a single server.
    #[arg(long, conflicts_with = "output")]
    pub list_servers: bool,
    /// Run the exported revision's launch plan under the settings of this revision's
    /// tdqs-gate.toml (isolate-home, pass-env, which ${…} it may read, setup-in-place, limits,
    /// probe, the set of servers), as the gate does for a head: pass the base revision when
    /// exporting a pull request's head.
    #[arg(long, value_name = "REV")]
    pub settings_rev: Option<String>,
    #[command(flatten)]
    pub repo: RepoArgs,
    #[command(flatten)]
    pub server: ServerArgs,
}

#[derive(Debug, Clone, Args)]
#[command(
    mut_arg("rev", |a| a.help("Score this revision (default: the working tree)")),
    mut_arg("export", |a| a.help("Score this export file instead of starting a server")),
)]
pub struct ScoreArgs {
    #[command(flatten)]
    pub side: OneSideArgs,
    /// Print the scored side as JSON.
    #[arg(long)]
    pub json: bool,
    /// Also write a shields.io endpoint badge (the mean TDQS and tier) to FILE.
    #[arg(long, value_name = "FILE")]
    pub badge: Option<PathBuf>,
    #[command(flatten)]
    pub repo: RepoArgs,
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub judge: JudgeArgs,
}

#[derive(Debug, Clone, Args)]
#[command(
    mut_arg("rev", |a| a.help("Rewrite the tools of this revision (default: the working tree)")),
    mut_arg("export", |a| a.help(
        "Rewrite the tools of this export file instead of starting a server"
    )),
)]
pub struct SuggestArgs {
    #[command(flatten)]
    pub side: OneSideArgs,
    /// The tool to rewrite (repeatable; default: every tool, within --max-calls).
    #[arg(long, value_name = "NAME")]
    pub tool: Vec<String>,
    /// The most judge calls (retries included) the rewrites may make.
    #[arg(long, value_name = "N", default_value_t = crate::suggest::DEFAULT_MAX_CALLS)]
    pub max_calls: u64,
    /// The source tree whose description literals become suggestion blocks (default: the
    /// working tree when it is what was exported).
    #[arg(long, value_name = "DIR")]
    pub source: Option<PathBuf>,
    /// Print the rewrites as JSON.
    #[arg(long)]
    pub json: bool,
    #[command(flatten)]
    pub repo: RepoArgs,
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub judge: JudgeArgs,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum, Default)]
pub enum FailOnArg {
    #[default]
    Error,
    Warning,
    Info,
    Never,
}

#[derive(Debug, Clone, Args)]
#[command(
    mut_arg("rev", |a| a.help("Lint this revision (default: the working tree)")),
    mut_arg("export", |a| a.help(
        "Lint this file instead of starting a server: an export, a `{\"tools\": [...]}` list (a \
         tools/list result) or a bare `[...]` array of tool objects"
    )),
)]
pub struct LintArgs {
    #[command(flatten)]
    pub side: OneSideArgs,
    /// Findings as JSON.
    #[arg(long, conflicts_with = "sarif")]
    pub json: bool,
    /// Findings as SARIF 2.1.0.
    #[arg(long)]
    pub sarif: bool,
    /// Findings as GitHub Markdown, for a pull-request comment.
    #[arg(long, conflicts_with_all = ["json", "sarif"])]
    pub markdown: bool,
    /// Show and fail on only the findings this baseline does not have: a file written by
    /// --write-baseline, or the base revision's export or tool list (linted with the same rules).
    #[arg(long, value_name = "FILE")]
    pub baseline: Option<PathBuf>,
    /// Save the findings of this run as a baseline file (the run then passes).
    #[arg(long, value_name = "FILE", conflicts_with = "baseline")]
    pub write_baseline: Option<PathBuf>,
    /// Exit 1 when a finding of this severity or worse exists (default: `[lint] fail_on` of
    /// tdqs-gate.toml, else error).
    #[arg(long, value_enum)]
    pub fail_on: Option<FailOnArg>,
    /// Exit 1 when the server's average scorecard is below N (0–100).
    #[arg(long, value_name = "N")]
    pub fail_under: Option<f64>,
    /// Check only these rules: codes (TDQS-D007 or D007) or prefixes (D, D00), comma-separated
    /// or repeated.
    #[arg(long, value_name = "CODES", value_delimiter = ',')]
    pub select: Vec<String>,
    /// Turn these rules off: codes or prefixes, as --select takes them.
    #[arg(long, value_name = "CODES", value_delimiter = ',')]
    pub ignore: Vec<String>,
    /// Anchor SARIF findings on the source lines that define each tool, found in this folder
    /// (default: the repository's working tree when linting it; none for --export or --rev).
    #[arg(long, value_name = "DIR")]
    pub source: Option<PathBuf>,
    #[command(flatten)]
    pub repo: RepoArgs,
    #[command(flatten)]
    pub server: ServerArgs,
}

#[derive(Debug, Clone, Args)]
pub struct HookArgs {
    /// The revision the hook compares against, checked when installing [default: the remote's
    /// default branch: origin/HEAD, else what the remote reports, else origin/main, origin/master].
    #[arg(long, value_name = "REV")]
    pub base: Option<String>,
    /// Block the push on INVALID too (default: warn and let it through).
    #[arg(long)]
    pub strict: bool,
    /// Extra arguments for the gate, e.g. "--judge static".
    #[arg(long, value_name = "ARGS", allow_hyphen_values = true)]
    pub args: Option<String>,
    /// Replace an existing pre-push hook.
    #[arg(long)]
    pub force: bool,
    #[command(flatten)]
    pub repo: RepoArgs,
}

/// Who selects in `eval`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, ValueEnum)]
pub enum EvalModeArg {
    /// A language model through the judge (`--judge claude-code|anthropic|openai`).
    LiveModel,
    /// The deterministic lexical ranking (BM25F): no model, an estimate of ambiguity.
    Synthetic,
}

#[derive(Debug, Clone, Args)]
#[command(
    mut_arg("rev", |a| a.help("Run against this revision (default: the working tree)")),
    mut_arg("export", |a| a.help("Run against this export file instead of starting a server")),
)]
pub struct EvalArgs {
    /// Who selects: live-model (a model, through --judge) or synthetic (no model). Required: the
    /// two measure different things, so neither is assumed.
    #[arg(long, value_enum, required_unless_present = "init")]
    pub mode: Option<EvalModeArg>,
    /// Draft a case file with the judge model instead of running one: each drafted case is then
    /// validated in a separate question, and a case defended with confidence under 0.7 is
    /// marked exploratory (shown, not scored). Writes --cases (default tdqs-eval.toml).
    #[arg(long, conflicts_with_all = ["mode", "min_accuracy", "offline", "json"])]
    pub init: bool,
    /// With --init: replace an existing case file.
    #[arg(long, requires = "init")]
    pub force: bool,
    /// The case file (default: tdqs-eval.toml at the repository root).
    #[arg(long, value_name = "FILE")]
    pub cases: Option<PathBuf>,
    #[command(flatten)]
    pub side: OneSideArgs,
    /// Print the run as JSON.
    #[arg(long)]
    pub json: bool,
    /// Exit 1 when the selection accuracy (positives and siblings) is below N percent (0–100).
    #[arg(long, value_name = "N")]
    pub min_accuracy: Option<f64>,
    /// Where answers are cached (default: .tdqs/eval-cache at the repository root).
    #[arg(long, value_name = "DIR")]
    pub eval_cache: Option<PathBuf>,
    /// Replay cached answers only: no key, no network; a missing answer is an error.
    #[arg(long)]
    pub offline: bool,
    /// Stop once the run's model calls have used N tokens (input + output).
    #[arg(long, value_name = "TOKENS")]
    pub max_cost: Option<u64>,
    /// Seconds to wait between model calls (e.g. 1.5), for rate-limited endpoints.
    #[arg(long, value_name = "SECS", value_parser = parse_pace)]
    pub pace: Option<f64>,
    #[command(flatten)]
    pub repo: RepoArgs,
    #[command(flatten)]
    pub server: ServerArgs,
    #[command(flatten)]
    pub judge: JudgeArgs,
}

fn parse_pace(text: &str) -> Result<f64, String> {
    match text.trim().parse::<f64>() {
        Ok(s) if s.is_finite() && (0.0..=3600.0).contains(&s) => Ok(s),
        _ => Err("must be a number of seconds from 0 to 3600".to_string()),
    }
}

/// The longest timeout any flag accepts: 4 hours.
pub(crate) const MAX_TIMEOUT_SECS: u64 = 4 * 3600;
/// The most judge calls at once.
pub(crate) const MAX_CONCURRENCY: usize = 256;

fn parse_concurrency(text: &str) -> Result<usize, String> {
    match text.trim().parse::<usize>() {
        Ok(n) if (1..=MAX_CONCURRENCY).contains(&n) => Ok(n),
        _ => Err(format!(
            "must be a whole number from 1 to {MAX_CONCURRENCY} (judge calls at once)"
        )),
    }
}

// `tdqs-gate ci …`: the command line of the CI building blocks (the GitHub Action and the
// reusable workflow run these; see docs/github-action.md).

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

#[cfg(test)]
mod tests {
    use clap::{CommandFactory, Parser};

    use super::*;

    #[test]
    fn the_command_line_definition_is_consistent() {
        Cli::command().debug_assert();
    }

    #[test]
    fn each_command_that_reads_one_side_words_rev_and_export_for_itself() {
        let cli = Cli::command();
        for (name, verb) in [
            ("score", "Score"),
            ("suggest", "Rewrite"),
            ("lint", "Lint"),
            ("eval", "Run against"),
        ] {
            let command = cli.find_subcommand(name).unwrap();
            for flag in ["rev", "export"] {
                let arg = command.get_arguments().find(|a| a.get_id() == flag);
                let help = arg.and_then(|a| a.get_help()).map(|h| h.to_string());
                assert!(
                    help.as_deref().is_some_and(|h| h.starts_with(verb)),
                    "{name} --{flag}: {help:?}"
                );
            }
        }
        let parsed = parse(&["lint", "--rev", "main", "--export", "x.json"]);
        assert_eq!(
            parsed.unwrap_err().kind(),
            clap::error::ErrorKind::ArgumentConflict
        );
    }

    fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
        Cli::try_parse_from(std::iter::once("tdqs-gate").chain(args.iter().copied()))
    }

    #[test]
    fn exclusive_flags_are_refused_by_the_parser() {
        for args in [
            &["--calibrate", "c.json", "--check", "r.json"][..],
            &["--calibrate", "c.json", "--base", "main"],
            &["--runs", "5", "--base", "main"],
        ] {
            let err = parse(args).expect_err(&format!("{args:?} must be refused"));
            assert!(
                matches!(
                    err.kind(),
                    clap::error::ErrorKind::ArgumentConflict
                        | clap::error::ErrorKind::UnknownArgument
                ),
                "{args:?}: {err}"
            );
        }
    }

    #[test]
    fn check_and_calibrate_are_subcommands_and_flags() {
        for args in [
            &["check", "r.json", "--judge", "static"][..],
            &["--check", "r.json", "--judge", "static"],
        ] {
            match parse(args).unwrap().command {
                Some(Command::Check(check)) => {
                    assert_eq!(check.report, PathBuf::from("r.json"));
                    assert_eq!(check.judge.judge, JudgeKind::Static);
                }
                other => panic!("{args:?}: {other:?}"),
            }
        }
        for args in [
            &["calibrate", "c.json", "--runs", "5"][..],
            &["--calibrate", "c.json", "--runs", "5"],
        ] {
            match parse(args).unwrap().command {
                Some(Command::Calibrate(calibrate)) => {
                    assert_eq!(calibrate.capture, PathBuf::from("c.json"));
                    assert_eq!(calibrate.runs, 5);
                }
                other => panic!("{args:?}: {other:?}"),
            }
        }
    }

    #[test]
    fn the_rule_flags_read_the_same_in_the_gate_and_in_check() {
        let gate = Cli::command();
        let check = gate
            .find_subcommand("check")
            .expect("check is a subcommand")
            .clone();
        for flag in ["decision-rule", "tool-drop", "settings-rev"] {
            let help_of = |command: &clap::Command| {
                let arg = command
                    .get_arguments()
                    .find(|a| a.get_long() == Some(flag))
                    .unwrap_or_else(|| panic!("{} has no --{flag}", command.get_name()));
                arg.get_help().map(ToString::to_string)
            };
            let in_gate = help_of(&gate);
            assert!(in_gate.is_some(), "--{flag} has no help");
            assert_eq!(in_gate, help_of(&check), "--{flag}");
        }
        let parsed = parse(&["check", "r.json", "--decision-rule", "reference"]).unwrap();
        match parsed.command {
            Some(Command::Check(check)) => {
                assert_eq!(check.rule.decision_rule, Some(DecisionRuleArg::Reference))
            }
            other => panic!("{other:?}"),
        }
        let parsed = parse(&["--base", "main", "--tool-drop", "0.7"]).unwrap();
        assert_eq!(parsed.gate.rule.tool_drop, Some(0.7));
    }

    #[test]
    fn flags_of_the_gate_alone_are_refused_by_check_and_calibrate() {
        for args in [
            &["calibrate", "c.json", "--base", "no-such-rev"][..],
            &["calibrate", "c.json", "--decision-rule", "reference"],
            &["calibrate", "c.json", "--url", "http://x"],
            &["calibrate", "c.json", "--badge", "b.json"],
            &["check", "r.json", "--runs", "3"],
            &["check", "r.json", "--report-dir", "out"],
            &["check", "r.json", "--eval", "synthetic"],
            &["check", "r.json", "--full-report"],
        ] {
            let err = parse(args).expect_err(&format!("{args:?} must be refused"));
            assert_eq!(
                err.kind(),
                clap::error::ErrorKind::UnknownArgument,
                "{args:?}: {err}"
            );
        }
    }
}

/// `--decision-rule` values.
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum DecisionRuleArg {
    NoiseAware,
    Reference,
}

impl From<DecisionRuleArg> for tdqs_core::decide::DecisionRule {
    fn from(a: DecisionRuleArg) -> Self {
        match a {
            DecisionRuleArg::NoiseAware => tdqs_core::decide::DecisionRule::NoiseAware,
            DecisionRuleArg::Reference => tdqs_core::decide::DecisionRule::Reference,
        }
    }
}
