//! Export files: what `tdqs-gate export -o FILE` writes and `--base-export` / `--head-export`
//! read back.

use std::io::Write;
use std::path::Path;

use serde_json::Value;

use tdqs_core::error::{Error, Result, Stage};
use tdqs_core::export::{Export, EXPORT_SCHEMA_VERSION};

use tdqs_core::digest::verify_export;

/// Reads an export file and checks it ([`verify_export`]): an export whose hashes or sizes do
/// not follow from its tools is refused, so a hand-edited file cannot decide a gate.
pub fn read_export(path: &Path) -> Result<Export> {
    let shown = path.display();
    let text = std::fs::read_to_string(path).map_err(|err| {
        Error::io(
            Stage::Export,
            format_args!("cannot read export file {shown}"),
            err,
        )
        .with_advice("check the path, or create the file with `tdqs-gate export -o FILE`")
    })?;
    let not_an_export = |what: String| {
        Error::new(
            Stage::Export,
            format!("{shown} is not a tdqs-gate export: {what}"),
        )
        .with_advice("pass a file written by `tdqs-gate export -o FILE`")
    };
    let value: Value = serde_json::from_str(&text)
        .map_err(|err| not_an_export(format!("invalid JSON ({err})")))?;
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

/// Writes `export` as pretty JSON with a trailing newline. The file appears whole or not at all:
/// it is written to a temporary file in the same directory and renamed over `path`.
pub fn write_export(path: &Path, export: &Export) -> Result<()> {
    let shown = path.display();
    let directory = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let cannot_write = |err: std::io::Error| {
        Error::io(
            Stage::Export,
            format_args!("cannot write export file {shown}"),
            err,
        )
        .with_advice(
            "check that the directory exists and is writable, or choose another path with -o",
        )
    };
    let mut text = serde_json::to_string_pretty(export)
        .map_err(|err| Error::internal(format!("serialising the export failed: {err}")))?;
    text.push('\n');
    let mut temporary = tempfile::Builder::new()
        .prefix(".tdqs-gate-export.")
        .suffix(".tmp")
        .tempfile_in(directory)
        .map_err(cannot_write)?;
    temporary.write_all(text.as_bytes()).map_err(cannot_write)?;
    temporary.as_file().sync_all().map_err(cannot_write)?;
    #[cfg(unix)]
    {
        // Temporary files are created private (0600); an export is an ordinary artifact.
        use std::os::unix::fs::PermissionsExt;
        std::fs::set_permissions(temporary.path(), std::fs::Permissions::from_mode(0o644))
            .map_err(cannot_write)?;
    }
    // On failure the temporary file is removed when the error drops it.
    temporary
        .persist(path)
        .map_err(|err| cannot_write(err.error))?;
    Ok(())
}
