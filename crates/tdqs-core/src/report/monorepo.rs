//! The report of one gate run over several servers of one repository (a monorepo: `[[server]]`
//! tables, or several `--server NAME`).
//!
//! It keeps the top-level fields a consumer of a single-server report reads first —
//! `schemaVersion`, `generator`, `decision`, `exitCode`, `reason`, `scored` — now meaning the
//! whole run, and adds `servers`: one entry per server, in the configuration's order, each a
//! name and that server's report exactly as a single-server run writes it. A single server
//! (`[server]`) still writes the single-server report.
//!
//! The overall verdict is the worst of the servers': any INVALID makes it INVALID (a server that
//! could not be compared may have fallen, so nothing may pass on its behalf), else any BLOCK makes
//! it BLOCK (one server falling is enough to stop the pull request), else PASS.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use crate::exit::Verdict;

use super::md_escape::{code, text as cell, text_with_code_spans as reason_text};
use super::model::{Generator, Report, ReportError, REPORT_SCHEMA_VERSION};

/// One server's part of a monorepo report.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ServerReport {
    /// The `[[server]]` table's `name` (or the `--server NAME` given).
    pub name: String,
    /// The server's report, as a single-server run writes it.
    pub report: Report,
}

/// The report of a run over several servers.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MonorepoReport {
    pub schema_version: u32,
    pub generator: Generator,
    /// The overall verdict: the worst of the servers' (see the module documentation).
    pub decision: Verdict,
    pub exit_code: u8,
    pub reason: String,
    /// True when any server was scored.
    pub scored: bool,
    pub servers: Vec<ServerReport>,
    /// What made the whole run INVALID before any server could be gated (an unknown
    /// `--server NAME`, a revision that cannot be checked out); a server's own failure is in its
    /// report.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<ReportError>,
}

/// The worst verdict: INVALID over BLOCK over PASS. No verdict at all is INVALID.
pub fn overall(verdicts: impl IntoIterator<Item = Verdict>) -> Verdict {
    let mut worst: Option<Verdict> = None;
    for v in verdicts {
        worst = Some(match (worst, v) {
            (_, Verdict::Invalid) | (Some(Verdict::Invalid), _) => Verdict::Invalid,
            (_, Verdict::Block) | (Some(Verdict::Block), _) => Verdict::Block,
            _ => Verdict::Pass,
        });
    }
    worst.unwrap_or(Verdict::Invalid)
}

/// The overall reason, recomputed from the servers' verdicts (`--check` compares it).
pub fn overall_reason(servers: &[ServerReport]) -> String {
    let verdict = overall(servers.iter().map(|s| s.report.decision));
    let list: Vec<String> = servers
        .iter()
        .map(|s| format!("`{}` {}", s.name, s.report.decision))
        .collect();
    let named = |wanted: Verdict| -> Vec<String> {
        servers
            .iter()
            .filter(|s| s.report.decision == wanted)
            .map(|s| format!("`{}`", s.name))
            .collect()
    };
    let n = servers.len();
    let why = match verdict {
        Verdict::Pass => format!("{n} of {n} servers pass"),
        Verdict::Block => {
            let fell = named(Verdict::Block);
            format!("{} of {n} servers fell ({})", fell.len(), fell.join(", "))
        }
        Verdict::Invalid => {
            let invalid = named(Verdict::Invalid);
            format!(
                "{} of {n} servers could not be decided ({})",
                invalid.len(),
                invalid.join(", ")
            )
        }
    };
    format!("{why}: {}.", list.join(", "))
}

impl MonorepoReport {
    /// The report of the servers gated, with the overall verdict and reason.
    pub fn new(servers: Vec<ServerReport>) -> MonorepoReport {
        let decision = overall(servers.iter().map(|s| s.report.decision));
        MonorepoReport {
            schema_version: REPORT_SCHEMA_VERSION,
            generator: Generator::default(),
            decision,
            exit_code: decision.code(),
            reason: overall_reason(&servers),
            scored: servers.iter().any(|s| s.report.scored),
            servers,
            error: None,
        }
    }

    /// An INVALID run that gated no server.
    pub fn failed(error: ReportError, reason: String) -> MonorepoReport {
        MonorepoReport {
            schema_version: REPORT_SCHEMA_VERSION,
            generator: Generator::default(),
            decision: Verdict::Invalid,
            exit_code: Verdict::Invalid.code(),
            reason,
            scored: false,
            servers: Vec::new(),
            error: Some(error),
        }
    }
}

/// A saved report of either shape.
#[derive(Debug, Clone, PartialEq)]
pub enum AnyReport {
    Single(Box<Report>),
    Monorepo(Box<MonorepoReport>),
}

impl AnyReport {
    /// Reads a report's JSON: a `servers` member makes it a monorepo report.
    pub fn from_json(text: &str) -> Result<AnyReport, serde_json::Error> {
        let value: serde_json::Value = serde_json::from_str(text)?;
        if value.get("servers").is_some() {
            serde_json::from_value(value).map(|r| AnyReport::Monorepo(Box::new(r)))
        } else {
            serde_json::from_value(value).map(|r| AnyReport::Single(Box::new(r)))
        }
    }
}

fn mark(verdict: Verdict) -> &'static str {
    match verdict {
        Verdict::Pass => "✅",
        Verdict::Block => "❌",
        Verdict::Invalid => "⚠️",
    }
}

/// One server's section: a heading with its name and verdict, then the single-server summary
/// without its own title, its headings one level down.
pub fn server_section(name: &str, report: &Report) -> String {
    let body = super::markdown::render(report);
    let mut out = String::with_capacity(body.len() + 64);
    let _ = writeln!(
        out,
        "### {} Server {}: {}",
        mark(report.decision),
        code(name),
        report.decision
    );
    // The first line is the single report's title; every other heading is the gate's own (text
    // from outside is escaped, so no line of it starts with `#`).
    for line in body.lines().skip(1) {
        if line.starts_with("### ") {
            out.push('#');
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}

/// The Markdown summary of a monorepo report: the overall verdict, a table of the servers, then
/// one section per server.
pub fn render(report: &MonorepoReport) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "## {} Tool definition score: {}\n",
        mark(report.decision),
        report.decision
    );
    let _ = writeln!(out, "**{}**\n", reason_text(&report.reason));
    if let Some(error) = &report.error {
        if let Some(advice) = &error.advice {
            let _ = writeln!(out, "> {}\n", cell(advice));
        }
    }
    if !report.servers.is_empty() {
        let _ = writeln!(out, "| Server | Verdict | Reason |\n|---|---|---|");
        for s in &report.servers {
            let _ = writeln!(
                out,
                "| {} | {} {} | {} |",
                code(&s.name),
                mark(s.report.decision),
                s.report.decision,
                reason_text(&s.report.reason)
            );
        }
        out.push('\n');
    }
    for s in &report.servers {
        out.push_str(&server_section(&s.name, &s.report));
        out.push('\n');
    }
    if report.servers.is_empty() {
        let _ = writeln!(
            out,
            "<sub>{} {}</sub>",
            report.generator.name, report.generator.version
        );
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_worst_verdict_decides() {
        use Verdict::*;
        assert_eq!(overall([Pass, Pass]), Pass);
        assert_eq!(overall([Pass, Block]), Block);
        assert_eq!(overall([Block, Invalid, Pass]), Invalid);
        assert_eq!(overall([Invalid, Block]), Invalid);
        assert_eq!(overall([]), Invalid);
    }
}
