//! The `synthetic` selector: a deterministic word-overlap heuristic, no model.
//!
//! Each tool is reduced to the content words of its name, description and parameters (names and
//! descriptions), by the same measure lint uses to find confusable pairs
//! ([`crate::overlap::content_words`], [`crate::overlap::jaccard`]). A request goes to the tool
//! whose words it overlaps most. What it estimates is *ambiguity*: how far the definitions'
//! own words set each tool apart for a request phrased in ordinary words. It is not the accuracy
//! of any model, and it rewards exactly what a rewrite adds (more distinctive words), so a
//! synthetic before/after is circular (docs/eval.md).
//!
//! - **Abstention.** A request that shares fewer than [`MIN_SHARED`] content words with every
//!   tool goes to `NO_TOOL`.
//! - **Ties (sibling-aware).** When the best tools tie on overlap, the one whose *name* words the
//!   request uses more wins (the name is what sets siblings apart); a tie that survives that is
//!   unresolved: the selector answers `NO_TOOL` with confidence 0 and names the tied tools, so an
//!   ambiguous pair counts as a miss, never as a lucky pick.

use std::collections::BTreeSet;

use serde_json::{Map, Value};

use super::answer::SelectionAnswer;
use super::case::Choice;
use crate::overlap::{content_words, jaccard, name_tokens, singular};

/// Fewer shared content words than this with every tool: `NO_TOOL`.
pub const MIN_SHARED: usize = 2;

/// The model name the synthetic mode records.
pub const SYNTHETIC_MODEL: &str = "synthetic-overlap-v1";

/// One tool as the heuristic sees it.
#[derive(Debug, Clone)]
struct ToolWords {
    name: String,
    words: BTreeSet<String>,
    name_words: BTreeSet<String>,
}

/// The selector for one tool set.
#[derive(Debug, Clone)]
pub struct SyntheticSelector {
    tools: Vec<ToolWords>,
}

fn text_of(tool: &Value) -> (String, String) {
    let name = tool
        .get("name")
        .and_then(Value::as_str)
        .unwrap_or_default()
        .to_string();
    let mut text = name_tokens(&name).join(" ");
    if let Some(d) = tool.get("description").and_then(Value::as_str) {
        text.push(' ');
        text.push_str(d);
    }
    if let Some(props) = tool
        .get("inputSchema")
        .and_then(|s| s.get("properties"))
        .and_then(Value::as_object)
    {
        for (pname, schema) in props {
            text.push(' ');
            text.push_str(&name_tokens(pname).join(" "));
            if let Some(d) = schema.get("description").and_then(Value::as_str) {
                text.push(' ');
                text.push_str(d);
            }
        }
    }
    (name, text)
}

impl SyntheticSelector {
    pub fn new(tools: &[Value]) -> Self {
        let tools = tools
            .iter()
            .map(|t| {
                let (name, text) = text_of(t);
                ToolWords {
                    name_words: name_tokens(&name).iter().map(|w| singular(w)).collect(),
                    words: content_words(&text),
                    name,
                }
            })
            .collect();
        SyntheticSelector { tools }
    }

    /// Selects for one request. Arguments are never generated (empty): argument validity is a
    /// live-model figure.
    pub fn select(&self, request: &str) -> SelectionAnswer {
        let req = content_words(request);
        let mut best: Vec<(usize, f64, usize)> = Vec::new(); // (index, jaccard, shared)
        let mut top = -1.0_f64;
        for (i, t) in self.tools.iter().enumerate() {
            let shared = req.intersection(&t.words).count();
            if shared < MIN_SHARED {
                continue;
            }
            let sim = jaccard(&req, &t.words);
            if sim > top + 1e-12 {
                top = sim;
                best.clear();
                best.push((i, sim, shared));
            } else if (sim - top).abs() <= 1e-12 {
                best.push((i, sim, shared));
            }
        }
        if best.is_empty() {
            return SelectionAnswer {
                tool: Choice::NoTool,
                arguments: Map::new(),
                confidence: 1.0,
                reason: format!(
                    "no tool shares {MIN_SHARED} or more content words with the request"
                ),
            };
        }
        if best.len() > 1 {
            // Sibling-aware: the name words the request uses.
            let name_hits = |i: usize| req.intersection(&self.tools[i].name_words).count();
            let most = best.iter().map(|b| name_hits(b.0)).max().unwrap_or(0);
            best.retain(|b| name_hits(b.0) == most);
        }
        if best.len() > 1 {
            let names: Vec<&str> = best.iter().map(|b| self.tools[b.0].name.as_str()).collect();
            return SelectionAnswer {
                tool: Choice::NoTool,
                arguments: Map::new(),
                confidence: 0.0,
                reason: format!("ambiguous: {} tie on word overlap", names.join(", ")),
            };
        }
        let (i, sim, shared) = best[0];
        SelectionAnswer {
            tool: Choice::Tool(self.tools[i].name.clone()),
            arguments: Map::new(),
            confidence: (sim * 100.0).round() / 100.0,
            reason: format!("shares {shared} content words (overlap {sim:.2})"),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tools() -> Vec<Value> {
        vec![
            json!({"name": "search_users", "description": "Find people in the directory by name or email address."}),
            json!({"name": "search_orgs", "description": "Find organizations in the directory by name or domain."}),
            json!({"name": "create_ticket", "description": "Open a support ticket for a customer problem."}),
        ]
    }

    #[test]
    fn synthetic_picks_by_overlap() {
        let s = SyntheticSelector::new(&tools());
        let a = s.select("Find the person whose email address is ann@example.com");
        assert_eq!(a.tool, Choice::Tool("search_users".into()));
        let b = s.select("Open a ticket: the customer cannot log in");
        assert_eq!(b.tool, Choice::Tool("create_ticket".into()));
    }

    #[test]
    fn synthetic_abstains_without_shared_words() {
        let s = SyntheticSelector::new(&tools());
        let a = s.select("Send an SMS reminder tomorrow morning");
        assert_eq!(a.tool, Choice::NoTool);
        assert_eq!(a.confidence, 1.0);
    }

    #[test]
    fn synthetic_unresolved_tie_is_a_miss() {
        let twins = vec![
            json!({"name": "fetch", "description": "Gets data from the directory."}),
            json!({"name": "query", "description": "Gets data from the directory."}),
        ];
        let s = SyntheticSelector::new(&twins);
        let a = s.select("Get data about Ann from the directory");
        assert_eq!(a.tool, Choice::NoTool);
        assert_eq!(a.confidence, 0.0);
        assert!(a.reason.contains("fetch, query"), "{}", a.reason);
        // The name breaks the tie when the request uses it.
        let b = s.select("Query the directory data for Ann");
        assert_eq!(b.tool, Choice::Tool("query".into()));
    }

    #[test]
    fn synthetic_is_deterministic() {
        let s = SyntheticSelector::new(&tools());
        let r = "Find organizations by domain";
        assert_eq!(s.select(r), s.select(r));
    }
}
