//! The root of the repository a command works in, found one way for every command.

use std::path::{Path, PathBuf};

use tdqs_core::error::Error;

/// The root of the working tree of the repository around `repo` (default: the current folder);
/// `None` outside a repository or in a bare one.
pub(super) fn repository_root(repo: Option<&Path>) -> Result<Option<PathBuf>, Error> {
    if !crate::revision::in_repository(repo) {
        return Ok(None);
    }
    Ok(crate::revision::Repo::open_without_pruning(repo)?
        .workdir()
        .map(Path::to_path_buf))
}

/// The folder a command reads its configuration, case file and caches from: the repository's
/// root, else `--repo`, else the current folder.
pub(super) fn working_folder(repo: Option<&Path>) -> Result<Option<PathBuf>, Error> {
    Ok(repository_root(repo)?
        .or_else(|| repo.map(Path::to_path_buf))
        .or_else(|| std::env::current_dir().ok()))
}

/// Where a report goes without `--report-dir`: `.tool-definition-score` at the repository's
/// root, in the current folder outside a repository.
pub(super) fn default_report_dir(repo: Option<&Path>) -> PathBuf {
    const DEFAULT_REPORT_DIR: &str = ".tool-definition-score";
    // A repository that cannot be opened is reported by the command itself; the report then
    // goes where it would outside one.
    match repository_root(repo) {
        Ok(Some(root)) => root.join(DEFAULT_REPORT_DIR),
        _ => PathBuf::from(DEFAULT_REPORT_DIR),
    }
}
