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
