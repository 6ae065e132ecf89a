//! Showing a pull request only the findings it introduced: a baseline of known findings, and
//! suppressions that accept one finding for a stated reason.
//!
//! A finding is identified as its SARIF fingerprint is ([`super::render::fingerprint`]): by
//! code, tool, parameter and related tools, never by its wording, so a reworded message still
//! matches. A baseline is a multiset: two equal findings in the baseline hide two, not more.
//!
//! Suppressions live in the `[[lint.suppress]]` tables of `tdqs-gate.toml` (reviewed in the
//! diff that adds them); each needs a non-empty `reason`, or the configuration is refused. A
//! baseline file needs none: it records debt that existed, it does not accept it.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use tdqs_core::error::{Error, Stage};

use super::catalogue::{Code, Finding};
use super::LintReport;

/// The format version of a baseline file.
pub const BASELINE_VERSION: u32 = 1;

/// A finding's identity: what it is about, not how it is worded.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BaselineEntry {
    pub code: Code,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<String>,
}

impl BaselineEntry {
    pub fn of(f: &Finding) -> BaselineEntry {
        BaselineEntry {
            code: f.code,
            tool: f.tool.clone(),
            parameter: f.parameter.clone(),
            related: f.related.clone(),
        }
    }
}

/// What `lint --write-baseline FILE` writes and `lint --baseline FILE` reads.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct BaselineFile {
    pub baseline_version: u32,
    /// The rules version that found them (informational: codes are stable across versions).
    pub rules_version: String,
    pub findings: Vec<BaselineEntry>,
}

impl BaselineFile {
    /// The baseline of a report's findings, sorted so the file diffs well.
    pub fn of(report: &LintReport) -> BaselineFile {
        let mut findings: Vec<BaselineEntry> =
            report.findings.iter().map(BaselineEntry::of).collect();
        findings.sort();
        BaselineFile {
            baseline_version: BASELINE_VERSION,
            rules_version: report.rules_version.clone(),
            findings,
        }
    }

    /// Pretty JSON with a trailing newline.
    pub fn to_json(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_else(|_| "{}".to_string());
        text.push('\n');
        text
    }

    /// Parses a baseline file's text; `shown` names the file in errors.
    pub fn parse(shown: &str, value: serde_json::Value) -> Result<BaselineFile, Error> {
        let refuse = |what: String| {
            Error::new(
                Stage::Config,
                format!("{shown} is not a lint baseline: {what}"),
            )
            .with_advice("write one with `tdqs-gate lint --write-baseline FILE`")
        };
        match value.get("baselineVersion").and_then(|v| v.as_u64()) {
            Some(v) if v == u64::from(BASELINE_VERSION) => {}
            Some(v) => {
                return Err(refuse(format!(
                    "it is of format version {v}; this tdqs-gate reads version {BASELINE_VERSION}"
                )))
            }
            None => return Err(refuse("it has no numeric `baselineVersion`".to_string())),
        }
        serde_json::from_value(value).map_err(|e| refuse(e.to_string()))
    }
}

/// One `[[lint.suppress]]` table: the findings it accepts and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suppression {
    pub code: Code,
    /// Every tool when absent.
    pub tool: Option<String>,
    /// Every parameter (and the tool itself) when absent.
    pub parameter: Option<String>,
    pub reason: String,
}

impl Suppression {
    fn accepts(&self, f: &Finding) -> bool {
        f.code == self.code
            && (self.tool.is_none() || self.tool == f.tool)
            && (self.parameter.is_none() || self.parameter == f.parameter)
    }

    /// Reads the `suppress` array of the `[lint]` table.
    pub fn from_toml(value: &toml::Value) -> Result<Vec<Suppression>, Error> {
        let refuse = |i: usize, what: String| {
            Error::new(
                Stage::Config,
                format!("[[lint.suppress]] entry {}: {what}", i + 1),
            )
            .with_advice(
                "each [[lint.suppress]] takes code, reason, and optionally tool and \
                     parameter, e.g. code = \"TDQS-D007\", tool = \"search\", reason = \"…\"",
            )
        };
        let Some(entries) = value.as_array() else {
            return Err(refuse(
                0,
                "write it as [[lint.suppress]] tables".to_string(),
            ));
        };
        let mut out = Vec::new();
        for (i, entry) in entries.iter().enumerate() {
            let Some(table) = entry.as_table() else {
                return Err(refuse(i, "it is not a table".to_string()));
            };
            let text = |key: &str| -> Result<Option<String>, Error> {
                match table.get(key) {
                    None => Ok(None),
                    Some(toml::Value::String(s)) => Ok(Some(s.clone())),
                    Some(_) => Err(refuse(i, format!("`{key}` must be a string"))),
                }
            };
            if let Some(key) = table
                .keys()
                .find(|k| !["code", "tool", "parameter", "reason"].contains(&k.as_str()))
            {
                return Err(refuse(i, format!("unknown key `{key}`")));
            }
            let code_text = text("code")?.ok_or_else(|| refuse(i, "it has no `code`".into()))?;
            let code = Code::parse(&code_text)
                .ok_or_else(|| refuse(i, format!("unknown code `{code_text}`")))?;
            let reason = text("reason")?.unwrap_or_default();
            if reason.trim().is_empty() {
                // Refused, not defaulted: an accepted finding must say why to whoever reads it.
                return Err(refuse(
                    i,
                    format!("suppressing {code} needs a `reason` that says why it is accepted"),
                ));
            }
            out.push(Suppression {
                code,
                tool: text("tool")?,
                parameter: text("parameter")?,
                reason,
            });
        }
        Ok(out)
    }
}

/// What a baseline and suppressions took out of a report (shown in every rendering).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Hidden {
    /// Findings accepted by a `[[lint.suppress]]` entry.
    pub suppressed: usize,
    /// Findings the baseline already had.
    pub known: usize,
    /// Where the baseline came from (a file), when one was given.
    pub baseline: Option<String>,
    /// Suppressions that matched no finding: stale, or misspelled.
    pub unused_suppressions: Vec<String>,
}

impl Hidden {
    /// True when nothing was given that could hide a finding.
    pub fn is_inactive(&self) -> bool {
        self.baseline.is_none() && self.suppressed == 0 && self.unused_suppressions.is_empty()
    }

    /// One line for the text and Markdown renderings.
    pub fn summary(&self) -> String {
        let mut parts = Vec::new();
        if let Some(baseline) = &self.baseline {
            parts.push(format!(
                "{} known finding{} hidden by the baseline {baseline}; shown: the new ones",
                self.known,
                if self.known == 1 { "" } else { "s" }
            ));
        }
        if self.suppressed > 0 {
            parts.push(format!(
                "{} suppressed by [[lint.suppress]] with a reason",
                self.suppressed
            ));
        }
        if !self.unused_suppressions.is_empty() {
            parts.push(format!(
                "suppressions that matched nothing: {}",
                self.unused_suppressions.join(", ")
            ));
        }
        parts.join(" · ")
    }
}

/// Removes the suppressed findings, then those the baseline has, and records both counts in
/// `report.hidden`. `baseline` is the baseline and a name for it.
pub fn apply(
    report: &mut LintReport,
    suppressions: &[Suppression],
    baseline: Option<(&BaselineFile, String)>,
) {
    let mut used = vec![false; suppressions.len()];
    let mut hidden = Hidden::default();
    report
        .findings
        .retain(|f| match suppressions.iter().position(|s| s.accepts(f)) {
            Some(i) => {
                used[i] = true;
                hidden.suppressed += 1;
                false
            }
            None => true,
        });
    hidden.unused_suppressions = suppressions
        .iter()
        .zip(&used)
        .filter(|(_, used)| !**used)
        .map(|(s, _)| {
            let mut label = s.code.to_string();
            if let Some(tool) = &s.tool {
                label.push_str(&format!(" on {tool}"));
            }
            if let Some(p) = &s.parameter {
                label.push_str(&format!(".{p}"));
            }
            label
        })
        .collect();
    if let Some((file, name)) = baseline {
        let mut known: BTreeMap<&BaselineEntry, usize> = BTreeMap::new();
        for entry in &file.findings {
            *known.entry(entry).or_default() += 1;
        }
        report
            .findings
            .retain(|f| match known.get_mut(&BaselineEntry::of(f)) {
                Some(n) if *n > 0 => {
                    *n -= 1;
                    hidden.known += 1;
                    false
                }
                _ => true,
            });
        hidden.baseline = Some(name);
    }
    report.hidden = hidden;
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::lint::catalogue::Severity;

    fn finding(code: Code, tool: &str) -> Finding {
        Finding {
            code,
            slug: String::new(),
            severity: Severity::Warning,
            tool: Some(tool.to_string()),
            parameter: None,
            message: "m".to_string(),
            suggestion: "s".to_string(),
            related: Vec::new(),
        }
    }

    fn report(findings: Vec<Finding>) -> LintReport {
        LintReport {
            rules_version: "r".to_string(),
            server_name: None,
            server_version: None,
            tool_count: 1,
            findings,
            scorecards: Vec::new(),
            average_tenths: 0,
            disabled: Vec::new(),
            artifact: None,
            hidden: Hidden::default(),
        }
    }

    #[test]
    fn a_baseline_hides_as_many_as_it_holds_and_ignores_wording() {
        let old = report(vec![finding(Code::D001, "a"), finding(Code::D002, "a")]);
        let file = BaselineFile::of(&old);
        let mut reworded = finding(Code::D001, "a");
        reworded.message = "reworded".to_string();
        let mut new = report(vec![
            reworded,
            finding(Code::D001, "a"),
            finding(Code::D001, "b"),
        ]);
        apply(&mut new, &[], Some((&file, "base.json".to_string())));
        let left: Vec<(Code, Option<String>)> = new
            .findings
            .iter()
            .map(|f| (f.code, f.tool.clone()))
            .collect();
        assert_eq!(
            left,
            vec![
                (Code::D001, Some("a".into())),
                (Code::D001, Some("b".into()))
            ]
        );
        assert_eq!(new.hidden.known, 1);
    }

    #[test]
    fn a_suppression_needs_a_reason_and_reports_when_it_matches_nothing() {
        let parse = |text: &str| {
            let doc: toml::Value = toml::from_str(text).unwrap_or(toml::Value::Boolean(false));
            Suppression::from_toml(doc.get("suppress").unwrap_or(&toml::Value::Boolean(false)))
        };
        let err = parse("[[suppress]]\ncode = \"TDQS-D001\"\nreason = \"  \"\n")
            .err()
            .map(|e| e.cause);
        assert_eq!(
            err.as_deref(),
            Some("[[lint.suppress]] entry 1: suppressing TDQS-D001 needs a `reason` that says why it is accepted")
        );
        assert!(parse("[[suppress]]\ncode = \"TDQS-Q1\"\nreason = \"x\"\n").is_err());
        assert!(parse("[[suppress]]\ncode = \"TDQS-D001\"\nreason = \"x\"\nwhy = 1\n").is_err());
        let list = parse(
            "[[suppress]]\ncode = \"TDQS-D001\"\ntool = \"a\"\nreason = \"named elsewhere\"\n\
             [[suppress]]\ncode = \"TDQS-N001\"\nreason = \"stale\"\n",
        )
        .unwrap_or_default();
        assert_eq!(list.len(), 2);
        let mut r = report(vec![finding(Code::D001, "a"), finding(Code::D001, "b")]);
        apply(&mut r, &list, None);
        assert_eq!(r.findings.len(), 1);
        assert_eq!(r.hidden.suppressed, 1);
        assert_eq!(r.hidden.unused_suppressions, vec!["TDQS-N001".to_string()]);
    }
}
