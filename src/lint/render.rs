//! Renderings of a [`LintReport`]: text grouped by tool, JSON, and SARIF 2.1.0. Each is a pure
//! function of the report, so two runs on the same input give the same bytes.

use serde_json::{json, Value};
use sha2::{Digest, Sha256};

use super::catalogue::{Code, Finding, Rule, Severity, RULES};
use super::scorecard::format_tenths;
use super::{LintReport, RULES_VERSION};

fn plural(n: usize, one: &str, many: &str) -> String {
    format!("{n} {}", if n == 1 { one } else { many })
}

/// The one-line summary that ends every text rendering.
pub(crate) fn summary_line(report: &LintReport) -> String {
    let (e, w, i) = report.counts();
    let mut line = format!(
        "{} · {}, {}, {} · average scorecard {}/100",
        plural(report.tool_count, "tool", "tools"),
        plural(e, "error", "errors"),
        plural(w, "warning", "warnings"),
        i.to_string() + " info",
        format_tenths(report.average_tenths),
    );
    if !report.disabled.is_empty() {
        line.push_str(&format!(
            " · {} off",
            plural(report.disabled.len(), "rule", "rules")
        ));
    }
    line
}

fn push_finding(out: &mut String, f: &Finding) {
    let target = match &f.parameter {
        Some(p) => format!(" [{p}]"),
        None => String::new(),
    };
    out.push_str(&format!(
        "  {:<7}  {}{}  {}\n",
        f.severity.as_str(),
        f.code,
        target,
        f.message
    ));
    out.push_str(&format!("           fix: {}\n", f.suggestion));
}

/// Text grouped by tool: server-wide findings, then each tool with its scorecard and findings,
/// then one summary line.
pub fn render_text(report: &LintReport) -> String {
    let mut out = String::new();
    out.push_str(&format!(
        "tdqs-gate lint · rules {} · static rules, no model\n",
        report.rules_version
    ));
    let server = match (&report.server_name, &report.server_version) {
        (Some(n), Some(v)) => format!("{n} {v}"),
        (Some(n), None) => n.clone(),
        _ => "(unnamed server)".to_string(),
    };
    out.push_str(&format!("server: {server}\n"));

    let server_findings: Vec<&Finding> = report
        .findings
        .iter()
        .filter(|f| f.tool.is_none())
        .collect();
    if !server_findings.is_empty() {
        out.push_str("\n(server)\n");
        for f in server_findings {
            push_finding(&mut out, f);
        }
    }
    // Findings by tool, gathered once (the report lists them in tool order).
    let mut by_tool: std::collections::HashMap<&str, Vec<&Finding>> =
        std::collections::HashMap::new();
    for f in &report.findings {
        if let Some(tool) = f.tool.as_deref() {
            by_tool.entry(tool).or_default().push(f);
        }
    }
    // Keyed by the published form: the key at the end lists codes in text order.
    let mut info_codes: std::collections::BTreeMap<&str, Code> = std::collections::BTreeMap::new();
    for card in &report.scorecards {
        let findings = by_tool.remove(card.tool.as_str()).unwrap_or_default();
        out.push_str(&format!(
            "\n{} · {}/100 (purpose {}/20, when to use {}/20, arguments {}/25, return {}/15, constraints {}/10, examples {}/10)\n",
            card.tool,
            card.total,
            card.purpose,
            card.when_to_use,
            card.arguments,
            card.return_value,
            card.constraints,
            card.examples
        ));
        if findings.is_empty() {
            out.push_str("  no findings\n");
        }
        // Errors and warnings in full; info findings on one line per tool (code, and the
        // parameters it concerns), explained once in the key at the end.
        let mut info: Vec<(Code, Vec<&str>)> = Vec::new();
        for f in findings {
            if f.severity == Severity::Info {
                info_codes.insert(f.code.as_str(), f.code);
                match info.iter_mut().find(|(code, _)| *code == f.code) {
                    Some((_, params)) => params.extend(f.parameter.as_deref()),
                    None => info.push((f.code, f.parameter.as_deref().into_iter().collect())),
                }
            } else {
                push_finding(&mut out, f);
            }
        }
        if !info.is_empty() {
            let parts: Vec<String> = info
                .iter()
                .map(|(code, params)| {
                    if params.is_empty() {
                        code.to_string()
                    } else {
                        format!("{code} [{}]", params.join(", "))
                    }
                })
                .collect();
            out.push_str(&format!("  {:<7}  {}\n", "info", parts.join(", ")));
        }
    }
    if !info_codes.is_empty() {
        out.push_str("\ninfo codes (`--json` or `--sarif` give each finding's message):\n");
        for code in info_codes.into_values() {
            let rule = code.rule();
            out.push_str(&format!("  {code} {} · {}\n", rule.slug, rule.title));
        }
    }
    out.push('\n');
    if !report.hidden.is_inactive() {
        out.push_str(&report.hidden.summary());
        out.push('\n');
    }
    out.push_str(&summary_line(report));
    out.push('\n');
    out
}

/// The JSON rendering (stable key order, trailing newline).
pub fn render_json(report: &LintReport) -> String {
    let (e, w, i) = report.counts();
    let value = json!({
        "schemaVersion": 1,
        "rulesVersion": report.rules_version,
        "mode": "static",
        "server": {"name": report.server_name, "version": report.server_version},
        "toolCount": report.tool_count,
        "summary": {
            "errors": e,
            "warnings": w,
            "info": i,
            "averageScore": format_tenths(report.average_tenths).parse::<f64>().unwrap_or(0.0),
            "disabledRules": report.disabled,
        },
        "scorecards": report.scorecards,
        "findings": report.findings,
    });
    let mut value = value;
    if !report.hidden.is_inactive() {
        // Only when a baseline or a suppression was given: other reports keep their bytes.
        value["summary"]["hidden"] = json!(report.hidden);
    }
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| "{}".to_string());
    text.push('\n');
    text
}

/// A fingerprint that depends on what the finding is about, not on its wording, so rewording a
/// message does not reopen alerts.
pub fn fingerprint(f: &Finding) -> String {
    let mut h = Sha256::new();
    for part in [
        f.code.as_str(),
        f.tool.as_deref().unwrap_or(""),
        f.parameter.as_deref().unwrap_or(""),
        &f.related.join(","),
    ] {
        h.update(part.as_bytes());
        h.update([0u8]);
    }
    hex::encode(h.finalize())[..32].to_string()
}

fn sarif_rule(rule: &Rule, level: Severity) -> Value {
    let anchor = rule.code.as_str().to_lowercase();
    json!({
        "id": rule.code.as_str(),
        "name": rule.slug,
        "shortDescription": {"text": rule.title},
        "fullDescription": {"text": rule.help},
        "help": {
            "text": format!("{} {} (docs/lint.md#{anchor})", rule.title, rule.help),
            "markdown": format!("**{}** — {}\n\nSee `docs/lint.md#{anchor}` for a before and after.", rule.title, rule.help),
        },
        "defaultConfiguration": {"level": level.sarif_level()},
        "properties": {"tags": ["mcp", "tool-definitions", rule.family.label()]},
    })
}

/// SARIF 2.1.0: one run, every enabled rule with help text, one result per finding with a
/// logical location (the tool, or `tool.parameter`) and, when the report names an artifact, a
/// physical one.
pub fn render_sarif(report: &LintReport) -> String {
    render_sarif_located(report, None)
}

/// SARIF 2.1.0 as [`render_sarif`], with each finding about a located tool or parameter
/// anchored on its source line (`physicalLocation` relative to the source tree).
pub fn render_sarif_located(
    report: &LintReport,
    sources: Option<&tdqs_core::locate::Locations>,
) -> String {
    let enabled: Vec<(&Rule, Severity)> = RULES
        .iter()
        .filter(|r| !report.disabled.contains(&r.code))
        .map(|r| {
            // The level a finding of this rule carries in this report, else the default.
            let level = report
                .findings
                .iter()
                .find(|f| f.code == r.code)
                .map_or(r.severity, |f| f.severity);
            (r, level)
        })
        .collect();
    let rule_index = |code: Code| enabled.iter().position(|(r, _)| r.code == code);
    let results: Vec<Value> = report
        .findings
        .iter()
        .map(|f| {
            let mut logical = Vec::new();
            match (&f.tool, &f.parameter) {
                (Some(t), Some(p)) => logical.push(json!({"name": p, "fullyQualifiedName": format!("{t}.{p}"), "kind": "parameter"})),
                (Some(t), None) => logical.push(json!({"name": t, "fullyQualifiedName": t, "kind": "function"})),
                _ => logical.push(json!({"name": report.server_name.clone().unwrap_or_else(|| "server".to_string()), "kind": "module"})),
            }
            let mut location = json!({"logicalLocations": logical});
            let source = sources.zip(f.tool.as_deref()).and_then(|(s, tool)| {
                crate::locate::sarif::physical_location(s, tool, f.parameter.as_deref())
            });
            if let Some(physical) = source {
                location["physicalLocation"] = physical;
            } else if let Some(artifact) = &report.artifact {
                location["physicalLocation"] = json!({
                    "artifactLocation": {"uri": artifact},
                    "region": {"startLine": 1},
                });
            }
            let mut result = json!({
                "ruleId": f.code,
                "level": f.severity.sarif_level(),
                "message": {"text": format!("{} Fix: {}", f.message, f.suggestion)},
                "locations": [location],
                "partialFingerprints": {"tdqsGateFinding/v1": fingerprint(f)},
                "properties": {"suggestion": f.suggestion, "related": f.related},
            });
            if let Some(i) = rule_index(f.code) {
                result["ruleIndex"] = json!(i);
            }
            if let Some(c) = sources.zip(f.tool.as_deref()).and_then(|(s, tool)| {
                crate::locate::sarif::confidence(s, tool, f.parameter.as_deref())
            }) {
                result["properties"]["sourceLocationConfidence"] = json!(c);
            }
            result
        })
        .collect();
    let value = json!({
        "$schema": "https://json.schemastore.org/sarif-2.1.0.json",
        "version": "2.1.0",
        "runs": [{
            "tool": {"driver": {
                "name": "tdqs-gate",
                "semanticVersion": env!("CARGO_PKG_VERSION"),
                "rules": enabled.iter().map(|(r, l)| sarif_rule(r, *l)).collect::<Vec<_>>(),
            }},
            "results": results,
            "properties": {
                "rulesVersion": RULES_VERSION,
                "mode": "static",
                "averageScore": format_tenths(report.average_tenths),
            },
        }],
    });
    let mut value = value;
    if sources.is_some() {
        // Source columns count code points, not the UTF-16 units SARIF assumes by default.
        value["runs"][0]["columnKind"] = json!("unicodeCodePoints");
    }
    let mut text = serde_json::to_string_pretty(&value).unwrap_or_else(|_| "{}".to_string());
    text.push('\n');
    text
}
