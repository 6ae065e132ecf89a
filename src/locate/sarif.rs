//! SARIF physical locations for located tools: code scanning anchors a finding on the line that
//! defines the tool or parameter, so the pull request's diff is annotated.

use serde_json::{json, Value};

use tdqs_core::locate::{Confidence, Locations, Place};

/// The `physicalLocation` of a finding about `tool` (and `parameter`), when it was located:
/// the URI is relative to the source tree, line and column are 1-based code points (the run
/// declares `columnKind: unicodeCodePoints`).
pub fn physical_location(
    locations: &Locations,
    tool: &str,
    parameter: Option<&str>,
) -> Option<Value> {
    let span = locations.span_for(tool, parameter)?;
    Some(json!({
        "artifactLocation": {"uri": uri_path(&span.path), "uriBaseId": "%SRCROOT%"},
        "region": {"startLine": span.line, "startColumn": span.column},
    }))
}

/// How sure the location is (`high`, `medium`), for a result's properties.
pub fn confidence(
    locations: &Locations,
    tool: &str,
    parameter: Option<&str>,
) -> Option<&'static str> {
    let t = locations.tool(tool)?;
    let place = parameter
        .and_then(|p| t.parameters.iter().find(|q| q.parameter == p))
        .map(|q| &q.place)
        .filter(|p| p.span().is_some())
        .unwrap_or(&t.place);
    match place {
        Place::Located {
            confidence: Confidence::High,
            ..
        } => Some("high"),
        Place::Located {
            confidence: Confidence::Medium,
            ..
        } => Some("medium"),
        Place::NotLocated { .. } => None,
    }
}

/// A relative path as a URI reference: each segment percent-encoded where RFC 3986 requires.
fn uri_path(path: &str) -> String {
    let mut out = String::new();
    for b in path.bytes() {
        if b.is_ascii_alphanumeric() || b"-._~/!$&'()*+,;=:@".contains(&b) {
            out.push(b as char);
        } else {
            out.push_str(&format!("%{b:02X}"));
        }
    }
    out
}
