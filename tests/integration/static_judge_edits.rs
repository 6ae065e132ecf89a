//! The gate with `--judge static` on edits of real servers' definitions (the corpus in
//! tests/fixtures/corpus): harmless wording passes, a lost description blocks, and the judge
//! decides exactly (no model-noise tolerance).

use std::path::PathBuf;
use std::process::Command;

use serde_json::Value;
use tdqs_gate::judge::static_judge::tool_answer;

const GATE: &str = env!("CARGO_BIN_EXE_tdqs-gate-dup");

fn corpus_tools(name: &str) -> Vec<Value> {
    let path = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/corpus")
        .join(format!("{name}.json"));
    let text = std::fs::read_to_string(&path)
        .unwrap_or_else(|e| panic!("cannot read {}: {e}", path.display()));
    let export: Value = serde_json::from_str(&text).expect("export is JSON");
    export["tools"].as_array().cloned().expect("tools")
}

/// Runs the gate on the two tool lists with the static judge; the exit code and the report.
fn gate(base: Vec<Value>, head: Vec<Value>) -> (Option<i32>, Value) {
    let dir = tempfile::tempdir().unwrap();
    let base = crate::support::write_export(dir.path(), "base.json", "corpus", base);
    let head = crate::support::write_export(dir.path(), "head.json", "corpus", head);
    let out = Command::new(GATE)
        .args(["--base-export"])
        .arg(&base)
        .arg("--head-export")
        .arg(&head)
        .args(["--judge", "static", "--report-dir", "out"])
        .current_dir(dir.path())
        .env("NO_COLOR", "1")
        .output()
        .expect("run tdqs-gate");
    let text = std::fs::read_to_string(dir.path().join("out/tool-definition-score.json"))
        .unwrap_or_else(|e| panic!("no report ({e}): {}", String::from_utf8_lossy(&out.stderr)));
    (out.status.code(), serde_json::from_str(&text).unwrap())
}

fn edit(tools: &[Value], name: &str, change: impl FnOnce(&mut Value)) -> Vec<Value> {
    let mut tools = tools.to_vec();
    let tool = tools
        .iter_mut()
        .find(|t| t["name"] == name)
        .unwrap_or_else(|| panic!("{name} not in the corpus"));
    change(tool);
    tools
}

fn append(tool: &mut Value, sentence: &str) {
    let d = tool["description"].as_str().unwrap_or_default().to_string();
    tool["description"] = Value::String(format!("{d} {sentence}"));
}

#[test]
fn argument_advice_added_to_mcp_server_time_passes() {
    let base = corpus_tools("time");
    let head = edit(&base, "convert_time", |t| {
        append(t, "Always use IANA timezone names.")
    });
    let (code, report) = gate(base, head);
    assert_eq!(code, Some(0), "{}", report["reason"]);
}

#[test]
fn will_be_notified_for_are_notified_passes() {
    let base = edit(&corpus_tools("time"), "convert_time", |t| {
        append(t, "The reviewers are notified by email.")
    });
    let head = edit(&base, "convert_time", |t| {
        let d = t["description"]
            .as_str()
            .unwrap_or_default()
            .replace("are notified", "will be notified");
        t["description"] = Value::String(d);
    });
    let (code, report) = gate(base, head);
    assert_eq!(code, Some(0), "{}", report["reason"]);
}

#[test]
fn deleting_a_parameter_description_blocks() {
    // On a two-tool server, a twelve-tool one and the 262-tool one: the judge has no noise, so
    // the exact fall decides whatever the server's size.
    let gitlab = corpus_tools("gitlab");
    let (gitlab_tool, gitlab_param) = gitlab
        .iter()
        .find_map(|t| {
            let props = t["inputSchema"]["properties"].as_object()?;
            let all_described =
                props.len() >= 2 && props.values().all(|p| p.get("description").is_some());
            all_described.then(|| {
                (
                    t["name"].as_str().unwrap_or_default().to_string(),
                    props.keys().next().cloned().unwrap_or_default(),
                )
            })
        })
        .expect("a gitlab tool with every parameter described");
    for (server, tool, param) in [
        ("time", "convert_time", "time"),
        ("git", "git_branch", "contains"),
        ("gitlab", gitlab_tool.as_str(), gitlab_param.as_str()),
    ] {
        let base = corpus_tools(server);
        let head = edit(&base, tool, |t| {
            let p = &mut t["inputSchema"]["properties"][param];
            assert!(
                p.get("description").is_some(),
                "{server} {tool}.{param} is described"
            );
            p.as_object_mut().unwrap().remove("description");
        });
        let (code, report) = gate(base, head);
        assert_eq!(code, Some(1), "{server}: {}", report["reason"]);
    }
}

#[test]
fn deleting_notions_description_blocks_when_generated_boilerplate_remains() {
    let base = corpus_tools("notion");
    let name = base
        .iter()
        .find_map(|t| {
            let d = t["description"].as_str()?;
            d.contains("Error Responses")
                .then(|| t["name"].as_str().unwrap_or_default().to_string())
        })
        .expect("a Notion tool with generated error responses");
    let head = edit(&base, &name, |t| {
        let d = t["description"].as_str().unwrap_or_default();
        // Keep only the generated part: the "Notion |" prefix and the error list.
        let kept = format!(
            "Notion | \n{}",
            &d[d.find("Error Responses").unwrap_or(0)..]
        );
        t["description"] = Value::String(kept);
    });
    let boilerplate = head.iter().find(|t| t["name"] == name.as_str()).unwrap();
    let answer = tool_answer(boilerplate, &[]);
    for (dim, v) in answer["scores"].as_object().unwrap() {
        assert_eq!(v["score"], 1, "{dim} of boilerplate only: {answer:#}");
    }
    let (code, report) = gate(base, head);
    assert_eq!(code, Some(1), "{}", report["reason"]);
}

fn weighted(answer: &Value) -> f64 {
    let s = |k: &str| answer["scores"][k]["score"].as_f64().unwrap_or(0.0);
    0.25 * s("purpose_clarity")
        + 0.2 * s("usage_guidelines")
        + 0.2 * s("behavioral_transparency")
        + 0.15 * s("parameter_semantics")
        + 0.1 * s("conciseness_structure")
        + 0.1 * s("contextual_completeness")
}

#[test]
fn gitlabs_repeated_guidance_does_not_lift_most_tools_to_the_top() {
    let tools = corpus_tools("gitlab");
    let names: Vec<String> = tools
        .iter()
        .map(|t| t["name"].as_str().unwrap_or_default().to_string())
        .collect();
    let high = tools
        .iter()
        .filter(|t| weighted(&tool_answer(t, &names)) >= 4.35)
        .count();
    // static-rules-v2 gave 234 of 262 tools 4.4 or more, crediting "instead of silently applying"
    // as when not to use the tool and the same pasted sentence as each tool's usage guidance.
    assert!(
        high * 2 < tools.len(),
        "{high} of {} tools at 4.4 or more",
        tools.len()
    );
    // "instead of silently applying" is no longer read as a boundary.
    let merge = tools
        .iter()
        .find(|t| t["name"] == "create_merge_request")
        .expect("create_merge_request");
    let why = tool_answer(merge, &names)["scores"]["usage_guidelines"]["justification"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    assert!(!why.contains("instead of silently"), "{why}");
}
