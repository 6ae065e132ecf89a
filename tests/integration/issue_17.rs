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
