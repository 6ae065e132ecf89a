//! Runs that end INVALID (exit 2) with a report: an unreadable answer during confirmation, an
//! unreachable judge, and each INVALID row of the result table.

use super::*;

#[test]
fn an_unreadable_answer_during_confirmation_is_invalid_and_still_reported() {
    let setup = Setup::new(&base_tools());
    setup.set_head(&head_with(WORSE));
    let mut garbage = tool_rule("close_issue", Some(WORSE), Some(&[2, 3, 4]), 2);
    garbage["behaviour"] = json!("garbage");
    setup.fake.control(script(vec![
        tool_rule("close_issue", Some(WORSE), Some(&[1]), 2),
        garbage,
    ]));
    let run = setup.gate(&[]);
    run.assert_code(2);
    let invalid_lines: Vec<&str> = run
        .stderr
        .lines()
        .filter(|l| l.starts_with("INVALID: "))
        .collect();
    assert_eq!(invalid_lines.len(), 1, "{}", run.describe());
    assert!(invalid_lines[0].contains("pair 2"), "{}", invalid_lines[0]);
    assert!(run.stdout.is_empty(), "{}", run.describe());

    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "invalid");
    assert_eq!(report["exitCode"], 2);
    assert_eq!(report["pairs"].as_array().unwrap().len(), 1);
    assert_eq!(report["error"]["stage"], "judge");
    let cause = report["error"]["cause"].as_str().unwrap();
    assert!(
        cause.contains("`close_issue`") && cause.contains("after 3 attempts"),
        "{cause}"
    );
    assert!(report["error"]["advice"].as_str().is_some());
    // The calls of the failed pair count: pair 1's seven and at least the three refused attempts.
    let (_, attempts, _) = calls_of(&report);
    assert!(attempts >= 7 + 3, "{:#}", report["calls"]);
    assert_eq!(attempts as usize, setup.fake.calls().len());
    assert_eq!(report["scored"], true);
    let garbage_calls = setup
        .fake
        .calls()
        .into_iter()
        .filter(|c| c["behaviour"] == "garbage")
        .count();
    assert_eq!(garbage_calls, 3);
    assert!(run
        .markdown()
        .starts_with("## ⚠️ Tool definition score: INVALID"));
}

#[test]
fn an_unreachable_judge_is_invalid_once_the_definitions_differ() {
    let setup = Setup::new(&base_tools());
    setup.set_head(&head_with(WORSE));
    setup.fake.control(json!({"logged_in": false}));
    // In CI the judge's failure is held until the definitions are known to differ.
    let run = setup.gate_with(&["--sandbox", "off"], |c| {
        c.env("CI", "true");
    });
    run.assert_code(2);
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "invalid");
    assert!(report["error"]["cause"]
        .as_str()
        .unwrap()
        .contains("the judge cannot run"));
    assert!(setup.fake.calls().is_empty());
    assert_eq!(report["scored"], false);
}

#[test]
fn each_invalid_row_of_the_result_table_is_exit_2_with_a_report() {
    let tampered = std::fs::read_to_string(fixture("spec/standin-readme.md"))
        .unwrap()
        .replacen("test double", "stand-in", 1);
    let tampered_spec = crate::loopback::Loopback::routes(vec![(
        "GET",
        "/README.md",
        crate::loopback::Response::ok(tampered),
    )]);
    let tampered_url = tampered_spec.url("/README.md");
    // (what, fake control, extra arguments, the cause must say)
    let rows: Vec<(&str, Value, Vec<String>, &str)> = vec![
        (
            "no token",
            json!({}),
            vec!["--token-env".into(), "TDQS_E2E_UNSET_TOKEN".into()],
            "`TDQS_E2E_UNSET_TOKEN` is not set",
        ),
        (
            "a prompt that fails its hash",
            json!({}),
            vec![],
            "tool_system",
        ),
        (
            "another model answering",
            json!({"calls": ["model:claude-other-model"]}),
            vec![],
            "claude-other-model",
        ),
        (
            "an answer unreadable after its retries",
            json!({"calls": ["garbage"]}),
            vec![],
            "after 3 attempts",
        ),
    ];
    for (what, control, extra, expected) in rows {
        let setup = Setup::new(&base_tools());
        setup.set_head(&head_with(WORSE));
        setup.fake.control(control);
        let mut args = setup.gate_args(&[]);
        if what == "a prompt that fails its hash" {
            let at = args.iter().position(|a| a == "--spec-url").unwrap();
            args[at + 1] = tampered_url.clone();
        }
        args.extend(extra);
        let refs: Vec<&str> = args.iter().map(String::as_str).collect();
        let run = setup.run(&refs);
        assert_eq!(run.code, 2, "{what}: {}", run.describe());
        let report = run.report();
        assert_schema_valid(&report);
        assert_eq!(report["decision"], "invalid", "{what}");
        let cause = report["error"]["cause"].as_str().unwrap();
        assert!(cause.contains(expected), "{what}: {cause}");
        assert!(
            run.stderr
                .lines()
                .any(|l| l.starts_with("INVALID: ") && l.contains(expected)),
            "{what}: {}",
            run.describe()
        );
        if what == "no token" {
            // A judge that cannot run is found before any export (outside CI).
            assert!(
                report["base"].is_null() && report["head"].is_null(),
                "{what}"
            );
        } else {
            assert!(
                report["base"].is_object() && report["head"].is_object(),
                "{what}"
            );
        }
    }
    assert!(tampered_spec.request_count() >= 1);
}
