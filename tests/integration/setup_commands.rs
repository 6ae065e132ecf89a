//! Setup commands that show what they do and run once per side, a head side whose setup cannot
//! change the user's tree, reproduce lines that reproduce.

use crate::gate::harness::*;

/// The base configuration with `setup` commands, committed on `main`.
fn with_setup(setup_lines: &str) -> Setup {
    let setup = Setup::new(&base_tools());
    setup.repo.write(
        "tdqs-gate.toml",
        &format!("[server]\ncommand = \"python3 {{root}}/server.py\"\n{setup_lines}"),
    );
    setup.repo.commit_all("setup commands");
    setup
}

#[test]
fn verbose_runs_show_each_setup_command_and_its_time() {
    let setup = with_setup("setup = [\"sh -c 'echo building'\", [\"true\"]]\n");
    let run = setup.gate(&["-v"]);
    run.assert_code(0);
    for side in ["base", "head"] {
        for line in [
            format!("tdqs-gate: {side} setup 1/2: `sh -c 'echo building'`\n"),
            format!("tdqs-gate: {side} setup 2/2: `true`\n"),
        ] {
            assert!(
                run.stderr.contains(&line),
                "{line:?} missing\n{}",
                run.describe()
            );
        }
        let finished =
            format!("tdqs-gate: {side} setup 1/2: `sh -c 'echo building'` finished after ");
        assert!(run.stderr.contains(&finished), "{}", run.describe());
    }
    // Without -v only short lines without the command's text (see stderr_during_a_run.rs).
    let quiet = setup.gate(&[]);
    quiet.assert_code(0);
    assert!(!quiet.stderr.contains("setup 1/2"), "{}", quiet.describe());
}

#[test]
fn a_failed_setup_command_shows_its_time_and_output_tail() {
    let setup = with_setup(
        "setup = [\"sh -c 'echo step-one-ok'\", \"sh -c 'echo missing-module-xyz >&2; exit 3'\"]\n",
    );
    let run = setup.gate(&["-v"]);
    run.assert_code(2);
    assert!(
        run.stderr
            .contains("setup 2/2: `sh -c 'echo missing-module-xyz >&2; exit 3'` FAILED after "),
        "{}",
        run.describe()
    );
    assert!(
        run.stderr.contains("missing-module-xyz"),
        "{}",
        run.describe()
    );
}

/// A working tree like a Node project's after `npm install`: ignored dependencies, an untracked
/// note, an executable script, a symbolic link, an uncommitted edit. The setup command acts like
/// `npm ci --omit=dev` (removes `node_modules`, writes what it builds) and checks what the copy
/// holds: it fails unless untracked files, the exec bit and the link were kept and ignored files
/// were left out.
fn node_like(setup_in_place: bool) -> Setup {
    let setup = Setup::new(&base_tools());
    // The base is a temporary worktree (a `.git` file); the head is the copy or the tree.
    let check = if setup_in_place {
        "{ test -f .git || test -d node_modules/dev-dep; }"
    } else {
        "test ! -e node_modules && test -x build.sh && test -L linked.json && { test -f .git || { test ! -e .git && test -f notes.txt && grep -q uncommitted-edit README.md; }; }"
    };
    setup.repo.write(
        "tdqs-gate.toml",
        &format!(
            "[server]\ncommand = \"python3 {{root}}/server.py\"\nsetup-in-place = {setup_in_place}\nsetup = [[\"sh\", \"-c\", \"{check} && rm -rf node_modules && mkdir -p node_modules/prod && echo built > dist.txt\"]]\n"
        ),
    );
    setup.repo.write(".gitignore", "node_modules/\ndist.txt\n");
    setup.repo.write("README.md", "committed\n");
    setup
        .repo
        .write_executable("build.sh", "#!/bin/sh\necho build\n");
    std::os::unix::fs::symlink("tools.json", setup.repo.path.join("linked.json")).unwrap();
    setup.repo.commit_all("a node-like project");
    setup
        .repo
        .write("node_modules/dev-dep/index.js", "module.exports = 1;\n");
    setup.repo.write("notes.txt", "untracked, not ignored\n");
    setup.repo.write("README.md", "uncommitted-edit\n");
    setup
}

#[test]
fn head_setup_runs_in_a_scratch_copy_and_leaves_the_tree_alone() {
    let setup = node_like(false);
    // `run` fails unless the repository, its files (ignored ones included) and the temporary
    // folder are exactly as before.
    let run = setup.gate(&["-v"]);
    run.assert_code(0);
    let tree = &setup.repo.path;
    assert!(tree.join("node_modules/dev-dep/index.js").is_file());
    assert!(!tree.join("dist.txt").exists(), "{}", run.describe());
    assert!(!tree.join("node_modules/prod").exists());
}

#[test]
fn setup_in_place_uses_the_working_tree_itself() {
    let setup = node_like(true);
    let tmp = setup.work().join("tmp-in-place");
    std::fs::create_dir_all(&tmp).unwrap();
    let report_dir = setup.work().join("r").display().to_string();
    let args = setup.gate_args(&["--report-dir", &report_dir]);
    let output = setup.command(&args, &tmp).output().unwrap();
    let run = Run::from_output(output, setup.work().join("r"));
    run.assert_code(0);
    let tree = &setup.repo.path;
    assert!(tree.join("dist.txt").is_file(), "{}", run.describe());
    assert!(!tree.join("node_modules/dev-dep").exists());
}

#[test]
fn a_failed_head_setup_reproduces_in_the_working_tree() {
    let setup = Setup::new(&base_tools());
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"python3 {root}/server.py\"\nsetup = [\"sh -c 'test -f base-only.txt'\"]\n",
    );
    setup.repo.write("base-only.txt", "x\n");
    setup.repo.commit_all("base has the file");
    std::fs::remove_file(setup.repo.path.join("base-only.txt")).unwrap();
    let run = setup.gate(&[]);
    run.assert_code(2);
    let tree = setup.repo.path.display().to_string();
    let expected = format!(
        "cd {} && sh -c 'test -f base-only.txt'",
        tree.trim_end_matches('/')
    );
    assert!(
        run.stderr.contains(&expected),
        "{expected:?}\n{}",
        run.describe()
    );
    assert!(
        !run.stderr.contains("tdqs-gate-copy-"),
        "{}",
        run.describe()
    );
}

#[test]
fn reproduce_lines_carry_the_configured_environment_without_secrets() {
    let setup = Setup::new(&base_tools());
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"python3 {root}/server.py\"\nenv = { MODE = \"{root}/cfg\", FROM_HOST = \"${HOME}/x\", API_TOKEN = \"literal-secret-value-123\" }\nsetup = [\"sh -c 'test \\\"$MODE\\\" = never'\"]\n",
    );
    setup.repo.commit_all("a setup that needs MODE");
    let run = setup.gate(&[]);
    run.assert_code(2);
    let line = run
        .stderr
        .lines()
        .find(|l| l.contains("sh -c") && l.contains("&& "))
        .unwrap_or_else(|| panic!("no reproduce line\n{}", run.describe()))
        .to_string();
    assert!(line.contains("MODE="), "{line}");
    assert!(line.contains("/cfg"), "{line}");
    assert!(line.contains("FROM_HOST=\"${HOME}/x\""), "{line}");
    assert!(line.contains("API_TOKEN=\"${API_TOKEN}\""), "{line}");
    assert!(
        !run.stderr.contains("literal-secret-value-123"),
        "{}",
        run.describe()
    );
    // The line reproduces the failure: run in a shell, the setup command fails the same way
    // (and passes once MODE is what it checks for).
    let (reproduce, cleanup) = line.trim().split_once(" ; ").expect("worktree cleanup");
    let sh = |text: &str| {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(text)
            .current_dir(&setup.repo.path)
            .env("API_TOKEN", "x")
            .output()
            .unwrap()
    };
    let out = sh(reproduce);
    assert!(!out.status.success(), "{reproduce}");
    assert!(sh(cleanup).status.success(), "{cleanup}");
    let fixed = reproduce.replace("= never", "= \"$MODE\"");
    let out = sh(&fixed);
    assert!(
        out.status.success(),
        "{fixed}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(sh(cleanup).status.success(), "{cleanup}");
}

#[test]
fn setup_commands_run_once_per_side_when_the_listing_is_checked_twice() {
    let setup = with_setup("setup = [\"sh -c 'echo preparing'\"]\n");
    // Changed definitions: each side is exported a second time to check its listing is stable.
    setup.set_head(&with_description(
        &base_tools(),
        "close_issue",
        "Closes an issue.",
    ));
    setup.fake.control(script(vec![]));
    let run = setup.gate(&["-v"]);
    run.assert_code(0);
    assert!(
        run.stderr.contains("exporting each side again"),
        "{}",
        run.describe()
    );
    for side in ["base", "head"] {
        let started = format!("tdqs-gate: {side} setup 1/1: `sh -c 'echo preparing'`\n");
        assert_eq!(
            run.stderr.matches(&started).count(),
            1,
            "{side}: {}",
            run.describe()
        );
    }
    // Both exports listed, and the tree of each (scratch copy, worktree) is gone.
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "pass");
}

#[test]
fn a_failed_setup_command_names_its_own_line_of_tdqs_gate_toml() {
    let setup = with_setup("setup = [\n  \"true\",\n  \"sh -c 'exit 4'\",\n]\n");
    let run = setup.gate(&[]);
    run.assert_code(2);
    // Line 2 is `command`; the failing setup command is the array's second entry, on line 5.
    assert!(
        run.stderr
            .contains("tdqs-gate.toml [server] setup (line 5)"),
        "{}",
        run.describe()
    );
    assert!(
        !run.stderr.contains("command (line 2)"),
        "{}",
        run.describe()
    );
}

/// npm reads every `npm_config_*` variable and warns about each it does not know: the package
/// cache must give it only its own (pnpm's store has a variable npm does not read).
#[test]
fn npm_in_a_setup_command_gets_its_cache_and_no_unknown_config_warning() {
    let setup = with_setup("setup = [\"sh -c 'npm config get cache 2>&1; exit 3'\"]\n");
    let run = setup.gate(&[]);
    run.assert_code(2);
    // The failing command's output tail is in the error: npm's own answer, and no warning.
    assert!(run.stderr.contains("packages/npm"), "{}", run.describe());
    assert!(
        !run.stderr.contains("Unknown env config"),
        "{}",
        run.describe()
    );
}
