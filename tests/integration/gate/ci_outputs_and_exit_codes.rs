//! What a CI job reads: the step summary and step outputs, and the exit codes of usage errors
//! and `--help`.

use super::*;

#[test]
fn github_step_summary_and_outputs_are_written() {
    let setup = drop_setup(&[1, 2, 3]);
    let summary = setup.work().join("step-summary.md");
    let output = setup.work().join("github-output.txt");
    std::fs::write(&summary, "earlier step\n").unwrap();
    let (s, o) = (summary.clone(), output.clone());
    let run = setup.gate_with(&[], |c| {
        c.env("GITHUB_STEP_SUMMARY", &s).env("GITHUB_OUTPUT", &o);
    });
    run.assert_code(1);
    let text = std::fs::read_to_string(&summary).unwrap();
    assert!(text.starts_with("earlier step\n"), "appended, not replaced");
    assert!(text.ends_with(&format!("{}\n", run.markdown())));
    let outputs = std::fs::read_to_string(&output).unwrap();
    assert!(
        outputs.contains("decision=block\n") && outputs.contains("scored=true\n"),
        "{outputs}"
    );
    assert!(outputs.contains(&format!("report={}\n", run.report_path().display())));

    let unchanged = Setup::new(&base_tools());
    let output = unchanged.work().join("github-output.txt");
    let o = output.clone();
    unchanged
        .gate_with(&[], |c| {
            c.env("GITHUB_OUTPUT", &o);
        })
        .assert_code(0);
    let outputs = std::fs::read_to_string(&output).unwrap();
    assert!(
        outputs.contains("decision=pass\n") && outputs.contains("scored=false\n"),
        "{outputs}"
    );
}

#[test]
fn exit_codes_of_usage_errors_and_help() {
    let setup = Setup::new(&base_tools());
    let help = setup.run_raw(&["--help".into()], setup.work().into(), |_| {});
    help.assert_code(0);
    assert!(help.stdout.contains("--base"));
    setup
        .run_raw(&["--version".into()], setup.work().into(), |_| {})
        .assert_code(0);
    for args in [
        vec!["--no-such-flag"],
        vec![],
        vec!["--base", "main", "--concurrency", "0"],
        vec!["--base", "main", "--judge", "oracle"],
        vec!["--base", "main", "--capabilities", "{not json"],
    ] {
        let owned: Vec<String> = args.iter().map(|s| s.to_string()).collect();
        let run = setup.run_raw(&owned, setup.work().into(), |_| {});
        assert_eq!(run.code, 2, "{args:?}: {}", run.describe());
        assert!(!run.stderr.is_empty(), "{args:?}: no message");
    }
    // A revision that does not exist is INVALID too, and a head already checked out for the
    // run is removed again (`run` checks that nothing is left).
    for head in [None, Some("main")] {
        let mut args = vec!["--base".to_string(), "no-such-branch".to_string()];
        if let Some(head) = head {
            args.extend(["--head".to_string(), head.to_string()]);
        }
        args.extend(setup.judge_args());
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = setup.run(&refs);
        run.assert_code(2);
        assert!(
            run.stderr.contains("INVALID: ") && run.stderr.contains("no-such-branch"),
            "{}",
            run.describe()
        );
    }
}
