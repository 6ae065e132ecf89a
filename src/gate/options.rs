//! Resolved options of a gate run (the command line converts into these).

use std::path::PathBuf;
use std::time::Duration;

use serde_json::Value;

use tdqs_core::export::Era;

/// Overrides of how servers are started and probed.
#[derive(Debug, Clone, Default)]
pub struct ServerOptions {
    pub command: Option<String>,
    /// `--url`: the server's Streamable HTTP endpoint.
    pub url: Option<String>,
    /// `--server NAME` when given once: a host manifest entry, or with `[[server]]` tables the
    /// table to start.
    pub server: Option<String>,
    /// Every `--server NAME`, in order: with several (or with `[[server]]` tables), the gate
    /// gates each named server (see `gate::monorepo`).
    pub servers: Vec<String>,
    pub timeout: Option<Duration>,
    pub max_message_bytes: Option<usize>,
    pub max_listing_bytes: Option<usize>,
    pub protocol_version: Option<String>,
    pub era: Option<Era>,
    pub capabilities: Option<Value>,
    /// `export --settings-rev`: the revision whose tdqs-gate.toml holds the settings the
    /// exported revision's launch plan runs under (the gate itself uses
    /// `GateOptions::settings_rev` and the base revision).
    pub settings_rev: Option<String>,
    /// `--sandbox` (or `TDQS_GATE_SANDBOX`): the workflow's choice, which wins over
    /// `[sandbox] mode`.
    pub sandbox: Option<crate::platform::sandbox::SandboxMode>,
}

// The judge's options live with the judges (`judge::build`), which the gate and the eval share.
pub use crate::judge::build::{JudgeMode, JudgeOptions};

/// Where one side comes from.
#[derive(Debug, Clone)]
pub enum SideSource {
    /// A revision checked out into a temporary worktree.
    Revision(String),
    /// The repository's working tree as it is.
    WorkingTree,
    /// A ready-made export file.
    ExportFile(PathBuf),
    /// A folder of ready-made export files, one per server (`NAME.json`), for a run over
    /// several servers (see `gate::export_dirs`).
    ExportDir(PathBuf),
}

#[derive(Debug, Clone)]
pub struct GateOptions {
    pub repo: Option<PathBuf>,
    pub base: SideSource,
    pub head: SideSource,
    pub server: ServerOptions,
    pub judge: JudgeOptions,
    pub report_dir: PathBuf,
    pub share_identical: bool,
    /// `--decision-rule`: over the pins' `confirmation.rule`.
    pub decision_rule: Option<tdqs_core::decide::DecisionRule>,
    /// `--tool-drop`: over the configuration's `[decision] tool-drop`.
    pub tool_drop: Option<tdqs_core::arith::Tenths>,
    /// `--max-listing-growth`: over the configuration's `[decision] max-listing-growth`
    /// (percent of the base listing's tokens the head may add without a TDQS gain).
    pub max_listing_growth: Option<u32>,
    /// `--full-report`: list every tool in the report, however many (otherwise a large server's
    /// unchanged tools are summarised, see `tdqs_core::report::summary`).
    pub full_report: bool,
    /// The opt-in selection check (`--eval` / `[eval]`), run on both sides when the
    /// definitions differ.
    pub eval: Option<GateEval>,
    /// The opt-in rewrites (`--suggest`) of the tools that fell, under their cost cap.
    pub suggest: Option<crate::suggest::SuggestOptions>,
    /// `--settings-rev`: the revision whose tdqs-gate.toml holds the gate's settings, when the
    /// base is not a revision (export files); the base revision otherwise.
    pub settings_rev: Option<String>,
    /// The base's `tdqs-gate.toml` as the base's export job copied it into its folder
    /// (`ci score`, when the base folder holds [`crate::gate::export_dirs::SETTINGS_FILE`]): the
    /// settings of a run whose base is a folder and no `--settings-rev` names a revision.
    pub settings_file: Option<PathBuf>,
    /// `--answer-cache` / `--no-answer-cache`: where answers are kept between runs.
    pub answer_cache: crate::score::answer_cache::AnswerCacheChoice,
}

/// The selection check the gate runs on both sides (docs/eval.md, "In the gate").
#[derive(Debug, Clone)]
pub struct GateEval {
    /// The case suite, read once: the same cases for both sides.
    pub suite: tdqs_core::eval::case::Suite,
    /// Where it was read from (for messages).
    pub cases_path: PathBuf,
    /// The same selector, model and settings for both sides.
    pub options: crate::eval::EvalOptions,
}
