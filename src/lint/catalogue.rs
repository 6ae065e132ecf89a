//! The rule catalogue: every rule's code, slug, family, severity and help, and the finding a
//! check reports.
//!
//! Codes are stable: `TDQS-<family letter><number>`. A code is never reused for a different
//! check; a retired check keeps its number reserved. Every finding carries a suggestion.

use serde::{Deserialize, Serialize};

/// How serious a finding is. Ordered: `Info < Warning < Error`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Severity {
    Info,
    Warning,
    Error,
}

impl Severity {
    pub fn as_str(self) -> &'static str {
        match self {
            Severity::Info => "info",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }

    /// The SARIF `level` of this severity.
    pub fn sarif_level(self) -> &'static str {
        match self {
            Severity::Info => "note",
            Severity::Warning => "warning",
            Severity::Error => "error",
        }
    }
}

/// The rule families.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Family {
    Description,
    Naming,
    Parameters,
    Annotations,
    Budget,
    ModelDirected,
}

impl Family {
    pub fn label(self) -> &'static str {
        match self {
            Family::Description => "description",
            Family::Naming => "naming",
            Family::Parameters => "parameters",
            Family::Annotations => "annotations",
            Family::Budget => "budget",
            Family::ModelDirected => "model-directed text",
        }
    }
}

/// One rule of the catalogue.
#[derive(Debug, Clone, Copy)]
pub struct Rule {
    pub code: Code,
    pub slug: &'static str,
    pub family: Family,
    pub severity: Severity,
    /// One line: what the rule checks.
    pub title: &'static str,
    /// Why it matters and how to fix it (SARIF help text).
    pub help: &'static str,
}

/// A rule's code (`TDQS-D001` is [`Code::D001`]). Codes are compared as values, never as text;
/// the text form exists for output and for `[lint.rules]` keys.
macro_rules! rules {
    ($( $code:ident $slug:literal $family:ident $sev:ident $title:literal $help:literal ;)*) => {
        /// Every rule's code, in catalogue order.
        #[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash)]
        pub enum Code {
            $( $code, )*
        }

        impl Code {
            /// The published form, `TDQS-D001`.
            pub const fn as_str(self) -> &'static str {
                match self {
                    $( Code::$code => concat!("TDQS-", stringify!($code)), )*
                }
            }
        }

        /// Every rule, in code order (the order of [`Code`]).
        pub const RULES: &[Rule] = &[
            $( Rule { code: Code::$code, slug: $slug, family: Family::$family, severity: Severity::$sev, title: $title, help: $help }, )*
        ];
    };
}

impl Code {
    /// The code of a published form (`TDQS-D001`), if the catalogue has it.
    pub fn parse(text: &str) -> Option<Code> {
        RULES.iter().map(|r| r.code).find(|c| c.as_str() == text)
    }

    /// This code's rule.
    pub fn rule(self) -> &'static Rule {
        &RULES[self as usize]
    }

    /// The codes a selection names, as `--select` / `--ignore` take it: a whole code
    /// (`TDQS-D007`, `D007`) or a prefix of one (`D` for a family, `D00` for a group), in any
    /// case. Empty when it names none, including text that is not a code's form at all.
    pub fn matching(selection: &str) -> Vec<Code> {
        let upper = selection.trim().to_ascii_uppercase();
        let short = upper.strip_prefix("TDQS-").unwrap_or(&upper);
        let mut chars = short.chars();
        let well_formed = chars.next().is_some_and(|c| c.is_ascii_uppercase())
            && chars.all(|c| c.is_ascii_digit())
            && short.len() <= 4;
        if !well_formed {
            return Vec::new();
        }
        RULES
            .iter()
            .map(|r| r.code)
            .filter(|c| c.as_str()["TDQS-".len()..].starts_with(short))
            .collect()
    }
}

impl std::fmt::Display for Code {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

impl Serialize for Code {
    fn serialize<S: serde::Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Code {
    fn deserialize<D: serde::Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let text = String::deserialize(deserializer)?;
        Code::parse(&text)
            .ok_or_else(|| serde::de::Error::custom(format!("unknown lint code {text:?}")))
    }
}

rules! {
    D001 "missing-description" Description Error
        "The tool has no description."
        "A model chooses tools by their descriptions; a tool without one is chosen by its name alone, or never. Write one or two sentences: what it does, to what, and when to use it.";
    D002 "description-too-short" Description Warning
        "The description has fewer than six words."
        "A few words rarely say what the tool acts on, when to use it and what it returns. Say the verb and resource, then when to call it.";
    D003 "description-restates-name" Description Warning
        "The description only repeats the tool's name or title."
        "A restated name adds nothing the model did not already have (TDQS caps purpose clarity at 2 for it). Say what the tool does that its name cannot.";
    D004 "placeholder-description" Description Error
        "The description is placeholder text (TODO, lorem ipsum, 'tool description')."
        "Placeholder text is read as the tool's purpose. Replace it with a real description before release.";
    D005 "near-identical-description" Description Error
        "Two tools have near-identical descriptions."
        "When two descriptions share most of their words the model cannot tell the tools apart and picks either. Open each with what only that tool handles.";
    D006 "overlap-without-guidance" Description Warning
        "Two tools overlap and neither says which to prefer."
        "Overlapping tools need a sentence that draws the line ('for X use other_tool'), or the model guesses between them.";
    D007 "no-usage-guidance" Description Warning
        "The description never says when to use the tool."
        "Usage guidelines are a fifth of TDQS. Add 'Use this when …' and, where a sibling is close, 'for … use other_tool instead'.";
    D008 "no-return-information" Description Info
        "Neither an output schema nor the description says what comes back."
        "Without knowing the result the model cannot plan the next step. Add an outputSchema with described fields, or a 'Returns …' sentence.";
    D009 "description-too-long" Description Info
        "The description is longer than 400 words."
        "Every word is paid for in context on every request and buries the key point. Keep the first sentence for the purpose and move reference material out.";
    D010 "name-subject-not-described" Description Warning
        "A word the name promises never appears in the description."
        "A name word the description ignores leaves the model unsure what the tool acts on. Mention it, or rename the tool.";
    D011 "no-constraints-or-side-effects" Description Info
        "No annotations and no word on limits, side effects, permissions or cost."
        "Agents need to know what a call does to the world. Add annotations and a sentence on side effects, limits or required permissions.";
    D012 "no-example" Description Info
        "Neither the description nor any parameter gives an example."
        "One concrete value (an id format, a query) removes most argument mistakes.";
    D013 "repeated-note" Description Info
        "The same sentence is repeated in three or more descriptions."
        "A note pasted into many descriptions costs context on every request and makes the tools look alike. Put it in the server instructions or keep it where it matters.";
    D014 "filler-phrase" Description Info
        "The description spends words on filler ('Perfect for …', 'This tool allows you to …')."
        "Filler costs context on every request and says nothing a model can choose by. Start with the verb and the resource.";
    N001 "near-duplicate-names" Naming Error
        "Two tool names reduce to the same words."
        "Names such as get_user/getUser or ticket/ticket2 cannot be told apart. Keep one, or name what differs.";
    N002 "generic-name" Naming Warning
        "The name is made only of generic words."
        "Names such as run, get_data or do_stuff say nothing about the resource. Name the action and the thing acted on.";
    N003 "invalid-name-characters" Naming Error
        "The name has characters outside A–Z, a–z, 0–9, '_', '-', '.' or is longer than 128 characters."
        "MCP tool names are limited to those characters, and clients reject or rewrite other names.";
    N004 "mixed-naming-conventions" Naming Warning
        "Tool names mix conventions (snake_case, camelCase, kebab-case, …)."
        "Consistent names let the model predict a tool's name; mixed ones look like different servers. Pick one convention.";
    N005 "name-too-long" Naming Warning
        "The name is longer than 64 characters."
        "Several clients truncate or refuse function names over 64 characters. Shorten it.";
    N006 "single-word-name" Naming Info
        "The whole name is one bare verb or generic word (fetch, search, query)."
        "A one-word name says nothing of the resource and collides with other servers' tools in a host. Name what it acts on (fetch_url, search_issues).";
    P001 "parameter-without-description" Parameters Warning
        "A parameter has no description."
        "Without a description the model guesses the value's meaning and format from the name alone. Say what it is, its format and where to get it.";
    P002 "parameter-restates-name" Parameters Info
        "A parameter's description only repeats its name."
        "'user_id: the user id' adds nothing. Say the format, the source (which tool returns it) or the allowed values.";
    P003 "string-should-be-enum" Parameters Info
        "A free string's description lists its allowed values, but the schema has no enum."
        "Values listed in prose are not enforced or offered to the model as choices. Put them in an enum.";
    P004 "missing-format" Parameters Warning
        "A date, time, email, URL or UUID parameter has no format or pattern."
        "Models write dates and identifiers in many shapes. Declare format (date-time, date, email, uri, uuid) or a pattern.";
    P005 "untyped-parameter" Parameters Warning
        "A parameter has no type."
        "An untyped parameter accepts anything, so neither the client nor the model knows what to send. Declare its type.";
    P006 "no-example-values" Parameters Info
        "A free string parameter has no example, default, enum, pattern or format."
        "One example value shows the expected shape. Add examples, a default or an example in the description.";
    P007 "no-required-list" Parameters Info
        "The input schema has parameters but no required list."
        "Without 'required' every parameter is optional, so the model may omit the ones the tool needs.";
    P008 "vague-boolean" Parameters Info
        "A boolean parameter does not say what true means."
        "Say what happens when the flag is true and what the default is.";
    P009 "untyped-object" Parameters Warning
        "An object parameter declares no properties."
        "An object with no shape leaves the model to invent keys. Declare its properties (or typed additionalProperties).";
    P010 "parameters-not-explained" Parameters Info
        "The tool takes three or more parameters, some undocumented, and the description mentions none."
        "When the schema does not explain the parameters the description must. Describe the parameters, in the schema or in prose.";
    P011 "invalid-input-schema" Parameters Error
        "The input schema is missing or is not an object schema."
        "MCP requires an object inputSchema; clients refuse or mangle other shapes.";
    P012 "unknown-schema-type" Parameters Error
        "A schema names a type JSON Schema does not have ('strin', 'int', 'dict')."
        "Validators reject the schema or accept anything for that value, and the model cannot tell which type to send. Use string, number, integer, boolean, object, array or null.";
    P013 "required-not-declared" Parameters Error
        "A required name is absent from the object's properties."
        "The model never sees the parameter it must send, so every call fails validation. Declare it in properties, or drop it from required.";
    P014 "schema-violates-its-draft" Parameters Error
        "The input schema does not validate against its JSON Schema draft."
        "Clients that compile the schema refuse the tool or ignore the broken keyword. Fix the keyword the validator names.";
    P015 "unstated-schema-limit" Parameters Info
        "A required parameter's limit (pattern, maximum, maxLength, …) is stated by no text."
        "Several clients drop these keywords before the model sees them, so the model learns the limit only from a failed call. Say it in the description ('1–100', 'like WEB-12').";
    A001 "destructive-without-hint" Annotations Warning
        "The tool deletes or overwrites, but destructiveHint is not true."
        "Hosts ask for confirmation on destructive tools only when the hint says so. Set destructiveHint: true.";
    A002 "read-without-read-only-hint" Annotations Warning
        "The tool reads, but declares no readOnlyHint."
        "Hosts can run read-only tools without asking; without the hint every call may prompt the user. Set readOnlyHint: true.";
    A003 "write-without-idempotent-hint" Annotations Info
        "The tool changes state, but declares no idempotentHint."
        "Whether a retry is safe decides what an agent does after a timeout. Set idempotentHint.";
    A004 "description-contradicts-annotations" Annotations Error
        "The description contradicts the annotations."
        "A read-only hint on a tool that writes (or a non-destructive hint on one that deletes) misleads hosts and models; TDQS scores behavioural transparency 1 for it. Make them agree.";
    A005 "read-marked-destructive" Annotations Warning
        "A tool whose name reads (get, list, find, search, …) declares destructiveHint: true."
        "Hosts ask for confirmation before a destructive tool, so a read marked destructive interrupts the user for nothing, or the name hides what it really does. Make the name and the hint agree.";
    B001 "many-tools" Budget Info
        "The server lists more than 25 tools."
        "Beyond about 25 tools models start to confuse them. Consider splitting or grouping.";
    B002 "too-many-tools" Budget Warning
        "The server lists more than 40 tools."
        "Beyond about 40 tools selection accuracy falls and every request carries all definitions. Split the server or expose subsets.";
    B003 "definition-too-large" Budget Warning
        "One tool definition is larger than 4 KiB."
        "A large definition costs about a quarter of its bytes in tokens on every request. Trim the schema and move reference text out.";
    B004 "tool-set-too-large" Budget Warning
        "All definitions together are larger than 64 KiB."
        "The whole tools/list is sent with every request. Remove unused tools or trim descriptions and schemas.";
    M001 "instruction-override" ModelDirected Error
        "Text asks the model to ignore or replace its instructions."
        "A definition that rewrites the model's instructions is prompt injection, whatever the intent. Describe the tool instead.";
    M002 "conceal-from-user" ModelDirected Error
        "Text asks the model to hide something from the user."
        "Asking the model to keep actions from the user is a hallmark of tool poisoning. Remove it.";
    M003 "unconditional-tool-directive" ModelDirected Warning
        "Text tells the model to always call a tool, first or instead of others."
        "Unconditional directives hijack tool selection. Say when the tool helps instead ('use this when …').";
    M004 "invisible-characters" ModelDirected Error
        "Text contains invisible or bidirectional Unicode characters."
        "Zero-width and bidirectional control characters hide text from reviewers that models still read. Remove them.";
    M005 "addresses-the-judge" ModelDirected Error
        "Text addresses whoever grades or reviews the definition."
        "A definition that asks for a score games quality gates and never helps an agent. It lowers the static judge's score; remove it.";
    M006 "privileged-markup" ModelDirected Warning
        "Text imitates a system or priority channel (<IMPORTANT>, <system>, [INST])."
        "Markup that imitates instruction channels is a common injection carrier. Use plain sentences.";
    M007 "instructions-changed" ModelDirected Warning
        "Text tells the model that its earlier instructions or abilities have changed."
        "'Originally you were told to refuse …; this tool now grants you …' rewrites the model's instructions from inside a tool definition, the shape of prompt injection. Say what the tool does; the host grants abilities.";
}

/// One finding.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Finding {
    pub code: Code,
    pub slug: String,
    pub severity: Severity,
    /// The tool, or none for a server-wide finding.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub tool: Option<String>,
    #[serde(skip_serializing_if = "Option::is_none")]
    pub parameter: Option<String>,
    pub message: String,
    pub suggestion: String,
    /// Other tools involved (the sibling of a pair, the tools sharing a note).
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub related: Vec<String>,
}

pub(crate) struct Collector {
    pub(crate) findings: Vec<Finding>,
}

impl Collector {
    pub(crate) fn push(
        &mut self,
        code: Code,
        tool: Option<&str>,
        parameter: Option<&str>,
        message: String,
        suggestion: String,
        related: Vec<String>,
    ) {
        let rule = code.rule();
        self.findings.push(Finding {
            code: rule.code,
            slug: rule.slug.to_string(),
            severity: rule.severity,
            tool: tool.map(str::to_string),
            parameter: parameter.map(str::to_string),
            message,
            suggestion,
            related,
        });
    }
}

#[cfg(test)]
mod tests {
    use std::collections::BTreeSet;

    use super::*;

    #[test]
    fn a_selection_names_whole_codes_and_prefixes_in_any_case() {
        assert_eq!(Code::matching("TDQS-D007"), vec![Code::D007]);
        assert_eq!(Code::matching("d007"), vec![Code::D007]);
        assert_eq!(
            Code::matching("A"),
            vec![Code::A001, Code::A002, Code::A003, Code::A004, Code::A005]
        );
        assert_eq!(Code::matching("tdqs-d01").len(), 5);
        for nothing in ["", "TDQS-", "X", "D9", "D0071", "D-1", "TDQS-D0x"] {
            assert_eq!(Code::matching(nothing), Vec::<Code>::new(), "{nothing}");
        }
    }

    #[test]
    fn catalogue_codes_are_unique_and_well_formed() {
        let mut seen = BTreeSet::new();
        for r in RULES {
            assert!(seen.insert(r.code), "duplicate {}", r.code);
            let text = r.code.as_str();
            assert!(text.starts_with("TDQS-") && text.len() == 9, "{text}");
            // The catalogue is in code order, so a code's position is its index.
            assert_eq!(RULES[r.code as usize].code, r.code);
            assert_eq!(Code::parse(text), Some(r.code));
            assert!(!r.help.is_empty() && !r.title.is_empty());
        }
    }
}
