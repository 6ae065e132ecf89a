//! The self-contained HTML report beside the JSON and Markdown. Its text from the
//! server is escaped; it draws the changed tools and counts the rest; and it renders in a real
//! headless Chromium (the distribution's package, `tests/setup/chromium.sh`) with no console
//! error, no network load, both charts present and the decision the JSON records.

use serde_json::{json, Value};

use crate::gate::harness::*;
use crate::support::chromium::{self, Browser};

const HTML: &str = "tool-definition-score.html";
const BETTER: &str = "Closes an open issue with an optional comment. Use this instead of delete when the history should stay. Closing a closed issue changes nothing. Returns the issue's number and new state; fails with an error when the number does not exist.";
const WORSE: &str = "Closes an issue.";

fn html_of(run: &Run) -> String {
    std::fs::read_to_string(run.report_dir.join(HTML))
        .unwrap_or_else(|e| panic!("no HTML report ({e}); {}", run.describe()))
}

/// A head whose `close_issue` the fake judge scores 2 everywhere (with two reasons): BLOCK.
fn block_setup(description: &str) -> Setup {
    let setup = Setup::new(&base_tools());
    setup.set_head(&with_description(&base_tools(), "close_issue", description));
    let mut dropped = tool_rule("close_issue", Some(description), None, 2);
    dropped["scores"] = json!({
        "purpose_clarity": {"score": 2, "justification": "Says what it closes but not which issue."},
        "usage_guidelines": {"score": 1, "justification": "Nothing says when to close."},
    });
    setup.fake.control(script(vec![dropped]));
    setup
}

/// A head whose `close_issue` improves to 5: a scored PASS.
fn pass_setup() -> Setup {
    let setup = Setup::new(&base_tools());
    setup.set_head(&with_description(&base_tools(), "close_issue", BETTER));
    setup.fake.control(script(vec![tool_rule(
        "close_issue",
        Some(BETTER),
        None,
        5,
    )]));
    setup
}

#[test]
fn escapes_text_from_the_server() {
    let hostile = "Closes an issue. </style><script>alert(1)</script> & \"quoted\" <img src=x onerror=alert(2)>.";
    let setup = block_setup(hostile);
    let run = setup.gate(&[]);
    run.assert_code(1);
    let html = html_of(&run);
    // The description reaches the page (the fallen tool's diff), escaped.
    assert!(
        html.contains("&lt;/style&gt;&lt;script&gt;alert(1)&lt;/script&gt; &amp; &quot;quoted&quot; &lt;img src=x onerror=alert(2)&gt;"),
        "{html}"
    );
    assert!(!html.contains("<script"), "a script element: {html}");
    assert!(!html.contains("<img"), "an image element: {html}");
    assert_eq!(html.matches("<style>").count(), 1);
    assert_eq!(html.matches("</style>").count(), 1);
    assert!(html.contains("<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'sha256-"));
    // The JSON and Markdown are still there beside it.
    assert_eq!(run.report()["decision"], "block");
    assert!(run.markdown().contains("BLOCK"));
}

#[test]
fn draws_changed_tools_and_counts_the_rest() {
    // 60 tools, one of which changes: the charts draw that one and count the other 59.
    let tools: Vec<Value> = (0..60)
        .map(|i| {
            json!({
                "name": format!("tool_{i:02}"),
                "description": format!("Returns record {i} of the archive. Use it to read one record; it changes nothing."),
                "inputSchema": {"type": "object", "properties": {}},
                "annotations": {"readOnlyHint": true}
            })
        })
        .collect();
    let base = Value::Array(tools);
    let setup = Setup::new(&base);
    let mut head = base.clone();
    head[7]["description"] = json!("Returns a record.");
    setup.set_head(&head);
    let run = setup.run(&["--base", "main", "--judge", "static"]);
    assert!(run.code == 0 || run.code == 1, "{}", run.describe());
    let html = html_of(&run);
    assert_eq!(
        html.matches("<g class=\"tool-bars\"").count(),
        1,
        "only the changed tool is drawn: {html}"
    );
    assert!(html.contains("<g class=\"tool-bars\" data-tool=\"tool_07\">"));
    assert_eq!(html.matches("<rect class=\"cell ").count(), 6);
    assert!(
        html.contains("Not drawn: 59 tool(s) with an unchanged definition and an equal score"),
        "{html}"
    );
    // The folded table counts every tool; the report summarises the 59 that stand the same
    // (a side of more than 50 tools), and the table says so.
    assert!(html.contains("Every tool (first pair, 60)"));
    let table = &html[html.find("class=\"every-tool\"").unwrap()..];
    // Rows of this table only (the cost section's table below it names the changed tool too).
    let rows = &table[..table.find("</table>").unwrap()];
    assert_eq!(rows.matches("<tr><td><code>tool_").count(), 1);
    assert!(
        table.contains("59 tool(s) with the same definition and the same scores"),
        "{table}"
    );

    // With --full-report the table lists all 60.
    let full = setup.run(&["--base", "main", "--judge", "static", "--full-report"]);
    let html = html_of(&full);
    assert!(html.contains("Not drawn: 59 tool(s) with an unchanged definition"));
    let table = &html[html.find("class=\"every-tool\"").unwrap()..];
    let rows = &table[..table.find("</table>").unwrap()];
    assert_eq!(rows.matches("<tr><td><code>tool_").count(), 60);
}

/// What one page shows, read in the browser.
fn read_page(browser: &mut Browser) -> Value {
    browser.eval(
        r#"(() => {
            const q = (s) => document.querySelector(s);
            const n = (s) => document.querySelectorAll(s).length;
            const verdict = q('.verdict');
            return {
                title: document.title,
                h1: q('h1') && q('h1').textContent,
                sectionDecision: q('section.server') && q('section.server').dataset.decision,
                decisionCell: q('.decision[data-verdict]') && q('.decision[data-verdict]').textContent,
                decisionVerdict: q('.decision[data-verdict]') && q('.decision[data-verdict]').dataset.verdict,
                reason: q('p.reason') && q('p.reason').textContent,
                pairRows: n('table.pairs tr.pair'),
                barCharts: n('svg.chart.bars'),
                bars: n('svg.chart.bars rect.bar'),
                fellBars: n('svg.chart.bars rect.bar.fell'),
                heatMaps: n('svg.chart.heatmap'),
                cells: n('svg.chart.heatmap rect.cell'),
                barsBox: q('svg.chart.bars') ? q('svg.chart.bars').getBoundingClientRect().height : 0,
                diffInserts: n('.tool.fallen .diff .ins'),
                diffDeletes: n('.tool.fallen .diff .del'),
                noModel: q('.no-model') && q('.no-model').textContent,
                verdictBackground: verdict && getComputedStyle(verdict).backgroundColor,
                styleRules: document.styleSheets.length ? document.styleSheets[0].cssRules.length : 0,
            };
        })()"#,
    )
}

fn check_common(page: &Value, report: &Value, what: &str) {
    let upper = report["decision"].as_str().unwrap().to_uppercase();
    assert_eq!(
        page["title"],
        format!("Tool definition score: {upper}"),
        "{what}: {page:#}"
    );
    assert_eq!(page["h1"], page["title"], "{what}");
    assert_eq!(page["sectionDecision"], report["decision"], "{what}");
    assert_eq!(page["decisionVerdict"], report["decision"], "{what}");
    assert!(
        page["decisionCell"].as_str().unwrap().starts_with(&upper),
        "{what}: {page:#}"
    );
    // The reason as the JSON has it, its `code` spans shown as code.
    assert_eq!(
        page["reason"],
        report["reason"].as_str().unwrap().replace('`', ""),
        "{what}"
    );
    // The inline style applied: its hash in the policy is right.
    assert!(
        page["styleRules"].as_u64().unwrap() > 10,
        "{what}: {page:#}"
    );
    let colour = match report["decision"].as_str().unwrap() {
        "pass" => "rgb(26, 127, 55)",
        _ => "rgb(207, 34, 46)",
    };
    assert_eq!(page["verdictBackground"], colour, "{what}: {page:#}");
}

#[test]
fn renders_in_headless_chromium() {
    let Some(program) = chromium::find() else {
        crate::support::skips::skip(
            "chromium is not installed (tests/setup/chromium.sh installs the distribution's package)",
        );
        return;
    };
    // The three pages: a BLOCK, a scored PASS, and a PASS with no model call.
    let block = block_setup(WORSE);
    let block_run = block.gate(&[]);
    block_run.assert_code(1);
    let pass = pass_setup();
    let pass_run = pass.gate(&[]);
    pass_run.assert_code(0);
    let unchanged = Setup::new(&base_tools());
    let unchanged_run = unchanged.gate(&[]);
    unchanged_run.assert_code(0);

    let mut browser = Browser::start(&program);
    let profile = browser.profile().display().to_string();
    for (what, run) in [
        ("block", &block_run),
        ("pass", &pass_run),
        ("no-model pass", &unchanged_run),
    ] {
        let report = run.report();
        let path = run.report_dir.join(HTML).canonicalize().unwrap();
        let url = format!("file://{}", path.display());
        let seen = browser.events.len();
        browser.open(&url);
        let page = read_page(&mut browser);
        check_common(&page, &report, what);
        let pairs = report["pairs"].as_array().unwrap().len();
        assert_eq!(page["pairRows"], pairs, "{what}: {page:#}");
        if pairs == 0 {
            assert_eq!(page["barCharts"], 0, "{what}: {page:#}");
            assert_eq!(page["heatMaps"], 0, "{what}: {page:#}");
            assert_eq!(page["noModel"], "No model was called.", "{what}");
        } else {
            // Four tools on both sides, all drawn: two bars and six cells each.
            assert_eq!(page["barCharts"], 1, "{what}: {page:#}");
            assert_eq!(page["bars"], 8, "{what}: {page:#}");
            assert_eq!(page["heatMaps"], 1, "{what}: {page:#}");
            assert_eq!(page["cells"], 24, "{what}: {page:#}");
            assert!(
                page["barsBox"].as_f64().unwrap() > 100.0,
                "{what}: {page:#}"
            );
        }
        if what == "block" {
            assert_eq!(page["fellBars"], 1, "{page:#}");
            assert!(page["diffInserts"].as_u64().unwrap() >= 1, "{page:#}");
            assert!(page["diffDeletes"].as_u64().unwrap() >= 1, "{page:#}");
        }
        let events = &browser.events[seen..];
        let requests: Vec<&str> = events
            .iter()
            .filter(|e| e["method"] == "Network.requestWillBeSent")
            .map(|e| e["params"]["request"]["url"].as_str().unwrap_or(""))
            .collect();
        assert_eq!(
            requests,
            vec![url.as_str()],
            "{what}: only the page itself loads"
        );
        let problems: Vec<String> = browser.problems();
        assert!(problems.is_empty(), "{what}: {problems:#?}");
    }
    let pid = browser.pid();
    drop(browser);
    // No browser process outlives the test.
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(10);
    loop {
        let left = chromium::processes_mentioning(&profile);
        if left.is_empty() {
            break;
        }
        assert!(
            std::time::Instant::now() < deadline,
            "browser processes left (group {pid}): {left:#?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(100));
    }
}

/// A gate run with `--eval synthetic` over the careful issue-tracker server (its report in
/// `dir/report`).
fn selection_run(dir: &std::path::Path) -> (Value, String) {
    let gate = crate::eval::eval_gate_dir(dir);
    let out = gate(&["--eval", "synthetic"]);
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let report: Value = serde_json::from_str(
        &std::fs::read_to_string(dir.join("report/tool-definition-score.json")).unwrap(),
    )
    .unwrap();
    let html = std::fs::read_to_string(dir.join("report").join(HTML)).unwrap();
    (report, html)
}

#[test]
fn shows_the_selection_check_of_a_gate_run_with_eval() {
    let dir = tempfile::tempdir().unwrap();
    let (report, html) = selection_run(dir.path());
    assert_eq!(report["eval"]["mode"], "synthetic");
    let start = html
        .find("<div class=\"selection-check\"")
        .unwrap_or_else(|| panic!("no selection section: {html}"));
    let section = &html[start..];
    assert!(section.starts_with(
        "<div class=\"selection-check\" data-mode=\"synthetic\" data-blocks=\"false\">"
    ));
    assert!(section.contains("<h3>Selection check (<code>synthetic</code>)</h3>"));
    assert!(section.contains("an estimate of ambiguity, not of model accuracy"));
    // Each side's selection accuracy with its counts, as the JSON records it.
    for side in ["baseSelection", "headSelection"] {
        let r = &report["eval"][side];
        let (hit, of) = (r["hit"].as_u64().unwrap(), r["of"].as_u64().unwrap());
        assert!(section.contains(&format!("/{of})")), "{side}: {section}");
        assert!(
            section.contains(&format!("({hit}/{of})")),
            "{side}: {section}"
        );
    }
    assert!(section.contains("synthetic mode generates no arguments"));
    let test = &report["eval"]["test"];
    assert!(section.contains(&format!(
        "{} fell, {} rose; exact McNemar p = {:.4}",
        test["worse"],
        test["better"],
        test["pValue"].as_f64().unwrap()
    )));
    assert!(section.contains("The selection check does not block."));
    assert!(!section.contains("tdqs-rose-selection-fell"));
    // Without --eval there is no section.
    let plain = crate::eval::eval_gate_dir(dir.path())(&[]);
    assert_eq!(plain.status.code(), Some(0));
    let html = std::fs::read_to_string(dir.path().join("report").join(HTML)).unwrap();
    assert!(!html.contains("selection-check"));
}

#[test]
fn selection_check_renders_in_headless_chromium() {
    let Some(program) = chromium::find() else {
        crate::support::skips::skip(
            "chromium is not installed (tests/setup/chromium.sh installs the distribution's package)",
        );
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let (report, _) = selection_run(dir.path());
    let mut browser = Browser::start(&program);
    let path = dir.path().join("report").join(HTML).canonicalize().unwrap();
    let url = format!("file://{}", path.display());
    browser.open(&url);
    let page = read_page(&mut browser);
    check_common(&page, &report, "selection");
    let section = browser.eval(
        r#"(() => {
            const s = document.querySelector('div.selection-check');
            if (!s) return null;
            return {
                mode: s.dataset.mode,
                blocks: s.dataset.blocks,
                heading: s.querySelector('h3').textContent,
                label: s.querySelector('.mode-label').textContent,
                rows: s.querySelectorAll('table.selection tbody tr').length,
                test: s.querySelector('p.mcnemar').textContent,
                visible: s.getBoundingClientRect().height > 50,
            };
        })()"#,
    );
    assert_eq!(section["mode"], "synthetic", "{section:#}");
    assert_eq!(section["blocks"], "false");
    assert_eq!(section["heading"], "Selection check (synthetic)");
    assert_eq!(
        section["label"],
        tdqs_core::eval::Mode::Synthetic.label(),
        "{section:#}"
    );
    assert_eq!(section["rows"], 3);
    assert!(section["test"]
        .as_str()
        .unwrap()
        .contains("exact McNemar p ="));
    assert_eq!(section["visible"], true, "{section:#}");
    let problems: Vec<String> = browser.problems();
    assert!(problems.is_empty(), "{problems:#?}");
}
