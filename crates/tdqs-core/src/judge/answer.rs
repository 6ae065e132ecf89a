//! Parsing and validating a judge's answer text.
//!
//! The answer formats are the ones the TDQS v1.3 prompts demand (notes `tdqs-spec.md` §1.4, §2.5):
//! a JSON object, optionally wrapped in one Markdown code fence, with a closed set of keys. Every
//! refusal says exactly which key or value is wrong, because the message ends up in the INVALID
//! report after the retries are spent and must let a reader see what the model did.
//!
//! The schema is closed on purpose: a missing key, an unexpected key (at any level), a score that is
//! not an integer from 1 to 5 (booleans, floats such as `4.0`, and strings are refused) or a value
//! of the wrong type is a refusal, and the caller asks again.

use std::collections::BTreeMap;

use serde_json::{Map, Value};

use crate::rubric::{
    CoherenceAnswer, CoherenceDimension, Judged, ShadowingAnswer, ToolAnswer, ToolDimension,
};

/// Parses the answer to the per-tool question.
pub fn parse_tool_answer(text: &str) -> Result<ToolAnswer, String> {
    let root = parse_object(text)?;
    check_keys(
        &root,
        "the answer",
        &["scores", "annotation_contradiction", "summary"],
    )?;
    let scores_map = object_field(&root, "scores", "scores")?;
    let keys: Vec<&str> = ToolDimension::ALL.iter().map(|d| d.key()).collect();
    check_keys(scores_map, "`scores`", &keys)?;
    let mut scores = BTreeMap::new();
    for dimension in ToolDimension::ALL {
        let judged = judged_entry(scores_map, dimension.key())?;
        scores.insert(dimension, judged);
    }
    let annotation_contradiction = match root.get("annotation_contradiction") {
        Some(Value::Bool(b)) => *b,
        Some(other) => {
            return Err(format!(
                "`annotation_contradiction` must be true or false, got {}",
                describe(other)
            ))
        }
        None => unreachable_missing("annotation_contradiction")?,
    };
    let summary = string_field(&root, "summary", "summary")?;
    Ok(ToolAnswer {
        scores,
        annotation_contradiction,
        summary,
    })
}

/// Parses the answer to the set-level (coherence) question.
pub fn parse_coherence_answer(text: &str) -> Result<CoherenceAnswer, String> {
    let root = parse_object(text)?;
    check_keys(
        &root,
        "the answer",
        &["scores", "shadowing_risks", "summary"],
    )?;
    let scores_map = object_field(&root, "scores", "scores")?;
    let keys: Vec<&str> = CoherenceDimension::ALL.iter().map(|d| d.key()).collect();
    check_keys(scores_map, "`scores`", &keys)?;
    let mut scores = BTreeMap::new();
    for dimension in CoherenceDimension::ALL {
        let judged = judged_entry(scores_map, dimension.key())?;
        scores.insert(dimension, judged);
    }
    let risks = match root.get("shadowing_risks") {
        Some(Value::Array(items)) => items,
        Some(other) => {
            return Err(format!(
                "`shadowing_risks` must be an array, got {}",
                describe(other)
            ))
        }
        None => unreachable_missing("shadowing_risks")?,
    };
    let mut shadowing_risks = Vec::with_capacity(risks.len());
    for (index, item) in risks.iter().enumerate() {
        let path = format!("shadowing_risks[{index}]");
        let Value::Object(entry) = item else {
            return Err(format!(
                "`{path}` must be an object, got {}",
                describe(item)
            ));
        };
        check_keys(
            entry,
            &format!("`{path}`"),
            &["tool", "cheaper_sibling", "justification"],
        )?;
        shadowing_risks.push(ShadowingAnswer {
            tool: string_field(entry, "tool", &format!("{path}.tool"))?,
            cheaper_sibling: string_field(
                entry,
                "cheaper_sibling",
                &format!("{path}.cheaper_sibling"),
            )?,
            justification: string_field(entry, "justification", &format!("{path}.justification"))?,
        });
    }
    let summary = string_field(&root, "summary", "summary")?;
    Ok(CoherenceAnswer {
        scores,
        shadowing_risks,
        summary,
    })
}

/// Strips surrounding whitespace and one enclosing code fence, then parses a JSON object.
pub(crate) fn parse_object(text: &str) -> Result<Map<String, Value>, String> {
    let body = unfence(text.trim())?;
    if body.is_empty() {
        return Err("the answer is empty".to_string());
    }
    let value: Value = serde_json::from_str(body).map_err(|e| {
        format!(
            "the answer is not valid JSON ({e}); it starts with {}",
            quote_start(body)
        )
    })?;
    match value {
        Value::Object(map) => Ok(map),
        other => Err(format!(
            "the answer must be a JSON object, got {}",
            describe(&other)
        )),
    }
}

/// Returns the inside of the fence when the whole text is exactly one ```` ``` ```` or
/// ```` ```json ```` block; otherwise the text unchanged (it then has to be bare JSON).
fn unfence(text: &str) -> Result<&str, String> {
    let Some(after_ticks) = text.strip_prefix("```") else {
        return Ok(text);
    };
    let (info, rest) = match after_ticks.find('\n') {
        Some(newline) => (&after_ticks[..newline], &after_ticks[newline + 1..]),
        None => return Err("the answer opens a code fence but has nothing inside it".to_string()),
    };
    let info = info.trim();
    if !(info.is_empty() || info.eq_ignore_ascii_case("json")) {
        return Err(format!(
            "the answer is fenced as `{info}`; only a ```json or a plain ``` block is accepted"
        ));
    }
    let Some(inner) = rest.trim_end().strip_suffix("```") else {
        return Err("the answer opens a code fence but does not close it at the end".to_string());
    };
    if inner.contains("```") {
        return Err(
            "the answer holds more than one code fence; exactly one JSON block is accepted"
                .to_string(),
        );
    }
    Ok(inner.trim())
}

/// Refuses a missing key or a key outside `expected`, naming it.
fn check_keys(map: &Map<String, Value>, what: &str, expected: &[&str]) -> Result<(), String> {
    let missing: Vec<&str> = expected
        .iter()
        .copied()
        .filter(|key| !map.contains_key(*key))
        .collect();
    if !missing.is_empty() {
        return Err(format!(
            "{what} is missing {}",
            list_keys(missing.iter().copied())
        ));
    }
    let extra: Vec<&str> = map
        .keys()
        .map(String::as_str)
        .filter(|key| !expected.contains(key))
        .collect();
    if !extra.is_empty() {
        return Err(format!(
            "{what} has unexpected {} (expected exactly {})",
            list_keys(extra.iter().copied()),
            list_keys(expected.iter().copied())
        ));
    }
    Ok(())
}

fn list_keys<'a>(keys: impl Iterator<Item = &'a str>) -> String {
    let keys: Vec<String> = keys.map(|k| format!("`{k}`")).collect();
    let noun = if keys.len() == 1 { "key" } else { "keys" };
    format!("{noun} {}", keys.join(", "))
}

fn object_field<'a>(
    map: &'a Map<String, Value>,
    key: &str,
    path: &str,
) -> Result<&'a Map<String, Value>, String> {
    match map.get(key) {
        Some(Value::Object(inner)) => Ok(inner),
        Some(other) => Err(format!(
            "`{path}` must be an object, got {}",
            describe(other)
        )),
        None => unreachable_missing(path),
    }
}

fn string_field(map: &Map<String, Value>, key: &str, path: &str) -> Result<String, String> {
    match map.get(key) {
        Some(Value::String(s)) => Ok(s.clone()),
        Some(other) => Err(format!(
            "`{path}` must be a string, got {}",
            describe(other)
        )),
        None => unreachable_missing(path),
    }
}

/// One `{ "score": 1..5, "justification": "…" }` entry of `scores`.
fn judged_entry(scores: &Map<String, Value>, key: &str) -> Result<Judged, String> {
    let path = format!("scores.{key}");
    let entry = object_field(scores, key, &path)?;
    check_keys(entry, &format!("`{path}`"), &["score", "justification"])?;
    let score_value = &entry["score"];
    let score = match score_value {
        Value::Number(n) => match n.as_u64() {
            Some(v @ 1..=5) => v as u8,
            Some(v) => {
                return Err(format!(
                    "`{path}.score` must be an integer from 1 to 5, got {v}"
                ))
            }
            None if n.is_i64() => {
                return Err(format!(
                    "`{path}.score` must be an integer from 1 to 5, got {n}"
                ))
            }
            None => {
                return Err(format!(
                    "`{path}.score` must be an integer from 1 to 5, got {n} (not an integer)"
                ))
            }
        },
        other => {
            return Err(format!(
                "`{path}.score` must be an integer from 1 to 5, got {}",
                describe(other)
            ))
        }
    };
    let justification = string_field(entry, "justification", &format!("{path}.justification"))?;
    Ok(Judged {
        score,
        justification,
    })
}

/// `check_keys` ran before every field access, so a missing key here is a bug in this module;
/// it is still reported as a refusal rather than a panic.
fn unreachable_missing<T>(path: &str) -> Result<T, String> {
    Err(format!("`{path}` is missing"))
}

/// A short description of a JSON value for messages: its type and, when short, the value itself.
pub(crate) fn describe(value: &Value) -> String {
    let kind = match value {
        Value::Null => return "null".to_string(),
        Value::Bool(b) => return format!("{b} (a boolean)"),
        Value::Number(_) => "a number",
        Value::String(_) => "a string",
        Value::Array(_) => "an array",
        Value::Object(_) => "an object",
    };
    let rendered = value.to_string();
    if rendered.chars().count() <= 40 {
        format!("{rendered} ({kind})")
    } else {
        kind.to_string()
    }
}

/// The first characters of a refused text, quoted, so the report shows what the model sent.
fn quote_start(text: &str) -> String {
    const SHOWN: usize = 60;
    let mut shown: String = text.chars().take(SHOWN).collect();
    if text.chars().count() > SHOWN {
        shown.push('…');
    }
    format!("{shown:?}")
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tool_json() -> Value {
        let entry = |s: u64| json!({"score": s, "justification": "cites the description"});
        json!({
            "scores": {
                "purpose_clarity": entry(4),
                "usage_guidelines": entry(3),
                "behavioral_transparency": entry(2),
                "parameter_semantics": entry(5),
                "conciseness_structure": entry(4),
                "contextual_completeness": entry(1),
            },
            "annotation_contradiction": false,
            "summary": "Clear purpose, thin on side effects."
        })
    }

    fn coherence_json() -> Value {
        let entry = |s: u64| json!({"score": s, "justification": "names are consistent"});
        json!({
            "scores": {
                "disambiguation": entry(4),
                "naming_consistency": entry(5),
                "tool_count_appropriateness": entry(5),
                "completeness": entry(3),
            },
            "shadowing_risks": [
                {"tool": "query_panel", "cheaper_sibling": "get_stat", "justification": "overlap"}
            ],
            "summary": "A coherent set."
        })
    }

    /// Applies `edit` to a copy of `base` and returns its compact text.
    fn edited(base: &Value, edit: impl FnOnce(&mut Value)) -> String {
        let mut value = base.clone();
        edit(&mut value);
        value.to_string()
    }

    #[test]
    fn accepts_a_well_formed_tool_answer_bare_and_fenced() {
        let text = tool_json().to_string();
        let pretty = serde_json::to_string_pretty(&tool_json()).unwrap();
        for candidate in [
            text.clone(),
            format!("  \n{text}\n\n"),
            format!("```json\n{pretty}\n```"),
            format!("```\n{pretty}\n```\n"),
            format!("```JSON\n{text}```"),
        ] {
            let answer = parse_tool_answer(&candidate)
                .unwrap_or_else(|e| panic!("refused {candidate:?}: {e}"));
            assert_eq!(answer.scores.len(), 6);
            assert_eq!(answer.scores[&ToolDimension::PurposeClarity].score, 4);
            assert_eq!(
                answer.scores[&ToolDimension::ContextualCompleteness].score,
                1
            );
            assert_eq!(
                answer.scores[&ToolDimension::UsageGuidelines].justification,
                "cites the description"
            );
            assert!(!answer.annotation_contradiction);
            assert_eq!(answer.summary, "Clear purpose, thin on side effects.");
        }
    }

    #[test]
    fn refuses_malformed_tool_answers_with_precise_reasons() {
        let base = tool_json();
        let cases: Vec<(String, &str)> = vec![
            (String::new(), "the answer is empty"),
            ("   ".into(), "the answer is empty"),
            ("The tool looks fine.".into(), "the answer is not valid JSON"),
            (
                format!("Here you go: {}", base),
                "the answer is not valid JSON",
            ),
            ("[1, 2]".into(), "must be a JSON object, got [1,2] (an array)"),
            ("```python\n{}\n```".into(), "fenced as `python`"),
            ("```json\n{}".into(), "does not close it"),
            ("```json".into(), "nothing inside it"),
            (
                format!("```json\n{base}\n```\n```json\n{base}\n```"),
                "more than one code fence",
            ),
            (
                edited(&base, |v| {
                    v.as_object_mut().unwrap().remove("scores");
                }),
                "the answer is missing key `scores`",
            ),
            (
                edited(&base, |v| {
                    v.as_object_mut().unwrap().insert("tdqs".into(), json!(3.5));
                }),
                "the answer has unexpected key `tdqs`",
            ),
            (
                edited(&base, |v| v["scores"] = json!([1, 2])),
                "`scores` must be an object, got [1,2] (an array)",
            ),
            (
                edited(&base, |v| {
                    v["scores"]
                        .as_object_mut()
                        .unwrap()
                        .remove("usage_guidelines");
                }),
                "`scores` is missing key `usage_guidelines`",
            ),
            (
                edited(&base, |v| {
                    let scores = v["scores"].as_object_mut().unwrap();
                    let entry = scores.remove("purpose_clarity").unwrap();
                    scores.insert("purposeClarity".into(), entry);
                }),
                "`scores` is missing key `purpose_clarity`",
            ),
            (
                edited(&base, |v| {
                    v["scores"]["clarity"] = json!({"score": 3, "justification": "x"});
                }),
                "`scores` has unexpected key `clarity`",
            ),
            (
                edited(&base, |v| v["scores"]["purpose_clarity"]["score"] = json!(0)),
                "`scores.purpose_clarity.score` must be an integer from 1 to 5, got 0",
            ),
            (
                edited(&base, |v| v["scores"]["purpose_clarity"]["score"] = json!(6)),
                "`scores.purpose_clarity.score` must be an integer from 1 to 5, got 6",
            ),
            (
                edited(&base, |v| v["scores"]["purpose_clarity"]["score"] = json!(-2)),
                "`scores.purpose_clarity.score` must be an integer from 1 to 5, got -2",
            ),
            (
                edited(&base, |v| {
                    v["scores"]["parameter_semantics"]["score"] = json!(4.0)
                }),
                "`scores.parameter_semantics.score` must be an integer from 1 to 5, got 4.0 (not an integer)",
            ),
            (
                edited(&base, |v| {
                    v["scores"]["parameter_semantics"]["score"] = json!(3.5)
                }),
                "got 3.5 (not an integer)",
            ),
            (
                edited(&base, |v| v["scores"]["usage_guidelines"]["score"] = json!(true)),
                "`scores.usage_guidelines.score` must be an integer from 1 to 5, got true (a boolean)",
            ),
            (
                edited(&base, |v| v["scores"]["usage_guidelines"]["score"] = json!("4")),
                "`scores.usage_guidelines.score` must be an integer from 1 to 5, got \"4\" (a string)",
            ),
            (
                edited(&base, |v| v["scores"]["usage_guidelines"]["score"] = json!(null)),
                "got null",
            ),
            (
                edited(&base, |v| {
                    v["scores"]["usage_guidelines"]
                        .as_object_mut()
                        .unwrap()
                        .remove("justification");
                }),
                "`scores.usage_guidelines` is missing key `justification`",
            ),
            (
                edited(&base, |v| {
                    v["scores"]["usage_guidelines"]["justification"] = json!(["a"])
                }),
                "`scores.usage_guidelines.justification` must be a string, got [\"a\"] (an array)",
            ),
            (
                edited(&base, |v| v["scores"]["usage_guidelines"]["evidence"] = json!("x")),
                "`scores.usage_guidelines` has unexpected key `evidence`",
            ),
            (
                edited(&base, |v| v["scores"]["usage_guidelines"] = json!(4)),
                "`scores.usage_guidelines` must be an object, got 4 (a number)",
            ),
            (
                edited(&base, |v| v["annotation_contradiction"] = json!("false")),
                "`annotation_contradiction` must be true or false, got \"false\" (a string)",
            ),
            (
                edited(&base, |v| v["annotation_contradiction"] = json!(0)),
                "`annotation_contradiction` must be true or false, got 0 (a number)",
            ),
            (
                edited(&base, |v| v["summary"] = json!(null)),
                "`summary` must be a string, got null",
            ),
        ];
        for (text, expected) in cases {
            let err = parse_tool_answer(&text).expect_err(&text);
            assert!(
                err.contains(expected),
                "for {text:?}\n  got:      {err}\n  expected: {expected}"
            );
        }
    }

    #[test]
    fn refusal_lists_every_missing_key() {
        let err =
            parse_tool_answer(r#"{"scores": {}, "annotation_contradiction": true, "summary": ""}"#)
                .unwrap_err();
        assert_eq!(
            err,
            "`scores` is missing keys `purpose_clarity`, `usage_guidelines`, `behavioral_transparency`, `parameter_semantics`, `conciseness_structure`, `contextual_completeness`"
        );
    }

    #[test]
    fn long_non_json_answer_is_quoted_shortened() {
        let text = "x".repeat(500);
        let err = parse_tool_answer(&text).unwrap_err();
        assert!(
            err.ends_with(&format!("{:?}", format!("{}…", "x".repeat(60)))),
            "{err}"
        );
    }

    #[test]
    fn accepts_a_well_formed_coherence_answer() {
        let fenced = format!(
            "```json\n{}\n```",
            serde_json::to_string_pretty(&coherence_json()).unwrap()
        );
        for candidate in [coherence_json().to_string(), fenced] {
            let answer = parse_coherence_answer(&candidate).unwrap();
            assert_eq!(answer.scores.len(), 4);
            assert_eq!(
                answer.scores[&CoherenceDimension::NamingConsistency].score,
                5
            );
            assert_eq!(
                answer.shadowing_risks,
                vec![ShadowingAnswer {
                    tool: "query_panel".into(),
                    cheaper_sibling: "get_stat".into(),
                    justification: "overlap".into(),
                }]
            );
            assert_eq!(answer.summary, "A coherent set.");
        }
        let empty_risks = edited(&coherence_json(), |v| v["shadowing_risks"] = json!([]));
        assert!(parse_coherence_answer(&empty_risks)
            .unwrap()
            .shadowing_risks
            .is_empty());
    }

    #[test]
    fn refuses_malformed_coherence_answers_with_precise_reasons() {
        let base = coherence_json();
        let cases: Vec<(String, &str)> = vec![
            ("null".into(), "must be a JSON object, got null"),
            (
                edited(&base, |v| {
                    v["scores"].as_object_mut().unwrap().remove("completeness");
                }),
                "`scores` is missing key `completeness`",
            ),
            (
                edited(&base, |v| {
                    v["scores"]["purpose_clarity"] = json!({"score": 3, "justification": "x"})
                }),
                "`scores` has unexpected key `purpose_clarity`",
            ),
            (
                edited(&base, |v| v["scores"]["disambiguation"]["score"] = json!(2.5)),
                "`scores.disambiguation.score` must be an integer from 1 to 5, got 2.5 (not an integer)",
            ),
            (
                edited(&base, |v| {
                    v.as_object_mut().unwrap().remove("shadowing_risks");
                }),
                "the answer is missing key `shadowing_risks`",
            ),
            (
                edited(&base, |v| v["shadowing_risks"] = json!({})),
                "`shadowing_risks` must be an array, got {} (an object)",
            ),
            (
                edited(&base, |v| v["shadowing_risks"] = json!(["query_panel"])),
                "`shadowing_risks[0]` must be an object, got \"query_panel\" (a string)",
            ),
            (
                edited(&base, |v| {
                    v["shadowing_risks"][0]
                        .as_object_mut()
                        .unwrap()
                        .remove("cheaper_sibling");
                }),
                "`shadowing_risks[0]` is missing key `cheaper_sibling`",
            ),
            (
                edited(&base, |v| v["shadowing_risks"][0]["tool"] = json!(7)),
                "`shadowing_risks[0].tool` must be a string, got 7 (a number)",
            ),
            (
                edited(&base, |v| v["shadowing_risks"][0]["cost"] = json!(13)),
                "`shadowing_risks[0]` has unexpected key `cost`",
            ),
            (
                edited(&base, |v| {
                    v.as_object_mut()
                        .unwrap()
                        .insert("annotation_contradiction".into(), json!(false));
                }),
                "the answer has unexpected key `annotation_contradiction`",
            ),
            (
                edited(&base, |v| v["summary"] = json!(["a"])),
                "`summary` must be a string",
            ),
        ];
        for (text, expected) in cases {
            let err = parse_coherence_answer(&text).expect_err(&text);
            assert!(
                err.contains(expected),
                "for {text:?}\n  got:      {err}\n  expected: {expected}"
            );
        }
    }

    #[test]
    fn a_tool_answer_is_not_a_coherence_answer_and_vice_versa() {
        assert!(parse_coherence_answer(&tool_json().to_string())
            .unwrap_err()
            .contains("missing key `shadowing_risks`"));
        assert!(parse_tool_answer(&coherence_json().to_string())
            .unwrap_err()
            .contains("missing key `annotation_contradiction`"));
    }
}
