//! Tests that need an external install (real MCP servers, the pinned Claude Code CLI,
//! actionlint, python3) and do not find it pass without running. So that a green run does not
//! hide that, each such test records why here, and when the test binary exits one summary is
//! written straight to the process's stderr (file descriptor 2), which the test harness does not
//! capture: it shows after `test result:` in a plain `cargo test --workspace`, without
//! `--nocapture`.
//!
//! With `TDQS_GATE_REQUIRE_EXTERNAL=1` (as `.ci/run` sets) a missing install fails the test
//! instead, so nothing can be skipped there.

use std::io::Write;
use std::sync::{Mutex, Once};

static SKIPPED: Mutex<Vec<(String, String)>> = Mutex::new(Vec::new());
static AT_EXIT: Once = Once::new();

/// Records that the running test skips its work because `reason`; panics instead under
/// `TDQS_GATE_REQUIRE_EXTERNAL=1`.
pub fn skip(reason: &str) {
    if std::env::var("TDQS_GATE_REQUIRE_EXTERNAL").as_deref() == Ok("1") {
        panic!("{reason} (TDQS_GATE_REQUIRE_EXTERNAL=1)");
    }
    let test = std::thread::current()
        .name()
        .unwrap_or("a test")
        .to_string();
    eprintln!("skipped: {reason}");
    SKIPPED
        .lock()
        .unwrap_or_else(|e| e.into_inner())
        .push((test, reason.to_string()));
    AT_EXIT.call_once(|| {
        // SAFETY: registers a plain `extern "C"` function with no arguments, as atexit expects.
        unsafe {
            libc::atexit(print_summary);
        }
    });
}

/// The summary: how many tests skipped, grouped by reason.
pub fn summary(skipped: &[(String, String)]) -> String {
    let mut by_reason: Vec<(&str, Vec<&str>)> = Vec::new();
    for (test, reason) in skipped {
        match by_reason.iter_mut().find(|(r, _)| r == reason) {
            Some((_, tests)) => tests.push(test),
            None => by_reason.push((reason, vec![test])),
        }
    }
    let mut text = format!(
        "\nNOTE: {} test(s) passed WITHOUT running, because an external install is missing:\n",
        skipped.len()
    );
    for (reason, mut tests) in by_reason {
        tests.sort_unstable();
        text.push_str(&format!("  - {reason}\n"));
        for test in tests {
            text.push_str(&format!("      {test}\n"));
        }
    }
    text.push_str(
        "  Install them with `for s in tests/setup/*.sh; do bash \"$s\"; done`, or run `bash .ci/run`\n  (TDQS_GATE_REQUIRE_EXTERNAL=1 makes a missing install a failure).\n",
    );
    text
}

extern "C" fn print_summary() {
    let skipped = SKIPPED.lock().unwrap_or_else(|e| e.into_inner());
    if skipped.is_empty() {
        return;
    }
    let _ = std::io::stderr().write_all(summary(&skipped).as_bytes());
}

#[test]
fn the_skip_summary_names_each_reason_and_test_once() {
    let text = summary(&[
        ("real_servers::a".into(), "server X is not installed".into()),
        ("real_servers::b".into(), "server X is not installed".into()),
        ("action::lint".into(), "actionlint is not installed".into()),
    ]);
    assert!(text.contains("3 test(s) passed WITHOUT running"), "{text}");
    assert_eq!(
        text.matches("server X is not installed").count(),
        1,
        "{text}"
    );
    assert!(
        text.contains("      real_servers::a\n      real_servers::b\n"),
        "{text}"
    );
    assert!(text.contains("tests/setup/"), "{text}");
}
