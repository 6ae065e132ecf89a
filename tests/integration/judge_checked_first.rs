//! The judge is checked before any setup command: a Claude Code CLI that is not logged in fails
//! the run at once, naming `--judge static` as the offline path, and no side is exported. With
//! no setup command the servers start while the judge is checked, and a failed check stops
//! them.

use serde_json::{json, Value};

use crate::gate::harness::*;

/// A base configuration whose setup command leaves a mark in the test's folder when it runs.
fn with_marking_setup(setup: &Setup) -> std::path::PathBuf {
    let mark = setup.work().join("setup-ran");
    setup.repo.write(
        "tdqs-gate.toml",
        &format!(
            "[server]\ncommand = \"python3 {{root}}/server.py\"\nsetup = [[\"touch\", \"{}\"]]\n[sandbox]\nmode = \"off\"\n",
            mark.display()
        ),
    );
    setup.repo.commit_all("a setup command that marks");
    mark
}

#[test]
fn a_judge_that_is_not_logged_in_fails_before_any_setup_or_export() {
    let setup = Setup::new(&base_tools());
    let mark = with_marking_setup(&setup);
    setup.fake.control(json!({"logged_in": false}));
    let run = setup.gate(&[]);
    run.assert_code(2);
    assert!(!mark.exists(), "a setup command ran: {}", run.describe());
    let report = run.report();
    assert_eq!(report["decision"], "invalid");
    assert_eq!(report["error"]["stage"], "judge");
    assert!(
        report["base"].is_null() && report["head"].is_null(),
        "{report:#}"
    );
    let cause = report["error"]["cause"].as_str().unwrap();
    assert!(cause.contains("before exporting"), "{cause}");
    assert!(cause.contains("not logged in"), "{cause}");
    let advice = report["error"]["advice"].as_str().unwrap();
    assert!(advice.contains("`--judge static`"), "{advice}");
    assert!(run.stderr.contains("--judge static"), "{}", run.describe());
    // The preflight ran the CLI twice (version, login) and asked it nothing.
    let kinds: Vec<Value> = setup.fake.log().iter().map(|r| r["kind"].clone()).collect();
    assert_eq!(kinds, vec![json!("version"), json!("auth")]);
}

#[test]
fn the_static_judge_gates_the_same_repository_offline() {
    let setup = Setup::new(&base_tools());
    let mark = with_marking_setup(&setup);
    setup.fake.control(json!({"logged_in": false}));
    let run = setup.run(&["--base", "main", "--judge", "static"]);
    run.assert_code(0);
    assert!(mark.exists(), "the setup did not run: {}", run.describe());
    assert!(!setup.fake.ever_started());
}

#[test]
fn without_setup_commands_a_failed_judge_check_stops_the_servers_it_overlapped() {
    let setup = Setup::new(&base_tools());
    let pids = setup.work().join("server-pids");
    std::fs::create_dir_all(&pids).unwrap();
    let started = pids.join("a-server-started");
    // Each side's server records its pid (outside the tree, so the sandbox is off) and hangs;
    // the login check answers only once a server runs, so the check fails while they do.
    let command = format!(
        "sh -c 'echo $$ > {dir}/$(basename \"$0\").pid.tmp && mv {dir}/$(basename \"$0\").pid.tmp {dir}/$(basename \"$0\").pid && touch {started}; exec {server} --mode hang --ignore-eof --ignore-term' {{root}}",
        dir = pids.display(),
        started = started.display(),
        server = env!("CARGO_BIN_EXE_fake-mcp-server"),
    );
    setup.fake.control(json!({
        "logged_in": false,
        "auth_waits_for": started.display().to_string(),
    }));
    // `gate` checks that no worktree or temporary file was left.
    let run = setup.gate(&["--command", &command, "--sandbox", "off"]);
    run.assert_code(2);
    let report = run.report();
    assert_eq!(report["error"]["stage"], "judge", "{report:#}");
    assert!(
        report["base"].is_null() && report["head"].is_null(),
        "{report:#}"
    );
    let servers: Vec<i64> = crate::support::written_pid_files(&pids)
        .iter()
        .filter(|path| path.extension().is_some_and(|ext| ext == "pid"))
        .map(|path| {
            std::fs::read_to_string(path)
                .unwrap()
                .trim()
                .parse()
                .unwrap()
        })
        .collect();
    assert!(!servers.is_empty(), "no server started: {}", run.describe());
    let left: Vec<i64> = servers.iter().copied().filter(|&pid| alive(pid)).collect();
    for pid in &left {
        // SAFETY: kill only sends a signal, to a failed test's leftover.
        unsafe { libc::kill(*pid as i32, libc::SIGKILL) };
    }
    assert!(left.is_empty(), "servers outlived the run: {left:?}");
}

#[test]
fn in_ci_unchanged_definitions_pass_without_waiting_for_a_slow_login_check() {
    let setup = Setup::new(&base_tools());
    // The login check answers only once this file appears, and nothing creates it: a run that
    // waited for the check would take the fake's whole 30 s hold.
    let never = setup.work().join("never-created");
    setup.fake.control(json!({
        "logged_in": false,
        "auth_waits_for": never.display().to_string(),
    }));
    let started = std::time::Instant::now();
    let run = setup.gate_with(&[], |c| {
        c.env("CI", "true");
    });
    run.assert_code(0);
    assert_eq!(run.report()["decision"], "pass", "{}", run.describe());
    assert!(
        started.elapsed() < std::time::Duration::from_secs(20),
        "the run waited for the login check: {}",
        run.describe()
    );
}
