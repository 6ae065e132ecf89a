//! Finding a program on a `PATH`, as `execvp` would.

use std::ffi::{OsStr, OsString};
use std::path::{Path, PathBuf};

/// What an empty `PATH` entry means.
#[derive(Debug, Clone, Copy)]
pub(crate) enum EmptyEntry<'a> {
    /// The given folder, as for `execvp` (the server's working directory).
    Means(&'a Path),
    /// Nothing: skipped.
    Skipped,
}

/// The first executable regular file named `name` (or `name` plus one of `suffixes`, tried in
/// order) in the folders of `path_var`. Relative entries are taken from `base` when given.
pub(crate) fn find_on_path(
    name: &OsStr,
    path_var: &OsStr,
    empty: EmptyEntry<'_>,
    base: Option<&Path>,
    suffixes: &[&str],
) -> Option<PathBuf> {
    for dir in std::env::split_paths(path_var) {
        let dir = if dir.as_os_str().is_empty() {
            match empty {
                EmptyEntry::Means(folder) => folder.to_path_buf(),
                EmptyEntry::Skipped => continue,
            }
        } else {
            match base {
                Some(base) => base.join(dir),
                None => dir,
            }
        };
        for suffix in suffixes {
            let mut file_name = OsString::from(name);
            file_name.push(suffix);
            let candidate = dir.join(&file_name);
            if is_executable_file(&candidate) {
                return Some(candidate);
            }
        }
    }
    None
}

/// True for a regular file (after links) that someone may execute.
pub(crate) fn is_executable_file(path: &Path) -> bool {
    let Ok(meta) = std::fs::metadata(path) else {
        return false;
    };
    if !meta.is_file() {
        return false;
    }
    #[cfg(unix)]
    {
        use std::os::unix::fs::PermissionsExt;
        meta.permissions().mode() & 0o111 != 0
    }
    #[cfg(not(unix))]
    {
        true
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn executable(path: &Path) {
        std::fs::write(path, "#!/bin/sh\n").unwrap();
        #[cfg(unix)]
        {
            use std::os::unix::fs::PermissionsExt;
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }

    #[test]
    fn first_executable_wins_and_empty_entries_follow_the_policy() {
        let a = tempfile::tempdir().unwrap();
        let b = tempfile::tempdir().unwrap();
        executable(&b.path().join("tool"));
        std::fs::write(a.path().join("tool"), "not executable").unwrap();
        let path = std::env::join_paths([a.path(), b.path()]).unwrap();
        let found = find_on_path(OsStr::new("tool"), &path, EmptyEntry::Skipped, None, &[""]);
        assert_eq!(found, Some(b.path().join("tool")));

        let cwd = tempfile::tempdir().unwrap();
        executable(&cwd.path().join("local"));
        let empty = OsStr::new("");
        assert_eq!(
            find_on_path(OsStr::new("local"), empty, EmptyEntry::Skipped, None, &[""]),
            None
        );
        assert_eq!(
            find_on_path(
                OsStr::new("local"),
                empty,
                EmptyEntry::Means(cwd.path()),
                None,
                &[""]
            ),
            Some(cwd.path().join("local"))
        );
    }
}
