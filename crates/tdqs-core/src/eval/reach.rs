//! What any selector that sees only words can reach, measured on a real model's recorded choices.
//!
//! A selector that ranks tools by the words they share with a request (the synthetic selector,
//! or any other lexical ranking) can only agree with a model's choice when that choice is
//! `NO_TOOL` (it can always abstain) or a tool that shares at least one content stem with the
//! request. When the model picked a tool that shares none, no ranking of shared words points to
//! it; the most a word-only selector can still do is fall back to one fixed tool whenever the
//! words point nowhere, so per tool set the best single fallback tool is counted as reachable
//! too. The sum is an upper bound, not a selector: it credits every reachable case at once,
//! though one ranking may not be able to reach them all together.
//!
//! Terms are the synthetic selector's own ([`super::lexical::request_terms`],
//! [`super::lexical::terms`], [`super::lexical::name_terms`]: its tokenizer, stop words, request
//! filler and stemmer), without the action classes (those are the selector's inference, not
//! words of the text). A tool's words are its name, title, description, parameter names,
//! parameter descriptions and enum values, taken whole (no sibling's name blanked), so the bound
//! is generous.

use std::collections::{BTreeMap, BTreeSet};

use serde_json::Value;

use super::case::Choice;
use super::lexical::{name_terms, request_terms, terms};

/// What kind of choice a recorded model made, seen by a reader of words only.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ChoiceClass {
    /// The model answered with no tool.
    NoTool,
    /// A tool that shares at least one content stem with the request.
    SharesWord,
    /// A tool that shares no content stem with the request (or one the server does not list).
    SharesNone,
}

impl ChoiceClass {
    pub fn as_str(self) -> &'static str {
        match self {
            ChoiceClass::NoTool => "NO_TOOL",
            ChoiceClass::SharesWord => "a tool sharing a word",
            ChoiceClass::SharesNone => "a tool sharing no word",
        }
    }
}

/// What counts as a word two texts share.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Sharing {
    /// Content stems only.
    Stems,
    /// Content stems, and the action classes of the selector's verb table for every verb of
    /// either text (`find` in a request meets `search` in a definition): what a word-only
    /// selector with a table of general synonyms can see.
    StemsAndVerbClasses,
}

fn content(list: Vec<String>) -> impl Iterator<Item = String> {
    list.into_iter().filter(|t| !t.starts_with('~'))
}

/// The content stems of a request.
pub fn request_stems(request: &str) -> BTreeSet<String> {
    content(request_terms(request)).collect()
}

/// The terms of a request under `sharing` (with classes: every verb's, not only the lead's).
fn request_words(request: &str, sharing: Sharing) -> BTreeSet<String> {
    match sharing {
        Sharing::Stems => request_stems(request),
        Sharing::StemsAndVerbClasses => terms(request).into_iter().collect(),
    }
}

fn keep(list: Vec<String>, sharing: Sharing) -> Vec<String> {
    match sharing {
        Sharing::Stems => content(list).collect(),
        Sharing::StemsAndVerbClasses => list,
    }
}

fn schema_words(schema: &Value, sharing: Sharing, out: &mut BTreeSet<String>) {
    if let Some(d) = schema.get("description").and_then(Value::as_str) {
        out.extend(keep(terms(d), sharing));
    }
    if let Some(values) = schema.get("enum").and_then(Value::as_array) {
        for v in values.iter().filter_map(Value::as_str) {
            out.extend(keep(terms(v), sharing));
        }
    }
    for key in ["anyOf", "oneOf"] {
        if let Some(list) = schema.get(key).and_then(Value::as_array) {
            for v in list {
                schema_words(v, sharing, out);
            }
        }
    }
}

/// The content stems of one tool definition: name, title, description, parameter names,
/// parameter descriptions and enum values.
pub fn tool_stems(tool: &Value) -> BTreeSet<String> {
    tool_words(tool, Sharing::Stems)
}

fn tool_words(tool: &Value, sharing: Sharing) -> BTreeSet<String> {
    let mut out = BTreeSet::new();
    if let Some(name) = tool.get("name").and_then(Value::as_str) {
        out.extend(keep(name_terms(name), sharing));
    }
    for key in ["title", "description"] {
        if let Some(text) = tool.get(key).and_then(Value::as_str) {
            out.extend(keep(terms(text), sharing));
        }
    }
    if let Some(props) = tool
        .get("inputSchema")
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    {
        for (pname, pschema) in props {
            out.extend(keep(name_terms(pname), sharing));
            schema_words(pschema, sharing, &mut out);
        }
    }
    out
}

/// The class of `choice` for `request` over `tools`, sharing content stems.
pub fn classify(request: &str, choice: &Choice, tools: &[Value]) -> ChoiceClass {
    classify_with(request, choice, tools, Sharing::Stems)
}

/// The class of `choice` for `request` over `tools`, under `sharing`.
pub fn classify_with(
    request: &str,
    choice: &Choice,
    tools: &[Value],
    sharing: Sharing,
) -> ChoiceClass {
    let Some(name) = choice.tool() else {
        return ChoiceClass::NoTool;
    };
    let Some(tool) = tools
        .iter()
        .find(|t| t.get("name").and_then(Value::as_str) == Some(name))
    else {
        return ChoiceClass::SharesNone;
    };
    let asked = request_words(request, sharing);
    if tool_words(tool, sharing).iter().any(|s| asked.contains(s)) {
        ChoiceClass::SharesWord
    } else {
        ChoiceClass::SharesNone
    }
}

/// One recorded case: the request, the model's choice, and a selector's choice.
#[derive(Debug, Clone, Copy)]
pub struct RecordedCase<'a> {
    pub request: &'a str,
    pub model: &'a Choice,
    pub selector: &'a Choice,
}

/// The reach of a word-only selector on one tool set's recorded cases.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Reach {
    pub cases: usize,
    /// Cases per class of the model's choice.
    pub by_class: BTreeMap<ChoiceClass, usize>,
    /// The selector's disagreements with the model, per class of the model's choice.
    pub disagreements: BTreeMap<ChoiceClass, usize>,
    /// The tool the model chose most often among the cases whose choice shares no word, and how
    /// often (ties go to the name first in sort order): the best fixed fallback.
    pub fallback: Option<(String, usize)>,
}

impl Reach {
    pub fn count(&self, class: ChoiceClass) -> usize {
        self.by_class.get(&class).copied().unwrap_or(0)
    }

    pub fn disagreeing(&self, class: ChoiceClass) -> usize {
        self.disagreements.get(&class).copied().unwrap_or(0)
    }

    /// The most cases a word-only selector can agree on: every `NO_TOOL`, every choice that
    /// shares a word, and the best fallback's share of the rest.
    pub fn ceiling(&self) -> usize {
        self.count(ChoiceClass::NoTool)
            + self.count(ChoiceClass::SharesWord)
            + self.fallback.as_ref().map_or(0, |(_, n)| *n)
    }
}

/// Classifies every case of one tool set, sharing content stems, and finds its best fallback.
pub fn reach<'a>(tools: &[Value], cases: impl IntoIterator<Item = RecordedCase<'a>>) -> Reach {
    reach_with(tools, cases, Sharing::Stems)
}

/// [`reach`] under `sharing`.
pub fn reach_with<'a>(
    tools: &[Value],
    cases: impl IntoIterator<Item = RecordedCase<'a>>,
    sharing: Sharing,
) -> Reach {
    let mut out = Reach::default();
    let mut unreached: BTreeMap<&str, usize> = BTreeMap::new();
    for case in cases {
        let class = classify_with(case.request, case.model, tools, sharing);
        out.cases += 1;
        *out.by_class.entry(class).or_default() += 1;
        if case.model != case.selector {
            *out.disagreements.entry(class).or_default() += 1;
        }
        if class == ChoiceClass::SharesNone {
            if let Some(name) = case.model.tool() {
                *unreached.entry(name).or_default() += 1;
            }
        }
    }
    // Max by count; among equal counts the first name in sort order (BTreeMap iterates sorted).
    let mut best: Option<(&str, usize)> = None;
    for (name, n) in unreached {
        if best.is_none_or(|(_, m)| n > m) {
            best = Some((name, n));
        }
    }
    out.fallback = best.map(|(name, n)| (name.to_string(), n));
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> Vec<Value> {
        vec![
            json!({"name": "search_users", "description": "Find people by name.",
                   "inputSchema": {"type": "object", "properties": {"query": {"type": "string", "description": "Words of the person's name"}}}}),
            json!({"name": "ticket", "description": "Does ticket things."}),
            json!({"name": "doStuff", "description": "Runs a job."}),
        ]
    }

    #[test]
    fn a_choice_is_classed_by_the_stems_it_shares() {
        let t = tools();
        let tool = |n: &str| Choice::Tool(n.into());
        assert_eq!(
            classify("Anything", &Choice::NoTool, &t),
            ChoiceClass::NoTool
        );
        // "users" meets the name's "user"; "people" the description's.
        assert_eq!(
            classify("Which users signed up?", &tool("search_users"), &t),
            ChoiceClass::SharesWord
        );
        assert_eq!(
            classify("Any people called Ann?", &tool("search_users"), &t),
            ChoiceClass::SharesWord
        );
        // A parameter's description counts.
        assert_eq!(
            classify("words only", &tool("search_users"), &t),
            ChoiceClass::SharesWord
        );
        // Stop words and filler are no shared word; a tool the server does not list shares none.
        assert_eq!(
            classify("Please do it for me", &tool("doStuff"), &t),
            ChoiceClass::SharesNone
        );
        assert_eq!(
            classify("tickets", &tool("nonexistent"), &t),
            ChoiceClass::SharesNone
        );
        // "locate" meets "Find" only through the verb table.
        assert_eq!(
            classify("Locate Ann", &tool("search_users"), &t),
            ChoiceClass::SharesNone
        );
        assert_eq!(
            classify_with(
                "Locate Ann",
                &tool("search_users"),
                &t,
                Sharing::StemsAndVerbClasses
            ),
            ChoiceClass::SharesWord
        );
    }

    #[test]
    fn the_ceiling_adds_the_best_fallback_to_the_reachable_cases() {
        let t = tools();
        let (none, users, stuff, ticket) = (
            Choice::NoTool,
            Choice::Tool("search_users".into()),
            Choice::Tool("doStuff".into()),
            Choice::Tool("ticket".into()),
        );
        let cases = [
            ("nothing to do with anything", &none, &none),
            ("find Ann", &users, &none),
            ("hello there", &stuff, &none),
            ("good morning", &stuff, &stuff),
            ("bonjour", &ticket, &none),
        ];
        let r = reach(
            &t,
            cases.iter().map(|(request, model, selector)| RecordedCase {
                request,
                model,
                selector,
            }),
        );
        assert_eq!(r.cases, 5);
        assert_eq!(r.count(ChoiceClass::NoTool), 1);
        assert_eq!(r.count(ChoiceClass::SharesWord), 1);
        assert_eq!(r.count(ChoiceClass::SharesNone), 3);
        assert_eq!(r.fallback, Some(("doStuff".to_string(), 2)));
        assert_eq!(r.ceiling(), 4);
        assert_eq!(r.disagreeing(ChoiceClass::SharesWord), 1);
        assert_eq!(r.disagreeing(ChoiceClass::SharesNone), 2);
        assert_eq!(r.disagreeing(ChoiceClass::NoTool), 0);
    }
}
