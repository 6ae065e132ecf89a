//! The placeholder grammar of the specification's user templates.
//!
//! A placeholder is `{...}` (braces inside a quoted part belong to it):
//!
//! | form | meaning |
//! |---|---|
//! | `{token}` | a value; empty when missing |
//! | `{token \| "fallback"}` | the fallback when the value is missing or blank |
//! | `{field JSON \| "fallback"}` | the field pretty-printed as Python's `json.dumps(indent=2, ensure_ascii=False)` writes it, keys in the order received |
//! | `{subject, one per line \| "fallback"}` | a list, one item per line |
//! | `{"line format", one per line, at most one per tool \| "fallback"}` | one line per shadow candidate, the quoted format holding inner placeholders |
//!
//! In the coherence template a line naming `{name}` is repeated once per tool, and a `- ...`
//! line right after it (which stands for "and so on") is dropped.
//!
//! The tokens each template may use are exactly those of the published v1.3 templates. Anything
//! else — a new token, a withheld signal, an unknown qualifier — is an error, so that an upstream
//! template change fails loudly instead of rendering a prompt the scores were not calibrated on.

use std::collections::HashSet;

use serde_json::{json, Value};

use crate::error::{Error, Stage};
use crate::spec::extract::{PromptKey, Prompts};
use crate::spec::signals::{AnnotationValues, ContextSignals, ShadowCandidate};

/// Signals the specification stores but withholds from the tool prompt.
const WITHHELD_FROM_TOOL_PROMPT: [&str; 6] = [
    "invocationCost",
    "requiredFieldCount",
    "schemaDepth",
    "unionChoiceCount",
    "definitionBytes",
    "hasOutputSchema",
];

/// Qualifiers a line-format list may carry after `one per line`.
const LINE_FORMAT_QUALIFIERS: [&str; 1] = ["at most one per tool"];

/// Renders the per-tool user message (Appendix A, second block) for one tool.
///
/// `tool` is the raw `tools/list` item, `siblings` the names of the side's other tools in
/// listing order, `signals` the tool's context signals.
pub fn render_tool_user(
    template: &str,
    tool: &Value,
    siblings: &[String],
    signals: &ContextSignals,
) -> Result<String, Error> {
    let key = PromptKey::ToolUser;
    let placeholders = parse(template, key)?;
    substitute(template, &placeholders, |placeholder| {
        let value = match &placeholder.expr {
            Expr::Token("name") => field_text(tool, "name"),
            Expr::Token("title") => string_field(tool, "title"),
            Expr::Token("description") => string_field(tool, "description"),
            Expr::Token("paramCount") => Filled::number(signals.param_count),
            Expr::Token("requiredParamCount") => Filled::number(signals.required_param_count),
            Expr::Token("schemaDescriptionCoverage") => {
                Filled::number(signals.schema_description_coverage)
            }
            Expr::Token("paramsWithEnums") => Filled::number(signals.params_with_enums),
            Expr::Token("hasNestedObjects") => Filled::boolean(signals.has_nested_objects),
            Expr::Token(token) if WITHHELD_FROM_TOOL_PROMPT.contains(token) => {
                return Err(template_error(
                    key,
                    format!(
                        "the {key} template asks for {{{token}}}, which TDQS v1.3 withholds from \
                         the tool prompt"
                    ),
                ))
            }
            Expr::Json(field @ ("inputSchema" | "outputSchema" | "annotations")) => {
                json_field(tool, field)
            }
            Expr::List("sibling tool names") => Filled::text(siblings.join("\n")),
            _ => return Err(unknown_placeholder(key, placeholder.raw)),
        };
        Ok(value.or_fallback(placeholder.fallback))
    })
}

/// Renders the set-level user message (Appendix B, second block).
///
/// `tools` are the side's raw `tools/list` items in listing order, `signals` their context
/// signals in the same order, `candidates` the shadow-candidate pairs of the prefilter (at most
/// one per dearer tool).
pub fn render_coherence_user(
    template: &str,
    server_name: &str,
    tools: &[Value],
    signals: &[ContextSignals],
    candidates: &[ShadowCandidate],
) -> Result<String, Error> {
    let key = PromptKey::CoherenceUser;
    if tools.len() != signals.len() {
        return Err(Error::internal(format!(
            "coherence prompt asked for {} tools with {} sets of signals",
            tools.len(),
            signals.len()
        )));
    }
    let mut dearer = HashSet::new();
    if let Some(repeated) = candidates.iter().find(|c| !dearer.insert(c.tool.as_str())) {
        return Err(Error::internal(format!(
            "the shadow-candidate prefilter gave {} more than one candidate",
            repeated.tool
        )));
    }

    let lines: Vec<&str> = template.split('\n').collect();
    let mut rendered: Vec<String> = Vec::with_capacity(lines.len() + tools.len());
    let mut index = 0;
    while index < lines.len() {
        let line = lines[index];
        let placeholders = parse(line, key)?;
        let per_tool = placeholders
            .iter()
            .any(|placeholder| placeholder.expr == Expr::Token("name"));
        if per_tool {
            for (tool, tool_signals) in tools.iter().zip(signals) {
                rendered.push(render_tool_line(line, &placeholders, tool, tool_signals)?);
            }
            if lines.get(index + 1).map(|next| next.trim()) == Some("- ...") {
                index += 1;
            }
        } else {
            rendered.push(render_server_line(
                line,
                &placeholders,
                server_name,
                tools.len(),
                candidates,
            )?);
        }
        index += 1;
    }
    Ok(rendered.join("\n"))
}

fn render_tool_line(
    line: &str,
    placeholders: &[Placeholder<'_>],
    tool: &Value,
    signals: &ContextSignals,
) -> Result<String, Error> {
    let key = PromptKey::CoherenceUser;
    substitute(line, placeholders, |placeholder| {
        let value = match placeholder.expr {
            Expr::Token("name") => field_text(tool, "name"),
            Expr::Token("description") => string_field(tool, "description"),
            Expr::Token("invocationCost") => Filled::number(signals.invocation_cost),
            Expr::Token("requiredFieldCount") => Filled::number(signals.required_field_count),
            Expr::Token("schemaDepth") => Filled::number(signals.schema_depth),
            Expr::Token("unionChoiceCount") => Filled::number(signals.union_choice_count),
            _ => return Err(unknown_placeholder(key, placeholder.raw)),
        };
        Ok(value.or_fallback(placeholder.fallback))
    })
}

fn render_server_line(
    line: &str,
    placeholders: &[Placeholder<'_>],
    server_name: &str,
    tool_count: usize,
    candidates: &[ShadowCandidate],
) -> Result<String, Error> {
    let key = PromptKey::CoherenceUser;
    substitute(line, placeholders, |placeholder| {
        let value = match &placeholder.expr {
            Expr::Token("serverName") => Filled::text(server_name.to_string()),
            Expr::Token("toolCount") => Filled::text(tool_count.to_string()),
            Expr::LineFormat { format } => {
                let inner = parse(format, key)?;
                let mut out = Vec::with_capacity(candidates.len());
                for candidate in candidates {
                    out.push(substitute(format, &inner, |part| {
                        let value = match part.expr {
                            Expr::Token("dearer") => Filled::text(candidate.tool.clone()),
                            Expr::Token("n") => Filled::number(candidate.invocation_cost),
                            Expr::Token("cheaper") => {
                                Filled::text(candidate.cheaper_sibling.clone())
                            }
                            Expr::Token("m") => {
                                Filled::number(candidate.cheaper_sibling_invocation_cost)
                            }
                            _ => return Err(unknown_placeholder(key, part.raw)),
                        };
                        Ok(value.or_fallback(part.fallback))
                    })?);
                }
                Filled::text(out.join("\n"))
            }
            _ => return Err(unknown_placeholder(key, placeholder.raw)),
        };
        Ok(value.or_fallback(placeholder.fallback))
    })
}

/// Renders both user templates on a sample side that reaches every line and every list, so
/// that an unknown placeholder is found before any judge call.
pub fn check_templates(prompts: &Prompts) -> Result<(), Error> {
    let tools = vec![
        json!({
            "name": "sample_search",
            "title": "Sample search",
            "description": "Searches the sample index.",
            "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]},
            "outputSchema": {"type": "object"},
            "annotations": {"readOnlyHint": true}
        }),
        json!({"name": "sample_get", "inputSchema": {"type": "object"}}),
    ];
    let signals = vec![
        ContextSignals {
            param_count: 1,
            required_param_count: 1,
            params_with_descriptions: 0,
            params_with_enums: 0,
            schema_description_coverage: 0,
            has_nested_objects: false,
            has_output_schema: true,
            has_annotations: true,
            annotation_values: AnnotationValues {
                read_only: Some(true),
                ..AnnotationValues::default()
            },
            title_is_meaningful: true,
            definition_bytes: 0,
            input_hash: String::new(),
            required_field_count: 1,
            schema_depth: 1,
            union_choice_count: 0,
            invocation_cost: 9,
        },
        ContextSignals {
            schema_description_coverage: 100,
            invocation_cost: 1,
            ..ContextSignals::default()
        },
    ];
    let candidates = vec![ShadowCandidate {
        tool: "sample_search".into(),
        invocation_cost: 9,
        cheaper_sibling: "sample_get".into(),
        cheaper_sibling_invocation_cost: 1,
    }];
    render_tool_user(
        &prompts.tool_user,
        &tools[0],
        &["sample_get".to_string()],
        &signals[0],
    )?;
    render_coherence_user(
        &prompts.coherence_user,
        "sample-server",
        &tools,
        &signals,
        &candidates,
    )?;
    Ok(())
}

/// `json.dumps(value, indent=2, ensure_ascii=False)`: the form schemas take in prompts.
pub fn pretty_json(value: &Value) -> String {
    crate::digest::canonical::to_python_pretty_string(value)
}

/// A placeholder's expression.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Expr<'t> {
    /// `{token}`
    Token(&'t str),
    /// `{field JSON}`
    Json(&'t str),
    /// `{subject, one per line}`
    List(&'t str),
    /// `{"format", one per line, ...}`
    LineFormat { format: &'t str },
}

#[derive(Debug, Clone)]
struct Placeholder<'t> {
    /// Byte range of `{...}` in the template.
    start: usize,
    end: usize,
    /// The whole `{...}` text, for messages.
    raw: &'t str,
    expr: Expr<'t>,
    fallback: Option<&'t str>,
}

/// Every top-level placeholder of `template`, in order.
fn parse(template: &str, key: PromptKey) -> Result<Vec<Placeholder<'_>>, Error> {
    let bytes = template.as_bytes();
    let mut found = Vec::new();
    let mut position = 0;
    while let Some(offset) = template[position..].find('{') {
        let start = position + offset;
        let mut depth = 0usize;
        let mut quoted = false;
        let mut end = None;
        for (index, byte) in bytes.iter().enumerate().skip(start) {
            match byte {
                b'"' => quoted = !quoted,
                b'{' if !quoted => depth += 1,
                b'}' if !quoted => {
                    depth -= 1;
                    if depth == 0 {
                        end = Some(index);
                        break;
                    }
                }
                _ => {}
            }
        }
        let Some(end) = end else {
            let excerpt: String = template[start..].chars().take(40).collect();
            return Err(template_error(
                key,
                format!("the {key} template has an unclosed placeholder at {excerpt:?}"),
            ));
        };
        let raw = &template[start..=end];
        let (expr, fallback) = parse_content(template[start + 1..end].trim())
            .ok_or_else(|| unknown_placeholder(key, raw))?;
        found.push(Placeholder {
            start,
            end: end + 1,
            raw,
            expr,
            fallback,
        });
        position = end + 1;
    }
    Ok(found)
}

/// Splits a placeholder's inside into its expression and fallback; `None` when it does not fit
/// the grammar.
fn parse_content(content: &str) -> Option<(Expr<'_>, Option<&str>)> {
    if let Some(quoted) = content.strip_prefix('"') {
        let close = quoted.find('"')?;
        let format = &quoted[..close];
        let (list, fallback) = split_fallback(&quoted[close + 1..])?;
        let mut parts = list.split(',').map(str::trim);
        // The text between the closing quote and the first comma must be empty.
        if !parts.next()?.is_empty() || parts.next()? != "one per line" {
            return None;
        }
        if !parts.all(|qualifier| LINE_FORMAT_QUALIFIERS.contains(&qualifier)) {
            return None;
        }
        return Some((Expr::LineFormat { format }, fallback));
    }
    let (expression, fallback) = split_fallback(content)?;
    let expression = expression.trim();
    if expression.contains('"') {
        return None;
    }
    let expr = if let Some((subject, rest)) = expression.split_once(',') {
        if rest.trim() != "one per line" {
            return None;
        }
        Expr::List(subject.trim())
    } else if let Some(field) = expression.strip_suffix(" JSON") {
        let field = field.trim();
        is_identifier(field).then_some(Expr::Json(field))?
    } else {
        is_identifier(expression).then_some(Expr::Token(expression))?
    };
    Some((expr, fallback))
}

/// `text | "fallback"` → (`text`, `Some(fallback)`); no `|` → (`text`, `None`).
fn split_fallback(text: &str) -> Option<(&str, Option<&str>)> {
    match text.split_once('|') {
        None => Some((text, None)),
        Some((before, after)) => {
            let after = after.trim();
            let inner = after.strip_prefix('"')?.strip_suffix('"')?;
            Some((before, Some(inner)))
        }
    }
}

fn is_identifier(text: &str) -> bool {
    let mut chars = text.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
}

/// Replaces every placeholder with what `resolve` gives for it; values are not scanned again.
fn substitute<'t>(
    template: &'t str,
    placeholders: &[Placeholder<'t>],
    mut resolve: impl FnMut(&Placeholder<'t>) -> Result<String, Error>,
) -> Result<String, Error> {
    let mut out = String::with_capacity(template.len());
    let mut position = 0;
    for placeholder in placeholders {
        out.push_str(&template[position..placeholder.start]);
        out.push_str(&resolve(placeholder)?);
        position = placeholder.end;
    }
    out.push_str(&template[position..]);
    Ok(out)
}

/// A resolved value before the fallback applies.
enum Filled {
    Text(String),
    Missing,
}

impl Filled {
    /// Blank text counts as missing, so a whitespace title takes its fallback.
    fn text(text: String) -> Filled {
        if text.trim().is_empty() {
            Filled::Missing
        } else {
            Filled::Text(text)
        }
    }

    fn number(value: u64) -> Filled {
        Filled::Text(value.to_string())
    }

    fn boolean(value: bool) -> Filled {
        Filled::Text(if value { "true" } else { "false" }.to_string())
    }

    fn or_fallback(self, fallback: Option<&str>) -> String {
        match self {
            Filled::Text(text) => text,
            Filled::Missing => fallback.unwrap_or_default().to_string(),
        }
    }
}

/// A string field; anything that is not a string counts as missing.
fn string_field(tool: &Value, field: &str) -> Filled {
    match tool.get(field) {
        Some(Value::String(text)) => Filled::text(text.clone()),
        _ => Filled::Missing,
    }
}

/// A field as text: strings as they are, other JSON values compact.
fn field_text(tool: &Value, field: &str) -> Filled {
    match tool.get(field) {
        None | Some(Value::Null) => Filled::Missing,
        Some(Value::String(text)) => Filled::text(text.clone()),
        Some(other) => Filled::Text(other.to_string()),
    }
}

/// A field pretty-printed; absent or null is missing, while an empty object is printed (`{}`).
fn json_field(tool: &Value, field: &str) -> Filled {
    match tool.get(field) {
        None | Some(Value::Null) => Filled::Missing,
        Some(value) => Filled::Text(crate::digest::canonical::to_python_pretty_string(value)),
    }
}

fn template_error(key: PromptKey, cause: String) -> Error {
    Error::new(Stage::Spec, cause).with_advice(format!(
        "the {key} template ({}) is not the one this tdqs-gate renders; if the pins were changed \
         to a newer specification, use a tdqs-gate release that implements it",
        key.location()
    ))
}

fn unknown_placeholder(key: PromptKey, raw: &str) -> Error {
    template_error(
        key,
        format!("the {key} template has a placeholder tdqs-gate does not know: {raw}"),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn signals() -> ContextSignals {
        ContextSignals {
            param_count: 2,
            required_param_count: 1,
            params_with_enums: 1,
            schema_description_coverage: 50,
            has_nested_objects: true,
            ..ContextSignals::default()
        }
    }

    #[test]
    fn tool_tokens_fallbacks_and_json() {
        let template = "N={name}\nT={title | \"null\"}\nD=\"{description}\"\nI={inputSchema JSON | \"{}\"}\nO={outputSchema JSON | \"None provided\"}\nA={annotations JSON | \"None provided\"}\n{paramCount}/{requiredParamCount}/{schemaDescriptionCoverage}%/{paramsWithEnums}/{hasNestedObjects}\nS:\n{sibling tool names, one per line | \"None\"}";
        let tool = json!({
            "name": "find_user",
            "title": "   ",
            "description": "Finds a {name} user.",
            "inputSchema": {"type": "object", "properties": {"id": {"type": "integer"}}},
            "annotations": {}
        });
        let siblings = vec!["a".to_string(), "b".to_string()];
        let out = render_tool_user(template, &tool, &siblings, &signals()).unwrap();
        assert_eq!(
            out,
            "N=find_user\nT=null\nD=\"Finds a {name} user.\"\nI={\n  \"type\": \"object\",\n  \"properties\": {\n    \"id\": {\n      \"type\": \"integer\"\n    }\n  }\n}\nO=None provided\nA={}\n2/1/50%/1/true\nS:\na\nb"
        );
        let bare = json!({"name": "x"});
        let out = render_tool_user(template, &bare, &[], &ContextSignals::default()).unwrap();
        assert!(out.starts_with("N=x\nT=null\nD=\"\"\nI={}\nO=None provided\nA=None provided\n0/0/0%/0/false\nS:\nNone"), "{out}");
    }

    #[test]
    fn withheld_and_unknown_tokens_are_refused() {
        let tool = json!({"name": "x"});
        for (template, expected) in [
            ("{invocationCost}", "withholds"),
            ("{hasOutputSchema}", "withholds"),
            ("{definitionBytes}", "withholds"),
            ("{serverName}", "does not know: {serverName}"),
            ("{newSignal}", "does not know: {newSignal}"),
            ("{name | null}", "does not know"),
            ("{title | \"x\" extra}", "does not know"),
            ("{name, two per line}", "does not know"),
            ("{tool names, one per line}", "does not know"),
            ("{outputSchema YAML}", "does not know"),
            ("{\"{name}\", one per line}", "does not know"),
            ("open {name", "unclosed placeholder"),
        ] {
            let err = render_tool_user(template, &tool, &[], &ContextSignals::default())
                .expect_err(template);
            assert_eq!(err.stage, Stage::Spec);
            assert!(err.cause.contains(expected), "{template}: {}", err.cause);
            assert!(err.cause.contains("tool_user"), "{}", err.cause);
            assert!(err.advice.is_some());
        }
    }

    fn coherence_signals(cost: u64, required: u64, depth: u64, unions: u64) -> ContextSignals {
        ContextSignals {
            invocation_cost: cost,
            required_field_count: required,
            schema_depth: depth,
            union_choice_count: unions,
            ..ContextSignals::default()
        }
    }

    const COHERENCE: &str = "S {serverName} ({toolCount})\n<t>\n* {name} <{invocationCost}|{requiredFieldCount}|{schemaDepth}|{unionChoiceCount}> {description | \"(none)\"}\n  - ...  \n</t>\n<c>\n{\"{dearer} [{n}] over {cheaper} [{m}]\", one per line, at most one per tool | \"None\"}\n</c>";

    #[test]
    fn coherence_repeats_the_tool_line_and_drops_the_continuation() {
        let tools = vec![
            json!({"name": "query", "description": "Runs a query.\nTwo lines."}),
            json!({"name": "get", "description": " "}),
            json!({"name": "raw"}),
        ];
        let signals = vec![
            coherence_signals(13, 5, 3, 2),
            coherence_signals(4, 4, 1, 0),
            coherence_signals(0, 0, 0, 0),
        ];
        let candidates = vec![ShadowCandidate {
            tool: "query".into(),
            invocation_cost: 13,
            cheaper_sibling: "get".into(),
            cheaper_sibling_invocation_cost: 4,
        }];
        let out = render_coherence_user(COHERENCE, "demo", &tools, &signals, &candidates).unwrap();
        assert_eq!(
            out,
            "S demo (3)\n<t>\n* query <13|5|3|2> Runs a query.\nTwo lines.\n* get <4|4|1|0> (none)\n* raw <0|0|0|0> (none)\n</t>\n<c>\nquery [13] over get [4]\n</c>"
        );
        let none =
            render_coherence_user(COHERENCE, "demo", &tools[..1], &signals[..1], &[]).unwrap();
        assert!(none.ends_with("<c>\nNone\n</c>"), "{none}");
    }

    #[test]
    fn coherence_refuses_unknown_tokens_in_every_scope() {
        let tools = vec![json!({"name": "a"})];
        let signals = vec![ContextSignals::default()];
        let candidates = vec![ShadowCandidate {
            tool: "a".into(),
            invocation_cost: 9,
            cheaper_sibling: "b".into(),
            cheaper_sibling_invocation_cost: 1,
        }];
        for (template, expected) in [
            ("- {name} {paramCount}", "{paramCount}"),
            ("{name} {serverName}", "{serverName}"),
            ("{toolCount} {invocationCost}", "{invocationCost}"),
            ("{\"{dearer} {cost}\", one per line | \"None\"}", "{cost}"),
            (
                "{\"{dearer}\", one per line, at most two per tool}",
                "does not know",
            ),
            ("{sibling tool names, one per line}", "does not know"),
        ] {
            let err = render_coherence_user(template, "s", &tools, &signals, &candidates)
                .expect_err(template);
            assert!(err.cause.contains(expected), "{template}: {}", err.cause);
            assert!(err.cause.contains("coherence_user"), "{}", err.cause);
        }
    }

    #[test]
    fn coherence_refuses_inconsistent_inputs() {
        let tools = vec![json!({"name": "a"})];
        assert!(render_coherence_user("{name}", "s", &tools, &[], &[]).is_err());
        let twice = vec![
            ShadowCandidate {
                tool: "a".into(),
                invocation_cost: 9,
                cheaper_sibling: "b".into(),
                cheaper_sibling_invocation_cost: 1,
            };
            2
        ];
        let err = render_coherence_user("x", "s", &tools, &[ContextSignals::default()], &twice)
            .unwrap_err();
        assert_eq!(err.stage, Stage::Internal);
    }

    #[test]
    fn check_templates_reaches_every_placeholder() {
        let good = Prompts {
            tool_system: "sys {not rendered}".into(),
            tool_user: "{name} {sibling tool names, one per line | \"None\"}".into(),
            coherence_system: "sys".into(),
            coherence_user: COHERENCE.into(),
        };
        check_templates(&good).unwrap();
        // An unknown token inside the line format is found only when a candidate is rendered;
        // the sample side has one.
        let bad = Prompts {
            coherence_user: COHERENCE.replace("{m}", "{cost}"),
            ..good.clone()
        };
        let err = check_templates(&bad).unwrap_err();
        assert!(err.cause.contains("{cost}"), "{}", err.cause);
        // Likewise inside the repeated per-tool line.
        let bad = Prompts {
            coherence_user: COHERENCE.replace("{schemaDepth}", "{depth}"),
            ..good
        };
        assert!(check_templates(&bad).unwrap_err().cause.contains("{depth}"));
    }
}
