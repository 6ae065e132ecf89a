//! The gate's settings belong to the base revision: each case of "what the head's configuration
//! decided" (security review, round 3), reproduced end to end. The head's `tdqs-gate.toml` only
//! says how the head's own server starts; its settings are ignored and reported first, and a
//! launch plan that widens what the base allows, or names the working tree by an absolute path,
//! is refused before anything runs.

use std::path::Path;

use serde_json::{json, Value};

use crate::gate::harness::{
    base_tools, script, tool_rule, twelve_tools, with_description, Run, Setup,
};

const WORSE: &str = "Closes an issue.";
const BASE_CONFIG: &str = "[server]\ncommand = \"python3 {root}/server.py\"\n";
const TOKEN: &str = "ghp_r3BaseOwnedSettings0123456789abcdef";
const OIDC: &str = "oidc-r3-request-token-0123456789abcdef";
const AGENT: &str = "/tmp/r3-base-owned-agent.sock";

/// The gate with the fake judge and `adjust` applied to its command.
fn gate_with(setup: &Setup, adjust: impl FnOnce(&mut std::process::Command)) -> Run {
    setup.gate_with(&[], adjust)
}

/// The report's first warning (the configuration change comes first).
fn first_warning(report: &Value) -> String {
    report["warnings"][0].as_str().unwrap_or("").to_string()
}

#[test]
fn a_head_tool_drop_of_4_does_not_let_a_falling_tool_pass() {
    // close_issue falls 4.0 → 3.4 on every pair; the base's guard (0.5) BLOCKs it. Before, the
    // head's `tool-drop = 4.0` decided, and the fall passed.
    let base = twelve_tools();
    let setup = Setup::new(&base);
    setup.set_head(&with_description(&base, "close_issue", WORSE));
    setup.repo.write(
        "tdqs-gate.toml",
        &format!("{BASE_CONFIG}\n[decision]\ntool-drop = 4.0\n"),
    );
    let mut lower = tool_rule("close_issue", Some(WORSE), None, 4);
    lower["scores"] = json!({"purpose_clarity": 2, "conciseness_structure": 3});
    setup.fake.control(script(vec![lower]));
    let run = setup.gate(&[]);
    run.assert_code(1);
    let report = run.report();
    assert_eq!(report["decisionRule"]["toolDrop"], 0.5);
    let first = first_warning(&report);
    assert!(
        first.contains("[decision] tool-drop") && first.contains("ignored"),
        "{first}"
    );
    // The base's own setting applies once merged.
    setup.repo.git(["add", "tdqs-gate.toml"]);
    setup.repo.git(["commit", "-q", "-m", "raise the guard"]);
    let merged = setup.gate(&[]);
    merged.assert_code(0);
    assert_eq!(merged.report()["decisionRule"]["toolDrop"], 4.0);
}

#[test]
fn a_head_setup_in_place_does_not_run_its_setup_in_the_users_checkout() {
    let setup = Setup::new(&base_tools());
    setup
        .repo
        .write("notes.txt", "untracked work in progress\n");
    setup.repo.write(
        "tdqs-gate.toml",
        &format!(
            "{BASE_CONFIG}setup-in-place = true\nsetup = [[\"sh\", \"-c\", \"rm -f notes.txt\"]]\n"
        ),
    );
    // The harness fails the run if any file of the checkout changed.
    let run = setup.gate(&[]);
    run.assert_code(0);
    assert_eq!(
        std::fs::read_to_string(setup.repo.path.join("notes.txt")).unwrap(),
        "untracked work in progress\n"
    );
    assert!(
        first_warning(&run.report()).contains("[server] setup-in-place"),
        "{}",
        run.describe()
    );
}

/// A head plan that dumps its server's environment to `dump` and then serves as the base does.
fn dumping_plan(dump: &Path, extra: &str) -> String {
    format!(
        "[server]\ncommand = \"sh\"\nargs = ['-c', 'env > {}; exec python3 \"$0/server.py\"', '{{root}}']\n{extra}",
        dump.display()
    )
}

/// The gate's environment holds the runner's credentials. Unsandboxed, so that the server's
/// dump of its environment lands in the test's folder (the sandbox hides it, and builds the
/// server's environment from nothing anyway: tested in `sandbox.rs`); what is tested here is
/// that the head's settings cannot ask for them.
fn with_credentials(command: &mut std::process::Command, home: &Path) {
    command
        .env("TDQS_GATE_SANDBOX", "off")
        .env("GITHUB_TOKEN", TOKEN)
        .env("ACTIONS_ID_TOKEN_REQUEST_TOKEN", OIDC)
        .env("SSH_AUTH_SOCK", AGENT)
        .env("HOME", home);
}

fn assert_no_secret(run: &Run) {
    let mut all = format!("{}{}", run.stdout, run.stderr);
    if let Ok(text) = std::fs::read_to_string(run.report_path()) {
        all.push_str(&text);
    }
    for secret in [TOKEN, OIDC] {
        assert!(!all.contains(secret), "{secret} shown: {}", run.describe());
    }
}

#[test]
fn a_head_cannot_hand_the_runners_credentials_or_the_agent_to_its_server() {
    let setup = Setup::new(&base_tools());
    let home = setup.work().join("real-home");
    std::fs::create_dir_all(&home).unwrap();
    let dump = setup.work().join("head-env.txt");

    // pass-env and isolate-home = false on the head: ignored, reported first.
    setup.repo.write(
        "tdqs-gate.toml",
        &dumping_plan(
            &dump,
            "pass-env = [\"GITHUB_TOKEN\", \"ACTIONS_ID_TOKEN_REQUEST_TOKEN\", \"SSH_AUTH_SOCK\"]\nisolate-home = false\n",
        ),
    );
    let run = gate_with(&setup, |c| with_credentials(c, &home));
    run.assert_code(0);
    let env = std::fs::read_to_string(&dump).expect("the head's server ran");
    for secret in [TOKEN, OIDC, AGENT] {
        assert!(!env.contains(secret), "{secret} reached the server:\n{env}");
    }
    let server_home = env
        .lines()
        .find_map(|l| l.strip_prefix("HOME="))
        .expect("HOME");
    assert_ne!(
        Path::new(server_home),
        home,
        "the real HOME reached the server"
    );
    let first = first_warning(&run.report());
    assert!(
        first.contains("[server] pass-env") && first.contains("[server] isolate-home"),
        "{first}"
    );
    assert_no_secret(&run);

    // A reference to a variable the base does not give a server: refused before anything runs.
    for extra in [
        "env = { X = \"${GITHUB_TOKEN}\" }",
        "env = { OIDC = \"${ACTIONS_ID_TOKEN_REQUEST_TOKEN:-none}\" }",
        "env = { SSH_AUTH_SOCK = \"${env:SSH_AUTH_SOCK}\" }",
    ] {
        let _ = std::fs::remove_file(&dump);
        setup
            .repo
            .write("tdqs-gate.toml", &dumping_plan(&dump, extra));
        let run = gate_with(&setup, |c| with_credentials(c, &home));
        run.assert_code(2);
        assert!(
            run.stderr.contains("gives no server") && run.stderr.contains("base revision"),
            "{extra}: {}",
            run.describe()
        );
        assert!(!dump.exists(), "{extra}: the head's server started");
        assert_no_secret(&run);
    }

    // The same reference in the base's own plan is the base's decision: allowed on both sides.
    setup.repo.write(
        "tdqs-gate.toml",
        &format!("{BASE_CONFIG}env = {{ X = \"${{GITHUB_TOKEN}}\" }}\n"),
    );
    setup.repo.git(["add", "tdqs-gate.toml"]);
    setup
        .repo
        .git(["commit", "-q", "-m", "the server needs the token"]);
    setup.repo.write(
        "tdqs-gate.toml",
        &dumping_plan(&dump, "env = { X = \"${GITHUB_TOKEN}\" }"),
    );
    gate_with(&setup, |c| with_credentials(c, &home)).assert_code(0);
    assert!(std::fs::read_to_string(&dump).unwrap().contains(TOKEN));
}

const TWO_SERVERS: &str = "[[server]]\nname = \"api\"\ncommand = \"python3 {root}/server.py\"\n\n\
                           [[server]]\nname = \"search\"\ncommand = \"python3 {root}/server.py\"\n";

/// The base gates two servers; a head that drops them from the gate's view must not PASS.
#[test]
fn a_head_cannot_shrink_the_set_of_servers() {
    let setup = Setup::new(&base_tools());
    setup.repo.write("tdqs-gate.toml", TWO_SERVERS);
    setup.repo.commit_all("two servers");
    let invalid_servers = |run: &Run| -> Vec<String> {
        let report = run.report();
        report["servers"]
            .as_array()
            .unwrap_or(&Vec::new())
            .iter()
            .filter(|s| s["report"]["decision"] == "invalid")
            .map(|s| s["name"].as_str().unwrap().to_string())
            .collect()
    };
    // One [server] table instead of the tables.
    setup.repo.write("tdqs-gate.toml", BASE_CONFIG);
    let run = setup.gate(&[]);
    run.assert_code(2);
    assert_eq!(invalid_servers(&run), vec!["api", "search"]);
    assert!(
        run.report().to_string().contains(
            "server `api` is in the base revision's tdqs-gate.toml but not in the head's"
        ),
        "{}",
        run.describe()
    );
    // No tdqs-gate.toml at all, and a host manifest instead.
    setup.repo.remove("tdqs-gate.toml");
    setup.repo.write(
        ".mcp.json",
        "{\"mcpServers\": {\"api\": {\"command\": \"python3\", \"args\": [\"server.py\"]}}}\n",
    );
    let run = setup.gate(&[]);
    run.assert_code(2);
    assert_eq!(invalid_servers(&run), vec!["api", "search"]);
    assert!(
        first_warning(&run.report()["servers"][0]["report"]).contains("the set of servers"),
        "{}",
        run.describe()
    );
}

/// A suite for the four fixture tools (synthetic selection, no model).
const SUITE: &str = "version = 1\n\
[[case]]\nid = \"p-search\"\nrequest = \"Search the issues that mention a login timeout\"\nexpect = \"search_issues\"\nkind = \"positive\"\nprovenance = \"human_fixture\"\n\
[[case]]\nid = \"p-get\"\nrequest = \"Get issue 42 with its full body\"\nexpect = \"get_issue\"\nkind = \"positive\"\nprovenance = \"human_fixture\"\n\
[[case]]\nid = \"p-create\"\nrequest = \"Create a new issue: the signup page crashes\"\nexpect = \"create_issue\"\nkind = \"positive\"\nprovenance = \"human_fixture\"\n\
[[case]]\nid = \"p-close\"\nrequest = \"Close issue 7, it is fixed\"\nexpect = \"close_issue\"\nkind = \"positive\"\nprovenance = \"human_fixture\"\n";

#[test]
fn a_head_that_removes_eval_does_not_turn_the_selection_check_off() {
    let base = base_tools();
    let setup = Setup::new(&base);
    setup.repo.write(
        "tdqs-gate.toml",
        &format!("{BASE_CONFIG}\n[eval]\nmode = \"synthetic\"\n"),
    );
    setup.repo.write("tdqs-eval.toml", SUITE);
    setup.repo.commit_all("selection check on");
    // The head removes [eval] and empties the suite's file, and changes a description.
    setup.repo.write("tdqs-gate.toml", BASE_CONFIG);
    setup.repo.write("tdqs-eval.toml", "version = 1\n");
    setup.set_head(&with_description(&base, "close_issue", WORSE));
    setup.fake.control(script(vec![]));
    let run = setup.gate(&[]);
    let report = run.report();
    assert_eq!(report["eval"]["mode"], "synthetic", "{}", run.describe());
    assert_eq!(report["eval"]["cases"].as_array().unwrap().len(), 4);
    assert!(
        first_warning(&report).contains("[eval]"),
        "{}",
        run.describe()
    );
}

#[test]
fn a_heads_launch_plan_cannot_make_the_base_list_nothing() {
    // The head's plan, applied to the base's tree as well before, served an empty list there
    // (no v2.txt in the base) and the real one in the head: "the base lists no tools", PASS.
    let base = base_tools();
    let setup = Setup::new(&base);
    setup.set_head(&with_description(&base, "close_issue", WORSE));
    setup.repo.write("v2.txt", "the head\n");
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"python3\"\nargs = ['-c', '''\nimport os, runpy, shutil, sys, tempfile\nroot = sys.argv[1]\nd = tempfile.mkdtemp(dir=os.environ[\"HOME\"])\nshutil.copy(root + \"/server.py\", d)\nwith open(d + \"/tools.json\", \"w\") as f:\n    f.write(open(root + \"/tools.json\").read() if os.path.exists(root + \"/v2.txt\") else \"[]\")\nsys.argv = [d + \"/server.py\"]\nrunpy.run_path(d + \"/server.py\", run_name=\"__main__\")\n''', '{root}']\n",
    );
    setup
        .fake
        .control(script(vec![tool_rule("close_issue", Some(WORSE), None, 1)]));
    let run = setup.gate(&[]);
    run.assert_code(1);
    assert!(!run.report()["reason"]
        .as_str()
        .unwrap()
        .contains("lists no tools"));
}

#[test]
fn a_launch_plan_naming_the_working_tree_by_an_absolute_path_is_refused() {
    let base = base_tools();
    let setup = Setup::new(&base);
    // The head deletes a description: with both sides running the working tree's server, the
    // two listings were equal and the gate PASSed.
    setup.set_head(&with_description(&base, "close_issue", ""));
    let repo = setup.repo.path.display().to_string();
    for config in [
        format!("[server]\ncommand = \"python3 {repo}/server.py\"\n"),
        "[server]\ncommand = \"python3 ${PWD}/server.py\"\n".to_string(),
        "[server]\ncommand = \"sh -c 'exec python3 $PWD/server.py'\"\n".to_string(),
        format!("[server]\ncommand = \"python3 {repo}/server.py\"\nenv = {{ X = \"{{root}}\" }}\n"),
        format!("[server]\ncommand = \"python3 {repo}/server.py\"\nsetup = [\"true\"]\n"),
    ] {
        setup.repo.write("tdqs-gate.toml", &config);
        let run = setup.gate(&[]);
        run.assert_code(2);
        assert!(
            run.stderr.contains("{root}") && run.stderr.contains("working tree"),
            "{config}: {}",
            run.describe()
        );
        assert!(!setup.fake.ever_started(), "{config}");
    }
    // The same in the base's own configuration is refused too.
    setup.repo.git(["add", "tdqs-gate.toml"]);
    setup.repo.git(["commit", "-q", "-m", "absolute"]);
    setup.gate(&[]).assert_code(2);
}

/// The export step of a CI job that runs the head's code: `export --settings-rev BASE` applies
/// the base's settings to the head's launch plan, as the gate does.
#[test]
fn export_with_settings_rev_runs_the_heads_plan_under_the_bases_settings() {
    let setup = Setup::new(&base_tools());
    let home = setup.work().join("real-home");
    std::fs::create_dir_all(&home).unwrap();
    let dump = setup.work().join("export-env.txt");
    let out = setup.work().join("head.json").display().to_string();
    let export = |settings: bool| {
        let mut args: Vec<String> = vec!["export".into(), "-o".into(), out.clone()];
        if settings {
            args.extend(["--settings-rev".into(), "main".into()]);
        }
        setup.run_raw(&args, setup.work().join("no-report"), |c| {
            with_credentials(c, &home)
        })
    };
    setup.repo.write(
        "tdqs-gate.toml",
        &dumping_plan(
            &dump,
            "pass-env = [\"GITHUB_TOKEN\"]\nisolate-home = false\n",
        ),
    );
    export(true).assert_code(0);
    let env = std::fs::read_to_string(&dump).unwrap();
    assert!(!env.contains(TOKEN), "{env}");
    // Without it, one revision's export uses that revision's own settings.
    export(false).assert_code(0);
    assert!(std::fs::read_to_string(&dump).unwrap().contains(TOKEN));
    // A reference the base does not make is refused.
    std::fs::remove_file(&dump).unwrap();
    setup.repo.write(
        "tdqs-gate.toml",
        &dumping_plan(&dump, "env = { X = \"${GITHUB_TOKEN}\" }"),
    );
    let refused = export(true);
    refused.assert_code(2);
    assert!(!dump.exists());
    assert_no_secret(&refused);
}

/// The reusable workflow's three steps on this repository: the base job's folder, the head job's
/// folder (the working tree), and the scoring job on the two, which checks out neither side.
fn workflow_steps(setup: &Setup, adjust_folders: impl FnOnce(&Path, &Path)) -> Run {
    let base_dir = setup.work().join("ci-base");
    let head_dir = setup.work().join("ci-head");
    let export = |side: &str, dir: &Path, gate_args: &[&str]| {
        let mut args = vec!["ci", "export", "--side", side, "--output-dir"];
        let dir = dir.display().to_string();
        args.push(&dir);
        args.push("--");
        args.extend(gate_args);
        setup.run(&args).assert_code(0);
    };
    export("base", &base_dir, &["--base", "main"]);
    export("head", &head_dir, &[]);
    adjust_folders(&base_dir, &head_dir);
    let (base_arg, head_arg) = (
        base_dir.display().to_string(),
        head_dir.display().to_string(),
    );
    let mut args: Vec<String> = [
        "ci",
        "score",
        "--base-dir",
        &base_arg,
        "--head-dir",
        &head_arg,
    ]
    .map(String::from)
    .to_vec();
    args.push("--".into());
    args.extend(setup.judge_args());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    setup.run(&refs)
}

/// A setup whose base commit sets `tool-drop = 4.0` and whose head lowers close_issue by 0.6.
fn base_with_loose_guard() -> Setup {
    let base = twelve_tools();
    let setup = Setup::new(&base);
    setup.repo.write(
        "tdqs-gate.toml",
        &format!("{BASE_CONFIG}\n[decision]\ntool-drop = 4.0\nmax-listing-growth = 50\n"),
    );
    setup.repo.git(["add", "tdqs-gate.toml"]);
    setup.repo.git(["commit", "-q", "-m", "loosen the guard"]);
    setup.set_head(&with_description(&base, "close_issue", WORSE));
    let mut lower = tool_rule("close_issue", Some(WORSE), None, 4);
    lower["scores"] = json!({"purpose_clarity": 2, "conciseness_structure": 3});
    setup.fake.control(script(vec![lower]));
    setup
}

#[test]
fn the_scoring_job_decides_by_the_bases_decision_settings_from_the_base_folder() {
    let setup = base_with_loose_guard();
    let run = workflow_steps(&setup, |base, _| {
        let copied = std::fs::read_to_string(base.join("_settings.toml")).unwrap();
        assert!(copied.contains("tool-drop = 4.0"), "{copied}");
        assert!(copied.contains("max-listing-growth = 50"), "{copied}");
    });
    run.assert_code(0);
    let report = run.report();
    assert_eq!(report["decisionRule"]["toolDrop"], 4.0);
    assert_eq!(report["growthRule"]["maxGrowthPercent"], 50);
}

#[test]
fn without_the_base_folders_settings_the_scoring_job_falls_back_to_the_default_guard() {
    let setup = base_with_loose_guard();
    let run = workflow_steps(&setup, |base, _| {
        std::fs::remove_file(base.join("_settings.toml")).unwrap();
    });
    run.assert_code(1);
    assert_eq!(run.report()["decisionRule"]["toolDrop"], 0.5);
}

#[test]
fn settings_in_the_head_folder_are_refused_not_read() {
    let setup = base_with_loose_guard();
    let run = workflow_steps(&setup, |_, head| {
        std::fs::write(head.join("_settings.toml"), "[decision]\ntool-drop = 4.0\n").unwrap();
    });
    run.assert_code(2);
    assert!(
        run.stderr.contains("only the base's export job writes"),
        "{}",
        run.describe()
    );
}
