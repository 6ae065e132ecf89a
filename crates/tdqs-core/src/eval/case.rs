//! The cases of a selection suite: one user request each, the tool the author expects (or
//! `NO_TOOL`), what the case tests and where its ground truth comes from.

use std::collections::BTreeSet;

use serde::{Deserialize, Serialize};

/// The expected answer of a case that no tool of the server should handle.
pub const NO_TOOL: &str = "NO_TOOL";

/// The newest case-file version this build reads.
pub const SUITE_VERSION: u32 = 1;

/// What a case tests.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CaseKind {
    /// Can the tool be found at all.
    Positive,
    /// Is the tool told apart from the tool it resembles (a pair lint flags as confusable).
    Sibling,
    /// A capability the server lacks: the right answer is `NO_TOOL`.
    Abstain,
}

impl CaseKind {
    pub const ALL: [CaseKind; 3] = [CaseKind::Positive, CaseKind::Sibling, CaseKind::Abstain];

    pub fn as_str(self) -> &'static str {
        match self {
            CaseKind::Positive => "positive",
            CaseKind::Sibling => "sibling",
            CaseKind::Abstain => "abstain",
        }
    }
}

/// Where the expected answer comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Provenance {
    /// Written by a person for a fixture.
    HumanFixture,
    /// Written by the server's author.
    UserDefined,
    /// Drafted and validated by a model (`eval --init`): directional, not independent.
    AiGenerated,
}

impl Provenance {
    pub fn as_str(self) -> &'static str {
        match self {
            Provenance::HumanFixture => "human_fixture",
            Provenance::UserDefined => "user_defined",
            Provenance::AiGenerated => "ai_generated",
        }
    }
}

/// A selection: one tool by name, or none.
#[derive(Debug, Clone, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub enum Choice {
    Tool(String),
    NoTool,
}

impl Choice {
    /// `NO_TOOL` is none; every other text is a tool name.
    pub fn parse(text: &str) -> Choice {
        if text == NO_TOOL {
            Choice::NoTool
        } else {
            Choice::Tool(text.to_string())
        }
    }

    pub fn as_str(&self) -> &str {
        match self {
            Choice::Tool(name) => name,
            Choice::NoTool => NO_TOOL,
        }
    }

    pub fn tool(&self) -> Option<&str> {
        match self {
            Choice::Tool(name) => Some(name),
            Choice::NoTool => None,
        }
    }
}

impl Serialize for Choice {
    fn serialize<S: serde::Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.serialize_str(self.as_str())
    }
}

impl<'de> Deserialize<'de> for Choice {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        Ok(Choice::parse(&text))
    }
}

/// One case as written in the case file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Case {
    /// A short stable identifier, unique in the suite (reports and the gate name cases by it).
    pub id: String,
    /// The user's request, as a user would type it.
    pub request: String,
    /// The tool that should be selected, or `NO_TOOL`.
    pub expect: Choice,
    pub kind: CaseKind,
    pub provenance: Provenance,
    /// For a `sibling` case: the tool the expected one is confused with.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub sibling: Option<String>,
    /// Shown, not scored: the expected answer could not be defended with confidence.
    #[serde(default, skip_serializing_if = "is_false")]
    pub exploratory: bool,
    /// The validation pass's confidence in the expected answer (`eval --init`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub confidence: Option<f64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
}

fn is_false(b: &bool) -> bool {
    !*b
}

/// A whole case file.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Suite {
    pub version: u32,
    #[serde(rename = "case", default)]
    pub cases: Vec<Case>,
}

/// Most cases a suite may hold (each is one model call per side in `live_model`).
pub const MAX_CASES: usize = 2000;
/// Longest case id, in characters.
pub const MAX_ID_CHARS: usize = 128;
/// Longest request, in characters.
pub const MAX_REQUEST_CHARS: usize = 8000;
/// Problems listed in one error; the rest are counted.
const MAX_PROBLEMS_SHOWN: usize = 20;

impl Suite {
    /// Checks what needs no server: the version, unique non-empty ids, non-empty requests, and
    /// that `abstain` goes with `NO_TOOL` and only with it, and the limits ([`MAX_CASES`],
    /// [`MAX_ID_CHARS`], [`MAX_REQUEST_CHARS`]). The first 20 problems are listed, the rest
    /// counted.
    pub fn check(&self) -> Result<(), Vec<String>> {
        let problems = self.problems();
        if problems.is_empty() {
            return Ok(());
        }
        let mut shown: Vec<String> = problems.iter().take(MAX_PROBLEMS_SHOWN).cloned().collect();
        if problems.len() > MAX_PROBLEMS_SHOWN {
            shown.push(format!("and {} more", problems.len() - MAX_PROBLEMS_SHOWN));
        }
        Err(shown)
    }

    fn problems(&self) -> Vec<String> {
        let mut problems = Vec::new();
        if self.version != SUITE_VERSION {
            problems.push(format!(
                "version {} is not understood (this build reads version {SUITE_VERSION})",
                self.version
            ));
        }
        if self.cases.is_empty() {
            problems.push("the suite has no [[case]]".to_string());
        }
        // The file may come from a pull request: every case is a model call on each side, and
        // ids are quoted in the report and the job summary.
        if self.cases.len() > MAX_CASES {
            problems.push(format!(
                "the suite has {} cases; at most {MAX_CASES} are run",
                self.cases.len()
            ));
            return problems;
        }
        let mut seen = BTreeSet::new();
        for (i, c) in self.cases.iter().enumerate() {
            let unsafe_id = c.id.chars().count() > MAX_ID_CHARS
                || c.id.chars().any(|ch| ch.is_control() || ch == '`');
            let at = if c.id.trim().is_empty() || unsafe_id {
                format!("case #{}", i + 1)
            } else {
                format!("case `{}`", c.id)
            };
            if unsafe_id {
                problems.push(format!(
                    "case #{} has an id longer than {MAX_ID_CHARS} characters or holding a \
                     control character or a backtick",
                    i + 1
                ));
            } else if c.id.trim().is_empty() {
                problems.push(format!("{at} has an empty id"));
            } else if !seen.insert(c.id.as_str()) {
                problems.push(format!("{at}: the id is used twice"));
            }
            if c.request.trim().is_empty() {
                problems.push(format!("{at} has an empty request"));
            } else if c.request.chars().count() > MAX_REQUEST_CHARS {
                problems.push(format!(
                    "{at}: the request is longer than {MAX_REQUEST_CHARS} characters"
                ));
            }
            match (c.kind, &c.expect) {
                (CaseKind::Abstain, Choice::Tool(t)) => problems.push(format!(
                    "{at} is `abstain` but expects `{t}`; an abstain case expects {NO_TOOL}"
                )),
                (CaseKind::Positive | CaseKind::Sibling, Choice::NoTool) => problems.push(format!(
                    "{at} expects {NO_TOOL} but is `{}`; use kind = \"abstain\"",
                    c.kind.as_str()
                )),
                _ => {}
            }
            if c.sibling.is_some() && c.kind != CaseKind::Sibling {
                problems.push(format!(
                    "{at} names a `sibling` but is `{}`; only sibling cases name one",
                    c.kind.as_str()
                ));
            }
            if let Some(conf) = c.confidence {
                if !(0.0..=1.0).contains(&conf) {
                    problems.push(format!("{at}: confidence {conf} is outside 0–1"));
                }
            }
        }
        problems
    }

    /// Tools the cases name (expected or sibling) that the server does not list.
    pub fn unknown_tools(&self, listed: &[String]) -> Vec<String> {
        let listed: BTreeSet<&str> = listed.iter().map(String::as_str).collect();
        let mut out = BTreeSet::new();
        for c in &self.cases {
            for name in c.expect.tool().into_iter().chain(c.sibling.as_deref()) {
                if !listed.contains(name) {
                    out.insert(format!("case `{}` names `{name}`", c.id));
                }
            }
        }
        out.into_iter().collect()
    }

    /// SHA-256 of the cases as compact JSON: base and head are paired only over equal digests.
    pub fn digest(&self) -> String {
        use sha2::{Digest, Sha256};
        let bytes = serde_json::to_vec(&self.cases).unwrap_or_default();
        hex::encode(Sha256::digest(&bytes))
    }

    /// The cases that count towards the figures.
    pub fn scored(&self) -> impl Iterator<Item = &Case> {
        self.cases.iter().filter(|c| !c.exploratory)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn case(id: &str, expect: &str, kind: CaseKind) -> Case {
        Case {
            id: id.into(),
            request: "find the user with this email".into(),
            expect: Choice::parse(expect),
            kind,
            provenance: Provenance::HumanFixture,
            sibling: None,
            exploratory: false,
            confidence: None,
            note: None,
        }
    }

    /// A pull request's case file could hold a million cases (a model call each), ids that
    /// forge Markdown in the job summary, or requests of megabytes; and its errors were listed
    /// in full.
    #[test]
    fn eval_case_file_limits() {
        let many = Suite {
            version: SUITE_VERSION,
            cases: (0..=MAX_CASES)
                .map(|i| case(&format!("c{i}"), "search", CaseKind::Positive))
                .collect(),
        };
        let err = many.check().unwrap_err().join(" ");
        assert!(err.contains("at most 2000"), "{err}");
        let mut forged = case("a`\n## PASS", "search", CaseKind::Positive);
        forged.request = "x".repeat(MAX_REQUEST_CHARS + 1);
        let mut long = case(&"i".repeat(MAX_ID_CHARS + 1), "search", CaseKind::Positive);
        long.request = "r".into();
        let err = Suite {
            version: SUITE_VERSION,
            cases: vec![forged, long],
        }
        .check()
        .unwrap_err();
        assert_eq!(err.len(), 3, "{err:?}");
        assert!(
            err.iter().all(|p| !p.contains('\n') && !p.contains("iiii")),
            "{err:?}"
        );
        let bad = Suite {
            version: SUITE_VERSION,
            cases: (0..50)
                .map(|i| case(&format!("c{i}"), "NO_TOOL", CaseKind::Positive))
                .collect(),
        };
        let err = bad.check().unwrap_err();
        assert_eq!(err.len(), 21);
        assert_eq!(err[20], "and 30 more");
        let ok = Suite {
            version: SUITE_VERSION,
            cases: vec![case("fine-id", "search", CaseKind::Positive)],
        };
        assert!(ok.check().is_ok());
    }

    #[test]
    fn no_tool_is_a_choice_not_a_tool() {
        assert_eq!(Choice::parse("NO_TOOL"), Choice::NoTool);
        assert_eq!(Choice::parse("no_tool"), Choice::Tool("no_tool".into()));
        assert_eq!(
            serde_json::to_string(&Choice::NoTool).unwrap(),
            "\"NO_TOOL\""
        );
    }

    #[test]
    fn suite_check_lists_every_problem() {
        let mut twice = case("a", "search", CaseKind::Positive);
        twice.request = " ".into();
        let suite = Suite {
            version: 1,
            cases: vec![
                case("a", "search", CaseKind::Positive),
                twice,
                case("b", "search", CaseKind::Abstain),
                case("c", "NO_TOOL", CaseKind::Sibling),
            ],
        };
        let problems = suite.check().unwrap_err();
        assert_eq!(problems.len(), 4, "{problems:?}");
        assert!(problems[0].contains("used twice"));
        assert!(problems[1].contains("empty request"));
        assert!(problems[2].contains("abstain case expects NO_TOOL"));
        assert!(problems[3].contains("kind = \"abstain\""));
    }

    #[test]
    fn unknown_tools_are_named() {
        let mut s = case("s", "search_users", CaseKind::Sibling);
        s.sibling = Some("search".into());
        let suite = Suite {
            version: 1,
            cases: vec![s, case("n", "NO_TOOL", CaseKind::Abstain)],
        };
        assert!(suite.check().is_ok());
        assert_eq!(
            suite.unknown_tools(&["search_users".into()]),
            vec!["case `s` names `search`".to_string()]
        );
    }
}
