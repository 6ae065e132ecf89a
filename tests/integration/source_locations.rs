//! Source locations: each tool and described parameter of an export found on the line that
//! defines it, in Python, TypeScript, Go, Rust and YAML fixtures written in each SDK's idioms
//! and in the example servers; "not located" with a reason where the text is computed; SARIF
//! physical locations that validate against the 2.1.0 schema; a tree walk that follows no link.

use std::path::{Path, PathBuf};
use std::process::Command;

use serde_json::{json, Value};
use tdqs_core::locate::{locate_tools, Confidence, Locations, Matched, Place};
use tdqs_gate::lint::{self, LintConfig};
use tdqs_gate::locate::{read_tree, WalkLimits};

const GATE: &str = env!("CARGO_BIN_EXE_tdqs-gate-dup");

fn repo() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("..")
}

fn fixtures() -> PathBuf {
    repo().join("tests/fixtures/source-locations")
}

fn tools_of(path: &Path) -> Vec<Value> {
    let text = std::fs::read_to_string(path).unwrap_or_else(|e| panic!("{}: {e}", path.display()));
    match serde_json::from_str(&text).unwrap() {
        Value::Array(tools) => tools,
        other => other["tools"].as_array().cloned().expect("a tools array"),
    }
}

fn locate_fixture(lang: &str) -> Locations {
    let tree = read_tree(&fixtures().join(lang), WalkLimits::default()).unwrap();
    let tools = tools_of(&fixtures().join(format!("exports/{lang}.json")));
    locate_tools(&tree.files, &tools)
}

/// `path:line:column confidence matched`, or `not located`.
fn shown(place: &Place) -> String {
    match place {
        Place::Located {
            at,
            confidence,
            matched,
        } => {
            let c = match confidence {
                Confidence::High => "high",
                Confidence::Medium => "medium",
            };
            let m = match matched {
                Matched::Description => "description",
                Matched::FirstSentence => "first-sentence",
                Matched::Name => "name",
            };
            format!("{}:{}:{} {c} {m}", at.path, at.line, at.column)
        }
        Place::NotLocated { .. } => "not located".to_string(),
    }
}

fn table(locations: &Locations) -> Vec<String> {
    let mut out = Vec::new();
    for t in &locations.tools {
        out.push(format!("{} {}", t.tool, shown(&t.place)));
        for p in &t.parameters {
            out.push(format!("{}.{} {}", t.tool, p.parameter, shown(&p.place)));
        }
    }
    out
}

#[test]
fn python_tools_are_found_at_decorators_docstrings_and_tool_objects() {
    let got = table(&locate_fixture("python"));
    assert_eq!(
        got,
        [
            "search_notes server.py:17:5 high description",
            "search_notes.query server.py:14:45 high description",
            "search_notes.limit server.py:15:27 high description",
            "list_notes server.py:26:17 high description",
            "delete_note server.py:35:5 high description",
            "export_notes server.py:39:16 medium name",
            "archive_note server.py:47:9 high description",
            "archive_note.id server.py:52:64 high description",
            "count_tags not located",
        ],
        "{got:#?}"
    );
}

#[test]
fn typescript_tools_are_found_in_register_tool_server_tool_and_plain_objects() {
    let got = table(&locate_fixture("typescript"));
    assert_eq!(
        got,
        [
            "create_event index.ts:13:7 high description",
            "create_event.title index.ts:16:34 high description",
            "create_event.start index.ts:19:19 high description",
            "update_event index.ts:27:3 high description",
            "update_event.id index.ts:28:29 high description",
            "list_events index.ts:35:18 high description",
            "list_events.from index.ts:39:58 high description",
            "purge_events index.ts:45:3 medium name",
        ],
        "{got:#?}"
    );
}

#[test]
fn go_tools_are_found_in_new_tool_and_with_description() {
    let got = table(&locate_fixture("go"));
    assert_eq!(
        got,
        [
            "get_forecast main.go:15:23 high description",
            "get_forecast.city main.go:19:20 high description",
            "get_forecast.days main.go:21:42 high description",
            "list_alerts main.go:27:23 high description",
        ],
        "{got:#?}"
    );
}

#[test]
fn rust_tools_are_found_in_tool_attributes_and_doc_comments() {
    let got = table(&locate_fixture("rust"));
    assert_eq!(
        got,
        [
            "lookup_book server.rs:16:26 high description",
            "lookup_book.isbn server.rs:5:5 high description",
            "count_loans server.rs:23:5 high description",
            "renew-loan server.rs:29:47 high description",
        ],
        "{got:#?}"
    );
}

#[test]
fn yaml_tools_are_found_in_block_plain_and_quoted_scalars() {
    let got = table(&locate_fixture("yaml"));
    assert_eq!(
        got,
        [
            "send_invoice tools.yaml:5:7 high description",
            "send_invoice.customer tools.yaml:12:24 high description",
            "void_invoice tools.yaml:14:18 high description",
        ],
        "{got:#?}"
    );
}

#[test]
fn a_computed_name_and_description_are_not_located_and_say_why() {
    let locations = locate_fixture("python");
    let count = locations.tool("count_tags").unwrap();
    let Place::NotLocated { reason } = &count.place else {
        panic!("count_tags must not be located: {:?}", count.place)
    };
    assert!(reason.contains("not one literal"), "{reason}");
    assert!(reason.contains("`count_tags`"), "{reason}");
    // A name found with a computed description is located by name only, and says so.
    let export = locations.tool("export_notes").unwrap();
    assert!(matches!(
        export.place,
        Place::Located {
            confidence: Confidence::Medium,
            matched: Matched::Name,
            ..
        }
    ));
    // The decorated function's name is the name's place when the description was found.
    let search = locations.tool("search_notes").unwrap();
    let name_at = search.name_at.as_ref().expect("the def names the tool");
    assert_eq!((name_at.path.as_str(), name_at.line), ("server.py", 13));
}

#[test]
fn the_example_servers_tools_are_found_in_their_definition_files() {
    for (dir, export, file) in [
        (
            "examples/issue-tracker",
            "examples/issue-tracker/careful.json",
            "careful.json",
        ),
        (
            "examples/issue-tracker",
            "examples/issue-tracker/careless.json",
            "careless.json",
        ),
        (
            "examples/issue-tracker-node",
            "examples/issue-tracker-node/tools.json",
            "tools.json",
        ),
    ] {
        let tree = read_tree(&repo().join(dir), WalkLimits::default()).unwrap();
        let tools = tools_of(&repo().join(export));
        let locations = locate_tools(&tree.files, &tools);
        let text = std::fs::read_to_string(repo().join(export)).unwrap();
        for (tool, t) in tools.iter().zip(&locations.tools) {
            let name = tool["name"].as_str().unwrap();
            let Some(description) = tool["description"]
                .as_str()
                .filter(|d| !d.trim().is_empty())
            else {
                // careless.json and careful.json both define it and nothing tells them apart.
                let Place::NotLocated { reason } = &t.place else {
                    panic!(
                        "{export}: {name} without a description was located: {:?}",
                        t.place
                    )
                };
                assert!(reason.contains("2 equally likely places"), "{reason}");
                continue;
            };
            let Place::Located { at, confidence, .. } = &t.place else {
                panic!("{export}: {name} not located: {:?}", t.place)
            };
            assert_eq!(at.path, file, "{export}: {name}");
            assert_eq!(*confidence, Confidence::High, "{export}: {name}");
            // The line is the one whose "description" holds this tool's text.
            let line = text.lines().nth(at.line as usize - 1).unwrap();
            assert!(
                line.trim_start().starts_with("\"description\""),
                "{export}: {name}: {line}"
            );
            let start: String = description.chars().take(20).collect();
            let escaped = serde_json::to_string(&start).unwrap();
            assert!(
                line.contains(escaped.trim_end_matches('"')),
                "{export}: {name}: {line}"
            );
        }
    }
}

#[test]
fn the_tree_walk_skips_dependencies_links_and_large_files() {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path();
    std::fs::create_dir_all(root.join("node_modules/pkg")).unwrap();
    std::fs::create_dir_all(root.join("src")).unwrap();
    std::fs::write(root.join("node_modules/pkg/index.js"), "x").unwrap();
    std::fs::write(root.join("src/a.py"), "x = 1").unwrap();
    std::fs::write(root.join("src/notes.txt"), "not source").unwrap();
    std::fs::write(root.join("big.json"), vec![b' '; 2 * 1024 * 1024]).unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::fs::write(outside.path().join("secret.py"), "TOKEN = 'x'").unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("linked")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("secret.py"), root.join("s.py")).unwrap();
    let tree = read_tree(root, WalkLimits::default()).unwrap();
    let paths: Vec<&str> = tree.files.iter().map(|f| f.path.as_str()).collect();
    assert_eq!(paths, ["src/a.py"]);
    assert!(!tree.truncated);
    // The root itself may be a link (the caller chose it); what is under it is still not followed.
    let via_link = outside.path().join("root-link");
    std::os::unix::fs::symlink(root, &via_link).unwrap();
    let tree = read_tree(&via_link, WalkLimits::default()).unwrap();
    assert_eq!(tree.files.len(), 1);
    let bounded = read_tree(
        &fixtures(),
        WalkLimits {
            max_files: 2,
            ..WalkLimits::default()
        },
    )
    .unwrap();
    assert_eq!(bounded.files.len(), 2);
    assert!(bounded.truncated);
    let err = read_tree(&root.join("src/a.py"), WalkLimits::default()).unwrap_err();
    assert!(err.render().contains("--source"), "{}", err.render());
}

fn sarif_validator() -> jsonschema::Validator {
    let path = repo().join("tests/fixtures/lint/sarif-schema-2.1.0.json");
    let mut schema: Value = serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap();
    // The published schema's `language` pattern has an unbalanced bracket (see lint.rs).
    for owner in ["run", "toolComponent"] {
        schema["definitions"][owner]["properties"]["language"]["pattern"] =
            json!("^[a-zA-Z]{2}(-[a-zA-Z]{2})?$");
    }
    jsonschema::validator_for(&schema).expect("the SARIF schema compiles")
}

#[test]
fn sarif_carries_physical_locations_on_the_defining_lines_and_validates() {
    let tools = tools_of(&fixtures().join("exports/typescript.json"));
    let tree = read_tree(&fixtures().join("typescript"), WalkLimits::default()).unwrap();
    let locations = locate_tools(&tree.files, &tools);
    let report = lint::lint_tools(Some("calendar"), None, &tools, &LintConfig::default());
    let sarif: Value =
        serde_json::from_str(&lint::render_sarif_located(&report, Some(&locations))).unwrap();
    let errors: Vec<String> = sarif_validator()
        .iter_errors(&sarif)
        .map(|e| format!("{e} at {}", e.instance_path()))
        .collect();
    assert!(errors.is_empty(), "{errors:#?}");
    let run = &sarif["runs"][0];
    assert_eq!(run["columnKind"], "unicodeCodePoints");
    let results = run["results"].as_array().unwrap();
    let mut anchored = 0;
    for r in results {
        let location = &r["locations"][0];
        let logical = &location["logicalLocations"][0];
        let tool = logical["fullyQualifiedName"].as_str().unwrap_or("");
        let tool = tool.split('.').next().unwrap();
        let physical = &location["physicalLocation"];
        match tool {
            "create_event" | "update_event" | "list_events" | "purge_events" => {
                let expected = match tool {
                    "create_event" => 13,
                    "update_event" => 27,
                    "list_events" => 35,
                    _ => 45,
                };
                assert_eq!(physical["artifactLocation"]["uri"], "index.ts", "{r:#}");
                let line = physical["region"]["startLine"].as_u64().unwrap();
                // A parameter's finding may sit on its own line; a tool's on the tool's.
                if logical["kind"] == "function" {
                    assert_eq!(line, expected, "{r:#}");
                }
                assert!(physical["region"]["startColumn"].as_u64().unwrap() >= 1);
                anchored += 1;
            }
            _ => assert!(
                physical.is_null(),
                "a server-wide finding has no source line: {r:#}"
            ),
        }
    }
    assert!(anchored > 0, "no finding was anchored");
    // Without locations the output is unchanged: no physical location, no column kind.
    let plain: Value = serde_json::from_str(&lint::render_sarif(&report)).unwrap();
    assert!(plain["runs"][0].get("columnKind").is_none());
    assert!(plain["runs"][0]["results"][0]["locations"][0]
        .get("physicalLocation")
        .is_none());
}

#[test]
fn lint_source_anchors_sarif_findings_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let export = dir.path().join("export.json");
    let listing = tdqs_core::export::RawListing {
        protocol_version: "2025-11-25".into(),
        tools: tools_of(&fixtures().join("exports/go.json")),
        ..Default::default()
    };
    let assembled = tdqs_core::digest::assemble_export(
        listing,
        tdqs_core::export::ProbeProfile::default(),
        tdqs_core::export::ExportSource::default(),
    )
    .unwrap();
    tdqs_gate::export::file::write_export(&export, &assembled).unwrap();
    let out = Command::new(GATE)
        .args(["lint", "--sarif", "--fail-on", "never", "--export"])
        .arg(&export)
        .arg("--source")
        .arg(fixtures().join("go"))
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    let lines: Vec<(String, u64)> = sarif["runs"][0]["results"]
        .as_array()
        .unwrap()
        .iter()
        .filter(|r| r["locations"][0]["logicalLocations"][0]["kind"] == "function")
        .map(|r| {
            let p = &r["locations"][0]["physicalLocation"];
            (
                p["artifactLocation"]["uri"].as_str().unwrap().to_string(),
                p["region"]["startLine"].as_u64().unwrap(),
            )
        })
        .collect();
    assert!(!lines.is_empty());
    assert!(
        lines
            .iter()
            .all(|(uri, line)| uri == "main.go" && [15, 27].contains(line)),
        "{lines:?}"
    );
    // A --source that is not a folder is a usage error that names the flag.
    let out = Command::new(GATE)
        .args(["lint", "--sarif", "--export"])
        .arg(&export)
        .arg("--source")
        .arg(&export)
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--source"));
    // --source anchors SARIF only: with another format it is refused, not ignored.
    let out = Command::new(GATE)
        .args(["lint", "--json", "--export"])
        .arg(&export)
        .arg("--source")
        .arg(fixtures().join("go"))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&out.stderr).contains("--sarif"));
}

/// The installed source of a reference server (`None`: skipped, see `export::installed`).
fn installed_source(npm: Option<&str>, python_package: Option<&str>) -> Option<PathBuf> {
    if let Some(relative) = npm {
        return crate::export::installed(relative);
    }
    let lib = crate::export::installed("venv/lib")?;
    let package = python_package?;
    std::fs::read_dir(lib)
        .ok()?
        .filter_map(Result::ok)
        .map(|e| e.path().join("site-packages").join(package))
        .find(|p| p.is_dir())
}

#[test]
fn the_reference_servers_tools_are_found_in_their_installed_source() {
    // Real, licensed server source (MIT): the npm and PyPI packages tests/setup installs, whose
    // exports are the corpus in tests/fixtures/corpus/.
    for (npm, python, corpus) in [
        (
            Some("npm/node_modules/@modelcontextprotocol/server-everything/dist"),
            None,
            "everything",
        ),
        (None, Some("mcp_server_git"), "git"),
        (None, Some("mcp_server_time"), "time"),
    ] {
        let Some(tree) = installed_source(npm, python) else {
            continue;
        };
        let files = read_tree(&tree, WalkLimits::default()).unwrap();
        let tools = tools_of(&repo().join(format!("tests/fixtures/corpus/{corpus}.json")));
        let locations = locate_tools(&files.files, &tools);
        for (tool, t) in tools.iter().zip(&locations.tools) {
            let Place::Located { at, confidence, .. } = &t.place else {
                panic!("{corpus}: {} not located: {:?}", t.tool, t.place)
            };
            assert_eq!(*confidence, Confidence::High, "{corpus}: {}", t.tool);
            let source = files.files.iter().find(|f| f.path == at.path).unwrap();
            let line = source.text.lines().nth(at.line as usize - 1).unwrap();
            let description = tool["description"].as_str().unwrap();
            let start: String = description.chars().take(16).collect();
            assert!(line.contains(&start), "{corpus}: {}: {line}", t.tool);
            for p in &t.parameters {
                assert!(
                    p.place.span().is_some(),
                    "{corpus}: {}.{}: {:?}",
                    t.tool,
                    p.parameter,
                    p.place
                );
            }
        }
    }
}

#[test]
fn lint_of_a_running_server_anchors_findings_in_its_own_tree_by_default() {
    let dir = tempfile::tempdir().unwrap();
    let tmp = tempfile::tempdir().unwrap();
    let example = repo().join("examples/issue-tracker");
    std::fs::copy(example.join("server.py"), dir.path().join("server.py")).unwrap();
    // The careless side: the careful one has no finding to anchor.
    std::fs::copy(example.join("careless.json"), dir.path().join("tools.json")).unwrap();
    std::fs::write(
        dir.path().join("tdqs-gate.toml"),
        "[server]\ncommand = \"python3 {root}/server.py\"\n",
    )
    .unwrap();
    let out = Command::new(GATE)
        .args(["lint", "--sarif", "--fail-on", "never"])
        .current_dir(dir.path())
        .env("TMPDIR", tmp.path())
        .env("GIT_CEILING_DIRECTORIES", dir.path().parent().unwrap())
        .stdin(std::process::Stdio::null())
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let sarif: Value = serde_json::from_slice(&out.stdout).unwrap();
    let tools_json = std::fs::read_to_string(dir.path().join("tools.json")).unwrap();
    let lines: Vec<&str> = tools_json.lines().collect();
    let mut anchored = 0;
    for r in sarif["runs"][0]["results"].as_array().unwrap() {
        let location = &r["locations"][0];
        // Every finding about a tool or one of its parameters (server-wide ones have none).
        if location["logicalLocations"][0]["kind"] == "module" {
            continue;
        }
        let physical = &location["physicalLocation"];
        assert_eq!(physical["artifactLocation"]["uri"], "tools.json", "{r:#}");
        let line = physical["region"]["startLine"].as_u64().unwrap() as usize;
        // The description's line; the name's for the tool that has none.
        let text = lines[line - 1].trim_start();
        assert!(
            text.starts_with("\"description\"") || text.starts_with("\"name\""),
            "{r:#}"
        );
        anchored += 1;
    }
    assert!(anchored > 0);
}
