//! Detached temporary worktrees and the guard that removes them.
//!
//! libgit2 has no `git worktree add --detach`: `git_worktree_add` checks out a branch (and creates
//! one named after the worktree when none is given). So a worktree is made in four steps —
//! temporary branch at the commit, worktree on that branch, HEAD of the worktree detached onto
//! the commit, temporary branch deleted — and every step is undone by [`cleanup`], which runs
//! from `Drop` as well as from [`TempWorktree::close`] and [`cleanup_all_active`].

use std::fs;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, MutexGuard, OnceLock};

use tdqs_core::error::{Error, Result, Stage};

/// Every worktree, temporary branch and folder the gate creates starts with this; the rest of
/// the name is `<pid>-<8 hex digits>`. The name alone proves nothing: a leftover is removed only
/// when its admin folder holds the gate's owner marker and no running gate holds that marker's
/// lock (see [`crate::platform::ownership`]).
pub const WORKTREE_PREFIX: &str = "tdqs-gate-";

/// What has to be undone for one worktree.
#[derive(Debug)]
struct State {
    commondir: PathBuf,
    name: String,
    /// The worktree's folder (directly in the system temporary directory).
    path: PathBuf,
    commit: git2::Oid,
    /// The temporary branch may exist (set before it is created, cleared once it is deleted).
    branch_may_exist: bool,
    /// Cleanup has run (successfully or not); it never runs twice.
    finished: bool,
    /// The owner marker in the worktree's admin folder, locked while this run uses the worktree.
    claim: Option<crate::platform::ownership::Claim>,
}

type Shared = Arc<Mutex<State>>;

fn lock(state: &Shared) -> MutexGuard<'_, State> {
    // A panic while the lock was held must not stop cleanup from running.
    state.lock().unwrap_or_else(|e| e.into_inner())
}

fn active() -> &'static Mutex<Vec<Shared>> {
    static ACTIVE: OnceLock<Mutex<Vec<Shared>>> = OnceLock::new();
    ACTIVE.get_or_init(|| Mutex::new(Vec::new()))
}

fn failures() -> &'static Mutex<Vec<String>> {
    static FAILURES: OnceLock<Mutex<Vec<String>>> = OnceLock::new();
    FAILURES.get_or_init(|| Mutex::new(Vec::new()))
}

pub(super) fn record_failure(message: String) {
    failures()
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push(message);
}

/// Cleanup failures recorded when a [`super::Side`] was dropped (a drop cannot return an error);
/// the caller shows them as warnings. Taking them empties the list.
pub fn take_cleanup_failures() -> Vec<String> {
    std::mem::take(&mut *failures().lock().unwrap_or_else(|e| e.into_inner()))
}

/// Removes every temporary worktree of this process now. For a Ctrl-C handler that exits the
/// process without unwinding (dropping the sides does the same otherwise). Returns the failures.
pub fn cleanup_all_active() -> Vec<String> {
    let states: Vec<Shared> = active().lock().unwrap_or_else(|e| e.into_inner()).clone();
    states
        .iter()
        .filter_map(|state| cleanup(&mut lock(state)).err())
        .collect()
}

/// A detached worktree of one commit; removed when dropped.
#[derive(Debug)]
pub(crate) struct TempWorktree {
    state: Shared,
    path: PathBuf,
}

impl TempWorktree {
    pub(crate) fn create(
        repo: &git2::Repository,
        commondir: &Path,
        commit: git2::Oid,
    ) -> Result<TempWorktree> {
        let parent = temp_parent()?;
        let (name, path) = unique_name_and_path(repo, &parent);
        let state = Arc::new(Mutex::new(State {
            commondir: commondir.to_path_buf(),
            name: name.clone(),
            path: path.clone(),
            commit,
            branch_may_exist: true,
            finished: false,
            claim: None,
        }));
        active()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .push(state.clone());
        // From here on every early return drops `guard`, which undoes whatever was done.
        let guard = TempWorktree { state, path };
        {
            // Held for the whole creation so that `cleanup_all_active` from another thread
            // cannot run between two steps and leave the later ones behind.
            let mut creating = lock(&guard.state);
            // Another gate adding or removing a worktree at the same moment leaves an entry in
            // `.git/worktrees` that libgit2 cannot read, and its `git_worktree_add` then fails
            // with "reference ... is already checked out": gates take turns on these steps.
            let _repository = crate::platform::ownership::lock_folder(commondir);
            add_detached(repo, &name, &guard.path, commit)?;
            let admin = commondir.join("worktrees").join(&name);
            let claim = crate::platform::ownership::claim(&admin, &format!("commit {commit}"))
                .map_err(|e| {
                    Error::io(
                        Stage::Revision,
                        format!("cannot write the owner marker into {}", admin.display()),
                        e,
                    )
                    .with_advice("check that the repository's .git folder is writable")
                })?;
            creating.claim = Some(claim);
        }
        lock(&guard.state).branch_may_exist = false;
        Ok(guard)
    }

    pub(crate) fn path(&self) -> &Path {
        &self.path
    }

    /// Removes the worktree now, reporting failure as an error.
    pub(crate) fn close(self) -> Result<()> {
        let outcome = cleanup(&mut lock(&self.state));
        // Drop now only unregisters: cleanup has finished.
        drop(self);
        outcome.map_err(|message| {
            Error::new(Stage::Revision, message)
                .with_advice("remove the leftover with `git worktree prune` and delete the folder; the next run also prunes it")
        })
    }
}

impl Drop for TempWorktree {
    fn drop(&mut self) {
        if let Err(message) = cleanup(&mut lock(&self.state)) {
            record_failure(message);
        }
        active()
            .lock()
            .unwrap_or_else(|e| e.into_inner())
            .retain(|state| !Arc::ptr_eq(state, &self.state));
    }
}

fn temp_parent() -> Result<PathBuf> {
    let dir = std::env::temp_dir();
    // The canonical form is what libgit2 writes into the worktree's files and what a server
    // sees as its working directory (on macOS /var is a symlink to /private/var).
    dir.canonicalize().map_err(|e| {
        Error::io(
            Stage::Revision,
            format!("temporary folder {}", dir.display()),
            e,
        )
        .with_advice("set TMPDIR to an existing, writable folder")
    })
}

fn unique_name_and_path(repo: &git2::Repository, parent: &Path) -> (String, PathBuf) {
    let pid = std::process::id();
    loop {
        let name = format!("{WORKTREE_PREFIX}{pid}-{:08x}", fastrand::u32(..));
        let path = parent.join(&name);
        let taken = fs::symlink_metadata(&path).is_ok()
            || repo.find_worktree(&name).is_ok()
            || repo.find_branch(&name, git2::BranchType::Local).is_ok();
        if !taken {
            return (name, path);
        }
    }
}

fn add_detached(repo: &git2::Repository, name: &str, path: &Path, commit: git2::Oid) -> Result<()> {
    let step = |what: &str, e: git2::Error| {
        Error::new(Stage::Revision, format!("{what}: {}", e.message())).with_advice(format!(
            "check that {} is writable and that no other git command holds a lock in the repository (a stale `.lock` file under .git)",
            path.parent().unwrap_or(path).display()
        ))
    };
    let commit_object = repo
        .find_commit(commit)
        .map_err(|e| step("cannot read the commit", e))?;
    let branch = repo
        .branch(name, &commit_object, false)
        .map_err(|e| step("cannot create the temporary branch", e))?;
    let mut options = git2::WorktreeAddOptions::new();
    options.reference(Some(branch.get()));
    let worktree = repo
        .worktree(name, path, Some(&options))
        .map_err(|e| step("cannot add the temporary worktree", e))?;
    let worktree_repo = git2::Repository::open_from_worktree(&worktree)
        .map_err(|e| step("cannot open the temporary worktree", e))?;
    worktree_repo
        .set_head_detached(commit)
        .map_err(|e| step("cannot detach the temporary worktree's HEAD", e))?;
    drop(branch);
    delete_branch_if_ours(repo, name, commit)
        .map_err(|e| step("cannot delete the temporary branch", e))
}

/// Deletes `refs/heads/<name>` if it exists and still points at `commit` (anything else is not
/// ours to delete). Deleting the reference also deletes its reflog.
fn delete_branch_if_ours(
    repo: &git2::Repository,
    name: &str,
    commit: git2::Oid,
) -> Result<(), git2::Error> {
    match repo.find_reference(&format!("refs/heads/{name}")) {
        Ok(mut reference) if reference.target() == Some(commit) => reference.delete(),
        Ok(_) => Ok(()),
        Err(e) if e.code() == git2::ErrorCode::NotFound => Ok(()),
        Err(e) => Err(e),
    }
}

/// Undoes every step of [`add_detached`] that may have happened. Idempotent.
fn cleanup(state: &mut State) -> std::result::Result<(), String> {
    if state.finished {
        return Ok(());
    }
    state.finished = true;
    let _repository = crate::platform::ownership::lock_folder(&state.commondir);
    let mut problems = Vec::new();
    // The folder first: libgit2's prune removes the admin entry before the folder, so a folder
    // it fails to delete (read-only files a server wrote) would no longer be listed anywhere.
    if let Err(e) = remove_tree(&state.path) {
        problems.push(format!("cannot remove {}: {e}", state.path.display()));
    }
    match git2::Repository::open(&state.commondir) {
        Ok(repo) => {
            if state.branch_may_exist {
                if let Err(e) = delete_branch_if_ours(&repo, &state.name, state.commit) {
                    problems.push(format!(
                        "cannot delete branch {}: {}",
                        state.name,
                        e.message()
                    ));
                }
            }
            prune_entry(&repo, &state.commondir, &state.name, &mut problems);
        }
        Err(e) => problems.push(format!(
            "cannot open {} to prune worktree {}: {}",
            state.commondir.display(),
            state.name,
            e.message()
        )),
    }
    // The marker went with the admin folder; the lock goes now.
    state.claim = None;
    if problems.is_empty() {
        Ok(())
    } else {
        Err(format!(
            "temporary worktree {} was not fully removed: {}",
            state.name,
            problems.join("; ")
        ))
    }
}

/// Removes `.git/worktrees/<name>` (through libgit2 when it still recognises the entry, by hand
/// when creation stopped half-way), then `.git/worktrees` itself if that left it empty, as
/// `git worktree prune` does.
fn prune_entry(repo: &git2::Repository, commondir: &Path, name: &str, problems: &mut Vec<String>) {
    if let Ok(worktree) = repo.find_worktree(name) {
        let mut options = git2::WorktreePruneOptions::new();
        options.valid(true).locked(true).working_tree(true);
        if let Err(e) = worktree.prune(Some(&mut options)) {
            problems.push(format!("cannot prune worktree {name}: {}", e.message()));
        }
    }
    let worktrees = commondir.join("worktrees");
    let admin = worktrees.join(name);
    if let Err(e) = remove_tree(&admin) {
        problems.push(format!("cannot remove {}: {e}", admin.display()));
    }
    // Fails (and is meant to) while other worktrees exist.
    let _ = fs::remove_dir(&worktrees);
}

/// Removes a folder tree, making read-only folders writable first (some package managers write
/// read-only caches). A missing path is not an error.
fn remove_tree(path: &Path) -> io::Result<()> {
    match fs::symlink_metadata(path) {
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(()),
        Err(e) => return Err(e),
        Ok(meta) if !meta.is_dir() => return fs::remove_file(path),
        Ok(_) => {}
    }
    match fs::remove_dir_all(path) {
        Ok(()) => Ok(()),
        Err(e) if e.kind() == io::ErrorKind::NotFound => Ok(()),
        Err(_) => {
            crate::platform::file_modes::make_tree_writable(path);
            fs::remove_dir_all(path)
        }
    }
}

/// Removes the worktrees that killed runs left behind, and only those: an entry of
/// `.git/worktrees` is taken when its admin folder holds the gate's owner marker and no running
/// gate holds the marker's lock ([`crate::platform::ownership::take`]). Before removing, the worktree's
/// status is read: one with uncommitted changes is kept and reported, never deleted; so is one
/// in which a process still runs. Branches are deleted only with their worktree (a branch alone
/// carries no marker, so it cannot be proven to be the gate's).
pub(super) fn prune_stale(repo: &git2::Repository, commondir: &Path) -> Result<Vec<String>> {
    let mut removed = Vec::new();
    let mut problems = Vec::new();
    let worktrees = commondir.join("worktrees");
    let _repository = crate::platform::ownership::lock_folder(commondir);
    let names: Vec<String> = match fs::read_dir(&worktrees) {
        Ok(entries) => entries
            .flatten()
            .filter_map(|entry| entry.file_name().into_string().ok())
            .filter(|name| name.starts_with(WORKTREE_PREFIX))
            .collect(),
        Err(_) => Vec::new(),
    };
    for name in names {
        let admin = worktrees.join(&name);
        let (claim, note) = match crate::platform::ownership::take(&admin) {
            crate::platform::ownership::Take::Abandoned { claim, note } => (claim, note),
            crate::platform::ownership::Take::NotOurs | crate::platform::ownership::Take::InUse => {
                continue
            }
        };
        let folders = leftover_folders(&admin, &name);
        let mut keep = false;
        for folder in &folders {
            let changed = changed_paths(folder);
            if changed > 0 {
                record_failure(format!(
                    "kept {}: a worktree left by an earlier run has {changed} uncommitted change(s), so it was not deleted (remove it with `git worktree remove --force {}` once nothing in it is needed)",
                    folder.display(),
                    folder.display()
                ));
                keep = true;
            }
            let inside = crate::platform::ownership::processes_inside(folder);
            if !inside.is_empty() {
                record_failure(format!(
                    "kept {}: left by an earlier run and still in use by {} (not killed; end them, then the next run removes the folder)",
                    folder.display(),
                    crate::platform::ownership::describe_processes(&inside)
                ));
                keep = true;
            }
        }
        if keep {
            continue;
        }
        for folder in &folders {
            if let Err(e) = remove_tree(folder) {
                problems.push(format!("cannot remove {}: {e}", folder.display()));
            }
        }
        let commit = note
            .strip_prefix("commit ")
            .and_then(|id| git2::Oid::from_str(id).ok());
        if let Some(commit) = commit {
            if let Err(e) = delete_branch_if_ours(repo, &name, commit) {
                problems.push(format!("cannot delete branch {name}: {}", e.message()));
            }
        }
        prune_entry(repo, commondir, &name, &mut problems);
        drop(claim);
        removed.push(name);
    }
    if problems.is_empty() {
        Ok(removed)
    } else {
        Err(Error::new(
            Stage::Revision,
            format!("cannot remove worktrees left by an earlier run: {}", problems.join("; ")),
        )
        .with_advice(format!(
            "remove them by hand: `git worktree prune`, delete the {WORKTREE_PREFIX}* folders in the temporary directory and `git branch -D` any {WORKTREE_PREFIX}* branch"
        )))
    }
}

/// Paths with uncommitted changes in the worktree at `folder` (staged, unstaged or untracked;
/// ignored files do not count). A folder that is missing or not a readable worktree counts as
/// clean: there is nothing in it to lose.
fn changed_paths(folder: &Path) -> usize {
    if !folder.is_dir() {
        return 0;
    }
    let Ok(repo) = git2::Repository::open(folder) else {
        return 0;
    };
    super::count_changed_paths(&repo).unwrap_or(0)
}

/// The folder a leftover entry owns: the one its `gitdir` file names, provided it is named
/// exactly like the entry, so a corrupted entry can never point the removal elsewhere.
fn leftover_folders(admin: &Path, name: &str) -> Vec<PathBuf> {
    let mut folders = Vec::new();
    if let Ok(text) = fs::read_to_string(admin.join("gitdir")) {
        if let Some(folder) = Path::new(text.trim()).parent() {
            if folder.file_name().and_then(|n| n.to_str()) == Some(name) {
                folders.push(folder.to_path_buf());
            }
        }
    }
    folders
}

#[cfg(test)]
mod tests {
    use super::*;

    #[cfg(unix)]
    #[test]
    fn read_only_folders_are_removed() {
        use std::os::unix::fs::PermissionsExt;
        let dir = tempfile::tempdir().expect("tempdir");
        let tree = dir.path().join("tree");
        fs::create_dir_all(tree.join("cache/pkg")).expect("mkdir");
        fs::write(tree.join("cache/pkg/file"), "x").expect("write");
        fs::set_permissions(tree.join("cache/pkg"), fs::Permissions::from_mode(0o555))
            .expect("chmod");
        fs::set_permissions(tree.join("cache"), fs::Permissions::from_mode(0o555)).expect("chmod");
        remove_tree(&tree).expect("remove");
        assert!(!tree.exists());
        remove_tree(&tree).expect("a missing tree is not an error");
    }
}
