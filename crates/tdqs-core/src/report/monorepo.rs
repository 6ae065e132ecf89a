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

use serde::{Deserialize, Serialize};

use crate::exit::Verdict;

use super::doc::{self, code, column, marked, text, words, Align, Block, Table};
use super::markdown::mark;
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

/// The servers in the order the pages show them: those that could not be decided, then those
/// that fell, then those that pass, each group in the configuration's order. A failing server
/// is then above the fold, not behind every passing one. (The JSON keeps the configuration's
/// order.)
pub fn failing_first(servers: &[ServerReport]) -> Vec<&ServerReport> {
    let rank = |v: Verdict| match v {
        Verdict::Invalid => 0,
        Verdict::Block => 1,
        Verdict::Pass => 2,
    };
    let mut out: Vec<&ServerReport> = servers.iter().collect();
    out.sort_by_key(|s| rank(s.report.decision));
    out
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

/// One server's section: a heading with its name and verdict, then the single-server summary
/// without its own title, its headings one level down.
pub fn server_section(name: &str, report: &Report) -> Vec<Block> {
    let mut out = vec![doc::heading(
        3,
        vec![
            words(format!("{} Server ", mark(report.decision))),
            code(name),
            words(format!(": {}", report.decision)),
        ],
    )];
    out.extend(
        super::markdown::page(report)
            .into_iter()
            .skip(1)
            .map(|block| match block {
                Block::Heading { level, content } => Block::Heading {
                    level: level + 1,
                    content,
                },
                other => other,
            }),
    );
    out
}

/// The Markdown summary of a monorepo report: the overall verdict, a table of the servers, then
/// one section per server.
pub fn render(report: &MonorepoReport) -> String {
    let mut out = vec![doc::heading(
        2,
        vec![words(format!(
            "{} Tool definition score: {}",
            mark(report.decision),
            report.decision
        ))],
    )];
    out.extend(super::markdown::head(&report.reason, report.error.as_ref()));
    if !report.servers.is_empty() {
        let mut table = Table::new(vec![
            column("Server", Align::Left),
            column("Verdict", Align::Left),
            column("Reason", Align::Left),
        ]);
        table.rows = failing_first(&report.servers)
            .into_iter()
            .map(|s| {
                doc::row([
                    vec![code(&s.name)],
                    vec![words(format!(
                        "{} {}",
                        mark(s.report.decision),
                        s.report.decision
                    ))],
                    marked(&s.report.reason),
                ])
            })
            .collect();
        out.push(Block::Table(table));
    }
    for s in failing_first(&report.servers) {
        out.extend(server_section(&s.name, &s.report));
    }
    if report.servers.is_empty() {
        out.push(Block::Footer(vec![text(format!(
            "{} {}",
            report.generator.name, report.generator.version
        ))]));
    }
    let mut page = doc::markdown::render(&out);
    // The servers' sections each end with a blank line, the last one too.
    if !report.servers.is_empty() {
        page.push('\n');
    }
    page
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
