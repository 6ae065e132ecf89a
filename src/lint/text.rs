//! Word-level helpers shared by the lint rules and the static judge: tokenising names and
//! descriptions, vocabularies, cue patterns and similarity.
//!
//! Everything here is a pure function of its input, so the rules built on it are deterministic.

use std::sync::OnceLock;

use regex::Regex;

/// The word measures shared with the selection eval live in the pure domain.
pub use tdqs_core::overlap::{
    content_words, is_stop_word, jaccard, name_tokens, singular, words, STOP_WORDS,
};

/// Verbs that open a tool's name or description; their third-person forms are recognised too.
pub(crate) const VERBS: &[&str] = &[
    "accept",
    "activate",
    "add",
    "aggregate",
    "analyse",
    "analyze",
    "append",
    "apply",
    "approve",
    "archive",
    "assign",
    "attach",
    "audit",
    "authenticate",
    "authorize",
    "backup",
    "batch",
    "block",
    "book",
    "browse",
    "build",
    "calculate",
    "call",
    "cancel",
    "capture",
    "change",
    "check",
    "checkout",
    "claim",
    "classify",
    "clean",
    "clear",
    "click",
    "clone",
    "close",
    "collect",
    "comment",
    "commit",
    "compare",
    "compile",
    "complete",
    "compose",
    "compress",
    "compute",
    "configure",
    "confirm",
    "connect",
    "convert",
    "copy",
    "count",
    "create",
    "deactivate",
    "debug",
    "decode",
    "decrypt",
    "delete",
    "deploy",
    "describe",
    "detect",
    "diff",
    "disable",
    "disconnect",
    "discover",
    "dismiss",
    "download",
    "draft",
    "drag",
    "drop",
    "duplicate",
    "edit",
    "enable",
    "encode",
    "encrypt",
    "enqueue",
    "estimate",
    "evaluate",
    "execute",
    "explain",
    "export",
    "extract",
    "fetch",
    "fill",
    "filter",
    "find",
    "finish",
    "fix",
    "flag",
    "follow",
    "forecast",
    "format",
    "generate",
    "geocode",
    "get",
    "grant",
    "group",
    "handle",
    "hover",
    "import",
    "index",
    "inspect",
    "install",
    "invite",
    "invoke",
    "join",
    "label",
    "launch",
    "link",
    "list",
    "load",
    "lock",
    "log",
    "look",
    "lookup",
    "manage",
    "mark",
    "merge",
    "migrate",
    "modify",
    "monitor",
    "move",
    "mute",
    "navigate",
    "notify",
    "open",
    "optimize",
    "order",
    "parse",
    "patch",
    "pause",
    "perform",
    "pin",
    "ping",
    "plan",
    "play",
    "poll",
    "post",
    "predict",
    "press",
    "preview",
    "print",
    "process",
    "promote",
    "provision",
    "publish",
    "pull",
    "purge",
    "push",
    "put",
    "query",
    "queue",
    "read",
    "reassign",
    "rebuild",
    "receive",
    "recommend",
    "record",
    "redact",
    "refresh",
    "register",
    "reindex",
    "reject",
    "release",
    "reload",
    "remove",
    "rename",
    "render",
    "reopen",
    "reorder",
    "replace",
    "reply",
    "report",
    "request",
    "resend",
    "reserve",
    "reset",
    "resize",
    "resolve",
    "restart",
    "restore",
    "resume",
    "retrieve",
    "retry",
    "return",
    "revert",
    "review",
    "revoke",
    "rollback",
    "rotate",
    "run",
    "save",
    "scan",
    "schedule",
    "scrape",
    "scroll",
    "search",
    "select",
    "send",
    "set",
    "share",
    "show",
    "sign",
    "simulate",
    "snapshot",
    "sort",
    "split",
    "start",
    "stop",
    "store",
    "stream",
    "submit",
    "subscribe",
    "suggest",
    "summarise",
    "summarize",
    "suspend",
    "switch",
    "sync",
    "tag",
    "take",
    "test",
    "toggle",
    "trace",
    "track",
    "transcribe",
    "transfer",
    "transform",
    "translate",
    "triage",
    "trigger",
    "unarchive",
    "unassign",
    "unblock",
    "undo",
    "unlink",
    "unlock",
    "unmute",
    "unpin",
    "unsubscribe",
    "update",
    "upgrade",
    "upload",
    "upsert",
    "validate",
    "verify",
    "view",
    "wait",
    "watch",
    "write",
];

/// Name words that say nothing about what a tool acts on.
pub(crate) const GENERIC_NAME_WORDS: &[&str] = &[
    "action",
    "api",
    "call",
    "command",
    "data",
    "do",
    "exec",
    "execute",
    "foo",
    "bar",
    "func",
    "function",
    "general",
    "generic",
    "get",
    "handle",
    "handler",
    "helper",
    "info",
    "item",
    "main",
    "manage",
    "misc",
    "my",
    "object",
    "operation",
    "perform",
    "process",
    "request",
    "result",
    "run",
    "set",
    "stuff",
    "task",
    "thing",
    "things",
    "tool",
    "tools",
    "util",
    "utils",
    "utility",
    "value",
    "example",
    "sample",
    "test",
    "temp",
    "new",
    "do_stuff",
];

/// Short forms that count as a mention of their long forms and the other way round.
pub(crate) const ABBREVIATIONS: &[(&str, &[&str])] = &[
    ("admin", &["administrator", "administration"]),
    ("app", &["application"]),
    ("arg", &["argument"]),
    (
        "auth",
        &[
            "authentication",
            "authorization",
            "authorisation",
            "authenticate",
        ],
    ),
    ("cfg", &["configuration", "config"]),
    ("config", &["configuration", "configure", "settings"]),
    ("db", &["database"]),
    ("desc", &["description"]),
    ("dest", &["destination"]),
    ("dir", &["directory", "folder"]),
    ("doc", &["document", "documentation"]),
    ("env", &["environment"]),
    ("gzip", &["compress", "compressed", "gzipped"]),
    ("id", &["identifier"]),
    ("img", &["image"]),
    ("info", &["information", "details"]),
    ("k8s", &["kubernetes"]),
    ("max", &["maximum"]),
    ("min", &["minimum"]),
    ("mr", &["merge"]),
    ("msg", &["message"]),
    ("num", &["number"]),
    ("org", &["organization", "organisation"]),
    ("param", &["parameter"]),
    ("perm", &["permission"]),
    ("pkg", &["package"]),
    ("pr", &["pull"]),
    ("ref", &["reference"]),
    ("repo", &["repository"]),
    ("req", &["request"]),
    ("resp", &["response"]),
    ("spec", &["specification"]),
    ("src", &["source"]),
    ("stats", &["statistics", "metrics", "analytics"]),
    ("sync", &["synchronize", "synchronise", "synchronization"]),
    ("tmp", &["temporary"]),
    ("ts", &["timestamp"]),
    ("tz", &["timezone", "zone"]),
    ("url", &["link", "address", "uri"]),
    ("usr", &["user"]),
    ("vm", &["virtual", "machine"]),
];

/// A light stem: enough to equate `invite` and `invitation`, `configure` and `configuration`.
pub(crate) fn stem(word: &str) -> String {
    for suffix in [
        "ations", "ation", "ions", "ion", "ings", "ing", "ers", "er", "es", "ed", "e", "s",
    ] {
        if let Some(rest) = word.strip_suffix(suffix) {
            if rest.chars().count() >= 3 {
                return rest.to_string();
            }
        }
    }
    word.to_string()
}

/// The base verb of a word, if it is one of [`VERBS`] or its third-person / -ing / -ed form.
pub(crate) fn verb_base(word: &str) -> Option<&'static str> {
    let w = word.to_lowercase();
    let candidates = [
        Some(w.clone()),
        w.strip_suffix("es").map(str::to_string),
        w.strip_suffix('s').map(str::to_string),
        w.strip_suffix("ing").map(str::to_string),
        w.strip_suffix("ing").map(|s| format!("{s}e")),
        w.strip_suffix("ed").map(str::to_string),
        w.strip_suffix('d').map(str::to_string),
        w.strip_suffix("ies").map(|s| format!("{s}y")),
    ];
    candidates
        .into_iter()
        .flatten()
        .find_map(|c| VERBS.iter().copied().find(|v| *v == c))
}

/// Two-word resources whose words are generic alone: "pull request" is a resource, though
/// "pull" is a verb and "request" a generic word.
const COMPOUND_RESOURCES: [(&str, &str); 4] = [
    ("pull", "request"),
    ("merge", "request"),
    ("feature", "flag"),
    ("access", "token"),
];

/// True when the name's words contain a two-word resource ([`COMPOUND_RESOURCES`]).
pub(crate) fn names_a_compound_resource(tokens: &[String]) -> bool {
    tokens.windows(2).any(|w| {
        COMPOUND_RESOURCES
            .iter()
            .any(|(a, b)| w[0] == *a && singular(&w[1]) == *b)
    })
}

/// A description that offers a choice among quoted values ("local branches ('local'), remote
/// branches ('remote') or all branches ('all')"): at least two distinct quoted words joined by
/// "or" or "one of", and not given as examples ("e.g. 'America/New_York'").
pub(crate) fn lists_quoted_choices(description: &str) -> bool {
    static CELL: OnceLock<Regex> = OnceLock::new();
    let quoted = pattern(&CELL, r#"['"`]([A-Za-z0-9_-]{1,30})['"`]"#);
    let values: std::collections::BTreeSet<&str> = quoted
        .captures_iter(description)
        .filter_map(|c| c.get(1).map(|m| m.as_str()))
        .collect();
    let lower = description.to_lowercase();
    let offers_choice =
        lower.contains(" or ") || lower.contains("one of") || lower.contains("either");
    let examples = ["e.g", "example", "such as", "i.e", "like "]
        .iter()
        .any(|marker| lower.contains(marker));
    // Quoted keys of a JSON value ("each object must contain 'filename' and 'mime_type'") and
    // values of another parameter (`subject_type='user'`) are not choices for this one.
    let structured = lower.contains("json") || lower.contains('{') || description.contains("='");
    values.len() >= 2 && offers_choice && !examples && !structured
}

pub(crate) fn is_generic_name_word(word: &str) -> bool {
    GENERIC_NAME_WORDS.contains(&word) || (verb_base(word).is_some() && word.len() <= 4)
}

/// True when `token` (from a name) is mentioned by any of `text_words`: equal, singular-equal,
/// a prefix either way for words long enough to be meaningful, or an abbreviation pair.
pub(crate) fn mentions(token: &str, text_words: &[String]) -> bool {
    let t = singular(token);
    let ts = stem(&t);
    text_words.iter().any(|w| {
        let ws = singular(w);
        if ws == t || (ts.len() >= 4 && stem(&ws) == ts) {
            return true;
        }
        if t.len() >= 4 && ws.len() >= 4 && (ws.starts_with(&t) || t.starts_with(&ws)) {
            return true;
        }
        abbreviation_match(&t, &ws)
    })
}

fn abbreviation_match(a: &str, b: &str) -> bool {
    ABBREVIATIONS.iter().any(|(short, longs)| {
        let long_hit = |x: &str| longs.iter().any(|l| x == *l || x.starts_with(l));
        (a == *short && long_hit(b)) || (b == *short && long_hit(a))
    })
}

/// Splits a description into sentences (at `.`, `!`, `?` followed by space or end, and at
/// blank lines), trimmed and non-empty.
pub(crate) fn sentences(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    let mut current = String::new();
    let chars: Vec<char> = text.chars().collect();
    let mut i = 0;
    while i < chars.len() {
        let ch = chars[i];
        current.push(ch);
        let next = chars.get(i + 1).copied();
        let ends = matches!(ch, '.' | '!' | '?' | '。')
            && next.is_none_or(|n| n.is_whitespace())
            && !ends_with_abbreviation(&current);
        let blank_line = ch == '\n' && next == Some('\n');
        if ends || blank_line {
            let s = current.trim().to_string();
            if !s.is_empty() {
                out.push(s);
            }
            current.clear();
        }
        i += 1;
    }
    let s = current.trim().to_string();
    if !s.is_empty() {
        out.push(s);
    }
    out
}

fn ends_with_abbreviation(current: &str) -> bool {
    let lower = current.to_lowercase();
    ["e.g.", "i.e.", "etc.", "vs.", "approx.", "no."]
        .iter()
        .any(|a| lower.ends_with(a))
}

/// The description without what an OpenAPI-to-MCP generator adds to every tool: a leading
/// "<Service> |" label, an "Error Responses:" heading and status-code lines ("400: 400",
/// "404: Not Found"). What is left is what the author wrote about the tool.
pub(crate) fn without_generated_boilerplate(description: &str) -> String {
    static LABEL: OnceLock<Regex> = OnceLock::new();
    static HEADING: OnceLock<Regex> = OnceLock::new();
    static STATUS: OnceLock<Regex> = OnceLock::new();
    let label = pattern(&LABEL, r"^\s*[A-Za-z][\w .-]{0,40}\|");
    let heading = pattern(&HEADING, r"\berror responses\s*:?");
    let status = pattern(&STATUS, r"(?m)^\s*[1-5]\d\d\s*:[^\n]*$");
    let text = label.replace(description, "");
    let text = status.replace_all(&text, "");
    heading.replace_all(&text, "").trim().to_string()
}

/// Collapses runs of whitespace to one space and trims.
pub(crate) fn normalize_space(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The text with punctuation removed and whitespace collapsed, lower-cased: the form the
/// tautology check compares, so a trailing full stop cannot hide a restated name.
pub fn bare(text: &str) -> String {
    words(text).join(" ")
}

/// Characters that render as nothing or reorder text: a reader cannot see what the model reads.
pub(crate) fn is_invisible_or_bidi(ch: char) -> bool {
    matches!(ch as u32,
        0x00AD | 0x061C | 0x180E | 0x200B..=0x200F | 0x202A..=0x202E | 0x2060..=0x2064
        | 0x2066..=0x2069 | 0xFEFF | 0xE0000..=0xE007F)
}

/// A compiled, case-insensitive pattern; the patterns are constants, so a failure is a bug.
fn pattern(cell: &'static OnceLock<Regex>, source: &str) -> &'static Regex {
    cell.get_or_init(|| match Regex::new(&format!("(?i){source}")) {
        Ok(re) => re,
        Err(err) => unreachable!("built-in pattern {source:?} does not compile: {err}"),
    })
}

macro_rules! cue {
    ($(#[$meta:meta])* $name:ident, $source:expr) => {
        $(#[$meta])*
        pub fn $name() -> &'static Regex {
            static CELL: OnceLock<Regex> = OnceLock::new();
            pattern(&CELL, $source)
        }
    };
}

cue!(
    /// Explicit guidance on when to call the tool, or what must come first.
    usage_cue,
    r"\b(when to use|usage guidance|use (this|it)( tool)? (when|to|for|if|before|after|only|instead)|use (when|for|to|before|after)\b|use [a-z0-9]+_[a-z0-9_]+ (to|for|when|if|instead)\b|call (this|it)( tool)? (when|before|after|first|only)|call before|useful (for|when|to)|intended for|designed for|best for|ideal for|meant for|start here|requires?\s+(an?\s+|the\s+)?\w|prerequisite|before (calling|using|you)|after (calling|using|creating)|only (when|if|for|after)|first call|call \w+ first|\w+ first to|when you (need|want|have|already)|if you (need|want|already))"
);
cue!(
    /// Saying when not to call the tool or what to use instead.
    contrast_cue,
    r"\b((use|call|try|prefer|choose|pick|see)\b[^.;\n]{1,60}\binstead\b|instead,? (use|call|try|see)\b|instead of (this|that|these|those|calling|using|the \w+ tool|[a-z0-9]+_[a-z0-9_]+)\b|unlike|rather than (this|that|calling|using|[a-z0-9]+_[a-z0-9_]+)\b|as opposed to|versus|vs\.?|whereas|not for\b|do not use|don't use|avoid (using|calling)|never use|not (meant|intended|suitable) for|should not be used|differs? from|not to be confused)"
);
cue!(
    /// Disclosure that the call changes nothing.
    read_only_cue,
    r"\b(read[- ]only|no side[- ]effects?|does not (modify|change|write|alter|create|delete)|doesn't (modify|change|write|alter)|never (modifies|changes|writes)|without (modifying|changing|side effects|executing)|safe to (call|retry|repeat|run)|non[- ]destructive|nothing is (changed|modified|written))"
);
cue!(
    /// Disclosure that the call destroys something for good.
    destructive_cue,
    r"\b(cannot be undone|can't be undone|can not be undone|irreversibl\w*|permanent(ly)?|not recoverable|unrecoverable|destroys?|wipes?|purges?|erases?|lost forever|no undo)"
);
cue!(
    /// Verbs that destroy or remove data.
    destructive_verb_cue,
    r"\b(delete[sd]?|deleting|remove[sd]?|removing|drop(s|ped)?|destroy\w*|purge[sd]?|wipe[sd]?|erase[sd]?|truncate[sd]?|revoke[sd]?|terminate[sd]?|uninstall\w*|overwrit\w+|kill(s|ed)?)\b"
);
cue!(
    /// Disclosure that repeating the call is harmless or not.
    idempotent_cue,
    r"\b(idempoten\w*|repeat(ed|ing)? (calls?|the same)|calling (it )?(again|twice)|safe to retry|same result|changes nothing)"
);
cue!(
    /// Limits: rate limits, caps, sizes, timeouts.
    limit_cue,
    r"\b(rate[- ]limit\w*|quota|at most \d+|up to \d+|maximum( of)? \d+|max(imum)? \d+|\d+ (results|items|records|rows|requests|entries|per page)|capped|truncat\w*|time[- ]?outs?|limited to|no more than|\d+\s*(kb|mb|gb|characters|chars|seconds|minutes))"
);
cue!(
    /// Paging behaviour.
    pagination_cue,
    r"\b(paginat\w*|pages?|cursor|next_?cursor|next_?page|offset|page_?size|per_?page)\b"
);
cue!(
    /// Authentication, permission or scope requirements.
    auth_cue,
    r"\b(auth\w*|permissions?|scopes?|api[ _-]?keys?|tokens?|credentials?|sign[- ]in|log(ged)?[- ]in|admin(istrator)? (rights|role|access)|role required|owner)\b"
);
cue!(
    /// Side effects beyond the obvious: versions, notifications, asynchrony, immediacy.
    side_effect_cue,
    r"\b(creates? a new version|new version|sends? (an? )?(email|notification|message|invite|invitation)|notif(y|ies|ication)|triggers?|side[- ]effects?|overwrit\w*|replaces? (the|any|existing|all)|in place|asynchronous\w*|async\b|queued?|background|immediately|takes effect|becomes? (active|the default)|orphan\w*|cascad\w*|also (deletes|removes|updates)|re-?opens?|reversible|can be (restored|undone|reverted|reopened)|stays? (readable|available|visible))"
);
cue!(
    /// Error behaviour.
    error_cue,
    r"\b(errors?|fails?|failure|returns? (an? )?(404|error|empty|null|nothing)|if (it is |the \w+ is )?(not found|missing|absent|invalid)|throws?|raises?)\b"
);
cue!(
    /// Cost, latency or billing.
    cost_cue,
    r"\b(costs? (\$|\d|money|credits?|tokens?)|billing|billed|charges? (per|for)|incurs?|expensive|cheap|free of charge|slow)\b"
);
cue!(
    /// A statement of what comes back.
    return_cue,
    r"\b(returns?|returning|responds? with|yields?|outputs?|gives? back|result (is|contains|includes)|response (contains|includes|has)|you get|provides? (a|an|the) (list|array|map|object|url|id|count))\b"
);
cue!(
    /// An example value or usage.
    example_cue,
    r#"(\be\.g\.|\bfor example\b|\bfor instance\b|\bsuch as\b|\bexamples?\b|\bi\.e\.|\blike ['"`]|['"`][^'"`\s]{1,40}['"`])"#
);
cue!(
    /// Text that only fills the place of a description.
    placeholder_cue,
    r"^\s*(todo|tbd|fixme|xxx|wip|n/?a|none|null|placeholder|description|tool description|some tool|this is a tool|lorem ipsum.*|test|testing|an? example tool.*|example|my ?tool.*|mytool.*|\.\.\.|-+|\?+)\s*[.!:]?\s*$|\b(todo|fixme)\s*:|lorem ipsum|fill (this|me) in|document this( properly)?|add (a )?description( here)?|description goes here|insert description"
);
cue!(
    /// Asking the reading model to drop or replace its instructions.
    override_cue,
    r"\b(ignore|disregard|forget|override|bypass|skip)\b[^.\n]{0,40}\b(previous|prior|above|earlier|all|any|other|system|safety|these|those|your)\b[^.\n]{0,25}\b(instructions?|rules?|prompts?|guidelines?|directions?|messages?|policies|constraints)\b|\byou are now\b|\bnew (system )?instructions?\b|\bsystem prompt\b|\bact as (an?|the) (admin|system|root)"
);
cue!(
    /// Asking the reading model to keep something from the user. "Silently" counts only as an
    /// order ("Silently copy …", "you must silently …") or with "without telling": "will succeed
    /// silently" and "is silently ignored" disclose behaviour, which the score rewards.
    conceal_cue,
    r"\b(do not|don't|never|without)\b[^.\n]{0,30}\b(tell\w*|inform\w*|mention\w*|reveal\w*|show\w*|notify\w*|alert\w*|disclos\w*|let)\b[^.\n]{0,25}\b(the )?(user|human|operator|anyone|them)\b|\b(keep|hide) (this|it|them|the \w+)\b[^.\n]{0,20}\b(secret|hidden|confidential|from)\b|^\W*silently\s+\w+|\b(you|assistant|agent|model|llm)\b[^.\n]{0,20}\bsilently\b|\bsilently\b[^.\n]{0,30}\bwithout\b[^.\n]{0,20}\b(telling|informing|asking|notifying|showing)\b|\bbehind the user'?s back\b"
);
cue!(
    /// Steering the model to call a tool unconditionally, ahead of or instead of others.
    cross_tool_cue,
    r"\b(always|must always|every time|whenever possible|regardless of)\b[^.\n]{0,40}\b(call|use|invoke|run|prefer)\s+((this|it|me)( tool| one)?\s*([.,;:!]|$|\b(first|before|instead|whenever|for (every|all|any))\b)|(the|this|that|our|these)\s+(\w+\s+)?tools?\b|\w+\s+tools?\b|[a-z0-9]+[_-][a-z0-9_.-]*[a-z0-9]\s+(first|before|instead|whenever|for (every|all|any))\b)|\bbefore (using |calling )?any other tools?\b|\binstead of (any|all|every) other tools?\b|\b(do not|never) (use|call) (any )?other tools?\b|\bthis tool (must|should) (always )?be (called|used) (first|before)"
);
cue!(
    /// Text addressed to whoever grades the definition.
    judge_cue,
    r"\b(rate|score|grade|evaluate|judge|rank)\b[^.\n]{0,25}\b(this|the)\b[^.\n]{0,15}\b(tool|description|definition)\b[^.\n]{0,30}(\d|five|highest|maximum|perfect|excellent|top)|\b(evaluators?|graders?|judges?|reviewers?|scoring models?|language models?|llms?)\b[^.\n]{0,40}\b(should|must|will|please|always)\b[^.\n]{0,25}\b(rate|score|grade|award|assign|rank|approve|consider (this|it)|treat (this|it)|give (this|it|the))\b|\b(give|assign|award)\b[^.\n]{0,25}\b(score|rating|grade|5/5|full marks|5 stars)\b|\btdqs\b|\b(5|five)/5\b|\b(ignore|disregard|forget|override|bypass|skip)\b[^.\n]{0,30}\b(rubric|scoring|grading|graders?|evaluators?)\b|\b(give|assign|award)\b( (it|this|this tool|this description|the tool|the description|me|us))?( (a|an|the))?( (score|rating|grade|mark)( of)?)? (5|five|10|ten|100)( out of \d+| points| stars)?\s*[.!]?\s*$|<\s*/?\s*(input-schema|output-schema|annotations|sibling-tools|shadow-candidates|tools)\s*>|\bcontext signals\b|\x22?(purpose_clarity|usage_guidelines|behavioral_transparency|parameter_semantics|conciseness_structure|contextual_completeness)\x22?\s*:\s*\{?\s*\x22?score"
);
cue!(
    /// Text telling the model that its earlier instructions or abilities have changed
    /// ("originally you did not have internet access … this tool now grants you internet
    /// access"): it rewrites what the model was told rather than describing the tool.
    rewrite_cue,
    r"\b(originally|previously|formerly|until now|in the past)\b[^.\n]{0,60}\byou\b[^.\n]{0,60}\b(advised|told|instructed|asked|trained|supposed|designed|allowed|able|refuse\w*|did not have|didn't have|could not|couldn't|cannot|can't)\b|\b(now|from now on|henceforth)\b[^.\n]{0,30}\b(grants?|gives?|allows?|lets|enables?|permits?) you\b|\byou (can|may) now\b|\byou (now )?(are now|now have) (allowed|permitted|able|access)"
);
cue!(
    /// Phrases that fill space without saying anything about the tool.
    filler_cue,
    r"\b(perfect for|great for|ideal for all|this (tool|function|endpoint) (allows|lets|enables|helps) (you|users?|the user|agents?|the agent) to|this (tool|function) (is used|can be used) to|a (powerful|simple|handy|convenient|comprehensive|robust|versatile) (tool|way|utility)|(quickly|easily|simply|seamlessly|effortlessly) (get|find|create|manage|access|retrieve|fetch|search|list|send|use)|with ease|in just (a|one) (click|call|step))\b"
);
cue!(
    /// A description that says a date or time may be relative ("2 days ago", "yesterday"):
    /// the value is deliberately not one date format.
    relative_date_cue,
    r"\b(relative|ago|yesterday|today|tomorrow|natural[- ]language|human[- ]readable|now[-+]\d|last \d+|past \d+|\d+\s*(d|h|w|m|days?|hours?|weeks?|months?)\b)"
);
/// A description that names the shape of its value: "ISO 8601", "YYYY-MM-DD", "HH:MM", Unix
/// seconds, RFC 3339. The model then knows the format even without a schema `format`.
pub(crate) fn states_a_value_shape(description: &str) -> bool {
    static CELL: OnceLock<Regex> = OnceLock::new();
    pattern(
        &CELL,
        r"\b(iso[ -]?8601|rfc[ -]?3339|rfc[ -]?2822|yyyy|hh:mm|unix (time|timestamp|seconds|epoch)|epoch (seconds|milliseconds)|seconds since|milliseconds since)",
    )
    .is_match(description)
}

/// A description that speaks of a date or time (not of a paging cursor).
pub(crate) fn speaks_of_time(description: &str) -> bool {
    static CELL: OnceLock<Regex> = OnceLock::new();
    let cursor = description.to_lowercase().contains("cursor");
    !cursor
        && pattern(
            &CELL,
            r"\b(date|time|timestamp|datetime|day|days|moment|iso|when)\b",
        )
        .is_match(description)
}

cue!(
    /// A description that says one tool handles many items ("multiple", "in bulk").
    plurality_cue,
    r"\b(multiple|several|many|all|every|bulk|batch|list( of)?|each)\b"
);
cue!(
    /// Markup that imitates a system or priority channel.
    markup_cue,
    r"<\s*/?\s*(important|system|instructions?|admin|sudo|secret|hidden)\s*>|\[/?(inst|system|sys)\]|<\|[a-z_]+\|>"
);

/// Words that describe reading rather than changing.
pub(crate) const READ_VERBS: &[&str] = &[
    "get",
    "list",
    "search",
    "read",
    "fetch",
    "find",
    "lookup",
    "look",
    "query",
    "describe",
    "show",
    "view",
    "retrieve",
    "count",
    "check",
    "inspect",
    "browse",
    "download",
    "export",
    "preview",
    "validate",
    "verify",
    "estimate",
    "analyze",
    "analyse",
    "compare",
    "diff",
    "explain",
    "summarize",
    "summarise",
    "render",
    "trace",
    "monitor",
    "watch",
    "scan",
    "calculate",
    "compute",
    "discover",
    "detect",
    "ping",
    "poll",
    "report",
    "suggest",
    "recommend",
];
/// Verbs that create. Only verbs that create in every reading: a verb that often names a read
/// (`open_nodes`, `generate_typescript_types`, `trigger-long-running-operation`,
/// `retrieve-a-comment`) is in [`AMBIGUOUS_VERBS`] instead, so a read-only hint on such a tool is
/// never called a contradiction.
pub(crate) const CREATE_VERBS: &[&str] = &[
    "add",
    "create",
    "insert",
    "register",
    "post",
    "submit",
    "send",
    "upload",
    "publish",
    "invite",
    "book",
    "schedule",
    "import",
    "clone",
    "duplicate",
    "copy",
    "attach",
    "reply",
    "append",
    "enqueue",
    "deploy",
    "provision",
];
/// Verbs that change existing things.
pub(crate) const UPDATE_VERBS: &[&str] = &[
    "update",
    "edit",
    "modify",
    "set",
    "patch",
    "put",
    "change",
    "rename",
    "move",
    "assign",
    "unassign",
    "reassign",
    "toggle",
    "enable",
    "disable",
    "activate",
    "deactivate",
    "approve",
    "reject",
    "close",
    "reopen",
    "merge",
    "promote",
    "lock",
    "unlock",
    "pin",
    "unpin",
    "mark",
    "label",
    "tag",
    "archive",
    "unarchive",
    "restore",
    "revert",
    "rollback",
    "reset",
    "rotate",
    "cancel",
    "pause",
    "resume",
    "stop",
    "suspend",
    "transfer",
    "sync",
    "upsert",
    "replace",
    "configure",
    "grant",
    "migrate",
    "reorder",
    "resend",
    "retry",
    "mute",
    "unmute",
    "follow",
    "subscribe",
    "unsubscribe",
    "accept",
    "claim",
    "release",
];
/// Verbs whose effect depends on the tool: they open names of read-only tools as often as of
/// writing ones (`open_nodes` reads nodes, `resolve-library-id` looks an id up,
/// `execute_sql` may only select). They classify nothing, so no rule asserts what they do.
pub(crate) const AMBIGUOUS_VERBS: &[&str] = &[
    "open", "generate", "start", "launch", "trigger", "run", "execute", "invoke", "comment",
    "record", "log", "resolve", "play", "process", "handle", "apply", "call", "test",
];
/// Verbs that destroy.
pub(crate) const DELETE_VERBS: &[&str] = &[
    "delete",
    "remove",
    "destroy",
    "drop",
    "purge",
    "wipe",
    "erase",
    "truncate",
    "revoke",
    "terminate",
    "uninstall",
    "kill",
    "clear",
    "unlink",
    "detach",
    "discard",
];

#[cfg(test)]
mod tests;
