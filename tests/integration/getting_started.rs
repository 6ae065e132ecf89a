//! docs/getting-started.md run as written: its shell blocks, in order, on a fresh repository.

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
fn python_commands_run_as_written() {
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
fn node_commands_run_as_written() {
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
