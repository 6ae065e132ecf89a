//! Answers the fake writes byte for byte: a broken one is named at once (not after the
//! timeout), a lone surrogate and a duplicate answer become warnings.

use super::*;

#[test]
fn a_broken_answer_is_named_at_once_not_after_the_timeout() {
    for (raw, cause) in [
        ("nan", "JSON has no NaN"),
        ("huge-number", "such as 1e400"),
        ("invalid-utf8", "not UTF-8"),
    ] {
        let case = Case::new();
        let mut spec = case.fake(&["--mode", "raw-answer", "--raw", raw]);
        spec.limits.request_timeout = Duration::from_secs(30);
        let started = Instant::now();
        let error = expect_err(run(&spec));
        assert!(
            started.elapsed() < Duration::from_secs(10),
            "{raw}: took {:?}",
            started.elapsed()
        );
        assert!(
            error.cause.contains("malformed answer to `tools/list`")
                || error.cause.contains("malformed answer to tools/list"),
            "{raw}: {}",
            error.render()
        );
        assert!(error.cause.contains(cause), "{raw}: {}", error.render());
        assert!(
            !error.cause.contains("did not answer"),
            "{}",
            error.render()
        );
    }
}

#[test]
fn a_lone_surrogate_becomes_a_replacement_character_with_a_warning() {
    let case = Case::new();
    let listing =
        run(&case.fake(&["--mode", "raw-answer", "--raw", "lone-surrogate"])).expect("listing");
    assert_eq!(listing.tools[0]["description"], "cut \u{FFFD}");
    assert!(
        listing.warnings.iter().any(|w| w.contains("U+FFFD")),
        "{:?}",
        listing.warnings
    );
}

#[test]
fn a_duplicate_answer_is_a_recorded_warning() {
    let case = Case::new();
    let listing =
        run(&case.fake(&["--mode", "raw-answer", "--raw", "duplicate"])).expect("listing");
    assert!(
        listing
            .warnings
            .iter()
            .any(|w| w.contains("answered a request more than once")
                && w.contains("request id(s) 1")),
        "{:?}",
        listing.warnings
    );
}
