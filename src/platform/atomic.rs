//! Files that appear complete or not at all.

use std::io::Write as _;
use std::path::Path;

/// Writes `bytes` to `path` through a temporary file in the same folder, synced, then renamed over
/// `path`: a reader sees the old file or the new one, never half of one. `mode` sets the Unix
/// permissions of the result (temporary files are created 0600); `None` keeps them private.
///
/// The folder must exist. On failure the temporary file is removed and `path` is untouched.
pub(crate) fn write_atomically(
    path: &Path,
    bytes: &[u8],
    mode: Option<u32>,
) -> std::io::Result<()> {
    let dir = match path.parent() {
        Some(parent) if !parent.as_os_str().is_empty() => parent,
        _ => Path::new("."),
    };
    let mut temporary = tempfile::Builder::new()
        .prefix(".tdqs-gate-")
        .suffix(".partial")
        .tempfile_in(dir)?;
    temporary.write_all(bytes)?;
    temporary.as_file().sync_all()?;
    #[cfg(unix)]
    if let Some(mode) = mode {
        use std::os::unix::fs::PermissionsExt;
        temporary
            .as_file()
            .set_permissions(std::fs::Permissions::from_mode(mode))?;
    }
    #[cfg(not(unix))]
    let _ = mode;
    temporary.persist(path).map_err(|err| err.error)?;
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn replaces_the_file_and_leaves_nothing_else() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("out.json");
        std::fs::write(&target, "old").unwrap();
        write_atomically(&target, b"new", Some(0o644)).unwrap();
        assert_eq!(std::fs::read_to_string(&target).unwrap(), "new");
        let names: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name())
            .collect();
        assert_eq!(names, ["out.json"]);
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            let mode = std::fs::metadata(&target).unwrap().permissions().mode();
            assert_eq!(mode & 0o777, 0o644);
        }
    }

    #[test]
    fn a_missing_folder_fails_and_writes_nothing() {
        let dir = tempfile::tempdir().unwrap();
        let target = dir.path().join("missing/out.json");
        assert!(write_atomically(&target, b"x", None).is_err());
        assert!(!target.exists());
    }
}
