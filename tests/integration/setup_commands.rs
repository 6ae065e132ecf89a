//! Issue 17: the first hour of a new user — setup commands that show what they do, a head side
//! whose setup cannot change the user's tree, reproduce lines that reproduce.

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
fn issue_17_item_5_verbose_runs_show_each_setup_command_and_its_time() {
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
    // Without -v the lines stay out of the way.
    let quiet = setup.gate(&[]);
    quiet.assert_code(0);
    assert!(!quiet.stderr.contains("setup 1/2"), "{}", quiet.describe());
}

#[test]
fn issue_17_item_5_a_failed_setup_command_shows_its_time_and_output_tail() {
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
fn issue_17_item_6_head_setup_runs_in_a_scratch_copy_and_leaves_the_tree_alone() {
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
fn issue_17_item_6_setup_in_place_uses_the_working_tree_itself() {
    let setup = node_like(true);
    let tmp = setup.work().join("tmp-in-place");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut args: Vec<String> = vec!["--base".into(), "main".into()];
    args.extend(setup.judge_args());
    args.extend([
        "--report-dir".into(),
        setup.work().join("r").display().to_string(),
    ]);
    let output = setup.command(&args, &tmp).output().unwrap();
    let run = Run::from_output(output, setup.work().join("r"));
    run.assert_code(0);
    let tree = &setup.repo.path;
    assert!(tree.join("dist.txt").is_file(), "{}", run.describe());
    assert!(!tree.join("node_modules/dev-dep").exists());
}

#[test]
fn issue_17_item_6_a_failed_head_setup_reproduces_in_the_working_tree() {
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
fn issue_17_item_7_reproduce_lines_carry_the_configured_environment_without_secrets() {
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
fn issue_17_badge_holds_the_head_mean_and_tier_and_invalid_runs_write_none() {
    let setup = Setup::new(&base_tools());
    let better = "Closes an open issue with an optional comment. Use this instead of delete when the history should stay. Closing a closed issue changes nothing. Returns the issue's number and new state; fails with an error when the number does not exist.";
    setup.set_head(&with_description(&base_tools(), "close_issue", better));
    setup.fake.control(script(vec![tool_rule(
        "close_issue",
        Some(better),
        None,
        5,
    )]));
    let badge = setup.work().join("tdqs.json");
    let badge_arg = badge.display().to_string();
    let run = setup.gate(&["--badge", &badge_arg]);
    run.assert_code(0);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&badge).unwrap()).unwrap();
    // The fake scores every other tool 4: a mean of 4.3 on the head, tier A.
    assert_eq!(
        written,
        serde_json::json!({"schemaVersion": 1, "label": "TDQS", "message": "4.3 (A)", "color": "brightgreen"}),
        "{}",
        run.describe()
    );

    // Unchanged definitions: PASS without scoring says so.
    let unchanged = Setup::new(&base_tools());
    let badge2 = unchanged.work().join("tdqs.json");
    let arg2 = badge2.display().to_string();
    unchanged.gate(&["--badge", &arg2]).assert_code(0);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&badge2).unwrap()).unwrap();
    assert_eq!(written["message"], "not scored");

    // INVALID writes no badge; a badge folder that does not exist is refused before the run.
    std::fs::remove_file(&badge2).unwrap();
    unchanged.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"no-such-program-xyz\"\n",
    );
    unchanged.gate(&["--badge", &arg2]).assert_code(2);
    assert!(!badge2.exists());
    let missing = unchanged.work().join("no/such/folder/tdqs.json");
    let run = unchanged.gate(&["--badge", &missing.display().to_string()]);
    run.assert_code(2);
    assert!(run.stderr.contains("--badge"), "{}", run.describe());
}

#[test]
fn issue_17_score_writes_the_badge_of_the_scored_side() {
    let setup = Setup::new(&base_tools());
    let badge = setup.work().join("score-badge.json");
    let tmp = setup.work().join("tmp-score");
    std::fs::create_dir_all(&tmp).unwrap();
    let args: Vec<String> = vec![
        "score".into(),
        "--judge".into(),
        "static".into(),
        "--badge".into(),
        badge.display().to_string(),
    ];
    let output = setup.command(&args, &tmp).output().unwrap();
    let run = Run::from_output(output, setup.work().join("unused"));
    run.assert_code(0);
    let written: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&badge).unwrap()).unwrap();
    assert_eq!(written["schemaVersion"], 1);
    assert_eq!(written["label"], "TDQS");
    let message = written["message"].as_str().unwrap();
    let tier = message
        .rsplit_once(" (")
        .map(|(_, t)| t.trim_end_matches(')'))
        .unwrap();
    let color = ["brightgreen", "green", "yellow", "orange", "red"][["A", "B", "C", "D", "F"]
        .iter()
        .position(|t| *t == tier)
        .unwrap()];
    assert_eq!(written["color"], color, "{written}");
    assert!(
        run.stderr.contains("badge written to"),
        "{}",
        run.describe()
    );
}

/// The shell blocks of docs/getting-started.md that follow a `<!-- getting-started: NAME -->`
/// marker, in order.
fn getting_started_blocks(name: &str) -> Vec<String> {
    let doc = std::fs::read_to_string(manifest_dir().join("../docs/getting-started.md")).unwrap();
    let marker = format!("<!-- getting-started: {name} -->");
    let mut blocks = Vec::new();
    let mut rest = doc.as_str();
    while let Some(at) = rest.find(&marker) {
        rest = &rest[at + marker.len()..];
        let start = rest.find("```sh\n").expect("a sh block after the marker") + "```sh\n".len();
        let end = rest[start..].find("\n```").expect("the block's end") + start;
        blocks.push(rest[start..end].to_string());
        rest = &rest[end..];
    }
    blocks
}

/// Runs the `NAME` blocks of docs/getting-started.md in `setup`'s repository, in order, as bash
/// with `-euo pipefail`, with the binary under test as `tdqs-gate` on PATH; returns each block's
/// standard output. Every block must succeed.
fn run_getting_started(name: &str, setup: &Setup) -> Vec<String> {
    let blocks = getting_started_blocks(name);
    assert_eq!(blocks.len(), 2, "{blocks:?}");
    let bin = setup.work().join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(GATE, bin.join("tdqs-gate")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let tmp = setup.work().join("tmp-doc");
    std::fs::create_dir_all(&tmp).unwrap();
    let mut outputs = Vec::new();
    for block in &blocks {
        let output = std::process::Command::new("bash")
            .arg("-euo")
            .arg("pipefail")
            .arg("-c")
            .arg(block)
            .current_dir(&setup.repo.path)
            .env("PATH", &path)
            .env("TMPDIR", &tmp)
            .env("TDQS_GATE_PACKAGE_CACHE", "off")
            .env("GIT_AUTHOR_NAME", "doc")
            .env("GIT_AUTHOR_EMAIL", "doc@example.invalid")
            .env("GIT_COMMITTER_NAME", "doc")
            .env("GIT_COMMITTER_EMAIL", "doc@example.invalid")
            .env_remove("GITHUB_STEP_SUMMARY")
            .env_remove("GITHUB_OUTPUT")
            .output()
            .unwrap();
        let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
        let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
        assert!(
            output.status.success(),
            "{block}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
        );
        outputs.push(stdout);
    }
    outputs
}

/// The first block passes with no model call; the careless edit blocks with the static judge,
/// and the report folder holds the summary and the HTML page.
fn assert_walkthrough(setup: &Setup, outputs: &[String]) {
    assert!(outputs[0].starts_with("PASS: "), "{}", outputs[0]);
    assert!(outputs[1].contains("BLOCK: "), "{}", outputs[1]);
    assert!(outputs[1].contains("exit code 1"), "{}", outputs[1]);
    assert!(
        outputs[1].contains("static"),
        "the summary says which judge: {}",
        outputs[1]
    );
    let html = setup
        .repo
        .path
        .join(".tool-definition-score/tool-definition-score.html");
    assert!(html.is_file(), "the doc names {}", html.display());
}

#[test]
fn issue_17_getting_started_python_commands_run_as_written() {
    // "Your server": the bundled example, committed without a tdqs-gate.toml.
    let setup = Setup::new(&base_tools());
    let example = manifest_dir().join("../examples/issue-tracker");
    std::fs::remove_file(setup.repo.path.join("tdqs-gate.toml")).unwrap();
    std::fs::copy(
        example.join("careless.json"),
        setup.repo.path.join("careless.json"),
    )
    .unwrap();
    std::fs::copy(
        example.join("careful.json"),
        setup.repo.path.join("tools.json"),
    )
    .unwrap();
    setup.repo.commit_all("the server");
    let outputs = run_getting_started("python", &setup);
    assert_walkthrough(&setup, &outputs);
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()))
}

#[test]
fn issue_17_getting_started_node_commands_run_as_written() {
    if !on_path("node") || !on_path("npm") {
        crate::support::skips::skip(
            "node and npm are not installed (the Node walkthrough needs them)",
        );
        return;
    }
    // "Your server": the bundled Node example (its .gitignore keeps node_modules/ and dist/ out),
    // committed without a tdqs-gate.toml.
    let setup = Setup::new(&base_tools());
    for name in ["tdqs-gate.toml", "server.py", "tools.json"] {
        std::fs::remove_file(setup.repo.path.join(name)).unwrap();
    }
    let example = manifest_dir().join("../examples/issue-tracker-node");
    for name in [
        ".gitignore",
        "package.json",
        "package-lock.json",
        "build.js",
        "src/index.js",
        "tools.json",
        "careless.json",
    ] {
        let to = setup.repo.path.join(name);
        std::fs::create_dir_all(to.parent().unwrap()).unwrap();
        std::fs::copy(example.join(name), &to).unwrap();
    }
    setup.repo.commit_all("the server");
    let outputs = run_getting_started("node", &setup);
    assert_walkthrough(&setup, &outputs);
    // Both sides were installed and built elsewhere: the user's tree got no node_modules/ or
    // dist/ from the gate.
    for built in ["node_modules", "dist"] {
        assert!(
            !setup.repo.path.join(built).exists(),
            "the gate changed the working tree: {built}/"
        );
    }
}
