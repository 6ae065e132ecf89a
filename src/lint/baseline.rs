//! Showing a pull request only the findings it introduced: the baseline file of known
//! findings, and suppressions that accept one finding for a stated reason. The identity of a
//! finding and the matching are pure and live in [`tdqs_core::baseline`]; this file holds the
//! baseline file's format and the `[[lint.suppress]]` tables, and applies both to a report.
//!
//! A finding is identified as its SARIF fingerprint is ([`super::render::fingerprint`]): by
//! code, tool, parameter and related tools, never by its wording.
//!
//! Suppressions live in the `[[lint.suppress]]` tables of `tdqs-gate.toml` (reviewed in the
//! diff that adds them); each needs a non-empty `reason`, or the configuration is refused. A
//! baseline file needs none: it records debt that existed, it does not accept it.

use serde::{Deserialize, Serialize};

use tdqs_core::baseline::FindingId;
use tdqs_core::error::{Error, Stage};

use super::catalogue::{Code, Finding};
use super::LintReport;

pub use tdqs_core::baseline::Hidden;

/// The format version of a baseline file.
pub const BASELINE_VERSION: u32 = 1;

/// A finding's identity, as a baseline file records it.
pub type BaselineEntry = FindingId<Code>;

/// One `[[lint.suppress]]` table: the findings it accepts and why.
pub type Suppression = tdqs_core::baseline::Suppression<Code>;

/// The identity of `f`.
pub fn entry_of(f: &Finding) -> BaselineEntry {
    FindingId {
        code: f.code,
        tool: f.tool.clone(),
        parameter: f.parameter.clone(),
        related: f.related.clone(),
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
        let mut findings: Vec<BaselineEntry> = report.findings.iter().map(entry_of).collect();
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

/// Reads the `suppress` array of the `[lint]` table.
pub fn suppressions_from_toml(value: &toml::Value) -> Result<Vec<Suppression>, Error> {
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

/// Removes the suppressed findings, then those the baseline has, and records both counts in
/// `report.hidden` ([`tdqs_core::baseline::hide`]). `baseline` is the baseline and a name for it.
pub fn apply(
    report: &mut LintReport,
    suppressions: &[Suppression],
    baseline: Option<(&BaselineFile, String)>,
) {
    report.hidden = tdqs_core::baseline::hide(
        &mut report.findings,
        entry_of,
        suppressions,
        baseline.map(|(file, name)| (file.findings.as_slice(), name)),
    );
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
    fn a_suppression_needs_a_reason_and_reports_when_it_matches_nothing() {
        let parse = |text: &str| {
            let doc: toml::Value = toml::from_str(text).unwrap_or(toml::Value::Boolean(false));
            suppressions_from_toml(doc.get("suppress").unwrap_or(&toml::Value::Boolean(false)))
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
