//! The static judge (`--judge static`) on the bundled example's careless and careful tool sets.

use super::*;

#[test]
fn the_static_judge_blocks_careless_definitions_and_passes_careful_ones() {
    let careful = static_fixture("careful");
    let careless = static_fixture("careless");

    let setup = Setup::new(&careful);
    setup.set_head(&careless);
    let run = setup.run(&["--base", "main", "--judge", "static"]);
    run.assert_code(1);
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["decision"], "block");
    assert_eq!(report["scoring"]["judge"]["mode"], "static");
    assert_eq!(report["scoring"]["judge"]["modelJudged"], false);
    assert!(run.markdown().contains("**not a model's score**"));
    assert!(!report["causes"]["tools"].as_array().unwrap().is_empty());
    assert_eq!(
        setup.spec.request_count(),
        0,
        "the static judge needs no prompts"
    );

    let setup = Setup::new(&careless);
    setup.set_head(&careful);
    let run = setup.run(&["--base", "main", "--judge", "static"]);
    run.assert_code(0);
    let report = run.report();
    assert_schema_valid(&report);
    assert_eq!(report["pairs"].as_array().unwrap().len(), 1);
}
