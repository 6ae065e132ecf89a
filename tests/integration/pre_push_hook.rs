//! `tdqs-gate install-hook` and the hook it writes: the base is resolved when the hook is
//! installed (a hook that cannot run is not installed), and a hook whose own configuration has
//! gone wrong refuses the push instead of letting it through as INVALID.

use std::path::{Path, PathBuf};
use std::process::Stdio;

use serde_json::Value;

use crate::gate::harness::{Run, Setup};
use crate::support::gitrepo::git;

/// The bundled example's careful or careless tool set (`examples/issue-tracker/`).
fn example_tools(name: &str) -> Value {
    let path = Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("../examples/issue-tracker")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn install(setup: &Setup, extra: &[&str]) -> Run {
    let mut args: Vec<String> = vec!["install-hook".into()];
    args.extend(extra.iter().map(|s| s.to_string()));
    setup.run_raw(&args, setup.work().into(), |_| {})
}

fn hook_path(setup: &Setup) -> PathBuf {
    setup.repo.path.join(".git/hooks/pre-push")
}

/// Runs the installed hook as `git push` would (no refs on standard input: it checks HEAD),
/// with no tdqs-gate on PATH so it falls back to the binary that installed it.
fn run_hook(setup: &Setup, gate_override: Option<&str>) -> Run {
    let mut command = std::process::Command::new(hook_path(setup));
    command
        .args(["origin", "file:///nowhere"])
        .current_dir(&setup.repo.path)
        .env("PATH", "/usr/local/bin:/usr/bin:/bin")
        .env_remove("TDQS_GATE")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT")
        .stdin(Stdio::null());
    if let Some(gate) = gate_override {
        command.env("TDQS_GATE", gate);
    }
    let output = command.output().unwrap();
    Run {
        code: output.status.code().unwrap_or(-1),
        stdout: String::from_utf8_lossy(&output.stdout).into_owned(),
        stderr: String::from_utf8_lossy(&output.stderr).into_owned(),
        report_dir: setup.repo.path.join(".tool-definition-score"),
    }
}

fn exclude_reports(setup: &Setup) {
    std::fs::write(
        setup.repo.path.join(".git/info/exclude"),
        ".tool-definition-score/\n",
    )
    .unwrap();
}

/// `git init -b main`, `git remote add origin …`, `git push -u origin main`: no `origin/HEAD`.
fn pushed_to_a_new_remote(setup: &Setup) {
    let remote = setup.work().join("remote.git");
    std::fs::create_dir_all(&remote).unwrap();
    git(&remote, ["init", "-q", "--bare"]);
    setup
        .repo
        .git(["remote", "add", "origin", remote.to_str().unwrap()]);
    setup.repo.git(["push", "-q", "-u", "origin", "main"]);
}

#[test]
fn a_repository_that_was_not_cloned_gets_a_hook_that_blocks_a_regression() {
    let setup = Setup::new(&example_tools("careful"));
    pushed_to_a_new_remote(&setup);
    let installed = install(&setup, &["--args", "--judge static"]);
    installed.assert_code(0);
    assert!(
        installed.stdout.contains("(base origin/main: "),
        "{}",
        installed.describe()
    );
    exclude_reports(&setup);
    setup.set_head(&example_tools("careless"));
    setup.repo.commit_all("careless rewrite");
    let pushed = run_hook(&setup, None);
    pushed.assert_code(1);
    assert!(
        pushed.stderr.contains("tdqs-gate: BLOCK"),
        "{}",
        pushed.describe()
    );
    assert_eq!(pushed.report()["baseRevision"], "origin/main");
}

#[test]
fn the_remote_default_branch_recorded_by_a_clone_is_the_base() {
    let setup = Setup::new(&example_tools("careful"));
    let main = setup.repo.rev_parse("main");
    setup
        .repo
        .git(["update-ref", "refs/remotes/origin/trunk", &main]);
    setup.repo.git([
        "symbolic-ref",
        "refs/remotes/origin/HEAD",
        "refs/remotes/origin/trunk",
    ]);
    setup
        .repo
        .git(["remote", "add", "origin", "https://example.invalid/x.git"]);
    let installed = install(&setup, &["--args", "--judge static"]);
    installed.assert_code(0);
    assert!(
        installed
            .stdout
            .contains("(base origin/trunk: the remote's default branch (origin/HEAD))"),
        "{}",
        installed.describe()
    );
    let script = std::fs::read_to_string(hook_path(&setup)).unwrap();
    assert!(script.contains("base='origin/trunk'"), "{script}");
}

#[test]
fn install_hook_refuses_a_repository_with_no_branch_to_compare_with() {
    let setup = Setup::new(&example_tools("careful"));
    let installed = install(&setup, &[]);
    installed.assert_code(2);
    assert!(
        installed.stderr.contains("has no remote"),
        "{}",
        installed.describe()
    );
    assert!(
        installed.stderr.contains("--base"),
        "{}",
        installed.describe()
    );
    assert!(!hook_path(&setup).exists());

    setup
        .repo
        .git(["remote", "add", "origin", "https://example.invalid/x.git"]);
    let unfetched = install(&setup, &[]);
    unfetched.assert_code(2);
    assert!(
        unfetched.stderr.contains("git fetch origin"),
        "{}",
        unfetched.describe()
    );
    assert!(!hook_path(&setup).exists());
}

#[test]
fn install_hook_refuses_a_base_that_does_not_resolve_and_names_the_likely_one() {
    let setup = Setup::new(&example_tools("careful"));
    pushed_to_a_new_remote(&setup);
    let typo = install(&setup, &["--base", "origin/mian"]);
    typo.assert_code(2);
    assert!(
        typo.stderr.contains("did you mean 'origin/main'?"),
        "{}",
        typo.describe()
    );
    let master = install(&setup, &["--base", "origin/master"]);
    master.assert_code(2);
    assert!(
        master.stderr.contains("pass --base origin/main"),
        "{}",
        master.describe()
    );
    assert!(
        !master.stderr.contains("git fetch"),
        "{}",
        master.describe()
    );
    assert!(!hook_path(&setup).exists());
}

#[test]
fn install_hook_refuses_gate_arguments_the_gate_would_refuse() {
    let setup = Setup::new(&example_tools("careful"));
    pushed_to_a_new_remote(&setup);
    let refused = install(&setup, &["--args", "--judge nonsense"]);
    refused.assert_code(2);
    assert!(
        refused.stderr.contains("would refuse the hook's --args"),
        "{}",
        refused.describe()
    );
    assert!(!hook_path(&setup).exists());
}

#[test]
fn a_hook_whose_base_or_gate_is_gone_refuses_the_push_with_the_fix() {
    let setup = Setup::new(&example_tools("careful"));
    pushed_to_a_new_remote(&setup);
    install(&setup, &["--args", "--judge static"]).assert_code(0);
    exclude_reports(&setup);
    setup.set_head(&example_tools("careless"));
    setup.repo.commit_all("careless rewrite");

    let no_gate = run_hook(&setup, Some("/nonexistent/tdqs-gate"));
    no_gate.assert_code(1);
    assert!(
        no_gate.stderr.contains("cannot run the gate"),
        "{}",
        no_gate.describe()
    );

    setup
        .repo
        .git(["update-ref", "-d", "refs/remotes/origin/main"]);
    let no_base = run_hook(&setup, None);
    no_base.assert_code(1);
    assert!(
        no_base
            .stderr
            .contains("origin/main, which does not exist in this clone; push refused"),
        "{}",
        no_base.describe()
    );
    assert!(
        no_base.stderr.contains("tdqs-gate install-hook --base"),
        "{}",
        no_base.describe()
    );
}

#[test]
fn an_invalid_gate_run_warns_names_the_uncommitted_config_and_lets_the_push_through() {
    let setup = Setup::new(&example_tools("careful"));
    pushed_to_a_new_remote(&setup);
    install(&setup, &["--args", "--judge static"]).assert_code(0);
    exclude_reports(&setup);
    // The pushed commit's server cannot start: the gate is INVALID for the commit, not for the
    // hook's configuration, so a non-strict hook warns and lets it through.
    setup.repo.write("server.py", "raise SystemExit(3)\n");
    setup.repo.commit_all("broken server");
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"python3 {root}/server.py\"\n# edited\n",
    );
    let warned = run_hook(&setup, None);
    warned.assert_code(0);
    for needle in [
        "tdqs-gate: INVALID (exit 2)",
        "tdqs-gate.toml has uncommitted changes",
        "tdqs-gate install-hook --strict",
        "git push --no-verify",
    ] {
        assert!(
            warned.stderr.contains(needle),
            "{needle}: {}",
            warned.describe()
        );
    }
}

#[test]
fn an_unknown_base_names_the_branch_it_is_probably_a_typo_of() {
    let setup = Setup::new(&example_tools("careful"));
    let run = setup.run(&["--base", "mian", "--judge", "static"]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("did you mean 'main'?"),
        "{}",
        run.describe()
    );
    assert!(!run.stderr.contains("git fetch"), "{}", run.describe());
}
