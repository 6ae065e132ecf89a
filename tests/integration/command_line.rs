//! The command line itself: each command takes only the flags that apply to it (a flag of
//! another command is refused by the parser, exit 2), and the flag forms `--check REPORT` and
//! `--calibrate CAPTURE` stand anywhere among the flags, as they always have.

use std::process::{Command, Output};

use crate::action::flags_of;
use crate::gate::harness::GATE;

fn gate(args: &[&str]) -> Output {
    let dir = tempfile::tempdir().expect("temp dir");
    Command::new(GATE)
        .args(args)
        .current_dir(dir.path())
        .output()
        .expect("run tdqs-gate")
}

fn assert_refused_by_the_parser(args: &[&str], flag: &str) {
    let out = gate(args);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
    assert!(
        stderr.contains(&format!("unexpected argument '{flag}")),
        "{args:?}: {stderr}"
    );
}

/// The flags only the gate has: the sides, its report and decision settings, and how servers
/// start.
const GATE_ONLY: [&str; 24] = [
    "--base",
    "--head",
    "--base-export",
    "--head-export",
    "--base-exports",
    "--head-exports",
    "--badge",
    "--independent-sides",
    "--answer-cache",
    "--no-answer-cache",
    "--decision-rule",
    "--tool-drop",
    "--full-report",
    "--eval",
    "--eval-cases",
    "--command",
    "--url",
    "--server",
    "--timeout",
    "--max-message-bytes",
    "--max-listing-bytes",
    "--protocol-version",
    "--era",
    "--capabilities",
];

#[test]
fn calibrate_refuses_the_flags_of_the_gate() {
    // Each of these was once accepted and silently ignored.
    for (args, flag) in [
        (
            &["calibrate", "c.json", "--base", "no-such-rev"][..],
            "--base",
        ),
        (
            &["calibrate", "c.json", "--decision-rule", "reference"],
            "--decision-rule",
        ),
        (&["calibrate", "c.json", "--url", "http://x"], "--url"),
        (
            &[
                "calibrate",
                "c.json",
                "--base",
                "no-such-rev",
                "--decision-rule",
                "reference",
                "--url",
                "http://x",
            ],
            "--base",
        ),
        // The flag form is the same command.
        (&["--calibrate", "c.json", "--url", "http://x"], "--url"),
        (
            &["--base", "no-such-rev", "--calibrate", "c.json"],
            "--base",
        ),
    ] {
        assert_refused_by_the_parser(args, flag);
    }
}

#[test]
fn check_refuses_the_flags_of_the_gate() {
    for (args, flag) in [
        (
            &["check", "r.json", "--report-dir", "out"][..],
            "--report-dir",
        ),
        (&["check", "r.json", "--badge", "b.json"], "--badge"),
        (&["check", "r.json", "--runs", "3"], "--runs"),
        (&["check", "r.json", "--eval", "synthetic"], "--eval"),
        (&["--full-report", "--check", "r.json"], "--full-report"),
        (
            &["check", "r.json", "--no-answer-cache"],
            "--no-answer-cache",
        ),
    ] {
        assert_refused_by_the_parser(args, flag);
    }
}

#[test]
fn calibrate_help_lists_no_flag_of_the_gate() {
    let flags = flags_of(Some("calibrate"));
    assert!(flags.contains(&"--runs".to_string()), "{flags:?}");
    assert!(flags.contains(&"--judge".to_string()), "{flags:?}");
    let stray: Vec<&String> = flags
        .iter()
        .filter(|f| GATE_ONLY.contains(&f.as_str()))
        .collect();
    assert!(stray.is_empty(), "calibrate --help lists {stray:?}");
    let check = flags_of(Some("check"));
    // `--decision-rule` and `--tool-drop` do apply: they fix the rule the report must have been
    // decided by.
    for flag in [
        "--report-dir",
        "--badge",
        "--runs",
        "--full-report",
        "--eval",
    ] {
        assert!(
            !check.contains(&flag.to_string()),
            "check --help lists {flag}"
        );
    }
}

#[test]
fn the_flag_forms_reach_their_command_from_anywhere_among_the_flags() {
    // A report that does not exist: the command ran (and says so), the parser took every flag.
    for args in [
        &["--check", "no-such-report.json", "--judge", "static"][..],
        &["--judge", "static", "--check", "no-such-report.json"],
        &[
            "--base=main",
            "--judge=static",
            "--check=no-such-report.json",
        ],
        &["check", "no-such-report.json", "--base", "main"],
    ] {
        let out = gate(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("cannot read the report"),
            "{args:?}: {stderr}"
        );
    }
    for args in [
        &["--calibrate", "no-such-capture.json", "--runs", "1"][..],
        &[
            "--runs",
            "1",
            "--judge",
            "static",
            "--calibrate",
            "no-such-capture.json",
        ],
    ] {
        let out = gate(args);
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(2), "{args:?}: {stderr}");
        assert!(
            stderr.contains("no-such-capture.json") && !stderr.contains("unexpected argument"),
            "{args:?}: {stderr}"
        );
    }
}
