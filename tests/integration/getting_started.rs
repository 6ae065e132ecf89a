//! docs/getting-started.md run as written: its shell blocks, in order, from a folder standing for
//! the tdqs-gate clone, making a repository of the bundled example as the page says.

use std::path::Path;

use crate::gate::harness::*;

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

/// Runs the `NAME` blocks of docs/getting-started.md in order, in one bash process with
/// `-euo pipefail` (a `cd` carries over, as in a terminal), starting in a folder that stands for
/// the tdqs-gate clone (it holds the example `example`), with the binary under test as
/// `tdqs-gate` on PATH; returns each block's standard output. Every block must succeed.
fn run_getting_started(name: &str, example: &str, work: &Path) -> Vec<String> {
    let blocks = getting_started_blocks(name);
    assert_eq!(blocks.len(), 3, "{blocks:?}");
    let clone = work.join("tdqs-gate");
    copy_tree(
        &manifest_dir().join("../examples").join(example),
        &clone.join("examples").join(example),
    );
    let bin = work.join("bin");
    std::fs::create_dir_all(&bin).unwrap();
    std::os::unix::fs::symlink(GATE, bin.join("tdqs-gate")).unwrap();
    let path = format!(
        "{}:{}",
        bin.display(),
        std::env::var("PATH").unwrap_or_default()
    );
    let tmp = work.join("tmp-doc");
    std::fs::create_dir_all(&tmp).unwrap();
    const END: &str = "@@ end of a getting-started block @@";
    let script: String = blocks
        .iter()
        .map(|block| format!("{block}\necho '{END}'\n"))
        .collect();
    let output = std::process::Command::new("bash")
        .arg("-euo")
        .arg("pipefail")
        .arg("-c")
        .arg(&script)
        .current_dir(&clone)
        .env("PATH", &path)
        .env("TMPDIR", &tmp)
        .env("TDQS_GATE_PACKAGE_CACHE", "off")
        .env("GIT_AUTHOR_NAME", "doc")
        .env("GIT_AUTHOR_EMAIL", "doc@example.invalid")
        .env("GIT_COMMITTER_NAME", "doc")
        .env("GIT_COMMITTER_EMAIL", "doc@example.invalid")
        .env("GIT_CONFIG_GLOBAL", "/dev/null")
        .env_remove("GITHUB_STEP_SUMMARY")
        .env_remove("GITHUB_OUTPUT")
        .env_remove("CI")
        .env_remove("GITHUB_ACTIONS")
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&output.stdout).into_owned();
    let stderr = String::from_utf8_lossy(&output.stderr).into_owned();
    assert!(
        output.status.success(),
        "{script}\n--- stdout\n{stdout}\n--- stderr\n{stderr}"
    );
    let outputs: Vec<String> = stdout
        .split(&format!("{END}\n"))
        .map(str::to_string)
        .collect();
    assert_eq!(outputs.len(), blocks.len() + 1, "{stdout}");
    outputs[..blocks.len()].to_vec()
}

/// Copies a folder as `cp -r` would, leaving out what a build made (`node_modules`, `dist`).
fn copy_tree(from: &Path, to: &Path) {
    std::fs::create_dir_all(to).unwrap();
    for entry in std::fs::read_dir(from).unwrap() {
        let entry = entry.unwrap();
        let name = entry.file_name();
        if name == "node_modules" || name == "dist" || name == "__pycache__" {
            continue;
        }
        let target = to.join(&name);
        if entry.file_type().unwrap().is_dir() {
            copy_tree(&entry.path(), &target);
        } else {
            std::fs::copy(entry.path(), &target).unwrap();
        }
    }
}

/// The second block passes with no model call; the careless edit blocks with the static judge,
/// and the report folder holds the summary and the HTML page.
fn assert_walkthrough(repo: &Path, outputs: &[String]) {
    assert!(outputs[1].starts_with("PASS: "), "{}", outputs[1]);
    assert!(outputs[2].contains("BLOCK: "), "{}", outputs[2]);
    assert!(outputs[2].contains("exit code 1"), "{}", outputs[2]);
    assert!(
        outputs[2].contains("static"),
        "the summary says which judge: {}",
        outputs[2]
    );
    let html = repo.join(".tool-definition-score/tool-definition-score.html");
    assert!(html.is_file(), "the doc names {}", html.display());
}

#[test]
fn python_commands_run_as_written() {
    // The page starts in the tdqs-gate clone and makes a repository of the bundled example.
    let work = tempfile::tempdir().unwrap();
    let outputs = run_getting_started("python", "issue-tracker", work.path());
    assert_walkthrough(&work.path().join("issue-tracker"), &outputs);
}

fn on_path(program: &str) -> bool {
    std::env::var_os("PATH")
        .is_some_and(|path| std::env::split_paths(&path).any(|d| d.join(program).is_file()))
}

#[test]
fn node_commands_run_as_written() {
    if !on_path("node") || !on_path("npm") {
        crate::support::skips::skip(
            "node and npm are not installed (the Node walkthrough needs them)",
        );
        return;
    }
    let work = tempfile::tempdir().unwrap();
    let outputs = run_getting_started("node", "issue-tracker-node", work.path());
    let repo = work.path().join("issue-tracker-node");
    assert_walkthrough(&repo, &outputs);
    // Both sides were installed and built elsewhere: the user's tree got no node_modules/ or
    // dist/ from the gate.
    for built in ["node_modules", "dist"] {
        assert!(
            !repo.join(built).exists(),
            "the gate changed the working tree: {built}/"
        );
    }
}
