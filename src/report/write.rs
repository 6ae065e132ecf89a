//! Writing the report: atomically, and into GitHub Actions' summary and outputs when present.

use std::io::Write as _;
use std::path::{Path, PathBuf};

use crate::platform::atomic::write_atomically;
use tdqs_core::error::{Error, Stage};
use tdqs_core::redact::redact;

use tdqs_core::report::html::{self, REPORT_HTML};
use tdqs_core::report::markdown;
use tdqs_core::report::monorepo::{self, MonorepoReport};
use tdqs_core::report::{Report, REPORT_JSON, REPORT_MARKDOWN};

/// Writes `bytes` to `path` through a temporary file in the same folder and a rename, so a reader
/// sees the old file or the new one, never half of one.
pub(crate) fn atomic_write(path: &Path, bytes: &[u8]) -> Result<(), Error> {
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
    pub html: PathBuf,
    pub markdown_text: String,
}

/// Serialises a report as the committed schema describes it, with secrets masked.
pub(crate) fn to_json(report: &Report) -> Result<String, Error> {
    let text = serde_json::to_string_pretty(report)
        .map_err(|e| Error::internal(format!("cannot serialise the report: {e}")))?;
    Ok(redact(&text) + "\n")
}

/// Refuses a report folder that is, or passes through, a symbolic link: a link committed by a
/// pull request (`.tool-definition-score -> /somewhere`) must not redirect the gate's writes.
/// Checked: the folder itself and, for a relative path, each folder on the way to it.
pub(crate) fn check_report_dir(dir: &Path) -> Result<(), Error> {
    let mut on_the_way: Vec<PathBuf> = vec![dir.to_path_buf()];
    if dir.is_relative() {
        on_the_way.extend(dir.ancestors().skip(1).map(Path::to_path_buf));
    }
    for p in on_the_way {
        if p.as_os_str().is_empty() {
            continue;
        }
        if crate::platform::safe_file::is_symlink(&p) {
            return Err(Error::new(
                Stage::Report,
                format!(
                    "the report folder {} is (or passes through) the symbolic link {}; the \
                     report is not written through links",
                    dir.display(),
                    p.display()
                ),
            )
            .with_advice(
                "remove the link (a report folder is not committed), or pass --report-dir with a \
                 real folder",
            ));
        }
    }
    if let Ok(meta) = std::fs::symlink_metadata(dir) {
        if !meta.is_dir() {
            return Err(Error::new(
                Stage::Report,
                format!("the report folder {} is not a folder", dir.display()),
            )
            .with_advice("remove it, or pass --report-dir with another folder"));
        }
    }
    Ok(())
}

/// Removes the report files in `dir` (best effort): after a run that could not write its own
/// report, no earlier report may stand in for it.
pub(crate) fn remove_stale(dir: &Path) {
    if check_report_dir(dir).is_err() {
        return;
    }
    for name in [REPORT_JSON, REPORT_MARKDOWN, REPORT_HTML] {
        let _ = std::fs::remove_file(dir.join(name));
    }
}

fn staged(dir: &Path, bytes: &[u8]) -> Result<tempfile::NamedTempFile, Error> {
    let mut tmp = tempfile::NamedTempFile::new_in(dir).map_err(|e| {
        Error::io(
            Stage::Report,
            format!("cannot write in {}", dir.display()),
            e,
        )
        .with_advice("choose a writable folder with --report-dir")
    })?;
    tmp.write_all(bytes)
        .and_then(|_| tmp.as_file().sync_all())
        .map_err(|e| {
            Error::io(
                Stage::Report,
                format!("cannot write in {}", dir.display()),
                e,
            )
        })?;
    crate::platform::file_modes::make_world_readable(tmp.as_file());
    Ok(tmp)
}

/// Writes `tool-definition-score.json`, `tool-definition-score.md` and
/// `tool-definition-score.html` into `dir`, as a set: all are staged in full first, then moved
/// into place; if any cannot be written, no report file is left (an older set is removed too),
/// so the files never disagree with each other or with the exit code.
pub(crate) fn write_report(dir: &Path, report: &Report) -> Result<Written, Error> {
    let result = write_pair(dir, report);
    if result.is_err() {
        remove_stale(dir);
    }
    result
}

fn write_pair(dir: &Path, report: &Report) -> Result<Written, Error> {
    write_texts(
        dir,
        to_json(report)?,
        redact(&markdown::render(report)),
        redact(&html::render(report)),
    )
}

/// Serialises a monorepo report, with secrets masked.
pub fn monorepo_to_json(report: &MonorepoReport) -> Result<String, Error> {
    let text = serde_json::to_string_pretty(report)
        .map_err(|e| Error::internal(format!("cannot serialise the report: {e}")))?;
    Ok(redact(&text) + "\n")
}

/// `write_report` for a run over several servers: one JSON report, one Markdown summary and
/// one HTML page for all of them, written as a set the same way.
pub fn write_monorepo_report(dir: &Path, report: &MonorepoReport) -> Result<Written, Error> {
    let result = monorepo_to_json(report).and_then(|json| {
        write_texts(
            dir,
            json,
            redact(&monorepo::render(report)),
            redact(&html::render_monorepo(report)),
        )
    });
    if result.is_err() {
        remove_stale(dir);
    }
    result
}

fn write_texts(
    dir: &Path,
    json_text: String,
    markdown_text: String,
    html_text: String,
) -> Result<Written, Error> {
    check_report_dir(dir)?;
    let json = dir.join(REPORT_JSON);
    let md_path = dir.join(REPORT_MARKDOWN);
    let html_path = dir.join(REPORT_HTML);
    std::fs::create_dir_all(dir).map_err(|e| {
        Error::io(Stage::Report, format!("cannot create {}", dir.display()), e)
            .with_advice("choose a writable folder with --report-dir")
    })?;
    check_report_dir(dir)?;
    let json_tmp = staged(dir, json_text.as_bytes())?;
    let md_tmp = staged(dir, markdown_text.as_bytes())?;
    let html_tmp = staged(dir, html_text.as_bytes())?;
    // A rename replaces a link at the destination instead of writing through it. The JSON goes
    // last: a reader that finds it finds the other two of the same run.
    html_tmp.persist(&html_path).map_err(|e| {
        Error::io(
            Stage::Report,
            format!("cannot move the report into {}", html_path.display()),
            e.error,
        )
    })?;
    md_tmp.persist(&md_path).map_err(|e| {
        Error::io(
            Stage::Report,
            format!("cannot move the report into {}", md_path.display()),
            e.error,
        )
    })?;
    json_tmp.persist(&json).map_err(|e| {
        Error::io(
            Stage::Report,
            format!("cannot move the report into {}", json.display()),
            e.error,
        )
    })?;
    Ok(Written {
        json,
        markdown: md_path,
        html: html_path,
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

/// Set by `tdqs-gate ci score`, which writes the step outputs itself to the file it is given.
static OUTPUTS_BY_CALLER: std::sync::atomic::AtomicBool = std::sync::atomic::AtomicBool::new(false);

/// From now on the gate leaves `$GITHUB_OUTPUT` to its caller (the summary is still appended).
pub fn leave_github_outputs_to_caller() {
    OUTPUTS_BY_CALLER.store(true, std::sync::atomic::Ordering::SeqCst);
}

/// In GitHub Actions: appends the summary to `$GITHUB_STEP_SUMMARY` and writes `decision`,
/// `scored` and `report` to `$GITHUB_OUTPUT`. Does nothing where those variables are unset.
pub(crate) fn github_outputs(report: &Report, written: Option<&Written>) -> Result<(), Error> {
    to_github(
        || redact(&markdown::render(report)),
        (report.decision, report.scored),
        written,
        String::new(),
    )
}

/// `github_outputs` for a run over several servers: the summary, `decision` and `scored` of
/// the whole run, `report`, and one `decision-NAME` per server.
pub fn github_monorepo_outputs(
    report: &MonorepoReport,
    written: Option<&Written>,
) -> Result<(), Error> {
    // Server names are letters, digits, `-`, `_` and `.` (checked when read), so each makes a
    // valid output name.
    let per_server: String = report
        .servers
        .iter()
        .map(|server| {
            format!(
                "decision-{}={}\n",
                server.name,
                server.report.decision.as_str()
            )
        })
        .collect();
    to_github(
        || redact(&monorepo::render(report)),
        (report.decision, report.scored),
        written,
        per_server,
    )
}

/// The summary (the written Markdown, else `render`ed now) and the outputs `decision`,
/// `scored`, `report` and `extra` lines, where GitHub Actions asks for them.
fn to_github(
    render: impl FnOnce() -> String,
    (decision, scored): (tdqs_core::exit::Verdict, bool),
    written: Option<&Written>,
    extra: String,
) -> Result<(), Error> {
    if let Some(summary) = std::env::var_os("GITHUB_STEP_SUMMARY").filter(|v| !v.is_empty()) {
        let text = match written {
            Some(w) => w.markdown_text.clone(),
            None => render(),
        };
        append(Path::new(&summary), &(text + "\n"))?;
    }
    let taken = OUTPUTS_BY_CALLER.load(std::sync::atomic::Ordering::SeqCst);
    if let Some(output) = std::env::var_os("GITHUB_OUTPUT").filter(|v| !v.is_empty() && !taken) {
        let mut lines = format!("decision={}\nscored={scored}\n", decision.as_str());
        if let Some(w) = written {
            lines.push_str(&format!("report={}\n", w.json.display()));
            // What `check --expect-digest` compares: the report as written, unmodified.
            if let Ok(bytes) = std::fs::read(&w.json) {
                use sha2::{Digest, Sha256};
                let digest: String = Sha256::digest(&bytes)
                    .iter()
                    .map(|b| format!("{b:02x}"))
                    .collect();
                lines.push_str(&format!("report-sha256={digest}\n"));
            }
        }
        lines.push_str(&extra);
        append(Path::new(&output), &lines)?;
    }
    Ok(())
}
