//! Setup commands: run in the tree before the server, their output shown when one fails, and
//! a timeout that kills them with their children.

use super::*;

fn sh(script: &str) -> SetupCommand {
    SetupCommand {
        program: "/bin/sh".into(),
        args: vec!["-c".into(), script.into()],
        origin: None,
    }
}

#[test]
fn setup_commands_run_in_the_tree_before_the_server() {
    let case = Case::new();
    let mut spec = case.fake(&["--mode", "normal"]);
    spec.setup = vec![
        sh("echo built > build.stamp"),
        sh("test -f build.stamp && echo \"$FAKE_MARKER\" > env.stamp"),
    ];
    run(&spec).expect("listing");
    assert_eq!(
        std::fs::read_to_string(case.path("env.stamp")).unwrap(),
        "present\n"
    );
}

#[test]
fn failing_setup_command_shows_its_output_and_starts_no_server() {
    let case = Case::new();
    let mut spec = case.fake(&["--mode", "normal"]);
    spec.setup = vec![sh(
        "echo compiling; echo 'error: missing header foo.h' >&2; exit 4",
    )];
    let error = expect_err(run(&spec));
    let rendered = error.render();
    assert!(error.cause.contains("exited with status 4"), "{rendered}");
    assert!(
        rendered.contains("error: missing header foo.h"),
        "{rendered}"
    );
    assert!(rendered.contains("compiling"), "{rendered}");
    assert!(error.reproduce.as_deref().unwrap().contains("exit 4"));
    assert!(
        !case.path("server.pid").exists(),
        "the server must not start"
    );
}

#[test]
fn setup_command_timeout_kills_it_and_its_children() {
    let case = Case::new();
    let mut spec = case.fake(&["--mode", "normal"]);
    spec.limits.setup_timeout = Duration::from_millis(500);
    spec.setup = vec![sh(
        "trap '' TERM; sleep 60 & echo $! > bg.pid; echo $$ > setup.pid; wait",
    )];
    let error = expect_err(run(&spec));
    assert!(
        error.cause.contains("did not finish within 500ms"),
        "{}",
        error.render()
    );
    let setup_pid = read_pid(&case.path("setup.pid"));
    assert_nothing_left(setup_pid, &[read_pid(&case.path("bg.pid"))]);
}
