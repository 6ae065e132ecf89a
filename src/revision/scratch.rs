//! A scratch copy of the working tree, for the head side's `setup` commands.
//!
//! Setup commands come from the pull request and may do anything to the tree they run in: an
//! `npm ci --omit=dev` deletes the user's dev dependencies, a build overwrites `dist/`. The base
//! side runs in a temporary worktree anyway; for the head (the working tree) the gate copies the
//! files git would see — tracked files as they are on disk (uncommitted changes included) and
//! untracked files that are not ignored — into `<tmp>/tdqs-gate-copy-XXXX/tree`, and runs setup
//! and server there. Ignored files (`node_modules`, `.venv`, `dist`, `target`) are not copied:
//! the head starts from what a fresh clone of the working tree would hold, like the base.
//! Executable bits and symbolic links are kept. Not copied: the `.git` folder, and the contents
//! of submodules. `[server] setup-in-place = true` uses the working tree itself instead.

use std::fs;
use std::path::{Path, PathBuf};

use tdqs_core::error::{Error, Result, Stage};

/// The prefix of scratch copy folders in the temporary directory.
pub(crate) const PREFIX: &str = "tdqs-gate-copy-";

/// A copy of a working tree, removed when dropped.
#[derive(Debug)]
pub struct ScratchCopy {
    dir: tempfile::TempDir,
    tree: PathBuf,
    /// The working tree it copies.
    pub source: PathBuf,
    /// Files copied (symbolic links included).
    pub files: usize,
}

impl ScratchCopy {
    /// The copied tree (`{root}` for the head side).
    pub fn root(&self) -> &Path {
        &self.tree
    }

    /// Removes the copy now, reporting a failure.
    pub fn close(self) -> Result<()> {
        let path = self.dir.path().to_path_buf();
        self.dir.close().map_err(|e| {
            Error::io(
                Stage::Export,
                format!("cannot remove the scratch copy {}", path.display()),
                e,
            )
            .with_advice("remove the folder by hand; a later run removes it too")
        })
    }
}

/// Lists the files to copy from the working tree at `workdir`, relative to it: tracked files
/// still present, and untracked files that are not ignored.
pub(crate) fn files_to_copy(workdir: &Path) -> Result<Vec<PathBuf>> {
    let fail = |e: git2::Error| {
        Error::new(
            Stage::Revision,
            format!(
                "cannot list the files of the working tree {}: {}",
                workdir.display(),
                e.message()
            ),
        )
        .with_advice(
            "check that the folder is a git working tree, or set setup-in-place = true in [server]",
        )
    };
    let repo = git2::Repository::open(workdir).map_err(fail)?;
    let mut files = std::collections::BTreeSet::new();
    let index = repo.index().map_err(fail)?;
    for entry in index.iter() {
        // Submodules (gitlinks) are folders with their own repository: not copied.
        if entry.mode & 0o170000 == 0o160000 {
            continue;
        }
        let path = PathBuf::from(String::from_utf8_lossy(&entry.path).into_owned());
        files.insert(path);
    }
    let mut options = git2::StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(true)
        .include_ignored(false)
        .exclude_submodules(true);
    let statuses = repo.statuses(Some(&mut options)).map_err(fail)?;
    for status in statuses.iter() {
        if status.status().contains(git2::Status::WT_NEW) {
            if let Some(path) = status.path() {
                files.insert(PathBuf::from(path));
            }
        }
    }
    Ok(files.into_iter().collect())
}

/// Copies the working tree at `workdir` into a new scratch folder.
pub(crate) fn copy_working_tree(workdir: &Path) -> Result<ScratchCopy> {
    let files = files_to_copy(workdir)?;
    let io_fail = |what: String, e: std::io::Error| {
        Error::io(Stage::Export, what, e).with_advice(
            "set TMPDIR to a writable folder with room for a copy of the working tree, or set setup-in-place = true in [server]",
        )
    };
    let dir = tempfile::Builder::new()
        .prefix(PREFIX)
        .tempdir()
        .map_err(|e| {
            io_fail(
                "cannot create the scratch copy of the working tree".into(),
                e,
            )
        })?;
    crate::platform::ownership::claim_for_process(dir.path());
    let tree = dir.path().join("tree");
    fs::create_dir(&tree).map_err(|e| io_fail(format!("cannot create {}", tree.display()), e))?;
    let mut copied = 0;
    for relative in &files {
        let from = workdir.join(relative);
        let Ok(meta) = fs::symlink_metadata(&from) else {
            // Deleted in the working tree but still in the index: the head has no such file.
            continue;
        };
        let to = tree.join(relative);
        if let Some(parent) = to.parent() {
            fs::create_dir_all(parent)
                .map_err(|e| io_fail(format!("cannot create {}", parent.display()), e))?;
        }
        if meta.file_type().is_symlink() {
            let target = fs::read_link(&from)
                .map_err(|e| io_fail(format!("cannot read the link {}", from.display()), e))?;
            crate::platform::file_modes::symlink_file(&target, &to)
                .map_err(|e| io_fail(format!("cannot create the link {}", to.display()), e))?;
        } else if meta.is_file() {
            // `fs::copy` keeps the permission bits, the executable bit included.
            fs::copy(&from, &to)
                .map_err(|e| io_fail(format!("cannot copy {}", from.display()), e))?;
        } else {
            continue;
        }
        copied += 1;
    }
    Ok(ScratchCopy {
        dir,
        tree,
        source: workdir.to_path_buf(),
        files: copied,
    })
}
