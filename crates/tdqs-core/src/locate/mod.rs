//! Source locations: where in a side's tree each tool (and each described parameter) of an
//! export is defined, found by its literal texts, never guessed.
//!
//! A running server only tells us its definitions; a maintainer (and code scanning) needs the
//! line. The texts the server listed are in the source as literals: the description as a string,
//! a docstring or a doc comment, the name as a `name` value, the first argument of a
//! `registerTool`/`NewTool` call or a decorated function's name. Whitespace is normalised before
//! comparing (docstrings are dedented, YAML folded, multi-line strings rewrapped).
//!
//! Confidence: the whole description found as one literal is `high`; only the name (or only the
//! description's first sentence) is `medium`. Several equally good places, or none, give
//! "not located" with the reason.

pub mod literals;

use std::collections::HashMap;

use serde::{Deserialize, Serialize};
use serde_json::Value;

use crate::export::Export;
pub use literals::{Lang, Literal, Role};

/// One file of the tree, read by the caller.
#[derive(Debug, Clone)]
pub struct SourceFile {
    /// The path relative to the tree's root, with `/` separators.
    pub path: String,
    pub text: String,
}

/// A place in the tree: 1-based line and column (in Unicode code points).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Span {
    pub path: String,
    pub line: u32,
    pub column: u32,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum Confidence {
    /// The whole description was found as one literal.
    High,
    /// Only the name (as a defining occurrence), or only the first sentence, was found.
    Medium,
}

/// What was matched.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "kebab-case")]
pub enum Matched {
    Description,
    FirstSentence,
    Name,
}

/// Where one tool or parameter is defined, or why it was not located.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "status", rename_all = "kebab-case")]
pub enum Place {
    Located {
        at: Span,
        confidence: Confidence,
        matched: Matched,
    },
    NotLocated {
        reason: String,
    },
}

impl Place {
    pub fn span(&self) -> Option<&Span> {
        match self {
            Place::Located { at, .. } => Some(at),
            Place::NotLocated { .. } => None,
        }
    }
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ParameterLocation {
    pub parameter: String,
    pub place: Place,
}

#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolLocation {
    pub tool: String,
    /// The description when it was found, else the name.
    pub place: Place,
    /// Where the name is defined, when found (may differ from `place`).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub name_at: Option<Span>,
    /// Parameters with a description, in schema order.
    pub parameters: Vec<ParameterLocation>,
}

/// The locations of one export's tools in one tree.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Locations {
    pub tools: Vec<ToolLocation>,
    /// Source files read.
    pub files_read: usize,
    /// True when the walk stopped at its file bound before reading the whole tree.
    #[serde(default)]
    pub truncated: bool,
}

impl Locations {
    pub fn tool(&self, name: &str) -> Option<&ToolLocation> {
        self.tools.iter().find(|t| t.tool == name)
    }

    /// Where a finding about this tool (and parameter) belongs: the parameter's place when it
    /// was located, else the tool's.
    pub fn span_for(&self, tool: &str, parameter: Option<&str>) -> Option<&Span> {
        let t = self.tool(tool)?;
        parameter
            .and_then(|p| t.parameters.iter().find(|q| q.parameter == p))
            .and_then(|q| q.place.span())
            .or_else(|| t.place.span())
    }
}

/// Collapses every run of whitespace to one space and trims: a docstring, a rewrapped string
/// and a folded YAML scalar compare equal to the text the server lists.
pub fn normalise(text: &str) -> String {
    text.split_whitespace().collect::<Vec<_>>().join(" ")
}

/// The first sentence of a normalised text (up to `. `, `! ` or `? `), when shorter than it.
fn first_sentence(text: &str) -> Option<&str> {
    let end = text
        .match_indices(". ")
        .chain(text.match_indices("! "))
        .chain(text.match_indices("? "))
        .map(|(k, _)| k + 1)
        .min()?;
    Some(&text[..end])
}

/// Test code and fixtures quote definitions too; a place outside them is preferred.
fn is_test_path(path: &str) -> bool {
    path.split('/').any(|part| {
        let p = part.to_ascii_lowercase();
        p == "test" || p == "tests" || p == "__tests__" || p == "spec" || p == "testdata"
    }) || {
        let file = path.rsplit('/').next().unwrap_or(path).to_ascii_lowercase();
        file.starts_with("test_")
            || file.contains(".test.")
            || file.contains(".spec.")
            || file.ends_with("_test.go")
    }
}

struct Indexed {
    path: String,
    lits: Vec<(Literal, String)>,
}

struct Candidate<'a> {
    file: &'a Indexed,
    lit: &'a Literal,
}

impl Candidate<'_> {
    fn span(&self) -> Span {
        Span {
            path: self.file.path.clone(),
            line: self.lit.line,
            column: self.lit.column,
        }
    }
}

/// Picks the one best candidate: in a file that also defines `anchor_name` (nearest to it), not
/// in test code. `None` with the count when two are equally good.
fn pick<'a>(
    cands: Vec<Candidate<'a>>,
    near: &dyn Fn(&Candidate<'a>) -> Option<u32>,
) -> Result<Option<Candidate<'a>>, usize> {
    if cands.is_empty() {
        return Ok(None);
    }
    let key = |c: &Candidate<'a>| {
        let distance = near(c);
        (
            distance.is_none(),
            is_test_path(&c.file.path),
            distance.unwrap_or(u32::MAX),
        )
    };
    let mut keyed: Vec<_> = cands.into_iter().map(|c| (key(&c), c)).collect();
    keyed.sort_by_key(|a| a.0);
    if keyed.len() > 1 && keyed[0].0 == keyed[1].0 {
        let ties = keyed.iter().filter(|k| k.0 == keyed[0].0).count();
        return Err(ties);
    }
    Ok(keyed.into_iter().next().map(|(_, c)| c))
}

fn described_parameters(tool: &Value) -> Vec<(String, String)> {
    let Some(props) = tool
        .get("inputSchema")
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    else {
        return Vec::new();
    };
    props
        .iter()
        .filter_map(|(name, schema)| {
            let d = schema.get("description")?.as_str()?;
            let d = normalise(d);
            (!d.is_empty()).then(|| (name.clone(), d))
        })
        .collect()
}

/// Finds each tool of `export` in `files`. Pure: the caller reads the tree.
pub fn locate_in(files: &[SourceFile], export: &Export) -> Locations {
    locate_tools(files, &export.tools)
}

/// Finds each tool of a plain tool list in `files`.
pub fn locate_tools(files: &[SourceFile], tools: &[Value]) -> Locations {
    let index: Vec<Indexed> = files
        .iter()
        .filter_map(|f| {
            let lang = Lang::of_path(&f.path)?;
            let lits = literals::literals(&f.text, lang)
                .into_iter()
                .map(|l| {
                    let n = normalise(&l.value);
                    (l, n)
                })
                .collect();
            Some(Indexed {
                path: f.path.clone(),
                lits,
            })
        })
        .collect();
    // Exact texts and defining names by their normalised text: a lookup per tool and parameter
    // instead of a scan of every literal (262 tools over a node_modules-sized tree).
    let mut exact: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    let mut defined: HashMap<&str, Vec<(usize, usize)>> = HashMap::new();
    for (fi, f) in index.iter().enumerate() {
        for (li, (l, n)) in f.lits.iter().enumerate() {
            match l.role {
                Role::Text if l.exact => exact.entry(n.as_str()).or_default().push((fi, li)),
                Role::ToolName | Role::DecoratedFunction => {
                    defined.entry(n.as_str()).or_default().push((fi, li))
                }
                _ => {}
            }
        }
    }
    let lookup = Lookup {
        index: &index,
        exact,
        defined,
    };
    let mut out = Vec::new();
    for tool in tools {
        let name = crate::digest::tool_name(tool).to_string();
        let description = tool
            .get("description")
            .and_then(Value::as_str)
            .map(normalise)
            .unwrap_or_default();
        out.push(locate_one(
            &lookup,
            &name,
            &description,
            &described_parameters(tool),
        ));
    }
    Locations {
        tools: out,
        files_read: index.len(),
        truncated: false,
    }
}

struct Lookup<'a> {
    index: &'a [Indexed],
    exact: HashMap<&'a str, Vec<(usize, usize)>>,
    defined: HashMap<&'a str, Vec<(usize, usize)>>,
}

impl<'a> Lookup<'a> {
    fn get(&self, map: &HashMap<&'a str, Vec<(usize, usize)>>, text: &str) -> Vec<Candidate<'a>> {
        map.get(text)
            .map(|hits| {
                hits.iter()
                    .map(|&(fi, li)| Candidate {
                        file: &self.index[fi],
                        lit: &self.index[fi].lits[li].0,
                    })
                    .collect()
            })
            .unwrap_or_default()
    }
}

fn locate_one(
    lookup: &Lookup,
    name: &str,
    description: &str,
    params: &[(String, String)],
) -> ToolLocation {
    // Defining occurrences of the name.
    let index = lookup.index;
    let names: Vec<Candidate> = lookup.get(&lookup.defined, name);
    let name_lines = |path: &str| -> Vec<u32> {
        names
            .iter()
            .filter(|c| c.file.path == path)
            .map(|c| c.lit.line)
            .collect()
    };
    let near_name = |c: &Candidate| -> Option<u32> {
        name_lines(&c.file.path)
            .into_iter()
            .map(|l| l.abs_diff(c.lit.line))
            .min()
    };
    // Literals passing `pred` in the files `in_file` accepts (a partial match is only looked for
    // in the few files that define the name or hold the tool).
    let by_text =
        |in_file: &dyn Fn(&str) -> bool, pred: &dyn Fn(&Literal, &str) -> bool| -> Vec<Candidate> {
            index
                .iter()
                .filter(|f| in_file(&f.path))
                .flat_map(|f| {
                    f.lits
                        .iter()
                        .filter(|(l, n)| l.role == Role::Text && pred(l, n))
                        .map(move |(l, _)| Candidate { file: f, lit: l })
                })
                .collect()
        };

    let mut reasons = Vec::new();
    let mut place = None;
    if !description.is_empty() {
        let whole = lookup.get(&lookup.exact, description);
        match pick(whole, &near_name) {
            Ok(Some(c)) => {
                place = Some(Place::Located {
                    at: c.span(),
                    confidence: Confidence::High,
                    matched: Matched::Description,
                })
            }
            Ok(None) => reasons.push("the description is not one literal in the tree".to_string()),
            Err(n) => reasons.push(format!(
                "the description appears in {n} equally likely places"
            )),
        }
        if place.is_none() {
            // A description assembled from pieces (substitutions, a docstring with more text):
            // its first sentence begins one literal, in a file that defines the name.
            if let Some(first) = first_sentence(description).filter(|s| s.len() >= 20) {
                let partial = by_text(
                    &|path| names.iter().any(|c| c.file.path == path),
                    &|_, n| n.starts_with(first),
                );
                let partial: Vec<Candidate> = partial
                    .into_iter()
                    .filter(|c| near_name(c).is_some())
                    .collect();
                match pick(partial, &near_name) {
                    Ok(Some(c)) => {
                        place = Some(Place::Located {
                            at: c.span(),
                            confidence: Confidence::Medium,
                            matched: Matched::FirstSentence,
                        })
                    }
                    Ok(None) => {}
                    Err(n) => reasons.push(format!(
                        "its first sentence appears in {n} equally likely places"
                    )),
                }
            }
        }
    } else {
        reasons.push("the tool has no description".to_string());
    }
    // One definition often names the tool twice a few lines apart (`name="x"` over
    // `def x`): those are one place, the first.
    let mut places: Vec<Candidate> = Vec::new();
    for c in &names {
        let same = places
            .iter()
            .any(|p| p.file.path == c.file.path && p.lit.line.abs_diff(c.lit.line) <= 5);
        if !same {
            places.push(Candidate {
                file: c.file,
                lit: c.lit,
            });
        }
    }
    let name_pick = pick(places, &|_| Some(0));
    let name_at = match (&place, &name_pick) {
        // The name nearest the description, when there is one in its file.
        (Some(Place::Located { at, .. }), _) => names
            .iter()
            .filter(|c| c.file.path == at.path)
            .min_by_key(|c| c.lit.line.abs_diff(at.line))
            .map(Candidate::span),
        (None, Ok(Some(c))) => Some(c.span()),
        _ => None,
    };
    if place.is_none() {
        match name_pick {
            Ok(Some(c)) => {
                place = Some(Place::Located {
                    at: c.span(),
                    confidence: Confidence::Medium,
                    matched: Matched::Name,
                })
            }
            Ok(None) => reasons.push(format!(
                "the name `{name}` is not defined by a literal (a `name` value, a tool call's first argument or a decorated function)"
            )),
            Err(n) => reasons.push(format!("the name `{name}` is defined in {n} equally likely places")),
        }
    }
    let place = place.unwrap_or_else(|| Place::NotLocated {
        reason: reasons.join("; "),
    });

    let anchor = place.span().cloned();
    let parameters = params
        .iter()
        .map(|(pname, pdesc)| {
            let cands = lookup.get(&lookup.exact, pdesc);
            let near_tool = |c: &Candidate| -> Option<u32> {
                let a = anchor.as_ref()?;
                (a.path == c.file.path).then(|| {
                    // After the tool's own place first (definitions follow the name).
                    if c.lit.line >= a.line {
                        c.lit.line - a.line
                    } else {
                        (a.line - c.lit.line).saturating_mul(4)
                    }
                })
            };
            let place = match pick(cands, &near_tool) {
                Ok(Some(c)) => Place::Located {
                    at: c.span(),
                    confidence: Confidence::High,
                    matched: Matched::Description,
                },
                Ok(None) => {
                    // A description with a substitution (`f"Start … commits. {FORMATS}"`): its
                    // first sentence begins one literal in the tool's own file.
                    let partial = first_sentence(pdesc)
                        .filter(|s| s.len() >= 20)
                        .map(|first| {
                            let anchor_path = anchor.as_ref().map(|a| a.path.as_str());
                            by_text(&|path| Some(path) == anchor_path, &|_, n| {
                                n.starts_with(first)
                            })
                            .into_iter()
                            .filter(|c| near_tool(c).is_some())
                            .collect::<Vec<_>>()
                        })
                        .unwrap_or_default();
                    match pick(partial, &near_tool) {
                        Ok(Some(c)) => Place::Located {
                            at: c.span(),
                            confidence: Confidence::Medium,
                            matched: Matched::FirstSentence,
                        },
                        _ => Place::NotLocated {
                            reason: "the parameter's description is not one literal in the tree"
                                .to_string(),
                        },
                    }
                }
                Err(n) => Place::NotLocated {
                    reason: format!(
                        "the parameter's description appears in {n} equally likely places"
                    ),
                },
            };
            ParameterLocation {
                parameter: pname.clone(),
                place,
            }
        })
        .collect();
    ToolLocation {
        tool: name.to_string(),
        place,
        name_at,
        parameters,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn file(path: &str, text: &str) -> SourceFile {
        SourceFile {
            path: path.to_string(),
            text: text.to_string(),
        }
    }

    #[test]
    fn two_equally_likely_places_are_not_a_location() {
        let files = [
            file("a.ts", "const d = \"Send a message.\";"),
            file("b.ts", "const e = \"Send a message.\";"),
        ];
        let tools = [json!({"name": "send", "description": "Send   a\nmessage."})];
        let got = locate_tools(&files, &tools);
        let Place::NotLocated { reason } = &got.tools[0].place else {
            panic!("{:?}", got.tools[0].place)
        };
        assert!(reason.contains("2 equally likely places"), "{reason}");
    }

    #[test]
    fn the_defining_file_wins_over_tests_and_files_without_the_name() {
        let files = [
            file(
                "tests/test_server.py",
                "NAME = 'send'\nassert d == \"Send a message.\"",
            ),
            file("other.py", "x = \"Send a message.\""),
            file(
                "server.py",
                "Tool(\n  name=\"send\",\n  description=\"Send a message.\",\n)",
            ),
        ];
        let tools = [json!({"name": "send", "description": "Send a message."})];
        let got = locate_tools(&files, &tools);
        assert_eq!(
            got.tools[0].place,
            Place::Located {
                at: Span {
                    path: "server.py".into(),
                    line: 3,
                    column: 15
                },
                confidence: Confidence::High,
                matched: Matched::Description,
            }
        );
        assert_eq!(got.tools[0].name_at.as_ref().map(|s| s.line), Some(2));
    }
}
