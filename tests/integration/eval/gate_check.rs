//! The gate's opt-in selection check: a scripted selection regression blocks, a poisoned
//! eval cache in the working tree is ignored, a misconfigured check is INVALID, and the
//! `[eval]` table and `--eval` flag turn the check on from the command line.

use super::*;

use tdqs_core::exit::Verdict;
use tdqs_core::export::{ExportSource, ProbeProfile, RawListing};
use tdqs_gate::eval::EvalOptions;
use tdqs_gate::gate::{self, GateEval, GateOptions, JudgeMode, JudgeOptions, SideSource};
use tdqs_gate::progress::NoProgress;

const CATCH_ALL: &str = "handle_request";

fn spec_fixture(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("fixtures/spec")
        .join(name)
}

pub(super) fn careful_tools() -> Vec<Value> {
    serde_json::from_str(
        &std::fs::read_to_string(repo_file("examples/issue-tracker/careful.json")).unwrap(),
    )
    .unwrap()
}

/// The head: the careful tools plus a catch-all tool whose description the scripted TDQS
/// judge likes better than any other.
fn head_tools() -> Vec<Value> {
    let mut tools = careful_tools();
    tools.push(json!({
            "name": CATCH_ALL,
            "description": "Handle any request about a project's issues in one call, from finding to exporting.",
            "inputSchema": {"type": "object",
                            "properties": {"project": {"type": "string"}, "request": {"type": "string"}},
                            "required": ["project", "request"], "additionalProperties": false}
        }));
    tools
}

pub(super) fn export_file(dir: &Path, name: &str, tools: Vec<Value>) -> PathBuf {
    let listing = RawListing {
        server_name: Some("issue-tracker-example".into()),
        server_version: Some("1.0.0".into()),
        protocol_version: "2025-11-25".into(),
        tools,
        ..RawListing::default()
    };
    let export = tdqs_core::digest::assemble_export(
        listing,
        ProbeProfile::default(),
        ExportSource::default(),
    )
    .unwrap();
    let path = dir.join(format!("{name}.export.json"));
    tdqs_gate::export::file::write_export(&path, &export).unwrap();
    path
}

/// TDQS answers: 4 on every dimension, 5 for the catch-all (so the head's mean TDQS rises);
/// selection answers by the scripted rule: with the catch-all listed, every request the
/// careful suite expects at a tool goes to it, else to the expected tool.
fn standin_answer(system: &str, user: &str, expected: &BTreeMap<String, String>) -> String {
    if system.contains("tool-selection step") {
        let request = user
            .split("User request:\n")
            .nth(1)
            .unwrap_or("")
            .trim_end();
        let tool = expected
            .get(request)
            .cloned()
            .unwrap_or_else(|| "NO_TOOL".into());
        let tool = if user.contains(&format!("\"name\": \"{CATCH_ALL}\"")) && tool != "NO_TOOL" {
            CATCH_ALL.to_string()
        } else {
            tool
        };
        return json!({"tool": tool, "arguments": {}, "confidence": 0.8, "reason": "scripted"})
            .to_string();
    }
    if system.contains("tool-set reviewer") {
        let dim = |s: u8| json!({"score": s, "justification": "stand-in"});
        return json!({
            "scores": {"disambiguation": dim(4), "naming_consistency": dim(4),
                       "tool_count_appropriateness": dim(4), "completeness": dim(4)},
            "shadowing_risks": [], "summary": "stand-in coherence"
        })
        .to_string();
    }
    let score = if user.contains("Handle any request") {
        5
    } else {
        4
    };
    let dim = json!({"score": score, "justification": "stand-in"});
    json!({
        "scores": {"purpose_clarity": dim, "usage_guidelines": dim, "behavioral_transparency": dim,
                   "parameter_semantics": dim, "conciseness_structure": dim,
                   "contextual_completeness": dim},
        "annotation_contradiction": false, "summary": "stand-in"
    })
    .to_string()
}

fn api(model: String) -> Loopback {
    let readme = std::fs::read_to_string(spec_fixture("standin-readme.md")).unwrap();
    let suite =
        tdqs_gate::eval::suite::parse(&std::fs::read_to_string(cases("careful")).unwrap()).unwrap();
    let expected: BTreeMap<String, String> = suite
        .cases
        .iter()
        .map(|c| (c.request.clone(), c.expect.as_str().to_string()))
        .collect();
    Loopback::start(move |req| {
        let path = req.path.split('?').next().unwrap_or("");
        if path.ends_with("/README.md") {
            return Response::ok(readme.clone());
        }
        match (req.method.as_str(), path) {
            ("POST", "/v1/chat/completions") => {
                let body: Value = serde_json::from_slice(&req.body).unwrap();
                let system = body["messages"][0]["content"].as_str().unwrap_or("");
                let user = body["messages"][1]["content"].as_str().unwrap_or("");
                let text = standin_answer(system, user, &expected);
                Response::ok(
                    json!({"id": "c1", "object": "chat.completion", "model": body["model"],
                               "choices": [{"index": 0, "finish_reason": "stop",
                                            "message": {"role": "assistant", "content": text}}],
                               "usage": {"prompt_tokens": 10, "completion_tokens": 5}})
                    .to_string(),
                )
                .with_header("content-type", "application/json")
            }
            ("GET", p) if p.starts_with("/v1/models") => {
                Response::ok(json!({"data": [{"id": model, "object": "model"}]}).to_string())
                    .with_header("content-type", "application/json")
            }
            _ => Response::status(404, "not found"),
        }
    })
}

fn options(dir: &Path, server: &Loopback, with_eval: bool) -> GateOptions {
    let record: Value =
        serde_json::from_str(&std::fs::read_to_string(spec_fixture("standin-pins.json")).unwrap())
            .unwrap();
    let model = record["model"].as_str().unwrap().to_string();
    let pins = dir.join("pins.json");
    std::fs::write(&pins, record.to_string()).unwrap();
    let judge = JudgeOptions {
        mode: JudgeMode::Openai,
        pins: Some(pins),
        cache_dir: Some(dir.join("spec-cache")),
        spec_url: Some(server.url("/{commit}/README.md")),
        base_url: Some(server.url("")),
        model: Some(model),
        ..JudgeOptions::default()
    };
    let suite =
        tdqs_gate::eval::suite::parse(&std::fs::read_to_string(cases("careful")).unwrap()).unwrap();
    GateOptions {
        repo: None,
        base: SideSource::ExportFile(export_file(dir, "base", careful_tools())),
        head: SideSource::ExportFile(export_file(dir, "head", head_tools())),
        server: Default::default(),
        judge: judge.clone(),
        report_dir: dir.join("report"),
        share_identical: true,
        decision_rule: None,
        tool_drop: None,
        max_listing_growth: None,
        full_report: false,
        settings_rev: None,
        settings_file: None,
        suggest: None,
        answer_cache: tdqs_gate::score::answer_cache::AnswerCacheChoice::Off,
        eval: with_eval.then(|| GateEval {
            suite,
            cases_path: cases("careful"),
            options: EvalOptions {
                mode: tdqs_core::eval::Mode::LiveModel,
                judge: Some(judge),
                cache_dir: dir.join("eval-cache"),
                cache_tree: None,
                trusted_answers: None,
                offline: false,
                max_cost_tokens: None,
                pace: None,
                allow_unknown_tools: true,
            },
        }),
    }
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gate_blocks_on_a_scripted_selection_regression() {
    let dir = tempfile::tempdir().unwrap();
    let server = api("claude-test-model".into());

    // Without the check, the TDQS rise passes.
    let plain = gate::run(&options(dir.path(), &server, false), Arc::new(NoProgress)).await;
    assert_eq!(plain.verdict, Verdict::Pass, "{:?}", plain.error);
    assert!(plain.report.as_ref().unwrap().eval.is_none());

    // With it: 18 cases fell, none rose, p far below 0.05: BLOCK, naming the captor.
    let outcome = gate::run(&options(dir.path(), &server, true), Arc::new(NoProgress)).await;
    assert_eq!(outcome.verdict, Verdict::Block, "{:?}", outcome.error);
    let report = outcome.report.unwrap();
    let check = report
        .eval
        .as_ref()
        .expect("the selection check is reported");
    assert!(check.blocks);
    assert_eq!((check.test.worse, check.test.better), (18, 0));
    assert!(check.test.p_value < 1e-4);
    assert!(check.tdqs_rose_while_selection_fell);
    assert_eq!(check.selector, "openai");
    assert!(
        report.reason.contains("selection fell significantly"),
        "{}",
        report.reason
    );
    assert!(
        report
            .reason
            .contains("`s-close-not-delete` (expected `close_issue`) now goes to `handle_request`"),
        "{}",
        report.reason
    );
    // The whole sentence: one space between its words, wherever it is shown.
    assert_eq!(
        report.warnings[0],
        "the head's mean TDQS rose while selection fell significantly (18 of 22 cases fell, \
             p = 0.0000): the definitions read better to the judge and route worse"
    );
    // The JSON report keeps its schema, and the Markdown summary shows the check.
    let written = outcome.written.expect("report written");
    let json: Value =
        serde_json::from_str(&std::fs::read_to_string(&written.json).unwrap()).unwrap();
    crate::gate::harness::assert_schema_valid(&json);
    assert_eq!(json["exitCode"], 1);
    let md = std::fs::read_to_string(&written.markdown).unwrap();
    assert!(md.contains("### Selection check (live_model)"), "{md}");
    assert!(md.contains("now goes to `handle_request`"), "{md}");
    assert!(md.contains("The mean TDQS rose while selection fell significantly"));
    // The HTML page has the section too: mode, both sides' figures with their parts, the
    // cases that fell with their captor, the test and the call-out.
    let html = std::fs::read_to_string(&written.html).unwrap();
    let section = &html[html
        .find("<div class=\"selection-check\"")
        .unwrap_or_else(|| panic!("no selection section: {html}"))..];
    assert!(section.starts_with(
        "<div class=\"selection-check\" data-mode=\"live_model\" data-blocks=\"true\">"
    ));
    assert!(section.contains(tdqs_core::eval::Mode::LiveModel.label()));
    assert!(section.contains("100% (18/18)"), "{section}");
    assert!(section.contains("0% (0/18)"), "{section}");
    assert!(section.contains("18 fell, 0 rose"), "{section}");
    assert!(section.contains("The selection check <b>blocks</b>"));
    assert_eq!(
        section
            .matches("<td><code>handle_request</code></td></tr>")
            .count(),
        18
    );
    assert!(section.contains("<tr data-case=\"s-close-not-delete\">"));
    assert!(section.contains("tdqs-rose-selection-fell"));

    // --check re-validates the saved report, the selection part included.
    let gate_opts = options(dir.path(), &server, false);
    let check_opts = gate::check::CheckOptions {
        repo: gate_opts.repo,
        base: Some(gate_opts.base),
        head: Some(gate_opts.head),
        server: gate_opts.server,
        judge: gate_opts.judge,
        decision_rule: gate_opts.decision_rule,
        tool_drop: gate_opts.tool_drop,
        max_listing_growth: None,
        settings_rev: gate_opts.settings_rev,
    };
    let rechecked = gate::check::run(&written.json, &check_opts, Arc::new(NoProgress), None).await;
    assert_eq!(rechecked.verdict, Verdict::Block, "{:?}", rechecked.error);
}

/// A pull request commits made-up answers into the working tree's eval cache (the keys are
/// computable from public inputs): the gate must not read them. Before the fix the second
/// run replayed the forged answers and PASSed a head whose selection fell in 18 cases.
#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn gate_ignores_a_poisoned_eval_cache_in_the_working_tree() {
    let dir = tempfile::tempdir().unwrap();
    let server = api("claude-test-model".into());
    let first = gate::run(&options(dir.path(), &server, true), Arc::new(NoProgress)).await;
    assert_eq!(first.verdict, Verdict::Block, "{:?}", first.error);
    // The forgery: every cached answer now names the case's expected tool.
    let suite =
        tdqs_gate::eval::suite::parse(&std::fs::read_to_string(cases("careful")).unwrap()).unwrap();
    let expected: BTreeMap<String, String> = suite
        .cases
        .iter()
        .map(|c| (c.id.clone(), c.expect.as_str().to_string()))
        .collect();
    let cache = dir.path().join("eval-cache");
    let mut forged = 0;
    for file in std::fs::read_dir(&cache).unwrap() {
        let path = file.unwrap().path();
        let mut entry: Value =
            serde_json::from_str(&std::fs::read_to_string(&path).unwrap()).unwrap();
        let tool = &expected[entry["caseId"].as_str().unwrap()];
        entry["text"] = json!(json!({"tool": tool, "arguments": {}, "confidence": 0.9,
                                         "reason": "forged"})
        .to_string());
        std::fs::write(&path, entry.to_string()).unwrap();
        forged += 1;
    }
    assert!(forged >= 22, "{forged}");
    let again = gate::run(&options(dir.path(), &server, true), Arc::new(NoProgress)).await;
    assert_eq!(again.verdict, Verdict::Block, "{:?}", again.error);
    let check = again.report.unwrap().eval.unwrap();
    assert_eq!((check.test.worse, check.test.better), (18, 0));
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn a_misconfigured_selection_check_is_invalid() {
    let dir = tempfile::tempdir().unwrap();
    let server = api("claude-test-model".into());
    let mut opts = options(dir.path(), &server, true);
    // The static judge cannot select: INVALID, not a silent synthetic run.
    if let Some(e) = opts.eval.as_mut() {
        e.options.judge.as_mut().unwrap().mode = JudgeMode::Static;
    }
    let outcome = gate::run(&opts, Arc::new(NoProgress)).await;
    assert_eq!(outcome.verdict, Verdict::Invalid);
    let error = outcome.error.unwrap();
    assert!(error.cause.contains("cannot select"), "{}", error.cause);
}

/// A folder holding the careful suite as `tdqs-eval.toml` and two exports of the careful server
/// (the head's first description one sentence longer), and the gate over them with the static
/// judge, its report in `report/`.
pub(crate) fn eval_gate_dir(dir: &Path) -> impl Fn(&[&str]) -> Output + '_ {
    let base = export_file(dir, "base", careful_tools());
    let mut tools = careful_tools();
    tools[0]["description"] = json!(format!(
        "{} Results come back newest first.",
        tools[0]["description"].as_str().unwrap()
    ));
    let head = export_file(dir, "head", tools);
    std::fs::copy(cases("careful"), dir.join("tdqs-eval.toml")).unwrap();
    move |extra: &[&str]| {
        std::process::Command::new(GATE)
            .current_dir(dir)
            .arg("--repo")
            .arg(dir)
            .arg("--base-export")
            .arg(&base)
            .arg("--head-export")
            .arg(&head)
            .args(["--judge", "static", "--report-dir", "report", "-q"])
            .args(extra)
            .output()
            .unwrap()
    }
}

#[test]
fn eval_table_and_flag_turn_the_check_on_from_the_command_line() {
    let dir = tempfile::tempdir().unwrap();
    let gate = eval_gate_dir(dir.path());
    let report = || -> Value {
        serde_json::from_str(
            &std::fs::read_to_string(dir.path().join("report/tool-definition-score.json")).unwrap(),
        )
        .unwrap()
    };
    // Off by default.
    let out = gate(&[]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(report().get("eval").is_none());
    // --eval synthetic: the check runs and is reported, with its mode.
    let out = gate(&["--eval", "synthetic"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let r = report();
    assert_eq!(r["eval"]["mode"], "synthetic");
    assert_eq!(r["eval"]["blocks"], false);
    assert_eq!(r["eval"]["cases"].as_array().unwrap().len(), 22);
    crate::gate::harness::assert_schema_valid(&r);
    assert!(String::from_utf8_lossy(&out.stdout).contains("Selection (synthetic"));
    // The [eval] table is a setting of the base revision: with export files and no
    // --settings-rev, a working tree's table (the pull request's, in CI) is not read.
    std::fs::write(
        dir.path().join("tdqs-gate.toml"),
        "[eval]\nmode = \"synthetic\"\n",
    )
    .unwrap();
    assert_eq!(gate(&[]).status.code(), Some(0));
    assert!(report().get("eval").is_none());
    // From a revision named by --settings-rev: on, and a table without a mode or a path
    // leaving the repository is INVALID before anything runs.
    let git = |args: &[&str]| {
        let out = std::process::Command::new("git")
            .current_dir(dir.path())
            .args([
                "-c",
                "user.name=t",
                "-c",
                "user.email=t@t",
                "-c",
                "commit.gpgsign=false",
            ])
            .args(args)
            .output()
            .unwrap();
        assert!(
            out.status.success(),
            "{}",
            String::from_utf8_lossy(&out.stderr)
        );
    };
    git(&["init", "-q"]);
    git(&["add", "tdqs-gate.toml", "tdqs-eval.toml"]);
    git(&["commit", "-q", "-m", "settings"]);
    assert_eq!(gate(&["--settings-rev", "HEAD"]).status.code(), Some(0));
    assert_eq!(report()["eval"]["mode"], "synthetic");
    for table in [
        "[eval]\ncases = \"tdqs-eval.toml\"\n",
        "[eval]\nmode = \"synthetic\"\ncases = \"../x.toml\"\n",
    ] {
        std::fs::write(dir.path().join("tdqs-gate.toml"), table).unwrap();
        git(&["commit", "-q", "-a", "-m", "table"]);
        let out = gate(&["--settings-rev", "HEAD"]);
        assert_eq!(out.status.code(), Some(2), "{table}");
    }
}
