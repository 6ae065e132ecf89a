//! `live_model` through a loopback OpenAI-compatible stand-in that selects by the scripted rule:
//! the live run and its offline replay from the cache, `--max-cost`, and misconfigured live runs
//! failing loudly, never falling back.

use super::*;

#[test]
fn live_model_through_a_loopback_stand_in_then_offline_replay() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("eval-cache");
    let cache_s = cache.to_str().unwrap().to_string();
    let standin = stand_in();
    let url = standin.server.url("");
    let run = json_of(&eval(dir.path(), "careful", &live_args(&url, &cache_s)));
    assert_eq!(run["mode"], "live_model");
    assert_eq!(run["selector"], "openai");
    assert_eq!(run["model"], MODEL);
    assert_eq!(ratio(&run, "selection"), (17, 18));
    assert_eq!(ratio(&run, "positives"), (10, 10));
    assert_eq!(ratio(&run, "siblings"), (7, 8));
    assert_eq!(ratio(&run, "abstention"), (4, 4));
    // Argument validity: 18 selections of a listed tool, two scripted invalid ones.
    assert_eq!(ratio(&run, "argumentValidity"), (16, 18));
    let by_id = |id: &str| {
        run["cases"]
            .as_array()
            .unwrap()
            .iter()
            .find(|c| c["id"] == id)
            .unwrap()
            .clone()
    };
    let create = by_id("p-create");
    assert_eq!(create["argumentsValid"], false);
    assert!(
        create["argumentErrors"].to_string().contains("title"),
        "{create}"
    );
    let export = by_id("p-export");
    assert!(
        export["argumentErrors"].to_string().contains("format"),
        "{export}"
    );
    assert_eq!(by_id("p-get")["argumentsValid"], true);
    assert_eq!(by_id("s-triage-not-update")["selected"], "update_issue");
    let captures = run["metrics"]["captures"].as_array().unwrap();
    assert_eq!(captures.len(), 1);
    assert_eq!(captures[0]["captor"], "update_issue");
    assert_eq!(captures[0]["meantFor"], "triage_issue");
    // Tokens and calls of the run.
    assert_eq!(run["calls"], 22);
    assert_eq!(run["cached"], 0);
    assert_eq!(run["usage"]["inputTokens"], 22_000);
    assert_eq!(run["usage"]["outputTokens"], 880);
    // What the model was shown: temperature 0, the definitions exactly as exported.
    let bodies = standin.bodies.lock().unwrap().clone();
    assert_eq!(bodies.len(), 22);
    let tools: Vec<Value> = serde_json::from_str(
        &std::fs::read_to_string(repo_file("examples/issue-tracker/careful.json")).unwrap(),
    )
    .unwrap();
    let shown = serde_json::to_string_pretty(&Value::Array(tools)).unwrap();
    for body in &bodies {
        assert_eq!(body["temperature"].as_f64(), Some(0.0));
        assert!(body["messages"][1]["content"]
            .as_str()
            .unwrap()
            .contains(&shown));
    }
    // Every answer cached, one file each.
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 22);

    // Replay: no server, no key, no network; the same figures.
    standin.server.stop();
    let dead = refused_url("");
    let replay = json_of(&eval(
        dir.path(),
        "careful",
        &[&live_args(&dead, &cache_s)[..], &["--offline"]].concat(),
    ));
    assert_eq!(replay["calls"], 0);
    assert_eq!(replay["cached"], 22);
    assert_eq!(replay["metrics"], run["metrics"]);
    assert_eq!(replay["cases"], run["cases"]);

    // A case the cache has never seen: --offline fails, naming it, and prints no figures.
    let file = dir.path().join("more.toml");
    let mut text = std::fs::read_to_string(cases("careful")).unwrap();
    text.push_str("\n[[case]]\nid = \"new-one\"\nrequest = \"Close atlas issue 3\"\nexpect = \"close_issue\"\nkind = \"positive\"\nprovenance = \"user_defined\"\n");
    std::fs::write(&file, text).unwrap();
    let miss = std::process::Command::new(GATE)
        .current_dir(dir.path())
        .args(["eval", "--repo"])
        .arg(dir.path())
        .arg("--cases")
        .arg(&file)
        .arg("--command")
        .arg(server_command(dir.path(), "careful"))
        .args(live_args(&dead, &cache_s))
        .arg("--offline")
        .output()
        .unwrap();
    assert_eq!(miss.status.code(), Some(2));
    assert!(miss.stdout.is_empty());
    let err = String::from_utf8_lossy(&miss.stderr);
    assert!(err.contains("no cached answer for case `new-one`"), "{err}");
}

#[test]
fn max_cost_stops_the_run_and_keeps_the_answers() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("eval-cache");
    let cache_s = cache.to_str().unwrap().to_string();
    let standin = stand_in();
    let url = standin.server.url("");
    let out = eval(
        dir.path(),
        "careful",
        &[&live_args(&url, &cache_s)[..], &["--max-cost", "2500"]].concat(),
    );
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--max-cost 2500"), "{err}");
    // 1040 tokens a call: the third call passes the budget, so three answers are kept.
    assert_eq!(standin.bodies.lock().unwrap().len(), 3);
    assert_eq!(std::fs::read_dir(&cache).unwrap().count(), 3);
}

#[test]
fn misconfigured_live_runs_fail_loudly_never_falling_back() {
    let dir = tempfile::tempdir().unwrap();
    let cache = dir.path().join("c");
    let cache_s = cache.to_str().unwrap().to_string();
    let cases_ = [
        // No address for the OpenAI-compatible judge.
        (
            vec![
                "--mode",
                "live-model",
                "--judge",
                "openai",
                "--model",
                MODEL,
            ],
            "base-url",
        ),
        // The static judge cannot select.
        (
            vec!["--mode", "live-model", "--judge", "static"],
            "cannot select",
        ),
        // A missing key variable.
        (
            vec![
                "--mode",
                "live-model",
                "--judge",
                "anthropic",
                "--token-env",
                "TDQS_EVAL_NO_SUCH_KEY",
            ],
            "TDQS_EVAL_NO_SUCH_KEY",
        ),
    ];
    for (args, needle) in cases_ {
        let out = eval(
            dir.path(),
            "careful",
            &[&args[..], &["--eval-cache", &cache_s]].concat(),
        );
        assert_eq!(out.status.code(), Some(2), "{args:?}");
        assert!(out.stdout.is_empty(), "{args:?}: figures printed");
        let err = String::from_utf8_lossy(&out.stderr);
        assert!(err.contains(needle), "{args:?}: {err}");
        assert!(err.contains("INVALID"), "{err}");
    }
    // An unreachable endpoint stops the run at the preflight.
    let dead = refused_url("");
    let out = eval(dir.path(), "careful", &live_args(&dead, &cache_s));
    assert_eq!(out.status.code(), Some(2));
    assert!(out.stdout.is_empty());
    assert!(!cache.exists(), "nothing cached from a failed run");
}
