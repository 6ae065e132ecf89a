//! What a request's form says beyond its words, for the synthetic selector: the action it asks
//! for, and the kinds of value it carries.
//!
//! **The action.** A request's action is its lead verb — the first word after courtesy filler
//! ("please", "can you"): "Delete ticket 4" asks to remove, while "the issues created last week"
//! asks nothing of `create`, though it holds the word. A request that opens with a question word
//! or an auxiliary ("What…", "Which…", "Is…", "Who…") asks to read. A tool's name says its own
//! action (`delete_ticket`, `get_user`); an action of the other family (reading against writing)
//! makes the tool an unlikely answer, the same action a likely one. The verb table is
//! [`super::lexical`]'s action classes; no word is added here.
//!
//! **Values.** A request may hold a time of day (`3pm`, `09:30`), a date (`2026-03-01`, `March 1`,
//! `yesterday`, `last week`), a path (`/srv/app`, `notes.txt`), a URL or an e-mail address. A tool
//! with a parameter meant for that kind of value (by its name or its `format`) can take it: the
//! request's value is evidence for that tool.

use serde_json::Value;

use super::lexical::action_class;
use super::stem::stem;
use crate::overlap::{is_stop_word, name_tokens, words};

/// The action a request asks for.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    /// Its lead verb's action class (`~remove`).
    Action(&'static str),
    /// A question: some reading action, which one unsaid.
    Question,
}

/// Action classes that only read; every other class writes.
const READING: &[&str] = &["~read", "~find", "~list", "~export"];

/// Whether an action class only reads.
pub fn reads(class: &str) -> bool {
    READING.contains(&class)
}

/// Words that open a question.
const QUESTION_OPENERS: &[&str] = &[
    "what", "which", "who", "whom", "whose", "where", "when", "how", "why", "is", "are", "was",
    "were", "do", "does", "did", "has", "have", "any",
];

/// Courtesy and framing words skipped before the lead verb ("could you please…", "I'd like to…").
const LEAD_FILLER: &[&str] = &[
    "please", "kindly", "can", "could", "would", "will", "you", "i", "id", "we", "need", "want",
    "like", "to", "let", "lets", "me", "us", "just", "hey", "hi", "ok", "okay", "so", "now",
];

/// The first word of `request` after courtesy filler, lower-cased: its verb when it is an
/// imperative, a question word when it is a question.
pub fn lead_word(request: &str) -> Option<String> {
    words(request)
        .into_iter()
        .enumerate()
        .find(|(i, w)| {
            (*i == 0 && QUESTION_OPENERS.contains(&w.as_str()))
                || !LEAD_FILLER.contains(&w.as_str())
        })
        .map(|(_, w)| w)
}

/// The action `request` asks for, if its form says one.
pub fn intent(request: &str) -> Option<Intent> {
    let lead = lead_word(request)?;
    if QUESTION_OPENERS.contains(&lead.as_str()) {
        return Some(Intent::Question);
    }
    if is_stop_word(&lead) {
        return None;
    }
    action_class(&stem(&lead)).map(Intent::Action)
}

/// The action classes a tool's name says (`delete_ticket` → `~remove`).
pub fn name_actions(name: &str) -> Vec<&'static str> {
    let mut out: Vec<&'static str> = name_tokens(name)
        .iter()
        .filter_map(|t| action_class(&stem(t)))
        .collect();
    out.dedup();
    out
}

/// How far a tool's name agrees with the request's action: 1 when either says none.
pub fn action_factor(
    intent: Option<Intent>,
    tool_actions: &[&str],
    agrees: f64,
    conflicts: f64,
) -> f64 {
    let Some(intent) = intent else {
        return 1.0;
    };
    if tool_actions.is_empty() {
        return 1.0;
    }
    match intent {
        Intent::Action(class) if tool_actions.contains(&class) => agrees,
        Intent::Action(class) if tool_actions.iter().any(|t| reads(t) == reads(class)) => 1.0,
        Intent::Action(_) => conflicts,
        Intent::Question if tool_actions.iter().any(|t| reads(t)) => 1.0,
        Intent::Question => conflicts,
    }
}

/// A kind of value a request can carry and a parameter can take.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum ValueKind {
    /// A time of day or a date.
    Time,
    /// A file-system path or a file name.
    Path,
    Url,
    Email,
}

const MONTHS: &[&str] = &[
    "january",
    "february",
    "march",
    "april",
    "may",
    "june",
    "july",
    "august",
    "september",
    "october",
    "november",
    "december",
    "jan",
    "feb",
    "mar",
    "apr",
    "jun",
    "jul",
    "aug",
    "sep",
    "sept",
    "oct",
    "nov",
    "dec",
];

const RELATIVE_DAYS: &[&str] = &["today", "yesterday", "tomorrow", "tonight"];
const PERIODS: &[&str] = &["week", "month", "year", "day", "hour", "quarter"];

fn is_clock(token: &str) -> bool {
    // 09:30, 9:30pm, 3pm, 11am
    let t = token.trim_end_matches(['.', ',', '?', '!', ';']);
    let body = t
        .strip_suffix("am")
        .or_else(|| t.strip_suffix("pm"))
        .map(|b| (b, true))
        .unwrap_or((t, false));
    let (body, meridiem) = body;
    let mut parts = body.split(':');
    let hour = parts.next().unwrap_or_default();
    let minute = parts.next();
    if parts.next().is_some() || hour.is_empty() || hour.len() > 2 {
        return false;
    }
    if !hour.chars().all(|c| c.is_ascii_digit()) {
        return false;
    }
    match minute {
        Some(m) => m.len() == 2 && m.chars().all(|c| c.is_ascii_digit()),
        None => meridiem,
    }
}

fn is_iso_date(token: &str) -> bool {
    let parts: Vec<&str> = token.split('-').collect();
    parts.len() == 3
        && parts[0].len() == 4
        && parts
            .iter()
            .all(|p| !p.is_empty() && p.chars().all(|c| c.is_ascii_digit()))
}

fn is_path(token: &str) -> bool {
    let t = token.trim_end_matches(['.', ',', '?', '!', ';', ')', '\'', '"']);
    if t.contains("://") || t.contains('@') {
        return false;
    }
    let has_letter = t.chars().any(char::is_alphabetic);
    if t.starts_with('/') || t.starts_with("~/") || t.starts_with("./") {
        return has_letter;
    }
    // A file name: a stem and a short alphabetic extension (`notes.txt`, `main.rs`).
    match t.rsplit_once('.') {
        Some((stem, ext)) => {
            stem.len() >= 2
                && (1..=5).contains(&ext.len())
                && ext.chars().all(|c| c.is_ascii_alphabetic())
                && stem.chars().any(char::is_alphabetic)
                && ext.chars().any(|c| c.is_ascii_lowercase())
        }
        None => false,
    }
}

/// The kinds of value `request` carries.
pub fn request_values(request: &str) -> Vec<ValueKind> {
    let mut out = Vec::new();
    let tokens: Vec<String> = request
        .split_whitespace()
        .map(|t| t.trim_matches(|c: char| matches!(c, '(' | '"' | '\'' | '`' | '<' | '>')))
        .map(str::to_string)
        .collect();
    let lower: Vec<String> = tokens.iter().map(|t| t.to_lowercase()).collect();
    let ws = words(request);
    let time = lower.iter().any(|t| is_clock(t) || is_iso_date(t))
        || ws.iter().any(|w| RELATIVE_DAYS.contains(&w.as_str()))
        || ws.windows(2).any(|p| {
            (MONTHS.contains(&p[0].as_str()) && p[1].chars().all(|c| c.is_ascii_digit()))
                || (matches!(p[0].as_str(), "last" | "next" | "this" | "past")
                    && PERIODS.contains(&p[1].as_str()))
        });
    if time {
        out.push(ValueKind::Time);
    }
    if lower.iter().any(|t| is_path(t)) {
        out.push(ValueKind::Path);
    }
    if lower.iter().any(|t| t.contains("://")) {
        out.push(ValueKind::Url);
    }
    if lower.iter().any(|t| {
        t.split_once('@')
            .is_some_and(|(a, b)| !a.is_empty() && b.contains('.'))
    }) {
        out.push(ValueKind::Email);
    }
    out
}

/// The kind of value a parameter is meant for, from its name or its schema's `format`.
pub fn parameter_kind(name: &str, schema: &Value) -> Option<ValueKind> {
    if let Some(format) = schema.get("format").and_then(Value::as_str) {
        match format {
            "date" | "date-time" | "time" => return Some(ValueKind::Time),
            "uri" | "url" | "iri" => return Some(ValueKind::Url),
            "email" => return Some(ValueKind::Email),
            _ => {}
        }
    }
    let tokens = name_tokens(name);
    let last = tokens.last().map(String::as_str).unwrap_or_default();
    if tokens
        .iter()
        .any(|t| matches!(t.as_str(), "date" | "time" | "since" | "until" | "datetime"))
    {
        return Some(ValueKind::Time);
    }
    match last {
        "path" | "paths" | "file" | "files" | "filename" | "filepath" | "dir" | "directory" => {
            Some(ValueKind::Path)
        }
        "url" | "uri" | "urls" => Some(ValueKind::Url),
        "email" => Some(ValueKind::Email),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn the_lead_verb_says_the_action_and_a_question_reads() {
        assert_eq!(
            intent("Please delete ticket 4"),
            Some(Intent::Action("~remove"))
        );
        assert_eq!(
            intent("Could you show me issue 42"),
            Some(Intent::Action("~read"))
        );
        assert_eq!(intent("What time is it in Tokyo?"), Some(Intent::Question));
        assert_eq!(intent("Is my checkout clean?"), Some(Intent::Question));
        // A verb further on is not the request's action.
        assert_eq!(intent("Go through the issues created last week"), None);
        assert_eq!(intent(""), None);
    }

    #[test]
    fn a_name_of_the_other_family_conflicts() {
        let remove = Some(Intent::Action("~remove"));
        assert_eq!(
            action_factor(remove, &name_actions("delete_issue"), 2.0, 0.5),
            2.0
        );
        assert_eq!(
            action_factor(remove, &name_actions("get_issue"), 2.0, 0.5),
            0.5
        );
        assert_eq!(
            action_factor(remove, &name_actions("create_issue"), 2.0, 0.5),
            1.0
        );
        assert_eq!(
            action_factor(remove, &name_actions("git_status"), 2.0, 0.5),
            1.0
        );
        let q = Some(Intent::Question);
        assert_eq!(action_factor(q, &name_actions("get_issue"), 2.0, 0.5), 1.0);
        assert_eq!(action_factor(q, &name_actions("git_add"), 2.0, 0.5), 0.5);
        assert_eq!(action_factor(None, &name_actions("git_add"), 2.0, 0.5), 1.0);
    }

    #[test]
    fn values_of_a_request_are_recognised() {
        assert_eq!(
            request_values("If it's 3pm in New York"),
            vec![ValueKind::Time]
        );
        assert_eq!(request_values("It's 09:30 here"), vec![ValueKind::Time]);
        assert_eq!(
            request_values("changes since March 1"),
            vec![ValueKind::Time]
        );
        assert_eq!(
            request_values("who committed last week?"),
            vec![ValueKind::Time]
        );
        assert_eq!(
            request_values("read /data/notes.txt"),
            vec![ValueKind::Path]
        );
        assert_eq!(request_values("stage README.md"), vec![ValueKind::Path]);
        assert_eq!(
            request_values("fetch https://example.com/a"),
            vec![ValueKind::Url]
        );
        assert_eq!(
            request_values("mail ann@example.com"),
            vec![ValueKind::Email]
        );
        assert!(request_values("close ticket 42, thanks. Done").is_empty());
        assert!(request_values("version 2.0 of the app").is_empty());
    }

    #[test]
    fn parameters_say_their_kind_by_name_or_format() {
        let s = json!({"type": "string"});
        assert_eq!(parameter_kind("time", &s), Some(ValueKind::Time));
        assert_eq!(parameter_kind("start_date", &s), Some(ValueKind::Time));
        assert_eq!(parameter_kind("repo_path", &s), Some(ValueKind::Path));
        assert_eq!(parameter_kind("files", &s), Some(ValueKind::Path));
        assert_eq!(parameter_kind("timezone", &s), None);
        assert_eq!(
            parameter_kind("when", &json!({"format": "date-time"})),
            Some(ValueKind::Time)
        );
        assert_eq!(parameter_kind("query", &s), None);
    }
}
