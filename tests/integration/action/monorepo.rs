//! The GitHub Action on a repository with several servers (`[[server]]` tables) gated
//! in one run of the Action. The export step (no token) writes one export file per server and
//! side; the scoring step gates the two folders into one report, with one verdict per server and
//! the overall one.

use super::*;

const TOKEN: &str = "sk-ant-api03-monorepo-action-token-value";

/// The composite `decisions` output as JSON.
fn decisions(run: &ActionRun) -> Value {
    serde_json::from_str(&run.outputs["decisions"])
        .unwrap_or_else(|e| panic!("decisions {:?}: {e}", run.outputs["decisions"]))
}

fn server_names(report: &Value) -> Vec<String> {
    report["servers"]
        .as_array()
        .unwrap_or_else(|| panic!("not a report over several servers: {report:#}"))
        .iter()
        .map(|s| s["name"].as_str().unwrap().to_string())
        .collect()
}

#[test]
fn one_server_falls_blocks_with_a_verdict_per_server_in_one_report() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("mono-worse");
    let (api, requests) = comments_api(vec![], 201);
    let t = temp();
    let job = pull_request_job(
        &workspace,
        t.path(),
        &[("judge", "static"), ("comment", "true"), ("token", TOKEN)],
        &api.url(""),
    );
    let run = runner::run(&job);
    let log = run.log();
    assert_consistent(&run, "block", 1);
    assert_eq!(run.outputs["exit-code"], "1");
    assert_eq!(run.outputs["scored"], "true");
    assert_eq!(
        decisions(&run),
        json!({"api": "block", "web": "pass"}),
        "{log}"
    );
    let gate = run.step("gate");
    assert_eq!(gate.outputs["decision-api"], "block", "{log}");
    assert_eq!(gate.outputs["decision-web"], "pass", "{log}");

    // Each server of each side was exported in the step without the token, into its own file.
    let export = run.step("export");
    let exports = PathBuf::from(&run.step("prepare").outputs["exports-dir"]);
    for side in ["base", "head"] {
        for name in ["api", "web"] {
            assert!(
                exports.join(side).join(format!("{name}.json")).is_file(),
                "{side} {name}: {log}"
            );
        }
        assert!(
            export.log.contains(&format!(
                "tdqs-gate ci export: 2 of the {side} side's exports written"
            )),
            "{log}"
        );
    }
    // Every server ran in the export step, which holds no token.
    assert!(export.env.values().all(|v| !v.contains(TOKEN)), "{log}");
    assert_eq!(
        export.log.matches("tdqs-gate: exported ").count(),
        4,
        "two servers, two sides:\n{log}"
    );
    // The step with the token read the two folders and started no server.
    assert!(gate.env.values().any(|v| v.contains(TOKEN)));
    assert!(!gate.log.contains("tdqs-gate: exported "), "{log}");
    let command = gate
        .log
        .lines()
        .find(|l| l.starts_with("tdqs-gate action: tdqs-gate "))
        .unwrap_or_else(|| panic!("no command line:\n{log}"));
    assert!(command.contains(" ci score --base-dir="), "{command}");
    assert!(command.contains(" --head-dir="), "{command}");
    for flag in [" --base=", " --base-export=", " --command", " --server"] {
        assert!(!command.contains(flag), "{flag} in {command}");
    }
    assert!(!log.contains(TOKEN), "the token reached the log");

    // One report, in one artifact: the overall verdict and both servers.
    let report_path = PathBuf::from(&run.outputs["report"]);
    let report: Value = serde_json::from_str(&read(&report_path)).expect("report JSON");
    assert_eq!(report["decision"], "block");
    assert_eq!(server_names(&report), vec!["api", "web"]);
    assert_eq!(report["servers"][0]["report"]["decision"], "block");
    assert_eq!(report["servers"][1]["report"]["decision"], "pass");
    assert_eq!(report["servers"][1]["report"]["scored"], false);
    let uploaded = run.artifacts.join("tool-definition-score");
    for file in [
        "tool-definition-score.json",
        "tool-definition-score.md",
        "tool-definition-score.html",
    ] {
        assert!(uploaded.join(file).is_file(), "{file}");
    }

    // The sticky comment: the overall line, then a row per server.
    let requests = requests.lock().unwrap().clone();
    let posts: Vec<&Request> = requests.iter().filter(|r| r.method == "POST").collect();
    assert_eq!(posts.len(), 1, "{requests:?}");
    let body: Value = serde_json::from_slice(&posts[0].body).expect("JSON body");
    let text = body["body"].as_str().unwrap();
    assert!(text.contains("Tool definition score: BLOCK"), "{text}");
    assert!(text.contains("1 of 2 servers fell"), "{text}");
    assert!(text.contains("| `api` | ❌ BLOCK |"), "{text}");
    assert!(text.contains("| `web` | ✅ PASS |"), "{text}");
    assert!(run
        .errors()
        .iter()
        .any(|a| a.title == "tdqs-gate: BLOCK" && a.message.contains("`api` BLOCK")));

    // The report stands when checked against the same export folders.
    let checked = Command::new(GATE)
        .arg("--check")
        .arg(&report_path)
        .arg(format!("--base-exports={}", exports.join("base").display()))
        .arg(format!("--head-exports={}", exports.join("head").display()))
        .args(["--judge", "static"])
        .current_dir(&workspace)
        .output()
        .expect("run the check");
    assert_eq!(
        checked.status.code(),
        Some(1),
        "{}",
        String::from_utf8_lossy(&checked.stderr)
    );
}

#[test]
fn both_unchanged_pass_without_a_model_call() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("mono-unchanged");
    let claude = FakeClaude::new(false);
    let t = temp();
    let mut job = pull_request_job(&workspace, t.path(), &[], "http://127.0.0.1:9");
    let run = claude.run_action(&mut job);
    let log = run.log();
    assert_consistent(&run, "pass", 0);
    assert_eq!(run.outputs["scored"], "false");
    assert_eq!(
        decisions(&run),
        json!({"api": "pass", "web": "pass"}),
        "{log}"
    );
    let report: Value = serde_json::from_str(&read(Path::new(&run.outputs["report"]))).unwrap();
    assert_eq!(server_names(&report), vec!["api", "web"]);
    assert!(
        run.summary.contains("2 of 2 servers pass"),
        "{}",
        run.summary
    );
    // No model was needed: the CLI was never asked anything.
    assert!(claude.runs().iter().all(|r| r["kind"] != "call"), "{log}");
}

#[test]
fn a_new_server_passes_and_a_broken_one_is_invalid_alone() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("mono-unchanged");
    // The pull request adds a server `new` (not in the base's tdqs-gate.toml) and breaks `web`.
    std::fs::create_dir_all(workspace.join("new")).unwrap();
    for file in ["server.py", "tools.json"] {
        std::fs::copy(
            workspace.join("api").join(file),
            workspace.join("new").join(file),
        )
        .unwrap();
    }
    let config = read(&workspace.join("tdqs-gate.toml"))
        + "\n[[server]]\nname = \"new\"\ncommand = \"python3 {root}/new/server.py\"\n";
    std::fs::write(workspace.join("tdqs-gate.toml"), config).unwrap();
    std::fs::write(
        workspace.join("web/server.py"),
        "import sys\nsys.stderr.write('web: no registry\\n')\nsys.exit(3)\n",
    )
    .unwrap();
    let t = temp();
    let job = pull_request_job(
        &workspace,
        t.path(),
        &[("judge", "static")],
        "http://127.0.0.1:9",
    );
    let run = runner::run(&job);
    let log = run.log();
    assert_consistent(&run, "invalid", 2);
    assert_eq!(
        decisions(&run),
        json!({"api": "pass", "new": "pass", "web": "invalid"}),
        "{log}"
    );
    assert!(log.contains("tdqs-gate: exported new"), "{log}");
    let report: Value = serde_json::from_str(&read(Path::new(&run.outputs["report"]))).unwrap();
    let web = &report["servers"][2]["report"];
    assert!(
        web["reason"]
            .as_str()
            .unwrap()
            .contains("the head export of server `web` failed"),
        "{web:#}"
    );
    let new = &report["servers"][1]["report"];
    assert_eq!(new["decision"], "pass", "{new:#}");
    assert_eq!(new["base"]["tools"], json!([]));
}

#[test]
fn a_fork_without_a_token_gets_the_fork_hint_for_the_changed_server() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("mono-worse");
    let claude = FakeClaude::new(false);
    let t = temp();
    let mut job = pull_request_job(&workspace, t.path(), &[], &refused_url(""));
    let run = claude.run_action(&mut job);
    let log = run.log();
    assert_consistent(&run, "invalid", 2);
    // The unchanged server still passes; only the changed one needed the judge.
    assert_eq!(
        decisions(&run),
        json!({"api": "invalid", "web": "pass"}),
        "{log}"
    );
    let report: Value = serde_json::from_str(&read(Path::new(&run.outputs["report"]))).unwrap();
    assert_eq!(report["servers"][0]["report"]["error"]["stage"], "judge");
    // The stage is in the server's report, not the run's: the hint is still given.
    assert!(
        run.summary
            .contains("A pull request from a fork gets no repository secrets"),
        "{}",
        run.summary
    );
    assert!(claude.runs().iter().all(|r| r["kind"] != "call"));
}

#[test]
fn a_server_the_pull_request_drops_from_the_config_is_invalid() {
    let fixtures = Fixtures::new();
    let workspace = fixtures.clone("mono-unchanged");
    // The pull request deletes web's table: web would otherwise leave the gate unseen.
    let config = read(&workspace.join("tdqs-gate.toml"));
    let start = config.find("[[server]]\nname = \"web\"").expect(&config);
    let end = config[start + 1..]
        .find("[[server]]")
        .map_or(config.len(), |i| start + 1 + i);
    let config = format!("{}{}", &config[..start], &config[end..]);
    std::fs::write(workspace.join("tdqs-gate.toml"), config).unwrap();
    let t = temp();
    let job = pull_request_job(
        &workspace,
        t.path(),
        &[("judge", "static")],
        "http://127.0.0.1:9",
    );
    let run = runner::run(&job);
    let log = run.log();
    assert_consistent(&run, "invalid", 2);
    assert_eq!(
        decisions(&run),
        json!({"api": "pass", "web": "invalid"}),
        "{log}"
    );
    let report: Value = serde_json::from_str(&read(Path::new(&run.outputs["report"]))).unwrap();
    let web = &report["servers"][1]["report"];
    assert!(
        web["reason"]
            .as_str()
            .unwrap()
            .contains("server `web` has an export in the base folder but none in the head folder"),
        "{web:#}"
    );
}
