//! The checks behind the rule catalogue ([`super::catalogue`]): one function per family, run
//! over one side's tools by `check_all`.

use std::collections::{BTreeMap, BTreeSet};

use super::catalogue::{Code, Collector, Finding};
use super::facts::{InjectionKind, Operation, ParamFacts, ToolFacts};
use super::namespaces::Namespaces;
use super::text;

fn naming_convention(name: &str) -> Option<&'static str> {
    let has_upper = name.chars().any(char::is_uppercase);
    let has_lower = name.chars().any(char::is_lowercase);
    if name.contains('_') {
        Some(if has_upper && has_lower {
            "mixed_Snake"
        } else if has_upper {
            "SCREAMING_SNAKE"
        } else {
            "snake_case"
        })
    } else if name.contains('-') {
        Some("kebab-case")
    } else if name.contains('.') {
        Some("dot.case")
    } else if has_upper && has_lower {
        Some(if name.chars().next().is_some_and(char::is_uppercase) {
            "PascalCase"
        } else {
            "camelCase"
        })
    } else {
        None
    }
}

/// The subject words a name promises that its description never mentions. The namespace prefix
/// is left out, and the word after it stands where a verb stands.
pub(crate) fn unmentioned_subjects(f: &ToolFacts, namespaces: &Namespaces) -> Vec<String> {
    let mut text_words = f.clean_words.clone();
    if let Some(title) = &f.title {
        text_words.extend(text::words(title));
    }
    let tokens = namespaces.strip(&f.name_tokens);
    super::facts::subject_words(tokens.iter())
        .into_iter()
        .filter(|t| !text::mentions(t, &text_words))
        .filter(|t| {
            // "unstaged" is described by "not yet staged".
            let stripped = t.strip_prefix("un").or_else(|| t.strip_prefix("non"));
            !stripped.is_some_and(|s| s.len() >= 3 && text::mentions(s, &text_words))
        })
        .collect()
}

fn injection_code(kind: InjectionKind) -> Code {
    match kind {
        InjectionKind::Override => Code::M001,
        InjectionKind::Conceal => Code::M002,
        InjectionKind::CrossTool => Code::M003,
        InjectionKind::Judge => Code::M005,
        InjectionKind::Markup => Code::M006,
        InjectionKind::Rewrite => Code::M007,
    }
}

fn quote(s: &str, max: usize) -> String {
    let s = text::normalize_space(s);
    if s.chars().count() <= max {
        s
    } else {
        format!("{}…", s.chars().take(max).collect::<String>())
    }
}

fn model_directed_in(text_value: &str) -> Vec<(InjectionKind, String)> {
    let mut out = Vec::new();
    for sentence in text::sentences(text_value) {
        let kinds = [
            (InjectionKind::Override, text::override_cue()),
            (InjectionKind::Conceal, text::conceal_cue()),
            (InjectionKind::CrossTool, text::cross_tool_cue()),
            (InjectionKind::Judge, text::judge_cue()),
            (InjectionKind::Markup, text::markup_cue()),
            (InjectionKind::Rewrite, text::rewrite_cue()),
        ];
        for (kind, _) in kinds.iter().filter(|(_, re)| re.is_match(&sentence)) {
            out.push((*kind, sentence.clone()));
        }
    }
    out
}

fn describe_invisible(points: &[u32]) -> String {
    let list: BTreeSet<String> = points.iter().map(|p| format!("U+{p:04X}")).collect();
    list.into_iter().collect::<Vec<_>>().join(", ")
}

/// Every per-tool rule, family by family (the families of [`Family`]).
fn check_tool(c: &mut Collector, f: &ToolFacts, tool: &serde_json::Value, namespaces: &Namespaces) {
    check_model_directed(c, f);
    check_naming(c, f);
    check_description(c, f, namespaces);
    check_parameters(c, f, tool);
    super::schema_rules::check_schema(c, f, tool);
    check_annotations(c, f);
    check_budget(c, f);
}

/// Model-directed text: it also protects the judge, so it is checked first.
fn check_model_directed(c: &mut Collector, f: &ToolFacts) {
    let name = f.name.as_str();
    let t = Some(name);
    for hit in &f.injections {
        c.push(
            injection_code(hit.kind),
            t,
            None,
            format!(
                "The description {}: \"{}\".",
                hit.kind.label(),
                quote(&hit.sentence, 120)
            ),
            "Delete the sentence; describe what the tool does, when to use it and what it returns."
                .into(),
            vec![],
        );
    }
    let mut invisible: Vec<u32> = f.invisible.iter().map(|(p, _)| *p).collect();
    for field in [Some(name.to_string()), f.title.clone()]
        .into_iter()
        .flatten()
    {
        invisible.extend(
            field
                .chars()
                .filter(|ch| text::is_invisible_or_bidi(*ch))
                .map(|ch| ch as u32),
        );
    }
    if !invisible.is_empty() {
        c.push(
            Code::M004,
            t,
            None,
            format!("The name, title or description contains invisible or bidirectional characters ({}).", describe_invisible(&invisible)),
            "Remove the characters; if the text needs a direction mark, rephrase it instead.".into(),
            vec![],
        );
    }
    for p in &f.params {
        for (kind, sentence) in model_directed_in(&p.description) {
            c.push(
                injection_code(kind),
                t,
                Some(&p.name),
                format!(
                    "The description of parameter `{}` {}: \"{}\".",
                    p.name,
                    kind.label(),
                    quote(&sentence, 120)
                ),
                "Delete the sentence; say what the value is and its format.".into(),
                vec![],
            );
        }
        let hidden: Vec<u32> = p
            .description
            .chars()
            .chain(p.name.chars())
            .filter(|ch| text::is_invisible_or_bidi(*ch))
            .map(|ch| ch as u32)
            .collect();
        if !hidden.is_empty() {
            c.push(
                Code::M004,
                t,
                Some(&p.name),
                format!(
                    "Parameter `{}` contains invisible or bidirectional characters ({}).",
                    p.name,
                    describe_invisible(&hidden)
                ),
                "Remove the characters.".into(),
                vec![],
            );
        }
    }
}

/// Naming: characters, length, generic words, the namespace prefix.
fn check_naming(c: &mut Collector, f: &ToolFacts) {
    let name = f.name.as_str();
    let t = Some(name);
    let valid_chars = !name.is_empty()
        && name.chars().count() <= 128
        && name
            .chars()
            .all(|ch| ch.is_ascii_alphanumeric() || matches!(ch, '_' | '-' | '.'));
    if !valid_chars {
        c.push(
            Code::N003,
            t,
            None,
            format!("`{name}` has characters outside A–Z, a–z, 0–9, '_', '-', '.' or is empty or too long."),
            "Rename the tool with letters, digits, '_', '-' or '.' only.".into(),
            vec![],
        );
    }
    if name.chars().count() > 64 {
        c.push(
            Code::N005,
            t,
            None,
            format!("`{name}` is {} characters long.", name.chars().count()),
            "Shorten the name to 64 characters or fewer.".into(),
            vec![],
        );
    }
    let generic = !f.name_tokens.is_empty()
        && !text::names_a_compound_resource(&f.name_tokens)
        && f.name_tokens
            .iter()
            .all(|tok| text::is_generic_name_word(tok));
    if !generic && f.name_tokens.len() == 1 && text::verb_base(&f.name_tokens[0]).is_some() {
        c.push(
            Code::N006,
            t,
            None,
            format!("`{name}` is one bare verb; it names no resource."),
            format!("Name what it acts on, e.g. `{name}_<resource>`."),
            vec![],
        );
    }
    if generic {
        c.push(
            Code::N002,
            t,
            None,
            format!(
                "`{name}` is made of generic words only ({}).",
                f.name_tokens.join(", ")
            ),
            "Name the action and the resource, e.g. `search_issues` rather than `run`.".into(),
            vec![],
        );
    }
}

/// Descriptions: presence, length, usage guidance, returns, examples.
fn check_description(c: &mut Collector, f: &ToolFacts, namespaces: &Namespaces) {
    let name = f.name.as_str();
    let t = Some(name);
    if !f.has_description() {
        c.push(
            Code::D001,
            t,
            None,
            if f.description.trim().is_empty() {
                format!("`{name}` has no description.")
            } else {
                format!(
                    "`{name}` has no description beyond generated boilerplate (\"{}\").",
                    quote(&f.description, 60)
                )
            },
            "Write one or two sentences: what it does, to what, when to use it, what it returns."
                .into(),
            vec![],
        );
    } else if f.is_placeholder() {
        c.push(
            Code::D004,
            t,
            None,
            format!(
                "The description of `{name}` is placeholder text: \"{}\".",
                quote(&f.description, 80)
            ),
            "Replace the placeholder with a real description.".into(),
            vec![],
        );
    } else if f.is_tautology() {
        c.push(
            Code::D003,
            t,
            None,
            format!(
                "The description \"{}\" only restates the name `{name}`.",
                quote(&f.description, 80)
            ),
            "Say what the tool does that the name cannot: the resource, the scope, when to use it."
                .into(),
            vec![],
        );
    } else {
        let n = f.word_count();
        if n < 6 {
            c.push(
                Code::D002,
                t,
                None,
                format!(
                    "The description of `{name}` has {n} word{}.",
                    if n == 1 { "" } else { "s" }
                ),
                "Extend it to a full sentence with the resource and when to use it.".into(),
                vec![],
            );
        }
        if n > 400 {
            c.push(
                Code::D009,
                t,
                None,
                format!("The description of `{name}` has {n} words."),
                "Keep the purpose first and cut reference material.".into(),
                vec![],
            );
        }
        if f.cues.usage.is_none() && f.cues.contrast.is_none() && f.mentioned_siblings.is_empty() {
            c.push(Code::D007, t, None, format!("No sentence of `{name}`'s description says when to use it or what to use instead."), "Add 'Use this when …' and name the sibling to use otherwise.".into(), vec![]);
        }
        if !f.output.documented() && f.cues.returns.is_none() {
            c.push(Code::D008, t, None, format!("`{name}` has no documented output schema and its description does not say what it returns."), "Add an outputSchema with described fields, or a 'Returns …' sentence.".into(), vec![]);
        }
        let missing = unmentioned_subjects(f, namespaces);
        if !missing.is_empty() {
            c.push(
                Code::D010,
                t,
                None,
                format!(
                    "`{name}` promises {} in its name, but the description never mentions {}.",
                    missing
                        .iter()
                        .map(|m| format!("'{m}'"))
                        .collect::<Vec<_>>()
                        .join(" and "),
                    if missing.len() == 1 { "it" } else { "them" }
                ),
                "Mention the resource the name promises, or rename the tool.".into(),
                vec![],
            );
        }
        if !f.annotations.present && f.cues.behaviour().is_empty() {
            c.push(Code::D011, t, None, format!("`{name}` declares no annotations and its description says nothing of limits, side effects, permissions or cost."), "Add annotations and one sentence on side effects or limits.".into(), vec![]);
        }
        if !f.params.is_empty()
            && f.cues.example.is_none()
            && !f.params.iter().any(|p| p.has_example())
        {
            c.push(
                Code::D012,
                t,
                None,
                format!("Neither `{name}`'s description nor its parameters give an example value."),
                "Give one example value, e.g. an id format or a sample query.".into(),
                vec![],
            );
        }
        if let Some(m) = text::filler_cue().find(&f.clean) {
            c.push(
                Code::D014,
                t,
                None,
                format!(
                    "The description of `{name}` spends words on filler (\"{}\").",
                    m.as_str()
                ),
                "Cut the phrase; open with the verb and the resource.".into(),
                vec![],
            );
        }
    }
}

/// Parameters: the input schema, required lists, parameter descriptions and formats.
fn check_parameters(c: &mut Collector, f: &ToolFacts, tool: &serde_json::Value) {
    check_input_schema(c, f, tool);
    let list_values = regex_list_values();
    for p in &f.params {
        check_parameter(c, f.name.as_str(), p, list_values);
    }
}

/// The schema as a whole: an object schema, a required list, and parameters explained somewhere.
fn check_input_schema(c: &mut Collector, f: &ToolFacts, tool: &serde_json::Value) {
    let name = f.name.as_str();
    let t = Some(name);
    if !f.input_schema_is_object {
        let what = if tool.get("inputSchema").is_none() {
            "has no inputSchema"
        } else {
            "has an inputSchema that is not an object schema"
        };
        c.push(Code::P011, t, None, format!("`{name}` {what}."), "Declare inputSchema as {\"type\": \"object\", \"properties\": {…}} (an empty properties object for no arguments).".into(), vec![]);
    }
    if !f.params.is_empty() && !f.has_required_list {
        c.push(
            Code::P007,
            t,
            None,
            format!(
                "`{name}` has {} parameter{} but no required list.",
                f.params.len(),
                if f.params.len() == 1 { "" } else { "s" }
            ),
            "Add \"required\": [...] naming the parameters the tool needs (an empty list if none)."
                .into(),
            vec![],
        );
    }
    let undocumented = f.params.iter().filter(|p| p.description.is_empty()).count();
    if f.params.len() >= 3 && undocumented > 0 && f.mentioned_params.is_empty() {
        c.push(Code::P010, t, None, format!("`{name}` takes {} parameters, {undocumented} without a description, and its description mentions none of them.", f.params.len()), "Describe each parameter in the schema, or explain them in the description.".into(), vec![]);
    }
}

/// Name words that call for a declared format or pattern on a string parameter.
const FORMAT_WORDS: [&str; 15] = [
    "date",
    "time",
    "timestamp",
    "datetime",
    "email",
    "url",
    "uri",
    "link",
    "uuid",
    "guid",
    "since",
    "until",
    "before",
    "after",
    "deadline",
];

/// A string named like a date, time, email, URL or identifier. `link` counts only as the last
/// word (`web_link`, not `link_id` or `link_type`), `at`/`on` only after another word
/// (`created_at`, not an `at` cell reference), and a lone `after`/`before` only when its
/// description speaks of time (it is often a paging cursor).
fn wants_a_format(ptoks: &[String], description: &str) -> bool {
    let last = ptoks.last().map(String::as_str);
    // "since" and "until" are always moments; "after" and "before" are often paging cursors.
    let relation = |t: &str| matches!(t, "before" | "after");
    if ptoks.len() == 1 && last.is_some_and(relation) {
        return text::speaks_of_time(description);
    }
    ptoks.iter().enumerate().any(|(i, tok)| {
        let tok = tok.as_str();
        FORMAT_WORDS.contains(&tok) && (tok != "link" || i + 1 == ptoks.len())
    }) || (ptoks.len() > 1 && last.is_some_and(|l| l == "at" || l == "on"))
}

/// A date or time parameter whose description accepts relative values ("2 days ago",
/// "yesterday"): no one format fits it, so declaring one would be wrong.
fn says_relative_dates_are_accepted(ptoks: &[String], description: &str) -> bool {
    let temporal = ptoks.iter().any(|t| {
        matches!(
            t.as_str(),
            "date"
                | "time"
                | "timestamp"
                | "datetime"
                | "since"
                | "until"
                | "before"
                | "after"
                | "deadline"
                | "at"
                | "on"
        )
    });
    temporal && text::relative_date_cue().is_match(description)
}

/// One parameter: its description, then its type, its values, its format and (for a boolean)
/// what true means, in that order of findings.
fn check_parameter(c: &mut Collector, name: &str, p: &ParamFacts, list_values: &regex::Regex) {
    let t = Some(name);
    let pn = Some(p.name.as_str());
    let ptoks = text::name_tokens(&p.name);
    check_parameter_description(c, name, p, &ptoks);
    if !p.typed {
        c.push(
            Code::P005,
            t,
            pn,
            format!("`{name}.{}` has no type.", p.name),
            "Declare \"type\" (string, integer, number, boolean, array, object).".into(),
            vec![],
        );
    }
    if p.untyped_object {
        c.push(
            Code::P009,
            t,
            pn,
            format!(
                "`{name}.{}` is an object with no declared properties.",
                p.name
            ),
            "Declare its properties, or additionalProperties with a type.".into(),
            vec![],
        );
    }
    if p.is_string()
        && p.enum_values.is_empty()
        && (list_values.is_match(&p.description) || text::lists_quoted_choices(&p.description))
    {
        c.push(
            Code::P003,
            t,
            pn,
            format!(
                "`{name}.{}` lists its values in prose (\"{}\") but has no enum.",
                p.name,
                quote(&p.description, 80)
            ),
            "Move the allowed values into \"enum\".".into(),
            vec![],
        );
    }
    let wants_format = wants_a_format(&ptoks, &p.description);
    if p.is_string()
        && wants_format
        && p.format.is_none()
        && !p.has_pattern
        && p.enum_values.is_empty()
        && !says_relative_dates_are_accepted(&ptoks, &p.description)
        && !text::states_a_value_shape(&p.description)
    {
        c.push(Code::P004, t, pn, format!("`{name}.{}` looks like a date, time, email, URL or identifier but declares no format or pattern.", p.name), "Declare \"format\" (date-time, date, email, uri, uuid) or a \"pattern\".".into(), vec![]);
    }
    if p.is_string() && !p.is_constrained() && !p.has_example() {
        c.push(
            Code::P006,
            t,
            pn,
            format!(
                "`{name}.{}` is a free string with no example, default, enum, pattern or format.",
                p.name
            ),
            "Add \"examples\" or an example in its description.".into(),
            vec![],
        );
    }
    if p.is_boolean() {
        let words_n = text::words(&p.description).len();
        if words_n < 3 {
            c.push(
                Code::P008,
                t,
                pn,
                format!("Boolean `{name}.{}` does not say what true means.", p.name),
                "Say what happens when it is true, and the default.".into(),
                vec![],
            );
        }
    }
}

/// A parameter's description: present, and saying more than its name.
fn check_parameter_description(c: &mut Collector, name: &str, p: &ParamFacts, ptoks: &[String]) {
    let t = Some(name);
    let pn = Some(p.name.as_str());
    if p.description.is_empty() {
        c.push(
            Code::P001,
            t,
            pn,
            format!("`{name}.{}` has no description.", p.name),
            format!(
                "Describe `{}`: what it is, its format, and where the value comes from.",
                p.name
            ),
            vec![],
        );
    } else {
        let bare = text::bare(&p.description);
        let dwords: Vec<String> = text::words(&p.description)
            .into_iter()
            .filter(|w| !text::is_stop_word(w))
            .map(|w| text::singular(&w))
            .collect();
        let pwords: Vec<String> = ptoks.iter().map(|w| text::singular(w)).collect();
        if bare == ptoks.join(" ")
            || (!dwords.is_empty()
                && dwords.len() <= 3
                && dwords.iter().all(|w| pwords.contains(w)))
        {
            c.push(
                Code::P002,
                t,
                pn,
                format!(
                    "The description of `{name}.{}` (\"{}\") only restates its name.",
                    p.name,
                    quote(&p.description, 60)
                ),
                "Give the format, the allowed values or the tool that returns this value.".into(),
                vec![],
            );
        }
    }
}

/// Annotations: hints that contradict the name or description, or are missing.
fn check_annotations(c: &mut Collector, f: &ToolFacts) {
    let name = f.name.as_str();
    let t = Some(name);
    let a = &f.annotations;
    let desc_destructive = f.cues.destructive.is_some()
        || text::destructive_verb_cue().is_match(first_own_sentence(f));
    let writes_by_name = f.operation.is_write();
    if a.read_only == Some(true)
        && (writes_by_name || desc_destructive || a.destructive == Some(true))
    {
        let why = if a.destructive == Some(true) {
            "declares both readOnlyHint and destructiveHint".to_string()
        } else {
            format!(
                "declares readOnlyHint: true but {} (a {} operation)",
                if desc_destructive {
                    "its description deletes or overwrites"
                } else {
                    "its name says it writes"
                },
                f.operation.label()
            )
        };
        c.push(
            Code::A004,
            t,
            None,
            format!("`{name}` {why}."),
            "Make the annotations match what the tool does.".into(),
            vec![],
        );
    } else if a.destructive == Some(false) && f.cues.destructive.is_some() {
        c.push(
            Code::A004,
            t,
            None,
            format!(
                "`{name}` declares destructiveHint: false but its description says \"{}\".",
                f.cues.destructive.clone().unwrap_or_default()
            ),
            "Set destructiveHint: true, or correct the description.".into(),
            vec![],
        );
    }
    let destructive = f.operation == Operation::Delete || f.cues.destructive.is_some();
    if destructive && a.destructive != Some(true) && a.read_only != Some(true) {
        c.push(
            Code::A001,
            t,
            None,
            format!(
                "`{name}` deletes or overwrites, but destructiveHint is {}.",
                a.destructive
                    .map_or("not set".to_string(), |v| v.to_string())
            ),
            "Set \"destructiveHint\": true so hosts ask before calling it.".into(),
            vec![],
        );
    }
    if f.operation == Operation::Read && a.read_only.is_none() {
        c.push(
            Code::A002,
            t,
            None,
            format!(
                "`{name}` reads (\"{}\") but declares no readOnlyHint.",
                reading_word(f)
            ),
            "Set \"readOnlyHint\": true.".into(),
            vec![],
        );
    }
    if reads_by_name(f)
        && a.destructive == Some(true)
        && a.read_only != Some(true)
        && !deletes_in_text(f)
    {
        c.push(
            Code::A005,
            t,
            None,
            format!(
                "`{name}` reads (\"{}\") but declares destructiveHint: true.",
                reading_word(f)
            ),
            "Set \"destructiveHint\": false (and \"readOnlyHint\": true if it changes nothing), or rename the tool after what it destroys.".into(),
            vec![],
        );
    }
    if f.operation.is_write() && a.idempotent.is_none() && a.read_only != Some(true) {
        c.push(
            Code::A003,
            t,
            None,
            format!("`{name}` changes state but declares no idempotentHint."),
            "Set \"idempotentHint\" to say whether a repeated call is harmless.".into(),
            vec![],
        );
    }
}

/// The description says the tool deletes or overwrites something (not merely that output is
/// truncated): then a destructive hint on a reading name may be right.
fn deletes_in_text(f: &ToolFacts) -> bool {
    static CELL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    let re = CELL.get_or_init(|| {
        match regex::Regex::new(r"(?i)\b(delete[sd]?|deleting|remove[sd]?|removing|destroy\w*|purge[sd]?|wipe[sd]?|erase[sd]?|overwrit\w+)\b") {
            Ok(re) => re,
            Err(err) => unreachable!("built-in pattern does not compile: {err}"),
        }
    });
    f.cues.destructive.is_some() || re.is_match(&f.clean)
}

/// The name holds a verb that only reads (`find_flaky_tests`, `API-post-search`). Download and
/// export are left out: they read a resource but write a file where the host runs.
fn reads_by_name(f: &ToolFacts) -> bool {
    f.name_tokens.iter().any(|w| {
        text::verb_base(w).is_some_and(|v| {
            Operation::of_word(v) == Operation::Read && !matches!(v, "download" | "export")
        })
    })
}

/// The word that makes a tool a read: the name's reading verb, else the description's opening
/// verb (`git_status` "Shows the working tree status" reads by "shows", not by "git").
fn reading_word(f: &ToolFacts) -> String {
    let reads =
        |w: &String| text::verb_base(w).is_some_and(|v| Operation::of_word(v) == Operation::Read);
    f.name_tokens
        .iter()
        .find(|w| reads(w))
        .or_else(|| f.clean_words.iter().take(2).find(|w| reads(w)))
        .or_else(|| f.name_tokens.first())
        .cloned()
        .unwrap_or_default()
}

/// Budget: the definition's size.
fn check_budget(c: &mut Collector, f: &ToolFacts) {
    let name = f.name.as_str();
    let t = Some(name);
    if f.definition_bytes > 4 * 1024 {
        c.push(
            Code::B003,
            t,
            None,
            format!(
                "`{name}`'s definition is {} bytes (about {} tokens).",
                f.definition_bytes,
                f.definition_bytes.div_ceil(4)
            ),
            "Trim the schema and description; move reference text to documentation.".into(),
            vec![],
        );
    }
}

/// The first sentence that describes the tool itself.
pub(crate) fn first_own_sentence(f: &ToolFacts) -> &str {
    f.sentences
        .iter()
        .find(|s| f.own_text.contains(s.as_str()))
        .map_or("", String::as_str)
}

fn regex_list_values() -> &'static regex::Regex {
    static CELL: std::sync::OnceLock<regex::Regex> = std::sync::OnceLock::new();
    CELL.get_or_init(|| {
        match regex::Regex::new(r#"(?i)\b(one of|possible values|allowed values|valid values|accepted values|must be (either|one))\b|['"`]\w+['"`]\s*(,|/|\|)\s*['"`]\w+['"`]\s*(,|/|\||or)\s*['"`]?\w+|\b\w+\s*\|\s*\w+\s*\|\s*\w+\b"#) {
            Ok(re) => re,
            Err(err) => unreachable!("built-in pattern does not compile: {err}"),
        }
    })
}

/// Runs every check over one side's tools. Findings come out in a fixed order: server-wide
/// first, then per tool in listing order, each in catalogue order.
pub(crate) fn check_all(tools: &[serde_json::Value], facts: &[ToolFacts]) -> Vec<Finding> {
    let mut c = Collector {
        findings: Vec::new(),
    };
    let namespaces = Namespaces::of(facts);

    // Server-wide.
    let n = facts.len();
    if n > 40 {
        c.push(
            Code::B002,
            None,
            None,
            format!("The server lists {n} tools."),
            "Split the server, or expose a smaller set per use.".into(),
            vec![],
        );
    } else if n > 25 {
        c.push(
            Code::B001,
            None,
            None,
            format!("The server lists {n} tools."),
            "Consider grouping or splitting the tools.".into(),
            vec![],
        );
    }
    let total: usize = facts.iter().map(|f| f.definition_bytes).sum();
    if total > 64 * 1024 {
        c.push(
            Code::B004,
            None,
            None,
            format!(
                "All definitions together are {total} bytes (about {} tokens per request).",
                total.div_ceil(4)
            ),
            "Remove unused tools, or trim descriptions and schemas.".into(),
            vec![],
        );
    }
    let mut by_convention: BTreeMap<&'static str, Vec<String>> = BTreeMap::new();
    for f in facts {
        if let Some(conv) = naming_convention(&f.name) {
            by_convention.entry(conv).or_default().push(f.name.clone());
        }
    }
    if by_convention.len() > 1 {
        let majority = by_convention
            .iter()
            .max_by_key(|(_, v)| v.len())
            .map(|(k, _)| *k)
            .unwrap_or("snake_case");
        let summary = by_convention
            .iter()
            .map(|(k, v)| format!("{} {k}", v.len()))
            .collect::<Vec<_>>()
            .join(", ");
        let odd: Vec<String> = by_convention
            .iter()
            .filter(|(k, _)| **k != majority)
            .flat_map(|(_, v)| v.clone())
            .collect();
        c.push(
            Code::N004,
            None,
            None,
            format!("Tool names mix conventions: {summary}."),
            format!(
                "Rename {} to {majority}.",
                odd.iter()
                    .map(|o| format!("`{o}`"))
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
            odd,
        );
    }
    // Repeated notes: sentences of six words or more shared by three or more tools.
    let mut notes: BTreeMap<String, Vec<String>> = BTreeMap::new();
    for f in facts {
        let mut seen = BTreeSet::new();
        for s in &f.sentences {
            let key = text::bare(s);
            if key.split(' ').count() >= 6 && seen.insert(key.clone()) {
                notes.entry(key).or_default().push(f.name.clone());
            }
        }
    }
    let mut boilerplate: BTreeSet<String> = BTreeSet::new();
    for (sentence, owners) in notes {
        if owners.len() >= 3 {
            c.push(
                Code::D013,
                None,
                None,
                format!(
                    "\"{}\" is repeated in {} descriptions.",
                    quote(&sentence, 80),
                    owners.len()
                ),
                "Move the note to the server instructions, or keep it only where it matters."
                    .into(),
                owners,
            );
            boilerplate.insert(sentence);
        }
    }

    // Pairs: near-duplicate names, near-identical and overlapping descriptions, from an index
    // and bounded per tool (see `pairs`). Each pair is judged on its own two tools.
    let mut per_tool: Vec<Vec<Finding>> = vec![Vec::new(); n];
    for (i, f) in super::pairs::pair_findings(facts, &boilerplate, &namespaces) {
        per_tool[i].push(f);
    }

    for ((f, tool), pairs) in facts.iter().zip(tools).zip(per_tool) {
        check_tool(&mut c, f, tool, &namespaces);
        c.findings.extend(pairs);
    }

    // Catalogue order within each tool keeps output stable across rule edits.
    let order = |code: Code| code as usize;
    let tool_order: BTreeMap<&str, usize> = facts
        .iter()
        .enumerate()
        .map(|(i, f)| (f.name.as_str(), i))
        .collect();
    c.findings.sort_by_key(|f| {
        (
            f.tool.as_ref().map_or(0, |t| {
                1 + tool_order
                    .get(t.as_str())
                    .copied()
                    .unwrap_or(usize::MAX - 1)
            }),
            order(f.code),
            f.parameter.clone(),
            f.related.clone(),
        )
    });
    c.findings
}

#[cfg(test)]
mod tests;
