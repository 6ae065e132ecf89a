//! Pull-request code (a server, its setup commands) tried as an attacker would: credentials,
//! signals, leftovers, the stderr tail; docs/security.md describes the defences.

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};
use std::time::Duration;

use crate::gate::harness::*;

const FAKE_SERVER: &str = env!("CARGO_BIN_EXE_fake-mcp-server");

/// Credentials a CI job typically holds, none of which is handed to the server.
const SECRETS: [(&str, &str); 9] = [
    ("ANTHROPIC_API_KEY", "sk-ant-api03-canary-anthropic-0001"),
    ("OPENAI_API_KEY", "sk-proj-canary-openai-0002"),
    ("GITHUB_TOKEN", "ghs_canaryGithubToken0003"),
    ("GH_TOKEN", "gho_canaryGhToken0004"),
    ("ACTIONS_RUNTIME_TOKEN", "canary-actions-runtime-0005"),
    ("AWS_SECRET_ACCESS_KEY", "canaryAwsSecretAccessKey0006"),
    ("AWS_SESSION_TOKEN", "canaryAwsSessionToken0007"),
    ("DEPLOY_PASSWORD", "canary-deploy-password-0008"),
    ("CLAUDE_CODE_OAUTH_TOKEN", "sk-ant-oat01-canary-claude-0009"),
];
/// Handed to the server on purpose through its configuration.
const SERVICE_TOKEN: &str = "canary-service-token-0010";

fn all_text_of(run: &Run) -> String {
    let mut text = format!("{}\n{}", run.stdout, run.stderr);
    for name in [
        "tool-definition-score.json",
        "tool-definition-score.md",
        "tool-definition-score.html",
    ] {
        if let Ok(file) = std::fs::read_to_string(run.report_dir.join(name)) {
            text.push_str(&file);
        }
    }
    text
}

/// Runs the gate with every secret of [`SECRETS`] in its environment and a server started with
/// `server_args` (plus the environment probe), `SERVICE_TOKEN` handed to it by configuration.
fn run_with_secrets(setup: &Setup, server_args: &str, probe: &Path) -> Run {
    setup.repo.write(
        "tdqs-gate.toml",
        &format!(
            "[server]\ncommand = \"{FAKE_SERVER} {server_args} --parent-environ {} --print-env SERVICE_TOKEN\"\n\
             [server.env]\nSERVICE_TOKEN = \"${{SERVICE_TOKEN}}\"\n",
            probe.display()
        ),
    );
    setup
        .repo
        .commit_all("a server that steals its parent's environment");
    // Unsandboxed: the masking and the non-dumpable gate are what is tested (the probe file
    // lies outside the tree); tests/integration/sandbox.rs covers the sandboxed server.
    setup.gate_with(&["--sandbox", "off"], |command| {
        for (name, value) in SECRETS {
            command.env(name, value);
        }
        command
            .env("SERVICE_TOKEN", SERVICE_TOKEN)
            .env("CANARY_VISIBLE", "visible-canary-value");
    })
}

fn assert_no_secret(run: &Run, probe: &Path, expect_text: &str) {
    let probe_text = std::fs::read_to_string(probe)
        .unwrap_or_else(|e| panic!("the server never ran ({e}): {}", run.describe()));
    let text = all_text_of(run);
    for (name, value) in SECRETS {
        assert!(!text.contains(value), "{name} leaked: {}", run.describe());
    }
    assert!(!text.contains(SERVICE_TOKEN), "{}", run.describe());
    if probe_text == "readable" {
        // Only root (CAP_SYS_PTRACE) reads a non-dumpable process's environment: the dump went
        // out, masked.
        assert!(
            text.contains(expect_text),
            "the dump did not reach the output, so masking was not exercised: {}",
            run.describe()
        );
        assert!(text.contains("[REDACTED]"), "{}", run.describe());
    }
}

#[test]
#[cfg(target_os = "linux")] // /proc
fn credentials_of_the_gate_never_reach_errors() {
    let setup = Setup::new(&base_tools());
    let probe = setup.work().join("environ-probe");
    let run = run_with_secrets(&setup, "--mode crash --crash-on tools/list", &probe);
    run.assert_code(2);
    assert_no_secret(&run, &probe, "parent environment:");
}

#[test]
#[cfg(target_os = "linux")] // /proc
fn credentials_of_the_gate_never_reach_the_report() {
    let setup = Setup::new(&base_tools());
    let probe = setup.work().join("environ-probe");
    let run = run_with_secrets(&setup, "--tools {root}/tools.json --leak-to-stdout", &probe);
    run.assert_code(0);
    let report = std::fs::read_to_string(run.report_path()).unwrap();
    assert!(report.contains("stolen: "), "{report}");
    assert_no_secret(&run, &probe, "stolen: ");
}

/// Runs `tdqs-gate export` on a plain folder as user `nobody` (the test runs as root) or as the
/// current user, with a server that tries to read the gate's environment. Returns what the server
/// wrote into its probe file.
#[cfg(target_os = "linux")]
fn parent_environ_as_same_user() -> String {
    let dir = tempfile::Builder::new()
        .prefix("issue-12-environ-")
        .tempdir()
        .unwrap();
    let probe = dir.path().join("probe");
    let tmp = dir.path().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    // SAFETY: geteuid has no preconditions.
    let root = unsafe { libc::geteuid() } == 0;
    let gate = GATE.to_string();
    let command_text = format!("{FAKE_SERVER} --parent-environ {}", probe.display());
    let mut command = if root {
        use std::os::unix::fs::PermissionsExt;
        for path in [dir.path(), &tmp] {
            std::fs::set_permissions(path, std::fs::Permissions::from_mode(0o777)).unwrap();
        }
        let mut c = Command::new("setpriv");
        c.args([
            "--reuid=65534",
            "--regid=65534",
            "--clear-groups",
            "--",
            &gate,
        ]);
        c
    } else {
        Command::new(&gate)
    };
    let output = command
        // The non-dumpable gate is the defence without the sandbox (tests/integration/sandbox.rs
        // covers the sandboxed run), and the probe file lies outside the tree.
        .args(["export", "--sandbox", "off", "--command", &command_text])
        .current_dir(dir.path())
        .env("TMPDIR", &tmp)
        .env("HOME", dir.path())
        .env("GITHUB_TOKEN", "ghs_canaryGithubToken0003")
        .stdin(Stdio::null())
        .output()
        .expect("run the gate");
    let probe_text = std::fs::read_to_string(&probe).unwrap_or_else(|e| {
        panic!(
            "the server did not run ({e}): {}\n{}",
            String::from_utf8_lossy(&output.stdout),
            String::from_utf8_lossy(&output.stderr)
        )
    });
    assert!(
        output.status.success(),
        "{}",
        String::from_utf8_lossy(&output.stderr)
    );
    probe_text
}

#[test]
#[cfg(target_os = "linux")]
fn the_gate_environment_is_unreadable_to_its_server() {
    let probe = parent_environ_as_same_user();
    assert!(
        probe.starts_with("unreadable"),
        "a same-user server read /proc/<gate>/environ: {probe}"
    );
}

fn sleeper_pids(dir: &Path) -> Vec<i64> {
    std::fs::read_dir(dir)
        .unwrap()
        .filter_map(|e| e.unwrap().file_name().to_str()?.parse().ok())
        .collect()
}

#[test]
#[cfg(target_os = "linux")]
fn a_detached_daemon_is_ended_and_reported() {
    let setup = Setup::new(&base_tools());
    let daemons = setup.work().join("daemons");
    std::fs::create_dir_all(&daemons).unwrap();
    let command = format!(
        "{FAKE_SERVER} --tools {{root}}/tools.json --daemon {}",
        daemons.display()
    );
    // The subreaper is the defence without the sandbox (in it, daemons die with its PID
    // namespace), and the daemons record their pids outside the tree.
    let run = setup.gate(&["--sandbox", "off", "--command", &command]);
    let pids = sleeper_pids(&daemons);
    // Kill whatever survived, so a failing run leaves nothing behind.
    let survivors: Vec<i64> = pids.iter().copied().filter(|p| alive(*p)).collect();
    for pid in &survivors {
        // SAFETY: kill only sends a signal.
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
    }
    run.assert_code(0);
    assert_eq!(pids.len(), 2, "one daemon per side: {}", run.describe());
    assert!(
        survivors.is_empty(),
        "daemons survived the gate: {survivors:?}"
    );
    assert!(
        run.stderr.contains("warning: ended 2 process(es)"),
        "{}",
        run.describe()
    );
}

/// Starts a gate whose servers hang, waits until both run, and returns it with their pids.
#[cfg(target_os = "linux")]
fn gate_with_hanging_servers(setup: &Setup, tmp: &Path) -> (std::process::Child, Vec<i64>) {
    let pids = setup.work().join(format!(
        "pids-{}",
        tmp.file_name().unwrap().to_string_lossy()
    ));
    std::fs::create_dir_all(&pids).unwrap();
    let command = format!(
        "sh -c 'echo $$ > {}/$(basename \"$0\").pid; exec {FAKE_SERVER} --mode hang --ignore-eof --ignore-term' {{root}}",
        pids.display()
    );
    let report_dir = setup.work().join("report-signal").display().to_string();
    // The servers' pids are written outside the tree: the gate's own clean-up is tested.
    let args = setup.gate_args(&[
        "--command",
        &command,
        "--sandbox",
        "off",
        "--report-dir",
        &report_dir,
    ]);
    let mut gate = setup.command(&args, tmp);
    std::os::unix::process::CommandExt::process_group(&mut gate, 0);
    let child = gate
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // `echo $$ > file` creates the file before it writes the pid: wait for both pids.
    let started = wait_for(Duration::from_secs(60), || {
        let files = crate::support::written_pid_files(&pids);
        files.len() == 2
            && files.iter().all(|path| {
                std::fs::read_to_string(path).is_ok_and(|text| text.trim().parse::<i64>().is_ok())
            })
    });
    assert!(started, "the servers did not start");
    let servers: Vec<i64> = crate::support::written_pid_files(&pids)
        .into_iter()
        .map(|path| {
            std::fs::read_to_string(path)
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        })
        .collect();
    (child, servers)
}

#[cfg(target_os = "linux")]
fn signal_ends_the_run_cleanly(signal: libc::c_int, name: &str) {
    let setup = Setup::new(&base_tools());
    let before = setup.repo.snapshot();
    let tmp = setup.work().join(format!("tmp-{name}"));
    std::fs::create_dir_all(&tmp).unwrap();
    let (child, servers) = gate_with_hanging_servers(&setup, &tmp);
    // SAFETY: kill only sends a signal, to the gate this test started.
    assert_eq!(unsafe { libc::kill(child.id() as i32, signal) }, 0);
    let output = child.wait_with_output().unwrap();
    let run = Run::from_output(output, setup.work().join("report-signal"));
    let gone = wait_for(Duration::from_secs(5), || {
        servers.iter().all(|p| !alive(*p))
    });
    for pid in &servers {
        // SAFETY: cleanup of a failed test's processes.
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
    }
    run.assert_code(2);
    assert!(
        run.stderr
            .contains(&format!("INVALID: interrupted ({name})")),
        "{}",
        run.describe()
    );
    assert!(gone, "servers survived {name}");
    setup.assert_left_nothing(&before, &tmp, &run);
}

#[test]
#[cfg(target_os = "linux")]
fn sighup_cleans_up_like_sigint() {
    signal_ends_the_run_cleanly(libc::SIGHUP, "SIGHUP");
}

#[test]
#[cfg(target_os = "linux")]
fn sigquit_cleans_up_like_sigint() {
    signal_ends_the_run_cleanly(libc::SIGQUIT, "SIGQUIT");
}

fn entries_of(dir: &Path) -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir)
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
        .collect();
    names.sort();
    names
}

#[test]
#[cfg(target_os = "linux")]
fn after_sigkill_the_next_run_reports_processes_then_cleans_up() {
    let setup = Setup::new(&base_tools());
    let tmp = setup.work().join("tmp-killed");
    std::fs::create_dir_all(&tmp).unwrap();
    let (mut child, servers) = gate_with_hanging_servers(&setup, &tmp);
    // SAFETY: SIGKILL to the gate alone: its servers stay, as after an OOM kill.
    unsafe { libc::kill(child.id() as i32, libc::SIGKILL) };
    child.wait().unwrap();
    let left = entries_of(&tmp);
    assert!(
        left.iter().any(|n| n.starts_with("tdqs-gate-home-")),
        "{left:?}"
    );
    assert!(servers.iter().all(|p| alive(*p)));

    // The next run sees the leftovers in use: it reports and kills nothing.
    let export = |tmp: &Path| {
        let output = setup
            .command(
                &[
                    "export".to_string(),
                    "--command".to_string(),
                    format!("{FAKE_SERVER} --tools {{root}}/tools.json"),
                ],
                tmp,
            )
            .output()
            .unwrap();
        Run::from_output(output, PathBuf::new())
    };
    let second = export(&tmp);
    second.assert_code(0);
    assert!(
        second.stderr.contains("still in use by pid"),
        "{}",
        second.describe()
    );
    assert!(
        servers.iter().all(|p| alive(*p)),
        "a leftover process was killed"
    );
    assert!(entries_of(&tmp)
        .iter()
        .any(|n| n.starts_with("tdqs-gate-home-")));

    for pid in &servers {
        // SAFETY: the test ends the leftovers itself.
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
    }
    assert!(wait_for(Duration::from_secs(5), || servers
        .iter()
        .all(|p| !alive(*p))));
    let third = export(&tmp);
    third.assert_code(0);
    assert_eq!(
        entries_of(&tmp),
        Vec::<String>::new(),
        "{}",
        third.describe()
    );
    let after = setup.repo.snapshot();
    assert!(
        after.temp_worktrees.is_empty(),
        "{:?}",
        after.temp_worktrees
    );
    assert!(
        after
            .worktree_entries
            .as_ref()
            .is_none_or(|entries| entries.is_empty()),
        "{:?}",
        after.worktree_entries
    );
}

#[test]
fn concurrent_gates_in_one_repository_all_finish() {
    // Before the fix some of such runs ended INVALID ("reference … is already checked out"):
    // 1 of 40 in this setting, up to a quarter with scripts/concurrent-gates.sh. The race is
    // timing-dependent, so this test can miss it; the script measures it better.
    const GATES: usize = 10;
    const ROUNDS: usize = 5;
    let setup = Setup::new(&base_tools());
    let command = format!("{FAKE_SERVER} --tools {{root}}/tools.json");
    let mut failures = Vec::new();
    let mut finished = 0;
    for round in 0..ROUNDS {
        let children: Vec<(PathBuf, std::process::Child)> = (0..GATES)
            .map(|i| {
                let tmp = setup.work().join(format!("tmp-concurrent-{round}-{i}"));
                std::fs::create_dir_all(&tmp).unwrap();
                let report = setup.work().join(format!("report-concurrent-{round}-{i}"));
                let report_dir = report.display().to_string();
                let args = setup.gate_args(&["--command", &command, "--report-dir", &report_dir]);
                let child = setup
                    .command(&args, &tmp)
                    .stdout(Stdio::piped())
                    .stderr(Stdio::piped())
                    .spawn()
                    .unwrap();
                (report, child)
            })
            .collect();
        for (report, child) in children {
            let run = Run::from_output(child.wait_with_output().unwrap(), report);
            if run.code == 0 {
                finished += 1;
            } else {
                failures.push(run.describe());
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{finished} of {} gates finished with their verdict; failures:\n{}",
        GATES * ROUNDS,
        failures.join("\n---\n")
    );
    let after = setup.repo.snapshot();
    assert!(
        after.temp_worktrees.is_empty(),
        "{:?}",
        after.temp_worktrees
    );
}

#[test]
fn only_abandoned_temp_folders_with_the_gates_marker_are_removed() {
    let setup = Setup::new(&base_tools());
    let tmp = setup.work().join("tmp-leftovers");
    std::fs::create_dir_all(&tmp).unwrap();
    let folder = |name: &str| {
        let path = tmp.join(name);
        std::fs::create_dir_all(path.join("work")).unwrap();
        std::fs::write(path.join("work/file"), "x").unwrap();
        path
    };
    // A judge call and a server home of a killed run: the gate's marker, nobody holds it.
    let judge = folder("tdqs-judge-abandoned");
    drop(tdqs_gate::platform::ownership::claim(&judge, "").unwrap());
    let home = folder("tdqs-gate-home-abandoned");
    drop(tdqs_gate::platform::ownership::claim(&home, "").unwrap());
    // One still held by a running gate (this test process stands in for it).
    let held = folder("tdqs-judge-held");
    let claim = tdqs_gate::platform::ownership::claim(&held, "").unwrap();
    // Named like the gate's, but nothing proves it: someone else's.
    let foreign = folder("tdqs-judge-foreign");

    let output = setup
        .command(
            &[
                "export".to_string(),
                "--command".to_string(),
                format!("{FAKE_SERVER} --tools {{root}}/tools.json"),
            ],
            &tmp,
        )
        .output()
        .unwrap();
    let run = Run::from_output(output, PathBuf::new());
    run.assert_code(0);
    assert!(!judge.exists(), "{}", run.describe());
    assert!(!home.exists(), "{}", run.describe());
    assert!(held.join("work/file").exists(), "a held folder was removed");
    assert!(
        foreign.join("work/file").exists(),
        "a folder without marker was removed"
    );
    drop(claim);
}

/// What the gate trusts for cached selection answers: the base revision's committed cache, read
/// from git's objects — regular files only (a committed link is left out, it could name any
/// file), none over the size limit, and nothing from the working tree.
#[test]
fn the_base_revisions_committed_cache_is_read_from_git_objects() {
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
