//! How the pages read for a reviewer: a deleted description is one fix, named first, rather
//! than the same generic line under every dimension that fell with it.

use crate::gate::harness::*;

#[test]
fn a_deleted_description_shows_one_fix_first_on_both_pages() {
    let setup = Setup::new(&base_tools());
    setup.set_head(&with_description(&base_tools(), "close_issue", ""));
    let run = setup.run(&["--base", "main", "--judge", "static"]);
    run.assert_code(1);
    let fix = "Restore or write the description";
    let markdown = run.markdown();
    assert_eq!(markdown.matches(fix).count(), 1, "{markdown}");
    // No generic per-dimension line follows it.
    assert!(!markdown.contains("Fix Purpose clarity"), "{markdown}");
    // The fix comes before the dimensions that fell.
    let (before, _) = markdown.split_once(fix).unwrap();
    let tool_item = before.rfind("`close_issue`").expect("the tool's item");
    assert!(
        !before[tool_item..].contains("Purpose clarity"),
        "{markdown}"
    );

    let html = std::fs::read_to_string(run.report_dir.join("tool-definition-score.html")).unwrap();
    assert_eq!(html.matches(fix).count(), 1);
    assert!(!html.contains("Fix: Say in the first sentence"));
    assert!(html.contains("class=\"fix-first\""));
}

#[test]
fn the_monorepo_pages_put_the_failing_server_first_with_coloured_verdicts_and_full_width_bars() {
    let setup = crate::monorepo::monorepo(crate::monorepo::TWO_SERVERS);
    // `web`, the second table, deletes a description; `api`, the first, is unchanged.
    let web = setup.repo.path.join("web/tools.json");
    let mut tools: serde_json::Value =
        serde_json::from_str(&std::fs::read_to_string(&web).unwrap()).unwrap();
    tools[0]["description"] = serde_json::json!("");
    std::fs::write(&web, pretty(&tools)).unwrap();
    let run = setup.run(&["--base", "main", "--judge", "static"]);
    run.assert_code(1);
    // The JSON keeps the configuration's order.
    assert_eq!(run.report()["servers"][0]["name"], "api");

    let markdown = run.markdown();
    let (web_at, api_at) = (
        markdown.find("Server `web`").expect("web section"),
        markdown.find("Server `api`").expect("api section"),
    );
    assert!(web_at < api_at, "{markdown}");
    let table_web = markdown.find("| `web` |").expect("web row");
    let table_api = markdown.find("| `api` |").expect("api row");
    assert!(table_web < table_api, "{markdown}");

    let html = std::fs::read_to_string(run.report_dir.join("tool-definition-score.html")).unwrap();
    let block_cell = html
        .find("<td class=\"decision\" data-verdict=\"block\">")
        .expect("a coloured BLOCK cell");
    let pass_cell = html
        .find("<td class=\"decision\" data-verdict=\"pass\">")
        .expect("a coloured PASS cell");
    assert!(block_cell < pass_cell);
    assert!(html.contains("td.decision[data-verdict=block]{background:"));
    // The sections follow the table's order.
    let sections = html.split("<section").skip(2).collect::<Vec<_>>().join("");
    assert!(
        sections.find("<code>web</code>").expect("web section")
            < sections.find("<code>api</code>").expect("api section"),
        "{sections}"
    );
    // The bar chart spans the section: labels, 720 pixels of bars, the figures.
    assert!(html.contains("width=\"1010\""), "no full-width bar chart");
}
