//! Writing the `--badge` file (its content is [`tdqs_core::report::badge`]).

use std::path::Path;

use serde_json::Value;
use tdqs_core::error::{Error, Stage};

/// Refuses, before anything runs, a badge path whose folder does not exist or that is a folder.
pub(crate) fn check_path(path: &Path) -> Result<(), Error> {
    if path.is_dir() {
        return Err(
            Error::usage(format!("--badge {} is a folder", path.display()))
                .with_advice("give a file name, e.g. --badge badge/tdqs.json"),
        );
    }
    let parent = path
        .parent()
        .filter(|p| !p.as_os_str().is_empty())
        .unwrap_or(Path::new("."));
    if !parent.is_dir() {
        return Err(Error::usage(format!(
            "the folder of --badge {} does not exist",
            path.display()
        ))
        .with_advice(format!(
            "create {} first, or write the badge elsewhere",
            parent.display()
        )));
    }
    Ok(())
}

/// Writes the badge JSON atomically (a reader never sees half a file).
pub fn write(path: &Path, badge: &Value) -> Result<(), Error> {
    let mut text = serde_json::to_string_pretty(badge)
        .map_err(|e| Error::internal(format!("cannot serialise the badge: {e}")))?;
    text.push('\n');
    crate::platform::atomic::write_atomically(path, text.as_bytes(), None).map_err(|e| {
        Error::io(
            Stage::Report,
            format!("cannot write the badge {}", path.display()),
            e,
        )
    })
}
