//! The outcome of a scoring run in machine form: the step outputs written to a file given by
//! flag (GitHub's `GITHUB_OUTPUT` format), one annotation line, and a short summary section when
//! the gate stopped before writing its own. Nothing downstream reads a log or a report to learn
//! the verdict.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::gate::Outcome;
use tdqs_core::error::{Error, Stage};
use tdqs_core::exit::Verdict;
use tdqs_core::redact::redact;
use tdqs_core::report::md_escape;

/// What the scoring run decided, as the step outputs carry it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct StepOutcome {
    pub decision: Verdict,
    /// The reason of the verdict (masked, one line).
    pub reason: String,
    /// What to do when the run is INVALID for a cause the workflow can fix (no token).
    pub hint: Option<String>,
    /// True when a judge was asked.
    pub scored: bool,
    /// The JSON report, absolute; `None` when none was written.
    pub report: Option<PathBuf>,
    /// Each server's verdict, in report order (empty for a single server).
    pub decisions: Vec<(String, Verdict)>,
}

/// The note shown when changed definitions could not be scored because no token reached the
/// job: a fork's pull request, most often.
pub const NO_TOKEN_HINT: &str = "No Claude Code token reached this job, and the tool definitions \
changed, so nothing could score them. A pull request from a fork gets no repository secrets: a \
maintainer can re-run it from a branch of this repository, or the workflow can use judge: static \
for forks (offline rules, labelled as not a model's score). Otherwise pass the token secret \
(CLAUDE_CODE_OAUTH_TOKEN, a token from claude setup-token) to the scoring job.";

impl StepOutcome {
    /// `no_token`: the Claude Code judge was asked for and no token was given.
    pub fn of(outcome: &Outcome, no_token: bool) -> StepOutcome {
        let reason = outcome
            .report
            .as_ref()
            .map(|r| r.reason.clone())
            .or_else(|| outcome.monorepo.as_ref().map(|r| r.reason.clone()))
            .or_else(|| outcome.error.as_ref().map(Error::summary))
            .or_else(|| outcome.report_error.as_ref().map(Error::summary))
            .unwrap_or_else(|| "tdqs-gate gave no reason".to_string());
        let reason = one_line(&redact(&reason));
        let decisions: Vec<(String, Verdict)> = outcome
            .monorepo
            .iter()
            .flat_map(|m| &m.servers)
            .map(|s| (s.name.clone(), s.report.decision))
            .collect();
        let judge_stopped = outcome
            .report
            .as_ref()
            .and_then(|r| r.error.as_ref())
            .is_some_and(|e| e.stage == Stage::Judge)
            || outcome.monorepo.iter().flat_map(|m| &m.servers).any(|s| {
                s.report
                    .error
                    .as_ref()
                    .is_some_and(|e| e.stage == Stage::Judge)
            })
            || outcome
                .error
                .as_ref()
                .is_some_and(|e| e.stage == Stage::Judge);
        let hint = (outcome.verdict == Verdict::Invalid && no_token && judge_stopped)
            .then(|| NO_TOKEN_HINT.to_string());
        let report = outcome
            .written
            .as_ref()
            .map(|w| crate::platform::absolute(&w.json));
        StepOutcome {
            decision: outcome.verdict,
            reason,
            hint,
            scored: outcome.report.as_ref().is_some_and(|r| r.scored)
                || outcome.monorepo.as_ref().is_some_and(|m| m.scored),
            report,
            decisions,
        }
    }

    /// The outputs, in order: `decision`, `decisions` (a JSON object), `decision-NAME` per
    /// server, `scored`, `report`, `reason`, `hint`, `exit-code`.
    pub fn outputs(&self) -> Vec<(String, String)> {
        let decisions: serde_json::Map<String, serde_json::Value> = self
            .decisions
            .iter()
            .map(|(name, v)| (name.clone(), v.as_str().into()))
            .collect();
        let mut out = vec![
            ("decision".to_string(), self.decision.as_str().to_string()),
            (
                "decisions".to_string(),
                serde_json::Value::Object(decisions).to_string(),
            ),
        ];
        for (name, verdict) in &self.decisions {
            out.push((format!("decision-{name}"), verdict.as_str().to_string()));
        }
        out.push(("scored".to_string(), self.scored.to_string()));
        out.push((
            "report".to_string(),
            self.report
                .as_ref()
                .map(|p| p.display().to_string())
                .unwrap_or_default(),
        ));
        out.push(("reason".to_string(), self.reason.clone()));
        out.push(("hint".to_string(), self.hint.clone().unwrap_or_default()));
        out.push(("exit-code".to_string(), self.decision.code().to_string()));
        out
    }

    /// The workflow command that puts the verdict on the run's page: a notice for PASS, an
    /// error for BLOCK and INVALID.
    pub fn annotation(&self) -> String {
        let (level, title) = match self.decision {
            Verdict::Pass => ("notice", "tdqs-gate: PASS"),
            Verdict::Block => ("error", "tdqs-gate: BLOCK"),
            Verdict::Invalid => ("error", "tdqs-gate: INVALID"),
        };
        let mut message = self.reason.clone();
        if let Some(hint) = &self.hint {
            message.push(' ');
            message.push_str(hint);
        }
        format!(
            "::{level} title={}::{}",
            escape_property(title),
            escape_data(&message)
        )
    }

    /// A summary section for a run that wrote no report of its own: the verdict and its reason,
    /// escaped (the reason can quote the head's command or a server's output).
    pub fn fallback_summary(&self) -> String {
        use tdqs_core::report::doc::{self, marked, paragraph, strong};
        // The reason's names become code spans and everything else is escaped, as on the page.
        let reason = doc::markdown::render(&[paragraph(vec![strong(marked(&self.reason))])]);
        format!(
            "## ⚠️ Tool definition score: INVALID\n\n{}\n\ntdqs-gate wrote no report; the log \
             of the scoring step has the details.\n\n",
            reason.trim_end()
        )
    }

    /// The note added to the summary with the hint.
    pub fn hint_summary(&self) -> Option<String> {
        self.hint
            .as_ref()
            .map(|h| format!("> [!NOTE]\n> {}\n\n", md_escape::text(h)))
    }
}

fn one_line(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

/// Workflow command data: `%`, CR and LF escaped.
pub fn escape_data(text: &str) -> String {
    text.replace('%', "%25")
        .replace('\r', "%0D")
        .replace('\n', "%0A")
}

/// Workflow command property values: also `:` and `,`.
pub fn escape_property(text: &str) -> String {
    escape_data(text).replace(':', "%3A").replace(',', "%2C")
}

/// `name<<DELIMITER` blocks in GitHub's output-file format: a value holds any text, and a
/// random delimiter that the value does not contain ends it.
pub fn render_outputs(outputs: &[(String, String)]) -> String {
    let mut text = String::new();
    for (name, value) in outputs {
        let delimiter = loop {
            let candidate = format!("tdqs_gate_{:016x}", fastrand::u64(..));
            if !value.contains(&candidate) {
                break candidate;
            }
        };
        text.push_str(&format!("{name}<<{delimiter}\n{value}\n{delimiter}\n"));
    }
    text
}

/// Appends `text` to the file at `path` (created when missing).
pub fn append(path: &Path, text: &str) -> Result<(), Error> {
    let mut file = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|io| {
            Error::io(Stage::Report, format!("cannot open {}", path.display()), io)
                .with_advice("pass a writable file, e.g. --github-output \"$GITHUB_OUTPUT\"")
        })?;
    file.write_all(text.as_bytes()).map_err(|io| {
        Error::io(
            Stage::Report,
            format!("cannot write {}", path.display()),
            io,
        )
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn outcome() -> StepOutcome {
        StepOutcome {
            decision: Verdict::Block,
            reason: "mean TDQS fell: `close_issue` 4.0 → 1.8".to_string(),
            hint: None,
            scored: true,
            report: Some(PathBuf::from("/r/tool-definition-score.json")),
            decisions: vec![
                ("api".to_string(), Verdict::Block),
                ("web".to_string(), Verdict::Pass),
            ],
        }
    }

    #[test]
    fn outputs_carry_every_verdict_and_a_value_cannot_forge_another_output() {
        let mut o = outcome();
        o.reason = "x\ndecision=pass".to_string();
        let text = render_outputs(&o.outputs());
        // Parsed the way the runner parses the file.
        let mut parsed = std::collections::BTreeMap::new();
        let mut lines = text.lines();
        while let Some(line) = lines.next() {
            let (name, delimiter) = line.split_once("<<").expect("heredoc form");
            let mut value = Vec::new();
            for l in lines.by_ref() {
                if l == delimiter {
                    break;
                }
                value.push(l);
            }
            parsed.insert(name.to_string(), value.join("\n"));
        }
        assert_eq!(parsed["decision"], "block");
        assert_eq!(parsed["decisions"], r#"{"api":"block","web":"pass"}"#);
        assert_eq!(parsed["decision-web"], "pass");
        assert_eq!(parsed["exit-code"], "1");
        assert_eq!(parsed["reason"], "x\ndecision=pass");
    }

    #[test]
    fn the_annotation_and_the_summary_escape_what_they_show() {
        let mut o = outcome();
        o.decision = Verdict::Invalid;
        o.reason = "server `node x.js` failed\n::error::forged".to_string();
        let line = o.annotation();
        assert!(
            line.starts_with("::error title=tdqs-gate%3A INVALID::"),
            "{line}"
        );
        assert!(!line.contains('\n'), "{line}");
        o.reason = "the command `a `` b` failed; ```js\n# heading".to_string();
        let summary = o.fallback_summary();
        // An odd backtick count: no span is opened at all, every backtick is escaped.
        assert!(!summary.contains("\n# heading"), "{summary}");
        assert!(summary.contains("\\`"), "{summary}");
    }
}
