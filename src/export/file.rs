//! Export files: what `tdqs-gate export -o FILE` writes and `--base-export` / `--head-export`
//! read back.

use crate::platform::atomic::write_atomically;
use std::path::Path;

use serde_json::Value;

use tdqs_core::error::{Error, Result, Stage};
use tdqs_core::export::{Export, EXPORT_SCHEMA_VERSION};

use tdqs_core::digest::verify_export;

/// Reads an export file of at most [`MAX_EXPORT_FILE_BYTES`] (the default listing limit's) and
/// checks it, as [`read_export_within`].
pub fn read_export(path: &Path) -> Result<Export> {
    read_export_within(path, MAX_EXPORT_FILE_BYTES)
}

/// Reads an export file of at most `limit` bytes ([`export_file_limit`]) and checks it
/// ([`verify_export`]): an export whose hashes or sizes do not follow from its tools is refused,
/// so a hand-edited file cannot decide a gate.
pub fn read_export_within(path: &Path, limit: u64) -> Result<Export> {
    let shown = path.display();
    let text = read_untrusted(path, limit)?;
    let not_an_export = |what: String| {
        Error::new(
            Stage::Export,
            format!("{shown} is not a tdqs-gate export: {what}"),
        )
        .with_advice("pass a file written by `tdqs-gate export -o FILE`")
    };
    let value: Value = serde_json::from_str(&text)
        .map_err(|err| not_an_export(format!("invalid JSON ({err})")))?;
    export_of_value(path, value)
}

/// A verified export from the parsed JSON of an export file.
pub(crate) fn export_of_value(path: &Path, value: Value) -> Result<Export> {
    let shown = path.display();
    let not_an_export = |what: String| {
        Error::new(
            Stage::Export,
            format!("{shown} is not a tdqs-gate export: {what}"),
        )
        .with_advice("pass a file written by `tdqs-gate export -o FILE`")
    };
    // Checked before the structure so that a file of another format version says so rather than
    // naming whichever field moved.
    match value.get("schemaVersion") {
        Some(Value::Number(n)) if n.as_u64() == Some(u64::from(EXPORT_SCHEMA_VERSION)) => {}
        Some(Value::Number(n)) => {
            return Err(Error::new(
                Stage::Export,
                format!(
                    "{shown} is an export of format version {n}; this tdqs-gate reads version {EXPORT_SCHEMA_VERSION}"
                ),
            )
            .with_advice("re-create the export with this tdqs-gate: `tdqs-gate export -o FILE`"))
        }
        _ => return Err(not_an_export("it has no numeric `schemaVersion`".to_string())),
    }
    let export: Export =
        serde_json::from_value(value).map_err(|err| not_an_export(err.to_string()))?;
    verify_export(&export).map_err(|err| err.context(format_args!("export file {shown}")))?;
    Ok(export)
}

/// The most bytes an export file may hold when the listing limit is `max_listing_bytes`
/// (`--max-listing-bytes`): an export of the largest listing a server may send is about that
/// size again with its hashes and pretty-printing, so three times the limit leaves room; anything
/// beyond it is not an export the gate wrote under that limit.
pub const fn export_file_limit(max_listing_bytes: usize) -> u64 {
    (max_listing_bytes as u64).saturating_mul(3)
}

/// The fix for a given file over its limit: the limit comes from the command line, else from the
/// `[server]` tables of the tdqs-gate.toml in force (the base's in the gate).
pub(crate) const RAISE_THE_LISTING_LIMIT: &str =
    "raise --max-listing-bytes (or `max-listing-bytes` in the `[server]` table of tdqs-gate.toml)";

/// A file limit for a message: whole MiB, or bytes below one (a lowered listing limit).
pub(crate) fn shown_size(limit: u64) -> String {
    const MIB: u64 = 1024 * 1024;
    if limit >= MIB && limit % MIB == 0 {
        format!("{} MiB", limit / MIB)
    } else {
        format!("{limit} bytes")
    }
}

/// The most bytes an export file may hold under the default listing limit (32 MiB): 96 MiB.
pub const MAX_EXPORT_FILE_BYTES: u64 =
    export_file_limit(tdqs_core::export::DEFAULT_MAX_LISTING_BYTES);

/// An export file's text, read as untrusted data: it may come from a job that ran the pull
/// request's code (a downloaded artifact, a folder it wrote). Only a regular file is read, never
/// through a symbolic link, and at most `limit` bytes: a FIFO cannot block the gate and a link to
/// `/dev/zero` or to a file outside the folder is refused with its cause.
pub(crate) fn read_untrusted(path: &Path, limit: u64) -> Result<String> {
    use crate::platform::safe_file::{read_regular, Links, ReadError};
    let shown = path.display();
    let bytes = read_regular(path, Links::Refuse, limit).map_err(|err| {
        let advice = match err {
            ReadError::NotFound => {
                "check the path, or create the file with `tdqs-gate export -o FILE`".to_string()
            }
            ReadError::Symlink | ReadError::NotRegular(_) => {
                "an export is read only from a regular file: pass the file itself, as `tdqs-gate \
                 export -o FILE` wrote it"
                    .to_string()
            }
            ReadError::Io(_) => format!(
                "pass a file written by `tdqs-gate export -o FILE`; an export file may hold three \
                 times the listing limit ({} here): for a larger one, {RAISE_THE_LISTING_LIMIT}",
                shown_size(limit)
            ),
        };
        Error::new(
            Stage::Export,
            format!("cannot read export file {shown}: {err}"),
        )
        .with_advice(advice)
    })?;
    String::from_utf8(bytes).map_err(|_| {
        Error::new(
            Stage::Export,
            format!("{shown} is not a tdqs-gate export: it is not UTF-8 text"),
        )
        .with_advice("pass a file written by `tdqs-gate export -o FILE`")
    })
}

/// Writes `export` as pretty JSON with a trailing newline. The file appears whole or not at all:
/// it is written to a temporary file in the same directory and renamed over `path`.
pub fn write_export(path: &Path, export: &Export) -> Result<()> {
    let shown = path.display();
    let mut text = serde_json::to_string_pretty(export)
        .map_err(|err| Error::internal(format!("serialising the export failed: {err}")))?;
    text.push('\n');
    // An export is an ordinary artifact (0644), not a private temporary file.
    write_atomically(path, text.as_bytes(), Some(0o644)).map_err(|err| {
        Error::io(
            Stage::Export,
            format_args!("cannot write export file {shown}"),
            err,
        )
        .with_advice(
            "check that the directory exists and is writable, or choose another path with -o",
        )
    })
}
