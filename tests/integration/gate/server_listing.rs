//! How the gate starts a side's server and reads its listing: a hash-dependent listing is stable
//! with the default seed and INVALID when a side lists differently twice; a launch plan blind to
//! the tree is INVALID; a src-layout package is judged.

use super::*;

/// The example server, changed so that `close_issue`'s description depends on Python's string
/// hash: the same on every start only when PYTHONHASHSEED is fixed.
fn hash_dependent_server() -> String {
    example_server().replace(
        "        return json.load(f)",
        "        tools = json.load(f)\n    for tool in tools:\n        if tool[\"name\"] == \"close_issue\":\n            tool[\"description\"] += \" Variant %d.\" % (hash(\"close_issue\") % 1000003)\n    return tools",
    )
}

#[test]
fn a_hash_dependent_listing_is_stable_with_the_default_seed() {
    let setup = Setup::new(&base_tools());
    let server = hash_dependent_server();
    assert_ne!(server, example_server(), "the replacement must apply");
    setup.repo.write("server.py", &server);
    let run = setup.gate(&[]);
    // The head differs from the base (the variant sentence) and is the same on both starts.
    assert!(run.code == 0 || run.code == 1, "{}", run.describe());
    assert!(!setup.fake.calls().is_empty());
}

#[test]
fn a_side_listing_differently_twice_is_invalid_before_any_model_call() {
    let setup = Setup::new(&base_tools());
    setup.repo.write("server.py", &hash_dependent_server());
    setup.repo.write(
        "tdqs-gate.toml",
        "[server]\ncommand = \"python3 {root}/server.py\"\nenv = { PYTHONHASHSEED = \"random\" }\n",
    );
    let run = setup.gate(&[]);
    run.assert_code(2);
    assert!(
        run.stderr
            .contains("the head's server lists different tool definitions from one start to the next (`close_issue` varied"),
        "{}",
        run.describe()
    );
    assert!(
        run.stderr.contains("PYTHONHASHSEED=0"),
        "{}",
        run.describe()
    );
    assert!(setup.fake.calls().is_empty(), "no model call");
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "invalid");
}

/// A src-layout package `my_server` whose server reads `src/my_server/tools.json`, committed
/// with `tools` and `tdqs-gate.toml` as given; the working tree then gets `head`.
fn src_layout(config: &dyn Fn(&std::path::Path) -> String, head: &Value) -> Setup {
    let setup = Setup::new(&base_tools());
    setup
        .repo
        .write("src/my_server/__main__.py", &example_server())
        .write("src/my_server/tools.json", &pretty(&base_tools()));
    let toml = config(&setup.repo.path);
    setup.repo.write("tdqs-gate.toml", &toml);
    setup.repo.commit_all("src layout");
    setup.repo.write("src/my_server/tools.json", &pretty(head));
    setup
}

#[test]
fn a_launch_plan_blind_to_the_tree_is_invalid_not_a_silent_pass() {
    // As an editable install does: the working tree's src on the path, for both sides.
    let setup = src_layout(
        &|repo| {
            format!(
                "[server]\ncommand = \"python3 -m my_server\"\nenv = {{ PYTHONPATH = \"{}/src\", PYTHONDONTWRITEBYTECODE = \"1\" }}\n",
                repo.display()
            )
        },
        &head_with(WORSE),
    );
    // Unsandboxed: in the sandbox the base cannot see the working tree in the temporary folder
    // at all (its server fails to start), which hides the check tested here.
    let run = setup.gate(&["--sandbox", "off"]);
    run.assert_code(2);
    // The absolute path into the working tree is refused before anything starts.
    assert!(
        run.stderr
            .contains("an absolute path inside the repository's working tree"),
        "{}",
        run.describe()
    );
    assert!(run.stderr.contains("{root}/src"), "{}", run.describe());
    assert!(run.stderr.contains("PYTHONPATH"), "{}", run.describe());
    assert!(setup.fake.calls().is_empty());
}

#[test]
fn the_same_package_through_root_is_judged() {
    let setup = src_layout(
        &|_| {
            "[server]\ncommand = \"python3 -m my_server\"\nenv = { PYTHONPATH = \"{root}/src\", \
             PYTHONDONTWRITEBYTECODE = \"1\" }\n"
                .to_string()
        },
        &head_with(WORSE),
    );
    let run = setup.gate(&[]);
    assert!(run.code == 0 || run.code == 1, "{}", run.describe());
    assert!(!setup.fake.calls().is_empty(), "the change was scored");
}
