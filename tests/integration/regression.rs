//! Regressions: each test reproduces a defect that was fixed, and names in its comment the issue
//! (or review) that reported it. Behaviour is tested by feature in the other modules; only a
//! fixed bug's exact reproduction lives here.

use serde_json::json;
use tdqs_gate::judge::static_judge::tool_answer;
use tdqs_gate::lint::{self, LintConfig};

use crate::gate::harness::*;
use crate::lint_corpus::{corpus_tools, lint_corpus, REFERENCE_SERVERS};

const FAKE_SERVER: &str = env!("CARGO_BIN_EXE_fake-mcp-server");

/// Handed to the server on purpose through its configuration (so it is masked).
const CUT_SECRET: &str = "svc-r2-partial-0123456789abcdef";

/// Regression — issue 12, item 3: a base worktree removed while its server ran read as a base
/// that lists no tools, which PASSes.
#[test]
fn a_base_whose_worktree_vanished_is_invalid_not_pass() {
    let setup = Setup::new(&base_tools());
    let command = format!("{FAKE_SERVER} --tools {{root}}/tools.json --vanish");
    // Unsandboxed: in the sandbox the server cannot remove its own tree's mount points (the
    // removal this stands for comes from outside, from another gate).
    let run = setup.gate(&["--sandbox", "off", "--command", &command]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("disappeared while its server ran"),
        "{}",
        run.describe()
    );
}

/// Regression — second security review (no issue number): the stderr tail began inside a secret
/// and showed 29 of its 31 characters.
///
/// The stderr tail keeps the last 64 KiB. A server prints a secret it was handed, then so many
/// bytes without a newline that the tail begins two characters into the secret: the rest of
/// the secret must not reach the error (masking only recognises the whole value).
#[test]
fn a_secret_cut_by_the_stderr_tail_is_not_half_shown() {
    let setup = Setup::new(&base_tools());
    let fill = 64 * 1024 + 2 - CUT_SECRET.len();
    setup.repo.write(
        "tdqs-gate.toml",
        &format!(
            "[server]\ncommand = [\"sh\", \"-c\", \"printf %s \\\"$SERVICE_TOKEN\\\" >&2; \
             head -c {fill} /dev/zero | tr '\\\\0' a >&2; exit 3\"]\n\
             [server.env]\nSERVICE_TOKEN = \"${{SERVICE_TOKEN}}\"\n"
        ),
    );
    setup
        .repo
        .commit_all("a server that prints a secret, then a long line");
    let run = setup.gate_with(&[], |command| {
        command.env("SERVICE_TOKEN", CUT_SECRET);
    });
    run.assert_code(2);
    let mut text = format!("{}\n{}", run.stdout, run.stderr);
    for name in ["tool-definition-score.json", "tool-definition-score.md"] {
        if let Ok(file) = std::fs::read_to_string(run.report_dir.join(name)) {
            text.push_str(&file);
        }
    }
    // The run did show the tail (so the cut was exercised) ...
    assert!(text.contains("aaaaaaaaaaaaaaaa"), "{}", run.describe());
    // ... and no recognisable part of the secret.
    assert!(!text.contains(&CUT_SECRET[2..]), "{}", run.describe());
    assert!(!text.contains("0123456789abcdef"), "{}", run.describe());
}

/// Regression — second security review (no issue number): a daemon the server detached still ran
/// while the judge was asked.
///
/// A server detaches a daemon (`setsid`, re-parented to the gate as subreaper). It used to live
/// until the gate exited — through the judging, the selection check and the report writing — so
/// it could rewrite files the gate reads or writes next. It is now ended as soon as both
/// servers have stopped: it never sees the judge asked a question (the judge's preflight runs
/// before any server starts).
#[test]
#[cfg(target_os = "linux")]
fn a_detached_daemon_is_ended_before_the_judge_starts() {
    let setup = Setup::new(&base_tools());
    setup.set_head(&with_description(
        &base_tools(),
        "close_issue",
        "Closes an open issue by its number. Use it when work on the issue is finished; \
         reopen_issue undoes it. Returns the closed issue.",
    ));
    let witness = setup.work().join("witness");
    let judge_log = setup.fake.program().with_file_name("fake-claude.log");
    let daemon = format!(
        "while :; do if grep -qs kind...call {log}; then echo alive > {witness}; exit 0; fi; sleep 0.005; done",
        log = judge_log.display(),
        witness = witness.display()
    );
    let command = format!(
        "sh -c '(setsid sh -c \"{daemon}\" &); exec {FAKE_SERVER} --tools {{root}}/tools.json'"
    );
    // Without the sandbox (in it the daemon dies with the setup's PID namespace, and could not
    // see the judge's log in the test's folder).
    let run = setup.gate(&["--sandbox", "off", "--command", &command]);
    assert!(setup.fake.ever_started(), "{}", run.describe());
    assert!(
        !witness.exists(),
        "the daemon was alive when the judge started: {}",
        run.describe()
    );
    assert!(
        run.stderr.contains("warning: ended"),
        "the daemon is reported: {}",
        run.describe()
    );
    assert!(matches!(run.code, 0 | 1), "{}", run.describe());
}

/// Regression — issue 14, item 2: read-only tools of the reference servers were reported as
/// contradicting their annotations (A004).
#[test]
fn read_only_reference_tools_are_not_contradictions() {
    // Every read-only tool of the corpus, large server included: open_nodes,
    // trigger-long-running-operation, orbit_query … none contradicts its annotations.
    for name in REFERENCE_SERVERS.iter().copied().chain(["gitlab"]) {
        let report = lint_corpus(name);
        let a004: Vec<&str> = report
            .findings
            .iter()
            .filter(|f| f.code == tdqs_gate::lint::catalogue::Code::A004)
            .map(|f| f.message.as_str())
            .collect();
        assert!(a004.is_empty(), "{name}: {a004:?}");
    }
    // The rule itself still fires on a real contradiction.
    let tools = vec![
        json!({"name": "create_issue", "description": "Create an issue in a project.",
        "inputSchema": {"type": "object"}, "annotations": {"readOnlyHint": true}}),
    ];
    let report = lint::lint_tools(None, None, &tools, &LintConfig::default());
    assert!(report
        .findings
        .iter()
        .any(|f| f.code == tdqs_gate::lint::catalogue::Code::A004));
}

/// Regression — issue 14, item 2: "silently" in a disclosure was read as concealment (M002).
#[test]
fn silently_disclosed_is_no_concealment() {
    let report = lint_corpus("filesystem");
    assert!(!report
        .findings
        .iter()
        .any(|f| f.code == tdqs_gate::lint::catalogue::Code::M002));
    let report = lint_corpus("gitlab");
    assert!(!report
        .findings
        .iter()
        .any(|f| f.code == tdqs_gate::lint::catalogue::Code::M002));
}

/// Regression — issue 14, item 2: generated Pydantic titles counted as parameter descriptions.
#[test]
fn generated_titles_are_not_parameter_descriptions() {
    // mcp-server-git's parameters carry only Pydantic titles ("Repo Path" for repo_path).
    let (_, tools) = corpus_tools("git");
    let status = tools
        .iter()
        .find(|t| t["name"] == "git_status")
        .expect("git_status in the corpus");
    assert_eq!(
        status["inputSchema"]["properties"]["repo_path"]["title"],
        "Repo Path"
    );
    let answer = tool_answer(status, &[]);
    let why = answer["dimensions"]["parameterSemantics"]["justification"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!why.contains("100%"), "{why}");
    let report = lint_corpus("git");
    assert!(report
        .findings
        .iter()
        .any(|f| f.code == tdqs_gate::lint::catalogue::Code::P001
            && f.tool.as_deref() == Some("git_status")
            && f.parameter.as_deref() == Some("repo_path")));
}
