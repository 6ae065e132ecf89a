//! Protocol eras: the modern era's discovery and `_meta`, `auto` choosing between the eras and
//! falling back, and a legacy or modern choice against a server of the other kind.

use super::*;

#[test]
fn modern_era_uses_discover_and_meta_on_every_request() {
    let case = Case::new();
    let listing =
        run_with(&case.fake(&["--mode", "modern"]), &profile(Era::Modern)).expect("listing");
    assert_eq!(listing.era, Era::Modern);
    assert_eq!(listing.protocol_version, "2026-07-28");
    assert_eq!(listing.server_name.as_deref(), Some("fake-modern"));
    assert_eq!(listing.server_version.as_deref(), Some("2.0.0"));
    assert_eq!(listing.instructions.as_deref(), Some("Modern fake."));
    assert_eq!(listing.tools.len(), 3);
    let received = case.received();
    assert_eq!(case.received_methods(), ["server/discover", "tools/list"]);
    for message in &received {
        let meta = &message["params"]["_meta"];
        assert_eq!(
            meta["io.modelcontextprotocol/protocolVersion"],
            "2026-07-28"
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientCapabilities"],
            json!({})
        );
        assert_eq!(
            meta["io.modelcontextprotocol/clientInfo"],
            json!({"name": "tdqs-gate", "version": "1"})
        );
    }
}

#[test]
fn auto_era_goes_modern_with_a_modern_server_and_legacy_otherwise() {
    let case = Case::new();
    let listing =
        run_with(&case.fake(&["--mode", "modern"]), &profile(Era::Auto)).expect("listing");
    assert_eq!(listing.era, Era::Modern);

    let case = Case::new();
    let listing =
        run_with(&case.fake(&["--mode", "normal"]), &profile(Era::Auto)).expect("listing");
    assert_eq!(listing.era, Era::Legacy);
    assert_eq!(listing.protocol_version, "2025-11-25");
    assert_eq!(
        case.received_methods(),
        [
            "server/discover",
            "initialize",
            "notifications/initialized",
            "tools/list"
        ]
    );
}

#[test]
fn auto_era_falls_back_when_discover_is_never_answered() {
    let case = Case::new();
    let mut spec = case.fake(&["--mode", "normal", "--discover-silent"]);
    // The discover probe gets at most half of the startup budget.
    spec.limits.startup_timeout = Duration::from_secs(4);
    let started = Instant::now();
    let listing = run_with(&spec, &profile(Era::Auto)).expect("listing");
    assert_eq!(listing.era, Era::Legacy);
    assert!(started.elapsed() >= Duration::from_secs(2));
}

#[test]
fn legacy_era_with_a_dual_era_server_uses_initialize() {
    let case = Case::new();
    let listing =
        run_with(&case.fake(&["--mode", "modern"]), &profile(Era::Legacy)).expect("listing");
    assert_eq!(listing.era, Era::Legacy);
    assert_eq!(listing.server_name.as_deref(), Some("fake-mcp-server"));
}

#[test]
fn modern_era_against_a_legacy_server_is_invalid() {
    let case = Case::new();
    let error = expect_err(run_with(
        &case.fake(&["--mode", "normal"]),
        &profile(Era::Modern),
    ));
    assert_error(
        &error,
        &["`server/discover`", "-32601"],
        "does not implement",
    );
}
