//! Security review, round 2: the one process runner's stderr tail. The eval tests of this round
//! (`security_r2_eval_*`, `security_r2_gate_ignores_*`) live in `eval.rs` beside their helpers.

use crate::gate::harness::*;

const FAKE_SERVER: &str = env!("CARGO_BIN_EXE_fake-mcp-server");

/// Handed to the server on purpose through its configuration (so it is masked).
const TOKEN: &str = "svc-r2-partial-0123456789abcdef";

/// The stderr tail keeps the last 64 KiB. A server prints a secret it was handed, then so many
/// bytes without a newline that the tail begins two characters into the secret: the rest of
/// the secret must not reach the error (masking only recognises the whole value).
#[test]
fn security_r2_a_secret_cut_by_the_stderr_tail_is_not_half_shown() {
    let setup = Setup::new(&base_tools());
    let fill = 64 * 1024 + 2 - TOKEN.len();
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
    let mut args: Vec<String> = vec!["--base".into(), "main".into()];
    args.extend(setup.judge_args());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = setup.run_with(&refs, |command| {
        command.env("SERVICE_TOKEN", TOKEN);
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
    assert!(!text.contains(&TOKEN[2..]), "{}", run.describe());
    assert!(!text.contains("0123456789abcdef"), "{}", run.describe());
}

/// A server detaches a daemon (`setsid`, re-parented to the gate as subreaper). It used to live
/// until the gate exited — through the judging, the selection check and the report writing — so
/// it could rewrite files the gate reads or writes next. It is now ended as soon as both
/// servers have stopped: it never sees the judge start.
#[test]
#[cfg(target_os = "linux")]
fn security_r2_a_detached_daemon_is_ended_before_the_judge_starts() {
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
        "while :; do if [ -e {log} ]; then echo alive > {witness}; exit 0; fi; sleep 0.005; done",
        log = judge_log.display(),
        witness = witness.display()
    );
    let command = format!(
        "sh -c '(setsid sh -c \"{daemon}\" &); exec {FAKE_SERVER} --tools {{root}}/tools.json'"
    );
    // Without the sandbox (in it the daemon dies with the setup's PID namespace, and could not
    // see the judge's log in the test's folder).
    let mut args: Vec<String> = vec![
        "--base".into(),
        "main".into(),
        "--sandbox".into(),
        "off".into(),
        "--command".into(),
        command,
    ];
    args.extend(setup.judge_args());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = setup.run(&refs);
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

/// What the gate trusts for cached selection answers: the base revision's committed cache, read
/// from git's objects — regular files only (a committed link is left out, it could name any
/// file), none over the size limit, and nothing from the working tree.
#[test]
fn security_r2_the_base_revisions_committed_cache_is_read_from_git_objects() {
    use crate::support::gitrepo::GitRepo;
    let repo = GitRepo::init();
    repo.write(".tdqs/eval-cache/a.json", "{\"committed\":1}")
        .write(".tdqs/eval-cache/big.json", &"x".repeat(200))
        .write("outside.txt", "not a cache file")
        .symlink(".tdqs/eval-cache/link.json", "../../outside.txt");
    repo.commit_all("a committed cache");
    // Uncommitted changes of the working tree are not what the base holds.
    repo.write(".tdqs/eval-cache/a.json", "{\"forged\":1}")
        .write(".tdqs/eval-cache/new.json", "{\"forged\":1}");
    let opened = tdqs_gate::revision::Repo::open_without_pruning(Some(&repo.path)).unwrap();
    let files = opened
        .committed_files("HEAD", std::path::Path::new(".tdqs/eval-cache"), 10, 100)
        .unwrap();
    assert_eq!(files.keys().collect::<Vec<_>>(), ["a.json"]);
    assert_eq!(files["a.json"], b"{\"committed\":1}");
    let none = opened
        .committed_files("HEAD", std::path::Path::new("no/such"), 10, 100)
        .unwrap();
    assert!(none.is_empty());
}
