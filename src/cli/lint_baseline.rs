//! The files of `lint --baseline` and `lint --write-baseline`: reading a baseline (a saved
//! findings file, or the base revision's export or tool list, linted here) and writing one.

use std::path::Path;

use serde_json::Value;

use crate::lint::baseline::{self, BaselineFile};
use crate::lint::{LintConfig, LintReport};
use tdqs_core::error::{Error, Stage};

/// What a `--baseline` file may be, and how large (a baseline is about the size of the export it
/// was made from, so it follows the export files' limit).
fn advice(limit: u64) -> String {
    format!(
        "pass a file written by `tdqs-gate lint --write-baseline FILE`, or the base revision's \
         export; it may hold three times the listing limit ({} here): for a larger one, {}",
        crate::export::file::shown_size(limit),
        crate::export::file::RAISE_THE_LISTING_LIMIT
    )
}

/// The baseline `path` holds, with the name it is shown by. A file with `baselineVersion` is a
/// saved baseline; anything else is read as an export or a tool list and linted with `config`
/// (the same rules and suppressions as the report it is compared with). At most `limit` bytes
/// are read, as for a given export file ([`crate::export::file::export_file_limit`]).
pub(super) fn read(
    path: &Path,
    config: &LintConfig,
    limit: u64,
) -> Result<(BaselineFile, String), Error> {
    let shown = path.display().to_string();
    let text = crate::export::file::read_untrusted(path, limit).map_err(|e| {
        e.context(format_args!("--baseline {shown}"))
            .with_advice(advice(limit))
    })?;
    let value: Value = serde_json::from_str(&text).map_err(|e| {
        Error::new(
            Stage::Config,
            format!("--baseline {shown} is not valid JSON ({e})"),
        )
        .with_advice(advice(limit))
    })?;
    if value.get("baselineVersion").is_some() {
        return Ok((BaselineFile::parse(&shown, value)?, shown));
    }
    let export = crate::export::tool_list::read_export_or_tool_list(path, limit)
        .map_err(|e| e.context("--baseline is neither a saved baseline nor an export"))?;
    let mut base = crate::lint::lint_export(&export, config);
    baseline::apply(&mut base, &config.suppressions, None);
    Ok((BaselineFile::of(&base), shown))
}

/// Writes the findings of `report` as a baseline file (whole or not at all).
pub(super) fn write(path: &Path, report: &LintReport) -> Result<usize, Error> {
    let file = BaselineFile::of(report);
    crate::platform::atomic::write_atomically(path, file.to_json().as_bytes(), Some(0o644))
        .map_err(|e| {
            Error::io(
                Stage::Config,
                format_args!("cannot write the baseline {}", path.display()),
                e,
            )
            .with_advice("check that the folder exists and is writable")
        })?;
    Ok(file.findings.len())
}
