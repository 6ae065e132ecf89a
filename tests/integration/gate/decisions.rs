//! How the gate decides on judged definitions: unchanged ones pass asking nothing, a reworded
//! one asks only its own questions, a drop blocks only once confirmed over three pairs, and a
//! small or unconfirmed one passes.

use super::*;

#[test]
fn unchanged_definitions_pass_asking_the_judge_nothing_and_fetching_no_spec() {
    let setup = Setup::new(&base_tools());
    let run = setup.gate(&[]);
    run.assert_code(0);
    assert!(run.stdout.starts_with("PASS: "), "{}", run.describe());
    // The judge's program ran only for its preflight (checked before the exports), never a call.
    let kinds: Vec<Value> = setup.fake.log().iter().map(|r| r["kind"].clone()).collect();
    assert_eq!(kinds, vec![json!("version"), json!("auth")]);
    assert_eq!(
        setup.spec.request_count(),
        0,
        "the specification was fetched"
    );
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "pass");
    assert_eq!(report["exitCode"], 0);
    assert_eq!(report["scored"], false);
    assert_eq!(report["pairs"], json!([]));
    assert_eq!(calls_of(&report), (0, 0, 0));
    assert_eq!(report["base"]["setHash"], report["head"]["setHash"]);
    assert_eq!(
        report["baseCommit"].as_str().unwrap(),
        setup.repo.rev_parse("main")
    );
    assert!(report["reason"]
        .as_str()
        .unwrap()
        .contains("no model was called"));
    assert!(run.markdown().contains("No model was called."));
}

#[test]
fn in_ci_unchanged_definitions_pass_even_when_no_judge_could_run() {
    // A pull request from a fork gets no secrets: in CI the judge's failure is held.
    let setup = Setup::new(&base_tools());
    let missing = setup.work().join("no-such-claude");
    let args = [
        "--base",
        "main",
        "--claude",
        missing.to_str().unwrap(),
        "--token-env",
        "TDQS_E2E_UNSET_TOKEN",
        "--sandbox",
        "off",
    ];
    let run = setup.run_with(&args, |c| {
        c.env("CI", "true");
    });
    run.assert_code(0);
    assert_schema_valid(&run.report());
    // Outside CI the same run stops before exporting, naming the offline path.
    let local = setup.run(&args);
    local.assert_code(2);
    assert!(
        local.stderr.contains("--judge static"),
        "{}",
        local.describe()
    );
}

#[test]
fn a_reworded_description_asks_two_plus_two_questions_and_shares_the_rest() {
    let setup = Setup::new(&base_tools());
    setup.set_head(&head_with(REWORDED));
    setup.fake.control(script(vec![]));
    let run = setup.gate(&[]);
    run.assert_code(0);
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "pass");
    assert_eq!(report["pairs"].as_array().unwrap().len(), 1);
    // n − 1 unchanged tools asked once for both sides; the changed tool and coherence per side.
    let expected = (
        (TOOLS - 1 + 2 + 2) as u64,
        (TOOLS - 1 + 2 + 2) as u64,
        (TOOLS - 1) as u64,
    );
    assert_eq!(calls_of(&report), expected);
    assert_eq!(report["pairs"][0]["calls"], report["calls"]);
    assert_eq!(setup.fake.calls().len(), TOOLS + 3);
    assert_eq!(report["scoring"]["shareIdenticalQuestions"], true);

    let pair = &report["pairs"][0];
    for side in ["base", "head"] {
        for (name, tool) in pair[side]["tools"].as_object().unwrap() {
            let expected = if name == "close_issue" {
                "judged"
            } else {
                "shared"
            };
            assert_eq!(tool["answer"], expected, "{side} {name}");
        }
        assert_eq!(pair[side]["coherence"]["answer"], "judged");
    }
    let prompts = prompts_by_tool(&setup.fake);
    for name in ["search_issues", "get_issue", "create_issue"] {
        assert_eq!(prompts[name].len(), 1, "{name} asked {:?}", prompts[name]);
    }
    assert_eq!(prompts["close_issue"].len(), 2);
    assert!(prompts["close_issue"][0] != prompts["close_issue"][1]);
    assert_eq!(prompts["coherence"].len(), 2);
    assert_eq!(report["changes"]["changed"], json!(["close_issue"]));
    assert_eq!(
        setup.spec.request_count(),
        1,
        "the specification is fetched once"
    );
    assert!(run
        .markdown()
        .contains("Model calls: 7 (7 attempts, 3 shared answers)"));
    // Not a terminal: plain progress lines.
    assert!(
        run.stderr
            .contains("tdqs-gate: 7 judge questions for this pair")
            && run.stderr.contains("tdqs-gate: answered 7/7"),
        "{}",
        run.describe()
    );
}

#[test]
fn independent_sides_ask_every_question_twice() {
    let setup = Setup::new(&base_tools());
    setup.set_head(&head_with(REWORDED));
    setup.fake.control(script(vec![]));
    let run = setup.gate(&["--independent-sides"]);
    run.assert_code(0);
    let report = run.report();
    assert_schema_valid(&report);
    let expected = (2 * TOOLS as u64 + 2, 2 * TOOLS as u64 + 2, 0);
    assert_eq!(calls_of(&report), expected);
    assert_eq!(report["scoring"]["shareIdenticalQuestions"], false);
    let prompts = prompts_by_tool(&setup.fake);
    for name in ["search_issues", "get_issue", "create_issue"] {
        assert_eq!(prompts[name].len(), 2, "{name}");
        assert_eq!(
            prompts[name][0], prompts[name][1],
            "{name}: the same prompt twice"
        );
    }
    for side in ["base", "head"] {
        for tool in report["pairs"][0][side]["tools"]
            .as_object()
            .unwrap()
            .values()
        {
            assert_eq!(tool["answer"], "judged");
        }
    }
}

#[test]
fn an_improved_description_passes_after_one_pair() {
    let setup = Setup::new(&base_tools());
    // The head on a branch given explicitly, from outside the repository: two worktrees.
    setup.commit_branch("feature", &head_with(BETTER));
    setup.repo.git(["checkout", "-q", "main"]);
    setup.fake.control(script(vec![tool_rule(
        "close_issue",
        Some(BETTER),
        None,
        5,
    )]));
    let repo = setup.repo.path.display().to_string();
    let mut args = vec!["--base", "main", "--head", "feature", "--repo", &repo];
    let judge = setup.judge_args();
    args.extend(judge.iter().map(String::as_str));
    let elsewhere = setup.work().to_path_buf();
    let run = setup.run_with(&args, |c| {
        c.current_dir(&elsewhere);
    });
    run.assert_code(0);
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "pass");
    assert_eq!(means(&report), vec![(4.0, 4.3)]);
    assert_eq!(report["median"], Value::Null);
    assert_eq!(report["causes"], Value::Null);
    assert_eq!(report["headRevision"], "feature");
    assert_eq!(
        report["headCommit"].as_str().unwrap(),
        setup.repo.rev_parse("feature")
    );
    assert!(run
        .stdout
        .starts_with("PASS: The head's mean TDQS 4.3 is not below the base's 4.0"));
}

#[test]
fn a_confirmed_drop_blocks_after_three_pairs_naming_the_tool_and_dimensions() {
    let setup = drop_setup(&[1, 2, 3]);
    let run = setup.gate(&[]);
    run.assert_code(1);
    assert!(run.stdout.starts_with("BLOCK: "), "{}", run.describe());
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "block");
    assert_eq!(report["exitCode"], 1);
    // close_issue: 25·2 + 20·1 + 20·2 + 15·2 + 10·2 + 10·2 = 180 → 1.8; mean (3·4.0 + 1.8)/4.
    assert_eq!(means(&report), vec![(4.0, 3.5); 3]);
    assert_eq!(report["median"], json!({"base": 4.0, "head": 3.5}));
    // The noise-aware rule: the first pair asks n − 1 shared questions plus two per side; the
    // confirmation pairs re-ask only the changed tool, keeping the rest of the first pair's
    // answers (issue 13, item 1).
    assert_eq!(calls_of(&report), (11, 11, 9));
    assert_eq!(setup.fake.calls().len(), 11);
    assert_eq!(
        report["decisionRule"],
        json!({"name": "noise-aware", "toolDrop": 0.5})
    );
    let assessment = &report["assessment"];
    assert_eq!(assessment["meanDeltaExact"], "-11/20");
    assert!(assessment["meanTolerance"].as_f64().unwrap() < 0.55);

    let causes = &report["causes"];
    let tools = causes["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 1, "{causes:#}");
    let fallen = &tools[0];
    assert_eq!(fallen["tool"], "close_issue");
    assert_eq!(
        (fallen["base"].as_f64(), fallen["head"].as_f64()),
        (Some(4.0), Some(1.8))
    );
    assert_eq!(fallen["effectExact"], "-11/20");
    let dimensions: BTreeMap<String, (u64, u64, String)> = fallen["dimensions"]
        .as_array()
        .unwrap()
        .iter()
        .map(|d| {
            (
                d["dimension"].as_str().unwrap().to_string(),
                (
                    d["base"].as_u64().unwrap(),
                    d["head"].as_u64().unwrap(),
                    d["justification"].as_str().unwrap().to_string(),
                ),
            )
        })
        .collect();
    assert_eq!(dimensions.len(), 6, "every dimension fell: {dimensions:?}");
    assert_eq!(
        dimensions["purpose_clarity"],
        (
            4,
            2,
            "Says what it closes but not which issue or how.".to_string()
        )
    );
    assert_eq!(
        dimensions["usage_guidelines"],
        (
            4,
            1,
            "Nothing says when to close rather than delete.".to_string()
        )
    );
    assert_eq!(causes["minimumTerm"]["fell"], true);
    assert_eq!(causes["minimumTerm"]["head"]["tool"], "close_issue");

    let markdown = run.markdown();
    let version = report["generator"]["version"].as_str().unwrap();
    assert_snapshot("gate-block", &redact(&markdown, version, setup.work()));
}

#[test]
fn the_reference_rule_stays_available_exactly() {
    let setup = drop_setup(&[1, 2, 3]);
    let run = setup.gate(&["--decision-rule", "reference"]);
    run.assert_code(1);
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decisionRule"], json!({"name": "reference"}));
    assert!(report.get("assessment").is_none(), "{report:#}");
    assert_eq!(means(&report), vec![(4.0, 3.5); 3]);
    // Three full pairs: n − 1 shared questions plus two per side, every pair.
    assert_eq!(calls_of(&report), (21, 21, 9));
    assert!(
        run.stdout
            .starts_with("BLOCK: The mean TDQS fell: over 3 pairs the head's median 3.5"),
        "{}",
        run.describe()
    );
    assert!(run
        .markdown()
        .contains("Decided by the **reference** rule."));
    // `--check` re-decides with the rule the report names, when it is the one required.
    check(&setup, &run.report_path()).assert_code(2);
    let pins = harness::standin_pins().display().to_string();
    let report = run.report_path().display().to_string();
    setup
        .run(&[
            "--check",
            &report,
            "--pins",
            &pins,
            "--decision-rule",
            "reference",
        ])
        .assert_code(1);
}

#[test]
fn a_one_tenth_drop_of_one_reworded_tool_passes_as_noise() {
    // 4 tools; the reworded one scores 4.0 on the base and 3.8 on the head in every pair: the
    // exact mean falls 4.0 → 3.95 (rounded 4.0 → 4.0), so two confirmation pairs are asked,
    // and the 0.2 fall of one tool stays below the guard.
    let setup = Setup::new(&base_tools());
    setup.set_head(&head_with(WORSE));
    let mut lower = tool_rule("close_issue", Some(WORSE), None, 4);
    lower["scores"] = json!({"conciseness_structure": 2});
    setup.fake.control(script(vec![lower]));
    let run = setup.gate(&[]);
    run.assert_code(0);
    let report = run.report();
    assert_schema_valid(&report);
    let fallen = &report["assessment"]["fallenTools"];
    assert_eq!(fallen[0]["tool"], "close_issue", "{report:#}");
    assert_eq!(fallen[0]["blocks"], false);
    // The same run under the reference rule: the rounded mean does not fall, so it passes too,
    // but says nothing about the tool.
    let reference = setup.gate(&["--decision-rule", "reference"]);
    reference.assert_code(0);
}

#[test]
fn one_tool_falling_blocks_though_the_mean_holds() {
    // 12 tools; close_issue falls 4.0 → 3.4 on every pair: the mean goes 4.0 → 3.95, which still
    // rounds to 4.0, so the mean holds; the guard (0.5) names the tool.
    let base = twelve_tools();
    let setup = Setup::new(&base);
    setup.set_head(&with_description(&base, "close_issue", WORSE));
    let mut lower = tool_rule("close_issue", Some(WORSE), None, 4);
    lower["scores"] = json!({"purpose_clarity": 2, "conciseness_structure": 3});
    setup.fake.control(script(vec![lower]));
    let run = setup.gate(&[]);
    run.assert_code(1);
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decisionRule"]["toolDrop"], 0.5);
    assert_eq!(report["median"], json!({"base": 4.0, "head": 4.0}));
    let fallen = &report["assessment"]["fallenTools"][0];
    assert_eq!(fallen["tool"], "close_issue");
    assert_eq!(
        (fallen["base"].as_f64(), fallen["head"].as_f64()),
        (Some(4.0), Some(3.4))
    );
    assert_eq!(fallen["blocks"], true);
    assert!(
        run.stdout.contains("`close_issue` 4.0 → 3.4"),
        "{}",
        run.describe()
    );
    // The reference rule passes the same change: the rounded mean does not fall.
    setup.gate(&["--decision-rule", "reference"]).assert_code(0);
    // A guard raised above the fall (flag, then configuration) lets it through.
    setup.gate(&["--tool-drop", "0.7"]).assert_code(0);
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"python3 {root}/server.py\"\n\n[decision]\ntool-drop = 0.7\n",
    );
    // A setting of the base revision's file (the head's is ignored).
    setup.repo.git(["add", "tdqs-gate.toml"]);
    setup.repo.git(["commit", "-q", "-m", "raise the guard"]);
    let configured = setup.gate(&[]);
    configured.assert_code(0);
    assert_eq!(configured.report()["decisionRule"]["toolDrop"], 0.7);
}

#[test]
fn a_drop_that_is_not_confirmed_passes_with_the_medians() {
    let setup = drop_setup(&[1]);
    let run = setup.gate(&[]);
    run.assert_code(0);
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "pass");
    assert_eq!(means(&report), vec![(4.0, 3.5), (4.0, 4.0), (4.0, 4.0)]);
    assert_eq!(report["median"], json!({"base": 4.0, "head": 4.0}));
    // The first pair dropped, so the report still says what fell on it.
    assert_eq!(report["causes"]["tools"][0]["tool"], "close_issue");
    assert!(
        run.stdout.contains("not beyond the judge's noise"),
        "{}",
        run.describe()
    );
    // The head's close_issue prompt was asked once per pair.
    let prompts = prompts_by_tool(&setup.fake);
    assert_eq!(prompts["close_issue"].len(), 2 * 3);
    let markdown = run.markdown();
    assert!(
        markdown.contains("| Base median | Head median |"),
        "{markdown}"
    );
}
