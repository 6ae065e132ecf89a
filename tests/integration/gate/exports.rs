//! Export files and `tdqs-gate export`: decisions from export files without servers, an older
//! revision's export, and export and lint on a plain folder.

use super::*;

#[test]
fn export_files_decide_without_servers_and_check_against_them() {
    let setup = drop_setup(&[1, 2, 3]);
    let (base, head) = setup.export_base_and_head(&setup.work().join("exports"));
    // From anywhere, with no repository and no server: the exports carry everything.
    let args = setup.export_file_args(&base, &head, &[]);
    let refs: Vec<&str> = args.iter().map(String::as_str).collect();
    let elsewhere = setup.work().to_path_buf();
    let run = setup.run_with(&refs, |c| {
        c.current_dir(&elsewhere);
    });
    run.assert_code(1);
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(
        report["baseCommit"].as_str().unwrap(),
        setup.repo.rev_parse("main")
    );
    assert_eq!(report["pairs"].as_array().unwrap().len(), 3);

    let check_args = [
        "--check".to_string(),
        run.report_path().display().to_string(),
        "--base-export".to_string(),
        base.display().to_string(),
        "--head-export".to_string(),
        head.display().to_string(),
        "--pins".to_string(),
        standin_pins().display().to_string(),
    ];
    let refs: Vec<&str> = check_args.iter().map(String::as_str).collect();
    setup.run(&refs).assert_code(1);
}

/// `tdqs-gate export --rev HEAD~1` starts the older revision's server from a temporary worktree
/// and lists its tools; the repository is left exactly as it was (checked by `run_raw`).
#[test]
fn export_of_an_older_revision_lists_its_tools_and_leaves_the_repository_as_it_was() {
    let old = base_tools();
    let setup = Setup::new(&old);
    let new = head_with(WORSE);
    setup.commit_branch("feature", &new);
    let mut exports = Vec::new();
    for (rev, name) in [(Some("HEAD~1"), "old"), (None, "new")] {
        let out = setup.work().join(format!("{name}.json"));
        let mut args: Vec<String> = vec!["export".into(), "-o".into(), out.display().to_string()];
        if let Some(rev) = rev {
            args.extend(["--rev".to_string(), rev.to_string()]);
        }
        let run = setup.run_raw(&args, setup.work().join("unused-report"), |_| {});
        run.assert_code(0);
        let export: Value = serde_json::from_str(&std::fs::read_to_string(&out).unwrap()).unwrap();
        exports.push(export);
    }
    assert_eq!(exports[0]["tools"], old, "HEAD~1 lists the old tools");
    assert_eq!(
        exports[1]["tools"], new,
        "the working tree lists the new tools"
    );
    assert_ne!(exports[0]["setHash"], exports[1]["setHash"]);
    assert_eq!(exports[0]["source"]["revision"], "HEAD~1");
}

/// `export` and `lint` work on a server folder that is not in a git repository, reading that
/// folder's own `tdqs-gate.toml`.
#[test]
fn export_and_lint_work_on_a_plain_folder() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("server.py"), example_server()).unwrap();
    std::fs::write(dir.path().join("tools.json"), pretty(&base_tools())).unwrap();
    std::fs::write(
        dir.path().join("tdqs-gate.toml"),
        "[server]\ncommand = \"python3 {root}/server.py\"\n\n[lint.rules]\nTDQS-P006 = \"off\"\n",
    )
    .unwrap();
    let run = |args: &[&str]| {
        std::process::Command::new(GATE)
            .args(args)
            .current_dir(dir.path())
            .env("TMPDIR", tmp.path())
            .env("GIT_CEILING_DIRECTORIES", dir.path().parent().unwrap())
            .stdin(Stdio::null())
            .output()
            .unwrap()
    };
    let out = run(&["export", "-o", "export.json"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let export: Value =
        serde_json::from_str(&std::fs::read_to_string(dir.path().join("export.json")).unwrap())
            .unwrap();
    assert_eq!(export["tools"], base_tools());
    assert_eq!(export["source"]["revision"], "working tree");
    assert!(
        export["source"].get("commit").is_none(),
        "a plain folder has no commit"
    );

    let out = run(&["lint", "--json", "--fail-on", "never"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let lint: Value = serde_json::from_slice(&out.stdout).unwrap();
    let codes: Vec<&str> = lint["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| f["code"].as_str().unwrap())
        .collect();
    // Without the folder's configuration these tools raise TDQS-P006 four times.
    assert!(!codes.is_empty(), "the fixture still has findings");
    assert!(
        !codes.contains(&"TDQS-P006"),
        "the folder's [lint.rules] turns TDQS-P006 off: {codes:?}"
    );
    // The gate itself needs a repository, and says so.
    let out = run(&["--base", "HEAD"]);
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("no git repository"));
    assert_eq!(
        std::fs::read_dir(tmp.path()).unwrap().count(),
        0,
        "temporary files left"
    );
}
