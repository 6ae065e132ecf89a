//! The pre-push hook `tdqs-gate install-hook` writes, run by a real `git push` in a fixture clone.

use super::*;

/// `git push` in a fixture clone, with the hook installed by `tdqs-gate install-hook`.
fn push_with_hook(workspace: &Path, install_args: &[&str], branch: &str) -> std::process::Output {
    assert!(
        git(
            workspace,
            &[
                "fetch",
                "-q",
                "--depth=1",
                "origin",
                "+refs/heads/main:refs/remotes/origin/main"
            ]
        )
        .0
    );
    let install = Command::new(GATE)
        .arg("install-hook")
        .args(["--base", "origin/main", "--args", "--judge static"])
        .args(install_args)
        .current_dir(workspace)
        .output()
        .expect("install-hook runs");
    assert!(install.status.success(), "{install:?}");
    assert!(String::from_utf8_lossy(&install.stdout).contains("installed the pre-push hook"));
    Command::new("git")
        .args(["push", "origin", &format!("HEAD:refs/heads/{branch}")])
        .current_dir(workspace)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env("TDQS_GATE", GATE)
        .output()
        .expect("git push runs")
}

#[test]
fn the_pre_push_hook_refuses_block_and_lets_invalid_through_unless_strict() {
    let fixtures = Fixtures::new();
    let refused = push_with_hook(&fixtures.clone("worse"), &[], "worse");
    let stderr = String::from_utf8_lossy(&refused.stderr);
    assert!(!refused.status.success(), "{stderr}");
    assert!(stderr.contains("tdqs-gate: BLOCK"), "{stderr}");

    let passed = push_with_hook(&fixtures.clone("unchanged"), &[], "unchanged");
    assert!(passed.status.success(), "{passed:?}");

    let broken = fixtures.clone("broken");
    let warned = push_with_hook(&broken, &[], "broken");
    let stderr = String::from_utf8_lossy(&warned.stderr);
    assert!(warned.status.success(), "{stderr}");
    assert!(stderr.contains("the push goes through"), "{stderr}");
    // The hook is tdqs-gate's own, so it is replaced without --force.
    let strict = push_with_hook(&broken, &["--strict"], "broken-strict");
    let stderr = String::from_utf8_lossy(&strict.stderr);
    assert!(!strict.status.success(), "{stderr}");
    assert!(
        stderr.contains("push refused because the hook is strict"),
        "{stderr}"
    );
}
