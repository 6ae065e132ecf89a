//! The lexical index the synthetic selector ranks a tool set with: BM25F over each tool's fields,
//! plus what a request shows of the arguments a tool needs.
//!
//! **Terms.** Lower-cased words, stop words and request filler set aside, digits-only words set
//! aside (they are arguments, not subjects), each word reduced by [`super::stem::stem`]. A word of
//! a small table of action verbs also yields its action class (`wipe` and `delete` both yield
//! `~remove`), because a request names an action in its own words and the definition in the
//! author's; the table holds general API verbs only, never a server's nouns, and no word that is
//! more often a noun (`file`) or an adjective (`new`); `compare` and `diff` are reading verbs (they
//! show a difference and change nothing). In a request only the lead verb yields its class
//! ([`request_terms`]): a verb further on is seldom the action asked for. Such a verb ("the issues
//! *created* last week") describes something, so it does not match the action word of a tool's
//! name either (`create_issue`), nor count towards the name's coverage; it still matches
//! descriptions and parameters, where it is one more word.
//!
//! **Fields.** A tool is four fields, weighted because a model reads them unequally: its name
//! (split at `_`, `-`, `.` and camelCase) and title, weight 3; its description, 1; its parameters'
//! names, 1; its parameters' descriptions and enum values, 0.5. BM25F sums the weighted,
//! length-normalised term frequencies of the fields, then saturates once per term (k1 = 1.2), and
//! weighs a term by its inverse document frequency over the tool set — a word every tool uses
//! sets none apart.
//!
//! **Siblings' names.** A description's mention of another tool of the set ("use `delete_issue`
//! instead") is about that tool: the mention is blanked before the words are counted, or a careful
//! description would lend its sibling's words to itself.
//!
//! **Name coverage.** The words of a tool's name the request does not cover weaken it: the score
//! keeps [`NAME_UNCOVERED`] and earns the rest in proportion to the name words covered.
//!
//! **Argument evidence.** A required parameter whose `pattern` starts with a literal prefix
//! (`^usr_[a-z0-9]+$`) asks for an identifier of that shape: a request that holds one (`usr_1a2b`)
//! multiplies the tool's score, a request without one divides it — a model does not call
//! `get_user_profile(user_id)` for "John Smith" when `search_users` takes a name. A required number
//! (`integer`/`number`) with no number in the request weakens the tool likewise. A tool with a
//! parameter for a kind of value the request carries — a time or date, a path, a URL, an e-mail
//! address ([`super::intent::request_values`]) — is strengthened.
//!
//! **Action.** A tool whose name says the request's action (`delete_…` for "Delete…") is
//! strengthened; one whose name says an action of the other family (a write for a question, a
//! read for "Delete…") weakened ([`super::intent`]). A name that says no action (`git_status`)
//! takes its description's first word's, when that is a verb of the table ("Shows the working
//! tree status").
//!
//! **Prefix.** A name word every tool shares (`git_`, `slack_`) is the server's prefix and is left
//! out of the name's coverage.
//!
//! Every multiplier is in [`Weights`], chosen on the labelled set's calibration sets.

use std::collections::BTreeMap;
use std::sync::OnceLock;

use serde_json::Value;

use super::intent::{
    action_factor, intent, lead_word, name_actions, parameter_kind, request_values, Intent,
    ValueKind,
};
use super::stem::stem;
use crate::overlap::{is_stop_word, name_tokens, words};

/// Words of a request that carry no subject beyond [`crate::overlap::STOP_WORDS`].
const REQUEST_FILLER: &[&str] = &[
    "please", "kindly", "need", "want", "like", "me", "my", "we", "us", "our", "can", "could",
    "would", "let", "just", "thanks", "hey", "hi", "am", "im", "ll", "ve", "re", "don", "won",
    "isn", "doesn", "didn", "quick", "right", "now", "here",
];

/// Action classes: general API verbs a request and a definition may use for one action.
const ACTION_CLASSES: &[(&str, &[&str])] = &[
    (
        "~create",
        &[
            "create", "add", "make", "submit", "raise", "register", "insert", "write", "save",
            "store",
        ],
    ),
    (
        "~read",
        &[
            "get", "fetch", "retrieve", "show", "read", "view", "display", "see", "compare", "diff",
        ],
    ),
    (
        "~find",
        &["search", "find", "look", "locate", "lookup", "query"],
    ),
    ("~list", &["list", "enumerate", "browse"]),
    (
        "~change",
        &[
            "update", "change", "edit", "modify", "set", "rename", "reassign", "mark",
        ],
    ),
    (
        "~remove",
        &[
            "delete", "remove", "erase", "wipe", "purge", "destroy", "clear", "drop", "forget",
        ],
    ),
    ("~end", &["close", "resolve", "finish"]),
    ("~export", &["export", "download", "dump"]),
];

pub(super) fn action_class(stemmed: &str) -> Option<&'static str> {
    static TABLE: OnceLock<BTreeMap<String, &'static str>> = OnceLock::new();
    TABLE
        .get_or_init(|| {
            let mut t = BTreeMap::new();
            for (class, verbs) in ACTION_CLASSES {
                for v in *verbs {
                    t.insert(stem(v), *class);
                }
            }
            t
        })
        .get(stemmed)
        .copied()
}

/// The terms of a text, in order, repeats kept (a field's term frequency counts them).
pub fn terms(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for w in words(text) {
        push_word(&mut out, &w, true);
    }
    out
}

/// The terms of a request: its words, and the action class of its lead verb only
/// ([`super::intent::intent`]) — "the issues created last week" asks nothing of `create`.
pub fn request_terms(request: &str) -> Vec<String> {
    let mut out = Vec::new();
    for w in words(request) {
        push_word(&mut out, &w, false);
    }
    if let Some(Intent::Action(class)) = intent(request) {
        out.insert(0, class.to_string());
    }
    out
}

fn push_word(out: &mut Vec<String>, w: &str, with_class: bool) {
    if w.chars().count() < 2
        || w.chars().all(|c| c.is_ascii_digit())
        || is_stop_word(w)
        || REQUEST_FILLER.contains(&w)
    {
        return;
    }
    let s = stem(w);
    if with_class {
        if let Some(class) = action_class(&s) {
            out.push(class.to_string());
        }
    }
    out.push(s);
}

/// The terms of a tool or parameter name (split at `_`, `-`, `.` and camelCase).
pub fn name_terms(name: &str) -> Vec<String> {
    let mut out = Vec::new();
    for w in name_tokens(name) {
        push_word(&mut out, &w, true);
    }
    out
}

/// The four fields of a tool, in [`FIELD_WEIGHTS`] order.
pub const FIELDS: usize = 4;
const NAME: usize = 0;
const DESCRIPTION: usize = 1;
const PARAM_NAME: usize = 2;
const PARAM_DOC: usize = 3;

/// How much a term in each field counts: name 3, description 1, parameter names 1, parameter
/// descriptions 0.5.
pub const FIELD_WEIGHTS: [f64; FIELDS] = [3.0, 1.0, 1.0, 0.5];
/// Length normalisation per field (BM25's b): names are short and uniform, prose is not.
const FIELD_B: [f64; FIELDS] = [0.3, 0.75, 0.5, 0.75];
/// Term-frequency saturation (BM25's k1).
pub const K1: f64 = 1.2;

/// What a required or patterned parameter asks the request for.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Needs {
    /// An identifier starting with this lower-case literal (from `pattern`).
    Prefixed { prefix: String, required: bool },
    /// A required number.
    Number,
}

/// One tool, indexed.
#[derive(Debug, Clone)]
struct IndexedTool {
    name: String,
    /// The content terms of the name (no action classes), for the name's coverage.
    name_terms: Vec<String>,
    /// The action classes the name says, or when it says none, the description's first word
    /// (`git_status`: "Shows the working tree status" reads).
    actions: Vec<&'static str>,
    /// The kinds of value its parameters take.
    kinds: Vec<ValueKind>,
    /// Term → frequency per field.
    tf: BTreeMap<String, [u32; FIELDS]>,
    len: [usize; FIELDS],
    needs: Vec<Needs>,
}

/// A tool set, indexed for ranking.
#[derive(Debug, Clone)]
pub struct ToolIndex {
    tools: Vec<IndexedTool>,
    avg_len: [f64; FIELDS],
    /// Term → number of tools that use it in any field.
    df: BTreeMap<String, usize>,
}

/// One tool's score for a request, with the terms it matched.
#[derive(Debug, Clone, PartialEq)]
pub struct Scored {
    pub index: usize,
    pub name: String,
    pub score: f64,
    /// How much of the request the tool explains, whatever other tools say: the same sum without
    /// the inverse document frequency (a word every tool shares still shows the request belongs
    /// to this server). The floor of the selector reads this.
    pub fit: f64,
    /// The request's terms this tool holds (action classes shown as `~class`).
    pub matched: Vec<String>,
    /// The identifier prefixes of the request this tool takes.
    pub identifiers: Vec<String>,
}

/// The part of a tool's score kept when the request uses none of its name's words; the rest is
/// earned in proportion to the name words the request covers. A name's own noun the request never
/// mentions (`search_users` for a request about a service outage) speaks against the tool: a
/// model sends such a request to the plain `search`.
pub const NAME_UNCOVERED: f64 = 0.8;

/// Multiplier of a tool whose patterned parameter the request supplies (`usr_1a2b` for
/// `^usr_…`).
pub const ID_PRESENT: f64 = 2.0;
/// Multiplier of a tool with a required patterned parameter the request does not supply.
pub const ID_MISSING: f64 = 0.5;
/// Multiplier of a tool with a required number when the request has no number.
pub const NUMBER_MISSING: f64 = 0.75;

/// Multiplier of a tool whose name says the request's action ([`super::intent`]).
pub const ACTION_AGREES: f64 = 1.75;
/// Multiplier of a tool whose name says an action of the other family (a write for a question).
pub const ACTION_CONFLICTS: f64 = 0.25;
/// Multiplier of a tool with a parameter for a kind of value the request carries (a time, a
/// path, a URL, an e-mail address).
pub const VALUE_FITS: f64 = 2.0;
/// The multipliers of the evidence beyond shared words, together: [`Weights::SHIPPED`] is what
/// the selector uses; another set is for calibrating them (the labelled-set test searches a grid).
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Weights {
    pub name_uncovered: f64,
    pub id_present: f64,
    pub id_missing: f64,
    pub number_missing: f64,
    pub action_agrees: f64,
    pub action_conflicts: f64,
    pub value_fits: f64,
}

impl Weights {
    /// The shipped constants.
    pub const SHIPPED: Weights = Weights {
        name_uncovered: NAME_UNCOVERED,
        id_present: ID_PRESENT,
        id_missing: ID_MISSING,
        number_missing: NUMBER_MISSING,
        action_agrees: ACTION_AGREES,
        action_conflicts: ACTION_CONFLICTS,
        value_fits: VALUE_FITS,
    };
}

impl Default for Weights {
    fn default() -> Self {
        Weights::SHIPPED
    }
}

/// With this many tools or more, a name word all of them share is their prefix.
const SHARED_PREFIX_MIN_TOOLS: usize = 3;

/// The literal a JSON Schema `pattern` requires its value to start with: `^usr_[a-z0-9]+$` →
/// `usr_`. `None` when it starts with a class or group, or the literal is shorter than two
/// characters or has no letter.
pub fn pattern_prefix(pattern: &str) -> Option<String> {
    let rest = pattern.strip_prefix('^')?;
    let mut prefix = String::new();
    let mut chars = rest.chars().peekable();
    while let Some(&c) = chars.peek() {
        if c.is_alphanumeric() || c == '_' || c == '-' || c == ':' {
            prefix.push(c);
            chars.next();
        } else {
            break;
        }
    }
    // A quantifier after the literal makes its last character optional.
    if matches!(chars.peek(), Some('?' | '*' | '{')) {
        prefix.pop();
    }
    (prefix.chars().count() >= 2 && prefix.chars().any(char::is_alphabetic))
        .then(|| prefix.to_lowercase())
}

fn is_number_type(schema: &Value) -> bool {
    match schema.get("type") {
        Some(Value::String(t)) => t == "integer" || t == "number",
        Some(Value::Array(ts)) => ts
            .iter()
            .all(|t| matches!(t.as_str(), Some("integer" | "number" | "null"))),
        _ => false,
    }
}

/// A parameter's own schema and, for `anyOf`/`oneOf` (how Python servers write optional values),
/// its variants.
fn variants(schema: &Value) -> Vec<&Value> {
    let mut out = vec![schema];
    for key in ["anyOf", "oneOf"] {
        if let Some(list) = schema.get(key).and_then(Value::as_array) {
            out.extend(list.iter());
        }
    }
    out
}

fn is_word_char(c: char) -> bool {
    c.is_alphanumeric() || c == '_'
}

/// `text` with every whole-word mention of another tool's name blanked: "to close it for good, use
/// `delete_issue` instead" is about `delete_issue`, and its words must not count for this tool.
/// Longest names first, so `git_diff_staged` goes before `git_diff` can cut into it.
fn without_names(text: &str, others: &[&str]) -> String {
    // Most names are not mentioned: a name made of word characters is looked up among the
    // text's words, any other name searched for, before the text is copied.
    let words: std::collections::BTreeSet<&str> = text.split(|c| !is_word_char(c)).collect();
    let mut out = text.to_string();
    for name in others {
        let mentioned = if name.chars().all(is_word_char) {
            words.contains(name)
        } else {
            out.contains(name)
        };
        if name.is_empty() || !mentioned {
            continue;
        }
        let mut result = String::with_capacity(out.len());
        let mut rest = out.as_str();
        let mut prev: Option<char> = None;
        while let Some(at) = rest.find(name) {
            let before = rest[..at].chars().next_back().or(prev);
            let after = rest[at + name.len()..].chars().next();
            result.push_str(&rest[..at]);
            if before.is_some_and(is_word_char) || after.is_some_and(is_word_char) {
                result.push_str(name);
            } else {
                result.push(' ');
            }
            prev = name.chars().next_back();
            rest = &rest[at + name.len()..];
        }
        result.push_str(rest);
        out = result;
    }
    out
}

fn index_tool(tool: &Value, all_names: &[&str]) -> IndexedTool {
    let name = tool
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut others: Vec<&str> = all_names.iter().copied().filter(|n| *n != name).collect();
    others.sort_by_key(|n| std::cmp::Reverse(n.len()));
    let mut fields: [Vec<String>; FIELDS] = Default::default();
    fields[NAME] = name_terms(&name);
    if let Some(title) = tool.get("title").and_then(Value::as_str) {
        fields[NAME].extend(terms(title));
    }
    if let Some(d) = tool.get("description").and_then(Value::as_str) {
        fields[DESCRIPTION] = terms(&without_names(d, &others));
    }
    let schema = tool.get("inputSchema");
    let required: Vec<&str> = schema
        .and_then(|s| s.get("required"))
        .and_then(Value::as_array)
        .map(|r| r.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default();
    let mut needs = Vec::new();
    let mut kinds = Vec::new();
    if let Some(props) = schema
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    {
        for (pname, pschema) in props {
            fields[PARAM_NAME].extend(name_terms(pname));
            if let Some(kind) = variants(pschema)
                .into_iter()
                .find_map(|v| parameter_kind(pname, v))
            {
                if !kinds.contains(&kind) {
                    kinds.push(kind);
                }
            }
            let is_required = required.contains(&pname.as_str());
            let mut prefix = None;
            for v in variants(pschema) {
                if let Some(d) = v.get("description").and_then(Value::as_str) {
                    fields[PARAM_DOC].extend(terms(&without_names(d, &others)));
                }
                if let Some(values) = v.get("enum").and_then(Value::as_array) {
                    for e in values.iter().filter_map(Value::as_str) {
                        fields[PARAM_DOC].extend(terms(e));
                    }
                }
                if prefix.is_none() {
                    prefix = v
                        .get("pattern")
                        .and_then(Value::as_str)
                        .and_then(pattern_prefix);
                }
            }
            if let Some(prefix) = prefix {
                needs.push(Needs::Prefixed {
                    prefix,
                    required: is_required,
                });
            } else if is_required && is_number_type(pschema) {
                needs.push(Needs::Number);
            }
        }
    }
    let mut tf: BTreeMap<String, [u32; FIELDS]> = BTreeMap::new();
    let mut len = [0usize; FIELDS];
    for (f, list) in fields.iter().enumerate() {
        len[f] = list.len();
        for t in list {
            tf.entry(t.clone()).or_default()[f] += 1;
        }
    }
    IndexedTool {
        name_terms: name_terms(&name)
            .into_iter()
            .filter(|t| !t.starts_with('~'))
            .collect(),
        actions: {
            let from_name = name_actions(&name);
            if from_name.is_empty() {
                tool.get("description")
                    .and_then(Value::as_str)
                    .and_then(|d| words(d).into_iter().next())
                    .and_then(|w| action_class(&stem(&w)))
                    .into_iter()
                    .collect()
            } else {
                from_name
            }
        },
        kinds,
        name,
        tf,
        len,
        needs,
    }
}

/// The identifier-like tokens of a request (`usr_1a2b`, `PROJ-12`), lower-cased: runs of letters,
/// digits, `_`, `-` and `:`.
fn raw_tokens(request: &str) -> Vec<String> {
    request
        .split(|c: char| !(c.is_alphanumeric() || c == '_' || c == '-' || c == ':'))
        .filter(|t| !t.is_empty())
        .map(str::to_lowercase)
        .collect()
}

impl ToolIndex {
    pub fn new(tools: &[Value]) -> Self {
        let names: Vec<&str> = tools
            .iter()
            .filter_map(|t| t.get("name").and_then(Value::as_str))
            .collect();
        let mut tools: Vec<IndexedTool> = tools.iter().map(|t| index_tool(t, &names)).collect();
        // A name word every tool shares (`git_`, `slack_`) is the server's prefix, not a
        // subject: a request need not say it, so it does not count in the name's coverage.
        if tools.len() >= SHARED_PREFIX_MIN_TOOLS {
            let shared: Vec<String> = tools[0]
                .name_terms
                .iter()
                .filter(|t| tools.iter().all(|o| o.name_terms.contains(t)))
                .cloned()
                .collect();
            for t in &mut tools {
                t.name_terms.retain(|n| !shared.contains(n));
            }
        }
        let mut avg_len = [0.0; FIELDS];
        if !tools.is_empty() {
            for (f, avg) in avg_len.iter_mut().enumerate() {
                *avg = tools.iter().map(|t| t.len[f] as f64).sum::<f64>() / tools.len() as f64;
            }
        }
        let mut df: BTreeMap<String, usize> = BTreeMap::new();
        for t in &tools {
            for term in t.tf.keys() {
                *df.entry(term.clone()).or_default() += 1;
            }
        }
        ToolIndex { tools, avg_len, df }
    }

    pub fn len(&self) -> usize {
        self.tools.len()
    }

    pub fn is_empty(&self) -> bool {
        self.tools.is_empty()
    }

    /// BM25's inverse document frequency of a term over the tool set (0 when no tool uses it).
    pub fn idf(&self, term: &str) -> f64 {
        let n = self.tools.len() as f64;
        match self.df.get(term) {
            Some(&df) => (1.0 + (n - df as f64 + 0.5) / (df as f64 + 0.5)).ln(),
            None => 0.0,
        }
    }

    /// Every tool's score for `request`, best first (ties in listing order).
    pub fn rank(&self, request: &str) -> Vec<Scored> {
        self.rank_with(request, &Weights::SHIPPED)
    }

    /// [`ToolIndex::rank`] with other evidence weights (for calibrating them).
    pub fn rank_with(&self, request: &str, w: &Weights) -> Vec<Scored> {
        let mut query: Vec<String> = request_terms(request);
        let asked = intent(request);
        // A verb of the action table other than the lead verb describes something ("the issues
        // created last week"); it is not the action asked for, so a name that says that action
        // does not take it as its own.
        let lead = match asked {
            Some(Intent::Action(_)) => lead_word(request).map(|w| stem(&w)),
            _ => None,
        };
        let describing = |term: &str| {
            !term.starts_with('~') && action_class(term).is_some() && lead.as_deref() != Some(term)
        };
        let values = request_values(request);
        let mut seen = std::collections::BTreeSet::new();
        query.retain(|t| seen.insert(t.clone()));
        let raw = raw_tokens(request);
        let has_number = raw.iter().any(|t| t.chars().all(|c| c.is_ascii_digit()));
        let mut out: Vec<Scored> = self
            .tools
            .iter()
            .enumerate()
            .map(|(index, tool)| {
                let mut score = 0.0;
                let mut fit = 0.0;
                let mut matched = Vec::new();
                for term in &query {
                    let Some(freq) = tool.tf.get(term) else {
                        continue;
                    };
                    let mut weighted = 0.0;
                    for f in 0..FIELDS {
                        if freq[f] == 0 || (f == NAME && describing(term)) {
                            continue;
                        }
                        let norm = if self.avg_len[f] > 0.0 {
                            1.0 - FIELD_B[f] + FIELD_B[f] * tool.len[f] as f64 / self.avg_len[f]
                        } else {
                            1.0
                        };
                        weighted += FIELD_WEIGHTS[f] * f64::from(freq[f]) / norm;
                    }
                    if weighted == 0.0 {
                        continue;
                    }
                    let saturated = weighted / (K1 + weighted);
                    score += self.idf(term) * saturated;
                    fit += saturated;
                    matched.push(term.clone());
                }
                let mut factor =
                    action_factor(asked, &tool.actions, w.action_agrees, w.action_conflicts);
                if values.iter().any(|v| tool.kinds.contains(v)) {
                    factor *= w.value_fits;
                }
                if !tool.name_terms.is_empty() {
                    let covered = tool
                        .name_terms
                        .iter()
                        .filter(|t| {
                            (matched.contains(t) && !describing(t))
                                || action_class(t).is_some_and(|c| matched.iter().any(|m| m == c))
                        })
                        .count();
                    factor *= w.name_uncovered
                        + (1.0 - w.name_uncovered) * covered as f64 / tool.name_terms.len() as f64;
                }
                let mut identifiers = Vec::new();
                for need in &tool.needs {
                    match need {
                        Needs::Prefixed { prefix, required } => {
                            if raw
                                .iter()
                                .any(|t| t.len() > prefix.len() && t.starts_with(prefix.as_str()))
                            {
                                factor *= w.id_present;
                                identifiers.push(prefix.clone());
                            } else if *required {
                                factor *= w.id_missing;
                            }
                        }
                        Needs::Number => {
                            if !has_number {
                                factor *= w.number_missing;
                            }
                        }
                    }
                }
                Scored {
                    index,
                    name: tool.name.clone(),
                    score: score * factor,
                    fit: fit * factor,
                    matched,
                    identifiers,
                }
            })
            .collect();
        out.sort_by(|a, b| b.score.total_cmp(&a.score).then(a.index.cmp(&b.index)));
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn terms_stem_drop_filler_and_add_action_classes() {
        assert_eq!(
            terms("Please wipe all the tickets for Acme, 42 of them"),
            vec!["~remove", "wip", "ticket", "acm"]
        );
        assert_eq!(
            name_terms("deleteAllTickets"),
            vec!["~remove", "delet", "ticket"]
        );
        assert_eq!(name_terms("search_users"), vec!["~find", "search", "user"]);
    }

    #[test]
    fn pattern_prefix_reads_the_literal_start() {
        assert_eq!(pattern_prefix("^usr_[a-z0-9]+$").as_deref(), Some("usr_"));
        assert_eq!(pattern_prefix("^PROJ-\\d+$").as_deref(), Some("proj-"));
        assert_eq!(pattern_prefix("^[a-z0-9][a-z0-9-]{1,38}$"), None);
        assert_eq!(pattern_prefix("usr_[a-z]+"), None, "unanchored");
        assert_eq!(
            pattern_prefix("^a_?[0-9]+$"),
            None,
            "optional last character"
        );
        assert_eq!(pattern_prefix("^12[0-9]$"), None, "no letter");
    }

    fn directory() -> Vec<Value> {
        vec![
            json!({"name": "search_users", "description": "Find people by name or email.",
                   "inputSchema": {"type": "object", "properties": {"query": {"type": "string"}}, "required": ["query"]}}),
            json!({"name": "get_user_profile", "description": "Retrieve one person's profile.",
                   "inputSchema": {"type": "object", "properties": {"user_id": {"type": "string", "pattern": "^usr_[a-z0-9]+$"}}, "required": ["user_id"]}}),
            json!({"name": "close_ticket", "description": "Close a ticket.",
                   "inputSchema": {"type": "object", "properties": {"number": {"type": "integer"}}, "required": ["number"]}}),
        ]
    }

    #[test]
    fn names_weigh_more_than_descriptions_and_rare_terms_more_than_common() {
        let index = ToolIndex::new(&directory());
        let ranked = index.rank("search for Ann");
        assert_eq!(ranked[0].name, "search_users");
        assert!(ranked[0].matched.contains(&"search".to_string()));
        assert!(ranked[0].fit > 0.0);
        assert_eq!(ranked[1].score, 0.0);
        assert_eq!(index.idf("nothing"), 0.0);
        // "ticket" is in one tool of three, the "find" class in one too: equal rarity.
        assert_eq!(index.idf("ticket"), index.idf("~find"));
        // A word in the name outweighs the same word in a description.
        let named = ToolIndex::new(&[
            json!({"name": "archive", "description": "Moves it away."}),
            json!({"name": "store", "description": "Keeps an archive copy."}),
            json!({"name": "other", "description": "Something else."}),
        ]);
        assert_eq!(named.rank("archive it")[0].name, "archive");
    }

    #[test]
    fn a_sibling_named_in_a_description_lends_it_no_words() {
        assert_eq!(
            without_names("to erase it, use delete_issue instead", &["delete_issue"]),
            "to erase it, use   instead"
        );
        // Whole names only: a longer identifier that contains the name stays.
        assert_eq!(
            without_names("see delete_issues or xdelete_issue", &["delete_issue"]),
            "see delete_issues or xdelete_issue"
        );
        let index = ToolIndex::new(&[
            json!({"name": "close_issue", "description": "Close an issue. To remove it for good, use delete_issue instead."}),
            json!({"name": "delete_issue", "description": "Erase an issue permanently."}),
            json!({"name": "other", "description": "Something else."}),
        ]);
        assert_eq!(index.rank("delete issue 4")[0].name, "delete_issue");
    }

    #[test]
    fn only_the_lead_verb_of_a_request_yields_an_action_class() {
        assert_eq!(
            request_terms("Delete the tickets created today"),
            vec!["~remove", "delet", "ticket", "creat", "today"]
        );
        assert!(!request_terms("Go through the issues created last week")
            .contains(&"~create".to_string()));
        // `file` and `new` are not verbs of the table.
        assert_eq!(terms("new files"), vec!["new", "fil"]);
    }

    #[test]
    fn general_verbs_share_their_action_class() {
        // "Forget" asks to remove; comparing and diffing show something and change nothing.
        assert_eq!(terms("forget")[0], "~remove");
        assert_eq!(terms("compare")[0], "~read");
        assert_eq!(name_terms("diff_files"), vec!["~read", "diff", "fil"]);
    }

    #[test]
    fn a_verb_after_the_lead_does_not_take_a_names_action() {
        let index = ToolIndex::new(&[
            json!({"name": "create_issue", "description": "Open a new issue in a project."}),
            json!({"name": "list_issues", "description": "Every issue of a project, a page at a time, in order."}),
            json!({"name": "other", "description": "Something else."}),
        ]);
        // "created" describes the issues: the request does not ask to create.
        let go_through = "Go through every issue in project atlas in the order they were created";
        let ranked = index.rank(go_through);
        assert_eq!(ranked[0].name, "list_issues", "{ranked:?}");
        // As the lead verb it is the action, and the name takes it.
        assert_eq!(
            index.rank("Create an issue in project atlas")[0].name,
            "create_issue"
        );
    }

    #[test]
    fn the_name_action_agrees_or_conflicts_with_the_request() {
        let index = ToolIndex::new(&[
            json!({"name": "get_ticket", "description": "A ticket's fields."}),
            json!({"name": "delete_ticket", "description": "A ticket, gone."}),
            json!({"name": "other", "description": "Something else."}),
        ]);
        assert_eq!(index.rank("Delete ticket 4")[0].name, "delete_ticket");
        assert_eq!(index.rank("What does ticket 4 say?")[0].name, "get_ticket");
        let neutral = Weights {
            action_agrees: 1.0,
            action_conflicts: 1.0,
            ..Weights::SHIPPED
        };
        let q = index.rank_with("What does ticket 4 say?", &neutral);
        assert_eq!(q[0].score, q[1].score, "without the action, the words tie");
    }

    #[test]
    fn a_name_without_an_action_takes_its_descriptions_first_verb() {
        let index = ToolIndex::new(&[
            json!({"name": "git_status", "description": "Shows the files of the index."}),
            json!({"name": "git_commit", "description": "Saves the files of the index."}),
            json!({"name": "git_log", "description": "Records of the history."}),
        ]);
        assert_eq!(index.tools[0].actions, vec!["~read"]);
        assert_eq!(index.tools[1].actions, vec!["~create"]);
        assert!(
            index.tools[2].actions.is_empty(),
            "`record` is no verb of the table"
        );
        // A question is answered by reading: the tool that saves is weakened.
        let ranked = index.rank("Which files are in the index?");
        assert_eq!(ranked[0].name, "git_status");
        let neutral = Weights {
            action_conflicts: 1.0,
            ..Weights::SHIPPED
        };
        let commit = |r: &[Scored]| r.iter().find(|s| s.name == "git_commit").unwrap().score;
        let plain = index.rank_with("Which files are in the index?", &neutral);
        assert!((commit(&ranked) / commit(&plain) - ACTION_CONFLICTS).abs() < 1e-9);
    }

    #[test]
    fn a_value_the_request_carries_fits_a_parameter_for_it() {
        let index = ToolIndex::new(&[
            json!({"name": "current_time", "description": "The time in a zone.",
                   "inputSchema": {"type": "object", "properties": {"timezone": {"type": "string"}}}}),
            json!({"name": "convert_time", "description": "The time in another zone.",
                   "inputSchema": {"type": "object", "properties": {"time": {"type": "string"}, "timezone": {"type": "string"}}}}),
        ]);
        let score = |request: &str, tool: &str| {
            index
                .rank(request)
                .into_iter()
                .find(|s| s.name == tool)
                .unwrap()
                .score
        };
        // "3pm" and "noon" are both words no tool holds: only the value's kind differs.
        let (at_3pm, at_noon) = ("Tokyo time at 3pm", "Tokyo time at noon");
        let ratio = score(at_3pm, "convert_time") / score(at_noon, "convert_time");
        assert!((ratio - VALUE_FITS).abs() < 1e-9, "{ratio}");
        assert_eq!(
            score(at_3pm, "current_time"),
            score(at_noon, "current_time")
        );
    }

    #[test]
    fn a_prefix_every_tool_shares_is_not_part_of_the_name_coverage() {
        let index = ToolIndex::new(&[
            json!({"name": "git_log", "description": "Commit history."}),
            json!({"name": "git_status", "description": "Working tree state."}),
            json!({"name": "git_show", "description": "One commit."}),
        ]);
        let ranked = index.rank("the status");
        let neutral = Weights {
            name_uncovered: 0.0,
            ..Weights::SHIPPED
        };
        // With nothing kept for an uncovered name, `git_status` keeps its whole score: `git` is
        // not a word the request had to say.
        let bare = index.rank_with("the status", &neutral);
        assert_eq!(ranked[0].name, "git_status");
        assert!(bare[0].score > 0.0 && (bare[0].score - ranked[0].score).abs() < 1e-9);
    }

    #[test]
    fn a_name_word_the_request_never_uses_weakens_the_tool() {
        let index = ToolIndex::new(&[
            json!({"name": "search", "description": "Search."}),
            json!({"name": "search_users", "description": "Search."}),
            json!({"name": "other", "description": "Something else."}),
        ]);
        assert_eq!(index.rank("search the outage notes")[0].name, "search");
        assert_eq!(index.rank("search the users")[0].name, "search_users");
    }

    #[test]
    fn an_identifier_of_the_patterned_shape_moves_the_choice() {
        let index = ToolIndex::new(&directory());
        // A profile asked for by name: the tool that needs a usr_ identifier is halved.
        let by_name = index.rank("Retrieve the profile of John Smith");
        let by_id = index.rank("Retrieve the profile of usr_1a2b");
        assert_eq!(by_id[0].name, "get_user_profile");
        assert_eq!(by_id[0].identifiers, vec!["usr_".to_string()]);
        let score = |r: &[Scored]| {
            r.iter()
                .find(|s| s.name == "get_user_profile")
                .unwrap()
                .score
        };
        assert!((score(&by_id) / score(&by_name) - ID_PRESENT / ID_MISSING).abs() < 1e-9);
        // A required number missing weakens the tool, present leaves it.
        let with = index.rank("close ticket 7");
        let without = index.rank("close the ticket");
        assert!(with[0].score > without[0].score);
    }

    #[test]
    fn ranking_is_deterministic_and_total() {
        let index = ToolIndex::new(&directory());
        let a = index.rank("nothing in common at all");
        assert_eq!(a.len(), 3);
        assert!(a.iter().all(|s| s.score == 0.0));
        assert_eq!(
            a.iter().map(|s| s.index).collect::<Vec<_>>(),
            vec![0, 1, 2],
            "ties keep the listing order"
        );
        assert_eq!(index.rank("find Ann"), index.rank("find Ann"));
    }
}
