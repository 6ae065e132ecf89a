//! Several servers of one repository gated in one run (`[[server]]` tables
//! or several `--server`), one verdict per server and one overall, in one report.

use serde_json::{json, Value};

use crate::gate::harness::*;

const WORSE: &str = "Closes an issue.";

/// Two servers, `api` and `web`, each the example server with its own tool set.
pub(crate) const TWO_SERVERS: &str =
    "[[server]]\nname = \"api\"\ncommand = \"python3 {root}/api/server.py\"\n\n\
[[server]]\nname = \"web\"\ncommand = \"python3 {root}/web/server.py\"\n";

/// `tools` with every tool name prefixed (so prompts tell the servers apart).
fn prefixed(tools: &Value, prefix: &str) -> Value {
    let mut tools = tools.clone();
    for tool in tools.as_array_mut().unwrap() {
        let name = tool["name"].as_str().unwrap().to_string();
        tool["name"] = json!(format!("{prefix}{name}"));
    }
    tools
}

fn api_tools() -> Value {
    base_tools()
}

fn web_tools() -> Value {
    prefixed(&base_tools(), "web_")
}

/// `main` holds both servers and `config`; the working tree is the same until the test
/// changes it.
pub(crate) fn monorepo(config: &str) -> Setup {
    let setup = Setup::new(&base_tools());
    for (dir, tools) in [("api", api_tools()), ("web", web_tools())] {
        setup
            .repo
            .write(&format!("{dir}/server.py"), &example_server());
        setup
            .repo
            .write(&format!("{dir}/tools.json"), &pretty(&tools));
    }
    setup.repo.write("tdqs-gate.toml", config);
    setup.repo.commit_all("two servers");
    setup
}

/// The entry of server `name` in a monorepo report.
pub(crate) fn server<'a>(report: &'a Value, name: &str) -> &'a Value {
    report["servers"]
        .as_array()
        .unwrap_or_else(|| panic!("no servers in {report:#}"))
        .iter()
        .find(|s| s["name"] == name)
        .map(|s| &s["report"])
        .unwrap_or_else(|| panic!("no server {name} in {report:#}"))
}

pub(crate) fn names(report: &Value) -> Vec<String> {
    report["servers"]
        .as_array()
        .unwrap()
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

/// The API server's `close_issue` said worse, and the fake dropping it on every pair.
pub(crate) fn api_falls(setup: &Setup) {
    setup.repo.write(
        "api/tools.json",
        &pretty(&with_description(&api_tools(), "close_issue", WORSE)),
    );
    setup
        .fake
        .control(script(vec![tool_rule("close_issue", Some(WORSE), None, 2)]));
}

pub(crate) fn assert_unscored_pass(report: &Value) {
    assert_eq!(report["decision"], "pass", "{report:#}");
    assert_eq!(report["scored"], false);
    assert_eq!(report["pairs"], json!([]));
    assert_eq!(report["calls"]["attempts"], 0);
    assert_eq!(report["base"]["setHash"], report["head"]["setHash"]);
}

#[test]
fn one_server_falls_blocks_naming_it_and_the_other_passes_without_a_model_call() {
    let setup = monorepo(TWO_SERVERS);
    api_falls(&setup);
    let run = setup.gate(&[]);
    run.assert_code(1);
    assert!(
        run.stdout
            .starts_with("BLOCK: 1 of 2 servers fell (`api`): `api` BLOCK, `web` PASS."),
        "{}",
        run.describe()
    );
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "block");
    assert_eq!(report["exitCode"], 1);
    assert_eq!(report["scored"], true);
    assert_eq!(names(&report), vec!["api", "web"]);
    assert_eq!(
        report["reason"],
        "1 of 2 servers fell (`api`): `api` BLOCK, `web` PASS."
    );

    let api = server(&report, "api");
    assert_eq!(api["decision"], "block");
    assert_eq!(api["causes"]["tools"][0]["tool"], "close_issue");
    assert_eq!(api["pairs"].as_array().unwrap().len(), 3);
    assert_unscored_pass(server(&report, "web"));

    // Every model call was about the api server: no prompt names a web tool.
    let calls = setup.fake.calls();
    assert_eq!(
        calls.len() as u64,
        api["calls"]["attempts"].as_u64().unwrap()
    );
    for call in &calls {
        let stdin = call["stdin"].as_str().unwrap();
        assert!(
            !stdin.contains("web_"),
            "a web tool reached the judge: {stdin}"
        );
    }
    // One preflight and one prompt fetch for the run.
    assert_eq!(setup.spec.request_count(), 1);

    let markdown = run.markdown();
    assert!(
        markdown.starts_with("## ❌ Tool definition score: BLOCK\n"),
        "{markdown}"
    );
    let api_at = markdown
        .find("### ❌ Server `api`: BLOCK")
        .expect(&markdown);
    let web_at = markdown.find("### ✅ Server `web`: PASS").expect(&markdown);
    assert!(api_at < web_at);
    assert!(
        markdown.contains("#### What fell on the first pair"),
        "{markdown}"
    );
    // One page for the run: the overall verdict, then each server's section under its name.
    let html = run.html();
    assert_eq!(
        html.matches("<section class=\"server\"").count(),
        2,
        "{html}"
    );
    assert!(html.contains("data-decision=\"block\""), "{html}");
    let api_html = html.find("· <code>api</code>").expect(&html);
    let web_html = html.find("· <code>web</code>").expect(&html);
    assert!(api_html < web_html);
    assert!(html.contains("<title>Tool definition score: BLOCK</title>"));
    let version = report["generator"]["version"].as_str().unwrap();
    assert_snapshot("monorepo-block", &redact(&markdown, version, setup.work()));
}

#[test]
fn both_unchanged_pass_without_a_model_call() {
    // Each server's setup logs the base tree it runs in (the head has a marker file).
    let work = tempfile::tempdir().unwrap();
    let log = work.path().join("base-trees.log");
    let record = format!(
        "\"sh -c 'test -e HEAD_MARKER || pwd >> {}'\"",
        log.display()
    );
    let config = TWO_SERVERS.replace(
        "[[server]]\nname = \"web\"",
        &format!("setup = [{record}]\n\n[[server]]\nname = \"web\""),
    ) + &format!("setup = [\"true\", {record}]\n");
    let setup = monorepo(&config);
    setup.repo.write("HEAD_MARKER", "the head\n");
    // Unsandboxed: the setup logs its tree into the test's folder, outside any sandbox's view.
    let run = setup.gate(&["-v", "--sandbox", "off"]);
    run.assert_code(0);
    // One base worktree for both servers.
    let trees: Vec<String> = std::fs::read_to_string(&log)
        .unwrap()
        .lines()
        .map(String::from)
        .collect();
    assert_eq!(trees.len(), 2, "{trees:?}");
    assert_eq!(trees[0], trees[1], "each server got its own base tree");
    // Progress lines name the server as well as the side.
    for side in ["base", "head"] {
        let line = format!("tdqs-gate: web {side} setup 1/2: `true`\n");
        assert!(run.stderr.contains(&line), "{line:?}: {}", run.describe());
    }
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "pass");
    assert_eq!(report["scored"], false);
    assert_eq!(
        report["reason"],
        "2 of 2 servers pass: `api` PASS, `web` PASS."
    );
    for name in ["api", "web"] {
        assert_unscored_pass(server(&report, name));
    }
    // The judge ran its preflight before the exports, and was asked nothing.
    assert!(setup.fake.calls().is_empty(), "{:?}", setup.fake.log());
    assert_eq!(
        setup.spec.request_count(),
        0,
        "the specification was fetched"
    );
}

#[test]
fn github_outputs_give_the_overall_and_each_server_verdict() {
    let setup = monorepo(TWO_SERVERS);
    api_falls(&setup);
    let outputs = setup.work().join("github-output");
    let summary = setup.work().join("github-summary");
    let run = setup.gate_with(&[], |command| {
        command
            .env("GITHUB_OUTPUT", &outputs)
            .env("GITHUB_STEP_SUMMARY", &summary);
    });
    run.assert_code(1);
    let text = std::fs::read_to_string(&outputs).unwrap();
    for line in [
        "decision=block\n",
        "scored=true\n",
        "decision-api=block\n",
        "decision-web=pass\n",
    ] {
        assert!(text.contains(line), "{line:?} missing from {text}");
    }
    assert!(text.contains(&format!("report={}\n", run.report_path().display())));
    assert_eq!(
        std::fs::read_to_string(&summary).unwrap(),
        run.markdown() + "\n"
    );
}

/// Live processes whose command line contains `marker`.
fn processes_with(marker: &str) -> Vec<String> {
    let mut found = Vec::new();
    for entry in std::fs::read_dir("/proc").unwrap().flatten() {
        if !entry
            .file_name()
            .to_string_lossy()
            .chars()
            .all(|c| c.is_ascii_digit())
        {
            continue;
        }
        let Ok(cmdline) = std::fs::read(entry.path().join("cmdline")) else {
            continue;
        };
        let cmdline = String::from_utf8_lossy(&cmdline).replace('\0', " ");
        let pid: i64 = entry.file_name().to_string_lossy().parse().unwrap();
        if cmdline.contains(marker) && alive(pid) {
            found.push(cmdline);
        }
    }
    found
}

#[test]
fn a_crashing_server_is_invalid_the_other_still_reported_nothing_left() {
    // `web` leaves a child behind and dies before answering; `api` changed for the worse.
    let marker = format!("sleep 30{}", std::process::id() % 1000 + 1000);
    let config = format!(
        "[[server]]\nname = \"web\"\ncommand = [\"sh\", \"-c\", \"{marker} >/dev/null 2>&1 & echo crashed >&2; exit 3\"]\n\n\
         [[server]]\nname = \"api\"\ncommand = \"python3 {{root}}/api/server.py\"\n"
    );
    let setup = monorepo(&config);
    api_falls(&setup);
    let run = setup.gate(&[]);
    run.assert_code(2);
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "invalid");
    assert_eq!(report["exitCode"], 2);
    assert_eq!(names(&report), vec!["web", "api"]);
    let web = server(&report, "web");
    assert_eq!(web["decision"], "invalid");
    assert_eq!(web["error"]["stage"], "export");
    // The other server was still decided, in full.
    assert_eq!(server(&report, "api")["decision"], "block");
    assert!(
        report["reason"].as_str().unwrap()
            == "1 of 2 servers could not be decided (`web`): `web` INVALID, `api` BLOCK.",
        "{report:#}"
    );
    assert!(
        run.stderr.contains("tdqs-gate: server `web`: INVALID:"),
        "{}",
        run.describe()
    );
    // Every process the server started has ended (the worktree and temporary folder are
    // checked by the harness).
    let left = processes_with(&marker);
    assert!(left.is_empty(), "left running: {left:?}");
}

#[test]
fn server_selects_tables_and_unknown_names_are_invalid() {
    let setup = monorepo(TWO_SERVERS);
    api_falls(&setup);
    let run = setup.gate(&["--server", "web"]);
    run.assert_code(0);
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(names(&report), vec!["web"]);
    assert!(setup.fake.calls().is_empty());

    let run = setup.gate(&["--server", "nope"]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("no [[server]] table named `nope`") && run.stderr.contains("api, web"),
        "{}",
        run.describe()
    );
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "invalid");
    assert_eq!(report["servers"], json!([]));
    assert_eq!(report["error"]["stage"], "usage");
}

#[test]
fn duplicate_names_and_mixed_tables_are_rejected() {
    for (config, expected) in [
        (
            "[[server]]\nname = \"api\"\ncommand = \"a\"\n[[server]]\nname = \"api\"\ncommand = \"b\"\n",
            "two [[server]] tables are named `api`",
        ),
        (
            "[server]\ncommand = \"a\"\n[[server]]\nname = \"b\"\ncommand = \"b\"\n",
            "[server] (line 1) and [[server]] (line 3) are both used",
        ),
    ] {
        let setup = monorepo(config);
        let run = setup.gate(&[]);
        run.assert_code(2);
        assert!(run.stderr.contains(expected), "{}", run.describe());
        assert!(!setup.fake.ever_started());
    }
}

#[test]
fn check_rechecks_a_two_server_report() {
    let setup = monorepo(TWO_SERVERS);
    api_falls(&setup);
    let run = setup.gate(&[]);
    run.assert_code(1);
    let calls = setup.fake.calls().len();
    let path = run.report_path();
    let mut args = vec!["--check".to_string(), path.display().to_string()];
    args.extend(setup.judge_args());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();

    let check = setup.run(&refs);
    check.assert_code(1);
    assert!(
        check
            .stdout
            .starts_with("BLOCK: 1 of 2 servers fell (`api`): `api` BLOCK, `web` PASS."),
        "{}",
        check.describe()
    );
    assert_eq!(setup.fake.calls().len(), calls, "--check called the model");

    // A server's verdict edited to PASS: the overall verdict no longer follows.
    let mut edited = run.report();
    edited["servers"][0]["report"]["decision"] = json!("pass");
    edited["servers"][0]["report"]["exitCode"] = json!(0);
    let edited_path = setup.work().join("edited.json");
    std::fs::write(&edited_path, pretty(&edited)).unwrap();
    let mut args = vec!["--check".to_string(), edited_path.display().to_string()];
    args.extend(setup.judge_args());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let check = setup.run(&refs);
    check.assert_code(2);
    assert!(
        check.stderr.contains("server `api`"),
        "{}",
        check.describe()
    );

    // The web server changed since the report.
    setup.repo.write(
        "web/tools.json",
        &pretty(&with_description(&web_tools(), "web_close_issue", WORSE)),
    );
    let mut args = vec!["--check".to_string(), path.display().to_string()];
    args.extend(setup.judge_args());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let check = setup.run(&refs);
    check.assert_code(2);
    assert!(
        check.stderr.contains("server `web`") && check.stderr.contains("changed since the report"),
        "{}",
        check.describe()
    );
}

#[test]
fn several_server_flags_gate_host_manifest_entries() {
    let setup = monorepo("[server]\nisolate-home = true\n");
    setup.repo.write(
        ".mcp.json",
        &pretty(&json!({"mcpServers": {
            "api": {"command": "python3", "args": ["api/server.py"]},
            "web": {"command": "python3", "args": ["web/server.py"]},
        }})),
    );
    setup.repo.commit_all("manifest");
    api_falls(&setup);
    let run = setup.gate(&["--server", "web", "--server", "api"]);
    run.assert_code(1);
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(names(&report), vec!["web", "api"]);
    assert_unscored_pass(server(&report, "web"));
    assert_eq!(server(&report, "api")["decision"], "block");
    assert!(server(&report, "api")["head"]["source"]["origin"]
        .as_str()
        .unwrap()
        .contains("api"));

    // The same name twice is a mistake, not two servers.
    let run = setup.gate(&["--server", "web", "--server", "web"]);
    run.assert_code(2);
    assert!(
        run.stderr.contains("--server web is given twice"),
        "{}",
        run.describe()
    );
}

#[test]
fn export_picks_one_table_by_name() {
    let setup = monorepo(TWO_SERVERS);
    let out = setup.work().join("web.json");
    let run = setup.run_raw(
        &[
            "export".to_string(),
            "--server".to_string(),
            "web".to_string(),
            "--output".to_string(),
            out.display().to_string(),
        ],
        setup.work().join("unused"),
        |_| {},
    );
    run.assert_code(0);
    let export: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
    let tools = export["tools"].as_array().unwrap();
    assert_eq!(tools.len(), 4);
    assert!(
        tools
            .iter()
            .all(|t| t["name"].as_str().unwrap().starts_with("web_")),
        "{export:#}"
    );

    let run = setup.run_raw(&["export".to_string()], setup.work().join("unused"), |_| {});
    run.assert_code(2);
    assert!(
        run.stderr.contains("several [[server]] tables (api, web)")
            && run.stderr.contains("--server NAME"),
        "{}",
        run.describe()
    );
}

#[test]
fn a_judge_that_cannot_run_fails_only_the_changed_server() {
    let setup = monorepo(TWO_SERVERS);
    api_falls(&setup);
    let missing = setup.work().join("no-such-claude");
    let pins = standin_pins();
    let args = [
        "--base",
        "main",
        "--claude",
        missing.to_str().unwrap(),
        "--pins",
        pins.to_str().unwrap(),
        "--sandbox",
        "off",
    ];
    // Outside CI the judge is checked before any server is exported, and the run stops there.
    let local = setup.run(&args);
    local.assert_code(2);
    assert_eq!(local.report()["servers"], json!([]), "{}", local.describe());
    assert!(
        local.stderr.contains("--judge static"),
        "{}",
        local.describe()
    );
    // In CI (a fork's pull request has no secrets) only the changed server needs the judge.
    let run = setup.run_with(&args, |c| {
        c.env("CI", "true");
    });
    run.assert_code(2);
    let report = run.report();
    assert_schema_valid(&report);
    let api = server(&report, "api");
    assert_eq!(api["decision"], "invalid");
    assert!(
        api["reason"]
            .as_str()
            .unwrap()
            .starts_with("the definitions changed and need a judge, but the judge cannot run"),
        "{api:#}"
    );
    assert_unscored_pass(server(&report, "web"));
    assert_eq!(report["decision"], "invalid");
}

/// The bundled example's careful or careless tool set (`examples/issue-tracker/`).
fn static_fixture(name: &str) -> Value {
    let path = manifest_dir()
        .join("../examples/issue-tracker")
        .join(format!("{name}.json"));
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

#[test]
fn identical_servers_are_scored_as_if_alone_and_check_agrees() {
    // Two servers with the same tools, made careless the same way: the second must not reuse
    // the first one's answers (its report would then differ from a run over it alone).
    let setup = monorepo(TWO_SERVERS);
    for dir in ["api", "web"] {
        setup.repo.write(
            &format!("{dir}/tools.json"),
            &pretty(&static_fixture("careful")),
        );
    }
    setup.repo.commit_all("careful tools");
    for dir in ["api", "web"] {
        setup.repo.write(
            &format!("{dir}/tools.json"),
            &pretty(&static_fixture("careless")),
        );
    }
    let run = setup.run(&["--base", "main", "--judge", "static"]);
    run.assert_code(1);
    let report = run.report();
    assert_schema_valid(&report);
    let (api, web) = (server(&report, "api"), server(&report, "web"));
    assert_eq!(api["decision"], "block");
    assert_eq!(web["decision"], "block");
    assert_eq!(
        api["calls"], web["calls"],
        "the second server reused answers"
    );

    let path = run.report_path().display().to_string();
    let check = setup.run(&["--check", &path, "--judge", "static"]);
    check.assert_code(1);
}

#[test]
fn a_server_the_head_drops_from_the_config_is_invalid_not_ungated() {
    // The change deletes web's table (and could then make web's tools worse unseen).
    let setup = monorepo(TWO_SERVERS);
    let api_only =
        TWO_SERVERS[..TWO_SERVERS.find("[[server]]\nname = \"web\"").unwrap()].to_string();
    setup.repo.write("tdqs-gate.toml", &api_only);
    let run = setup.gate(&[]);
    run.assert_code(2);
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "invalid");
    assert_eq!(names(&report), vec!["api", "web"]);
    assert_unscored_pass(server(&report, "api"));
    let web = server(&report, "web");
    assert_eq!(web["decision"], "invalid");
    let cause = web["error"]["cause"].as_str().unwrap();
    assert!(
        cause.contains(
            "server `web` is in the base revision's tdqs-gate.toml but not in the head's"
        ),
        "{cause}"
    );
    assert!(web["error"]["advice"]
        .as_str()
        .unwrap()
        .contains("--server"));
    assert!(
        run.stderr.contains("`api` PASS, `web` INVALID."),
        "{}",
        run.describe()
    );

    // Servers named by the workflow: the removal is intended, and api alone is gated.
    let run = setup.gate(&["--server", "api"]);
    run.assert_code(0);
    assert_eq!(names(&run.report()), vec!["api"]);
}

#[test]
fn a_large_server_is_summarised_and_check_agrees() {
    // api lists 60 tools (over the 50 a report lists in full); one of them changes.
    let many: Vec<Value> = (0..60)
        .map(|i| {
            json!({
                "name": format!("record_{i:02}"),
                "description": format!("Returns record {i} of the archive. Use it to read one record; it changes nothing."),
                "inputSchema": {"type": "object", "properties": {}},
                "annotations": {"readOnlyHint": true}
            })
        })
        .collect();
    let setup = monorepo(TWO_SERVERS);
    setup
        .repo
        .write("api/tools.json", &pretty(&Value::Array(many.clone())));
    setup.repo.commit_all("a large api");
    let mut head = many;
    head[7]["description"] = json!("Returns a record.");
    setup
        .repo
        .write("api/tools.json", &pretty(&Value::Array(head)));
    let run = setup.run(&["--base", "main", "--judge", "static"]);
    assert!(run.code == 0 || run.code == 1, "{}", run.describe());
    let report = run.report();
    assert_schema_valid(&report);
    let api = server(&report, "api");
    assert_eq!(api["omitted"]["count"], 59, "{api:#}");
    assert_eq!(api["head"]["tools"].as_array().unwrap().len(), 1);

    let path = run.report_path().display().to_string();
    let check = setup.run(&["--check", &path, "--judge", "static"]);
    check.assert_code(run.code);

    // --full-report lists all 60.
    let full = setup.run(&["--base", "main", "--judge", "static", "--full-report"]);
    let report = full.report();
    assert!(server(&report, "api").get("omitted").is_none());
    assert_eq!(
        server(&report, "api")["head"]["tools"]
            .as_array()
            .unwrap()
            .len(),
        60
    );
}
