//! The error every stage returns.
//!
//! An error always ends the run as INVALID (exit 2). It carries the cause, advice that names the
//! fix, optional details (a server's stderr tail, a judge's answer) and, where one exists, a
//! command that reproduces the failure outside the gate. Rendering does not redact: whoever shows
//! an error (the command line, the report writer) passes the text through
//! [`crate::redact::redact`] first, so that no secret reaches the terminal or a report.

use std::fmt;

/// Which stage of the pipeline failed; shown in messages and recorded in reports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Stage {
    Usage,
    Config,
    Revision,
    Export,
    Digest,
    Spec,
    Judge,
    Score,
    Decide,
    Report,
    Check,
    Lint,
    Calibrate,
    Eval,
    Interrupted,
    Internal,
}

impl Stage {
    pub fn as_str(self) -> &'static str {
        match self {
            Stage::Usage => "usage",
            Stage::Config => "config",
            Stage::Revision => "revision",
            Stage::Export => "export",
            Stage::Digest => "digest",
            Stage::Spec => "spec",
            Stage::Judge => "judge",
            Stage::Score => "score",
            Stage::Decide => "decide",
            Stage::Report => "report",
            Stage::Check => "check",
            Stage::Lint => "lint",
            Stage::Calibrate => "calibrate",
            Stage::Eval => "eval",
            Stage::Interrupted => "interrupted",
            Stage::Internal => "internal",
        }
    }
}

/// A failure that makes the run INVALID.
#[derive(Debug, Clone)]
pub struct Error {
    pub stage: Stage,
    /// One sentence: what went wrong.
    pub cause: String,
    /// What the user should do about it.
    pub advice: Option<String>,
    /// Supporting text shown under the message (a stderr tail, the offending answer).
    pub details: Vec<(String, String)>,
    /// A shell command that reproduces the failure outside the gate.
    pub reproduce: Option<String>,
}

pub type Result<T, E = Error> = std::result::Result<T, E>;

impl Error {
    pub fn new(stage: Stage, cause: impl Into<String>) -> Self {
        Error {
            stage,
            cause: cause.into(),
            advice: None,
            details: Vec::new(),
            reproduce: None,
        }
    }

    pub fn with_advice(mut self, advice: impl Into<String>) -> Self {
        self.advice = Some(advice.into());
        self
    }

    /// Adds a labelled block of supporting text (for example `("server stderr", tail)`).
    pub fn with_detail(mut self, label: impl Into<String>, text: impl Into<String>) -> Self {
        self.details.push((label.into(), text.into()));
        self
    }

    pub fn with_reproduce(mut self, command: impl Into<String>) -> Self {
        self.reproduce = Some(command.into());
        self
    }

    /// Prefixes the cause with context, keeping advice and details.
    pub fn context(mut self, context: impl fmt::Display) -> Self {
        self.cause = format!("{context}: {}", self.cause);
        self
    }

    /// The one-line form used in reports and in the `INVALID: <reason>` line.
    pub fn summary(&self) -> String {
        self.cause.clone()
    }

    /// The full multi-line form for a terminal.
    pub fn render(&self) -> String {
        let mut out = format!("error[{}]: {}", self.stage.as_str(), self.cause);
        for (label, text) in &self.details {
            let text = text.trim_end();
            if text.is_empty() {
                continue;
            }
            out.push_str(&format!("\n{label}:\n-----\n{text}\n-----"));
        }
        if let Some(advice) = &self.advice {
            out.push_str(&format!("\nhelp: {advice}"));
        }
        if let Some(cmd) = &self.reproduce {
            out.push_str(&format!("\nnote: reproduce with:\n  {cmd}"));
        }
        out
    }

    pub fn usage(cause: impl Into<String>) -> Self {
        Error::new(Stage::Usage, cause)
    }

    pub fn internal(cause: impl Into<String>) -> Self {
        Error::new(Stage::Internal, cause)
            .with_advice("this is a bug in tdqs-gate; please report it with the command you ran")
    }

    /// Wraps an I/O error on a named path.
    pub fn io(stage: Stage, what: impl fmt::Display, err: std::io::Error) -> Self {
        Error::new(stage, format!("{what}: {err}"))
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.cause)
    }
}

impl std::error::Error for Error {}
