//! The selection check in a repository with several servers: it covers one server. Over several
//! `[[server]]` tables it is refused (exit 2, naming the fix) before any server is scored; with
//! one table selected by `--server NAME` it runs and is reported in that server's section.

use serde_json::{json, Value};

use crate::gate::harness::*;

const WORSE: &str = "Closes an issue.";

/// Two servers, `api` and `web`; the case suite is written for `api`'s tools.
const TWO_SERVERS: &str =
    "[[server]]\nname = \"api\"\ncommand = \"python3 {root}/api/server.py\"\n\n\
[[server]]\nname = \"web\"\ncommand = \"python3 {root}/web/server.py\"\n";

const CASES: &str = r#"version = 1

[[case]]
id = "find-by-words"
request = "Search the atlas project's issues for the words login timeout"
expect = "search_issues"
kind = "positive"
provenance = "human_fixture"

[[case]]
id = "one-issue"
request = "Show issue 12 with its comments"
expect = "get_issue"
kind = "positive"
provenance = "human_fixture"

[[case]]
id = "close-keep-history"
request = "Close open issue 9 with a comment, keeping its history"
expect = "close_issue"
kind = "sibling"
sibling = "create_issue"
provenance = "human_fixture"

[[case]]
id = "no-sms"
request = "Send a text message to Ann's phone"
expect = "NO_TOOL"
kind = "abstain"
provenance = "human_fixture"
"#;

fn web_tools() -> Value {
    let mut tools = base_tools();
    for tool in tools.as_array_mut().unwrap() {
        let name = tool["name"].as_str().unwrap().to_string();
        tool["name"] = json!(format!("web_{name}"));
    }
    tools
}

/// `main` holds both servers, `config` and the suite; in the working tree `api`'s
/// `close_issue` is said worse (so `api` changed and is scored), `web` is unchanged.
fn monorepo(config: &str) -> Setup {
    let setup = Setup::new(&base_tools());
    for (dir, tools) in [("api", base_tools()), ("web", web_tools())] {
        setup
            .repo
            .write(&format!("{dir}/server.py"), &example_server());
        setup
            .repo
            .write(&format!("{dir}/tools.json"), &pretty(&tools));
    }
    setup.repo.write("tdqs-gate.toml", config);
    setup.repo.write("tdqs-eval.toml", CASES);
    setup.repo.commit_all("two servers and a case suite");
    setup.repo.write(
        "api/tools.json",
        &pretty(&with_description(&base_tools(), "close_issue", WORSE)),
    );
    setup
        .fake
        .control(script(vec![tool_rule("close_issue", Some(WORSE), None, 2)]));
    setup
}

fn assert_refused(setup: &Setup, run: &Run) {
    run.assert_code(2);
    assert!(
        run.stderr
            .contains("the selection check (--eval or [eval]) covers one server"),
        "{}",
        run.describe()
    );
    assert!(
        run.stderr.contains("--server NAME"),
        "the fix is named: {}",
        run.describe()
    );
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "invalid");
    assert_eq!(report["exitCode"], 2);
    assert_eq!(report["error"]["stage"], "usage");
    assert_eq!(report["servers"], json!([]), "nothing was gated");
    assert!(!setup.fake.ever_started(), "a judge was asked");
}

#[test]
fn eval_over_several_servers_is_refused_with_the_fix() {
    // The flag over two [[server]] tables.
    let setup = monorepo(TWO_SERVERS);
    let run = setup.gate(&["--eval", "synthetic"]);
    assert_refused(&setup, &run);
    // Two tables named with --server.
    let run = setup.gate(&["--eval", "synthetic", "--server", "api", "--server", "web"]);
    assert_refused(&setup, &run);
    // The [eval] table of tdqs-gate.toml, no flag.
    let setup = monorepo(&format!("{TWO_SERVERS}\n[eval]\nmode = \"synthetic\"\n"));
    let run = setup.gate(&[]);
    assert_refused(&setup, &run);
}

#[test]
fn eval_runs_for_one_selected_server() {
    let setup = monorepo(TWO_SERVERS);
    let run = setup.gate(&["--eval", "synthetic", "--server", "api"]);
    // The TDQS fall of api's close_issue blocks; the check ran beside it.
    run.assert_code(1);
    let report = run.report();
    assert_schema_valid(&report);
    let servers = report["servers"].as_array().unwrap();
    assert_eq!(servers.len(), 1, "{report:#}");
    assert_eq!(servers[0]["name"], "api");
    let check = &servers[0]["report"]["eval"];
    assert_eq!(check["mode"], "synthetic", "{report:#}");
    assert_eq!(check["cases"].as_array().unwrap().len(), 4, "{check:#}");
    assert_eq!(check["baseSelection"]["of"], 3);
    assert!(
        run.stderr
            .contains("selection check (synthetic): running 4 cases on the base and the head"),
        "{}",
        run.describe()
    );
    // The page shows the check in api's section.
    let html = std::fs::read_to_string(run.report_dir.join("tool-definition-score.html")).unwrap();
    assert!(
        html.contains("<div class=\"selection-check\" data-mode=\"synthetic\""),
        "{html}"
    );
}
