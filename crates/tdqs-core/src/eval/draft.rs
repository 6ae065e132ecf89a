//! `eval --init`: the judge model drafts a case suite, then each drafted case is validated in a
//! separate question. A case whose expected answer is defended with a confidence below
//! [`EXPLORATORY_BELOW`] is kept as exploratory: shown, never scored.
//!
//! Drafted cases are `ai_generated`: the validation is done by the same kind of system that
//! selects, so they are directional, not independent ground truth (docs/eval.md).

use std::collections::BTreeSet;

use serde_json::{json, Value};

use super::case::{Case, CaseKind, Choice, Provenance, NO_TOOL};
use crate::judge::answer::{describe, parse_object};

/// Validation confidence below which a drafted case is exploratory.
pub const EXPLORATORY_BELOW: f64 = 0.7;

/// The system prompt of the draft question.
pub fn draft_system() -> String {
    format!(
        "You write test cases for the tool selection of an MCP server. You are given the server's \
         tool definitions exactly as listed, and pairs of tools that a linter found easy to \
         confuse. Write realistic user requests, in a user's own words (do not copy the \
         descriptions' wording):\n\
         - for every tool, one or two `positive` cases that tool should serve;\n\
         - for every confusable pair, a `sibling` case for each tool of the pair that only that \
         tool serves, naming the other tool in `sibling`;\n\
         - three `abstain` cases asking for something none of the tools can do, expecting \
         {NO_TOOL}.\n\
         Answer with one JSON object and nothing else: {{\"cases\": [{{\"id\": \"<short-kebab-id>\", \
         \"request\": \"...\", \"expect\": \"<tool name or {NO_TOOL}>\", \"kind\": \
         \"positive|sibling|abstain\", \"sibling\": \"<tool name, sibling cases only, else empty>\"}}]}}"
    )
}

/// The user prompt of the draft question.
pub fn draft_user(tools: &[Value], confusable: &[(String, String)]) -> String {
    let listing = serde_json::to_string_pretty(&Value::Array(tools.to_vec()))
        .unwrap_or_else(|_| "[]".to_string());
    let pairs = if confusable.is_empty() {
        "(none found)".to_string()
    } else {
        confusable
            .iter()
            .map(|(a, b)| format!("- {a} / {b}"))
            .collect::<Vec<_>>()
            .join("\n")
    };
    format!("Tools (JSON, as listed by the server):\n{listing}\n\nConfusable pairs:\n{pairs}\n")
}

/// The system prompt of the validation question.
pub fn validation_system() -> String {
    "You review one test case of an MCP server's tool selection. Given the tool definitions \
     exactly as listed, a user request and the answer the case expects (a tool name, or NO_TOOL \
     when no tool fits), say how confident you are that the expected answer is the single right \
     one for that request. Answer with one JSON object and nothing else: {\"confidence\": <a \
     number from 0 to 1>, \"reason\": \"<one sentence>\"}"
        .to_string()
}

/// The user prompt of the validation question.
pub fn validation_user(tools: &[Value], case: &Case) -> String {
    let listing = serde_json::to_string_pretty(&Value::Array(tools.to_vec()))
        .unwrap_or_else(|_| "[]".to_string());
    format!(
        "Tools (JSON, as listed by the server):\n{listing}\n\nUser request:\n{}\n\nExpected answer: {}\n",
        case.request,
        case.expect.as_str()
    )
}

pub fn draft_answer_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"cases": {"type": "array", "items": {
            "type": "object",
            "properties": {
                "id": {"type": "string"}, "request": {"type": "string"},
                "expect": {"type": "string"},
                "kind": {"type": "string", "enum": ["positive", "sibling", "abstain"]},
                "sibling": {"type": "string"}
            },
            "required": ["id", "request", "expect", "kind", "sibling"],
            "additionalProperties": false
        }}},
        "required": ["cases"],
        "additionalProperties": false
    })
}

pub fn validation_answer_schema() -> Value {
    json!({
        "type": "object",
        "properties": {"confidence": {"type": "number"}, "reason": {"type": "string"}},
        "required": ["confidence", "reason"],
        "additionalProperties": false
    })
}

/// The drafted cases (`ai_generated`, not yet validated), and why any were dropped: a case
/// naming a tool the server does not list, a duplicate id, an inconsistent kind.
pub fn parse_draft_answer(
    text: &str,
    tools: &[String],
) -> Result<(Vec<Case>, Vec<String>), String> {
    let root = parse_object(text)?;
    let Some(Value::Array(items)) = root.get("cases") else {
        return Err("`cases` must be an array".to_string());
    };
    let listed: BTreeSet<&str> = tools.iter().map(String::as_str).collect();
    let mut ids = BTreeSet::new();
    let mut cases = Vec::new();
    let mut dropped = Vec::new();
    for (i, item) in items.iter().enumerate() {
        let Value::Object(map) = item else {
            return Err(format!(
                "`cases[{i}]` must be an object, got {}",
                describe(item)
            ));
        };
        let field = |k: &str| {
            map.get(k)
                .and_then(Value::as_str)
                .unwrap_or("")
                .trim()
                .to_string()
        };
        let (id, request, expect) = (field("id"), field("request"), field("expect"));
        let kind = match field("kind").as_str() {
            "positive" => CaseKind::Positive,
            "sibling" => CaseKind::Sibling,
            "abstain" => CaseKind::Abstain,
            other => {
                dropped.push(format!("case #{}: kind {other:?} is not a kind", i + 1));
                continue;
            }
        };
        let sibling = Some(field("sibling")).filter(|s| !s.is_empty() && kind == CaseKind::Sibling);
        let expect = Choice::parse(&expect);
        let problem = if id.is_empty() || request.is_empty() {
            Some("an empty id or request".to_string())
        } else if !ids.insert(id.clone()) {
            Some(format!("the id `{id}` is used twice"))
        } else if (kind == CaseKind::Abstain) != (expect == Choice::NoTool) {
            Some(format!(
                "kind `{}` with expected `{}`",
                kind.as_str(),
                expect.as_str()
            ))
        } else {
            expect
                .tool()
                .into_iter()
                .chain(sibling.as_deref())
                .find(|t| !listed.contains(t))
                .map(|t| format!("`{t}` is not a tool of the server"))
        };
        if let Some(p) = problem {
            dropped.push(format!(
                "case #{} ({}): {p}",
                i + 1,
                if id.is_empty() { "?" } else { &id }
            ));
            continue;
        }
        cases.push(Case {
            id,
            request,
            expect,
            kind,
            provenance: Provenance::AiGenerated,
            sibling,
            exploratory: false,
            confidence: None,
            note: None,
        });
    }
    Ok((cases, dropped))
}

/// The validation answer's confidence (0–1).
pub fn parse_validation_answer(text: &str) -> Result<(f64, String), String> {
    let root = parse_object(text)?;
    let confidence = super::answer::confidence_of(&root)?;
    let reason = root
        .get("reason")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    Ok((confidence, reason))
}

/// Records a validation: the confidence, and exploratory below [`EXPLORATORY_BELOW`].
pub fn apply_validation(case: &mut Case, confidence: f64) {
    case.confidence = Some(confidence);
    case.exploratory = confidence < EXPLORATORY_BELOW;
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn draft_answer_keeps_good_cases_and_names_dropped_ones() {
        let text = json!({"cases": [
            {"id": "a", "request": "Find Ann", "expect": "search", "kind": "positive", "sibling": ""},
            {"id": "b", "request": "Find the org", "expect": "orgs", "kind": "sibling", "sibling": "search"},
            {"id": "c", "request": "Text Ann", "expect": "NO_TOOL", "kind": "abstain", "sibling": ""},
            {"id": "d", "request": "Fly", "expect": "teleport", "kind": "positive", "sibling": ""},
            {"id": "a", "request": "Again", "expect": "search", "kind": "positive", "sibling": ""},
            {"id": "e", "request": "Nothing", "expect": "search", "kind": "abstain", "sibling": ""}
        ]})
        .to_string();
        let (cases, dropped) =
            parse_draft_answer(&text, &["search".into(), "orgs".into()]).unwrap();
        assert_eq!(cases.len(), 3);
        assert!(cases
            .iter()
            .all(|c| c.provenance == Provenance::AiGenerated));
        assert_eq!(cases[1].sibling.as_deref(), Some("search"));
        assert_eq!(cases[0].sibling, None);
        assert_eq!(dropped.len(), 3, "{dropped:?}");
        assert!(dropped[0].contains("`teleport` is not a tool"));
        assert!(dropped[1].contains("used twice"));
        assert!(dropped[2].contains("kind `abstain`"));
    }

    #[test]
    fn low_confidence_makes_a_case_exploratory() {
        let (mut cases, _) = parse_draft_answer(
            r#"{"cases":[{"id":"a","request":"r","expect":"t","kind":"positive","sibling":""}]}"#,
            &["t".into()],
        )
        .unwrap();
        let (c, _) = parse_validation_answer(r#"{"confidence": 0.69, "reason": "vague"}"#).unwrap();
        apply_validation(&mut cases[0], c);
        assert!(cases[0].exploratory);
        apply_validation(&mut cases[0], 0.7);
        assert!(!cases[0].exploratory);
        assert!(parse_validation_answer(r#"{"confidence": 2}"#).is_err());
    }
}
