//! Several servers gated from folders of export files
//! (`--base-exports DIR --head-exports DIR`, one `NAME.json` per server), as the Action's scoring
//! step does, and `export --list-servers`, which its export step uses to know the servers.

use std::path::{Path, PathBuf};

use serde_json::Value;

use crate::gate::harness::*;
use crate::monorepo::{api_falls, assert_unscored_pass, monorepo, names, server, TWO_SERVERS};

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// `tdqs-gate export [--rev REV] --server NAME --output FILE`.
fn export(setup: &Setup, rev: Option<&str>, name: &str, output: &Path) {
    let mut args = strings(&["export", "--server", name, "--output"]);
    args.push(output.display().to_string());
    if let Some(rev) = rev {
        args.extend(strings(&["--rev", rev]));
    }
    let run = setup.run_raw(&args, setup.work().join("unused"), |_| {});
    run.assert_code(0);
}

/// Both sides of every named server exported into `exports/base` and `exports/head`.
fn export_folders(setup: &Setup, names: &[&str]) -> (PathBuf, PathBuf) {
    let base = setup.work().join("exports/base");
    let head = setup.work().join("exports/head");
    std::fs::create_dir_all(&base).unwrap();
    std::fs::create_dir_all(&head).unwrap();
    for name in names {
        export(
            setup,
            Some("main"),
            name,
            &base.join(format!("{name}.json")),
        );
        export(setup, None, name, &head.join(format!("{name}.json")));
    }
    (base, head)
}

/// The gate on two folders with the fake judge, plus `extra`.
pub(crate) fn gate_folders(setup: &Setup, base: &Path, head: &Path, extra: &[&str]) -> Run {
    let mut args = vec![
        "--base-exports".to_string(),
        base.display().to_string(),
        "--head-exports".to_string(),
        head.display().to_string(),
    ];
    args.extend(setup.judge_args());
    args.extend(strings(extra));
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    setup.run(&refs)
}

#[test]
fn list_servers_names_the_tables() {
    let setup = monorepo(TWO_SERVERS);
    let run = setup.run_raw(
        &strings(&["export", "--list-servers"]),
        setup.work().join("unused"),
        |_| {},
    );
    run.assert_code(0);
    assert_eq!(run.stdout, "api\nweb\n", "{}", run.describe());
    // The base revision's own tables, read from its tree: the head adds a server.
    setup.repo.write(
        "tdqs-gate.toml",
        &format!("{TWO_SERVERS}\n[[server]]\nname = \"new\"\ncommand = \"true\"\n"),
    );
    let head = setup.run_raw(
        &strings(&["export", "--list-servers"]),
        setup.work().join("unused"),
        |_| {},
    );
    assert_eq!(head.stdout, "api\nweb\nnew\n", "{}", head.describe());
    let base = setup.run_raw(
        &strings(&["export", "--list-servers", "--rev", "main"]),
        setup.work().join("unused"),
        |_| {},
    );
    base.assert_code(0);
    assert_eq!(base.stdout, "api\nweb\n", "{}", base.describe());
    // A single server: nothing listed.
    let single = Setup::new(&base_tools());
    let run = single.run_raw(
        &strings(&["export", "--list-servers"]),
        single.work().join("unused"),
        |_| {},
    );
    run.assert_code(0);
    assert_eq!(run.stdout, "", "{}", run.describe());
}

#[test]
fn folders_one_server_falls_blocks_and_check_agrees() {
    let setup = monorepo(TWO_SERVERS);
    api_falls(&setup);
    let (base, head) = export_folders(&setup, &["api", "web"]);
    let outputs = setup.work().join("github-output");
    let mut args = vec![
        "--base-exports".to_string(),
        base.display().to_string(),
        "--head-exports".to_string(),
        head.display().to_string(),
    ];
    args.extend(setup.judge_args());
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let run = setup.run_with(&refs, |command| {
        command.env("GITHUB_OUTPUT", &outputs);
    });
    run.assert_code(1);
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "block");
    assert_eq!(names(&report), vec!["api", "web"]);
    assert_eq!(server(&report, "api")["decision"], "block");
    assert_unscored_pass(server(&report, "web"));
    // Every model call was about the api server.
    for call in setup.fake.calls() {
        assert!(!call.to_string().contains("web_"), "{call}");
    }
    let text = std::fs::read_to_string(&outputs).unwrap();
    for line in [
        "decision=block\n",
        "decision-api=block\n",
        "decision-web=pass\n",
    ] {
        assert!(text.contains(line), "{line:?} missing from {text}");
    }

    // --check against the same folders: the report stands, with no model call.
    let calls = setup.fake.calls().len();
    let mut check = vec![
        "--check".to_string(),
        run.report_path().display().to_string(),
    ];
    check.extend(args.clone());
    let refs: Vec<&str> = check.iter().map(String::as_str).collect();
    let checked = setup.run(&refs);
    checked.assert_code(1);
    assert_eq!(setup.fake.calls().len(), calls);

    // A folder whose export changed since the report: INVALID, naming the server.
    let web = head.join("web.json");
    let mut export: Value = serde_json::from_str(&std::fs::read_to_string(&web).unwrap()).unwrap();
    export["tools"].as_array_mut().unwrap().pop();
    std::fs::write(&web, export.to_string()).unwrap();
    let stale = setup.run(&refs);
    stale.assert_code(2);
    assert!(stale.stderr.contains("web.json"), "{}", stale.describe());
}

#[test]
fn folders_both_unchanged_pass_without_a_model_call() {
    let setup = monorepo(TWO_SERVERS);
    let (base, head) = export_folders(&setup, &["web", "api"]);
    let run = gate_folders(&setup, &base, &head, &[]);
    run.assert_code(0);
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "pass");
    assert_eq!(report["scored"], false);
    // Without --server, the folders' names in sorted order; with it, the order given.
    assert_eq!(names(&report), vec!["api", "web"]);
    for name in ["api", "web"] {
        assert_unscored_pass(server(&report, name));
    }
    assert!(!setup.fake.ever_started(), "{:?}", setup.fake.log());
    let run = gate_folders(&setup, &base, &head, &["--server", "web"]);
    run.assert_code(0);
    assert_eq!(names(&run.report()), vec!["web"]);
}

#[test]
fn folders_failed_new_and_removed_servers() {
    let setup = monorepo(TWO_SERVERS);
    let (base, head) = export_folders(&setup, &["api", "web"]);
    // `web` failed to export on the head: that server is INVALID with the note's reason.
    std::fs::remove_file(head.join("web.json")).unwrap();
    std::fs::write(
        head.join("web.failed"),
        "INVALID: head: the server exited before answering initialize\nmore\n",
    )
    .unwrap();
    // `new` exists only on the head: gated against an empty base.
    std::fs::copy(head.join("api.json"), head.join("new.json")).unwrap();
    let run = gate_folders(&setup, &base, &head, &[]);
    run.assert_code(2);
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(names(&report), vec!["api", "new", "web"]);
    assert_unscored_pass(server(&report, "api"));
    let new = server(&report, "new");
    assert_eq!(new["decision"], "pass", "{new:#}");
    assert_eq!(new["scored"], false);
    assert_eq!(new["base"]["tools"], serde_json::json!([]));
    assert!(new["warnings"]
        .as_array()
        .unwrap()
        .iter()
        .any(|w| w.as_str().unwrap().contains("gated against an empty base")));
    let web = server(&report, "web");
    assert_eq!(web["decision"], "invalid");
    assert!(
        web["reason"]
            .as_str()
            .unwrap()
            .contains("the head export of server `web` failed: head: the server exited"),
        "{web:#}"
    );
    assert!(!setup.fake.ever_started());

    // `api` only on the base (the head no longer lists it): INVALID for that server.
    std::fs::remove_file(head.join("api.json")).unwrap();
    let run = gate_folders(&setup, &base, &head, &["--server", "api"]);
    run.assert_code(2);
    let api = server(&run.report(), "api").clone();
    assert!(
        api["reason"]
            .as_str()
            .unwrap()
            .contains("has an export in the base folder but none in the head folder"),
        "{api:#}"
    );
}

#[test]
fn folders_refuse_bad_contents_and_names() {
    let setup = monorepo(TWO_SERVERS);
    let (base, head) = export_folders(&setup, &["api", "web"]);
    let refused = |what: &str, prepare: &dyn Fn(&Path), extra: &[&str], expect: &str| {
        let dir = setup.work().join(format!("bad-{}", what.replace(' ', "-")));
        std::fs::create_dir_all(&dir).unwrap();
        for name in ["api.json", "web.json"] {
            std::fs::copy(head.join(name), dir.join(name)).unwrap();
        }
        prepare(&dir);
        let run = gate_folders(&setup, &base, &dir, extra);
        run.assert_code(2);
        assert!(
            run.stderr.contains(expect),
            "{what}: {expect:?} not said: {}",
            run.describe()
        );
        // The refusal still writes an INVALID report over several servers.
        assert_eq!(run.report()["decision"], "invalid", "{what}");
        assert!(!setup.fake.ever_started(), "{what}");
    };
    refused(
        "duplicate failed",
        &|d| std::fs::write(d.join("api.failed"), "x").unwrap(),
        &[],
        "two files for one server",
    );
    refused(
        "duplicate case",
        &|d| {
            std::fs::copy(d.join("api.json"), d.join("API.json"))
                .map(|_| ())
                .unwrap()
        },
        &[],
        "two files for one server",
    );
    refused(
        "other file",
        &|d| std::fs::write(d.join("notes.txt"), "x").unwrap(),
        &[],
        "\"notes.txt\" is neither NAME.json nor NAME.failed",
    );
    refused(
        "dot name",
        &|d| std::fs::write(d.join("..json"), "{}").unwrap(),
        &[],
        "\"..json\" does not start with a valid server name",
    );
    refused(
        "folder",
        &|d| std::fs::create_dir(d.join("sub.json")).unwrap(),
        &[],
        "\"sub.json\" is a folder, not a regular file",
    );
    refused(
        "link",
        &|d| std::os::unix::fs::symlink("/etc/hostname", d.join("etc.json")).unwrap(),
        &[],
        "\"etc.json\" is a symbolic link, not a regular file",
    );
    refused(
        "unknown name",
        &|_| {},
        &["--server", "nope"],
        "--server \"nope\": neither export folder has a file for it; the folders hold: api, web",
    );
    refused(
        "traversal name",
        &|_| {},
        &["--server", "../api"],
        "--server \"../api\": neither export folder has a file for it",
    );
    refused(
        "tampered export",
        &|d| {
            let path = d.join("api.json");
            let mut export: Value =
                serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
            export["tools"][0]["description"] = Value::String("changed by hand".into());
            std::fs::write(&path, export.to_string()).unwrap();
        },
        &[],
        "api.json",
    );

    // One folder without the other, or a folder with --base: refused before anything is read.
    for extra in [
        vec!["--base-exports", base.to_str().unwrap()],
        vec![
            "--base-exports",
            base.to_str().unwrap(),
            "--head-exports",
            head.to_str().unwrap(),
            "--base",
            "main",
        ],
    ] {
        let mut args = extra.clone();
        let judge = setup.judge_args();
        args.extend(judge.iter().map(String::as_str));
        let run = setup.run(&args);
        run.assert_code(2);
        assert!(run.stderr.contains("--base-exports"), "{}", run.describe());
    }
}
