//! Revisions: finding the repository, resolving `--base` / `--head` with git2, and checking a
//! commit out into a detached temporary worktree that leaves nothing behind.
//!
//! A [`Side`] is one tree the gate exports tools from: either a temporary worktree of a commit
//! ([`Repo::checkout`]) or the repository's working tree as it is, uncommitted changes included
//! ([`Repo::working_tree`]).
//!
//! What "nothing behind" means, and how it is kept:
//! - the worktree gets a unique name `tdqs-gate-<pid>-<8 hex>`, and its folder of that name lives
//!   in the system temporary directory;
//! - libgit2 can only add a worktree on a branch, so a branch of the same name is created at the
//!   commit, the worktree's HEAD is detached onto the commit, and the branch is deleted again
//!   before [`Repo::checkout`] returns;
//! - a guard owned by the [`Side`] prunes the worktree entry (`.git/worktrees/<name>`), removes the
//!   folder and any leftover branch when the side is dropped — on success, on error, during a
//!   panic's unwinding, and when a future holding it is dropped (Ctrl-C handled by cancelling the
//!   pipeline). [`cleanup_all_active`] does the same for a signal handler that exits at once;
//! - every worktree carries an owner marker with a random token in its admin folder, locked
//!   (`flock`) for the whole run ([`crate::platform::ownership`]);
//! - a run killed outright (SIGKILL) cannot clean up, so every [`open`] first removes the
//!   `tdqs-gate-*` worktrees whose marker it can lock — abandoned by their run — and that hold no
//!   changes, and the abandoned `tdqs-gate-home-*` / `tdqs-judge-*` folders
//!   ([`Repo::prune_stale`], [`crate::platform::ownership::prune_temp_folders`]); anything in use or with
//!   changes is kept and reported. Adding and removing worktrees is serialised between gates
//!   by an `flock` on the repository's `.git` folder.
//!
//! The user's HEAD, index and working tree are never written: the checkout happens in the new
//! worktree only, and the only shared state touched is the temporary branch. libgit2 runs no
//! hooks (`git worktree add` would run `post-checkout`).
//!
//! As with any checkout by libgit2, submodules stay empty folders and Git LFS files stay pointer
//! files: a server that needs them must fetch them in a `setup` command.
//!
//! libgit2 does not read `GIT_DIR`, `GIT_WORK_TREE` or `GIT_INDEX_FILE` when a repository is
//! opened by path (only `Repository::open_from_env` does), so a gate started from a git hook or
//! an environment that exports them still works on the repository it was pointed at.

mod resolve;

pub use resolve::UpstreamBase;
pub mod scratch;
mod worktree;

use std::path::{Path, PathBuf};

use tdqs_core::error::{Error, Result, Stage};

pub use worktree::{cleanup_all_active, take_cleanup_failures, WORKTREE_PREFIX};

/// The label of a side that is the repository's working tree.
pub use tdqs_core::export::WORKING_TREE_LABEL;

/// One tree to export from, kept alive as long as this value lives.
#[derive(Debug)]
pub struct Side {
    /// The root of the tree: `{root}` in launch settings.
    pub root: PathBuf,
    /// The full commit id: the checked-out commit, or HEAD's for the working tree (`None` when
    /// HEAD is unborn).
    pub commit: Option<String>,
    /// The revision as the user gave it (`origin/main`, `HEAD~1`), or [`WORKING_TREE_LABEL`].
    pub revision_label: String,
    _guard: Option<worktree::TempWorktree>,
}

impl Side {
    /// A plain folder that is not in a git repository (`tdqs-gate export` of a server that is
    /// not under version control): no commit, nothing to clean up.
    pub fn plain_folder(root: PathBuf) -> Side {
        Side {
            root,
            commit: None,
            revision_label: WORKING_TREE_LABEL.to_string(),
            _guard: None,
        }
    }

    /// True when this side is a temporary worktree (not the user's working tree).
    pub fn is_temporary(&self) -> bool {
        self._guard.is_some()
    }

    /// True when this side is a temporary worktree whose folder (or its `.git` link) is gone:
    /// something removed it while the gate used it.
    pub fn vanished(&self) -> bool {
        self.is_temporary() && std::fs::symlink_metadata(self.root.join(".git")).is_err()
    }

    /// Removes the temporary worktree now and reports a failure to do so (dropping the side does
    /// the same, but can only record failures for [`take_cleanup_failures`]).
    pub fn close(mut self) -> Result<()> {
        match self._guard.take() {
            Some(guard) => guard.close(),
            None => Ok(()),
        }
    }
}

/// The state of the working tree, for reports (what "head = working tree" meant in this run).
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct WorkingTreeState {
    /// HEAD's commit id (`None` when HEAD is unborn).
    pub commit: Option<String>,
    /// The short branch name HEAD points to (`None` when detached or unborn).
    pub branch: Option<String>,
    /// Paths with uncommitted changes (staged, unstaged or untracked, ignored files excluded).
    pub changed_paths: usize,
}

impl WorkingTreeState {
    pub fn is_dirty(&self) -> bool {
        self.changed_paths > 0
    }

    /// A one-line description such as `working tree at 1a2b3c4d5e6f (main) with 3 uncommitted
    /// changes`.
    pub fn describe(&self) -> String {
        let mut out = String::from(WORKING_TREE_LABEL);
        match &self.commit {
            Some(id) => out.push_str(&format!(" at {}", &id[..id.len().min(12)])),
            None => out.push_str(" (no commit yet)"),
        }
        if let Some(branch) = &self.branch {
            out.push_str(&format!(" ({branch})"));
        }
        match self.changed_paths {
            0 => out.push_str(", clean"),
            1 => out.push_str(" with 1 uncommitted change"),
            n => out.push_str(&format!(" with {n} uncommitted changes")),
        }
        out
    }
}

/// An open repository.
pub struct Repo {
    repo: git2::Repository,
    /// `.git` of the main worktree: where refs and `worktrees/` live.
    commondir: PathBuf,
}

impl std::fmt::Debug for Repo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Repo")
            .field("commondir", &self.commondir)
            .field("workdir", &self.repo.workdir())
            .finish()
    }
}

/// Opens the repository at or above `dir` (the current directory when `None`), then prunes
/// worktrees left by killed runs.
///
/// Failing to remove a leftover does not stop the run (it is recorded for
/// [`take_cleanup_failures`]): the leftover does not affect this run's worktrees.
/// Whether `dir` (default: the current directory) is inside a git repository at all. Commands
/// that can work on a plain folder (`export`, `lint`) ask this before [`open`].
pub(crate) fn in_repository(dir: Option<&Path>) -> bool {
    let start = match dir {
        Some(dir) => dir.to_path_buf(),
        None => match std::env::current_dir() {
            Ok(dir) => dir,
            Err(_) => return false,
        },
    };
    match git2::Repository::discover(&start) {
        Ok(_) => true,
        // Only a definite "no repository here" counts; other failures (ownership, corruption)
        // surface from `open` with their own advice.
        Err(e) => e.code() != git2::ErrorCode::NotFound,
    }
}

pub fn open(dir: Option<&Path>) -> Result<Repo> {
    let repo = Repo::open_without_pruning(dir)?;
    let (_, kept) = crate::platform::ownership::prune_temp_folders();
    for message in kept {
        worktree::record_failure(message);
    }
    if let Err(e) = repo.prune_stale() {
        worktree::record_failure(match &e.advice {
            Some(advice) => format!("{} ({advice})", e.cause),
            None => e.cause,
        });
    }
    Ok(repo)
}

impl Repo {
    /// Opens the repository at or above `dir` without touching leftovers (for read-only uses
    /// such as describing the working tree).
    pub fn open_without_pruning(dir: Option<&Path>) -> Result<Repo> {
        let start = match dir {
            Some(dir) => dir.to_path_buf(),
            None => std::env::current_dir().map_err(|e| {
                Error::io(Stage::Revision, "cannot read the current directory", e)
                    .with_advice("pass the repository with --repo DIR")
            })?,
        };
        if !start.exists() {
            return Err(Error::new(
                Stage::Revision,
                format!("repository folder {} does not exist", start.display()),
            )
            .with_advice("pass an existing folder inside a git repository with --repo DIR"));
        }
        let no_ceiling: [&std::ffi::OsStr; 0] = [];
        let repo =
            git2::Repository::open_ext(&start, git2::RepositoryOpenFlags::empty(), no_ceiling)
                .map_err(|e| open_error(&start, e))?;
        let commondir = repo.commondir().to_path_buf();
        Ok(Repo { repo, commondir })
    }

    /// The root of the working tree (`None` for a bare repository).
    pub fn workdir(&self) -> Option<&Path> {
        self.repo.workdir()
    }

    /// The folder holding refs, objects and `worktrees/`.
    pub fn commondir(&self) -> &Path {
        &self.commondir
    }

    /// True for a shallow clone (`.git/shallow` lists cut-off commits): older commits are
    /// missing, which is the usual reason a base revision cannot be found in CI.
    pub fn is_shallow(&self) -> bool {
        self.repo.is_shallow() || self.commondir.join("shallow").is_file()
    }

    /// Removes `tdqs-gate-*` worktrees (and their branches) left by runs that were killed before
    /// they could clean up: only those with an unlocked owner marker and no changes. Returns the
    /// names removed; kept ones are recorded for [`take_cleanup_failures`].
    pub fn prune_stale(&self) -> Result<Vec<String>> {
        worktree::prune_stale(&self.repo, &self.commondir)
    }

    /// Resolves `rev` to a full commit id; a revision missing from the clone is an error whose
    /// advice names the fetch that fixes it.
    pub fn resolve(&self, rev: &str) -> Result<String> {
        resolve::resolve_commit(&self.repo, rev, self.is_shallow()).map(|oid| oid.to_string())
    }

    /// The remote branch a pre-push hook compares pushes with when none is given.
    pub fn upstream_base(&self) -> Result<resolve::UpstreamBase> {
        resolve::upstream_base(&self.repo)
    }

    /// Checks `rev` out into a detached temporary worktree, file modes and symlinks as
    /// committed.
    pub fn checkout(&self, rev: &str) -> Result<Side> {
        let oid = resolve::resolve_commit(&self.repo, rev, self.is_shallow())?;
        let guard = worktree::TempWorktree::create(&self.repo, &self.commondir, oid)
            .map_err(|e| e.context(format!("cannot check out '{rev}'")))?;
        Ok(Side {
            root: guard.path().to_path_buf(),
            commit: Some(oid.to_string()),
            revision_label: rev.to_string(),
            _guard: Some(guard),
        })
    }

    /// The regular files (not links, not folders) directly inside folder `dir` of commit
    /// `rev`'s tree, by name, read from the object database (nothing is checked out, so no link
    /// is followed). A missing folder is an empty map; files over `max_bytes` and names beyond
    /// the first `max_files` are left out.
    pub fn committed_files(
        &self,
        rev: &str,
        dir: &Path,
        max_files: usize,
        max_bytes: usize,
    ) -> Result<std::collections::BTreeMap<String, Vec<u8>>> {
        let oid = resolve::resolve_commit(&self.repo, rev, self.is_shallow())?;
        let read_error = |e: git2::Error| {
            Error::new(
                Stage::Revision,
                format!("cannot read {} at {rev}: {}", dir.display(), e.message()),
            )
        };
        let tree = self
            .repo
            .find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(read_error)?;
        let mut files = std::collections::BTreeMap::new();
        let folder = match tree.get_path(dir) {
            Ok(entry) if entry.kind() == Some(git2::ObjectType::Tree) => {
                self.repo.find_tree(entry.id()).map_err(read_error)?
            }
            _ => return Ok(files),
        };
        for entry in folder.iter() {
            if files.len() >= max_files {
                break;
            }
            let regular = matches!(entry.filemode(), 0o100644 | 0o100755);
            let (Some(name), true) = (entry.name(), regular) else {
                continue;
            };
            let blob = self.repo.find_blob(entry.id()).map_err(read_error)?;
            if blob.size() <= max_bytes {
                files.insert(name.to_string(), blob.content().to_vec());
            }
        }
        Ok(files)
    }

    /// The regular file at `path` of commit `rev`'s tree, read from the object database (no
    /// checkout, no link followed); `None` when there is no regular file there. A file over
    /// `max_bytes` is an error.
    pub fn committed_file(
        &self,
        rev: &str,
        path: &Path,
        max_bytes: usize,
    ) -> Result<Option<Vec<u8>>> {
        let oid = resolve::resolve_commit(&self.repo, rev, self.is_shallow())?;
        let read_error = |e: git2::Error| {
            Error::new(
                Stage::Revision,
                format!("cannot read {} at {rev}: {}", path.display(), e.message()),
            )
        };
        let tree = self
            .repo
            .find_commit(oid)
            .and_then(|c| c.tree())
            .map_err(read_error)?;
        let entry = match tree.get_path(path) {
            Ok(entry) if matches!(entry.filemode(), 0o100644 | 0o100755) => entry,
            _ => return Ok(None),
        };
        let blob = self.repo.find_blob(entry.id()).map_err(read_error)?;
        if blob.size() > max_bytes {
            return Err(Error::new(
                Stage::Revision,
                format!(
                    "{} at {rev} is larger than {max_bytes} bytes",
                    path.display()
                ),
            )
            .with_advice("keep the file small, or give it on the command line"));
        }
        Ok(Some(blob.content().to_vec()))
    }

    /// The working tree as it is, uncommitted changes included.
    pub fn working_tree(&self) -> Result<Side> {
        let root = self.workdir().ok_or_else(|| {
            Error::new(
                Stage::Revision,
                format!(
                    "{} is a bare repository: it has no working tree to use as the head",
                    self.commondir.display()
                ),
            )
            .with_advice(
                "pass the head revision with --head REV, or run in a clone with a working tree",
            )
        })?;
        Ok(Side {
            // libgit2 reports the working directory with a trailing slash; `{root}/x` must not
            // become `root//x`.
            root: root.components().collect(),
            commit: self.head_commit(),
            revision_label: WORKING_TREE_LABEL.to_string(),
            _guard: None,
        })
    }

    /// HEAD, branch and uncommitted changes of the working tree, for reports. Reading status does
    /// not write the index.
    pub fn describe_working_tree(&self) -> Result<WorkingTreeState> {
        let branch = match self.repo.head() {
            Ok(head) if head.is_branch() => head.shorthand().map(str::to_string),
            _ => None,
        };
        let changed_paths = if self.repo.is_bare() {
            0
        } else {
            count_changed_paths(&self.repo).map_err(|e| {
                Error::new(
                    Stage::Revision,
                    format!("cannot read the working tree's status: {}", e.message()),
                )
            })?
        };
        Ok(WorkingTreeState {
            commit: self.head_commit(),
            branch,
            changed_paths,
        })
    }

    fn head_commit(&self) -> Option<String> {
        self.repo
            .head()
            .ok()
            .and_then(|head| head.peel_to_commit().ok())
            .map(|commit| commit.id().to_string())
    }
}

fn open_error(start: &Path, err: git2::Error) -> Error {
    match err.code() {
        git2::ErrorCode::NotFound => Error::new(
            Stage::Revision,
            format!("no git repository at or above {}", start.display()),
        )
        .with_advice("run tdqs-gate inside the repository, or pass it with --repo DIR"),
        git2::ErrorCode::Owner => Error::new(
            Stage::Revision,
            format!(
                "the repository at {} is owned by another user, and git refuses to open it",
                start.display()
            ),
        )
        .with_advice(format!(
            "mark it as safe: `git config --global --add safe.directory {}` (common in CI containers)",
            start.display()
        )),
        _ => Error::new(
            Stage::Revision,
            format!("cannot open the git repository at {}: {}", start.display(), err.message()),
        )
        .with_advice("check that --repo points into a readable git repository"),
    }
}

/// Paths whose status differs from HEAD: modified, staged, deleted or untracked (ignored files
/// and submodules do not count). Reading status does not write the index.
pub(crate) fn count_changed_paths(
    repo: &git2::Repository,
) -> std::result::Result<usize, git2::Error> {
    let mut options = git2::StatusOptions::new();
    options
        .include_untracked(true)
        .recurse_untracked_dirs(false)
        .include_ignored(false)
        .exclude_submodules(true);
    Ok(repo
        .statuses(Some(&mut options))?
        .iter()
        .filter(|entry| entry.status() != git2::Status::CURRENT)
        .count())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn assert_send_sync<T: Send + Sync>() {}
    fn assert_send<T: Send>() {}

    #[test]
    fn sides_can_move_into_tasks_and_repos_into_threads() {
        assert_send_sync::<Side>();
        assert_send::<Repo>();
    }

    #[test]
    fn working_tree_state_describes_itself() {
        let state = WorkingTreeState {
            commit: Some("0123456789abcdef0123".to_string()),
            branch: Some("main".to_string()),
            changed_paths: 0,
        };
        assert_eq!(
            state.describe(),
            "working tree at 0123456789ab (main), clean"
        );
        assert!(!state.is_dirty());
        let state = WorkingTreeState {
            commit: None,
            branch: None,
            changed_paths: 1,
        };
        assert_eq!(
            state.describe(),
            "working tree (no commit yet) with 1 uncommitted change"
        );
    }
}
