//! The command line on real MCP servers from the registries (installed by
//! `tests/setup/real-servers.sh`): `export` twice gives the same set hash, `lint` and `score`
//! (static rules, and the fake `claude` on the stand-in specification) run on those exports.

use std::path::{Path, PathBuf};
use std::process::Output;

use serde_json::Value;

use crate::export::{installed, EVERYTHING_TOOLS, GIT_TOOLS};
use crate::gate::harness::{base_tools, Setup};

fn run(setup: &Setup, args: &[String]) -> Output {
    let tmp = setup.work().join("tmp");
    std::fs::create_dir_all(&tmp).unwrap();
    setup.command(args, &tmp).output().unwrap()
}

fn text(output: &Output) -> String {
    format!(
        "exit {:?}\nstdout:\n{}\nstderr:\n{}",
        output.status.code(),
        String::from_utf8_lossy(&output.stdout),
        String::from_utf8_lossy(&output.stderr)
    )
}

fn strings(args: &[&str]) -> Vec<String> {
    args.iter().map(|s| s.to_string()).collect()
}

/// Exports the server twice through the binary and checks the two exports agree.
fn export_twice(setup: &Setup, command: &str, expected_names: &[&str]) -> (PathBuf, Value) {
    let mut exports = Vec::new();
    for n in 1..=2 {
        let path = setup.work().join(format!("export-{n}.json"));
        let out = run(
            setup,
            &strings(&["export", "--command", command, "-o", path.to_str().unwrap()]),
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        let export: Value = serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        exports.push((path, export));
    }
    let (first, second) = (&exports[0].1, &exports[1].1);
    assert_eq!(
        first["setHash"], second["setHash"],
        "a second export gave another set hash"
    );
    assert_eq!(first["tools"], second["tools"]);
    let names: Vec<&str> = first["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap())
        .collect();
    assert_eq!(names, expected_names);
    exports.remove(0)
}

/// Lint (twice, byte-identical), static scoring and model scoring through the fake `claude`.
fn lint_and_score(setup: &Setup, export: &Path, tools: usize) {
    let export = export.to_str().unwrap();
    let lint = |format: &str| {
        let out = run(
            setup,
            &strings(&["lint", "--export", export, format, "--fail-on", "never"]),
        );
        assert_eq!(out.status.code(), Some(0), "{}", text(&out));
        out.stdout
    };
    let first = lint("--json");
    assert_eq!(first, lint("--json"), "lint is not deterministic");
    let report: Value = serde_json::from_slice(&first).unwrap();
    assert!(report.is_object(), "{report}");
    let sarif: Value = serde_json::from_slice(&lint("--sarif")).unwrap();
    assert_eq!(sarif["version"], "2.1.0");

    let out = run(
        setup,
        &strings(&["score", "--export", export, "--judge", "static", "--json"]),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let scored: Value = serde_json::from_slice(&out.stdout).unwrap();
    assert_eq!(scored["scoring"]["judge"]["modelJudged"], false);
    assert_eq!(scored["side"]["tools"].as_object().unwrap().len(), tools);

    let mut args = strings(&["score", "--export", export, "--json"]);
    args.extend(setup.judge_args());
    let out = run(setup, &args);
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let scored: Value = serde_json::from_slice(&out.stdout).unwrap();
    let hard_gated = scored["calls"]["hardGated"].as_u64().unwrap() as usize;
    // One call per described tool, plus the coherence question.
    assert_eq!(
        scored["calls"]["questions"],
        (tools - hard_gated + 1) as u64
    );
    assert_eq!(setup.fake.calls().len(), tools - hard_gated + 1);
    assert!(scored["side"]["rollups"]["meanTdqs"].is_number());
}

#[test]
fn server_everything_through_the_command_line() {
    let Some(program) = installed("npm/node_modules/.bin/mcp-server-everything") else {
        return;
    };
    let setup = Setup::new(&base_tools());
    let names = EVERYTHING_TOOLS;
    let (path, _) = export_twice(&setup, &program.display().to_string(), &names);
    lint_and_score(&setup, &path, names.len());
}

#[test]
fn mcp_server_time_through_the_command_line() {
    let Some(program) = installed("venv/bin/mcp-server-time") else {
        return;
    };
    let setup = Setup::new(&base_tools());
    let command = format!("{} --local-timezone UTC", program.display());
    let (path, export) = export_twice(&setup, &command, &["get_current_time", "convert_time"]);
    assert_eq!(export["serverName"], "mcp-time");
    lint_and_score(&setup, &path, 2);
}

#[test]
fn mcp_server_git_through_the_command_line() {
    let Some(program) = installed("venv/bin/mcp-server-git") else {
        return;
    };
    let setup = Setup::new(&base_tools());
    let (path, export) = export_twice(&setup, &program.display().to_string(), &GIT_TOOLS);
    assert_eq!(export["serverName"], "mcp-git");
    lint_and_score(&setup, &path, 12);
}

#[test]
fn fastmcp_server_with_output_schema_through_the_command_line() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let setup = Setup::new(&base_tools());
    let server = setup.test_server_in_tree("fastmcp_server.py");
    let command = format!("{} {server}", python.display());
    let first = setup.work().join("probe.json");
    let out = run(
        &setup,
        &strings(&[
            "export",
            "--command",
            &command,
            "-o",
            first.to_str().unwrap(),
        ]),
    );
    assert_eq!(out.status.code(), Some(0), "{}", text(&out));
    let export: Value = serde_json::from_str(&std::fs::read_to_string(&first).unwrap()).unwrap();
    let names: Vec<String> = export["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t["name"].as_str().unwrap().to_string())
        .collect();
    let name_refs: Vec<&str> = names.iter().map(String::as_str).collect();
    let (path, export) = export_twice(&setup, &command, &name_refs);
    assert!(
        export["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t.get("outputSchema").is_some() && t.get("annotations").is_some()),
        "the FastMCP server lists a tool with an output schema and annotations"
    );
    lint_and_score(&setup, &path, names.len());
}

/// Every `from mcp… import …` line the docs show imports in the installed mcp SDK (2.x renamed
/// `mcp.server.fastmcp`, and a copied example must not fail on its first line).
#[test]
fn the_python_imports_the_docs_show_work_with_the_installed_mcp_sdk() {
    let Some(python) = installed("venv/bin/python") else {
        return;
    };
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let mut imports = Vec::new();
    for page in std::fs::read_dir(root.join("docs"))
        .unwrap()
        .map(|e| e.unwrap().path())
        .chain([root.join("README.md")])
        .filter(|p| p.extension().is_some_and(|e| e == "md"))
    {
        let text = std::fs::read_to_string(&page).unwrap();
        assert!(
            !text.contains("mcp.server.fastmcp"),
            "{} imports the module mcp 2.x removed",
            page.display()
        );
        for line in text.lines() {
            let code = line.trim_start_matches(|c: char| c == '#' || c.is_whitespace());
            if code.starts_with("from mcp") || code.starts_with("import mcp") {
                imports.push(code.to_string());
            }
        }
    }
    assert!(!imports.is_empty(), "the docs show no mcp import to check");
    for import in imports {
        let out = std::process::Command::new(&python)
            .args(["-c", &import])
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{import}: {}",
            String::from_utf8_lossy(&out.stderr)
        );
    }
}
