//! Revisions: detached temporary worktrees of a git fixture, and proof that nothing is left
//! behind after success, errors, panics, dropped futures, interrupted and killed runs.

use std::collections::BTreeMap;
use std::future::Future;
use std::io::{BufRead, BufReader};
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::task::{Context, Waker};

use tdqs_core::error::Stage;
use tdqs_gate::revision::{self, Side, WORKING_TREE_LABEL};

use crate::support::gitrepo::{tree_files, GitRepo, RepoSnapshot};

/// A repository with two commits of a small server, and uncommitted changes of every kind on
/// top (which must survive every run untouched).
struct Fixture {
    repo: GitRepo,
    first: String,
    second: String,
    /// The tree of the first commit as files, modes and symlinks.
    first_files: BTreeMap<String, String>,
}

fn fixture() -> Fixture {
    let repo = GitRepo::init();
    repo.write_executable("server.sh", "#!/bin/sh\necho \"tools v1\"\n")
        .write("lib/helper.py", "VERSION = 1\n")
        .write("docs/readme.txt", "the first version\n")
        .write(".gitignore", "ignored.log\n")
        .symlink("run", "server.sh")
        .symlink("lib/current", "helper.py");
    let first = repo.commit_all("first version");
    let first_files = tree_files(&repo.path);

    repo.write_executable("server.sh", "#!/bin/sh\necho \"tools v2\"\n")
        .write_executable("lib/helper.py", "VERSION = 2\n")
        .write_executable("new_tool.sh", "#!/bin/sh\necho new\n")
        .remove("docs/readme.txt")
        .symlink("run", "lib/helper.py");
    let second = repo.commit_all("second version");

    // Unstaged, staged, untracked and ignored changes.
    repo.write_executable("server.sh", "#!/bin/sh\necho \"work in progress\"\n");
    repo.write("staged.txt", "staged\n");
    repo.git(["add", "staged.txt"]);
    repo.write("untracked.txt", "untracked\n");
    repo.write("ignored.log", "ignored\n");
    Fixture {
        repo,
        first,
        second,
        first_files,
    }
}

fn assert_untouched(repo: &GitRepo, before: &RepoSnapshot, root: &Path) {
    assert!(
        !root.exists(),
        "the worktree folder {} is still there",
        root.display()
    );
    assert_eq!(&repo.snapshot(), before);
}

#[test]
fn checkout_of_the_previous_commit_has_its_files_modes_and_symlinks_and_leaves_nothing() {
    let f = fixture();
    let before = f.repo.snapshot();
    assert!(
        before.status.contains("?? untracked.txt"),
        "{}",
        before.status
    );

    let repo = revision::open(Some(&f.repo.path)).expect("open");
    let side = repo.checkout("HEAD~1").expect("checkout");
    assert_eq!(side.commit.as_deref(), Some(f.first.as_str()));
    assert_eq!(side.revision_label, "HEAD~1");
    assert!(side.is_temporary());
    assert_eq!(tree_files(&side.root), f.first_files);
    // The executable bit was checked out: the script runs directly.
    let output = Command::new(side.root.join("run"))
        .output()
        .expect("run the v1 server");
    assert_eq!(String::from_utf8_lossy(&output.stdout), "tools v1\n");

    let root = side.root.clone();
    drop(side);
    assert_untouched(&f.repo, &before, &root);
}

#[test]
fn the_worktree_is_detached_at_the_commit_and_no_branch_outlives_its_creation() {
    let f = fixture();
    let before = f.repo.snapshot();
    let repo = revision::open(Some(&f.repo.path)).expect("open");
    let side = repo.checkout(&f.first[..10]).expect("checkout by short id");
    assert_eq!(side.commit.as_deref(), Some(f.first.as_str()));

    let in_worktree = |args: &[&str]| {
        crate::support::gitrepo::git_command(&side.root)
            .args(args)
            .output()
            .expect("git")
    };
    assert_eq!(
        String::from_utf8_lossy(&in_worktree(&["rev-parse", "HEAD"]).stdout).trim(),
        f.first
    );
    assert!(
        !in_worktree(&["symbolic-ref", "-q", "HEAD"])
            .status
            .success(),
        "HEAD is detached"
    );
    assert_eq!(
        String::from_utf8_lossy(&in_worktree(&["status", "--porcelain"]).stdout),
        "",
        "index matches the tree"
    );
    // While the side lives, the worktree is listed, but the temporary branch is already gone.
    assert!(f
        .repo
        .git(["worktree", "list"])
        .contains(&side.root.display().to_string()));
    assert_eq!(f.repo.git(["branch", "-a"]), before.branches);
    assert_eq!(f.repo.git(["for-each-ref"]), before.refs);
    // The user's checkout did not move.
    assert_eq!(f.repo.rev_parse("HEAD"), f.second);

    let root = side.root.clone();
    side.close().expect("close");
    assert_untouched(&f.repo, &before, &root);
}

#[test]
fn two_sides_can_live_at_once_and_both_are_removed() {
    let f = fixture();
    let before = f.repo.snapshot();
    let repo = revision::open(Some(&f.repo.path)).expect("open");
    let base = repo.checkout(&f.first).expect("base");
    let head = repo.checkout("main").expect("head");
    assert_ne!(base.root, head.root);
    assert_eq!(head.commit.as_deref(), Some(f.second.as_str()));
    assert!(head.root.join("new_tool.sh").exists() && !base.root.join("new_tool.sh").exists());
    // Opening again (as a second process would) must not prune the live worktrees.
    revision::open(Some(&f.repo.path)).expect("open again");
    assert!(base.root.exists() && head.root.exists());
    let roots = [base.root.clone(), head.root.clone()];
    drop(base);
    drop(head);
    for root in &roots {
        assert!(!root.exists());
    }
    assert_eq!(f.repo.snapshot(), before);
}

#[test]
fn a_failed_checkout_leaves_nothing() {
    let f = fixture();
    let before = f.repo.snapshot();
    let repo = revision::open(Some(&f.repo.path)).expect("open");

    let err = repo
        .checkout("no-such-branch")
        .expect_err("unknown revision");
    assert_eq!(err.stage, Stage::Revision);
    assert!(
        err.cause
            .contains("'no-such-branch' is not in this repository"),
        "{}",
        err.cause
    );
    assert!(
        err.advice
            .as_deref()
            .unwrap_or("")
            // The fixture has no remote: the advice names no fetch from one.
            .contains("has no remote, so 'no-such-branch' cannot be fetched"),
        "{:?}",
        err.advice
    );

    let err = repo
        .checkout("HEAD^{tree}")
        .expect_err("a tree is not a commit");
    assert!(err.cause.contains("names a tree"), "{}", err.cause);

    let err = repo.checkout("HEAD~5").expect_err("beyond the history");
    assert_eq!(err.stage, Stage::Revision);
    assert!(!err.cause.contains("shallow"), "{}", err.cause);

    assert_eq!(f.repo.snapshot(), before);
}

fn use_side_then_fail(
    repo: &revision::Repo,
    root: &mut PathBuf,
) -> Result<(), tdqs_core::error::Error> {
    let side = repo.checkout("HEAD~1")?;
    *root = side.root.clone();
    assert!(root.join("server.sh").exists());
    // A later stage fails while the side is in scope.
    repo.checkout("no-such-revision")?;
    drop(side);
    Ok(())
}

#[test]
fn an_error_inside_the_sides_scope_leaves_nothing() {
    let f = fixture();
    let before = f.repo.snapshot();
    let repo = revision::open(Some(&f.repo.path)).expect("open");
    let mut root = PathBuf::new();
    use_side_then_fail(&repo, &mut root).expect_err("the later stage fails");
    assert!(!root.as_os_str().is_empty());
    assert_untouched(&f.repo, &before, &root);
}

#[test]
fn a_panic_inside_the_sides_scope_leaves_nothing() {
    let f = fixture();
    let before = f.repo.snapshot();
    let repo = revision::open(Some(&f.repo.path)).expect("open");
    let mut root = PathBuf::new();
    let outcome = catch_unwind(AssertUnwindSafe(|| {
        let side = repo.checkout("HEAD~1").expect("checkout");
        root = side.root.clone();
        if side.root.exists() {
            panic!("a stage panicked while the side was alive");
        }
    }));
    assert!(outcome.is_err(), "the closure panicked");
    assert_untouched(&f.repo, &before, &root);
    assert_eq!(revision::take_cleanup_failures(), Vec::<String>::new());
}

#[test]
fn a_dropped_future_leaves_nothing() {
    let f = fixture();
    let before = f.repo.snapshot();
    let repo = revision::open(Some(&f.repo.path)).expect("open");
    let root = std::cell::RefCell::new(PathBuf::new());
    let mut future = Box::pin(async {
        let side = repo.checkout("HEAD~1").expect("checkout");
        *root.borrow_mut() = side.root.clone();
        // Stands for an export still waiting on the server when Ctrl-C cancels the run.
        std::future::pending::<()>().await;
        drop(side);
    });
    let mut context = Context::from_waker(Waker::noop());
    assert!(future.as_mut().poll(&mut context).is_pending());
    assert!(root.borrow().join("server.sh").exists());
    drop(future);
    assert_untouched(&f.repo, &before, &root.borrow());
}

#[test]
fn cleanup_all_active_removes_the_worktrees_of_a_run_that_exits_at_once() {
    let f = fixture();
    let before = f.repo.snapshot();
    let output = Command::new(env!("CARGO_BIN_EXE_revision-holder"))
        .args([
            f.repo.path.as_os_str(),
            "HEAD~1".as_ref(),
            "--cleanup-all".as_ref(),
        ])
        .output()
        .expect("run the holder");
    let stdout = String::from_utf8_lossy(&output.stdout);
    assert!(
        output.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&output.stderr)
    );
    let mut lines = stdout.lines();
    let root = PathBuf::from(lines.next().expect("root line"));
    assert_eq!(lines.next().map(str::trim_end), Some("removed"), "{stdout}");
    assert_untouched(&f.repo, &before, &root);
}

#[test]
fn a_killed_run_is_pruned_by_the_next_run_and_a_live_one_is_not() {
    let f = fixture();
    // Branches named like ours but not ours must survive.
    f.repo.git(["branch", "tdqs-gate-feature"]);
    f.repo.git(["branch", "tdqs-gate-12-notours"]);
    let before = f.repo.snapshot();

    let mut holder = Command::new(env!("CARGO_BIN_EXE_revision-holder"))
        .args([f.repo.path.as_os_str(), "HEAD~1".as_ref()])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the holder");
    let mut line = String::new();
    BufReader::new(holder.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read the root");
    let root = PathBuf::from(line.trim_end());
    assert!(
        root.join("server.sh").exists(),
        "holder checked out {}",
        root.display()
    );

    let live = revision::open(Some(&f.repo.path)).expect("open while the holder lives");
    assert_eq!(live.prune_stale().expect("prune"), Vec::<String>::new());
    assert!(root.exists(), "a live run's worktree is not pruned");

    holder.kill().expect("SIGKILL the holder");
    holder.wait().expect("reap the holder");
    assert!(root.exists(), "a killed run leaves its worktree");
    assert_eq!(f.repo.temp_worktrees(), vec![root.clone()]);

    // A branch named like a killed run's carries no owner marker: it cannot be proven to be the
    // gate's, so it stays (issue 12 item 2).
    let mut exited = Command::new("true").spawn().expect("spawn true");
    let dead_pid = exited.id();
    exited.wait().expect("reap");
    let stray_branch = format!("tdqs-gate-{dead_pid}-0badc0de");
    f.repo.git(["branch", &stray_branch, "HEAD~1"]);

    let repo = revision::open(Some(&f.repo.path)).expect("the next run");
    drop(repo);
    assert!(f.repo.git(["branch"]).contains(&stray_branch));
    f.repo.git(["branch", "-D", &stray_branch]);
    assert_untouched(&f.repo, &before, &root);
    assert!(f.repo.git(["branch"]).contains("tdqs-gate-feature"));
}

#[test]
fn a_base_missing_from_a_shallow_clone_is_invalid_with_the_fetch_that_fixes_it() {
    let f = fixture();
    // Lets the shallow clone fetch a commit by id, as GitHub allows.
    f.repo
        .git(["config", "uploadpack.allowAnySHA1InWant", "true"]);
    let clone = f.repo.shallow_clone(1);
    let before = clone.snapshot();
    let repo = revision::open(Some(&clone.path)).expect("open");
    assert!(repo.is_shallow());

    let err = repo.checkout(&f.first).expect_err("not fetched");
    assert_eq!(err.stage, Stage::Revision);
    assert!(err.cause.contains("shallow"), "{}", err.cause);
    let advice = err.advice.clone().unwrap_or_default();
    assert!(
        advice.contains(&format!("git fetch --no-tags --depth=1 origin {}", f.first)),
        "{advice}"
    );
    assert!(advice.contains("fetch-depth: 0"), "{advice}");

    let err = repo.checkout("HEAD~1").expect_err("history cut off");
    assert!(err.cause.contains("shallow"), "{}", err.cause);
    let advice = err.advice.clone().unwrap_or_default();
    assert!(
        advice.contains("git fetch --unshallow") && advice.contains("fetch-depth: 0"),
        "{advice}"
    );
    assert_eq!(clone.snapshot(), before);

    // The advice works.
    clone.git(["fetch", "-q", "--no-tags", "--depth=1", "origin", &f.first]);
    let side = repo.checkout(&f.first).expect("fetched base");
    assert_eq!(tree_files(&side.root), f.first_files);
}

#[test]
fn the_working_tree_side_is_the_checkout_as_it_is() {
    let f = fixture();
    let sub = f.repo.path.join("lib");
    let repo = revision::open(Some(&sub)).expect("discovered from a subfolder");
    let side: Side = repo.working_tree().expect("working tree");
    assert_eq!(
        side.root.canonicalize().ok(),
        f.repo.path.canonicalize().ok()
    );
    assert_eq!(side.commit.as_deref(), Some(f.second.as_str()));
    assert_eq!(side.revision_label, WORKING_TREE_LABEL);
    assert!(!side.is_temporary());
    // Uncommitted work is what the head exports.
    assert_eq!(
        std::fs::read_to_string(side.root.join("server.sh")).expect("read"),
        "#!/bin/sh\necho \"work in progress\"\n"
    );
    let before = f.repo.snapshot();
    let state = repo.describe_working_tree().expect("describe");
    assert_eq!(state.commit.as_deref(), Some(f.second.as_str()));
    assert_eq!(state.branch.as_deref(), Some("main"));
    // server.sh (modified), staged.txt (added), untracked.txt; ignored.log is not counted.
    assert_eq!(state.changed_paths, 3);
    assert!(
        state.describe().contains("with 3 uncommitted changes"),
        "{}",
        state.describe()
    );
    side.close().expect("closing the working tree does nothing");
    assert_eq!(f.repo.snapshot(), before);
    assert!(f.repo.path.join("server.sh").exists());
}

#[test]
fn a_folder_outside_any_repository_is_invalid_with_advice() {
    let dir = tempfile::tempdir().expect("tempdir");
    let err = revision::open(Some(dir.path())).expect_err("not a repository");
    assert_eq!(err.stage, Stage::Revision);
    assert!(err.cause.contains("no git repository"), "{}", err.cause);
    assert!(
        err.advice.as_deref().unwrap_or("").contains("--repo"),
        "{:?}",
        err.advice
    );
    let err = revision::open(Some(&dir.path().join("missing"))).expect_err("missing folder");
    assert!(err.cause.contains("does not exist"), "{}", err.cause);
}

#[test]
fn a_repository_used_from_a_linked_worktree_or_bare_is_handled_too() {
    let f = fixture();
    let linked = f.repo.path.parent().expect("parent").join("linked");
    f.repo.git([
        "worktree",
        "add",
        "-q",
        "-b",
        "feature",
        linked.to_str().expect("UTF-8"),
        "HEAD",
    ]);
    let before = f.repo.snapshot();

    let repo = revision::open(Some(&linked)).expect("open from the linked worktree");
    let side = repo.checkout("HEAD~1").expect("checkout");
    assert_eq!(side.commit.as_deref(), Some(f.first.as_str()));
    assert_eq!(tree_files(&side.root), f.first_files);
    let root = side.root.clone();
    drop(side);
    assert_untouched(&f.repo, &before, &root);
    assert!(
        linked.join("server.sh").exists(),
        "the user's linked worktree is kept"
    );

    let bare_dir = tempfile::tempdir().expect("tempdir");
    let bare = bare_dir.path().join("bare.git");
    crate::support::gitrepo::git(
        bare_dir.path(),
        [
            "clone",
            "-q",
            "--bare",
            f.repo.path.to_str().expect("UTF-8"),
            "bare.git",
        ],
    );
    let repo = revision::open(Some(&bare)).expect("open bare");
    let err = repo.working_tree().expect_err("no working tree");
    assert!(
        err.advice.as_deref().unwrap_or("").contains("--head"),
        "{:?}",
        err.advice
    );
    let side = repo
        .checkout("main")
        .expect("checkout from a bare repository");
    assert!(side.root.join("new_tool.sh").exists());
    let root = side.root.clone();
    drop(side);
    assert!(!root.exists());
    assert!(!bare.join("worktrees").exists());
}

#[test]
fn a_run_killed_half_way_through_creating_a_worktree_is_left_alone() {
    // Killed after libgit2 made the entry and before the owner marker was written: nothing
    // proves the entry is the gate's, so it is kept (`git worktree prune` removes it).
    let f = fixture();
    let mut exited = Command::new("true").spawn().expect("spawn true");
    let dead_pid = exited.id();
    exited.wait().expect("reap");
    let name = format!("tdqs-gate-{dead_pid}-0000beef");
    let admin = f.repo.path.join(".git/worktrees").join(&name);
    std::fs::create_dir_all(&admin).expect("entry");
    std::fs::write(admin.join("commondir"), "../..\n").expect("commondir");
    let folder = std::env::temp_dir()
        .canonicalize()
        .expect("temp")
        .join(&name);
    std::fs::create_dir_all(folder.join("lib")).expect("folder");
    std::fs::write(folder.join("lib/partial.py"), "half written").expect("file");

    let repo = revision::Repo::open_without_pruning(Some(&f.repo.path)).expect("open");
    let pruned = repo.prune_stale().expect("prune");
    assert_eq!(pruned, Vec::<String>::new());
    assert!(admin.exists() && folder.join("lib/partial.py").exists());
    std::fs::remove_dir_all(&admin).unwrap();
    std::fs::remove_dir_all(&folder).unwrap();
}

/// A dead pid, for names that look like a killed run's.
fn dead_pid() -> u32 {
    let mut exited = Command::new("true").spawn().expect("spawn true");
    let pid = exited.id();
    exited.wait().expect("reap");
    pid
}

/// Starts `revision-holder` (a gate that checked `rev` out and is then killed or kept) through
/// `wrapper` words, and returns it with the worktree's root.
fn start_holder(f: &Fixture, wrapper: &[&str], rev: &str) -> (std::process::Child, PathBuf) {
    let holder = env!("CARGO_BIN_EXE_revision-holder");
    let mut words: Vec<&std::ffi::OsStr> = wrapper.iter().map(|w| w.as_ref()).collect();
    words.push(holder.as_ref());
    words.push(f.repo.path.as_os_str());
    words.push(rev.as_ref());
    let mut child = Command::new(words[0])
        .args(&words[1..])
        .stdout(Stdio::piped())
        .spawn()
        .expect("start the holder");
    let mut line = String::new();
    BufReader::new(child.stdout.take().expect("stdout"))
        .read_line(&mut line)
        .expect("read the root");
    let root = PathBuf::from(line.trim_end());
    assert!(
        root.join("server.sh").exists(),
        "holder checked out {}",
        root.display()
    );
    (child, root)
}

#[test]
fn foreign_worktree_is_kept() {
    // What the old "reproduce with" advice made: a worktree named like a killed run's, made
    // by hand, with work in it; and a branch of such a name.
    let f = fixture();
    let pid = dead_pid();
    let name = format!("tdqs-gate-{pid}-0a1b2c3d");
    let folder = std::env::temp_dir().canonicalize().unwrap().join(&name);
    f.repo.git([
        "worktree",
        "add",
        "--detach",
        folder.to_str().unwrap(),
        "HEAD~1",
    ]);
    std::fs::write(folder.join("my-notes.txt"), "uncommitted work\n").unwrap();
    let branch = format!("tdqs-gate-{pid}-deadbeef");
    f.repo.git(["branch", &branch, "HEAD~1"]);

    let repo = revision::open(Some(&f.repo.path)).expect("the next run");
    let pruned = repo.prune_stale().expect("prune");
    drop(repo);
    let kept = folder.join("my-notes.txt").exists();
    let branch_kept = f.repo.git(["branch"]).contains(&branch);
    let _ = Command::new("git")
        .args(["worktree", "remove", "--force"])
        .arg(&folder)
        .current_dir(&f.repo.path)
        .status();
    let _ = std::fs::remove_dir_all(&folder);
    assert_eq!(pruned, Vec::<String>::new());
    assert!(
        kept,
        "a hand-made worktree with uncommitted work was deleted"
    );
    assert!(
        branch_kept,
        "a branch the gate cannot prove it made was deleted"
    );
}

#[test]
fn abandoned_worktree_with_changes_is_kept_and_reported() {
    let f = fixture();
    let (mut holder, root) = start_holder(&f, &[], "HEAD~1");
    holder.kill().expect("SIGKILL the holder");
    holder.wait().expect("reap");
    std::fs::write(root.join("server.sh"), "#!/bin/sh\necho edited by hand\n").unwrap();
    let _ = revision::take_cleanup_failures();

    let repo = revision::open(Some(&f.repo.path)).expect("the next run");
    drop(repo);
    let warnings = revision::take_cleanup_failures();
    let kept = root.join("server.sh").exists();
    // Once the change is gone, the leftover is the gate's and abandoned: removed.
    f.repo
        .git_output(["-C", root.to_str().unwrap(), "checkout", "--", "server.sh"]);
    let repo = revision::open(Some(&f.repo.path)).expect("a later run");
    drop(repo);
    let removed_when_clean = !root.exists();
    assert!(kept, "an abandoned worktree with changes was deleted");
    assert!(
        warnings
            .iter()
            .any(|w| w.contains("uncommitted change") && w.contains(&*root.to_string_lossy())),
        "{warnings:?}"
    );
    assert!(removed_when_clean, "the clean leftover stayed");
    assert!(f.repo.temp_worktrees().is_empty());
}

#[test]
#[cfg(target_os = "linux")]
fn a_live_gate_in_another_pid_namespace_keeps_its_worktree() {
    // `unshare` needs privileges: as root (CI containers, this suite's machine) it runs the holder
    // in a new PID namespace with a pid far above any pid of ours, so the pid test would call it
    // dead. Without root the same holder runs here, and the lock must still say it lives.
    // SAFETY: geteuid has no preconditions.
    let root_user = unsafe { libc::geteuid() } == 0;
    // Not `exec`: the holder must be forked after the pid counter is set.
    let script = "echo 123450 > /proc/sys/kernel/ns_last_pid && \"$0\" \"$@\"";
    let wrapper: Vec<&str> = if root_user {
        vec![
            "unshare",
            "--pid",
            "--fork",
            "--kill-child",
            "--mount-proc",
            "sh",
            "-c",
            script,
        ]
    } else {
        Vec::new()
    };
    let f = fixture();
    let (mut holder, root) = start_holder(&f, &wrapper, "HEAD~1");
    let name = root.file_name().unwrap().to_string_lossy().into_owned();
    let repo = revision::open(Some(&f.repo.path)).expect("another gate's run");
    let pruned = repo.prune_stale().expect("prune");
    drop(repo);
    let survived = root.join("server.sh").exists();
    holder.kill().expect("kill the holder");
    holder.wait().expect("reap");
    if root_user {
        let pid: u64 = name.split('-').nth(2).unwrap().parse().unwrap();
        assert!(pid > 100_000, "the holder's pid {pid} was not set");
    }
    assert_eq!(pruned, Vec::<String>::new());
    assert!(survived, "a live gate's worktree {name} was deleted");
    // Once its holder is gone, the worktree is provably abandoned and a later run removes it.
    // The namespace's init may still be tearing down, so later runs are tried until one does
    // (a generous bound for a loaded machine).
    let gone = crate::gate::harness::wait_for(std::time::Duration::from_secs(30), || {
        drop(revision::open(Some(&f.repo.path)).expect("a later run"));
        !root.exists()
    });
    assert!(gone, "the abandoned worktree stayed");
}
