//! The pre-push hook run by git: a worse push is refused, a better one goes through, and a push
//! of another branch is judged on the pushed commit.

use super::*;

/// A short name unique within this process, for per-run folders.
fn unique_name() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    N.fetch_add(1, Ordering::SeqCst).to_string()
}

#[test]
fn the_pre_push_hook_blocks_a_worse_push_and_lets_a_better_one_through() {
    let careful = static_fixture("careful");
    let careless = static_fixture("careless");
    let setup = Setup::new(&careful);
    let base = setup.repo.rev_parse("main");
    setup
        .repo
        .git(["update-ref", "refs/remotes/origin/master", &base]);
    let installed = setup.run_raw(
        &[
            "install-hook".into(),
            "--base".into(),
            "origin/master".into(),
            "--args".into(),
            "--judge static".into(),
        ],
        setup.work().into(),
        |_| {},
    );
    installed.assert_code(0);
    let hook = setup.repo.path.join(".git/hooks/pre-push");
    std::fs::write(
        setup.repo.path.join(".git/info/exclude"),
        ".tool-definition-score/\n",
    )
    .unwrap();
    let without_report = |mut snapshot: crate::support::gitrepo::RepoSnapshot| {
        snapshot
            .files
            .retain(|k, _| !k.starts_with(".tool-definition-score/"));
        snapshot
    };
    assert!(hook.exists(), "{}", installed.describe());

    let push = |tools: &Value| -> Run {
        setup.set_head(tools);
        setup.repo.commit_all("push me");
        let tmp = setup.work().join(format!("tmp-hook-{}", unique_name()));
        std::fs::create_dir_all(&tmp).unwrap();
        let before = without_report(setup.repo.snapshot());
        let mut command = std::process::Command::new(&hook);
        command
            .args(["origin", "file:///nowhere"])
            .current_dir(&setup.repo.path)
            .env("TMPDIR", &tmp)
            // No tdqs-gate on PATH: the hook falls back to the binary that installed it.
            .env("PATH", "/usr/local/bin:/usr/bin:/bin")
            .env_remove("TDQS_GATE")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("GITHUB_OUTPUT")
            .stdin(Stdio::null());
        let output = command.output().unwrap();
        let run = Run {
            code: output.status.code().unwrap_or(-1),
            stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
            stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
            report_dir: setup.repo.path.join(".tool-definition-score"),
        };
        // The hook writes its report into the repository; everything else must be as it was.
        let after = without_report(setup.repo.snapshot());
        assert_eq!(before.worktree_list, after.worktree_list);
        assert_eq!(before.branches, after.branches);
        assert_eq!(before.files, after.files);
        assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
        run
    };
    let blocked = push(&careless);
    blocked.assert_code(1);
    assert!(
        blocked.stderr.contains("tdqs-gate: BLOCK"),
        "{}",
        blocked.describe()
    );
    assert_eq!(blocked.report()["decision"], "block");
    assert_eq!(blocked.report()["baseRevision"], "origin/master");
    assert_eq!(blocked.report()["headRevision"], "HEAD");

    let passed = push(&careful);
    passed.assert_code(0);
    assert_eq!(passed.report()["decision"], "pass");
    assert_eq!(passed.report()["scored"], false);

    // A base that is gone is the hook's own configuration gone wrong, not the pushed commit's:
    // the push is refused, strict or not, with the fix (a non-strict INVALID would let every
    // push through unchecked).
    setup
        .repo
        .git(["update-ref", "-d", "refs/remotes/origin/master"]);
    let refused = push(&careless);
    refused.assert_code(1);
    assert!(
        refused
            .stderr
            .contains("does not exist in this clone; push refused"),
        "{}",
        refused.describe()
    );
}

#[test]
fn a_real_push_of_another_branch_is_judged_on_the_pushed_commit() {
    let careful = static_fixture("careful");
    let careless = static_fixture("careless");
    let setup = Setup::new(&careful);
    let remote = setup.work().join("remote.git");
    crate::support::gitrepo::git(setup.work(), ["init", "-q", "--bare", "remote.git"]);
    setup
        .repo
        .git(["remote", "add", "origin", remote.to_str().unwrap()]);
    setup.repo.git(["push", "-q", "origin", "main"]);
    std::fs::write(
        setup.repo.path.join(".git/info/exclude"),
        ".tool-definition-score/\n",
    )
    .unwrap();
    setup
        .run_raw(
            &[
                "install-hook".into(),
                "--base".into(),
                "origin/main".into(),
                "--args".into(),
                "--judge static".into(),
            ],
            setup.work().into(),
            |_| {},
        )
        .assert_code(0);
    // The worse definitions go on a branch that is not checked out when it is pushed.
    let worse = setup.commit_branch("worse", &careless);
    setup.repo.git(["checkout", "-q", "main"]);
    let push = |target: &str| {
        let tmp = setup.work().join(format!("tmp-push-{}", unique_name()));
        std::fs::create_dir_all(&tmp).unwrap();
        let output = crate::support::gitrepo::git_command(&setup.repo.path)
            .args(["push", "origin", target])
            .env("TMPDIR", &tmp)
            .env("TDQS_GATE", GATE)
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("GITHUB_OUTPUT")
            .output()
            .unwrap();
        assert_eq!(std::fs::read_dir(&tmp).unwrap().count(), 0);
        (
            output.status.success(),
            String::from_utf8_lossy(&output.stderr).into_owned(),
        )
    };
    let (pushed, stderr) = push("worse");
    assert!(!pushed, "the worse branch was pushed: {stderr}");
    assert!(
        stderr.contains("tdqs-gate: BLOCK: pushing refs/heads/worse"),
        "{stderr}"
    );
    let remote_refs = crate::support::gitrepo::git(&remote, ["for-each-ref"]);
    assert!(!remote_refs.contains("refs/heads/worse"), "{remote_refs}");
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(
            setup
                .repo
                .path
                .join(".tool-definition-score/tool-definition-score.json"),
        )
        .unwrap(),
    )
    .unwrap();
    assert_eq!(report["headCommit"], worse);
    assert_eq!(report["decision"], "block");

    // A branch whose definitions did not change goes through.
    setup.repo.git(["checkout", "-q", "-b", "docs"]);
    setup.repo.write("README.md", "Notes.\n");
    setup.repo.commit_all("docs");
    setup.repo.git(["checkout", "-q", "main"]);
    let (pushed, stderr) = push("docs");
    assert!(pushed, "{stderr}");
    let worktrees = setup.repo.git(["worktree", "list", "--porcelain"]);
    assert_eq!(worktrees.matches("worktree ").count(), 1, "{worktrees}");
}
