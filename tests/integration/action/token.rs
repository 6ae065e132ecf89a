//! Where the judge's token goes: only into the scoring step's environment and the judge, never a
//! log, summary, output or report, and never into the step that runs the pull request's code.

use super::*;

#[test]
fn the_token_reaches_only_the_judge_and_never_the_log() {
    const TOKEN: &str = "sk-ant-oat01-action-test-token-value";
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("worse");
    let claude = FakeClaude::new(false);
    let t = temp();
    let cache = t.path().join("spec cache");
    // Nothing serves the specification, so the run stops at the prompts (INVALID) after the
    // judge's preflight has run with the token. The args input is split like a shell: the quoted
    // folder name with a space stays one word.
    let args = format!(
        "--spec-url '{}' --cache-dir \"{}\"",
        refused_url("/README.md"),
        cache.display()
    );
    let mut job = pull_request_job(
        &workspace,
        t.path(),
        &[("token", TOKEN), ("args", &args)],
        &refused_url(""),
    );
    let run = claude.run_action(&mut job);
    let log = run.log();
    assert_consistent(&run, "invalid", 2);
    let report: Value = serde_json::from_str(&read(Path::new(&run.outputs["report"]))).unwrap();
    assert_eq!(report["error"]["stage"], "spec", "{log}");
    assert!(
        log.contains(&format!("copy it into {}", cache.display())),
        "the quoted --cache-dir stays one word:\n{log}"
    );
    // The judge got the token, as CLAUDE_CODE_OAUTH_TOKEN.
    let runs = claude.runs();
    assert!(!runs.is_empty(), "{log}");
    assert!(runs
        .iter()
        .all(|r| r["env"]["CLAUDE_CODE_OAUTH_TOKEN"] == TOKEN));
    // Only the gate step's environment holds it; no log, summary, output or report shows it.
    for step in &run.steps {
        let holds = step.env.values().any(|v| v.contains(TOKEN));
        assert_eq!(holds, step.id.as_deref() == Some("gate"), "{}", step.name);
        assert!(!step.log.contains(TOKEN), "{}:\n{}", step.name, step.log);
    }
    assert!(!run.summary.contains(TOKEN));
    assert!(run.outputs.values().all(|v| !v.contains(TOKEN)));
    for entry in std::fs::read_dir(workspace.join(".tool-definition-score")).unwrap() {
        assert!(!read(&entry.unwrap().path()).contains(TOKEN));
    }
    // The token was given, so no fork hint.
    assert!(!log.contains("No Claude Code token reached"), "{log}");
}

#[test]
fn the_token_step_starts_no_server() {
    const TOKEN: &str = "sk-ant-oat01-action-split-token-value";
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("worse");
    let claude = FakeClaude::new(false);
    let t = temp();
    let args = format!("--spec-url '{}'", refused_url("/README.md"));
    let mut job = pull_request_job(
        &workspace,
        t.path(),
        &[("token", TOKEN), ("args", &args)],
        &refused_url(""),
    );
    let run = claude.run_action(&mut job);
    let log = run.log();
    assert_consistent(&run, "invalid", 2);
    // The pull request's code runs in the export step, which holds no token.
    let export = run.step("export");
    assert!(export.env.values().all(|v| !v.contains(TOKEN)), "{log}");
    assert_eq!(
        export.log.matches("tdqs-gate: exported _single").count(),
        2,
        "both servers ran in the export step:\n{log}"
    );
    // The step with the token scores the two files: with both sides given as export files the
    // gate starts no server (and no revision or server flag reaches it).
    let gate = run.step("gate");
    assert!(gate.env.values().any(|v| v.contains(TOKEN)));
    let command = gate
        .log
        .lines()
        .find(|l| l.starts_with("tdqs-gate action: tdqs-gate "))
        .unwrap_or_else(|| panic!("no command line:\n{log}"));
    assert!(command.contains(" ci score --base-dir="), "{command}");
    assert!(command.contains(" --head-dir="), "{command}");
    assert!(!gate.log.contains("tdqs-gate: exported"), "{log}");
    for flag in [
        " --base=",
        " --head ",
        " --head=",
        " --command",
        " --server",
    ] {
        assert!(!command.contains(flag), "{flag} in {command}");
    }
    // The judge still ran with the token (the run stops at the unreachable specification).
    assert!(!claude.runs().is_empty(), "{log}");
}
