//! Which lint findings a pull request introduced: a finding's identity, and the matching that
//! takes out the findings a baseline already has and those a suppression accepts.
//!
//! A finding is identified as its SARIF fingerprint is: by code, tool, parameter and related
//! tools, never by its wording, so a reworded message still matches. A baseline is a multiset:
//! two equal findings in the baseline hide two, not more. The engine reads the baseline files
//! and the `[[lint.suppress]]` tables and owns the rule codes; this module sees the codes as any
//! ordered, printable type `C`.

use std::collections::BTreeMap;
use std::fmt::Display;

use serde::{Deserialize, Serialize};

/// A finding's identity: what it is about, not how it is worded (an entry of a baseline file).
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "camelCase", deny_unknown_fields)]
pub struct FindingId<C> {
    pub code: C,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<String>,
}

/// One suppression: the findings it accepts and why.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Suppression<C> {
    pub code: C,
    /// Every tool when absent.
    pub tool: Option<String>,
    /// Every parameter (and the tool itself) when absent.
    pub parameter: Option<String>,
    pub reason: String,
}

impl<C: PartialEq + Display> Suppression<C> {
    fn accepts(&self, f: &FindingId<C>) -> bool {
        f.code == self.code
            && (self.tool.is_none() || self.tool == f.tool)
            && (self.parameter.is_none() || self.parameter == f.parameter)
    }

    /// How a suppression that matched nothing is named: `CODE on tool.parameter`.
    fn label(&self) -> String {
        let mut label = self.code.to_string();
        if let Some(tool) = &self.tool {
            label.push_str(&format!(" on {tool}"));
        }
        if let Some(p) = &self.parameter {
            label.push_str(&format!(".{p}"));
        }
        label
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

/// Removes from `findings` those a suppression accepts, then those `baseline` has (each entry
/// hides one equal finding), and says what was taken out. `id` gives a finding's identity;
/// `baseline` is the baseline's entries and a name for it.
pub fn hide<F, C: Ord + Display>(
    findings: &mut Vec<F>,
    id: impl Fn(&F) -> FindingId<C>,
    suppressions: &[Suppression<C>],
    baseline: Option<(&[FindingId<C>], String)>,
) -> Hidden {
    let mut used = vec![false; suppressions.len()];
    let mut hidden = Hidden::default();
    findings.retain(|f| {
        let f = id(f);
        match suppressions.iter().position(|s| s.accepts(&f)) {
            Some(i) => {
                used[i] = true;
                hidden.suppressed += 1;
                false
            }
            None => true,
        }
    });
    hidden.unused_suppressions = suppressions
        .iter()
        .zip(&used)
        .filter(|(_, used)| !**used)
        .map(|(s, _)| s.label())
        .collect();
    if let Some((entries, name)) = baseline {
        let mut known: BTreeMap<&FindingId<C>, usize> = BTreeMap::new();
        for entry in entries {
            *known.entry(entry).or_default() += 1;
        }
        findings.retain(|f| match known.get_mut(&id(f)) {
            Some(n) if *n > 0 => {
                *n -= 1;
                hidden.known += 1;
                false
            }
            _ => true,
        });
        hidden.baseline = Some(name);
    }
    hidden
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A finding as the engine has one: an identity and a wording.
    #[derive(Debug, Clone, PartialEq)]
    struct Finding {
        code: &'static str,
        tool: &'static str,
        message: &'static str,
    }

    fn finding(code: &'static str, tool: &'static str) -> Finding {
        Finding {
            code,
            tool,
            message: "m",
        }
    }

    fn id(f: &Finding) -> FindingId<&'static str> {
        FindingId {
            code: f.code,
            tool: Some(f.tool.to_string()),
            parameter: None,
            related: Vec::new(),
        }
    }

    fn suppression(code: &'static str, tool: Option<&str>) -> Suppression<&'static str> {
        Suppression {
            code,
            tool: tool.map(str::to_string),
            parameter: None,
            reason: "why".to_string(),
        }
    }

    #[test]
    fn a_baseline_hides_as_many_as_it_holds_and_ignores_wording() {
        let mut baseline: Vec<_> = [finding("D001", "a"), finding("D002", "a")]
            .iter()
            .map(id)
            .collect();
        baseline.sort();
        let reworded = Finding {
            message: "reworded",
            ..finding("D001", "a")
        };
        let mut new = vec![reworded, finding("D001", "a"), finding("D001", "b")];
        let hidden = hide(
            &mut new,
            id,
            &[],
            Some((&baseline, "base.json".to_string())),
        );
        let left: Vec<(&str, &str)> = new.iter().map(|f| (f.code, f.tool)).collect();
        assert_eq!(left, vec![("D001", "a"), ("D001", "b")]);
        assert_eq!(hidden.known, 1);
        assert_eq!(hidden.baseline.as_deref(), Some("base.json"));
    }

    #[test]
    fn a_suppression_takes_its_findings_and_is_named_when_it_matches_nothing() {
        let list = [suppression("D001", Some("a")), suppression("N001", None)];
        let mut findings = vec![finding("D001", "a"), finding("D001", "b")];
        let hidden = hide(&mut findings, id, &list, None);
        assert_eq!(findings, vec![finding("D001", "b")]);
        assert_eq!(hidden.suppressed, 1);
        assert_eq!(hidden.unused_suppressions, vec!["N001".to_string()]);
        assert!(!hidden.is_inactive());
        assert_eq!(
            hidden.summary(),
            "1 suppressed by [[lint.suppress]] with a reason · suppressions that matched \
             nothing: N001"
        );
    }
}
