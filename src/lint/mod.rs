//! `tdqs-gate lint`: deterministic findings on tool definitions, with no model.
//!
//! The library side is pure: [`lint_export`] turns an export and a [`LintConfig`] into a
//! [`LintReport`]; [`render_text`], [`render_json`], [`render_markdown`] and [`render_sarif`] turn a report into
//! bytes; [`should_fail`] applies `--fail-on` / `--fail-under`. The command line reads the
//! export (or starts the server), writes the chosen rendering and exits 1 when
//! [`should_fail`] says so: for `lint`, failing its threshold is the lint's "block". Errors
//! (a server that will not start, a bad config) are INVALID, exit 2.
//!
//! Rule families, codes and their rationale are in `docs/lint.md`; [`catalogue::RULES`] is the
//! catalogue. The facts and word lists are shared with the static judge
//! ([`crate::judge::static_judge`]).

pub mod baseline;
pub mod catalogue;
pub mod config;
pub mod facts;
pub mod markdown;
pub mod namespaces;
pub mod pairs;
pub mod render;
pub mod rules;
pub mod schema_rules;
pub mod scorecard;
pub mod text;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use tdqs_core::export::Export;

pub use catalogue::{Finding, Severity};
pub use config::{FailOn, LintConfig};
pub use markdown::render_markdown;
pub use render::{render_json, render_sarif, render_sarif_located, render_text};
pub use scorecard::Scorecard;

/// Version of the rules; any change that can move a finding or a score bumps it, and reports
/// are comparable only within one version.
pub(crate) const RULES_VERSION: &str = "tdqs-gate-lint/3";

/// The result of linting one side.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct LintReport {
    pub rules_version: String,
    pub server_name: Option<String>,
    pub server_version: Option<String>,
    pub tool_count: usize,
    /// Findings after the configuration's levels; server-wide first, then by tool in listing
    /// order.
    pub findings: Vec<Finding>,
    /// One scorecard per tool, in listing order.
    pub scorecards: Vec<Scorecard>,
    /// The mean scorecard total in tenths (rounded half up once).
    pub average_tenths: u32,
    /// Codes the configuration turned off.
    pub disabled: Vec<catalogue::Code>,
    /// A file the findings point at in SARIF (the export file or the config that launches the
    /// server); set by the caller.
    pub artifact: Option<String>,
    /// What a baseline and `[[lint.suppress]]` took out of `findings` ([`baseline::apply`]).
    #[serde(default)]
    pub hidden: baseline::Hidden,
}

impl LintReport {
    /// (errors, warnings, info)
    pub fn counts(&self) -> (usize, usize, usize) {
        let count = |s| self.findings.iter().filter(|f| f.severity == s).count();
        (
            count(Severity::Error),
            count(Severity::Warning),
            count(Severity::Info),
        )
    }

    /// The average score with one decimal, as a number.
    pub fn average_score(&self) -> f64 {
        f64::from(self.average_tenths) / 10.0
    }
}

/// Lints a list of raw tool objects.
pub fn lint_tools(
    server_name: Option<&str>,
    server_version: Option<&str>,
    tools: &[Value],
    config: &LintConfig,
) -> LintReport {
    let names: Vec<String> = tools
        .iter()
        .map(|t| tdqs_core::digest::tool_name(t).to_string())
        .collect();
    let side = tdqs_core::judge::siblings::SideNames::new(names);
    let facts: Vec<facts::ToolFacts> = tools
        .iter()
        .map(|t| facts::extract_with(t, &side))
        .collect();
    let namespaces = namespaces::Namespaces::of(&facts);
    let raw = rules::check_all(tools, &facts);
    let findings: Vec<Finding> = raw
        .into_iter()
        .filter_map(|mut f| {
            config.level(f.code).map(|level| {
                f.severity = level;
                f
            })
        })
        .collect();
    let scorecards: Vec<Scorecard> = facts
        .iter()
        .map(|f| scorecard::score(f, rules::unmentioned_subjects(f, &namespaces).len()))
        .collect();
    let disabled = config
        .levels
        .iter()
        .filter(|(_, level)| level.is_none())
        .map(|(code, _)| *code)
        .collect();
    LintReport {
        rules_version: RULES_VERSION.to_string(),
        server_name: server_name.map(str::to_string),
        server_version: server_version.map(str::to_string),
        tool_count: tools.len(),
        findings,
        average_tenths: scorecard::average_tenths(&scorecards),
        scorecards,
        disabled,
        artifact: None,
        hidden: baseline::Hidden::default(),
    }
}

/// Lints one exported side.
pub fn lint_export(export: &Export, config: &LintConfig) -> LintReport {
    lint_tools(
        export.server_name.as_deref(),
        export.server_version.as_deref(),
        &export.tools,
        config,
    )
}

/// True when the report fails the thresholds: a finding at or above `fail_on`, or an average
/// scorecard below `fail_under`.
pub fn should_fail(report: &LintReport, fail_on: FailOn, fail_under: Option<f64>) -> bool {
    let by_severity = fail_on
        .threshold()
        .is_some_and(|min| report.findings.iter().any(|f| f.severity >= min));
    // Compare in tenths so 70.0 is not below 70 through float noise.
    let by_score = fail_under.is_some_and(|min| {
        let min_tenths = (min * 10.0).round();
        f64::from(report.average_tenths) < min_tenths
    });
    by_severity || by_score
}

/// A tool whose text speaks to whoever grades it, or imitates the grading prompt's structure
/// (its `<input-schema>`-style blocks, its CONTEXT SIGNALS list, its answer's JSON).
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct JudgeDirectedText {
    pub tool: String,
    /// The matched words, as written (at most 80 characters).
    pub evidence: String,
}

/// Every tool of `tools` with text aimed at the judge, in listing order, one finding per tool.
///
/// The definitions are pasted into a model judge's prompt, so such text can steer the score it
/// is meant to be graded by. The prompt text is fixed by the pinned specification; the gate can
/// only detect and report it (the static judge also lowers the score: TDQS-M005).
pub(crate) fn judge_directed_text(tools: &[Value]) -> Vec<JudgeDirectedText> {
    fn first_hit(value: &Value) -> Option<String> {
        match value {
            Value::String(s) => text::judge_cue().find(s).map(|m| {
                let found = m.as_str();
                found.chars().take(80).collect()
            }),
            Value::Array(items) => items.iter().find_map(first_hit),
            Value::Object(map) => map.values().find_map(first_hit),
            _ => None,
        }
    }
    tools
        .iter()
        .filter_map(|tool| {
            let fields = [
                "title",
                "description",
                "inputSchema",
                "outputSchema",
                "annotations",
            ];
            let evidence = fields
                .iter()
                .filter_map(|f| tool.get(*f))
                .find_map(first_hit)?;
            Some(JudgeDirectedText {
                tool: tdqs_core::digest::tool_name(tool).to_string(),
                evidence,
            })
        })
        .collect()
}
