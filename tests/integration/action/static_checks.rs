//! Static checks of the Action and the workflows: inputs reach scripts only through `env:`, the
//! token only the gate, third-party actions pinned, actionlint and shellcheck clean, and every
//! flag and input documented.

use super::*;

fn workflow_files() -> Vec<PathBuf> {
    let root = repo_root();
    let mut files: Vec<PathBuf> = std::fs::read_dir(root.join(".github/workflows"))
        .expect(".github/workflows")
        .map(|e| e.unwrap().path())
        .filter(|p| p.extension().is_some_and(|e| e == "yml" || e == "yaml"))
        .collect();
    files.sort();
    files.push(root.join("docs/examples/tool-definition-score.yml"));
    files
}

/// Every `run:` text in a workflow or action file.
fn run_texts(value: &serde_norway::Value, out: &mut Vec<String>) {
    match value {
        serde_norway::Value::Mapping(m) => {
            for (k, v) in m {
                if k.as_str() == Some("run") {
                    if let Some(s) = v.as_str() {
                        out.push(s.to_string());
                    }
                }
                run_texts(v, out);
            }
        }
        serde_norway::Value::Sequence(s) => s.iter().for_each(|v| run_texts(v, out)),
        _ => {}
    }
}

#[test]
fn inputs_reach_scripts_only_through_env_and_the_token_only_the_gate() {
    let text = read(&repo_root().join("action.yml"));
    let action = runner::load_action();
    let steps = action["runs"]["steps"].as_sequence().unwrap();
    let mut runs = Vec::new();
    run_texts(&action, &mut runs);
    let mut all_runs = runs.clone();
    for file in workflow_files() {
        let yaml: serde_norway::Value = serde_norway::from_str(&read(&file)).expect("YAML");
        run_texts(&yaml, &mut all_runs);
    }
    for run in &all_runs {
        assert!(
            !run.contains("${{"),
            "an expression inside a run: text; pass it through env: instead:\n{run}"
        );
    }
    // Every run step is a subcommand of the entry script.
    let script = read(&repo_root().join("action/entrypoint.sh"));
    for run in &runs {
        let sub = run
            .strip_prefix("bash \"$GITHUB_ACTION_PATH/action/entrypoint.sh\" ")
            .unwrap_or_else(|| panic!("unexpected run text: {run}"));
        assert!(
            script.contains(&format!(" {sub}) cmd_")),
            "entrypoint.sh has no `{sub}` command"
        );
    }
    // Every input is used, and only in env/with/if/outputs (never run texts, checked above).
    for (name, _) in action["inputs"].as_mapping().unwrap() {
        let name = name.as_str().unwrap();
        assert!(
            text.contains(&format!("inputs.{name} ")) || text.contains(&format!("inputs.{name}}}")),
            "the input {name} is never used"
        );
    }
    // The token: in the gate step's env as INPUT_TOKEN, and elsewhere only as "was one given".
    for step in steps {
        let id = step.get("id").and_then(|v| v.as_str()).unwrap_or("");
        let rendered = serde_norway::to_string(step).unwrap();
        for line in rendered.lines().filter(|l| l.contains("inputs.token")) {
            let allowed = (id == "gate" && line.trim() == "INPUT_TOKEN: ${{ inputs.token }}")
                || (id == "install" && line.trim() == "HAS_TOKEN: ${{ inputs.token != '' }}");
            assert!(allowed, "step {id:?} reads the token: {line}");
        }
    }
}

#[test]
fn every_third_party_action_is_pinned_to_a_full_commit() {
    let mut files = workflow_files();
    files.push(repo_root().join("action.yml"));
    let mut checked = 0;
    for file in files {
        for (n, line) in read(&file).lines().enumerate() {
            let Some(rest) = line
                .trim_start()
                .trim_start_matches("- ")
                .strip_prefix("uses: ")
            else {
                continue;
            };
            checked += 1;
            if rest.starts_with("./") {
                continue;
            }
            let (target, comment) = rest.split_once(" # ").unwrap_or((rest, ""));
            let (_, sha) = target
                .split_once('@')
                .unwrap_or_else(|| panic!("{}:{}: no @ref", file.display(), n + 1));
            assert!(
                sha.len() == 40 && sha.chars().all(|c| c.is_ascii_hexdigit()),
                "{}:{}: `{target}` is not pinned to a 40-hex commit",
                file.display(),
                n + 1
            );
            assert!(
                !comment.is_empty(),
                "{}:{}: say which version the commit is (`# vX`)",
                file.display(),
                n + 1
            );
        }
    }
    assert!(checked >= 8, "found only {checked} uses: lines");
}

/// The folder of the pinned actionlint and shellcheck, or `None` (skip) when missing; with
/// TDQS_GATE_REQUIRE_EXTERNAL=1 a missing install fails.
fn lint_tools() -> Option<PathBuf> {
    let bin = repo_root().join("tests/.cache/actionlint/bin");
    if bin.join("actionlint").is_file() && bin.join("shellcheck").is_file() {
        let stamp = read(&repo_root().join("tests/.cache/actionlint/.installed"));
        eprintln!("actionlint from {}", stamp.lines().nth(1).unwrap_or("?"));
        return Some(bin);
    }
    let message = "actionlint is not installed: run tests/setup/actionlint.sh";
    crate::support::skips::skip(message);
    None
}

#[test]
fn workflows_pass_actionlint() {
    let Some(bin) = lint_tools() else { return };
    let output = Command::new(bin.join("actionlint"))
        .arg("-shellcheck")
        .arg(bin.join("shellcheck"))
        .arg("-pyflakes=")
        .args(workflow_files())
        .current_dir(repo_root())
        .output()
        .expect("actionlint runs");
    assert!(
        output.status.success(),
        "actionlint:\n{}{}",
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    );
}

#[test]
fn the_action_scripts_pass_shellcheck() {
    let Some(bin) = lint_tools() else { return };
    let root = repo_root();
    let output = Command::new(bin.join("shellcheck"))
        .args([
            "action/entrypoint.sh",
            "tests/fixtures/action/make-repos.sh",
            "tests/setup/actionlint.sh",
            "tests/setup/chromium.sh",
        ])
        .current_dir(&root)
        .output()
        .expect("shellcheck runs");
    assert!(
        output.status.success(),
        "shellcheck:\n{}",
        String::from_utf8_lossy(&output.stdout)
    );
}

/// Every long flag of every subcommand's `--help`.
pub(crate) fn flags_of(subcommand: Option<&str>) -> Vec<String> {
    let mut command = Command::new(GATE);
    if let Some(sub) = subcommand {
        command.arg(sub);
    }
    let output = command.arg("--help").output().expect("tdqs-gate --help");
    let help = String::from_utf8_lossy(&output.stdout).into_owned();
    let mut flags: Vec<String> = help
        .lines()
        .filter(|l| l.trim_start().starts_with('-'))
        .filter_map(|l| {
            l.split(|c: char| c.is_whitespace() || c == ',' || c == '=' || c == '<' || c == '[')
                .find(|w| w.starts_with("--") && w.len() > 2)
                .map(|w| w.trim_end_matches("...").to_string())
        })
        .collect();
    flags.sort();
    flags.dedup();
    flags
}

#[test]
fn the_reference_documents_every_flag_and_every_action_input() {
    let reference = read(&repo_root().join("docs/reference.md"));
    let mut missing = Vec::new();
    for sub in [
        None,
        Some("export"),
        Some("score"),
        Some("suggest"),
        Some("lint"),
        Some("eval"),
        Some("install-hook"),
        Some("check"),
        Some("calibrate"),
    ] {
        let flags = flags_of(sub);
        assert!(flags.len() > 2, "{sub:?}: {flags:?}");
        for flag in flags {
            if !reference.contains(&format!("`{flag}")) {
                missing.push(format!("{} {flag}", sub.unwrap_or("(gate)")));
            }
        }
    }
    assert!(missing.is_empty(), "docs/reference.md lacks: {missing:?}");
    let guide = read(&repo_root().join("docs/github-action.md"));
    let action = runner::load_action();
    for section in ["inputs", "outputs"] {
        for (name, _) in action[section].as_mapping().unwrap() {
            let name = name.as_str().unwrap();
            assert!(
                guide.contains(&format!("`{name}`")),
                "docs/github-action.md does not describe the {section} `{name}`"
            );
        }
    }
}
