//! The JSON report: the public, versioned record of one gate run.
//!
//! Its schema is committed in `schemas/report.schema.json` and described in
//! `docs/report-format.md`; both are part of the stability promise. Fields are only added in a
//! minor version; renaming or removing one bumps [`REPORT_SCHEMA_VERSION`].

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::arith::Tenths;
use crate::decide::Medians;
use crate::error::Stage;
use crate::exit::Verdict;
use crate::export::{Export, Size};
use crate::judge::JudgeInfo;
use crate::rubric::{CoherenceDimension, ToolDimension};
use crate::score::CallStats;
use crate::score::SideScore;

/// 2: unchanged tools of large servers are summarised (`omitted`, see [`super::summary`]), so
/// `base.tools`, `pairs[].*.tools` and `changes.unchanged` may no longer list every tool.
pub const REPORT_SCHEMA_VERSION: u32 = 2;
pub const REPORT_JSON: &str = "tool-definition-score.json";
pub const REPORT_MARKDOWN: &str = "tool-definition-score.md";

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Generator {
    pub name: String,
    pub version: String,
}

impl Default for Generator {
    /// This build of tdqs-gate. The workspace's crates share one version (`version.workspace`),
    /// so the core's version is the tool's.
    fn default() -> Self {
        Generator {
            name: "tdqs-gate".to_string(),
            version: env!("CARGO_PKG_VERSION").to_string(),
        }
    }
}

/// Where the prompts came from.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct PromptOrigin {
    pub spec_commit: String,
    /// `cache`, `network`, or `not-needed` (a judge that reads no prompts).
    pub source: String,
}

/// Sizes of both sides and their difference (informational, never decisive).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SizeComparison {
    pub base: Size,
    pub head: Size,
    pub delta: SizeDelta,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SizeDelta {
    pub description_characters: i64,
    pub tools_list_bytes: i64,
    /// Per tool present on either side: head bytes minus base bytes (absent counts as 0).
    pub definition_bytes: BTreeMap<String, i64>,
}

impl SizeComparison {
    pub fn new(base: &Size, head: &Size) -> Self {
        let mut definition_bytes = BTreeMap::new();
        for name in base
            .definition_bytes
            .keys()
            .chain(head.definition_bytes.keys())
        {
            let b = base.definition_bytes.get(name).copied().unwrap_or(0) as i64;
            let h = head.definition_bytes.get(name).copied().unwrap_or(0) as i64;
            definition_bytes.insert(name.clone(), h - b);
        }
        SizeComparison {
            base: base.clone(),
            head: head.clone(),
            delta: SizeDelta {
                description_characters: head.description_characters as i64
                    - base.description_characters as i64,
                tools_list_bytes: head.tools_list_bytes as i64 - base.tools_list_bytes as i64,
                definition_bytes,
            },
        }
    }
}

/// Which tools differ between the sides, by definition hash.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Changes {
    pub added: Vec<String>,
    pub removed: Vec<String>,
    pub changed: Vec<String>,
    pub unchanged: Vec<String>,
}

impl Changes {
    pub fn between(base: &Export, head: &Export) -> Self {
        let mut c = Changes::default();
        for (name, hash) in &head.hashes {
            match base.hashes.get(name) {
                None => c.added.push(name.clone()),
                Some(h) if h == hash => c.unchanged.push(name.clone()),
                Some(_) => c.changed.push(name.clone()),
            }
        }
        for name in base.hashes.keys() {
            if !head.hashes.contains_key(name) {
                c.removed.push(name.clone());
            }
        }
        c
    }
}

/// One scored pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Pair {
    pub base: SideScore,
    pub head: SideScore,
    pub calls: CallStats,
}

/// A dimension that fell, with the judge's reason on the head side.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FallenDimension {
    pub dimension: ToolDimension,
    pub base: u8,
    pub head: u8,
    pub justification: String,
    /// One line on how to win the dimension back.
    #[serde(default)]
    pub fix: String,
}

/// A tool whose TDQS fell on the first pair.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FallenTool {
    pub tool: String,
    pub base: Tenths,
    pub head: Tenths,
    /// What this fall alone costs the head's unrounded mean TDQS: (head − base) / n.
    pub effect: f64,
    /// The same, exact (`p/q`).
    pub effect_exact: String,
    pub dimensions: Vec<FallenDimension>,
    /// What changed in its definition (description sentences, schema and annotation fields).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub change: Option<super::changed::ToolChange>,
    /// Where the head's tree defines it, when the gate read that tree and found it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub location: Option<SourceLine>,
}

/// A tool's definition in a side's tree (see [`crate::locate`]): the path relative to the
/// tree's root with `/` separators, the 1-based line and column (code points) of its
/// description (or of its name when only that was found), and how sure the match is.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct SourceLine {
    pub path: String,
    pub line: u32,
    pub column: u32,
    pub confidence: crate::locate::Confidence,
    /// The line on the repository's web host (`…/blob/<commit>/<path>#L<line>`), when the run
    /// knew the host, the repository and the head commit (GitHub Actions).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
}

impl SourceLine {
    /// The located place of `tool` in `locations`, if it was located.
    pub fn of_tool(locations: &crate::locate::Locations, tool: &str) -> Option<SourceLine> {
        match &locations.tool(tool)?.place {
            crate::locate::Place::Located { at, confidence, .. } => Some(SourceLine {
                path: at.path.clone(),
                line: at.line,
                column: at.column,
                confidence: *confidence,
                url: None,
            }),
            crate::locate::Place::NotLocated { .. } => None,
        }
    }

    /// `path:line`, as a reader and an editor take it.
    pub fn label(&self) -> String {
        format!("{}:{}", self.path, self.line)
    }
}

impl Causes {
    /// Gives each fallen tool the place `locations` (the head's tree) has for it.
    pub fn locate_in(&mut self, locations: &crate::locate::Locations) {
        for tool in &mut self.tools {
            tool.location = SourceLine::of_tool(locations, &tool.tool);
        }
    }

    /// Gives each located tool the address of its line under `blob_base`
    /// (`https://github.com/OWNER/REPO/blob/COMMIT`).
    pub fn link_locations(&mut self, blob_base: &str) {
        for location in self.tools.iter_mut().filter_map(|t| t.location.as_mut()) {
            location.url = Some(format!(
                "{}/{}#L{}",
                blob_base.trim_end_matches('/'),
                url_path(&location.path),
                location.line
            ));
        }
    }

    /// The same account without source places: what the first pair alone determines.
    pub fn without_locations(&self) -> Causes {
        let mut plain = self.clone();
        for tool in &mut plain.tools {
            tool.location = None;
        }
        plain
    }
}

/// A tool present on one side only (it moves the mean too).
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct OneSidedTool {
    pub tool: String,
    pub tdqs: Tenths,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MinimumSide {
    pub tool: Option<String>,
    pub tdqs: Option<Tenths>,
}

#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct MinimumTerm {
    pub base: MinimumSide,
    pub head: MinimumSide,
    pub fell: bool,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct FallenCoherence {
    pub dimension: CoherenceDimension,
    pub base: u8,
    pub head: u8,
    pub justification: String,
}

/// Why the first pair dropped. Present only when it did.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Causes {
    pub tools: Vec<FallenTool>,
    pub added: Vec<OneSidedTool>,
    pub removed: Vec<OneSidedTool>,
    /// Information only: the lowest tool's term of description quality.
    pub minimum_term: MinimumTerm,
    /// Information only: coherence dimensions that fell.
    pub coherence: Vec<FallenCoherence>,
}

/// The error that made a run INVALID.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ReportError {
    pub stage: Stage,
    pub cause: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub advice: Option<String>,
}

/// How the run scored, stated in every report so `static` never passes for a model.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Scoring {
    pub judge: JudgeInfo,
    /// Version digest of the pins (`tdqs/version.json`).
    pub version_digest: String,
    /// Digest of the pins and the judge's settings: scores are comparable only under an equal one.
    pub scoring_digest: String,
    pub pins_embedded: bool,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub prompts: Option<PromptOrigin>,
    pub share_identical_questions: bool,
    pub concurrency: usize,
}

/// The report of one gate run.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Report {
    pub schema_version: u32,
    pub generator: Generator,
    pub decision: Verdict,
    pub exit_code: u8,
    pub reason: String,
    /// True when any model (or rule) judge was asked.
    pub scored: bool,
    pub base_revision: Option<String>,
    pub head_revision: Option<String>,
    pub base_commit: Option<String>,
    pub head_commit: Option<String>,
    /// The pins verbatim.
    pub versions: Value,
    pub version_digest: String,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub scoring: Option<Scoring>,
    pub base: Option<Export>,
    pub head: Option<Export>,
    pub size: Option<SizeComparison>,
    pub changes: Option<Changes>,
    pub pairs: Vec<Pair>,
    pub median: Option<Medians>,
    pub causes: Option<Causes>,
    /// The confirmation rule of the pins.
    pub confirmation: Value,
    /// The rule that decided (`noise-aware` or `reference`) and its per-tool guard.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub decision_rule: Option<crate::decide::RuleInUse>,
    /// What the noise-aware rule measured: the mean's change against its noise tolerance, each
    /// side's spread over the pairs, and the tools whose TDQS fell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub assessment: Option<crate::decide::noise::Assessment>,
    pub calls: CallStats,
    pub warnings: Vec<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error: Option<ReportError>,
    /// Present when unchanged tools were summarised rather than listed ([`super::summary`]):
    /// each pair side's `omitted` then holds their scores' sum, and the exports list only the
    /// tools still listed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub omitted: Option<Omitted>,
    /// The opt-in selection check (`--eval` / `[eval]`): the same case suite on both sides,
    /// paired, with its exact test. Absent when the check was not asked for or not run.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub eval: Option<crate::eval::compare::SelectionCheck>,
    /// The opt-in rewrites (`--suggest`) of the tools that fell, each scored before it is
    /// offered. Absent when not asked for or when no tool fell.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub suggestions: Option<crate::suggest::Suggestions>,
    /// What the definitions cost in a model's context: tokens (with the tokenizer named) and
    /// bytes of each definition and of the listing, and TDQS per 1,000 tokens. Absent when
    /// either side could not be exported.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost: Option<crate::cost::CostComparison>,
    /// The opt-in growth rule (`[decision] max-listing-growth`), when it was set.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub growth_rule: Option<crate::cost::GrowthRule>,
    /// What a TDQS registry would show after the merge, from the first scored pair. Absent when
    /// nothing was scored.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forecast: Option<super::forecast::Forecast>,
}

/// One side scored once (`tdqs-gate score`).
#[derive(Debug, Clone, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ScoredOnce {
    pub scoring: Scoring,
    pub side: crate::score::SideScore,
    pub calls: CallStats,
    pub warnings: Vec<String>,
}

/// What a summarised report left out (absent when it lists every tool).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Omitted {
    /// Tools left out of the exports, `changes.unchanged` and every pair side.
    pub count: u64,
    /// SHA-256 over one line `NAME\tDEFINITION_HASH\n` per left-out tool, in name order.
    pub definitions_digest: String,
    /// The size above which a report summarises (`summary::LIST_EVERY_TOOL_UP_TO`).
    pub list_every_tool_up_to: u64,
}

/// A relative path as a URL path: each segment percent-encoded except unreserved characters.
fn url_path(path: &str) -> String {
    path.split('/')
        .map(|segment| {
            segment
                .bytes()
                .map(|b| match b {
                    b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'.' | b'_' | b'~' => {
                        (b as char).to_string()
                    }
                    _ => format!("%{b:02X}"),
                })
                .collect::<String>()
        })
        .collect::<Vec<_>>()
        .join("/")
}

#[cfg(test)]
mod source_line_tests {
    use super::url_path;

    #[test]
    fn a_path_becomes_a_url_path_with_each_segment_encoded() {
        assert_eq!(url_path("src/tools.ts"), "src/tools.ts");
        assert_eq!(url_path("my tools/a#b?.py"), "my%20tools/a%23b%3F.py");
        assert_eq!(url_path("ünï/x"), "%C3%BCn%C3%AF/x");
    }
}
