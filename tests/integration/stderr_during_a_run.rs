//! What a run says on stderr without `-v`: which phase each side is in while setup commands run,
//! the report's warnings (a stdout line the server should have logged to stderr), and a note
//! when `--head HEAD` gated a commit while the working tree holds uncommitted changes.

use crate::gate::harness::*;

#[test]
fn setup_commands_show_short_phase_lines_per_side_without_verbose() {
    let setup = Setup::new(&base_tools());
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"python3 {root}/server.py\"\nsetup = [\"sh -c 'echo secret-free-build-output'\", [\"true\"]]\n",
    );
    setup.repo.commit_all("setup commands");
    let run = setup.gate(&[]);
    run.assert_code(0);
    for side in ["base", "head"] {
        for line in [
            format!("tdqs-gate: {side}: running the setup commands, then starting the server\n"),
            format!("tdqs-gate: {side}: setup command 1 of 2 running\n"),
            format!("tdqs-gate: {side}: setup command 2 of 2 running\n"),
        ] {
            assert!(
                run.stderr.contains(&line),
                "{line:?} missing\n{}",
                run.describe()
            );
        }
        assert!(
            run.stderr.contains(&format!(
                "tdqs-gate: {side}: setup command 2 of 2 finished after "
            )),
            "{}",
            run.describe()
        );
    }
    // The command texts and their output stay for -v.
    assert!(
        !run.stderr.contains("echo secret-free"),
        "{}",
        run.describe()
    );
    // --quiet says none of it.
    let quiet = setup.gate(&["--quiet"]);
    quiet.assert_code(0);
    assert!(
        !quiet.stderr.contains("setup command"),
        "{}",
        quiet.describe()
    );
}

#[test]
fn a_skipped_stdout_line_is_a_warning_on_stderr_as_well_as_in_the_report() {
    let setup = Setup::new(&base_tools());
    let run = setup.gate(&[
        "--command",
        "sh -c 'echo starting-up-noise; exec python3 {root}/server.py'",
    ]);
    run.assert_code(0);
    let report = run.report();
    let warnings: Vec<&str> = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|w| w.as_str().unwrap())
        .collect();
    let skipped = warnings
        .iter()
        .find(|w| w.contains("skipped stdout line: starting-up-noise"))
        .unwrap_or_else(|| panic!("no warning in {warnings:?}"));
    assert!(
        run.stderr
            .contains(&format!("tdqs-gate: warning: {skipped}\n")),
        "{}",
        run.describe()
    );
}

#[test]
fn head_as_the_checked_out_commit_notes_uncommitted_changes_it_did_not_gate() {
    let setup = Setup::new(&base_tools());
    // An uncommitted edit that deletes a description: `--head HEAD` gates the commit, not it.
    setup.set_head(&with_description(&base_tools(), "close_issue", ""));
    let run = setup.gate(&["--head", "HEAD"]);
    run.assert_code(0);
    let report = run.report();
    assert_eq!(report["decision"], "pass");
    assert!(report["reason"].as_str().unwrap().contains("unchanged"));
    let note = report["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .filter_map(|w| w.as_str())
        .find(|w| w.starts_with("the working tree differs from the head and was not gated"))
        .unwrap_or_else(|| panic!("no note in {:#}", report["warnings"]));
    assert!(note.contains("`--head HEAD`"), "{note}");
    assert!(note.contains("1 uncommitted change"), "{note}");
    assert!(note.contains("omit --head"), "{note}");
    assert!(!note.contains("  "), "a run of spaces in the note: {note}");
    assert!(run.stderr.contains(note), "{}", run.describe());
    assert!(
        run.markdown().contains("was not gated"),
        "{}",
        run.markdown()
    );

    // A clean working tree: no note.
    setup.set_head(&base_tools());
    let clean = setup.gate(&["--head", "HEAD"]);
    clean.assert_code(0);
    assert!(
        !clean.stderr.contains("was not gated"),
        "{}",
        clean.describe()
    );
}
