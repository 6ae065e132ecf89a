//! Writing the report: atomically, and into GitHub Actions' summary and outputs when present.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::platform::atomic::write_atomically;
use tdqs_core::error::{Error, Stage};
use tdqs_core::redact::redact;

use tdqs_core::report::markdown;
use tdqs_core::report::{Report, REPORT_JSON, REPORT_MARKDOWN};

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so a reader
/// sees the old file or the new one, never half of one.
pub fn atomic_write(path: &Path, bytes: &[u8]) -> Result<(), Error> {
    let dir = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or_else(|| Path::new("."));
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::io(Stage::Report, format!("cannot create {}", dir.display()), e)
            .with_advice("choose a writable folder with --report-dir")
    })?;
    // A report is an ordinary file others may read (0644), not a private temporary one.
    write_atomically(path, bytes, Some(0o644)).map_err(|e| {
        Error::io(Stage::Report, format!("cannot write {}", path.display()), e)
            .with_advice("choose a writable folder with --report-dir")
    })
}

/// The paths a report was written to.
#[derive(Debug, Clone)]
pub struct Written {
    pub json: PathBuf,
    pub markdown: PathBuf,
    pub markdown_text: String,
}

/// Serialises a report as the committed schema describes it, with secrets masked.
pub fn to_json(report: &Report) -> Result<String, Error> {
    let text = serde_json::to_string_pretty(report)
        .map_err(|e| Error::internal(format!("cannot serialise the report: {e}")))?;
    Ok(redact(&text) + "\n")
}

/// Writes `tool-definition-score.json` and `tool-definition-score.md` into `dir`.
pub fn write_report(dir: &Path, report: &Report) -> Result<Written, Error> {
    let json = dir.join(REPORT_JSON);
    let md_path = dir.join(REPORT_MARKDOWN);
    let markdown_text = redact(&markdown::render(report));
    atomic_write(&json, to_json(report)?.as_bytes())?;
    atomic_write(&md_path, markdown_text.as_bytes())?;
    Ok(Written {
        json,
        markdown: md_path,
        markdown_text,
    })
}

fn append(path: &Path, text: &str) -> Result<(), Error> {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(path)
        .map_err(|e| Error::io(Stage::Report, format!("cannot open {}", path.display()), e))?;
    f.write_all(text.as_bytes())
        .map_err(|e| Error::io(Stage::Report, format!("cannot write {}", path.display()), e))
}

/// In GitHub Actions: appends the summary to `$GITHUB_STEP_SUMMARY` and writes `decision`,
/// `scored` and `report` to `$GITHUB_OUTPUT`. Does nothing where those variables are unset.
pub fn github_outputs(report: &Report, written: Option<&Written>) -> Result<(), Error> {
    if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|v| !v.is_empty()) {
        let text = match written {
            Some(w) => w.markdown_text.clone(),
            None => redact(&markdown::render(report)),
        };
        append(Path::new(&summary), &(text + "\n"))?;
    }
    if let Some(output) = std::env::var_os("GITHUB_OUTPUT").filter(|v| !v.is_empty()) {
        let mut lines = format!(
            "decision={}\nscored={}\n",
            report.decision.as_str(),
            report.scored
        );
        if let Some(w) = written {
            lines.push_str(&format!("report={}\n", w.json.display()));
        }
        append(Path::new(&output), &lines)?;
    }
    Ok(())
}
