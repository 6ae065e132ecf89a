//! One eval run as reported: the mode and who selected, the cases, the figures, the cost, and
//! the two roll-ups with their parts. Rendered as text here; the engine writes it as JSON.

use serde::{Deserialize, Serialize};

use super::metrics::{CaseResult, Metrics, Ratio};
use super::scores::{Composite, Health};
use super::Mode;
use crate::judge::TokenUsage;

/// The result of running one suite against one side's tools.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct EvalRun {
    pub mode: Mode,
    /// The sentence saying what the mode measures.
    pub mode_label: String,
    /// `synthetic`, `claude-code`, `anthropic` or `openai`.
    pub selector: String,
    /// The model asked (the heuristic's name in synthetic mode).
    pub model: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_name: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub server_version: Option<String>,
    pub tool_count: usize,
    /// SHA-256 of the tool list the selector saw.
    pub tool_set_digest: String,
    /// SHA-256 of the case file's cases (two runs are paired only over the same suite).
    pub suite_digest: String,
    pub cases: Vec<CaseResult>,
    pub metrics: Metrics,
    /// Calls made to the model in this run (not from the cache).
    pub calls: usize,
    /// Answers replayed from the cache.
    pub cached: usize,
    /// Tokens of the calls made in this run.
    pub usage: TokenUsage,
    /// Wall time of the calls made in this run, summed, in milliseconds.
    pub latency_ms: u64,
    pub health: Health,
    pub composite: Composite,
}

/// The version of the `eval --json` document ([`EvalDocument`]), documented in docs/eval.md.
/// Raised when a key is removed or renamed or its meaning changes; adding a key keeps it.
/// 2: the composite's distinguishability counts requests that reached no tool against it, and
/// the health score's percentages round as mcp-toolgauge rounds them (half to even).
pub const EVAL_SCHEMA_VERSION: u32 = 2;

/// What `tdqs-gate eval --json` prints: the run's keys after `schemaVersion`.
#[derive(Debug, Serialize)]
#[serde(rename_all = "camelCase")]
pub struct EvalDocument<'a> {
    pub schema_version: u32,
    #[serde(flatten)]
    pub run: &'a EvalRun,
}

fn line(label: &str, r: &Ratio) -> String {
    format!("{label:<22}{}\n", r.render())
}

impl EvalRun {
    /// The versioned JSON document of this run.
    pub fn document(&self) -> EvalDocument<'_> {
        EvalDocument {
            schema_version: EVAL_SCHEMA_VERSION,
            run: self,
        }
    }

    /// The text report: mode first, then the figures, the per-tool table, the capture lines and
    /// the two roll-ups with their parts.
    pub fn render_text(&self) -> String {
        let mut out = String::new();
        out.push_str(&format!("mode: {}\n", self.mode_label));
        let server = match (&self.server_name, &self.server_version) {
            (Some(n), Some(v)) => format!("{n} {v}"),
            (Some(n), None) => n.clone(),
            _ => "(unnamed server)".to_string(),
        };
        out.push_str(&format!(
            "{server}   {} tools   tool set {}\n",
            self.tool_count,
            &self.tool_set_digest[..self.tool_set_digest.len().min(12)]
        ));
        out.push_str(&format!(
            "selector {} ({})   {} cases ({} exploratory, not scored)   {} calls, {} from cache\n",
            self.model,
            self.selector,
            self.cases.len(),
            self.metrics.exploratory,
            self.calls,
            self.cached
        ));
        out.push_str(&format!(
            "tokens {} in, {} out   latency {} ms{}\n\n",
            self.usage.input_tokens,
            self.usage.output_tokens,
            self.latency_ms,
            if self.calls > 0 {
                format!(" ({} ms per call)", self.latency_ms / self.calls as u64)
            } else {
                String::new()
            }
        ));
        let m = &self.metrics;
        out.push_str(&line("Selection accuracy", &m.selection));
        out.push_str(&line("  positives", &m.positives));
        out.push_str(&line("  siblings", &m.siblings));
        out.push_str(&line("Abstention", &m.abstention));
        if self.mode == Mode::Synthetic {
            out.push_str("Argument validity       –   (synthetic mode generates no arguments)\n");
        } else {
            out.push_str(&line("Argument validity", &m.argument_validity));
        }
        if !m.per_tool.is_empty() {
            let width = m
                .per_tool
                .iter()
                .map(|t| t.tool.chars().count())
                .max()
                .unwrap_or(4)
                .max(4);
            out.push_str(&format!(
                "\n{:<width$}  {:<12}  went instead to\n",
                "tool", "hit"
            ));
            for t in &m.per_tool {
                let instead: Vec<String> = t
                    .went_instead
                    .iter()
                    .map(|(to, n)| {
                        let shown = if to == super::case::NO_TOOL {
                            "(nothing)"
                        } else {
                            to.as_str()
                        };
                        let pct = Ratio {
                            hit: *n,
                            of: t.hit.of,
                        }
                        .percent()
                        .unwrap_or(0);
                        format!("{shown} {pct}%")
                    })
                    .collect();
                out.push_str(&format!(
                    "{:<width$}  {:<12}  {}\n",
                    t.tool,
                    t.hit.render().trim_start(),
                    instead.join(", ")
                ));
            }
        }
        if !m.captures.is_empty() {
            out.push('\n');
            for c in &m.captures {
                out.push_str(&c.line());
                out.push('\n');
            }
        }
        let exploratory: Vec<&CaseResult> = self.cases.iter().filter(|c| c.exploratory).collect();
        if !exploratory.is_empty() {
            out.push_str("\nexploratory (shown, not scored):\n");
            for c in exploratory {
                out.push_str(&format!(
                    "  {}: expected {}, selected {}\n",
                    c.id,
                    c.expected.as_str(),
                    c.selected.as_str()
                ));
            }
        }
        let wrong: Vec<&CaseResult> = self
            .cases
            .iter()
            .filter(|c| !c.exploratory && !c.correct)
            .collect();
        if !wrong.is_empty() {
            out.push_str("\nmissed cases:\n");
            for c in wrong {
                out.push_str(&format!(
                    "  {} ({}): expected {}, selected {} — {}\n",
                    c.id,
                    c.kind.as_str(),
                    c.expected.as_str(),
                    c.selected.as_str(),
                    c.reason
                ));
            }
        }
        let invalid: Vec<&CaseResult> = self
            .cases
            .iter()
            .filter(|c| c.arguments_valid == Some(false))
            .collect();
        if !invalid.is_empty() {
            out.push_str("\ninvalid arguments:\n");
            for c in invalid {
                out.push_str(&format!("  {}: {}\n", c.id, c.argument_errors.join("; ")));
            }
        }
        out.push('\n');
        out.push_str(&self.health.render());
        out.push('\n');
        out.push_str(&self.composite.render());
        out.push_str(&format!("\nmode: {}\n", self.mode.as_str()));
        out
    }
}
